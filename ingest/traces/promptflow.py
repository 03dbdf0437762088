"""promptflow's own span attributes (its tracer, `promptflow.tracing`, on any OpenTelemetry exporter): every span it
writes says `framework: promptflow` and a `span_type`; a model call is `span_type: LLM` (the client's call, its
`function` the client method), a tool `span_type: Tool`, and the flow's own functions `Function` / `Flow`, which are
no steps.

- a model call: `inputs` (JSON: the call's keyword arguments, the Chat Completions `messages`, `model`, `tools`),
  `llm.generated_message` (JSON: the answer's message, `{content, role, tool_calls, function_call}`), the model
  in `llm.response.model` (else the request's `model`), the usage in `llm.usage.*` (kept with the span's
  attributes);
- a tool: its name in `function` (else the span's name), `inputs` (JSON: its arguments by name), `output` (JSON:
  what it returned).
"""

from __future__ import annotations

from ingest.traces.genai import ModelTurn, ToolUse, chat_message, chat_messages, json_value, name_of, text_of
from ingest.traces.spans import Span

FRAMEWORK = "promptflow"
_KINDS = {"LLM": "model", "Tool": "tool"}


def writes(attrs: dict) -> bool:
    """A span promptflow's tracer wrote as a model call or a tool."""
    return attrs.get("framework") == FRAMEWORK and attrs.get("span_type") in _KINDS


def read_otel_span(span: Span, attrs: dict, where: str) -> None:
    span.kind = _KINDS[attrs["span_type"]]
    inputs = json_value(attrs.get("inputs"))
    if span.kind == "model":
        request = inputs if isinstance(inputs, dict) else {}
        answer = chat_message(json_value(attrs.get("llm.generated_message")), f"{where}.llm.generated_message")
        model = next((m for m in (attrs.get("llm.response.model"), request.get("model")) if isinstance(m, str) and m),
                     None)
        span.model = ModelTurn(inputs=chat_messages(request.get("messages"), f"{where}.inputs.messages"),
                               outputs=[answer] if answer else [], model=model)
        return
    output = json_value(attrs.get("output"))
    span.tool = ToolUse(name=name_of(attrs.get("function")) or span.name or None, arguments=inputs,
                        result=text_of(output if output is not None else span.error),
                        is_error=True if span.error else None)
