"""MCP traffic in text logs: one JSON-RPC message per line, after a prefix (time, level, server, direction).

Written by the programs that sit between an MCP client and server and log what passes:

- Claude Desktop (`~/Library/Logs/Claude/mcp-server-NAME.log`, `mcp.log`):
  `2025-06-30T06:12:22.229Z [weather] [info] Message from client: {...} { metadata: undefined }`; `mcp.log`
  has `[info] [weather]` and interleaves every server, so each server name is a channel of its own. The
  server's stderr and multi-line host entries (`Using MCP server command ... %o`) sit between the messages.
  The host cuts long messages (`...[14696 chars truncated]...`).
- supergateway: `[supergateway] StreamableHttp → Child: {...}`, `[supergateway] Child → StreamableHttp: {...}`
  (a `Child → SSE:` line holds a Node.js `util.inspect` dump, which is not JSON).
- any tee or proxy that writes `<time> <direction> <message>` lines (`→`, `<-`, `client -> server`...).
- tagged request logs: `[REQUEST] Method: tools/call | ID: 3 | Payload: {...}` and `[RESPONSE] ID: 3 | Payload:
  {...}` (also `[NOTIFICATION]`, `[ERROR]`; `id=`, `request_id:`), as logging middlewares of MCP servers and
  proxies write them. The payload is the whole JSON-RPC message, or only its `params` / `result` (`error` for an
  `[ERROR]` line): then the message is rebuilt from the tag, the method and the id; a response without an id
  answers the oldest request still waiting (logs of one stdio session are in order). A `[REQUEST]` without a
  method is a `bad_message` row.

A message's sender comes from the prefix when it says (`Message from client`, the side of an arrow, a side
named `Child` is the server); its time when the line starts with a zoned ISO-8601 time (else null). A message
may run over several lines: a lone "{" opens it, indented lines and a closing brace at column 0 follow
(pretty-printed JSON). Episodes are built as for `mcp_jsonrpc` (see
`ingest.mcp.jsonrpc`): one per session, each `tools/call` a step, `env["tools"]` from `tools/list`.

Lines that are JSON objects of their own, not JSON-RPC (a gateway's audit lines before or between the proxy's,
one tool call per line), are read by the call-log reader they belong to (`ingest.mcp.call_log`): each call record
a step of an episode of its own (key `audit:<session or server>`); any other JSON record is kept, with its line,
in the first episode's `env["log_records"]` (a file with no episode is a row that says why already).

What looks like a message but cannot be read is quarantined, one row per message, never dropped: a cut message
(`truncated_message`, also when the cut left valid JSON: what it holds is incomplete), a `util.inspect` dump
(`not_json`), broken JSON (`parse_error`). A file with host
lines but no readable message is a `no_messages` rejection that says so.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.mcp.call_log import is_call_record, read_calls
from ingest.mcp.jsonrpc import Message, direction_of, read_messages
from ingest.record import Episode, Rejected
from ingest.source import Source

FORMAT = "mcp_proxy_log"
VERSION = "4"
INFO = FormatInfo(
    group="mcp", rank=240, domains=('mcp', 'search'), platform="linux",
    summary=("MCP proxy logs (JSON-RPC lines after a prefix, tagged `[REQUEST]` / `[RESPONSE]` lines; a gateway's "
             "audit lines among them read as its tool calls)"),
)

_EXTENSIONS = (".log", ".txt", ".out", ".err", ".jsonl", ".ndjson")
_LEVELS = frozenset({"info", "error", "warn", "warning", "debug", "trace", "notice", "fatal"})

# where a JSON-RPC payload starts in a line: a JSON object with a JSON-RPC key, a Node.js util.inspect dump of
# one (`{ jsonrpc: '2.0', ... }`: keys bare, strings in single quotes), or a lone "{" that may open a
# multi-line one. The cheap lookahead first: a JSON line has many "{" and none is followed by a bare key.
_PAYLOAD = re.compile(r'\{\s*"(?:jsonrpc|method|id|result|error|params)"\s*:'
                      r"|\{(?=\s*\w+:\s)(?=.*\bjsonrpc:\s*')|\{\s*$")
_SNIFF_MESSAGE = re.compile(rb'^[ \t]*(?:\[\d{4}-\d\d-\d\d[T ][^\]\r\n]*\]|[^\s{\["])[^\r\n]*?(?:\{\s*"jsonrpc"\s*:\s*"2\.0"|\{\s*"method"\s*:\s*"[a-z]+/'
                            rb"|\{\s*\w+:\s[^\r\n]*?\bjsonrpc:\s*'2\.0'|Message from (?:client|server): \{)",
                            re.MULTILINE)
_SNIFF_HOST = re.compile(rb'^\d{4}-\d\d-\d\dT[\d:.]+Z \[[^\]\r\n]+\] \[[^\]\r\n]+\] (?:Initializing server\.\.\.|'
                         rb'Server started and connected successfully|Message from (?:client|server):)'
                         rb'|^\[supergateway\] ', re.MULTILINE)
_CLAUDE = re.compile(r'^(?P<ts>\d{4}-\d\d-\d\dT\S+)\s+\[(?P<a>[^\]]*)\]\s+\[(?P<b>[^\]]*)\]\s+'
                     r'Message from (?P<dir>client|server)\b')
_TIME = re.compile(r'^\W{0,2}(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)')
_ARROW = re.compile(r'([\w.\- ]*?)\s*(→|-->|->|=>|←|<--|<-|<=)\s*([\w.\- ]*)')
_TAGGED = re.compile(r'\[(REQUEST|RESPONSE|NOTIFICATION|ERROR)\](.*?)\bPayload:\s*(?=[\{\[])', re.IGNORECASE)
_TAG_METHOD = re.compile(r'\bMethod:\s*([\w/.$-]+)', re.IGNORECASE)
_TAG_ID = re.compile(r'\b(?:request[_ ]?)?id\s*[:=]\s*"?([\w.-]+)"?', re.IGNORECASE)
_SNIFF_TAGGED = re.compile(rb'\[REQUEST\][^\r\n]*\bMethod:\s*(?:[a-z]+/[\w/]+|initialize)\b[^\r\n]*\bPayload:\s*[\{\[]',
                           re.IGNORECASE)
_CUT = re.compile(r'\.\.\.\[\d+ chars truncated\]\.\.\.')  # Claude Desktop's mark where it cut a message
_TRUNCATED = re.compile(r'\[\d+ chars truncated\]|\(truncated\)|\.\.\. ?truncated')
_INSPECT = re.compile(r"\bjsonrpc:\s*'2\.0'")
_JSON_KEY = re.compile(r'^\s*"jsonrpc"\s*:', re.MULTILINE)
_DECODER = json.JSONDecoder()
_RPC_KEYS = ("jsonrpc", "method", "result", "error")
MAX_LOG_RECORDS = 200  # other JSON records kept in env; past it they are counted


def units(files: list[str], head) -> list[str]:
    """Text logs with a JSON-RPC message after a prefix on some line, or a known MCP host's lines."""
    return [path for path in files if path.endswith(_EXTENSIONS) and recognizes(head(path))]


def recognizes(text: bytes) -> bool:
    """Whether some line of `text` is a proxy's message line, a tagged request or a known MCP host's line."""
    return bool(_SNIFF_MESSAGE.search(text) or _SNIFF_HOST.search(text) or _SNIFF_TAGGED.search(text))


def _side(name: str) -> str | None:
    name = name.strip().lower()
    if not name:
        return None
    if "child" in name:  # supergateway: the child process is the MCP server
        return "server"
    if "stdio" in name:  # supergateway's stdio side faces the local client
        return "client"
    if "client" in name or "host" in name:
        return "client"
    if "server" in name:
        return "server"
    return None


def _other(side: str) -> str:
    return "server" if side == "client" else "client"


def _prefix(prefix: str) -> tuple[object, str | None, str | None]:
    """(time as written, channel, sender) that a line's prefix tells."""
    m = _CLAUDE.match(prefix)
    if m:
        a, b = m.group("a"), m.group("b")
        return m.group("ts"), b if a.lower() in _LEVELS else a, m.group("dir")
    stamp = None
    t = _TIME.match(prefix)
    if t:
        stamp = t.group(1).replace(",", ".").replace(" ", "T")
        prefix = prefix[t.end():]
    for a in _ARROW.finditer(prefix):
        left, arrow, right = a.group(1), a.group(2), a.group(3)
        if arrow in ("←", "<-", "<--", "<="):
            left, right = right, left
        sender = _side(left) or (_other(_side(right)) if _side(right) else None)
        if sender:
            return stamp, None, sender
    low = prefix.lower()
    if re.search(r'\b(?:from|sent by) client\b|\bclient\s*:', low):
        return stamp, None, "client"
    if re.search(r'\b(?:from|sent by) server\b|\bserver\s*:', low):
        return stamp, None, "server"
    return stamp, None, direction_of(prefix)


def _decode(text: str):
    """The JSON value at the start of `text` (what follows it, like Claude Desktop's `{ metadata: undefined }`,
    is ignored); raises json.JSONDecodeError."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _DECODER.raw_decode(text)[0]


def _record(line: str):
    """The JSON object a whole line holds when it is no JSON-RPC message (a gateway's audit line), else None."""
    if not line.lstrip().startswith("{"):
        return None
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    return obj if is_call_record(obj) or not any(k in obj for k in _RPC_KEYS) else None


def _lines(source: Source, name: str, records: list) -> Iterator[Message | Rejected]:
    """The messages of the log; (line, object) of the lines that are JSON records of their own go to `records`."""
    text = source.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = text.splitlines()
    no, waiting = 0, []  # waiting: ids of tagged requests not answered yet, oldest first
    while no < len(lines):
        line = lines[no]
        no += 1
        record = _record(line)
        if record is not None:
            records.append((no, record))
            continue
        tagged = _TAGGED.search(line) if "payload" in line.lower() else None  # the tag's words in any case
        if tagged:
            yield _tagged(name, no, line, tagged, waiting)
            continue
        m = _PAYLOAD.search(line) if "{" in line else None
        if m is None:
            continue
        prefix, payload, first = line[:m.start()], line[m.start():], no
        if payload.strip() == "{":  # a multi-line entry: its indented lines and closing brace
            end = first
            while end < len(lines) and (lines[end][:1].isspace() or not lines[end].strip()):
                end += 1
            if end < len(lines) and lines[end][:1] in ("}", "]"):
                end += 1
            payload, no = "\n".join([payload, *lines[first:end]]), end
            if not (_INSPECT.search(payload) or _JSON_KEY.search(payload)):
                continue  # no message: some other multi-line entry (a host's %o dump, an error object)
        try:
            obj = _decode(payload)
        except json.JSONDecodeError as e:
            yield _unreadable(name, first, prefix, payload, e)
            continue
        stamp, channel, sender = _prefix(prefix)
        if not isinstance(obj, dict) or not ("jsonrpc" in obj or (
                ("method" in obj or "result" in obj or "error" in obj) and sender is not None)):
            continue  # JSON that is no JSON-RPC message: a server's own log line
        cut = _CUT.search(payload)
        if cut:
            yield Rejected("truncated_message", f"{name}:{first}: the logger cut this message ({cut.group(0)}); "
                           "what it holds is incomplete, so it is left out", name, line=first,
                           snippet=(prefix + payload)[:500])
            continue
        yield Message(first, obj, stamp, channel=channel, direction=sender)


def _tagged(name: str, no: int, line: str, m: re.Match, waiting: list) -> Message | Rejected:
    """A `[REQUEST] Method: ... Payload: {...}` line (or RESPONSE / NOTIFICATION / ERROR) as its message."""
    tag, middle, prefix, payload = m.group(1).upper(), m.group(2), line[:m.start()], line[m.end():]
    try:
        obj = _decode(payload)
    except json.JSONDecodeError as e:
        return _unreadable(name, no, line[:m.end()], payload, e)
    stamp = _prefix(prefix)[0]
    sender = "client" if tag in ("REQUEST", "NOTIFICATION") else "server"
    if isinstance(obj, dict) and ("jsonrpc" in obj or "method" in obj or "result" in obj or "error" in obj):
        return Message(no, obj, stamp, direction=sender)  # the whole message
    method, mid = _TAG_METHOD.search(middle), _TAG_ID.search(middle)
    mid = _id(mid.group(1)) if mid else None
    if tag == "REQUEST":
        if method is None:
            return Rejected("bad_message", f"{name}:{no}: a [REQUEST] line names no Method:", name, line=no,
                            snippet=line[:500])
        mid = mid if mid is not None else f"line{no}"
        waiting.append(mid)
        return Message(no, {"jsonrpc": "2.0", "id": mid, "method": method.group(1), "params": obj}, stamp,
                       direction=sender)
    if tag == "NOTIFICATION":
        return Message(no, {"jsonrpc": "2.0", "method": method.group(1) if method else "notifications/unknown",
                            "params": obj}, stamp, direction=sender)
    if mid is None and waiting:
        mid = waiting.pop(0)
    elif mid in waiting:
        waiting.remove(mid)
    key = "error" if tag == "ERROR" else "result"
    return Message(no, {"jsonrpc": "2.0", "id": mid, key: obj}, stamp, direction=sender)


def _id(text: str):
    return int(text) if text.isdigit() else text


def _unreadable(name: str, no: int, prefix: str, payload: str, error: json.JSONDecodeError) -> Rejected:
    snippet = (prefix + payload)[:500]
    if _INSPECT.search(payload):
        return Rejected("not_json", f"{name}:{no}: the message is a Node.js util.inspect dump, not JSON (nested "
                        "values may be elided as [Object]); it cannot be read back: log it with JSON.stringify",
                        name, line=no, snippet=snippet)
    cut = _TRUNCATED.search(payload)
    if cut:
        return Rejected("truncated_message", f"{name}:{no}: the logger cut this message short ({cut.group(0)}); "
                        "it cannot be read back", name, line=no, snippet=snippet)
    where = f" at column {len(prefix) + error.pos + 1}" if "\n" not in payload else f" (line {error.lineno} of it)"
    return Rejected("parse_error", f"{name}:{no}: the message after the prefix is not valid JSON: {error.msg}{where}",
                    name, line=no, snippet=snippet)


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    records: list = []
    items = list(_lines(source, name, records))
    calls = [(no, obj) for no, obj in records if is_call_record(obj)]
    others = [{"line": no, "record": obj} for no, obj in records if not is_call_record(obj)]
    found: list[Episode | Rejected] = []
    if any(isinstance(item, Message) for item in items) or not calls:
        found += read_messages(items, source, name, "an MCP log with no readable JSON-RPC message (host or proxy "
                               "lines only: the server may never have started)")
    else:
        found += (item for item in items if isinstance(item, Rejected))
    found += read_calls(calls, name, source, key_prefix="audit:")
    first = next((r for r in found if isinstance(r, Episode)), None)
    if others and first is not None:
        first.env["log_records"] = others[:MAX_LOG_RECORDS]
        if len(others) > MAX_LOG_RECORDS:
            first.env["log_records_left_out"] = len(others) - MAX_LOG_RECORDS
    yield from found
