"""Agent frameworks' own message dicts as `ingest.transcript` messages: LangChain and AutoGen.

- LangChain: `{"type": human/ai/system/tool, "content", ...}` (`message_to_dict` nests the fields under
  `data`; the serializer writes `{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs"}`). An
  `ai` message's `tool_calls` are `{name, args, id}` (older ones only in `additional_kwargs.tool_calls`, the
  OpenAI form); its model is `response_metadata.model_name` (or `model`); a `tool` message answers
  `tool_call_id`, `status: error` marking a failed call.
- AutoGen AgentChat: `{"source", "type", "content", "models_usage"...}`. `TextMessage` / `MultiModalMessage` /
  `HandoffMessage` / `StopMessage` / `ToolCallSummaryMessage` / `StructuredMessage` from the `user` source are
  the user's, from any other source an agent's turn (the source in `raw`); `ToolCallRequestEvent` holds
  `FunctionCall`s `{id, name, arguments}`, `ToolCallExecutionEvent` their `FunctionExecutionResult`s
  `{call_id, content, is_error, name}`; a `ThoughtEvent` is the reasoning of the agent's next turn. The
  autogen-core model context (`SystemMessage`, `UserMessage`, `AssistantMessage` whose `content` is text or
  `FunctionCall`s with its `thought`, `FunctionExecutionResultMessage`) maps the same way. Other events
  (`MemoryQueryEvent`, `UserInputRequestedEvent`, streaming chunks, speaker selection) are kept raw with a
  warning by the transcript core.
"""

from __future__ import annotations

from ingest.chat.messages import Context, content_text, guarded, leftover, openai_calls, tool_call
from ingest.chat.shapes import LANGCHAIN_CLASSES
from ingest.times import parse_time
from ingest.tools import dumps
from ingest.transcript import Message

_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool",
                    "chat": "user", "AIMessageChunk": "assistant"}


def _langchain_fields(item: dict) -> tuple[str, dict]:
    if item.get("lc") == 1 and item.get("type") == "constructor":
        return LANGCHAIN_CLASSES.get(item["id"][-1], "chat"), item.get("kwargs") or {}
    if isinstance(item.get("data"), dict) and "content" not in item:
        return item.get("type"), item["data"]
    return item.get("type"), item


def langchain(ctx: Context, item: dict, where: str) -> list[Message]:
    kind, d = _langchain_fields(item)
    role = _LANGCHAIN_ROLES.get(kind, "user")
    text = content_text(d.get("content"))
    extra = d.get("additional_kwargs") if isinstance(d.get("additional_kwargs"), dict) else {}
    meta = d.get("response_metadata") if isinstance(d.get("response_metadata"), dict) else {}
    raw = leftover(d, ("type", "content", "tool_calls", "tool_call_id", "name", "additional_kwargs"))
    if role == "assistant":
        calls = [tool_call(ctx, c.get("id"), c.get("name"), c.get("args"), c) for c in d.get("tool_calls") or []
                 if isinstance(c, dict)] or openai_calls(ctx, extra)
        model = meta.get("model_name") or meta.get("model")
        reasoning = extra.get("reasoning_content")
        return [Message("assistant", text=text, tool_calls=calls, model=model if isinstance(model, str) else None,
                        reasoning=reasoning if isinstance(reasoning, str) else None, raw=raw, where=where)]
    if role == "tool":
        return [Message("tool", text=text, tool_call_id=d.get("tool_call_id"), tool_name=d.get("name"),
                        is_error=True if d.get("status") == "error" else None, raw=raw, where=where)]
    return [Message(role, text=text, raw=raw, where=where)]


# --- AutoGen ------------------------------------------------------------------------------------------------

def _function_calls(ctx: Context, content) -> list:
    return [tool_call(ctx, c.get("id"), c.get("name"), c.get("arguments"), c) for c in content or []
            if isinstance(c, dict)]


def _results(content, stamp, where: str) -> list[Message]:
    return [Message("tool", text=r.get("content") if isinstance(r.get("content"), str) else dumps(r.get("content")),
                    tool_call_id=r.get("call_id"), tool_name=r.get("name"), is_error=bool(r.get("is_error")) or None,
                    timestamp=stamp, where=where)
            for r in content or [] if isinstance(r, dict)]


def _model(item: dict) -> str | None:
    usage = item.get("models_usage")
    return None if not isinstance(usage, dict) else usage.get("model") if isinstance(usage.get("model"), str) else None


_AGENT_TEXT = ("TextMessage", "MultiModalMessage", "HandoffMessage", "StopMessage", "ToolCallSummaryMessage",
               "StructuredMessage")


def _autogen_item(ctx: Context, item: dict, at: str, state: dict) -> list[Message]:
    """The messages of one AutoGen item (`state["thought"]`: a ThoughtEvent's text waiting for its turn)."""
    kind, source, content = item.get("type"), item.get("source"), item.get("content")
    stamp = parse_time(item.get("created_at"))
    raw = leftover(item, ("type", "content", "created_at"))
    if kind == "ThoughtEvent":
        state["thought"] = content_text(content)
        return []
    thought, state["thought"] = state["thought"], None
    reasoning = item.get("thought") if isinstance(item.get("thought"), str) else thought
    if kind == "ToolCallRequestEvent" or (kind == "AssistantMessage" and isinstance(content, list)):
        return [Message("assistant", tool_calls=_function_calls(ctx, content), reasoning=reasoning, timestamp=stamp,
                        raw=raw, where=at)]
    if kind in ("ToolCallExecutionEvent", "FunctionExecutionResultMessage"):
        return _results(content, stamp, at)
    if kind == "SystemMessage":
        return [Message("system", text=content_text(content), raw=raw, where=at)]
    if kind == "UserMessage" or (kind != "AssistantMessage" and source == "user"):
        return [Message("user", text=content_text(content), timestamp=stamp, raw=raw, where=at)]
    if kind == "AssistantMessage" or kind in _AGENT_TEXT:
        return [Message("assistant", text=content_text(content), reasoning=reasoning, model=_model(item),
                        timestamp=stamp, raw=raw, where=at)]
    state["thought"] = thought  # an event that is no turn: the thought waits for the next one
    return [Message(f"autogen:{kind}", text=content_text(content), raw=raw, where=at)]


def autogen(ctx: Context, items: list, where: str) -> list[Message]:
    """The messages of a whole AutoGen list (a `ThoughtEvent` lends its text to the next agent turn)."""
    out: list[Message] = []
    state: dict = {"thought": None}
    for i, item in enumerate(items):
        out += guarded(ctx, lambda c, it, at: _autogen_item(c, it, at, state), item, f"{where}[{i}]")
    return out
