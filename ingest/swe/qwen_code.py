"""Qwen Code sessions: `~/.qwen/projects/<project>/chats/<sessionId>.jsonl`, written by Qwen Code's
`ChatRecordingService` (a Gemini CLI fork whose recorder writes a log of its own, not Gemini CLI's recordings). An
adapter onto `ingest.transcript`; one file is one episode.

Each line is a record: `uuid`, `parentUuid` (the record before it), `sessionId`, `timestamp`, `type`, `cwd`,
`version` (of the CLI), `gitBranch`, `provenance` (later releases), and by type:
- `user`: the prompt, `message` a Gemini `Content` (`{role, parts: [{text}]}`), in later releases with a `subtype`
  where the person did not start the turn: `mid_turn_user_message` (a message sent while the model worked, recorded
  once the model was sent it: after the call results it went beside, or before the reply to it), `goal_runtime`,
  `notification`, `cron` (the CLI's own); a user turn all the same, seen with what came after the last action, its
  `subtype`, `systemPayload` (the typed `displayText`) and `goalContext` kept as the message's raw
  (`env.message_extras`);
- `assistant`: a model turn: `message` (`parts`: `text`, `thought: true` text, `functionCall {id, name, args}`),
  `model`, `usageMetadata` (`promptTokenCount`, `candidatesTokenCount`, `thoughtsTokenCount`, `totalTokenCount`,
  `cachedContentTokenCount`), `contextWindowSize`;
- `tool_result`: `message` with the `functionResponse {id, name, response: {output} or {error}}` the model is sent,
  and `toolCallResult` (`callId`, `status` "success" / "error" / "cancelled", `resultDisplay`, and in later releases
  `errorType`, `executionStatus`; its `resultDisplay` is what the CLI showed of the result, a diff or the
  command's output again: not kept);
- `system`: the CLI's own records by `subtype` (`ui_telemetry` API and tool events, `attribution_snapshot`,
  `chat_compression`, `slash_command`, `at_command`, titles, checkpoints...) with their `systemPayload`: kept in
  `env["qwen_code"]["system_records"]`; a subtype not known here is kept too, with an `unknown_content` warning.
A `<sessionId>.runtime.json` beside the log (the process that ran an interactive session) is planned with it and
listed unread with its reason (`members`). Any other record type, or field, is kept raw in `env["qwen_code"]`
(`unknown_records`, `unknown_fields`) with an `unknown_content` warning. Records are read in file order (the
recorder appends them as they happen).

Mapping: a call's result is its `functionResponse` (`output`, else `error`), an error when the call's status is not
"success" or the response is an error; `run_shell_command` is a `command` action and its result a terminal
observation with the `Exit Code:` it reports (0.15 records a command that exits 1 with status "success"; the
current release as an error). The task is the first prompt; token counts are summed over the model turns into
`env["qwen_code"]["tokens"]`. Qwen Code grades nothing: outcome `unknown`; terminated when the last model turn answers
(text, no call; a last turn of thoughts alone was stopped mid-stream). Domain `swe`; platform `windows` when the
`cwd` has a drive letter, else `linux` (the log names no operating system). Where the log shows the model used
tools but holds no call (the CLI's telemetry of calls, tool-prompt tokens, a turn that answered followed by
another with nothing between), `env["calls_not_recorded"]` says so with the evidence, with a warning; no call is
made up.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.members import holds
from ingest.record import Episode, Rejected
from ingest.source import Source, json_lines
from ingest.swe import unrecorded_calls
from ingest.swe.gemini_cli import function_response_text
from ingest.swe.workdir import platform_of
from ingest.times import parse_time
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "qwen_code"
VERSION = "6"
INFO = FormatInfo(
    # a session's lines open like Claude Code's (`parentUuid`, `sessionId`): its own key order ranks it first
    group="swe", rank=265, domains=('swe',), platform="varies",
    summary="Qwen Code sessions",
    producer="Qwen Code sessions (`~/.qwen/projects/<project>/chats/<session>.jsonl`)",
    versions="0.15.10, 0.24.4",
    proof=("each release from the npm registry in its own prefix runs `qwen -p` with `OPENAI_BASE_URL` at the "
           "scripted model server (Chat Completions, streamed) and `--auth-type openai`, in a temporary HOME and "
           "workspace: it lists files, reads and writes one and runs a command that fails; the script is the oracle "
           "for every call, its arguments, the result the agent recorded, the model and the final answer, and the "
           "CLI's JSON report a second (`tests/ingest/swe/test_qwen_code_cli.py`); real sessions of 0.5.0, 0.5.1, "
           "0.9.1 and 0.17.0 from four repositories (`tests/ingest/swe/test_qwen_code_real.py`, none calling a "
           "tool); edge cases, calls not recorded among them (`tests/ingest/swe/test_qwen_code.py`)"),
)

_SNIFF = re.compile(rb'^\s*\{"uuid":"[^"]*","parentUuid":(?:null|"[^"]*"),"sessionId":"[^"]*","timestamp":"[^"]*",'
                    rb'"type":"(?:user|assistant|tool_result|system)"')
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)
RUNTIME = ".runtime.json"
_SESSION_KEYS = ("sessionId", "cwd", "version", "gitBranch")
_KNOWN = frozenset({"uuid", "parentUuid", "sessionId", "timestamp", "type", "subtype", "provenance", "cwd", "version",
                    "gitBranch", "message", "model", "usageMetadata", "contextWindowSize", "toolCallResult",
                    "systemPayload", "backgroundTurn", "goalContext"})
# what a `user` record says beside the parts the model was sent: its `subtype` (`mid_turn_user_message`: sent while
# the model worked, beside call results or after an answer; `goal_runtime`, `notification`, `cron`: written by the
# CLI), the typed text (`systemPayload.displayText`) and goal it belongs to: kept as the message's raw
_USER_KEPT = ("subtype", "systemPayload", "goalContext")
_SUBTYPES = frozenset({
    "at_command", "attribution_snapshot", "background_task_completed", "branch_checkpoint", "chat_compression",
    "custom_title", "file_history_snapshot", "goal_runtime", "goal_state", "goal_turn_end", "mid_turn_user_message",
    "omni_recall", "parent_session", "realtime_message", "rewind", "session_artifact_event",
    "session_artifact_snapshot", "session_model", "session_source", "session_sources_snapshot", "slash_command",
    "turn_result", "ui_telemetry", "user_text_elements"})


def units(files: list[str], head) -> list[str]:
    """`.jsonl` files whose first line is a Qwen Code record (`uuid`, `parentUuid`, `sessionId`, `timestamp`,
    then `type`, in the recorder's order)."""
    return [path for path in files if path.endswith(".jsonl") and _SNIFF.match(head(path))]


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """A session's `<session>.runtime.json` beside it (interactive releases write it: the process that ran the
    session, its pid, host and start time): planned with the session and listed with why it is not read."""
    out: dict[str, list] = {}
    for path in found:
        runtime = path[:-len(".jsonl")] + RUNTIME
        if holds(files, runtime):
            out[path] = [(runtime, "Qwen Code's record of the process that ran this session (pid, host, start "
                                   "time), not a session; the reader reads the session's log")]
    return out


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    extras: dict = {"tokens": {}, "system_records": [], "unknown_records": [], "unknown_fields": {}}
    messages: list[Message] = []
    for no, line, record in json_lines(source.read_bytes(), name, source.budgets):
        if isinstance(record, Rejected):
            yield record
            continue
        yield from _record(record, f"{name}:{no}", messages, extras)
    last = next((m for m in reversed(messages) if m.role in ("assistant", "tool")), None)
    task = extras.pop("task", None)
    env = {"qwen_code": {k: v for k, v in extras.items() if v}}
    _note_unrecorded_calls(env, messages, extras, name)
    yield from records(messages, Run(key="", domain="swe", platform=platform_of(extras.get("cwd")), task=task,
                                     terminated=_answered(last), env=env), name)


_TOOL_CALL_EVENT = "qwen-code.tool_call"  # the CLI's telemetry of a call it ran (`logToolCall`), kept in the log


def _note_unrecorded_calls(env: dict, messages: list[Message], extras: dict, name: str) -> None:
    """Say (`unrecorded_calls.note`) that the log lacks calls the model made: calls in the CLI's own telemetry
    records or tool-prompt tokens while no model turn holds a call (counts are not compared: a subagent's calls
    are in the telemetry, not in the log), or a model turn that answered followed by another with no prompt or
    result between. No release is known to drop calls (0.5.0's recorder writes each
    turn's `functionCall` parts and each result, interactive or not), so only evidence in the file says so."""
    recorded = sum(len(m.tool_calls) for m in messages)
    ran = sum(1 for r in extras["system_records"] if r.get("subtype") == "ui_telemetry"
              and isinstance(p := r.get("systemPayload"), dict) and isinstance(p.get("uiEvent"), dict)
              and p["uiEvent"].get("event.name") == _TOOL_CALL_EVENT)
    tool_tokens = extras["tokens"].get("toolUsePromptTokenCount", 0)
    went_on = unrecorded_calls.went_on_without_prompt(
        [(m.role, m.where, bool(m.text) and not m.tool_calls) for m in messages])
    evidence = ([f"{ran} tool call(s) in the CLI's telemetry records"] if ran and not recorded else []) + (
        [f"{tool_tokens} tool-prompt tokens counted"] if tool_tokens and not recorded else []) + (
        [f"{len(went_on)} model turn(s) followed by another with no prompt between"] if went_on else [])
    unrecorded_calls.note(env, name, evidence, went_on)


def _answered(last) -> bool:
    """Whether the session ends on the model's answer: a last model turn with text and no call. A last turn
    of thoughts alone was stopped mid-stream (as real Gemini CLI recordings, whose writer Qwen Code's forks, show)."""
    return last is not None and last.role == "assistant" and not last.tool_calls and bool(last.text)


def _record(record, where: str, messages: list[Message], extras: dict) -> Iterator[Rejected]:
    kind = record.get("type") if isinstance(record, dict) else None
    if kind not in ("user", "assistant", "tool_result", "system"):
        extras["unknown_records"].append(record)
        yield Rejected("unknown_content", f"{where}: not a Qwen Code user, assistant, tool_result or system record; "
                       "kept raw in env.qwen_code.unknown_records", where)
        return
    for key in _SESSION_KEYS:
        if record.get(key) not in (None, "") and key not in extras:
            extras[key] = record[key]
    unknown = sorted(k for k in record if k not in _KNOWN)
    if unknown:
        extras["unknown_fields"].setdefault(where, {k: record[k] for k in unknown})
        yield Rejected("unknown_content", f"{where}: field(s) {', '.join(unknown)} are none Qwen Code is known to "
                       "write; kept raw in env.qwen_code.unknown_fields", where)
    stamp = parse_time(record.get("timestamp"))
    parts = (record.get("message") or {}).get("parts") if isinstance(record.get("message"), dict) else None
    parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    if kind == "assistant":
        _model_turn(record, parts, stamp, where, messages, extras["tokens"])
    elif kind == "tool_result":
        _tool_result(record, parts, stamp, where, messages)
    elif kind == "user":
        text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str))
        kept = {k: record[k] for k in _USER_KEPT if record.get(k) is not None}
        messages.append(Message("user", text=text, timestamp=stamp, where=where, raw=kept or None))
        if "task" not in extras and text:
            extras["task"] = text
    else:
        extras["system_records"].append({k: record.get(k) for k in ("subtype", "timestamp", "systemPayload")})
        if record.get("subtype") not in _SUBTYPES:
            yield Rejected("unknown_content", f"{where}: system record subtype {record.get('subtype')!r} is none Qwen "
                           "Code is known to write; kept raw in env.qwen_code.system_records", where)


def _model_turn(record: dict, parts: list[dict], stamp, where: str, messages: list[Message], tokens: dict) -> None:
    texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")]
    thoughts = [p["text"] for p in parts if isinstance(p.get("text"), str) and p.get("thought")]
    calls = [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), dict)]
    model = record.get("model") if isinstance(record.get("model"), str) else None
    messages.append(Message("assistant", text="\n".join(texts) or None, reasoning="\n\n".join(thoughts) or None,
                            model=model, timestamp=stamp, where=where,
                            tool_calls=[ToolCall(c.get("id"), c.get("name"), c.get("args"), raw=c) for c in calls]))
    for key, value in (record.get("usageMetadata") or {}).items():
        if isinstance(value, int) and not isinstance(value, bool):
            tokens[key] = tokens.get(key, 0) + value


def _tool_result(record: dict, parts: list[dict], stamp, where: str, messages: list[Message]) -> None:
    result = record.get("toolCallResult") if isinstance(record.get("toolCallResult"), dict) else {}
    texts, failed, call_id, tool = [], False, result.get("callId"), None
    for part in parts:
        response = part.get("functionResponse")
        if isinstance(response, dict):
            call_id, tool = response.get("id") or call_id, response.get("name")
            text, error = function_response_text(response.get("response")
                                                 if isinstance(response.get("response"), dict) else {})
            texts.append(text)
            failed = failed or error
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    text = "\n".join(texts) or None
    status = result.get("status")
    m = _EXIT_CODE.search(text or "") if tool == "run_shell_command" else None
    messages.append(Message("tool", text=text, tool_call_id=call_id, tool_name=tool, timestamp=stamp, where=where,
                            is_error=failed or (status is not None and status != "success"),
                            exit_code=int(m.group(1)) if m else None))
