"""MCP sessions as JSON-RPC 2.0 logs (protocol revisions 2024-11-05 and later).

Input: a JSONL file (or a JSON array) of entries. An entry is a JSON-RPC message, or an envelope
`{"message" | "payload" | "data": <message or the message as a JSON string>, "timestamp", "direction"}` as
transport loggers and SDK-level captures write them.

- Requests are paired to their responses by `id` (responses may come out of order); notifications are kept
  in order in `env["notifications"]` with `after_step` (how many steps preceded them).
- Every `tools/call` (and `resources/read`, `prompts/get`) request is a step: a tool_call action (shell tools
  included: in MCP every action is a JSON tool call). The observation of step t+1 is the
  result of call t: the `result.content` text items joined by newlines, `is_error` from `result.isError` or a
  JSON-RPC `error`; `structuredContent` (or a JSON text) goes to `ui_tree`; images go to the blob store.
  Observation 0 is `none`: nothing was returned before the first call. The last result is the final
  observation.
- SDK captures serialize whole result objects: a `result` that is a JSON string, or a text item whose text
  is itself a serialized `CallToolResult` (`{"content": [...], "isError": ...}`), is decoded (double-encoded
  JSON) before use.
- `env["tools"]`: the tool definitions (`name`, `description`, `inputSchema`...) from `tools/list` results
  (all pages, in order, later definitions of a name replace earlier ones): a world model needs them in its
  system prompt. `env["server"]` / `env["client"]`: `serverInfo`/`clientInfo`, `protocolVersion`,
  capabilities, `instructions`.
- A new `initialize` request starts a new episode (key `line<N>`; the first session's key is "").
- Web search tools (`web_search`, `web_extractor`) make the episode's domain `search` (`ingest.search`).
- Timestamps: UTC when the entry carries a zoned time or epoch, else null. Sessions have no goal, so
  episodes end truncated (`is_terminal` false) and `task` is null. The log does not name the host
  platform: `linux` is recorded.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from dataclasses import dataclass, field
from typing import Iterator

import orjson

from ingest.record import Episode, Observation, Rejected, Step
from ingest.search import episode_domain, results_tree
from ingest.source import Source, SourceError
from ingest.times import parse_time
from ingest.tools import dumps, tool_action

FORMAT = "mcp_jsonrpc"
VERSION = "1"

CALL_METHODS = ("tools/call", "resources/read", "prompts/get")
_ENVELOPE_KEYS = ("message", "payload", "data", "json")


def units(files: list[str], head) -> list[str]:
    """Files whose first bytes hold a JSON-RPC 2.0 message with an MCP method or result."""
    found = []
    for path in files:
        if not path.endswith((".jsonl", ".json", ".ndjson", ".log")):
            continue
        start = head(path).replace(b'\\"', b'"')  # envelopes may hold the message as a JSON string
        if b'"jsonrpc"' in start and b'2.0' in start and (b'"method"' in start or b'"result"' in start):
            found.append(path)
    return found


@dataclass
class _Call:
    method: str
    params: dict
    raw: dict
    timestamp: object = None
    response: dict | None = None


@dataclass
class _Session:
    key: str
    calls: list[_Call] = field(default_factory=list)
    tools: dict[str, dict] = field(default_factory=dict)
    server: dict = field(default_factory=dict)
    client: dict = field(default_factory=dict)
    notifications: list[dict] = field(default_factory=list)
    unanswered: int = 0


def _entries(data: bytes, name: str) -> Iterator[tuple[int, object] | Rejected]:
    text = data.lstrip()
    if text.startswith(b"["):
        try:
            items = orjson.loads(text)
        except orjson.JSONDecodeError as e:
            raise SourceError("parse_error", f"{name}: invalid JSON: {e}") from None
        yield from ((i + 1, item) for i, item in enumerate(items))
        return
    for no, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield no, orjson.loads(line)
        except orjson.JSONDecodeError as e:
            yield Rejected("parse_error", f"{name}:{no}: invalid JSON: {e}", name, line=no, snippet=line[:500].decode(errors="replace"))


def _unwrap(entry) -> tuple[dict | None, object]:
    """(JSON-RPC message, timestamp) of an entry; the message is None when the entry holds none."""
    if not isinstance(entry, dict):
        return None, None
    stamp = entry.get("timestamp", entry.get("ts", entry.get("time")))
    if "jsonrpc" in entry:
        return entry, stamp
    for key in _ENVELOPE_KEYS:
        value = entry.get(key)
        if isinstance(value, (str, bytes)):
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                continue
        if isinstance(value, dict) and "jsonrpc" in value:
            return value, stamp
    return None, stamp


def _decode_json_text(text):
    """A string that holds a JSON object or array, decoded; None otherwise."""
    if isinstance(text, str) and text[:1] in ("{", "[") :
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
    return None


def _unserialize(result):
    """Undo SDK-level serialization: a result given as a JSON string, or a single text item holding a
    serialized CallToolResult, becomes the result object itself."""
    for _ in range(4):  # bounded: each pass removes one level of encoding
        if isinstance(result, str):
            decoded = _decode_json_text(result)
            if not isinstance(decoded, dict):
                return result
            result = decoded
            continue
        content = result.get("content") if isinstance(result, dict) else None
        if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) \
                and content[0].get("type") == "text":
            inner = _decode_json_text(content[0].get("text"))
            if isinstance(inner, dict) and isinstance(inner.get("content"), list):
                result = {**result, **inner}
                continue
        return result
    return result


def _observation(call: _Call, source: Source) -> Observation:
    msg = call.response
    if msg is None:
        return Observation()
    if "error" in msg:
        err = msg.get("error") or {}
        return Observation(kind="tool_result", text=f"Error {err.get('code')}: {err.get('message')}", is_error=True,
                           ui_tree=dumps(err))
    result = _unserialize(msg.get("result"))
    if not isinstance(result, dict):
        return Observation(kind="tool_result", text=None if result is None else str(result))
    texts, tree = [], None
    items = result.get("content") if isinstance(result.get("content"), list) else result.get("contents") or []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if "text" in item and kind in (None, "text"):
            texts.append(item["text"])
        elif kind in ("image", "audio") and isinstance(item.get("data"), str):
            try:
                ref = source.put_blob(base64.b64decode(item["data"], validate=True),
                                      item.get("mimeType") or "application/octet-stream", source.uri)
                texts.append(f"[{kind} {ref}]")
            except (binascii.Error, ValueError):
                texts.append(f"[{kind}: undecodable data]")
        elif kind == "resource" and isinstance(item.get("resource"), dict):
            res = item["resource"]
            texts.append(res.get("text") if isinstance(res.get("text"), str) else f"[resource {res.get('uri')}]")
        elif kind == "resource_link":
            texts.append(f"[resource {item.get('uri')}]")
    text = "\n".join(texts)
    tool = call.params.get("name")
    tree = results_tree(tool, text)
    if tree is None and result.get("structuredContent") is not None:
        tree = dumps(result["structuredContent"])
    if tree is None and len(texts) == 1 and _decode_json_text(texts[0]) is not None:
        tree = dumps(_decode_json_text(texts[0]))
    return Observation(kind="tool_result", text=text, ui_tree=tree, is_error=bool(result.get("isError")))


def _sessions(source: Source, name: str, rejected: list[Rejected]) -> list[_Session]:
    sessions: list[_Session] = [_Session(key="")]
    pending: dict[object, list[tuple[str, _Call | None, _Session]]] = {}
    for item in _entries(source.read_bytes(), name):
        if isinstance(item, Rejected):
            rejected.append(item)
            continue
        no, entry = item
        msg, stamp = _unwrap(entry)
        if msg is None:
            rejected.append(Rejected("not_jsonrpc", f"{name}:{no}: entry holds no JSON-RPC 2.0 message", name, line=no,
                                     snippet=dumps(entry)[:500]))
            continue
        method, mid = msg.get("method"), msg.get("id")
        session = sessions[-1]
        if isinstance(method, str) and mid is not None:  # a request
            if method == "initialize":
                if session.calls or session.tools or session.server or session.client:
                    session = _Session(key=f"line{no}")
                    sessions.append(session)
                session.client = {k: v for k, v in (msg.get("params") or {}).items()}
            call = None
            if method in CALL_METHODS:
                params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
                call = _Call(method, params, msg, stamp)
                session.calls.append(call)
            pending.setdefault(mid, []).append((method, call, session))
        elif isinstance(method, str):  # a notification
            session.notifications.append({"method": method, "params": msg.get("params"),
                                          "after_step": len(session.calls)})
        elif mid is not None and ("result" in msg or "error" in msg):  # a response
            waiting = pending.get(mid)
            if not waiting:
                rejected.append(Rejected("unpaired_response", f"{name}:{no}: response id {mid!r} answers no request",
                                         name, line=no, snippet=dumps(msg)[:500]))
                continue
            req_method, call, owner = waiting.pop(0)
            result = msg.get("result") if isinstance(msg.get("result"), dict) else {}
            if call is not None:
                call.response = msg
            elif req_method == "initialize":
                owner.server = {k: v for k, v in result.items()}
            elif req_method == "tools/list":
                for tool in result.get("tools") or []:
                    if isinstance(tool, dict) and tool.get("name"):
                        owner.tools[tool["name"]] = tool
        else:
            rejected.append(Rejected("bad_message", f"{name}:{no}: neither request, notification nor response",
                                     name, line=no, snippet=dumps(msg)[:500]))
    return sessions


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    rejected: list[Rejected] = []
    sessions = _sessions(source, name, rejected)
    yield from rejected
    for session in sessions:
        if not session.calls:
            if session.tools or session.server:
                yield Rejected("empty_episode", f"{name}: session {session.key or '1'} made no tool calls",
                               session.key or None)
            continue
        steps: list[Step] = []
        obs = Observation()
        for call in session.calls:
            tool = call.params.get("name") if call.method == "tools/call" else call.method
            args = call.params.get("arguments") if call.method == "tools/call" else \
                {k: v for k, v in call.params.items() if k != "_meta"}
            steps.append(Step(observation=obs, action=tool_action(tool, args if args is not None else {}, dumps(call.raw),
                                                                  shell_as_command=False),
                              timestamp=parse_time(call.timestamp)))
            obs = _observation(call, source)
        last = session.calls[-1]
        env = {"tools": list(session.tools.values())}
        server, client = session.server, session.client
        if server:
            env["server"] = {k: server.get(k) for k in ("serverInfo", "protocolVersion", "capabilities", "instructions")
                             if server.get(k) is not None}
        if client:
            env["client"] = {k: client.get(k) for k in ("clientInfo", "protocolVersion", "capabilities")
                             if client.get(k) is not None}
        if session.notifications:
            env["notifications"] = session.notifications
        unanswered = sum(c.response is None for c in session.calls)
        if unanswered:
            env["unanswered_calls"] = unanswered
        yield Episode(
            key=session.key,
            domain=episode_domain([s.action.tool_name for s in steps], "mcp"),
            platform="linux",  # the log does not say; MCP servers and search tools run on Linux hosts in practice
            steps=steps,
            agent=((client.get("clientInfo") or {}).get("name")) if client else None,
            final_observation=obs if last.response is not None else None,
            terminated=False,
            env=env,
        )
