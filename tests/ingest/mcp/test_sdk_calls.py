"""SDK-level captures (`mcp_sdk`): ClientSession calls and their pydantic result dumps."""

import base64
import json

from ingest.mcp import sdk_calls
from tests.conftest import SAMPLES, episode_and_steps

STDIO = SAMPLES / "mcp" / "sdk-stdio"


def _write(tmp_path, name: str, entries: list):
    path = tmp_path / "in" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in entries))
    return path.parent


# The layout of the explore-mcp interceptor with `mcp` 1.x objects (camelCase fields, `_type`), as in its real
# capture mcp_interceptor/mcp_trace.log; the content here is made up.
def _request(count, method, args=(), kwargs=None, ts="2025-10-30T19:45:07.056181"):
    return {"type": "request", "timestamp": ts, "count": count, "method": method, "args": list(args),
            "kwargs": kwargs or {}}


def _response(count, method, result=None, error=None, ts="2025-10-30T19:45:07.429025"):
    return {"type": "response", "timestamp": ts, "count": count, "method": method, "result": result, "error": error}


def _text(text):
    return {"_type": "TextContent", "type": "text", "text": text, "annotations": None, "meta": None}


def _result(*content, is_error=False, structured=None):
    return {"_type": "CallToolResult", "meta": None, "content": list(content), "structuredContent": structured,
            "isError": is_error}


V1_SESSION = [
    _request(1, "initialize"),
    _response(1, "initialize", {
        "_type": "InitializeResult", "meta": None, "protocolVersion": "2025-06-18",
        "capabilities": {"_type": "ServerCapabilities", "experimental": None, "logging": {"_type": "LoggingCapability"},
                         "prompts": None, "resources": None, "tools": {"_type": "ToolsCapability", "listChanged": True},
                         "completions": None},
        "serverInfo": {"_type": "Implementation", "name": "notes-server", "title": None, "version": "1.2.0",
                       "websiteUrl": None, "icons": None},
        "instructions": "Notes are plain text."}),
    _request(2, "list_tools"),
    _response(2, "list_tools", {"_type": "ListToolsResult", "meta": None, "nextCursor": None, "tools": [
        {"_type": "Tool", "name": "find_notes", "title": "Find notes", "description": "Search notes by words",
         "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}, "max_results": {"type": "integer"}},
                         "required": ["query"]},
         "outputSchema": None, "icons": None,
         "annotations": {"_type": "ToolAnnotations", "title": None, "readOnlyHint": True, "destructiveHint": None,
                         "idempotentHint": None, "openWorldHint": None}, "meta": None},
        {"_type": "Tool", "name": "render_chart", "title": None, "description": "Chart of note counts",
         "inputSchema": {"type": "object", "properties": {}}, "outputSchema": None, "icons": None,
         "annotations": None, "meta": None}]}),
    _request(3, "call_tool", ["find_notes", {"query": "parquet", "max_results": 2}]),
    _response(3, "call_tool", _result(_text("notes/parquet.md\nnotes/arrow.md"),
                                      structured={"paths": ["notes/parquet.md", "notes/arrow.md"]})),
    _request(4, "call_tool", ["render_chart"], {"arguments": None}),
    _response(4, "call_tool", _result({"_type": "ImageContent", "type": "image", "mimeType": "image/png",
                                       "data": base64.b64encode(b"\x89PNG fake").decode(), "annotations": None,
                                       "meta": None})),
    _request(5, "read_resource", [{"_type": "AnyUrl"}], {}),  # how that serializer writes a pydantic AnyUrl
    _request(6, "call_tool", [], {"name": "delete_note", "arguments": {"path": "notes/arrow.md"}}),
    _response(5, "read_resource", None, error="Unknown resource"),
    _response(6, "call_tool", None, error="Unknown tool: delete_note"),
]


def test_v1_objects_with_camel_case_fields_make_a_session(run, query, tmp_path):
    inp = _write(tmp_path, "mcp_trace.log", V1_SESSION)
    result = run("ingest-mcp", [inp])
    assert result.status == "success" and result.episodes == 1 and result.quarantined == 0
    ep, steps = episode_and_steps(query, "mcp_trace.log")
    assert ep["source_format"] == "mcp_sdk" and ep["domain"] == "mcp" and ep["agent"] is None
    env = json.loads(ep["env"])
    assert env["server"] == {"serverInfo": {"name": "notes-server", "version": "1.2.0"}, "protocolVersion": "2025-06-18",
                             "capabilities": {"logging": {}, "tools": {"listChanged": True}},
                             "instructions": "Notes are plain text."}
    # tool definitions in MCP's wire shape: no `_type`, no nulls; the schema is left as written (max_results)
    assert env["tools"][0] == {"name": "find_notes", "title": "Find notes", "description": "Search notes by words",
                               "inputSchema": {"type": "object", "properties": {"query": {"type": "string"},
                                                                                "max_results": {"type": "integer"}},
                                               "required": ["query"]},
                               "annotations": {"readOnlyHint": True}}
    assert [s["action"]["tool_name"] for s in steps] == ["find_notes", "render_chart", "resources/read", "delete_note"]
    assert [json.loads(s["action"]["arguments"]) for s in steps] == [
        {"query": "parquet", "max_results": 2}, {}, {"uri": None}, {"path": "notes/arrow.md"}]
    assert json.loads(steps[0]["action"]["raw"]) == V1_SESSION[4]  # the SDK request as recorded
    assert steps[1]["observation"]["text"] == "notes/parquet.md\nnotes/arrow.md"
    assert json.loads(steps[1]["observation"]["ui_tree"]) == {"paths": ["notes/parquet.md", "notes/arrow.md"]}
    assert steps[2]["observation"]["text"].startswith("[image sha256:")  # the image went to the blob store
    assert steps[3]["observation"] == {**steps[3]["observation"], "text": "Error: Unknown resource", "is_error": True}
    final = steps[3]["final_observation"]
    assert final["text"] == "Error: Unknown tool: delete_note" and final["is_error"] is True
    # the recorder's local times have no zone: never guessed
    assert all(s["timestamp"] is None for s in steps) and ep["started_at"] is None


def test_responses_pair_by_method_and_count_when_calls_overlap(tmp_path, run, query):
    inp = _write(tmp_path, "overlap.jsonl", [
        _request(1, "call_tool", ["a", {}]), _request(2, "call_tool", ["b", {}]),
        _response(2, "call_tool", _result(_text("B"))), _response(1, "call_tool", _result(_text("A"))),
    ])
    run("ingest-mcp", [inp], stages=["ingest"])
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["tool_name"] for s in steps] == ["a", "b"]
    assert steps[1]["observation"]["text"] == "A" and steps[1]["final_observation"]["text"] == "B"


def test_session_records_are_one_episode_each(run, query, tmp_path):
    def session(sid, tool, text):
        return {"session_id": sid, "server_info": {"url": "https://example.test/mcp", "transport": "http"},
                "calls": [{"request": {"method": "initialize", "args": [], "kwargs": {}, "timestamp": "2025-10-30T19:45:06"},
                           "response": {"success": True, "result": {"_type": "InitializeResult", "protocolVersion": "2025-06-18",
                                                                     "serverInfo": {"_type": "Implementation", "name": "docs"}},
                                        "error": None, "timestamp": "2025-10-30T19:45:07"}, "duration_ms": 201.3},
                          {"request": {"method": "call_tool", "args": [tool, {"q": sid}], "kwargs": {}, "timestamp": "x"},
                           "response": {"success": True, "result": _result(_text(text)), "error": None, "timestamp": "x"},
                           "duration_ms": 12.0}],
                "started_at": "2025-10-30T19:45:06", "ended_at": "2025-10-30T19:45:09", "metadata": {}}

    inp = _write(tmp_path, "mcp_sessions.jsonl", [session("s-1", "search", "one"), session("s-2", "fetch", "two")])
    result = run("ingest-mcp", [inp], stages=["ingest"])
    assert result.episodes == 2 and result.quarantined == 0
    eps = query("SELECT * FROM episodes ORDER BY json_extract_string(env, '$.session_id')")
    envs = [json.loads(e["env"]) for e in eps]
    assert [e["session_id"] for e in envs] == ["s-1", "s-2"]
    assert envs[0]["capture"]["server_info"] == {"url": "https://example.test/mcp", "transport": "http"}
    assert envs[0]["server"]["serverInfo"] == {"name": "docs"}
    finals = {json.loads(s["action"]["arguments"])["q"]: s["final_observation"]["text"] for s in query("SELECT * FROM steps")}
    assert finals == {"s-1": "one", "s-2": "two"}


def test_what_cannot_be_used_is_quarantined_with_its_reason(run, query, tmp_path):
    inp = _write(tmp_path, "bad.jsonl", [
        _request(1, "initialize"),
        _response(1, "initialize", {"_type": "InitializeResult", "serverInfo": {"_type": "Implementation", "name": "s"}}),
        "{not json",
        {"type": "request", "count": 2},
        _request(2, "call_tool", [], {"arguments": {"x": 1}}),
        _response(9, "list_prompts", {"_type": "ListPromptsResult", "prompts": []}),
    ])
    result = run("ingest-mcp", [inp], stages=["ingest"])
    assert result.episodes == 0
    rows = query("SELECT rule, reason, line FROM quarantine ORDER BY line NULLS FIRST")
    assert [(r["rule"], r["line"]) for r in rows] == [
        ("empty_episode", 1), ("parse_error", 3), ("not_sdk_call", 4), ("bad_call", 5), ("unpaired_response", 6)]
    assert rows[3]["reason"] == "bad.jsonl:5: call_tool without a tool name"
    assert rows[4]["reason"] == "bad.jsonl:6: list_prompts response (count 9) answers no request"
    assert rows[0]["reason"].startswith("bad.jsonl: session 1 made no tool call, so it has no step (2 messages")


def test_units_sniff_sdk_records_only():
    heads = {
        "/c/a.jsonl": json.dumps(_request(1, "initialize")).encode(),
        "/c/b.log": json.dumps(_request(1, "call_tool", ["x", {}])).encode(),
        "/c/s.jsonl": json.dumps({"session_id": "1", "server_info": {}, "calls": [{"request": {"method": "initialize"}}]}).encode(),
        "/c/rpc.jsonl": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}',
        "/c/other.jsonl": b'{"type": "request", "method": "GET", "url": "https://example.test"}',
        "/c/a.txt": json.dumps(_request(1, "initialize")).encode(),
    }
    assert sdk_calls.units(sorted(heads), heads.get) == ["/c/a.jsonl", "/c/b.log", "/c/s.jsonl"]


def test_wire_shape_keeps_free_form_json_as_written():
    dumped = {"_type": "CallToolResult", "meta": {"trace_id": "t"}, "is_error": False, "result_type": "complete",
              "structured_content": {"row_count": 1}, "content": [{"_type": "ImageContent", "type": "image",
                                                                     "mime_type": "image/png", "data": "AA=="}]}
    assert sdk_calls.wire(dumped) == {"_meta": {"trace_id": "t"}, "isError": False, "resultType": "complete",
                                      "structuredContent": {"row_count": 1},
                                      "content": [{"type": "image", "mimeType": "image/png", "data": "AA=="}]}


def test_bundled_sdk_capture_of_a_real_stdio_session(run, query):
    """samples/mcp/sdk-stdio/sdk-calls.jsonl was recorded from the official SDK (see PROVENANCE.md)."""
    result = run("ingest-mcp", [STDIO / "sdk-calls.jsonl"])
    assert result.status == "success" and result.episodes == 1 and result.quarantined == 0
    ep, steps = episode_and_steps(query, "sdk-calls.jsonl")
    assert ep["source_format"] == "mcp_sdk"
    env = json.loads(ep["env"])
    assert [t["name"] for t in env["tools"]] == ["add", "echo", "fail"]
    assert env["tools"][0]["inputSchema"]["required"] == ["a", "b"] and "input_schema" not in env["tools"][0]
    assert env["server"]["serverInfo"] == {"name": "calc", "version": "0.1.0"}
    assert [(s["action"]["tool_name"], json.loads(s["action"]["arguments"])) for s in steps] == [
        ("add", {"a": 2, "b": 3}), ("echo", {"text": "hello, world"}), ("resources/read", {"uri": "memo://readme"}),
        ("fail", {"reason": "boom"}), ("resources/read", {"uri": "memo://missing"}), ("nope", {})]
    texts = [s["observation"]["text"] for s in steps[1:]] + [steps[-1]["final_observation"]["text"]]
    assert texts == ["5", "hello, world", "Call add with two integers; echo returns its text.",
                     "Error executing tool fail: refused: boom", "Error: Unknown resource: memo://missing",
                     "Unknown tool: nope"]
    assert [s["observation"]["is_error"] for s in steps[1:]] + [steps[-1]["final_observation"]["is_error"]] == [
        False, False, False, True, True, True]
    assert json.loads(steps[1]["observation"]["ui_tree"]) == {"result": 5}  # structured_content
