"""DroidBot output directories: `events/event_<tag>.json`, `states/state_<tag>.json`, `screen_<tag>.jpg`,
`utg.js`. One directory is one episode; steps are the events in tag order.

Events link to UI states by the `start_state`/`stop_state` hashes (`state_str`), not by tag. Tags are local
time of an unknown zone, so step timestamps stay null (the tags are kept in `env` and `raw`).
"""

from __future__ import annotations

import posixpath
from typing import Iterator

import orjson

from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01
from ingest.source import Source, SourceError, parse_json
from schemas.render import render_android_screen

FORMAT = "droidbot"
VERSION = "1"

_KEY_ACTIONS = {"BACK": "back", "HOME": "home"}


def units(files: list[str], head) -> list[str]:
    """A DroidBot run is a directory holding events/event_*.json."""
    runs = set()
    for path in files:
        parent, name = posixpath.split(path)
        if name.startswith("event_") and name.endswith(".json") and posixpath.basename(parent) == "events":
            runs.add(posixpath.dirname(parent))
    return sorted(runs)


def _load_states(source: Source) -> tuple[dict[str, dict], list[Rejected]]:
    states, rejected = {}, []
    for name in source.listdir("states"):
        if not (name.startswith("state_") and name.endswith(".json")):
            continue
        rel = f"states/{name}"
        try:
            state = parse_json(source.read_bytes(rel), rel)
        except SourceError as e:
            rejected.append(Rejected(e.rule, e.reason, rel))
            continue
        screenshot = f"states/screen_{state.get('tag', name[6:-5])}.jpg"
        if source.exists(screenshot):
            state["_screenshot"] = source.put_blob(source.read_bytes(screenshot), "image/jpeg", source.uri)
        states[state.get("state_str")] = state
    return states, rejected


def _observation(state: dict | None) -> Observation:
    if state is None:
        return Observation(kind="none")
    views = state.get("views") or []
    return Observation(
        kind="screen",
        text=render_android_screen(views, f"Activity: {state.get('foreground_activity')}"),
        ui_tree=orjson.dumps(views),
        screenshot=state.get("_screenshot"),
        width=state.get("width"),
        height=state.get("height"),
    )


def _element(view: dict) -> bytes:
    keep = ("temp_id", "class", "resource_id", "text", "content_description", "bounds", "view_str")
    return orjson.dumps({k: view.get(k) for k in keep})


def _point(event: dict, size: tuple[int, int] | None) -> tuple[float | None, float | None]:
    view = event.get("view")
    if event.get("x") is not None and event.get("y") is not None:
        x, y = event["x"], event["y"]
    elif view and view.get("bounds"):
        (x1, y1), (x2, y2) = view["bounds"]
        x, y = (x1 + x2) / 2, (y1 + y2) / 2
    else:
        return None, None
    if not size:
        return None, None
    return clamp01(x / size[0]), clamp01(y / size[1])


def _action(record: dict, size: tuple[int, int] | None) -> Action:
    event = record["event"]
    etype = event.get("event_type")
    raw = orjson.dumps(record)
    view = event.get("view")
    element = _element(view) if view else None
    if etype == "kill_app":
        return Action(kind="command", code=event.get("stop_intent"), raw=raw)
    if etype == "intent":
        intent = event.get("intent") or ""
        if intent.startswith("am start"):
            component = intent.split()[-1]
            return Action(kind="open_app", text=component.split("/")[0], code=intent, raw=raw)
        return Action(kind="command", code=intent, raw=raw)
    if etype == "key":
        name = event.get("name") or ""
        kind = _KEY_ACTIONS.get(name.upper())
        return Action(kind=kind, raw=raw) if kind else Action(kind="key", keys=[name], raw=raw)
    if etype in ("touch", "long_touch", "set_text", "scroll"):
        x, y = _point(event, size)
        kind = {"touch": "tap", "long_touch": "long_press", "set_text": "type", "scroll": "scroll"}[etype]
        return Action(kind=kind, x=x, y=y, element=element, text=event.get("text"),
                      direction=(event.get("direction") or "").lower() or None, raw=raw)
    if etype == "swipe":
        (x, y), (x2, y2) = _point({"x": event.get("start_x"), "y": event.get("start_y")}, size), \
            _point({"x": event.get("end_x"), "y": event.get("end_y")}, size)
        return Action(kind="swipe", x=x, y=y, x2=x2, y2=y2, element=element, raw=raw)
    raise SourceError("unsupported_event", f"event type {etype!r} is not supported")


def _run_info(source: Source) -> dict:
    """Device and app facts from utg.js (JavaScript `var utg = {...}`); empty when absent or unreadable."""
    if not source.exists("utg.js"):
        return {}
    text = source.read_bytes("utg.js")
    try:
        utg = orjson.loads(text.split(b"=", 1)[1])
    except (IndexError, orjson.JSONDecodeError):
        return {}
    keys = ("device_model_number", "device_sdk_version", "app_package", "app_main_activity", "app_sha256")
    return {k: utg[k] for k in keys if k in utg}


def read(source: Source) -> Iterator[Episode | Rejected]:
    states, rejected = _load_states(source)
    yield from rejected
    sizes = [(s["width"], s["height"]) for s in states.values() if s.get("width") and s.get("height")]
    size = sizes[0] if sizes else None

    steps: list[Step] = []
    tags: list[str] = []
    last_stop = None
    observations: dict[str, Observation] = {}  # events often start from a state seen before

    for name in source.listdir("events"):
        if not (name.startswith("event_") and name.endswith(".json")):
            continue
        rel = f"events/{name}"
        try:
            record = parse_json(source.read_bytes(rel), rel)
            if not isinstance(record, dict) or not isinstance(record.get("event"), dict):
                raise SourceError("bad_record", f"{rel}: no 'event' object")
            action = _action(record, size)
        except SourceError as e:
            yield Rejected(e.rule, e.reason if e.reason.startswith(rel) else f"{rel}: {e.reason}", rel)
            continue
        start = record.get("start_state")
        if start not in observations:
            observations[start] = _observation(states.get(start))
        steps.append(Step(observation=observations[start], action=action))
        tags.append(record.get("tag") or name[6:-5])
        last_stop = record.get("stop_state")

    if not steps:
        yield Rejected("empty_episode", f"{source.uri}: no usable events", "events")
        return
    env = {"device": "android", **_run_info(source), "local_time_first": tags[0], "local_time_last": tags[-1]}
    if size:
        env["screen_size"] = list(size)
    final = states.get(last_stop)
    yield Episode(
        key="",
        domain="android",
        platform="android",
        steps=steps,
        task=None,  # DroidBot explores an app; it has no instruction
        final_observation=_observation(final) if final else None,
        env=env,
        terminated=False,  # runs stop on a time or event budget: truncated, not terminal
    )
