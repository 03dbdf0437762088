"""Runs an OpenAI Agents SDK agent against the scripted model server and writes its trace two ways.

Run with the `openai-agents` venv's Python: `agents_run.py BASE_URL OUT_DIR MODE` (MODE: `chat` (the Chat
Completions model), `responses` (the Responses model) or `handoff` (a triage agent that hands off to the weather
agent, Chat Completions)). Writes `OUT_DIR/spans.jsonl` (a trace processor writing `Trace.export()` /
`Span.export()` as JSON lines) and, through the SDK's own `BackendSpanExporter` posting to the server, the payloads
the server keeps; and OpenInference's Agents SDK instrumentation turns the same run into OpenTelemetry spans,
written as OTLP/JSON to `OUT_DIR/otlp.jsonl`. Prints the run's final output.
"""

import asyncio
import json
import sys
from pathlib import Path

from openai import AsyncOpenAI

from agents import (Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool,
                    set_trace_processors)
from agents.tracing import TracingProcessor
from agents.tracing.processors import BackendSpanExporter, BatchTraceProcessor
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otlp_json_file import OtlpJsonFile  # beside this script


class FileProcessor(TracingProcessor):
    """A trace processor that writes every trace and finished span to a JSON lines file."""

    def __init__(self, path: Path):
        self.out = path.open("w")

    def on_trace_start(self, trace):
        self.out.write(json.dumps(trace.export()) + "\n")

    def on_trace_end(self, trace):
        pass

    def on_span_start(self, span):
        pass

    def on_span_end(self, span):
        self.out.write(json.dumps(span.export()) + "\n")

    def shutdown(self):
        self.out.close()

    def force_flush(self):
        self.out.flush()


@function_tool
def get_weather(city: str) -> str:
    """The current weather of a city."""
    return f"The weather in {city} is sunny, 21 C."


def main(base_url: str, out_dir: str, mode: str) -> None:
    out = Path(out_dir)
    client = AsyncOpenAI(base_url=base_url, api_key="x")
    backend = BatchTraceProcessor(BackendSpanExporter(api_key="x", endpoint=base_url + "/traces/ingest"))
    files = FileProcessor(out / "spans.jsonl")
    set_trace_processors([files, backend])
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agents"}))
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFile(out / "otlp.jsonl")))
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider, exclusive_processor=False)
    model_class = OpenAIResponsesModel if mode == "responses" else OpenAIChatCompletionsModel
    model = model_class(model="scripted-model-1", openai_client=client)
    weather = Agent(name="Weather agent", instructions="Answer weather questions with the tool.",
                    tools=[get_weather], model=model)
    agent = weather
    if mode == "handoff":
        agent = Agent(name="Triage agent", instructions="Hand weather questions to the weather agent.",
                      handoffs=[weather], model=model)
    result = asyncio.run(Runner.run(agent, "What is the weather in Paris and in Oslo?"))
    backend.force_flush()
    backend.shutdown()
    files.shutdown()
    provider.shutdown()
    print(result.final_output)


if __name__ == "__main__":
    main(*sys.argv[1:4])
