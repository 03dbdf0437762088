"""Runs smolagents agents against the scripted model server and saves their memory the ways people do.

Run with a `smolagents` venv's Python: `smolagents_run.py BASE_URL OUT_DIR MODE` (MODE: `tool` (a
ToolCallingAgent with a `get_weather` tool) or `code` (a CodeAgent whose code calls the same tool; with a
planning step where the release has `planning_interval`)). Writes `OUT_DIR/steps.json`
(`agent.memory.get_full_steps()`, as `json.dump` with a `default` that turns the release's dataclasses into
dicts, as a user saving them must for 1.15) and `OUT_DIR/result.json` (`agent.run(..., return_full_result=True)`'s
`RunResult.dict()`, on releases that have it) and `OUT_DIR/answers.jsonl`, the line smolagents' benchmark script
(`examples/smolagents_benchmark/run.py`) appends for a question, its `intermediate_steps` being
`[m.dict() for m in agent.write_memory_to_messages()]` (that list alone also in `OUT_DIR/messages.json`); where
the venv has OpenInference's smolagents instrumentation, the run is also traced as OpenTelemetry spans written as
OTLP/JSON lines to `OUT_DIR/otlp.jsonl`. Prints the run's final output.
"""

import json
import sys
from dataclasses import asdict, is_dataclass
from pathlib import Path

import smolagents
from smolagents import CodeAgent, OpenAIServerModel, ToolCallingAgent, tool

TASK = "What is the weather in Paris and in Oslo?"


@tool
def get_weather(city: str) -> str:
    """Tells the weather in a city.

    Args:
        city: the city's name
    """
    return f"The weather in {city} is sunny, 21 C."


def plain(value):
    """What `json.dump` cannot write itself: a 1.15 `ChatMessage` (its `dict()` fails on the client's raw
    response; `model_dump_json()` leaves that out), a dataclass, bytes."""
    if hasattr(value, "model_dump_json"):
        return json.loads(value.model_dump_json())
    if hasattr(value, "dict"):
        return value.dict()
    if is_dataclass(value):
        return asdict(value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return str(value)


def traced(out: Path):
    """The tracer provider writing `out/otlp.jsonl`, or None where the instrumentation is not installed."""
    try:
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    except ImportError:
        return None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "traces" / "producers"))
    from otlp_json_file import OtlpJsonFile  # the trace producers' exporter, shared

    provider = TracerProvider(resource=Resource.create({"service.name": "smolagents-weather"}))
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFile(out / "otlp.jsonl")))
    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    return provider


def main(base_url: str, out: Path, mode: str) -> None:
    provider = traced(out)
    model = OpenAIServerModel(model_id="scripted-model-1", api_base=base_url, api_key="sk-scripted")
    current = tuple(int(p) for p in smolagents.__version__.split(".")[:2]) >= (1, 20)
    if mode == "tool":
        agent = ToolCallingAgent(tools=[get_weather], model=model, max_steps=5)
    else:
        agent = CodeAgent(tools=[get_weather], model=model, max_steps=5, planning_interval=3 if current else None)
    if current:
        result = agent.run(TASK, return_full_result=True)
        (out / "result.json").write_text(json.dumps(result.dict(), default=plain, indent=1))
        output = result.output
    else:
        output = agent.run(TASK)
    (out / "steps.json").write_text(json.dumps(agent.memory.get_full_steps(), default=plain, indent=1))
    steps = [m.dict() if hasattr(m, "dict") else m for m in agent.write_memory_to_messages()]
    answer = {"model_id": model.model_id, "agent_action_type": "tool-calling" if mode == "tool" else "code",
              "question": TASK, "original_question": TASK, "answer": str(output),
              "true_answer": "Sunny in Paris and in Oslo.", "source": "scripted", "intermediate_steps": steps,
              "token_counts": agent.monitor.get_total_token_counts()}
    (out / "answers.jsonl").write_text(json.dumps(answer, default=plain) + "\n")
    (out / "messages.json").write_text(json.dumps(steps, default=plain, indent=1))
    if provider is not None:
        provider.shutdown()
    print(output)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), sys.argv[3])
