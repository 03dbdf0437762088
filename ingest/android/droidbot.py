"""DroidBot output directories and those of its forks: `events/event_<tag>.json` (one per event),
`states/state_<tag>.json` + `states/screen_<tag>.jpg` (DroidBot), or `all_states/state_<N>.json` +
`all_states/screen_<N>.png|jpg|jpeg` (Kea: numbered in the order recorded, its `tag` the number of events
sent by then, not a time), `utg.js`. Steps are the events in tag order.

Runs: DroidBot and Kea start every run with a `kill_app` event (then the app's start intent); DroidBot before
that (its 2020 releases) with a `key` HOME event then the start intent (`am start`), a pair its exploring
policies never send mid-run (they restart the app with the intent alone, and leave it with BACK or its stop
intent). Several runs written to one output folder are several episodes, split at each `kill_app` after the
first event, and at each HOME followed by `am start` (the first keeps the key "", a later one `run-<k>`).
States: an event names the state it acted on by hash (`start_state`, DroidBot's `state_str`), and the same
screen recurs (in one run and across runs): each event gets the state with that hash recorded nearest its own
time (both tags are local times of the same clock), or for Kea's numbered states the next one recorded after
the previous event's; its screenshot is the one saved beside that state. Coordinates are fractions of the
screen the event acted on: the state's `width` and `height` (read once per run), turned when its screenshot
or views show the screen rotated; states of the 2020 releases have no `width` / `height`, and then the root
view's bounds (`[[0, 0], [w, h]]`) are the screen. Tags are local time of an unknown zone, so step
timestamps stay null (the tags are kept in `env` and `raw`).

Event kinds: `event_type`, or, when it is null (Kea's rotations), the class named by `event_str`
(`RotateDeviceToLandscapeEvent()` -> a `command` step `rotate_device_right`). A kind this reader does not
know is kept as a `command` step with the event's text and its raw record, and a warning in
`env.ingest_warnings` (validate: `ingest.kept_unknown`).
"""

from __future__ import annotations

import datetime as dt
import functools
import posixpath
import re
from typing import Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.png import png_size
from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01, warn
from ingest.source import Source, SourceError, parse_json
from schemas.render import render_android_screen

FORMAT = "droidbot"
VERSION = "1"
INFO = FormatInfo(
    group="android", rank=90, domains=('android',), platform="android",
    summary=("DroidBot and Kea runs (several runs in one folder are several episodes, split at `kill_app` or, in "
             "DroidBot's 2020 releases, HOME then the start intent; coordinates a fraction of the screen each event "
             "acted on, landscape after a rotation)"),
)

_KEY_ACTIONS = {"BACK": "back", "HOME": "home"}
_STATE_DIRS = ("states", "all_states")  # DroidBot's, Kea's
_SCREEN_EXTENSIONS = (".jpg", ".png", ".jpeg")
_NUMBER = (int, float)
_TAG = re.compile(r"^(\d{4}-\d{2}-\d{2}_\d{6})")
# the class an event_str names -> its event_type (DroidBot's and Kea's input_event.py KEY_* constants)
_EVENT_CLASSES = {
    "KillAppEvent": "kill_app", "IntentEvent": "intent", "KeyEvent": "key", "TouchEvent": "touch",
    "LongTouchEvent": "long_touch", "SetTextEvent": "set_text", "ScrollEvent": "scroll", "SwipeEvent": "swipe",
    "ExitEvent": "exit", "RotateDeviceToLandscapeEvent": "rotate_device_right",
    "RotateDeviceToPortraitEvent": "rotate_device_neutral", "ReInstallAppEvent": "fresh_reinstall_app",
    "KillAndRestartAppEvent": "KillAndRestartAppEvent",
}
_DEVICE_COMMANDS = {"rotate_device_right": "landscape", "rotate_device_neutral": "portrait",
                    "fresh_reinstall_app": None, "KillAndRestartAppEvent": None}


def units(files: list[str], head) -> list[str]:
    """A DroidBot run is a directory holding events/event_*.json."""
    runs = set()
    folder = None  # the last events folder looked at: its other event files name the same run (files are sorted)
    for path in files:
        cut = path.rfind("/") + 1  # where posixpath.split cuts the name off
        if not (path.startswith("event_", cut) and path.endswith(".json")) or path[:cut] == folder:
            continue
        folder = path[:cut]
        parent = posixpath.split(path)[0]
        if posixpath.basename(parent) == "events":
            runs.add(posixpath.dirname(parent))
    return sorted(runs)


def _time(tag) -> dt.datetime | None:
    """A DroidBot tag (`2021-12-06_204452`, local time) as a naive datetime, for ordering and distances."""
    return _str_time(tag) if isinstance(tag, str) else None


@functools.lru_cache(maxsize=4096)  # an event, the state it acted on and its screenshot share a tag: parsed once
def _str_time(tag: str) -> dt.datetime | None:
    m = _TAG.match(tag)
    if not m:
        return None
    text = m.group(1)
    try:  # the fixed layout by slicing: strptime cost 7 % of a DroidBot ingest
        return dt.datetime(int(text[0:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]), int(text[13:15]),
                           int(text[15:17]))
    except ValueError:
        return None


def _load_states(source: Source) -> tuple[dict[str, list[dict]], list[Rejected]]:
    """state_str -> every state recorded with it (`_time`, `_screenshot` added), from states/ and all_states/."""
    states: dict[str, list[dict]] = {}
    rejected = []
    for folder in _STATE_DIRS:
        ordered = source.listdir(folder)
        names = source.listed(folder)  # the same names as a set, for the screenshots' look-up
        for name in ordered:
            if not (name.startswith("state_") and name.endswith(".json")):
                continue
            rel = f"{folder}/{name}"
            try:
                state = parse_json(source.read_bytes(rel), rel, source.budgets)
                if not isinstance(state, dict):
                    raise SourceError("bad_record", f"{rel}: not a JSON object")
            except SourceError as e:
                rejected.append(Rejected(e.rule, e.reason, rel))
                continue
            suffix = name[6:-5]  # DroidBot: the state's tag; Kea: the number of the event it came before
            stem = f"screen_{suffix}"
            shot = next((stem + ext for ext in _SCREEN_EXTENSIONS if stem + ext in names), None)
            image = None
            if shot is not None:
                media = "image/png" if shot.endswith(".png") else "image/jpeg"
                image = source.read_bytes(f"{folder}/{shot}")
                state["_screenshot"] = source.put_blob(image, media, source.uri)
            state["_size"] = _screen_size(state, image)
            state["_time"] = _time(state.get("tag")) or _time(suffix)
            state["_order"] = int(suffix) if suffix.isdigit() else None  # Kea: numbered as recorded
            states.setdefault(state.get("state_str"), []).append(state)
    return states, rejected


def _screen_size(state: dict, image: bytes | None) -> tuple[int, int] | None:
    """The screen's (width, height) when the state was recorded: the state's `width` and `height`, turned when
    its screenshot (a PNG's header) is the other way round, or, without one, when its views reach past them.
    DroidBot and Kea read `width` and `height` once per run, so after a rotation (Kea's
    `RotateDeviceToLandscapeEvent`) they still give the portrait size while the screen, its screenshot and its
    views' bounds are landscape. (The screenshot gives the orientation only: a copy may be scaled.)"""
    width, height = state.get("width"), state.get("height")
    if width is None and height is None:
        return _root_size(state)
    if not (isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0):
        return None
    shot = png_size(image) if image else None
    if shot and shot[0] != shot[1]:
        turned = (shot[0] > shot[1]) != (width > height)
    else:
        turned = _turned(state.get("views") or [], width, height)
    return (height, width) if turned else (width, height)


def _turned(views: list, width: int, height: int) -> bool:
    """Whether the views show the screen turned from `width` x `height`: the largest right or bottom edge of
    their bounds reaches past it, and none reaches past the turned screen. Stops at the first view that
    reaches past the turned screen: the first view of a portrait DroidBot state, its full-screen root, is
    taller than the screen is wide, so one view decides (the pass over every view's bounds this replaces
    cost 3 % of a DroidBot ingest); only a turned screen has all its views read."""
    right = bottom = 0
    number = _NUMBER
    for view in views:  # `_is_bounds` inline: a call a view cost more than the test
        if type(view) is dict:
            bounds = view.get("bounds")
            if type(bounds) is list and len(bounds) == 2:
                start, end = bounds
                if not (type(start) is list and len(start) == 2 and type(end) is list and len(end) == 2
                        and isinstance(start[0], number) and isinstance(start[1], number)
                        and isinstance(end[0], number) and isinstance(end[1], number)):
                    continue
                x, y = end
            elif isinstance(bounds, list) and _is_bounds(bounds):  # a list subclass: the general test
                x, y = bounds[1]
            else:
                continue
        elif isinstance(view, dict) and _is_bounds(view.get("bounds")):
            x, y = view["bounds"][1]
        else:
            continue
        if x > height or y > width:
            return False
        right, bottom = max(right, x), max(bottom, y)
    return right > width or bottom > height


def _root_size(state: dict) -> tuple[int, int] | None:
    """The screen as the root view (`parent` -1) spans it, when that view starts at the origin: the size of a
    state that does not say its own (DroidBot's 2020 releases)."""
    root = next((v for v in state.get("views") or [] if isinstance(v, dict) and v.get("parent") == -1), None)
    bounds = root.get("bounds") if root else None
    if not _is_bounds(bounds) or bounds[0] != [0, 0] or bounds[1][0] <= 0 or bounds[1][1] <= 0:
        return None
    return int(bounds[1][0]), int(bounds[1][1])


def _is_bounds(bounds) -> bool:
    """Two points of two numbers each: `[[x1, y1], [x2, y2]]`. (Tested one part at a time, not with all()
    over generators: this runs for every view of every state.)"""
    if not (isinstance(bounds, list) and len(bounds) == 2):
        return False
    start, end = bounds
    return (isinstance(start, list) and len(start) == 2 and isinstance(end, list) and len(end) == 2
            and isinstance(start[0], _NUMBER) and isinstance(start[1], _NUMBER)
            and isinstance(end[0], _NUMBER) and isinstance(end[1], _NUMBER))


def _acted_on(states: list[dict] | None, when: dt.datetime | None, after: int) -> dict | None:
    """The recorded state an event acted on, among those with its state hash: the one recorded nearest the
    event's time (DroidBot's tags are times); for Kea's states, which carry no time but are numbered in the
    order they were recorded, the first numbered after `after` (the previous event's state), else the last
    before it (Kea records no state after its last event). The same screen recurs (same hash), each time
    with its own screenshot: the first of them for every event would show a screen from another moment."""
    numbered = sorted((s for s in states or [] if s["_time"] is None and s["_order"] is not None),
                      key=lambda s: s["_order"])
    if not numbered or any(s["_time"] is not None for s in states):
        return _nearest(states, when)
    return next((s for s in numbered if s["_order"] > after), numbered[-1])


def _nearest(states: list[dict] | None, when: dt.datetime | None) -> dict | None:
    """The state recorded nearest `when` (the first recorded when times are unknown)."""
    if not states:
        return None
    if when is None:
        return states[0]
    timed = [s for s in states if s["_time"] is not None]
    if not timed:
        return states[0]
    return min(timed, key=lambda s: (abs((s["_time"] - when).total_seconds()), s["_time"]))


def _observation(state: dict, rendered: dict[tuple, Observation], texts: dict[tuple, str]) -> Observation:
    """The state's observation; `rendered` holds those made so far by content (view tree, activity,
    screenshot, size), `texts` their screen texts by what the text is made of (view tree, activity): DroidBot
    saves a state file at every event, so one screen recurs in many files, each time with a screenshot of its
    own, and its text is rendered once."""
    views = state.get("views") or []
    ui_tree = orjson.dumps(views)
    activity = state.get("foreground_activity")
    size = state.get("_size")
    key = (ui_tree, activity, state.get("_screenshot"), size)
    found = rendered.get(key)
    if found is None:
        text = texts.get((ui_tree, activity))
        if text is None:
            text = texts[ui_tree, activity] = render_android_screen(views, f"Activity: {activity}")
        found = rendered[key] = Observation(
            kind="screen",
            text=text,
            ui_tree=ui_tree,
            screenshot=state.get("_screenshot"),
            width=size[0] if size else None,
            height=size[1] if size else None,
        )
    return found


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


def event_kind(record: dict) -> str | None:
    """The event's type: `event_type`, else the class its `event_str` names (`RotateDeviceToLandscapeEvent()`)."""
    etype = record["event"].get("event_type")
    if etype:
        return etype
    match = re.match(r"\s*(\w+)\(", record.get("event_str") or "")
    return _EVENT_CLASSES.get(match.group(1), match.group(1)) if match else None


def _action(record: dict, size: tuple[int, int] | None) -> tuple[Action, bool]:
    """(the event's action, whether its kind is one this reader knows)."""
    event = record["event"]
    etype = event_kind(record)
    raw = orjson.dumps(record)
    view = event.get("view")
    element = _element(view) if isinstance(view, dict) else None
    if etype == "kill_app":
        return Action(kind="command", code=event.get("stop_intent"), raw=raw), True
    if etype == "intent":
        intent = event.get("intent") or ""
        if intent.startswith("am start"):
            component = intent.split()[-1]
            return Action(kind="open_app", text=component.split("/")[0], code=intent, raw=raw), True
        return Action(kind="command", code=intent, raw=raw), True
    if etype == "key":
        name = event.get("name") or ""
        kind = _KEY_ACTIONS.get(name.upper())
        return (Action(kind=kind, raw=raw) if kind else Action(kind="key", keys=[name], raw=raw)), True
    if etype in ("touch", "long_touch", "set_text", "scroll"):
        x, y = _point(event, size)
        kind = {"touch": "tap", "long_touch": "long_press", "set_text": "type", "scroll": "scroll"}[etype]
        return Action(kind=kind, x=x, y=y, element=element, text=event.get("text"),
                      direction=(event.get("direction") or "").lower() or None, raw=raw), True
    if etype == "swipe":
        (x, y), (x2, y2) = _point({"x": event.get("start_x"), "y": event.get("start_y")}, size), \
            _point({"x": event.get("end_x"), "y": event.get("end_y")}, size)
        return Action(kind="swipe", x=x, y=y, x2=x2, y2=y2, element=element, raw=raw), True
    if etype == "exit":
        return Action(kind="done", raw=raw), True
    if etype in _DEVICE_COMMANDS:  # rotations, reinstalls: done to the device, not on a view
        return Action(kind="command", code=etype, text=_DEVICE_COMMANDS[etype], raw=raw), True
    return Action(kind="command", code=record.get("event_str") or etype, raw=raw), False


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


def _events(source: Source) -> Iterator[dict | Rejected]:
    """Each event file's record in tag order; a row for each unusable one."""
    for name in source.listdir("events"):
        if not (name.startswith("event_") and name.endswith(".json")):
            continue
        rel = f"events/{name}"
        try:
            record = parse_json(source.read_bytes(rel), rel, source.budgets)
            if not isinstance(record, dict) or not isinstance(record.get("event"), dict):
                raise SourceError("bad_record", f"{rel}: no 'event' object")
            record.setdefault("tag", name[6:-5])
        except SourceError as e:
            yield Rejected(e.rule, e.reason if e.reason.startswith(rel) else f"{rel}: {e.reason}", rel)
            continue
        yield record


def _runs(events: list[tuple]) -> list[list[tuple]]:
    """The events split where a run starts: at each `kill_app` after the first event, and at each HOME key
    followed by the app's start intent (how DroidBot's 2020 releases began a run)."""
    runs: list[list] = []
    for i, item in enumerate(events):
        if not runs or (runs[-1] and _starts_run(item[0], events[i + 1][0] if i + 1 < len(events) else None)):
            runs.append([])
        runs[-1].append(item)
    return runs


def _starts_run(record: dict, following: dict | None) -> bool:
    kind = event_kind(record)
    if kind == "kill_app":
        return True
    return (kind == "key" and str(record["event"].get("name") or "").upper() == "HOME" and following is not None
            and event_kind(following) == "intent" and str(following["event"].get("intent") or "").startswith(
                "am start"))


def read(source: Source) -> Iterator[Episode | Rejected]:
    states, rejected = _load_states(source)
    yield from rejected
    sizes = [s["_size"] for group in states.values() for s in group if s.get("_size")]
    size = sizes[0] if sizes else None  # for events on a state that was not saved
    events, after = [], -1  # (record, action, kind known, state acted on); `after`: that state's number
    for item in _events(source):
        if isinstance(item, Rejected):
            yield item
            continue
        state = _acted_on(states.get(item.get("start_state")), _time(item["tag"]), after)
        after = state["_order"] if state and state["_order"] is not None else after
        # coordinates are a fraction of the screen the event acted on (landscape after a rotation)
        events.append((item, *_action(item, (state or {}).get("_size") or size), state))
    if not events:
        yield Rejected("empty_episode", f"{source.uri}: no usable events", "events")
        return
    runs = _runs(events)
    info = _run_info(source)
    observations: dict[int, Observation] = {}  # a state seen again is looked up once
    rendered: dict[tuple, Observation] = {}  # a screen saved again in another state file is made once
    texts: dict[tuple, str] = {}  # and its text rendered once, whatever its screenshot

    def observe(state: dict | None) -> Observation:
        if state is None:
            return Observation(kind="none")
        if id(state) not in observations:
            observations[id(state)] = _observation(state, rendered, texts)
        return observations[id(state)]

    for k, run in enumerate(runs):
        steps, unknown = [], []
        for record, action, known, state in run:
            steps.append(Step(observation=observe(state), action=action))
            if not known:
                unknown.append(f"event {record['tag']}: kind {event_kind(record)!r} "
                               f"({record.get('event_str')}) kept as a command with its raw record")
        last = run[-1][0]
        acted = run[-1][3]
        final = _acted_on(states.get(last.get("stop_state")), _time(last["tag"]),
                          acted["_order"] if acted and acted["_order"] is not None else after)
        env = {"device": "android", **info, "local_time_first": run[0][0]["tag"], "local_time_last": last["tag"]}
        if size:
            env["screen_size"] = list(size)
        if len(runs) > 1:
            env["run"] = {"index": k, "count": len(runs)}
        for reason in unknown:
            warn(env, "unknown_event", reason)
        yield Episode(
            key="" if k == 0 else f"run-{k}",
            domain="android",
            platform="android",
            steps=steps,
            task=None,  # DroidBot explores an app; it has no instruction
            final_observation=observe(final) if final else None,
            env=env,
            terminated=False,  # runs stop on a time or event budget: truncated, not terminal
        )
