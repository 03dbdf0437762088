"""`history.json` files of an AndroidWorld fork's task runner that runs AndroidWorld's M3A agent over its tasks and
saves each run as `data_history/<YYYY_MM_DD_HH_MM_SS>/history.json` (`save_history` of `minimal_tasks_runner.py` in
LYXFOREVER/my_android_world): a list of the agent's steps, each with the task goal, the run's `result`, the model's
reply (`action_output`), the reason it gave (`action_reason`), the step's `summary`, the prompts the agent built
(`action_prompt`, `summary_prompt`: copies of the goal, the history and the element list, not read) and the UI
elements it saw (`ui_description`: `UI element N: {"index": N, "text": ..., "is_clickable": True, ...}` with
`ui_bbox` `[x_min, x_max, y_min, y_max]` in screen pixels).

Replies come in two forms, told apart by the reply: M3A's JSONAction (`Reason: ...` then `Action: {"action_type":
"click", "index": 6}`) and UI-TARS's calls (`Thought: ...` then `Action: click(start_box='(500,891)')`), which the
runner turned into JSONActions with its own patterns (`convert_action_format_for_uitars`; read here the same way).
The summary says what the harness did with the reply: `Action selected: ...` (executed), `Agent thinks the request
has been completed.` (a status action: the run ends), or why nothing was executed (`Can not parse the output...`):
such a reply is kept as a `message` step, said in `env.ingest_warnings`.

Points. An element-indexed action is executed at the centre of that element's bounds (screen pixels). A JSONAction
with `x`, `y` is executed by AndroidWorld's `actuation.execute_adb_action`, which multiplies them by the screen's
size (it takes fractions of the screen): UI-TARS's numbers, which are thousandths of the screen (UI-TARS's 0-1000
relative coordinates, inferred: the prompt gives no space; as thousandths they fall on the elements the model names),
were tapped at `(x * width, y * height)`, off the screen. The point stored is the executed one (at the screen's edge,
`raw.point.outside_screen`, flagged by validation); the model's intended pixel and the element under it are kept in
`raw.model_point`; `env.point_spaces` says so. A UI-TARS scroll's point is ignored by the executor (it scrolls the
whole screen) and is kept in raw only.

The screen's size is the extent of the elements' bounds (the file keeps none; the root element spans the screen).
The outcome is the run's `result`: `is_done and task.is_successful(env)`, the evaluator consulted only when the agent
said it was done; `env` keeps whether it did (`agent_claimed_done`, `evaluator_consulted`). No screenshot is in the
file; the writer saves `<i>_raw.png` (and `<i>_som.png`, the same screen with element marks) beside it only for steps
that kept them: a step's raw screenshot is its observation's, the marked copy is left (`members`).
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.android.json_action import json_action
from ingest.coords import Space, place
from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Observation, Rejected, Step, episode_without_steps, warn
from ingest.source import Source, SourceError, parse_json
from schemas.render import render_android_screen

FORMAT = "androidworld_history"
VERSION = "1"
INFO = FormatInfo(
    group="android", rank=203, domains=('android',), platform="android",
    summary=("`history.json` runs of an AndroidWorld task runner driving M3A (a list of steps: the UI element list with "
             "pixel bounds, the model's M3A-JSON or UI-TARS reply, the step summary, the run's result)"),
    producer="LYXFOREVER/my_android_world `minimal_tasks_runner.py` (`save_history`, M3A with gpt-4o-mini or UI-TARS)",
    versions="my_android_world @ 3322745 (runs of January and April 2025)",
    proof=("cannot run here (an Android emulator and a model): two whole real runs read against the raw files (a "
           "12-step UI-TARS failure whose clicks the executor sent off the screen, golden, in `samples/android`; a "
           "20-step M3A-JSON failure at the step limit, beside the test); one repository so far; edge cases "
           "hand-made (`tests/ingest/android/test_androidworld_history.py`)"),
)

_HEAD = re.compile(rb'^\[\s*\{\s*"task_goal":\s*"')
_RESULT = re.compile(rb'"result":\s*(?:true|false|null)')
_SHOT = re.compile(r"^(\d+)_(raw|som)\.png$")
_STEP_KEYS = frozenset(("task_goal", "result", "action_prompt", "action_output", "action_reason", "summary_prompt",
                        "summary", "ui_description"))
_ELEMENT = re.compile(r'^UI element (\d+): \{"index": (\d+)')
_FIELDS = ("text", "content_description", "hint_text", "tooltip", "is_clickable", "is_long_clickable",
           "is_editable", "is_scrollable", "is_focusable", "is_selected", "is_checked")
_JSON_ACTION = re.compile(r"Action:\s*(\{.*\})", re.DOTALL)
_UI_TARS = (  # the runner's own patterns (convert_action_format_for_uitars), in its order
    (re.compile(r"click\(start_box='\((\d+),(\d+)\)'\)"), lambda m: {"action_type": "click", "x": int(m[1]),
                                                                      "y": int(m[2])}),
    (re.compile(r"long_press\(start_box='\((\d+),(\d+)\)'\)"),
     lambda m: {"action_type": "long_press", "x": int(m[1]), "y": int(m[2])}),
    (re.compile(r"type\(content='([^']*)'(\s*\\n)?\)"), lambda m: {"action_type": "input_text", "text": m[1]}),
    (re.compile(r"scroll\(start_box='\((\d+),(\d+)\)', direction='(\w+)'\)"),
     lambda m: {"action_type": "scroll", "direction": m[3], "x": int(m[1]), "y": int(m[2])}),
    (re.compile(r"open_app\(app_name='([^']*)'\)"), lambda m: {"action_type": "open_app", "app_name": m[1]}),
    (re.compile(r"press_home\(\)"), lambda m: {"action_type": "navigate_home"}),
    (re.compile(r"press_back\(\)"), lambda m: {"action_type": "navigate_back"}),
)
# summaries the agent writes when it executed nothing for the reply
_NOT_EXECUTED = ("Can not parse the output", "Output for action selection is not in the correct format",
                 "The parameter index is out of range")
_DONE = "Agent thinks the request has been completed."
_MODEL_SPACE = Space("model_thousandths", 1000, 1000)
_EXECUTED_SPACE = Space("screen_fraction", 1, 1)


def units(files: list[str], head) -> list[str]:
    """`.json` files that open as a list whose first step starts with the runner's `"task_goal"` and holds its
    `"result"` and `"action_prompt"`."""
    found = []
    for path in files:
        if not path.endswith(".json"):
            continue
        start = head(path).lstrip()
        if _HEAD.match(start) and _RESULT.search(start) and b'"action_prompt":' in start:
            found.append(path)
    return found


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The screenshots the writer saves beside its file (`<i>_raw.png`, `<i>_som.png`): the raw ones are read as
    the steps' observations, the marked copies are left."""
    by_folder: dict[str, list[str]] = {}
    for path in files:
        if _SHOT.match(posixpath.basename(path)):
            by_folder.setdefault(posixpath.dirname(path), []).append(path)
    out = {}
    for path in found:
        shots = sorted(by_folder.get(posixpath.dirname(path), []))
        if shots:
            out[path] = [p if p.endswith("_raw.png") else
                         (p, "the step's screenshot with the agent's element marks drawn on it; the raw one is read")
                         for p in shots]
    return out


def _name(path: str) -> str:
    """`<run folder>/history.json`: every run's file has the same name."""
    folder, base = posixpath.split(path)
    return posixpath.join(posixpath.basename(folder), base) if folder else base


def _value(text: str, key: str):
    if key.startswith("is_"):
        if text not in ("True", "False"):
            raise ValueError(f"`{key}` is {text!r}, not True or False")
        return text == "True"
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise ValueError(f"`{key}` is {text!r}, not a quoted text")
    return text[1:-1]


def _fields(body: str) -> dict:
    """The fields of an element description after its index, in the writer's fixed order (a text may hold quotes:
    a value ends where the next known key starts)."""
    marks, pos = [], 0
    for key in _FIELDS:
        at = body.find(f', "{key}": ', pos)
        if at >= 0:
            marks.append((at, at + len(key) + 6, key))
            pos = at + len(key) + 6
    if (marks[0][0] if marks else len(body)) != 0:
        raise ValueError(f"unexpected text after the index: {body[:60]!r}")
    return {key: _value(body[start:marks[n + 1][0] if n + 1 < len(marks) else len(body)], key)
            for n, (_, start, key) in enumerate(marks)}


def _view(entry, position: int) -> dict:
    """One `ui_description` entry as a view of the flat list every Android reader stores; `temp_id` is the index
    the agent's actions name. Raises ValueError for an entry of another shape."""
    if not isinstance(entry, dict) or not isinstance(entry.get("ui_description"), str):
        raise ValueError(f"`ui_description[{position}]` has no `ui_description` text")
    text, box = entry["ui_description"], entry.get("ui_bbox")
    head = _ELEMENT.match(text)
    if not head or head[1] != head[2] or not text.endswith("}"):
        raise ValueError(f"`ui_description[{position}]` is not `UI element N: {{...}}`: {text[:60]!r}")
    if box is not None and not (isinstance(box, list) and len(box) == 4 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in box)):
        raise ValueError(f"`ui_description[{position}].ui_bbox` is {box!r}, not [x_min, x_max, y_min, y_max]")
    fields = _fields(text[head.end():-1])
    view = {"temp_id": int(head[1]), "parent": -1, "children": [], "class": None,
            "text": fields.pop("text", None), "content_description": fields.pop("content_description", None),
            "resource_id": None, "bounds": [[box[0], box[2]], [box[1], box[3]]] if box else None, "visible": True}
    view.update({key[3:]: value for key, value in fields.items() if key.startswith("is_")})
    view.update({key: value for key, value in fields.items() if not key.startswith("is_")})
    return view


def _screen(records: list) -> Space | None:
    """The extent of every element's bounds in the file (the root element spans the screen)."""
    width = height = 0
    for record in records:
        for entry in (record.get("ui_description") if isinstance(record, dict) else None) or []:
            box = entry.get("ui_bbox") if isinstance(entry, dict) else None
            if isinstance(box, list) and len(box) == 4 and all(isinstance(v, (int, float)) for v in box):
                width, height = max(width, box[1]), max(height, box[3])
    return Space("screen", width, height) if width and height else None


def _under(views: list[dict], px: float, py: float) -> dict | None:
    """The smallest element whose bounds hold the pixel."""
    best = None
    for view in views:
        if view["bounds"]:
            (x1, y1), (x2, y2) = view["bounds"]
            if x1 <= px <= x2 and y1 <= py <= y2 and (best is None or (x2 - x1) * (y2 - y1) < best[0]):
                best = ((x2 - x1) * (y2 - y1), view)
    return best[1] if best else None


def _element(view: dict) -> dict:
    return {"index": view["temp_id"], **{k: view[k] for k in ("text", "content_description", "bounds") if view[k]}}


def _decode(reply: str) -> tuple[dict | None, str | None]:
    """(the JSONAction the runner made of the reply, its form: `m3a_json` or `ui_tars`), or (None, None)."""
    found = _JSON_ACTION.findall(reply)
    if found:
        try:
            act = orjson.loads(found[-1])
        except orjson.JSONDecodeError:
            return None, None
        return (act, "m3a_json") if isinstance(act, dict) and isinstance(act.get("action_type"), str) else (None, None)
    said = reply.rpartition("Action:")[2]
    hits = [(m.start(), make(m)) for pattern, make in _UI_TARS if (m := pattern.search(said))]
    return (min(hits, key=lambda hit: hit[0])[1], "ui_tars") if hits else (None, None)


def _points(act: dict, form: str, views: list[dict], screen: Space | None, raw: dict):
    """(x, y, element) of the executed point, filling `raw`'s `point` and (UI-TARS) `model_point`."""
    index = act.get("index")
    if isinstance(index, int) and not isinstance(index, bool):
        view = next((v for v in views if v["temp_id"] == index), None)
        if view is None:
            raise ValueError(f"the action names element {index}, which the step's `ui_description` does not list")
        if not (view["bounds"] and screen):
            return None, None, _element(view)
        (x1, y1), (x2, y2) = view["bounds"]
        x, y, raw["point"] = place((x1 + x2) / 2, (y1 + y2) / 2, screen, note=f"centre of element {index}'s bounds")
        return x, y, _element(view)
    x, y = act.get("x"), act.get("y")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y)) or screen is None:
        return None, None, None
    if form == "ui_tars":
        model = place(x, y, _MODEL_SPACE, screen, note="UI-TARS's 0-1000 relative coordinates (inferred)")[2]
        under = _under(views, *model["observation_pixel"])
        raw["model_point"] = {**model, "element": _element(under)} if under else model
    if act["action_type"] == "scroll":  # the executor scrolls by index or the whole screen: x, y are not used
        return None, None, None
    px, py, raw["point"] = place(x, y, _EXECUTED_SPACE, screen,
                                 note="executed by actuation.execute_adb_action as (x * width, y * height)")
    return px, py, None


def _action(reply: str, summary, views: list[dict], screen: Space | None, env: dict) -> tuple[Action, str | None]:
    """The step's action and the reply's form. Raises ValueError for an action naming an element not listed."""
    act, form = _decode(reply)
    raw: dict = {"reply": reply, "summary": summary}
    if isinstance(summary, str) and summary.startswith(_NOT_EXECUTED):
        warn(env, "not_executed", "a reply the agent could not turn into an action (its summary says so) is kept as "
             "a message step: nothing was executed")
        return Action(kind="message", text=reply, raw=orjson.dumps(raw).decode()), form
    if act is None:
        warn(env, "undecoded_action", "a reply whose action is neither a JSONAction nor a UI-TARS call the runner "
             "converts is kept as a message step")
        return Action(kind="message", text=reply, raw=orjson.dumps(raw).decode()), form
    raw["action"] = act
    x, y, element = _points(act, form, views, screen, raw)
    try:
        action = json_action(act, orjson.dumps(raw).decode(), x, y,
                             orjson.dumps(element).decode() if element else None, "AndroidWorld")
    except ValueError as e:
        warn(env, "unknown_action_type", str(e))
        return Action(kind="message", text=reply, raw=orjson.dumps(raw).decode()), form
    return action, form


def _step(record: dict, screen: Space | None, env: dict) -> tuple[Step, str | None]:
    elements = record.get("ui_description")
    if not isinstance(elements, list):
        raise ValueError(f"`ui_description` is {type(elements).__name__}, not a list")
    reply = record.get("action_output")
    if not isinstance(reply, str):
        raise ValueError(f"`action_output` (the model's reply) is {type(reply).__name__}, not a text")
    views = [_view(entry, i) for i, entry in enumerate(elements)]
    obs = Observation(kind="screen" if views else "none", text=render_android_screen(views) if views else None,
                      ui_tree=orjson.dumps(views).decode() if views else None,
                      width=int(screen.width) if screen else None, height=int(screen.height) if screen else None)
    action, form = _action(reply, record.get("summary"), views, screen, env)
    extra = {k: v for k, v in record.items() if k not in _STEP_KEYS}
    if extra:
        warn(env, "unknown_field", f"step fields this reader does not know, kept in the action's raw: "
             f"{', '.join(sorted(extra))}")
        action.raw = orjson.dumps({**orjson.loads(action.raw), "fields": extra}).decode()
    reason = record.get("action_reason")
    return Step(observation=obs, action=action, reasoning=reason if isinstance(reason, str) and reason else None), form


def _screenshots(source: Source, steps: dict[int, Step], rows: list[Rejected]) -> None:
    """The `<i>_raw.png` files beside the file, as the observations of the steps they were saved for."""
    folder = posixpath.dirname(source.path)
    for name in sorted(source.names_in(folder)):
        shot = _SHOT.match(name)
        if not shot or shot[2] != "raw" or int(shot[1]) not in steps:
            continue
        try:
            data = source.read_path(posixpath.join(folder, name))
        except SourceError as e:
            rows.append(Rejected(e.rule, f"{e.reason}; step {shot[1]} is kept without its screenshot", name))
            continue
        obs = steps[int(shot[1])].observation
        obs.screenshot, obs.kind = source.put_blob(data, "image/png", source.uri), "screen"


def _verdict(records: list, steps: list[Step], env: dict) -> tuple[str, float | None, bool]:
    """(outcome, reward, whether the agent said it was done) from the run's `result`."""
    results = {r.get("result") for r in records if isinstance(r, dict)}
    claimed = bool(steps) and steps[-1].action.kind == "done"
    env.update({"agent_claimed_done": claimed, "evaluator_consulted": claimed})
    if len(results) > 1:
        warn(env, "conflicting_result", f"the steps carry different `result` values: {sorted(map(str, results))}")
        return "unknown", None, claimed
    result = next(iter(results), None)
    env["harness_result"] = result
    if not isinstance(result, bool):
        return "unknown", None, claimed
    return ("success", 1.0, claimed) if result else ("failure", 0.0, claimed)


def _env(name: str, screen: Space | None) -> dict:
    folder = name.partition("/")[0]
    env = {"device": "android", "harness": "my_android_world minimal_tasks_runner (AndroidWorld's M3A agent)",
           "screen_size": [screen.width, screen.height] if screen else None,
           "screen_size_from": "extent of the UI elements' pixel bounds (the file keeps no screen size)"
           if screen else None,
           "saved_at_local": folder if re.fullmatch(r"\d{4}(_\d\d){5}", folder) else None,
           "screenshots": "not in the file (the writer saves <i>_raw.png beside it when a step kept one)"}
    return {k: v for k, v in env.items() if v is not None}


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = _name(source.path)
    records = parse_json(source.read_bytes(), name, source.budgets)  # SourceError: the file is quarantined
    if not isinstance(records, list):
        raise SourceError("bad_record", f"{name}: expected a list of step records")
    screen = _screen(records)
    env, rows = _env(name, screen), []
    kept: dict[int, Step] = {}
    summaries, forms = [], set()
    for i, record in enumerate(records):
        try:
            if not isinstance(record, dict):
                raise ValueError(f"a {type(record).__name__}, not an object")
            kept[i], form = _step(record, screen, env)
        except (ValueError, TypeError, KeyError) as e:  # a field of the wrong shape: this step only
            rows.append(Rejected("bad_record", f"{name}: step record {i}: {e}", name, record_id=str(i)))
            continue
        forms.add(form)
        summaries.append(record.get("summary"))
    _screenshots(source, kept, rows)
    yield from rows
    steps = list(kept.values())
    goals = [r.get("task_goal") for r in records if isinstance(r, dict) and isinstance(r.get("task_goal"), str)]
    outcome, reward, claimed = _verdict(records, steps, env)
    if not steps:
        yield episode_without_steps(f"{name}: no usable step record", name, outcome, reward,
                                    task=goals[0] if goals else None, agent="m3a")
        return
    env.update({"summaries": summaries, "action_forms": sorted(f for f in forms if f)})
    if "ui_tars" in forms:
        env["point_spaces"] = ("UI-TARS's numbers are thousandths of the screen (inferred: the prompt names no "
                               "space; as thousandths they fall on the elements the model names); the executor "
                               "multiplied them by the screen size as fractions, so the taps landed off the screen "
                               "(stored at its edge; the intended pixel is in raw.model_point)")
    if len(set(goals)) > 1:
        warn(env, "conflicting_goal", "the steps carry different `task_goal` texts; the first is the task")
    yield Episode(key="", domain="android", platform="android", steps=steps, task=goals[0] if goals else None,
                  agent="m3a", outcome=outcome, reward=reward, terminated=claimed, env=env)
