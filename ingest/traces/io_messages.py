"""An observation's `input` or `output` as chat messages, read by its structure: what Langfuse records for a
generation (its SDK's `input=` / `output=`, and its integrations' for each framework) and what its SDK exports as
`langfuse.observation.input` / `.output` (read by `ingest.traces.langfuse` and `ingest.traces.otel`).

A chat-message list in any shape `ingest.chat` knows (OpenAI Chat Completions, Responses items, Anthropic, Gemini
contents, LangChain, AutoGen; the GenAI conventions' `{role, parts: [{type...}]}`), a request or response object
around one (`messages`, `contents`, `choices`, `candidates`, a Responses object's `output`, `{message}`, `{content:
{role, parts}}`, a completion's `prompt`, LlamaIndex's `{args}`), one message, or text (a user's turn in, the
model's answer out). What frameworks write beside the shapes: the Vercel AI SDK's tool-call items, LangChain's
calls in `additional_kwargs` and its tool definitions as `tool` turns, LangChain.js's tool results with the tool's
name as their role, Koog's calls as JSON text, and a transcript written as text, one `role: content` turn after
another (`developer: ...\nuser: ...\nassistant: None\ntool: ...`: how the Langfuse SDK recorded the model calls of its
Agno and AutoGen integrations): its turns, an assistant's `None` (Python's text for a turn that only called tools)
being no text. A dict that is no message and no known wrapper gives none.
"""

from __future__ import annotations

from ingest.chat.by_shape import messages_of
from ingest.chat.messages import Context
from ingest.chat.shapes import OPENAI_ROLES, item_shape
from ingest.traces import genai
from ingest.transcript import Message

def tools_only_answer(input_value, output_value) -> bool:
    """Whether a model call's `output` is the text `None` its writer put for an answer that only called tools: the
    writer that records the call's messages as a transcript written as text (`genai.role_turns`)."""
    value = genai.json_value(input_value)
    return output_value == "None" and isinstance(value, str) and genai.role_turns(value) is not None


def _unwrap(value):
    """The chat-message list (or one message, or text) inside a request or response object."""
    if not isinstance(value, dict):
        return value
    if isinstance(value.get("prompt"), str) and "role" not in value:  # a completion's prompt (Vercel AI SDK)
        return value["prompt"]
    args = value.get("args")
    if set(value) == {"args"} and isinstance(args, list) and args and all(isinstance(a, str) for a in args):
        return "\n\n".join(args)  # LlamaIndex's `complete(prompt)` arguments
    for key in ("messages", "contents", "input"):
        if isinstance(value.get(key), list):
            return value[key]
    if isinstance(value.get("contents"), str):  # google-genai's `generate_content(contents="...")`
        return value["contents"]
    if isinstance(value.get("choices"), list):  # an OpenAI Chat Completions response
        return [c.get("message") for c in value["choices"] if isinstance(c, dict) and c.get("message")]
    if isinstance(value.get("candidates"), list):  # a Gemini response
        return [{"role": "model", **c["content"]} for c in value["candidates"]
                if isinstance(c, dict) and isinstance(c.get("content"), dict)]
    if value.get("object") == "response" and isinstance(value.get("output"), list):  # a Responses object
        return value["output"]
    for key in ("message", "content"):
        if isinstance(value.get(key), dict) and ("role" in value[key] or "parts" in value[key]):
            return value[key]
    return value


def _genai_parts(items: list) -> bool:
    """Whether a list is the GenAI conventions' `{role, parts: [{type: ...}]}` messages (not Gemini's parts)."""
    parts = [p for m in items if isinstance(m, dict) and isinstance(m.get("parts"), list) for p in m["parts"]]
    return bool(parts) and all(isinstance(p, dict) and "type" in p for p in parts)


def _normalized(item):
    """One list item in the form the chat shapes read: a Vercel AI SDK tool-call item as an assistant turn, tool
    calls LangChain's callback left in `additional_kwargs` on the message; None for a tool's definition that
    Langfuse's LangChain callback lists as a `tool` message."""
    if not isinstance(item, dict):
        return item
    if isinstance(item.get("toolName"), str) and "toolCallId" in item and "role" not in item:
        arguments = item.get("input", item.get("args"))
        return {"role": "assistant", "tool_calls": [{"id": item["toolCallId"], "type": "function", "function": {
            "name": item["toolName"], "arguments": arguments}}]}
    calls = _calls_in_text(item.get("content")) if item.get("role") in ("assistant", "tool") else None
    if calls:  # Koog writes the model's tool calls as their JSON in the content (in its input as a `tool` turn)
        return {"role": "assistant", "tool_calls": calls}
    extra = item.get("additional_kwargs")
    if isinstance(extra, dict) and isinstance(extra.get("tool_calls"), list) and not item.get("tool_calls"):
        item = {**item, "tool_calls": extra["tool_calls"]}
    content = item.get("content")
    if item.get("role") == "tool" and isinstance(content, dict) and content.get("type") == "function" and \
            isinstance(content.get("function"), dict):
        return None
    return item


def _calls_in_text(content) -> list | None:
    """The OpenAI tool calls a content string holds as JSON (`[{"function": {"name", "arguments"}, "id", "type":
    "function"}]`), or None."""
    if not isinstance(content, str) or not content.startswith('[{"function"'):
        return None
    value = genai.json_value(content)
    if isinstance(value, list) and value and all(isinstance(c, dict) and isinstance(c.get("function"), dict)
                                                 for c in value):
        return value
    return None


def _tool_turns(items: list) -> list:
    """LangChain.js's callback writes a tool's result with the tool's name as its role: such a turn after a call of
    that name is a `tool` turn."""
    called: set[str] = set()
    out = []
    for item in items:
        if isinstance(item, dict):
            called.update(c["function"].get("name") for c in item.get("tool_calls") or []
                          if isinstance(c, dict) and isinstance(c.get("function"), dict))
            role = item.get("role")
            if isinstance(role, str) and role in called and role not in OPENAI_ROLES:
                item = {**item, "role": "tool", "name": role}
        out.append(item)
    return out


def io_messages(value, role: str, ctx: Context, where: str) -> list[Message]:
    """What an observation's `input` (role `user`) or `output` (role `assistant`) says, as messages."""
    value = _unwrap(genai.json_value(value))
    if isinstance(value, str) and role == "user":
        value = genai.role_turns(value) or value
    if isinstance(value, str):
        return [Message(role=role, text=value, where=where)] if value.strip() else []
    if isinstance(value, dict):
        if item_shape(value) is None and not isinstance(value.get("role"), str):
            return []  # no message (the Claude Agent SDK's instrumentation records `{"content": "role"}`)
        value = [value]
    if not isinstance(value, list):
        return []
    items = [_normalized(m) for item in value for m in (item if isinstance(item, list) else [item])]
    items = _tool_turns([m for m in items if m is not None])
    if _genai_parts(items):
        return genai.genai_messages(items, where)
    shapes = [s for s in (item_shape(i) for i in items) if s]
    if not shapes:
        return genai.chat_messages(items, where)
    shape = max(sorted(set(shapes)), key=shapes.count)
    return messages_of(shape, items, ctx, where)
