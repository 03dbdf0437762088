"""Each chat shape's items as `ingest.transcript` messages (the shapes: `ingest.chat.shapes`).

What every shape shares: a message's text is its string content, or its text parts joined by newlines (an image
part is a screenshot observation when it answers a computer-use call, else `[image]` in the text); the model's
own reasoning (`reasoning_content`, `thinking` blocks, Responses `reasoning` summaries, Gemini `thought` parts,
AutoGen `ThoughtEvent`s) goes on its turn; a message's fields the mapping does not use stay in `raw`; a
message's `timestamp` (ISO-8601 with a zone, or epoch seconds) is kept. Tool results pair with their call by id
where the shape has one (`tool_call_id`, `tool_use_id`, `call_id`, Gemini's `id`), else by order. A user's
own tool calls (tau2's dual-control user) are part of what the agent sees, not its actions: their text goes into
the user's message.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Callable

from ingest.chat import computer_use
from ingest.png import png_size
from ingest.record import Observation, Rejected
from ingest.times import parse_time
from ingest.tools import dumps
from ingest.transcript import Message, ToolCall

_DATA_URL = re.compile(r"^data:(image/[\w.+-]+);base64,", re.ASCII)


@dataclass
class Context:
    """What converting one list needs beside its items: the blob store, the computer-use screen size (the
    tool's declared display, else the last screenshot's) and the ids of computer-use calls."""

    put_blob: Callable[[bytes, str], str]
    screen: tuple[int, int] | None = None
    declared: bool = False  # the size came from the tool's definition: screenshots do not replace it
    computer_calls: set = field(default_factory=set)
    gui: bool = False  # a computer-use call was seen
    problems: list = field(default_factory=list)  # `bad_record` rows of items that could not be converted
    unknown: list = field(default_factory=list)  # items of no known shape, kept raw


def guarded(ctx: Context, convert, item, where: str) -> list[Message]:
    """`convert(ctx, item, where)`, or, when a field of the item has a type the shape does not allow, no
    message and one `bad_record` row naming the item (the list's other items are kept)."""
    try:
        return convert(ctx, item, where)
    except (TypeError, AttributeError, ValueError, KeyError, IndexError) as e:
        ctx.problems.append(Rejected("bad_record", f"{where}: a field has a type this message shape does not "
                                     f"allow ({type(e).__name__}: {e}); the message is left out", where,
                                     record_id=where.rsplit(": ", 1)[-1], snippet=dumps(item)[:300]))
        return []


def leftover(item: dict, used: tuple[str, ...]) -> dict | None:
    rest = {k: v for k, v in item.items() if k not in used}
    return rest or None


def screenshot(ctx: Context, url_or_data, media_type: str = "image/png") -> Observation | None:
    """A screen observation of a base64 image (a data URL or bare base64), its blob stored; None if undecodable."""
    if not isinstance(url_or_data, str):
        return None
    m = _DATA_URL.match(url_or_data)
    payload = url_or_data[m.end():] if m else url_or_data
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None
    size = png_size(data)
    if size and not ctx.declared:
        ctx.screen = size
    return Observation(kind="screen", screenshot=ctx.put_blob(data, m.group(1) if m else media_type),
                       width=size[0] if size else None, height=size[1] if size else None)


def _part_text(part) -> str | None:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return None
    for key in ("text", "content"):
        if isinstance(part.get(key), str):
            return part[key]
    if part.get("type") in ("image", "image_url", "input_image") or any(
            part.get(k) is not None for k in ("inlineData", "inline_data")):
        return "[image]"
    file = part.get("fileData", part.get("file_data"))  # Gemini's reference to an uploaded file: its URI is the data
    if isinstance(file, dict):
        return f"[file {file.get('fileUri', file.get('file_uri'))}]"
    return None


def content_text(content) -> str | None:
    """A message content as text: a string, or its parts' texts joined by newlines (None when it has none)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [t for t in map(_part_text, content) if t is not None]
        return "\n".join(texts) if texts else None
    if isinstance(content, dict):
        return _part_text(content) or dumps(content)
    return dumps(content)


def tool_call(ctx: Context, call_id, name, arguments, raw, *, computer=None) -> ToolCall:
    call = ToolCall(call_id, name, arguments, raw=raw)
    if computer is not None:
        ctx.gui = True
        if call_id is not None:
            ctx.computer_calls.add(str(call_id))
        spec = computer if isinstance(computer, dict) else {}
        action = computer_use.anthropic_action if name in computer_use.COMPUTER_TOOLS else computer_use.openai_action
        call.action = action(spec, ctx.screen, dumps(raw))
    return call


def _result_observation(ctx: Context, call_id, content, is_error=None) -> Observation | None:
    """A computer-use call's result as a screen observation (its screenshot, its text beside it)."""
    if call_id is None or str(call_id) not in ctx.computer_calls:
        return None
    parts = content if isinstance(content, list) else [content]
    obs = None
    for part in parts:
        if not isinstance(part, dict):
            continue
        source = part.get("source") if isinstance(part.get("source"), dict) else {}
        found = screenshot(ctx, source.get("data"), source.get("media_type") or "image/png") if source else None
        found = found or screenshot(ctx, part.get("image_url")) or screenshot(ctx, part.get("data"))
        obs = obs or found
    if obs is None:
        return None
    text = content_text([p for p in parts if not (isinstance(p, dict) and p.get("type") in ("image", "input_image",
                                                                                          "computer_screenshot"))])
    obs.text, obs.is_error = text, is_error
    return obs


# --- OpenAI Chat Completions -------------------------------------------------------------------------------

def openai_calls(ctx: Context, item: dict) -> list[ToolCall]:
    calls = []
    found = item.get("tool_calls") or []
    if not isinstance(found, list) or not all(isinstance(c, dict) for c in found):
        raise TypeError(f"tool_calls: {type(found).__name__}, expected a list of objects")
    for c in found:
        fn = c.get("function") if isinstance(c.get("function"), dict) else c
        calls.append(tool_call(ctx, c.get("id"), fn.get("name"), fn.get("arguments", fn.get("args")), c))
    legacy = item.get("function_call")
    if isinstance(legacy, dict):
        calls.append(tool_call(ctx, None, legacy.get("name"), legacy.get("arguments"), legacy))
    return calls


def openai_chat(ctx: Context, item: dict, where: str) -> list[Message]:
    content = item.get("content")
    if not isinstance(content, (str, list, type(None))) or (
            isinstance(content, list) and not all(isinstance(p, dict) for p in content)):
        raise TypeError(f"content: {type(content).__name__}, expected text, a list of part objects or null")
    role, text = item.get("role"), content_text(content)
    stamp = parse_time(item.get("timestamp") or item.get("created_at"))
    raw = leftover(item, ("role", "content", "tool_calls", "function_call", "tool_call_id", "name", "timestamp",
                          "reasoning_content", "reasoning"))
    if role in ("system", "developer"):
        return [Message("system", text=text, raw=raw, where=where)]
    if role == "assistant":
        reasoning = item.get("reasoning_content") or item.get("reasoning")
        return [Message("assistant", text=text, tool_calls=openai_calls(ctx, item),
                        reasoning=reasoning if isinstance(reasoning, str) else None,
                        model=item.get("model") if isinstance(item.get("model"), str) else None,
                        timestamp=stamp, raw=raw, where=where)]
    if role == "tool":  # tau2's tool messages name their call by `id`
        call_id = item.get("tool_call_id", item.get("id"))
        return [Message("tool", text=text, tool_call_id=call_id, tool_name=item.get("name"), timestamp=stamp,
                        observation=_result_observation(ctx, call_id, item.get("content")), raw=raw, where=where)]
    if role == "function":
        return [Message("tool", text=text, tool_name=item.get("name"), timestamp=stamp, raw=raw, where=where)]
    user_calls = [f"[{c.name}({dumps(c.arguments) if not isinstance(c.arguments, str) else c.arguments})]"
                  for c in openai_calls(Context(ctx.put_blob), item)]
    text = "\n".join([t for t in [text, *user_calls] if t]) or text
    return [Message("user" if role == "user" else role, text=text, timestamp=stamp, raw=raw, where=where)]


# --- Anthropic Messages -------------------------------------------------------------------------------------

def anthropic(ctx: Context, item: dict, where: str) -> list[Message]:
    role, content = item.get("role"), item.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    raw = leftover(item, ("role", "content"))
    if role == "assistant":
        turn = Message("assistant", model=item.get("model") if isinstance(item.get("model"), str) else None,
                       raw=raw, where=where)
        extra = []
        for b in blocks:
            kind = b.get("type") if isinstance(b, dict) else None
            if kind == "text":
                turn.text = f"{turn.text}\n\n{b.get('text')}" if turn.text else b.get("text")
            elif kind == "thinking":
                turn.reasoning = f"{turn.reasoning}\n\n{b.get('thinking')}" if turn.reasoning else b.get("thinking")
            elif kind in ("tool_use", "server_tool_use"):
                name = b.get("name")
                computer = b.get("input") if name in computer_use.COMPUTER_TOOLS else None
                turn.tool_calls.append(tool_call(ctx, b.get("id"), name, b.get("input"), b, computer=computer))
            else:
                extra.append(b)
        turn.raw = ({"message": raw} if raw else {}) | ({"blocks": extra} if extra else {}) or None
        return [turn]
    out, texts = [], []
    for b in blocks:
        if isinstance(b, dict) and b.get("type") == "tool_result":
            call_id, is_error = b.get("tool_use_id"), bool(b.get("is_error")) or None
            out.append(Message("tool", text=content_text(b.get("content")), tool_call_id=call_id, is_error=is_error,
                               observation=_result_observation(ctx, call_id, b.get("content"), is_error),
                               where=where))
        else:
            texts.append(_part_text(b))
    if any(t for t in texts):
        out.append(Message("user" if role == "user" else "system", text="\n".join(t for t in texts if t), raw=raw,
                           where=where))
    return out


# --- Gemini contents ----------------------------------------------------------------------------------------

def _part(part: dict, camel: str, snake: str):
    value = part.get(camel, part.get(snake))
    return value if isinstance(value, dict) else None


def _function_result(result) -> tuple[str | None, bool | None]:
    """A Gemini function response's text and whether it failed: the API's convention is `{"output": ...}` for a
    result and `{"error": ...}` for a failure; any other value is the result as written."""
    if isinstance(result, dict) and len(result) == 1 and ("output" in result or "error" in result):
        value = result.get("output", result.get("error"))
        return (value if isinstance(value, str) else dumps(value)), ("error" in result) or None
    return (result if isinstance(result, str) else dumps(result)), None


def gemini(ctx: Context, item: dict, where: str) -> list[Message]:
    # the google-genai SDK's `model_dump()` writes every field a part may have, all but one null
    role = item.get("role")
    parts = [{k: v for k, v in p.items() if v is not None} for p in item.get("parts") or [] if isinstance(p, dict)]
    raw = leftover(item, ("role", "parts"))
    if role == "model":
        turn = Message("assistant", raw=raw, where=where)
        for p in parts:
            call = _part(p, "functionCall", "function_call")
            if call is not None:
                turn.tool_calls.append(tool_call(ctx, call.get("id"), call.get("name"), call.get("args"), p))
            elif isinstance(p.get("text"), str) and p.get("thought"):
                turn.reasoning = f"{turn.reasoning}\n\n{p['text']}" if turn.reasoning else p["text"]
            elif isinstance(p.get("text"), str):
                turn.text = f"{turn.text}\n\n{p['text']}" if turn.text else p["text"]
            else:
                turn.raw = (turn.raw or {}) | {"parts": (turn.raw or {}).get("parts", []) + [p]}
        return [turn]
    out, texts, kept = [], [], []
    for p in parts:
        response = _part(p, "functionResponse", "function_response")
        if response is not None:
            text, is_error = _function_result(response.get("response"))
            out.append(Message("tool", text=text, tool_call_id=response.get("id"), tool_name=response.get("name"),
                               is_error=is_error, where=where))
        elif (text := _part_text(p)) is not None:
            texts.append(text)
        else:
            kept.append(p)  # a part with no text (code, its result...): kept as written
    raw = (raw or {}) | {"parts": kept} if kept else raw
    if any(texts) or kept:
        out.append(Message("system" if role == "system" else "user", text="\n".join(t for t in texts if t) or None,
                           raw=raw, where=where))
    return out
