"""Qwen Code's `/export json` and `/export jsonl` files (`qwen-code-export-<time>.json|jsonl`), written by the CLI's
`exportCommand` (`packages/cli/src/ui/utils/export/`): the session replayed into messages (`collectSessionData`,
`normalizeSessionData`), then `toJson` (the object `{sessionId, startTime, messages, metadata}`, indented) or
`toJsonl` (a first line `{"type": "session_metadata", sessionId, startTime, ...the metadata}`, then one message a
line). An adapter onto `ingest.transcript`; one file is one episode.

A message has `uuid`, `sessionId`, `timestamp`, `type`, and by type:
- `user`: `message {role: "user", parts: [{text}]}`, a prompt;
- `assistant`: `message {role, parts: [{text}]}`: role `assistant` is text the model wrote, role `thinking` its
  thoughts (kept as the reasoning of the model's next turn); `usageMetadata` (summed into `tokens`);
- `tool_call`: one call with its result, `toolCall {toolCallId, kind (the ACP kind: read, edit, search, execute,
  other...), title, status (completed / failed), rawInput (the arguments), content (the result: `content` text
  items, `diff` items of an edit), rawOutput (a shell's `shell_result`: `exitCode`, `output`), locations,
  timestamp}`; the plan the agent wrote (`kind` "todowrite") is one too;
- `system`: a goal transition (`goalState`), kept in env.
The export names no tool's function name: a call's `title` is the tool's display name and its description
(`Glob: '*'`, `ReadFile: notes.txt`), or the tool's function name alone where the exporting CLI did not resolve
the tool: the tool name here is the title's part before `: `. A call of kind `execute` with a `command` string,
one with a `shell_result`, or a call of a shell tool named by its function name (`run_shell_command`, the title
0.15 writes) is a `command` action and its result a terminal observation with the exit code.
The model's turns that only called tools are not in the export (their calls are): each call is a turn of its own.

The model is the metadata's (the first the session used); `metadata` (cwd, git, promptCount, totalTokens,
contextWindowSize, filesWritten, uniqueFiles...) is kept in `env["qwen_code_export"]`; a field or message type none
of the writer's releases write is kept raw there with an `unknown_content` warning. Qwen Code grades nothing:
outcome `unknown`; terminated when the last message is the model's answer.

`/export md` writes the same messages as markdown (read by `ingest.swe.qwen_code_markdown`, which says what it
loses); a markdown export of the same session (its header names the same session id) beside a JSON or JSONL export
is listed in `ignored_inputs` as that session's (`members`): the JSON export holds all it does. `/export html`
writes a page: in 0.15 the page of the `@qwen-code/webui` chat viewer, with the object `/export json` writes in its
`<script id="chat-data" type="application/json">` (`<`, `>` and `&` escaped as `\u003c`, `\u003e`, `\u0026`): that
object is read here as the JSON export is; later releases embed a transcript document of their own renderer (its
blocks hold previews of each call, not the call's arguments): not read, and beside a JSON or JSONL export listed as
that session's in `ignored_inputs`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.members import with_prefix
from ingest.record import Action, Episode, Rejected
from ingest.swe import qwen_code_markdown
from ingest.source import Source, SourceError, json_lines, parse_json
from ingest.times import parse_time
from ingest.tools import SHELL_TOOLS, dumps, tool_observation
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "qwen_code_export"
VERSION = "2"
INFO = FormatInfo(
    group="swe", rank=266, domains=('swe',), platform="linux",
    summary="Qwen Code `/export` files (JSON, JSONL, 0.15's HTML)",
    producer=("Qwen Code's `/export json` / `/export jsonl` / `/export html` (`qwen-code-export-<time>.json`, "
              "`.jsonl`, `.html`)"),
    versions="0.15.10, 0.24.4",
    proof=("each release from the npm registry runs its scripted session against the scripted model server, then "
           "`qwen -p \"/export json\"`, `\"/export jsonl\"` and `\"/export html\"` with `--resume <session>` export "
           "it; the script is the oracle for every call, its arguments and the result the agent recorded, the model "
           "and the final answer; 0.15's HTML page reads as its JSON export; the same session's markdown and later "
           "releases' HTML exports beside them are listed unread with their reason; "
           "edge cases hand-made (`tests/ingest/swe/test_qwen_code_export.py`; public repositories hold markdown "
           "exports, no JSON or JSONL one was found)"),
)

_JSON_SNIFF = re.compile(rb'^\{\s*"sessionId":\s*"[^"]*",\s*"startTime":\s*"[^"]*",\s*"messages":\s*\[')
_JSONL_SNIFF = re.compile(rb'^\{"type":"session_metadata","sessionId":"[^"]*","startTime":')
_EXPORT_UNREAD = re.compile(r"^qwen-code-export-[\w-]+\.(md|html)$")
_UNREAD_REASON = ("Qwen Code's `/export html` of a session (a page embedding its renderer's transcript document, "
                  "which holds previews of the calls, not their arguments): its JSON and JSONL exports hold what it "
                  "does")
MARKDOWN_REASON = ("Qwen Code's `/export md` of the same session (its header names the same session id): the JSON "
                   "and JSONL exports hold all the markdown does")
# the 0.15 page: its title and the chat viewer it loads, in its head; the session's object in its chat-data script
_HTML_SNIFF = re.compile(rb"<title>Qwen Code Chat Export</title>")
_WEBUI = b"@qwen-code/webui"
_CHAT_DATA = re.compile(rb'<script id="chat-data" type="application/json">(.*?)</script>', re.S)
_SESSION_ID = re.compile(rb'"sessionId":\s*"([^"]*)"')
_METADATA = frozenset({"type", "sessionId", "startTime", "exportTime", "cwd", "gitRepo", "gitBranch", "model",
                       "channel", "promptCount", "contextUsagePercent", "contextWindowSize", "totalTokens",
                       "filesWritten", "linesAdded", "linesRemoved", "uniqueFiles"})
_MESSAGE_KEYS = frozenset({"uuid", "parentUuid", "sessionId", "timestamp", "type", "message", "usageMetadata",
                           "toolCall", "goalState"})
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)  # the shell tool's result text
_TYPES = ("user", "assistant", "tool_call", "system")
_TOOL_CALL_KEYS = frozenset({"toolCallId", "kind", "title", "status", "rawInput", "rawOutput", "content", "locations",
                             "timestamp"})


def units(files: list[str], head) -> list[str]:
    """`.json` files that open as `/export json` writes them (`{"sessionId": ..., "startTime": ..., "messages": [`,
    indented), `.jsonl` files whose first line is `/export jsonl`'s `{"type":"session_metadata",...}`, and `.html`
    pages titled `Qwen Code Chat Export` that load the `@qwen-code/webui` chat viewer (0.15's `/export html`)."""
    return [path for path in files
            if (path.endswith(".json") and _JSON_SNIFF.match(head(path)))
            or (path.endswith(".jsonl") and _JSONL_SNIFF.match(head(path)))
            or (path.endswith(".html") and _chat_viewer_page(head(path)))]


def _chat_viewer_page(head: bytes) -> bool:
    return bool(_HTML_SNIFF.search(head)) and _WEBUI in head


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The `/export html` files (`qwen-code-export-*.html`) in the folder of a JSON or JSONL export, and the
    `/export md` files there whose header names the session of an export in the folder: Qwen Code's exports of
    that session too, listed as not read with the reason (given to the folder's first export)."""
    out: dict[str, list] = {}
    for path in sorted(found):
        folder = posixpath.dirname(path)
        if any(posixpath.dirname(u) == folder for u in out):
            continue
        beside = [p for p in with_prefix(files, folder + "/" if folder else "")
                  if "/" not in p[len(folder) + 1 if folder else 0:] and _EXPORT_UNREAD.match(posixpath.basename(p))]
        sessions = {m.group(1).decode("utf-8", "replace") for u in found if posixpath.dirname(u) == folder
                    for m in [_SESSION_ID.search(head(u))] if m}
        out[path] = [(p, _UNREAD_REASON) for p in beside if p.endswith(".html") and not _chat_viewer_page(head(p))]
        out[path] += [(p, MARKDOWN_REASON) for p in beside if p.endswith(".md")
                      and qwen_code_markdown.session_id(head(p).decode("utf-8", "replace")) in sessions]
    return out


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    extras: dict = {"tokens": {}, "system_messages": [], "unknown_records": [], "unknown_fields": {}}
    items, problems = (_jsonl_items if name.endswith(".jsonl") else _html_items if name.endswith(".html")
                       else _json_items)(source, name, extras)
    yield from problems
    if items is None:
        return
    messages: list[Message] = []
    for where, item in items:
        yield from _message(item, where, messages, extras)
    last = messages[-1] if messages else None
    answered = last is not None and last.role == "assistant" and not last.tool_calls and bool(last.text)
    model = extras.get("metadata", {}).get("model")
    env = {"qwen_code_export": {k: v for k, v in extras.items() if v}}
    yield from records(messages, Run(key="", domain="swe", platform="linux", terminated=answered,
                                     agent=model if isinstance(model, str) else None, env=env), name)


def _html_items(source: Source, name: str, extras: dict):
    """(the messages with where each is, the warnings) of the object a 0.15 `/export html` page embeds."""
    found = _CHAT_DATA.search(source.read_bytes())
    if found is None:
        return None, [Rejected("bad_record", f"{name}: no `<script id=\"chat-data\">` holding the session", name)]
    return _json_items(source, name, extras, found.group(1))


def _json_items(source: Source, name: str, extras: dict, data: bytes | None = None):
    """(the messages with where each is, the warnings) of a `/export json` document."""
    try:
        doc = parse_json(source.read_bytes() if data is None else data, name, source.budgets)
    except SourceError as e:
        return None, [Rejected(e.rule, e.reason, name)]
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        return None, [Rejected("bad_record", f"{name}: `messages` is not a list", name)]
    problems = list(_metadata({"sessionId": doc.get("sessionId"), "startTime": doc.get("startTime"),
                               **(doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {})},
                              f"{name}: metadata", extras))
    unknown = sorted(set(doc) - {"sessionId", "startTime", "messages", "metadata"})
    if unknown:
        extras["unknown_fields"][name] = {k: doc[k] for k in unknown}
        problems.append(Rejected("unknown_content", f"{name}: top-level field(s) {', '.join(unknown)} are none Qwen "
                                 "Code's export writes; kept raw in env.qwen_code_export.unknown_fields", name))
    return [(f"{name}: messages[{i}]", m) for i, m in enumerate(doc["messages"])], problems


def _jsonl_items(source: Source, name: str, extras: dict):
    """(the messages with where each is, the warnings) of a `/export jsonl` file: its first line the metadata."""
    items, problems = [], []
    for no, _line, value in json_lines(source.read_bytes(), name, source.budgets):
        if isinstance(value, Rejected):
            problems.append(value)
        elif isinstance(value, dict) and value.get("type") == "session_metadata" and "metadata" not in extras:
            problems.extend(_metadata(value, f"{name}:{no}", extras))
        else:
            items.append((f"{name}:{no}", value))
    return items, problems


def _metadata(fields: dict, where: str, extras: dict) -> Iterator[Rejected]:
    extras["metadata"] = {k: v for k, v in fields.items() if k != "type" and v is not None}
    unknown = sorted(set(fields) - _METADATA)
    if unknown:
        yield Rejected("unknown_content", f"{where}: metadata field(s) {', '.join(unknown)} are none Qwen Code's "
                       "export writes; kept raw in env.qwen_code_export.metadata", where)


def _message(item, where: str, messages: list[Message], extras: dict) -> Iterator[Rejected]:
    kind = item.get("type") if isinstance(item, dict) else None
    if kind not in _TYPES:
        extras["unknown_records"].append(item)
        yield Rejected("unknown_content", f"{where}: not a Qwen Code export user, assistant, tool_call or system "
                       "message; kept raw in env.qwen_code_export.unknown_records", where)
        return
    unknown = sorted(set(item) - _MESSAGE_KEYS)
    call = item.get("toolCall") if isinstance(item.get("toolCall"), dict) else {}
    unknown += sorted(f"toolCall.{k}" for k in set(call) - _TOOL_CALL_KEYS)
    if unknown:
        extras["unknown_fields"][where] = {k: item[k] if k in item else call[k.split(".", 1)[1]] for k in unknown}
        yield Rejected("unknown_content", f"{where}: field(s) {', '.join(unknown)} are none Qwen Code's export "
                       "writes; kept raw in env.qwen_code_export.unknown_fields", where)
    stamp = parse_time(item.get("timestamp"))
    body = item.get("message") if isinstance(item.get("message"), dict) else {}
    parts = body.get("parts") if isinstance(body.get("parts"), list) else []
    text = "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
    if kind == "tool_call":
        _tool_call(call, stamp, where, messages, extras)
    elif kind == "user":
        messages.append(Message("user", text=text, timestamp=stamp, where=where))
    elif kind == "system":
        extras["system_messages"].append(item)
    elif body.get("role") == "thinking":
        extras["thinking"] = "\n\n".join(filter(None, (extras.get("thinking"), text)))
    else:
        _count_tokens(item.get("usageMetadata"), extras["tokens"])
        messages.append(Message("assistant", text=text or None, reasoning=extras.pop("thinking", None),
                                timestamp=stamp, where=where))


def _count_tokens(usage, tokens: dict) -> None:
    for key, value in (usage if isinstance(usage, dict) else {}).items():
        if isinstance(value, int) and not isinstance(value, bool):
            tokens[key] = tokens.get(key, 0) + value


def _tool_call(call: dict, stamp, where: str, messages: list[Message], extras: dict) -> None:
    """One `tool_call` message: the model's turn that called it and the call's result."""
    title = call.get("title") if isinstance(call.get("title"), str) else None
    name = title.split(": ", 1)[0] if title else None
    args = call.get("rawInput") if call.get("rawInput") is not None else {}
    output = call.get("rawOutput") if isinstance(call.get("rawOutput"), dict) else {}
    command = args.get("command") if isinstance(args, dict) else None
    shell = isinstance(command, str) and (call.get("kind") == "execute" or output.get("type") == "shell_result"
                                          or name in SHELL_TOOLS)
    raw = {k: v for k, v in call.items() if k != "content"}
    action = Action(kind="command", code=command, tool_name=name, arguments=dumps(args), raw=dumps(raw)) \
        if shell else None
    messages.append(Message("assistant", reasoning=extras.pop("thinking", None), timestamp=stamp, where=where,
                            tool_calls=[ToolCall(call.get("toolCallId"), name, args, raw=raw, action=action)]))
    text = _result_text(call.get("content"))
    exit_code = output.get("exitCode") if isinstance(output.get("exitCode"), int) else None
    m = _EXIT_CODE.search(text or "") if shell and exit_code is None else None
    exit_code = int(m.group(1)) if m else exit_code
    failed = call.get("status") == "failed"
    observation = tool_observation(name, text, is_error=failed, exit_code=exit_code,
                                   kind="terminal" if shell else "tool_result")
    messages.append(Message("tool", text=text, tool_call_id=call.get("toolCallId"), tool_name=name, timestamp=stamp,
                            where=where, is_error=failed, exit_code=exit_code, observation=observation,
                            raw={"rawOutput": output} if output else None))


def _result_text(content) -> str | None:
    """The result the export gives: its text items joined, and each `diff` item as the edit's new text under
    its path (what the export keeps of an edit)."""
    texts = []
    for entry in content if isinstance(content, list) else []:
        if not isinstance(entry, dict):
            continue
        inner = entry.get("content") if isinstance(entry.get("content"), dict) else {}
        if entry.get("type") == "content" and isinstance(inner.get("text"), str):
            texts.append(inner["text"])
        elif entry.get("type") == "diff":
            texts.append(f"{entry.get('path')}:\n{entry.get('newText') or ''}")
    return "\n".join(texts) or None
