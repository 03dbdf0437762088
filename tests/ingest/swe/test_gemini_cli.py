"""Gemini CLI chat recordings: two real CC0 recordings of Gemini CLI 0.20 (data/gemini-cli-m-gemini) and two real MIT
ones from two more repositories (samples/swe/gemini-cli: yoavf/ai-sessions and BrianV1981/aim), goldens a person read
against the files, and hand-made edge cases of the JSONL log. The recordings Gemini CLI writes at
test time (0.35.0 and 0.61.0) are read in `test_gemini_cli_cli.py`."""

from __future__ import annotations

import json
from pathlib import Path

from ingest.record import Episode, Rejected
from ingest.swe import gemini_cli
from tests.ingest.golden import check, read_records

DATA = Path(__file__).parent / "data" / "gemini-cli-m-gemini"
SAMPLES = Path(__file__).parents[3] / "samples" / "swe" / "gemini-cli"
GOLDEN = Path(__file__).parent / "golden"


def test_golden_real_recording_with_notices_and_an_api_error():
    """Read by hand against the file: three `glob` calls, each with the thought before it as reasoning and its
    `functionResponse` output as the result; the update notices and the API error kept as notices, not steps;
    the prompt asked again after the error is an observation of the next step; tokens summed over the turns; the
    `source` field the repository's sync script added kept raw with a warning."""
    records = read_records(gemini_cli, DATA / "session-2025-12-12T21-46-7c761c30.json")
    check(records, GOLDEN / "gemini-cli-m-gemini-glob.json", env_keys=("gemini_cli",))


def test_golden_real_recording_with_a_cancelled_call_and_two_models():
    """Read by hand against the file: a `run_shell_command` whose command failed (`docker` not found) and one the
    person cancelled (an error result); gemini-2.5-flash, then gemini-3-pro-preview, listed per step."""
    records = read_records(gemini_cli, DATA / "session-2025-12-03T04-27-e0f6ebe9.json")
    check(records, GOLDEN / "gemini-cli-m-gemini-shell.json", env_keys=("gemini_cli", "models", "model_per_step"))


def test_golden_real_recording_of_a_web_app_built_over_five_prompts():
    """yoavf/ai-sessions (MIT), Gemini CLI of October 2025, gemini-2.5-pro, read by hand against the file: five
    prompts, eleven `write_file` / `replace` calls, each with the text the model wrote beside it and its thoughts;
    the last `replace` refused by the CLI's check (status "error": an error result), then the model's answer ends the
    recording (terminated); the first turn's token counts are zeros in the file and are summed as they are."""
    records = read_records(gemini_cli, SAMPLES / "yoavf-ai-sessions" / "gemini-cli-pomodoro-timer.json")
    check(records, GOLDEN / "gemini-cli-yoavf-pomodoro.json", env_keys=("gemini_cli",))
    (ep,) = [r for r in records if isinstance(r, Episode)]
    calls = [s.action.tool_name for s in ep.steps if s.action.kind == "tool_call"]
    assert calls == ["write_file"] * 3 + ["replace"] * 8 and ep.terminated
    assert ep.steps[-1].observation.is_error and "secondary check" in ep.steps[-1].observation.text


def test_golden_real_recording_stopped_while_the_model_was_thinking():
    """BrianV1981/aim (MIT), a Gemini CLI recording of March 2026 (`kind: main`, parts content), gemini-3.1-pro-preview
    on a SWE-bench-style Django task, read by hand against the file: a read, three shell runs of a test script (two
    exit 1), three writes and a grep; the last model turn has thoughts only (no text, no call, zero tokens): the run
    was abandoned there, so the episode is not terminated."""
    records = read_records(gemini_cli, SAMPLES / "brianv1981-aim" / "control_pro_run4_abandoned.json")
    check(records, GOLDEN / "gemini-cli-aim-abandoned.json", env_keys=("gemini_cli",))
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert not ep.terminated and ep.agent == "gemini-3.1-pro-preview"
    assert [s.action.code for s in ep.steps if s.action.kind == "command"] == [
        "cat test_url.py test_url2.py"] + ["python3 test_aggregation.py"] * 3
    # each result is the observation of the step after its call; Gemini CLI prints `Exit Code:` only when not 0
    results = [ep.steps[i + 1].observation for i, s in enumerate(ep.steps) if s.action.kind == "command"]
    assert [r.exit_code for r in results] == [None, 1, None, 1]


def _log(tmp_path, lines: list, name="session-2026-01-01T00-00-abcd1234.jsonl") -> list:
    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return read_records(gemini_cli, path)


HEADER = {"sessionId": "s-1", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"}


def _call(i, name, args, output, status="success"):
    return {"id": i, "name": name, "args": args, "status": status,
            "result": [{"functionResponse": {"id": i, "name": name, "response": output}}]}


def test_a_rewritten_message_counts_once_in_its_first_place_and_unknown_lines_are_kept(tmp_path):
    turn = {"id": "g1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "", "model": "m"}
    records = _log(tmp_path, [
        HEADER,
        {"id": "u1", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": [{"text": "list it"}]},
        turn,
        {"$set": {"lastUpdated": "2026-01-01T00:00:03Z", "summary": "Listing"}},
        {**turn, "toolCalls": [_call("c1", "run_shell_command", {"command": "ls"},
                                     {"output": "Output: a\nExit Code: 0"})]},
        {"id": "u2", "type": "user", "content": [{"functionResponse": {"id": "c1", "name": "run_shell_command",
                                                                       "response": {"output": "duplicate"}}}]},
        {"$push": {"x": 1}},
        "not json",
        {"id": "g2", "type": "gemini", "content": "Done.", "model": "m"},
    ])
    problems = [r for r in records if isinstance(r, Rejected)]
    assert [p.rule for p in problems] == ["unknown_content", "parse_error"]
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [s.action.kind for s in ep.steps] == ["command", "message"]
    assert ep.steps[0].action.code == "ls" and ep.steps[1].observation.text == "Output: a\nExit Code: 0"
    assert ep.steps[1].observation.exit_code == 0 and ep.task == "list it"
    assert ep.env["gemini_cli"]["summary"] == "Listing"
    assert ep.env["gemini_cli"]["unknown_records"] == ['{"$push": {"x": 1}}']


def test_a_response_sent_back_for_a_call_without_its_result_is_the_result(tmp_path):
    """A call recorded without `result` (a cut recording): the `functionResponse` the CLI sent back is its result;
    an error response is an error observation."""
    records = _log(tmp_path, [
        HEADER,
        {"id": "u1", "type": "user", "content": "read it"},
        {"id": "g1", "type": "gemini", "content": "", "model": "m",
         "toolCalls": [{"id": "c1", "name": "read_file", "args": {"file_path": "/x"}, "status": "error"}]},
        {"id": "u2", "type": "user", "content": [{"functionResponse": {"id": "c1", "name": "read_file",
                                                                       "response": {"error": "no such file"}}}]},
    ])
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.final_observation.text == "no such file" and ep.final_observation.is_error
    assert not ep.terminated  # the model never answered the result


def test_units_claims_recordings_by_their_opening_whatever_their_name(tmp_path):
    """Recordings people share are renamed (the two real ones in samples/swe/gemini-cli are): the opening decides,
    for a JSON or JSONL file only."""
    good = tmp_path / "session-2026-01-01T00-00-abcd1234.json"
    good.write_text('{\n  "sessionId": "s",\n  "projectHash": "h",\n  "messages": []\n}')
    other = tmp_path / "session-2026-01-01T00-00-other.json"
    other.write_text('{"messages": []}')
    renamed = tmp_path / "chat.json"
    renamed.write_text(good.read_text())
    text = tmp_path / "chat.txt"
    text.write_text(good.read_text())
    head = lambda p: Path(p).read_bytes()[:4096]
    assert gemini_cli.units([str(good), str(other), str(renamed), str(text)], head) == [str(good), str(renamed)]


def test_context_prompts_thoughts_tokens_and_the_results_of_each_call(tmp_path):
    """A 0.4x-style log: the context the CLI gives the model is the system prompt, the first prompt the task,
    thoughts with and without a subject are the turn's reasoning, token counts (not flags) add up, and each call
    gets its own result: a shell call's exit code, a call answered only by the response sent back, a cancelled
    call's result an error."""
    records = _log(tmp_path, [
        HEADER,
        {"id": "u0", "type": "user", "content": [{"text": "  <session_context>\nToday is Monday."}]},
        {"id": "u1", "timestamp": "2026-01-01T00:00:01Z", "type": "user",
         "content": [{"text": "fix the build"}, "not a part", {"text": "and run tests"}]},
        {"id": "g1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": [{"text": "Looking."}],
         "model": "m1", "thoughts": [{"subject": "Plan", "description": "run make"}, {"description": "then test"}],
         "tokens": {"input": 10, "output": 2, "cached": True},
         "toolCalls": [
             {**_call("c1", "run_shell_command", {"command": "make"}, {"output": "Error: boom\nExit Code: 2"}),
              "result": ["not a part", {"functionResponse": {"id": "c1", "name": "run_shell_command",
                                                             "response": {"output": "Error: boom\nExit Code: 2"}}}]},
             {"id": "c2", "name": "run_shell_command", "args": {"command": "make test"}, "status": "cancelled"},
             _call("c3", "read_file", {"file_path": "a"}, {"output": "partial"}, status="cancelled")]},
        {"id": "u2", "type": "user", "content": [{"functionResponse": {
            "id": "c2", "name": "run_shell_command", "response": {"output": "Exit Code: 130"}}}]},
        {"id": "u3", "type": "user", "content": "second prompt"},
        {"id": "g2", "timestamp": "2026-01-01T00:00:06Z", "type": "gemini", "content": "Done.", "model": "m2",
         "tokens": {"input": 5, "output": 1}},
        {"sessionId": "late", "x": 1}])
    [row] = [r for r in records if isinstance(r, Rejected)]
    assert (row.rule, row.line, row.snippet) == ("unknown_content", 8, '{"sessionId": "late", "x": 1}')
    assert row.reason.endswith(":8: not a Gemini CLI message, `$set` or record line; kept raw in "
                               "env.gemini_cli.unknown_records")
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.task == "fix the build\nand run tests" and ep.terminated
    assert ep.env["system_prompt"] == "  <session_context>\nToday is Monday."
    assert ep.env["gemini_cli"]["tokens"] == {"input": 15, "output": 3}
    assert ep.env["gemini_cli"]["unknown_records"] == ['{"sessionId": "late", "x": 1}']
    make, make_test, read, done = ep.steps
    assert [s.action.kind for s in ep.steps] == ["command", "command", "tool_call", "message"]
    assert (make.action.code, make_test.action.code, read.action.tool_name) == ("make", "make test", "read_file")
    assert make.reasoning == "Plan: run make\n\nthen test\n\nLooking." and make_test.reasoning is None
    assert str(make.timestamp) == "2026-01-01 00:00:02+00:00" and str(done.timestamp) == "2026-01-01 00:00:06+00:00"
    obs = [(s.observation.kind, s.observation.text, s.observation.is_error, s.observation.exit_code)
           for s in (make_test, read)]
    assert obs == [("terminal", "Error: boom\nExit Code: 2", False, 2), ("terminal", "Exit Code: 130", None, 130)]
    # the cancelled read's result, then the next prompt
    assert (done.observation.text, done.observation.is_error) == ("partial\n\nsecond prompt", True)
    assert ep.env["model_per_step"] == ["m1", "m1", "m1", "m2"]


def test_a_set_of_the_messages_replaces_them_and_later_copies_find_their_place(tmp_path):
    records = _log(tmp_path, [
        HEADER, {"id": "u1", "type": "user", "content": "first"},
        {"id": "g1", "type": "gemini", "content": "A.", "model": "m"},
        {"$set": {"summary": "S", "messages": [{"id": "u9", "type": "user", "content": "replaced"},
                                               {"id": "g9", "type": "gemini", "content": "B.", "model": "m"}]}},
        {"id": "g9", "type": "gemini", "content": "B2.", "model": "m"},
        {"id": "g10", "type": "gemini", "content": "C.", "model": "m"}])
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.task == "replaced" and [s.action.text for s in ep.steps] == ["B2.", "C."]
    assert ep.env["gemini_cli"]["summary"] == "S" and "messages" not in ep.env["gemini_cli"]


def test_an_empty_output_is_an_empty_result_not_a_missing_one(tmp_path):
    """`read_file` of an empty file answers `{"output": ""}` (a real recording of 0.23): the result is the empty
    text, which validation keeps (`observation.text_missing` quarantines an episode with a null result)."""
    records = _log(tmp_path, [
        HEADER,
        {"id": "u1", "type": "user", "content": "read it"},
        {"id": "g1", "type": "gemini", "content": "", "model": "m",
         "toolCalls": [_call("c1", "read_file", {"file_path": "/empty"}, {"output": ""})]},
        {"id": "g2", "type": "gemini", "content": "It is empty.", "model": "m"},
    ])
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.steps[1].observation.kind == "tool_result" and ep.steps[1].observation.text == ""


def _warnings(ep) -> list[str]:
    return [w["reason"] for w in ep.env.get("ingest_warnings", []) if w["rule"] == "calls_not_recorded"]


def test_turns_of_an_early_qwen_code_recording_that_went_on_without_a_prompt_say_calls_were_not_recorded(tmp_path):
    """Qwen Code 0.1.x's recorder (model turns typed `qwen`) never writes a call or its response: a turn that says it
    will look, then another with no prompt between, is what is left of the calls. The steps stay as recorded."""
    records = _log(tmp_path, [
        HEADER,
        {"id": "u1", "type": "user", "content": "find the config"},
        {"id": "q1", "type": "qwen", "content": "Let me check the folder.", "model": "coder-model",
         "tokens": {"input": 100, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 105}},
        {"id": "i1", "type": "info", "content": "a notice"},
        {"id": "q2", "type": "qwen", "content": "Found it in `mcp/`.", "model": "coder-model",
         "tokens": {"input": 400, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 405}},
        {"id": "u2", "type": "user", "content": "thanks"},
        {"id": "q3", "type": "qwen", "content": "You're welcome.", "model": "coder-model"},
    ])
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.kind, s.observation.kind) for s in ep.steps] == [
        ("message", "text"), ("message", "none"), ("message", "text")]
    unrecorded = ep.env["calls_not_recorded"]
    assert unrecorded["turns_before_unrecorded_calls"] == ["messages[1]"]
    assert unrecorded["evidence"] == ["1 model turn(s) followed by another with no prompt between"]
    assert unrecorded["producer"].startswith("Qwen Code 0.1.x")
    (reason,) = _warnings(ep)
    assert "the model used tools (1 model turn(s)" in reason and "(written by Qwen Code 0.1.x" in reason


def test_an_early_qwen_code_recording_of_one_answer_says_calls_could_not_be_recorded(tmp_path):
    records = _log(tmp_path, [HEADER, {"id": "u1", "type": "user", "content": "hi"},
                              {"id": "q1", "type": "qwen", "content": "Hello!", "model": "coder-model"}])
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.env["calls_not_recorded"]["evidence"] == [] and "producer" in ep.env["calls_not_recorded"]
    (reason,) = _warnings(ep)
    assert "whether the model used tools is unknown" in reason


def test_tool_prompt_tokens_without_a_recorded_call_say_calls_were_not_recorded(tmp_path):
    records = _log(tmp_path, [HEADER, {"id": "u1", "type": "user", "content": "look"},
                              {"id": "g1", "type": "gemini", "content": "It holds two files.", "model": "m",
                               "tokens": {"input": 50, "tool": 30, "total": 80}}])
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.env["calls_not_recorded"] == {"evidence": ["30 tool-prompt tokens counted"],
                                            "turns_before_unrecorded_calls": []}
    assert len(_warnings(ep)) == 1


def test_a_recording_whose_calls_are_there_or_that_shows_no_tool_use_says_nothing_of_missing_calls(tmp_path):
    with_calls = _log(tmp_path, [
        HEADER, {"id": "u1", "type": "user", "content": "list it"},
        {"id": "g1", "type": "gemini", "content": "", "model": "m",
         "toolCalls": [_call("c1", "list_directory", {"dir_path": "."}, {"output": "a"})],
         "tokens": {"input": 50, "tool": 30}},
        {"id": "g2", "type": "gemini", "content": "One file.", "model": "m"}])
    chat = _log(tmp_path, [HEADER, {"id": "u1", "type": "user", "content": "hi"},
                           {"id": "g1", "type": "gemini", "content": "Hello!", "model": "m",
                            "tokens": {"input": 5, "tool": 0}}], name="chat.jsonl")
    for records in (with_calls, chat):
        (ep,) = [r for r in records if isinstance(r, Episode)]
        assert "calls_not_recorded" not in ep.env and _warnings(ep) == []


def _platform_of(tmp_path, calls: list, name: str):
    (ep,) = [r for r in _log(tmp_path, [HEADER, {"id": "u1", "type": "user", "content": "go"},
                                        {"id": "g1", "type": "gemini", "content": "", "model": "m", "toolCalls": calls},
                                        {"id": "g2", "type": "gemini", "content": "Done.", "model": "m"}], name=name)
             if isinstance(r, Episode)]
    return ep.platform, ep.env["gemini_cli"]["platform"]


def test_the_platform_is_windows_only_on_unambiguous_paths_else_linux_said_to_be_assumed(tmp_path):
    """Gemini CLI records no working folder: a drive letter in what the tools were given or returned, or `\\`
    separators in a path argument, say Windows; a POSIX absolute path beside them makes it ambiguous; a URL's path,
    a backslash in a command or a letter, a colon and an escape in source code is no evidence."""
    drive = [_call("c1", "read_file", {"absolute_path": "D:\\work\\app\\main.py"}, {"output": "x"})]
    assert _platform_of(tmp_path, drive, "a.jsonl") == ("windows", {"windows_paths": ["D:\\work\\app\\main.py"]})
    relative = [_call("c1", "write_file", {"file_path": "src\\app.py", "content": "x"}, {"output": "ok"})]
    assert _platform_of(tmp_path, relative, "b.jsonl") == ("windows", {"windows_paths": ["src\\app.py"]})
    in_result = [_call("c1", "run_shell_command", {"command": "dir"},
                       {"output": " Directory of C:\\Users\\ana\\proj.\n"})]
    assert _platform_of(tmp_path, in_result, "c.jsonl") == ("windows", {"windows_paths": ["C:\\Users\\ana\\proj"]})
    both = drive + [_call("c2", "run_shell_command", {"command": "ls /home/ana"}, {"output": "x"})]
    assert _platform_of(tmp_path, both, "d.jsonl") == ("linux", {
        "assumed": True, "windows_paths": ["D:\\work\\app\\main.py"], "posix_paths": ["/home/ana"]})
    no_evidence = [_call("c1", "run_shell_command", {"command": "grep -r 'a\\d' ."},
                         {"output": "see https://example.org/home/x"}),
                   _call("c2", "read_file", {"file_path": "a.py"}, {"output": 'print(f"{x:\\n}")'})]
    assert _platform_of(tmp_path, no_evidence, "e.jsonl") == ("linux", {"assumed": True})


def test_the_real_windows_recording_reads_as_windows():
    """M-Gemini's `glob` recording (a Windows machine): its `glob` calls and results name `C:\\Users\\Mischa`."""
    (ep,) = [r for r in read_records(gemini_cli, DATA / "session-2025-12-12T21-46-7c761c30.json")
             if isinstance(r, Episode)]
    assert ep.platform == "windows"
