"""Producer in the loop: smolagents 1.15.0 and 1.26.0 run a ToolCallingAgent and a CodeAgent with a
`get_weather` tool against the scripted model server, and save `agent.memory.get_full_steps()` (and, on 1.26.0,
the `RunResult` of `return_full_result=True`). The script is the oracle: every tool call it fixed is an action
in order, each tool result the agent got is what follows it, and the final answer ends the episode."""

import json

import pytest

from ingest.chat import smolagents
from tests.ingest.chat.framework_runs import (ANSWER, CODE_FINAL, CODE_LOOKUP, PLAN, SMOL_PLAN, SMOLAGENTS, TASK,
                                              run, scripted_calls, weather)
from tests.ingest.traces.read_util import calls, claims, read, results


def _only_episode(path):
    assert claims(smolagents, path)
    episodes, rejected = read(smolagents, path)
    assert rejected == [] and len(episodes) == 1
    return episodes[0]


def _seen_after_calls(ep) -> str:
    return "\n".join(s.observation.text or "" for s in ep.steps[1:]) + "\n" + (ep.final_observation.text
                                                                              if ep.final_observation else "")


@pytest.mark.parametrize("version", SMOLAGENTS)
def test_tool_calling_agent_memory_has_every_scripted_call_and_result(tmp_path_factory, version):
    out, script = run("smolagents", "tool", version, tmp_path_factory)
    ep = _only_episode(out / "steps.json")
    tool_calls = [c for c in scripted_calls(script) if c[0] != "final_answer"]
    assert calls(ep) == tool_calls
    assert [s.action.kind for s in ep.steps] == ["tool_call", "tool_call", "done"]
    assert ep.steps[-1].action.text == ANSWER and ep.terminated
    assert ep.task == TASK and ep.steps[0].observation.text == TASK and ep.domain == "mcp"
    assert ep.steps[0].reasoning == PLAN
    # what each tool returned (1.26 joins a turn's parallel results into the last call's observation)
    seen = _seen_after_calls(ep)
    assert seen.index(weather("Paris")) < seen.index(weather("Oslo"))
    assert "expert assistant" in ep.env["system_prompt"]
    actions = [s for s in ep.env["smolagents"]["steps"] if s["kind"] == "action"]
    assert [s["step_number"] for s in actions] == list(range(1, len(script.turns) + 1))
    if version == "1.26.0":
        assert ep.agent == "scripted-model-1"
        assert [s["token_usage"] for s in actions] == [{"input_tokens": 10, "output_tokens": 5}] * 2
        assert actions[-1]["is_final_answer"] is True


def test_run_result_is_the_same_episode_with_its_state(tmp_path_factory):
    out, _ = run("smolagents", "tool", "1.26.0", tmp_path_factory)
    a, b = _only_episode(out / "steps.json"), _only_episode(out / "result.json")
    assert [(s.action, s.observation.text) for s in a.steps] == [(s.action, s.observation.text) for s in b.steps]
    result = b.env["smolagents"]["run_result"]
    assert result["state"] == "success" and result["output"] == ANSWER
    assert result["token_usage"]["total_tokens"] == 30


@pytest.mark.parametrize("version", SMOLAGENTS)
def test_code_agent_memory_is_its_code_actions_with_their_logs(tmp_path_factory, version):
    out, script = run("smolagents", "code", version, tmp_path_factory)
    ep = _only_episode(out / "steps.json")
    assert [(s.action.kind, s.action.tool_name, s.action.code) for s in ep.steps] == \
        [("code", "python_interpreter", CODE_LOOKUP), ("code", "python_interpreter", CODE_FINAL)]
    # the tool the code called, as the executor logged it
    logs = ep.steps[1].observation.text
    assert logs.startswith("Execution logs:") and logs.index(weather("Paris")) < logs.index(weather("Oslo"))
    assert ANSWER in ep.final_observation.text and ep.terminated
    assert ep.domain == "terminal"  # Python its executor ran; the steps' kinds validate in that domain
    plan, thought = ep.steps[0].reasoning.split(f"Thought: {PLAN}")
    assert thought.lstrip().startswith("```py")
    if version == "1.26.0":  # the planning step's plan comes first in the reasoning of the action after it
        assert SMOL_PLAN in plan
        assert [s["kind"] for s in ep.env["smolagents"]["steps"]] == ["task", "planning", "action", "action"]
    # every request the model got after a code action carried the logs back
    sent = json.dumps(script.requests[-1][1]["messages"])
    assert json.dumps(weather("Oslo"))[1:-1] in sent


def test_the_same_run_traced_by_openinference_is_read_by_the_otel_reader(tmp_path_factory):
    """1.26.0's ToolCallingAgent run is also traced by OpenInference's smolagents instrumentation (OTLP/JSON):
    its tool spans give each call its own result (the memory joins parallel results), and the model spans'
    input messages, which carry smolagents' own `tool-call` / `tool-response` roles, add nothing twice."""
    from ingest.traces import otel

    out, script = run("smolagents", "tool", "1.26.0", tmp_path_factory)
    path = out / "otlp.jsonl"
    assert claims(otel, path) and not claims(smolagents, path)
    (ep,), rejected = read(otel, path)
    assert rejected == []
    assert calls(ep) == scripted_calls(script)  # the final answer is a tool span of its own here
    assert results(ep) == [weather("Paris"), weather("Oslo"), ANSWER]
    assert ep.steps[0].reasoning == PLAN and ep.agent == "scripted-model-1"
    assert TASK in ep.task


def test_a_code_agents_trace_has_the_tools_its_code_called_with_their_arguments(tmp_path_factory):
    """In a CodeAgent's trace the model spans hold the code (message steps) and each tool the code called is a
    tool span, whose `input.value` is the Python call OpenInference traced (`{"args", "kwargs"}`): read as the
    arguments by name, the positional answer named after the tool's `tool.parameters`."""
    from ingest.traces import otel

    out, _ = run("smolagents", "code", "1.26.0", tmp_path_factory)
    (ep,), rejected = read(otel, out / "otlp.jsonl")
    assert rejected == []
    assert calls(ep) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"}),
                         ("final_answer", {"answer": ANSWER})]
    assert results(ep) == [weather("Paris"), weather("Oslo"), ANSWER]
    codes = [s.action.text for s in ep.steps if s.action.kind == "message"]
    assert any(CODE_LOOKUP in c for c in codes) and any(CODE_FINAL in c for c in codes)


@pytest.mark.parametrize("version", SMOLAGENTS)
@pytest.mark.parametrize("mode", ["tool", "code"])
def test_benchmark_answers_line_is_the_memory_as_the_model_saw_it(tmp_path_factory, version, mode):
    """The line smolagents' benchmark script appends per question: `write_memory_to_messages()` as dicts, whose
    calls are the Python literal after "Calling tools:"."""
    out, script = run("smolagents", mode, version, tmp_path_factory)
    path = out / "answers.jsonl"
    assert claims(smolagents, path)
    (ep,), rejected = read(smolagents, path)
    assert rejected == [] and ep.key == "line 1" and ep.task == TASK and ep.agent == "scripted-model-1"
    memory = _only_episode(out / "steps.json")
    # the same actions and observations as the memory's own steps
    assert [s.action for s in ep.steps] == [s.action for s in memory.steps]
    assert [s.observation.text for s in ep.steps[1:]] == [s.observation.text for s in memory.steps[1:]]
    if mode == "tool":
        assert calls(ep) == [c for c in scripted_calls(script) if c[0] != "final_answer"]
        assert ep.steps[-1].action.text == ANSWER and ep.terminated
    else:
        assert [s.action.code for s in ep.steps] == [CODE_LOOKUP, CODE_FINAL]
    assert ep.env["smolagents"]["answers_record"]["true_answer"] == ANSWER


@pytest.mark.parametrize("version", SMOLAGENTS)
@pytest.mark.parametrize("mode", ["tool", "code"])
def test_memory_saved_as_messages_is_read_by_its_shape(tmp_path_factory, version, mode):
    """`write_memory_to_messages()` saved alone (no wrapper names it smolagents): the shape reader knows its
    `tool-call` / `tool-response` roles and reads it as the memory's own steps."""
    from ingest.chat import by_shape

    out, _ = run("smolagents", mode, version, tmp_path_factory)
    path = out / "messages.json"
    assert claims(by_shape, path) and not claims(smolagents, path)
    (ep,), rejected = read(by_shape, path)
    assert rejected == [] and ep.env["chat_shape"]["shape"] == "smolagents"
    memory = _only_episode(out / "steps.json")
    assert [s.action for s in ep.steps] == [s.action for s in memory.steps]
    assert [s.observation.text for s in ep.steps[1:]] == [s.observation.text for s in memory.steps[1:]]
    assert ep.domain == ("mcp" if mode == "tool" else "terminal")
