"""The transcript core on hand-made conversations: the pairing and step rules every chat-shaped reader relies
on (the readers' own tests run them on what real producers wrote)."""

import datetime as dt
import json

from ingest.record import Action, Episode, Observation, Rejected
from ingest.transcript import Message, Run, ToolCall, episode, records, steps_of

T0 = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def test_results_pair_by_id_and_become_the_next_observation():
    """Two calls in one turn, results in the other order: each result is the observation after its own call."""
    msgs = [
        Message("system", "you are an agent"),
        Message("user", "list files"),
        Message("assistant", "let me look", reasoning="think", model="m1", timestamp=T0, tool_calls=[
            ToolCall("a", "bash", {"command": "ls"}), ToolCall("b", "read_file", '{"path": "x"}')]),
        Message("tool", "x-contents", tool_call_id="b"),
        Message("tool", "x\ny", tool_call_id="a", exit_code=0),
        Message("user", "thanks"),
        Message("assistant", "done", model="m2"),
    ]
    ep, warnings = episode(msgs, Run(outcome="success", reward=1.0))
    assert warnings == []
    assert ep.task == "list files" and ep.agent == "m1" and ep.outcome == "success" and ep.reward == 1.0
    kinds = [s.action.kind for s in ep.steps]
    assert kinds == ["command", "tool_call", "message"]
    assert ep.steps[0].action.code == "ls" and ep.steps[0].reasoning == "think\n\nlet me look"
    assert ep.steps[1].reasoning is None and json.loads(ep.steps[1].action.arguments) == {"path": "x"}
    assert ep.steps[0].observation.text == "list files" and ep.steps[0].observation.kind == "text"
    # after call a: its result (terminal, exit code 0); after call b: its result, then the user's message
    assert (ep.steps[1].observation.kind, ep.steps[1].observation.text, ep.steps[1].observation.exit_code) == \
        ("terminal", "x\ny", 0)
    assert ep.steps[2].observation.text == "x-contents\n\nthanks" and ep.steps[2].observation.kind == "text"
    assert ep.steps[0].timestamp == T0 and ep.final_observation is None and not ep.terminated
    assert ep.env["system_prompt"] == "you are an agent"
    assert ep.env["models"] == ["m1", "m2"] and ep.env["model_per_step"] == ["m1", "m1", "m2"]


def test_results_without_ids_pair_by_order_and_the_last_result_is_the_final_observation():
    msgs = [Message("user", "go"),
            Message("assistant", tool_calls=[ToolCall(None, "bash", {"command": "a"}),
                                             ToolCall(None, "bash", {"command": "b"})]),
            Message("tool", "out-a", is_error=True), Message("tool", "out-b")]
    ep, _ = episode(msgs, Run())
    assert ep.steps[1].observation.text == "out-a" and ep.steps[1].observation.is_error
    assert ep.final_observation.text == "out-b"


def test_an_adapters_own_action_and_done_make_the_episode_terminal():
    done = Action(kind="done", text="bye")
    ep, _ = episode([Message("user", "go"), Message("assistant", tool_calls=[ToolCall("f", "finish", {}, action=done)])],
                    Run(task="given task"))
    assert ep.steps[0].action is done and ep.terminated and ep.task == "given task"
    ep, _ = episode([Message("user", "go"), Message("assistant", tool_calls=[ToolCall("f", "finish", {}, action=done)])],
                    Run(terminated=False))
    assert not ep.terminated


def test_unplaceable_messages_are_kept_raw_with_a_warning():
    msgs = [Message("tool", "orphan", raw={"k": 1}, where="messages[0]"), Message("critic", "meh", where="messages[1]"),
            Message("user", "go"), Message("assistant", tool_calls=[ToolCall("x", "t", {})]),
            Message("tool", "unknown id", tool_call_id="nope")]
    ep, warnings = episode(msgs, Run())
    assert [w.rule for w in warnings] == ["unknown_content", "unknown_content"]
    assert "messages[0]" in warnings[0].reason and "critic" in warnings[1].reason
    assert [u["where"] for u in ep.env["unmapped"]] == ["messages[0]", "messages[1]"]
    assert ep.steps[0].observation.text == "orphan\n\nmeh\n\ngo"  # still seen by the agent
    assert ep.final_observation.text == "unknown id"  # kept after the latest step


def test_a_transcript_without_actions_keeps_outcome_and_reward():
    out = list(records([Message("user", "go")], Run(outcome="failure", reward=0.0), "run.json"))
    assert len(out) == 1 and isinstance(out[0], Rejected) and out[0].rule == "empty_episode"
    assert json.loads(out[0].snippet) == {"outcome": "failure", "reward": 0.0, "task": "go"}
    out = list(records([Message("user", "go"), Message("assistant", "hi")], Run(), "run.json"))
    assert isinstance(out[-1], Episode) and out[-1].steps[0].action.kind == "message"


def test_an_adapters_action_makes_an_empty_turn_a_step():
    """`Message.action`: a turn without tool calls whose format says it is an action (ATIF's empty agent turn)
    is a step with that action, where the core alone would keep it as unmapped."""
    said = Action(kind="message", text="", raw='{"message":""}')
    ep, warnings = episode([Message("user", "go"), Message("assistant", action=said),
                            Message("user", "more")], Run())
    assert warnings == [] and [s.action for s in ep.steps] == [said]
    assert ep.final_observation.text == "more"


def test_steps_of_reads_a_stream_and_names_each_steps_model():
    """`steps_of` takes a generator (read once, in order) and gives the model of each step by index; results by
    order skip the calls already answered by id."""
    def stream():
        yield Message("user", "go")
        yield Message("assistant", model="m1", tool_calls=[ToolCall("a", "bash", {"command": "a"}),
                                                           ToolCall(None, "bash", {"command": "b"}),
                                                           ToolCall(None, "bash", {"command": "c"})])
        yield Message("tool", "out-a", tool_call_id="a")
        yield Message("tool", "out-b")
        yield Message("assistant", "done", model="m2")
        yield Message("tool", "out-c")

    made = steps_of(stream())
    assert [s.action.code for s in made.steps[:3]] == ["a", "b", "c"]
    # out-c answers call c, still waiting when `done` came: it is what came after call c, not after `done`
    assert [s.observation.text for s in made.steps] == ["go", "out-a", "out-b", "out-c"]
    assert made.final_observation is None
    assert made.models == ["m1", "m1", "m1", "m2"] and made.warnings == [] and made.unmapped == []


def test_an_environment_loop_is_pages_seen_and_actions_chosen_with_their_rewards():
    """Each page a user message with its observation, each action a turn with the reward it earned: the page
    before an action is its step's observation, the page after the last is the final one; a turn's reward goes
    on its last step."""
    page = [Observation(kind="web", text=f"page {i}", url=f"https://x/{i}") for i in range(3)]
    click, fill = Action(kind="click", element='{"bid": "a1"}'), Action(kind="type", text="hi")
    msgs = [Message("user", observation=page[0]),
            Message("assistant", action=click, reasoning="open it", timestamp=T0, reward=0.0),
            Message("user", observation=page[1]),
            Message("assistant", action=fill, reward=1.0),
            Message("user", observation=page[2])]
    ep, warnings = episode(msgs, Run(domain="web", platform="browser", terminated=True))
    assert warnings == [] and ep.task is None and ep.env == {}
    assert [(s.observation, s.action, s.reward) for s in ep.steps] == [(page[0], click, 0.0), (page[1], fill, 1.0)]
    assert ep.steps[0].reasoning == "open it" and ep.steps[0].timestamp == T0 and ep.steps[1].reasoning is None
    assert ep.final_observation is page[2] and ep.terminated
    calls = [ToolCall("a", "bash", {"command": "ls"}), ToolCall("b", "bash", {"command": "pwd"})]
    ep, _ = episode([Message("user", "go"), Message("assistant", tool_calls=calls, reward=0.5)], Run())
    assert [s.reward for s in ep.steps] == [None, 0.5]
