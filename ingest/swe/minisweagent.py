"""mini-swe-agent trajectories (`<instance>.traj.json`): one JSON object per file, one episode per file; an
adapter onto `ingest.transcript`.

Two layouts, both `{"info": {...}, "messages": [...], "trajectory_format": ...}`:

- 1.x (`trajectory_format` `mini-swe-agent-1`, written by `run/utils/save.py:save_traj`): messages
  `{role, content, timestamp}`; an assistant turn holds its THOUGHT and one fenced bash block (the agent's
  `action_regex`, kept in `info.config.agent`), and litellm's response (`extra.response`: `model`, `created`,
  `usage`); the user message right after it is the command's output (`<returncode>` + `<output>`, or a timeout
  notice); when the command printed `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` that message is the submission.
- 2.x (`mini-swe-agent-1.1`, written by `DefaultAgent.save`): each message carries `extra`: an assistant turn
  its parsed `actions` (`[{command, tool_call_id?}]`), `cost`, `timestamp` and the response; a result its
  `returncode`, `raw_output` and `exception_info`. With a tool-calling model the turn has `tool_calls` and
  results are `role: tool` messages with `tool_call_id`; without, results are user messages. The run ends
  with a `role: exit` message (`extra.exit_status`, `submission`); after `Submitted` its content (the
  submission) is what followed the last command. Responses-API models write `type: message` /
  `function_call` / `function_call_output` items, read the same way.

Steps (`ingest.transcript`): each command is a `command` action (tool `bash`, `code` the command), reasoning
the model's own reasoning (`reasoning_content`, or the response's `reasoning`) then the turn's text (THOUGHT
and block); `action.raw` keeps the turn's usage and cost; a turn without exactly one command (a format
error) is a `message` action and the format-error feedback is the next observation (2.x does not keep the
rejected turn as a message: it is rebuilt from the feedback's `extra.model_response`). Observation 0 is the
task message (the rendered instance template, also the task); a result's `exit_code` is its return code.
Step timestamps are the turn's own (`timestamp` / `extra.timestamp`, epoch seconds; the response's `created`,
whole seconds, only in files where no message has a time of its own, since mixed with the finer clock it runs
backwards: a 2.x rejected reply has only `created`, so it has no time); the model per step is the
response's `model` (else `info.config.model.model_name`).

Outcome: `exit_status` `Submitted` ends the episode (terminal); any other status (LimitsExceeded, a
format-error streak, an exception) truncates it. The resolution is the SWE-bench harness's: a `report.json`
in the instance folder (`<instance>/<instance>.traj.json` beside `<instance>/report.json`: then the folder is
the unit; the report is the instance's entry or a map of instance ids to entries) gives `resolved` -> success
(reward 1) or failure (reward 0). Otherwise the harness's files elsewhere in the run decide
(`ingest.harness_reports`): an instance report under `logs/`, a run report (`<model>.<run_id>.json`) naming the
instance, found by planning anywhere above the trajectory; mini-swe-agent's `exit_statuses_*.yaml` gives the
exit status when the trajectory has none. Without any, the outcome is unknown. `env.outcome_file` names the
file that decided (`<input root name>/<path>`), `env.harness_status` what it said (resolved, unresolved,
empty_patch, error...), `env.exit_status_file` the exit statuses file that gave the exit status.

`env`: `trajectory_format`, `mini_version`, `exit_status`, `submission`, `model_stats`, `config`,
`instance_id` (the file name), `exit` (the exit message's extra, e.g. a traceback), `report` (the
harness's entry for the instance).

Bad input: a message with a field of the wrong type (`role`, `content`, `extra`, `tool_calls`, `extra.actions`,
`extra.returncode`...) is one `bad_record` row naming the message and the field, and is left out; the rest
of the trajectory is read.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

from ingest import harness_reports
from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError, parse_json
from ingest.times import parse_time
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "minisweagent"
VERSION = "3"
TAKES_HARNESS_REPORTS = True  # planning gives each unit the SWE-bench reports and exit statuses of its run
INFO = FormatInfo(
    group="swe", rank=50, domains=('swe',), platform="linux",
    summary="mini-swe-agent `.traj.json` (1.x, 2.x; outcome from the SWE-bench reports of its run)",
    producer="mini-swe-agent",
    versions="1.17.5, 2.4.6 (text and tool-call models)",
    proof=("each version in its own venv runs a bash task in a local environment against litellm's mock response (2.x"
           " tool calls: its deterministic test model); its inspector's paging and action parsing are the oracle "
           "(`tests/ingest/swe/test_minisweagent.py`); a real 1.15.0 run (Gemini 3 Pro) is a golden, and a real "
           "MIT-licensed 2.2.7 tool-call run (deepseek-reasoner, cut by a provider error) beside the test; outcomes: "
           "the SWE-bench harness 5.0.2's own grading and report writers grade real trajectories at test time, its "
           "run report is the oracle, and mini-swe-agent's batch progress manager writes its exit statuses; real "
           "graded runs: the 1.15.0 one with its `logs/<instance>/report.json`, a 2.2.7 one (deepseek-chat) in run "
           "reports above its output folder (`tests/ingest/swe/test_harness_outcomes.py`, goldens)"),
)

_SUFFIX = ".traj.json"
_DEFAULT_ACTION_REGEX = r"```bash\s*\n(.*?)\n```"
_RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
_SIGNATURE = re.compile(rb'"trajectory_format"\s*:\s*"mini-swe-agent|"mini_version"\s*:')
_INFO_FIRST = re.compile(rb'\{\s*"info"\s*:\s*\{')


def units(files: list[str], head) -> list[str]:
    """JSON objects that name mini-swe-agent's trajectory format or version in their first 4 KiB, or whose
    first key is `info` holding `model_stats` (2.x writes its long config first, the format name last); the
    instance folder instead when it holds the trajectory and the harness's `report.json`."""
    found = []
    present = set(files)
    for path in files:
        if not path.endswith(".json") or posixpath.basename(path) == "report.json":
            continue
        start = head(path).lstrip()
        if not start.startswith(b"{") or not (_SIGNATURE.search(start) or (
                _INFO_FIRST.match(start) and b'"model_stats"' in start)):
            continue
        folder = posixpath.dirname(path)
        instance = posixpath.basename(path)[:-len(_SUFFIX)] if path.endswith(_SUFFIX) else None
        if instance and posixpath.basename(folder) == instance and posixpath.join(folder, "report.json") in present:
            found.append(folder)
        else:
            found.append(path)
    return found


def _content(value) -> str:
    """A message's content: a string, or a list of parts (`text` / `input_text` / `output_text`)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(p if isinstance(p, str) else str(p.get("text", "")) for p in value
                         if isinstance(p, (str, dict)))
    return str(value)


def _at(doc, *keys):
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _when(msg: dict, extra: dict):
    """The message's own time (1.x `timestamp`, 2.x `extra.timestamp`: epoch seconds with microseconds)."""
    for value in (msg.get("timestamp"), extra.get("timestamp")):
        if (ts := parse_time(value)) is not None:
            return ts
    return None


def _has_own_times(raw: list) -> bool:
    return any(isinstance(m, dict) and (m.get("timestamp") is not None or (
        isinstance(m.get("extra"), dict) and m["extra"].get("timestamp") is not None)) for m in raw)


def _assistant(msg: dict, extra: dict, where: str, regex: re.Pattern, model: str | None) -> Message:
    text = _content(msg.get("content"))
    response = extra.get("response") if isinstance(extra.get("response"), dict) else {}
    usage = {k: v for k, v in (("usage", response.get("usage")), ("cost", extra.get("cost"))) if v is not None}
    calls = []
    for call in msg.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call.get("function"), dict) else {}
        calls.append(ToolCall(call.get("id"), fn.get("name"), fn.get("arguments"), raw=call))
    if not calls:
        actions = extra.get("actions")
        commands = [a.get("command") for a in actions if isinstance(a, dict)] if isinstance(actions, list) \
            else [c.strip() for c in regex.findall(text)]
        if len(commands) == 1 or isinstance(actions, list):
            calls = [ToolCall(None, "bash", {"command": c}, raw={"action": c, **usage}) for c in commands
                     if isinstance(c, str)]
    return Message("assistant", text, calls, reasoning=_reasoning(msg, response),
                   model=response.get("model") or model, timestamp=_when(msg, extra), where=where)


def _reasoning(msg: dict, response: dict) -> str | None:
    """The model's own reasoning: the message's `reasoning_content`, else the response's (OpenRouter writes
    `reasoning`, litellm `reasoning_content` on the choice's message)."""
    found = msg.get("reasoning_content")
    if not found:
        choices = response.get("choices")
        message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(
            choices[0], dict) else None
        if isinstance(message, dict):
            found = message.get("reasoning_content") or message.get("reasoning")
    return found if isinstance(found, str) and found.strip() else None


def _result(msg: dict, extra: dict, where: str, role: str = "tool") -> Message:
    text = _content(msg.get("content") if "content" in msg else msg.get("output"))
    code = _int(extra.get("returncode"))
    if code is None and (m := _RETURNCODE.search(text)):
        code = int(m.group(1))
    return Message(role, text, tool_call_id=msg.get("tool_call_id") or msg.get("call_id"),
                   exit_code=code, is_error=True if extra.get("exception_info") else None,
                   timestamp=_when(msg, extra), where=where)


def _responses_items(msg: dict, extra: dict, where: str, model: str | None) -> list[Message]:
    """A Responses-API turn (`object: response`, `output` items) as one assistant message."""
    items = [i for i in msg.get("output") or [] if isinstance(i, dict)]
    text = "\n".join(_content(i.get("content")) for i in items if i.get("type") == "message")
    calls = [ToolCall(i.get("call_id"), i.get("name"), i.get("arguments"), raw=i)
             for i in items if i.get("type") == "function_call"]
    return [Message("assistant", text or None, calls, model=msg.get("model") or model,
                    timestamp=_when(msg, extra), where=where)]


# the fields a message may carry, by type: another type makes the message a `bad_record`
_FIELDS = {"role": (str,), "type": (str,), "content": (str, list), "extra": (dict,), "tool_calls": (list,),
           "tool_call_id": (str,), "call_id": (str,), "reasoning_content": (str,), "output": (list, str),
           "timestamp": (int, float, str)}
_EXTRA_FIELDS = {"actions": (list,), "response": (dict,), "returncode": (int,), "model_response": (str,)}


def _bad_field(msg) -> str | None:
    """"field: what is wrong" for the first field of a message with a type the reader cannot use."""
    if not isinstance(msg, dict):
        return f": {type(msg).__name__}, expected a message object"
    for fields, obj, prefix in ((_FIELDS, msg, "."), (_EXTRA_FIELDS, msg.get("extra") or {}, ".extra.")):
        for key, types in fields.items():
            value = obj.get(key)
            if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
                return f"{prefix}{key}: {type(value).__name__}, expected {'/'.join(t.__name__ for t in types)}"
    if any(not isinstance(c, dict) for c in msg.get("tool_calls") or []):
        return ".tool_calls: expected a list of objects"
    return None


def _messages(raw: list, regex: re.Pattern, model: str | None, name: str,
              rejected: list[Rejected]) -> tuple[list[Message], dict]:
    """The transcript, and the exit message's extra (2.x). A message with a field of the wrong type is one
    `bad_record` row and is left out."""
    out: list[Message] = []
    exit_extra: dict = {}
    awaiting = False  # 1.x and 2.x text mode: the user message right after a command is its output
    # the response's `created` (whole seconds) times a turn only where no message has a time of its own: mixed
    # with the finer clock it would run backwards
    created_times = not _has_own_times(raw)
    for i, msg in enumerate(raw):
        where = f"{name}: messages[{i}]"
        first = len(out)
        if (bad := _bad_field(msg)) is not None:
            rejected.append(Rejected("bad_record", f"{where}{bad}; the message is left out", name,
                                     record_id=f"messages[{i}]", snippet=str(msg)[:2000]))
            awaiting = False
            continue
        extra = msg.get("extra") if isinstance(msg.get("extra"), dict) else {}
        role, kind = msg.get("role"), msg.get("type")
        if msg.get("object") == "response":
            out.extend(_responses_items(msg, extra, where, model))
            awaiting = False
        elif kind == "function_call_output" or role == "tool":
            out.append(_result(msg, extra, where))
        elif role == "assistant":
            out.append(_assistant(msg, extra, where, regex, model))
            awaiting = bool(out[-1].tool_calls) and not out[-1].tool_calls[0].id
        elif role == "user" and extra.get("interrupt_type") == "FormatError" and isinstance(
                extra.get("model_response"), str):  # 2.x keeps the rejected reply only here
            response = extra.get("response") if isinstance(extra.get("response"), dict) else {}
            out.append(Message("assistant", extra["model_response"], model=response.get("model") or model,
                               timestamp=_when(msg, extra), where=where))
            out.append(Message("user", _content(msg.get("content")), where=where))
            awaiting = False
        elif role == "user" and (awaiting or "returncode" in extra or "raw_output" in extra):
            out.append(_result(msg, extra, where))
            awaiting = False
        elif role == "exit":
            exit_extra = extra
            if extra.get("exit_status") == "Submitted":  # the submission followed the submit command
                out.append(Message("tool", _content(msg.get("content")), where=where))
        elif role in ("system", "user"):
            out.append(Message(role, _content(msg.get("content")), where=where))
        else:
            out.append(Message(str(role or kind), _content(msg.get("content")), raw=msg, where=where))
        if created_times and (created := parse_time(_at(extra, "response", "created"))) is not None:
            for m in out[first:]:
                m.timestamp = m.timestamp or (created if m.role == "assistant" else None)
    return out, exit_extra


def _report(source: Source, instance: str | None) -> tuple[dict | None, list[Rejected]]:
    """The harness's report entry for the instance, when the unit is an instance folder holding one."""
    if not source.exists("report.json"):
        return None, []
    try:
        doc = parse_json(source.read_bytes("report.json"), "report.json")
    except SourceError as e:
        return None, [e.as_rejected()]
    entry = doc if isinstance(doc, dict) and "resolved" in doc else doc.get(instance) if isinstance(
        doc, dict) and instance in doc else (
        next(iter(doc.values())) if isinstance(doc, dict) and len(doc) == 1 else None)
    if not isinstance(entry, dict) or not isinstance(entry.get("resolved"), bool):
        return None, [Rejected("bad_record", f"report.json: no `resolved` flag for {instance!r}; outcome left "
                               "unknown", "report.json")]
    return entry, []


def read(source: Source) -> Iterator[Episode | Rejected]:
    is_folder = not source.path.endswith(".json")
    if is_folder:
        name = next((n for n in source.listdir() if n.endswith(_SUFFIX)), None)
        if name is None:
            raise SourceError("missing_file", "no *.traj.json in the instance folder")
    else:
        name = posixpath.basename(source.path)
    doc = parse_json(source.read_bytes(name if is_folder else ""), name, source.budgets)
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise SourceError("bad_record", f"{name}: expected an object with a `messages` list")
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    pattern = _at(config, "agent", "action_regex")
    try:
        regex = re.compile(pattern if isinstance(pattern, str) else _DEFAULT_ACTION_REGEX, re.DOTALL)
    except re.error:
        regex = re.compile(_DEFAULT_ACTION_REGEX, re.DOTALL)
    model = _at(config, "model", "model_name")
    model = model if isinstance(model, str) else None
    rejected: list[Rejected] = []
    messages, exit_extra = _messages(doc["messages"], regex, model, name, rejected)
    yield from rejected

    instance = doc.get("instance_id") if isinstance(doc.get("instance_id"), str) else \
        name[:-len(_SUFFIX)] if name.endswith(_SUFFIX) else None
    report, problems = _report(source, instance) if is_folder else (None, [])
    yield from problems
    harness, problems = harness_reports.verdict(source, instance)
    yield from problems
    if report is not None:  # the instance folder's own report decides
        harness.resolved, harness.entry = report["resolved"], report
        harness.status = "resolved" if report["resolved"] else "unresolved"
        harness.file = posixpath.join(source.uri, "report.json")
    exit_status = info.get("exit_status") or exit_extra.get("exit_status")
    if exit_status is None:  # the trajectory's own status, else the run's exit statuses file
        exit_status = harness.exit_status
    else:
        harness.exit_status_file = None
    env = {"trajectory_format": doc.get("trajectory_format"), "mini_version": info.get("mini_version"),
           "exit_status": exit_status, "submission": info.get("submission"),
           "model_stats": info.get("model_stats"), "config": config or None, "instance_id": instance,
           "exit": {k: v for k, v in exit_extra.items() if k not in ("exit_status", "submission")} or None,
           "report": harness.entry, **harness.env()}
    run = Run(agent=model, env={k: v for k, v in env.items() if v is not None}, outcome=harness.outcome,
              reward=harness.reward, terminated=exit_status == "Submitted")
    yield from records(messages, run, name)
