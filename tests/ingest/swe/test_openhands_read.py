"""The OpenHands event-stream reader called directly (`openhands.read`): the three real sessions bundled
(samples/swe/openhands-events) as the pipeline tests ingest them, and hand-made events in their shape for the
action kinds, observation kinds and bad fields the sessions do not hold."""

import base64
import json

import pytest
from fsspec.implementations.local import LocalFileSystem

from ingest.record import Episode, Rejected
from ingest.source import Budgets, Source, SourceError
from ingest.swe import openhands
from tests.conftest import SAMPLES

EVENTS = SAMPLES / "swe" / "openhands-events"


def _blob(data: bytes, media: str, uri: str) -> str:
    return f"{uri}|{media}:{data.hex()}"  # the unit the blob came from, too


def _read(path, budgets: Budgets | None = None) -> list:
    return list(openhands.read(Source(fs=LocalFileSystem(), path=str(path), uri=f"in/{path.name}", put_blob=_blob,
                                      **({"budgets": budgets} if budgets else {}))))


def _events(tmp_path, events, name="events.json"):
    path = tmp_path / name
    path.write_text(json.dumps(events))
    return _read(path)


def _split(records):
    eps = [r for r in records if isinstance(r, Episode)]
    return (eps[0] if eps else None), [r for r in records if isinstance(r, Rejected)]


def test_the_real_sessions_steps_observations_and_outcomes():
    ep, rows = _split(_read(EVENTS / "wrong_initial_state.json"))
    assert rows == []
    assert ep.task == "Please rename game_2048.py to 2048.py" and ep.agent == "claude-3-5-sonnet-20241022"
    assert [s.action.kind for s in ep.steps] == ["tool_call", "command", "tool_call", "done"]
    first = ep.steps[0].action
    assert first.tool_name == "str_replace_editor"  # the model's own call, not OpenHands' internal args
    assert json.loads(first.arguments) == {"command": "view", "path": "/workspace"}
    assert json.loads(first.element) == {"path": "/workspace"}
    raw = json.loads(first.raw)
    assert raw["id"] == 3 and raw["tool_call"]["function_name"] == "str_replace_editor"
    assert (ep.steps[1].action.code, ep.steps[1].action.tool_name) == (
        "mv /workspace/game_2048.py /workspace/2048.py", "execute_bash")
    assert (ep.steps[0].observation.kind, ep.steps[0].observation.text) == ("text",
                                                                          "Please rename game_2048.py to 2048.py")
    assert ep.steps[1].observation.text.endswith("/workspace/\n/workspace/game_2048.py")
    assert (ep.steps[2].observation.kind, ep.steps[2].observation.exit_code) == ("terminal", 0)
    assert ep.steps[1].observation.is_error is None  # the file was read
    assert ep.steps[0].reasoning.startswith("I'll help you rename the file.")
    assert ep.terminated and all(s.timestamp is None for s in ep.steps)
    assert ep.env == {"local_time_first": "2025-01-27T23:16:50.239610", "local_time_last": ep.env["local_time_last"]}
    assert ep.env["local_time_last"] > ep.env["local_time_first"]

    ep, _ = _split(_read(EVENTS / "basic_interactions.json"))
    assert [s.action.kind for s in ep.steps] == ["message", "message", "done"]
    assert [s.observation.text for s in ep.steps] == ["what's 1+1?", "No, I mean by Goldbach's conjecture!",
                                                      "Finish please"]
    assert ep.steps[2].action.text == "All done! What's next on the agenda?" and ep.agent == "gpt-4o-2024-08-06"

    ep, _ = _split(_read(EVENTS / "basic_gui_mode.json"))
    assert [s.action.kind for s in ep.steps] == ["command", "tool_call", "tool_call", "command", "message"]
    server = ep.steps[4].observation  # still running when its output was taken: OpenHands wrote -1
    assert server.exit_code == -1 and server.text.startswith("Serving HTTP on 0.0.0.0 port 8000")
    assert ep.steps[1].observation.exit_code == 0 and not ep.terminated


def _user(text="go"):
    return {"id": 0, "timestamp": "2025-01-01T00:00:00", "source": "user", "action": "message",
            "args": {"content": text}}


META = {"tool_call_metadata": {"function_name": "fn", "tool_call_id": "t1"}}


@pytest.mark.parametrize("event, want", [
    ({"action": "run_ipython", "args": {"code": "print(1)", "thought": "t"}, **META},
     {"kind": "code", "code": "print(1)", "tool_name": "fn"}),
    ({"action": "run", "args": {"command": "ls"}}, {"kind": "command", "code": "ls", "tool_name": None}),
    ({"action": "message", "args": {"content": "hi"}}, {"kind": "message", "text": "hi"}),
    ({"action": "browse", "args": {"url": "https://x.org"}, **META},
     {"kind": "navigate", "text": "https://x.org", "tool_name": "fn"}),
    ({"action": "finish", "args": {"final_thought": "bye"}, "message": "m"}, {"kind": "done", "text": "bye"}),
    ({"action": "finish", "args": {}, "message": "said"}, {"kind": "done", "text": "said"}),
    ({"action": "finish", "args": {}, "message": ""}, {"kind": "done", "text": None}),
    ({"action": "edit", "args": {"path": "/a.py", "content": "x", "thought": "t"}},
     {"kind": "tool_call", "tool_name": "edit", "element": '{"path":"/a.py"}'}),
    ({"action": "delegate", "args": {"agent": "B", "thought": "t"}},
     {"kind": "tool_call", "tool_name": "delegate", "element": None}),
])
def test_each_action_kind_maps_to_its_action(event, want, tmp_path):
    full = {"id": 1, "source": "agent", **event}
    ep, rows = _split(_events(tmp_path, [_user(), full]))
    action = ep.steps[0].action
    assert rows == [] and {k: getattr(action, k) for k in want} == want
    # raw: the event as written, without the model's response; the call's name and id when recorded
    want_raw = {k: full[k] for k in ("id", "source", "action", "args", "message") if k in full}
    if "tool_call_metadata" in full:
        want_raw["tool_call"] = {"function_name": "fn", "tool_call_id": "t1"}
    assert json.loads(action.raw) == want_raw
    assert ep.steps[0].reasoning == event["args"].get("thought")
    if action.kind == "tool_call":
        assert "thought" not in json.loads(action.arguments)


def test_a_call_the_model_recorded_gives_its_own_arguments_and_tool(tmp_path):
    meta = {"function_name": "str_replace_editor", "tool_call_id": "call_9", "model_response": {
        "model": "m", "choices": [{"message": {"tool_calls": [
            {"id": "other", "function": {"arguments": '{"no": 1}'}},
            {"id": "call_9", "function": {"arguments": '{"command": "view"}'}}]}}]}}
    events = [_user(), {"id": 1, "source": "agent", "action": "read", "args": {"path": "/p", "thought": ""},
                        "tool_call_metadata": meta},
              {"id": 2, "source": "agent", "action": "read", "args": {"path": "/q"},
               "tool_call_metadata": {"function_name": "f", "tool_call_id": "x", "model_response": {"choices": 3}}}]
    ep, _ = _split(_events(tmp_path, events))
    assert json.loads(ep.steps[0].action.arguments) == {"command": "view"} and ep.steps[0].reasoning is None
    assert json.loads(ep.steps[0].action.raw)["tool_call"] == {"function_name": "str_replace_editor",
                                                               "tool_call_id": "call_9"}
    assert json.loads(ep.steps[1].action.arguments) == {"path": "/q"}  # the completion cannot be read: the args
    assert ep.agent == "m"


def test_observation_kinds(tmp_path):
    shot = base64.b64encode(b"\x89PNG-bytes").decode()
    events = [_user(),
              {"id": 1, "source": "agent", "action": "run", "args": {"command": "a"}},
              {"id": 2, "source": "agent", "observation": "run", "cause": 1, "content": "out",
               "extras": {"exit_code": 3}},
              {"id": 3, "source": "agent", "action": "run", "args": {"command": "b"}},
              {"id": 4, "source": "agent", "observation": "error", "cause": 3, "content": "bad"},
              {"id": 5, "source": "agent", "action": "browse", "args": {"url": "u"}},
              {"id": 6, "source": "agent", "observation": "browse", "cause": 5, "content": "page",
               "extras": {"url": "https://x.org", "screenshot": "data:image/png;base64," + shot}},
              {"id": 7, "source": "agent", "action": "browse", "args": {"url": "u"}},
              {"id": 8, "source": "agent", "observation": "browse", "cause": 7, "content": "p2",
               "extras": {"screenshot": "not base64!"}},
              {"id": 9, "source": "agent", "action": "read", "args": {"path": "/f"}},
              {"id": 10, "source": "agent", "observation": "read", "cause": 9, "content": "gone",
               "extras": {"error": True}},
              {"id": 11, "source": "agent", "action": "run", "args": {"command": "c"}},
              {"id": 12, "source": "agent", "observation": "run", "cause": 11, "content": "x",
               "extras": {"metadata": {"exit_code": 0}, "exit_code": 5}},
              {"id": 13, "source": "agent", "observation": "run", "content": "no cause"},
              {"id": 14, "source": "agent", "observation": "null", "cause": 11, "content": "bookkeeping"}]
    ep, rows = _split(_events(tmp_path, events))
    assert rows == []
    obs = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    assert [(o.kind, o.text, o.exit_code, o.is_error) for o in obs] == [
        ("terminal", "out", 3, None), ("text", "bad", None, True), ("web", "page", None, None),
        ("web", "p2", None, None), ("tool_result", "gone", None, True), ("terminal", "x", 0, None)]
    assert (obs[2].url, obs[2].screenshot) == ("https://x.org", "in/events.json|image/png:" + b"\x89PNG-bytes".hex())
    assert obs[3].screenshot is None and obs[3].url is None


@pytest.mark.parametrize("shot", [None, "", "iVBORw0K!", "x,y," + base64.b64encode(b"png").decode()])
def test_a_screenshot_that_is_not_one_base64_image_is_left_out(shot, tmp_path):
    events = [_user(), {"id": 1, "source": "agent", "action": "browse", "args": {"url": "u"}},
              {"id": 2, "source": "agent", "observation": "browse", "cause": 1, "content": "page",
               "extras": {"screenshot": shot}}]
    ep, rows = _split(_events(tmp_path, events))
    assert rows == [] and ep.final_observation.screenshot is None and ep.final_observation.kind == "web"


def test_bookkeeping_and_environment_events_are_left_out(tmp_path):
    events = [{"id": 0, "source": "environment", "observation": "agent_state_changed", "content": ""},
              {"id": 1, "source": "environment", "action": "change_agent_state", "args": {}},
              {"id": 2, "source": "agent", "action": "system", "args": {"content": "sys"}},
              {"id": 3, "source": "agent", "action": "recall", "args": {}},
              _user("task"), {"id": 5, "source": "environment", "action": "message", "args": {"content": "x"}},
              {"id": 6, "source": "agent", "action": "message", "args": {"content": "hi"}},
              {"id": 7, "source": "user", "action": "message", "message": "from message", "args": {}}]
    ep, rows = _split(_events(tmp_path, events))
    assert rows == [] and [s.action.text for s in ep.steps] == ["hi"]
    assert ep.task == "task" and ep.final_observation.text == "from message"
    assert "local_time_first" in ep.env and ep.env["local_time_first"] == ep.env["local_time_last"]


@pytest.mark.parametrize("event, path, problem", [
    ({"action": "run", "args": {"command": 123}}, "args.command", "is a int, expected str"),
    ({"action": 5}, "action", "is a int, expected str"),
    ({"action": "run", "args": []}, "args", "is a list, expected dict"),
    ({"observation": "run", "cause": 0, "content": ["a"]}, "content", "is a list, expected str"),
    ({"observation": "run", "cause": 0, "extras": {"exit_code": True}}, "extras.exit_code", "is a bool, expected int"),
    ({"observation": "run", "cause": 0, "extras": {"metadata": {"exit_code": "0"}}}, "extras.metadata.exit_code",
     "is a str, expected int"),
    ({"action": "read", "tool_call_metadata": {"tool_call_id": 1.5}}, "tool_call_metadata.tool_call_id",
     "is a float, expected str/int"),
    ({"action": "read", "tool_call_metadata": {"model_response": {"model": 4}}},
     "tool_call_metadata.model_response.model", "is a int, expected str"),
])
def test_an_event_with_a_field_of_the_wrong_type_is_one_row(event, path, problem, tmp_path):
    events = [_user(), {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"}},
              {"id": 7, "source": "agent", **event}, {"id": 8, "source": "agent", "action": "finish"}]
    ep, rows = _split(_events(tmp_path, events, "e.json"))
    assert [(r.rule, r.location) for r in rows] == [("bad_record", f"[2].{path}")]
    assert rows[0].reason == f"e.json: event [2] (id 7) {path} {problem}; the event is left out"
    assert json.loads(rows[0].snippet)["id"] == 7
    assert [s.action.kind for s in ep.steps] == ["command", "done"]  # the events after it are read


def test_a_bad_tool_call_id_is_a_row_even_beside_a_good_model_response(tmp_path):
    meta = {"tool_call_id": 1.5, "model_response": {"model": "m"}}
    events = [_user(), {"id": 1, "source": "agent", "action": "read", "tool_call_metadata": meta}]
    (row,) = [r for r in _events(tmp_path, events, "e.json") if r.rule == "bad_record"]
    assert row.location == "[1].tool_call_metadata.tool_call_id"


def test_a_long_bad_event_keeps_a_snippet_of_2000_characters(tmp_path):
    bad = {"id": 1, "source": "agent", "action": "run", "args": {"command": 1, "pad": "x" * 3000}}
    (row,) = [r for r in _events(tmp_path, [_user(), bad], "e.json") if r.rule == "bad_record"]
    assert len(row.snippet) == 2000 and row.snippet.startswith('{"id":1,')


def test_observations_pair_with_their_actions_by_cause_not_by_order(tmp_path):
    events = [_user(), {"id": 1, "source": "agent", "action": "run", "args": {"command": "a"}},
              {"id": 2, "source": "agent", "action": "run", "args": {"command": "b"}},
              {"id": 3, "source": "agent", "observation": "run", "cause": 2, "content": "out-b"},
              {"id": 4, "source": "agent", "observation": "run", "cause": 1, "content": "out-a"}]
    ep, _ = _split(_events(tmp_path, events))
    assert ep.steps[1].observation.text == "out-a" and ep.final_observation.text == "out-b"


def test_events_without_timestamps_give_no_local_times(tmp_path):
    events = [{"id": 0, "source": "user", "action": "message", "args": {"content": "go"}},
              {"id": 1, "source": "agent", "action": "finish"}]
    ep, _ = _split(_events(tmp_path, events))
    assert ep.env == {} and ep.terminated


def test_a_file_that_is_no_json_or_over_the_record_budget_fails_naming_it(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("[{")
    with pytest.raises(SourceError) as e:
        _read(path)
    assert (e.value.rule, str(e.value).split(":")[0]) == ("parse_error", "x.json")
    path.write_text(json.dumps([_user("x" * 500)]))
    with pytest.raises(SourceError) as e:
        _read(path, Budgets(record_bytes=100))
    assert e.value.rule == "budget_exceeded" and str(e.value).startswith("x.json: ")


def test_an_event_that_is_not_an_object_is_one_row(tmp_path):
    ep, rows = _split(_events(tmp_path, [_user(), "text", {"id": 1, "source": "agent", "action": "finish"}], "e.json"))
    assert [(r.rule, r.location, r.reason) for r in rows] == [
        ("bad_record", "[1]", "e.json: event [1] is not an object")]
    assert ep.terminated


def test_a_replay_trajectory_object_and_a_file_that_is_no_array(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"trajectory": [_user(), {"id": 1, "source": "agent", "action": "finish"}]}))
    ep, _ = _split(_read(path))
    assert ep.steps[0].action.kind == "done"
    path.write_text(json.dumps({"events": []}))
    with pytest.raises(SourceError) as e:
        _read(path)
    assert (e.value.rule, str(e.value)) == ("bad_record", "t.json: expected a JSON array of events")


def test_units_want_arrays_of_actions_or_observations_not_json_rpc():
    heads = {"/x/a.txt": b"[]", "/x/b.json": b'  [{"id": 1, "source": "agent", "observation": "run"}]',
             "/x/c.json": b'[{"id": 1, "source": "agent", "content": "x"}]',
             "/x/d.json": b'[{"id": 1, "source": "a", "observation": "x", "jsonrpc": "2.0"}]'}
    assert openhands.units(sorted(heads), heads.get) == ["/x/b.json"]


def test_a_session_without_agent_actions_is_an_empty_episode_row(tmp_path):
    (row,) = _events(tmp_path, [_user()], "u.json")
    assert (row.rule, row.location) == ("empty_episode", "u.json")
