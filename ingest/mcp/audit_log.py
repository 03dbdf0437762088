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
  them: a tool name (`toolName`, `tool_name`, `tool`), its arguments (`params`, `arguments`, `args`,
  `tool_args`, `input`, `input_data`), its outcome (`result` / `response` / `output` / `output_data`, or
  `error`), a time (`timestamp`, `time`, `ts`) and optionally a server (`serverName`, `server_name`, `server`)
  and a session (`sessionId`, `session_id`). Each line is one step: consecutive lines of one (session, server) are one
  episode (key `<session>` or `<server>`, "" when neither is named), in file order. The outcome is the next
  step's observation (`is_error` when an `error` is set, or a `blocked` call); an outcome that is an MCP
  `CallToolResult` (`content` items) is read as `mcp_jsonrpc` reads results. Fields this mapping does not use
  (`duration_ms`, `user`, `policy`...) are kept per step in `env["calls"]`, and so is a time without a zone
  (`datetime.utcnow().isoformat()` writes none): the step's timestamp is then null.

Episodes are domain `mcp` (`search` for search tools), platform `linux`, never terminated (a log has no goal).
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.mcp.jsonrpc import Message, call_result, read_messages
from ingest.record import Episode, Observation, Rejected, Step
from ingest.search import episode_domain
from ingest.source import Source, SourceError, parse_json, text_lines
from ingest.times import parse_time
from ingest.tools import dumps, tool_action

FORMAT = "mcp_audit_log"
VERSION = "1"
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
TOOL_KEYS = ("toolName", "tool_name", "tool")
ARGS_KEYS = ("params", "arguments", "args", "tool_args", "input", "input_data")
RESULT_KEYS = ("result", "response", "output", "output_data")
TIME_KEYS = ("timestamp", "time", "ts")
SERVER_KEYS = ("serverName", "server_name", "server")
SESSION_KEYS = ("sessionId", "session_id")
_CALL_SNIFF = re.compile(rb'^\{[^\n]*"(?:toolName|tool_name)"\s*:\s*"[^\n]*"(?:params|arguments|args|tool_args|input_data)"\s*:')


def units(files: list[str], head) -> list[str]:
    """JSONL files whose first line is a greenlight record, or a call record with a tool name and arguments."""
    found = []
    for path in files:
        if path.endswith((".jsonl", ".ndjson", ".log", ".json")):
            start = head(path).lstrip(b"\xef\xbb\xbf \t\r\n")
            if _GREENLIGHT.match(start) or _CALL_SNIFF.match(start):
                found.append(path)
    return found


def _first(obj: dict, keys: tuple[str, ...]):
    return next((obj[k] for k in keys if k in obj), None)


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    lines, rejected = [], []
    for no, line, problem in text_lines(source.read_bytes(), name, source.budgets):
        if problem:
            rejected.append(Rejected("parse_error", problem, name, line=no))
        elif line.strip():
            try:
                lines.append((no, parse_json(line.encode(), f"{name}:{no}")))
            except SourceError as e:
                rejected.append(Rejected(e.rule, e.reason, name, line=no, snippet=line[:300]))
    yield from rejected
    first = next((obj for _, obj in lines if isinstance(obj, dict)), {})
    if "direction" in first and "parsed" in first:
        yield from _read_messages(lines, source, name)
    else:
        yield from _read_calls(lines, name, source)


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


# --- call logs (one tool call per line) ---------------------------------------------------------------------

def _read_calls(lines: list, name: str, source: Source) -> Iterator[Episode | Rejected]:
    groups: dict[tuple, list] = {}
    for no, obj in lines:
        tool = _first(obj, TOOL_KEYS) if isinstance(obj, dict) else None
        if not isinstance(tool, str):
            yield Rejected("bad_record", f"{name}:{no}: a call record needs a tool name ({' / '.join(TOOL_KEYS)})",
                           name, line=no, snippet=dumps(obj)[:300])
            continue
        key = (_first(obj, SESSION_KEYS), _first(obj, SERVER_KEYS))
        groups.setdefault(key, []).append((no, tool, obj))
    for (session, server), calls in groups.items():
        yield _call_episode(session, server, calls, source)


def _call_episode(session, server, calls: list, source: Source) -> Episode:
    steps, obs, extras = [], Observation(), []
    used = {*TOOL_KEYS, *ARGS_KEYS, *RESULT_KEYS, *TIME_KEYS, *SERVER_KEYS, *SESSION_KEYS, "error", "blocked"}
    for no, tool, obj in calls:
        args = _first(obj, ARGS_KEYS)
        timestamp = parse_time(_first(obj, TIME_KEYS))
        steps.append(Step(obs, tool_action(tool, args if args is not None else {}, dumps(obj),
                                           shell_as_command=False), timestamp=timestamp))
        obs = _outcome(obj, tool, source)
        extra = {"line": no, **{k: v for k, v in obj.items() if k not in used}}
        if timestamp is None:  # a time without a zone (or none at all) is kept as written, not dropped
            extra.update({k: obj[k] for k in TIME_KEYS if k in obj})
        extras.append(extra)
    env = {"calls": extras}
    if server is not None:
        env["server_name"] = server
    if session is not None:
        env["session_id"] = session
    return Episode(key=str(session if session is not None else server if server is not None else ""),
                   domain=episode_domain([s.action.tool_name for s in steps], "mcp"), platform="linux",
                   steps=steps, final_observation=obs, terminated=False, env=env)


def _outcome(obj: dict, tool: str, source: Source) -> Observation:
    error = obj.get("error")
    if error not in (None, "", False) or obj.get("blocked"):
        text = error.get("message") if isinstance(error, dict) else str(error or obj.get("block_reason") or "blocked")
        return Observation(kind="tool_result", text=text, is_error=True)
    result = _first(obj, RESULT_KEYS)
    if isinstance(result, dict) and isinstance(result.get("content"), list):  # an MCP CallToolResult
        return call_result(tool, {"result": result}, source)
    if result is None:
        return Observation(kind="tool_result")
    return Observation(kind="tool_result", text=result if isinstance(result, str) else dumps(result))
