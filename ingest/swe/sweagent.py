"""SWE-agent `.traj` files: one JSON object per file, one episode per file (named `<instance_id>.traj`).

Three layouts are read:

- current (1.x): `trajectory[]` steps `{action, observation, thought, response, execution_time, state{}}`,
  `history[]` chat messages (assistant `message_type: action` messages carry `tool_calls` when the agent used
  function calling), `info{submission, exit_status, model_stats, ...}`, `replay_config` (dict or JSON string);
- history-only (demonstrations): just `history[]`; steps are rebuilt from assistant actions and the tool /
  user messages that follow them;
- legacy 0.x: the same top keys without `message_type`/`tool_calls`, `state` a JSON string, demonstration
  messages flagged `is_demo`.

Steps: observation 0 is the first task message the agent read (the issue with the instructions); the
observation of step t+1 is what the agent read after command t: the message(s) that followed it in
`history` (the output with SWE-agent's `(Open file: ...)` / `(Current directory: ...)` footer, or its
"did not produce any output" notice), else the trajectory's raw `observation` (as for the last command,
whose output SWE-agent does not log in the history). The output of the last command is the final
observation. A command run through a `bash` tool call is a `command` action, another tool call a
`tool_call` (with `code` = the command line SWE-agent ran); without tool calls every action is a `command`.
CRLF in outputs becomes LF. `exit_status` starting with `submitted` ends the episode (terminal); any other
status (cost or context limit, error) truncates it. SWE-agent records durations but no clock times, so
timestamps stay null; `execution_time` goes to `duration_s`.

`env`: `layout`, `exit_status`, `submission` (the git diff), `model_stats`, `environment`, `repo`,
`instance_id`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.record import Action, Episode, Observation, Rejected, Step
from ingest.source import Source, SourceError, parse_json
from ingest.tools import dumps, tool_action

FORMAT = "sweagent"
VERSION = "1"

_ISSUE = re.compile(r"ISSUE:\n(.*?)\n+INSTRUCTIONS:", re.DOTALL)


def units(files: list[str], head) -> list[str]:
    """`.traj` files, or JSON objects whose first key is `environment`/`trajectory`/`history` with SWE-agent
    chat messages in them."""
    found = []
    for path in files:
        if path.endswith(".traj"):
            found.append(path)
        elif path.endswith(".json"):
            start = head(path).lstrip()[:4096]
            if start.startswith(b"{") and _sniff(start):
                found.append(path)
    return found


def _sniff(start: bytes) -> bool:
    first_key = re.match(rb'\{\s*"(\w+)"', start)
    if not first_key or first_key.group(1) not in (b"environment", b"trajectory", b"history"):
        return False
    return b'"role"' in start or b'"action"' in start or b'"observation"' in start


def _text(content) -> str:
    """Message content: a string, or a list of content parts (`{"type": "text", "text": ...}`)."""
    if isinstance(content, list):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return content if isinstance(content, str) else ""


def _lf(text: str | None) -> str | None:
    return text.replace("\r\n", "\n") if isinstance(text, str) else text


def _is_demo(msg: dict) -> bool:
    return bool(msg.get("is_demo")) or msg.get("message_type") == "demonstration"


def _task_message(history: list[dict]) -> str | None:
    for msg in history:
        if msg.get("role") == "user" and not _is_demo(msg):
            return _text(msg.get("content"))
    return None


def _issue(message: str | None) -> str | None:
    """The issue text inside SWE-agent's instance template; the whole message when the template differs."""
    if not message:
        return None
    m = _ISSUE.search(message)
    return (m.group(1) if m else message).strip()


def _action(command: str, tool_calls: list | None, state, execution_time=None) -> Action:
    raw = {"action": command}
    if tool_calls:
        raw["tool_calls"] = tool_calls
    if state is not None:
        raw["state"] = state
    raw = dumps(raw)
    duration = float(execution_time) if isinstance(execution_time, (int, float)) else None
    if tool_calls:
        fn = tool_calls[0].get("function") or {}
        action = tool_action(fn.get("name"), fn.get("arguments"), raw, code=command.strip() or None)
    else:
        action = Action(kind="command", code=command.strip(), raw=raw)
    action.duration_s = duration
    return action


def _state(value):
    """`state` is a dict in 1.x and a JSON string (with a trailing newline) in 0.x."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _replies(history: list[dict]) -> list[tuple[dict, str]]:
    """(assistant message, the text the agent read after it) in order, demonstrations left out."""
    pairs: list[tuple[dict, list[str]]] = []
    for msg in history:
        if _is_demo(msg) or msg.get("role") == "system":
            continue
        if msg.get("role") == "assistant":
            pairs.append((msg, []))
        elif pairs:
            pairs[-1][1].append(_text(msg.get("content")))
    return [(msg, "\n".join(parts)) for msg, parts in pairs]


def _steps_from_trajectory(doc: dict, where: str) -> tuple[list[Step], Observation | None]:
    history = [m for m in doc.get("history") or [] if isinstance(m, dict)]
    replies = _replies(history)
    trajectory = doc["trajectory"]
    steps: list[Step] = []
    cursor = 0  # history actions are matched to trajectory steps in order, by their command text
    obs = Observation(kind="text", text=_lf(_task_message(history))) if history else Observation()
    for i, record in enumerate(trajectory):
        if not isinstance(record, dict) or not isinstance(record.get("action"), str):
            raise SourceError("bad_record", f"{where}: trajectory[{i}] has no 'action' string", f"trajectory[{i}]")
        tool_calls, seen = None, None
        for j in range(cursor, len(replies)):
            if replies[j][0].get("action") == record["action"]:
                tool_calls, seen, cursor = replies[j][0].get("tool_calls"), replies[j][1], j + 1
                break
        steps.append(Step(observation=obs,
                          action=_action(record["action"], tool_calls, _state(record.get("state")),
                                         record.get("execution_time")),
                          reasoning=record.get("thought")))
        obs = Observation(kind="terminal", text=_lf(seen or record.get("observation")))
    return steps, obs


def _steps_from_history(history: list[dict], where: str) -> tuple[list[Step], Observation | None]:
    steps: list[Step] = []
    obs = Observation()
    pending: list[str] = []
    started = False
    for msg in history:
        if not isinstance(msg, dict) or _is_demo(msg) or msg.get("role") == "system":
            continue
        if msg.get("role") == "assistant":
            command = msg.get("action")
            if not isinstance(command, str):
                continue  # a reply without a command (e.g. a format error) is no action
            if pending:
                obs = Observation(kind="terminal" if started else "text", text=_lf("\n".join(pending)))
            steps.append(Step(observation=obs, action=_action(command, msg.get("tool_calls"), None),
                              reasoning=msg.get("thought")))
            obs, pending, started = Observation(), [], True
        else:
            pending.append(_text(msg.get("content")))
    final = Observation(kind="terminal", text=_lf("\n".join(pending))) if pending and steps else None
    return steps, final


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    doc = parse_json(source.read_bytes(), name)
    if not isinstance(doc, dict):
        raise SourceError("bad_record", f"{name}: a .traj file holds one JSON object")
    history = doc.get("history") if isinstance(doc.get("history"), list) else []
    if isinstance(doc.get("trajectory"), list):
        layout = "v1" if any("message_type" in m for m in history if isinstance(m, dict)) or \
            any(isinstance(s, dict) and isinstance(s.get("state"), dict) for s in doc["trajectory"]) else "legacy"
        steps, final = _steps_from_trajectory(doc, name)
    elif history:
        layout = "history_only"
        steps, final = _steps_from_history(history, name)
    else:
        raise SourceError("bad_record", f"{name}: neither 'trajectory' nor 'history' is a list")
    if not steps:
        yield Rejected("empty_episode", f"{name}: no actions in the trajectory")
        return

    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    replay = doc.get("replay_config")
    if isinstance(replay, str):
        try:
            replay = orjson.loads(replay)
        except orjson.JSONDecodeError:
            replay = None
    replay = replay if isinstance(replay, dict) else {}
    model = ((replay.get("agent") or {}).get("model") or {}).get("name")
    problem = replay.get("problem_statement") or {}
    exit_status = info.get("exit_status")
    env = {"layout": layout, "exit_status": exit_status, "submission": _lf(info.get("submission")),
           "model_stats": info.get("model_stats"), "environment": doc.get("environment"),
           "repo": ((replay.get("env") or {}).get("repo") or {}).get("github_url"),
           "instance_id": problem.get("id") or (name[:-5] if name.endswith(".traj") else None)}
    task = _lf(_issue(_task_message(history))) or (problem.get("text") if isinstance(problem.get("text"), str) else None)
    yield Episode(
        key="",
        domain="swe",
        platform="linux",
        steps=steps,
        task=task,
        agent=model,
        final_observation=final,
        terminated=isinstance(exit_status, str) and exit_status.startswith("submitted"),
        env={k: v for k, v in env.items() if v is not None},
    )
