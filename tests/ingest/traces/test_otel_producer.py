"""Producer in the loop: the OpenTelemetry Python SDK 1.45.2 traces a tool-calling loop on an `openai` client
against the scripted model server (`model_server.py`); its spans are written by the SDK's `ConsoleSpanExporter`
(its indented span JSON) and as OTLP/JSON (the SDK's protobuf encoder). Three runs: OpenInference's OpenAI
instrumentation 0.1.66 with the app recording each tool's execution as a TOOL span, or with only the model calls
traced (the results then come from the next model call's input); and OpenTelemetry's own `openai_v2`
instrumentation 2.4b0 on the latest GenAI conventions (`gen_ai.input.messages` / `gen_ai.output.messages` on the
spans) with `invoke_agent` and `execute_tool` spans from `opentelemetry-util-genai`; and Traceloop's OpenLLMetry
instrumentation 0.62.4 with no span around the loop (each model call a trace of its own, read as one conversation).
The script is the oracle: every tool call it fixed, with the result the client sent back, is in the episode in
order, with the model name."""

import pytest

from ingest.traces import openai_agents, otel
from tests.ingest.traces.producer_runs import ANSWER, OTEL_MODES, PLAN, TASK, run, scripted_calls, weather
from tests.ingest.traces.read_util import calls, claims, read, results

FILES = ("console.json", "otlp.jsonl")


def _sent_results(script) -> list[str]:
    """The tool results the client sent back to the model, in order (from the requests the server recorded)."""
    seen = []
    for _, body in script.requests:
        for m in body["messages"]:
            if m["role"] == "tool" and m["content"] not in seen:
                seen.append(m["content"])
    return seen


@pytest.mark.parametrize("mode", OTEL_MODES)
@pytest.mark.parametrize("name", FILES)
def test_every_scripted_call_and_result_is_in_the_episode(tmp_path_factory, mode, name):
    out, script = run(mode, tmp_path_factory)
    path = out / name
    assert claims(otel, path) and not claims(openai_agents, path)
    episodes, rejected = read(otel, path)
    assert rejected == []
    assert len(episodes) == 1
    ep = episodes[0]
    assert calls(ep) == scripted_calls(script)
    assert results(ep) == [weather("Paris"), weather("Oslo")] == _sent_results(script)
    assert ep.steps[-1].action.kind == "message" and ep.steps[-1].action.text == ANSWER and ep.terminated
    assert ep.task == TASK and ep.agent == "scripted-model-1"
    assert ep.steps[0].reasoning == PLAN
    assert ep.env["system_prompt"] == "Answer weather questions with the tool."
    assert ep.env["otel"]["resources"][0]["service.name"] == "weather-app"
    assert all(s.timestamp is not None for s in ep.steps)
    if mode == "openllmetry":  # no span around the loop: each model call is a trace, one conversation
        assert len(ep.env["stitched"]) == len(script.requests) == 3
    else:
        assert ep.env["trace"]["agents"] == ["weather agent"]


@pytest.mark.parametrize("mode", OTEL_MODES)
def test_console_and_otlp_give_the_same_episode(tmp_path_factory, mode):
    out, _ = run(mode, tmp_path_factory)
    a, b = (read(otel, out / name)[0][0] for name in FILES)
    assert a.key == b.key  # the base64 ids of the protobuf JSON mapping and the SDK's 0x-hex are one trace id
    assert [(s.action.kind, s.action.tool_name, s.action.arguments, s.observation, s.reasoning, s.timestamp)
            for s in a.steps] == [(s.action.kind, s.action.tool_name, s.action.arguments, s.observation,
                                   s.reasoning, s.timestamp) for s in b.steps]


@pytest.mark.parametrize("mode, result", [("tool-spans", "output.value"), ("genai", "gen_ai.tool.call.result")])
def test_tool_spans_are_paired_with_the_model_calls(tmp_path_factory, mode, result):
    """With tool spans, each call's raw keeps both the model's call and the tool span that ran it."""
    import json

    out, _ = run(mode, tmp_path_factory)
    ep = read(otel, out / "console.json")[0][0]
    raw = [json.loads(s.action.raw) for s in ep.steps if s.action.kind == "tool_call"]
    assert [r["call"]["id"] for r in raw] == ["call_1", "call_2"]
    assert [r["span"]["attributes"][result] for r in raw] == [weather("Paris"), weather("Oslo")]
