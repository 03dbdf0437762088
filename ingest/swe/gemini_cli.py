"""Gemini CLI chat recordings: `~/.gemini/tmp/<project>/chats/session-<time>-<id>.json` (up to the 0.3x/0.4x
releases: one JSON document) or `.jsonl` (later releases: an append log), written by gemini-cli's
`ChatRecordingService` (`packages/core/src/services/chatRecordingService.ts`). An adapter onto `ingest.transcript`;
one file is one episode.

The conversation record: `sessionId`, `projectHash`, `startTime`, `lastUpdated`, `kind` ("main", or a subagent's),
`summary`, and `messages` (any other field is kept raw in `env["gemini_cli"]["unknown_fields"]` with an
`unknown_content` warning), each `{id, timestamp, type, content}`:
- `user`: the prompt (`content`: a string or parts `{text}`); from 0.4x on the CLI also records the context it
  gives the model first (`<session_context>`: date, OS, workspace listing) and each tool response it sends back
  (`functionResponse` parts, which repeat the results kept with the calls);
- `gemini` (`qwen` in the recordings of Qwen Code 0.1.x, a fork that kept this recorder and layout under
  `~/.qwen/tmp/<project>/chats/` before writing its own log, `ingest.swe.qwen_code`): a model turn: `content` (its text), `thoughts` (`{subject, description}`), `tokens` (`input`,
  `output`, `cached`, `thoughts`, `tool`, `total`), `model`, and `toolCalls`, each `{id, name, args, result:
  [parts with the functionResponse the model got], status ("success" / "error" / "cancelled"), timestamp,
  resultDisplay, displayName, description}`;
- `info`, `warning`, `error`: the CLI's own notices, kept in `env["gemini_cli"]["notices"]`.
The `.jsonl` log: the first line is the record without its messages; a line with an `id` and a `type` is a
message, written again whole when it changes (a model turn, then the same turn with its tool calls): the last
copy counts, in the place of the first; `{"$set": {...}}` sets fields of the record (`messages` replaces them
all). Any other line is kept raw in `env["gemini_cli"]["unknown_records"]` with an `unknown_content` warning.

Mapping: `<session_context>` user messages are the system prompt; a call's result is its `functionResponse`
(`response.output`, else `response.error`, else the response as JSON), an error when its status is not
"success" or the response is an error; `run_shell_command` is a `command` action and its result a terminal
observation with the `Exit Code:` it reports. The task is the first prompt a person typed. Token counts are
summed over the model turns into `env["gemini_cli"]["tokens"]`. Gemini CLI grades nothing: outcome `unknown`;
terminated when the last model turn answers (text, no call; a last turn of thoughts alone was stopped
mid-stream). Domain `swe`.

The recording names no working folder nor operating system: the platform is `windows` when the paths the tools
were given or returned say so unambiguously (a drive letter, `\\` separators in a path argument, and no POSIX
absolute path; `ingest.swe.workdir.platform_of_paths`), else `linux`, with `assumed: true`, the paths seen kept in
`env["gemini_cli"]["platform"]`. Where the file shows the model used tools but holds no call (a model turn that
answered followed by another with no prompt between; tool-prompt tokens), or was written by Qwen Code 0.1.x, whose
recorder writes no call, `env["calls_not_recorded"]` says so with the evidence, with a warning; no call is made up
(Gemini CLI 0.2-0.3 and 0.6-0.8 recorded no calls either, but a recording names no release).
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError, json_lines, parse_json
from ingest.swe import unrecorded_calls
from ingest.swe.workdir import argument_strings, platform_of_paths
from ingest.times import parse_time
from ingest.tools import dumps
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "gemini_cli"
VERSION = "6"
INFO = FormatInfo(
    group="swe", rank=290, domains=('swe',), platform="varies",
    summary="Gemini CLI chat recordings",
    producer=("Gemini CLI chat recordings (`~/.gemini/tmp/<project>/chats/session-*.json` / `.jsonl`); Qwen Code "
              "0.1.x's (`~/.qwen/tmp/<project>/chats/`)"),
    versions="0.35.0 (one JSON document), 0.61.0 (JSONL log); Qwen Code 0.1.4",
    proof=("each release from the npm registry in its own prefix runs `gemini -p` with `GOOGLE_GEMINI_BASE_URL` at "
           "the scripted model server (Gemini `streamGenerateContent`) and API-key auth in its settings, in a "
           "temporary HOME and workspace: it lists a folder, reads and writes files and runs a command that fails; "
           "the script is the oracle for every call, its arguments, the result the agent recorded, the model and the "
           "final answer, and the CLI's JSON report a second (`tests/ingest/swe/test_gemini_cli_cli.py`); two real "
           "CC0 0.20 recordings (M-Gemini: `glob` calls, notices and an API error; a failed and a cancelled shell "
           "call, two models) beside the test and two real MIT ones of October 2025 and March 2026 "
           "(`samples/swe/gemini-cli`: yoavf/ai-sessions, eleven edits; BrianV1981/aim, a run stopped mid-turn), "
           "goldens, edge cases of the JSONL log, of the platform the paths say and of calls not recorded "
           "(`tests/ingest/swe/test_gemini_cli.py`); Qwen Code 0.1.4 run the same way at the Chat Completions endpoint "
           "(`tests/ingest/swe/test_qwen_code_cli.py`), and a real interactive recording of a Qwen Code release of "
           "November 2025 in `../shared/samples` (golden, `tests/ingest/swe/test_qwen_code_real.py`)"),
)

_NAME = re.compile(r"\.jsonl?$")
_SNIFF = re.compile(rb'^\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"\s*:')
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)
_CONTEXT = "<session_context>"
_MODEL_TURNS = ("gemini", "qwen")  # Qwen Code 0.1.x, a fork, records its model turns as "qwen"
_ROLES = {"gemini": "assistant", "qwen": "assistant", "user": "user"}  # the conversation's turns, notices aside
_RECORD_KEYS = ("sessionId", "projectHash", "startTime", "lastUpdated", "kind", "summary")


def units(files: list[str], head) -> list[str]:
    """`.json` / `.jsonl` files that open with the recording's `sessionId` and `projectHash` (the CLI names them
    `session-<time>-<id>`; recordings people share are often renamed, so the name is not asked for)."""
    return [path for path in files if _NAME.search(path) and _SNIFF.match(head(path))]


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    data = source.read_bytes()
    if name.endswith(".jsonl"):
        record, problems = _replay(data, name, source)
    else:
        try:
            record, problems = parse_json(data, name), []
        except SourceError as e:
            yield e.as_rejected()
            return
    yield from problems
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        yield Rejected("bad_record", f"{name}: a Gemini CLI recording without a `messages` list", name)
        return
    messages, extras = _messages(record["messages"], name)
    env = {"gemini_cli": {**{k: record[k] for k in _RECORD_KEYS if record.get(k) not in (None, "")},
                          **{k: v for k, v in extras.items() if v and k != "task"}}}
    if problems:
        env["gemini_cli"]["unknown_records"] = [p.snippet for p in problems if p.rule == "unknown_content"]
    unknown = {k: v for k, v in record.items() if k not in _RECORD_KEYS and k != "messages"}
    if unknown:
        env["gemini_cli"]["unknown_fields"] = unknown
        yield Rejected("unknown_content", f"{name}: field(s) {', '.join(sorted(unknown))} of the recording are none "
                       "Gemini CLI is known to write; kept raw in env.gemini_cli.unknown_fields", name)
    platform, env["gemini_cli"]["platform"] = _platform(messages)
    _note_unrecorded_calls(env, record["messages"], name)
    last = next((m for m in reversed(messages) if m.role in ("assistant", "tool")), None)
    yield from records(messages, Run(key="", domain="swe", platform=platform, task=extras["task"],
                                     terminated=_answered(last), env=env), name)


def _platform(messages: list[Message]) -> tuple[str, dict]:
    """The platform the paths the tools were given and returned say (`workdir.platform_of_paths`): the recording
    names no working folder nor operating system; `linux`, said to be assumed, where they do not settle it."""
    texts, paths = [], []
    for m in messages:
        if m.role in ("tool", "system"):
            texts.append(m.text)
        for call in m.tool_calls:
            every, named = argument_strings(call.arguments)
            texts.extend(every)
            paths.extend(named)
    return platform_of_paths(texts, paths)


# Qwen Code 0.1.x's copy of the recorder defines `recordToolCalls` but nothing calls it, records no function response
# (`sendMessageStream` skips them) and no model turn without text (read in the bundles of 0.1.3 and 0.1.4): none
# of its recordings holds a call, whether or not the model made any. Gemini CLI's own releases did the same for a
# while (`@google/gemini-cli-core` 0.2.2, 0.3.4, 0.6.1, 0.7.0 and 0.8.2 call `recordToolCalls` nowhere; 0.4.0,
# 0.5.5 and 0.10.0 on do, from `geminiChat`), but its recordings name no release: only their evidence tells.
_QWEN_DROPS_CALLS = ("Qwen Code 0.1.x (model turns typed `qwen`), whose recorder writes no tool call, no function "
                     "response and no model turn without text")


def _note_unrecorded_calls(env: dict, items: list, name: str) -> None:
    """Say (`unrecorded_calls.note`) that the recording lacks tool calls the model made, with the evidence: a model
    turn without calls followed by another with no prompt between (the model went on after results it was sent),
    token counts of tool prompts with no call recorded, or a producer that never records calls. No call is made
    up: the steps stay as recorded."""
    if any(isinstance(item, dict) and item.get("toolCalls") for item in items):
        return
    turns = [(_ROLES[item["type"]], f"messages[{i}]", bool(_text(item.get("content")).strip()))
             for i, item in enumerate(items) if isinstance(item, dict) and isinstance(item.get("type"), str)
             and item["type"] in _ROLES]
    went_on = unrecorded_calls.went_on_without_prompt(turns)
    tool_tokens = sum(t.get("tool") for item in items if isinstance(item, dict) and item.get("type") in _MODEL_TURNS
                      and isinstance(t := item.get("tokens"), dict) and isinstance(t.get("tool"), int)
                      and not isinstance(t.get("tool"), bool))
    producer = _QWEN_DROPS_CALLS if any(isinstance(item, dict) and item.get("type") == "qwen" for item in items) \
        else None
    evidence = ([f"{len(went_on)} model turn(s) followed by another with no prompt between"] if went_on else []) + (
        [f"{tool_tokens} tool-prompt tokens counted"] if tool_tokens else [])
    unrecorded_calls.note(env, name, evidence, went_on, producer)


def _answered(last) -> bool:
    """Whether the recording ends on the model's answer: a last model turn with text and no call. A last turn with
    thoughts only (no text, no call, its tokens not counted yet) is one the person stopped mid-stream."""
    return last is not None and last.role == "assistant" and not last.tool_calls and bool(last.text)


def _replay(data: bytes, name: str, source: Source) -> tuple[dict, list[Rejected]]:
    """The conversation record an append log adds up to, and its rejected lines."""
    record: dict = {"messages": []}
    where: dict[str, int] = {}  # message id -> its place in record["messages"]
    problems = []
    for no, line, obj in json_lines(data, name, source.budgets):
        if isinstance(obj, Rejected):
            problems.append(obj)
            continue
        if isinstance(obj, dict) and isinstance(obj.get("id"), str) and isinstance(obj.get("type"), str):
            if obj["id"] in where:
                record["messages"][where[obj["id"]]] = obj
            else:
                where[obj["id"]] = len(record["messages"])
                record["messages"].append(obj)
        elif isinstance(obj, dict) and isinstance(obj.get("$set"), dict):
            record.update(obj["$set"])
            if "messages" in obj["$set"]:
                record["messages"] = list(record["messages"]) if isinstance(record["messages"], list) else []
                where = {m.get("id"): i for i, m in enumerate(record["messages"]) if isinstance(m, dict)}
        elif isinstance(obj, dict) and no == 1 and "sessionId" in obj:
            record.update({k: v for k, v in obj.items() if k != "messages"})
        else:
            problems.append(Rejected("unknown_content", f"{name}:{no}: not a Gemini CLI message, `$set` or "
                                     "record line; kept raw in env.gemini_cli.unknown_records", name, line=no,
                                     snippet=line[:300]))
    return record, problems


def _messages(items: list, name: str) -> tuple[list[Message], dict]:
    """Transcript messages of the recording, and what goes to env (task, tokens, notices)."""
    out: list[Message] = []
    extras: dict = {"task": None, "tokens": {}, "notices": []}
    answered: set = set()  # ids of calls whose result came with the call
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        where, kind, stamp = f"{name}: messages[{i}]", item.get("type"), parse_time(item.get("timestamp"))
        if kind in _MODEL_TURNS:
            _model_turn(out, item, stamp, where, extras["tokens"], answered)
        elif kind == "user":
            _user(out, item, stamp, where, extras, answered)
        else:  # info / warning / error: what the CLI showed, not part of the conversation
            extras["notices"].append({k: item.get(k) for k in ("type", "content", "timestamp")})
    return out, extras


def _model_turn(out: list[Message], item: dict, stamp, where: str, tokens: dict, answered: set) -> None:
    thoughts = [f"{t.get('subject')}: {t.get('description')}" if t.get("subject") else str(t.get("description"))
                for t in item.get("thoughts") or [] if isinstance(t, dict)]
    calls = [c for c in item.get("toolCalls") or [] if isinstance(c, dict)]
    out.append(Message("assistant", text=_text(item.get("content")) or None, reasoning="\n\n".join(thoughts) or None,
                       model=item.get("model") if isinstance(item.get("model"), str) else None, timestamp=stamp,
                       where=where, tool_calls=[ToolCall(c.get("id"), c.get("name"), c.get("args"), raw=c)
                                                for c in calls]))
    for key, value in (item.get("tokens") or {}).items():
        if isinstance(value, int) and not isinstance(value, bool):
            tokens[key] = tokens.get(key, 0) + value
    for c in calls:
        responses = [p["functionResponse"] for p in c.get("result") or []
                     if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)]
        if not responses:
            continue
        answered.add(c.get("id"))
        text, failed = _response_text(responses)
        out.append(Message("tool", text=text, tool_call_id=c.get("id"), is_error=failed or c.get("status") != "success",
                           exit_code=_exit_code(c.get("name"), text), timestamp=parse_time(c.get("timestamp")) or stamp,
                           where=where))


def _user(out: list[Message], item: dict, stamp, where: str, extras: dict, answered: set) -> None:
    """A prompt, the context the CLI gave the model, or tool responses sent back (kept only for calls whose
    result did not come with the call)."""
    parts = item.get("content") if isinstance(item.get("content"), list) else [{"text": item.get("content")}]
    texts = []
    for part in parts:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict):
            if response.get("id") not in answered:
                text, failed = _response_text([response])
                out.append(Message("tool", text=text, tool_call_id=response.get("id"), is_error=failed or None,
                                   exit_code=_exit_code(response.get("name"), text), timestamp=stamp, where=where))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    text = "\n".join(texts)
    if not text:
        return
    if text.lstrip().startswith(_CONTEXT):
        out.append(Message("system", text=text, where=where))
        return
    out.append(Message("user", text=text, timestamp=stamp, where=where))
    extras["task"] = extras["task"] if extras["task"] is not None else text


def _response_text(responses: list[dict]) -> tuple[str | None, bool]:
    """(text, is an error) of a call's function responses (`function_response_text` each)."""
    texts, failed = [], False
    for r in responses:
        text, error = function_response_text(r.get("response") if isinstance(r.get("response"), dict) else {})
        texts.append(text)
        failed = failed or error
    return ("\n".join(texts) if texts else None), failed  # an empty output is a result: the file read was empty


def function_response_text(body: dict) -> tuple[str, bool]:
    """(text, is an error) of one Gemini `functionResponse.response` (Gemini CLI and its fork Qwen Code write
    the same): `output`, else `error`, else the response as JSON."""
    if isinstance(body.get("output"), str):
        return body["output"], False
    if "error" in body:
        return (body["error"] if isinstance(body["error"], str) else dumps(body["error"])), True
    return dumps(body), False


def _exit_code(tool: str | None, text: str | None) -> int | None:
    """The `Exit Code: N` line `run_shell_command` writes in its result (none when the command succeeded on
    older releases)."""
    if tool != "run_shell_command" or not text:
        return None
    m = _EXIT_CODE.search(text)
    return int(m.group(1)) if m else None


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""
