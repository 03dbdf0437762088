"""BeeAI Framework's ReAct agent as OpenInference's BeeAI instrumentation (0.1.x) traces it: every event the
agent's emitter sends is a span of its own, named after the event and its number (`agent.react.start-4`,
`agent.react.update-13`, `backend.openai.chat.start-14`, `tool.search.wikipedia.success-12`), the event's path in
the attribute `target` and nearly all of them marked `openinference.span.kind` `AGENT`. Read as they are, each would
be an agent of its own and the streamed chunks of an answer (`llm.output_messages.N` of the `chat.success` event,
one chunk each) as many answers.

One iteration of the loop (a span `iteration-N`) holds: `agent.react.start` (the messages the model is sent),
`backend.<provider>.chat.start` (the model call: its input messages and `llm.model_name`), `agent.react.update` /
`partial_update` events as the answer streams in, each holding what is parsed so far (`thought`, `tool.name`,
`tool.parameters`, and once known `output.value`: the tool's result, or the final answer where no tool is named),
the tool's own `tool.<...>.start/success/finish` events and `backend.<provider>.chat.success/finish`. The iteration's
last update says what the agent did: a tool call with its result, or its answer, the `thought` being its reasoning.
Every event span ends when the run ends (its end says nothing of the event): the call is known at the first update
that names its tool, the tool's result and the answer at the last update.

So, per iteration, the `chat.start` event is the model call (its inputs and model as the decoder read them), its
answer the last update's call or answer; the last update is the tool's execution with its result; every other event
span is no step (kept with the other spans), and no event span is an agent of its own. The run's root span
(`beeai-framework-main`) stays the agent. Spans without BeeAI's event attributes are left as they are.
"""

from __future__ import annotations

import re

from ingest.traces.genai import ModelTurn, ToolUse, json_value, name_of, text_of
from ingest.transcript import Message, ToolCall

_ITERATION = re.compile(r"iteration-\d+")
_UPDATES = ("agent.react.update", "agent.react.partial_update")
_CHAT_START = re.compile(r"backend\.[\w-]+\.chat\.start")
# an event span's name: the event's path and its number (`tool.search.wikipedia.success-12`)
_EVENT_NAME = re.compile(r"((?:[\w-]+\.)+[\w-]+)-\d+")


def _target(span) -> str | None:
    """The event's path: its `target`, else its name without the number (an event with many attributes, such as
    a streamed answer's `chat.success`, can reach the exporter without its first ones)."""
    target = span.attributes.get("target")
    if isinstance(target, str):
        return target
    found = _EVENT_NAME.fullmatch(span.name or "")
    return found.group(1) if found else None


def _iteration(span, by_id: dict) -> str | None:
    """The span id of the `iteration-N` span the event lies in."""
    current, seen = span, set()
    while current is not None and current.span_id not in seen:
        if _ITERATION.fullmatch(current.name or ""):
            return current.span_id
        seen.add(current.span_id)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return None


def _order(span) -> tuple:
    return (span.start.timestamp() if span.start else float("-inf"), span.order)


def _action(updates: list, model_span, model: ModelTurn | None, call_id: str) -> None:
    """The iteration's model call answers with what its last update says; the update is the tool's execution."""
    update = updates[-1]
    attrs = update.attributes
    thought = attrs.get("thought")
    thought = thought.strip() if isinstance(thought, str) and thought.strip() else None
    tool = name_of(attrs.get("tool.name"))
    arguments = json_value(attrs.get("tool.parameters"))
    output = json_value(attrs.get("output.value"))
    if tool:
        answer = Message(role="assistant", reasoning=thought, where=update.where,
                         tool_calls=[ToolCall(id=call_id, name=tool, arguments=arguments)])
        update.kind = "tool"
        update.tool = ToolUse(name=tool, call_id=call_id, arguments=arguments, result=text_of(output))
    else:
        answer = Message(role="assistant", text=text_of(output), reasoning=thought, where=update.where)
    # every event span ends when the run ends: the answer is known at the first update naming its tool (else at the
    # last update), the tool's result at the last update
    known = next((u for u in updates if tool and name_of(u.attributes.get("tool.name")) == tool), update)
    update.end = update.start
    if model_span is not None:
        model_span.end = known.start
        model = model or ModelTurn()
        model_span.kind = "model"
        model_span.model = ModelTurn(inputs=model.inputs, outputs=[answer], model=model.model or name_of(
            model_span.attributes.get("llm.model_name")))


def read_react_events(spans: list) -> None:
    """Rewrites, in place, the kinds of a trace's BeeAI event spans (see the module's docstring)."""
    events = [s for s in spans if _target(s)]
    if not any(_target(s) in _UPDATES for s in events):
        return
    by_id = {s.span_id: s for s in spans}
    models = {s.span_id: s.model for s in events}  # what the decoder read of each call, before it is undone
    iterations: dict[str, list] = {}
    for span in events:
        span.kind, span.model, span.tool = None, None, None
        iterations.setdefault(_iteration(span, by_id), []).append(span)
    for span in spans:
        if _ITERATION.fullmatch(span.name or "") and span.kind == "agent":
            span.kind = None
    for iteration, members in iterations.items():
        if iteration is None:
            continue
        updates = sorted((s for s in members if _target(s) in _UPDATES), key=_order)
        if not updates:
            continue
        chats = sorted((s for s in members if _CHAT_START.fullmatch(_target(s) or "")), key=_order)
        chat = chats[-1] if chats else None
        _action(updates, chat, models.get(chat.span_id) if chat else None, f"{iteration}:{updates[-1].span_id}")
