"""Producer in the loop: the OpenAI Agents SDK 0.24.0 runs an agent with one function tool against the scripted
model server (`model_server.py`), its trace exported two ways: the SDK's own `BackendSpanExporter` posting its
`{"data": [...]}` payloads (to the server, which writes them down) and a trace processor writing `Span.export()`
lines. The script is the oracle: every tool call it fixed, with the result the SDK sent back to the model, is in
the episode in order, with the model name."""

import pytest

from ingest.traces import openai_agents, otel
from tests.ingest.traces.producer_runs import ANSWER, PLAN, TASK, json_lines, run, scripted_calls, weather
from tests.ingest.traces.read_util import calls, claims, read, results

FILES = ("spans.jsonl", "backend.jsonl")


@pytest.mark.parametrize("name", FILES)
def test_chat_completions_run_is_one_episode_with_every_scripted_call(tmp_path_factory, name):
    out, script = run("chat", tmp_path_factory)
    path = out / name
    assert claims(openai_agents, path) and not claims(otel, path)
    episodes, rejected = read(openai_agents, path)
    assert rejected == []
    assert len(episodes) == 1
    ep = episodes[0]
    assert calls(ep) == scripted_calls(script)
    assert results(ep) == [weather("Paris"), weather("Oslo")]
    assert [s.action.kind for s in ep.steps] == ["tool_call", "tool_call", "message"]
    assert ep.steps[-1].action.text == ANSWER and ep.terminated
    assert ep.task == TASK and ep.agent == "scripted-model-1"
    assert ep.steps[0].reasoning == PLAN
    assert ep.env["system_prompt"] == "Answer weather questions with the tool."
    assert ep.env["trace"]["agents"] == ["Weather agent"]
    # the tool results the server got back are the observations
    sent = [m["content"] for m in script.requests[1][1]["messages"] if m["role"] == "tool"]
    assert sent == results(ep)


def test_both_exports_give_the_same_episode(tmp_path_factory):
    out, _ = run("chat", tmp_path_factory)
    a, b = (read(openai_agents, out / name)[0][0] for name in FILES)
    assert a.key == b.key and a.key == json_lines(out / "spans.jsonl")[0]["id"]
    assert [(s.action, s.observation, s.reasoning) for s in a.steps] == \
        [(s.action, s.observation, s.reasoning) for s in b.steps]


@pytest.mark.parametrize("name", FILES)
def test_responses_model_run_keeps_the_function_spans_calls(tmp_path_factory, name):
    """The Responses model's spans export only the response ids: the calls and results come from the function
    spans, the agent's name stands for the model the export does not name."""
    out, script = run("responses", tmp_path_factory)
    episodes, rejected = read(openai_agents, out / name)
    assert rejected == [] and len(episodes) == 1
    ep = episodes[0]
    assert calls(ep) == scripted_calls(script)
    assert results(ep) == [weather("Paris"), weather("Oslo")]
    assert ep.agent == "Weather agent"
    assert ep.env["openai_agents"]["response_ids"] == ["resp_1", "resp_2", "resp_3"]
    assert ep.env["openai_agents"]["workflow_name"] == "Agent workflow"


@pytest.mark.parametrize("name", FILES)
def test_a_handoff_is_a_sub_episode_linked_to_its_parent(tmp_path_factory, name):
    out, script = run("handoff", tmp_path_factory)
    episodes, rejected = read(openai_agents, out / name)
    assert rejected == []
    main, sub = episodes
    assert calls(main) == [("transfer_to_weather_agent", {})]
    assert results(main) == ["handoff from Triage agent to Weather agent"]
    assert calls(sub) == [("get_weather", {"city": "Oslo"})] and results(sub) == [weather("Oslo")]
    assert sub.steps[-1].action.text == ANSWER and sub.terminated and not main.terminated
    assert sub.steps[0].reasoning == PLAN
    # the history the triage agent handed over is context, not the weather agent's actions
    assert sub.task == TASK and sub.env["trace"]["history_messages"] == 2
    assert sub.env["system_prompt"] == "Answer weather questions with the tool."
    assert sub.env["parent"]["key"] == main.key and sub.env["parent"]["relation"] == "handoff"
    link, = main.env["subagents"]
    assert link["key"] == sub.key and link["agent"] == "Weather agent" and link["after_steps"] == 1
    assert calls(main) + calls(sub) == scripted_calls(script)


@pytest.mark.parametrize("mode", ["chat", "responses", "handoff"])
def test_the_openinference_view_of_the_same_run_reads_alike(tmp_path_factory, mode):
    """OpenInference's Agents SDK instrumentation (2.6.0) turns the same run into OpenTelemetry spans (its workflow
    AGENT span around the agents, LLM and TOOL spans, a handoff as a `handoff to <agent>` TOOL span): the OTel
    reader finds the same calls and results, and, where the SDK's own export has no content (the Responses model),
    the answer and the model too."""
    out, script = run(mode, tmp_path_factory)
    path = out / "otlp.jsonl"
    assert claims(otel, path) and not claims(openai_agents, path)
    ours, rejected = read(otel, path)
    theirs, _ = read(openai_agents, out / "spans.jsonl")
    assert rejected == []
    assert [calls(e) for e in ours] == [calls(e) for e in theirs]
    assert [results(e) for e in ours] == [results(e) for e in theirs]
    assert sum((calls(e) for e in ours), []) == scripted_calls(script)
    last = ours[-1]
    assert last.steps[-1].action.text == ANSWER and last.terminated and last.agent == "scripted-model-1"
    assert ours[0].steps[0].reasoning == (None if mode == "handoff" else PLAN)
    if mode == "handoff":
        assert last.env["parent"]["relation"] == "handoff" and ours[0].env["subagents"][0]["key"] == last.key
