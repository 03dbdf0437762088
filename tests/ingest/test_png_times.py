"""The shared helpers the readers use for screenshot sizes (`ingest.png`) and source timestamps
(`ingest.times`), on the bundled samples' own bytes and the time shapes the readers meet."""

import datetime as dt

from ingest.png import encode_png, png_size
from ingest.times import parse_time
from tests.conftest import SAMPLES

UTC = dt.timezone.utc


def test_png_size_reads_the_header():
    shot = (SAMPLES / "browser" / "browsergym-agentlab" / "screenshot_step_0.png").read_bytes()
    assert png_size(shot) == (1282, 713)
    assert png_size(encode_png(bytes(3 * 4 * 2), 4, 2, 3)) == (4, 2)
    assert png_size(b"\xff\xd8\xff\xe0 a JPEG") is None and png_size(b"\x89PNG") is None


def test_parse_time_is_utc_or_none():
    # HAR startedDateTime, Terminal-Bench results.json, ATIF / MCP timestamps
    assert parse_time("2024-11-06T12:50:19.858Z") == dt.datetime(2024, 11, 6, 12, 50, 19, 858000, UTC)
    assert parse_time("2025-01-02T03:04:05+02:00") == dt.datetime(2025, 1, 2, 1, 4, 5, tzinfo=UTC)
    assert parse_time(1730897419.5) == dt.datetime(2024, 11, 6, 12, 50, 19, 500000, UTC)
    assert parse_time(1730897419500) == dt.datetime(2024, 11, 6, 12, 50, 19, 500000, UTC)  # milliseconds
    # a time without a zone is local time of an unknown zone: never guessed
    assert parse_time("2024-11-06T13:50:19") is None
    assert parse_time("yesterday") is None and parse_time(None) is None and parse_time(True) is None
