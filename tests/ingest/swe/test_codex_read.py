"""The Codex reader called directly (`codex.read`) on hand-made rollouts in the shapes codex-rs writes
(`codex-rs/core/src/rollout/recorder.rs`, `codex-rs/protocol/src/models.rs`): each step's time, action and raw
call, every output shape's text and exit code, the terminal flag, and the rows for broken and unknown lines."""

import datetime as dt
import json

import pytest
from fsspec.implementations.local import LocalFileSystem

from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.swe import codex

NAME = "rollout-2025-09-01T10-00-00-x.jsonl"


def _stamp(i: int) -> str:
    return f"2025-09-01T10:00:{i:02d}.000Z"


def _at(i: int) -> dt.datetime:
    return dt.datetime(2025, 9, 1, 10, 0, i, tzinfo=dt.timezone.utc)


def _read(tmp_path, lines, name=NAME) -> list:
    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return list(codex.read(Source(fs=LocalFileSystem(), path=str(path), uri=f"in/{name}",
                                  put_blob=lambda *a: "sha256:0")))


def _lines(*items):
    """(type, payload) pairs as rollout lines, stamped one second apart."""
    return [{"timestamp": _stamp(i), "type": kind, "payload": payload} for i, (kind, payload) in enumerate(items)]


def _item(**payload):
    return ("response_item", payload)


def _msg(role, text):
    return _item(type="message", role=role, content=[{"type": "input_text" if role == "user" else "output_text",
                                                      "text": text}])


def _split(records):
    eps = [r for r in records if isinstance(r, Episode)]
    return (eps[0] if eps else None), [r for r in records if isinstance(r, Rejected)]


META = ("session_meta", {"id": "s-1", "cwd": "/repo", "cli_version": "0.39.0", "instructions": "Be brief."})


def test_each_steps_time_action_raw_and_model(tmp_path):
    call = {"type": "function_call", "name": "exec_command", "call_id": "c1", "arguments": '{"cmd": "ls -a"}'}
    lines = _lines(META, ("turn_context", {"model": "m1"}), _msg("user", "go"),
                   ("event_msg", {"type": "user_message", "message": "go"}),
                   _item(**call),                                                     # 4
                   _item(type="function_call_output", call_id="c1", output="Exit code: 2\nboom"),
                   ("turn_context", {"model": 7}),
                   _item(type="function_call", name="shell_command", call_id="c2",
                         arguments='{"command": "pwd"}'),                             # 7
                   _item(type="function_call_output", call_id="c2",
                         output="Process exited with code -1 after"),
                   ("turn_context", {"model": "m2"}),
                   _msg("assistant", "done"))                                         # 10
    ep, rows = _split(_read(tmp_path, lines))
    assert rows == []
    assert [s.timestamp for s in ep.steps] == [_at(4), _at(7), _at(10)]
    assert [(s.action.kind, s.action.code, s.action.tool_name) for s in ep.steps] == [
        ("command", "ls -a", "exec_command"), ("command", "pwd", "shell_command"), ("message", None, None)]
    assert json.loads(ep.steps[0].action.raw) == call and json.loads(ep.steps[0].action.arguments) == {"cmd": "ls -a"}
    assert [(s.observation.kind, s.observation.text, s.observation.exit_code) for s in ep.steps] == [
        ("text", "go", None), ("terminal", "Exit code: 2\nboom", 2),
        ("terminal", "Process exited with code -1 after", -1)]
    assert ep.steps[2].action.text == "done"
    assert ep.agent == "m1" and ep.env["models"] == ["m1", "m2"]  # a model that is no string: the one before
    assert ep.env["model_per_step"] == ["m1", "m1", "m2"]
    assert (ep.task, ep.outcome, ep.reward, ep.terminated, ep.domain, ep.platform) == (
        "go", "unknown", None, True, "swe", "linux")
    assert ep.env["codex"]["session"] == {"id": "s-1", "cwd": "/repo", "cli_version": "0.39.0"}
    assert ep.env["codex"]["turn_context"] == {"model": "m1"} and ep.env["codex"]["events"] == {"user_message": 1}
    assert ep.env["system_prompt"] == "Be brief."


@pytest.mark.parametrize("output, text, code", [
    ([{"type": "input_text", "text": "a"}, {"type": "input_image"}, "x"], "a\n[input_image]", None),
    ({"content": "c", "success": True}, "c", None),
    ({"other": 1}, '{"other":1}', None),
    (5, None, None),
    ('{"output": "o", "metadata": {"exit_code": 3}}', "o", 3),
    ('{"output": "o", "metadata": {"exit_code": true}}', "o", None),
    ('{"output": "o", "metadata": "m"}', "o", None),
    ('{"output": 1, "metadata": {"exit_code": 3}}', '{"output": 1, "metadata": {"exit_code": 3}}', None),
    ('{"metadata": broken', '{"metadata": broken', None),
    ('{"output": "Exit code: 4"}', '{"output": "Exit code: 4"}', None),
    ("Exit code 9", "Exit code 9", 9),
    ("exit code: 9", "exit code: 9", None),
    ("see Exit code: 9", "see Exit code: 9", None),
    ("Exit code: 12x", "Exit code: 12x", None),
])
def test_every_output_shape_gives_its_text_and_exit_code(tmp_path, output, text, code):
    lines = _lines(META, _msg("user", "go"),
                   _item(type="function_call", name="shell", call_id="c1", arguments='{"command": ["ls"]}'),
                   _item(type="function_call_output", call_id="c1", output=output))
    ep, _ = _split(_read(tmp_path, lines))
    assert (ep.final_observation.text, ep.final_observation.exit_code) == (text, code)


def test_custom_local_shell_and_web_search_calls(tmp_path):
    patch = {"type": "custom_tool_call", "name": "apply_patch", "call_id": "p1", "input": "*** Begin Patch"}
    local = {"type": "local_shell_call", "call_id": "l1", "action": {"type": "exec", "command": ["bash", "-lc", "id"]}}
    bad_local = {"type": "local_shell_call", "id": "l2", "action": "x"}
    search = {"type": "web_search_call", "id": "w1", "action": {"type": "search", "query": "q"}}
    bad_search = {"type": "web_search_call", "action": ["q"]}
    lines = _lines(META, _msg("user", "go"), _item(**patch),
                   _item(type="custom_tool_call_output", call_id="p1", output="Done!"),
                   _item(**local), _item(type="function_call_output", call_id="l1", output="uid=0"),
                   _item(**bad_local), _item(**search), _item(**bad_search),
                   _item(type="function_call", name="shell", call_id="s1", arguments='{"command": 5}'),
                   _item(type="function_call", name="exec_command", call_id="s2", arguments='"x"'),
                   _item(type="function_call", name="other", call_id="s3", arguments='{"command": ["ls"]}'),
                   _msg("assistant", "ok"))
    ep, rows = _split(_read(tmp_path, lines))
    assert rows == []
    kinds = [(s.action.kind, s.action.tool_name, s.action.code) for s in ep.steps]
    assert kinds == [("tool_call", "apply_patch", None), ("command", "local_shell", "id"),
                     ("tool_call", "local_shell", None), ("tool_call", "web_search", None),
                     ("tool_call", "web_search", None), ("tool_call", "shell", None),
                     ("tool_call", "exec_command", None), ("tool_call", "other", None), ("message", None, None)]
    assert json.loads(ep.steps[0].action.arguments) == {"input": "*** Begin Patch"}
    assert json.loads(ep.steps[0].action.raw) == patch and json.loads(ep.steps[1].action.raw) == local
    assert json.loads(ep.steps[1].action.arguments) == local["action"]
    assert json.loads(ep.steps[3].action.arguments) == search["action"]
    assert [json.loads(s.action.raw) for s in ep.steps[2:5]] == [bad_local, search, bad_search]
    assert (ep.steps[1].observation.text, ep.steps[1].observation.kind) == ("Done!", "tool_result")
    assert (ep.steps[2].observation.text, ep.steps[2].observation.kind) == ("uid=0", "terminal")
    # the calls of one response take its first time
    assert [s.timestamp for s in ep.steps] == [_at(i) for i in (2, 4, 6, 6, 6, 6, 6, 6, 12)]


def test_reasoning_items_go_to_the_next_turn_and_split_a_response(tmp_path):
    lines = _lines(META, _msg("user", "go"),
                   _item(type="reasoning", summary=[{"type": "summary_text", "text": "s1"}, "x", {"text": 3}],
                         content=[{"type": "reasoning_text", "text": "c1"}]),
                   _msg("assistant", "let me look"),
                   _item(type="function_call", name="shell", call_id="a", arguments='{"command": ["ls"]}'),
                   _item(type="reasoning", summary=None, content=[{"text": "again"}]),
                   _item(type="function_call", name="shell", call_id="b", arguments='{"command": ["pwd"]}'),
                   _item(type="function_call", name="shell", call_id="c", arguments='{"command": ["id"]}'))
    ep, _ = _split(_read(tmp_path, lines))
    assert [s.reasoning for s in ep.steps] == ["s1\n\nc1\n\nlet me look", "again", None]
    assert [s.action.code for s in ep.steps] == ["ls", "pwd", "id"]
    assert [s.timestamp for s in ep.steps] == [_at(3), _at(6), _at(6)]
    assert ep.terminated is False  # it ends on calls the model has not answered


def test_messages_by_role_injected_context_and_parts(tmp_path):
    lines = _lines(META,
                   _item(type="message", role="developer", content=[{"type": "input_text", "text": "dev"}]),
                   _item(type="message", role="system", content=[{"type": "input_text", "text": "sys"}]),
                   _msg("user", "  <user_instructions>u</user_instructions>"),
                   _item(type="message", role="user", content=[{"type": "input_text", "text": "look"},
                                                               {"type": "input_image", "image_url": "data:"}, "junk"]),
                   _item(type="message", role="assistant", content=None),
                   _item(type="message", role="critic", content=[{"type": "input_text", "text": "meh"}]),
                   _msg("assistant", "a"))
    ep, rows = _split(_read(tmp_path, lines))
    assert ep.env["system_prompt"] == "Be brief.\n\ndev\n\nsys\n\n  <user_instructions>u</user_instructions>"
    assert ep.steps[0].observation.text == "look\n[input_image]\n\nmeh"  # the unknown role's text kept too
    assert ep.task == "look\n[input_image]" and ep.steps[0].action.text == "a"  # no user_message: the first user text
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", f"{NAME}:6"), ("unknown_content", f"{NAME}:7")]
    assert ep.env["unmapped"][0] == {"where": f"{NAME}:6", "role": "assistant", "text": "", "raw": None,
                                     "timestamp": "2025-09-01T10:00:05+00:00"}  # the record's time kept with it
    assert ep.steps[0].timestamp == _at(7)


def test_session_instructions_shapes(tmp_path):
    for meta, prompt in [({"id": "s", "base_instructions": {"text": "base"}}, "base"),
                         ({"id": "s", "instructions": "", "base_instructions": "b2"}, "b2"),
                         ({"id": "s", "instructions": {"text": 5}}, None),
                         ({"id": "s", "instructions": None}, None)]:
        ep, _ = _split(_read(tmp_path, _lines(("session_meta", meta), _msg("user", "go"), _msg("assistant", "a"))))
        assert ep.env.get("system_prompt") == prompt
        assert ep.env["codex"]["session"] == {"id": "s"}


def test_events_token_usage_aborts_and_completion(tmp_path):
    base = [META, _msg("user", "go"), ("event_msg", {"type": "user_message", "message": "go"}),
            ("event_msg", {"type": "user_message", "message": 5}),
            ("event_msg", {"type": "user_message", "message": "second"}),
            ("event_msg", {"type": "token_count", "info": {"total": 1}}),
            ("event_msg", {"type": "token_count", "info": None}),
            _msg("assistant", "a"), ("event_msg", {"type": "turn_aborted"})]
    ep, _ = _split(_read(tmp_path, _lines(*base)))
    assert ep.task == "go" and ep.terminated is False
    assert ep.env["codex"]["token_usage"] == {"total": 1}
    assert ep.env["codex"]["events"] == {"user_message": 3, "token_count": 2, "turn_aborted": 1}
    ep, _ = _split(_read(tmp_path, _lines(*base, ("event_msg", {"type": "task_complete"}))))
    assert ep.terminated is True
    # a response item after the completion: the turn goes on
    calls = [_item(type="function_call", name="shell", call_id="c", arguments='{"command": ["ls"]}')]
    ep, _ = _split(_read(tmp_path, _lines(*base, ("event_msg", {"type": "task_complete"}), *calls)))
    assert ep.terminated is False
    ep, _ = _split(_read(tmp_path, _lines(*base[:-1], *calls, ("event_msg", {"type": "task_complete"}))))
    assert ep.terminated is True


def test_compactions_bookkeeping_and_payloads_that_are_no_objects(tmp_path):
    lines = _lines(META, _msg("user", "go"), ("compacted", {"message": "summary"}),
                   _item(type="compaction", encrypted_content="e"), _item(type="compaction_summary", text="t"),
                   _item(type="ghost_snapshot"), _item(type="ghost_snapshot"), ("response_item", "junk"),
                   ("turn_context", "junk"), _msg("assistant", "a"))
    ep, rows = _split(_read(tmp_path, lines))
    assert ep.env["codex"]["compactions"] == [{"message": "summary"}, {"type": "compaction", "encrypted_content": "e"},
                                              {"type": "compaction_summary", "text": "t"}]
    assert ep.env["codex"]["bookkeeping"] == {"ghost_snapshot": 2}
    assert "turn_context" not in ep.env["codex"]  # empty: left out
    assert [r.rule for r in rows] == ["unknown_content"]  # the response item that is no object


def test_broken_and_unknown_lines_are_rows_with_their_line(tmp_path):
    unknown = {"timestamp": _stamp(5), "type": "future_record", "payload": {"x": 1}}
    lines = [*_lines(META, _msg("user", "go")), '{"timestamp": "2025', "", "   ", "[1, 2]", unknown,
             json.dumps({"timestamp": _stamp(6), "type": "response_item", "payload": {
                 "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]}})]
    ep, rows = _split(_read(tmp_path, lines))
    assert [(r.rule, r.location, r.line) for r in rows] == [("parse_error", NAME, 3), ("unknown_content", NAME, 7)]
    assert rows[0].reason.startswith(f"{NAME}:3") and rows[0].snippet == '{"timestamp": "2025'
    assert rows[1].reason == (f"{NAME}:7: line type 'future_record' is not one Codex is known to write; kept raw "
                              "in env.codex.unknown_records")
    assert json.loads(rows[1].snippet) == unknown
    assert ep.env["codex"]["unknown_records"] == [unknown] and ep.steps[0].timestamp == _at(6)


def test_a_line_that_is_no_text_is_a_row(tmp_path):
    path = tmp_path / NAME
    path.write_bytes(b"\n".join([json.dumps(line).encode() for line in _lines(META, _msg("user", "go"))]
                                + [b"\xff\xfe bad", json.dumps(_lines(_msg("assistant", "a"))[0]).encode()]))
    records = list(codex.read(Source(fs=LocalFileSystem(), path=str(path), uri="in/x", put_blob=lambda *a: "")))
    ep, rows = _split(records)
    assert [(r.rule, r.location, r.line) for r in rows] == [("parse_error", NAME, 3)]
    assert ep.steps[0].action.text == "a"


def test_the_older_layout_decides_each_bare_lines_kind(tmp_path):
    lines = [{"id": "0197c0de-0000-7000-8000-000000000002", "timestamp": "2025-06-01T09:00:00Z",
              "instructions": "old prompt"},
             {"record_type": "state"},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Count"}],
              "timestamp": "2025-06-01T09:00:01Z"},
             {"id": "later", "note": "not a meta: a message came first"},
             {"type": "function_call", "name": "shell", "call_id": "c1", "timestamp": "2025-06-01T09:00:02Z",
              "arguments": json.dumps({"command": ["bash", "-lc", "wc -l a"]})},
             {"type": "function_call_output", "call_id": "c1", "output": "3 a"}]
    ep, rows = _split(_read(tmp_path, lines))
    assert [(r.rule, r.line) for r in rows] == [("unknown_content", 4)]
    assert ep.env["codex"]["session"]["id"] == "0197c0de-0000-7000-8000-000000000002"
    assert ep.env["system_prompt"] == "old prompt"
    assert ep.steps[0].timestamp == dt.datetime(2025, 6, 1, 9, 0, 2, tzinfo=dt.timezone.utc)
    assert ep.steps[0].action.code == "wc -l a" and ep.final_observation.text == "3 a"


def test_units_sniff_both_layouts_and_the_rollout_name():
    new = b'{"timestamp":"2025-09-01T10:00:00Z","type":"session_meta","payload":{}}'
    old = b'{"id":"0197c0de-0000-7000-8000-000000000002","timestamp":"2025-06-01"}'
    heads = {"/a/x.jsonl": new, "/a/rollout-1.jsonl": old, "/a/other.jsonl": old, "/a/x.json": new,
             "/a/y.jsonl": b'  {"timestamp":"t","type":"turn_context"}', "/a/z.jsonl": b'{"type":"session_meta"}'}
    assert codex.units(sorted(heads), heads.__getitem__) == ["/a/rollout-1.jsonl", "/a/x.jsonl", "/a/y.jsonl"]


def _call_item(call_id, command, name="shell", **more):
    return _item(type="function_call", name=name, call_id=call_id, arguments=json.dumps({"command": command}), **more)


def test_a_container_exec_argv_is_a_command_and_its_output_terminal(tmp_path):
    lines = _lines(META, _msg("user", "go"), _call_item("c1", ["bash", "-lc", "make"], "container.exec"),
                   _item(type="function_call_output", call_id="c1", output="built"),
                   _call_item("c2", ["ls", "a b"], "local_shell"))
    ep, _ = _split(_read(tmp_path, lines))
    assert [(s.action.kind, s.action.code, s.action.tool_name) for s in ep.steps] == [
        ("command", "make", "container.exec"), ("command", "ls 'a b'", "local_shell")]
    assert (ep.steps[1].observation.kind, ep.steps[1].observation.text) == ("terminal", "built")


def test_outputs_pair_with_calls_named_by_id_or_call_id(tmp_path):
    lines = _lines(META, _msg("user", "go"),
                   _item(type="custom_tool_call", name="apply_patch", call_id="p1", input="patch"),
                   _item(type="local_shell_call", id="l1", action={"type": "exec", "command": ["pwd"]}),
                   _item(type="web_search_call", id="w1", action={"type": "search", "query": "q"}),
                   _item(type="function_call_output", call_id="l1", output="/repo"),
                   _item(type="function_call_output", call_id="p1", output="patched"),
                   _item(type="function_call_output", call_id="w1", output="found"),
                   _msg("assistant", "ok"))
    ep, _ = _split(_read(tmp_path, lines))
    assert [s.observation.text for s in ep.steps] == ["go", "patched", "/repo", "found"]
    assert ep.steps[2].observation.kind == "terminal"  # the output of a shell call


def test_a_web_search_action_that_is_no_object_has_no_arguments(tmp_path):
    lines = _lines(META, _msg("user", "go"), _item(type="web_search_call", action=["q"]), _msg("assistant", "a"))
    ep, _ = _split(_read(tmp_path, lines))
    assert json.loads(ep.steps[0].action.arguments) == {}


def test_the_prompt_event_is_the_task_not_an_agent_message(tmp_path):
    lines = _lines(META, _msg("user", "fix the bug please"),
                   ("event_msg", {"type": "agent_message", "message": "on it"}),
                   ("event_msg", {"type": "user_message", "message": "fix the bug"}),
                   _msg("assistant", "done"))
    ep, _ = _split(_read(tmp_path, lines))
    assert ep.task == "fix the bug" and ep.steps[0].observation.text == "fix the bug please"


def test_a_first_call_with_nothing_before_it_and_no_model(tmp_path):
    lines = _lines(_call_item("c1", ["ls"]), _item(type="function_call_output", call_id="c1", output="a"),
                   _msg("assistant", "ok"))
    ep, rows = _split(_read(tmp_path, lines))
    assert [s.action.code for s in ep.steps] == ["ls", None] and ep.agent is None and rows == []
    assert "models" not in ep.env and ep.terminated


def test_two_reasoning_items_in_a_row_are_both_the_reasoning(tmp_path):
    lines = _lines(META, _msg("user", "go"), _item(type="reasoning", summary=[{"text": "one"}]),
                   _item(type="reasoning", content=[{"text": "two"}]), _msg("assistant", "a"))
    ep, _ = _split(_read(tmp_path, lines))
    assert ep.steps[0].reasoning == "one\n\ntwo"


def test_a_compaction_item_first_starts_the_list(tmp_path):
    lines = _lines(META, _msg("user", "go"), _item(type="compaction", encrypted_content="e"), _msg("assistant", "a"))
    ep, _ = _split(_read(tmp_path, lines))
    assert ep.env["codex"]["compactions"] == [{"type": "compaction", "encrypted_content": "e"}]


def test_an_unknown_item_is_a_row_naming_its_line(tmp_path):
    lines = _lines(META, _msg("user", "go"), _item(type="hologram", data=1), _msg("assistant", "a"))
    ep, rows = _split(_read(tmp_path, lines))
    assert [(r.rule, r.location, r.reason) for r in rows] == [
        ("unknown_content", f"{NAME}:3", f"{NAME}:3: an assistant turn with neither text nor tool calls; kept raw in "
                                         "env.unmapped")]
    assert ep.env["unmapped"] == [{"where": f"{NAME}:3", "role": "assistant", "text": None,
                                   "raw": {"type": "hologram", "data": 1}}]


def test_an_output_before_any_call_is_kept_naming_its_line(tmp_path):
    lines = _lines(META, _msg("user", "go"), _item(type="function_call_output", call_id="x", output="early"),
                   _msg("assistant", "a"))
    ep, rows = _split(_read(tmp_path, lines))
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", f"{NAME}:3")]
    assert ep.steps[0].observation.text == "go\n\nearly"


def test_a_late_output_after_the_answer_means_the_rollout_was_cut(tmp_path):
    lines = _lines(META, _msg("user", "go"), _call_item("c1", ["ls"]),
                   _item(type="function_call_output", call_id="c1", output="a"), _msg("assistant", "done"),
                   _item(type="function_call_output", call_id="c2", output="late"))
    ep, _ = _split(_read(tmp_path, lines))
    assert ep.terminated is False


def test_a_line_without_its_own_time_takes_the_payloads(tmp_path):
    lines = [*_lines(META, _msg("user", "go")),
             {"type": "response_item", "payload": {"type": "message", "role": "assistant", "timestamp": _stamp(30),
                                                   "content": [{"type": "output_text", "text": "a"}]}}]
    ep, _ = _split(_read(tmp_path, lines))
    assert ep.steps[0].timestamp == _at(30)


def test_the_older_layout_meta_by_its_id_and_late_instructions(tmp_path):
    lines = [{"id": "0197c0de-0000-7000-8000-000000000003", "timestamp": "2025-06-01T09:00:00Z"},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Count"}]},
             {"instructions": "late rules"},
             {"type": "future_kind", "x": 1},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "3"}]}]
    ep, rows = _split(_read(tmp_path, lines))
    assert [(r.rule, r.line) for r in rows] == [("unknown_content", 4)]
    assert rows[0].reason == (f"{NAME}:4: line type 'future_kind' is not one Codex is known to write; kept raw in "
                              "env.codex.unknown_records")
    assert "session" not in ep.env["codex"]  # the late instructions' line (nothing else in it) replaced the meta
    assert ep.env["system_prompt"] == "late rules" and ep.steps[0].action.text == "3"


def test_a_rollout_without_actions_is_one_row_naming_the_file(tmp_path):
    (row,) = _read(tmp_path, _lines(META, _msg("user", "go")))
    assert (row.rule, row.location) == ("empty_episode", NAME) and row.reason.startswith(f"{NAME}: no actions")


def test_long_bad_lines_keep_300_characters_and_a_line_that_is_no_utf8_names_the_file(tmp_path):
    long_unknown = {"timestamp": _stamp(3), "type": "future", "payload": {"x": "y" * 500}}
    lines = [*_lines(META, _msg("user", "go")), '{"broken": "' + "z" * 500, long_unknown,
             json.dumps(_lines(_msg("assistant", "a"))[0])]
    ep, rows = _split(_read(tmp_path, lines))
    assert [len(r.snippet) for r in rows] == [300, 300]
    path = tmp_path / NAME
    path.write_bytes(path.read_bytes() + b"\xff\xfe\n")
    records = list(codex.read(Source(fs=LocalFileSystem(), path=str(path), uri="in/x", put_blob=lambda *a: "")))
    bad = [r for r in records if isinstance(r, Rejected) and r.rule == "parse_error" and r.line == 6]
    assert len(bad) == 1 and bad[0].reason.startswith(NAME)


def test_a_turn_before_any_turn_context_names_no_model(tmp_path):
    lines = _lines(META, _msg("user", "go"), _msg("assistant", "first"), ("turn_context", {"model": "m1"}),
                   _msg("assistant", "second"), ("turn_context", {"model": "m2"}), _msg("assistant", "third"))
    ep, _ = _split(_read(tmp_path, lines))
    assert ep.env["model_per_step"] == [None, "m1", "m2"] and ep.env["models"] == ["m1", "m2"]


def test_a_session_in_a_windows_folder_runs_on_windows(tmp_path):
    windows = ("session_meta", {"id": "s-1", "cwd": "C:\\Users\\u\\repo", "cli_version": "0.39.0"})
    ep, rows = _split(_read(tmp_path, _lines(windows, _msg("user", "go"), _msg("assistant", "done"))))
    assert rows == [] and ep.platform == "windows"
    ep, _ = _split(_read(tmp_path, _lines(META, _msg("user", "go"), _msg("assistant", "done")), name="b.jsonl"))
    assert ep.platform == "linux"
