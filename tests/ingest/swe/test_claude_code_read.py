"""The Claude Code reader called directly (`claude_code.read`) on the bundled session (beside the Harbor trial in
samples/atif/harbor-claude-code) and on hand-made transcripts in the line shapes Claude Code writes: each step's
time, action and raw call, the reasoning, the terminal flag, the subagent episodes, and the rows for broken and
unknown lines."""

import datetime as dt
import json

from fsspec.implementations.local import LocalFileSystem

from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.swe import claude_code
from tests.conftest import SAMPLES

SESSION = next((SAMPLES / "atif" / "harbor-claude-code" / "fix-calc-add__Vq7mR2p" / "agent" / "sessions" / "projects"
                / "-app").glob("*.jsonl"))


def _read(path) -> list:
    return list(claude_code.read(Source(fs=LocalFileSystem(), path=str(path), uri=f"in/{path.name}",
                                        put_blob=lambda *a: "sha256:0")))


def _write(tmp_path, lines, name="s-1.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return _read(path)


def _split(records):
    return [r for r in records if isinstance(r, Episode)], [r for r in records if isinstance(r, Rejected)]


def _at(second: int) -> dt.datetime:
    return dt.datetime(2025, 11, 20, 10, 0, second, tzinfo=dt.timezone.utc)


def _line(kind, uuid, parent, content, second, *, side=False, model="claude-sonnet-4-5", mid=None, **extra) -> dict:
    msg = {"role": kind, "content": content}
    if kind == "assistant":
        msg.update(id=mid or f"msg_{uuid}", model=model, type="message")
    return {"parentUuid": parent, "isSidechain": side, "cwd": "/w", "sessionId": "s-1", "version": "2.0.50",
            "gitBranch": "main", "type": kind, "message": msg, "uuid": uuid,
            "timestamp": f"2025-11-20T10:00:{second:02d}.000Z", **extra}


def test_the_bundled_session_each_steps_time_action_and_raw():
    lines = [json.loads(x) for x in SESSION.read_text().splitlines() if x.strip()]
    (main, side), rows = _split(_read(SESSION))
    assert rows == []
    uses = [(ln, b) for ln in lines if ln.get("type") == "assistant" and not ln.get("isSidechain")
            for b in ln["message"]["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    calls = [s for s in main.steps if s.action.kind != "message"]
    assert [json.loads(s.action.raw) for s in calls] == [b for _, b in uses]
    assert [s.action.tool_name for s in calls] == [b["name"] for _, b in uses]
    assert [s.action.kind for s in calls] == ["command" if b["name"] == "Bash" else "tool_call" for _, b in uses]
    bash = next(s for s in calls if s.action.kind == "command")
    assert bash.action.code == "cd /app && pytest -q" and bash.action.tool_name == "Bash"
    firsts = {}
    for ln in lines:  # a streamed message's time is its first line's
        if ln.get("type") == "assistant" and not ln.get("isSidechain"):
            firsts.setdefault(ln["message"]["id"], dt.datetime.fromisoformat(ln["timestamp"].replace("Z", "+00:00")))
    assert sorted({s.timestamp for s in main.steps}) == sorted(firsts.values())
    assert (main.key, main.task, main.outcome, main.reward, main.terminated, main.domain, main.platform) == (
        "", "The tests in /app fail. Find and fix the bug in /app/calc.py so that `pytest -q` passes in /app.",
        "unknown", None, True, "swe", "linux")
    assert main.env["sidechains"] == [side.key] and side.key.startswith("sidechain:")
    session = next(ln["sessionId"] for ln in lines if "sessionId" in ln)
    assert side.env["sidechain"] == {"of": session, "agent_id": None}
    assert main.env["claude_code"]["sessionId"] == session
    assert side.task.startswith("List every file in /app") and side.terminated


def test_times_reasoning_results_and_the_terminal_flag(tmp_path):
    records = _write(tmp_path, [
        _line("user", "u1", None, "Fix it.", 1),
        _line("assistant", "a1", "u1", [{"type": "thinking", "thinking": "t1"}], 2, mid="m1"),
        _line("assistant", "a2", "a1", [{"type": "thinking", "thinking": "t2"}, {"type": "text", "text": "x"},
                                        {"type": "text", "text": "y"}], 3, mid="m1"),
        _line("assistant", "a3", "a2", [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}},
                                        {"type": "tool_use", "id": "t2", "name": "Read", "input": {"p": 1}}], 4,
              mid="m1"),
        _line("user", "u2", "a3", [{"type": "tool_result", "tool_use_id": "t2", "content": [
            {"type": "text", "text": "R"}, {"type": "image"}, "s"]},
            {"type": "tool_result", "tool_use_id": "t1", "content": "L", "is_error": False}], 5),
        _line("assistant", "a4", "u2", "plain text answer", 6, mid="m2", model=5),
    ])
    (ep,), rows = _split(records)
    assert rows == []
    assert [s.timestamp for s in ep.steps] == [_at(2), _at(2), _at(6)]
    assert [(s.action.kind, s.action.code, s.action.tool_name) for s in ep.steps] == [
        ("command", "ls", "bash"), ("tool_call", None, "Read"), ("message", None, None)]
    assert ep.steps[0].reasoning == "t1\n\nt2\n\nx\n\ny" and ep.steps[1].reasoning is None
    assert (ep.steps[1].observation.text, ep.steps[1].observation.kind, ep.steps[1].observation.is_error) == (
        "L", "terminal", None)
    assert ep.steps[2].observation.text == 'R\n[image]\n"s"' and ep.steps[2].observation.kind == "tool_result"
    assert ep.steps[2].action.text == "plain text answer" and ep.terminated
    assert ep.agent == "claude-sonnet-4-5"
    assert ep.env["claude_code"] == {"sessionId": "s-1", "version": "2.0.50", "cwd": "/w", "gitBranch": "main"}


def test_a_new_message_id_or_a_line_after_a_prompt_opens_a_new_turn(tmp_path):
    records = _write(tmp_path, [
        _line("user", "u1", None, "go", 1),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "one"}], 2, mid="m1"),
        _line("assistant", "a2", "a1", [{"type": "text", "text": "two"}], 3, mid="m2"),
        _line("user", "u2", "a2", "more", 4),
        _line("assistant", "a3", "u2", [{"type": "text", "text": "three"}], 5, mid="m2"),
        {**_line("assistant", "a4", "a3", [{"type": "text", "text": "four"}], 6), "message": {"content": [
            {"type": "text", "text": "four"}], "role": "assistant"}},
        {**_line("assistant", "a5", "a4", [{"type": "text", "text": "five"}], 7), "message": {"content": [
            {"type": "text", "text": "five"}], "role": "assistant"}},
    ])
    (ep,), _ = _split(records)
    assert [s.action.text for s in ep.steps] == ["one", "two", "three", "four", "five"]
    assert [s.timestamp for s in ep.steps] == [_at(i) for i in (2, 3, 5, 6, 7)]
    assert ep.steps[2].observation.text == "more"


def test_prompts_injected_lines_and_errors(tmp_path):
    records = _write(tmp_path, [
        _line("user", "u0", None, [{"type": "text", "text": "caveat"}], 1, isMeta=True),
        _line("user", "u1", "u0", [{"type": "text", "text": "a"}, {"type": "text"}, {"type": "image"}], 2),
        _line("assistant", "a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {}}], 3),
        _line("user", "u2", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": None, "is_error": True}],
              4),
        _line("user", "u3", "u2", "", 5),
        {"type": "user", "message": "not an object", "uuid": "u4", "parentUuid": "u3", "isSidechain": False},
        _line("assistant", "a2", "u3", [{"type": "redacted_thinking", "data": "x"}, {"type": "text", "text": 5}], 6),
    ])
    (ep,), rows = _split(records)
    assert ep.task == "a\n[image]"
    assert ep.steps[0].observation.text == "caveat\n\na\n[image]"
    assert (ep.final_observation.text, ep.final_observation.is_error) == (None, True)
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", "s-1.jsonl: main line (line 7)")]
    assert ep.env["unmapped"][0]["raw"] == [{"type": "redacted_thinking", "data": "x"}, {"type": "text", "text": 5}]
    assert ep.terminated  # the last turn waits for no call


def test_subagents_are_grouped_by_agent_id_or_their_root(tmp_path):
    records = _write(tmp_path, [
        _line("user", "u1", None, "main task", 1),
        _line("user", "s1", None, "find A", 2, side=True),
        _line("assistant", "s2", "s1", [{"type": "text", "text": "A"}], 3, side=True, agentId="ag1", model="h"),
        _line("user", "t1", None, "find B", 4, side=True, agentId=7),
        _line("assistant", "t2", "t1", [{"type": "tool_use", "id": "k", "name": "Grep", "input": {}}], 5, side=True),
        _line("assistant", "t3", "gone", [{"type": "text", "text": "cut"}], 6, side=True),  # parent not in file
        {**_line("user", "v1", None, "anon", 7, side=True), "uuid": None},
        _line("assistant", "v2", "v1", [{"type": "text", "text": "V"}], 8, side=True),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "main done"}], 9),
    ])
    eps, rows = _split(records)
    main, a, b, c = eps
    # a root without a uuid is named by its place; the line after it, whose parent is not found, joins it
    assert [e.key for e in eps] == ["", "sidechain:ag1", "sidechain:t1", "sidechain:2"] and rows == []
    assert main.env["sidechains"] == ["sidechain:ag1", "sidechain:t1", "sidechain:2"]
    assert (a.task, a.agent, [s.action.text for s in a.steps]) == ("find A", "h", ["A"])
    assert a.env["sidechain"] == {"of": "s-1", "agent_id": "ag1"}
    # an agentId that is no string is not read; a line whose parent is not in the file joins the last subagent
    assert b.task == "find B" and [(s.action.tool_name, s.action.text) for s in b.steps] == [("Grep", None),
                                                                                          (None, "cut")]
    assert b.env["sidechain"] == {"of": "s-1", "agent_id": None} and "sidechains" not in b.env
    assert [s.timestamp for s in b.steps] == [_at(5), _at(6)]
    assert (c.task, [s.action.text for s in c.steps]) == ("anon", ["V"])
    assert main.terminated and [s.action.text for s in main.steps] == ["main done"]


def test_odd_records_are_kept_and_broken_lines_are_rows(tmp_path):
    unknown = {"type": "brand-new", "x": 1}
    records = _write(tmp_path, [
        {"type": "summary", "summary": "S", "leafUuid": "a1", "extra": 1},
        {"type": "system", "subtype": "compact_boundary", "content": "c"},
        {"type": "file-history-snapshot"}, {"type": "progress"}, {"type": "progress"},
        "{not json", "", "   ", "[1]", unknown,
        _line("user", "u1", None, "go", 1), _line("assistant", "a1", "u1", [{"type": "text", "text": "ok"}], 2),
    ])
    (ep,), rows = _split(records)
    assert [(r.rule, r.location, r.line) for r in rows] == [("parse_error", "s-1.jsonl", 6),
                                                            ("unknown_content", "s-1.jsonl", 9),
                                                            ("unknown_content", "s-1.jsonl", 10)]
    assert rows[0].snippet == "{not json" and rows[0].reason.startswith("s-1.jsonl:6")
    assert rows[2].reason == ("s-1.jsonl:10: record type 'brand-new' is not one Claude Code is known to write; kept "
                              "raw in env.claude_code.unknown_records")
    assert json.loads(rows[2].snippet) == unknown and rows[1].snippet == "[1]"
    cc = ep.env["claude_code"]
    assert cc["summaries"] == [{"summary": "S", "leafUuid": "a1"}]
    assert cc["system"] == [{"type": "system", "subtype": "compact_boundary", "content": "c"}]
    assert cc["bookkeeping"] == {"file-history-snapshot": 1, "progress": 2}
    assert cc["unknown_records"] == [[1], unknown]


def test_a_transcript_without_messages_is_one_row_counting_what_it_held(tmp_path):
    rows = _write(tmp_path, [{"type": "file-history-snapshot"}, {"type": "queue-operation"},
                             {"type": "queue-operation"}])
    assert [(r.rule, r.location, r.reason) for r in rows] == [
        ("empty_episode", "s-1.jsonl", "s-1.jsonl: a Claude Code transcript with no user or assistant message "
                                       "(file-history-snapshot x1, queue-operation x2)")]
    rows = _write(tmp_path, [{"type": "summary", "summary": "S"}])
    assert rows[0].reason == "s-1.jsonl: a Claude Code transcript with no user or assistant message (nothing)"


def test_a_server_tool_result_splits_the_turn(tmp_path):
    records = _write(tmp_path, [
        _line("user", "u1", None, "q", 1),
        _line("assistant", "a1", "u1", [
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "x"}},
            {"type": "web_search_tool_result", "tool_use_id": "s1", "content": "found"}], 2, mid="m1"),
        _line("assistant", "a2", "a1", [{"type": "web_fetch_tool_result", "content": "no id"},
                                        {"type": "text", "text": "answer"}], 3, mid="m1"),
    ])
    (ep,), rows = _split(records)
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [("tool_call", "web_search"), ("message", None)]
    assert ep.steps[1].observation.text == "found" and ep.steps[1].timestamp == _at(3)  # reopened by the next line
    assert ep.agent == "claude-sonnet-4-5" and ep.terminated


def test_units_need_a_session_and_a_transcript_key():
    heads = {"/a.jsonl": b'{"parentUuid": null, "sessionId": "s"}',
             "/b.jsonl": b'  {"type": "summary", "leafUuid": "x"}',
             "/c.jsonl": b'{"type":"queue-operation","messageId":"m"}',
             "/d.jsonl": b'{"parentUuid": null}', "/e.jsonl": b'[{"parentUuid": null, "sessionId": "s"}]',
             "/f.json": b'{"parentUuid": null, "sessionId": "s"}'}
    assert claude_code.units(sorted(heads), heads.__getitem__) == ["/a.jsonl", "/b.jsonl", "/c.jsonl"]


def _server(call_id="s1"):
    return [{"type": "server_tool_use", "id": call_id, "name": "web_search", "input": {"query": "x"}},
            {"type": "web_search_tool_result", "tool_use_id": call_id, "content": "found"}]


def test_a_server_result_reopens_the_turn_of_the_same_model_and_time(tmp_path):
    records = _write(tmp_path, [
        _line("user", "u1", None, "q", 1),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "first"}], 2, mid="m0", model="A"),
        _line("user", "u2", "a1", "again", 3),
        _line("assistant", "a2", "u2", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}},
                                        *_server(), {"type": "text", "text": "answer"}], 5, mid="m1", model="B"),
        _line("user", "u3", "a2", [{"type": "tool_result", "tool_use_id": "t1", "content": "read it"}], 6),
        _line("assistant", "a3", "u3", [{"type": "text", "text": "end"}], 7, mid="m2", model="C"),
    ])
    (ep,), rows = _split(records)
    assert rows == []
    assert [(s.action.tool_name, s.action.text) for s in ep.steps] == [
        (None, "first"), ("Read", None), ("web_search", None), (None, "answer"), (None, "end")]
    assert [s.timestamp for s in ep.steps] == [_at(2), _at(5), _at(5), _at(5), _at(7)]
    assert ep.env["model_per_step"] == ["A", "B", "B", "B", "C"]
    # the server's result is its own call's, the client tool's result comes back on the next line
    assert [s.observation.text for s in ep.steps[2:]] == ["read it", "found", None]


def test_a_server_result_at_the_start_and_a_turn_left_empty(tmp_path):
    records = _write(tmp_path, [
        _line("assistant", "a1", None, _server(), 1, mid="m1"),
        _line("assistant", "a2", "a1", [{"type": "text", "text": "after"}], 2, mid="m1"),
    ])
    (ep,), rows = _split(records)
    assert [(s.action.tool_name, s.action.text, s.timestamp) for s in ep.steps] == [
        ("web_search", None, _at(1)), (None, "after", _at(2))]  # the empty turn is reopened by the next line
    records = _write(tmp_path, [
        _line("user", "u1", None, "q", 1),
        _line("assistant", "a1", "u1", [*_server(), {"type": "redacted_thinking", "data": "x"}], 2, mid="m1"),
    ])
    (ep,), rows = _split(records)
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", "s-1.jsonl: main line (line 2)")]


def test_an_assistant_line_without_content_at_the_start(tmp_path):
    records = _write(tmp_path, [_line("assistant", "a0", None, [], 1, mid="m0"),
                                _line("user", "u1", "a0", "q", 2),
                                _line("assistant", "a1", "u1", "hi", 3, mid="m1")])
    (ep,), rows = _split(records)
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", "s-1.jsonl: main line (line 1)")]
    assert [s.action.text for s in ep.steps] == ["hi"]


def test_a_result_before_any_action_names_its_line_and_an_empty_turn_after_it_is_dropped(tmp_path):
    records = _write(tmp_path, [
        _line("user", "u1", None, [{"type": "tool_result", "tool_use_id": "t0", "content": "stale"}], 1),
        _line("assistant", "a0", "u1", [], 2, mid="m0"),
        _line("user", "u2", "a0", "q", 3), _line("assistant", "a1", "u2", "hi", 4, mid="m1")])
    (ep,), rows = _split(records)
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", "s-1.jsonl: main line (line 1)")]
    assert ep.steps[0].observation.text == "stale\n\nq"


def test_content_shapes_that_are_no_lists_of_blocks(tmp_path):
    records = _write(tmp_path, [
        _line("user", "u1", None, "q", 1),
        _line("assistant", "a1", "u1", [{"type": "tool_use", "id": "t1", "input": {}}, "junk",
                                        {"type": "note", "thinking": "hidden"}], 2, mid="m1"),
        _line("user", "u2", "a1", [{"type": "tool_result", "tool_use_id": "t1",
                                    "content": {"type": "text", "text": "single"}}], 3),
        _line("assistant", "a2", "u2", {"type": "text", "text": "a dict"}, 4, mid="m2"),
        _line("assistant", "a3", "a2", "final", 5, mid="m3"),
    ])
    (ep,), rows = _split(records)
    assert [(s.action.kind, s.action.tool_name, s.reasoning) for s in ep.steps] == [
        ("tool_call", None, None), ("message", None, None)]
    assert ep.steps[1].observation.text == "single"
    assert rows == [] and "unmapped" not in ep.env  # the turn of a dict content holds nothing: dropped


def test_the_task_is_the_first_prompt_and_a_late_result_means_a_cut_session(tmp_path):
    records = _write(tmp_path, [
        _line("user", "u1", None, "first prompt", 1),
        _line("assistant", "a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
              2, mid="m1"),
        _line("user", "u2", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}], 3),
        _line("user", "u3", "u2", "second prompt", 4),
        _line("assistant", "a2", "u3", "done", 5, mid="m2"),
        _line("user", "u4", "a2", [{"type": "tool_result", "tool_use_id": "t9", "content": "late"}], 6),
    ])
    (ep,), _ = _split(records)
    assert ep.task == "first prompt" and ep.terminated is False


def test_a_user_line_between_lines_of_one_message_id_splits_the_turn(tmp_path):
    lines = [_line("user", "u1", None, "q", 1), _line("assistant", "a1", "u1", "a", 2),
             _line("user", "u2", "a1", [], 3), _line("assistant", "a2", "u2", "b", 4)]
    lines[1]["message"]["id"] = lines[3]["message"]["id"] = ""
    records = _write(tmp_path, lines)
    (ep,), _ = _split(records)
    assert [s.action.text for s in ep.steps] == ["a", "b"]


def test_the_first_agent_id_names_a_subagent_and_interleaved_subagents_follow_their_parents(tmp_path):
    records = _write(tmp_path, [
        _line("user", "u0", None, "main", 1),
        _line("user", "a1", None, "task A", 2, side=True, agentId="A"),
        _line("user", "b1", None, "task B", 3, side=True, agentId="B"),
        _line("assistant", "a2", "a1", "done A", 4, side=True, agentId="A2"),
        _line("assistant", "b2", "b1", "done B", 5, side=True),
        _line("assistant", "m1", "u0", "main done", 6),
    ])
    (main, a, b), rows = _split(records)
    assert (a.key, a.task, [s.action.text for s in a.steps]) == ("sidechain:A", "task A", ["done A"])
    assert (b.key, b.task, [s.action.text for s in b.steps]) == ("sidechain:B", "task B", ["done B"])


def test_rows_of_lines_that_are_no_text_long_or_broken_and_of_a_subagent(tmp_path):
    path = tmp_path / "s-1.jsonl"
    good = [_line("user", "u1", None, "q", 1), _line("assistant", "a1", "u1", "hi", 2)]
    side = [_line("user", "s1", None, "sub", 3, side=True, agentId="z"),
            _line("assistant", "s2", "s1", [], 4, side=True, agentId="z")]
    lines = [json.dumps(x).encode() for x in good] + [b"\xff\xfe bad", ("{" + "x" * 400).encode(),
                                                      json.dumps({"type": "odd", "pad": "y" * 400}).encode()]
    lines += [json.dumps(x).encode() for x in side] + [json.dumps(_line("user", "s3", None, "alone", 5, side=True,
                                                                        agentId="w")).encode()]
    path.write_bytes(b"\n".join(lines) + b"\n")
    eps, rows = _split(_read(path))
    got = [(r.rule, r.location, r.line) for r in rows]
    assert got == [("parse_error", "s-1.jsonl", 3), ("parse_error", "s-1.jsonl", 4),
                   ("unknown_content", "s-1.jsonl", 5),
                   ("unknown_content", "s-1.jsonl: sidechain:z (line 7)", None),
                   ("empty_episode", "s-1.jsonl: sidechain:z", None), ("empty_episode", "s-1.jsonl: sidechain:w", None)]
    assert rows[0].reason == "s-1.jsonl: line 3: not valid UTF-8 (byte 0)"
    assert [len(r.snippet) for r in rows[1:3]] == [300, 300]
    assert [e.key for e in eps] == [""]


def test_empty_header_fields_are_left_out(tmp_path):
    records = _write(tmp_path, [{**_line("user", "u1", None, "q", 1), "cwd": "", "gitBranch": None},
                                _line("assistant", "a1", "u1", "hi", 2, model=5)])
    (ep,), _ = _split(records)
    assert ep.env["claude_code"] == {"sessionId": "s-1", "version": "2.0.50"}
    assert ep.agent is None and "models" not in ep.env


def test_a_session_in_a_windows_folder_runs_on_windows(tmp_path):
    lines = [_line("user", "u1", None, "go", 1), _line("assistant", "a1", "u1", [{"type": "text", "text": "ok"}], 2)]
    (ep,), rows = _split(_write(tmp_path, [{**ln, "cwd": "D:\\work\\app"} for ln in lines]))
    assert rows == [] and ep.platform == "windows" and ep.env["claude_code"]["cwd"] == "D:\\work\\app"
    (ep,), _ = _split(_write(tmp_path, lines, name="s-2.jsonl"))
    assert ep.platform == "linux"
