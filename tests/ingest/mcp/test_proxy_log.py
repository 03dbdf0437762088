"""Proxy and host logs (`mcp_proxy_log`): a JSON-RPC message after a prefix on each line.

The Claude Desktop and supergateway lines below follow the line formats of real logs (Claude Desktop's
`mcp-server-NAME.log` / `mcp.log`, supergateway 3.x's `logger.info` calls); their content is made up, except
the logs in data/claude-desktop (real, MIT, see data/PROVENANCE.md).
"""

import json
from pathlib import Path

from ingest.mcp import proxy_log
from pipelines.infra import definition
from pipelines.infra.plan import find_units
from tests.conftest import SAMPLES, episode_and_steps
from tests.parts import SHARED, require_shared_sample

MCP = SAMPLES / "mcp"
DATA = Path(__file__).parent / "data"
META = " { metadata: undefined }"
GOLDEN = Path(__file__).parents[1] / "golden"


def _log(tmp_path, name: str, text: str):
    path = tmp_path / "in" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path.parent


def _claude(ts, who, msg, server="weather", meta=True):
    return f"{ts} [{server}] [info] Message from {who}: {json.dumps(msg, separators=(',', ':'))}{META if meta else ''}"


def _call(i, tool, args):
    return {"method": "tools/call", "params": {"name": tool, "arguments": args}, "jsonrpc": "2.0", "id": i}


def _ok(i, text, **extra):
    return {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}], "isError": False, **extra}}


WEATHER_TOOLS = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
    {"name": "get_current_weather", "description": "Current weather for a city",
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]}}

CLAUDE_SERVER_LOG = "\n".join([
    "2025-06-30T06:11:45.990Z [weather] [info] Initializing server..." + META,
    "2025-06-30T06:11:45.997Z [weather] [info] Using MCP server command: /usr/bin/python3 with args and path: {",
    "  metadata: {",
    "    args: [ '/srv/weather.py', [length]: 1 ],",
    "    paths: [ '/usr/local/bin', '/usr/bin', [length]: 2 ]",
    "  }",
    "} %o",
    "2025-06-30T06:11:45.999Z [weather] [info] Server started and connected successfully" + META,
    _claude("2025-06-30T06:11:46.000Z", "client", {"method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "claude-ai", "version": "0.1.0"}},
        "jsonrpc": "2.0", "id": 0}),
    "Starting Weather MCP Server...",  # the server's stderr
    _claude("2025-06-30T06:11:46.780Z", "server", {"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": "2024-11-05", "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "weather-server", "version": "1.9.4"}}}),
    _claude("2025-06-30T06:11:46.781Z", "client", {"method": "notifications/initialized", "jsonrpc": "2.0"}),
    _claude("2025-06-30T06:11:46.782Z", "client", {"method": "tools/list", "params": {}, "jsonrpc": "2.0", "id": 1}),
    _claude("2025-06-30T06:11:46.784Z", "server", WEATHER_TOOLS),
    _claude("2025-06-30T06:12:22.229Z", "client", _call(9, "get_current_weather", {"city": "Bogor"})),
    "Getting current weather for: Bogor",
    _claude("2025-06-30T06:12:22.273Z", "client", {"method": "resources/list", "params": {}, "jsonrpc": "2.0", "id": 10}),
    _claude("2025-06-30T06:12:22.276Z", "server", {"jsonrpc": "2.0", "id": 10, "error": {"code": -32601, "message": "Method not found"}}),
    _claude("2025-06-30T06:12:22.354Z", "server", _ok(9, "Bogor: 30.1°C, broken clouds")),  # after id 10's
    # Claude Desktop cuts long messages: this call cannot be read back
    '2025-06-30T06:13:01.387Z [weather] [info] Message from client: {"method":"tools/call","params":{"name":'
    '"get_current_weather","arguments":{"city":"Jomb...[8499 chars truncated]...ng"}},"jsonrpc":"2.0","id":14}' + META,
    _claude("2025-06-30T06:13:01.528Z", "server", _ok(14, "Jombang: 27.0°C")),
    _claude("2025-06-30T06:17:08.824Z", "client", _call(19, "get_current_weather", {"city": "Salatiga"})),
    _claude("2025-06-30T06:17:09.011Z", "server", {"jsonrpc": "2.0", "id": 19, "result": {
        "content": [{"type": "text", "text": "City not found"}], "isError": True}}),
    "2025-06-30T06:37:41.739Z [weather] [info] Client transport closed" + META,
]) + "\n"


def test_claude_desktop_server_log(run, query, tmp_path):
    result = run("ingest-mcp", [_log(tmp_path, "mcp-server-weather.log", CLAUDE_SERVER_LOG)])
    assert result.status == "success" and result.episodes == 1
    ep, steps = episode_and_steps(query, "mcp-server-weather.log")
    assert ep["source_format"] == "mcp_proxy_log" and ep["agent"] == "claude-ai" and ep["domain"] == "mcp"
    env = json.loads(ep["env"])
    assert env["server_name"] == "weather" and env["server"]["serverInfo"]["name"] == "weather-server"
    assert [t["name"] for t in env["tools"]] == ["get_current_weather"]
    assert [json.loads(s["action"]["arguments"]) for s in steps] == [{"city": "Bogor"}, {"city": "Salatiga"}]
    assert steps[1]["observation"]["text"] == "Bogor: 30.1°C, broken clouds"  # paired by id, not by order
    assert steps[1]["final_observation"] == {**steps[1]["final_observation"], "text": "City not found", "is_error": True}
    assert [s["timestamp"].isoformat() for s in steps] == ["2025-06-30T06:12:22.229000+00:00",
                                                          "2025-06-30T06:17:08.824000+00:00"]
    # the cut call is quarantined, and so is the answer it can no longer be paired with
    rows = query("SELECT rule, reason, line FROM quarantine WHERE stage = 'ingest' ORDER BY line")
    assert [(r["rule"], r["line"]) for r in rows] == [("truncated_message", 20), ("unpaired_response", 21)]
    assert rows[0]["reason"] == ("mcp-server-weather.log:20: the logger cut this message (...[8499 chars truncated]...);"
                                 " what it holds is incomplete, so it is left out")


def test_claude_desktop_combined_log_keeps_each_server_apart(run, query, tmp_path):
    """mcp.log writes `[info] [server]` and interleaves all servers, whose ids collide."""
    def line(ts, server, who, msg):
        return f"{ts} [info] [{server}] Message from {who}: {json.dumps(msg)}"

    init = {"method": "initialize", "params": {"clientInfo": {"name": "claude-ai", "version": "0.1.0"}}, "jsonrpc": "2.0", "id": 0}
    text = "\n".join([
        line("2025-02-22T04:14:49.196Z", "filesystem", "client", init),
        line("2025-02-22T04:14:49.200Z", "github", "client", init),
        line("2025-02-22T04:14:49.300Z", "github", "server", {"jsonrpc": "2.0", "id": 0, "result": {"serverInfo": {"name": "gh"}}}),
        line("2025-02-22T04:14:49.310Z", "filesystem", "server", {"jsonrpc": "2.0", "id": 0, "result": {"serverInfo": {"name": "fs"}}}),
        line("2025-02-22T04:14:50.000Z", "filesystem", "client", _call(1, "list_directory", {"path": "/srv"})),
        line("2025-02-22T04:14:50.001Z", "github", "client", _call(1, "search_repositories", {"query": "mcp"})),
        line("2025-02-22T04:14:50.100Z", "github", "server", _ok(1, "3 repositories")),
        line("2025-02-22T04:14:50.200Z", "filesystem", "server", _ok(1, "[FILE] a.txt")),
    ]) + "\n"
    result = run("ingest-mcp", [_log(tmp_path, "mcp.log", text)], stages=["ingest"])
    assert result.episodes == 2 and result.quarantined == 0
    rows = query("SELECT json_extract_string(e.env, '$.server_name') AS server, "
                 "json_extract_string(e.env, '$.server.serverInfo.name') AS info, "
                 "s.action.tool_name AS tool, s.final_observation.text AS final "
                 "FROM steps s JOIN episodes e USING (episode_id) ORDER BY server")
    assert [(r["server"], r["info"], r["tool"], r["final"]) for r in rows] == [
        ("filesystem", "fs", "list_directory", "[FILE] a.txt"), ("github", "gh", "search_repositories", "3 repositories")]


SUPERGATEWAY_LOG = "\n".join([
    "[supergateway] Starting...",
    "[supergateway]   - outputTransport: streamableHttp",
    "[supergateway] Listening on port 8000",
    '[supergateway] StreamableHttp → Child: {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"openai-mcp","version":"1.0.0"}}}',
    "[supergateway] Child stderr: Secure MCP Filesystem Server running on stdio",
    '[supergateway] Child → StreamableHttp: {"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"secure-filesystem-server","version":"0.2.0"}},"jsonrpc":"2.0","id":0}',
    '[supergateway] StreamableHttp → Child: {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/srv/a.txt"}}}',
    # the server asks the client for its roots with an id the client's call also has
    '[supergateway] Child → StreamableHttp: {"jsonrpc":"2.0","id":1,"method":"roots/list"}',
    '[supergateway] StreamableHttp → Child: {"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///srv"}]}}',
    '[supergateway] Child → StreamableHttp: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}',
    # stdio -> SSE mode logs the server's messages with util.inspect: not JSON
    "[supergateway] Child → SSE: { jsonrpc: '2.0', id: 2, result: { content: [ [Object] ] } }",
    "[supergateway] Child → SSE: {",
    "  jsonrpc: '2.0',",
    "  id: 3,",
    "  result: {",
    "    content: [ [Object] ]",
    "  }",
    "}",
    "[supergateway] StreamableHttp connection closed (session undefined)",
]) + "\n"


def test_supergateway_log_with_directions_and_unreadable_inspect_dumps(run, query, tmp_path):
    result = run("ingest-mcp", [_log(tmp_path, "gateway.log", SUPERGATEWAY_LOG)], stages=["ingest"])
    assert result.episodes == 1
    ep, steps = episode_and_steps(query, "gateway.log")
    assert ep["agent"] == "openai-mcp"
    assert steps[0]["action"]["tool_name"] == "read_file" and steps[0]["final_observation"]["text"] == "hello"
    rows = query("SELECT rule, reason, line FROM quarantine ORDER BY line")
    assert [(r["rule"], r["line"]) for r in rows] == [("not_json", 11), ("not_json", 12)]
    assert rows[0]["reason"].startswith("gateway.log:11: the message is a Node.js util.inspect dump, not JSON")


def test_tee_log_with_arrows_and_a_pretty_printed_message(run, query, tmp_path):
    text = "\n".join([
        "12:00:01 INFO relay started",
        '2025-05-02T14:00:03+02:00 → {"jsonrpc": "2.0", "id": "a1", "method": "tools/call", '
        '"params": {"name": "web_search", "arguments": {"query": "duckdb parquet"}}}',
        "2025-05-02T14:00:04+02:00 ← {",
        '  "jsonrpc": "2.0",',
        '  "id": "a1",',
        '  "result": {"content": [{"type": "text", "text": "[1] https://duckdb.org/docs/data/parquet\\nTitle: Parquet\\nSnippet: Read Parquet files\\nDate: N/A"}]}',
        "}",
        '2025-05-02T14:00:05+02:00 → {"jsonrpc": "2.0", "id": "a2", "method": "tools/call", "params": {"name": "web_search", "arguments": {"query": 1}',
        "2025-05-02T14:00:06+02:00 relay stopped",
    ]) + "\n"
    result = run("ingest-mcp", [_log(tmp_path, "relay.txt", text)], stages=["ingest"])
    assert result.episodes == 1 and result.quarantined == 1
    ep, steps = episode_and_steps(query, "relay.txt")
    assert ep["domain"] == "search" and ep["source_format"] == "mcp_proxy_log"
    assert steps[0]["timestamp"].isoformat() == "2025-05-02T12:00:03+00:00"
    final = steps[0]["final_observation"]
    assert final["text"].startswith("[1] https://duckdb.org/docs/data/parquet")
    assert json.loads(final["ui_tree"])["results"][0]["title"] == "Parquet"
    row = query("SELECT rule, reason, line FROM quarantine")[0]
    assert row["rule"] == "parse_error" and row["line"] == 8
    assert row["reason"].startswith("relay.txt:8: the message after the prefix is not valid JSON:")


def test_real_claude_desktop_logs_of_servers_that_never_started_are_reported(run, query):
    """data/claude-desktop: real logs (MIT) where every initialize went unanswered."""
    result = run("ingest-mcp", [DATA / "claude-desktop"])
    assert result.status == "success" and result.episodes == 0 and result.quarantined == 8
    rows = query("SELECT source_uri, rule, reason, line FROM quarantine ORDER BY source_uri, line")
    assert {r["rule"] for r in rows} == {"empty_episode"}
    assert rows[0] == {"source_uri": "claude-desktop/mcp-server-filesystem.log", "rule": "empty_episode", "line": 3,
                       "reason": "mcp-server-filesystem.log: session 1 (filesystem) made no tool call, so it has no "
                                 "step (1 message: initialize; 1 request never answered: the server may have exited)"}
    servers = sorted({r["reason"].split("(", 1)[1].split(")", 1)[0] for r in rows if r["source_uri"].endswith("/mcp.log")})
    assert servers == ["filesystem", "server"]


def test_a_host_log_without_any_message_says_so(run, query, tmp_path):
    text = "\n".join([
        "2025-06-30T00:28:56.183Z [info] [mix_server] Initializing server...",
        "2025-06-30T00:28:56.191Z [error] [mix_server] spawn uv ENOENT",
        "2025-06-30T00:28:56.192Z [info] [mix_server] Server transport closed",
    ]) + "\n"
    result = run("ingest-mcp", [_log(tmp_path, "mcp.log", text)], stages=["ingest"])
    assert result.episodes == 0 and result.quarantined == 1
    row = query("SELECT rule, reason FROM quarantine")[0]
    assert row["rule"] == "no_messages" and row["reason"].startswith("mcp.log: an MCP log with no readable JSON-RPC message")


def test_bundled_wire_log_reads_like_the_wire_jsonl(run, query):
    """samples/mcp/sdk-stdio: one real session recorded as JSONL envelopes and as a proxy log with the server's
    stderr between the lines: both readers give the same steps."""
    result = run("ingest-mcp", [MCP / "sdk-stdio" / "wire.jsonl", MCP / "sdk-stdio" / "wire.log"])
    assert result.status == "success" and result.episodes == 2 and result.quarantined == 0
    jsonl = episode_and_steps(query, "wire.jsonl")
    log = episode_and_steps(query, "wire.log")
    assert (jsonl[0]["source_format"], log[0]["source_format"]) == ("mcp_jsonrpc", "mcp_proxy_log")
    fields = ("step_index", "observation", "action", "final_observation", "timestamp")
    assert [{k: s[k] for k in fields} for s in jsonl[1]] == [{k: s[k] for k in fields} for s in log[1]]
    assert json.loads(jsonl[0]["env"]) == json.loads(log[0]["env"])
    assert log[1][4]["observation"]["text"] == "Error executing tool fail: refused: boom"
    assert log[1][5]["observation"]["text"] == "Error -32602: Unknown resource: memo://missing"


def test_units_claim_prefixed_logs_only():
    heads = {
        "/l/mcp-server-weather.log": CLAUDE_SERVER_LOG.encode()[:4096],
        "/l/gateway.log": SUPERGATEWAY_LOG.encode(),
        "/l/only-host.log": b"2025-06-30T00:28:56.183Z [mix] [info] Initializing server...\n",
        "/l/tee.txt": b'12:00 start\n2025-05-02T14:00:03Z -> {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\n',
        "/l/bare.jsonl": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\n',
        "/l/app.log": b'2025-05-02 INFO started\n2025-05-02 INFO {"level": "info", "msg": "ok"}\n',
        "/l/rpc.json": b'x {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
    }
    assert proxy_log.units(sorted(heads), heads.get) == [
        "/l/gateway.log", "/l/mcp-server-weather.log", "/l/only-host.log", "/l/tee.txt"]


def test_ingest_all_sends_each_mcp_capture_to_its_reader(tmp_path):
    (tmp_path / "mixed").mkdir()
    for name, text in {"a.log": CLAUDE_SERVER_LOG, "b.log": SUPERGATEWAY_LOG}.items():
        (tmp_path / "mixed" / name).write_text(text)
    units, _ = find_units([str(MCP), str(DATA), str(tmp_path / "mixed")], definition.load("ingest-all").formats)
    got = {u.uri: u.format for u in units}
    assert got == {
        "mcp/jsonrpc-session.jsonl": "mcp_jsonrpc", "mcp/sdk-capture.jsonl": "mcp_jsonrpc",
        "mcp/sdk-stdio/wire.jsonl": "mcp_jsonrpc", "mcp/sdk-stdio/wire.log": "mcp_proxy_log",
        "mcp/sdk-stdio/sdk-calls.jsonl": "mcp_sdk",
        "data/claude-desktop/mcp.log": "mcp_proxy_log", "data/claude-desktop/mcp-server-filesystem.log": "mcp_proxy_log",
        "mixed/a.log": "mcp_proxy_log", "mixed/b.log": "mcp_proxy_log",
        # its first 4 KB are audit lines only: the audit reader claims it and hands it on (test below)
        "data/mixed-audit-proxy.log": "mcp_audit_log",
    }


def test_a_proxy_log_that_opens_with_audit_lines_ingests_every_call(run, query):
    """data/mixed-audit-proxy.log (hand-made, PROVENANCE.md): three audit JSON lines, then a proxy's tagged
    `[REQUEST] Method: tools/call | ... | Payload: {...}` lines. Each line is read by the reader it belongs to:
    26 steps where a person counts 26 tool calls (23 in the proxy's session, 3 audit calls), no quarantine row."""
    result = run("ingest-mcp", [DATA / "mixed-audit-proxy.log"], stages=["ingest"])
    assert (result.episodes, result.quarantined) == (2, 0)
    rows = query("SELECT e.source_format, count(*) AS steps FROM steps s JOIN episodes e USING (episode_id) "
                 "GROUP BY 1")
    assert rows == [{"source_format": "mcp_audit_log", "steps": 26}]


def test_multi_line_entries_are_told_apart(run, query, tmp_path):
    """A Node.js object dump of an error is no message; inspect dumps of messages (whatever their key order) and
    broken pretty-printed JSON messages are quarantined, each once, at their first line."""
    text = "\n".join([
        "Error accessing directory /srv/x: Error: ENOENT: no such file or directory, stat '/srv/x' {",
        "  errno: -2,",
        "  error: 'ENOENT',",
        "  path: '/srv/x'",
        "}",
        '2025-05-02T14:00:03Z client -> server: {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ls", "arguments": {}}}',
        "[supergateway] Child → SSE: { result: { content: [ [Object] ] }, jsonrpc: '2.0', id: 2 }",
        "[supergateway] Child → SSE: {",
        "  result: {",
        "    content: [ [Object] ]",
        "  },",
        "  jsonrpc: '2.0',",
        "  id: 3",
        "}",
        "2025-05-02T14:00:04Z server -> client: {",
        '  "jsonrpc": "2.0",',
        '  "id": 1,',
        '  "result": {"content": [',
        "}",
        '2025-05-02T14:00:05Z server -> client: {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "a.txt"}]}}',
    ]) + "\n"
    result = run("ingest-mcp", [_log(tmp_path, "mixed.log", text)], stages=["ingest"])
    assert result.episodes == 1
    assert query("SELECT s.final_observation.text AS t FROM steps s")[0]["t"] == "a.txt"
    rows = query("SELECT rule, line FROM quarantine ORDER BY line")
    assert [(r["rule"], r["line"]) for r in rows] == [("not_json", 7), ("not_json", 8), ("parse_error", 15)]


def test_tagged_request_logs_with_only_params_and_results(tmp_path):
    """`[REQUEST] Method: ... Payload: {...}` logs (hand-made: no producer of this shape installs here). The payload
    is only the params / result: the message is rebuilt from tag, method and id, a response without an id answers
    the oldest waiting request, and a request without a method is one `bad_message` row."""
    from ingest.mcp import proxy_log
    from tests.ingest.golden import read_records

    log = tmp_path / "audit.log"
    log.write_text("\n".join([
        '2025-07-02T10:00:00.100Z INFO [REQUEST] Method: initialize | ID: 0 | Payload: {"protocolVersion": '
        '"2025-06-18", "clientInfo": {"name": "agent", "version": "1"}, "capabilities": {}}',
        '2025-07-02T10:00:00.180Z INFO [RESPONSE] ID: 0 | Payload: {"serverInfo": {"name": "files"}}',
        '2025-07-02T10:00:01.000Z INFO [REQUEST] Method: tools/call | ID: 1 | Payload: {"name": "read_file", '
        '"arguments": {"path": "README.md"}}',
        '2025-07-02T10:00:01.050Z INFO [RESPONSE] ID: 1 | Payload: {"content": [{"type": "text", "text": "# Demo"}]}',
        '2025-07-02T10:00:02.000Z INFO [REQUEST] Method: tools/call | Payload: {"name": "rm", "arguments": {"p": "/"}}',
        '2025-07-02T10:00:02.010Z WARN [ERROR] Payload: {"code": -32603, "message": "refused"}',
        '2025-07-02T10:00:03.000Z INFO [REQUEST] Payload: {"name": "x"}',
        '2025-07-02T10:00:04.000Z INFO [REQUEST] Method: tools/call | id=7 | Payload: {"jsonrpc": "2.0", "id": 7, '
        '"method": "tools/call", "params": {"name": "ls", "arguments": {}}}',
    ]) + "\n")
    assert proxy_log.units([str(log)], lambda p: open(p, "rb").read(4096)) == [str(log)]
    records = read_records(proxy_log, log)
    assert [(r.rule, r.line) for r in records if not hasattr(r, "steps")] == [("bad_message", 7)]
    [ep] = [r for r in records if hasattr(r, "steps")]
    assert [(s.action.tool_name, s.action.arguments) for s in ep.steps] == [
        ("read_file", '{"path":"README.md"}'), ("rm", '{"p":"/"}'), ("ls", "{}")]
    assert ep.steps[1].observation.text == "# Demo"
    assert (ep.steps[2].observation.text, ep.steps[2].observation.is_error) == ("Error -32603: refused", True)
    assert ep.steps[0].timestamp.isoformat() == "2025-07-02T10:00:01+00:00"
    assert ep.env["server"]["serverInfo"] == {"name": "files"} and ep.agent == "agent"


REDES = SHARED / "samples" / "mcp" / "proyecto-1-redes" / "mcp.log"


def test_real_client_tee_log_with_bracketed_times():
    """JorgeAndrino21616/Proyecto-1-Redes's `logs/mcp.log` (no license: ../shared, see its PROVENANCE.md), written
    by its stdio MCP client (`mcp_client.py`: `[<utc time>Z] >>> <request>`, `<<< <response>`, `START <command>`
    per server process) against its own `lol-champion-builder` 0.3.0 server, whose results are bare objects
    (no `content`). A person counts 58 requests in 23 `initialize`-led runs; the first process sent only
    `fetch_static_data`, without `initialize`, so its messages open the first session: 22 sessions, of which
    10 call `plan_build` (12 calls, one `plan_builder` that was no tool) and 12 make no tool call (rejected,
    as sessions without a step). 6 of the 10 end on an
    error result (the data not loaded, a missing argument key...); 4 end on a build. The reader once
    missed the file (a line opening with `[`) and read the bare results as empty text."""
    from ingest.record import Episode, Rejected
    from tests.ingest.golden import check, read_records

    path = require_shared_sample(REDES)
    assert proxy_log.units([str(path)], lambda p: Path(p).read_bytes()[:4096]) == [str(path)]
    records = read_records(proxy_log, path)
    episodes = [r for r in records if isinstance(r, Episode)]
    rejected = [r for r in records if isinstance(r, Rejected)]
    assert {r.rule for r in rejected} == {"empty_episode"} and len(rejected) == 12
    assert [len(e.steps) for e in episodes] == [1, 1, 2, 1, 1, 1, 2, 1, 1, 1]
    assert [s.action.tool_name for e in episodes for s in e.steps].count("plan_builder") == 1
    assert [e.final_observation.is_error for e in episodes] == [True, True, True, True, True, False, False, True,
                                                                 False, False]
    assert "Data Dragon (dd) is not initialized" in episodes[0].final_observation.text
    build = json.loads(episodes[5].final_observation.text)  # a bare result object, kept whole
    assert build["comp"]["picks"] == ["morgana", "lulu", "ryze", "garen", "aatrox"]
    assert episodes[0].steps[0].timestamp.isoformat() == "2025-09-24T01:18:42.018403+00:00"
    assert all(e.env["server"]["serverInfo"] == {"name": "lol-champion-builder", "version": "0.3.0"}
               for e in episodes)
    check(records, GOLDEN / "mcp-proxy-proyecto-1-redes.json", texts="hash")
