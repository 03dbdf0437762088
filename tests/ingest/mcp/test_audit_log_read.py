"""The MCP audit-log reader called directly (`audit_log.read`) on hand-made lines in greenlight-mcp's record
shape (`greenlight/proxy.py` `ProxySession.record`: the producer-run tests are test_audit_log.py) and in the
call-log shapes of audit middlewares: the rebuilt messages, the steps, and the rows for what cannot be used."""

import json
from pathlib import Path

import pytest

from ingest.mcp import audit_log
from ingest.record import Episode, Rejected
from tests.ingest.golden import read_records


def _read(tmp_path, lines, name="a.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    records = read_records(audit_log, path)
    return [r for r in records if isinstance(r, Episode)], [r for r in records if isinstance(r, Rejected)]


def _g(ts, direction, kind, **kw):
    """A greenlight record."""
    return {"ts": ts, "direction": "client->server" if direction == "c" else "server->client", "parsed": True,
            "type": kind, **{k: json.dumps(v) if k == "payload" and not isinstance(v, str) else v
                             for k, v in kw.items()}}


SESSION = [
    _g(1.0, "c", "request", id=0, method="initialize", payload={"clientInfo": {"name": "cli"}, "protocolVersion": "x"}),
    _g(1.1, "s", "result", id=0, method="initialize", payload={"serverInfo": {"name": "calc"}}, latency_ms=3),
    _g(1.2, "c", "notification", method="notifications/initialized", payload={}),
    _g(1.3, "c", "request", id=1, method="tools/list", payload={}),
    _g(1.4, "s", "result", id=1, method="tools/list", tools=[{"name": "add", "description": "Add", "x": 1},
                                                             {"name": "echo"}, "bad"]),
    _g(2.0, "c", "request", id=2, method="tools/call", payload={"name": "add", "arguments": {"a": 1}}),
    _g(2.1, "s", "result", id=2, method="tools/call", payload={"content": [{"type": "text", "text": "3"}]}),
    _g(3.0, "c", "request", id=3, method="tools/call", payload={"name": "fail", "arguments": {}}),
    _g(3.1, "s", "error", id=3, method="tools/call", error={"code": -1, "message": "refused"}),
    _g(4.0, "c", "request", id=4, method="tools/call", payload={"name": "echo", "arguments": {"t": "x"}}),
    _g(4.1, "s", "error", id=4, method="tools/call", error="plain"),
    _g(5.0, "c", "request", id=5, method="tools/call", payload=json.dumps("not an object")),
    _g(5.1, "s", "result", id=5, method="tools/call", tool_error=True, tool_error_message="bad args"),
    _g(6.0, "c", "request", id=6, method="tools/call", payload={"name": "echo"}),
    _g(6.1, "s", "result", id=6, method="tools/call", tool_error=True),
    _g(7.0, "c", "request", id=7, method="tools/call", payload={"name": "echo"}),
    _g(7.1, "s", "result", id=7, method="tools/call"),
]


def test_a_greenlight_session(tmp_path):
    [ep], rows = _read(tmp_path, SESSION)
    assert rows == []
    assert ep.agent == "cli" and ep.env["server"] == {"serverInfo": {"name": "calc"}}
    assert ep.env["client"] == {"clientInfo": {"name": "cli"}, "protocolVersion": "x"}
    assert ep.env["tools"] == [{"name": "add", "description": "Add"}, {"name": "echo"}]
    assert ep.env["notifications"] == [{"method": "notifications/initialized", "params": {}, "after_step": 0}]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == [
        ("add", {"a": 1}), ("fail", {}), ("echo", {"t": "x"}), (None, {}), ("echo", {}), ("echo", {})]
    obs = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    assert [(o.text, o.is_error) for o in obs] == [
        ("3", False), ("Error -1: refused", True), ("Error: plain", True), ("bad args", True), ("", True),
        ("{}", False)]
    assert [s.timestamp.timestamp() for s in ep.steps] == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    # the action's raw is greenlight's record as written
    assert json.loads(json.loads(ep.steps[0].action.raw)["payload"]) == {"name": "add", "arguments": {"a": 1}}


def test_greenlight_rows(tmp_path):
    lines = [_g(1.0, "c", "request", id=1, method="tools/call", payload={"name": "a"}),
             {"ts": 1.5, "direction": "server->client", "parsed": False, "raw": "debug line"},
             _g(1.6, "s", "proxy_error", error={"message": "spawn failed"}),
             _g(1.7, "s", "proxy_error"),
             _g(2.0, "s", "result", id=1, payload='{"content": [', payload_truncated=True),
             _g(2.1, "s", "result", id=1, payload="{broken"),
             "{not json",
             "[1]",
             _g(3.0, "x", "result", id=1, payload={"content": [{"type": "text", "text": "late"}]})]
    [ep], rows = _read(tmp_path, lines)
    assert [(r.rule, r.line) for r in rows] == [("parse_error", 7), ("unparsed_line", 2), ("proxy_error", 3),
                                                ("proxy_error", 4), ("truncated_message", 5), ("bad_message", 6)]
    assert rows[1].reason == "a.jsonl:2: greenlight relayed a line that is not JSON-RPC"
    assert rows[1].snippet == "debug line"
    assert rows[2].reason == "a.jsonl:3: spawn failed" and rows[3].reason == "a.jsonl:4: None"
    assert rows[4].reason == ("a.jsonl:5: greenlight cut this result's payload at its --payload-limit; what it holds "
                              "is incomplete, so it is left out")
    assert rows[4].snippet == '{"content": ['
    assert rows[5].reason == "a.jsonl:6: a greenlight record of type 'result' with an unreadable payload"
    assert rows[0].snippet == "{not json" and rows[0].reason.startswith("a.jsonl:7: invalid JSON")
    # the last line has no known direction: paired with the request all the same
    assert ep.final_observation.text == "late"


def test_a_metadata_only_log_is_one_row_with_the_fix(tmp_path):
    lines = [_g(1.0, "c", "request", id=1, method="tools/call"), _g(1.1, "s", "result", id=1, method="tools/call"),
             _g(2.0, "c", "request", id=2, method="tools/call")]
    eps, rows = _read(tmp_path, lines)
    assert eps == [] and [(r.rule, r.reason) for r in rows] == [(
        "no_payloads", "a.jsonl: greenlight logged this session without --capture-payloads: its 2 tool calls have no "
                       "tool names, arguments or results (rerun with `greenlight run --capture-payloads`)")]
    eps, rows = _read(tmp_path, [_g(1.0, "c", "notification", method="x")])
    assert [(r.rule, r.reason) for r in rows] == [("empty_episode", "a.jsonl: session 1 made no tool call, so it has "
                                                                    "no step (1 message: x)")]
    eps, rows = _read(tmp_path, [_g(1.0, "c", "proxy_error", error={"message": "m"})])
    assert [r.rule for r in rows] == ["proxy_error"]
    eps, rows = _read(tmp_path, [{"ts": 1, "direction": "c", "parsed": True}])
    assert [(r.rule, r.reason) for r in rows] == [("bad_message", "a.jsonl:1: neither request, notification nor "
                                                                  "response")]


def test_units(tmp_path):
    heads = {"/a/g.jsonl": b'\xef\xbb\xbf {"ts": 1.5, "direction": "client->server", "parsed": true}',
             "/a/c.log": b'{"time": 1, "toolName": "x", "params": {}}',
             "/a/d.ndjson": b'{"tool_name": "x", "input_data": {}}',
             "/a/e.json": b'{"tool_name": "x", "tool_args": {}}',
             "/a/f.jsonl": b'{"tool": "x", "params": {}}',
             "/a/h.jsonl": b'{"toolName": "x"}\n{"params": {}}',
             "/a/i.txt": b'{"toolName": "x", "params": {}}',
             "/a/j.jsonl": b'{"ts": 1, "direction": "in", "parsed": true}'}
    assert audit_log.units(sorted(heads), heads.get) == ["/a/c.log", "/a/d.ndjson", "/a/e.json", "/a/g.jsonl"]


def test_call_logs(tmp_path):
    lines = [
        {"timestamp": "2025-10-01T12:00:00Z", "sessionId": "s1", "serverName": "gh", "toolName": "a",
         "params": {"q": 1}, "result": {"content": [{"type": "text", "text": "r1"}], "isError": True}, "user": "u"},
        {"time": "2025-10-01T12:00:01+01:00", "session_id": "s1", "server": "gh", "tool": "b", "arguments": None,
         "response": {"rows": 2}},
        {"ts": "2025-10-01T12:00:02", "session_id": "s1", "server_name": "gh", "tool_name": "c", "args": [1],
         "output": "o3", "error": ""},
        {"sessionId": "s1", "serverName": "gh", "toolName": "d", "input": {"x": 1}, "output_data": "o4",
         "error": False},
        {"sessionId": "s1", "serverName": "gh", "toolName": "e", "input_data": {}, "error": "boom",
         "result": "ignored"},
        {"sessionId": "s1", "serverName": "gh", "toolName": "f", "blocked": True},
        {"sessionId": "s1", "serverName": "gh", "toolName": "g", "error": {"message": "m", "code": 1}},
        {"sessionId": "s1", "serverName": "gh", "toolName": "h", "result": {"content": "not a list"}},
        {"server": "fs", "toolName": "x"},
        {"toolName": 5},
        {"sessionId": 7, "toolName": "y"},
        "not an object",
    ]
    eps, rows = _read(tmp_path, [json.dumps(x) if not isinstance(x, str) else json.dumps(x) for x in lines])
    assert [(r.rule, r.line) for r in rows] == [("bad_record", 10), ("bad_record", 12)]
    assert rows[0].reason == "a.jsonl:10: a call record needs a tool name (toolName / tool_name / tool)"
    assert rows[0].snippet == '{"toolName":5}'
    by_key = {e.key: e for e in eps}
    assert list(by_key) == ["s1", "fs", "7"]
    s1 = by_key["s1"]
    assert s1.env["server_name"] == "gh" and s1.env["session_id"] == "s1"
    assert [(s.action.kind, s.action.tool_name, json.loads(s.action.arguments)) for s in s1.steps] == [
        ("tool_call", "a", {"q": 1}), ("tool_call", "b", {}), ("tool_call", "c", {"input": [1]}),
        ("tool_call", "d", {"x": 1}),
        ("tool_call", "e", {}), ("tool_call", "f", {}), ("tool_call", "g", {}), ("tool_call", "h", {})]
    assert json.loads(s1.steps[0].action.raw)["user"] == "u"
    assert [s.timestamp.isoformat() if s.timestamp else None for s in s1.steps][:4] == [
        "2025-10-01T12:00:00+00:00", "2025-10-01T11:00:01+00:00", None, None]
    obs = [s.observation for s in s1.steps[1:]] + [s1.final_observation]
    assert [(o.kind, o.text, o.is_error) for o in obs] == [
        ("tool_result", "r1", True), ("tool_result", '{"rows":2}', None), ("tool_result", "o3", None),
        ("tool_result", "o4", None), ("tool_result", "boom", True), ("tool_result", "blocked", True),
        ("tool_result", "m", True), ("tool_result", '{"content":"not a list"}', None)]
    assert s1.env["calls"][:3] == [{"line": 1, "user": "u"}, {"line": 2}, {"line": 3, "ts": "2025-10-01T12:00:02"}]
    assert s1.env["calls"][3] == {"line": 4}
    fs = by_key["fs"]
    assert fs.env == {"calls": [{"line": 9}], "server_name": "fs"} and fs.final_observation.kind == "tool_result"
    assert fs.final_observation.text is None and fs.final_observation.is_error is None
    assert by_key["7"].env["session_id"] == 7 and "server_name" not in by_key["7"].env
    assert all(e.domain == "mcp" and e.platform == "linux" and not e.terminated for e in eps)


def test_call_log_groups_and_search(tmp_path):
    eps, rows = _read(tmp_path, [{"toolName": "web_search", "params": {"query": "q"}, "result": "r"},
                                 {"toolName": "web_search", "params": {"query": "q2"}, "blocked": True,
                                  "block_reason": "policy"}])
    [ep] = eps
    assert ep.key == "" and ep.domain == "search"
    assert ep.env == {"calls": [{"line": 1}, {"line": 2, "block_reason": "policy"}]}
    assert ep.final_observation.text == "policy"


def test_bad_lines_of_a_call_log(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_bytes(b'{"toolName": "a", "params": {}}\n\xff\xfe{"x"\n\n{"toolName": "b"}\n')
    records = read_records(audit_log, path)
    rows = [r for r in records if isinstance(r, Rejected)]
    assert [(r.rule, r.line, r.location) for r in rows] == [("parse_error", 2, "b.jsonl")]
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [s.action.tool_name for s in ep.steps] == ["a", "b"]
    assert ep.env["calls"] == [{"line": 1}, {"line": 4}]


@pytest.mark.parametrize("first, reader", [({"direction": "x", "parsed": True}, "messages"),
                                           ({"direction": "x"}, "calls"), ({"parsed": True}, "calls")])
def test_the_first_object_picks_the_shape(tmp_path, first, reader):
    eps, rows = _read(tmp_path, ["[1]", {**first, "toolName": "t"}])
    if reader == "calls":
        assert [s.action.tool_name for e in eps for s in e.steps] == ["t"]
    else:
        assert eps == [] and [r.rule for r in rows][-1] in ("bad_message", "no_messages")


def test_greenlight_directions_keep_the_two_sides_ids_apart(tmp_path):
    lines = [_g(1.0, "c", "request", id=1, method="tools/call", payload={"name": "a"}),
             _g(1.1, "s", "request", id=1, method="roots/list", payload={}),
             _g(1.2, "c", "result", id=1, method="roots/list", payload={"roots": []}),
             _g(1.3, "s", "result", id=1, method="tools/call", payload={"content": [{"type": "text", "text": "X"}]}),
             _g(2.0, "c", "notification", method="notifications/x", payload=[1, 2])]
    [ep], rows = _read(tmp_path, lines)
    assert rows == [] and ep.final_observation.text == "X"
    assert ep.env["notifications"][0]["params"] == {}  # params that are no object are none


def test_greenlight_records_without_payload(tmp_path):
    lines = [_g(1.0, "c", "request", id=1, method="tools/call", payload={"name": "a"}),
             _g(1.1, "s", "error", id=1, method="tools/call"),
             _g(2.0, "c", "request", id=2, method="tools/call", payload={"name": "b"}),
             _g(2.1, "s", "result", id=2, method="tools/call", tools=[{"name": "t"}])]
    [ep], _ = _read(tmp_path, lines)
    assert (ep.steps[1].observation.text, json.loads(ep.steps[1].observation.ui_tree)) == (
        "Error: None", {"message": "None"})
    assert ep.final_observation.text == "{}"  # a tool list is read only from a tools/list result


def test_rows_of_a_greenlight_log_name_the_file_and_keep_500_characters(tmp_path):
    pad = "p" * 600
    lines = [_g(1.0, "c", "request", id=1, method="tools/call", payload={"name": "a"}),
             {"ts": 1.1, "direction": "server->client", "parsed": False, "raw": pad},
             _g(1.2, "s", "proxy_error", error={"message": "m"}),
             _g(1.3, "s", "result", id=1, payload=pad, payload_truncated=True),
             _g(1.4, "s", "result", id=1, payload="{" + pad)]
    _, rows = _read(tmp_path, lines)
    assert [r.rule for r in rows] == ["unparsed_line", "proxy_error", "truncated_message", "bad_message"]
    assert all(r.location == "a.jsonl" for r in rows)
    assert [len(r.snippet) for r in rows if r.snippet is not None] == [500, 500, 500]
    _, rows = _read(tmp_path, [_g(1.0, "c", "request", id=1, method="tools/call")])
    assert [(r.rule, r.location) for r in rows] == [("no_payloads", "a.jsonl")]


def test_images_and_search_results_in_logs(tmp_path):
    image = {"content": [{"type": "image", "data": "QUJD", "mimeType": "image/png"}]}
    search = {"content": [{"type": "text", "text": "[1] https://a.test\nTitle: A\nSnippet: s\nDate: N/A"}]}
    for lines in ([_g(1.0, "c", "request", id=1, method="tools/call", payload={"name": "web_search"}),
                   _g(1.1, "s", "result", id=1, payload=search),
                   _g(2.0, "c", "request", id=2, method="tools/call", payload={"name": "shot"}),
                   _g(2.1, "s", "result", id=2, payload=image)],
                  [{"toolName": "web_search", "params": {}, "result": search},
                   {"toolName": "shot", "params": {}, "result": image}]):
        path = tmp_path / "i.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
        blobs = {}
        [ep] = read_records(audit_log, path, blobs)
        assert json.loads(ep.steps[1].observation.ui_tree)["results"][0]["title"] == "A"
        [(ref, (media, data))] = blobs.items()
        assert (media, data, ep.final_observation.text) == ("image/png", b"ABC", f"[image {ref}]")


def test_a_shell_tool_in_a_call_log_stays_a_tool_call(tmp_path):
    [ep], _ = _read(tmp_path, [{"toolName": "bash", "params": {"command": "ls"}}])
    assert (ep.steps[0].action.kind, ep.steps[0].action.code) == ("tool_call", None)


def test_call_log_rows_and_lines_that_are_no_objects(tmp_path):
    long = {"toolName": 5, "pad": "p" * 400}
    eps, rows = _read(tmp_path, ['"toolName"', "[1]", json.dumps(long), "{" + "x" * 400])
    assert eps == []
    assert [(r.rule, r.line, r.location) for r in rows] == [
        ("parse_error", 4, "a.jsonl"), ("bad_record", 1, "a.jsonl"), ("bad_record", 2, "a.jsonl"),
        ("bad_record", 3, "a.jsonl")]
    assert rows[0].reason.startswith("a.jsonl:4: invalid JSON") and rows[0].snippet == ("{" + "x" * 400)[:300]
    assert len(rows[3].snippet) == 300


def test_a_line_that_is_no_utf8_is_a_row_naming_it(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_bytes(b'{"toolName": "a", "params": {}}\n{"x": "\xff"}\n')
    records = read_records(audit_log, path)
    [row] = [r for r in records if isinstance(r, Rejected)]
    assert (row.rule, row.line, row.reason) == ("parse_error", 2, "b.jsonl: line 2: not valid UTF-8 (byte 7)")


def test_units_want_the_record_at_the_start():
    heads = {"/a/g.jsonl": b'X{"ts": 1.5, "direction": "client->server", "parsed": true}'}
    assert audit_log.units(list(heads), heads.get) == []


def test_a_direction_greenlight_does_not_write_names_no_sender(tmp_path):
    lines = [_g(1.0, "c", "request", id=1, method="tools/call", payload={"name": "a"}),
             {**_g(1.1, "c", "request", id=2, method="tools/call", payload={"name": "b"}), "direction": "x"}]
    [ep], _ = _read(tmp_path, lines)
    assert [s.action.tool_name for s in ep.steps] == ["a", "b"]


def test_a_servers_result_answers_the_clients_call_not_a_newer_server_request(tmp_path):
    lines = [_g(1.0, "c", "request", id=1, method="tools/call", payload={"name": "a"}),
             _g(1.1, "c", "request", id=2, method="initialize", payload={}),
             _g(1.2, "s", "request", id=1, method="roots/list", payload={}),
             _g(1.3, "s", "result", id=1, method="tools/call", payload={"content": [{"type": "text", "text": "X"}]})]
    eps, _ = _read(tmp_path, lines)
    assert eps[0].final_observation.text == "X"


def test_a_file_without_any_object_is_read_as_a_call_log(tmp_path):
    eps, rows = _read(tmp_path, ['"x"', "[1]"])
    assert eps == [] and [(r.rule, r.line) for r in rows] == [("bad_record", 1), ("bad_record", 2)]


PROXY_LINES = ['2025-07-02T10:00:01Z INFO [REQUEST] Method: tools/call | ID: 1 | Payload: {"name": "a", '
               '"arguments": {}}',
               '2025-07-02T10:00:02Z INFO [RESPONSE] ID: 1 | Payload: {"content": [{"type": "text", "text": "ok"}]}',
               '2025-07-02T10:00:03Z DEBUG upstream answered 1']
AUDIT_LINE = json.dumps({"timestamp": "2025-07-02T09:59:50Z", "toolName": "ls", "params": {"path": "/"}, "result": "a"})


def test_a_proxy_log_that_opens_with_audit_lines_is_not_claimed_when_its_first_bytes_show_it():
    heads = {"/a/proxy.log": "\n".join([AUDIT_LINE, *PROXY_LINES]).encode(),
             "/a/calls.log": "\n".join([AUDIT_LINE, AUDIT_LINE, PROXY_LINES[0]]).encode(),
             "/a/text.log": "\n".join([AUDIT_LINE, "started", "stopped", "bye"]).encode()}
    assert audit_log.units(sorted(heads), heads.get) == ["/a/calls.log", "/a/text.log"]


def test_a_claimed_file_most_of_whose_lines_are_a_proxy_log_is_read_line_by_line_by_their_readers(tmp_path):
    """The first bytes showed only audit lines (data/mixed-audit-proxy.log: 5 KB of them): the audit reader
    hands the file to the proxy-log reader, which reads the audit lines as calls and the rest as its messages."""
    episodes, rows = _read(tmp_path, [AUDIT_LINE, *PROXY_LINES], "p.log")
    assert rows == [] and [(e.key, len(e.steps)) for e in episodes] == [("", 1), ("audit:", 1)]
    assert [e.steps[0].action.tool_name for e in episodes] == ["a", "ls"]
    path = Path(__file__).parent / "data" / "mixed-audit-proxy.log"
    records = read_records(audit_log, path)
    assert [(r.key, len(r.steps)) for r in records] == [("", 23), ("audit:files", 3)]


def test_a_call_log_whose_last_result_is_over_the_field_budget_is_a_row_naming_the_file(tmp_path, monkeypatch):
    """The transcript core checks the episode's own fields: a final observation over `field_bytes` cannot be
    written, so the episode is one `schema_mismatch` row that names the file (the other group is kept)."""
    from ingest import arrow
    from ingest.source import Budgets

    monkeypatch.setattr(arrow, "default_budgets", lambda: Budgets(field_bytes=64))
    lines = [{"toolName": "cat", "params": {}, "result": "x" * 100, "sessionId": "big"},
             {"toolName": "ls", "params": {}, "result": "short", "sessionId": "small"}]
    eps, rows = _read(tmp_path, lines, name="calls.jsonl")
    assert [e.key for e in eps] == ["small"]
    assert [(r.rule, r.location, r.record_id) for r in rows] == [("schema_mismatch", "calls.jsonl", "big")]
    assert rows[0].reason.startswith("calls.jsonl: episode 'big': field final_observation.text: 100 characters")
