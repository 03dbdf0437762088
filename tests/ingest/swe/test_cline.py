"""Edge cases of Cline task folders the CLI run does not write (hand-made in the shapes of Cline's
`src/core/task` and its XML tool definitions): a model without native tools writes its calls as XML in its text,
an older history carries `tool_result` blocks, and a task that ended without `attempt_completion`."""

from __future__ import annotations

import json

from ingest.record import Episode, Rejected
from ingest.swe import cline
from tests.ingest.golden import read_records


def _folder(tmp_path, history, ui=None, metadata=None):
    task = tmp_path / "tasks" / "1700000000000"
    task.mkdir(parents=True)
    (task / "api_conversation_history.json").write_text(json.dumps(history))
    if ui is not None:
        (task / "ui_messages.json").write_text(json.dumps(ui))
    if metadata is not None:
        (task / "task_metadata.json").write_text(json.dumps(metadata))
    return task


def _episode(path) -> Episode:
    records = read_records(cline, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    return ep


def test_xml_tool_calls_in_the_text_are_read_with_their_results(tmp_path):
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nFix the bug\n</task>"}]},
        {"role": "assistant", "content": [{"type": "text", "text":
            "I will look first.\n<execute_command>\n<command>ls</command>\n<requires_approval>false"
            "</requires_approval>\n</execute_command>"}]},
        {"role": "user", "content": [{"type": "text", "text": "[execute_command for 'ls'] Result:\n"
                                                              "Command executed.\nOutput:\na.py"},
                                     {"type": "text", "text": "<environment_details>\n</environment_details>"}]},
        {"role": "assistant", "content": [{"type": "text", "text":
            "<attempt_completion>\n<result>\nFixed.\n</result>\n</attempt_completion>"}]},
    ]
    ui = [{"ts": 1700000000001, "type": "say", "say": "api_req_started",
           "text": json.dumps({"tokensIn": 10, "tokensOut": 5, "cost": 0.01})},
          {"ts": 1700000000002, "type": "say", "say": "api_req_started",
           "text": json.dumps({"tokensIn": 20, "tokensOut": 7, "cost": 0.02})}]
    metadata = {"model_usage": [{"ts": 1699999999999, "model_id": "claude-3-7-sonnet", "model_provider_id": "x"}],
                "environment_history": [{"os_name": "darwin"}]}
    ep = _episode(_folder(tmp_path, history, ui, metadata))
    assert ep.task == "Fix the bug" and ep.agent == "claude-3-7-sonnet" and ep.platform == "macos"
    assert [(s.action.kind, s.action.code or s.action.text) for s in ep.steps] == [("command", "ls"),
                                                                                   ("done", "Fixed.")]
    assert ep.steps[0].reasoning == "I will look first."
    assert ep.steps[1].observation.exit_code == 0 and ep.steps[1].observation.text.startswith("Command executed.")
    assert ep.terminated
    assert ep.env["cline"]["usage"] == {"tokensIn": 30, "tokensOut": 12, "cost": 0.03}


def test_tool_result_blocks_pair_by_id_and_a_task_without_completion_is_not_terminated(tmp_path):
    history = [
        {"role": "user", "content": "<task>\nRead it\n</task>"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file",
                                           "input": {"path": "a.py"}}], "ts": 1700000000000},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "print(1)"}]},
    ]
    ep = _episode(_folder(tmp_path, history))
    assert [s.action.tool_name for s in ep.steps] == ["read_file"]
    assert ep.final_observation.text == "print(1)" and not ep.terminated and ep.agent is None


def test_a_history_that_is_not_a_list_is_rejected_naming_the_file(tmp_path):
    task = _folder(tmp_path, {"role": "user"})
    (rejected,) = read_records(cline, task)
    assert isinstance(rejected, Rejected) and "api_conversation_history.json" in rejected.reason


def test_a_history_among_other_files_is_claimed_alone_and_a_task_folder_whole():
    head = {"/in/repo/api_conversation_history.json": b'[{"role":"user","content":"x"}]',
            "/in/tasks/1/api_conversation_history.json": b'[{"role":"user","content":"x"}]'}
    files = ["/in/repo/README.md", "/in/repo/api_conversation_history.json", "/in/repo/src/a.py",
             "/in/tasks/1/api_conversation_history.json", "/in/tasks/1/ui_messages.json",
             "/in/tasks/1/task_metadata.json", "/in/tasks/1/focus_chain_taskid_1.md"]
    assert cline.units(files, lambda p: head.get(p, b"")) == ["/in/repo/api_conversation_history.json", "/in/tasks/1"]


def test_a_call_a_resumed_task_never_answered_does_not_take_the_next_result(tmp_path):
    history = [
        {"role": "user", "content": "<task>\nAsk me\n</task>"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "q", "name": "ask_followup_question",
                                           "input": {"question": "Which?"}}]},
        {"role": "user", "content": [{"type": "text", "text": "[TASK RESUMPTION] This task was interrupted."}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "r", "name": "read_file",
                                           "input": {"path": "a.py"}}]},
        {"role": "user", "content": [{"type": "text", "text": "[read_file for 'a.py'] Result:\nprint(1)"}]},
    ]
    ep = _episode(_folder(tmp_path, history))
    assert ep.steps[1].observation.text == "[TASK RESUMPTION] This task was interrupted."
    assert ep.final_observation.text == "print(1)"
