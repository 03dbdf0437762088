"""The shapes a list of chat messages is saved in, told apart by the structure of its items alone.

| shape | an item looks like |
|---|---|
| `openai_chat` | `{"role": system/developer/user/assistant/tool/function, "content": ...}`, assistant `tool_calls` (`{id, function: {name, arguments}}` or the flat `{id, name, arguments}`), tool results `role: tool` + `tool_call_id` |
| `openai_responses` | Responses API items: `{"type": "message", "role", "content": [{type: input_text/output_text}]}`, `function_call` / `function_call_output`, `reasoning`, `computer_call` / `computer_call_output`... |
| `anthropic` | Messages API: `{"role": user/assistant, "content": [blocks]}` with `tool_use` / `tool_result` / `thinking` blocks |
| `gemini` | `{"role": user/model, "parts": [{text}, {functionCall}, {functionResponse}...]}` (camelCase or snake_case) |
| `langchain` | `{"type": human/ai/system/tool, "content"...}`, `message_to_dict`'s `{"type", "data": {...}}`, or the serialized `{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs"}` |
| `autogen` | AutoGen AgentChat messages (`{"source", "type": TextMessage/ToolCallRequestEvent/...}`) and autogen-core model-context messages (`{"type": UserMessage/AssistantMessage/FunctionExecutionResultMessage...}`) |
| `smolagents` | smolagents' `write_memory_to_messages()` as dicts: `{"role": system/user/assistant/tool-call/tool-response, "content": [{type: text, text}]}` (`ingest.chat.smolagents_messages`) |

A list is a chat-message list when it has at least two items, nine in ten of them are messages of one shape
(or of shapes that mix: a plain `{"role", "content"}` message sits in an Anthropic or Responses list too), and
at least one item is the model's turn (an assistant / model / ai message, a function or computer call). That
last rule keeps out lists that only look like messages (a dataset of prompts, a list of user turns).
"""

from __future__ import annotations

SHAPES = ("openai_chat", "openai_responses", "anthropic", "gemini", "langchain", "autogen", "smolagents")
# smolagents' own roles in `write_memory_to_messages()`: a step's calls as text, and their observations
SMOLAGENTS_ROLES = frozenset({"tool-call", "tool-response"})

OPENAI_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
RESPONSES_TYPES = frozenset({
    "message", "function_call", "function_call_output", "reasoning", "computer_call", "computer_call_output",
    "web_search_call", "file_search_call", "code_interpreter_call", "local_shell_call", "local_shell_call_output",
    "custom_tool_call", "custom_tool_call_output", "mcp_call", "mcp_list_tools", "image_generation_call"})
RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
                              "web_search_tool_result"})
LANGCHAIN_TYPES = frozenset({"human", "ai", "system", "tool", "function", "chat", "AIMessageChunk"})
LANGCHAIN_CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "SystemMessage": "system", "ToolMessage": "tool",
                     "FunctionMessage": "function", "ChatMessage": "chat", "AIMessageChunk": "ai"}
AUTOGEN_TYPES = frozenset({
    "TextMessage", "MultiModalMessage", "StopMessage", "HandoffMessage", "ToolCallSummaryMessage",
    "StructuredMessage", "ToolCallRequestEvent", "ToolCallExecutionEvent", "ThoughtEvent", "MemoryQueryEvent",
    "UserInputRequestedEvent", "ModelClientStreamingChunkEvent", "SelectSpeakerEvent", "SelectorEvent",
    "CodeGenerationEvent", "CodeExecutionEvent"})
AUTOGEN_CORE_TYPES = frozenset({"SystemMessage", "UserMessage", "AssistantMessage", "FunctionExecutionResultMessage"})
# items that are the model's own turn: a list without one is not an agent's conversation
_ACTING_ROLES = frozenset({"assistant", "model", "ai"})
_ACTING_TYPES = frozenset({"function_call", "computer_call", "local_shell_call", "custom_tool_call", "ai",
                           "AssistantMessage", "ToolCallRequestEvent", "AIMessageChunk"})
# shapes whose lists may also hold plain `{"role", "content"}` messages
_MIXES_WITH_PLAIN = ("anthropic", "openai_responses", "smolagents")


def _block_types(content) -> set:
    if not isinstance(content, list):
        return set()
    return {b.get("type") for b in content if isinstance(b, dict) and isinstance(b.get("type"), str)}


def _typed_shape(item: dict, kind: str) -> str | None:
    if kind in RESPONSES_TYPES and (kind != "message" or "role" in item):
        return "openai_responses"
    if (kind in AUTOGEN_TYPES and "source" in item) or (kind in AUTOGEN_CORE_TYPES and "content" in item):
        return "autogen"
    if kind in LANGCHAIN_TYPES and ("content" in item or isinstance(item.get("data"), dict)):
        return "langchain"
    if kind == "constructor" and item.get("lc") == 1 and isinstance(item.get("id"), list) and item["id"] \
            and item["id"][-1] in LANGCHAIN_CLASSES:
        return "langchain"
    return None


def item_shape(item) -> str | None:
    """The shape of one list item, or None when it is no chat message of a known shape."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if isinstance(kind, str):
        found = _typed_shape(item, kind)
        if found:
            return found
    role = item.get("role")
    if not isinstance(role, str):
        return None
    if isinstance(item.get("parts"), list):
        return "gemini"
    if role in SMOLAGENTS_ROLES and "content" in item:
        return "smolagents"
    blocks = _block_types(item.get("content"))
    if role in ("user", "assistant") and blocks & ANTHROPIC_BLOCKS:
        return "anthropic"
    if blocks & RESPONSES_PARTS:
        return "openai_responses"
    if role in OPENAI_ROLES and ("content" in item or "tool_calls" in item or "function_call" in item):
        return "openai_chat"
    return None


def _acting(item: dict) -> bool:
    kind = item.get("type")
    if kind in _ACTING_TYPES or item.get("role") in _ACTING_ROLES or item.get("role") == "tool-call":
        return True
    if kind == "message" and item.get("role") == "assistant":
        return True
    if isinstance(item.get("data"), dict) and kind == "ai":
        return True
    if item.get("lc") == 1 and isinstance(item.get("id"), list) and item["id"][-1:] in (["AIMessage"],
                                                                                         ["AIMessageChunk"]):
        return True
    return kind in AUTOGEN_TYPES and item.get("source") not in (None, "user")


def list_shape(items) -> str | None:
    """The shape of a chat-message list, or None when `items` is not one (see the module's rules)."""
    if not isinstance(items, list) or len(items) < 2:
        return None
    shapes = [item_shape(x) for x in items]
    known = [s for s in shapes if s]
    if len(known) * 10 < len(items) * 9 or not any(_acting(x) for x, s in zip(items, shapes) if s):
        return None
    present = set(known)
    for mixed in _MIXES_WITH_PLAIN:
        if mixed in present and present <= {mixed, "openai_chat"}:
            return mixed
    return max(sorted(present), key=known.count)
