"""The model requests and responses of a tarko run saved per loop: beside each `loop-<N>/event-stream.jsonl` the
agent's snapshot hook saves `loop-<N>/llm-request.jsonl` (one JSON object: `provider`, `baseURL`, and the `request`
it sent: `model`, `messages` so far, `tools`, sampling options) and `loop-<N>/llm-response.jsonl` (the streamed
chunks, one a line, OpenAI chat-completion form). The event stream holds the conversation itself; these hold what
it does not: the system prompt, the tools as declared to the model, the request options, where it was sent, and
the response's id, model and usage. Beside them `loop-<N>/tool-calls.jsonl` (one JSON list) holds the calls that
loop ran: their args and results are the stream's again, their execution time is not. They are read into the
episode's env (`ingest.chat.agent_tars`), never as steps (their messages are the event stream's again); a request whose messages disagree with the stream, or a saved call
whose args or result do, keeps them and says where they differ.
"""

from __future__ import annotations

import re

import orjson

from ingest.record import Rejected
from ingest.source import SourceError, json_lines, parse_json
from ingest.tools import dumps

REQUEST, RESPONSE, TOOL_CALLS = "llm-request.jsonl", "llm-response.jsonl", "tool-calls.jsonl"
LOOP_FILE = re.compile(r"^(?P<run>.+)/loop-(?P<n>\d+)/(?:llm-request|llm-response|tool-calls)\.jsonl$")
# the request's keys read on their own; the others are its options, kept as written
_READ = ("model", "messages", "tools", "provider")


def looks(start: bytes, path: str = "") -> bool:
    """A loop's file as the snapshot hook writes it: the request and response a JSON object, the tool calls one
    JSON list."""
    return start.lstrip()[:1] == (b"[" if path.endswith(TOOL_CALLS) else b"{")


def request(data: bytes, where: str, budgets) -> dict | Rejected:
    """What a loop's request holds beyond the event stream: a dict for env (`messages` for `compare`)."""
    try:
        doc = parse_json(data, where, budgets)
    except SourceError as e:
        return Rejected(e.rule, e.reason, where)
    sent = doc.get("request") if isinstance(doc, dict) else None
    if not isinstance(sent, dict) or not isinstance(sent.get("messages", []), list):
        return Rejected("bad_record", f"{where}: no `request` object with a `messages` list", where)
    messages = [m for m in sent.get("messages", []) if isinstance(m, dict)]
    tools = [t for t in sent.get("tools") or [] if isinstance(t, dict)]
    out = {"provider": doc.get("provider") or sent.get("provider"), "baseURL": doc.get("baseURL"),
           "model": sent.get("model"),
           "system": [_text(m.get("content")) for m in messages if m.get("role") == "system"],
           "tools": [(t.get("function") or t).get("name") for t in tools],
           "options": {k: v for k, v in sent.items() if k not in _READ},
           "other": {k: v for k, v in doc.items() if k not in ("provider", "baseURL", "request")}}
    return {k: v for k, v in out.items() if v not in (None, [], {})} | {"messages": messages, "declared": tools}


def response(data: bytes, where: str, budgets) -> tuple[dict, list[Rejected]]:
    """A loop's streamed response: its id, model, finish reason and usage (the text is the stream's message)."""
    out: dict = {"chunks": 0}
    bad = []
    for _, _, chunk in json_lines(data, where, budgets):
        if isinstance(chunk, Rejected):
            bad.append(chunk)
            continue
        if not isinstance(chunk, dict):
            continue
        out["chunks"] += 1
        for key in ("id", "model"):
            out.setdefault(key, chunk.get(key))
        for choice in chunk.get("choices") or []:
            if isinstance(choice, dict) and choice.get("finish_reason"):
                out["finish_reason"] = choice["finish_reason"]
        if chunk.get("usage"):
            out["usage"] = chunk["usage"]
    return {k: v for k, v in out.items() if v is not None}, bad


def tool_calls(data: bytes, where: str, budgets) -> list[dict] | Rejected:
    """A loop's `tool-calls.jsonl`: the snapshot hook's record of each call the loop ran (`toolCallId`, `name`,
    `args`, `result`, `error` where it failed, `executionTime` in ms), one JSON list pretty-printed."""
    try:
        doc = parse_json(data, where, budgets)
    except SourceError as e:
        return Rejected(e.rule, e.reason, where)
    if not isinstance(doc, list) or not all(isinstance(c, dict) for c in doc):
        return Rejected("bad_record", f"{where}: not a list of tool call objects", where)
    return doc


def compare_calls(calls: list[dict], events: list[dict]) -> list[dict]:
    """What the saved tool calls add to the event stream: each call's id, name and execution time (and any field
    the hook may add), with its `args` / `result` / `error` kept and `differs` saying why only where the stream's
    `tool_call` arguments or `tool_result` of that id and name disagree (or the stream holds no such call)."""
    called = _arguments(events)
    answered = {(e.get("toolCallId"), e.get("name")): e for e in reversed(events) if e.get("type") == "tool_result"}
    out = []
    for call in calls:
        item = {k: v for k, v in call.items() if k not in ("args", "result", "error")}
        # by id and name: a stream may give two calls one id (the nvidia-stock snapshot: a search and a page visit)
        key = (call.get("toolCallId"), call.get("name"))
        differs = []
        if key not in called:
            differs.append("the stream holds no tool_call of this id and name")
        elif call.get("args") != called[key]:
            differs.append("args are not the stream's tool_call arguments")
        if key in called and key not in answered:
            differs.append("the stream holds no tool_result of this id and name")
        elif key in answered and call.get("result") != answered[key].get("content"):
            differs.append("result is not the stream's tool_result content")
        if key in answered and "error" in call and call["error"] != answered[key].get("error"):
            differs.append("error is not the stream's tool_result error")
        if differs:
            item |= {k: call[k] for k in ("args", "result", "error") if k in call} | {"differs": differs}
        out.append(item)
    return out


def _arguments(events: list[dict]) -> dict:
    """Each call's arguments by its id and name (the first of that pair): the `tool_call` event's, else the
    assistant message's call (a JSON text)."""
    found = {}
    for event in events:
        for call in event.get("toolCalls") or [] if event.get("type") == "assistant_message" else []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                key = (call.get("id"), function.get("name"))
                try:
                    found.setdefault(key, orjson.loads(function.get("arguments") or "{}"))
                except (orjson.JSONDecodeError, TypeError):
                    found.setdefault(key, function.get("arguments"))
    return found | {(e.get("toolCallId"), e.get("name")): e.get("arguments")
                    for e in reversed(events) if e.get("type") == "tool_call"}


def compare(sent: dict, events: list[dict]) -> list[str]:
    """Where a request's messages disagree with the event stream of its episode: its model, its prompt (the first
    user message), or an assistant message the stream does not hold at that place (as content or raw reply)."""
    found = []
    started = next((e for e in events if e.get("type") == "agent_run_start"), {})
    if sent.get("model") and started.get("model") and sent["model"] != started["model"]:
        found.append(f"model {sent['model']!r}, the stream's {started['model']!r}")
    prompts = [e for e in events if e.get("type") == "user_message"]
    users = [m for m in sent["messages"] if m.get("role") == "user"]
    if users and prompts and _text(users[0].get("content")) != _text(prompts[0].get("content")):
        found.append("the first user message is not the stream's prompt")
    replies = [e for e in events if e.get("type") == "assistant_message"]
    asked = [m for m in sent["messages"] if m.get("role") == "assistant"]
    for i, message in enumerate(asked):
        said = _text(message.get("content")) or ""
        if i >= len(replies) or said not in (replies[i].get("content") or "", replies[i].get("rawContent") or ""):
            found.append(f"assistant message {i} is not the stream's")
            break
    return found


def _text(content) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else dumps(p)
                         for p in content)
    return dumps(content)
