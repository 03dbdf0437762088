"""pydantic-ai message histories: `ModelMessagesTypeAdapter.dump_json(result.all_messages())` (or
`result.all_messages_json()`), a JSON list of `ModelRequest` (`kind: request`) and `ModelResponse`
(`kind: response`) messages, each with its `parts` told apart by `part_kind` (pydantic-ai's `messages.py`).

A file is one history (one episode); a JSONL file holds one history per line, or one message per line (then
the whole file is one history); a JSON object holding a history under a key (`messages`, `history`...) is read
the same, its other fields kept in `env.record`.

- request parts: `system-prompt`, `instruction` (2.x) and the request's `instructions` -> the system prompt;
  `user-prompt` (text, or a list of text and media items: each media item as `[kind]` in the text, the item
  itself in `env.pydantic_ai.media`) -> a user message;
  `tool-return` / `builtin-tool-return` -> the result of the call `tool_call_id` names (an error when its
  `outcome` is `failed` or `retried`, 2.x); `retry-prompt` -> an error result of its tool call, or the user's
  feedback when it names no tool; `retry-feedback` -> feedback to the model (a user message).
- response parts: `text` -> the turn's text; `thinking` -> its reasoning; `tool-call` / `builtin-tool-call`
  (`args`: a JSON string or an object) -> its tool calls (pydantic-ai's output tool, `final_result`, is a `done`
  action holding the output); a response's `builtin-tool-return` -> the result after the turn. The response's
  `model_name` is the turn's model, its `timestamp` the turn's time.
- the messages' `usage` are summed into `env.pydantic_ai.usage`; run ids, conversation id, provider and finish
  reasons are kept there too. A part of any other kind is kept raw in `env.pydantic_ai.unknown_parts` with a
  warning row. The run ended when its last message is a response without tool calls, or when it last called the
  output tool and only that call's return follows. Domain: `mcp` (tool calls with their results), `search` when
  the agent mostly searches.
"""

from __future__ import annotations

import re
from typing import Iterator

from ingest.chat.messages import content_text
from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Rejected
from ingest.search import episode_domain
from ingest.source import Source, SourceError, json_lines, parse_json
from ingest.times import parse_time
from ingest.tools import arguments_dict, dumps
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "pydantic_ai"
VERSION = "2"
INFO = FormatInfo(
    group=None, rank=304, domains=('mcp', 'search'), platform="linux",
    summary="pydantic-ai message histories (`ModelMessagesTypeAdapter` JSON)",
    producer="pydantic-ai (an agent with a function tool, OpenAI provider)",
    versions="1.107.10 (a retried call is a `retry-prompt`), 2.78.0 (a `tool-return` with `outcome: retried`)",
    proof=("each release runs against the scripted model server (two parallel calls, one retried with `ModelRetry`, "
           "then a third); pydantic-ai's own adapter reads the saved history back (`validate_json`) and every part it "
           "sees, and every scripted call and result, is in the episode in order (`tests/ingest/chat/`)"),
)

_HEAD = re.compile(rb'"part_kind"\s*:\s*"(?:system-prompt|user-prompt|tool-return|retry-prompt|text|tool-call'
                   rb'|thinking|builtin-tool-call|builtin-tool-return|retry-feedback|instruction)"')
_ERROR_OUTCOMES = ("failed", "retried")
OUTPUT_TOOL = "final_result"  # pydantic-ai's default name of its output tool
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "requests",
               "request_tokens", "response_tokens", "total_tokens")


def units(files: list[str], head) -> list[str]:
    """JSON / JSONL files whose opening holds a pydantic-ai message part (`part_kind` of a request or response
    part: `system-prompt`, `user-prompt`, `tool-call`, `tool-return`, `text`...)."""
    return [path for path in files if path.endswith((".json", ".jsonl")) and _HEAD.search(head(path))]


def is_message(item) -> bool:
    return isinstance(item, dict) and item.get("kind") in ("request", "response") and isinstance(item.get("parts"),
                                                                                                list)


def _history(doc) -> tuple[list | None, dict | None]:
    """(the history, the object holding it) in a document: the document itself, or a list under one key."""
    if isinstance(doc, list) and doc and all(is_message(m) for m in doc):
        return doc, None
    if isinstance(doc, dict):
        for key, value in doc.items():
            if isinstance(value, list) and value and all(is_message(m) for m in value):
                return value, {k: v for k, v in doc.items() if k != key}
    return None, None


def _text(content) -> str | None:
    if isinstance(content, str) or content is None:
        return content
    if isinstance(content, list):
        return "\n".join(c if isinstance(c, str) else f"[{c.get('kind', 'item')}]" if isinstance(c, dict) else
                         dumps(c) for c in content)
    return dumps(content)


def _result_text(content) -> str | None:
    return content if isinstance(content, str) or content is None else dumps(content)


def _call(part: dict) -> ToolCall:
    name, args = part.get("tool_name"), part.get("args")
    call = ToolCall(part.get("tool_call_id"), name, args, raw=part)
    if name == OUTPUT_TOOL:
        output = arguments_dict(args)
        call.action = Action(kind="done", text=dumps(output), tool_name=name, arguments=dumps(output or {}),
                             raw=dumps(part))
    return call


class _Reading:
    def __init__(self, where: str):
        self.where = where
        self.messages: list[Message] = []
        self.unknown: list = []
        self.rows: list[Rejected] = []
        self.usage: dict = {}
        self.media: list = []
        self.info: dict = {"run_ids": [], "conversation_ids": [], "providers": [], "finish_reasons": []}

    def _keep(self, part, at: str) -> None:
        self.unknown.append({"where": at, "part": part})
        kind = part.get("part_kind") if isinstance(part, dict) else None
        self.rows.append(Rejected("unknown_content", f"{self.where}: {at}: a part of kind {kind!r} is not read; kept "
                                  "raw in env.pydantic_ai.unknown_parts", self.where, record_id=at))

    def _note(self, message: dict) -> None:
        for key, into in (("run_id", "run_ids"), ("conversation_id", "conversation_ids"),
                          ("provider_name", "providers"), ("finish_reason", "finish_reasons")):
            value = message.get(key)
            if isinstance(value, str) and (key == "finish_reason" or value not in self.info[into]):
                self.info[into].append(value)
        usage = message.get("usage")
        for key in _USAGE_KEYS:
            value = usage.get(key) if isinstance(usage, dict) else None
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[key] = self.usage.get(key, 0) + value

    def request_part(self, part: dict, at: str) -> None:
        kind, stamp = part.get("part_kind"), parse_time(part.get("timestamp"))
        if kind in ("system-prompt", "instruction"):
            self.messages.append(Message("system", text=_text(part.get("content")), where=at))
        elif kind == "user-prompt":
            content = part.get("content")
            if isinstance(content, list):
                self.media += [{"where": at, "item": c} for c in content if not isinstance(c, str)]
            self.messages.append(Message("user", text=_text(content), timestamp=stamp, where=at))
        elif kind in ("tool-return", "builtin-tool-return"):
            self.messages.append(Message("tool", text=_result_text(part.get("content")),
                                         tool_call_id=part.get("tool_call_id"), tool_name=part.get("tool_name"),
                                         is_error=True if part.get("outcome") in _ERROR_OUTCOMES else None,
                                         timestamp=stamp, where=at))
        elif kind == "retry-prompt" and part.get("tool_name"):
            self.messages.append(Message("tool", text=_result_text(part.get("content")), is_error=True,
                                         tool_call_id=part.get("tool_call_id"), tool_name=part.get("tool_name"),
                                         timestamp=stamp, where=at))
        elif kind in ("retry-prompt", "retry-feedback"):
            self.messages.append(Message("user", text=_result_text(part.get("content")), timestamp=stamp, where=at))
        else:
            self._keep(part, at)

    def request(self, message: dict, at: str) -> None:
        for i, part in enumerate(message["parts"]):
            if isinstance(part, dict):
                self.request_part(part, f"{at}.parts[{i}]")
            else:
                self._keep(part, f"{at}.parts[{i}]")
        # the model is sent the request's instructions after its system prompt parts (each request repeats them)
        instructions = message.get("instructions")
        if isinstance(instructions, str) and not any(m.role == "system" and m.text == instructions
                                                     for m in self.messages):
            self.messages.append(Message("system", text=instructions, where=at))

    def response(self, message: dict, at: str) -> None:
        texts, thinking, calls, returns = [], [], [], []
        for i, part in enumerate(message["parts"]):
            kind = part.get("part_kind") if isinstance(part, dict) else None
            if kind == "text":
                texts.append(content_text(part.get("content")) or "")
            elif kind == "thinking":
                thinking.append(content_text(part.get("content")) or "")
            elif kind in ("tool-call", "builtin-tool-call"):
                calls.append(_call(part))
            elif kind == "builtin-tool-return":
                returns.append((part, f"{at}.parts[{i}]"))
            else:
                self._keep(part, f"{at}.parts[{i}]")
        model = message.get("model_name")
        self.messages.append(Message("assistant", text="\n".join(texts) or None, tool_calls=calls,
                                     reasoning="\n\n".join(t for t in thinking if t) or None,
                                     model=model if isinstance(model, str) else None,
                                     timestamp=parse_time(message.get("timestamp")), where=at))
        for part, where in returns:
            self.request_part(part, where)

    def read(self, history: list) -> None:
        for i, message in enumerate(history):
            self._note(message)
            (self.request if message["kind"] == "request" else self.response)(message, f"[{i}]")


def _ended(history: list) -> bool:
    """The run ended when its last response calls no tool, or calls only the output tool and nothing but that
    call's return follows (`all_messages()` keeps the request holding "Final result processed."): a retry prompt
    after it means the output was refused and the run went on."""
    responses = [i for i, m in enumerate(history) if m["kind"] == "response"]
    if not responses:
        return False
    last = responses[-1]
    parts = [p for p in history[last]["parts"] if isinstance(p, dict)]
    calls = {p.get("tool_call_id"): p.get("tool_name") for p in parts
             if p.get("part_kind") in ("tool-call", "builtin-tool-call")}
    if not calls:
        return last == len(history) - 1
    if set(calls.values()) != {OUTPUT_TOOL}:
        return False
    after = [p for m in history[last + 1:] for p in m["parts"]]
    return all(isinstance(p, dict) and p.get("part_kind") == "tool-return" and p.get("tool_call_id") in calls
               for p in after)


def _histories(source: Source) -> Iterator[tuple[str, list, dict | None] | Rejected]:
    """(key, history, the object holding it) of each history in the file."""
    name = source.uri
    data = source.read_bytes()
    if not source.path.endswith(".jsonl"):
        try:
            doc = parse_json(data, name, source.budgets)
        except SourceError as e:
            yield Rejected(e.rule, e.reason, name)
            return
        history, holder = _history(doc)
        yield ("", history, holder) if history else Rejected("bad_record", f"{name}: no pydantic-ai message "
                                                             "history (a list of request / response messages)", name)
        return
    lines = []
    for no, _, value in json_lines(data, name, source.budgets):
        if isinstance(value, Rejected):
            yield value
        else:
            lines.append((no, value))
    if lines and all(is_message(value) for _, value in lines):
        yield "", [value for _, value in lines], None
        return
    for no, value in lines:
        history, holder = _history(value)
        yield (f"line {no}", history, holder) if history else Rejected(
            "bad_record", f"{name}: line {no}: no pydantic-ai message history", name, line=no)


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = source.uri
    for found in _histories(source):
        if isinstance(found, Rejected):
            yield found
            continue
        key, history, holder = found
        where = f"{name}: {key}" if key else name
        reading = _Reading(where)
        reading.read(history)
        yield from reading.rows
        info = {k: v for k, v in reading.info.items() if v}
        env = {"pydantic_ai": {**info, "usage": reading.usage, "messages": len(history)}}
        if reading.unknown:
            env["pydantic_ai"]["unknown_parts"] = reading.unknown
        if reading.media:
            env["pydantic_ai"]["media"] = reading.media
        if holder:
            env["record"] = holder
        ended = _ended(history)
        domain = episode_domain([c.name for m in reading.messages for c in m.tool_calls], "mcp")
        yield from records(reading.messages, Run(key=key, domain=domain, platform="linux", terminated=ended,
                                                 env=env), where)
