"""OSWorld result directories (`results/<action space>/<observation>/<model>/<domain>/<example id>/`): one
directory is one episode.

`traj.jsonl` has one line per executed action: `step_num` (the agent turn, shared by the actions of one
response), `action_timestamp` (`%Y%m%d@%H%M%S`, the host's local time), `action` (pyautogui code, or
`WAIT` / `DONE` / `FAIL`, or Claude's `CALL_USER`, a `message` to the user; some agents write an object with
`command`), `response` (the agent's output),
`reward`, `done`, `info`, `screenshot_file` (the screen *after* the action). The response is kept as the
reasoning of its turn's first action (of every line that names no `step_num`). `result.txt` holds the
evaluator's score. A line with `Error` and no `action` records a crash or a time limit.

Steps: one per line. The observation before action t is the screenshot written after action t-1 (the
harness saves no screenshot before the first action, so step 0 has none, unless the agent's loop saved one as
`step_0*.png`); the last screenshot is the final observation. A loop that names the screen *before* each action
(OS-Symphony's, `ingest.ubuntu.osworld_runners.screens_before_action`) is read shifted by one: its first screen
is the initial one, and its last action's result was not recorded. A screenshot a line names but the folder
holds under the name its loop wrote (`ingest.ubuntu.osworld_runners.written_as`) is read from there. Other
agents' fields (`computer_13` action dicts, replies logged as objects, the model's own point in its reply,
run-index folders, the model named by the folder layout) are read by `ingest.ubuntu.osworld_agents`. pyautogui
code is read with `ast` (`ingest.pyautogui_code`), never run; pixel coordinates are divided by the screenshot's
size (read from the PNG header). Computer-use loops translate a click into `moveTo(x, y)` then `click()`: a
click without coordinates is placed where the last line left the pointer (said in `raw` as `pointer`); their
bash tool's calls, logged as `BASH <command>`, are `command` actions, and an MCP-hybrid loop's
`MCP:<tool>:<JSON arguments>` lines are `tool_call` actions. Local times of an unknown zone: step timestamps
stay null, the first and last are kept in `env`. Outcome: score 1 -> success, below -> failure (reward =
score). The episode is terminal when the last line says `done`; an error line or the step limit leaves it
truncated. Bad lines and error lines each give one quarantine row.

Screenshots the folder does not hold (results copied without their PNGs, a screenshot that failed to save)
are a fact of the recording, not broken data: that observation is `none` (nothing recorded to show, like
step 0), the missing file names are listed in `env["screenshots_missing"]`, and no quarantine row is
written, so ingest and validate agree (validate keeps a `none` observation; a `screen` observation with
neither text nor screenshot is what it reports as empty). Without any screenshot the screen size is
unknown: pixel coordinates stay in the action's `raw` code and x/y are null.

What agents' own runners add (`instruction.txt` as the task, `time.txt`, a header line of the task, Agent S's
plan as the reasoning, each line's own fields kept raw in `env["agent_fields"]`) is read by
`ingest.ubuntu.osworld_runners`; a computer-use loop's conversation beside them (`messages.json`: the task, each
turn's text as reasoning, its shell tool's results) by `ingest.ubuntu.osworld_messages`. The folder's other files (the harness's `recording.mp4` and `runtime.log`, a
runner's `traj.html`, a judge's notes) are named by `members` as files of the run the reader does not read, so
`ignored_inputs` lists them with why instead of the folder unit taking them unsaid. A line with `Error` and no
`action` (a runner's crash or time limit, some with `Exception` and `Traceback`) is a run error.
"""

from __future__ import annotations

import posixpath
from typing import Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.members import unread_in
from ingest.png import png_size
from ingest.pyautogui_code import CodeError, to_action
from ingest.ubuntu.osworld_messages import apply as apply_conversation, read_conversation
from ingest.ubuntu.osworld_agents import (COMPUTER_13, agent_of, computer_13, initial_screenshot, model_point,
                                          move_then_click, outside_point, reply, tool_point)
from ingest.ubuntu.osworld_runners import (agent_reasoning, header_screenshot, keep_fields, line_fields, reads,
                                           runner_env, screens_before_action, shift_to_after, unread_why,
                                           written_as)
from ingest.record import Action, Episode, Observation, Rejected, Step
from ingest.source import Source, SourceError

FORMAT = "osworld"
VERSION = "7"
INFO = FormatInfo(
    group="ubuntu", rank=170, domains=('os',), platform="ubuntu",
    summary=("OSWorld result trajectories (pyautogui code and `computer_13` actions of any agent's loop, points in"
             " the screenshot's pixels with the model's own numbers kept beside them, the evaluator's score; the task"
             " and plans agents' own runners such as Agent S write beside them; a computer-use loop's `messages.json`"
             ": its texts as reasoning, its bash results)"),
)

# the harness's own words (WAIT pauses, DONE and FAIL end the run); CALL_USER is Claude's `call_user` in
# OSWorld's computer-use loop (the prompt's "call the user when the task is unsolvable, or when you need the
# user's help"): the agent turns to the user, and the harness runs nothing for it
_SPECIAL = {"WAIT": "wait", "DONE": "done", "FAIL": "done", "CALL_USER": "message"}
_BASH = "BASH "  # a computer-use loop's bash tool call, logged as `BASH <command>` among the pyautogui lines
_MCP = "MCP:"  # an MCP-hybrid loop's tool call, `MCP:<tool name>:<JSON arguments>`, run by the VM's MCP server
_CLICKS = ("click", "double_click", "right_click")


def units(files: list[str], head) -> list[str]:
    """A result directory is one holding traj.jsonl."""
    return sorted({posixpath.dirname(p) for p in files if posixpath.basename(p) == "traj.jsonl"})


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The files of each result folder the reader does not read (see the docstring)."""
    return {folder: unread_in(folder, files, reads, unread_why) for folder in found}


def _lines(source: Source) -> tuple[list[tuple[int, dict]], list[Rejected]]:
    data = source.read_bytes("traj.jsonl")
    records, rejected = [], []
    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            rejected.append(Rejected("parse_error", f"traj.jsonl line {n}: invalid JSON: {e}", "traj.jsonl",
                                     line=n, snippet=raw[:200].decode("utf-8", "replace")))
            continue
        if not isinstance(record, dict):
            rejected.append(Rejected("bad_record", f"traj.jsonl line {n}: expected an object, got "
                                     f"{type(record).__name__}", "traj.jsonl", line=n,
                                     snippet=raw[:200].decode("utf-8", "replace")))
        elif "Error" in record and "action" not in record:
            said = " ".join(str(record[k]) for k in ("Error", "Exception") if k in record)
            rejected.append(Rejected("run_error", f"traj.jsonl line {n}: the run reported an error: {said[:300]}",
                                     "traj.jsonl", line=n))
            records.append((n, record))
        elif "action" not in record and isinstance(record.get("instruction"), str):
            records.append((n, record))  # a header naming the task (and the initial screen), not an action
        elif "action" not in record:
            rejected.append(Rejected("bad_record", f"traj.jsonl line {n}: no 'action'", "traj.jsonl", line=n,
                                     snippet=raw[:200].decode("utf-8", "replace")))
        else:
            records.append((n, record))
    return records, rejected


def _screenshot(source: Source, name, n: int) -> tuple[Observation | None, Rejected | None]:
    if name is None or name == "":
        return None, None
    if not isinstance(name, str):
        return None, Rejected("bad_record", f"traj.jsonl line {n}: screenshot_file is a {type(name).__name__}, not a "
                              "file name; the step is kept without it", "traj.jsonl", line=n)
    if "/" in name or "\\" in name or name.startswith("."):
        return None, Rejected("bad_record", f"screenshot_file {name!r} is not a plain file name", name)
    if not source.exists(name):
        return Observation(kind="none"), None  # listed in env["screenshots_missing"] by read()
    data = source.read_bytes(name)
    size = png_size(data)
    return Observation(kind="screen", screenshot=source.put_blob(data, "image/png", source.uri),
                       width=size[0] if size else None, height=size[1] if size else None), None


def _action(record: dict, n: int, size: tuple[int, int] | None) -> Action:
    action = record["action"]
    if isinstance(action, dict) and not action.get("command") and action.get("action_type") in COMPUTER_13:
        return computer_13(action, size, n)
    if isinstance(action, dict):  # agents that log {"action_type", "command", ...}
        # OpenAI's computer-use loops: {"action_space": "pyautogui", "action": <code>, "pending_checks", "call_id"}
        code = action.get("command") or action.get("action_type") or (
            action.get("action") if action.get("action_space") == "pyautogui" else None)
        raw = orjson.dumps(action).decode()
    else:
        code, raw = action, action if isinstance(action, str) else orjson.dumps(action).decode()
    if not isinstance(code, str):
        raise SourceError("bad_record", f"traj.jsonl line {n}: action is not code: {raw[:200]}", "traj.jsonl")
    if code.strip() in _SPECIAL:
        word = code.strip()
        return Action(kind=_SPECIAL[word], text=word if word == "FAIL" else None,
                      code=word if word == "CALL_USER" else None, raw=raw)
    if code.startswith(_BASH):
        return Action(kind="command", code=code[len(_BASH):], raw=raw)
    if code.startswith(_MCP):
        return _mcp_call(code, raw)
    try:
        typed = to_action(code, size or (float("inf"), float("inf")))
    except CodeError as e:
        raise SourceError("parse_error", f"traj.jsonl line {n}: action {e}", "traj.jsonl") from None
    if typed.kind == "code":
        typed = move_then_click(code, size or (float("inf"), float("inf"))) or typed
    if size is None:  # no screenshot to tell the screen size: coordinates cannot be normalized
        typed.x = typed.y = typed.x2 = typed.y2 = None
    off = outside_point(code, size) if size else None
    typed.raw = raw if off is None else orjson.dumps({"action": record["action"], "point": off}).decode()
    return typed


def _mcp_call(code: str, raw: str) -> Action:
    """`MCP:<tool>:<arguments>`: the loop sends `{}` where the arguments are no JSON object (`raw` keeps them)."""
    name, _, text = code[len(_MCP):].partition(":")
    try:
        arguments = orjson.loads(text or "{}")
    except orjson.JSONDecodeError:
        arguments = None
    return Action(kind="tool_call", tool_name=name,
                  arguments=orjson.dumps(arguments if isinstance(arguments, dict) else {}).decode(), raw=raw)


def _score(source: Source) -> tuple[float | None, Rejected | None]:
    if not source.exists("result.txt"):
        return None, None
    text = source.read_bytes("result.txt").decode("utf-8", "replace").strip()
    try:
        return float(text), None
    except ValueError:
        return None, Rejected("parse_error", f"result.txt: score {text[:50]!r} is not a number", "result.txt")


def _with_model_point(action: Action, record: dict) -> Action:
    said = tool_point(record.get("action")) or model_point(record.get("response"))
    if said is not None:  # the model's own numbers, in its own space: kept beside the executed code
        placed = action.raw.startswith('{"action":') if action.raw else False
        kept = orjson.loads(action.raw) if placed else {"action": record["action"]}
        action.raw = orjson.dumps({**kept, "model_point": said}).decode()
    return action


def _at_pointer(action: Action, pointer: tuple[int, float, float] | None, size, n: int
                ) -> tuple[int, float, float] | None:
    """A click without coordinates clicks where the pointer is: the point of the last line that put it somewhere
    (`moveTo`, a click, a drag's end), kept in `raw` as `pointer` in screen pixels. Returns (line, x, y): where
    the pointer is after line n (None once a line moved it in a way the reader does not follow)."""
    if action.kind in _CLICKS and action.x is None and pointer is not None and size:
        line, action.x, action.y = pointer
        kept = orjson.loads(action.raw) if action.raw and action.raw.startswith("{") else action.raw
        kept = kept if isinstance(kept, dict) and "action" in kept else {"action": kept}
        action.raw = orjson.dumps({**kept, "pointer": {
            "x": round(action.x * size[0], 3), "y": round(action.y * size[1], 3), "space": "screen",
            "from": f"where line {line} left the pointer"}}).decode()
        return pointer
    if action.kind == "drag":
        return None if action.x2 is None or action.y2 is None else (n, action.x2, action.y2)
    if action.kind == "code":
        return None  # several calls: where they leave the pointer is not followed
    return (n, action.x, action.y) if action.x is not None and action.y is not None else pointer


def _steps(records, shots, first: Observation, size, run: dict) -> Iterator[Step | Rejected]:
    """One step per line; `run` gets what the lines say of the whole run (crashed, done, the final screen,
    local times)."""
    previous_obs, last_turn, pointer, made = first, None, None, 0
    for (n, record), shot in zip(records, shots):
        if "action" not in record:
            run["crashed"] = run.get("crashed", False) or "Error" in record
            continue
        try:
            action = _with_model_point(_action(record, n, size), record)
        except SourceError as e:
            yield Rejected(e.rule, e.reason, e.location, line=n)
            continue
        pointer = _at_pointer(action, pointer, size, n)
        turn = record.get("step_num")
        reward = record.get("reward")
        yield Step(
            observation=previous_obs,
            action=action,
            reward=float(reward) if isinstance(reward, (int, float)) else None,
            # the response once per turn; a line without step_num is a turn of its own (its response kept)
            reasoning=(reply(record.get("response")) or agent_reasoning(record))
            if turn is None or turn != last_turn else None,
        )
        if fields := line_fields(record):
            run.setdefault("fields", []).append({"step": made, "line": n, "fields": fields})
        run.setdefault("logged", []).append(record["action"])
        made += 1
        last_turn, run["done"] = turn, record.get("done") is True
        if isinstance(record.get("action_timestamp"), str):
            run.setdefault("stamps", []).append(record["action_timestamp"])
        previous_obs = shot or Observation(kind="none")
    run["last"] = previous_obs


def _env(source: Source, records, run: dict) -> tuple[dict, str | None]:
    parts = source.uri.rstrip("/").split("/")
    if len(parts) >= 3 and parts[-1].isdigit() and len(parts[-2]) >= 32:  # <example id>/<run index>/
        env = {"os": "ubuntu", "example_id": parts[-2], "run_index": int(parts[-1])}
        parts = parts[:-1]
    else:
        env = {"os": "ubuntu", "example_id": parts[-1]}
    if len(parts) >= 2:
        env["osworld_domain"] = parts[-2]
    agent = agent_of(parts, [r for _, r in records], env)
    if run.get("size"):
        env["screen_size"] = list(run["size"])
    if run.get("stamps"):
        env["local_time_first"], env["local_time_last"] = run["stamps"][0], run["stamps"][-1]
    if run.get("missing"):
        env["screenshots_missing"] = run["missing"]
    if run.get("initial_name"):
        env["initial_screenshot"] = run["initial_name"]
    if run.get("renamed"):
        env["screenshots_written_as"] = run["renamed"]
    if run.get("screens"):
        env["screenshot_file_is"] = run["screens"]
    return env, agent


def _shots(source: Source, records, referenced: set[str], run: dict) -> Iterator[Rejected]:
    """Each line's screenshot (the screen after its action) into `run["shots"]`; the names of those the folder
    lacks into `run["missing"]`, and of those found under the name the runner wrote into `run["renamed"]`."""
    run["shots"], run["missing"], run["renamed"] = [], [], {}
    last_of_turn = {r["step_num"]: i for i, (_, r) in enumerate(records) if isinstance(r.get("step_num"), int)}
    for i, (n, record) in enumerate(records):
        obs, problem = _screenshot(source, record.get("screenshot_file"), n)
        if obs is not None and obs.kind == "none" and last_of_turn.get(record.get("step_num")) == i:
            written = written_as(source, record, referenced)
            if written:
                obs, problem = _screenshot(source, written, n)
                run["renamed"][record["screenshot_file"]] = written
        run["shots"].append(obs)
        if problem:
            yield problem
        elif obs is not None and obs.kind == "none":
            run["missing"].append(record["screenshot_file"])


def read(source: Source) -> Iterator[Episode | Rejected]:
    records, rejected = _lines(source)
    yield from rejected
    referenced = {r.get("screenshot_file") for _, r in records if isinstance(r.get("screenshot_file"), str)}
    run: dict = {}
    yield from _shots(source, records, referenced, run)
    shots = run["shots"]
    initial, run["initial_name"] = initial_screenshot(source, referenced, header_screenshot([r for _, r in records]))
    if screens_before_action([r for _, r in records]):
        initial, shots = shift_to_after(records, shots)
        run["initial_name"], run["screens"] = None, "before the action (each line names the screen it acted on)"
    sizes = [(o.width, o.height) for o in [initial, *shots] if o and o.width and o.height]
    run["size"] = sizes[0] if sizes else None
    # OSWorld's harness saves no screenshot before the first action; some agents' loops do (`step_0*.png`)
    steps = []
    for item in _steps(records, shots, initial or Observation(kind="none"), run["size"], run):
        if isinstance(item, Rejected):
            yield item
        else:
            steps.append(item)
    score, problem = _score(source)
    if problem:
        yield problem
    env, agent = _env(source, records, run)
    keep_fields(env, run.get("fields", []))
    task, problems = runner_env(source, next((r["instruction"] for _, r in records
                                              if isinstance(r.get("instruction"), str)), None), env)
    yield from problems
    last = run["last"]
    talk, problem = read_conversation(source)
    if problem:
        yield problem
    if talk:
        apply_conversation(talk, steps, run.get("logged", []), env, last)
        task = task or talk["task"]
    yield Episode(
        key="",
        domain="os",
        platform="ubuntu",  # OSWorld's desktop VM; the result directory does not name another OS
        steps=steps,
        agent=agent,
        task=task,
        outcome="unknown" if score is None else "success" if score >= 1.0 else "failure",
        reward=score,
        terminated=run.get("done", False) and not run.get("crashed", False),
        final_observation=last if steps and last.kind != "none" else None,
        env=env,
    )
