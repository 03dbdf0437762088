import collections
import datetime as dt
import enum
import functools
import gzip
import importlib
import os
import pickle
import shutil
import subprocess
from dataclasses import dataclass

import numpy as np
import pydantic
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


def test_a_class_no_reader_lists_becomes_an_inert_record_of_its_state_and_is_named():
    unknown: list[str] = []
    point = restricted_loads(pickle.dumps({"p": Point(1, 2)}), unknown=unknown)["p"]
    assert isinstance(point, Record) and point == {"x": 1, "y": 2}
    assert point.pickled_class == "tests.ingest.test_safe_pickle.Point" and point.known is False
    assert unknown == ["tests.ingest.test_safe_pickle.Point"]


def test_allowed_classes_become_plain_records_of_their_state():
    unknown: list[str] = []
    point = restricted_loads(pickle.dumps([Point(1, 2)]), records("tests.ingest.test_safe_pickle.Point"),
                             unknown=unknown)[0]
    assert isinstance(point, Record) and point == {"x": 1, "y": 2}
    assert point.pickled_class == "tests.ingest.test_safe_pickle.Point" and point.known is True
    assert unknown == []  # a listed class is no news


def touch(path):  # would leave a mark if a pickle could call it
    open(path, "w").close()


class Color(enum.Enum):
    RED = 1
    GREEN = "green"


class Pair(collections.namedtuple("Pair", "left right")):
    pass


class Bag(list):
    pass


class Model(pydantic.BaseModel):
    name: str
    tags: list[str] = []


@pytest.mark.parametrize("protocol", [0, 1, 2, 4, 5])
def test_unknown_classes_keep_what_their_opcodes_carry_under_every_protocol(protocol):
    value = {"color": Color.GREEN, "pair": Pair(1, "b"), "bag": Bag([1, 2]), "model": Model(name="m", tags=["t"]),
             "cls": Point, "in_tuple": (Point, 3)}
    out = restricted_loads(pickle.dumps(value, protocol=protocol))
    assert out["color"] == {"args": ["green"]} and out["color"].pickled_class.endswith("test_safe_pickle.Color")
    assert out["pair"] == {"args": [1, "b"]}  # a namedtuple's fields are its arguments
    assert out["bag"] == {"items": [1, 2]}
    model = out["model"]  # pydantic's state: the fields merged in, its bookkeeping by name
    assert (model["name"], model["tags"]) == ("m", ["t"]) and model["__pydantic_fields_set__"] == {"name", "tags"}
    # a class named as a value, never instantiated: a record saying which
    assert out["cls"] == {"global": "tests.ingest.test_safe_pickle.Point"}
    assert out["in_tuple"] == ({"global": "tests.ingest.test_safe_pickle.Point"}, 3)


def test_pathlib_paths_are_the_strings_they_name():
    import pathlib

    value = {"dir": pathlib.PosixPath("/results/exp"), "rel": pathlib.PurePosixPath("a/b")}
    assert restricted_loads(pickle.dumps(value)) == {"dir": "/results/exp", "rel": "a/b"}


def test_a_third_party_function_a_pickle_asks_to_call_is_kept_inert_never_called(tmp_path):
    marker = tmp_path / "called"
    unknown: list[str] = []
    out = restricted_loads(pickle.dumps({"x": _Calls(touch, str(marker))}), unknown=unknown)
    assert not marker.exists()
    assert out["x"] == {"args": [str(marker)]} and unknown == ["tests.ingest.test_safe_pickle.touch"]


@pytest.mark.parametrize("func", [eval, getattr, functools.partial, subprocess.Popen, shutil.rmtree, os.system,
                                  importlib.import_module, list, dict, tuple])
def test_standard_library_callables_are_code_and_refused_before_anything_runs(func):
    with pytest.raises(SourceError) as e:
        restricted_loads(pickle.dumps({"x": _Calls(func, "print('hi')")}), where="s.pkl")
    assert e.value.rule == "forbidden_pickle_class" and e.value.reason.startswith("s.pkl: pickle needs ")
    assert func.__name__ in e.value.reason


def test_classes_a_pickle_names_are_a_budget():
    # five STACK_GLOBAL opcodes naming lib.mod.C0 .. C4 (each would cost a stand-in class)
    data = b"\x80\x04" + b"".join(b"\x8c\x07lib.mod\x8c\x02C%d\x93" % i for i in range(5)) + b"."
    err = _budget_error(lambda: restricted_loads(data, budgets=Budgets(pickle_classes=4)))
    assert "pickle_classes budget of 4" in err.reason and "lib.mod.C4" in err.reason
    assert restricted_loads(data, budgets=Budgets(pickle_classes=5)) == {"global": "lib.mod.C4"}


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


# --- budgets -----------------------------------------------------------------------------------------------

from ingest.source import Budgets  # noqa: E402


class _Calls:
    """Pickles as `func(*args)`, the way a hostile pickle asks the unpickler to allocate."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _budget_error(call) -> SourceError:
    with pytest.raises(SourceError) as e:
        call()
    assert e.value.rule == "budget_exceeded"
    return e.value


def test_a_bytearray_of_5_gib_is_refused_before_it_is_allocated():
    err = _budget_error(lambda: restricted_loads(pickle.dumps({"x": _Calls(bytearray, 5 << 30)}), where="step_3.pkl"))
    assert err.reason == ("step_3.pkl: a bytearray of 5368709120 bytes: over the pickle_array_bytes budget of "
                          "256 MiB (raise it with TRAJFORGE_BUDGET_PICKLE_ARRAY_BYTES=<larger>)")
    assert restricted_loads(pickle.dumps(_Calls(bytearray, 16))) == bytearray(16)  # small ones load


def test_numpy_array_shapes_are_metered_before_allocation():
    reconstruct = getattr(np, "_core", None) and np._core.multiarray._reconstruct or np.core.multiarray._reconstruct
    err = _budget_error(lambda: restricted_loads(pickle.dumps(_Calls(reconstruct, np.ndarray, (1 << 40,), b"b"))))
    assert "pickle_array_bytes" in err.reason and "shape (1099511627776,)" in err.reason
    # arrays that together pass the pickle's total are refused too
    small = Budgets(pickle_bytes=1 << 20, pickle_array_bytes=1 << 20)
    many = [_Calls(reconstruct, np.ndarray, (600_000,), b"b") for _ in range(2)]
    assert "pickle_bytes budget of 1 MiB" in _budget_error(lambda: restricted_loads(pickle.dumps(many),
                                                                                    budgets=small)).reason


def test_a_memo_dag_that_expands_exponentially_is_refused_quickly():
    node = ["leaf"]
    for _ in range(100):  # 2**100 leaves, a few hundred bytes of pickle
        node = [node, node]
    data = pickle.dumps({"obs": {"extra": node}})
    assert len(data) < 2000
    err = _budget_error(lambda: restricted_loads(data, where="step_3.pkl", budgets=Budgets(pickle_items=100_000)))
    assert "memo fan-out" in err.reason and "pickle_items budget of 100000" in err.reason
    # shared references that do not explode load as they are
    shared = ["x" * 10] * 1000
    assert restricted_loads(pickle.dumps({"a": shared, "b": shared}))["a"] == shared


def test_nesting_deeper_than_the_budget_is_refused_without_recursion():
    deep = b"\x80\x02" + b"]" * 100_000 + b"a" * 99_999 + b"."  # a list nested 100k levels, as opcodes
    err = _budget_error(lambda: restricted_loads(deep, where="deep.pkl"))
    assert "pickle_depth budget of 500" in err.reason


def test_a_pickle_larger_than_its_budget_is_refused_unread():
    err = _budget_error(lambda: restricted_loads(pickle.dumps(b"\0" * 4096), budgets=Budgets(pickle_bytes=1024)))
    assert "4" in err.reason and "pickle_bytes budget of 1 KiB" in err.reason


def test_bytes_after_the_pickle_are_said_not_ignored():
    data = pickle.dumps({"a": 1}, protocol=4)
    with pytest.raises(SourceError) as e:
        restricted_loads(data + b"junk", where="x.pkl")
    assert e.value.rule == "trailing_data" and "4 bytes after the end of the pickle" in e.value.reason
    notes: list[str] = []
    assert restricted_loads(data + b"junk", where="x.pkl", notes=notes) == {"a": 1}
    assert notes == ["x.pkl: 4 bytes after the end of the pickle (offset 21), not read"]
    # a second gzip member is read (as zcat does): its bytes follow the pickle and are said too
    notes = []
    assert load_gzip(gzip.compress(data) + gzip.compress(b"more"), "s.pkl.gz", notes=notes) == {"a": 1}
    assert notes == ["s.pkl.gz: 4 bytes after the end of the pickle (offset 21), not read"]


def test_gzipped_pickles_are_inflated_up_to_the_pickle_bytes_budget():
    bomb = gzip.compress(b"\0" * (8 << 20), 9) * 4  # 32 MiB of zeros in 4 members
    with pytest.raises(SourceError) as e:
        load_gzip(bomb, "step_0.pkl.gz", budgets=Budgets(pickle_bytes=4 << 20))
    assert e.value.rule == "archive_too_large"
    assert "pickle_bytes budget of 4 MiB" in e.value.reason and "TRAJFORGE_BUDGET_PICKLE_BYTES" in e.value.reason
