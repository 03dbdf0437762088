"""Qwen Code sessions: hand-made edge cases of the JSONL log. The sessions Qwen Code writes at test time (0.15.10
and 0.24.4) are read in `test_qwen_code_cli.py`, and the registry test there shows they are claimed by this
format, not by Claude Code's, whose lines also carry `parentUuid` and `sessionId`; real sessions of 0.5.0 to 0.17.0
from four repositories in `test_qwen_code_real.py`."""

from __future__ import annotations

import json
from pathlib import Path

from ingest import registry
from ingest.record import Episode, Rejected
from ingest.swe import claude_code, qwen_code
from tests.ingest.golden import read_records


def _line(kind: str, n: int, **fields) -> str:
    return json.dumps({"uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None, "sessionId": "s-1",
                       "timestamp": f"2026-09-01T10:00:0{n % 10}.000Z", "type": kind, "cwd": "/w",
                       "version": "0.24.4", **fields}, separators=(",", ":"))


def _read(tmp_path, lines: list[str], name="s-1.jsonl") -> list:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return read_records(qwen_code, path)


def _user(n, text):
    return _line("user", n, message={"role": "user", "parts": [{"text": text}]})


def _model(n, parts, **fields):
    return _line("assistant", n, model="qwen3-coder-plus", message={"role": "model", "parts": parts},
                 usageMetadata={"promptTokenCount": 10, "candidatesTokenCount": 2}, **fields)


def _result(n, call, name, response, status="success"):
    return _line("tool_result", n, message={"role": "user", "parts": [
        {"functionResponse": {"id": call, "name": name, "response": response}}]},
                 toolCallResult={"callId": call, "status": status})


def test_units_claims_qwen_lines_and_claude_codes_do_not_look_alike(tmp_path):
    qwen = tmp_path / "s-1.jsonl"
    qwen.write_text(_user(0, "hi") + "\n")
    claude = tmp_path / "c.jsonl"
    claude.write_text(json.dumps({"parentUuid": None, "isSidechain": False, "sessionId": "s", "type": "user",
                                  "message": {"role": "user", "content": "hi"}, "uuid": "u"}) + "\n")
    head = lambda p: Path(p).read_bytes()[:4096]
    files = [str(qwen), str(claude)]
    assert qwen_code.units(files, head) == [str(qwen)]
    # Claude Code's detection also takes the Qwen line (parentUuid, sessionId): the claim order decides
    assert str(qwen) in claude_code.units(files, head)
    assert registry.info("qwen_code").rank < registry.info("claude_code").rank


def test_thoughts_shell_exit_codes_and_tokens(tmp_path):
    records = _read(tmp_path, [
        _user(0, "run the tests"),
        _model(1, [{"text": "Let me run them.", "thought": True},
                   {"functionCall": {"id": "c1", "name": "run_shell_command", "args": {"command": "pytest -q"}}}]),
        _result(2, "c1", "run_shell_command", {"error": "Command: pytest -q\nOutput: 1 failed\nExit Code: 1"},
                status="error"),
        _model(3, [{"text": "One test fails."}]),
    ])
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [r for r in records if isinstance(r, Rejected)] == []
    first, last = ep.steps
    assert first.action.kind == "command" and first.action.code == "pytest -q"
    assert first.reasoning == "Let me run them."
    seen = last.observation
    assert seen.kind == "terminal" and seen.exit_code == 1 and seen.is_error and "1 failed" in seen.text
    assert last.action.text == "One test fails." and ep.terminated and ep.task == "run the tests"
    assert ep.env["qwen_code"]["tokens"] == {"promptTokenCount": 20, "candidatesTokenCount": 4}
    assert first.timestamp.isoformat() == "2026-09-01T10:00:01+00:00"


def test_unknown_records_fields_and_subtypes_are_kept_with_warnings_and_a_bad_line_alone_is_rejected(tmp_path):
    records = _read(tmp_path, [
        _user(0, "hello"),
        _line("system", 1, subtype="ui_telemetry", systemPayload={"uiEvent": {"event.name": "x"}}),
        _line("system", 2, subtype="brand_new", systemPayload={"a": 1}),
        json.dumps({"type": "mystery", "uuid": "u3"}),
        "{not json",
        _model(4, [{"text": "Hello."}], shinyField=True),
    ])
    rules = sorted(r.rule for r in records if isinstance(r, Rejected))
    assert rules == ["parse_error", "unknown_content", "unknown_content", "unknown_content"]
    (ep,) = [r for r in records if isinstance(r, Episode)]
    env = ep.env["qwen_code"]
    assert [r["subtype"] for r in env["system_records"]] == ["ui_telemetry", "brand_new"]
    assert env["unknown_records"] == [{"type": "mystery", "uuid": "u3"}]
    assert list(env["unknown_fields"].values()) == [{"shinyField": True}]
    assert ep.steps[0].action.text == "Hello."


def test_a_cancelled_call_is_an_error_and_a_session_without_a_reply_leaves_a_row(tmp_path):
    records = _read(tmp_path, [
        _user(0, "write it"),
        _model(1, [{"functionCall": {"id": "c1", "name": "write_file",
                                     "args": {"file_path": "/w/a", "content": "x"}}}]),
        _result(2, "c1", "write_file", {"error": "[Operation Cancelled] Reason: User cancelled"}, status="cancelled"),
    ])
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.final_observation.is_error and "Cancelled" in ep.final_observation.text
    assert not ep.terminated  # the last model turn called a tool
    empty = _read(tmp_path, [_user(0, "hi")], name="s-2.jsonl")
    assert [r.rule for r in empty] == ["empty_episode"]


def test_a_session_stopped_while_the_model_thought_is_not_terminated(tmp_path):
    """The person stopped the CLI while the model was still thinking: the last model line holds a thought part
    alone. Not an answer, so not a finished run (its thought is still kept as the step's reasoning)."""
    records = _read(tmp_path, [
        _user(0, "fix it"),
        _model(1, [{"functionCall": {"id": "c1", "name": "read_file", "args": {"absolute_path": "/w/a.py"}}}]),
        _result(2, "c1", "read_file", {"output": "x = 1"}),
        _model(3, [{"text": "The bug is in a.py; I will", "thought": True}]),
    ])
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert not ep.terminated
    assert ep.steps[-1].reasoning == "The bug is in a.py; I will" and not ep.steps[-1].action.text


def test_a_session_in_a_windows_folder_runs_on_windows_and_a_posix_one_stays_linux(tmp_path):
    answer = _model(1, [{"text": "Hi."}])
    (ep,) = _read(tmp_path, [_user(0, "hello").replace('"cwd":"/w"', '"cwd":"D:\\\\Hack TODO LIST"'), answer])
    assert ep.platform == "windows" and ep.env["qwen_code"]["cwd"] == "D:\\Hack TODO LIST"
    (ep,) = _read(tmp_path, [_user(0, "hello"), answer], name="s-2.jsonl")
    assert ep.platform == "linux" and ep.env["qwen_code"]["cwd"] == "/w"


def test_a_sessions_runtime_record_is_planned_with_it_and_listed_with_its_reason(tmp_path, run, query):
    chats = tmp_path / "projects" / "-home-u" / "chats"
    chats.mkdir(parents=True)
    (chats / "s-1.jsonl").write_text("\n".join([_user(0, "hello"), _model(1, [{"text": "Hi."}])]) + "\n")
    (chats / "s-1.runtime.json").write_text(json.dumps({"schema_version": 1, "pid": 1, "session_id": "s-1"}))
    (chats / "s-2.runtime.json").write_text("{}")  # no session of that name beside it
    files = sorted(str(p) for p in chats.iterdir())
    assert qwen_code.members([str(chats / "s-1.jsonl")], files, None) == {str(chats / "s-1.jsonl"): [
        (str(chats / "s-1.runtime.json"), "Qwen Code's record of the process that ran this session (pid, host, "
                                          "start time), not a session; the reader reads the session's log")]}
    result = run("ingest-swe", [tmp_path], stages=["ingest"])
    unread = {i.path.rsplit("/", 1)[-1]: i.reason for i in result.ignored}
    assert set(unread) == {"s-1.runtime.json", "s-2.runtime.json"} and "process that ran" in unread["s-1.runtime.json"]
    assert query("SELECT count(*) AS n, min(source_format) AS f FROM episodes") == [{"n": 1, "f": "qwen_code"}]


def _telemetry(n, event):
    return _line("system", n, subtype="ui_telemetry", systemPayload={"uiEvent": {"event.name": event}})


def _unrecorded(ep):
    return ep.env.get("calls_not_recorded"), [w["rule"] for w in ep.env.get("ingest_warnings", [])]


def test_calls_the_telemetry_saw_or_a_turn_that_went_on_without_a_prompt_say_calls_were_not_recorded(tmp_path):
    """No release is known to drop calls (0.5.0's recorder writes them), so only the file's own evidence says a
    call is missing: the CLI's telemetry of calls it ran while no turn holds one, a turn that answered followed by
    another with nothing between. Nothing is made up: the steps stay messages."""
    records = _read(tmp_path, [
        _user(1, "find the config"),
        _model(2, [{"text": "Let me look."}]),
        _telemetry(3, "qwen-code.tool_call"),
        _telemetry(4, "qwen-code.api_response"),
        _model(5, [{"text": "It is in mcp/."}])])
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [s.action.kind for s in ep.steps] == ["message", "message"]
    unrecorded, rules = _unrecorded(ep)
    assert unrecorded == {"evidence": ["1 tool call(s) in the CLI's telemetry records",
                                       "1 model turn(s) followed by another with no prompt between"],
                          "turns_before_unrecorded_calls": ["s-1.jsonl:2"]}
    assert rules == ["calls_not_recorded"]


def test_a_session_with_its_calls_or_of_plain_chat_says_nothing_of_missing_calls(tmp_path):
    with_calls = _read(tmp_path, [
        _user(1, "list"), _model(2, [{"functionCall": {"id": "c1", "name": "ls", "args": {}}}]),
        _telemetry(3, "qwen-code.tool_call"), _result(4, "c1", "ls", {"output": "a"}),
        _telemetry(5, "qwen-code.tool_call"),  # a subagent's call: in the telemetry, not in the log
        _model(6, [{"text": "One file."}])])
    chat = _read(tmp_path, [_user(1, "hi"), _model(2, [{"text": "Hello!"}]), _user(3, "bye"),
                            _model(4, [{"text": "Bye!"}])], name="s-2.jsonl")
    thoughts_then_retry = _read(tmp_path, [_user(1, "hi"), _model(2, [{"text": "hmm", "thought": True}]),
                                           _model(3, [{"text": "Hello!"}])], name="s-3.jsonl")
    for records in (with_calls, chat, thoughts_then_retry):
        (ep,) = [r for r in records if isinstance(r, Episode)]
        assert _unrecorded(ep) == (None, [])


def _mid_turn(n, text, shown):
    """A message the person sent while the model worked, as Qwen Code 0.24.4's `ChatRecordingService.
    recordMidTurnUserMessage` writes it (chunks/chunk-DPEB6S2R.js): a `user` record (`createBaseRecord("user")`:
    `provenance` "real_user") with `subtype` "mid_turn_user_message", the parts the model was sent as its `message`
    and the typed text as `systemPayload.displayText`. The interactive UI records it once the model was sent it:
    after the call results it was drained beside (`recordToolResult` first), or before the model's reply to it when
    it came after an answer (the steer turn settles it on the reply stream's first event)."""
    return json.dumps({"uuid": f"u{n}", "parentUuid": f"u{n - 1}", "sessionId": "s-1",
                       "timestamp": f"2026-09-01T10:00:0{n % 10}.000Z", "type": "user", "provenance": "real_user",
                       "cwd": "/w", "version": "0.24.4", "gitBranch": "main", "subtype": "mid_turn_user_message",
                       "message": {"role": "user", "parts": [{"text": text}]},
                       "systemPayload": {"displayText": shown}}, separators=(",", ":"))


def test_a_message_sent_while_the_model_worked_is_a_user_turn_not_a_sign_of_missing_calls(tmp_path):
    """Sent beside a call's result, then after an answer: each a user turn the model was given (seen after the
    result, and before the next reply), the first prompt still the task; no missing call is inferred from the
    answer followed by another reply, and the record's subtype and typed text are kept with the step they
    belong to."""
    records = _read(tmp_path, [
        _user(0, "read the config"),
        _model(1, [{"functionCall": {"id": "c1", "name": "read_file", "args": {"absolute_path": "/w/a.toml"}}}]),
        _result(2, "c1", "read_file", {"output": "port = 80"}),
        _mid_turn(3, "also check b.toml", "also check b.toml"),
        _model(4, [{"text": "a.toml sets port 80; b.toml is not there."}]),
        _mid_turn(5, "thanks, now stop", "thanks, now stop"),
        _model(6, [{"text": "Stopping."}])])
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert _unrecorded(ep) == (None, [])
    assert [s.action.kind for s in ep.steps] == ["tool_call", "message", "message"]
    assert ep.task == "read the config"
    assert ep.steps[1].observation.text == "port = 80\n\nalso check b.toml"
    assert ep.steps[2].observation.text == "thanks, now stop" and ep.terminated
    kept = [(e["step"], e["raw"]) for e in ep.env["message_extras"] if e["role"] == "user" and "raw" in e]
    assert kept == [(1, {"subtype": "mid_turn_user_message", "systemPayload": {"displayText": "also check b.toml"}}),
                    (2, {"subtype": "mid_turn_user_message", "systemPayload": {"displayText": "thanks, now stop"}})]
