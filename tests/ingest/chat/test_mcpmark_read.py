"""The MCPMark reader on hand-made task folders in the evaluator's layout (`src/evaluator.py`,
`ResultsReporter.save_meta_json`): what it claims, the log it leaves unread, a run whose agent failed before
answering."""

import json

from ingest.chat import mcpmark
from ingest.record import Episode
from tests.ingest.golden import head, read_records

META = {"task_name": "repo__task", "model_name": "gpt-5", "litellm_run_model_name": "openai/gpt-5",
        "reasoning_effort": "default", "mcp": "github", "timeout": 300,
        "time": {"start": "2025-10-01T10:00:00", "end": "2025-10-01T10:01:00"}, "agent_execution_time": 1.0,
        "task_execution_time": 2.0,
        "execution_result": {"success": True, "error_message": None, "verification_error": None,
                             "verification_output": "ok"},
        "token_usage": {}, "turn_count": 1}
MESSAGES = [{"content": "Do it.", "role": "user"},
            {"arguments": "{}", "call_id": "c1", "name": "list", "type": "function_call", "id": "__fake_id__"},
            {"call_id": "c1", "type": "function_call_output",
             "output": json.dumps({"type": "text", "text": "a\nb", "annotations": None, "meta": None})},
            {"id": "__fake_id__", "content": [{"annotations": [], "text": "Done.", "type": "output_text"}],
             "role": "assistant", "status": "completed", "type": "message"}]


def _folder(tmp_path, meta=META, messages=MESSAGES, log: bool = False):
    folder = tmp_path / "repo__task"
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps(meta, indent=2))
    (folder / "messages.json").write_text(json.dumps(messages, indent=2))
    if log:
        (folder / "execution.log").write_text("| list | ok\n")
    return folder


def test_the_task_folder_is_claimed_and_its_execution_log_left_unread_with_a_reason(tmp_path):
    folder = _folder(tmp_path, log=True)
    files = sorted(str(p) for p in folder.iterdir())
    assert mcpmark.units(files, head) == [str(folder)]
    assert mcpmark.members([str(folder)], files, head) == {
        str(folder): [(str(folder / "execution.log"), "MCPMark's reader reads messages.json and meta.json")]}
    assert mcpmark.units([str(folder / "messages.json")], head) == []  # without meta.json: the shape reader's
    other = dict(META)
    other.pop("task_name")
    (folder / "meta.json").write_text(json.dumps(other))
    assert mcpmark.units(files, head) == []  # a meta.json that is not MCPMark's


def test_a_run_reads_its_result_out_of_the_wrapper_and_its_verdict_and_model_from_meta(tmp_path):
    [episode] = read_records(mcpmark, _folder(tmp_path))
    assert isinstance(episode, Episode)
    assert [(s.action.kind, s.action.tool_name) for s in episode.steps] == [("tool_call", "list"), ("message", None)]
    assert episode.steps[1].observation.text == "a\nb" and episode.env["mcpmark"]["tool_outputs_unwrapped"] == 1
    assert (episode.outcome, episode.agent, episode.terminated) == ("success", "openai/gpt-5", True)


def test_a_run_that_saved_no_message_is_an_empty_episode_row_that_keeps_its_verdict(tmp_path):
    meta = {**META, "execution_result": {**META["execution_result"], "success": False,
                                         "error_message": "litellm.RateLimitError"}}
    [row] = read_records(mcpmark, _folder(tmp_path, meta=meta, messages=[]))
    assert row.rule == "empty_episode" and "litellm.RateLimitError" in row.reason
    assert json.loads(row.snippet)["outcome"] == "failure" and json.loads(row.snippet)["agent"] == "openai/gpt-5"
