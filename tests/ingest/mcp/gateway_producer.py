"""The MCP session of `mcp_producer` (the official `mcp` SDK, client and stdio server) run through a real logging
proxy, greenlight-mcp (`greenlight run --capture-payloads -- <server command>`, PyPI, MIT), which writes its own
JSONL session log. greenlight lives in `.venv/producers/greenlight-mcp-<version>/` (`make setup-test`).

`python tests/ingest/mcp/gateway_producer.py GREENLIGHT OUT_DIR [--metadata-only]` runs one session and prints
the path of the log greenlight wrote.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.mcp.mcp_producer import CALLS, HERE as SERVER


async def run(greenlight: Path, out: Path, payloads: bool = True) -> dict:
    """One session through the proxy; returns what the SDK gave back for each call (or the exception)."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    out.mkdir(parents=True, exist_ok=True)
    args = ["run", "--log-dir", str(out), "--name", "calc", *(["--capture-payloads"] if payloads else []),
            "--", sys.executable, str(SERVER), "server"]
    seen = {}
    async with stdio_client(StdioServerParameters(command=str(greenlight), args=args)) as (read, write):
        async with ClientSession(read, write) as session:
            seen["initialize"] = await session.initialize()
            seen["list_tools"] = await session.list_tools()
            for i, (method, call_args, kwargs) in enumerate(CALLS):
                try:
                    seen[i] = await getattr(session, method)(*call_args, **kwargs)
                except Exception as e:  # a JSON-RPC error: the SDK raises, the session goes on
                    seen[i] = e
    return seen


if __name__ == "__main__":
    import anyio

    anyio.run(run, Path(sys.argv[1]), Path(sys.argv[2]), "--metadata-only" not in sys.argv)
    print(*sorted(Path(sys.argv[2]).glob("*.jsonl")), sep="\n")
