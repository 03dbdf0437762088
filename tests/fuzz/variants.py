"""Malformed variants of the bundled samples.

A `Variant` names a sample unit (a file or folder under `samples/`), the file in it that is damaged, the
class of damage, and its scope: `record` when one record of the file is damaged (the other records must still
land), `file` when the whole file may be lost (with a quarantine row). `make(root)` applies the damage to a
copy of the sample at `root`. `variants(full)` lists them: the quick subset (`quick=True`) or all.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import random
import sys
import types
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import orjson

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"
MiB = 1 << 20
PAYLOAD_MARKER = Path("/tmp") / f"trajforge-fuzz-payload-{os.getpid()}"  # a __reduce__ payload would create it


@dataclass(frozen=True)
class Variant:
    name: str  # "<sample>:<target>:<class>[:detail]"
    cls: str
    sample: str  # relative to samples/: the unit given as input (file or folder)
    target: str  # the damaged file inside the sample folder ("" when the sample is that file)
    scope: str  # "record" | "file"
    make: Callable[[Path], None]  # damage the copy at this path (the sample's copy: file or folder)
    quick: bool = False
    max_loss: int = 1  # record scope: steps the damaged record may take with it
    expect: str | None = None  # a text some quarantine row's rule or reason must hold (the budget named...)


# --- byte-level damage ------------------------------------------------------------------------------------

def truncate(fraction: float) -> Callable[[bytes], bytes]:
    return lambda data: data[:int(len(data) * fraction)]


def empty(data: bytes) -> bytes:
    return b""


def flip(seed: int, count: int = 8) -> Callable[[bytes], bytes]:
    def damage(data: bytes) -> bytes:
        rnd, out = random.Random(seed), bytearray(data)
        for _ in range(count):
            i = rnd.randrange(len(out))
            out[i] ^= rnd.randrange(1, 256)
        return bytes(out)
    return damage


def _line_start(data: bytes, fraction: float) -> int:
    i = data.find(b"\n", int(len(data) * fraction))
    return len(data) if i < 0 else i + 1


def insert_line(line: bytes, fraction: float = 0.5) -> Callable[[bytes], bytes]:
    def damage(data: bytes) -> bytes:
        i = _line_start(data, fraction)
        return data[:i] + line + b"\n" + data[i:]
    return damage


def invalid_utf8(fraction: float = 0.5) -> Callable[[bytes], bytes]:
    """Bytes that are never UTF-8 put inside the text after a line start (within a line's content)."""
    def damage(data: bytes) -> bytes:
        i = _line_start(data, fraction) + 2
        return data[:i] + b"\xc3\x28\xff\xfe" + data[i:]
    return damage


# --- JSON documents ---------------------------------------------------------------------------------------

Path_ = tuple  # keys / indexes from the document's root


def _set(doc, path: Path_, value):
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def json_edit(path: Path_, value) -> Callable[[bytes], bytes]:
    return lambda data: orjson.dumps(_set(orjson.loads(data), path, value))


def nested(depth: int, leaf=0):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def deep_json(path: Path_, depth: int) -> Callable[[bytes], bytes]:
    """Nesting past orjson's writer (`dumps` refuses 255+ levels), written as text."""
    def damage(data: bytes) -> bytes:
        marker = "__deep_marker__"
        text = orjson.dumps(_set(orjson.loads(data), path, marker))
        return text.replace(b'"' + marker.encode() + b'"', b"[" * depth + b"0" + b"]" * depth)
    return damage


def wrong_type(value):
    """A value of another JSON type than `value`'s."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, str):
        return 12345
    if isinstance(value, (int, float)):
        return "not a number"
    if isinstance(value, list):
        return {"not": "a list"}
    if isinstance(value, dict):
        return [1, 2]
    return ["was", "null"]


def record_fields(doc, list_path: Path_, index: int) -> Iterator[tuple[Path_, object]]:
    """(path, wrong value) for the record at list_path[index] itself and each of its fields."""
    node = doc
    for key in list_path:
        node = node[key]
    record = node[index]
    yield list_path + (index,), 7
    if isinstance(record, dict):
        for key, value in record.items():
            yield list_path + (index, key), wrong_type(value)


_PARAGRAPH = "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor %08d.</p>\n"


def big_text(size: int) -> str:
    """`size` characters of numbered paragraphs (a big page or log, not one repeated byte)."""
    return "".join(_PARAGRAPH % i for i in range(size // len(_PARAGRAPH % 0) + 1))[:size]


def _longest_string(node, path: Path_ = ()) -> tuple[int, Path_]:
    """(length, path) of the longest string inside `node`."""
    if isinstance(node, str):
        return len(node), path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    return max((_longest_string(value, path + (key,)) for key, value in items), default=(-1, path))


def huge_record(record: Path_, size: int) -> Callable[[bytes], bytes]:
    """The record at `record` (a path from the root) with its longest text grown to `size` characters."""
    def damage(data: bytes) -> bytes:
        doc = orjson.loads(data)
        node = doc
        for key in record:
            node = node[key]
        _, inner = _longest_string(node)
        return orjson.dumps(_set(doc, record + inner, big_text(size)) if record + inner else big_text(size))
    return damage


def huge_line(index: int, size: int) -> Callable[[bytes], bytes]:
    """Line `index` of a JSONL file with its longest text grown to `size` characters."""
    def damage(data: bytes) -> bytes:
        lines = data.split(b"\n")
        lines[index] = huge_record((), size)(lines[index])
        return b"\n".join(lines)
    return damage


# --- pickles (BrowserGym) ---------------------------------------------------------------------------------

@contextlib.contextmanager
def _fake_classes(qualified: set[str]):
    """Importable stand-ins for the classes a pickle names, so a loaded sample can be pickled again."""
    added = []
    classes = {}
    for name in qualified:
        module, cls = name.rsplit(".", 1)
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            mod = ".".join(parts[:i])
            if mod not in sys.modules:
                sys.modules[mod] = types.ModuleType(mod)
                added.append(mod)
        classes[name] = type(cls, (), {"__module__": module})
        setattr(sys.modules[module], cls, classes[name])
    try:
        yield classes
    finally:
        for mod in added:
            del sys.modules[mod]


def _rebuild(value, classes):
    from ingest.safe_pickle import Record

    if isinstance(value, Record):
        obj = classes[value.pickled_class].__new__(classes[value.pickled_class])
        obj.__dict__.update({k: _rebuild(v, classes) for k, v in value.items()})
        return obj
    if isinstance(value, dict):
        return {k: _rebuild(v, classes) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebuild(v, classes) for v in value]
    return value


def _records(value, found: set[str]) -> set[str]:
    from ingest.safe_pickle import Record

    if isinstance(value, Record):
        found.add(value.pickled_class)
    if isinstance(value, dict):
        for v in value.values():
            _records(v, found)
    elif isinstance(value, list):
        for v in value:
            _records(v, found)
    return found


def load_step(data: bytes):
    from ingest.browser.browsergym import ALLOWED
    from ingest.safe_pickle import restricted_loads

    return restricted_loads(gzip.decompress(data), ALLOWED, "fuzz")


def pickle_dumps(value, protocol: int = 4) -> bytes:
    import pickle

    return pickle.dumps(value, protocol=protocol)


_DEEP = "__deep_placeholder__"


def step_edit(edit: Callable[[dict], None], deep: int = 0) -> Callable[[bytes], bytes]:
    """The StepInfo with `edit` applied to its state (a dict), pickled again with its classes faked.

    The edit runs after the loaded value is rebuilt, so what it adds (a DAG) is never walked here. With
    `deep`, the string `_DEEP` it put somewhere becomes a list nested `deep` levels, written as opcodes (no
    pickler recurses that deep): protocol 2, whose unframed opcodes can be spliced."""
    def damage(data: bytes) -> bytes:
        info = load_step(data)
        with _fake_classes(_records(info, set())) as classes:
            obj = _rebuild(info, classes)
            edit(obj.__dict__)
            raw = pickle_dumps(obj, protocol=2 if deep else 4)
        if deep:
            placeholder = b"X" + len(_DEEP).to_bytes(4, "little") + _DEEP.encode()
            raw = raw.replace(placeholder, b"]" * deep + b"a" * (deep - 1), 1)
        return gzip.compress(raw, 1)
    return damage


def _assign(*path, value) -> Callable[[dict], None]:
    def edit(state):
        node = state
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value() if callable(value) else value
    return edit


def dag(levels: int):
    """A list DAG: each level holds the one below twice; pickled in a few hundred bytes, 2**levels leaves."""
    node: list = ["leaf"]
    for _ in range(levels):
        node = [node, node]
    return node


class _Reduce:
    """Pickles as `func(*args)`: what a malicious or hostile pickle asks the unpickler to call."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def reduce_payload(marker: Path) -> Callable[[bytes], bytes]:
    return lambda data: gzip.compress(pickle_dumps(_Reduce(os.system, f"touch {marker}")))


def numpy_shape_bomb() -> object:
    import numpy as np

    reconstruct = getattr(np, "_core", np.core).multiarray._reconstruct
    return _Reduce(reconstruct, np.ndarray, (1 << 40,), b"b")


def gzip_bomb(total: int) -> Callable[[bytes], bytes]:
    """Zeros in gzip members of 64 MiB each (every member is read): `total` bytes inflated, ~1/1000 of it stored."""
    def damage(data: bytes) -> bytes:
        member = gzip.compress(b"\0" * min(total, 64 * MiB), 9)
        return member * max(1, total // (64 * MiB))
    return damage


def big_string_step(size: int) -> Callable[[bytes], bytes]:
    """The StepInfo with an accessibility tree of `size` characters (one huge string a budget must bound)."""
    return step_edit(_assign("obs", "axtree_txt", value=lambda: "A" * size))


def second_member(data: bytes) -> bytes:
    return data + gzip.compress(b"more data after the pickle")


def trailing_garbage(data: bytes) -> bytes:
    return data + b"garbage after the gzip stream"


# --- zip (Playwright trace) -------------------------------------------------------------------------------

def zip_with_first(name: str, content: bytes) -> Callable[[bytes], bytes]:
    def damage(data: bytes) -> bytes:
        src = zipfile.ZipFile(io.BytesIO(data))
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(name, content)
            for info in src.infolist():
                z.writestr(info, src.read(info))
        return out.getvalue()
    return damage


def zip_bomb_member(size: int, lie: bool) -> Callable[[bytes], bytes]:
    """A member of `size` zeros first; with `lie`, its headers declare 1 KiB (caught only while inflating)."""
    def damage(data: bytes) -> bytes:
        blob = zip_with_first("9-trace.trace", b"\0" * size)(data)
        if not lie:
            return blob
        out = bytearray(blob)
        small = (1024).to_bytes(4, "little")
        local = out.find(b"PK\x03\x04")
        out[local + 22:local + 26] = small
        central = out.find(b"PK\x01\x02")
        out[central + 24:central + 28] = small
        return bytes(out)
    return damage


# --- UI Automator XML -------------------------------------------------------------------------------------

def xml_bounds_overflow(data: bytes) -> bytes:
    i = data.find(b'bounds="')
    j = data.find(b'"', i + 8)
    return data[:i + 8] + b"[0,0][99999999999,99999999999]" + data[j:]


def xml_deep(depth: int) -> Callable[[bytes], bytes]:
    def damage(data: bytes) -> bytes:
        i = data.find(b"<node")
        deep = b'<node class="x" bounds="[0,0][1,1]">' * depth + b"</node>" * depth
        return data[:i] + deep + data[i:]
    return damage


# --- the catalogue ----------------------------------------------------------------------------------------

def _pickle_cap() -> int:
    from ingest.source import Budgets

    return Budgets().pickle_bytes


def _field_cap() -> int:
    from ingest.source import Budgets

    return Budgets().field_bytes


def _file(fn: Callable[[bytes], bytes], target: str = "") -> Callable[[Path], None]:
    def make(root: Path) -> None:
        path = root / target if target else root
        path.write_bytes(fn(path.read_bytes()))
    return make


def _v(sample, target, cls, detail, fn, scope="file", quick=False, max_loss=1, expect=None) -> Variant:
    name = ":".join(p for p in (sample, target, cls, detail) if p)
    return Variant(name, cls, sample, target, scope, _file(fn, target), quick, max_loss, expect)


def _generic(sample: str, target: str, text: bool, quick: set[str] = frozenset()) -> list[Variant]:
    """Byte-level classes for any file: truncations, empty, byte flips, (for text) invalid UTF-8."""
    out = [_v(sample, target, "truncation", "half", truncate(0.5), quick="half" in quick),
           _v(sample, target, "truncation", "10b", truncate(10 / max(1, _size(sample, target))), quick="10b" in quick),
           _v(sample, target, "empty", "", empty, quick="empty" in quick)]
    out += [_v(sample, target, "byte_flip", f"seed{s}", flip(s), quick=f"seed{s}" in quick) for s in range(3)]
    if text:
        out.append(_v(sample, target, "invalid_utf8", "", invalid_utf8(), quick="utf8" in quick))
    return out


def _size(sample: str, target: str) -> int:
    return (SAMPLES / sample / target).stat().st_size if target else (SAMPLES / sample).stat().st_size


def _json_records(sample: str, target: str, list_path: Path_, index: int, quick_keys: set = frozenset(),
                  scope: str = "record", max_loss: int = 1) -> list[Variant]:
    doc = orjson.loads((SAMPLES / sample / target if target else SAMPLES / sample).read_bytes())
    out = []
    for path, value in record_fields(doc, list_path, index):
        label = ".".join(map(str, path))
        out.append(_v(sample, target, "wrong_type", label, json_edit(path, value), scope=scope,
                      quick=(path[-1] if len(path) > len(list_path) + 1 else "(record)") in quick_keys,
                      max_loss=max_loss))
    return out


def variants(full: bool = False) -> list[Variant]:
    found = _catalogue()
    return found if full else [v for v in found if v.quick]


def _catalogue() -> list[Variant]:
    out: list[Variant] = []
    bg, bg_step = "browser/browsergym-agentlab", "step_3.pkl.gz"

    # BrowserGym: one step file damaged: the other steps must land
    for v in _generic(bg, bg_step, text=False, quick={"half", "empty", "seed0"}):
        out.append(Variant(v.name, v.cls, v.sample, v.target, "record", v.make, v.quick))
    out += [
        _v(bg, bg_step, "wrong_type", "action=int", step_edit(_assign("action", value=5)), "record", quick=True,
           expect="field action: int"),
        _v(bg, bg_step, "wrong_type", "obs=list", step_edit(_assign("obs", value=[1])), "record"),
        _v(bg, bg_step, "wrong_type", "obs.open_pages_urls=int", step_edit(_assign("obs", "open_pages_urls", value=7)),
           "record", quick=True, expect="obs.open_pages_urls"),
        _v(bg, bg_step, "wrong_type", "obs.axtree_txt=bytes", step_edit(_assign("obs", "axtree_txt", value=b"\xff")),
           "record"),
        _v(bg, bg_step, "wrong_type", "agent_info.think=list", step_edit(_assign("agent_info", "think", value=[1])),
           "record"),
        _v(bg, bg_step, "wrong_type", "reward=str", step_edit(_assign("reward", value="x")), "record", max_loss=2),
        _v(bg, bg_step, "schema_overflow", "surrogate", step_edit(_assign("obs", "axtree_txt", value="a\udc80b")),
           "record", quick=True, expect="lone surrogate"),
        _v(bg, bg_step, "pickle_dag", "60 levels", step_edit(_assign("obs", "extra", value=lambda: dag(60))), "record",
           quick=True, expect="TRAJFORGE_BUDGET_PICKLE_ITEMS"),
        _v(bg, bg_step, "pickle_dag", "in action", step_edit(_assign("action", value=lambda: dag(60))), "record",
           expect="pickle_items"),
        _v(bg, bg_step, "deep_nesting", "100k", step_edit(_assign("obs", "extra", value=_DEEP), deep=100_000),
           "record", quick=True, expect="pickle_depth"),
        _v(bg, bg_step, "pickle_alloc", "bytearray 5 GiB",
           step_edit(_assign("obs", "extra", value=lambda: _Reduce(bytearray, 5 << 30))),
           "record", quick=True, expect="TRAJFORGE_BUDGET_PICKLE_ARRAY_BYTES"),
        _v(bg, bg_step, "pickle_alloc", "numpy 1 TiB", step_edit(_assign("obs", "extra", value=numpy_shape_bomb)),
           "record", expect="pickle_array_bytes"),
        _v(bg, bg_step, "pickle_reduce", "os.system", reduce_payload(PAYLOAD_MARKER), "record", quick=True,
           expect="forbidden_pickle_class"),
        _v(bg, bg_step, "gzip_bomb", "1 GiB", gzip_bomb(1 << 30), "record", quick=True,
           expect="TRAJFORGE_BUDGET_PICKLE_BYTES"),
        _v(bg, bg_step, "gzip_bomb", "10 GiB", gzip_bomb(10 << 30), "record",
           expect="pickle_bytes"),
        _v(bg, bg_step, "huge_string", "just under the pickle cap", big_string_step(_pickle_cap() - 16 * MiB),
           "record", expect="field_bytes"),
        _v(bg, bg_step, "huge_string", "just under the field cap", big_string_step(_field_cap() - 8 * MiB), "record",
           max_loss=0),
        _v(bg, bg_step, "gzip_member", "second member", second_member, "record", quick=True,
           max_loss=0, expect="trailing_data"),
        _v(bg, bg_step, "gzip_trailing", "garbage", trailing_garbage, "record", max_loss=0,
           expect="trailing data"),
        _v(bg, "step_0.pkl.gz", "truncation", "half", truncate(0.5), "record"),
        _v(bg, "step_5.pkl.gz", "truncation", "half", truncate(0.5), "record"),
        _v(bg, "summary_info.json", "truncation", "half", truncate(0.5), "record", max_loss=0),
        _v(bg, "summary_info.json", "wrong_type", "cum_reward", json_edit(("cum_reward",), "x"), "record", max_loss=0),
        _v(bg, "exp_args.pkl", "truncation", "half", truncate(0.5), "record", max_loss=0),
        _v(bg, "goal_object.pkl.gz", "empty", "", empty, "record", max_loss=0),
    ]

    # SWE-agent: one trajectory step / history message damaged
    v1 = "swe/sweagent-v1/6e44b9__sweagenttestrepo-1c2844.traj"
    out += _generic(v1, "", text=True, quick={"half", "empty", "seed1"})
    out += _json_records(v1, "", ("trajectory",), 2, quick_keys={"action", "thought", "(record)"})
    out += _json_records(v1, "", ("history",), 4, quick_keys={"content"}, max_loss=2)
    out += [_v(v1, "", "deep_nesting", "state 300", deep_json(("trajectory", 2, "state"), 300), "record", quick=True,
               expect="trajectory[2].state: cannot be written as JSON"),
            _v(v1, "", "deep_nesting", "100k", deep_json(("trajectory", 2, "state"), 100_000), "file",
               expect="json_depth"),
            _v(v1, "", "huge_line", "thought over the field cap",
               json_edit(("trajectory", 2, "thought"), "x" * (_field_cap() + MiB)), "record", expect="field_bytes")]
    legacy = "swe/sweagent-legacy/pydicom__pydicom-1458.traj"
    out += _generic(legacy, "", text=True)
    out += _json_records(legacy, "", ("trajectory",), 3)
    history = "swe/sweagent-history-only/function_calling_simple.traj"
    out += _generic(history, "", text=True)
    out += _json_records(history, "", ("history",), 3, quick_keys={"action"}, max_loss=2)

    # mini-swe-agent: one message damaged (a model turn, its output)
    mini = "swe/minisweagent-gemini3pro/trajs/django__django-16255/django__django-16255.traj.json"
    out += _generic(mini, "", text=True, quick={"half"})
    out += _json_records(mini, "", ("messages",), 4, quick_keys={"content", "(record)"})
    out += _json_records(mini, "", ("messages",), 5, quick_keys={"content"})

    # an AndroidWorld task runner's history.json: one step damaged, the other eleven land
    aw = "android/androidworld-history/LYXFOREVER-my_android_world/data_history/2025_04_19_23_20_05/history.json"
    out += _generic(aw, "", text=True, quick={"half"})
    out += [_v(aw, "", "wrong_type", label, json_edit(path, value), "record", quick=quick, expect=expect)
            for label, path, value, quick, expect in (
                ("(record)", (3,), 7, False, "step record 3"),
                ("ui_description", (3, "ui_description"), {"not": "a list"}, True, "`ui_description` is dict"),
                ("action_output", (3, "action_output"), 12345, True, "`action_output`"),
                ("ui_description[0]", (3, "ui_description", 0), 7, False, "`ui_description[0]`"),
                ("ui_bbox", (3, "ui_description", 2, "ui_bbox"), "wide", False, "ui_bbox"))]

    # AgentNet: one step damaged
    an, an_file = "macos/agentnet-darwin", "s_7f27a11115e596eb.json"
    out += _generic(an, an_file, text=True, quick={"half"})
    out += _json_records(an, an_file, ("steps",), 0, quick_keys={"step_num", "action", "inner_monologue"})
    out += [_v(an, an_file, "schema_overflow", "screen width 2**40",
               json_edit(("meta_info", "screen_resolution", "width"), 1 << 40), "record", quick=True, max_loss=0,
               expect="screen_resolution"),
            _v(an, an_file, "deep_nesting", "ground_truth 300", deep_json(("steps", 1, "ground_truth_actions"), 300),
               "record")]

    # UI Automator: a single dump is one record
    ui = "android/uiautomator-dump/window_dump.xml"
    out += _generic(ui, "", text=True, quick={"half", "seed0"})
    out += [_v(ui, "", "schema_overflow", "bounds", xml_bounds_overflow, quick=True, expect="field bounds"),
            _v(ui, "", "deep_nesting", "5000 nodes", xml_deep(5000), quick=True, expect="nested deeper"),
            _v(ui, "", "huge_line", "attribute 64 MiB", lambda d: d.replace(b'text=""', b'text="' + b"x" * (64 * MiB)
                                                                             + b'"', 1))]

    # getevent: one line damaged: at most the gesture it falls in is lost
    ge = "android/getevent/getevent_user_input.txt"
    for v in _generic(ge, "", text=True, quick={"seed0"}):  # a flipped byte damages one line, so one gesture
        damages_lines = v.cls in ("byte_flip", "invalid_utf8")
        out.append(Variant(v.name, v.cls, v.sample, v.target, "record" if damages_lines else v.scope, v.make,
                           v.quick, max_loss=8))
    out += [_v(ge, "", "hex_garbage", "line", insert_line(b"9f3a 00c1 ffee 0b1d 7a7a 0000 1234 beef"), "record",
               quick=True, max_loss=0, expect="not a getevent event line"),
            _v(ge, "", "hex_garbage", "binary", insert_line(bytes(range(128, 256))), "record", max_loss=0,
               expect="not valid UTF-8"),
            _v(ge, "", "hex_garbage", "value",
               lambda d: d.replace(b"ABS_MT_POSITION_X    0000", b"ABS_MT_POSITION_X    zz00", 1), "record",
               quick=True, expect="the gesture is left out"),
            _v(ge, "", "huge_line", "2 MiB", insert_line(b"[ 1.0] /dev/input/event2: " + b"x" * (2 * MiB)), "record",
               quick=True, max_loss=0, expect="TRAJFORGE_BUDGET_LINE_BYTES"),
            _v(ge, "", "invalid_utf8", "in event", lambda d: d.replace(b"EV_ABS", b"EV_\xffBS", 1), "record",
               expect="not valid UTF-8")]

    # coding-agent sessions (Claude Code, Codex): line-level damage to a JSONL transcript
    for session in ("claude-code/claude-code-log/sidechain_integrated.jsonl",
                    "codex/claude-code-log/rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"):
        out += _generic(session, "", text=True, quick={"half"})

    # chat logs read by their shape: one message of a trial damaged, the trial's other messages and the other
    # trials land; tau2 simulations and browser-use steps the same way
    tau = "chat/tau-bench/gpt-4o-airline.json"
    out += _generic(tau, "", text=True, quick={"half"})
    out += _json_records(tau, "", (0, "traj"), 4, quick_keys={"tool_calls", "content"}, max_loss=2)
    tau2 = "chat/tau2-bench/claude-sonnet-4-5_airline.json"
    out += _generic(tau2, "", text=True)
    out += _json_records(tau2, "", ("simulations", 1, "messages"), 4, quick_keys={"tool_calls"}, max_loss=2)
    bu = "browser/browser-use/agent_history.json"
    out += _generic(bu, "", text=True, quick={"half"})
    out += _json_records(bu, "", ("history",), 0, quick_keys={"model_output", "state"}, max_loss=1)

    # Playwright trace: the zip guards
    pw, pw_file = "browser/playwright-trace", "test-trace1.zip"
    out += _generic(pw, pw_file, text=False)
    out += [_v(pw, pw_file, "zip_traversal", "../ first", zip_with_first("../evil.trace", b"{}"), quick=True,
               expect="unsafe_archive_path"),
            _v(pw, pw_file, "zip_bomb", "ratio", zip_bomb_member(64 * MiB, lie=False), quick=True,
               expect="compression_ratio"),
            _v(pw, pw_file, "zip_bomb", "lying header", zip_bomb_member(64 * MiB, lie=True), quick=True)]

    # every other sample: byte-level classes only (full set), their readers' own business
    for sample, target, text in (("android/droidbot-run", "events/event_2021-12-06_204500.json", True),
                                 ("browser/har/har-redirect.har", "", True),
                                 ("browser/cdp-devtoolslog/redirects-from-script.devtoolslog.json", "", True),
                                 ("ubuntu/asciicast", None, True), ("mcp/jsonrpc-session.jsonl", "", True),
                                 ("search/search-session.jsonl", "", True),
                                 ("agentworld/bench/terminal_test.jsonl", "", True),
                                 ("swe/openhands-events/basic_interactions.json", "", True),
                                 ("atif/hello-world/trajectory.json", "", True)):
        if target is None:  # the folder's first file
            folder = SAMPLES / sample
            first = next((p for p in sorted(folder.iterdir()) if p.is_file() and p.name != "PROVENANCE.md"), None)
            if first is None:
                continue
            target = first.name
        if (SAMPLES / sample / target if target else SAMPLES / sample).exists():
            out += _generic(sample, target, text)
    out += _huge_records()
    return out


def _huge_records() -> list[Variant]:
    """A 50 MiB record (its longest text grown) in every JSON format, within the memory limit (a record costs
    ~10x its size at most: `bench/big_record.py`). Not damage: the record may be kept (file scope: no row is
    owed), and one that is lost needs a row (`silent_loss`)."""
    size, out = 50 * MiB, []
    for sample, target, record, quick in (
            ("browser/har/har-redirect.har", "", ("log", "entries", 1), False),  # a header value: ~1 s of scrub
            ("browser/cdp-devtoolslog/redirects-from-script.devtoolslog.json", "", (), True),
            ("atif/hello-world/trajectory.json", "", ("steps", 2), False),
            ("swe/openhands-events/basic_interactions.json", "", (1,), False),
            ("swe/sweagent-v1/6e44b9__sweagenttestrepo-1c2844.traj", "", ("trajectory", 2), False),
            ("swe/minisweagent-gemini3pro/trajs/django__django-16255/django__django-16255.traj.json", "",
             ("messages", 5), False),
            ("macos/agentnet-darwin", "s_7f27a11115e596eb.json", ("steps", 0), False),
            ("android/droidbot-run", "events/event_2021-12-06_204500.json", (), False)):
        out.append(_v(sample, target, "huge_record", "50 MiB", huge_record(record, size), quick=quick))
    for sample, index in (("agentworld/bench/terminal_test.jsonl", 1), ("mcp/jsonrpc-session.jsonl", 2),
                          ("search/search-session.jsonl", 2),
                          ("claude-code/claude-code-log/sidechain_integrated.jsonl", 2)):
        out.append(_v(sample, "", "huge_record", "50 MiB line", huge_line(index, size)))
    return out

