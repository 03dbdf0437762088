"""The MCP JSON-RPC reader called directly (`jsonrpc.read`) on the bundled sessions (a hand-written one, an SDK
capture in envelopes, the official SDK's stdio wire) and on hand-made logs: pairing by id and sender, each
result shape's text / error / ui_tree, sessions and channels, env, and the rows for what cannot be used."""

import base64
import json

import pytest

from ingest.mcp import jsonrpc
from ingest.record import Episode, Rejected
from tests.conftest import SAMPLES
from tests.ingest.golden import read_records

MCP = SAMPLES / "mcp"


def _write(tmp_path, entries, name="s.jsonl"):
    path = tmp_path / name
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in entries))
    return path


def _read(tmp_path, entries, name="s.jsonl", blobs=None):
    records = read_records(jsonrpc, _write(tmp_path, entries, name), blobs)
    return [r for r in records if isinstance(r, Episode)], [r for r in records if isinstance(r, Rejected)]


def _req(mid, method, params=None):
    msg = {"jsonrpc": "2.0", "id": mid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def _call(mid, name, args=None):
    return _req(mid, "tools/call", {"name": name, "arguments": args if args is not None else {}})


def _res(mid, result):
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def _text(*texts, **extra):
    return {"content": [{"type": "text", "text": t} for t in texts], **extra}


def test_bundled_hand_written_session():
    records = read_records(jsonrpc, MCP / "jsonrpc-session.jsonl")
    [ep] = records
    assert ep.key == "" and ep.agent == "example-client" and ep.domain == "mcp" and ep.platform == "linux"
    assert not ep.terminated and ep.task is None
    assert [(s.action.kind, s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == [
        ("tool_call", "get_weather", {"location": "New York"}),
        ("tool_call", "get_forecast", {"location": "New York", "days": 2}),
        ("tool_call", "get_humidity", {"location": "Boston"}), ("tool_call", "read_file", {"path": "/etc/shadow"})]
    obs = [s.observation for s in ep.steps]
    assert obs[0].kind == "none" and obs[0].text is None
    assert (obs[1].text, obs[1].is_error) == ('{"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}',
                                              False)
    assert json.loads(obs[1].ui_tree) == {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}
    assert obs[2].text == "New York, 2-day forecast:\nThu: 24°C, scattered showers\nFri: 27°C, sunny"
    assert obs[2].ui_tree is None
    assert (obs[3].text, obs[3].is_error) == ("Error -32602: Unknown tool: get_humidity", True)
    assert json.loads(obs[3].ui_tree) == {"code": -32602, "message": "Unknown tool: get_humidity"}
    assert ep.final_observation.is_error and ep.final_observation.text.startswith("Access denied: /etc/shadow")
    assert [t["name"] for t in ep.env["tools"]] == ["get_weather", "get_forecast", "read_file"]  # both pages
    assert ep.env["server"]["serverInfo"]["name"] == "weather-server"
    assert ep.env["server"]["instructions"].startswith("Weather data")
    assert set(ep.env["server"]) == {"serverInfo", "protocolVersion", "capabilities", "instructions"}
    assert ep.env["client"] == {"clientInfo": {"name": "example-client", "title": "Example Client",
                                               "version": "1.0.0"}, "protocolVersion": "2025-06-18",
                                "capabilities": {"roots": {"listChanged": True}}}
    assert ep.env["notifications"][0] == {"method": "notifications/initialized", "params": None, "after_step": 0}
    assert all(s.timestamp is None for s in ep.steps)


def test_bundled_sdk_capture_in_string_envelopes():
    records = read_records(jsonrpc, MCP / "sdk-capture.jsonl")
    eps = [r for r in records if isinstance(r, Episode)]
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = eps
    assert ep.agent == "mcp-sdk-client" and ep.env["server"]["serverInfo"]["name"] == "sqlite-explorer"
    assert all(s.timestamp is not None and s.timestamp.tzinfo is not None for s in ep.steps)
    raw = json.loads(ep.steps[0].action.raw)
    assert raw["method"] == "tools/call"


def test_bundled_wire_capture_of_the_sdk_stdio_session():
    [ep] = read_records(jsonrpc, MCP / "sdk-stdio" / "wire.jsonl")
    assert [t["name"] for t in ep.env["tools"]] == ["add", "echo", "fail"]
    assert ep.env["server"]["serverInfo"]["name"] == "calc" and ep.agent == "mcp"


def test_each_results_time_in_the_wire_capture_is_kept_with_the_step_it_answers():
    """The SDK's stdio wire, captured with a time per message: a step's time is its request's, and the time its
    response passed is kept beside it (`env["message_extras"]`), with the step whose observation it is."""
    path = MCP / "sdk-stdio" / "wire.jsonl"
    [ep] = read_records(jsonrpc, path)
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    messages = [(json.loads(e["message"]), e["timestamp"]) for e in entries]
    sent = {m["id"]: at for m, at in messages if m.get("method") in jsonrpc.CALL_METHODS}
    answered = {m["id"]: at for m, at in messages if "id" in m and "method" not in m}
    stamp = lambda text: text.replace("Z", "000+00:00")
    assert [s.timestamp.isoformat() for s in ep.steps] == [stamp(sent[i]) for i in sent]
    assert ep.env["message_extras"] == [{"step": n + 1, "role": "tool", "timestamp": stamp(answered[i])}
                                        for n, i in enumerate(sent)]


def test_results_out_of_order_pair_with_their_calls_and_keep_their_own_times(tmp_path):
    at = lambda s: f"2025-01-01T00:00:0{s}Z"
    entries = [{"timestamp": at(1), "message": _call(1, "slow")}, {"timestamp": at(2), "message": _call(2, "fast")},
               {"timestamp": at(3), "message": _res(2, _text("fast done"))},
               {"timestamp": at(4), "message": _call(3, "never answered")},
               {"timestamp": at(5), "message": _res(1, _text("slow done"))}]
    [ep], rows = _read(tmp_path, entries)
    assert rows == [] and [s.observation.text for s in ep.steps] == [None, "slow done", "fast done"]
    assert [s.timestamp.second for s in ep.steps] == [1, 2, 4]
    assert ep.final_observation is None and ep.env["unanswered_calls"] == 1
    assert ep.env["message_extras"] == [{"step": 2, "role": "tool", "timestamp": "2025-01-01T00:00:03+00:00"},
                                        {"step": 1, "role": "tool", "timestamp": "2025-01-01T00:00:05+00:00"}]


def test_a_session_whose_last_result_is_over_the_field_budget_is_a_row_naming_the_file(tmp_path, monkeypatch):
    from ingest import arrow
    from ingest.source import Budgets

    monkeypatch.setattr(arrow, "default_budgets", lambda: Budgets(field_bytes=64))
    eps, rows = _read(tmp_path, [_call(1, "cat"), _res(1, _text("x" * 100))], name="big.jsonl")
    assert eps == [] and [(r.rule, r.location) for r in rows] == [("schema_mismatch", "big.jsonl")]
    assert rows[0].reason.startswith("big.jsonl: the episode: field final_observation.text: 100 characters")


def test_units_sniff_jsonrpc_files():
    heads = {"/a/x.jsonl": b'\xef\xbb\xbf {"jsonrpc": "2.0", "id": 1, "method": "initialize"}',
             "/a/y.json": b'[{"message": "{\\"jsonrpc\\": \\"2.0\\", \\"result\\": {}}"}]',
             "/a/z.ndjson": b'{"jsonrpc": "2.0", "id": 1, "result": {}}',
             "/a/e.json": b'[]',
             "/a/w.log": b'[info] {"jsonrpc": "2.0", "method": "x"}',
             "/a/v.jsonl": b'{"jsonrpc": "1.0", "id": 1, "method": "x"}',
             "/a/u.jsonl": b'{"jsonrpc": "2.0", "id": 1}',
             "/a/t.txt": b'{"jsonrpc": "2.0", "id": 1, "method": "x"}',
             "/a/s.log": b'{"jsonrpc": "2.0", "method": "ping"}'}
    assert jsonrpc.units(sorted(heads), heads.get) == ["/a/s.log", "/a/x.jsonl", "/a/y.json", "/a/z.ndjson"]


@pytest.mark.parametrize("label, side", [
    ("c2s", "client"), ("Client", "client"), ("from client", "client"), ("client to server", "client"),
    ("client->server", "client"), ("client→server", "client"), ("s2c", "server"), ("SERVER", "server"),
    ("fromserver", "server"), ("server-to-client", "server"), ("server->client", "server"),
    ("server→client", "server"), ("sent by client to server", "client"), ("server says to client", "server"),
    ("client", "client"), ("in", None), ("", None), (3, None), (None, None), ("servers", None)])
def test_direction_labels(label, side):
    assert jsonrpc.direction_of(label) == side


def test_a_json_array_and_envelopes_with_their_times_and_directions(tmp_path):
    entries = [{"time": 1_700_000_000, "data": _req(1, "initialize", {"clientInfo": {"name": "cli"}})},
               {"ts": "2025-01-01T00:00:01Z", "payload": json.dumps(_res(1, {"serverInfo": {"name": "srv"}}))},
               {"timestamp": "2025-01-01T00:00:02Z", "json": json.dumps(_call(2, "ls")).encode().decode(),
                "dir": "c2s"},
               {"timestamp": "2025-01-01T00:00:03Z", "message": "not json", "data": _res(2, _text("a"))},
               {"timestamp": "2025-01-01T00:00:04+02:00", "message": _call(3, "pwd")},
               {"timestamp": "2025-01-01T00:00:05", "message": _call(4, "cd")}]
    path = tmp_path / "arr.json"
    path.write_text(json.dumps(entries))
    [ep] = read_records(jsonrpc, path)
    assert ep.agent == "cli" and ep.env["server"] == {"serverInfo": {"name": "srv"}}
    assert [s.action.tool_name for s in ep.steps] == ["ls", "pwd", "cd"]
    assert [s.timestamp.isoformat() if s.timestamp else None for s in ep.steps] == [
        "2025-01-01T00:00:02+00:00", "2024-12-31T22:00:04+00:00", None]
    assert ep.steps[1].observation.text == "a"
    assert ep.env["unanswered_calls"] == 2 and ep.final_observation is None


def test_a_broken_array_is_a_parse_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"jsonrpc": "2.0"')
    with pytest.raises(jsonrpc.SourceError) as e:
        read_records(jsonrpc, path)
    assert e.value.rule == "parse_error" and e.value.reason.startswith("bad.json: invalid JSON: ")


def test_bad_lines_are_rows_with_line_and_snippet(tmp_path):
    eps, rows = _read(tmp_path, ["\ufeff" + json.dumps(_call(1, "ls")), "", "{broken", json.dumps([1, 2]),
                                 json.dumps({"note": "x"}), {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "id": 9},
                                 _res(7, _text("late")), _res(1, _text("out"))])
    assert [(r.rule, r.line) for r in rows] == [("parse_error", 3), ("not_jsonrpc", 4), ("not_jsonrpc", 5),
                                                ("bad_message", 6), ("bad_message", 7), ("unpaired_response", 8)]
    assert rows[0].reason.startswith("s.jsonl:3: invalid JSON: ") and rows[0].snippet == "{broken"
    assert rows[1].reason == "s.jsonl:4: entry holds no JSON-RPC 2.0 message" and rows[1].snippet == "[1,2]"
    assert rows[3].reason == "s.jsonl:6: neither request, notification nor response"
    assert rows[3].snippet == '{"jsonrpc":"2.0"}'
    assert rows[5].reason == "s.jsonl:8: response id 7 answers no request"
    assert json.loads(rows[5].snippet) == _res(7, _text("late"))
    assert all(r.location == "s.jsonl" for r in rows)
    [ep] = eps
    assert ep.final_observation.text == "out" and "unanswered_calls" not in ep.env


def test_result_shapes(tmp_path):
    png = base64.b64encode(b"\x89PNG").decode()
    results = [
        _text("one", "two"),
        {"content": [{"type": "image", "data": png, "mimeType": "image/png"},
                     {"type": "audio", "data": "!!notbase64", "mimeType": "audio/wav"},
                     {"type": "audio", "data": base64.b64encode(b"RIFF").decode()},
                     {"type": "image", "data": 5},
                     {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
                     {"type": "resource", "resource": {"uri": "file:///b"}},
                     {"type": "resource", "resource": "x"},
                     {"type": "resource_link", "uri": "file:///c"},
                     {"text": "untyped"}, {"type": "other", "text": "skip"}, "not an item"]},
        {"contents": [{"uri": "u", "text": "resource text"}]},
        _text('{"a": 1}', structuredContent={"b": 2}),
        _text('{"a": 1}'),
        _text("[1, 2"),
        _text("x", isError=True),
        {"value": 3, "isError": 1},
        json.dumps(_text("decoded")),
        {"content": [{"type": "text", "text": json.dumps({"content": [{"type": "text", "text": "inner"}],
                                                          "isError": True})}]},
        "plain string",
        None,
        7,
    ]
    entries = []
    for i, result in enumerate(results):
        entries += [_call(i, f"t{i}"), _res(i, result)]
    entries.append(_call(99, "last"))
    blobs = {}
    [ep], rows = _read(tmp_path, entries, blobs=blobs)
    assert rows == []
    obs = [s.observation for s in ep.steps[1:]]
    assert all(o.kind == "tool_result" for o in obs)
    assert obs[0].text == "one\ntwo" and obs[0].ui_tree is None and obs[0].is_error is False
    [(ref, (media, data))] = [(r, b) for r, b in blobs.items() if b[0] == "image/png"]
    audio = [(r, b) for r, b in blobs.items() if b[0] == "application/octet-stream"]
    assert data == b"\x89PNG" and [b for _, b in audio] == [("application/octet-stream", b"RIFF")]
    assert obs[1].text.split("\n") == [f"[image {ref}]", "[audio: undecodable data]", f"[audio {audio[0][0]}]",
                                       "body", "[resource file:///b]", "[resource file:///c]", "untyped"]
    assert obs[2].text == "resource text"
    assert json.loads(obs[3].ui_tree) == {"b": 2} and obs[3].text == '{"a": 1}'
    assert json.loads(obs[4].ui_tree) == {"a": 1}
    assert obs[5].ui_tree is None
    assert obs[6].is_error is True and obs[6].text == "x"
    assert json.loads(obs[7].text) == {"value": 3, "isError": 1} and obs[7].ui_tree == obs[7].text
    assert obs[7].is_error is True
    assert obs[8].text == "decoded"
    assert (obs[9].text, obs[9].is_error) == ("inner", True)
    assert obs[10].text == "plain string" and obs[10].is_error is None
    assert obs[11].text is None and obs[11].kind == "tool_result"
    assert obs[12].text == "7"


def test_error_shapes(tmp_path):
    entries = [_call(1, "a"), {"jsonrpc": "2.0", "id": 1, "error": {"message": "no code"}},
               _call(2, "b"), {"jsonrpc": "2.0", "id": 2, "error": "boom"},
               _call(3, "c"), {"jsonrpc": "2.0", "id": 3, "error": None},
               _call(4, "d"), {"jsonrpc": "2.0", "id": 4, "error": {"code": 0, "message": "zero"}}]
    [ep], _ = _read(tmp_path, entries)
    obs = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    assert [(o.text, o.is_error, o.kind) for o in obs] == [
        ("Error: no code", True, "tool_result"), ("Error: boom", True, "tool_result"),
        ("Error: None", True, "tool_result"), ("Error 0: zero", True, "tool_result")]
    assert json.loads(obs[1].ui_tree) == {"message": "boom"} and json.loads(obs[2].ui_tree) == {}


def test_resources_prompts_and_search_tools(tmp_path):
    entries = [_req(1, "resources/read", {"uri": "file:///x", "_meta": {"p": 1}}), _res(1, {"contents": []}),
               _req(2, "prompts/get", {"name": "p", "arguments": {"a": "b"}}),
               _res(2, {"messages": [{"role": "user"}]}),
               _req(3, "tools/call", {"name": "web_search"}), _req(4, "tools/call"), _req(5, "tools/call", 7)]
    [ep], _ = _read(tmp_path, entries)
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == [
        ("resources/read", {"uri": "file:///x"}), ("prompts/get", {"name": "p", "arguments": {"a": "b"}}),
        ("web_search", {}), (None, {}), (None, {})]
    assert ep.steps[1].observation.text == ""
    assert json.loads(ep.steps[2].observation.text) == {"messages": [{"role": "user"}]}
    assert ep.domain == "mcp" and ep.env["unanswered_calls"] == 3
    [ep], _ = _read(tmp_path, [_call(1, "web_search"), _call(2, "web_extractor"), _call(3, "ls")])
    assert ep.domain == "search"


def test_tools_list_pages_and_later_definitions(tmp_path):
    entries = [_req(1, "tools/list"), _res(1, {"tools": [{"name": "a", "v": 1}, {"name": "b"}, {"x": 1}, "s"]}),
               _req(2, "tools/list", {"cursor": "p2"}), _res(2, {"tools": [{"name": "a", "v": 2}, {"name": "c"}]}),
               _req(3, "tools/list"), _res(3, {"tools": None}), _req(4, "tools/list"), _res(4, ["x"]),
               _call(5, "a")]
    [ep], _ = _read(tmp_path, entries)
    assert ep.env["tools"] == [{"name": "a", "v": 2}, {"name": "b"}, {"name": "c"}]
    assert "server" not in ep.env and "client" not in ep.env and "notifications" not in ep.env
    assert ep.agent is None


def test_a_new_initialize_starts_a_session_and_empty_sessions_are_rows(tmp_path):
    entries = [_req(1, "initialize", {"clientInfo": {"name": "a"}}), _res(1, {"serverInfo": {"name": "s"}}),
               _call(2, "x"), _res(2, _text("1")),
               {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"p": 1}},
               _req(1, "initialize", {"clientInfo": {"name": "b"}}),                        # line 6
               _req(2, "tools/list"), _req(3, "ping"),
               _req(1, "initialize", "bad"),                                                  # line 9
               _res(1, "bad"), _call(2, "y"), _res(2, _text("2"))]
    eps, rows = _read(tmp_path, entries)
    assert [e.key for e in eps] == ["", "line9"]
    assert eps[0].env["notifications"] == [{"method": "notifications/progress", "params": {"p": 1}, "after_step": 1}]
    assert eps[0].agent == "a" and eps[1].agent is None and "client" not in eps[1].env
    assert "server" not in eps[1].env
    assert [(r.rule, r.location, r.line) for r in rows] == [("empty_episode", "line6", 6)]
    assert rows[0].reason == ("s.jsonl: session line6 made no tool call, so it has no step (3 messages: initialize, "
                              "tools/list, ping; 3 requests never answered: the server may have exited)")


def test_empty_session_reasons(tmp_path):
    _, rows = _read(tmp_path, [_req(1, "initialize"), _res(1, {}), _req(2, "tools/list"), _res(2, {"tools": []}),
                               {"jsonrpc": "2.0", "method": "notifications/initialized"}])
    assert [(r.rule, r.location, r.line) for r in rows] == [("empty_episode", None, 1)]
    assert rows[0].reason == ("s.jsonl: session 1 made no tool call, so it has no step (5 messages: initialize, "
                              "tools/list, notifications/initialized)")
    _, rows = _read(tmp_path, [_req(1, "ping")])
    assert rows[0].reason == ("s.jsonl: session 1 made no tool call, so it has no step (1 message: ping; 1 request "
                              "never answered: the server may have exited)")
    methods = [_req(i, f"m{i}") for i in range(10)] + [_res(i, {}) for i in range(10)]
    _, rows = _read(tmp_path, methods)
    assert rows[0].reason.endswith("(20 messages: m0, m1, m2, m3, m4, m5, m6, m7)")
    _, rows = _read(tmp_path, ["", "  "])
    assert [(r.rule, r.reason, r.location) for r in rows] == [("no_messages", "s.jsonl: no JSON-RPC message to read",
                                                               "s.jsonl")]


def test_directions_pair_a_response_with_the_other_side(tmp_path):
    entries = [{"direction": "client->server", "message": _call(1, "ls")},
               {"direction": "server->client", "message": _req(1, "roots/list")},
               {"direction": "client->server", "message": _res(1, {"roots": []})},
               {"direction": "server->client", "message": _res(1, _text("files"))},
               {"direction": "server->client", "message": _req(2, "initialize")},
               {"direction": "client->server", "message": _call(3, "b")},
               {"message": _res(3, _text("undirected"))}]
    [ep], rows = _read(tmp_path, entries)
    assert rows == [] and ep.key == ""
    assert ep.steps[1].observation.text == "files" and ep.final_observation.text == "undirected"
    # a server's request is no step, and a server's initialize starts no session
    assert [s.action.tool_name for s in ep.steps] == ["ls", "b"]
    assert "client" not in ep.env


def test_a_restarted_server_reusing_ids(tmp_path):
    entries = [_req(1, "initialize"), _call(2, "a"), _req(1, "initialize"), _call(2, "b"), _call(2, "c"),
               _res(2, _text("for b")), _res(2, _text("for c")), _res(1, {"serverInfo": {"name": "s2"}})]
    eps, rows = _read(tmp_path, entries)
    assert [e.key for e in eps] == ["", "line3"]
    assert eps[0].final_observation is None and eps[0].env["unanswered_calls"] == 1
    assert eps[1].steps[1].observation.text == "for b" and eps[1].final_observation.text == "for c"
    assert eps[1].env["server"] == {"serverInfo": {"name": "s2"}}
    # ids that are objects or lists pair too
    [ep], _ = _read(tmp_path, [_call({"k": 1}, "x"), _call([1], "y"), _res([1], _text("y")),
                               _res({"k": 1}, _text("x"))])
    assert ep.steps[1].observation.text == "x" and ep.final_observation.text == "y"


def test_call_result_reads_one_response():
    from ingest.source import Source
    from fsspec.implementations.local import LocalFileSystem

    source = Source(fs=LocalFileSystem(), path="/x", uri="in/x", put_blob=lambda *a: "sha256:0")
    obs = jsonrpc.call_result("web_search", {"result": _text("t")}, source)
    assert obs.text == "t" and obs.kind == "tool_result"
    obs = jsonrpc.call_result("x", {"error": {"code": 1, "message": "m"}}, source)
    assert obs.text == "Error 1: m" and obs.is_error


def test_text_items_that_are_no_strings_are_kept_as_json(tmp_path):
    entries = [_call(1, "a"), _res(1, {"content": ["skipped", {"type": "text", "text": None},
                                                   {"type": "text", "text": 5}]}),
               _call(2, "b"), _res(2, {"content": [{"type": "text", "text": None}]}),
               _call(3, "c"), _res(3, _text("[1, 2]"))]
    [ep], rows = _read(tmp_path, entries)
    assert rows == [] and ep.steps[1].observation.text == "null\n5" and ep.steps[2].observation.text == "null"
    assert ep.final_observation.ui_tree == "[1,2]"  # a JSON array text is a tree too


def test_search_results_become_a_tree_before_structured_content(tmp_path):
    text = "[1] https://duckdb.org/docs\nTitle: DuckDB\nSnippet: fast\nDate: N/A"
    entries = [_call(1, "web_search", {"query": "q"}), _res(1, _text(text, structuredContent={"x": 1})),
               _call(2, "other"), _res(2, _text(text, structuredContent={"x": 1}))]
    [ep], _ = _read(tmp_path, entries)
    assert json.loads(ep.steps[1].observation.ui_tree)["results"][0]["title"] == "DuckDB"
    assert json.loads(ep.final_observation.ui_tree) == {"x": 1}


def test_base64_with_stray_characters_is_undecodable(tmp_path):
    [ep], _ = _read(tmp_path, [_call(1, "a"), _res(1, {"content": [{"type": "image", "data": "QUJD\n"}]})])
    assert ep.final_observation.text == "[image: undecodable data]"


def test_blobs_belong_to_the_unit(tmp_path):
    from fsspec.implementations.local import LocalFileSystem

    from ingest.source import Source

    path = _write(tmp_path, [_call(1, "a"), _res(1, {"content": [{"type": "image", "data": "QUJD"}]})])
    puts = []
    source = Source(fs=LocalFileSystem(), path=str(path), uri="in/s.jsonl",
                    put_blob=lambda *a: puts.append(a) or "sha256:x")
    [ep] = list(jsonrpc.read(source))
    assert puts == [(b"ABC", "application/octet-stream", "in/s.jsonl")]
    assert ep.final_observation.text == "[image sha256:x]"


def _nested(depth: int) -> dict:
    result = _text("deep")
    for _ in range(depth):
        result = _text(json.dumps(result))
    return result


def test_serialized_results_are_decoded_four_levels_deep(tmp_path):
    [ep], _ = _read(tmp_path, [_call(1, "a"), _res(1, _nested(2)), _call(2, "b"), _res(2, _nested(4)),
                               _call(3, "c"), _res(3, _nested(5))])
    assert ep.steps[1].observation.text == "deep" and ep.steps[2].observation.text == "deep"
    assert json.loads(ep.final_observation.text) == _text("deep")  # the fifth level is left as written


def test_call_times_from_each_envelope_key(tmp_path):
    entries = [{"ts": "2025-01-01T00:00:01Z", "message": _call(1, "a")},
               {"time": "2025-01-01T00:00:02Z", "message": _call(2, "b")},
               {"timestamp": "2025-01-01T00:00:03Z", "ts": "x", "time": "y", "message": _call(3, "c")},
               {"ts": "2025-01-01T00:00:04Z", "time": "y", "message": _call(4, "d")},
               {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "e"},
                "time": "2025-01-01T00:00:05Z"}]
    [ep], _ = _read(tmp_path, entries)
    assert [s.timestamp.second for s in ep.steps] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("text", ['\ufeff[%s]', '\n  [%s]'])
def test_arrays_after_a_bom_or_blank_lines(tmp_path, text):
    path = tmp_path / "a.json"
    path.write_text(text % ", ".join(json.dumps(e) for e in [_call(1, "a"), {"x": 1}]))
    records = read_records(jsonrpc, path)
    assert [(r.rule, r.line) for r in records if isinstance(r, Rejected)] == [("not_jsonrpc", 2)]
    assert [s.action.tool_name for r in records if isinstance(r, Episode) for s in r.steps] == ["a"]


def test_a_line_that_only_looks_like_an_array(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text("X" + json.dumps([_call(1, "a")]) + "\n" + json.dumps(_call(2, "b")) + "\n")
    records = read_records(jsonrpc, path)
    assert [(r.rule, r.line) for r in records if isinstance(r, Rejected)] == [("parse_error", 1)]


def test_long_snippets_are_cut_at_500(tmp_path):
    path = tmp_path / "l.jsonl"
    long_bad = b'{"x": "' + "\u00e9".encode() * 300  # byte 500 is the middle of an e-acute
    path.write_bytes(long_bad + b"\n" + json.dumps({"note": "y" * 600}).encode() + b"\n"
                     + json.dumps(_res(9, {"pad": "z" * 600})).encode() + b"\n"
                     + json.dumps({"jsonrpc": "2.0", "pad": "w" * 600}).encode() + b"\n")
    rows = read_records(jsonrpc, path)
    assert [r.rule for r in rows] == ["parse_error", "not_jsonrpc", "unpaired_response", "bad_message"]
    assert rows[0].snippet == '{"x": "' + "\u00e9" * 246 + "\ufffd"
    assert [len(r.snippet) for r in rows[1:]] == [500, 500, 500]


def test_an_undirected_response_answers_a_request_of_either_side(tmp_path):
    entries = [{"direction": "server->client", "message": _req(1, "roots/list")},
               {"message": _res(1, {"roots": []})},
               {"direction": "client->server", "message": _call(2, "a")}, {"message": _res(2, _text("r"))}]
    [ep], rows = _read(tmp_path, entries)
    assert rows == [] and ep.final_observation.text == "r"


def test_a_call_sent_by_the_server_is_no_step(tmp_path):
    entries = [{"direction": "server->client", "message": _call(1, "srv")},
               {"direction": "client->server", "message": _call(2, "cli")}]
    [ep], _ = _read(tmp_path, entries)
    assert [s.action.tool_name for s in ep.steps] == ["cli"]


def test_tools_listed_before_initialize_belong_to_the_session_before_it(tmp_path):
    entries = [_req(1, "tools/list"), _res(1, {"tools": [{"name": "t"}]}), _req(2, "initialize"),
               _call(3, "a")]
    eps, rows = _read(tmp_path, entries)
    assert [r.rule for r in rows] == ["empty_episode"] and [e.key for e in eps] == ["line3"]
    assert eps[0].env["tools"] == []


@pytest.mark.parametrize("label, side", [("client->server (client end)", "client"),
                                         ("server->client (server end)", "server")])
def test_a_direction_names_the_side_mentioned_first(label, side):
    assert jsonrpc.direction_of(label) == side


def test_a_shell_tool_over_mcp_stays_a_tool_call(tmp_path):
    [ep], _ = _read(tmp_path, [_call(1, "bash", {"command": "ls"})])
    a = ep.steps[0].action
    assert (a.kind, a.tool_name, a.code, json.loads(a.arguments)) == ("tool_call", "bash", None, {"command": "ls"})


def test_units_want_json_at_the_start():
    heads = {"/a/x.jsonl": b'X{"jsonrpc": "2.0", "id": 1, "method": "initialize"}'}
    assert jsonrpc.units(list(heads), heads.get) == []


def _gw(kind, server, payload, ts="2026-02-18T01:28:44.94Z"):
    """An envelope as gh-aw's MCP Gateway logs it (`rpc-messages.jsonl`): requests before it numbers them."""
    return {"timestamp": ts, "direction": "OUT" if kind == "REQUEST" else "IN", "type": kind, "server_id": server,
            **({"method": payload["method"]} if "method" in payload else {}), "payload": payload}


def test_a_gateways_requests_without_ids_take_the_id_of_their_servers_next_answer(tmp_path):
    """The gateway logs each request without its id and the answer with one, the ids of each server counted on
    their own: a server's answer answers its oldest request still waiting; one never answered is still a call."""
    def call(name, **args):
        return {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": name, "arguments": args}}

    def ok(mid, text):
        return {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}}

    entries = [_gw("REQUEST", "github", {"jsonrpc": "2.0", "method": "tools/list", "params": None}),
               _gw("RESPONSE", "github", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "get_pr"}]}}),
               _gw("REQUEST", "github", call("get_pr", number=7)),
               _gw("REQUEST", "outputs", call("comment", body="hi")),
               _gw("RESPONSE", "outputs", ok(1, "commented")),
               _gw("RESPONSE", "github", ok(1, "PR 7: open")),
               _gw("REQUEST", "outputs", call("comment", body="again")),
               _gw("REQUEST", "outputs", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})]
    episodes, rows = _read(tmp_path, entries)
    assert rows == []
    by_server = {e.env["server_name"]: e for e in episodes}
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in by_server["github"].steps] == \
        [("get_pr", {"number": 7})]
    assert by_server["github"].final_observation.text == "PR 7: open"
    assert by_server["github"].env["tools"] == [{"name": "get_pr"}]
    outputs = by_server["outputs"]
    assert [json.loads(s.action.arguments)["body"] for s in outputs.steps] == ["hi", "again"]
    assert outputs.steps[1].observation.text == "commented" and outputs.env["unanswered_calls"] == 1
    assert outputs.env["notifications"][0]["method"] == "notifications/cancelled"


def test_a_real_mcp_gateway_log():
    """gh-aw's MCP Gateway (MCPG v0.1.4) `rpc-messages.jsonl` of a docs workflow run, read where it lies:
    devantler-tech/ksail @ e733d1133ae94678b532a75e4ab71d8572ce79a3, `mcp-logs/rpc-messages.jsonl` (PolyForm
    Shield license: never copied here), in ../shared/samples/mcp/gh-aw-mcpg/rpc-messages.jsonl. A person counts
    16 lines, three servers (github, safeoutputs, playwright) listing their tools, 5 `tools/call` requests
    without ids: github `pull_request_read` (answered by an error text), safeoutputs `create_pull_request` three
    times and `missing_tool`; playwright makes no call."""
    from tests.parts import SHARED, require_shared_sample

    path = require_shared_sample(SHARED / "samples" / "mcp" / "gh-aw-mcpg" / "rpc-messages.jsonl")
    records = read_records(jsonrpc, path)
    episodes = [r for r in records if isinstance(r, Episode)]
    assert [(r.rule, r.reason) for r in records if isinstance(r, Rejected)] == [
        ("empty_episode", "rpc-messages.jsonl: session line5 (playwright) made no tool call, so it has no step "
                          "(2 messages: tools/list)")]
    assert {e.env["server_name"]: [s.action.tool_name for s in e.steps] for e in episodes} == {
        "github": ["pull_request_read"],
        "safeoutputs": ["create_pull_request", "create_pull_request", "create_pull_request", "missing_tool"]}
    assert sum(len(e.steps) for e in episodes) == 5


def test_a_request_with_its_own_id_never_takes_a_waiting_requests_answer(tmp_path):
    """Only an answer gives a request logged without an id its id: a numbered request logged while one waits
    keeps its own id, and each answer reaches its own request."""
    entries = [_gw("REQUEST", "s", {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "a"}}),
               _gw("REQUEST", "s", _call(5, "b")),
               _gw("RESPONSE", "s", _res(1, _text("A"))),
               _gw("RESPONSE", "s", _res(5, _text("B")))]
    [ep], rows = _read(tmp_path, entries)
    assert rows == []
    # `a` passes when its answer gives it an id: after `b`; each step's result is the next observation
    assert [s.action.tool_name for s in ep.steps] == ["b", "a"]
    assert (ep.steps[1].observation.text, ep.final_observation.text) == ("B", "A")


def test_a_sender_named_by_a_later_direction_key(tmp_path):
    """An envelope may name its sender under `from` or `source` (after a `direction` that is no label): the
    sender keeps a client's call and a server's request of the same id apart."""
    entries = [{"direction": 7, "from": "client", "message": _call(1, "ls")},
               {"source": "server", "message": _req(1, "roots/list")},
               {"source": "client", "message": _res(1, {"roots": []})},
               {"source": "server", "message": _res(1, _text("listing"))}]
    [ep], rows = _read(tmp_path, entries)
    assert rows == [] and ep.final_observation.text == "listing"


def test_a_response_logged_before_its_request_answers_it(tmp_path):
    """greenlight relays a line and then logs it, one thread a direction: under load a response's line can be
    written before its request's (seen in its producer test). It answers that request, in the order call,
    result; a response no request ever follows is still its row, in its place among the rows."""
    entries = [{"direction": "client->server", "message": _req(0, "initialize")},
               {"direction": "server->client", "message": _res(0, {"serverInfo": {"name": "calc"}})},
               {"direction": "server->client", "message": _res(1, _text("3"))},
               {"direction": "client->server", "message": _call(1, "add", {"a": 1, "b": 2})},
               {"direction": "server->client", "message": _res(9, _text("nobody asked"))},
               "not json",
               {"direction": "client->server", "message": _call(2, "echo", {"text": "hi"})},
               {"direction": "server->client", "message": _res(2, _text("hi"))}]
    [ep], rows = _read(tmp_path, entries)
    assert [(r.rule, r.line) for r in rows] == [("unpaired_response", 5), ("parse_error", 6)]
    assert [(s.action.tool_name, s.observation.text if i else None) for i, s in enumerate(ep.steps)] == \
        [("add", None), ("echo", "3")]
    assert ep.final_observation.text == "hi" and "unanswered_calls" not in ep.env
    assert ep.env["server"] == {"serverInfo": {"name": "calc"}}
    # a request sent by the same side as the early response does not take it
    eps, rows = _read(tmp_path, [{"direction": "server->client", "message": _res(1, _text("x"))},
                                 {"direction": "server->client", "message": _req(1, "roots/list")},
                                 {"direction": "client->server", "message": _call(2, "ls")},
                                 {"direction": "server->client", "message": _res(2, _text("a"))}])
    assert [r.rule for r in rows] == ["unpaired_response"] and eps[0].final_observation.text == "a"
