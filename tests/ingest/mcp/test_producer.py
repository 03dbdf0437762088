"""Producer in the loop: a real stdio session with the official `mcp` SDK, captured on the wire (both
directions, as JSONL and as a proxy log) and at the SDK level, then ingested and validated by `ingest-mcp`.

Needs the `mcp` package (a test dependency: `mcp>=2.3,<3`). Without it these tests skip, except under CI
(CI set), where its absence fails them."""

import importlib.util
import json

import pytest

from tests.conftest import episode_and_steps
from tests.ingest.mcp import mcp_producer
from tests.parts import require

FIELDS = ("step_index", "action", "observation", "final_observation")


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """(capture folder, what the SDK returned for each call)."""
    require("the official MCP SDK (mcp>=2.3,<3)", importlib.util.find_spec("mcp") is not None
            and importlib.util.find_spec("mcp.server.mcpserver") is not None, "pip install 'mcp>=2.3,<3'")
    import anyio  # the SDK's async runtime

    out = tmp_path_factory.mktemp("mcp") / "captures"

    async def bounded():
        with anyio.fail_after(120):  # a hung server fails the test instead of blocking the run
            return await mcp_producer.capture(out)

    return out, anyio.run(bounded)


def test_the_session_is_captured_three_ways(captured):
    out, seen = captured
    assert sorted(p.name for p in out.iterdir()) == ["sdk-calls.jsonl", "wire.jsonl", "wire.log"]
    wire = [json.loads(line) for line in (out / "wire.jsonl").read_text().splitlines()]
    messages = [json.loads(w["message"]) for w in wire]
    sent = [(w["direction"], m.get("method") or ("error" if "error" in m else "result")) for w, m in zip(wire, messages)]
    assert sent[:4] == [("client->server", "initialize"), ("server->client", "result"),
                        ("client->server", "notifications/initialized"), ("client->server", "tools/list")]
    assert sum(d == "client->server" and m == "tools/call" for d, m in sent) == 4
    assert ("server->client", "error") in sent  # memo://missing
    # the proxy log has the same lines, with the server's stderr between them
    log = (out / "wire.log").read_text().splitlines()
    assert [line.split(": ", 1)[1] for line in log if " -> " in line] == [w["message"] for w in wire]
    sdk = [json.loads(line) for line in (out / "sdk-calls.jsonl").read_text().splitlines()]
    assert [(e["type"], e["method"], e["count"]) for e in sdk[:4]] == [
        ("request", "initialize", 1), ("response", "initialize", 1), ("request", "list_tools", 2),
        ("response", "list_tools", 2)]
    assert sdk[4]["args"] == ["add", {"a": 2, "b": 3}] and sdk[5]["result"]["_type"] == "CallToolResult"
    assert isinstance(seen[4], Exception) and sdk[13]["error"] == str(seen[4])


def test_ingest_and_validate_keep_all_three_captures_alike(captured, run, query):
    out, seen = captured
    result = run("ingest-mcp", [out])
    assert result.status == "success", result.messages
    assert result.episodes == 3 and result.steps == 18 and result.quarantined == 0
    assert result.stage_summaries and " 0 errors " in result.stage_summaries[0]
    assert query("SELECT count(*) AS n FROM quarantine")[0]["n"] == 0
    eps = {name: episode_and_steps(query, name) for name in ("wire.jsonl", "wire.log", "sdk-calls.jsonl")}
    assert {n: e["source_format"] for n, (e, _) in eps.items()} == {
        "wire.jsonl": "mcp_jsonrpc", "wire.log": "mcp_proxy_log", "sdk-calls.jsonl": "mcp_sdk"}
    wire_ep, wire_steps = eps["wire.jsonl"]
    sdk_ep, sdk_steps = eps["sdk-calls.jsonl"]

    # tool definitions: the SDK's Tool objects, put back in wire shape, equal what tools/list sent
    tools = [json.loads(e["env"])["tools"] for e, _ in eps.values()]
    assert tools[0] == tools[1] == tools[2]
    assert [t["name"] for t in tools[0]] == ["add", "echo", "fail"]
    assert tools[0][0]["inputSchema"]["required"] == ["a", "b"]
    for e, _ in eps.values():
        assert e["domain"] == "mcp" and e["num_steps"] == 6
        assert json.loads(e["env"])["server"]["serverInfo"]["name"] == "calc"

    # each tools/call (and resources/read) is a step; its result is the next observation
    assert [(s["action"]["kind"], s["action"]["tool_name"], json.loads(s["action"]["arguments"])) for s in wire_steps] == [
        ("tool_call", "add", {"a": 2, "b": 3}), ("tool_call", "echo", {"text": "hello, world"}),
        ("tool_call", "resources/read", {"uri": "memo://readme"}), ("tool_call", "fail", {"reason": "boom"}),
        ("tool_call", "resources/read", {"uri": "memo://missing"}), ("tool_call", "nope", {})]
    results = [s["observation"] for s in wire_steps[1:]] + [wire_steps[-1]["final_observation"]]
    sdk_results = [seen[i] for i in range(len(mcp_producer.CALLS))]
    for obs, got in zip(results, sdk_results):
        if isinstance(got, Exception):  # a JSON-RPC error: the SDK raised
            assert obs["is_error"] is True and obs["text"].endswith(str(got))
        elif hasattr(got, "contents"):
            assert obs["text"] == got.contents[0].text and obs["is_error"] is False
        else:
            assert obs["text"] == got.content[0].text and obs["is_error"] is got.is_error
    assert json.loads(results[0]["ui_tree"]) == seen[0].structured_content == {"result": 5}
    assert results[3]["text"] == "Error executing tool fail: refused: boom" and results[3]["is_error"] is True

    # the three readers agree step by step; only the error text of the raised call lost its code at SDK level
    for name in ("wire.log", "sdk-calls.jsonl"):
        other = eps[name][1]
        for a, b in zip(wire_steps, other):
            for f in FIELDS:
                if f == "action":
                    assert {k: a[f][k] for k in ("kind", "tool_name", "arguments")} == \
                           {k: b[f][k] for k in ("kind", "tool_name", "arguments")}
                elif not (name == "sdk-calls.jsonl" and a["step_index"] == 5 and f == "observation"):
                    assert a[f] == b[f], (name, a["step_index"], f)
    assert sdk_steps[5]["observation"]["text"] == "Error: Unknown resource: memo://missing"
    assert wire_steps[5]["observation"]["text"] == "Error -32602: Unknown resource: memo://missing"

    # wire captures carry the relay's UTC times and the client's name; the SDK level has neither
    assert all(s["timestamp"] is not None for s in wire_steps) and wire_ep["agent"] == "mcp"
    assert all(s["timestamp"] is None for s in sdk_steps) and sdk_ep["agent"] is None
    assert json.loads(sdk_steps[0]["action"]["raw"])["method"] == "call_tool"
    assert json.loads(wire_steps[0]["action"]["raw"])["method"] == "tools/call"
