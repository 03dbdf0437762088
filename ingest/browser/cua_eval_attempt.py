"""Computer-use eval attempts of a Playwright harness scored by its own verifier: CUArena's `cua-eval` runner
(ogutdgn/CUArena, `apps/figma/cua-eval/runner/runner.py` and `agents/anthropic.py`), Claude's `computer` tool
driving Chromium on a mock design app, each attempt scored by the task's rubrics.

One folder per attempt, `runs/<ts>/<provider>/task_NN/attempt_N/`, written by the runner:
- `meta.json` (before the run): the endpoint (`tool.display_width_px` x `display_height_px`, the display
  declared to the model), the browser's `viewport` (`width`, `height`, `device_scale_factor`), `block_keyboard`
  (the loop then answers keyboard actions with "BLOCKED" and runs nothing), `pass_threshold`, the model;
- `prompt.txt` (the task as the model saw it), `system_prompt.txt`;
- `trajectory.jsonl`, appended by the loop per turn: `{"turn": -1, "phase": "start", "task_prompt",
  "screenshot": "screenshots/initial.png"}`, then per turn `{"phase": "step", "text" (the model's text blocks),
  "actions" (the `computer` inputs it ran), "elapsed_s", "usage_delta", "screenshot": "screenshots/turn_NN.png"}`
  (the screen after the turn's last action), a `final` line (the reply without a tool call) or an `error` line;
- `trajectory.json` (after the run): `provider`, `model`, `turns`, `finished`, `stop_reason` (`done`,
  `step_cap`, `error`), `error`, `usage` and `trajectory`, one entry per action `{turn, action, text}`, the
  final reply as `{"action": "final"}` with its text (used when `trajectory.jsonl` is absent);
- `score.json`, the verifier's result (`rubrics` with their checks, `base_score`, `efficiency`, `final_score`),
  and `outcome.json` (`score.passed`: `final_score >= threshold`, the run's `started_at`/`ended_at`, usage);
- `log.json` / `end_state.json`: the mock app's own event log the verifier scored (not read: its verdict is in
  `score.json`), and per run `attempts.json`, `summary.csv`, `summary.md` (summaries of the attempts).

One step per action; a turn's first action observes the screen before the turn (the previous turn's screenshot,
or `initial.png`), later actions of the same turn observe a screen the loop did not keep (`kind` none). The
final reply is a `message` step, the agent's claim; the outcome is the verifier's (`passed`, `final_score` as
the reward), the claim kept in `env.agent_claim`. Points: the model's numbers are in the declared display; the
loop clicks them as given in the viewport's CSS pixels (the runner declares the viewport's size) and the
screenshot is the viewport at its device scale factor, so a point is placed through `ingest.coords` from the
declared display onto the screenshot's pixels, the model's numbers kept in `raw`. A keyboard action under
`block_keyboard`, or an action the loop does not know, was asked for and not run (`raw.executed` false).
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.chat.computer_use import anthropic_action, openai_action
from ingest.coords import Space, place
from ingest.format_info import FormatInfo
from ingest.members import unread_in
from ingest.png import png_size
from ingest.record import Action, Episode, Observation, Rejected, Step, episode_without_steps, warn
from ingest.source import Source

FORMAT = "cua_eval_attempt"
VERSION = "1"
INFO = FormatInfo(
    group="browser", rank=205, domains=('web',), platform="browser",
    summary=("computer-use eval attempts scored by their harness (CUArena's `cua-eval`: `trajectory.jsonl` / "
             "`trajectory.json` of Claude's `computer` calls on a Playwright browser, `screenshots/turn_NN.png`, "
             "the verifier's `score.json` and `outcome.json`): points placed on the screenshot through the "
             "declared display, the verifier's verdict as the outcome, the agent's claim kept beside it"),
    producer="CUArena's `cua-eval` runner (Anthropic `computer_20250124` loop over Playwright Chromium)",
    versions="ogutdgn/CUArena @ d81601b (claude-sonnet-4-5, May 2026)",
    proof=("cannot run here (a vendor model, the mock app's repository): two real attempts in `../shared/samples` "
           "whose JSON files were counted by hand (a 39-action failure scored 0.386 under a 0.7 threshold, a "
           "52-action success scored 1.0; every point in the declared 1280x800 display, the screenshots the "
           "runner's 1280x800 viewport at device scale 1); one repository so far; a device-scale-2 viewport, "
           "blocked keys, a step cap and a broken line hand-made (`tests/ingest/browser/test_cua_eval_attempt.py`)"),
)

_JSONL_OPENING = re.compile(rb'^\s*\{\s*"turn"\s*:\s*-1\s*,\s*"phase"\s*:\s*"start"')
_JSON_OPENING = re.compile(rb'^\s*\{\s*"provider"\s*:\s*"[^"]*"\s*,\s*"model"\s*:\s*"[^"]*"\s*,\s*"turns"\s*:')
_VERDICTS = ("score.json", "outcome.json")
_READS = ("trajectory.jsonl", "trajectory.json", "meta.json", "prompt.txt", "system_prompt.txt", *_VERDICTS)
_UNREAD = {"log.json": "the mock app's event log the verifier scored (its verdict is read from score.json)",
           "end_state.json": "the mock app's end state summary the verifier scored (its verdict is in score.json)"}
_SHOT = re.compile(r"screenshots/(initial|turn_\d+)\.png")
DEFAULT_DISPLAY = (1280, 800)  # runner/browser.py's DISPLAY_WIDTH x DISPLAY_HEIGHT, when meta.json is absent
_EXECUTED = frozenset({"screenshot", "left_click", "right_click", "middle_click", "double_click", "triple_click",
                       "mouse_move", "left_click_drag", "left_mouse_down", "left_mouse_up", "type", "key",
                       "hold_key", "scroll", "wait", "cursor_position"})
_KEYBOARD = frozenset({"type", "key", "hold_key"})


def units(files: list[str], head) -> list[str]:
    """Folders holding `score.json` or `outcome.json` beside a `trajectory.jsonl` that opens with the loop's
    `{"turn": -1, "phase": "start"` or a `trajectory.json` that opens with `{"provider", "model", "turns"`."""
    present = set(files)
    found = set()
    for path in files:
        folder, name = posixpath.split(path)
        if not any(posixpath.join(folder, v) in present for v in _VERDICTS):
            continue
        if (name == "trajectory.jsonl" and _JSONL_OPENING.match(head(path))) or (
                name == "trajectory.json" and _JSON_OPENING.match(head(path))):
            found.add(folder)
    return sorted(found)


def _reads(rel: str) -> bool:
    return rel in _READS or bool(_SHOT.fullmatch(rel))


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The files of each attempt folder the reader does not read (the mock app's log, anything else)."""
    return {folder: unread_in(folder, files, _reads, lambda rel: _UNREAD.get(
        rel, "the reader reads trajectory.jsonl/.json, meta.json, prompt.txt, score.json, outcome.json and "
             "screenshots/*.png")) for folder in found}


def _json(source: Source, name: str):
    """A JSON document of the attempt, None when absent; a Rejected when it does not parse."""
    if not source.exists(name):
        return None
    try:
        return orjson.loads(source.read_bytes(name))
    except orjson.JSONDecodeError as e:
        return Rejected("parse_error", f"{name}: invalid JSON: {e}", name)


def _text(source: Source, name: str) -> str | None:
    if not source.exists(name):
        return None
    return source.read_bytes(name).decode("utf-8", "replace").strip() or None


def _turns_from_jsonl(source: Source, env: dict) -> tuple[list[dict], list[Rejected]]:
    """The loop's turns from `trajectory.jsonl`: [{turn, text, actions, screenshot, phase, raw}], the start
    line's task and screenshot in env."""
    turns, problems = [], []
    for n, line in enumerate(source.read_bytes("trajectory.jsonl").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            problems.append(Rejected("parse_error", f"trajectory.jsonl line {n}: invalid JSON: {e}",
                                     "trajectory.jsonl", line=n, snippet=line[:200].decode("utf-8", "replace")))
            continue
        if not isinstance(entry, dict):
            problems.append(Rejected("bad_record", f"trajectory.jsonl line {n}: not an object", "trajectory.jsonl",
                                     line=n))
            continue
        phase = entry.get("phase")
        if phase == "start":
            env["_task"], env["_initial"] = entry.get("task_prompt"), entry.get("screenshot")
        elif phase in ("step", "final", "error"):
            actions = entry.get("actions") if isinstance(entry.get("actions"), list) else []
            turns.append({"turn": entry.get("turn"), "phase": phase, "text": entry.get("text") or None,
                          "actions": actions, "screenshot": entry.get("screenshot"),
                          "elapsed_s": entry.get("elapsed_s"), "error": entry.get("error")})
        else:
            warn(env, "cua_eval_attempt.phase", f"trajectory.jsonl line {n}: unknown phase {phase!r}, kept raw")
            env.setdefault("unknown_lines", []).append(entry)
    return turns, problems


def _turns_from_json(doc: dict, source: Source) -> list[dict]:
    """The loop's turns from `trajectory.json`'s one entry per action (no text blocks kept but the final reply's;
    each turn's screenshot by the loop's naming, `screenshots/turn_NN.png`)."""
    turns: list[dict] = []
    for entry in doc.get("trajectory") or []:
        if not isinstance(entry, dict):
            continue
        action = entry.get("action") if isinstance(entry.get("action"), dict) else {}
        turn = entry.get("turn")
        if action.get("action") == "final":
            turns.append({"turn": turn, "phase": "final", "text": entry.get("text"), "actions": [],
                          "screenshot": None})
            continue
        if turns and turns[-1]["turn"] == turn and turns[-1]["phase"] == "step":
            turns[-1]["actions"].append(action)
            continue
        name = f"screenshots/turn_{turn:02d}.png" if isinstance(turn, int) else None
        turns.append({"turn": turn, "phase": "step", "text": None, "actions": [action],
                      "screenshot": name if name and source.exists(name) else None})
    return turns


def _screen(source: Source, name) -> Observation | None:
    if not isinstance(name, str) or not _SHOT.fullmatch(name) or not source.exists(name):
        return None
    data = source.read_bytes(name)
    size = png_size(data)
    return Observation(kind="screen", screenshot=source.put_blob(data, "image/png", source.uri),
                       width=size[0] if size else None, height=size[1] if size else None)


def _action(spec: dict, declared: Space, shot: Space | None, blocked: bool, turn) -> Action:
    """One computer action, its points placed from the declared display onto the screenshot."""
    size = (declared.width, declared.height)
    openai_shaped = "type" in spec and "action" not in spec
    action = openai_action(spec, size, "") if openai_shaped else anthropic_action(spec, size, "")
    raw: dict = {"input": spec, "turn": turn}
    name = spec.get("type") if openai_shaped else spec.get("action")
    note = "the model's numbers in the display declared to it, clicked as given in the viewport"
    for key, field in (("coordinate", "point"), ("start_coordinate", "start_point")):
        xy = spec.get(key)
        if isinstance(xy, list) and len(xy) == 2 and all(isinstance(v, (int, float)) for v in xy):
            raw[field] = place(xy[0], xy[1], declared, shot, note=note)[2]
    if not openai_shaped and name not in _EXECUTED:
        raw["executed"], raw["why_not"] = False, "the loop runs no such action (it answered `Unknown action`)"
    elif blocked and name in (_KEYBOARD | {"keypress"}):
        raw["executed"], raw["why_not"] = False, "keyboard actions are blocked in this run (meta.block_keyboard)"
    action.element = None
    action.raw = orjson.dumps(raw).decode()
    return action


def _verdict(score, outcome, meta: dict, env: dict) -> tuple[str, float | None]:
    """The verifier's outcome and reward: `final_score` of score.json, passed by outcome.json's `score.passed`
    or, without it, `final_score >= meta.pass_threshold`."""
    summary = outcome.get("score") if isinstance(outcome, dict) and isinstance(outcome.get("score"), dict) else {}
    final = score.get("final_score") if isinstance(score, dict) else summary.get("final")
    reward = float(final) if isinstance(final, (int, float)) and not isinstance(final, bool) else None
    if isinstance(score, dict):
        env["verifier"] = {"final_score": final, "base_score": score.get("base_score"),
                           "efficiency": score.get("efficiency"), "task_id": score.get("task_id"),
                           "rubrics": [{k: r.get(k) for k in ("name", "score", "max_score")}
                                       for r in score.get("rubrics") or [] if isinstance(r, dict)]}
    passed = summary.get("passed")
    threshold = summary.get("threshold", meta.get("pass_threshold"))
    if isinstance(threshold, (int, float)):
        env["pass_threshold"] = threshold
    if not isinstance(passed, bool) and reward is not None and isinstance(threshold, (int, float)):
        passed = reward >= threshold
    if not isinstance(passed, bool):
        return "unknown", reward
    return ("success" if passed else "failure"), reward


def _spaces(meta: dict, shots: list[Observation]) -> tuple[Space, Space | None, dict]:
    tool = (meta.get("endpoint") or {}).get("tool") or {} if isinstance(meta.get("endpoint"), dict) else {}
    width = tool.get("display_width_px") or tool.get("display_width")
    height = tool.get("display_height_px") or tool.get("display_height")
    if not (isinstance(width, (int, float)) and isinstance(height, (int, float))):
        width, height = DEFAULT_DISPLAY
    declared = Space("declared_display", width, height)
    sizes = [(s.width, s.height) for s in shots if s and s.width and s.height]
    shot = Space("screenshot", *sizes[0]) if sizes else None
    env = {"declared_display": [width, height]}
    if isinstance(meta.get("viewport"), dict):
        env["viewport"] = meta["viewport"]
    return declared, shot, env


def _claim(traj, outcome) -> dict:
    """The agent's own account of its run (trajectory.json, else outcome.json): finished, stop reason, error."""
    for doc in (traj, outcome):
        if isinstance(doc, dict) and "stop_reason" in doc:
            return {k: doc.get(k) for k in ("finished", "stop_reason", "error", "turns")}
    return {}


def _load(source: Source) -> tuple[dict, list[Rejected]]:
    docs, problems = {}, []
    for name in ("meta.json", "trajectory.json", "score.json", "outcome.json"):
        doc = _json(source, name)
        if isinstance(doc, Rejected):
            problems.append(doc)
            doc = None
        docs[name] = doc if isinstance(doc, dict) else None
    return docs, problems


def _steps(turns: list[dict], shots: dict, declared: Space, shot_space, blocked: bool, initial):
    steps, previous = [], initial or Observation(kind="none")
    for t in turns:
        if t["phase"] == "final":
            steps.append(Step(observation=previous, action=Action(kind="message", text=t["text"]),
                              reasoning=None))
            previous = Observation(kind="none")
            continue
        for i, spec in enumerate(t["actions"] if t["phase"] == "step" else []):
            action = _action(spec if isinstance(spec, dict) else {"unparsed": spec}, declared, shot_space,
                             blocked, t["turn"])
            steps.append(Step(observation=previous if i == 0 else Observation(kind="none"), action=action,
                              reasoning=t["text"] if i == 0 else None))
        if t["phase"] == "step":
            previous = shots.get(t["turn"]) or Observation(kind="none")
    return steps, previous


def read(source: Source) -> Iterator[Episode | Rejected]:
    docs, problems = _load(source)
    yield from problems
    meta, traj, score, outcome = (docs[n] for n in ("meta.json", "trajectory.json", "score.json", "outcome.json"))
    meta = meta or {}
    env: dict = {"harness": "cua-eval", "provider": meta.get("provider") or (traj or {}).get("provider")}
    if source.exists("trajectory.jsonl"):
        turns, bad = _turns_from_jsonl(source, env)
        yield from bad
    elif traj is not None:
        turns = _turns_from_json(traj, source)
    else:
        yield Rejected("missing_file", "neither trajectory.jsonl nor a readable trajectory.json in the attempt",
                       source.uri)
        return
    task = env.pop("_task", None) or _text(source, "prompt.txt")
    initial_name = env.pop("_initial", None) or "screenshots/initial.png"
    initial = _screen(source, initial_name)
    if initial and isinstance(meta.get("mock_url"), str):
        initial.url = meta["mock_url"]  # the page the harness opened before the first turn
    shots = {t["turn"]: _screen(source, t["screenshot"]) for t in turns if t["phase"] == "step"}
    declared, shot_space, spaces = _spaces(meta, [initial, *shots.values()])
    env.update(spaces)
    blocked = meta.get("block_keyboard") is True
    env["block_keyboard"] = meta.get("block_keyboard")
    steps, last = _steps(turns, shots, declared, shot_space, blocked, initial)
    result, reward = _verdict(score, outcome, meta, env)
    claim = _claim(traj, outcome)
    env["agent_claim"] = claim
    errors = [t.get("error") for t in turns if t["phase"] == "error"]
    if errors:
        env["loop_error"] = errors[-1]
    env["screenshots"] = sum(1 for s in [initial, *shots.values()] if s)
    for name in ("started_at", "ended_at", "elapsed_s", "usage"):
        if isinstance(outcome, dict) and name in outcome:
            env[name] = outcome[name]
    agent = meta.get("model") or (traj or {}).get("model")
    if not steps:
        yield episode_without_steps("the attempt's trajectory holds no action", source.uri, result, reward,
                                    task=task, agent=agent)
        return
    ended = claim.get("stop_reason") == "done" or (steps[-1].action.kind == "message")
    yield Episode(key="", domain="web", platform="browser", steps=steps, task=task, agent=agent,
                  outcome=result, reward=reward, terminated=bool(ended),
                  final_observation=last if last.kind != "none" else None, env=env)
