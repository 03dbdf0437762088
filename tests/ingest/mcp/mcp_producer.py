"""A real MCP session made with the official `mcp` SDK (2.x), captured three ways at once.

- `server`: a small MCPServer on stdio: tools `add`, `echo`, `fail` (raises ToolError), resource `memo://readme`.
- `tee`: a relay between the client and the server process: it passes stdin/stdout through byte for byte and
  writes each line it passes, in both directions, to `wire.jsonl` (`{"timestamp", "direction", "message": <the
  line as sent>}`, read by `mcp_jsonrpc`) and to `wire.log` (`<time> client -> server: <the line>`, with the
  server's stderr lines in between, as proxies log; read by `mcp_proxy_log`).
- `capture(out)`: a `ClientSession` over `stdio_client` that starts the server through the tee and calls it; the
  session is wrapped by a recorder that writes the SDK-level calls to `sdk-calls.jsonl` in the layout of the
  interceptor in clouvelai/explore-mcp (`{"type": "request", "timestamp", "count", "method", "args",
  "kwargs"}` / `{"type": "response", "timestamp", "count", "method", "result", "error"}`, results dumped as
  `{"_type": <class>, **fields}`; read by `mcp_sdk`).

`python tests/ingest/mcp/mcp_producer.py capture DIR` writes the three files to DIR (how samples/mcp/sdk-stdio
was made).
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve()
WIRE_JSONL, WIRE_LOG, SDK_CALLS = "wire.jsonl", "wire.log", "sdk-calls.jsonl"

# (method, args, kwargs) the client makes after initialize and list_tools
CALLS = [
    ("call_tool", ("add", {"a": 2, "b": 3}), {}),
    ("call_tool", ("echo",), {"arguments": {"text": "hello, world"}}),
    ("read_resource", ("memo://readme",), {}),
    ("call_tool", ("fail", {"reason": "boom"}), {}),
    ("read_resource", ("memo://missing",), {}),  # a JSON-RPC error: the SDK raises
    ("call_tool", ("nope", {}), {}),  # unknown tool: an isError result
]


def serve() -> None:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    app = MCPServer("calc", instructions="Arithmetic and echo tools, and a readme resource.", version="0.1.0")

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @app.tool()
    def fail(reason: str) -> str:
        """Always refuses, with the reason."""
        raise ToolError(f"refused: {reason}")

    @app.resource("memo://readme")
    def readme() -> str:
        """How to use this server."""
        return "Call add with two integers; echo returns its text."

    app.run("stdio")


def tee(out: Path, command: list[str]) -> int:
    """Relay stdin -> command -> stdout, logging every line passed (and the command's stderr)."""
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lock = threading.Lock()
    wire_jsonl = open(out / WIRE_JSONL, "ab")
    wire_log = open(out / WIRE_LOG, "ab")

    def record(sender: str, line: bytes) -> None:
        line = line.rstrip(b"\r\n")
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        other = "server" if sender == "client" else "client"
        with lock:
            wire_jsonl.write(json.dumps({"timestamp": now, "direction": f"{sender}->{other}",
                                         "message": line.decode("utf-8", "replace")}).encode() + b"\n")
            wire_log.write(f"{now} {sender} -> {other}: ".encode() + line + b"\n")
            wire_jsonl.flush()
            wire_log.flush()

    def upstream() -> None:
        for line in sys.stdin.buffer:
            record("client", line)
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    def stderr() -> None:
        for line in child.stderr:
            with lock:
                wire_log.write(line if line.endswith(b"\n") else line + b"\n")
                wire_log.flush()

    threading.Thread(target=upstream, daemon=True).start()
    err = threading.Thread(target=stderr, daemon=True)
    err.start()
    for line in child.stdout:
        record("server", line)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    code = child.wait()
    err.join(timeout=5)
    return code


def _serialize(obj):
    """An SDK object as the explore-mcp interceptor writes it: `_type` and its public attributes."""
    if hasattr(obj, "__dict__"):
        return {"_type": type(obj).__name__,
                **{k: _serialize(v) for k, v in vars(obj).items() if not k.startswith("_")}}
    if isinstance(obj, (list, tuple)):
        return [_serialize(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _serialize(v) for k, v in obj.items()}
    if isinstance(obj, (str, int, float, bool, type(None))):
        return obj
    return str(obj)


class Recorder:
    """Writes each ClientSession call and its result (or exception) as one JSON line."""

    def __init__(self, path: Path):
        self.path, self.requests, self.responses = path, 0, 0

    def _write(self, entry: dict) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    async def call(self, session, method: str, *args, **kwargs):
        self.requests += 1
        self._write({"type": "request", "timestamp": dt.datetime.now().isoformat(), "count": self.requests,
                     "method": method, "args": _serialize(args), "kwargs": _serialize(kwargs)})
        try:
            result = await getattr(session, method)(*args, **kwargs)
        except Exception as e:
            self.responses += 1
            self._write({"type": "response", "timestamp": dt.datetime.now().isoformat(), "count": self.responses,
                         "method": method, "result": None, "error": str(e)})
            raise
        self.responses += 1
        self._write({"type": "response", "timestamp": dt.datetime.now().isoformat(), "count": self.responses,
                     "method": method, "result": _serialize(result), "error": None})
        return result


async def capture(out: Path) -> dict:
    """Run the session; returns what the SDK gave back for each call (results, or the exception text)."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    out.mkdir(parents=True, exist_ok=True)
    params = StdioServerParameters(command=sys.executable,
                                   args=[str(HERE), "tee", str(out), "--", sys.executable, str(HERE), "server"])
    recorder = Recorder(out / SDK_CALLS)
    seen = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            seen["initialize"] = await recorder.call(session, "initialize")
            seen["list_tools"] = await recorder.call(session, "list_tools")
            for i, (method, args, kwargs) in enumerate(CALLS):
                try:
                    seen[i] = await recorder.call(session, method, *args, **kwargs)
                except Exception as e:  # the recorder wrote it; the session goes on
                    seen[i] = e
    return seen


def main(argv: list[str]) -> int:
    if argv[:1] == ["server"]:
        serve()
        return 0
    if argv[:1] == ["tee"] and "--" in argv:
        cut = argv.index("--")
        return tee(Path(argv[1]), argv[cut + 1:])
    if argv[:1] == ["capture"] and len(argv) == 2:
        import anyio

        anyio.run(capture, Path(argv[1]))
        return 0
    print("usage: mcp_producer.py server | tee OUT_DIR -- COMMAND... | capture OUT_DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
