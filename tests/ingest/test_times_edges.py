"""`ingest.times.parse_time` at its edges: the seconds / milliseconds cut, a lowercase `z`, and UTC whatever
the machine's own zone is."""

import datetime as dt
import os
import time

import pytest

from ingest.times import parse_time

UTC = dt.timezone.utc


def test_epoch_numbers_up_to_1e11_are_seconds_and_above_are_milliseconds():
    assert parse_time(100_000_000_000) == dt.datetime(5138, 11, 16, 9, 46, 40, tzinfo=UTC)  # the cut: seconds
    assert parse_time(100_000_000_001) == dt.datetime(1973, 3, 3, 9, 46, 40, 1000, tzinfo=UTC)  # milliseconds
    assert parse_time(0) == dt.datetime(1970, 1, 1, tzinfo=UTC)
    assert parse_time(10**30) is None  # out of range: no time rather than an error


def test_a_lowercase_z_is_utc_too():
    assert parse_time("2024-11-06T12:50:19.858z") == dt.datetime(2024, 11, 6, 12, 50, 19, 858000, UTC)
    assert parse_time(" 2024-11-06T12:50:19Z\n") == dt.datetime(2024, 11, 6, 12, 50, 19, tzinfo=UTC)


@pytest.fixture
def tokyo():
    """The process's local zone set to Asia/Tokyo (+09:00) for one test."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    yield
    if before is None:
        os.environ.pop("TZ")
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_times_come_back_in_utc_whatever_the_local_zone(tokyo):
    assert dt.datetime(2024, 1, 1).astimezone().utcoffset() == dt.timedelta(hours=9)  # the zone took effect
    for value in ("2025-01-02T03:04:05+02:00", "2025-01-02T01:04:05Z", 1735779845, 1735779845000):
        got = parse_time(value)
        assert got == dt.datetime(2025, 1, 2, 1, 4, 5, tzinfo=UTC), value
        assert got.utcoffset() == dt.timedelta(0) and got.isoformat().endswith("+00:00"), value


def test_a_date_alone_marked_z_is_midnight_utc_whatever_the_local_zone(tokyo):
    # parsed without its offset, such a date was read as the machine's local midnight (15:00 UTC the day before here)
    for value in ("2025-06-01Z", " 2025-06-01Z ", "20250601Z"):
        assert parse_time(value) == dt.datetime(2025, 6, 1, tzinfo=UTC), value
    assert parse_time("2025-06-01") is None  # no zone stated: unknown, as any naive time
