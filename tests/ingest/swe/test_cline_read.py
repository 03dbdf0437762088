"""The Cline reader called directly (`cline.read`, `cline.units`, `cline.members`).

On what the Cline CLI itself wrote (`data/cline-cli-*`, see `data/cline-cli-2.18.0/PROVENANCE.md`), held to the
script that drove it (`coding_clis.py`): a 2.18.0 task folder with native calls, one with the XML tool form whose
completion only `ui_messages.json` holds, and a 3.0.65 session; each read as a folder and as its main file alone.
Hand-made, in the same shapes, only what the runs cannot show: broken and odd side files, per-turn models,
completions with changes, exit codes of every result form, unanswered and empty turns, sessions without a record.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import fsspec
import pytest

from ingest.record import Episode, Rejected
from ingest.source import Budgets, Source
from ingest.swe import cline
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import (CLINE_ANSWER, CLINE_MODEL, CLINE_PROMPT, CLINE_XML_CALLS, CLINE_XML_MODEL,
                                          NOTES)

DATA = Path(__file__).parent / "data"
NATIVE = DATA / "cline-cli-2.18.0" / "1796628808770"
XML = DATA / "cline-cli-2.18.0-xml" / "1796628854273"
SESSION = DATA / "cline-cli-3.0.65" / "1796628828924_zkg9x"
SESSION_ID = SESSION.name
PATCH = "*** Begin Patch\n*** Add File: out.txt\n+alpha\n+beta\n*** End Patch"
T0 = 1796628800000  # a time in ms, as Cline stamps its records
MISSING = "cat: missing.txt: No such file or directory"


def _at(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)


def _split(records) -> tuple[Episode | None, list[Rejected]]:
    episodes = [r for r in records if isinstance(r, Episode)]
    assert len(episodes) <= 1
    return (episodes[0] if episodes else None), [r for r in records if isinstance(r, Rejected)]


def _episode(path) -> Episode:
    ep, rejected = _split(read_records(cline, path))
    assert rejected == [] and ep is not None
    return ep


def _json(path: Path):
    return json.loads(path.read_text())


def _history_stamps(folder: Path, role: str = "assistant") -> list[dt.datetime]:
    return [_at(e["ts"]) for e in _json(folder / "api_conversation_history.json") if e["role"] == role]


# --- Cline CLI 2.18.0, native tool calls ---------------------------------------------------------------------


def _check_native(ep: Episode) -> None:
    assert [(s.action.kind, s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == [
        ("tool_call", "list_files", {"path": ".", "recursive": "false"}),
        ("tool_call", "read_file", {"path": "notes.txt"}),
        ("tool_call", "apply_patch", {"input": PATCH}),
        ("command", "execute_command", {"command": "cat missing.txt", "requires_approval": "false"}),
        ("done", "attempt_completion", {"result": CLINE_ANSWER})]
    assert ep.steps[3].action.code == "cat missing.txt" and ep.steps[4].action.text == CLINE_ANSWER
    # each action keeps the tool_use block the model sent, with the id its result names
    assert [json.loads(s.action.raw)["id"] for s in ep.steps] == [f"call_000{t}00scripted" for t in range(5)]
    assert [s.timestamp for s in ep.steps] == _history_stamps(NATIVE)
    first, listed, read, patched, failed = (s.observation for s in ep.steps)
    assert first.text.startswith(f"<task>\n{CLINE_PROMPT}\n</task>") and "<environment_details>" in first.text
    assert listed.text.startswith("notes.txt\n") and "# task_progress" in listed.text  # the reminders seen with it
    assert read.text.startswith("1 | alpha\n2 | beta\n")
    assert patched.text.startswith("Successfully applied patch")
    assert failed.text.startswith(f"Command failed with exit code 1.\nOutput:\n{MISSING}")
    assert failed.exit_code == 1 and failed.is_error
    assert [s.observation.exit_code for s in ep.steps[:4]] == [None] * 4
    assert not any(s.observation.is_error for s in ep.steps[:4])
    assert ep.final_observation is None and ep.terminated and ep.outcome == "unknown"
    assert [s.reasoning for s in ep.steps] == [None] * 5


def test_a_cli_task_folder_holds_every_scripted_call_its_result_and_time():
    ep = _episode(NATIVE)
    _check_native(ep)
    assert ep.key == NATIVE.name and ep.domain == "swe" and ep.platform == "linux"
    assert ep.task == CLINE_PROMPT and ep.agent == CLINE_MODEL and "model_per_step" not in ep.env


def test_a_cli_task_folders_usage_completion_and_environment():
    extras = _episode(NATIVE).env["cline"]
    metadata = _json(NATIVE / "task_metadata.json")
    # five requests of 120 tokens in and 30 out each (the scripted server's usage)
    assert extras["usage"] == {"tokensIn": 600, "tokensOut": 150, "cacheWrites": 0, "cacheReads": 0, "cost": 0}
    assert extras["completion"] == CLINE_ANSWER and extras["completion_has_changes"] is False
    assert extras["environment"] == metadata["environment_history"][-1]
    assert extras["environment"]["host_version"] == "2.18.0"
    assert extras["files_in_context"] == metadata["files_in_context"]
    assert [f["path"] for f in extras["files_in_context"]] == ["notes.txt", "out.txt"]


def test_a_history_file_alone_is_read_with_the_files_beside_it():
    ep = _episode(NATIVE / "api_conversation_history.json")
    _check_native(ep)
    assert ep.key == NATIVE.name and ep.task == CLINE_PROMPT
    assert ep.env["cline"]["usage"]["tokensOut"] == 150 and ep.env["cline"]["completion"] == CLINE_ANSWER


def test_a_history_alone_without_side_files_is_still_read(tmp_path):
    copy = tmp_path / "api_conversation_history.json"
    shutil.copy(NATIVE / "api_conversation_history.json", copy)
    ep = _episode(copy)
    assert len(ep.steps) == 5 and ep.task == CLINE_PROMPT and ep.agent == CLINE_MODEL and ep.terminated
    assert ep.env == {"cline": {}}


# --- Cline CLI 2.18.0, the XML tool form ---------------------------------------------------------------------


def test_xml_calls_keep_their_text_as_raw_and_their_thought_as_reasoning():
    ep = _episode(XML)
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == CLINE_XML_CALLS
    assert [s.reasoning for s in ep.steps] == [f"Step {n}." for n in range(1, 6)]
    # the call as the model wrote it, not only its name
    assert ep.steps[0].action.raw == "<list_files>\n<path>.</path>\n<recursive>false</recursive>\n</list_files>"
    assert ep.steps[2].action.raw.startswith("<write_to_file>\n<path>out.txt</path>\n<content>\nalpha")
    assert json.loads(ep.steps[2].action.arguments)["content"] == NOTES.rstrip("\n")
    assert ep.steps[3].action.kind == "command" and ep.steps[3].action.code == "cat missing.txt"
    assert ep.steps[3].action.raw.startswith("<execute_command>\n<command>cat missing.txt</command>")
    assert ep.steps[4].observation.exit_code == 1 and ep.steps[4].observation.is_error
    assert ep.steps[4].observation.text.startswith(f"Command failed with exit code 1.\nOutput:\n{MISSING}")
    assert [s.timestamp for s in ep.steps[:4]] == _history_stamps(XML)
    assert ep.agent == CLINE_XML_MODEL and ep.task == CLINE_PROMPT and ep.platform == "linux"


def test_a_completion_the_cli_never_saved_to_the_history_comes_from_the_ui_log():
    ep = _episode(XML)
    shown = next(m for m in _json(XML / "ui_messages.json") if m.get("say") == "completion_result")
    done = ep.steps[-1]
    assert (done.action.kind, done.action.tool_name, done.action.text) == ("done", "attempt_completion", CLINE_ANSWER)
    assert json.loads(done.action.arguments) == {"result": CLINE_ANSWER}
    assert json.loads(done.action.raw) == shown  # the UI record it came from
    assert done.timestamp == _at(shown["ts"]) and done.reasoning == "Step 5."
    assert ep.env.get("model_per_step") is None and ep.agent == CLINE_XML_MODEL
    assert ep.terminated and ep.env["cline"]["completion"] == CLINE_ANSWER


def _ui_completion(tmp_path, ui_tail: list, history_tail: list | None = None) -> Episode:
    """A task whose history ends in the user's result of a command (index 2), with `ui_tail` after it."""
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nCheck\n</task>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "<execute_command>\n<command>ls</command>\n"
                                                                    "</execute_command>"}]},
        {"role": "user", "content": [{"type": "text", "text": "[execute_command for 'ls'] Result:\n"
                                                              "Command executed.\nOutput:\na.py"}]},
        *(history_tail or [])]
    task = tmp_path / "t"
    task.mkdir()
    (task / "api_conversation_history.json").write_text(json.dumps(history))
    (task / "ui_messages.json").write_text(json.dumps(ui_tail))
    return _episode(task)


def test_an_unsaved_completion_takes_the_thoughts_of_its_turn_and_drops_the_changes_mark(tmp_path):
    ep = _ui_completion(tmp_path, [
        {"ts": T0 + 5, "type": "say", "say": "text", "text": "Not this turn.", "conversationHistoryIndex": 1},
        {"ts": T0 + 6, "type": "say", "say": "text", "text": "Looked.", "conversationHistoryIndex": 2},
        {"ts": T0 + 7, "type": "ask", "ask": "followup", "text": "Asked, not said.", "conversationHistoryIndex": 2},
        {"ts": T0 + 8, "type": "say", "say": "text", "text": "Done.", "conversationHistoryIndex": 2},
        {"ts": T0 + 9, "type": "say", "say": "completion_result", "text": "All fine.HAS_CHANGES",
         "conversationHistoryIndex": 2, "modelInfo": {"modelId": "m-ui"}}])
    done = ep.steps[-1]
    assert done.action.kind == "done" and done.action.text == "All fine." and done.reasoning == "Looked.\nDone."
    assert done.timestamp == _at(T0 + 9) and ep.agent == "m-ui" and ep.terminated
    assert ep.env["cline"]["completion"] == "All fine." and ep.env["cline"]["completion_has_changes"] is True


def test_an_unsaved_completion_without_thoughts_or_model(tmp_path):
    ep = _ui_completion(tmp_path, [{"type": "say", "say": "completion_result", "text": "Fine.",
                                    "conversationHistoryIndex": 2, "modelInfo": "not a dict"}])
    done = ep.steps[-1]
    assert done.action.text == "Fine." and done.reasoning is None and done.timestamp is None and ep.agent is None


@pytest.mark.parametrize("ui", [
    [],  # no completion shown
    [{"type": "say", "say": "completion_result", "text": "Old.", "conversationHistoryIndex": 1}],  # another turn's
    [{"type": "ask", "say": "completion_result", "text": "Asked.", "conversationHistoryIndex": 2}],
    [{"type": "say", "say": "completion_result", "text": None, "conversationHistoryIndex": 2}],
    ["not a record"]])
def test_no_completion_is_made_up_where_the_ui_log_shows_none_for_the_last_turn(tmp_path, ui):
    ep = _ui_completion(tmp_path, ui)
    assert [s.action.kind for s in ep.steps] == ["command"] and not ep.terminated
    assert ep.final_observation.exit_code == 0


def test_a_history_ending_in_the_models_turn_takes_no_completion_from_the_ui_log(tmp_path):
    ep = _ui_completion(tmp_path, [{"type": "say", "say": "completion_result", "text": "Shown.",
                                    "conversationHistoryIndex": 3}],
                        [{"role": "assistant", "content": [{"type": "text", "text": "Thinking aloud."}]}])
    assert [s.action.kind for s in ep.steps] == ["command", "message"] and not ep.terminated
    assert ep.steps[-1].action.text == "Thinking aloud."


# --- Cline CLI 3.0.65 sessions -------------------------------------------------------------------------------


def _check_session(ep: Episode, work: str) -> None:
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [
        ("command", "run_commands"), ("tool_call", "read_files"), ("tool_call", "apply_patch"),
        ("command", "run_commands"), ("message", None)]
    assert [s.action.code for s in ep.steps] == ["ls", None, None, "cat missing.txt", None]
    assert json.loads(ep.steps[1].action.arguments) == {"files": [{"path": f"{work}/notes.txt"}]}
    assert json.loads(ep.steps[2].action.arguments) == {"input": PATCH}
    assert ep.steps[-1].action.text == CLINE_ANSWER
    assert json.loads(ep.steps[-1].action.raw) == {"metrics": {"inputTokens": 120, "outputTokens": 30,
                                                               "cacheReadTokens": 0, "cacheWriteTokens": 0}}
    listed, read, patched, failed, answered = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    # each result as the JSON the model was sent
    assert json.loads(listed.text) == [{"query": "ls", "result": "notes.txt\n", "success": True}]
    assert (listed.kind, listed.exit_code, listed.is_error) == ("terminal", 0, None)
    assert json.loads(read.text)[0]["result"] == "1 | alpha\n2 | beta" and read.exit_code is None
    assert json.loads(patched.text)["success"] is True and patched.exit_code is None and not patched.is_error
    assert failed.kind == "terminal" and failed.exit_code == 1 and failed.is_error
    assert MISSING in json.loads(failed.text)[0]["result"] and answered is None
    messages = _json(SESSION / f"{SESSION_ID}.messages.json")["messages"]
    assert [s.timestamp for s in ep.steps] == [_at(m["ts"]) for m in messages if m["role"] == "assistant"]


def test_a_cli3_session_holds_every_scripted_call_its_result_and_exit_code():
    ep = _episode(SESSION)
    record = _json(SESSION / f"{SESSION_ID}.json")
    _check_session(ep, record["cwd"])
    assert ep.key == SESSION_ID and ep.domain == "swe" and ep.platform == "linux"
    assert ep.task == CLINE_PROMPT and ep.agent == CLINE_MODEL and ep.terminated and ep.outcome == "unknown"
    assert ep.env["system_prompt"].startswith("You are Cline, an AI coding agent.")


def test_a_cli3_sessions_record_and_usage():
    env = _episode(SESSION).env["cline"]
    record = _json(SESSION / f"{SESSION_ID}.json")
    assert env["session"] == {k: record[k] for k in ("session_id", "source", "status", "exit_code", "provider",
                                                     "model", "cwd", "started_at", "ended_at", "prompt")}
    assert env["session"]["status"] == "completed" and env["session"]["model"] == CLINE_MODEL
    usage = {"inputTokens": 600, "outputTokens": 150, "cacheReadTokens": 0, "cacheWriteTokens": 0, "totalCost": 0}
    assert env["usage"] == usage and env["aggregateUsage"] == usage and env["totalCost"] == 0


def test_a_cli3_messages_file_alone_is_read_with_its_record(tmp_path):
    ep = _episode(SESSION / f"{SESSION_ID}.messages.json")
    _check_session(ep, _json(SESSION / f"{SESSION_ID}.json")["cwd"])
    assert ep.env["cline"]["session"]["status"] == "completed" and ep.task == CLINE_PROMPT and ep.terminated


def _session(tmp_path, doc, record=None, name="s1") -> list:
    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{name}.messages.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))
    if record is not None:
        (folder / f"{name}.json").write_text(record if isinstance(record, str) else json.dumps(record))
    return read_records(cline, folder)


def _turns(last_calls: bool = False) -> list:
    end = {"type": "tool_use", "id": "c2", "name": "read_files", "input": {"files": []}} if last_calls else \
        {"type": "text", "text": "Done."}
    return [
        {"role": "user", "content": [{"type": "text", "text": '<user_input mode="act">Count them</user_input>'}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "run_commands",
                                           "input": {"commands": ["ls", "wc -l a"]}}], "modelInfo": {"id": "m3"}},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "name": "run_commands", "content": [
            {"query": "ls", "result": "a\n", "success": True},
            {"query": "wc -l a", "result": "", "success": False, "error": "exited with code 2"}]}]},
        {"role": "assistant", "content": [end], "modelInfo": {"id": "m3"}}]


def test_a_session_without_its_record_ends_with_the_models_answer_and_takes_the_task_from_the_input(tmp_path):
    ep, rejected = _split(_session(tmp_path, {"sessionId": "abc", "messages": _turns()}))
    assert rejected == [] and ep.key == "abc" and ep.task == "Count them" and ep.agent == "m3" and ep.terminated
    assert ep.env == {"cline": {"session": {}}}
    # several commands run one after another; the failure of one of them fails the call (no single exit code)
    assert ep.steps[0].action.code == "ls\nwc -l a"
    assert ep.steps[1].observation.is_error and ep.steps[1].observation.exit_code is None


def test_a_session_is_not_terminated_while_its_last_turn_calls_a_tool_or_its_record_is_not_completed(tmp_path):
    ep, _ = _split(_session(tmp_path, {"sessionId": "a", "messages": _turns(last_calls=True)}, name="a"))
    assert not ep.terminated
    ep, _ = _split(_session(tmp_path, {"sessionId": "b", "messages": _turns()}, {"status": "failed"}, name="b"))
    assert not ep.terminated and ep.env["cline"]["session"] == {"status": "failed"}
    ep, _ = _split(_session(tmp_path, {"sessionId": "c", "messages": _turns()}, {"status": "completed",
                                                                                 "metadata": "x"}, name="c"))
    assert ep.terminated and ep.env == {"cline": {"session": {"status": "completed"}}}


def test_a_session_record_that_is_not_an_object_is_left_out(tmp_path):
    ep, rejected = _split(_session(tmp_path, {"messages": _turns()}, ["not", "a", "record"]))
    assert rejected == [] and ep.key == "s1.messages.json" and ep.task == "Count them" and ep.terminated
    assert ep.env == {"cline": {"session": {}}}


def test_a_session_record_keeps_its_own_fields_but_not_the_empty_ones(tmp_path):
    record = {"status": "completed", "prompt": "Count them all", "model": None, "cwd": "/w", "pid": 7}
    ep, _ = _split(_session(tmp_path, {"messages": _turns(), "system_prompt": "Be brief."}, record))
    assert ep.task == "Count them all" and ep.env["system_prompt"] == "Be brief."
    assert ep.env["cline"]["session"] == {"status": "completed", "prompt": "Count them all", "cwd": "/w"}


@pytest.mark.parametrize("doc, why", [
    ('{"sessionId": "s1", "messages": [', "invalid JSON"),
    ({"sessionId": "s1", "messages": {"role": "user"}}, "without a `messages` list"),
    ({"sessionId": "s1"}, "without a `messages` list")])
def test_a_broken_session_file_is_rejected_naming_it(tmp_path, doc, why):
    ep, rejected = _split(_session(tmp_path, doc))
    assert ep is None and len(rejected) == 1
    assert rejected[0].rule in ("parse_error", "bad_record") and why in rejected[0].reason
    assert "s1.messages.json" in rejected[0].reason and rejected[0].location == "s1.messages.json"


def test_a_broken_session_record_is_rejected_naming_it(tmp_path):
    ep, rejected = _split(_session(tmp_path, {"messages": _turns()}, "{not json"))
    assert ep is None and [r.rule for r in rejected] == ["parse_error"] and "s1.json" in rejected[0].reason


def test_a_session_over_the_record_budget_is_refused_not_parsed(tmp_path):
    folder = tmp_path / "s1"
    folder.mkdir()
    (folder / "s1.messages.json").write_text(json.dumps({"messages": _turns(), "pad": "x" * 2000}))
    source = Source(fsspec.filesystem("file"), str(folder), "s1", lambda *a: "sha256:0",
                    budgets=Budgets(record_bytes=1000))
    (rejected,) = list(cline.read(source))
    assert rejected.rule == "budget_exceeded" and "s1.messages.json" in rejected.reason
