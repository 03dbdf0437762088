"""`adb shell getevent -lt` logs (raw Linux input events): taps, long presses, swipes and key presses.

One log file is one episode; its steps are the gestures and key presses in the order they started.

Decoding, per input device (devices interleave in one log):
- Multitouch protocol B: `ABS_MT_SLOT` selects a finger slot, `ABS_MT_TRACKING_ID` >= 0 puts a finger
  down in it and `ffffffff` (-1) lifts it; `ABS_MT_POSITION_X/Y` update the slot's position and are omitted
  when unchanged, so a slot keeps its last position (a new touch may report no position at all).
  `SYN_REPORT` closes a frame. A gesture runs from the frame where the first finger goes down to the frame
  where the last one lifts; its start and end points are those of the first finger.
- A gesture whose first finger moved more than `TAP_MAX_DISTANCE` (normalized) is a `swipe` (`direction`
  is where the finger moved); otherwise one held `LONG_PRESS_S` or longer is a `long_press`, else a `tap`.
- `EV_KEY KEY_*` DOWN..UP is a key press: KEY_BACK -> `back`, KEY_HOME / KEY_HOMEPAGE -> `home`, any other
  key -> `key` with `keys=["KEY_..."]`. `BTN_*` codes (touch buttons) belong to gestures, not keys.

Coordinates are scaled from device units with the axis ranges of a `getevent -lp` header when the log has
one (`ABS_MT_POSITION_X : value 0, min 0, max 32767, ...`), the way Android does:
(v - min) / (max - min + 1). Without it the emulator's virtio default 0..32767 is assumed and the episode's
`env.input_devices[...].axis_source` says so.

Times are kernel uptime seconds, not wall clock: step timestamps stay null; each action keeps its
`duration_s`, and the episode's `env` holds the uptime of each step's start (`step_uptime_s`) and the
offsets from the first one (`step_offset_s`). Each action's `raw` is its source lines, verbatim.
There is no screen in such a log: observations are `kind = "none"`.

Bad input, each quarantined with its line number while the rest of the log is used: a line that is neither
an event nor a header line (garbage, a cut line), an event whose type, code or value is not what getevent
prints (a value that is not 8 hex digits, DOWN, UP or REPEAT), a line that is not valid UTF-8 or is longer
than the `line_bytes` budget (`budget_exceeded`), and a gesture or key still down when the log ends
(`incomplete_gesture`). A touch gesture that holds a bad line of its device is quarantined whole
(`bad_record`, its first line): the path it would give cannot be trusted.
"""

from __future__ import annotations

import math
import posixpath
import re
from dataclasses import dataclass, field
from typing import Iterator

from ingest.arrow import checked_episode, step_problem
from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01
from ingest.source import Source, text_lines

FORMAT = "getevent"
VERSION = "1"
INFO = FormatInfo(
    group="android", rank=100, domains=('android',), platform="android",
    summary="`getevent -lt` logs",
)

TAP_MAX_DISTANCE = 0.04  # normalized; the tap/swipe split Android-in-the-Wild uses too
LONG_PRESS_S = 0.5  # Android's long-press timeout (ViewConfiguration: 400-500 ms)
VIRTIO_RANGE = (0, 32767)  # the Android emulator's virtio multitouch axes
_KEY_ACTIONS = {"KEY_BACK": "back", "KEY_HOME": "home", "KEY_HOMEPAGE": "home"}

_EVENT = re.compile(r"^(?:\[\s*(\d+\.\d+)\]\s+)?(/dev/input/event\d+):\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_ADD_DEVICE = re.compile(r"^add device \d+:\s+(/dev/input/event\d+)")
_NAME = re.compile(r'^\s+name:\s+"(.*)"')
# at a line start, so a document that quotes such a line (a README) is not taken for a log
_SNIFF = re.compile(rb"(?m)^(?:add device \d+: /dev/input/event|(?:\[\s*\d+\.\d+\]\s+)?/dev/input/event\d+: EV_)")
_ABSINFO = re.compile(r"(ABS_MT_POSITION_[XY])\b[^:]*:\s*value\s+-?\d+,\s*min\s+(-?\d+),\s*max\s+(-?\d+)")


def units(files: list[str], head) -> list[str]:
    """A file whose head has `add device N: /dev/input/...` or `/dev/input/eventK: EV_...` lines."""
    return [path for path in files if b"/dev/input/event" in head(path) and _SNIFF.search(head(path))]


@dataclass
class _Slot:
    tracking_id: int | None = None
    x: int | None = None
    y: int | None = None


@dataclass
class _Gesture:
    line: int
    start: float | None
    slot: int  # the first finger's slot: its path is the gesture's
    x0: int | None
    y0: int | None
    lines: list[str]


@dataclass
class _Device:
    path: str
    name: str | None = None
    axes: dict[str, tuple[int, int]] = field(default_factory=dict)  # ABS_MT_POSITION_X/Y -> (min, max)
    slot: int = 0
    slots: dict[int, _Slot] = field(default_factory=dict)
    frame: list[tuple[int, str]] = field(default_factory=list)  # (line number, line) since the last SYN
    gesture: _Gesture | None = None
    keys_down: dict[str, tuple[int, float | None, list[str]]] = field(default_factory=dict)
    touched: bool = False
    tainted: list[int] = field(default_factory=list)  # bad lines of this device since the gesture began


def _value(text: str) -> int:
    """getevent -l prints ABS values as 8-digit hex; a 32-bit two's complement (ffffffff = -1)."""
    value = int(text, 16)
    return value - (1 << 32) if value >= 1 << 31 else value


def _scale(value: int | None, axis: tuple[int, int]) -> float | None:
    if value is None:
        return None
    lo, hi = axis
    return clamp01((value - lo) / (hi - lo + 1))


def _axis(dev: _Device, name: str) -> tuple[int, int]:
    return dev.axes.get(name, VIRTIO_RANGE)


def _touch_action(dev: _Device, g: _Gesture, end: float | None) -> Action:
    slot = dev.slots[g.slot]
    ax, ay = _axis(dev, "ABS_MT_POSITION_X"), _axis(dev, "ABS_MT_POSITION_Y")
    x, y = _scale(g.x0, ax), _scale(g.y0, ay)
    x2, y2 = _scale(slot.x, ax), _scale(slot.y, ay)
    duration = round(end - g.start, 6) if end is not None and g.start is not None else None
    raw = "\n".join(g.lines)
    if None not in (x, y, x2, y2) and math.dist((x, y), (x2, y2)) > TAP_MAX_DISTANCE:
        dx, dy = x2 - x, y2 - y
        direction = ("right" if dx > 0 else "left") if abs(dx) >= abs(dy) else ("down" if dy > 0 else "up")
        return Action(kind="swipe", x=x, y=y, x2=x2, y2=y2, direction=direction, duration_s=duration, raw=raw)
    kind = "long_press" if duration is not None and duration >= LONG_PRESS_S else "tap"
    return Action(kind=kind, x=x, y=y, duration_s=duration, raw=raw)


def _on_syn(dev: _Device, t: float | None, started: list, rejected: list[Rejected], where: str) -> None:
    """Close a frame: start, extend or finish the device's gesture. A gesture that holds a bad line (one that
    did not parse) is quarantined when it ends instead of becoming an action: its path cannot be trusted."""
    active = sorted(s for s, slot in dev.slots.items() if slot.tracking_id is not None)
    lines = [line for _, line in dev.frame]
    first_line = dev.frame[0][0] if dev.frame else 0
    dev.frame = []
    g = dev.gesture
    if g is None:
        if active:
            slot = dev.slots[active[0]]
            dev.gesture = _Gesture(first_line, t, active[0], slot.x, slot.y, lines)
            dev.touched = True
        else:
            dev.tainted = []  # a bad line in a frame that touched nothing changed no action
        return
    g.lines.extend(lines)
    if g.x0 is None and g.slot in active:  # position reported after the down frame
        g.x0, g.y0 = dev.slots[g.slot].x, dev.slots[g.slot].y
    if not active:
        if dev.tainted:
            rejected.append(Rejected("bad_record", f"{where}: line {g.line}: the touch on {dev.path} holds line(s) "
                                     f"{', '.join(map(str, dev.tainted[:5]))} that did not parse; the gesture is "
                                     "left out", where, line=g.line, snippet="\n".join(g.lines)[:2000],
                                     record_id=f"gesture at line {g.line}"))
            dev.tainted = []
        else:
            started.append((g.line, g.start, _touch_action(dev, g, t)))
        dev.gesture = None


def _on_key(dev: _Device, code: str, value: str, lineno: int, t: float | None, line: str, started: list) -> None:
    if value == "DOWN" or value == "00000001":
        dev.keys_down[code] = (lineno, t, [line])
    elif code in dev.keys_down and value in ("REPEAT", "00000002"):
        dev.keys_down[code][2].append(line)
    elif code in dev.keys_down and value in ("UP", "00000000"):
        first, t0, lines = dev.keys_down.pop(code)
        lines.append(line)
        duration = round(t - t0, 6) if t is not None and t0 is not None else None
        kind = _KEY_ACTIONS.get(code)
        action = Action(kind=kind, duration_s=duration, raw="\n".join(lines)) if kind else \
            Action(kind="key", keys=[code], duration_s=duration, raw="\n".join(lines))
        started.append((first, t0, action))


_TOKEN = re.compile(r"^(?:[A-Z][A-Z0-9_]*|[0-9a-f]{4})$")  # EV_ABS, ABS_MT_SLOT, KEY_BACK, or raw hex
_VALUE = re.compile(r"^(?:[0-9a-f]{8}|DOWN|UP|REPEAT)$")
_DEVICE = re.compile(r"/dev/input/event\d+")
_HEADER_LINE = ("add device", "could not ")


def read(source: Source) -> Iterator[Episode | Rejected]:
    """The log's episode. A line that does not parse (garbage, invalid UTF-8, over the `line_bytes` budget,
    a value that is not hex) is quarantined with its number; a gesture it falls into is quarantined whole."""
    name = posixpath.basename(source.path)
    data = source.read_bytes()
    devices: dict[str, _Device] = {}
    current: _Device | None = None  # the device a header block describes
    started: list[tuple[int, float | None, Action]] = []  # (first line, uptime, action)
    rejected: list[Rejected] = []  # gestures that hold a bad line, yielded in line order at the end

    def device(path: str) -> _Device:
        return devices.setdefault(path, _Device(path))

    def bad(lineno: int, line: str | None, reason: str) -> Rejected:
        """The row for a bad line; the gesture under way on its device (when it names one) is tainted."""
        if line is not None and (d := _DEVICE.search(line)) and d.group(0) in devices:
            devices[d.group(0)].tainted.append(lineno)
        return Rejected("budget_exceeded" if line is None else "parse_error", reason, name, line=lineno,
                        snippet=line[:300] if line else None, record_id=f"line {lineno}")

    for lineno, line, problem in text_lines(data, name, source.budgets):
        if problem is not None:
            yield bad(lineno, line, problem)
            continue
        m = _EVENT.match(line)
        if m is None:
            if (a := _ADD_DEVICE.match(line)):
                current = device(a.group(1))
            elif current is not None and (n := _NAME.match(line)):
                current.name = n.group(1)
            elif current is not None and (info := _ABSINFO.search(line)):
                current.axes[info.group(1)] = (int(info.group(2)), int(info.group(3)))
            elif line.strip() and not line[0].isspace() and not line.startswith(_HEADER_LINE):
                # indented lines are the rest of a device's header (events:, input props:...): nothing we use
                yield bad(lineno, line, f"{name}: line {lineno}: not a getevent event line")
            continue
        stamp, path, etype, code, value = m.groups()
        if not (_TOKEN.match(etype) and _TOKEN.match(code) and _VALUE.match(value)):
            yield bad(lineno, line, f"{name}: line {lineno}: {etype} {code} {value}: not an event type, code and "
                      "value getevent prints")
            continue
        t = float(stamp) if stamp else None
        dev = device(path)
        if etype == "EV_KEY" and code.startswith("KEY_"):
            _on_key(dev, code, value, lineno, t, line, started)
            continue
        dev.frame.append((lineno, line))
        if etype == "EV_ABS":
            _on_abs(dev, code, value)
        elif etype == "EV_SYN" and code == "SYN_REPORT":
            _on_syn(dev, t, started, rejected, name)
    yield from sorted(rejected, key=lambda r: r.line or 0)
    yield from _still_down(devices, name)
    yield from _episode(started, devices, name)


def _on_abs(dev: _Device, code: str, value: str) -> None:
    """A multi-touch axis event: the slot it addresses, or the tracking id / position of the current slot."""
    if code == "ABS_MT_SLOT":
        dev.slot = _value(value)
    elif code in ("ABS_MT_TRACKING_ID", "ABS_MT_POSITION_X", "ABS_MT_POSITION_Y"):
        slot = dev.slots.setdefault(dev.slot, _Slot())
        v = _value(value)
        if code == "ABS_MT_TRACKING_ID":
            slot.tracking_id = None if v < 0 else v
        elif code == "ABS_MT_POSITION_X":
            slot.x = v
        else:
            slot.y = v


def _still_down(devices: dict[str, _Device], name: str) -> Iterator[Rejected]:
    """A touch or a key still down when the log ends: an `incomplete_gesture` row each."""
    for dev in devices.values():
        if dev.gesture is not None:
            g = dev.gesture
            yield Rejected("incomplete_gesture", f"{name}: line {g.line}: touch on {dev.path} still down when the "
                           "log ends", name, line=g.line, snippet="\n".join(g.lines),
                           record_id=f"gesture at line {g.line}")
        for code, (first, _, lines) in dev.keys_down.items():
            yield Rejected("incomplete_gesture", f"{name}: line {first}: {code} on {dev.path} still down when the "
                           "log ends", name, line=first, snippet="\n".join(lines), record_id=f"key at line {first}")


def _episode(started: list[tuple[int, float | None, Action]], devices: dict[str, _Device],
             name: str) -> Iterator[Episode | Rejected]:
    """The episode of the gestures and keys in line order; one whose action fails the step check is a
    `bad_record` row and left out."""
    kept = []
    for first, t0, action in sorted(started, key=lambda s: s[0]):
        if (problem := step_problem(Step(observation=Observation(kind="none"), action=action))) is not None:
            yield Rejected("bad_record", f"{name}: line {first}: field {problem}; the gesture is left out", name,
                           line=first, record_id=f"gesture at line {first}")
        else:
            kept.append((first, t0, action))
    started = kept
    if not started:
        return
    uptimes = [t for _, t, _ in started]
    env: dict = {"device": "android", "clock": "kernel uptime seconds (not wall clock)",
                 "input_devices": _device_env(devices)}
    if None not in uptimes:
        env["step_uptime_s"] = uptimes
        env["step_offset_s"] = [round(t - uptimes[0], 6) for t in uptimes]
    yield checked_episode(Episode(
        key="",
        domain="android",
        platform="android",
        steps=[Step(observation=Observation(kind="none"), action=action) for _, _, action in started],
        env=env,
        terminated=False,  # a capture stops when recording stops: nothing says the task ended
    ), name)


def _device_env(devices: dict[str, _Device]) -> dict:
    out = {}
    for path, dev in sorted(devices.items()):
        entry: dict = {"name": dev.name}
        if dev.touched:
            measured = "ABS_MT_POSITION_X" in dev.axes and "ABS_MT_POSITION_Y" in dev.axes
            entry["x_range"] = list(_axis(dev, "ABS_MT_POSITION_X"))
            entry["y_range"] = list(_axis(dev, "ABS_MT_POSITION_Y"))
            entry["axis_source"] = "getevent -lp" if measured else "assumed: emulator virtio default 0..32767"
        out[path] = entry
    return out
