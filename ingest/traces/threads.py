"""Earlier turns of a conversation in a trace: context, not the trace's actions. The one rule every trace reader's
assembly (`ingest.traces.spans`) applies to the first model call of a trace's episode.

A chat app traced one trace per user turn sends the model the whole conversation in each trace: the first model
call of turn N's trace is given turns 1..N-1 (their answers, tool calls and results) before turn N's user message.
Read as steps, every earlier turn's actions would come again in each later trace of the conversation (a dataset
would hold the same transition many times). Where the rule below applies, what that first call is given up to its
last assistant turn is context: `env["trace"]["history_messages"]` counts it (the messages stay in the model's
input as the source wrote it; none is dropped from env), `env["trace"]["earlier_turns"]` says by which evidence,
and the episode's task is the user message after them. Sub-episodes (an agent handed a conversation) keep theirs
the same way (`ingest.traces.spans`).

1. **By a thread id** (applies first): the trace names the conversation it belongs to. A span attribute of
   `THREAD_ATTRIBUTES` (`gen_ai.conversation.id`; OpenInference's `session.id`; Langfuse's `langfuse.session.id`;
   LangSmith's thread metadata `thread_id` / `session_id` / `conversation_id` as its OpenTelemetry exporter writes
   them; Google ADK's `gcp.vertex.agent.session_id`), or what the decoder found in the trace's own record
   (Langfuse's `sessionId`; a LangSmith run's `extra.metadata` thread keys; the OpenAI Agents SDK's trace
   `group_id`), passed as `thread`.
2. **By structure** (no id), only where it is unambiguous: the first model call's input holds assistant turns with
   tool calls, none of which a tool span of this trace ran (by call id; a call or span without an id, by tool
   name), and every assistant turn of that input lies before its last user message. No first model call of an
   agent loop is given tool calls it has not made, so those are earlier turns.
3. **Otherwise** the earlier assistant turns stay steps, and the episode gets one `ambiguous_history` warning
   (`env["ingest_warnings"]`) naming why: an assistant turn after the input's last user message (the trace may
   have lost its own earlier model calls), a call one of the trace's tool spans ran, or earlier turns with no tool
   call to check against the trace's tool spans."""

from __future__ import annotations

from typing import Iterable

from ingest.traces.genai import ToolUse
from ingest.transcript import Message

THREAD_ATTRIBUTES = ("gen_ai.conversation.id", "session.id", "langfuse.session.id", "langsmith.metadata.thread_id",
                     "langsmith.metadata.session_id", "langsmith.metadata.conversation_id",
                     "gcp.vertex.agent.session_id")
THREAD_METADATA = ("thread_id", "session_id", "conversation_id")  # LangSmith's thread keys in a run's metadata


def thread_of(attribute_sets: Iterable[dict]) -> tuple[str, str] | None:
    """(the attribute, the thread id) the first span naming a conversation names, or None."""
    for attrs in attribute_sets:
        for key in THREAD_ATTRIBUTES:
            value = attrs.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                return key, str(value)
    return None


def metadata_thread(metadata) -> tuple[str, str] | None:
    """(`metadata.<key>`, the id) of LangSmith's thread keys in a run's metadata, or None."""
    if not isinstance(metadata, dict):
        return None
    found = thread_of([{f"langsmith.metadata.{k}": v for k, v in metadata.items()}])
    return (found[0].replace("langsmith.", "", 1), found[1]) if found else None


def last_assistant(inputs: list[Message]) -> int:
    """The index of the input's last assistant turn (-1: none): the earlier turns end there."""
    return max((i for i, m in enumerate(inputs) if m.role == "assistant"), default=-1)


def _ran_here(inputs: list[Message], uses: list[ToolUse]) -> list[str]:
    """The earlier turns' calls a tool span of this trace ran (their names)."""
    ids = {u.call_id for u in uses if u.call_id is not None}
    names = {u.name for u in uses if u.name}
    unnamed = {u.name for u in uses if u.call_id is None and u.name}
    return [c.name or str(c.id) for m in inputs if m.role == "assistant" for c in m.tool_calls
            if (c.id is not None and c.id in ids) or (c.id is None and c.name in names) or c.name in unnamed]


def earlier_turns(inputs: list[Message], thread: tuple[str, str] | None,
                  uses: list[ToolUse]) -> tuple[dict | None, str | None]:
    """Whether the first model call's input holds earlier turns that are context: (the evidence for env, None), or
    (None, why they stay steps), or (None, None) where it holds no assistant turn."""
    last = last_assistant(inputs)
    if last < 0:
        return None, None
    turns = sum(m.role == "assistant" for m in inputs)
    if thread is not None:
        return {"rule": "thread_id", "attribute": thread[0], "thread_id": thread[1]}, None
    last_user = max((i for i, m in enumerate(inputs) if m.role == "user"), default=-1)
    ran = _ran_here(inputs, uses)
    calls = sum(len(m.tool_calls) for m in inputs if m.role == "assistant")
    if last > last_user:
        why = "its last assistant turn comes after its last user message (the trace may have lost its own model calls)"
    elif ran:
        why = f"tool spans of this trace ran calls they hold ({', '.join(ran[:5])})"
    elif not calls:
        why = "they hold no tool call to check against this trace's tool spans"
    else:
        return {"rule": "structure", "tool_calls": calls}, None
    return None, (f"the first model call's input holds {turns} assistant turn(s) and the trace names no "
                  f"conversation id; kept as steps: {why}")
