"""Per-episode JSON results of AndroidWorld evaluation harnesses that run LLM agents (T3A-, SeeAct- and
function-calling variants): one file per task run, `<Task>_<variant>_<model>_<id>.json`, written by the
harness's evaluator beside AndroidWorld (not its checkpointer: those are `*.pkl.gz`, `androidworld`).

Keys used: `task_name`, `goal`, `model_name`, `prompt_variant`, `max_steps`, `steps_taken`, `step_records`
(per step: `step_num`, `state` with `ui_elements`, `action` (the model's reply: `Reason: ...` then
`Action: {JSONAction}`), `agent_data` (`before_element_list`, `summary`, `action_raw_response`...),
`timestamp` in epoch seconds), `final_state`, and three verdicts: `task_actually_successful` (AndroidWorld's
`task.is_successful(env)`, the evaluator), `agent_claimed_done` (the agent's own status action) and `success`
(both at once). The outcome is the evaluator's: `task_actually_successful`; without it a true `success`
(which implies it) is a success, anything else unknown. `agent_claimed_done` and `success` stay in `env`.

Screens are the UI element lists (AndroidWorld UIElements with pixel bounds) the agent indexed: the
observation's text and tree. The harness keeps no screenshot in the file: `pixels` / `before_screenshot`
hold the placeholder `<screenshot_excluded>` and `after_screenshot` `<large_array: (H, W, 3) uint8>`, whose
shape gives the screen's pixel size; PNGs of a later replay beside the file
(`replay_screenshots/<file's name>/pre_step_NNN.png`) are not the run's observations and are not read: planning
gives them to the file (`members`) as files of its run that the reader leaves, so `ignored_inputs` says so and no
other reader takes them. An element-indexed action's point is the centre of that element's
bounds in screen pixels (`ingest.coords`). A reply whose action cannot be decoded (the model wrote `"index":
N`) is kept as a `message` step with the reply, said in `env.ingest_warnings`.

The same repository's replay form of an episode (`goal`, `observations`, `actions`, `interaction_trace`, as
its `replay_episode.py` loads it) is read here too, by `ingest.android.androidworld_replay`.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from typing import Iterator

import orjson

from ingest.android.androidworld import element_views
from ingest.android.androidworld_replay import claims as replay_claims, indexed_action, read_replay
from ingest.coords import Space
from ingest.format_info import FormatInfo
from ingest.members import with_prefix
from ingest.record import Action, Episode, Observation, Rejected, Step, episode_without_steps, warn
from ingest.source import Source, SourceError, parse_json
from schemas.render import render_android_screen

FORMAT = "androidworld_json"
VERSION = "1"
INFO = FormatInfo(
    group="android", rank=202, domains=('android',), platform="android",
    summary=("AndroidWorld harness per-episode JSON results of LLM agents (T3A / SeeAct prompts: the JSONAction "
             "inside the model's reply, the UI element list it indexed, the evaluator's verdict as the outcome, the "
             "agent's claim kept beside it; also the replay form: goal, observations' element lists, JSONActions, outcome "
             "unknown)"),
    producer="AndroidWorld evaluation harness (per-episode JSON of T3A / SeeAct-prompted LLM agents)",
    versions="gyaanantia/android_world_agents @ 89d35cf (gpt-4o-mini runs, July 2025)",
    proof=("cannot run here (an Android emulator and a vendor model): two real results in `../shared/samples` read "
           "against the raw files (goldens: a 7-step success, a 30-step failure at the step limit; points = centres "
           "of the indexed elements' pixel bounds) and a file the harness stopped writing (quarantined); edge cases "
           "hand-made (`tests/ingest/android/test_androidworld_json.py`)"),
)

# keys the evaluator writes at the top of the file, in this order: all of them within the first 4 KiB
_HEAD_KEYS = (b'"task_name"', b'"goal"', b'"prompt_variant"', b'"max_steps"', b'"steps_taken"')
_ACTION = re.compile(r"Action:\s*(\{.*\})", re.DOTALL)
_REASON = re.compile(r"Reason:\s*(.*?)\s*(?:Action:|$)", re.DOTALL)
_ARRAY = re.compile(r"<large_array: \((\d+), (\d+)(?:, \d+)?\)")
# top-level keys this reader knows: what it reads, the copies of the step records' texts (`prompts`,
# `responses`, `actions`), and the harness's own bookkeeping; any other key is kept in env with a warning
_KNOWN = frozenset((
    "task_name", "goal", "model_name", "prompt_variant", "max_steps", "success", "steps_taken", "evaluation_time",
    "prompts", "responses", "actions", "step_timings", "initial_state", "final_state", "step_records",
    "evaluation_timestamp", "total_ui_elements", "task_complexity", "task_class", "max_steps_allowed",
    "episode_terminated_early", "agent_claimed_done", "task_actually_successful"))


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def units(files: list[str], head) -> list[str]:
    """JSON objects whose first 4 KiB hold every key the evaluator writes first (`task_name`, `goal`,
    `prompt_variant`, `max_steps`, `steps_taken`) and the AndroidWorld agent's prompt or its `step_records`;
    or the replay form's `goal`, `observations` and element lists (`androidworld_replay`)."""
    found = []
    for path in files:
        if not path.endswith(".json"):
            continue
        start = head(path).lstrip()
        if start.startswith(b"{") and all(k in start for k in _HEAD_KEYS) and (
                b"Android phone" in start or b'"step_records"' in start or b'"agent_claimed_done"' in start):
            found.append(path)
        elif replay_claims(start):
            found.append(path)
    return found


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """Each result's replay screenshots (`replay_screenshots/<its name>/`), as files of its run left unread."""
    out = {}
    for path in found:
        folder, name = posixpath.split(path)
        out[path] = [(p, "a screenshot of a later replay of the episode, not what the agent saw")
                     for p in with_prefix(files, f"{folder}/replay_screenshots/{name[:-len('.json')]}/")]
    return out


def _screen(records: list, final: dict) -> tuple[Space | None, str | None]:
    """The screen's pixel size: the shape of the after-step screenshot the harness left out, else the extent
    of every element's bounds (and where it came from)."""
    for record in records:
        shot = _dict(_dict(record).get("agent_data")).get("after_screenshot")
        if isinstance(shot, str) and (m := _ARRAY.match(shot)):
            return Space("screen", int(m.group(2)), int(m.group(1))), "after_screenshot placeholder shape"
    boxes = [e.get("bbox_pixels") for r in [*records, {"state": final}]
             for e in _list(_dict(_dict(r).get("state")).get("ui_elements")) if isinstance(e, dict)]
    boxes = [b for b in boxes if isinstance(b, dict) and all(
        isinstance(b.get(k), (int, float)) and not isinstance(b.get(k), bool) for k in ("x_max", "y_max"))]
    if not boxes:
        return None, None
    return Space("screen", max(b["x_max"] for b in boxes), max(b["y_max"] for b in boxes)), "element bounds extent"


def _observation(elements, screen: Space | None) -> Observation:
    views = element_views([e for e in _list(elements) if isinstance(e, dict)])
    return Observation(kind="screen" if views else "none",
                       text=render_android_screen(views) if views else None,
                       ui_tree=orjson.dumps(views).decode() if views else None,
                       width=int(screen.width) if screen else None, height=int(screen.height) if screen else None)


def _decode(reply: str) -> dict | None:
    found = _ACTION.findall(reply)
    try:
        act = orjson.loads(found[-1]) if found else None
    except orjson.JSONDecodeError:
        return None
    return act if isinstance(act, dict) and isinstance(act.get("action_type"), str) else None


def _action(reply: str, act: dict, views: list[dict], screen: Space | None) -> Action:
    """Raises ValueError for an action type outside AndroidWorld's JSONAction vocabulary."""
    return indexed_action(act, {"reply": reply, "action": act}, views, screen)


def _step(record: dict, screen: Space | None, env: dict) -> Step:
    data, state = _dict(record.get("agent_data")), _dict(record.get("state"))
    elements = data.get("before_element_list") or state.get("ui_elements")
    obs = _observation(elements, screen)
    views = orjson.loads(obs.ui_tree) if obs.ui_tree else []
    reply = record.get("action") if isinstance(record.get("action"), str) else data.get("action_output")
    if not isinstance(reply, str):
        raise ValueError("no model reply (`action`)")
    act = _decode(reply)
    try:
        action = _action(reply, act, views, screen) if act else None
    except ValueError as e:
        warn(env, "unknown_action_type", str(e))
        action = None
    if action is None:
        warn(env, "undecoded_action", "a reply whose action is not a JSONAction is kept as a message step")
        action = Action(kind="message", text=reply, raw=orjson.dumps({"reply": reply}).decode())
    reason = _REASON.search(reply)
    stamp = record.get("timestamp")
    return Step(observation=obs, action=action, reasoning=reason.group(1) if reason and reason.group(1) else None,
                timestamp=dt.datetime.fromtimestamp(stamp, dt.timezone.utc)
                if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else None)


def _outcome(doc: dict) -> tuple[str, float | None]:
    verdict = doc.get("task_actually_successful")
    if isinstance(verdict, bool):
        return ("success", 1.0) if verdict else ("failure", 0.0)
    if doc.get("success") is True:  # the agent's claim and the evaluator's verdict together
        return "success", 1.0
    return "unknown", None


def _env(doc: dict, screen: Space | None, screen_from: str | None) -> dict:
    env = {"device": "android", "task_name": doc.get("task_name"), "prompt_variant": doc.get("prompt_variant"),
           "max_steps": doc.get("max_steps"), "steps_taken": doc.get("steps_taken"),
           "agent_claimed_done": doc.get("agent_claimed_done"), "harness_success": doc.get("success"),
           "episode_terminated_early": doc.get("episode_terminated_early"),
           "evaluation_time_s": doc.get("evaluation_time"),
           "screen_size": [screen.width, screen.height] if screen else None, "screen_size_from": screen_from,
           "screenshots": "left out of the file by the harness (placeholders)"}
    env = {k: v for k, v in env.items() if v is not None}
    extra = {k: v for k, v in doc.items() if k not in _KNOWN}
    if extra:
        env["harness_fields"] = extra
        warn(env, "unknown_field", f"top-level fields this reader does not know, kept in env.harness_fields: "
             f"{', '.join(sorted(extra))}")
    return env


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    doc = parse_json(source.read_bytes(), name, source.budgets)  # SourceError: the file is quarantined
    if isinstance(doc, dict) and "step_records" not in doc and "observations" in doc:
        yield from read_replay(doc, name)
        return
    records = doc.get("step_records") if isinstance(doc, dict) else None
    if not isinstance(records, list):
        raise SourceError("bad_record", f"{name}: expected an object with a `step_records` list")
    final = _dict(doc.get("final_state"))
    screen, screen_from = _screen(records, final)
    env = _env(doc, screen, screen_from)
    steps, summaries = [], []
    for i, record in enumerate(records):
        try:
            if not isinstance(record, dict):
                raise ValueError(f"a {type(record).__name__}, not an object")
            steps.append(_step(record, screen, env))
        except (ValueError, TypeError, AttributeError, KeyError) as e:  # a field of the wrong shape: this step only
            yield Rejected("bad_record", f"{name}: step record {i}: {type(e).__name__}: {e}", name, record_id=str(i))
            continue
        summaries.append(_dict(record.get("agent_data")).get("summary"))
    if any(isinstance(s, str) for s in summaries):
        env["summaries"] = summaries
    outcome, reward = _outcome(doc)
    if not steps:
        yield episode_without_steps(f"{name}: no step record", name, outcome, reward, task=doc.get("goal"),
                                    agent=doc.get("model_name"))
        return
    yield Episode(key="", domain="android", platform="android", steps=steps, task=doc.get("goal"),
                  agent=doc.get("model_name"), outcome=outcome, reward=reward,
                  terminated=doc.get("agent_claimed_done") is True or steps[-1].action.kind == "done",
                  final_observation=_observation(_list(final.get("ui_elements")), screen) if final else None,
                  env=env)
