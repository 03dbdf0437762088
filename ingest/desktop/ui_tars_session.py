"""UI-TARS session logs of a local loop that sends each screenshot to a UI-TARS model and executes its reply with
pyautogui: martasumyk/ai_practice @ 353251d, `02-Agents/01-Computer-Use-Agents/ui-tars/agent_core.py`
(`run_agent`), UI-TARS-1.5-7B (its `MODEL_ID`) on macOS.

The session folder: `session_log.json`, written once when the loop stops, `{"task", "steps": [{"step",
"screenshot_path", "model_reply", "thought", "parsed_action", "status_after_action"}]}`, and `step_<NNN>.png`,
the screen grabbed (mss, the first monitor) *before* step NNN's reply was asked for: the screen its action acted
on. A `reasoning.json` beside it (the same steps with each one's local `timestamp`) gives the times;
`reasoning.txt` is a text rendering of it, and a screen recording (`*.mov`) may lie there too (neither read).

`parsed_action` is what the loop executed: `click` / `left_double` / `right_single` at `x`, `y`, `drag` from
`x1`, `y1` to `x2`, `y2`, `hotkey` `keys`, `type` `text`, `scroll` at a point with a `direction`, `wait`,
`finished` with its `content` (the agent's claim that it is done: the loop stops), `none` or `raw` (a reply the
loop could not parse and did not execute). The loop moves pyautogui to the model's numbers as they are, so they
are the screen's points: the screenshot's pixels where the screenshot has the screen's size (`ingest.coords`,
`screen`); the reply itself is kept as the step's `raw` beside the parsed action (`ingest.ui_tars` reads it too,
and a reply that disagrees with what the loop parsed is said in `env`). No evaluator: the outcome is unknown;
the episode is terminal when the last step is `finished`. Times are the machine's local time with no zone: the
first and last are kept in `env`, never guessed into UTC.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.coords import Space, place
from ingest.format_info import FormatInfo
from ingest.members import unread_in
from ingest.png import png_size
from ingest.record import Action, Episode, Observation, Rejected, Step, episode_without_steps, warn
from ingest.source import Source
from ingest.ui_tars import parse_reply

FORMAT = "ui_tars_session"
VERSION = "1"
INFO = FormatInfo(
    group=None, rank=209, domains=('os',), platform="macos",
    summary=("UI-TARS session logs (`session_log.json` of a local loop beside its `step_NNN.png` screens: each "
             "reply's thought, the action the loop parsed and executed at the screen's points, `finished` as the "
             "agent's claim)"),
    producer="a local UI-TARS loop over pyautogui (martasumyk/ai_practice's `ui-tars/agent_core.py`)",
    versions="martasumyk/ai_practice @ 353251d (UI-TARS-1.5-7B, November 2025, macOS)",
    proof=("cannot run here (macOS, a UI-TARS endpoint): three real sessions in `../shared/samples` read against "
           "the raw files (a golden of 7 steps: clicks on 1440x900 screens, typing, a hotkey, `finished`; 4 and "
           "20 steps counted by hand); one repository so far; edge cases hand-made "
           "(`tests/ingest/desktop/test_ui_tars_session.py`)"),
)

LOG = "session_log.json"
TIMES = "reasoning.json"
_OPENING = re.compile(rb'^\s*\{\s*"task"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"steps"\s*:\s*\[\s*(\]|\{\s*"step"\s*:)')
_KINDS = {"click": "click", "left_double": "double_click", "right_single": "right_click"}
_WHY = {"reasoning.txt": "a text rendering of reasoning.json (the same steps, read from session_log.json)"}
_KNOWN = frozenset({"step", "screenshot_path", "model_reply", "thought", "parsed_action", "status_after_action"})


def units(files: list[str], head) -> list[str]:
    """Folders holding a `session_log.json` that opens with the loop's `{"task": ..., "steps": [{"step": ...` and
    names its `parsed_action` (or holds no step)."""
    found = set()
    for path in files:
        if posixpath.basename(path) == LOG and (m := _OPENING.match(start := head(path))):
            if m.group(1) == b"]" or b'"parsed_action"' in start:
                found.add(posixpath.dirname(path))
    return sorted(found)


def _reads(rel: str) -> bool:
    return rel in (LOG, TIMES) or bool(re.fullmatch(r"step_\d+\.png", rel))


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The files of each session folder the reader does not read (see the docstring)."""
    def why(rel: str) -> str:
        if rel.endswith(".mov"):
            return "the session's screen recording (the screenshot of each step is read)"
        return _WHY.get(rel, "the reader reads session_log.json, reasoning.json's times and step_NNN.png")
    return {folder: unread_in(folder, files, _reads, why) for folder in found}


def _screen(source: Source, entry: dict) -> Observation:
    path = entry.get("screenshot_path")
    name = posixpath.basename(path) if isinstance(path, str) else None
    if isinstance(entry.get("step"), int) and not (name and source.exists(name)):
        name = f"step_{entry['step']:03d}.png"
    if not name or "/" in name or not source.exists(name):
        return Observation(kind="none")
    data = source.read_bytes(name)
    size = png_size(data)
    return Observation(kind="screen", screenshot=source.put_blob(data, "image/png", source.uri),
                       width=size[0] if size else None, height=size[1] if size else None)


def _point(action: Action, raw: dict, x, y, screen: Space | None, second: tuple | None = None) -> None:
    if not all(isinstance(v, (int, float)) for v in (x, y)) or screen is None:
        return
    note = "the model's numbers, executed as given at the screen's points"
    action.x, action.y, raw["point"] = place(x, y, screen, note=note)
    if second and all(isinstance(v, (int, float)) for v in second):
        action.x2, action.y2, raw["end_point"] = place(second[0], second[1], screen, note=note)


def _action(parsed: dict, reply: str | None, screen: Space | None) -> Action:
    kind = parsed.get("type")
    raw: dict = {"parsed_action": parsed, "model_reply": reply}
    if kind in _KINDS:
        action = Action(kind=_KINDS[kind])
        _point(action, raw, parsed.get("x"), parsed.get("y"), screen)
    elif kind == "drag":
        action = Action(kind="drag")
        _point(action, raw, parsed.get("x1"), parsed.get("y1"), screen, (parsed.get("x2"), parsed.get("y2")))
    elif kind == "scroll":
        action = Action(kind="scroll", direction=parsed.get("direction"))
        _point(action, raw, parsed.get("x"), parsed.get("y"), screen)
    elif kind == "hotkey":
        keys = [str(k) for k in parsed.get("keys") or []]
        action = Action(kind="hotkey" if len(keys) > 1 else "key", keys=keys)
    elif kind == "type":
        action = Action(kind="type", text=parsed.get("text"))
    elif kind == "wait":
        action = Action(kind="wait", duration_s=5.0)  # the loop sleeps 5 s for it
    elif kind == "finished":
        action = Action(kind="done", text=parsed.get("content"))
    else:  # `none` / `raw`: the loop found no action it knows and executed nothing
        action = Action(kind="message", text=reply)
        raw["executed"] = False
    action.raw = orjson.dumps(raw).decode()
    return action


def _reply_disagrees(parsed: dict, reply: str | None) -> bool:
    """Whether ByteDance's grammar (`ingest.ui_tars`) reads another point from the reply than the loop did."""
    if not reply or parsed.get("type") not in _KINDS:
        return False
    _, actions = parse_reply(reply)
    point = (actions[0].get("boxes") or {}).get("start_box") if actions else None
    if not point or len(point) < 2:
        return False
    return [parsed.get("x"), parsed.get("y")] != [round(point[0]), round(point[1])]


def _times(source: Source) -> dict[int, str]:
    if not source.exists(TIMES):
        return {}
    try:
        entries = orjson.loads(source.read_bytes(TIMES))
    except orjson.JSONDecodeError:
        return {}
    return {e["step"]: e["timestamp"] for e in entries if isinstance(e, dict) and isinstance(e.get("step"), int)
            and isinstance(e.get("timestamp"), str)} if isinstance(entries, list) else {}


def read(source: Source) -> Iterator[Episode | Rejected]:
    try:
        doc = orjson.loads(source.read_bytes(LOG))
    except orjson.JSONDecodeError as e:
        yield Rejected("parse_error", f"{LOG}: invalid JSON: {e}", LOG)
        return
    entries = doc.get("steps") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        yield Rejected("bad_record", f"{LOG}: no `steps` list", LOG)
        return
    env: dict = {"loop": "UI-TARS, executed with pyautogui", "screenshot_is": "the screen before the action"}
    steps, screens, disagree, times = [], [], [], _times(source)
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("parsed_action"), dict):
            yield Rejected("bad_record", f"{LOG}: step {i} has no parsed_action object", LOG, record_id=str(i))
            continue
        obs = _screen(source, entry)
        screen = Space("screen", obs.width, obs.height) if obs.width and obs.height else None
        reply = entry.get("model_reply") if isinstance(entry.get("model_reply"), str) else None
        action = _action(entry["parsed_action"], reply, screen)
        if extra := {k: v for k, v in entry.items() if k not in _KNOWN}:
            action.raw = orjson.dumps({**orjson.loads(action.raw), "fields": extra}).decode()
            warn(env, "ui_tars_session.unknown_field", f"{LOG}: {', '.join(sorted(extra))} is not a field the loop "
                 "writes; kept raw in the action")
        if _reply_disagrees(entry["parsed_action"], reply):
            disagree.append(entry.get("step", i))
        thought = entry.get("thought") if isinstance(entry.get("thought"), str) else None
        steps.append(Step(observation=obs, action=action, reasoning=thought or None))
        screens.append(obs.kind == "screen")
    env["screenshots"] = sum(screens)
    if times:
        stamps = [times[k] for k in sorted(times)]
        env["local_time_first"], env["local_time_last"] = stamps[0], stamps[-1]
    if disagree:
        env["reply_points_differ"] = disagree
        warn(env, "ui_tars_session.reply_differs", f"{LOG}: the reply of step(s) {disagree} names another point "
             "than the loop parsed and executed; the executed one is the action's, the reply kept in raw")
    task = doc.get("task") if isinstance(doc.get("task"), str) else None
    if not steps:
        yield episode_without_steps("the session logged no step", LOG, "unknown", None, task=task)
        return
    done = steps[-1].action.kind == "done"
    if done:
        env["agent_claim"] = steps[-1].action.text
    yield Episode(key="", domain="os", platform="macos", steps=steps, task=task, outcome="unknown",
                  terminated=done, env=env)
