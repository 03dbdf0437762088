import datetime as dt
import gzip
import os
import pickle
from dataclasses import dataclass

import numpy as np
import pytest

from ingest.safe_pickle import Record, load_gzip, records, restricted_loads
from ingest.source import SourceError


class RunsShell:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@dataclass
class Point:
    x: int
    y: int


def test_a_pickle_that_would_call_os_system_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "pwned"
    with pytest.raises(SourceError) as e:
        restricted_loads(pickle.dumps({"ok": 1, "evil": RunsShell(marker)}), where="run.pkl")
    assert e.value.rule == "forbidden_pickle_class"
    assert e.value.reason == f"run.pkl: pickle needs {os.system.__module__}.system, which is not allowed; nothing was loaded"
    assert not marker.exists()


def test_classes_not_on_the_allowlist_are_refused_by_name():
    with pytest.raises(SourceError, match=r"needs tests\.ingest\.test_safe_pickle\.Point") as e:
        restricted_loads(pickle.dumps(Point(1, 2)))
    assert e.value.rule == "forbidden_pickle_class"


def test_allowed_classes_become_plain_records_of_their_state():
    point = restricted_loads(pickle.dumps([Point(1, 2)]), records("tests.ingest.test_safe_pickle.Point"))[0]
    assert isinstance(point, Record) and point == {"x": 1, "y": 2}
    assert point.pickled_class == "tests.ingest.test_safe_pickle.Point"


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_plain_data_and_numpy_arrays_load_under_every_protocol(protocol):
    shot = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    value = {"shot": shot, "score": np.float64(0.5), "when": dt.datetime(2024, 5, 1, 12, 30), "tags": {"a"},
             "raw": b"\x00\xff", "nan": float("nan")}
    out = restricted_loads(pickle.dumps(value, protocol=protocol))
    assert out["shot"].dtype == np.uint8 and out["shot"].shape == (2, 4, 3) and (out["shot"] == shot).all()
    assert out["score"] == 0.5 and out["when"] == dt.datetime(2024, 5, 1, 12, 30) and out["tags"] == {"a"}
    assert out["raw"] == b"\x00\xff"


def test_object_arrays_are_refused():
    with pytest.raises(SourceError, match="dtype 'O'"):
        restricted_loads(pickle.dumps(np.array([RunsShell("x")], dtype=object)))


def test_gzip_output_is_capped_and_corrupt_pickles_are_parse_errors():
    big = gzip.compress(pickle.dumps(b"\0" * 100_000))
    with pytest.raises(SourceError) as e:
        load_gzip(big, "task.pkl.gz", max_bytes=10_000)
    assert e.value.rule == "archive_too_large" and "task.pkl.gz" in e.value.reason
    assert load_gzip(big, "task.pkl.gz") == b"\0" * 100_000
    with pytest.raises(SourceError) as e:
        restricted_loads(pickle.dumps({"a": list(range(100))})[:-20], where="cut.pkl")
    assert e.value.rule == "parse_error" and e.value.reason.startswith("cut.pkl: not a readable pickle")
