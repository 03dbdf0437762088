"""The OpenTelemetry reader on real span dumps of agent apps: any-agent's saved `AgentTrace`s of one task run
through four frameworks (samples/traces/otel/any-agent, PROVENANCE.md: the SDK's span fields with integer ids and
nanosecond times, any-agent's GenAI attributes), against goldens a person read against the raw files."""

import json

import pytest

from ingest.record import Episode, Rejected
from ingest.traces import otel
from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.ingest.golden import read_records
from tests.ingest.traces.test_langfuse_read import GOLDEN

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
