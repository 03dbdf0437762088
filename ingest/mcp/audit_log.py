"""MCP audit and gateway logs in JSON lines, the two shapes logging proxies write:

- **Message logs** (one JSON-RPC message per line, described rather than copied), as greenlight-mcp writes them
  (`greenlight run [--capture-payloads] -- <server>`, `greenlight/proxy.py`, `ProxySession.record`):
  `{"ts": <epoch s>, "direction": "client->server" | "server->client", "parsed": true, "id", "type": "request" |
  "notification" | "result" | "error", "method", "payload": <params or result as JSON text>, "request_payload",
  "latency_ms", "error": {code, message}, "tool_error": true, "tool_error_message", "tools": [summaries]}`. Each
  line is turned back into its JSON-RPC message and the session is built as for `mcp_jsonrpc` (one episode per
  session, each `tools/call` / `resources/read` / `prompts/get` a step, results paired by id). Without
  `--capture-payloads` greenlight logs metadata only: the tool and its arguments are unknown, so such a session
  is one `no_payloads` row that says how to record them. A payload cut at greenlight's `--payload-limit`
  (`payload_truncated`) is a `truncated_message` row; a line greenlight could not parse (`parsed: false`) an
  `unparsed_line` row with its text; `proxy_error` lines (the server could not start, HTTP errors) a
  `proxy_error` row. greenlight redacts secret-looking values before writing (`[redacted]`): they stay so.
- **Call logs** (one tool call per line, request and outcome together), as audit middlewares and gateways write
  them: read by `ingest.mcp.call_log` (its docstring says which fields are read).

A file that opens with such lines but most of whose lines are a proxy's text log (`[REQUEST] Method: ... |
Payload: {...}` lines after a gateway's audit lines) is not this format's: `units` does not claim it when its
first bytes show it, and `read` hands it to the proxy-log reader when they did not (lines longer than the first
bytes), which reads each line by the reader it belongs to (`ingest.mcp.proxy_log`).

Episodes are domain `mcp` (`search` for search tools), platform `linux`, never terminated (a log has no goal).
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.mcp import proxy_log
from ingest.mcp.call_log import read_calls
from ingest.mcp.jsonrpc import Message, read_messages
from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError, parse_json, text_lines
from ingest.tools import dumps

FORMAT = "mcp_audit_log"
VERSION = "2"
INFO = FormatInfo(
    group="mcp", rank=250, domains=('mcp', 'search'), platform="linux",
    summary="gateway audit logs (greenlight-mcp, one tool call per line)",
    producer=("greenlight-mcp (stdio logging proxy) JSONL; per-call audit lines (`toolName` / `params` / `result` or "
              "`error`)"),
    versions="greenlight-mcp 0.7.0",
    proof=("greenlight runs in front of the `mcp` SDK's stdio server while the SDK client calls it; its log must read"
           " as the byte-level wire capture of the same session (`tests/ingest/mcp/test_audit_log.py`); per-call "
           "lines: hand-made in documented gateway shapes, and two real MCP servers' call logs in `../shared/samples`"
           " (goldens)"),
)

_GREENLIGHT = re.compile(rb'^\{"ts":\s*[0-9.]+,\s*"direction":\s*"(?:client->server|server->client)",\s*"parsed"')
_CALL_SNIFF = re.compile(rb'^\{[^\n]*"(?:toolName|tool_name)"\s*:\s*"[^\n]*"(?:params|arguments|args|tool_args|input_data)"\s*:')


def units(files: list[str], head) -> list[str]:
    """JSONL files whose first line is a greenlight record, or a call record with a tool name and arguments, and
    most of whose first lines are JSON (not a proxy's text log that opens with audit lines)."""
    found = []
    for path in files:
        if path.endswith((".jsonl", ".ndjson", ".log", ".json")):
            start = head(path).lstrip(b"\xef\xbb\xbf \t\r\n")
            if (_GREENLIGHT.match(start) or _CALL_SNIFF.match(start)) and not _mostly_text(start):
                found.append(path)
    return found


def _mostly_text(data: bytes) -> bool:
    """Whether most non-blank lines of `data` are no JSON object and some are a proxy log's lines."""
    objects = data.count(b"\n{") + data.startswith(b"{")  # lines that open with an object: never text
    if data.count(b"\n") + 1 - objects <= objects:  # the other lines cannot be most: no line split needed
        return False
    lines = [line for line in data.split(b"\n") if line.strip()]
    text = sum(not line.lstrip().startswith(b"{") for line in lines)
    return text * 2 > len(lines) and proxy_log.recognizes(data)


def read(source: Source) -> Iterator[Episode | Rejected]:
    data = source.read_bytes()
    if _mostly_text(data):
        yield from proxy_log.read(source)
        return
    name = posixpath.basename(source.path)
    lines = _json_lines(data, source.budgets.line_bytes)
    if lines is not None:  # every line JSON: nothing to quarantine
        yield from _read_lines(lines, source, name)
        return
    lines, rejected = [], []
    for no, line, problem in text_lines(data, name, source.budgets):
        if problem:
            rejected.append(Rejected("parse_error", problem, name, line=no))
        elif line.strip():
            try:  # the line as it is (orjson reads a str); a bad one again as bytes, for parse_json's error
                lines.append((no, orjson.loads(line)))
            except orjson.JSONDecodeError:
                try:
                    lines.append((no, parse_json(line.encode(), f"{name}:{no}")))
                except SourceError as e:
                    rejected.append(Rejected(e.rule, e.reason, name, line=no, snippet=line[:300]))
    yield from rejected
    yield from _read_lines(lines, source, name)


def _json_lines(data: bytes, limit: int) -> list | None:
    """(line number, value) of each non-blank line when every line is JSON within the `line_bytes` budget `limit`
    (without a carriage return), parsed as bytes at once; None when one is not: the log is then read line by
    line, as text, for the rows its bad lines get."""
    lines = data.split(b"\n")
    if b"\r" in data or max(map(len, lines)) > limit:  # a line the line-by-line reading must look into
        return None
    try:  # blank lines left out (no stripped copy of each line)
        return [(no, orjson.loads(raw)) for no, raw in enumerate(lines, 1) if raw and not raw.isspace()]
    except orjson.JSONDecodeError:
        return None


def _read_lines(lines: list, source: Source, name: str) -> Iterator[Episode | Rejected]:
    first = next((obj for _, obj in lines if isinstance(obj, dict)), {})
    if "direction" in first and "parsed" in first:
        yield from _read_messages(lines, source, name)
    else:
        yield from read_calls(lines, name, source)


# --- message logs (greenlight) ------------------------------------------------------------------------------

def _read_messages(lines: list, source: Source, name: str) -> Iterator[Episode | Rejected]:
    entries = [(no, e) for no, e in lines if isinstance(e, dict)]
    calls = [e for _, e in entries if e.get("type") == "request" and e.get("method") == "tools/call"]
    if calls and not any("payload" in e for e in calls):
        yield Rejected("no_payloads", f"{name}: greenlight logged this session without --capture-payloads: its "
                       f"{len(calls)} tool calls have no tool names, arguments or results (rerun with `greenlight run "
                       "--capture-payloads`)", name)
        return
    yield from read_messages(_messages(entries, name), source, name, "no MCP message in the greenlight log")


def _messages(entries: list, name: str) -> Iterator[Message | Rejected]:
    for no, e in entries:
        kind, direction = e.get("type"), e.get("direction")
        sender = "client" if direction == "client->server" else "server" if direction == "server->client" else None
        if e.get("parsed") is False:
            yield Rejected("unparsed_line", f"{name}:{no}: greenlight relayed a line that is not JSON-RPC",
                           name, line=no, snippet=str(e.get("raw"))[:500])
            continue
        if kind == "proxy_error":
            yield Rejected("proxy_error", f"{name}:{no}: {(e.get('error') or {}).get('message')}", name, line=no)
            continue
        if e.get("payload_truncated"):
            yield Rejected("truncated_message", f"{name}:{no}: greenlight cut this {kind}'s payload at its "
                           "--payload-limit; what it holds is incomplete, so it is left out", name, line=no,
                           snippet=str(e.get("payload"))[:500])
            continue
        msg = _message(e)
        if msg is None:
            yield Rejected("bad_message", f"{name}:{no}: a greenlight record of type {kind!r} with an unreadable "
                           "payload", name, line=no, snippet=dumps(e)[:500])
            continue
        yield Message(no, msg, e.get("ts"), direction=sender, raw=e)


def _message(e: dict) -> dict | None:
    """The JSON-RPC message a greenlight record describes; None when its payload is not JSON."""
    kind, payload = e.get("type"), e.get("payload")
    try:
        value = orjson.loads(payload) if isinstance(payload, str) else None
    except orjson.JSONDecodeError:
        return None
    msg = {"jsonrpc": "2.0"}
    if "id" in e:
        msg["id"] = e["id"]
    if kind in ("request", "notification"):
        msg.update(method=e.get("method"), params=value if isinstance(value, dict) else {})
    elif kind == "error":
        msg["error"] = e.get("error") if isinstance(e.get("error"), dict) else {"message": str(e.get("error"))}
    elif value is not None:
        msg["result"] = value
    elif e.get("method") == "tools/list" and isinstance(e.get("tools"), list):
        msg["result"] = {"tools": [{k: t.get(k) for k in ("name", "description") if t.get(k) is not None}
                                   for t in e["tools"] if isinstance(t, dict)]}
    elif e.get("tool_error"):
        msg["result"] = {"content": [{"type": "text", "text": e.get("tool_error_message") or ""}], "isError": True}
    else:
        msg["result"] = {}
    return msg
