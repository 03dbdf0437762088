"""The trace readers on real span dumps of agent apps: any-agent's saved `AgentTrace`s of one task run through four
frameworks (samples/traces/otel/any-agent, PROVENANCE.md: the SDK's span fields with integer ids and nanosecond
times, any-agent's GenAI attributes), against goldens a person read against the raw files; and an app's own trace
files that hold no step (data/open-agent-traces), which their readers claim and say why."""

import json
from pathlib import Path

import pytest

from ingest.record import Episode, Rejected
from ingest.traces import otel
from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.ingest.golden import read_records
from tests.ingest.traces.test_langfuse_read import GOLDEN
from tests.parts import SHARED, require_shared_sample

ANY_AGENT = SAMPLES / "traces" / "otel" / "any-agent"
TASK = ("Find what year it is in the America/New_York timezone and write the value (single number) to a file. "
        "Finally, return a list of the steps you have taken.")
# what a person counts in each raw file: (tool calls with their arguments, steps, ends on an answer)
COUNTED = {
    "OPENAI": ([("get_current_time", {"timezone": "America/New_York"}), ("write_file", {"text": "2025"})], 3, True),
    "LANGCHAIN": ([("get_current_time", {"timezone": "America/New_York"}), ("write_file", {"text": "2025"})], 4,
                  True),
    "LLAMA_INDEX": ([("get_current_time", {"timezone": "America/New_York"}), ("write_file", {"text": "2025"}),
                     ("final_output", None)], 5, True),
    "SMOLAGENTS": ([("get_current_time", {"timezone": "America/New_York"}), ("write_file", {"text": "2025"}),
                    ("final_answer", None)], 3, False),
}


@pytest.mark.parametrize("framework", sorted(COUNTED))
def test_any_agent_traces_read_as_a_person_counts_them(framework):
    path = ANY_AGENT / f"{framework}_trace.json"
    assert otel.units([str(path)], lambda p: path.read_bytes()[:4096]) == [str(path)]
    records = read_records(otel, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    calls, steps, answered = COUNTED[framework]
    got = [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps if s.action.kind == "tool_call"]
    assert [name for name, _ in got] == [name for name, _ in calls]
    assert all(args is None or args == found for (_, args), (_, found) in zip(calls, got))
    assert (len(ep.steps), ep.terminated) == (steps, answered)
    assert ep.agent == "mistral/mistral-small-latest" and TASK in ep.task
    raw = json.loads(path.read_text())
    assert ep.env["trace"]["spans"] == len(raw["spans"]) and ep.env["trace"]["agents"] == ["any_agent"]
    assert ep.steps[0].timestamp.date().isoformat() == "2025-09-16"  # integer nanoseconds read as such
    golden.check(records, GOLDEN / f"otel-any-agent-{framework.lower()}.json")


def test_the_tool_span_gives_the_arguments_the_model_span_lost():
    """LlamaIndex's model spans record each call's arguments as `{}`; its tool spans hold them."""
    records = read_records(otel, ANY_AGENT / "LLAMA_INDEX_trace.json")
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert json.loads(ep.steps[2].action.arguments)["answer"].startswith('{"steps": [{"number": 1')
    assert ep.steps[3].observation.text.startswith('{"success": true, "result": {"steps"')


OPEN_AGENT_TRACES = Path(__file__).parent / "data" / "open-agent-traces"


def test_an_apps_own_trace_files_with_nothing_to_read_say_why():
    """data/open-agent-traces (PROVENANCE.md): an Agents SDK export whose responses hold only ids, and an SDK span
    dump with the app's own attributes: each is claimed by its reader, which says in one row why no step."""
    from ingest.traces import openai_agents

    export = OPEN_AGENT_TRACES / "traces_2025-06-29_00-23-37.json"
    head = lambda p: open(p, "rb").read(4096)  # noqa: E731
    assert openai_agents.units([str(export)], head) == [str(export)]
    [row] = read_records(openai_agents, export)
    assert (row.rule, row.snippet) == ("no_model_content", "trace_98b1922f8dc0455daf6191f1167901de")
    assert "its 6 spans are agents and responses that name only a `response_id`" in row.reason
    dump = OPEN_AGENT_TRACES / "otel_traces_2025-06-29_00-23-24.json"
    assert otel.units([str(dump)], head) == [str(dump)]
    [row] = read_records(otel, dump)
    assert row.rule == "no_agent_spans" and row.snippet == "bf386626acbcb551618d51dc42d956ec"


AGENT_FACTORY = SAMPLES / "traces" / "otel" / "agent-factory"
# what a person counts in each raw file of a second repository's any-agent runs (PROVENANCE.md): (tool calls with
# their arguments, steps, the task's opening, the model)
FACTORY_COUNTED = {
    "sample_agent_eval_trace.json": (
        [("search_tavily", {"query": "Current weather in Berlin in Celsius", "include_images": False})], 2,
        "What is the current weather in Berlin?", "o3"),
    "summarize-url-content_agent_factory_trace.json": (
        [("read_file", {"file_name": "tools/README.md"})], 2,
        "Workflow that takes an input web URL and returns a summary of the content.", "openai/o3"),
    "sample_agent_trace_from_jsonspanexporter.jsonl": ([], 1, None, "o3"),
}


@pytest.mark.parametrize("name", sorted(FACTORY_COUNTED))
def test_agent_factory_runs_read_as_a_person_counts_them(name):
    """agent-factory's own runs of o3 through any-agent: two saved `AgentTrace`s (a search, a file read, each then
    the structured answer) and a `JsonFileSpanExporter` JSONL (one span a line, the input messages left out by the
    exporter: the answer alone)."""
    path = AGENT_FACTORY / name
    assert otel.units([str(path)], lambda p: path.read_bytes()[:4096]) == [str(path)]
    records = read_records(otel, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    calls, steps, task, model = FACTORY_COUNTED[name]
    got = [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps if s.action.kind == "tool_call"]
    assert got == calls
    assert len(ep.steps) == steps and ep.steps[-1].action.kind == "message" and ep.terminated
    assert (ep.task or "").startswith(task or "") and (task is not None) == (ep.task is not None)
    assert ep.agent == model
    golden.check(records, GOLDEN / f"otel-agent-factory-{name.split('.')[0]}.json")


# an unlicensed real console export, read where ../shared lays it (never copied here): Josh-Weston/
# microsoft-agent-framework-samples @ e595bd1cdfd8d79f0fe6729fa33d5a5311b957c8, `traces.jsonl` (removed from the
# repository in the next commit): Microsoft Agent Framework's observability sample, a two-agent workflow (a weather
# agent with a `get_weather` tool, then a structured-output agent) run 11 times with gpt-oss-20b on Fireworks, its
# spans printed by the OpenTelemetry SDK's console JSON, each span twice (when it starts, `end_time` null, and when
# it ends), message content not captured
MAF_TRACES = SHARED / "samples" / "traces" / "otel" / "microsoft-agent-framework-samples" / "traces.jsonl"


def test_a_workflow_console_export_with_each_span_printed_twice_reads_each_span_once():
    """What a person counts: 22 traces, 11 of them `workflow.build` (no agent: one row); each of the other 11 runs
    the two agents (two `invoke_agent` spans), three `chat` calls and one `execute_tool get_weather` (its arguments
    and result not captured): one step, the call, and 17 spans (18 in one run), not the 33 records printed."""
    path = require_shared_sample(MAF_TRACES)
    records = read_records(otel, path)
    [row] = [r for r in records if isinstance(r, Rejected)]
    episodes = [r for r in records if isinstance(r, Episode)]
    assert row.rule == "no_agent_spans" and "11 of 22 traces" in row.reason
    assert len(episodes) == 11
    for ep in episodes:
        assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [("tool_call", "get_weather")]
        assert ep.env["trace"]["agents"] == ["Weather agent", "Structured output agent"]
        assert ep.agent == "accounts/fireworks/models/gpt-oss-20b" and ep.task is None
    assert sorted(ep.env["trace"]["spans"] for ep in episodes) == [17] * 10 + [18]
    golden.check(records, GOLDEN / "otel-microsoft-agent-framework-samples.json", texts="hash")


# unlicensed real OTLP/JSON, read where ../shared lays it (never copied here): pmcollins/otel-llm-bakeoff @
# ee52822a6be16fbf2c119aac75548cf889ecd4da, `output/ott-{llmetry,lit,langsmith}.json` (last changed in ffc8ff67,
# 2025-05-20): one LangChain chain (prompt template | ChatOpenAI gpt-3.5-turbo | output parser) asked two questions
# against OpenAI's API, instrumented three ways (OpenLLMetry's langchain instrumentation 0.40.6, OpenLit 1.33,
# LangSmith's OTel exporter), the telemetry oteltest's OTLP receiver got saved as it saves it (`metric_requests`
# first, then `trace_requests[].pbreq` OTLP/JSON documents with base64 ids)
BAKEOFF = SHARED / "samples" / "traces" / "otel" / "otel-llm-bakeoff"
# what a person counts in each raw file: spans per trace; each trace is one model call answering its question
BAKEOFF_COUNTED = {"ott-llmetry.json": 6, "ott-lit.json": 2, "ott-langsmith.json": 6}
QUESTIONS = ("What is the capital of France?", "How does photosynthesis work?")


@pytest.mark.parametrize("name", sorted(BAKEOFF_COUNTED))
def test_one_chain_traced_three_ways_reads_as_the_same_two_answers(name):
    """Two traces in each file (the chain run twice), one answer each ("The capital of France is Paris.", then how
    photosynthesis works) whatever wrote the spans: OpenLLMetry's flattened `gen_ai.prompt.*` on a `ChatOpenAI.chat`
    span among five task spans, OpenLit's text events on the OpenAI client's `chat` span (LangChain's `chat` span
    around it is the same call), LangSmith's `langsmith.span.kind` `llm` run with LangChain's serialized
    messages (its prompt template's span says `chat` too, and is no call)."""
    path = require_shared_sample(BAKEOFF / name)
    assert otel.units([str(path)], lambda p: path.read_bytes()[:4096]) == [str(path)]
    records = read_records(otel, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    episodes = [r for r in records if isinstance(r, Episode)]
    assert len(episodes) == 2
    for ep, question in zip(sorted(episodes, key=lambda e: e.steps[0].timestamp), QUESTIONS):
        assert [s.action.kind for s in ep.steps] == ["message"] and ep.terminated
        assert question in ep.task and ep.agent.startswith("gpt-3.5-turbo")
        assert not ep.task.startswith("user: ")  # OpenLit's role prefix is no part of the task
        assert ep.env["trace"]["spans"] == BAKEOFF_COUNTED[name]
    first = min(episodes, key=lambda e: e.steps[0].timestamp)
    assert first.steps[0].action.text == "The capital of France is Paris."
    golden.check(records, GOLDEN / f"otel-bakeoff-{name.split('.')[0]}.json", texts="hash")


OBSERVABILITY_STACK = SAMPLES / "traces" / "otel" / "observability-stack"
LONDON = "What was the weather like in London yesterday?"


@pytest.mark.parametrize("name", ["openinference-span.json", "openllmetry-span.json"])
def test_span_documents_opensearch_stored_read_as_a_person_counts_them(name):
    """samples/traces/otel/observability-stack (PROVENANCE.md): one span of the same LangChain agent (Claude Sonnet 4
    on Bedrock) each, as OpenSearch's trace index holds it: OpenInference's LLM span with the system prompt, the
    question and the answer; OpenLLMetry's chat span with the answer alone and its model written `unknown`. Each a
    model call answering without a tool: one step."""
    path = OBSERVABILITY_STACK / name
    assert otel.units([str(path)], lambda p: path.read_bytes()[:4096]) == [str(path)]
    records = read_records(otel, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [s.action.kind for s in ep.steps] == ["message"] and ep.terminated
    assert ep.steps[0].action.text.startswith("I'd be happy to help you get the weather information for London")
    assert ep.agent == "us.anthropic.claude-sonnet-4-20250514-v1:0"
    assert ep.task == (LONDON if name.startswith("openinference") else None)
    raw = json.loads(path.read_text())
    assert ep.key == raw["traceId"] and ep.steps[0].timestamp.isoformat().startswith(raw["endTime"][:26])
    golden.check(records, GOLDEN / f"otel-observability-stack-{name.split('.')[0]}.json", env_keys=("system_prompt",))


PROMPTFLOW_SPANS = OPEN_AGENT_TRACES.parent / "assistant-pf-demo" / "spans.json"


def test_promptflow_spans_printed_by_the_sdk_read_the_model_call_of_its_llm_span():
    """data/assistant-pf-demo (PROVENANCE.md): promptflow's tracer marks its spans `framework: promptflow` with a
    `span_type`; its `LLM` span holds the call's `inputs` (the messages) and `llm.generated_message` (the answer).
    What a person counts: one model call answering "test" without the offered tool (1 step), and promptflow's
    iteration wrapper, a trace of its own with no call (one row)."""
    path = PROMPTFLOW_SPANS
    assert otel.units([str(path)], lambda p: path.read_bytes()[:4096]) == [str(path)]
    records = read_records(otel, path)
    [row] = [r for r in records if isinstance(r, Rejected)]
    assert row.rule == "no_agent_spans" and "1 of 2 traces" in row.reason
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert ep.key == "2003e6451fd0a4f57180c96bfb737ca2" and ep.task == "test" and ep.agent == "gpt-35-turbo"
    [step] = ep.steps
    assert (step.action.kind, step.action.text) == (
        "message", "It looks like you are testing the functionality. How can I assist you today?")
    assert ep.terminated and ep.env["system_prompt"].strip().startswith("You are a helpful assistant")
    assert step.timestamp.isoformat() == "2024-04-30T20:40:31.943844+00:00"  # the model span's end
    golden.check(records, GOLDEN / "otel-assistant-pf-demo-spans.json", env_keys=("system_prompt",))
