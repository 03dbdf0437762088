"""The OpenHands V1 reader called directly (`openhands_v1.read`) on hand-made conversation folders in the shapes
the SDK persists (`base_state.json`, `events/event-NNNNN-<id>.json`, as the real conversation beside
test_openhands_v1.py): each step's action and raw call, observations with their exit codes and errors, the
outcome and terminal flag from the finish and the execution status, and each row for a bad event."""

import json

import pytest
from fsspec.implementations.local import LocalFileSystem

from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.swe import openhands_v1

UUID = "0a1b2c3d-0000-4000-8000-0000000000"


def _read(folder) -> list:
    return list(openhands_v1.read(Source(fs=LocalFileSystem(), path=str(folder), uri=f"in/{folder.name}",
                                         put_blob=lambda *a: "sha256:0")))


def _conv(tmp_path, events, state=None, name="conv") -> list:
    folder = tmp_path / name
    (folder / "events").mkdir(parents=True)
    if state is not None:
        (folder / "base_state.json").write_text(state if isinstance(state, str) else json.dumps(state))
    for i, event in enumerate(events):
        (folder / "events" / f"event-{i:05d}-{UUID}{i:02d}.json").write_text(
            event if isinstance(event, str) else json.dumps(event))
    return _read(folder)


def _split(records):
    eps = [r for r in records if isinstance(r, Episode)]
    return (eps[0] if eps else None), [r for r in records if isinstance(r, Rejected)]


STATE = {"id": "c-1", "execution_status": "finished", "stats": {"cost": 1},
         "agent": {"llm": {"model": "openai/gpt-x"}}}


def _system(**more):
    return {"kind": "SystemPromptEvent", "source": "agent", "timestamp": "2026-02-05T11:00:00.1",
            "system_prompt": {"type": "text", "text": "You are OpenHands"},
            "tools": [{"name": "terminal", "description": "run"}, {"title": "finish"}, {"description": "nameless"},
                      "junk"], **more}


def _user(text, **more):
    return {"kind": "MessageEvent", "source": "user", "llm_message": {"role": "user", "content": [
        {"type": "text", "text": text}]}, **more}


def _action(call_id, kind="TerminalAction", tool="terminal", response="r1", **action):
    return {"kind": "ActionEvent", "source": "agent", "tool_name": tool, "tool_call_id": call_id,
            "tool_call": {"id": call_id, "name": tool, "arguments": json.dumps(action)},
            "action": {"kind": kind, **action}, "llm_response_id": response, "thought": [], "id": f"e-{call_id}"}


def _obs(call_id, text, tool="terminal", **obs):
    return {"kind": "ObservationEvent", "source": "environment", "tool_name": tool, "tool_call_id": call_id,
            "observation": {"content": [{"type": "text", "text": text}], **obs}}


def _reply(text, **llm):
    return {"kind": "MessageEvent", "source": "agent", "llm_message": {"role": "assistant", "content": [
        {"type": "text", "text": text}], **llm}}


def test_a_finished_run_its_actions_raw_calls_observations_and_outcome(tmp_path):
    first = {**_action("c1", command="ls"), "thought": [{"type": "text", "text": "look"}, "x"],
             "reasoning_content": "deep", "summary": "s", "security_risk": "LOW", "timestamp": "2026-02-05T11:00:01"}
    second = _action("c2", "FileEditorAction", "file_editor", command="view", path="/a.py")
    events = [_system(dynamic_context={"type": "text", "text": "ctx"}), _user("do it"), first, second,
              _obs("c2", "file text", "file_editor"),
              _obs("c1", "out", exit_code=3, is_error=True),
              _action("c3", "FinishAction", "finish", response="r2", message="all done"),
              {**_obs("c3", "done", "finish"), "timestamp": "2026-02-05T11:00:09"}]
    ep, rows = _split(_conv(tmp_path, events, STATE))
    assert rows == []
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [
        ("command", "terminal"), ("tool_call", "file_editor"), ("done", "finish")]
    assert ep.steps[0].action.code == "ls" and ep.steps[2].action.text == "all done"
    assert json.loads(ep.steps[0].action.raw) == {k: first[k] for k in (
        "id", "tool_name", "tool_call_id", "tool_call", "action", "summary", "security_risk", "llm_response_id")}
    assert json.loads(ep.steps[1].action.arguments) == {"command": "view", "path": "/a.py"}
    assert json.loads(ep.steps[1].action.element) == {"path": "/a.py"}
    assert ep.steps[0].reasoning == "deep\n\nlook" and ep.steps[1].reasoning is None
    assert [s.timestamp for s in ep.steps] == [None, None, None]  # local times of no zone
    assert ep.steps[0].observation.text == "do it" and ep.task == "do it"
    assert (ep.steps[1].observation.text, ep.steps[1].observation.kind, ep.steps[1].observation.exit_code,
            ep.steps[1].observation.is_error) == ("out", "terminal", 3, True)
    assert (ep.steps[2].observation.text, ep.steps[2].observation.is_error) == ("file text", None)
    assert ep.final_observation.text == "done"
    assert (ep.outcome, ep.reward, ep.terminated, ep.agent) == ("success", None, True, "openai/gpt-x")
    assert ep.env["system_prompt"] == "You are OpenHands\n\nctx"
    assert ep.env["tools"] == [{"name": "terminal", "description": "run"}, {"name": "finish", "description": ""}]
    assert (ep.env["conversation_id"], ep.env["execution_status"], ep.env["stats"]) == ("c-1", "finished",
                                                                                         {"cost": 1})
    assert ep.env["local_time_first"] == "2026-02-05T11:00:00.1" and ep.env["local_time_last"] == "2026-02-05T11:00:09"


@pytest.mark.parametrize("status, finish, outcome, terminated", [
    ("finished", True, "success", True), ("error", True, "failure", True), ("stuck", False, "failure", False),
    ("paused", True, "unknown", True), ("finished", False, "unknown", False), (None, True, "unknown", True),
])
def test_outcome_from_the_finish_and_the_execution_status(tmp_path, status, finish, outcome, terminated):
    events = [_user("go"), _action("c1", command="ls"), _obs("c1", "x")]
    if finish:
        events += [_action("c2", "FinishAction", "finish", response="r2")]
    ep, _ = _split(_conv(tmp_path, events, {**STATE, "execution_status": status}))
    assert (ep.outcome, ep.reward, ep.terminated) == (outcome, None, terminated)
    if finish:
        assert (ep.steps[-1].action.kind, ep.steps[-1].action.text) == ("done", None)  # no message
    assert ep.env.get("execution_status") == status


@pytest.mark.parametrize("last, terminated", [
    (_reply("bye"), True), (_user("more?"), False), (_obs("c1", "late"), False),
    ({"kind": "ConversationErrorEvent", "code": "E", "detail": "d"}, True)])
def test_a_finished_run_ending_on_the_models_reply_is_terminal(tmp_path, last, terminated):
    events = [_user("go"), _action("c1", command="ls"), _obs("c1", "x"), _reply("answer"), last]
    ep, _ = _split(_conv(tmp_path, events, STATE))
    assert ep.terminated is terminated and ep.outcome == "unknown"


def test_responses_split_turns_and_calls_without_a_response_id_stand_alone(tmp_path):
    events = [_user("go"), _action("a", response="r1", command="1"), _action("b", response="r1", command="2"),
              _action("c", response="r2", command="3"), _action("d", response=None, command="4"),
              _action("e", response=None, command="5"), _obs("a", "A"), _obs("b", "B")]
    events[3]["thought"] = "t3"
    events[4]["reasoning_content"] = ""
    ep, _ = _split(_conv(tmp_path, events, STATE))
    assert [s.action.code for s in ep.steps] == ["1", "2", "3", "4", "5"]
    assert [s.reasoning for s in ep.steps] == [None, None, "t3", None, None]
    assert [s.observation.text for s in ep.steps[1:3]] == ["A", "B"] and ep.final_observation is None
    assert not ep.terminated


def test_rejections_errors_and_results_of_every_kind(tmp_path):
    events = [_user("go"), _action("a", command="rm x"),
              {"kind": "UserRejectObservation", "tool_call_id": "a", "tool_name": "terminal",
               "rejection_reason": "no"},
              _action("b", response="r2", command="y"),
              {"kind": "AgentErrorEvent", "tool_call_id": "b", "tool_name": "terminal", "error": "bad args"},
              _action("c", response="r3", command="z"),
              {"kind": "AgentErrorEvent", "tool_call_id": "c"},
              _action("d", response="r4", command="w"),
              {**_obs("d", "meta"), "observation": {"content": "plain", "metadata": {"exit_code": 7}}},
              _action("e", response="r5", command="v"),
              {**_obs("e", ""), "observation": {"content": [{"type": "text", "text": "one part"}, {"text": 1}],
                                                "exit_code": 0, "metadata": {"exit_code": 9}}},
              _action("f", response="r6", command="u"),
              {**_obs("f", ""), "observation": {"content": None}}]
    ep, rows = _split(_conv(tmp_path, events, STATE))
    assert rows == []
    obs = [(s.observation.text, s.observation.is_error, s.observation.exit_code) for s in ep.steps[1:]]
    obs.append((ep.final_observation.text, ep.final_observation.is_error, ep.final_observation.exit_code))
    assert obs == [("no", True, None), ("bad args", True, None), (None, True, None), ("plain", None, 7),
                   ("one part", None, 0), ("", None, None)]


def test_messages_extended_content_reasoning_and_roles(tmp_path):
    events = [_user("go", extended_content=[{"type": "text", "text": "extra"}]),
              {"kind": "MessageEvent", "source": "user", "extended_content": [{"type": "text", "text": "only ext"}]},
              _reply("thinking aloud", reasoning_content="why"),
              {"kind": "MessageEvent", "source": "agent", "llm_message": {"content": "no role"}},
              {"kind": "MessageEvent", "source": "environment", "llm_message": {"role": "critic", "content": "c"}},
              {"kind": "MessageEvent", "source": "agent", "llm_message": {"role": "system", "content": "sys"}}]
    ep, rows = _split(_conv(tmp_path, events, STATE))
    assert ep.task == "go\n\nextra"
    assert ep.steps[0].observation.text == "go\n\nextra\n\nonly ext\n\nc"  # the unknown role's text too
    assert [(s.action.kind, s.action.text, s.reasoning) for s in ep.steps] == [
        ("message", "thinking aloud", "why"), ("message", "no role", None)]
    assert ep.agent == "openai/gpt-x" and "models" not in ep.env
    assert [r.rule for r in rows] == ["unknown_content"]
    assert ep.env["system_prompt"] == "sys"


def test_errors_bookkeeping_and_unknown_events(tmp_path):
    error = {"kind": "ConversationErrorEvent", "parent_id": "p", "code": "LLMError", "detail": "rate limit"}
    events = [_user("go"), {"kind": "TokenEvent"}, {"kind": "TokenEvent"}, {"kind": "PauseEvent"},
              {"kind": "FutureEvent", "x": 1}, _reply("hi"), error]
    ep, rows = _split(_conv(tmp_path, events, STATE))
    assert ep.env["errors"] == [{"code": "LLMError", "detail": "rate limit"}]
    assert ep.env["bookkeeping"] == {"TokenEvent": 2, "PauseEvent": 1}
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", "events/event-00004-" + UUID + "04.json")]
    assert ep.env["unmapped"][0]["raw"] == {"kind": "FutureEvent", "x": 1}


@pytest.mark.parametrize("event, reason", [
    ({"kind": "ActionEvent", "tool_name": 5}, "ActionEvent field tool_name: int, expected str"),
    ({"kind": "ActionEvent", "thought": True}, "ActionEvent field thought: bool, expected list/str"),
    ({"kind": "ActionEvent", "action": {"kind": 1}}, "ActionEvent field action.kind: int, expected str"),
    ({"kind": "ActionEvent", "tool_call": {"arguments": 3}}, "ActionEvent field tool_call.arguments: int, "
                                                             "expected str/dict"),
    ({"kind": "ObservationEvent", "observation": {"exit_code": True}},
     "ObservationEvent field observation.exit_code: bool, expected int"),
    ({"kind": "MessageEvent", "llm_message": {"content": 1}}, "MessageEvent field llm_message.content: int, "
                                                              "expected list/str"),
])
def test_an_event_with_a_field_of_the_wrong_type_is_a_row_naming_it(tmp_path, event, reason):
    events = [_user("go"), event, _reply("ok")]
    ep, rows = _split(_conv(tmp_path, events, STATE))
    where = f"events/event-00001-{UUID}01.json"
    assert [(r.rule, r.location, r.reason) for r in rows] == [
        ("bad_record", where, f"{where}: {reason}; the event is left out")]
    assert json.loads(rows[0].snippet) == event
    assert [s.action.text for s in ep.steps] == ["ok"]


def test_broken_event_files_and_a_broken_state(tmp_path):
    events = [_user("go"), "{nope", "[1]", {"kind": 5}, _reply("ok")]
    ep, rows = _split(_conv(tmp_path, events, "{bad"))
    assert [(r.rule, r.location) for r in rows] == [
        ("parse_error", "base_state.json"), ("parse_error", f"events/event-00001-{UUID}01.json"),
        ("bad_record", f"events/event-00002-{UUID}02.json"), ("bad_record", f"events/event-00003-{UUID}03.json")]
    assert rows[2].reason == f"events/event-00002-{UUID}02.json: expected an event object with a `kind`; left out"
    assert ep.env["conversation_id"] == "conv" and ep.agent is None and "execution_status" not in ep.env
    ep, _ = _split(_conv(tmp_path, [_user("go"), _reply("ok")], "[1]", name="c2"))
    assert ep.env["conversation_id"] == "c2" and "local_time_first" not in ep.env


def test_a_model_that_is_no_string_or_an_agent_without_llm(tmp_path):
    for state in ({"agent": {"llm": {"model": 5}}}, {"agent": "x"}, {"agent": {}}):
        ep, _ = _split(_conv(tmp_path, [_user("go"), _reply("ok")], state, name=str(len(str(state)))))
        assert ep.agent is None


def test_events_are_read_by_their_index_not_their_name(tmp_path):
    folder = tmp_path / "conv"
    (folder / "events").mkdir(parents=True)
    for index, event in ((10, _reply("second")), (9, _user("first")), (100000, _reply("third"))):
        (folder / "events" / f"event-{index:05d}-{UUID}00.json").write_text(json.dumps(event))
    (folder / "events" / "event-1-abc.json").write_text(json.dumps(_reply("not an event file")))
    ep, _ = _split(_read(folder))
    assert [s.action.text for s in ep.steps] == ["second", "third"] and ep.task == "first"


def test_a_file_editor_call_without_a_path_names_no_element(tmp_path):
    events = [_user("go"), _action("a", "FileEditorAction", "str_replace_editor", command="view"),
              _action("b", "X", "str_replace_editor", response="r2", path=5),
              {**_action("c", "FileEditorAction", "other_tool", response="r3", path="/p")}]
    events[1]["tool_call"].pop("arguments")
    ep, _ = _split(_conv(tmp_path, events, STATE))
    assert [s.action.element for s in ep.steps] == [None, None, None]
    assert json.loads(ep.steps[0].action.arguments) == {"command": "view"}  # the action's own fields


def _where(i):
    return f"events/event-{i:05d}-{UUID}{i:02d}.json"


def test_calls_named_and_identified_by_the_event_or_its_tool_call(tmp_path):
    by_call = _action("c1", command="ls")
    del by_call["tool_name"], by_call["tool_call_id"]
    both = _action("e2", "X", "other", response="r2", x=1)
    both["tool_call"]["id"], both["tool_call"]["name"] = "k2", "named_in_call"
    bare = {"kind": "ActionEvent", "source": "agent", "llm_response_id": "r3"}  # no action, no tool call
    events = [_user("go"), by_call, both, bare, _obs("c1", "listed", tool=None), _obs("e2", "other out", tool=None),
              _reply("end")]
    ep, rows = _split(_conv(tmp_path, events, STATE))
    assert rows == []
    assert [(s.action.kind, s.action.tool_name, s.action.code) for s in ep.steps] == [
        ("command", "terminal", "ls"), ("tool_call", "other", None), ("tool_call", None, None), ("message", None, None)]
    assert [s.observation.text for s in ep.steps] == ["go", "listed", "other out", None]
    assert ep.steps[1].observation.kind == "terminal"


def test_one_response_is_one_turn_its_first_events_thought_the_reasoning(tmp_path):
    a, b = _action("a", response="r1", command="1"), _action("b", response="r1", command="2")
    a["thought"], b["thought"] = [{"type": "text", "text": "A"}, {"type": "text", "text": "A2"}], "B"
    d, e = _action("d", response=None, command="3"), _action("e", response=None, command="4")
    d["thought"], e["thought"] = "D", "E"
    ep, _ = _split(_conv(tmp_path, [_user("go"), a, b, d, e], STATE))
    assert [s.reasoning for s in ep.steps] == ["A\nA2", None, "D", "E"]


def test_finish_raw_error_results_paired_by_id_and_their_tool_names(tmp_path):
    a, b = _action("a", "X", "other", command="1"), _action("b", "X", "other", command="2")
    finish = _action("f", "FinishAction", "finish", response="r9", message="bye")
    events = [_user("go"), a, b,
              {"kind": "AgentErrorEvent", "tool_call_id": "b", "tool_name": "terminal", "error": "bad b"},
              {**_obs("a", "out a"), "tool_name": "terminal"}, finish]
    ep, _ = _split(_conv(tmp_path, events, STATE))
    assert [(s.observation.text, s.observation.kind) for s in ep.steps[1:]] == [("out a", "terminal"),
                                                                                ("bad b", "terminal")]
    assert json.loads(ep.steps[2].action.raw) == {k: finish[k] for k in (
        "id", "tool_name", "tool_call_id", "tool_call", "action", "llm_response_id")}


def test_results_and_messages_with_fields_left_out(tmp_path):
    events = [_user("go"), _action("a", command="1"),
              {"kind": "ObservationEvent", "tool_call_id": "a", "tool_name": "terminal"},
              _action("b", response="r2", command="2"),
              {**_obs("b", ""), "observation": {"content": [{"type": "text", "text": "x"},
                                                            {"type": "text", "text": "y"}],
                                                "metadata": {"exit_code": "7"}}},
              {"kind": "MessageEvent", "source": "agent", "llm_message": {"role": "assistant", "content": "r",
                                                                         "reasoning_content": 5}}]
    ep, rows = _split(_conv(tmp_path, events, STATE))
    assert rows == []
    assert [(s.observation.text, s.observation.exit_code) for s in ep.steps[1:]] == [("", None), ("x\ny", None)]
    assert ep.steps[2].reasoning is None


def test_kept_events_name_their_file(tmp_path):
    events = [{**_system(), "tools": None}, _obs("x", "early"), _user("go"),
              {"kind": "MessageEvent", "source": "environment", "llm_message": {"role": "critic", "content": "c"}},
              {"kind": "MessageEvent", "source": "agent", "llm_message": {"role": "assistant", "content": ""}},
              {"kind": "FutureEvent"}, _reply("ok")]
    ep, rows = _split(_conv(tmp_path, events, STATE))
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", _where(i)) for i in (1, 3, 4, 5)]
    assert "role 'critic' is none of" in rows[1].reason and "role 'event FutureEvent' is none of" in rows[3].reason
    assert ep.env["tools"] == []


def test_a_conversation_without_actions_is_one_row_naming_it(tmp_path):
    (row,) = _conv(tmp_path, [_system()], STATE, name="lonely")
    assert (row.rule, row.location) == ("empty_episode", "lonely") and row.reason.startswith("lonely: no actions")


def test_a_folder_given_with_a_trailing_slash_is_named_by_its_last_part(tmp_path):
    folder = tmp_path / "conv-X"
    (folder / "events").mkdir(parents=True)
    (folder / "events" / f"event-00000-{UUID}00.json").write_text(json.dumps(_user("go")))
    (folder / "events" / f"event-00001-{UUID}01.json").write_text(json.dumps(_reply("ok")))
    records = list(openhands_v1.read(Source(fs=LocalFileSystem(), path=str(folder) + "/", uri="in/conv-X",
                                            put_blob=lambda *a: "")))
    assert records[0].env["conversation_id"] == "conv-X"


def test_an_event_over_the_record_budget_or_long_and_bad_is_a_row(tmp_path):
    from ingest.source import Budgets

    folder = tmp_path / "conv"
    (folder / "events").mkdir(parents=True)
    for i, event in enumerate([_user("go"), {"kind": "ActionEvent", "tool_name": 5, "pad": "p" * 3000},
                               _reply("x" * 600)]):
        (folder / "events" / f"event-{i:05d}-{UUID}{i:02d}.json").write_text(json.dumps(event))
    rows = [r for r in _read(folder) if isinstance(r, Rejected)]
    assert [(r.rule, len(r.snippet)) for r in rows] == [("bad_record", 2000)]
    records = list(openhands_v1.read(Source(fs=LocalFileSystem(), path=str(folder), uri="in/conv",
                                            put_blob=lambda *a: "", budgets=Budgets(record_bytes=500))))
    assert [(r.rule, r.location) for r in records if isinstance(r, Rejected)][:2] == [
        ("budget_exceeded", _where(1)), ("budget_exceeded", _where(2))]


def test_str_replace_editor_calls_name_their_file(tmp_path):
    events = [_user("go"), _action("a", "FileEditorAction", "str_replace_editor", command="view", path="/b.py")]
    ep, _ = _split(_conv(tmp_path, events, STATE))
    assert json.loads(ep.steps[0].action.element) == {"path": "/b.py"}


def test_units_need_an_event_that_names_its_kind():
    heads = {"/c/1/events/event-00000-0a1b2c3d-1111.json": b'{"x": 1}',
             "/c/2/events/event-00000-0a1b2c3d-1111.json": b'{"x": 1}',
             "/c/2/events/event-00001-0a1b2c3d-2222.json": b'{"kind": "Y"}'}
    assert openhands_v1.units(sorted(heads), heads.get) == ["/c/2"]


def test_an_error_before_any_action_is_kept_naming_its_file(tmp_path):
    events = [_user("go"), {"kind": "AgentErrorEvent", "tool_call_id": "x", "error": "too early"}, _reply("ok")]
    ep, rows = _split(_conv(tmp_path, events, STATE))
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", _where(1))]
    assert ep.steps[0].observation.text == "go\n\ntoo early"
