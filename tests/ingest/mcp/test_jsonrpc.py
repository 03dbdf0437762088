import json

from ingest.mcp import jsonrpc
from tests.conftest import SAMPLES, episode_and_steps as _episode

MCP = SAMPLES / "mcp"
HAND_WRITTEN = [MCP / "jsonrpc-session.jsonl", MCP / "sdk-capture.jsonl"]


def test_tool_calls_are_paired_with_responses_by_id(run, query):
    result = run("ingest-mcp", HAND_WRITTEN)
    assert result.status == "success" and result.episodes == 2 and result.steps == 7 and result.quarantined == 0
    ep, steps = _episode(query, "jsonrpc-session.jsonl")
    assert ep["source_format"] == "mcp_jsonrpc" and ep["domain"] == "mcp" and ep["agent"] == "example-client"
    assert ep["task"] is None and ep["num_steps"] == 4
    first = steps[0]["action"]
    assert first["kind"] == "tool_call" and first["tool_name"] == "get_weather"
    assert json.loads(first["arguments"]) == {"location": "New York"}
    assert json.loads(first["raw"])["id"] == 4
    assert steps[0]["observation"]["kind"] == "none"  # nothing came back before the first call
    # id 5 was answered before id 4: each result still follows its own call
    weather = steps[1]["observation"]
    assert weather["kind"] == "tool_result" and weather["is_error"] is False
    assert weather["text"] == '{"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}'
    assert json.loads(weather["ui_tree"]) == {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}
    assert steps[2]["observation"]["text"].startswith("New York, 2-day forecast:\nThu: 24°C")
    # a JSON-RPC error and a tool error (isError) are both errors the agent saw
    assert steps[3]["observation"]["text"] == "Error -32602: Unknown tool: get_humidity"
    assert steps[3]["observation"]["is_error"] is True
    final = steps[3]["final_observation"]
    assert final["is_error"] is True and final["text"].startswith("Access denied: /etc/shadow")
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]


def test_tool_schemas_server_and_notifications_are_kept_per_episode(run, query):
    run("ingest-mcp", HAND_WRITTEN)
    ep, _ = _episode(query, "jsonrpc-session.jsonl")
    env = json.loads(ep["env"])
    # both tools/list pages, in order, with their input schemas
    assert [t["name"] for t in env["tools"]] == ["get_weather", "get_forecast", "read_file"]
    assert env["tools"][0]["inputSchema"]["required"] == ["location"]
    assert env["server"]["serverInfo"] == {"name": "weather-server", "title": "Weather Server", "version": "0.3.1"}
    assert env["server"]["protocolVersion"] == "2025-06-18"
    assert env["server"]["instructions"].startswith("Weather data for US cities")
    assert env["client"]["clientInfo"]["name"] == "example-client"
    assert [(n["method"], n["after_step"]) for n in env["notifications"]] == [
        ("notifications/initialized", 0), ("notifications/progress", 1), ("notifications/message", 4)]
    assert env["notifications"][1]["params"]["message"] == "Querying station KNYC"


def test_sdk_capture_with_double_encoded_json(run, query):
    run("ingest-mcp", HAND_WRITTEN)
    ep, steps = _episode(query, "sdk-capture.jsonl")
    assert ep["agent"] == "mcp-sdk-client" and ep["num_steps"] == 3
    assert [t["name"] for t in json.loads(ep["env"])["tools"]] == ["list_tables", "query"]
    assert steps[0]["action"]["tool_name"] == "list_tables" and json.loads(steps[0]["action"]["arguments"]) == {}
    assert json.loads(steps[1]["action"]["arguments"]) == {"sql": "SELECT count(*) AS n FROM orders WHERE status = 'shipped'"}
    # the serialized CallToolResult inside `text` is unwrapped: the agent saw the inner text
    assert steps[1]["observation"]["text"] == "customers\norders\nproducts"
    assert steps[2]["observation"]["text"] == '[{"n": 1342}]'
    assert json.loads(steps[2]["observation"]["ui_tree"]) == {"rows": [{"n": 1342}]}
    assert steps[2]["final_observation"]["text"] == "Error: only SELECT statements are allowed"
    assert steps[2]["final_observation"]["is_error"] is True
    # zoned envelope times become UTC step timestamps
    assert [s["timestamp"].isoformat() for s in steps] == [
        "2025-06-18T09:15:02.120000+00:00", "2025-06-18T09:15:04.512000+00:00", "2025-06-18T09:15:06.002000+00:00"]
    assert ep["started_at"].isoformat() == "2025-06-18T09:15:02.120000+00:00"


def test_a_new_initialize_starts_a_new_episode_and_bad_lines_are_quarantined(run, query, tmp_path):
    lines = (MCP / "jsonrpc-session.jsonl").read_text().splitlines()
    log = tmp_path / "in" / "two-sessions.jsonl"
    log.parent.mkdir()
    log.write_text("\n".join(lines + ["{not json", '{"jsonrpc": "2.0", "id": 99, "result": {}}'] + lines) + "\n")
    result = run("ingest-mcp", [log.parent])
    assert result.episodes == 2 and result.steps == 8 and result.quarantined == 2
    rows = query("SELECT rule, reason, line FROM quarantine ORDER BY line")
    assert [(r["rule"], r["line"]) for r in rows] == [("parse_error", 18), ("unpaired_response", 19)]
    assert rows[0]["reason"].startswith("two-sessions.jsonl:18: invalid JSON")
    assert rows[1]["reason"] == "two-sessions.jsonl:19: response id 99 answers no request"
    assert sorted(r["n"] for r in query("SELECT num_steps AS n FROM episodes")) == [4, 4]


def test_units_sniff_jsonrpc_content_even_inside_string_envelopes():
    heads = {"/l/a.jsonl": b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"}',
             "/l/b.log": b'{"ts": 1, "message": "{\\"jsonrpc\\": \\"2.0\\", \\"method\\": \\"tools/list\\"}"}',
             "/l/c.jsonl": b'{"task": "mcp", "id": 1, "prompt": []}', "/l/d.txt": b'{"jsonrpc": "2.0"}'}
    assert jsonrpc.units(sorted(heads), heads.get) == ["/l/a.jsonl", "/l/b.log"]
    # a text log with a prefix before each message is mcp_proxy_log's, not this reader's
    prefixed = {"/l/p.log": b'2025-06-30T06:11:46.000Z [w] [info] Message from client: {"jsonrpc": "2.0", "id": 0, "method": "initialize"}'}
    assert jsonrpc.units(list(prefixed), prefixed.get) == []


def test_a_shell_tool_over_mcp_stays_a_tool_call(run, query, tmp_path):
    log = tmp_path / "in" / "shell.jsonl"
    log.parent.mkdir()
    log.write_text(
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": "ls"}}}\n'
        '{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "a.txt"}]}}\n')
    result = run("ingest-mcp", [log.parent])
    assert result.episodes == 1 and result.quarantined == 0
    step = query("SELECT * FROM steps")[0]
    assert step["action"]["kind"] == "tool_call" and step["action"]["tool_name"] == "bash"
    assert json.loads(step["action"]["arguments"]) == {"command": "ls"}
    assert step["final_observation"]["text"] == "a.txt"
    assert query("SELECT platform FROM episodes")[0]["platform"] == "linux"


def _log(tmp_path, name: str, lines: list[str]):
    path = tmp_path / "in" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path.parent


def test_envelope_directions_keep_server_requests_apart_from_client_ids(run, query, tmp_path):
    """The server's `roots/list` request reuses id 1 while the client's tools/call 1 is open: the direction of
    each envelope keeps the two apart."""
    env = lambda d, m: json.dumps({"direction": d, "message": json.dumps(m)})
    inp = _log(tmp_path, "dirs.jsonl", [
        env("client->server", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ls", "arguments": {}}}),
        env("server->client", {"jsonrpc": "2.0", "id": 1, "method": "roots/list"}),
        env("client->server", {"jsonrpc": "2.0", "id": 1, "result": {"roots": [{"uri": "file:///srv"}]}}),
        env("server->client", {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "a.txt"}]}}),
    ])
    result = run("ingest-mcp", [inp], stages=["ingest"])
    assert result.episodes == 1 and result.quarantined == 0
    step = query("SELECT * FROM steps")[0]
    assert step["action"]["tool_name"] == "ls" and step["final_observation"]["text"] == "a.txt"


def test_sessions_without_tool_calls_are_reported_not_dropped(run, query, tmp_path):
    inp = _log(tmp_path, "no-calls.jsonl", [
        '{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"clientInfo": {"name": "c"}}}',
        '{"jsonrpc": "2.0", "id": 0, "result": {"serverInfo": {"name": "s"}}}',
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
    ])
    result = run("ingest-mcp", [inp], stages=["ingest"])
    assert result.episodes == 0 and result.quarantined == 1
    row = query("SELECT rule, reason, line FROM quarantine")[0]
    assert row["rule"] == "empty_episode" and row["line"] == 1
    assert row["reason"] == ("no-calls.jsonl: session 1 made no tool call, so it has no step (3 messages: "
                             "initialize, tools/list; 1 request never answered: the server may have exited)")


def test_a_restarted_server_reusing_ids_pairs_with_its_own_session(run, query, tmp_path):
    call = lambda i, tool: json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
    inp = _log(tmp_path, "restart.jsonl", [
        '{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}',
        call(1, "slow"),  # never answered: the server died
        '{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}',
        call(1, "fast"),
        '{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "done"}]}}',
    ])
    result = run("ingest-mcp", [inp], stages=["ingest"])
    assert result.episodes == 2 and result.quarantined == 0
    rows = query("SELECT s.action.tool_name AS tool, s.final_observation.text AS final, e.env "
                 "FROM steps s JOIN episodes e USING (episode_id) ORDER BY tool")
    assert [(r["tool"], r["final"]) for r in rows] == [("fast", "done"), ("slow", None)]
    assert json.loads(rows[1]["env"])["unanswered_calls"] == 1
