"""MCP sessions as JSON-RPC 2.0 logs (protocol revisions 2024-11-05 and later).

Input: a JSONL file (or a JSON array) of entries. An entry is a JSON-RPC message, or an envelope
`{"message" | "payload" | "data": <message or the message as a JSON string>, "timestamp", "direction"}` as
transport loggers and SDK-level captures write them. (Text logs with a prefix before each message are
`ingest.mcp.proxy_log`; SDK method-call captures are `ingest.mcp.sdk_calls`; both build their episodes here.)

- A gateway's envelopes (`{"timestamp", "direction", "type": "REQUEST" | "RESPONSE", "server_id", "payload"}`, as
  gh-aw's MCP Gateway writes `rpc-messages.jsonl`) name the server: each is a channel of its own; a request the
  gateway logged before numbering it (no `id` in an envelope typed `REQUEST`) takes the id of its server's next
  answer (an answer answers the server's oldest request still waiting); one never answered stays a call.
- Requests are paired to their responses by `id` (responses may come out of order); when the container says
  who sent a message (an envelope's `direction`, a proxy log's arrow), a response is paired with a request of
  the other side only, so ids of server-to-client requests (`roots/list`, sampling) do not collide with the
  client's. Notifications are kept in order in `env["notifications"]` with `after_step` (how many steps
  preceded them).
- Every `tools/call` (and `resources/read`, `prompts/get`) request is a step: a tool_call action (shell tools
  included: in MCP every action is a JSON tool call). The observation of step t+1 is the
  result of call t: the `result.content` text items joined by newlines, `is_error` from `result.isError` or a
  JSON-RPC `error`; `structuredContent` (or a JSON text) goes to `ui_tree`; images go to the blob store. A
  result with neither `content` nor `contents` (a server that answers with a bare object) is kept whole as
  JSON in `text` and `ui_tree`.
  Observation 0 is `none`: nothing was returned before the first call. The last result is the final
  observation.
- SDK captures serialize whole result objects: a `result` that is a JSON string, or a text item whose text
  is itself a serialized `CallToolResult` (`{"content": [...], "isError": ...}`), is decoded (double-encoded
  JSON) before use.
- `env["tools"]`: the tool definitions (`name`, `description`, `inputSchema`...) from `tools/list` results
  (all pages, in order, later definitions of a name replace earlier ones): a world model needs them in its
  system prompt. `env["server"]` / `env["client"]`: `serverInfo`/`clientInfo`, `protocolVersion`,
  capabilities, `instructions`.
- A new `initialize` request starts a new episode (key `line<N>`, then `line<N>.2`... for more starting on line
  N; the first session's key is ""). Logs that interleave several connections (a host's log of all its
  servers) name a channel per message: each channel has its own sessions, and `env["server_name"]` is the
  channel's name.
- Web search tools (`web_search`, `web_extractor`) make the episode's domain `search` (`ingest.search`).
- Each session's calls and their results, in the order they passed, are a transcript read by the transcript
  core (`ingest.transcript`, `exchange_steps`): this module decodes the protocol (sessions, which response
  answers which request, what a result says), the core makes the steps and the episode.
- Timestamps: UTC when the entry carries a zoned time or epoch, else null; a step's is its request's, and
  its response's is kept in `env["message_extras"]` (`{"step", "role": "tool", "timestamp"}`, `step` the step
  whose observation the result is). Sessions have no goal, so episodes end truncated (`is_terminal` false)
  and `task` is null. The log does not name the host platform: `linux` is recorded.
- Nothing is dropped silently: a session with messages but no tool call is an `empty_episode` rejection, and
  a file with no session at all a `no_messages` one.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.record import Episode, Observation, Rejected
from ingest.search import episode_domain, results_tree
from ingest.source import Source, SourceError
from ingest.times import parse_time
from ingest.tools import dumps, tool_action
from ingest.transcript import Run, exchange_steps, records

FORMAT = "mcp_jsonrpc"
VERSION = "4"
INFO = FormatInfo(
    group="mcp", rank=70, domains=('mcp', 'search'), platform="linux",
    summary=("MCP JSON-RPC 2.0 sessions, search agents (`[n] url / Title / Snippet / Date` results parsed into "
             "`ui_tree`)"),
    producer="the `mcp` SDK",
    versions="2.3",
    proof="a stdio server and client session captured three ways (`tests/ingest/mcp/test_producer.py`)",
)

CALL_METHODS = ("tools/call", "resources/read", "prompts/get")
_ENVELOPE_KEYS = ("message", "payload", "data", "json")
_DIRECTION_KEYS = ("direction", "dir", "from", "source")
_SERVER_KEYS = ("server_id", "serverName", "server_name", "server")  # the server of a gateway's envelope
_JSON_START = re.compile(rb'\{\s*"|\[\s*[{\]]')  # a JSON object, or an array of objects (not "[info] ...")


def units(files: list[str], head) -> list[str]:
    """JSON or JSONL files whose first bytes hold a JSON-RPC 2.0 message with an MCP method or result (text
    logs with a prefix before each message are `mcp_proxy_log`'s)."""
    found = []
    for path in files:
        if not path.endswith((".jsonl", ".json", ".ndjson", ".log")):
            continue
        raw = head(path)
        if not _JSON_START.match(raw.lstrip(b"\xef\xbb\xbf \t\r\n")):
            continue
        start = raw.replace(b'\\"', b'"')  # envelopes may hold the message as a JSON string
        if b'"jsonrpc"' in start and b'2.0' in start and (b'"method"' in start or b'"result"' in start):
            found.append(path)
    return found


@dataclass(slots=True)  # one per line of a log: no per-instance dict
class Message:
    """One JSON-RPC message as a container yields it."""

    line: int
    msg: dict
    stamp: object = None  # the container's time for it, as written (ISO string, epoch...)
    channel: str | None = None  # which connection, in a log that interleaves several (None: the only one)
    direction: str | None = None  # "client" | "server": its sender, when the container says
    raw: object = None  # what the source wrote for it when that is not the message itself (SDK captures)
    session: object = None  # the source's own session id, when it has one: a new id starts a new session


@dataclass(eq=False, slots=True)
class _Call:
    method: str
    params: dict
    raw: object
    timestamp: object = None
    response: dict | None = None
    seq: int = 0  # its request's place in the message stream
    response_seq: int = 0  # its response's (responses may come out of order)
    response_stamp: object = None  # the container's time for the response, as written


@dataclass(eq=False)
class Session:
    key: str
    index: int
    channel: str | None = None
    calls: list[_Call] = field(default_factory=list)
    tools: dict[str, dict] = field(default_factory=dict)
    server: dict = field(default_factory=dict)
    client: dict = field(default_factory=dict)
    notifications: list[dict] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)  # every method seen, in order of first sight
    messages: int = 0
    hint: object = None  # the source's session id
    first_line: int | None = None
    unanswered: int = 0  # requests (of any method) never answered


def direction_of(value) -> str | None:
    """"client" | "server" for a direction label that names the sender unambiguously, else None."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower().replace("_", "-").replace(" ", "")
    if text in ("c2s", "client", "fromclient", "client-to-server", "client->server", "client→server"):
        return "client"
    if text in ("s2c", "server", "fromserver", "server-to-client", "server->client", "server→client"):
        return "server"
    c, s = text.find("client"), text.find("server")
    if c >= 0 and s >= 0:
        return "client" if c < s else "server"
    return None


# a response's sender -> the senders its request may have (read only)
_SIDES = {"client": ("server", None), "server": ("client", None)}


def _other(direction: str) -> str:
    return "server" if direction == "client" else "client"


def _entries(data: bytes, name: str) -> Iterator[tuple[int, object] | Rejected]:
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        try:
            items = orjson.loads(text)
        except orjson.JSONDecodeError as e:
            raise SourceError("parse_error", f"{name}: invalid JSON: {e}") from None
        yield from ((i + 1, item) for i, item in enumerate(items))
        return
    for no, line in enumerate(data.splitlines(), 1):
        if not line or line.isspace():  # blank (no stripped copy of each line)
            continue
        if no == 1:
            line = line.removeprefix(b"\xef\xbb\xbf")
        try:
            yield no, orjson.loads(line)
        except orjson.JSONDecodeError as e:
            yield Rejected("parse_error", f"{name}:{no}: invalid JSON: {e}", name, line=no, snippet=line[:500].decode(errors="replace"))


def _unwrap(entry) -> tuple[dict | None, object]:
    """(JSON-RPC message, timestamp) of an entry; the message is None when the entry holds none."""
    if not isinstance(entry, dict):
        return None, None
    # the first of the time keys the entry has (its value even when null)
    stamp = entry["timestamp"] if "timestamp" in entry else entry["ts"] if "ts" in entry else entry.get("time")
    if "jsonrpc" in entry:
        return entry, stamp
    for key in _ENVELOPE_KEYS:
        if key not in entry:
            continue
        value = entry[key]
        if isinstance(value, (str, bytes)):
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                continue
        if isinstance(value, dict) and "jsonrpc" in value:
            return value, stamp
    return None, stamp


def _idless_request(entry, msg: dict) -> bool:
    """An envelope that says it holds a request (`"type": "REQUEST"`) around a message without an id: a gateway
    that logs a request before it numbers it (gh-aw's MCP Gateway), not a notification."""
    return msg is not entry and "type" in entry and str(entry["type"]).lower() == "request" and "id" not in msg \
        and isinstance(msg.get("method"), str) and not msg["method"].startswith("notifications/")


def _sender(entry: dict, known: dict) -> str | None:
    """The sender the first of an envelope's direction labels names; `known`: the labels read so far (a log
    repeats a few)."""
    if entry.keys().isdisjoint(_DIRECTION_KEYS):  # most entries: one C call instead of a lookup per key
        return None
    for key in _DIRECTION_KEYS:
        label = entry.get(key)
        if not isinstance(label, str):
            continue  # direction_of names a sender by a string only
        if label not in known:
            known[label] = direction_of(label)
        if known[label]:
            return known[label]
    return None


def _server(entry: dict) -> str | None:
    """The server an envelope names (a gateway's channel)."""
    if entry.keys().isdisjoint(_SERVER_KEYS):  # most entries name none: one C call instead of a lookup per key
        return None
    for key in _SERVER_KEYS:
        server = entry.get(key)
        if isinstance(server, str):
            return server
    return None


def _messages(source: Source, name: str) -> Iterator[Message | Rejected]:
    waiting: dict[object, list[Message]] = {}  # channel -> its id-less requests not answered yet, oldest first
    labels: dict[str, str | None] = {}  # direction label -> its sender
    for item in _entries(source.read_bytes(), name):
        if type(item) is not tuple:  # a line's row
            yield item
            continue
        no, entry = item
        if type(entry) is dict and type(envelope := entry.get("message")) is dict and "jsonrpc" in envelope \
                and "jsonrpc" not in entry:  # the usual envelope, read as `_unwrap` reads it, at once
            msg, stamp = envelope, entry["timestamp"] if "timestamp" in entry else _unwrap(entry)[1]
        else:
            msg, stamp = _unwrap(entry)
        if msg is None:
            yield Rejected("not_jsonrpc", f"{name}:{no}: entry holds no JSON-RPC 2.0 message", name, line=no,
                           snippet=dumps(entry)[:500])
            continue
        direction, channel = None, None
        if msg is not entry:  # an envelope may say who sent it, and to which server
            label = entry.get("direction")  # the first label `_sender` reads, looked up at once when known
            direction = labels.get(label) if type(label) is str else None
            direction, channel = direction or _sender(entry, labels), _server(entry)
        message = Message(no, msg, stamp, channel, direction)
        if msg is not entry and "type" in entry and _idless_request(entry, msg):
            waiting.setdefault(channel, []).append(message)
            continue
        if waiting and "id" in msg and "method" not in msg and waiting.get(channel):
            request = waiting[channel].pop(0)  # the oldest request of the server takes the answer's id
            request.msg = {**request.msg, "id": msg["id"]}
            yield request
        yield message
    for requests in waiting.values():  # never answered: still calls (the core counts them unanswered)
        for request in requests:
            request.msg = {**request.msg, "id": f"line{request.line}"}
            yield request


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
    if type(result) is dict:  # most results: content that is not one text item, or one that holds no JSON
        content = result.get("content")
        if not (isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict)) or \
                content[0].get("type") != "text" or not isinstance(content[0].get("text"), str) or \
                content[0]["text"][:1] not in ("{", "["):
            return result
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
        if not isinstance(err, dict):
            err = {"message": str(err)}
        code = err.get("code")
        text = f"Error {code}: {err.get('message')}" if code is not None else f"Error: {err.get('message')}"
        return Observation(kind="tool_result", text=text, is_error=True, ui_tree=dumps(err))
    result = _unserialize(msg.get("result"))
    if not isinstance(result, dict):
        return Observation(kind="tool_result", text=None if result is None else str(result))
    if "content" not in result and "contents" not in result:
        # not a CallToolResult (a server answering with a bare object, a prompt's messages): kept whole as JSON
        return Observation(kind="tool_result", text=dumps(result), ui_tree=dumps(result),
                           is_error=bool(result.get("isError")))
    texts, tree = [], None
    items = result.get("content") if isinstance(result.get("content"), list) else result.get("contents") or []
    if type(items) is list and len(items) == 1 and type(items[0]) is dict and type(items[0].get("text")) is str \
            and items[0].get("type") in (None, "text"):  # most results: one text, as the loop below reads it
        texts, items = [items[0]["text"]], ()
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if "text" in item and kind in (None, "text"):  # a text that is no string is kept as its JSON
            texts.append(item["text"] if isinstance(item["text"], str) else dumps(item["text"]))
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
    # by position: a dataclass with many fields takes them ~2x faster so than by name (a result per call)
    return Observation("tool_result", text, tree, None, None, None, None, bool(result.get("isError")))


def call_result(tool: str | None, response: dict, source: Source) -> Observation:
    """The observation of one `tools/call` response message (`result` or `error`), as a session's steps get it."""
    return _observation(_Call("tools/call", {"name": tool}, None, response=response), source)


def build_sessions(items: Iterable[Message | Rejected], name: str, rejected: list[Rejected]) -> list[Session]:
    """Sessions of a stream of messages (each channel its own), in order of first message; what cannot be
    used goes to `rejected`."""
    sessions: list[Session] = []
    current: dict[str | None, Session] = {}
    # (channel, sender of the request or None, id) -> requests waiting for their response
    pending: dict[tuple, list[tuple[str, _Call | None, Session]]] = {}
    # (channel, id) -> responses logged before any request they answer, each with its row in `rejected`
    early: dict[tuple, list[_Early]] = {}

    def session_for(channel, no) -> Session:
        if channel not in current:
            current[channel] = Session(key=_session_key(sessions, no), index=len(sessions), channel=channel)
            sessions.append(current[channel])
        return current[channel]

    for seq, item in enumerate(items):
        if isinstance(item, Rejected):
            rejected.append(item)
            continue
        msg, no, channel = item.msg, item.line, item.channel
        method, mid = msg.get("method"), msg.get("id")
        session = current.get(channel) or session_for(channel, no)
        if session.first_line is None:
            session.first_line = no
        if item.session is not None and item.session != session.hint:
            if session.hint is not None or session.messages:
                session = current[channel] = Session(key=_session_key(sessions, no), index=len(sessions),
                                                     channel=channel, first_line=no)
                sessions.append(session)
            session.hint = item.session
        if isinstance(method, str) and mid is not None:  # a request
            if method == "initialize" and item.direction != "server":
                if session.calls or session.tools or session.server or session.client:
                    session = current[channel] = Session(key=_session_key(sessions, no), index=len(sessions),
                                                         channel=channel, hint=session.hint, first_line=no)
                    sessions.append(session)
                session.client = dict(msg["params"]) if isinstance(msg.get("params"), dict) else {}
            call = None
            if method in CALL_METHODS and item.direction != "server":
                params = msg.get("params")
                call = _Call(method, params if isinstance(params, dict) else {}, msg if item.raw is None else item.raw,
                             item.stamp, None, seq)
                session.calls.append(call)
            key = mid if type(mid) is int or type(mid) is str else _key(mid)
            if not (early and _answered_early(early, rejected, (channel, key), item.direction, seq, method, call,
                                              session)):
                pending.setdefault((channel, item.direction, key), []).append((method, call, session))
        elif isinstance(method, str):  # a notification
            session.notifications.append({"method": method, "params": msg.get("params"),
                                          "after_step": len(session.calls)})
        elif mid is not None and ("result" in msg or "error" in msg):  # a response
            _respond(item, seq, pending, early, rejected, name)
            continue
        else:
            rejected.append(Rejected("bad_message", f"{name}:{no}: neither request, notification nor response",
                                     name, line=no, snippet=dumps(msg)[:500]))
            continue
        session.messages += 1
        if method not in session.methods:
            session.methods.append(method)
    for queue in pending.values():
        for _, _, owner in queue:
            owner.unanswered += 1
    rejected[:] = [r for r in rejected if r is not None]
    return sessions


def _respond(item: Message, seq: int, pending: dict, early: dict, rejected: list[Rejected], name: str) -> None:
    """Response `item` (at `seq` in the stream) answers the request waiting for it, or is held in `early` with an
    `unpaired_response` row in `rejected` (withdrawn if its request follows)."""
    msg, channel, mid = item.msg, item.channel, item.msg["id"]
    sides = _SIDES.get(item.direction) or ([_other(item.direction), None] if item.direction
                                           else [None, "client", "server"])
    key = mid if type(mid) is int or type(mid) is str else _key(mid)
    queues = [q for side in sides if (q := pending.get((channel, side, key)))]
    if not queues:
        # a proxy that logs each direction from its own thread after relaying (greenlight) can log a
        # response before the request it answers: the row stands unless that request follows
        early.setdefault((channel, key), []).append(_Early(sides, msg, seq, item.stamp, len(rejected)))
        rejected.append(Rejected("unpaired_response", f"{name}:{item.line}: response id {mid!r} answers no request",
                                 name, line=item.line, snippet=dumps(msg)[:500]))
        return
    if len(queues) == 1 and len(queues[0]) == 1:  # most responses: one request waits for them
        queue, at = queues[0], 0
    else:  # the newest session's request first (a restarted server reuses ids), the oldest of its requests
        queue, at = max(((q, i) for q in queues for i in range(len(q))), key=lambda qi: (qi[0][qi[1]][2].index, -qi[1]))
    _answer(msg, seq, item.stamp, *queue.pop(at))


@dataclass
class _Early:
    """A response logged before any request it could answer."""

    sides: list  # the senders its request may have
    msg: dict
    seq: int
    stamp: object
    row: int  # its `unpaired_response` row in `rejected`


def _answered_early(early: dict, rejected: list, key: tuple, direction: str | None, seq: int, method: str,
                    call: _Call | None, session: Session) -> bool:
    """Whether a response logged before this request answers it: then they are paired and the response's row
    in `rejected` is withdrawn."""
    held = early.get(key)
    answer = next((e for e in held if direction in e.sides), None) if held else None
    if answer is None:
        return False
    held.remove(answer)
    rejected[answer.row] = None
    answered_at = seq
    if call is not None:  # the call takes the response's place in the stream, the response the call's
        call.seq, answered_at = answer.seq, call.seq
    _answer(answer.msg, answered_at, answer.stamp, method, call, session)
    return True


def _answer(msg: dict, seq: int, stamp, req_method: str, call: _Call | None, owner: Session) -> None:
    """Response `msg` (at `seq` in the stream) answers a request of `owner`: a call's result, or the server's
    details and tools."""
    owner.messages += 1
    if call is not None:
        call.response, call.response_seq, call.response_stamp = msg, seq, stamp
        return
    result = msg.get("result") if isinstance(msg.get("result"), dict) else {}
    if req_method == "initialize":
        owner.server = {k: v for k, v in result.items()}
    elif req_method == "tools/list":
        for tool in result.get("tools") or []:
            if isinstance(tool, dict) and tool.get("name"):
                owner.tools[tool["name"]] = tool


def _session_key(sessions: list[Session], line: int) -> str:
    """"" for the first session, else `line<N>`; a second session starting on the same line (an SDK session
    record holds a whole connection, and an `initialize` inside it starts another) gets `.2`, then `.3`...
    Lines only grow, so the sessions of line N are the last ones made: only those are looked at (a log of
    thousands of sessions would otherwise compare each new one with all before it)."""
    if not sessions:
        return ""
    key = f"line{line}"
    same_line = 0
    for earlier in reversed(sessions):
        if earlier.key != key and not earlier.key.startswith(key + "."):
            break
        same_line += 1
    return f"{key}.{same_line + 1}" if same_line else key


def _key(mid):
    return orjson.dumps(mid) if isinstance(mid, (dict, list)) else mid


def episodes(sessions: list[Session], source: Source, name: str) -> Iterator[Episode | Rejected]:
    """An episode per session with tool calls (its transcript read by the transcript core); an `empty_episode`
    rejection per session without."""
    for session in sessions:
        if session.calls:
            yield from records((), _run(session), name, exchange_steps(_transcript(session, source)))
        elif session.messages:
            yield _no_calls(session, name)


def _no_calls(session: Session, name: str) -> Rejected:
    label = session.key or "1"
    if session.channel is not None:
        label = f"{label} ({session.channel})"
    seen = ", ".join(session.methods[:8]) or "responses only"
    plural = "s" if session.messages != 1 else ""
    unanswered = f"; {session.unanswered} request{'s' if session.unanswered != 1 else ''} never " \
                 "answered: the server may have exited" if session.unanswered else ""
    return Rejected("empty_episode", f"{name}: session {label} made no tool call, so it has no step "
                    f"({session.messages} message{plural}: {seen}{unanswered})", session.key or None,
                    line=session.first_line)


def _tool_name(call: _Call) -> str | None:
    return call.params.get("name") if call.method == "tools/call" else call.method


def _arguments(call: _Call) -> object:
    if call.method == "tools/call":
        return call.params.get("arguments")
    return {k: v for k, v in call.params.items() if k != "_meta"}


def _transcript(session: Session, source: Source) -> Iterator[tuple]:
    """The session's calls and their results in the order they passed, as the core's `exchange_steps` reads
    them: (id, action, time) for a call, (id, observation, time) for its result, the id the call's place in the
    session (a result answers its call by it, whichever order the results came in; ids may repeat on the wire),
    made as the core reads them: a long session's calls are never all held twice."""
    calls = session.calls
    # place in the stream -> the call's place in the session (a request; ~place: its response); ints only
    passed = {call.seq: n for n, call in enumerate(calls)}
    passed.update({call.response_seq: ~n for n, call in enumerate(calls) if call.response is not None})
    for seq in sorted(passed):
        n = passed[seq]
        if n >= 0:
            call = calls[n]
            args = call.params.get("arguments") if call.method == "tools/call" else _arguments(call)
            raw = dumps(call.raw) if type(call.raw) is dict else call.raw if isinstance(call.raw, (str, bytes)) \
                else dumps(call.raw)
            tool = call.params.get("name") if call.method == "tools/call" else call.method  # `_tool_name`
            yield str(n), tool_action(tool, args if args is not None else {}, raw, shell_as_command=False), \
                parse_time(call.timestamp)
        else:
            call = calls[~n]
            yield str(~n), _observation(call, source), parse_time(call.response_stamp)


def _run(session: Session) -> Run:
    """What the session says outside its calls: the server and client, the tools, the notifications."""
    env: dict = {"tools": list(session.tools.values())}
    if session.channel is not None:
        env["server_name"] = session.channel
    if session.hint is not None:
        env["session_id"] = session.hint
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
    tools = [_tool_name(c) for c in session.calls]
    # the log does not name the platform; MCP servers and search tools run on Linux hosts in practice
    return Run(key=session.key, domain=episode_domain(tools, "mcp"), platform="linux",
               agent=((client.get("clientInfo") or {}).get("name")) if client else None, terminated=False, env=env)


def read_messages(items: Iterable[Message | Rejected], source: Source, name: str,
                  empty_reason: str) -> Iterator[Episode | Rejected]:
    """Episodes of a message stream, its rejections first; `empty_reason` is told when the stream held no
    message at all (a file that looked like MCP traffic is never silently dropped)."""
    rejected: list[Rejected] = []
    sessions = build_sessions(items, name, rejected)
    yield from rejected
    yielded = bool(rejected)
    for record in episodes(sessions, source, name):
        yielded = True
        yield record
    if not yielded:
        yield Rejected("no_messages", f"{name}: {empty_reason}", name)


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    yield from read_messages(_messages(source, name), source, name, "no JSON-RPC message to read")
