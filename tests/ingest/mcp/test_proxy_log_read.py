"""The MCP proxy-log reader called directly (`proxy_log.read`) on the logs of test_proxy_log.py (Claude Desktop,
supergateway: their line formats), the bundled wire log of a real SDK session, the real Claude Desktop logs,
and hand-made prefixes: each message's time, sender and channel, multi-line messages, and the rows for what
cannot be read back."""

import json
from pathlib import Path

import pytest

from ingest.mcp import jsonrpc, proxy_log
from ingest.record import Episode, Rejected
from tests.conftest import SAMPLES
from tests.ingest.golden import read_records
from tests.ingest.mcp.test_proxy_log import CLAUDE_SERVER_LOG, SUPERGATEWAY_LOG, _call, _ok

MCP = SAMPLES / "mcp"
DATA = Path(__file__).parent / "data"


def _read(tmp_path, text, name="p.log"):
    path = tmp_path / name
    path.write_text(text if isinstance(text, str) else "\n".join(text) + "\n")
    records = read_records(proxy_log, path)
    return [r for r in records if isinstance(r, Episode)], [r for r in records if isinstance(r, Rejected)]


def _msg(obj):
    return json.dumps(obj)


def test_claude_desktop_server_log(tmp_path):
    [ep], rows = _read(tmp_path, CLAUDE_SERVER_LOG, "mcp-server-weather.log")
    assert ep.agent == "claude-ai" and ep.env["server_name"] == "weather"
    assert ep.env["server"]["serverInfo"]["name"] == "weather-server"
    assert [json.loads(s.action.arguments) for s in ep.steps] == [{"city": "Bogor"}, {"city": "Salatiga"}]
    assert ep.steps[1].observation.text == "Bogor: 30.1°C, broken clouds"
    assert (ep.final_observation.text, ep.final_observation.is_error) == ("City not found", True)
    assert [s.timestamp.isoformat() for s in ep.steps] == ["2025-06-30T06:12:22.229000+00:00",
                                                          "2025-06-30T06:17:08.824000+00:00"]
    assert [(r.rule, r.line) for r in rows] == [("truncated_message", 20), ("unpaired_response", 21)]
    assert rows[0].reason == ("mcp-server-weather.log:20: the logger cut this message (...[8499 chars truncated]...); "
                              "what it holds is incomplete, so it is left out")
    assert rows[0].snippet.startswith("2025-06-30T06:13:01.387Z [weather] [info] Message from client: {")
    assert rows[0].location == "mcp-server-weather.log"


def _combined_log_lines():
    def line(ts, server, who, msg, level="info"):
        return f"{ts} [{level}] [{server}] Message from {who}: {json.dumps(msg)}"

    init = {"method": "initialize", "params": {"clientInfo": {"name": "c"}}, "jsonrpc": "2.0", "id": 0}
    text = [line("2025-02-22T04:14:49.196Z", "fs", "client", init),
            line("2025-02-22T04:14:49.200Z", "gh", "client", init, level="WARN"),
            line("2025-02-22T04:14:50.000Z", "fs", "client", _call(1, "ls", {})),
            line("2025-02-22T04:14:50.001Z", "gh", "client", _call(1, "search", {})),
            line("2025-02-22T04:14:50.100Z", "gh", "server", _ok(1, "gh result")),
            line("2025-02-22T04:14:50.200Z", "fs", "server", _ok(1, "fs result"))]
    return text


def test_combined_log_keeps_each_server_apart(tmp_path):
    eps, rows = _read(tmp_path, _combined_log_lines(), "mcp.log")
    assert rows == []
    assert [(e.key, e.env["server_name"], e.final_observation.text) for e in eps] == [
        ("", "fs", "fs result"), ("line2", "gh", "gh result")]


def test_supergateway_log(tmp_path):
    [ep], rows = _read(tmp_path, SUPERGATEWAY_LOG, "gateway.log")
    assert ep.agent == "openai-mcp" and ep.steps[0].action.tool_name == "read_file"
    assert ep.final_observation.text == "hello" and "server_name" not in ep.env
    assert [(r.rule, r.line) for r in rows] == [("not_json", 11), ("not_json", 12)]
    assert rows[0].reason == ("gateway.log:11: the message is a Node.js util.inspect dump, not JSON (nested values "
                              "may be elided as [Object]); it cannot be read back: log it with JSON.stringify")
    assert rows[0].snippet.startswith("[supergateway] Child → SSE: { jsonrpc: '2.0'")
    assert rows[1].snippet.startswith("[supergateway] Child → SSE: {\n  jsonrpc: '2.0',")


def test_bundled_wire_log_reads_like_the_wire_jsonl():
    [log] = read_records(proxy_log, MCP / "sdk-stdio" / "wire.log")
    [wire] = read_records(jsonrpc, MCP / "sdk-stdio" / "wire.jsonl")
    assert log.env == wire.env
    assert [(s.action, s.observation, s.timestamp) for s in log.steps] == [
        (s.action, s.observation, s.timestamp) for s in wire.steps]
    assert log.final_observation == wire.final_observation
    assert log.steps[0].timestamp.isoformat() == "2026-12-03T08:11:13.414000+00:00"


def test_real_claude_desktop_logs_of_servers_that_never_started():
    rows = read_records(proxy_log, DATA / "claude-desktop" / "mcp-server-filesystem.log")
    assert [(r.rule, r.line, r.reason) for r in rows][:1] == [
        ("empty_episode", 3, "mcp-server-filesystem.log: session 1 (filesystem) made no tool call, so it has no step "
                             "(1 message: initialize; 1 request never answered: the server may have exited)")]
    rows = read_records(proxy_log, DATA / "claude-desktop" / "mcp.log")
    assert {r.rule for r in rows} == {"empty_episode"}
    assert sorted({r.reason.split("(", 1)[1].split(")", 1)[0] for r in rows}) == ["filesystem", "server"]


def test_a_host_log_without_any_message(tmp_path):
    eps, rows = _read(tmp_path, ["2025-06-30T00:28:56.183Z [info] [mix] Initializing server...",
                                 '{"level": "info"}', "{", "  a: 1", "}"], "mcp.log")
    assert eps == [] and [(r.rule, r.reason, r.location) for r in rows] == [
        ("no_messages", "mcp.log: an MCP log with no readable JSON-RPC message (host or proxy lines only: the server "
                        "may never have started)", "mcp.log")]


def test_units_claim_prefixed_logs_only():
    heads = {"/l/a.log": CLAUDE_SERVER_LOG.encode()[:4096], "/l/b.log": SUPERGATEWAY_LOG.encode(),
             "/l/c.out": b"2025-06-30T00:28:56.183Z [mix] [info] Initializing server...\n",
             "/l/d.err": b'x\n[2025-05-02T14:00:03Z] >>> {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\n',
             "/l/e.txt": b'INFO [REQUEST] Method: tools/call | ID: 1 | Payload: {"name": "x"}\n',
             "/l/f.ndjson": b"send { id: 1, jsonrpc: '2.0' }\n",
             "/l/g.jsonl": b'x Message from server: {"id": 1}\n',
             "/l/h.log": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\n',
             "/l/i.log": b'INFO {"method": "Tools/x"}\n',
             "/l/j.json": b'x {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
             "/l/k.log": b'INFO [REQUEST] Method: Foo | Payload: {"name": "x"}\n',
             "/l/0.bin": b'x {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\n'}
    assert proxy_log.units(sorted(heads), heads.get) == ["/l/a.log", "/l/b.log", "/l/c.out", "/l/d.err", "/l/e.txt",
                                                         "/l/f.ndjson", "/l/g.jsonl"]


@pytest.mark.parametrize("prefix, stamp, sender", [
    ("2025-05-02T14:00:03Z -> ", "2025-05-02T14:00:03Z", None),
    ("2025-05-02T14:00:03Z client -> server: ", "2025-05-02T14:00:03Z", "client"),
    ("[2025-05-02 14:00:03,123+02:00] server => client ", "2025-05-02T14:00:03.123+02:00", "server"),
    ("2025-05-02T14:00:03 host <- server ", "2025-05-02T14:00:03", "server"),
    ("proxy --> Child: ", None, "client"),
    ("Child <-- stdio ", None, "client"),
    ("stdio → Child: ", None, "client"),
    ("abc ← server ", None, "server"),
    ("app → x ", None, None),
    ("sent by client ", None, "client"),
    ("from server ", None, "server"),
    ("server: ", None, "server"),
    ("CLIENT: ", None, "client"),
    ("c2s ", None, "client"),
    ("", None, None),
])
def test_a_prefix_tells_time_and_sender(prefix, stamp, sender):
    assert proxy_log._prefix(prefix) == (stamp, None, sender)


def test_claude_prefix_names_the_channel_after_or_before_the_level():
    assert proxy_log._prefix("2025-06-30T06:12:22.229Z [weather] [info] Message from client: ") == (
        "2025-06-30T06:12:22.229Z", "weather", "client")
    assert proxy_log._prefix("2025-06-30T06:12:22.229Z [ERROR] [gh] Message from server: ") == (
        "2025-06-30T06:12:22.229Z", "gh", "server")


def test_messages_without_jsonrpc_need_a_sender(tmp_path):
    lines = ['x {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}}',
             'log {"id": 2, "method": "tools/call", "params": {"name": "skipped"}}',
             'client -> server {"id": 3, "method": "tools/call", "params": {"name": "b"}}',
             'server -> client {"id": 3, "result": {"content": []}}',
             'server -> client ["jsonrpc"]',
             'server -> client {"error": {"message": "x"}}',
             'client -> server { "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "c"}}'
             ' trailing text']
    [ep], rows = _read(tmp_path, lines)
    assert [s.action.tool_name for s in ep.steps] == ["a", "b", "c"]
    assert [(r.rule, r.line) for r in rows] == [("bad_message", 6)]
    assert ep.steps[2].observation.text == "" and ep.env["unanswered_calls"] == 2


def test_multi_line_messages(tmp_path):
    lines = ["Error: ENOENT {", "  errno: -2,", "}",
             "2025-05-02T14:00:03Z client -> server: {",
             '  "jsonrpc": "2.0",', "", '  "id": 1,', '  "method": "tools/call",', '  "params": {"name": "ls"}', "}",
             "2025-05-02T14:00:04Z server -> client: {",
             '  "jsonrpc": "2.0",', '  "id": 1,', '  "result": {"content": [', "}",
             "2025-05-02T14:00:05Z server -> client: {",
             '  "jsonrpc": "2.0",', '  "id": 1,', '  "result": {"content": [{"type": "text", "text": "a"}]}', "}"]
    [ep], rows = _read(tmp_path, lines)
    assert ep.steps[0].timestamp.isoformat() == "2025-05-02T14:00:03+00:00"
    assert ep.final_observation.text == "a"
    assert [(r.rule, r.line) for r in rows] == [("parse_error", 11)]
    assert rows[0].reason.startswith("p.log:11: the message after the prefix is not valid JSON: ")
    assert rows[0].reason.endswith(" (line 5 of it)")


def test_unreadable_one_line_messages(tmp_path):
    lines = ['2025-05-02T14:00:03Z -> {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name"',
             'x {"jsonrpc": "2.0", "id": 2, "result": {"content": "abc [12 chars truncated]',
             'x {"jsonrpc": "2.0", "id": 3, "result": "cut (truncated)',
             'x {"jsonrpc": "2.0", "id": 3, "result": "cut ... truncated',
             'x {"jsonrpc": "2.0", "id": 4, "result": "a" junk']
    eps, rows = _read(tmp_path, lines)
    assert [(r.rule, r.line) for r in rows][:4] == [("parse_error", 1), ("truncated_message", 2),
                                                    ("truncated_message", 3), ("truncated_message", 4)]
    assert rows[0].reason == ("p.log:1: the message after the prefix is not valid JSON: Expecting ':' delimiter at "
                              "column 94")  # just past the end of the line
    assert rows[2].reason == "p.log:3: the logger cut this message short ((truncated)); it cannot be read back"
    assert rows[1].snippet == lines[1][:500]


def test_tagged_lines(tmp_path):
    lines = ['2025-07-02T10:00:01Z [REQUEST] Method: tools/call | ID: 1 | Payload: {"name": "a", "arguments": {}}',
             '[REQUEST] Method: tools/call | request_id="x-2" | Payload: {"name": "b"}',
             '[NOTIFICATION] Method: notifications/progress | Payload: {"p": 1}',
             '[notification] Payload: {"p": 2}',
             '[RESPONSE] ID: x-2 | Payload: {"content": [{"type": "text", "text": "for b"}]}',
             '[RESPONSE] payload: {"content": [{"type": "text", "text": "for a"}]}',
             '[REQUEST] Method: tools/call | Payload: {"name": "c"}',
             '[REQUEST] Method: tools/call | Payload: {"name": "d"}',
             '[ERROR] id=line8 | Payload: {"code": 5, "message": "no"}',
             '[RESPONSE] Payload: ["for c"]',
             '[RESPONSE] Payload: {broken',
             '[RESPONSE] ID: 77 | Payload: {"content": []}']
    [ep], rows = _read(tmp_path, lines)
    assert [s.action.tool_name for s in ep.steps] == ["a", "b", "c", "d"]
    assert ep.steps[0].timestamp.isoformat() == "2025-07-02T10:00:01+00:00"
    assert ep.steps[1].observation.text == "for a" and ep.steps[2].observation.text == "for b"
    assert ep.steps[3].observation.text == "['for c']"
    assert (ep.final_observation.text, ep.final_observation.is_error) == ("Error 5: no", True)
    assert ep.env["notifications"] == [
        {"method": "notifications/progress", "params": {"p": 1}, "after_step": 2},
        {"method": "notifications/unknown", "params": {"p": 2}, "after_step": 2}]
    assert [(r.rule, r.line) for r in rows] == [("parse_error", 11), ("unpaired_response", 12)]
    assert rows[0].reason.startswith("p.log:11: the message after the prefix is not valid JSON: ")
    assert " at column " in rows[0].reason


def test_a_bom_and_bytes_that_are_no_utf8(tmp_path):
    path = tmp_path / "b.log"
    path.write_bytes(b"\xef\xbb\xbf" + b'-> {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": '
                     b'"a\xff"}}\n')
    [ep] = read_records(proxy_log, path)
    assert ep.steps[0].action.tool_name == "a\ufffd"


@pytest.mark.parametrize("prefix, sender", [
    ("proxy -> client: ", "server"), ("client -> proxy ", "client"), ("client <= server ", "server"),
    ("stdio -> x ", "client"), ("host -> x ", "client"), ("my-client -> x ", "client"),
    ("server-a -> x ", "server")])
def test_an_arrow_names_the_sender_by_either_side(prefix, sender):
    assert proxy_log._prefix(prefix)[2] == sender


def test_a_bom_before_the_first_claude_line(tmp_path):
    init = {"method": "initialize", "params": {"clientInfo": {"name": "claude-ai"}}, "jsonrpc": "2.0", "id": 0}
    lines = ["\ufeff2025-06-30T06:11:46.000Z [weather] [info] Message from client: " + json.dumps(init),
             "2025-06-30T06:11:47.000Z [weather] [info] Message from client: " + json.dumps(_call(1, "a", {}))]
    [ep], rows = _read(tmp_path, lines)
    assert rows == [] and ep.agent == "claude-ai" and ep.env["server_name"] == "weather"


def test_tagged_lines_in_any_case_with_their_lines_and_times(tmp_path):
    lines = ['2025-07-02T10:00:00Z [NOTIFICATION] Method: notifications/started | PAYLOAD: {}',
             '2025-07-02T10:00:01Z [REQUEST] Method: tools/call | ID: 3 | PAYLOAD: {"name": "a"}',
             '2025-07-02T10:00:02Z [REQUEST] Payload: {"jsonrpc": "2.0", "id": "w", "method": "tools/call", '
             '"params": {"name": "whole"}}',
             '[RESPONSE] Payload: {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "srv"}}',
             '[RESPONSE] ID: 8 | Payload: {"jsonrpc": "2.0", "id": 8}',
             '[RESPONSE] ID: 3 | Payload: {"result": {}}',
             '[ERROR] ID: 3 | Payload: {"error": {"message": "x"}}',
             '[REQUEST] Method: tools/call | ID: 5 | Payload: {"method": "tools/call", "params": {"name": "v"}}',
             '[RESPONSE] ID: 77 | Payload: {"content": []}']
    [ep], rows = _read(tmp_path, lines)
    assert [s.action.tool_name for s in ep.steps] == ["a", "whole"]
    assert [s.timestamp.second for s in ep.steps] == [1, 2]
    assert json.loads(ep.steps[0].action.raw)["id"] == 3  # a numeric id is a number
    assert [(r.rule, r.line) for r in rows] == [("bad_message", 5), ("bad_message", 6), ("bad_message", 7),
                                                ("unpaired_response", 9)]
    assert [n["method"] for n in ep.env["notifications"]] == ["notifications/started", "tools/call"]


def test_a_tagged_log_without_calls_names_its_first_line(tmp_path):
    for first in ('[NOTIFICATION] Method: x/y | Payload: {}', '[REQUEST] Method: initialize | ID: 1 | Payload: {}',
                  '[REQUEST] Payload: {"jsonrpc": "2.0", "id": 1, "method": "initialize"}'):
        _, rows = _read(tmp_path, ["noise", first])
        assert [(r.rule, r.line) for r in rows] == [("empty_episode", 2)], first


def test_unreadable_rows_name_the_file_and_keep_500_characters(tmp_path):
    pad = "p" * 600
    lines = [f"[REQUEST] Payload: {{\"name\": \"{pad}\"}}",
             f"send {{ x: 1, jsonrpc: '2.0', pad: '{pad}' }}",
             f'x {{"jsonrpc": "2.0", "id": 2, "result": "{pad} [12 chars truncated]',
             f'x {{"jsonrpc": "2.0", "id": 2, "result": "{pad}',
             f'x {{"jsonrpc": "2.0", "id": 3, "result": "{pad} ...[5 chars truncated]..."}}']
    _, rows = _read(tmp_path, lines)
    assert [r.rule for r in rows] == ["bad_message", "not_json", "truncated_message", "parse_error",
                                      "truncated_message"]
    assert all(r.location == "p.log" and len(r.snippet) == 500 for r in rows)
    assert rows[0].reason == "p.log:1: a [REQUEST] line names no Method:"


def test_multi_line_message_edges(tmp_path):
    one_space = ["-> {", ' "jsonrpc": "2.0",', ' "id": 1,', ' "method": "tools/call",', ' "params": {"name": "a"}', "}",
                 '-> {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "b"}}']
    [ep], rows = _read(tmp_path, one_space)
    assert rows == [] and [s.action.tool_name for s in ep.steps] == ["a", "b"]
    spaced = ["-> {", '  "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}', "}  "]
    [ep], rows = _read(tmp_path, spaced)
    assert rows == [] and [s.action.tool_name for s in ep.steps] == ["a"]
    to_the_end = ["-> {", '  "jsonrpc": "2.0",', '  "id": 1']
    eps, rows = _read(tmp_path, to_the_end)
    assert [(r.rule, r.line) for r in rows] == [("parse_error", 1)]
    bracket = ["-> {", '  "jsonrpc": "2.0",', "]"]
    eps, rows = _read(tmp_path, bracket)
    assert rows[0].reason.endswith(" (line 3 of it)")


def test_images_in_a_proxy_log_go_to_the_blob_store(tmp_path):
    blobs = {}
    path = tmp_path / "i.log"
    path.write_text("\n".join([
        "-> " + json.dumps(_call(1, "shot", {})),
        "<- " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "image", "data": "QUJD",
                                                                              "mimeType": "image/png"}]}})]) + "\n")
    [ep] = read_records(proxy_log, path, blobs)
    [(ref, (media, data))] = blobs.items()
    assert (media, data) == ("image/png", b"ABC") and ep.final_observation.text == f"[image {ref}]"


def test_a_tagged_response_answers_the_clients_request_not_a_newer_server_one(tmp_path):
    lines = ['[REQUEST] Method: tools/call | ID: 1 | Payload: {"name": "a"}',
             '[REQUEST] Method: initialize | ID: 2 | Payload: {}',
             '[RESPONSE] Payload: {"jsonrpc": "2.0", "id": 1, "method": "roots/list"}',
             '[RESPONSE] ID: 1 | Payload: {"content": [{"type": "text", "text": "X"}]}']
    eps, _ = _read(tmp_path, lines)
    assert eps[0].final_observation.text == "X"


def test_a_message_after_a_multi_line_one_and_a_blank_line(tmp_path):
    lines = ["-> {", '  "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}', "}", "",
             '-> {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "b"}}']
    [ep], rows = _read(tmp_path, lines)
    assert rows == [] and [s.action.tool_name for s in ep.steps] == ["a", "b"]


def test_a_proxy_log_that_opens_with_audit_lines_reads_each_line_by_its_reader():
    """data/mixed-audit-proxy.log (hand-made, PROVENANCE.md): three audit JSON lines, then a proxy's tagged lines
    with 23 `tools/call` requests and one JSON status line between them. A person counts 26 tool calls: the
    proxy's 23 in its session, the gateway's 3 in an episode of their own; no line is a parse error."""
    records = read_records(proxy_log, DATA / "mixed-audit-proxy.log")
    assert [r for r in records if isinstance(r, Rejected)] == []
    session, audit = records
    assert (session.key, audit.key) == ("", "audit:files")
    assert (len(session.steps), len(audit.steps)) == (23, 3)
    assert [s.action.tool_name for s in session.steps[:4]] == ["search_files", "read_file", "list_directory",
                                                              "write_file"]
    assert [t["name"] for t in session.env["tools"]] == ["list_directory", "read_file", "search_files", "write_file"]
    errors = [s.observation.text for s in session.steps[1:] if s.observation.is_error]
    assert errors == ["Error -32001: read-only file system"] * 3
    assert session.env["log_records"] == [{"line": 52, "record": {
        "timestamp": "2025-07-02T10:00:40.000Z", "event": "upstream_restarted", "pid": 4121, "reason": "memory limit"}}]
    assert [json.loads(s.action.arguments) for s in audit.steps] == [
        {"path": "/work/repo/src"}, {"path": "/work/repo/README.md"}, {"path": "/etc/hosts", "content": "x"}]
    assert audit.steps[1].observation.text.startswith("-rw-r--r-- 1 dev dev   1000 Jul  2 09:50 src/module_00.py")
    assert (audit.final_observation.text, audit.final_observation.is_error) == ("path outside allowed roots", True)
    assert audit.steps[0].timestamp.isoformat() == "2025-07-02T09:59:50.120000+00:00"


def test_json_lines_that_are_no_calls_and_no_messages_are_kept_not_dropped(tmp_path):
    lines = ['{"event": "proxy_started", "port": 8931}',
             '[REQUEST] Method: tools/call | ID: 1 | Payload: {"name": "a", "arguments": {}}',
             '[RESPONSE] ID: 1 | Payload: {"content": [{"type": "text", "text": "ok"}]}']
    [ep], rows = _read(tmp_path, lines)
    assert rows == [] and ep.env["log_records"] == [{"line": 1, "record": {"event": "proxy_started", "port": 8931}}]
    [], rows = _read(tmp_path, ['{"event": "proxy_started"}', "INFO [REQUEST] Method: tools/call | Payload: {bad"])
    assert [r.rule for r in rows] == ["parse_error"]  # the file is quarantined: its rows say why
