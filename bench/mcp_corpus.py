"""Generated MCP logs for the readers' benchmark (`bench/readers.py`): long sessions no bundled sample has.

- `jsonrpc_session`: one `mcp_jsonrpc` session in envelopes (`timestamp`, `direction`, `message`): initialize,
  tools/list, then `calls` tools/call requests whose results come back out of order (each window of `window`
  requests answered shuffled, as a server answering concurrent calls does);
- `call_log`: `calls` lines of an `mcp_audit_log` call log (one tool call and its result per line, a session, a
  server, a time, fields the mapping keeps in `env.calls`).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

_START = dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc)


def _at(ms: int) -> str:
    return (_START + dt.timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z")


def jsonrpc_session(path: Path, calls: int = 20_000, window: int = 8, seed: int = 1) -> None:
    rnd = random.Random(seed)
    lines = []

    def put(direction: str, msg: dict) -> None:
        lines.append(json.dumps({"timestamp": _at(7 * len(lines)), "direction": direction, "message": msg}))

    put("client->server", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "clientInfo": {"name": "bench", "version": "1"}, "capabilities": {}}})
    put("server->client", {"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": "2025-06-18", "serverInfo": {"name": "fs", "version": "1"}, "capabilities": {"tools": {}}}})
    put("client->server", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    put("client->server", {"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
    put("server->client", {"jsonrpc": "2.0", "id": "list", "result": {"tools": [
        {"name": "read_file", "description": "Read a file", "inputSchema": {"type": "object"}}]}})
    waiting: list[int] = []
    for i in range(1, calls + 1):
        put("client->server", {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "read_file", "arguments": {"path": f"/src/module_{i}.py"}}})
        waiting.append(i)
        if len(waiting) == window or i == calls:
            rnd.shuffle(waiting)
            for mid in waiting:
                put("server->client", {"jsonrpc": "2.0", "id": mid, "result": {
                    "content": [{"type": "text", "text": f"def f{mid}():\n    return {mid}\n"}], "isError": False}})
            waiting = []
    path.write_text("\n".join(lines) + "\n")


def call_log(path: Path, calls: int = 20_000, seed: int = 0) -> None:
    with open(path, "w") as f:
        for i in range(seed * calls, (seed + 1) * calls):
            f.write(json.dumps({"timestamp": _at(13 * i), "sessionId": "s1", "serverName": "fs", "toolName": "read_file",
                                "params": {"path": f"/src/module_{i}.py"}, "result": f"def f{i}(): return {i}",
                                "duration_ms": 3, "user": "alice"}) + "\n")
