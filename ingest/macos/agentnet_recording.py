"""AgentNet raw recordings: one recorder folder is one episode, whatever OS it was recorded on.

The folder holds `metadata.json` (`system` Darwin / Windows / Linux, `screen_width`, `screen_height`,
`scroll_direction`, `start_time` / `stop_time` as local wall-clock strings without a zone,
`video_start_timestamp`), `task_name.json` (`task_name`), `reduced_events_complete.jsonl` (one high-level
action per line: `action` click / drag / scroll / type / press..., `coordinate` in pixels, `button`,
`click_type`, `target` {control_type, title}, `axtree`: the accessibility tree when the action began,
`start_time` / `end_time` on the recorder's monotonic clock), `reduced_events_vis.jsonl` (the same actions
described for people: "Click on Action Centre"), `a11y.jsonl` (periodic tree snapshots `{time_stamp,
axtree}`), `top_window.jsonl`, `events.jsonl` (the raw input stream) and a screen video (not read here).

Steps: one per reduced action. The observation is the action's own `axtree` (else the last `a11y.jsonl`
snapshot before it), rendered to text by `schemas.render_a11y`, the tree itself in `ui_tree`; the video
frames are not extracted, so there is no screenshot. Coordinates are divided by the screen size. `raw` is the
action's line, verbatim except its `axtree` (which is the observation's `ui_tree`). The people-facing
description goes to `reasoning`. The final observation is the first snapshot after the last action.

Platform comes from `metadata.system`. Times are a monotonic clock plus local wall-clock strings of an
unknown zone: step timestamps stay null; the wall-clock strings are kept in `env`. A recording with a
`stop_time` was stopped by the demonstrator (terminal); without one it is truncated. Outcome unknown.
A line of a `.jsonl` file that is no JSON object, or a broken `task_name.json`, is one quarantine row; the
recording is kept without it.
"""

from __future__ import annotations

import bisect
import posixpath
import xml.etree.ElementTree as ET
from typing import Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.macos.agentnet import platform_of
from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01
from ingest.source import Source, SourceError, parse_json
from schemas.render_a11y import render_a11y

FORMAT = "agentnet_recording"
VERSION = "1"
INFO = FormatInfo(
    group="macos", rank=190, domains=('os',), platform="varies",
    summary="raw AgentNet recordings (accessibility trees rendered to text; the platform comes from the recording)",
)

ACTIONS_FILE = "reduced_events_complete.jsonl"


def units(files: list[str], head) -> list[str]:
    """A recording is a directory holding metadata.json and reduced_events_complete.jsonl."""
    by_dir: dict[str, set[str]] = {}
    for path in files:
        parent, name = posixpath.split(path)
        by_dir.setdefault(parent, set()).add(name)
    return sorted(d for d, names in by_dir.items() if {"metadata.json", ACTIONS_FILE} <= names)


def _jsonl(source: Source, rel: str, required: bool = False) -> tuple[list[tuple[int, dict]], list[Rejected]]:
    if not source.exists(rel):
        if required:
            raise SourceError("missing_file", f"{rel}: file not found", rel)
        return [], []
    rows, rejected = [], []
    for n, raw in enumerate(source.read_bytes(rel).split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            rejected.append(Rejected("parse_error", f"{rel} line {n}: invalid JSON: {e}", rel, line=n,
                                     snippet=raw[:200].decode("utf-8", "replace")))
            continue
        if not isinstance(row, dict):
            rejected.append(Rejected("bad_record", f"{rel} line {n}: expected an object", rel, line=n))
            continue
        rows.append((n, row))
    return rows, rejected


def _point(p, size) -> tuple[float | None, float | None]:
    if isinstance(p, dict):
        p = (p.get("x"), p.get("y"))
    if not (isinstance(p, (list, tuple)) and len(p) >= 2 and all(isinstance(v, (int, float)) for v in p[:2])):
        return None, None
    return clamp01(p[0] / size[0]), clamp01(p[1] / size[1])


def _target(record: dict) -> str | None:
    target = record.get("target") if isinstance(record.get("target"), dict) else {}
    if not target.get("mark"):  # the recorder found no element under the pointer at action time
        target = record.get("past_frame_target") or {}
    keep = {k: target[k] for k in ("control_type", "title") if target.get(k) is not None}
    return orjson.dumps(keep).decode() if keep else None


def _action(record: dict, size, scroll_direction: int) -> Action:
    kind = record.get("action")
    raw = orjson.dumps({k: v for k, v in record.items() if k != "axtree"}).decode()
    x, y = _point(record.get("coordinate"), size)
    element = _target(record)
    duration = None
    if isinstance(record.get("start_time"), (int, float)) and isinstance(record.get("end_time"), (int, float)):
        duration = round(record["end_time"] - record["start_time"], 6)
    if kind == "click":
        clicks = record.get("click_type") or 1
        button = record.get("button") or "left"
        typed = "double_click" if clicks == 2 else "right_click" if button == "right" else "click"
        return Action(kind=typed, x=x, y=y, element=element, duration_s=duration, raw=raw)
    if kind == "drag":
        trace = record.get("drag_trace") or []
        x2, y2 = _point(trace[-1], size) if trace else (None, None)
        return Action(kind="drag", x=x, y=y, x2=x2, y2=y2, element=element, duration_s=duration, raw=raw)
    if kind == "scroll":
        trace = [t for t in record.get("trace") or [] if isinstance(t, dict)]
        if trace and x is None:
            x, y = _point(trace[0], size)
        dy = sum(t.get("dy") or 0 for t in trace) * scroll_direction
        dx = sum(t.get("dx") or 0 for t in trace)
        direction = ("down" if dy > 0 else "up") if dy else ("right" if dx > 0 else "left") if dx else None
        return Action(kind="scroll", x=x, y=y, direction=direction, element=element, duration_s=duration,
                      arguments=orjson.dumps({"dx": dx, "dy": sum(t.get("dy") or 0 for t in trace)}).decode(),
                      raw=raw)
    if kind in ("type", "typing", "write") or isinstance(record.get("text"), str):
        return Action(kind="type", text=record.get("text") or record.get("content"), element=element,
                      duration_s=duration, raw=raw)
    if kind in ("press", "hotkey", "key"):
        keys = record.get("keys") or record.get("key") or record.get("name")
        keys = [str(k) for k in keys] if isinstance(keys, list) else [str(keys)] if keys else None
        return Action(kind="hotkey" if keys and len(keys) > 1 else "key", keys=keys, element=element,
                      duration_s=duration, raw=raw)
    return Action(kind="code", code=record.get("description") or str(kind), x=x, y=y, element=element,
                  duration_s=duration, raw=raw)


class _Snapshots:
    """a11y.jsonl snapshots by time: the last one at or before a moment, the first one after."""

    def __init__(self, rows: list[dict]):
        rows = sorted((r for r in rows if isinstance(r.get("time_stamp"), (int, float)) and r.get("axtree")),
                      key=lambda r: r["time_stamp"])
        self.times = [r["time_stamp"] for r in rows]
        self.trees = [r["axtree"] for r in rows]

    def before(self, t):
        i = bisect.bisect_right(self.times, t) - 1
        return self.trees[i] if i >= 0 else None

    def after(self, t):
        i = bisect.bisect_left(self.times, t)
        return self.trees[i] if i < len(self.trees) else None


def _observation(tree, window: str | None, size) -> Observation:
    if tree is None:
        return Observation(kind="screen", width=size[0], height=size[1])
    header = f"Window: {window}" if window else None
    try:
        text = render_a11y(tree, header)
    except (ValueError, RecursionError, ET.ParseError) as e:  # another shape, too deep, XML that does not parse
        text = "\n".join(filter(None, [header, f"(accessibility tree not renderable: {e})"]))
    try:
        ui_tree = orjson.dumps(tree).decode()
    except orjson.JSONEncodeError:  # nested deeper than orjson writes (255 levels): the text says it is too deep
        ui_tree = None
    return Observation(kind="screen", text=text, ui_tree=ui_tree, width=size[0], height=size[1])


def read(source: Source) -> Iterator[Episode | Rejected]:
    meta = parse_json(source.read_bytes("metadata.json"), "metadata.json")
    if not isinstance(meta, dict):
        raise SourceError("bad_record", "metadata.json: expected an object", "metadata.json")
    platform = platform_of(meta.get("system"))
    if platform is None:
        raise SourceError("unknown_platform", f"metadata.json: system {meta.get('system')!r} is not Darwin, "
                          "Windows or Linux", "metadata.json")
    width, height = meta.get("screen_width"), meta.get("screen_height")
    if not (isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0):
        raise SourceError("bad_record", f"metadata.json: screen size {width!r}x{height!r} is missing", "metadata.json")
    size = (width, height)
    scroll_direction = -1 if meta.get("scroll_direction") == -1 else 1

    actions, rejected = _jsonl(source, ACTIONS_FILE, required=True)
    vis, vis_rejected = _jsonl(source, "reduced_events_vis.jsonl")
    snaps, snap_rejected = _jsonl(source, "a11y.jsonl")
    windows, window_rejected = _jsonl(source, "top_window.jsonl")
    yield from rejected + vis_rejected + snap_rejected + window_rejected
    described = {row.get("id"): row.get("action") for _, row in vis}
    snapshots = _Snapshots([row for _, row in snaps])
    window_times = sorted((w["time_stamp"], w.get("top_window_name")) for _, w in windows
                          if isinstance(w.get("time_stamp"), (int, float)))

    def window_at(t):
        i = bisect.bisect_right([wt for wt, _ in window_times], t) - 1 if isinstance(t, (int, float)) else -1
        return window_times[i][1] if i >= 0 else None

    steps, last_end = [], None
    for n, record in actions:
        start = record.get("start_time")
        tree = record.get("axtree") or (snapshots.before(start) if isinstance(start, (int, float)) else None)
        action = _action(record, size, scroll_direction)
        description = described.get(record.get("id"))
        steps.append(Step(observation=_observation(tree, window_at(start), size), action=action,
                          reasoning=f"Action: {description}" if isinstance(description, str) else None))
        last_end = record.get("end_time", start)

    final_tree = snapshots.after(last_end) if isinstance(last_end, (int, float)) else None
    task = None
    if source.exists("task_name.json"):
        try:
            info = parse_json(source.read_bytes("task_name.json"), "task_name.json")
            task = info.get("task_name") if isinstance(info, dict) else None
        except SourceError as e:  # the task only: the recording stands without it
            yield e.as_rejected()
    env = {key: meta[key] for key in ("system", "release", "version", "machine") if meta.get(key) is not None}
    env.update(screen_size=[width, height], start_time_local=meta.get("start_time"),
               stop_time_local=meta.get("stop_time"))
    yield Episode(
        key="",
        domain="os",
        platform=platform,
        steps=steps,
        task=task,
        terminated=bool(meta.get("stop_time")),
        final_observation=_observation(final_tree, window_at(last_end), size) if final_tree is not None else None,
        env=env,
    )
