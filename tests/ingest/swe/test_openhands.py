import json

from ingest.swe import openhands
from tests.conftest import SAMPLES, episode_and_steps as _episode

EVENTS = SAMPLES / "swe" / "openhands-events"


def test_actions_are_linked_to_their_observations_by_cause(run, query):
    result = run("ingest-swe", [EVENTS])
    assert result.status == "success" and result.episodes == 3 and result.steps == 12 and result.quarantined == 0
    ep, steps = _episode(query, "wrong_initial_state.json")
    assert ep["source_format"] == "openhands" and ep["domain"] == "swe"
    assert ep["task"] == "Please rename game_2048.py to 2048.py" and ep["agent"] == "claude-3-5-sonnet-20241022"
    assert [s["action"]["kind"] for s in steps] == ["tool_call", "command", "tool_call", "done"]
    first = steps[0]["action"]
    # the model's own tool call, not OpenHands' internal args
    assert first["tool_name"] == "str_replace_editor"
    assert json.loads(first["arguments"]) == {"command": "view", "path": "/workspace"}
    assert json.loads(first["raw"])["id"] == 3
    assert steps[1]["action"]["code"] == "mv /workspace/game_2048.py /workspace/2048.py"
    assert steps[1]["action"]["tool_name"] == "execute_bash"
    assert steps[0]["observation"] == {**steps[0]["observation"], "kind": "text",
                                       "text": "Please rename game_2048.py to 2048.py"}
    # event 4 (cause 3) answers the view; event 6 (cause 5) the mv, with its exit code
    assert steps[1]["observation"]["text"].endswith("/workspace/\n/workspace/game_2048.py")
    assert steps[2]["observation"]["kind"] == "terminal" and steps[2]["observation"]["exit_code"] == 0
    assert steps[3]["observation"]["text"].endswith("/workspace/2048.py")
    assert steps[0]["reasoning"] == "I'll help you rename the file. First, let me check if the file exists and its location."
    assert steps[-1]["is_terminal"]  # finish
    assert all(s["timestamp"] is None for s in steps)  # local time of an unknown zone
    assert json.loads(ep["env"])["local_time_first"] == "2025-01-27T23:16:50.239610"


def test_user_messages_between_actions_are_observations(run, query):
    run("ingest-swe", [EVENTS])
    ep, steps = _episode(query, "basic_interactions.json")
    assert ep["task"] == "what's 1+1?" and ep["agent"] == "gpt-4o-2024-08-06"
    assert [s["action"]["kind"] for s in steps] == ["message", "message", "done"]
    assert steps[0]["action"]["text"] == "1 + 1 equals 2."
    assert [s["observation"]["text"] for s in steps] == ["what's 1+1?", "No, I mean by Goldbach's conjecture!",
                                                         "Finish please"]
    assert steps[2]["action"]["text"] == "All done! What's next on the agenda?"


def test_bookkeeping_events_are_left_out_and_a_running_command_keeps_exit_code_minus_one(run, query):
    run("ingest-swe", [EVENTS])
    ep, steps = _episode(query, "basic_gui_mode.json")
    assert ep["task"].startswith("I want to create a VueJS app that allows me to:")
    assert [s["action"]["kind"] for s in steps] == ["command", "tool_call", "tool_call", "command", "message"]
    assert steps[0]["action"]["code"] == "mkdir -p /workspace/todo-app"
    assert json.loads(steps[1]["action"]["arguments"])["path"] == "/workspace/todo-app/index.html"
    assert steps[2]["observation"]["text"].startswith("--- /workspace/todo-app/index.html")
    server = steps[4]["observation"]  # the http.server is still running: OpenHands recorded exit code -1
    assert server["text"] == "Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ..." and server["exit_code"] == -1
    assert steps[1]["observation"]["exit_code"] == 0  # mkdir exited
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]  # awaiting user input, not finished


def test_units_want_an_event_array():
    heads = {"/x/events.json": b'[{"id": 0, "timestamp": "t", "source": "user", "action": "message"}]',
             "/x/other.json": b'[{"id": 0, "name": "x"}]', "/x/mcp.json": b'[{"jsonrpc": "2.0", "id": 1, "source": "a", "method": "x"}]'}
    assert openhands.units(sorted(heads), heads.get) == ["/x/events.json"]


def test_an_event_with_a_field_of_the_wrong_type_is_quarantined_alone(run, query, tmp_path):
    """Hand-made events in the sample's shape: a `command` that is a number, a `content` that is a list and
    `args` that are a list each give one quarantine row naming the event and the field; the rest is read."""
    events = [
        {"id": 0, "timestamp": "2025-01-27T23:16:50", "source": "user", "action": "message",
         "args": {"content": "list the files"}},
        {"id": 1, "timestamp": "2025-01-27T23:16:51", "source": "agent", "action": "run", "args": {"command": 123}},
        {"id": 2, "timestamp": "2025-01-27T23:16:52", "source": "agent", "action": "run", "args": {"command": "ls"}},
        {"id": 3, "timestamp": "2025-01-27T23:16:53", "source": "agent", "observation": "run", "cause": 2,
         "content": ["a"], "extras": {"metadata": {"exit_code": 0}}},
        {"id": 4, "timestamp": "2025-01-27T23:16:54", "source": "agent", "observation": "run", "cause": 2,
         "content": "a\nb", "extras": {"metadata": {"exit_code": -1}}},
        {"id": 5, "timestamp": "2025-01-27T23:16:55", "source": "agent", "action": "finish", "args": []},
        {"id": 6, "timestamp": "2025-01-27T23:16:56", "source": "agent", "action": "finish", "args": {}},
    ]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "events.json").write_text(json.dumps(events))
    result = run("ingest-swe", [tmp_path / "in"], stages=["ingest"])
    assert (result.episodes, result.steps, result.quarantined) == (1, 2, 3)
    rows = query("SELECT rule, location, reason FROM quarantine ORDER BY location")
    assert [(r["rule"], r["location"]) for r in rows] == [
        ("bad_record", "[1].args.command"), ("bad_record", "[3].content"), ("bad_record", "[5].args")]
    assert rows[0]["reason"] == "events.json: event [1] (id 1) args.command is a int, expected str; the event is left out"
    steps = query("SELECT action, observation FROM steps ORDER BY step_index")
    assert [s["action"]["kind"] for s in steps] == ["command", "done"]
    assert (steps[1]["observation"]["text"], steps[1]["observation"]["exit_code"]) == ("a\nb", -1)
