"""Edge cases of a computer-use loop's `messages.json` beside an OSWorld result folder, hand-made in the layout
`mm_agents/computer_use.py` of richartkeil/OSWorld-Sec-Eval writes (the real run is read in
test_osworld_agents.py): a failed command's output, a reply that executed nothing, a turn whose lines are not
in traj.jsonl, a message of another shape, a task the folder already names, and a file that is no message
list."""

from __future__ import annotations

import json

from tests.ingest.ubuntu.test_osworld_agents import _line, _write
from tests.ingest.ubuntu.test_osworld_read import _read

SYSTEM = "\nYou are a computer agent.\nYou are asked to complete the following task: List the downloads."
SHOT = {"role": "user", "content": [{"type": "text", "text": "Here is the next screenshot."},
                                    {"type": "image", "source": {"type": "base64", "data": "[IMAGE DATA]"}}]}


def _say(role: str, text: str) -> dict:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def _executed(codes) -> dict:
    return _say("user", f"Executed a translation of your issued tool call: {codes!r}")


def _run(tmp_path, messages, instruction=None):
    lines = [_line(1, "import pyautogui; pyautogui.moveTo(10, 20)"), _line(1, "import pyautogui; pyautogui.click()"),
             _line(2, "BASH ls ~/Downloads"), _line(3, "DONE", done=True)]
    for line in lines:
        line.pop("response")  # the loop logs no response: its texts are in messages.json
    folder = _write(tmp_path / "pyautogui" / "screenshot" / "claude" / "os" / "e1", lines)
    (folder / "messages.json").write_text(messages if isinstance(messages, str) else json.dumps(messages))
    if instruction:
        (folder / "instruction.txt").write_text(instruction)
    return _read(folder, uri="pyautogui/screenshot/claude/os/e1")


def test_texts_land_on_their_lines_and_a_failed_commands_output_on_the_screen_after_it(tmp_path):
    ep, rows = _run(tmp_path, [
        _say("system", SYSTEM), SHOT,
        _say("assistant", "Open the file manager."),
        _executed(["import pyautogui; pyautogui.moveTo(10, 20)", "import pyautogui; pyautogui.click()"]), SHOT,
        _say("assistant", "Nothing to do yet."), _executed(None), SHOT,  # a reply the loop found no action in
        _say("assistant", "List them in a shell."), _executed(["BASH ls ~/Downloads"]),
        _say("user", "The command completed with exit code 2.\nThe output is:\nls: cannot access"), SHOT])
    assert rows == [] and ep.task == "List the downloads."
    assert [s.reasoning for s in ep.steps] == ["Open the file manager.", None, "List them in a shell.", None]
    done = ep.steps[3].observation
    assert (done.kind, done.exit_code, done.text) == (
        "screen", 2, "The command completed with exit code 2.\nThe output is:\nls: cannot access")
    talk = ep.env["conversation"]
    assert talk["turns_without_action"] == [{"message": 6, "thought": "Nothing to do yet.", "codes": [],
                                             "shell": None}]
    assert "ingest_warnings" not in ep.env


def test_a_command_that_succeeded_has_exit_code_zero(tmp_path):
    ep, rows = _run(tmp_path, [
        _say("system", SYSTEM), SHOT, _say("assistant", "Open the file manager."),
        _executed(["import pyautogui; pyautogui.moveTo(10, 20)", "import pyautogui; pyautogui.click()"]), SHOT,
        _say("assistant", "List them in a shell."), _executed(["BASH ls ~/Downloads"]),
        _say("user", "The command completed successfully and produced no output."), SHOT])
    done = ep.steps[3].observation
    assert rows == [] and (done.exit_code, done.text) == (
        0, "The command completed successfully and produced no output.")


def test_what_the_loop_does_not_write_is_kept_raw_with_a_warning(tmp_path):
    odd = {"role": "assistant", "content": [{"type": "tool_use", "name": "computer", "input": {"action": "key"}}]}
    ep, rows = _run(tmp_path, [
        _say("system", SYSTEM), SHOT, odd,
        _say("assistant", "Click somewhere else."), _executed(["import pyautogui; pyautogui.moveTo(99, 99)"]), SHOT],
        instruction="The task as the runner wrote it")
    assert rows == [] and ep.task == "The task as the runner wrote it"  # the folder's own file first
    assert [s.reasoning for s in ep.steps] == [None] * 4
    talk = ep.env["conversation"]
    assert talk["unread_messages"] == [{"message": 2, "raw": odd}]
    assert talk["turns_not_in_traj"][0]["codes"] == ["import pyautogui; pyautogui.moveTo(99, 99)"]
    assert sorted(w["rule"] for w in ep.env["ingest_warnings"]) == ["osworld.conversation_unmatched",
                                                                    "osworld.conversation_unread"]


def test_a_file_that_is_no_message_list_is_a_quarantine_row_and_the_run_is_read(tmp_path):
    ep, rows = _run(tmp_path, '{"messages": "elsewhere"}')
    assert [(r.rule, r.location) for r in rows] == [("parse_error", "messages.json")]
    assert "messages.json" in rows[0].reason and len(ep.steps) == 4 and "conversation" not in ep.env
    ep, rows = _run(tmp_path / "cut", '[{"role": "system", "content": [{"type": "te')
    assert [(r.rule, r.location) for r in rows] == [("parse_error", "messages.json")] and len(ep.steps) == 4
