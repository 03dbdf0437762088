"""Runs a small tool-calling loop on an instrumented `openai` client under the OpenTelemetry SDK, against the
scripted model server, and writes the spans two ways.

Run with the `opentelemetry-sdk` venv's Python: `otel_run.py BASE_URL OUT_DIR MODE`. MODE `tool-spans`: OpenInference's
instrumentation, the app records each tool's execution as an OpenInference TOOL span; `model-spans`: OpenInference,
only the model calls are traced; `genai`: OpenTelemetry's own `openai_v2` instrumentation on the latest GenAI
conventions with message content on the spans, the agent and each tool's execution recorded through
`opentelemetry-util-genai`'s handler (`invoke_agent` and `execute_tool` spans); `openllmetry`: Traceloop's
`opentelemetry-instrumentation-openai` (OpenLLMetry), only the model calls traced.
Writes `OUT_DIR/console.json` (the SDK's `ConsoleSpanExporter`, its own indented span JSON) and
`OUT_DIR/otlp.jsonl` (each batch as OTLP/JSON through the SDK's protobuf encoder). Prints the final answer.
"""

import json
import os
import sys
from pathlib import Path

from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from otlp_json_file import OtlpJsonFile  # beside this script

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The current weather of a city.",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]


def get_weather(city: str) -> str:
    return f"The weather in {city} is sunny, 21 C."


def main(base_url: str, out_dir: str, mode: str) -> None:
    out = Path(out_dir)
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-app"}))
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=(out / "console.json").open("w"))))
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFile(out / "otlp.jsonl")))
    client = OpenAI(base_url=base_url, api_key="x")
    question = "What is the weather in Paris and in Oslo?"
    messages = [{"role": "system", "content": "Answer weather questions with the tool."},
                {"role": "user", "content": question}]
    if mode == "genai":
        answer = _genai_loop(provider, client, messages)
    elif mode == "openllmetry":  # Traceloop's instrumentation: flattened gen_ai.prompt / gen_ai.completion
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as OpenLLMetryInstrumentor

        OpenLLMetryInstrumentor().instrument(tracer_provider=provider)
        answer = _loop(client, messages, lambda call: get_weather(**json.loads(call.function.arguments)))
    else:
        OpenAIInstrumentor().instrument(tracer_provider=provider)
        tracer = provider.get_tracer("weather-app")
        with tracer.start_as_current_span("weather agent", attributes={"openinference.span.kind": "AGENT",
                                                                       "input.value": question}):
            answer = _loop(client, messages, lambda call: _run_tool(tracer, call, mode == "tool-spans"))
    provider.shutdown()
    print(answer)


def _loop(client, messages, run_tool) -> str:
    while True:
        reply = client.chat.completions.create(model="scripted-model-1", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": run_tool(call)})


def _genai_loop(provider, client, messages) -> str:
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as GenAIInstrumentor
    from opentelemetry.util.genai.handler import TelemetryHandler

    GenAIInstrumentor().instrument(tracer_provider=provider)
    handler = TelemetryHandler(tracer_provider=provider)

    def run_tool(call) -> str:
        with handler.tool(call.function.name, tool_call_id=call.id, tool_type="function") as tool:
            tool.arguments = json.loads(call.function.arguments)
            tool.tool_result = get_weather(**tool.arguments)
            return tool.tool_result

    with handler.invoke_local_agent(agent_name="weather agent", request_model="scripted-model-1"):
        return _loop(client, messages, run_tool)


def _run_tool(tracer, call, traced: bool) -> str:
    args = json.loads(call.function.arguments)
    if not traced:
        return get_weather(**args)
    with tracer.start_as_current_span(call.function.name, attributes={
            "openinference.span.kind": "TOOL", "tool.name": call.function.name,
            "input.value": call.function.arguments}) as span:
        result = get_weather(**args)
        span.set_attribute("output.value", result)
        return result


if __name__ == "__main__":
    main(*sys.argv[1:4])
