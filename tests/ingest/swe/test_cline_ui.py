"""A Cline / Roo Code UI log (`ui_messages.json`) read alone, where the task's API history is not beside it.

The logs the Cline CLI 2.18.0 wrote against the scripted model server (`data/cline-cli-2.18.0*`, the same runs
`test_cline_read.py` reads whole; `test_cline_cli.py` reads the log of a run made at test time) are the oracle for
the sequence: each scripted call is in the episode, in order, with the result the next request carried back.
Edge cases of the writers' record kinds (Cline's `ClineSay` / `ClineAsk`, Roo Code's `clineSays` / `clineAsks`)
are hand-made. Real logs shared alone, from public repositories without a license, are read where they lie in
`../shared/samples/cline/` against goldens a person read against the raw files (`texts="hash"`):

- Jeehunter/mcp-vscode-server @ f6859c7, `ui_messages.json` (the repository's root) ->
  `cline/jeehunter-mcp-vscode-server/ui_messages.json`: a VS Code Cline task (plan then act mode, PowerShell
  commands, MCP tool calls, three completions each answered by the user): 61 steps, not terminated (the last
  turn a text reply after a failed MCP call).
- haram-333/fineye @ 3f3dddc, `ui_messages.json` (the repository's root) -> `cline/haram-333-fineye/ui_messages.json`:
  a Cline task of x-ai/grok-code-fast-1 (reads and searches, follow-up questions, seven completions, retried and
  failed requests): 24 steps.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ingest.record import Episode, Rejected
from ingest.swe import cline
from tests.conftest import REPO
from tests.ingest.golden import check, read_records
from tests.ingest.swe.coding_clis import CLINE_ANSWER, CLINE_MODEL, CLINE_PROMPT, CLINE_XML_CALLS
from tests.parts import require_shared_sample

DATA = Path(__file__).parent / "data"
NATIVE = DATA / "cline-cli-2.18.0" / "1796628808770"
XML = DATA / "cline-cli-2.18.0-xml" / "1796628854273"
SHARED = REPO.parent / "shared" / "samples" / "cline"
GOLDEN = Path(__file__).parent / "golden"
T0 = 1796628800000


def _alone(tmp_path: Path, folder: Path) -> Path:
    """The task folder's UI log copied alone into a folder of its own."""
    target = tmp_path / folder.name
    target.mkdir()
    shutil.copy(folder / "ui_messages.json", target / "ui_messages.json")
    return target / "ui_messages.json"


def _read(path: Path) -> tuple[Episode | None, list[Rejected]]:
    records = read_records(cline, path)
    episodes = [r for r in records if isinstance(r, Episode)]
    assert len(episodes) <= 1
    return (episodes[0] if episodes else None), [r for r in records if isinstance(r, Rejected)]


def _log(tmp_path: Path, ui: list, name: str = "t1") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    return folder / "ui_messages.json"


def _say(kind: str, text=None, ts: int = 0, **more) -> dict:
    return {"ts": T0 + ts, "type": "say", "say": kind, **({"text": text} if text is not None else {}), **more}


def _ask(kind: str, text=None, ts: int = 0) -> dict:
    return {"ts": T0 + ts, "type": "ask", "ask": kind, **({"text": text} if text is not None else {})}


def _request(text: str, ts: int = 0, **usage) -> dict:
    return _say("api_req_started", json.dumps({"request": text, **usage}), ts)


def test_the_xml_runs_ui_log_alone_holds_every_scripted_call_its_result_and_the_answer(tmp_path):
    ep, rejected = _read(_alone(tmp_path, XML))
    assert rejected == []
    # the tool each call was, as its result names it; the arguments as the UI showed them
    assert [s.action.tool_name for s in ep.steps] == [name for name, _ in CLINE_XML_CALLS]
    assert [json.loads(s.action.arguments).get("tool") for s in ep.steps[:3]] == [
        "listFilesTopLevel", "readFile", "newFileCreated"]
    assert ep.steps[3].action.kind == "command" and ep.steps[3].action.code == "cat missing.txt"
    assert ep.steps[4].action.kind == "done" and ep.steps[4].action.text == CLINE_ANSWER and ep.terminated
    ui = json.loads((XML / "ui_messages.json").read_text())
    requests = [json.loads(m["text"])["request"] for m in ui if m.get("say") == "api_req_started"][1:]
    sent = [r.split("] Result:\n", 1)[1].split("\n\n\n# task_progress")[0].strip() for r in requests]
    assert [s.observation.text for s in ep.steps[1:]] == sent
    assert ep.steps[4].observation.exit_code == 1 and ep.steps[4].observation.is_error
    assert [s.observation.exit_code for s in ep.steps[1:4]] == [None] * 3
    assert not any(s.observation.is_error for s in ep.steps[1:4])
    assert [s.reasoning for s in ep.steps] == [f"Step {n}." for n in range(1, 6)]  # the text shown beside each
    assert ep.task == CLINE_PROMPT and ep.steps[0].observation.text == CLINE_PROMPT
    assert ep.key == XML.name and ep.outcome == "unknown" and ep.domain == "swe" and ep.platform == "linux"
    assert ep.agent == "scripted-model"  # the model each record of the turn names
    assert json.loads(ep.steps[3].action.arguments) == {"command": "cat missing.txt"}
    assert json.loads(ep.steps[4].action.arguments) == {"result": CLINE_ANSWER}
    assert [json.loads(s.action.raw)["say"] for s in ep.steps] == ["tool"] * 3 + ["command", "completion_result"]
    assert [s.observation.kind for s in ep.steps] == ["text"] + ["tool_result"] * 3 + ["terminal"]
    extras = ep.env["cline"]
    assert extras["read_from"].startswith("ui_messages.json alone") and extras["completion"] == CLINE_ANSWER
    assert extras["ui_kinds"] == {"resume_task": 1} and extras["usage"]["tokensOut"] > 0


def test_the_native_runs_ui_log_alone_names_each_tool_the_model_called(tmp_path):
    ep, rejected = _read(_alone(tmp_path, NATIVE))
    assert rejected == []
    assert [s.action.tool_name for s in ep.steps] == ["list_files", "read_file", "apply_patch", "execute_command",
                                                      "attempt_completion"]
    assert ep.agent is None or ep.agent == CLINE_MODEL
    stamps = [m["ts"] for m in json.loads((NATIVE / "ui_messages.json").read_text())
              if m.get("say") in ("tool", "command", "completion_result")]
    assert [s.timestamp.timestamp() * 1000 for s in ep.steps] == stamps
    assert ep.steps[4].observation.text.startswith("Command failed with exit code 1.")


def test_a_folder_with_its_api_history_is_read_from_the_history_not_the_ui_log():
    files = [f"t/{n}" for n in ("api_conversation_history.json", "ui_messages.json", "task_metadata.json")]
    heads = {"t/api_conversation_history.json": b'[{"role":"user","content":[]}]',
             "t/ui_messages.json": b'[{"ts":1,"type":"say","say":"task","text":"x"}]', "t/task_metadata.json": b"{}"}
    assert cline.units(files, heads.get) == ["t"]
    assert cline.units([f"/d/{f}" for f in files], {f"/d/{k}": v for k, v in heads.items()}.get) == ["/d/t"]
    assert cline.units(files[1:], heads.get) == ["t/ui_messages.json"]
    assert cline.members(["t/ui_messages.json"], files[1:] + ["t/settings.json"], heads.get) == {
        "t/ui_messages.json": ["t/task_metadata.json", ("t/settings.json", "a file Cline writes in a task folder; the "
                               "reader reads ui_messages.json and task_metadata.json when the conversation is not "
                               "beside them")]}


def test_only_a_list_of_say_and_ask_records_is_claimed():
    for head in (b'{"type":"say","say":"task"}', b'[{"ts":1,"type":"chat","say":"task"}]',
                 b'[{"ts":1,"type":"say","ask":"task"}]', b'[]'):
        assert cline.units(["ui_messages.json"], {"ui_messages.json": head}.get) == []
    assert cline.units(["ui_messages.json"], {"ui_messages.json": b' [ {"type": "ask", "ask": "followup"}]'}.get) \
        == ["ui_messages.json"]
    assert cline.units(["a/other.json"], {"a/other.json": b'[{"ts":1,"type":"say","say":"task"}]'}.get) == []


def test_commands_take_the_output_the_log_showed_where_no_request_follows(tmp_path):
    ep, rejected = _read(_log(tmp_path, [
        _say("text", "Fix the build."), _request("<task>\nFix the build.\n</task>", tokensOut=3),
        _say("reasoning", "Run it first.", 1), _say("text", "Running.", 2), _ask("command", "make", 3),
        _ask("command_output", "cc: error", 4), _say("command_output", "exit 2", 5)]))
    assert rejected == [] and ep.task == "Fix the build."
    (step,) = ep.steps
    assert step.action.kind == "command" and step.action.code == "make"
    assert step.reasoning == "Run it first.\n\nRunning." and ep.final_observation.text == "cc: error\nexit 2"
    assert ep.final_observation.exit_code is None and not ep.terminated


def test_browser_mcp_and_questions_are_actions_and_feedback_follows_the_results(tmp_path):
    mcp = {"type": "use_mcp_tool", "serverName": "s", "toolName": "open", "arguments": "{}"}
    resource = {"type": "access_mcp_resource", "serverName": "s", "uri": "r://x"}
    ep, rejected = _read(_log(tmp_path, [
        _say("task", "Check the page."), _request("<task>\nCheck the page.\n</task>"),
        _ask("browser_action_launch", "http://localhost", 1), _say("browser_action_result", "{}", 2),
        _request("[browser_action for 'launch'] Result:\nopened\n\n<environment_details>\nx\n</environment_details>",
                 3),
        _ask("use_mcp_server", json.dumps(mcp), 4), _say("mcp_server_request_started", None, 5),
        _say("mcp_server_response", "done", 6), _ask("use_mcp_server", json.dumps(resource), 7),
        _ask("followup", json.dumps({"question": "Which?", "options": []}), 8),
        _say("user_feedback", "the first", 9, images=["data:image/png;base64,AA=="]),
        _request("[use_mcp_tool for 's'] Result:\ndone\n\n[access_mcp_resource for 's'] Result:\nres\n\n"
                 "[ask_followup_question for 'Which?'] Result:\n<answer>\nthe first\n</answer>", 10),
        _say("completion_result", "Checked.HAS_CHANGES", 11), _ask("completion_result", "", 12)]))
    assert rejected == []
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == [
        ("browser_action", {"action": "launch", "url": "http://localhost"}), ("use_mcp_tool", mcp),
        ("access_mcp_resource", resource), ("ask_followup_question", {"question": "Which?", "options": []}),
        ("attempt_completion", {"result": "Checked."})]
    assert [s.observation.text for s in ep.steps[1:]] == [
        "opened", "done", "res", "<answer>\nthe first\n</answer>\n\nthe first"]
    assert ep.terminated and ep.steps[-1].action.text == "Checked."
    assert [e["raw"] for e in ep.env["message_extras"] if e["role"] == "user" and "raw" in e] == [
        {"images": ["data:image/png;base64,AA=="]}]
    assert ep.env["cline"]["ui_kinds"] == {"completion_result": 1, "mcp_server_request_started": 1}
    assert [json.loads(s.action.raw)["ts"] - T0 for s in ep.steps] == [1, 4, 7, 8, 11]
    assert [e["timestamp"] for e in ep.env["message_extras"] if e["role"] == "tool"][:1] == [
        "2026-12-07T07:33:20.003000+00:00"]


def test_a_completion_the_user_answered_does_not_end_the_task(tmp_path):
    ep, rejected = _read(_log(tmp_path, [
        _say("task", "x"), _request("<task>\nx\n</task>"), _say("completion_result", "Done.", 1),
        _say("user_feedback", "not yet", 2)]))
    assert rejected == [] and ep.steps[0].action.kind == "done" and not ep.terminated
    assert ep.final_observation.text == "not yet"


def test_unknown_kinds_are_kept_raw_with_a_warning_and_errors_kept(tmp_path):
    odd = _say("hologram", "?", 2)
    error = _say("error", "boom", 3)
    ep, rejected = _read(_log(tmp_path, [
        _say("task", "Do it."), _request("<task>\nDo it.\n</task>"), _say("text", "Done it.", 1), odd, error,
        "not a record", {"ts": T0, "type": "other", "text": "x"}, _say("api_req_started", "{half", 4)]))
    assert ep.steps[0].action.kind == "message" and ep.steps[0].action.text == "Done it."
    assert ep.env["cline"]["unread_ui"] == [odd, "not a record", {"ts": T0, "type": "other", "text": "x"}]
    assert ep.env["cline"]["errors"] == [error] and ep.env["cline"]["ui_kinds"] == {"error": 1}
    assert [(r.rule, r.reason, r.location) for r in rejected] == [(
        "unknown_content", "t1/ui_messages.json: UI record kind(s) None, hologram, str are none Cline or Roo Code is "
        "known to write; kept raw in env.unread_ui", "t1/ui_messages.json"), (
        "unknown_content", "t1/ui_messages.json[7]: an api_req_started record whose text is not a JSON object; its "
        "usage is not counted; kept raw in env.cline.unread_requests", "t1/ui_messages.json")]
    assert ep.domain == "swe" and ep.platform == "linux" and ep.task == "Do it."


def test_a_roo_code_log_is_told_by_its_requests_and_reads_tool_records(tmp_path):
    tool = {"tool": "readFile", "path": "a.py"}
    ep, rejected = _read(_log(tmp_path, [
        _say("text", "Read a.py."), _say("api_req_started", json.dumps({"apiProtocol": "openai", "tokensIn": 5})),
        _ask("tool", json.dumps(tool), 1), _ask("tool", "not json", 2),
        _say("api_req_started", json.dumps({"apiProtocol": "openai", "tokensIn": 7}), 3)]))
    assert rejected == [] and "cline" not in ep.env
    assert ep.env["roo_code"]["usage"]["tokensIn"] == 12
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == [
        ("read_file", tool), ("tool", {"text": "not json"})]


def test_a_broken_log_is_rejected_naming_it(tmp_path):
    path = _log(tmp_path, [])
    path.write_text('[{"ts":1,"type":"say","say":"task"')
    ep, rejected = _read(path)
    assert ep is None and [r.rule for r in rejected] == ["parse_error"] and "t1/ui_messages.json" in rejected[0].reason
    path.write_text('{"type":"say","say":"task"}')
    ep, rejected = _read(path)
    assert ep is None and [(r.rule, r.reason, r.location) for r in rejected] == [
        ("bad_record", "t1/ui_messages.json: not a list of UI records", "ui_messages.json")]
    path.write_text(json.dumps([_say("task", "x"), _request("<task>\nx\n</task>"), _say("text", "y", 1)]))
    (path.parent / "task_metadata.json").write_text("{broken")
    ep, rejected = _read(path)
    assert ep is not None and [r.rule for r in rejected] == ["parse_error"]
    assert "t1/task_metadata.json" in rejected[0].reason


def test_the_metadata_beside_the_log_gives_the_platform(tmp_path):
    path = _log(tmp_path, [_say("task", "x"), _request("<task>\nx\n</task>"), _say("text", "y", 1)])
    (path.parent / "task_metadata.json").write_text(json.dumps({"environment_history": [{"os_name": "darwin"}]}))
    ep, rejected = _read(path)
    assert rejected == [] and ep.platform == "macos" and ep.env["cline"]["environment"] == {"os_name": "darwin"}


def test_history_blocks_of_an_unknown_type_are_kept_raw_with_a_warning(tmp_path):
    folder = tmp_path / "t2"
    folder.mkdir()
    odd = {"type": "document", "source": {"data": "x"}}
    (folder / "api_conversation_history.json").write_text(json.dumps([
        {"role": "user", "content": [{"type": "text", "text": "<task>\nx\n</task>"}, odd]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]))
    ep, rejected = _read(folder)
    assert ep.env["cline"]["unread_blocks"] == [odd]
    assert [(r.rule, r.reason) for r in rejected] == [(
        "unknown_content", "t2/api_conversation_history.json: history block type(s) document are none Cline writes; "
        "kept raw in env.cline.unread_blocks")]


def test_a_real_vscode_log_shared_alone_with_commands_and_mcp_calls():
    path = require_shared_sample(SHARED / "jeehunter-mcp-vscode-server" / "ui_messages.json")
    records = read_records(cline, path)
    check(records, GOLDEN / "cline-ui-jeehunter-mcp-vscode-server.json", texts="hash")
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert len(ep.steps) == 61 and sum(s.action.kind == "done" for s in ep.steps) == 3 and not ep.terminated
    assert sum(s.action.tool_name == "use_mcp_tool" for s in ep.steps) == 3
    assert ep.steps[5].observation.text.startswith("Command executed.") and ep.steps[5].observation.exit_code == 0


def test_a_real_log_shared_alone_with_questions_and_many_completions():
    path = require_shared_sample(SHARED / "haram-333-fineye" / "ui_messages.json")
    records = read_records(cline, path)
    check(records, GOLDEN / "cline-ui-haram-333-fineye.json", texts="hash")
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert len(ep.steps) == 24 and sum(s.action.kind == "done" for s in ep.steps) == 7
    assert ep.agent == "x-ai/grok-code-fast-1" and ep.task == "yo wassup"
    assert ep.env["cline"]["ui_kinds"]["api_req_failed"] == 6 and len(ep.env["cline"]["errors"]) == 43


def test_calls_no_request_answers_keep_the_names_the_log_gives_them(tmp_path):
    """Roo Code's requests carry no `request` text: each call keeps the tool the log names (a UI name mapped to
    the API's where it is known), and what the log showed it print."""
    resource = {"type": "access_mcp_resource", "serverName": "s", "uri": "r://x"}
    started = _say("api_req_started", json.dumps({"apiProtocol": "anthropic"}), 9)
    ep, rejected = _read(_log(tmp_path, [
        _say("text", "Go.", files=["a.py"]), started, _ask("tool", json.dumps({"tool": "fooTool"}), 1),
        _ask("tool", json.dumps({"tool": "searchFiles", "regex": "x"}), 2), started,
        _ask("use_mcp_server", json.dumps(resource), 3), _say("mcp_server_response", "res", 4), started,
        _ask("browser_action_launch", "http://x", 5), started, _ask("command", "ls", 6),
        _say("command_output", "a.py", 7), _say("user_feedback", "ok", 8, files=["b.md"])]))
    assert rejected == []
    assert [s.action.tool_name for s in ep.steps] == [
        "fooTool", "search_files", "access_mcp_resource", "browser_action", "execute_command"]
    assert [json.loads(s.action.arguments) for s in ep.steps[2:4]] == [
        resource, {"action": "launch", "url": "http://x"}]
    assert ep.steps[3].observation.text == "res" and ep.steps[3].observation.kind == "tool_result"
    final = ep.final_observation
    assert final.text == "a.py\n\nok" and final.kind == "text" and final.exit_code is None
    users = [e for e in ep.env["message_extras"] if e["role"] in ("user", "tool")]
    assert [e.get("raw") for e in users] == [{"files": ["a.py"]}, None, {"files": ["b.md"]}]
    assert [e["timestamp"] for e in users] == ["2026-12-07T07:33:20+00:00", "2026-12-07T07:33:20.009000+00:00",
                                              "2026-12-07T07:33:20.008000+00:00"]


def test_a_log_cut_before_its_task_reads_its_turns_and_skips_what_it_cannot_place(tmp_path):
    """A log whose first records are lost (it begins with a request): its first text is the model's, not a task;
    output shown before any call, output without text, a request that names no text and a record text that is no
    string are passed over; the turn's reasoning and its texts are kept apart, texts joined by a blank line."""
    ep, rejected = _read(_log(tmp_path, [
        _say("command_output", "stray"), _say("api_req_started", json.dumps({"request": ["not", "text"]})),
        _say("text", "First.", 1), _say("reasoning", "Think.", 2), _say("text", 42, 3), _say("text", "Second.", 4),
        _ask("command", "make", 5), _say("command_output", None, 6), _say("command_output", "built", 7),
        _request("no result here", 8), _say("text", "Done.", 9)]))
    assert rejected == [] and ep.task is None
    command, answer = ep.steps
    assert command.action.code == "make" and command.reasoning == "Think.\n\nFirst.\n\nSecond."
    assert command.observation.kind == "none" and answer.observation.kind == "terminal"
    assert answer.observation.text == "built" and answer.action.text == "Done."


def test_feedback_on_a_diff_is_the_users_message_and_a_tool_record_of_no_object_is_kept_as_its_text(tmp_path):
    ep, _ = _read(_log(tmp_path, [
        _say("text", "Edit it."), _request("<task>\nEdit it.\n</task>"), _ask("tool", "[1, 2]", 1),
        _say("user_feedback_diff", "use tabs", 2), _request("[tool] Result:\ndone", 3), _say("text", "Ok.", 4)]))
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps[:1]] == [
        ("tool", {"text": "[1, 2]"})]
    assert "use tabs" in ep.steps[1].observation.text and ep.steps[1].action.text == "Ok."


def test_shown_output_gives_no_exit_code_and_notices_are_counted_by_kind(tmp_path):
    """The output the log showed is the program's own (it may print what Cline's result says): only a result
    Cline sent back gives an exit code; an empty completion is an empty answer."""
    ep, _ = _read(_log(tmp_path, [
        _say("text", "Build."), _request("<task>\nBuild.\n</task>"), _say("checkpoint_created", None, 1),
        _say("checkpoint_created", None, 2), _ask("command", "make", 3),
        _say("command_output", "Command failed with exit code 2", 4), _request("no result", 5),
        _say("completion_result", None, 6)]))
    command, done = ep.steps
    assert done.observation.text == "Command failed with exit code 2" and done.observation.exit_code is None
    assert done.action.kind == "done" and done.action.text == "" and ep.env["cline"]["ui_kinds"] == {
        "checkpoint_created": 2}


def test_a_log_cut_before_its_first_request_keeps_the_output_its_first_command_showed(tmp_path):
    ep, rejected = _read(_log(tmp_path, [_ask("command", "ls"), _say("command_output", "a.py", 1)]))
    assert rejected == [] and [s.action.code for s in ep.steps] == ["ls"]
    assert ep.final_observation.text == "a.py" and ep.final_observation.kind == "terminal"
