"""OpenHands event streams: a JSON array of events (a session export / replay trajectory), one episode per file.

An event is an action (`action` + `args`) or an observation (`observation` + `content` + `extras`, with
`cause` = the id of the action it answers). Steps are the agent's actions (`source: agent`); the observation
of step t+1 is what came back before the next agent action: the observations caused by action t and any
user messages in between (joined by blank lines). Observation 0 is the user's first message, which is also
the task. Bookkeeping events (agent state changes, `null` placeholder observations, environment events) are
left out.

Actions: `run` -> command (`code` = the command), `run_ipython` -> code, `message` -> message, `finish` ->
done, `browse` -> navigate; file tools (`read`, `edit`...) and everything else -> tool_call, with the tool
call's own arguments when `tool_call_metadata` recorded the model's call (else `args` minus the thought).
`args.thought` becomes `reasoning`. A `run` observation's `exit_code` is kept as recorded, -1 included:
OpenHands writes -1 when the command had not exited when its output was taken (still running in the
background, or stopped by the no-output timeout); it is not an error of the command.

An event with a field of a type the reader cannot use (`args` not an object, a `command` that is not a
string...) gives one `bad_record` quarantine row naming the file, the event and the field, and is left out.

Event timestamps are local time of an unknown zone, so step timestamps stay null; the first and last are
kept in `env` (`local_time_first`, `local_time_last`). The episode ends (terminal) on a `finish` action.

**Evaluation outputs** (`evaluation/benchmarks/swe_bench/run_infer.py`: `<run>/output.jsonl`, one `EvalOutput` a
line: `instance_id`, `test_result` with the `git_patch`, `instruction`, `metadata` with the `llm_config`,
`history` the same events (or, in old runs, `[action, observation]` pairs), `metrics`, `error`, `instance`) are
an episode per line, the instance known, so the SWE-bench harness's word decides the outcome
(`ingest.harness_reports`): OpenHands' `eval_infer.sh` moves the harness's run report to `<run>/report.json` and
its instance logs to `<run>/eval_outputs/<instance>/report.json`, which planning gives the unit. Where no harness
file grades it, the line's own grade: `report` (written into the line by `update_output_with_eval.py`) or
`test_result.report` (`eval_infer.py`'s own grading, in `output.swebench_eval.jsonl`), `resolved` deciding;
`env.outcome_file` names the file that decided. Task: the `instruction`; agent: the `llm_config` model.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Observation, Rejected
from ingest import harness_reports
from ingest.source import Source, SourceError, json_lines, parse_json
from ingest.tools import dumps, tool_action, tool_observation
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "openhands"
VERSION = "3"
INFO = FormatInfo(
    group="swe", rank=30, domains=('swe',), platform="linux",
    summary=("OpenHands event streams (V0) and SWE-bench evaluation outputs (`output.jsonl`: an episode per instance; "
             "outcome from the SWE-bench reports of its run, else the grade OpenHands wrote into the line)"),
)

TAKES_HARNESS_REPORTS = True  # an evaluation output names its instance: planning gives it the run's SWE-bench reports
# `EvalOutput.model_dump_json()`: the instance id first, then the test result (or, in some versions, the rest)
_EVAL_SNIFF = re.compile(rb'^\s*\{\s*"instance_id"\s*:\s*"[^"]*"\s*,\s*"(test_result|instruction|metadata|history)"\s*:')
# `eval_infer.py`'s own grading of the same instances (their patch and grade, no history): not sessions
_GRADING = ".swebench_eval.jsonl"
_GRADE_KEYS = ("resolved", "empty_generation", "failed_apply_patch", "error_eval", "test_timeout")
_BOOKKEEPING_ACTIONS = {"change_agent_state", "system", "recall", "condensation", "null"}
_BOOKKEEPING_OBSERVATIONS = {"agent_state_changed", "null", "recall", "condensation"}
_NOT_ARGUMENTS = {"thought", "impl_source", "translated_ipython_code", "confirmation_state", "security_risk",
                  "hidden", "is_input", "blocking", "image_urls", "wait_for_response"}


def units(files: list[str], head) -> list[str]:
    """JSON files holding an array of events: objects with `id`, `source` and `action`/`observation`; JSONL
    evaluation outputs whose lines open with `instance_id` then `test_result` (or `instruction`, `metadata`),
    but not `*.swebench_eval.jsonl` (OpenHands' grading of them, without the history)."""
    found = []
    for path in files:
        if path.endswith(".jsonl") and not path.endswith(_GRADING) and _EVAL_SNIFF.match(head(path)):
            found.append(path)
            continue
        if not path.endswith(".json"):
            continue
        start = head(path).lstrip()
        if start.startswith(b"[") and b'"source"' in start and b'"id"' in start and (
                b'"action"' in start or b'"observation"' in start) and b'"jsonrpc"' not in start:
            found.append(path)
    return found


# fields a reader uses, by where they sit: a value of another type makes the event a `bad_record`
_EVENT_FIELDS = {"action": (str,), "observation": (str,), "message": (str,), "content": (str,), "args": (dict,),
                 "extras": (dict,), "tool_call_metadata": (dict,)}
_ARGS_FIELDS = {"content": (str,), "command": (str,), "code": (str,), "final_thought": (str,), "url": (str,),
                "thought": (str,)}
_EXTRAS_FIELDS = {"metadata": (dict,), "url": (str,), "screenshot": (str,), "exit_code": (int,)}
_META_FIELDS = {"function_name": (str,), "tool_call_id": (str, int), "model_response": (dict,)}


def _bad_field(event: dict) -> tuple[str, str] | None:
    """(field path, what is wrong) for the first field of the event with a type the reader cannot use."""
    def check(obj: dict, fields: dict, prefix: str):
        for key, types in fields.items():
            value = obj.get(key)
            if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
                return f"{prefix}{key}", f"is a {type(value).__name__}, expected {'/'.join(t.__name__ for t in types)}"
        return None

    found = check(event, _EVENT_FIELDS, "")
    if found is None and event.get("args"):
        found = check(event["args"], _ARGS_FIELDS, "args.")
    if found is None and event.get("extras"):
        found = check(event["extras"], _EXTRAS_FIELDS, "extras.")
        if found is None and event["extras"].get("metadata"):
            found = check(event["extras"]["metadata"], {"exit_code": (int,)}, "extras.metadata.")
    if found is None and event.get("tool_call_metadata"):
        meta = event["tool_call_metadata"]
        found = check(meta, _META_FIELDS, "tool_call_metadata.")
        if found is None and meta.get("model_response"):
            found = check(meta["model_response"], {"model": (str,)}, "tool_call_metadata.model_response.")
    return found


def _tool_call_arguments(event: dict):
    """The arguments the model itself sent for this action, from the recorded chat completion."""
    meta = event.get("tool_call_metadata") or {}
    call_id = meta.get("tool_call_id")
    try:
        for choice in meta["model_response"]["choices"]:
            for call in choice["message"].get("tool_calls") or []:
                if call.get("id") == call_id:
                    return call["function"].get("arguments")
    except (KeyError, TypeError):
        pass
    return None


def _action(event: dict) -> Action:
    kind, args = event.get("action"), event.get("args") or {}
    meta = event.get("tool_call_metadata") or {}
    raw = dumps({k: event[k] for k in ("id", "source", "action", "args", "message") if k in event}
                | ({"tool_call": {"function_name": meta.get("function_name"), "tool_call_id": meta.get("tool_call_id")}}
                   if meta else {}))
    tool = meta.get("function_name")
    if kind == "run":
        return Action(kind="command", code=args.get("command"), tool_name=tool, raw=raw)
    if kind == "run_ipython":
        return Action(kind="code", code=args.get("code"), tool_name=tool, raw=raw)
    if kind == "message":
        return Action(kind="message", text=args.get("content"), raw=raw)
    if kind == "finish":
        return Action(kind="done", text=args.get("final_thought") or event.get("message") or None, raw=raw)
    if kind == "browse":
        return Action(kind="navigate", text=args.get("url"), tool_name=tool, raw=raw)
    arguments = _tool_call_arguments(event)
    if arguments is None:
        arguments = {k: v for k, v in args.items() if k not in _NOT_ARGUMENTS}
    action = tool_action(tool or kind, arguments, raw)
    if action.kind == "tool_call" and kind in ("read", "edit"):
        action.element = dumps({"path": args.get("path")})  # the file the tool acts on
    return action


def _observation(event: dict, source: Source) -> Observation:
    kind, extras, content = event.get("observation"), event.get("extras") or {}, event.get("content")
    if kind == "run":
        code = (extras.get("metadata") or {}).get("exit_code", extras.get("exit_code"))
        return Observation(kind="terminal", text=content,
                           exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None)
    if kind == "error":
        return Observation(kind="text", text=content, is_error=True)
    if kind == "browse":
        shot = extras.get("screenshot")
        ref = None
        if isinstance(shot, str) and shot:
            try:
                data = base64.b64decode(shot.split(",", 1)[-1], validate=True)
                ref = source.put_blob(data, "image/png", source.uri)
            except (binascii.Error, ValueError):
                ref = None
        return Observation(kind="web", text=content, url=extras.get("url"), screenshot=ref)
    return tool_observation(None, content, is_error=True if extras.get("error") else None)


def _messages(events: list, name: str, source: Source, rejected: list[Rejected], times: list[str]) -> list[Message]:
    """The event stream as a transcript: user messages, agent actions (one tool call each, keyed by the event
    id) and the observations they caused (`cause` = that id)."""
    out: list[Message] = []
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            rejected.append(Rejected("bad_record", f"{name}: event [{i}] is not an object", f"[{i}]"))
            continue
        bad = _bad_field(event)
        if bad:
            rejected.append(Rejected("bad_record", f"{name}: event [{i}] (id {event.get('id')}) {bad[0]} {bad[1]}; "
                                     "the event is left out", f"[{i}].{bad[0]}", snippet=dumps(event)[:2000]))
            continue
        if event.get("timestamp"):
            times.append(event["timestamp"])
        if "action" in event:
            kind, source_ = event["action"], event.get("source")
            if kind in _BOOKKEEPING_ACTIONS:
                continue
            if source_ == "user" and kind == "message":
                text = (event.get("args") or {}).get("content") or event.get("message")
                out.append(Message("user", text, observation=Observation(kind="text", text=text)))
            elif source_ == "agent":
                meta = event.get("tool_call_metadata") or {}
                call = ToolCall(str(event.get("id")), meta.get("function_name"), action=_action(event))
                out.append(Message("assistant", tool_calls=[call], reasoning=(event.get("args") or {}).get("thought")
                                   or None, model=(meta.get("model_response") or {}).get("model")))
        elif "observation" in event:
            if event["observation"] in _BOOKKEEPING_OBSERVATIONS or event.get("cause") is None:
                continue
            out.append(Message("tool", tool_call_id=str(event["cause"]), observation=_observation(event, source)))
    return out


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    if name.endswith(".jsonl"):
        yield from _eval_outputs(source, name)
        return
    events = parse_json(source.read_bytes(), name, source.budgets)
    if isinstance(events, dict) and isinstance(events.get("trajectory"), list):
        events = events["trajectory"]
    if not isinstance(events, list):
        raise SourceError("bad_record", f"{name}: expected a JSON array of events")
    rejected: list[Rejected] = []
    times: list[str] = []
    messages = _messages(events, name, source, rejected, times)
    yield from rejected
    env = {"local_time_first": times[0], "local_time_last": times[-1]} if times else {}
    yield from records(messages, Run(env=env), name)


def _eval_outputs(source: Source, name: str) -> Iterator[Episode | Rejected]:
    """An evaluation's `output.jsonl`: an episode per line."""
    for no, _line, value in json_lines(source.read_bytes(), name, source.budgets):
        if isinstance(value, Rejected):
            yield value
        elif not isinstance(value, dict) or not isinstance(value.get("instance_id"), str):
            yield Rejected("bad_record", f"{name}:{no}: an evaluation output line without an `instance_id`", name,
                           line=no)
        else:
            yield from _eval_output(source, value, f"{name}:{no}")


def _eval_output(source: Source, line: dict, where: str) -> Iterator[Episode | Rejected]:
    """One `EvalOutput`: its history read as an event stream, its outcome from the harness or its own grade."""
    history = line.get("history") if isinstance(line.get("history"), list) else []
    events = [e for item in history for e in (item if isinstance(item, list) else [item])]  # old: pairs
    rejected: list[Rejected] = []
    times: list[str] = []
    messages = _messages(events, where, source, rejected, times)
    yield from rejected
    instance = line["instance_id"]
    harness, problems = harness_reports.verdict(source, instance, exit_statuses=False)
    yield from problems
    own = _own_grade(line)
    if harness.resolved is None and own is not None:
        harness.resolved, harness.status, harness.file, harness.entry = \
            own["resolved"], "resolved" if own["resolved"] else "unresolved", source.uri, own
    metadata = line.get("metadata") if isinstance(line.get("metadata"), dict) else {}
    llm = metadata.get("llm_config") if isinstance(metadata.get("llm_config"), dict) else {}
    test_result = line.get("test_result") if isinstance(line.get("test_result"), dict) else {}
    env = {"instance_id": instance, "agent_class": metadata.get("agent_class"), "dataset": metadata.get("dataset"),
           "git_patch": test_result.get("git_patch"), "metrics": line.get("metrics"), "error": line.get("error"),
           "report": harness.entry, **harness.env()}
    if times:
        env.update(local_time_first=times[0], local_time_last=times[-1])
    yield from records(messages, Run(key=f"{where}:{instance}", task=line.get("instruction") or None,
                                     agent=llm.get("model") if isinstance(llm.get("model"), str) else None,
                                     outcome=harness.outcome, reward=harness.reward,
                                     env={k: v for k, v in env.items() if v is not None}), where)


def _own_grade(line: dict) -> dict | None:
    """The grade OpenHands wrote into the line: `report` (`update_output_with_eval.py`) or `test_result.report`
    (`eval_infer.py`), when it says `resolved`."""
    test_result = line.get("test_result") if isinstance(line.get("test_result"), dict) else {}
    for report in (line.get("report"), test_result.get("report")):
        if isinstance(report, dict) and isinstance(report.get("resolved"), bool):
            return {k: report[k] for k in _GRADE_KEYS if k in report}
    return None
