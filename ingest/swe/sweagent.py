"""SWE-agent `.traj` files: one JSON object per file, one episode per file (named `<instance_id>.traj`).

Three layouts are read:

- current (1.x): `trajectory[]` steps `{action, observation, thought, response, execution_time, state{}}`,
  `history[]` chat messages (assistant `message_type: action` messages carry `tool_calls` when the agent used
  function calling), `info{submission, exit_status, model_stats, ...}`, `replay_config` (dict or JSON string);
- history-only (demonstrations): just `history[]`, a chat: steps are rebuilt from assistant actions and the
  tool / user messages that follow them by the transcript core (`ingest.transcript`; a blank `thought` is no
  reasoning);
- legacy 0.x: the same top keys without `message_type`/`tool_calls`, `state` a JSON string, demonstration
  messages flagged `is_demo`.

The trajectory layouts are no chat: each `trajectory[i]` record is one step already (its command, output,
thought and duration), and the history only lends a step its tool calls and the text the agent read, matched
by command; they are read here, not by the transcript core.

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

Outcome: SWE-agent does not grade its own runs; the SWE-bench harness's reports do (`ingest.harness_reports`:
an instance report `logs/.../<instance>/report.json` or a run report `<model>.<run_id>.json` naming the
instance, found by planning anywhere above the trajectory): resolved -> success (reward 1), unresolved or an
empty patch -> failure (reward 0), else unknown. The segment that reaches the end of the file carries it (the
grade is of the run's final patch); `env.outcome_file` names the file that decided, `env.harness_status` what it
said, `env.report` the instance report's entry.

Record isolation: a record with a field of the wrong type (a `trajectory[i]` step that is not an object,
whose `action` is not a string, whose `observation` / `thought` is not a string, whose `execution_time` is
not a number, or whose values do not fit the schema or the `field_bytes` budget; a `history[i]` message whose
`role` / `action` / `thought` / `message_type` is not a string, whose `content` is neither
text nor a list of text parts, or whose `tool_calls` are not objects) gets one quarantine row (`bad_record`,
record_id `trajectory[i]` / `history[i]`, the field in the reason). In the trajectory layouts a bad step
splits the episode: the steps before it end truncated, the ones after it form an episode of their own keyed
`segment-<i>` (`env.segment`), whose first observation is the output of the bad step's command when it can
be read; a bad history message there is only left out (it lends observations and tool calls). In the
history-only layout, where messages are the records, a bad message splits the episode the same way. Only the
segment that reaches the end of the file can be terminal. An `env` value orjson cannot write is left out with
a row.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest import harness_reports
from ingest.arrow import checked_env, checked_episode, step_problem
from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Observation, Rejected, Step
from ingest.source import Source, SourceError, parse_json
from ingest.tools import dumps, tool_action
from ingest.transcript import Message, steps_of

FORMAT = "sweagent"
VERSION = "2"
TAKES_HARNESS_REPORTS = True  # planning gives each unit the SWE-bench reports of its run
INFO = FormatInfo(
    group="swe", rank=20, domains=('swe',), platform="linux",
    summary="SWE-agent `.traj` (current, history-only, legacy 0.x; outcome from the SWE-bench reports of its run)",
)

_ISSUE = re.compile(r"ISSUE:\n(.*?)\n+INSTRUCTIONS:", re.DOTALL)


def units(files: list[str], head) -> list[str]:
    """`.traj` files, or JSON objects whose first key is `environment`/`trajectory`/`history` with SWE-agent
    steps or chat messages in them (`_sniff`)."""
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
    """SWE-agent evidence beyond a generic first key: after `environment` / `trajectory`, steps or messages; a
    `history` must hold chat messages with SWE-agent's own fields (`message_type`, `agent`, `action`): a bare
    `history` key is no evidence (browser-use histories open with it, their steps holding `action`s)."""
    first_key = re.match(rb'\{\s*"(\w+)"', start)
    if not first_key or first_key.group(1) not in (b"environment", b"trajectory", b"history"):
        return False
    if first_key.group(1) == b"history":
        return b'"role"' in start and any(key in start for key in (b'"message_type"', b'"agent"', b'"action"'))
    return b'"role"' in start or b'"action"' in start or b'"observation"' in start


class _BadRecord(ValueError):
    """A record with a field of the wrong type; the message is "field ...: what is wrong"."""


def _kind(value) -> str:
    return "null" if value is None else type(value).__name__


def _text(content, label: str = "content") -> str:
    """Message content: a string, or a list of content parts (`{"type": "text", "text": ...}` or strings);
    _BadRecord for anything else."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for i, part in enumerate(content):
            text = part.get("text", "") if isinstance(part, dict) else part
            if not isinstance(text, str):
                raise _BadRecord(f"{label}[{i}]: {_kind(text)}, expected text")
            parts.append(text)
        return "\n".join(parts)
    raise _BadRecord(f"{label}: {_kind(content)}, expected a string or a list of parts")


def _optional_str(record: dict, key: str, label: str) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise _BadRecord(f"{label}.{key}: {_kind(value)}, expected a string")
    return value


def _tool_calls(record: dict, label: str) -> list | None:
    calls = record.get("tool_calls")
    if calls is None:
        return None
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        raise _BadRecord(f"{label}.tool_calls: {_kind(calls)}, expected a list of objects")
    if calls:
        fn = calls[0].get("function")
        if fn is not None and not isinstance(fn, dict):
            raise _BadRecord(f"{label}.tool_calls[0].function: {_kind(fn)}, expected an object")
        if fn and fn.get("name") is not None and not isinstance(fn.get("name"), str):
            raise _BadRecord(f"{label}.tool_calls[0].function.name: {_kind(fn.get('name'))}, expected a string")
    return calls


def _check_message(msg, label: str) -> dict:
    if not isinstance(msg, dict):
        raise _BadRecord(f"{label}: {_kind(msg)}, expected a message object")
    for key in ("role", "action", "thought", "message_type"):
        _optional_str(msg, key, label)
    _text(msg.get("content"), f"{label}.content")
    _tool_calls(msg, label)
    return msg


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


def _writable(value) -> bool:
    try:
        dumps(value)
        return True
    except TypeError:
        return False


def _action(command: str, tool_calls: list | None, state, execution_time=None, label: str = "") -> Action:
    raw = {"action": command}
    if tool_calls:
        raw["tool_calls"] = tool_calls
    if state is not None:
        raw["state"] = state
    try:
        raw = dumps(raw)
    except TypeError as e:  # orjson.JSONEncodeError: nested deeper than 255 levels, an integer past 64 bits
        bad = next((k for k in ("state", "tool_calls") if k in raw and not _writable(raw[k])), "action")
        raise _BadRecord(f"{label}.{bad}: cannot be written as JSON ({e})") from None
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


# A segment: (first record index, steps, final observation, whether it reaches the end of the file's records)
Segment = tuple[int, list[Step], Observation | None, bool]


def _checked_step(step: Step) -> Step:
    if (problem := step_problem(step)) is not None:
        raise _BadRecord(problem)
    return step


def _steps_from_trajectory(doc: dict, history: list[dict], where: str,
                           rejected: list[Rejected]) -> list[Segment]:
    replies = _replies(history)
    trajectory = doc["trajectory"]
    segments: list[Segment] = []
    steps: list[Step] = []
    first = 0
    cursor = 0  # history actions are matched to trajectory steps in order, by their command text
    obs = Observation(kind="text", text=_lf(_task_message(history))) if history else Observation()
    for i, record in enumerate(trajectory):
        label = f"trajectory[{i}]"
        command = record.get("action") if isinstance(record, dict) else None
        tool_calls, seen = None, None
        if isinstance(command, str):
            for j in range(cursor, len(replies)):
                if replies[j][0].get("action") == command:
                    tool_calls, seen, cursor = replies[j][0].get("tool_calls"), replies[j][1], j + 1
                    break
        try:
            if not isinstance(record, dict):
                raise _BadRecord(f"{label}: {_kind(record)}, expected a step object")
            if not isinstance(command, str):
                raise _BadRecord(f"{label}.action: {_kind(command)}, expected the command string")
            for key in ("observation", "thought"):
                _optional_str(record, key, label)
            duration = record.get("execution_time")
            if duration is not None and (not isinstance(duration, (int, float)) or isinstance(duration, bool)):
                raise _BadRecord(f"{label}.execution_time: {_kind(duration)}, expected seconds")
            step = _checked_step(Step(observation=obs, action=_action(command, tool_calls, _state(record.get("state")),
                                                                      record.get("execution_time"), label),
                                      reasoning=record.get("thought")))
        except (_BadRecord, TypeError, ValueError) as e:  # orjson refuses what it cannot write: TypeError
            rejected.append(Rejected("bad_record", f"{where}: field {e}; the episode is split there", where,
                                     record_id=label))
            if steps:
                segments.append((first, steps, None, False))
            steps, first = [], i + 1
            output = seen if seen is not None else record.get("observation") if isinstance(record, dict) else None
            obs = Observation(kind="terminal", text=_lf(output)) if isinstance(output, str) else Observation()
            continue
        steps.append(step)
        obs = Observation(kind="terminal", text=_lf(seen or record.get("observation")))
    if steps:
        segments.append((first, steps, obs, first + len(steps) == len(trajectory)))
    return segments


def _steps_from_history(history: list, where: str, rejected: list[Rejected]) -> list[Segment]:
    """The history-only layout, a chat: each segment's messages go through the transcript core
    (`ingest.transcript`), one assistant message per command (its `thought` the reasoning), and what the agent
    read before it as one user message (SWE-agent's messages joined by lines, `text` before the first command,
    `terminal` after); what it read after the last command is the final observation."""
    segments: list[Segment] = []
    messages: list[Message] = []  # the current segment's transcript: empty until its first step
    first, pending, started = 0, [], False
    for i, msg in enumerate(history):
        label = f"history[{i}]"
        try:
            _check_message(msg, label)
            if _is_demo(msg) or msg.get("role") == "system":
                continue
            if msg.get("role") != "assistant":
                pending.append(_text(msg.get("content")))
                continue
            command = msg.get("action")
            if command is None:
                continue  # a reply without a command (e.g. a format error) is no action
            seen = Observation(kind="terminal" if started else "text", text=_lf("\n".join(pending))) if pending \
                else None
            action = _action(command, msg.get("tool_calls"), None, None, label)
            _checked_step(Step(observation=seen or Observation(), action=action, reasoning=msg.get("thought")))
        except (_BadRecord, TypeError, ValueError) as e:
            rejected.append(Rejected("bad_record", f"{where}: field {e}; the episode is split there", where,
                                     record_id=label))
            if messages:
                segments.append(_history_segment(first, messages, False))
            messages, pending = [], []  # the next step starts a segment (and sets `first`)
            continue
        if not messages:
            first = i
        if seen is not None:
            messages.append(Message("user", observation=seen))
        messages.append(Message("assistant", reasoning=msg.get("thought"), action=action))
        pending, started = [], True
    if pending and messages:
        messages.append(Message("user", observation=Observation(kind="terminal", text=_lf("\n".join(pending)))))
    if messages:
        segments.append(_history_segment(first, messages, True))
    return segments


def _history_segment(first: int, messages: list[Message], reaches_end: bool) -> Segment:
    made = steps_of(messages)
    return first, made.steps, made.final_observation, reaches_end


def _at(doc, *keys):
    """doc[k1][k2]... through dicts only; None where a level is missing or not an object."""
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def read(source: Source) -> Iterator[Episode | Rejected]:
    """The file's episode. A record with a field of the wrong type (a trajectory step, a history message) is
    quarantined alone, naming the record and the field, and splits the episode there (module docstring)."""
    name = posixpath.basename(source.path)
    doc = parse_json(source.read_bytes(), name, source.budgets)
    if not isinstance(doc, dict):
        raise SourceError("bad_record", f"{name}: a .traj file holds one JSON object")
    rejected: list[Rejected] = []
    raw_history = doc.get("history") if isinstance(doc.get("history"), list) else []
    if isinstance(doc.get("trajectory"), list):
        history = []  # here the history only lends observations and tool calls: a bad message is left out
        for i, msg in enumerate(raw_history):
            try:
                history.append(_check_message(msg, f"history[{i}]"))
            except _BadRecord as e:
                rejected.append(Rejected("bad_record", f"{name}: field {e}; the message is left out", name,
                                         record_id=f"history[{i}]"))
        layout = "v1" if any("message_type" in m for m in history) or \
            any(isinstance(s, dict) and isinstance(s.get("state"), dict) for s in doc["trajectory"]) else "legacy"
        segments = _steps_from_trajectory(doc, history, name, rejected)
    elif raw_history:
        layout = "history_only"
        segments = _steps_from_history(raw_history, name, rejected)
        history = [m for m in raw_history if isinstance(m, dict)]
    else:
        raise SourceError("bad_record", f"{name}: neither 'trajectory' nor 'history' is a list")
    yield from rejected
    if not segments:
        if not rejected:
            yield Rejected("empty_episode", f"{name}: no actions in the trajectory")
        return

    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    replay = doc.get("replay_config")
    if isinstance(replay, str):
        try:
            replay = orjson.loads(replay)
        except orjson.JSONDecodeError:
            replay = None
    model = _at(replay, "agent", "model", "name")
    problem_text = _at(replay, "problem_statement", "text")
    instance_id = _at(replay, "problem_statement", "id")
    exit_status = info.get("exit_status")
    env = {"layout": layout, "exit_status": exit_status, "submission": _lf(info.get("submission")),
           "model_stats": info.get("model_stats"), "environment": doc.get("environment"),
           "repo": _at(replay, "env", "repo", "github_url"),
           "instance_id": instance_id or (name[:-5] if name.endswith(".traj") else None)}
    harness, problems = harness_reports.verdict(source, env["instance_id"], exit_statuses=False)
    yield from problems
    env.update(harness.env(), report=harness.entry)
    try:
        task = _lf(_issue(_task_message(history)))
    except _BadRecord:
        task = None
    task = task or (problem_text if isinstance(problem_text, str) else None)
    env, dropped = checked_env({k: v for k, v in env.items() if v is not None})
    for problem in dropped:
        yield Rejected("bad_record", f"{name}: env field {problem}; left out of the episode's env", name,
                       record_id=problem.split(":", 1)[0])
    for j, (first, steps, final, reaches_end) in enumerate(segments):
        last = j == len(segments) - 1
        yield checked_episode(Episode(
            key="" if j == 0 else f"segment-{first}",
            domain="swe",
            platform="linux",
            steps=steps,
            task=task,
            agent=model if isinstance(model, str) else None,
            final_observation=final,
            terminated=last and reaches_end and isinstance(exit_status, str) and exit_status.startswith("submitted"),
            outcome=harness.outcome if last and reaches_end else "unknown",
            reward=harness.reward if last and reaches_end else None,
            env=env if len(segments) == 1 else {**env, "segment": {
                "index": j, "count": len(segments), "first_record": first,
                "records": "history" if layout == "history_only" else "trajectory"}},
        ), name)
