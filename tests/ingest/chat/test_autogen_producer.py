"""Producer in the loop: AutoGen AgentChat 0.4.9.3 (its messages have no `id` nor `created_at` yet) and 0.7.5
(with autogen-ext's OpenAI client) runs an AssistantAgent with
a `get_weather` tool against the scripted model server, alone and in a RoundRobinGroupChat team, and saves
`result.messages` (`model_dump(mode="json")`) and `save_state()`. The shape reader reads them (AutoGen's message
shape); the script is the oracle: every tool call it fixed is an action in order, followed by the tool's result,
and the answer the model wrote after them ends the episode."""

import pytest

from ingest.chat import by_shape
from tests.ingest.chat.framework_runs import ANSWER, AUTOGEN, PLAN, TASK, run, scripted_calls, weather
from tests.ingest.traces.read_util import calls, claims, read, results


def _check(ep, script, answer):
    assert calls(ep) == scripted_calls(script)
    assert results(ep) == [weather("Paris"), weather("Oslo")]
    assert [s.action.kind for s in ep.steps] == ["tool_call", "tool_call", "message"]
    assert ep.steps[-1].action.text == answer
    assert ep.steps[0].reasoning == PLAN and ep.task == TASK


@pytest.mark.parametrize("version", AUTOGEN)
@pytest.mark.parametrize("mode", ["agent", "team"])
def test_result_messages_are_one_episode_with_every_scripted_call(tmp_path_factory, mode, version):
    out, script = run("autogen-agentchat", mode, version, tmp_path_factory)
    assert claims(by_shape, out / "messages.json")
    episodes, rejected = read(by_shape, out / "messages.json")
    assert rejected == [] and len(episodes) == 1
    ep = episodes[0]
    _check(ep, script, ANSWER if mode == "agent" else ANSWER + " TERMINATE")
    assert ep.env["chat_shape"]["shape"] == "autogen"
    # each message's source and usage are kept with its step
    assert '"source":"weather_agent"' in ep.steps[-1].action.raw


@pytest.mark.parametrize("version", AUTOGEN)
def test_saved_agent_state_is_its_model_context(tmp_path_factory, version):
    out, script = run("autogen-agentchat", "agent", version, tmp_path_factory)
    episodes, rejected = read(by_shape, out / "state.json")
    assert rejected == [] and len(episodes) == 1
    ep = episodes[0]
    _check(ep, script, ANSWER)
    assert ep.key == "llm_context.messages"
    assert ep.env["around"]["(the document)"] == {"type": "AssistantAgentState", "version": "1.0.0"}


@pytest.mark.parametrize("version", AUTOGEN)
def test_saved_team_state_is_the_managers_thread_and_the_agents_context(tmp_path_factory, version):
    out, script = run("autogen-agentchat", "team", version, tmp_path_factory)
    assert claims(by_shape, out / "state.json")
    episodes, rejected = read(by_shape, out / "state.json")
    assert rejected == []
    by_key = {ep.key: ep for ep in episodes}
    assert set(by_key) == {"agent_states.weather_agent.agent_state.llm_context.messages",
                           "agent_states.RoundRobinGroupChatManager.message_thread"}
    for ep in episodes:
        _check(ep, script, ANSWER + " TERMINATE")
    thread = by_key["agent_states.RoundRobinGroupChatManager.message_thread"]
    # the thread's messages carry their times from 0.5 on
    assert (thread.steps[0].timestamp is not None) == (version != "0.4.9.3")
