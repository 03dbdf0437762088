"""MCP sessions captured at the Python SDK level: the calls a program made on `mcp.ClientSession`, not the wire.

Recorders that wrap `ClientSession` (e.g. the MCP interceptor of clouvelai/explore-mcp) write one JSON object
per call and one per result:

    {"type": "request", "timestamp": "...", "count": 3, "method": "call_tool",
     "args": ["add", {"a": 2, "b": 3}], "kwargs": {}}
    {"type": "response", "timestamp": "...", "count": 3, "method": "call_tool",
     "result": {"_type": "CallToolResult", "content": [{"_type": "TextContent", "type": "text", "text": "5"}],
                "structured_content": {"result": 5}, "is_error": false, ...}, "error": null}

or one JSON object per session, `{"session_id", "server_info", "calls": [{"request": {"method", "args",
"kwargs", "timestamp"}, "response": {"success", "result", "error", "timestamp"}}]}`.

Results are pydantic objects dumped whole: `_type` names the class, field names are the SDK's (camelCase in
`mcp` 1.x, snake_case in 2.x and in `model_dump()`); both are read. A response is paired with the request of
the same `method` and `count` (requests and responses are counted apart, so concurrent calls may not line
up: then with the oldest open request of that method); in a session record, with the request of its own call
(a call without a response leaves its request unanswered).

The SDK methods map to MCP requests (`call_tool` is `tools/call`, `read_resource` `resources/read`,
`get_prompt` `prompts/get`, `list_tools` `tools/list`, `initialize` `initialize`), and episodes are built as
for `mcp_jsonrpc` (see `ingest.mcp.jsonrpc`): each `call_tool` a tool_call step whose next observation is its
result (`is_error` from the result, or the exception the call raised: the `error` string), `env["tools"]`
from `list_tools` (in MCP's wire shape: `inputSchema`...), `env["server"]` from `initialize`. The action's
`raw` is the request entry as written. SDK recorders stamp local times without a zone: those become null.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.mcp.jsonrpc import Message, read_messages
from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.tools import dumps

FORMAT = "mcp_sdk"
VERSION = "2"
INFO = FormatInfo(
    group="mcp", rank=60, domains=('mcp', 'search'), platform="linux",
    summary="MCP SDK captures (tool schemas from `tools/list` in `env.tools`)",
    producer="the `mcp` SDK",
    versions="2.3",
    proof="a stdio server and client session captured three ways (`tests/ingest/mcp/test_producer.py`)",
)

# ClientSession method -> (MCP method, names of its positional parameters)
METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    "initialize": ("initialize", ()),
    "list_tools": ("tools/list", ("cursor",)),
    "call_tool": ("tools/call", ("name", "arguments", "read_timeout_seconds", "progress_callback")),
    "list_resources": ("resources/list", ("cursor",)),
    "list_resource_templates": ("resources/templates/list", ("cursor",)),
    "read_resource": ("resources/read", ("uri",)),
    "subscribe_resource": ("resources/subscribe", ("uri",)),
    "unsubscribe_resource": ("resources/unsubscribe", ("uri",)),
    "list_prompts": ("prompts/list", ("cursor",)),
    "get_prompt": ("prompts/get", ("name", "arguments")),
    "complete": ("completion/complete", ("ref", "argument", "context_arguments")),
    "set_logging_level": ("logging/setLevel", ("level",)),
    "send_ping": ("ping", ()),
    "send_roots_list_changed": ("notifications/roots/list_changed", ()),
    "send_progress_notification": ("notifications/progress", ("progress_token", "progress", "total", "message")),
}
_NOTIFICATIONS = frozenset({"send_roots_list_changed", "send_progress_notification"})
_KEEP = {  # params kept per MCP method (the rest are client options: timeouts, callbacks)
    "tools/call": ("name", "arguments"), "prompts/get": ("name", "arguments"), "resources/read": ("uri",),
}
# values under these keys are free-form JSON, not SDK objects: their keys are left as written
_FREE = frozenset({"inputSchema", "outputSchema", "structuredContent", "arguments", "experimental", "_meta",
                   "properties", "params"})

_SNIFF_CALL = re.compile(rb'"type"\s*:\s*"(?:request|response)"')
_SNIFF_METHOD = re.compile(rb'"method"\s*:\s*"(?:' + b"|".join(m.encode() for m in METHODS) + rb')"')
_SNIFF_SESSION = re.compile(rb'"session_id"\s*:.*"calls"\s*:\s*\[\s*\{\s*"request"\s*:', re.DOTALL)


def units(files: list[str], head) -> list[str]:
    """JSON lines whose first entry is an SDK-level request/response record, or an SDK session record."""
    found = []
    for path in files:
        if not path.endswith((".jsonl", ".json", ".ndjson", ".log")):
            continue
        start = head(path)
        if not start.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
            continue
        first = start.split(b"\n", 1)[0]
        if (_SNIFF_CALL.search(first) and _SNIFF_METHOD.search(first) and b'"count"' in first) \
                or _SNIFF_SESSION.search(first):
            found.append(path)
    return found


def _camel(key: str) -> str:
    if key == "meta":
        return "_meta"
    if "_" not in key.strip("_"):
        return key
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def wire(value, free: bool = False):
    """An SDK object dump in MCP's wire shape: camelCase field names, no `_type`, no null fields; free-form
    JSON inside it (schemas, arguments, structured content) is left as written."""
    if isinstance(value, list):
        return [wire(v, free) for v in value]
    if not isinstance(value, dict) or free:
        return value
    out = {}
    for key, v in value.items():
        if key == "_type" or v is None:
            continue
        name = _camel(key) if isinstance(key, str) else key
        out[name] = wire(v, name in _FREE)
    return out


def _text(value) -> str | None:
    """A URI or name as the SDK serializer left it; None when it is lost (a recorder that dumps objects by
    their public attributes writes a pydantic `AnyUrl` as `{"_type": "AnyUrl"}`: the action's `raw` keeps that)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("url", "uri", "value", "_url"):
            if isinstance(value.get(key), str):
                return value[key]
        return None
    return None if value is None else str(value)


def _params(sdk_method: str, args, kwargs) -> dict:
    method, names = METHODS.get(sdk_method, (sdk_method, ()))
    bound = dict(zip(names, args if isinstance(args, list) else []))
    if isinstance(kwargs, dict):
        bound.update(kwargs)
    keep = _KEEP.get(method)
    params = {k: bound[k] for k in keep if k in bound} if keep else {}
    if "uri" in params:
        params["uri"] = _text(params["uri"])
    if "name" in params:
        params["name"] = _text(params["name"])
    if "arguments" in params and params["arguments"] is None:
        params["arguments"] = {}
    return params


def _records(data: bytes, name: str) -> Iterator[tuple[int, dict | None, dict] | Rejected]:
    """(line, session record or None, call entry) for each SDK request/response, in order."""
    for no, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line.removeprefix(b"\xef\xbb\xbf") if no == 1 else line)
        except orjson.JSONDecodeError as e:
            yield Rejected("parse_error", f"{name}:{no}: invalid JSON: {e}", name, line=no,
                           snippet=line[:500].decode(errors="replace"))
            continue
        if isinstance(entry, dict) and isinstance(entry.get("calls"), list):
            for call in entry["calls"]:
                request = call.get("request") if isinstance(call, dict) else None
                response = call.get("response") if isinstance(call, dict) else None
                if not isinstance(request, dict):
                    yield Rejected("not_sdk_call", f"{name}:{no}: a session call without its request", name,
                                   line=no, snippet=dumps(call)[:500])
                    continue
                yield no, entry, {**request, "type": "request"}
                if isinstance(response, dict):
                    yield no, entry, {"method": request.get("method"), **response, "type": "response",
                                      "_paired": True}
            continue
        if not isinstance(entry, dict) or entry.get("type") not in ("request", "response") \
                or not isinstance(entry.get("method"), str):
            yield Rejected("not_sdk_call", f"{name}:{no}: entry is no SDK request or response record "
                           "(needs type request|response and a method)", name, line=no, snippet=dumps(entry)[:500])
            continue
        yield no, None, entry


def _messages(source: Source, name: str, infos: dict) -> Iterator[Message | Rejected]:
    open_requests: list[tuple[str, object, str]] = []  # (sdk method, count, message id)
    for item in _records(source.read_bytes(), name):
        if isinstance(item, Rejected):
            yield item
            continue
        no, session, entry = item
        sdk_method = entry["method"]
        hint = None
        if session is not None:
            hint = session.get("session_id") or f"line{no}"
            infos.setdefault(hint, {k: session[k] for k in ("server_info", "metadata", "started_at", "ended_at")
                                    if session.get(k)})
        stamp = entry.get("timestamp")
        if entry["type"] == "request":
            method = METHODS.get(sdk_method, (sdk_method, ()))[0]
            params = _params(sdk_method, entry.get("args"), entry.get("kwargs"))
            if method == "tools/call" and not params.get("name"):
                yield Rejected("bad_call", f"{name}:{no}: call_tool without a tool name", name, line=no,
                               snippet=dumps(entry)[:500])
                continue
            mid = f"sdk:{no}:{len(open_requests)}:{entry.get('count')}"
            msg = {"jsonrpc": "2.0", "method": method, "params": params}
            if sdk_method not in _NOTIFICATIONS:
                msg["id"] = mid
                open_requests.append((sdk_method, entry.get("count"), mid))
            raw = {k: v for k, v in entry.items() if k != "_paired"}
            yield Message(no, msg, stamp, direction="client", raw=raw, session=hint)
            continue
        same = [r for r in open_requests if r[0] == sdk_method]
        if entry.get("_paired"):  # a session record's response follows its own request: the newest open one
            match = same[-1] if same else None
        else:
            match = next((r for r in same if r[1] == entry.get("count")), None) or (same[0] if same else None)
        if match is None:
            yield Rejected("unpaired_response", f"{name}:{no}: {sdk_method} response (count "
                           f"{entry.get('count')!r}) answers no request", name, line=no, snippet=dumps(entry)[:500])
            continue
        open_requests.remove(match)
        error = entry.get("error")
        if error is not None and error is not False and entry.get("success") is not True:
            msg = {"jsonrpc": "2.0", "id": match[2], "error": {"message": error if isinstance(error, str) else dumps(error)}}
        else:
            result = wire(entry.get("result"))
            msg = {"jsonrpc": "2.0", "id": match[2], "result": result if result is not None else {}}
        yield Message(no, msg, stamp, direction="server", session=hint)


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    infos: dict = {}
    for record in read_messages(_messages(source, name, infos), source, name, "no SDK request or response to read"):
        if isinstance(record, Episode) and record.env.get("session_id") in infos:
            record.env["capture"] = infos[record.env["session_id"]]
        yield record
