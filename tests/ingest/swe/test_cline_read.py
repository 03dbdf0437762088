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
    # nothing from side files; the history's own per-message times and metrics stay in message_extras
    assert ep.env["cline"] == {} and set(ep.env) == {"cline", "message_extras"}


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
    # the task is the input the model got; the record's prompt (which may differ: cut to a title) stays in env
    assert ep.task == "Count them" and ep.env["system_prompt"] == "Be brief."
    assert ep.env["cline"]["session"] == {"status": "completed", "prompt": "Count them all", "cwd": "/w"}


@pytest.mark.parametrize("doc, why", [
    ('{"sessionId": "s1", "messages": [', "invalid JSON"),
    ({"sessionId": "s1", "messages": {"role": "user"}}, "s1.messages.json: a Cline session without a `messages` list"),
    ({"sessionId": "s1"}, "s1.messages.json: a Cline session without a `messages` list")])
def test_a_broken_session_file_is_rejected_naming_it(tmp_path, doc, why):
    ep, rejected = _split(_session(tmp_path, doc))
    assert ep is None and len(rejected) == 1
    assert rejected[0].rule in ("parse_error", "bad_record") and why in rejected[0].reason
    assert "s1.messages.json" in rejected[0].reason and rejected[0].location == "s1.messages.json"


def test_a_broken_session_record_is_rejected_naming_it(tmp_path):
    ep, rejected = _split(_session(tmp_path, {"messages": _turns()}, "{not json"))
    assert ep is None and [r.rule for r in rejected] == ["parse_error"] and "s1.json" in rejected[0].reason


def test_a_session_over_the_record_budget_is_refused_not_parsed(tmp_path):
    def read(name, messages, record=None):
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.messages.json").write_text(json.dumps(messages))
        if record is not None:
            (folder / f"{name}.json").write_text(json.dumps(record))
        return list(cline.read(Source(fsspec.filesystem("file"), str(folder), name, lambda *a: "sha256:0",
                                      budgets=Budgets(record_bytes=1000))))

    (rejected,) = read("s1", {"messages": _turns(), "pad": "x" * 2000})
    assert rejected.rule == "budget_exceeded" and "s1.messages.json" in rejected.reason
    # the session record beside it is one record too
    (rejected,) = read("s2", {"messages": _turns()[:2]}, {"status": "completed", "pad": "x" * 2000})
    assert rejected.rule == "budget_exceeded" and "s2.json" in rejected.reason


# --- task folders: side files, usage, environment -------------------------------------------------------------


def _task(tmp_path, history, **side) -> Path:
    """A task folder `tasks/1796628800000/` with the history and the side files given by name (`ui`,
    `metadata`, `item`: a value is written as JSON, a string as it is)."""
    task = tmp_path / "tasks" / "1796628800000"
    task.mkdir(parents=True)
    files = {"history": "api_conversation_history.json", "ui": "ui_messages.json", "metadata": "task_metadata.json",
             "item": "history_item.json"}
    for key, value in {"history": history, **side}.items():
        (task / files[key]).write_text(value if isinstance(value, str) else json.dumps(value))
    return task


def _call_turn(name="read_file", ts=None, **info) -> dict:
    entry = {"role": "assistant", "content": [{"type": "tool_use", "id": name, "name": name, "input": {"path": "a"}}]}
    if ts is not None:
        entry["ts"] = ts
    if info:
        entry["modelInfo"] = info
    return entry


def _result(name="read_file", text="ok") -> dict:
    return {"role": "user", "content": [{"type": "text", "text": f"[{name} for 'a'] Result:\n{text}"}]}


TASK = {"role": "user", "content": "<task>\nDo it\n</task>"}


def test_broken_side_files_are_rejected_naming_them_and_the_conversation_is_still_read(tmp_path):
    folder = _task(tmp_path, [TASK, _call_turn(), _result()], ui="[{", metadata=["not", "an", "object"],
                   item="{oops")
    ep, rejected = _split(read_records(cline, folder))
    assert sorted((r.rule, r.reason.split(":")[0]) for r in rejected) == [
        ("parse_error", "1796628800000/history_item.json"), ("parse_error", "1796628800000/ui_messages.json")]
    assert [s.action.tool_name for s in ep.steps] == ["read_file"] and ep.task == "Do it"
    assert ep.env == {"cline": {}}  # nothing of the broken files, and not taken for Roo Code


def test_a_broken_or_oversized_history_is_rejected_naming_it(tmp_path):
    ep, rejected = _split(read_records(cline, _task(tmp_path, '[{"role": "user"')))
    assert ep is None and [r.rule for r in rejected] == ["parse_error"]
    assert rejected[0].reason.startswith("1796628800000/api_conversation_history.json: invalid JSON")
    folder = tmp_path / "tasks" / "1796628800000"
    source = Source(fsspec.filesystem("file"), str(folder / "api_conversation_history.json"), "h",
                    lambda *a: "sha256:0", budgets=Budgets(record_bytes=10))
    (too_big,) = list(cline.read(source))
    assert too_big.rule == "budget_exceeded" and "1796628800000/api_conversation_history.json" in too_big.reason


def test_a_history_that_is_not_a_list_is_rejected_as_a_bad_record(tmp_path):
    (rejected,) = read_records(cline, _task(tmp_path, {"role": "user", "content": "x"}))
    assert rejected.rule == "bad_record" and rejected.location == "api_conversation_history.json"
    assert rejected.reason == "1796628800000/api_conversation_history.json: not a list of messages"


UNREAD_REQUESTS = [{"say": "api_req_started", "text": "{broken"},  # a request being written when the task stopped
                   {"say": "api_req_started", "text": "[1, 2]"},
                   {"say": "api_req_started", "text": {"tokensIn": 100}},
                   {"say": "api_req_started"}]


def test_usage_sums_the_numbers_of_every_request_and_skips_what_is_not_one(tmp_path):
    ui = [{"say": "api_req_started", "text": json.dumps({"tokensIn": 10, "tokensOut": 2, "cost": 0.5})},
          {"say": "api_req_started", "text": json.dumps({"tokensIn": 5, "cacheReads": 3, "cost": 0.25,
                                                         "tokensOut": True, "cacheWrites": "7"})},
          *UNREAD_REQUESTS,
          {"say": "text", "text": json.dumps({"tokensIn": 1000})},
          {"ask": "api_req_failed", "text": json.dumps({"tokensIn": 1000})},
          {"say": "api_req_started", "text": json.dumps({"tokensIn": 1})}]
    ep, _ = _split(read_records(cline, _task(tmp_path, [TASK, _call_turn(), _result()], ui=ui)))
    assert ep.env["cline"]["usage"] == {"tokensIn": 16, "tokensOut": 2, "cacheReads": 3, "cost": 0.75}


def test_a_request_record_whose_text_is_not_an_object_is_kept_raw_with_a_warning_naming_it(tmp_path):
    ui = [{"say": "api_req_started", "text": json.dumps({"tokensIn": 10})}, *UNREAD_REQUESTS]
    ep, rejected = _split(read_records(cline, _task(tmp_path, [TASK, _call_turn(), _result()], ui=ui)))
    assert ep.env["cline"]["unread_requests"] == UNREAD_REQUESTS and ep.env["cline"]["usage"] == {"tokensIn": 10}
    assert [(r.rule, r.location, r.record_id) for r in rejected] == [
        ("unknown_content", "1796628800000/ui_messages.json", str(i)) for i in (1, 2, 3, 4)]
    assert rejected[0].reason == ("1796628800000/ui_messages.json[1]: an api_req_started record whose text is not a "
                                  "JSON object; its usage is not counted; kept raw in env.cline.unread_requests")


def test_a_roo_request_record_that_cannot_be_read_is_kept_in_roo_codes_env(tmp_path):
    ui = [{"say": "api_req_started", "text": json.dumps({"apiProtocol": "openai", "tokensIn": 2})},
          {"say": "api_req_started", "text": '{"apiProtocol": "openai", "tok'}]
    ep, rejected = _split(read_records(cline, _task(tmp_path, [TASK, _call_turn(), _result()], ui=ui)))
    assert ep.env["roo_code"]["unread_requests"] == ui[1:] and ep.env["roo_code"]["usage"] == {"tokensIn": 2}
    (warning,) = rejected
    assert warning.reason.endswith("kept raw in env.roo_code.unread_requests") and warning.record_id == "1"


def test_the_last_completion_shown_is_kept_with_whether_it_changed_files(tmp_path):
    done = {"role": "assistant", "content": [{"type": "tool_use", "id": "d", "name": "attempt_completion",
                                              "input": {"result": "Second."}}]}
    ui = [{"say": "completion_result", "text": "First.HAS_CHANGES"}, {"say": "completion_result", "text": 5},
          {"say": "completion_result", "text": "HAS_CHANGES: Second."}]
    ep = _episode(_task(tmp_path, [TASK, _call_turn(), _result(), done], ui=ui))
    assert ep.env["cline"]["completion"] == "HAS_CHANGES: Second." and not ep.env["cline"]["completion_has_changes"]
    ui[-1] = {"say": "completion_result", "text": "Second.HAS_CHANGES"}
    ep = _episode(_task(tmp_path / "again", [TASK, _call_turn(), _result(), done], ui=ui))
    assert ep.env["cline"]["completion"] == "Second." and ep.env["cline"]["completion_has_changes"] is True
    assert ep.steps[-1].action.text == "Second." and ep.terminated


def test_the_task_is_the_histories_else_the_first_one_the_ui_showed(tmp_path):
    ui = [{"say": "text", "text": "not the task"}, {"say": "task", "text": "Shown task"},
          {"say": "task", "text": "A later task"}]
    untagged = {"role": "user", "content": [{"type": "text", "text": "please do it"}]}
    assert _episode(_task(tmp_path / "a", [untagged, _call_turn(), _result()], ui=ui)).task == "Shown task"
    assert _episode(_task(tmp_path / "b", [TASK, _call_turn(), _result()], ui=ui)).task == "Do it"
    # neither: the first thing the user said
    assert _episode(_task(tmp_path / "c", [untagged, _call_turn(), _result()])).task == "please do it"


@pytest.mark.parametrize("environments, platform", [
    ([{"os_name": "win32"}], "windows"), ([{"os_name": "darwin"}, {"os_name": "linux"}], "linux"),
    ([{"os_name": "linux"}, {"os_name": "win32"}, "not a record"], "windows"),
    ([{"os_name": "freebsd"}], "linux"), ([{"os_name": "darwin"}], "macos")])
def test_the_platform_is_the_latest_environments(tmp_path, environments, platform):
    ep = _episode(_task(tmp_path, [TASK, _call_turn(), _result()], metadata={"environment_history": environments}))
    assert ep.platform == platform
    assert ep.env["cline"]["environment"] == [e for e in environments if isinstance(e, dict)][-1]
    assert "platform" not in ep.env["cline"] and "files_in_context" not in ep.env["cline"]


# --- turns: models, reasoning, calls -------------------------------------------------------------------------


def test_each_turns_model_is_its_own_else_the_one_in_use_at_its_time(tmp_path):
    history = [TASK,
               _call_turn(ts=T0 + 150), _result(),                     # metadata: "a" from T0 + 100
               _call_turn(ts=T0 + 250, modelId="own"), _result(),      # its own modelInfo
               _call_turn(ts=T0 + 260, id="sdk-id"), _result(),        # the CLI 3 spelling
               _call_turn(ts=T0 + 300), _result(),                     # "b" from T0 + 200 (not "c", later)
               _call_turn(), _result()]                                # no time: the latest entry
    usage = [{"ts": T0 + 100, "model_id": "a"}, "not a record", {"ts": T0 + 200, "model_id": "b"},
             {"ts": T0 + 400, "model_id": "c"}, {"ts": T0 + 500}]
    ep = _episode(_task(tmp_path, history, metadata={"model_usage": usage}))
    assert ep.env["model_per_step"] == ["a", "own", "sdk-id", "b", "c"]
    assert ep.agent == "a" and ep.env["models"] == ["a", "own", "sdk-id", "b", "c"]


def test_a_model_usage_entry_without_a_time_holds_from_the_start(tmp_path):
    history = [TASK, _call_turn(ts=T0), _result()]
    usage = [{"model_id": "early"}, {"ts": "yesterday", "model_id": "untimed"}, {"ts": T0 + 1, "model_id": "late"}]
    assert _episode(_task(tmp_path, history, metadata={"model_usage": usage})).agent == "untimed"
    assert _episode(_task(tmp_path / "b", history, metadata={"model_usage": "x"})).agent is None


def test_a_model_named_by_something_other_than_a_string_is_left_out(tmp_path):
    ep = _episode(_task(tmp_path, [TASK, _call_turn(modelId={"name": "m"}), _result()]))
    assert ep.agent is None and ep.steps[0].action.tool_name == "read_file"


def test_thinking_and_reasoning_blocks_are_the_steps_reasoning(tmp_path):
    turn = {"role": "assistant", "ts": T0, "content": [
        {"type": "thinking", "thinking": "First, look."}, {"type": "reasoning", "text": "Then read."},
        {"type": "thinking", "thinking": ""}, "not a block", {"type": "redacted_thinking", "data": "x"},
        {"type": "text", "text": "Reading a."},
        {"type": "tool_use", "id": "r", "name": "read_file", "input": {"path": "a"}},
        {"type": "tool_use", "id": "s", "name": "search_files", "input": {"regex": "x"}}]}
    ep = _episode(_task(tmp_path, [TASK, turn, _result("read_file"), _result("search_files", "none")]))
    assert ep.steps[0].reasoning == "First, look.\n\nThen read.\n\nReading a."
    assert ep.steps[1].reasoning is None and ep.steps[1].timestamp == _at(T0)
    assert [s.observation.text for s in ep.steps[1:]] + [ep.final_observation.text] == ["ok", "none"]


def test_a_turn_of_text_only_is_a_message_and_its_xml_like_words_stay_text(tmp_path):
    said = "Use <path>a.py</path> next time; <not_a_tool>x</not_a_tool>."
    history = [TASK, {"role": "assistant", "content": [{"type": "text", "text": said}], "ts": T0}]
    ep = _episode(_task(tmp_path, history))
    (step,) = ep.steps
    assert (step.action.kind, step.action.text, step.reasoning) == ("message", said, None)
    assert step.action.raw is None and step.timestamp == _at(T0) and not ep.terminated


def test_two_xml_calls_in_one_turn_take_their_results_in_order(tmp_path):
    turn = {"role": "assistant", "content": [{"type": "text", "text":
        "Both.\n<read_file>\n<path>a.py</path>\n</read_file>\nand\n<search_files>\n<path>.</path>\n<regex>\nx\n"
        "</regex>\n</search_files>\n<attempt_completion>\n</attempt_completion>"}]}
    history = [TASK, turn, {"role": "user", "content": [
        {"type": "text", "text": "[read_file for 'a.py'] Result:\nA"},
        {"type": "text", "text": "[search_files for 'x'] Result:\nB"}]}]
    ep = _episode(_task(tmp_path, history))
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == [
        ("read_file", {"path": "a.py"}), ("search_files", {"path": ".", "regex": "x"}), ("attempt_completion", {})]
    assert ep.steps[0].reasoning == "Both.\n\nand"
    assert [s.observation.text for s in ep.steps[1:]] == ["A", "B"]
    # a completion without a result is still a completion, with no answer; results sent after it reopened the task
    assert ep.steps[2].action.kind == "done" and ep.steps[2].action.text is None and not ep.terminated


def test_an_empty_model_turn_is_kept_raw_with_a_warning_naming_it(tmp_path):
    history = [TASK, {"role": "assistant", "content": []}, _call_turn(), _result()]
    ep, rejected = _split(read_records(cline, _task(tmp_path, history)))
    assert [(r.rule, r.location) for r in rejected] == [
        ("unknown_content", "1796628800000/api_conversation_history.json[1]")]
    assert ep.env["unmapped"][0]["where"] == "1796628800000/api_conversation_history.json[1]"
    assert [s.action.tool_name for s in ep.steps] == ["read_file"]


def test_entries_and_blocks_that_are_not_objects_are_passed_over(tmp_path):
    history = [TASK, "a stray string", None, {"role": "assistant", "content": [
        7, {"type": "tool_use", "id": "r", "name": "read_file", "input": {"path": "a"}}]},
               {"role": "user", "content": [None, {"type": "tool_result", "tool_use_id": "r", "content": "A"}]}]
    ep = _episode(_task(tmp_path, history))
    assert [s.action.tool_name for s in ep.steps] == ["read_file"] and ep.final_observation.text == "A"


# --- results and exit codes ----------------------------------------------------------------------------------


def _command_turn(call_id="c", name="execute_command", command="make") -> dict:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name,
                                              "input": {"command": command}}]}


def _after_command(tmp_path, *results, name="execute_command") -> list:
    """The observations after one command call per result (a user entry's blocks each)."""
    history = [TASK]
    for i, blocks in enumerate(results):
        history += [_command_turn(f"c{i}", name), {"role": "user", "content": blocks}]
    ep = _episode(_task(tmp_path, history))
    return [s.observation for s in ep.steps[1:]] + [ep.final_observation]


def test_each_result_form_of_a_command_gives_its_exit_code(tmp_path):
    text = lambda t: [{"type": "text", "text": f"[execute_command for 'make'] Result:\n{t}"}]  # noqa: E731
    seen = _after_command(
        tmp_path,
        text("Command executed.\nOutput:\nok"),                                          # Cline: success
        text("Command failed with exit code -1.\nOutput:\nkilled"),                      # Cline: failure
        text("Command executed in terminal within working directory '/w'. Exit code: 0\nOutput:\n"),  # Roo Code
        text("Command executed in terminal within working directory '/w'. Command execution was not successful, "
             "inspect the cause and adjust as needed.\nExit code: 3\nOutput:\n"),
        text("Command executed in terminal within working directory '/w'. Process terminated by signal SIGTERM"),
        text("Command is still running in the user's terminal."),
        [{"type": "tool_result", "tool_use_id": "c6", "content": "Command executed in terminal within working "
                                                                  "directory '/w'. Exit code: 4\nOutput:\nno"}],
        [{"type": "tool_result", "tool_use_id": "c7", "content": "Command executed.\nOutput:\nok", "is_error": True}])
    assert [(o.exit_code, o.is_error) for o in seen] == [
        (0, None), (-1, True), (0, None), (3, True), (None, None), (None, None), (4, True), (None, True)]
    assert all(o.kind == "terminal" for o in seen)
    assert seen[0].text == "Command executed.\nOutput:\nok" and seen[6].text.endswith("Exit code: 4\nOutput:\nno")


def test_only_a_commands_result_carries_an_exit_code(tmp_path):
    (seen,) = _after_command(tmp_path, [{"type": "text", "text": "[read_file for 'a'] Result:\nCommand failed with "
                                                                 "exit code 1.\nCommand executed."}], name="read_file")
    assert seen.exit_code is None and not seen.is_error and seen.kind != "terminal"
    (seen,) = _after_command(tmp_path / "b", [{"type": "tool_result", "tool_use_id": "c0", "content":
                                               "Command executed in terminal within working directory '/w'. "
                                               "Exit code: 2"}], name="read_file")
    assert seen.exit_code is None and not seen.is_error


def test_result_contents_are_read_as_the_model_was_sent_them(tmp_path):
    blocks = [
        [{"type": "tool_result", "tool_use_id": "c0", "content": [
            {"type": "text", "text": "line 1"}, {"type": "image", "source": {}}, {"type": "text", "text": "line 2"}]}],
        [{"type": "tool_result", "tool_use_id": "c1"}],
        [{"type": "tool_result", "tool_use_id": "c2", "content": {"query": "q", "success": False, "error": "no"}}],
        [{"type": "tool_result", "tool_use_id": "c3", "content": [{"query": "q", "success": True}, "x"]}]]
    seen = _after_command(tmp_path, *blocks, name="search_files")
    assert seen[0].text == "line 1\nline 2" and not seen[0].is_error
    assert seen[1].text in ("", None) and not seen[1].is_error
    assert json.loads(seen[2].text) == {"query": "q", "success": False, "error": "no"} and seen[2].is_error
    assert json.loads(seen[3].text) == [{"query": "q", "success": True}, "x"] and not seen[3].is_error


def test_a_cli3_command_result_names_its_exit_code_only_for_one_command(tmp_path):
    def result(i, items):
        return [{"type": "tool_result", "tool_use_id": f"c{i}", "name": "run_commands", "content": items}]
    seen = _after_command(
        tmp_path, result(0, [{"query": "a", "success": True}]),
        result(1, [{"query": "a", "success": False, "error": "Command exited with code 7"}]),
        result(2, [{"query": "a", "success": False, "error": "timed out"}]),
        result(3, [{"query": "a", "success": True}, {"query": "b", "success": True}]),
        result(4, ["a"]), result(5, "done"), name="run_commands")
    assert [(o.exit_code, o.is_error) for o in seen] == [(0, None), (7, True), (None, True), (None, None),
                                                         (None, None), (None, None)]


def test_the_user_text_beside_results_is_seen_after_them_and_a_result_before_any_call_is_kept(tmp_path):
    history = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "stray"},
                                            {"type": "text", "text": "<task>\nDo it\n</task>"}], "ts": T0},
               _call_turn(), {"role": "user", "content": [
                   {"type": "text", "text": "[read_file for 'a'] Result:\nA"},
                   {"type": "text", "text": "<feedback>\nlook again\n</feedback>"},
                   {"type": "text", "text": "<environment_details>\nnone\n</environment_details>"}]}]
    ep, rejected = _split(read_records(cline, _task(tmp_path, history)))
    assert [(r.rule, r.location) for r in rejected] == [
        ("unknown_content", "1796628800000/api_conversation_history.json[0]")]
    assert ep.env["unmapped"][0]["text"] == "stray" and ep.task == "Do it"
    assert ep.steps[0].observation.text == "stray\n\n<task>\nDo it\n</task>"
    assert ep.final_observation.text == "A\n\n<feedback>\nlook again\n</feedback>\n<environment_details>\nnone\n" \
                                        "</environment_details>"


# --- which files are claimed, and what is planned with them --------------------------------------------------

HISTORY_HEAD = b' \n[{"role":"user","content":"x"}]'
SESSION_HEAD = b'{"version":1,"sessionId":"s1","messages":[]}'


def _claimed(heads: dict[str, bytes], others: list[str]) -> list[str]:
    return cline.units(sorted([*heads, *others]), lambda p: heads.get(p, b""))


def test_a_task_folder_is_claimed_whole_with_every_file_cline_writes_there():
    heads = {"/in/tasks/1/api_conversation_history.json": HISTORY_HEAD}
    cline_files = ["/in/tasks/1/ui_messages.json", "/in/tasks/1/task_metadata.json", "/in/tasks/1/settings.json",
                   "/in/tasks/1/context_history.json", "/in/tasks/1/history_item.json",
                   "/in/tasks/1/focus_chain_taskid_1.md", "/in/tasks/1/checkpoints/a/HEAD",
                   "/in/tasks/10/notes.md", "/in/tasks/1-old/notes.md"]  # neighbours, not inside it
    assert _claimed(heads, cline_files) == ["/in/tasks/1"]
    for other in ("/in/tasks/1/notes.md", "/in/tasks/1/Checkpoints/x", "/in/tasks/1/sub/checkpoints/x"):
        assert _claimed(heads, [*cline_files, other]) == ["/in/tasks/1/api_conversation_history.json"], other


@pytest.mark.parametrize("head", [b'{"role": "user"}', b'[1, 2, 3]', b"", b'"[{\\"role\\""'])
def test_a_history_named_file_that_is_no_list_of_messages_is_not_claimed(head):
    assert _claimed({"/in/t/api_conversation_history.json": head}, []) == []


def test_a_session_folder_is_claimed_whole_only_while_it_holds_that_sessions_files():
    heads = {"/s/abc/abc.messages.json": SESSION_HEAD}
    assert _claimed(heads, ["/s/abc/abc.json"]) == ["/s/abc"]
    assert _claimed(heads, ["/s/abc/abc.json", "/s/abc/abcd.json"]) == ["/s/abc/abc.messages.json"]
    assert _claimed(heads, ["/s/abc/abc.json", "/s/abc/notes.txt"]) == ["/s/abc/abc.messages.json"]
    assert _claimed(heads, ["/s/abcd/x.json", "/s/abc.json"]) == ["/s/abc"]
    assert _claimed({"/s/abc/abc.messages.json": b'{"messages": [], "id": "sessionId"}'}, []) == []
    assert _claimed({"/s/abc/abc.messages.json": b'[{"sessionId": "s1"}]'}, []) == []
    assert _claimed({"/s/abc/abc.json": SESSION_HEAD}, []) == []


def test_files_under_a_folder_are_its_own_and_no_neighbours():
    ordered = sorted(["/a/1/x", "/a/1/y/z", "/a/1.json", "/a/10/x", "/a/1-b/x", "/a/0/x", "/a/2/x"])
    assert cline.files_under(ordered, "/a/1") == ["x", "y/z"]
    assert cline.files_under(ordered, "/a/3") == []


def test_a_history_claimed_alone_is_planned_with_the_files_its_reader_reads_and_names_the_others():
    files = sorted(["/p/api_conversation_history.json", "/p/ui_messages.json", "/p/task_metadata.json",
                    "/p/history_item.json", "/p/settings.json", "/p/focus_chain_taskid_9.md", "/p/README.md",
                    "/p/src/a.py", "/p/checkpoints/x", "/q/ui_messages.json"])
    planned = cline.members(["/p/api_conversation_history.json"], files, None)
    why = ("a file Cline writes in a task folder; the reader reads the conversation, ui_messages.json, "
           "task_metadata.json and history_item.json")
    assert planned == {"/p/api_conversation_history.json": [
        ("/p/checkpoints/x", why), ("/p/focus_chain_taskid_9.md", why), "/p/history_item.json",
        ("/p/settings.json", why), "/p/task_metadata.json", "/p/ui_messages.json"]}


def test_a_session_file_claimed_alone_is_planned_with_its_record_and_a_folder_with_nothing():
    planned = cline.members(["/s/abc.messages.json", "/t/1"], ["/s/abc.json", "/s/abc.messages.json"], None)
    assert planned == {"/s/abc.messages.json": ["/s/abc.json"]}



def test_a_session_file_claimed_alone_is_planned_with_its_compaction_beside_it():
    files = sorted(["/s/abc.json", "/s/abc.messages.json", "/s/abc.compaction.json", "/s/t.messages.json"])
    assert cline.members(["/s/abc.messages.json", "/s/t.messages.json"], files, None) == {
        "/s/abc.messages.json": ["/s/abc.json", "/s/abc.compaction.json"], "/s/t.messages.json": ["/s/t.json"]}


# --- sessions of the Cline desktop app (the same SDK store) ---------------------------------------------------


def _desktop_record(**fields) -> dict:
    return {"session_id": "s1", "source": "desktop", "status": "failed", "exit_code": 1, "cwd": "C:\\work\\app",
            "prompt": '<user_input mode="act">Count them</user_input>', "metadata": {}, **fields}


def test_a_sessions_task_is_its_first_input_else_its_records_prompt_unwrapped_and_windows_folders_run_on_windows(
        tmp_path):
    doc = {"version": 1, "agent": "lead", "sessionId": "s1", "origin": {"source": "desktop", "version": "0.0.34"},
           "messages": _turns()}
    ep, rejected = _split(_session(tmp_path, doc, _desktop_record(prompt="Count th")))  # a title's length
    assert rejected == [] and ep.task == "Count them" and ep.platform == "windows" and not ep.terminated
    assert ep.steps[0].observation.text == '<user_input mode="act">Count them</user_input>'
    assert ep.env["cline"]["thread"] == {"agent": "lead", "origin": {"source": "desktop", "version": "0.0.34"}}
    plain = {**doc, "messages": [{"role": "user", "content": [{"type": "text", "text": "Count them"}]},
                                 *_turns()[1:]]}
    ep, _ = _split(_session(tmp_path, plain, _desktop_record(), name="s2"))
    assert ep.task == "Count them" and ep.steps[0].observation.text == "Count them"
    ep, _ = _split(_session(tmp_path, plain, _desktop_record(cwd="/home/u/app", prompt="Plain"), name="s3"))
    assert ep.task == "Plain" and ep.platform == "linux"


def test_a_file_the_user_attached_is_seen_as_the_sdk_sends_it(tmp_path):
    first = {"role": "user", "content": [
        {"type": "text", "text": '<user_input mode="plan">Read the spec</user_input>'},
        {"type": "file", "path": "/Users/u/Desktop/spec.md", "content": "# Spec\nStage 1"}]}
    ep, rejected = _split(_session(tmp_path, {"sessionId": "s1", "messages": [first, *_turns()[1:]]}))
    assert rejected == [] and ep.task == "Read the spec"
    assert ep.steps[0].observation.text == ('<user_input mode="plan">Read the spec</user_input>\n'
                                            '<file_content path="/Users/u/Desktop/spec.md">\n# Spec\nStage 1\n'
                                            '</file_content>')


def test_a_teammates_messages_beside_the_leads_are_an_episode_naming_the_lead(tmp_path):
    folder = tmp_path / "s1"
    folder.mkdir()
    (folder / "s1.messages.json").write_text(json.dumps({"agent": "lead", "sessionId": "s1", "messages": _turns()}))
    (folder / "s1.json").write_text(json.dumps(_desktop_record()))
    origin = {"mode": "team", "parentThreadId": "s1", "subagent": "sfx"}
    (folder / "sfx__a.messages.json").write_text(json.dumps(
        {"agent": "teammate", "sessionId": "s1__teamtask__sfx__a", "taskType": "team", "origin": origin,
         "messages": _turns()}))
    heads = {str(p): p.read_bytes()[:200] for p in folder.iterdir()}
    units = cline.units(sorted(heads), heads.get)
    assert units == [str(folder / "s1.messages.json"), str(folder / "sfx__a.messages.json")]
    lead, mate = (_episode(Path(u)) for u in units)
    assert lead.env["cline"]["thread"] == {"agent": "lead"} and lead.task == "Count them"
    assert mate.key == "s1__teamtask__sfx__a" and mate.task == "Count them" and mate.env["cline"]["session"] == {}
    assert mate.env["cline"]["thread"] == {"agent": "teammate", "taskType": "team", "origin": origin}


def test_a_compacted_sessions_summary_is_kept_counted_and_a_broken_one_is_a_row_of_its_own(tmp_path):
    doc = {"sessionId": "s1", "messages": _turns()}
    compaction = {"version": 1, "conversation_id": "s1", "source_message_count": 4,
                  "messages": [{"role": "user", "content": [{"type": "text", "text": "Context summary: ..."}]}]}
    folder = tmp_path / "s1"
    folder.mkdir()
    (folder / "s1.messages.json").write_text(json.dumps(doc))
    (folder / "s1.compaction.json").write_text(json.dumps(compaction))
    ep = _episode(folder)
    assert len(ep.steps) == 2 and ep.env["cline"]["compaction"] == {
        "file": "s1.compaction.json", "version": 1, "conversation_id": "s1", "source_message_count": 4, "messages": 1}
    (folder / "s1.compaction.json").write_text('{"version": 1, "messages": [')
    ep, rejected = _split(read_records(cline, folder))
    assert [r.location for r in rejected] == ["s1.compaction.json"] and "compaction" not in ep.env["cline"]
    assert len(ep.steps) == 2


# --- Roo Code's marks ----------------------------------------------------------------------------------------


def test_roo_codes_truncation_and_encrypted_reasoning_are_counted_and_its_usage_records_name_it(tmp_path):
    history = [{**TASK, "truncationParent": "t1"}, {**_call_turn(), "truncationParent": "t1"},
               {**_result(), "truncationParent": "t1"},
               {"type": "reasoning", "encrypted_content": "gAAA"}, {"type": "reasoning", "encrypted_content": "gB"},
               {"role": "assistant", "type": "reasoning", "content": [{"type": "text", "text": "said"}]}]
    ui = [{"say": "api_req_started", "text": json.dumps({"apiProtocol": "anthropic", "tokensIn": 3})}]
    ep = _episode(_task(tmp_path, history, ui=ui))
    assert "cline" not in ep.env and ep.env["roo_code"]["usage"] == {"tokensIn": 3}
    assert ep.env["roo_code"]["context_management"] == {"truncated": 3, "encrypted_reasoning": 2}
    assert "modes" not in ep.env["roo_code"] and "history_item" not in ep.env["roo_code"]
    assert [s.action.kind for s in ep.steps] == ["tool_call", "message"] and ep.steps[1].action.text == "said"


def test_a_protocol_named_anywhere_but_a_usage_record_does_not_make_a_task_roo_codes(tmp_path):
    ui = [{"say": "text", "text": '{"apiProtocol": "openai"}'}, {"say": "api_req_started", "text": "{}"},
          {"ask": "api_req_started", "text": '{"apiProtocol": "openai"}'}]
    ep = _episode(_task(tmp_path, [TASK, _call_turn(), _result()], ui=ui))
    assert "roo_code" not in ep.env and "cline" in ep.env


def test_a_roo_history_item_is_kept_whole_and_a_field_its_schema_does_not_name_is_warned_of(tmp_path):
    schema = ("id", "number", "ts", "task", "mode", "status", "workspace", "size", "rootTaskId", "parentTaskId",
              "childIds", "delegatedToId", "awaitingChildId", "completedByChildId", "completionResultSummary",
              "apiConfigName", "tokensIn", "tokensOut", "cacheWrites", "cacheReads", "totalCost")
    item = {**{k: 1 for k in schema}, "task": "Do it", "isFavorited": True, "highlight": "x"}
    ep, rejected = _split(read_records(cline, _task(tmp_path, [TASK, _call_turn(), _result()], item=item)))
    assert ep.env["roo_code"]["history_item"] == item
    (warning,) = rejected
    assert (warning.rule, warning.location) == ("unknown_content", "1796628800000/history_item.json")
    assert warning.reason == ("1796628800000/history_item.json: field(s) highlight, isFavorited are none Roo Code is "
                              "known to write; kept raw in env.roo_code.history_item")


def test_a_roo_history_item_names_the_task_when_the_history_does_not(tmp_path):
    untagged = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ep = _episode(_task(tmp_path, [untagged, _call_turn(), _result()], item={"task": "From the item", "size": 9}))
    assert ep.task == "From the item" and ep.env["roo_code"] == {"history_item": {"task": "From the item", "size": 9}}


# --- what the first runs of the mutation tool found unasserted -----------------------------------------------


def test_an_empty_session_is_an_empty_episode_row_and_a_turn_without_model_info_names_none(tmp_path):
    (row,) = _session(tmp_path, {"sessionId": "e", "messages": []}, name="e")
    assert row.rule == "empty_episode" and row.location == "e.messages.json"
    messages = [{"role": "user", "content": [{"type": "text", "text": "plain words"}]},
                {"role": "assistant", "content": []},
                {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}]
    ep, rejected = _split(_session(tmp_path, {"sessionId": "f", "messages": messages}, name="f"))
    # the warning names the session's own file, not a task folder's
    assert [(r.rule, r.location) for r in rejected] == [("unknown_content", "f.messages.json[1]")]
    assert ep.task == "plain words" and ep.agent is None and ep.terminated
    assert ep.steps[0].action.text == "Hello."


def test_a_task_without_any_action_is_an_empty_episode_row_naming_the_task(tmp_path):
    (row,) = read_records(cline, _task(tmp_path, [TASK]))
    assert row.rule == "empty_episode" and row.location == "1796628800000"


def test_one_of_two_sessions_laid_in_one_folder_is_read_alone(tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name, task in (("a", "Task A"), ("b", "Task B")):
        turns = [{"role": "user", "content": [{"type": "text", "text": f"<user_input>{task}</user_input>"}]},
                 {"role": "assistant", "content": [{"type": "text", "text": f"Did {task}."}]}]
        (folder / f"{name}.messages.json").write_text(json.dumps({"messages": turns}))
        (folder / f"{name}.json").write_text(json.dumps({"status": "completed", "model": f"model-{name}"}))
    ep = _episode(folder / "b.messages.json")
    assert ep.key == "b.messages.json" and ep.task == "Task B" and ep.steps[0].action.text == "Did Task B."
    assert ep.env["cline"]["session"] == {"status": "completed", "model": "model-b"}  # its own record


def test_the_episode_key_is_the_task_folders_name(tmp_path):
    folder = tmp_path / "roo-task-X"
    folder.mkdir()
    (folder / "api_conversation_history.json").write_text(json.dumps([TASK, _call_turn(), _result()]))
    assert _episode(folder).key == "roo-task-X"


def test_side_files_over_the_record_budget_are_refused_and_the_conversation_still_read(tmp_path):
    folder = _task(tmp_path, [TASK, _call_turn(), _result()],
                   ui=[{"say": "api_req_started", "text": json.dumps({"tokensIn": 1, "pad": "x" * 3000})}])
    source = Source(fsspec.filesystem("file"), str(folder), "t", lambda *a: "sha256:0",
                    budgets=Budgets(record_bytes=2000))
    ep, rejected = _split(list(cline.read(source)))
    assert [(r.rule, r.location) for r in rejected] == [("budget_exceeded", "1796628800000/ui_messages.json")]
    assert ep.env == {"cline": {}} and [s.action.tool_name for s in ep.steps] == ["read_file"]


def test_parallel_calls_take_their_results_by_id_in_any_order(tmp_path):
    turn = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "r1", "name": "read_file", "input": {"path": "a"}},
        {"type": "tool_use", "id": "r2", "name": "execute_command", "input": {"command": "false"}}]}
    answers = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "r2", "content": "Command failed with exit code 1."},
        {"type": "tool_result", "tool_use_id": "r1", "content": "A"}]}
    ep = _episode(_task(tmp_path, [TASK, turn, answers]))
    assert ep.steps[1].observation.text == "A" and ep.final_observation.text == "Command failed with exit code 1."


def test_a_results_own_text_that_looks_like_a_result_header_is_kept_whole(tmp_path):
    log = "[build for 'app'] Result:\nok"
    (seen,) = _after_command(tmp_path, [{"type": "tool_result", "tool_use_id": "c0", "content": log}],
                             name="read_file")
    assert seen.text == log


def test_a_search_tools_result_keeps_its_results(tmp_path):
    found = "[1] https://example.org/a\nTitle: A page\nSnippet: about a"
    (seen,) = _after_command(tmp_path, [{"type": "tool_result", "tool_use_id": "c0", "content": found}],
                             name="web_search")
    assert json.loads(seen.ui_tree)["results"][0]["url"] == "https://example.org/a"


def test_xml_parameters_keep_their_indentation_and_two_text_blocks_join_by_lines(tmp_path):
    turn = {"role": "assistant", "content": [
        {"type": "text", "text": "Writing."},
        {"type": "text", "text": "<write_to_file>\n<path>Xcode/App.swift</path>\n<content>\n    let x = 1\n"
                                 "</content>\n</write_to_file>"}]}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "Both\n"}, {"type": "text", "text": "  done "}]}
    ep = _episode(_task(tmp_path, [TASK, turn, _result("write_to_file"), answer]))
    assert json.loads(ep.steps[0].action.arguments) == {"path": "Xcode/App.swift", "content": "    let x = 1"}
    assert ep.steps[0].reasoning == "Writing."
    assert ep.steps[1].action.text == "Both\n\n  done "  # an answer's text as the model wrote it


def test_calls_with_odd_arguments_are_read_and_only_shell_tools_are_commands(tmp_path):
    turn = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "run_slash_command", "input": {"command": "init"}},
        {"type": "tool_use", "id": "b", "name": "execute_command", "input": "ls -la"},
        {"type": "tool_use", "id": "c", "name": "run_commands", "input": {"commands": ["ls", 3]}},
        {"type": "tool_use", "id": "d", "name": "attempt_completion", "input": "Finished."}]}
    ep = _episode(_task(tmp_path, [TASK, turn]))
    assert [(s.action.kind, s.action.code, s.action.text) for s in ep.steps] == [
        ("tool_call", None, None), ("tool_call", None, None), ("tool_call", None, None), ("done", None, None)]
    assert [s.action.tool_name for s in ep.steps] == ["run_slash_command", "execute_command", "run_commands",
                                                      "attempt_completion"]
    assert json.loads(ep.steps[3].action.raw)["input"] == "Finished." and ep.terminated


def test_an_xml_completion_keeps_the_text_the_model_wrote_as_its_raw(tmp_path):
    call = "<attempt_completion>\n<result>\nDone.\n</result>\n</attempt_completion>"
    ep = _episode(_task(tmp_path, [TASK, {"role": "assistant", "content": [{"type": "text", "text": call}]}]))
    assert ep.steps[0].action.raw == call and ep.steps[0].action.text == "Done."


def test_turns_without_a_model_stay_unnamed_beside_turns_with_one(tmp_path):
    history = [TASK, _call_turn(modelId="a"), _result(), _call_turn(), _result(), _call_turn(modelId="b"), _result()]
    ep = _episode(_task(tmp_path, history))
    assert ep.env["model_per_step"] == ["a", None, "b"]
    usage = [{"ts": T0 + 5, "model_id": "then"}, {"ts": T0 + 6, "model_id": "later"}]
    ep = _episode(_task(tmp_path / "b", [TASK, _call_turn(ts=T0 + 5), _result()], metadata={"model_usage": usage}))
    assert ep.agent == "then"  # an entry made at the turn's own time holds for it


def test_a_ui_record_that_is_not_an_object_does_not_hide_the_ones_after_it(tmp_path):
    ui = ["not a record", {"say": "api_req_started", "text": json.dumps({"tokensIn": 4})},
          {"say": "completion_result", "text": "Done."}]
    ep = _episode(_task(tmp_path, [TASK, _call_turn(), _result()], ui=ui))
    assert ep.env["cline"]["usage"] == {"tokensIn": 4} and ep.env["cline"]["completion"] == "Done."


def test_an_entry_without_a_role_is_still_seen(tmp_path):
    ep = _episode(_task(tmp_path, [TASK, _call_turn(), {"content": "[read_file for 'a'] Result:\nA"}]))
    assert ep.final_observation.text == "A"
