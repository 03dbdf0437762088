"""OpenAI Responses API items as `ingest.transcript` messages.

The model's items of one turn (`reasoning`, an assistant `message`, `function_call`, `computer_call`, the
built-in tools' `*_call` items) follow each other; they are joined into one assistant turn until an item of
the other side (a user or system `message`, a `function_call_output`, a `computer_call_output`) comes. A
`reasoning` item's summary (and its `content`, where saved) is the turn's reasoning. A built-in tool call
(`web_search_call`, `file_search_call`, `code_interpreter_call`, `mcp_call`...) is a tool call named by its
type with its `action` (or the item) as arguments; the item's own `output` / `results`, where saved, is its
result. A `computer_call` is a GUI action (`ingest.chat.computer_use`), its `computer_call_output` screenshot
the next screen.
"""

from __future__ import annotations

from ingest.chat.messages import Context, content_text, guarded, leftover, screenshot, tool_call
from ingest.record import Observation
from ingest.tools import dumps
from ingest.transcript import Message

_RESULT_TYPES = ("function_call_output", "computer_call_output", "local_shell_call_output", "custom_tool_call_output")


def _reasoning(item: dict) -> str | None:
    texts = [p.get("text") for key in ("summary", "content") for p in item.get(key) or []
             if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n\n".join(texts) if texts else None


def _computer_output(ctx: Context, item: dict) -> Observation | None:
    output = item.get("output") if isinstance(item.get("output"), dict) else {}
    obs = screenshot(ctx, output.get("image_url"))
    if obs is not None:
        obs.url = item.get("current_url") if isinstance(item.get("current_url"), str) else None
    return obs


def _builtin_call(ctx: Context, item: dict, kind: str):
    args = item.get("action") if isinstance(item.get("action"), dict) else {
        k: v for k, v in item.items() if k not in ("type", "id", "status", "output", "results")}
    return tool_call(ctx, item.get("call_id") or item.get("id"), kind, args, item)


def _assistant_item(ctx: Context, turn: Message, item: dict, kind: str) -> list[Message]:
    """Adds one of the model's items to `turn`; a built-in call whose result the item holds also gives that
    result (and the model's next items a new turn)."""
    if kind == "reasoning":
        found = _reasoning(item)
        turn.reasoning = f"{turn.reasoning}\n\n{found}" if turn.reasoning and found else turn.reasoning or found
    elif kind == "message":
        text = content_text(item.get("content"))
        turn.text = f"{turn.text}\n\n{text}" if turn.text and text else turn.text or text
    elif kind == "computer_call":
        turn.tool_calls.append(tool_call(ctx, item.get("call_id"), "computer_call", item.get("action"), item,
                                     computer=item.get("action") if isinstance(item.get("action"), dict) else {}))
    elif kind in ("function_call", "custom_tool_call"):
        turn.tool_calls.append(tool_call(ctx, item.get("call_id"), item.get("name"),
                                     item.get("arguments", item.get("input")), item))
    else:
        call = _builtin_call(ctx, item, kind)
        turn.tool_calls.append(call)
        result = item.get("output", item.get("results"))
        if result is not None:
            return [Message("tool", text=result if isinstance(result, str) else dumps(result),
                            tool_call_id=call.id, tool_name=kind)]
    return []


def _item(ctx: Context, item: dict, at: str, state: dict) -> list[Message]:
    """The new messages of one item (`state["turn"]`: the model's turn still open, extended in place)."""
    kind = item.get("type") or "message"
    role = item.get("role")
    if kind == "message" and role != "assistant":
        state["turn"] = None
        raw = leftover(item, ("type", "role", "content", "id", "status"))
        return [Message("system" if role in ("system", "developer") else "user",
                        text=content_text(item.get("content")), raw=raw, where=at)]
    if kind in _RESULT_TYPES:
        state["turn"] = None
        output = item.get("output")
        obs = _computer_output(ctx, item) if kind == "computer_call_output" else None
        text = None if obs else output if isinstance(output, str) else dumps(output)
        return [Message("tool", text=text, tool_call_id=item.get("call_id"), observation=obs, where=at)]
    out = []
    if state["turn"] is None:
        state["turn"] = Message("assistant", where=at)
        out.append(state["turn"])
    results = _assistant_item(ctx, state["turn"], item, kind)
    if results:
        state["turn"] = None
    return out + results


def responses(ctx: Context, items: list, where: str) -> list[Message]:
    """The messages of a whole list of Responses items (turns span several items)."""
    out: list[Message] = []
    state: dict = {"turn": None}
    for i, item in enumerate(items):
        out += guarded(ctx, lambda c, it, at: _item(c, it, at, state), item, f"{where}[{i}]")
    return out
