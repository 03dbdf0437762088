"""A scripted stand-in for the model vendors' services (Anthropic, OpenAI, Google), for tests that run a real
coding agent or agent framework: one loopback HTTP server that speaks their wire protocols and plays a script.

Protocols, chosen by the request path (each streamed as its vendor does, or answered as one JSON document):
- Anthropic Messages: `POST .../v1/messages` (`"stream": true` -> server-sent events `message_start`,
  `content_block_*`, `message_delta`, `message_stop`); `.../v1/messages/count_tokens` is answered too.
- OpenAI Chat Completions: `POST .../chat/completions` (`"stream": true` -> `chat.completion.chunk` events, then
  `[DONE]`).
- OpenAI Responses: `POST .../responses` (`"stream": true` -> `response.created`, `response.output_item.*`,
  `response.output_text.delta`, `response.completed`).
- Gemini: `POST .../models/<model>:generateContent` and `:streamGenerateContent` (`?alt=sse` -> events, else a
  JSON array of chunks); `:countTokens` is answered too.
- `GET .../models` lists the one scripted model; any other request is recorded and answered 404.

A script is a list of `Turn`s, the same for every protocol: a turn is one model response, made of tool calls
(`Call(name, arguments)`) and/or text. A request that offers tools (the agent's own loop) is answered by the
first turn whose calls the request does not yet carry results for, all of them, matched by the call ids the
server gave (Gemini: by id, else by the function's name in order: `answers`); once every call has its result, the last
turn (the final answer) repeats. An agent that starts a conversation of its own (a subagent) is played another
script: `conversations={marker: script}` picks it when the conversation's first user message holds `marker`.
A request without tools (a title, a topic or a routing check the agent makes
on the side) gets `side(protocol, body)`'s text, "OK" by default. An agent that edits through text instead of
tools (Aider's SEARCH/REPLACE blocks) offers no tools: `loop(protocol, body)` says which tool-less requests are
its own loop; each is answered by the first turn of text-only turns whose text the request's history does not yet
hold as an assistant message (`text_turn_for`; `text_turn` replaces that choice for an agent that rewrites its
model's replies in the history it sends back). So a retried request gets the same turn, and
a test never depends on how many side requests an agent makes.

Every request is recorded (`requests`: protocol, path, body, the turn it was answered with, and the tool
results it carried, decoded per protocol into `Result(call_id, name, output, is_error)`), so a test knows
exactly which calls the agent made, and what it saw of each one. The model name in each answer is the one the
request asked for. Usage is fixed per turn (`USAGE`), so a test can check the token counts an agent records.

Start it in a test or fixture (`with ScriptedModelServer(script) as server:` or `.close()`); it stops its own
thread and socket, nothing else.
"""

from __future__ import annotations

import gzip
import itertools
import json
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import urlsplit

USAGE = {"input_tokens": 120, "output_tokens": 30}  # what every answer reports using
# a call of this name is answered on the Responses protocol as a `computer_call` item (OpenAI's computer-use
# tool, `computer_use_preview`), its arguments being the action; the other protocols name it as a plain tool
COMPUTER_CALL = "computer_call"


@dataclass(frozen=True)
class Call:
    """A tool call the model makes: the agent's tool name and the arguments it is called with."""

    name: str
    arguments: dict


@dataclass(frozen=True)
class Turn:
    """One model response: tool calls and/or text (a turn with no calls is a final answer)."""

    calls: tuple[Call, ...] = ()
    text: str | None = None
    thinking: str | None = None


def call(name: str, **arguments) -> Turn:
    """A turn of one tool call."""
    return Turn(calls=(Call(name, arguments),))


def answer(text: str) -> Turn:
    """A final answer."""
    return Turn(text=text)


@dataclass
class Result:
    """A tool result as a request carried it back to the model."""

    call_id: str | None
    name: str | None
    output: str
    is_error: bool | None = None


@dataclass
class Request:
    protocol: str  # anthropic | chat | responses | gemini | other
    path: str
    body: dict
    turn: int | None = None  # index of the script turn it was answered with; None: a side request
    script: int = 0  # which script answered it (0: the main one, n: the n-th of `conversations`)
    results: list[Result] = field(default_factory=list)
    stream: bool = False


def call_id(protocol: str, turn: int, index: int, script: int = 0) -> str:
    """The id the server gives the `index`-th call of turn `turn` of script `script` (0: the main one; each
    vendor's id shape)."""
    prefix = {"anthropic": "toolu_", "chat": "call_", "responses": "call_", "gemini": "gem_"}.get(protocol, "call_")
    return f"{prefix}{script:02d}{turn:02d}{index:02d}scripted"


# --- reading requests: which protocol, the results they carry, whether they offer tools ----------------------

def protocol_of(path: str) -> str:
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return "other"


def offers_tools(protocol: str, body: dict) -> bool:
    tools = body.get("tools") or []
    if protocol == "gemini":
        return any(t.get("functionDeclarations") for t in tools if isinstance(t, dict))
    return bool(tools)


def _text_of(content) -> str:
    """The text of a tool result's content: a string, or text parts of any vendor's shape."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(p) for p in content)
    if isinstance(content, dict):
        for key in ("text", "output", "content", "result"):
            if key in content:
                return _text_of(content[key])
    return json.dumps(content, sort_keys=True)


def results_in(protocol: str, body: dict) -> list[Result]:
    """Every tool result in a request's history, in order."""
    found = []
    if protocol == "anthropic":
        for message in body.get("messages") or []:
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found.append(Result(block.get("tool_use_id"), None, _text_of(block.get("content") or ""),
                                        block.get("is_error")))
    elif protocol == "chat":
        for message in body.get("messages") or []:
            if message.get("role") == "tool":
                found.append(Result(message.get("tool_call_id"), message.get("name"), _text_of(message.get("content"))))
    elif protocol == "responses":
        for item in body.get("input") if isinstance(body.get("input"), list) else []:
            if isinstance(item, dict) and item.get("type", "").endswith("call_output"):
                found.append(Result(item.get("call_id"), None, _text_of(item.get("output"))))
    elif protocol == "gemini":
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(response, dict):
                    found.append(Result(response.get("id"), response.get("name"), _text_of(response.get("response"))))
    return found


def answers(result: Result, issued_id: str) -> bool:
    """Whether a result answers the call the server gave `issued_id` (Gemini CLI sends the id back prefixed
    with the tool's name: `read_file__<id>`)."""
    return bool(result.call_id) and (result.call_id == issued_id or result.call_id.endswith("__" + issued_id))


def first_user_text(protocol: str, body: dict) -> str:
    """The text of a conversation's first user message (Responses: its first user input item)."""
    if protocol == "responses":
        items = body.get("input") if isinstance(body.get("input"), list) else [body.get("input") or ""]
        users = [i for i in items if isinstance(i, str) or (isinstance(i, dict) and i.get("role") == "user")]
        return _text_of(users[0] if users and isinstance(users[0], str) else (users[0].get("content") if users else ""))
    messages = body.get("contents") if protocol == "gemini" else body.get("messages")
    first = next((m for m in messages or [] if isinstance(m, dict) and m.get("role") == "user"), {})
    return _text_of(first.get("parts") if protocol == "gemini" else first.get("content") or "")


def assistant_texts(protocol: str, body: dict) -> list[str]:
    """The text of every assistant message in a request's history (Chat Completions and Anthropic Messages)."""
    messages = body.get("messages") if protocol in ("chat", "anthropic") else []
    return [_text_of(m.get("content") or "") for m in messages or []
            if isinstance(m, dict) and m.get("role") == "assistant"]


def text_turn_for(script: list[Turn], protocol: str, body: dict) -> int:
    """The first turn whose text no assistant message of the request holds yet; the last turn once all do."""
    said = [t.strip() for t in assistant_texts(protocol, body)]
    return next((t for t, turn in enumerate(script) if (turn.text or "").strip() not in said), len(script) - 1)


def turn_for(script: list[Turn], protocol: str, results: list[Result], number: int = 0) -> int:
    """The first turn of script `number` whose calls do not all have a result yet; the last turn once all have."""
    issued = [call_id(protocol, t, i, number) for t, turn in enumerate(script) for i in range(len(turn.calls))]
    names_left = [r.name for r in results if not any(answers(r, c) for c in issued)]  # results naming no call of ours
    for t, turn in enumerate(script):
        for i, c in enumerate(turn.calls):
            if any(answers(r, call_id(protocol, t, i, number)) for r in results):
                continue
            if protocol == "gemini" and c.name in names_left:  # a result that did not echo the call's id
                names_left.remove(c.name)
                continue
            return t
    return len(script) - 1


# --- encoding turns, per protocol -----------------------------------------------------------------------------

def _sse(events: list[tuple[str | None, dict | str]]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode()


def anthropic_message(turn: Turn, t: str, model: str, ids: list[str]) -> dict:
    content = []
    if turn.thinking:
        content.append({"type": "thinking", "thinking": turn.thinking, "signature": "scripted"})
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    content += [{"type": "tool_use", "id": ids[i], "name": c.name, "input": c.arguments}
                for i, c in enumerate(turn.calls)]
    return {"id": f"msg_scripted{t}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": "tool_use" if turn.calls else "end_turn", "stop_sequence": None,
            "usage": dict(USAGE)}


def anthropic_events(message: dict) -> bytes:
    start = {**message, "content": [], "stop_reason": None, "usage": {**USAGE, "output_tokens": 1}}
    events = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            empty, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        elif block["type"] == "thinking":
            empty, delta = {"type": "thinking", "thinking": ""}, {"type": "thinking_delta", "thinking": block["thinking"]}
        else:
            empty = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": empty}),
                   ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})]
        if block["type"] == "thinking":
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "signature_delta", "signature": block["signature"]}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                                                       "stop_sequence": None},
                                  "usage": {"output_tokens": USAGE["output_tokens"]}}),
               ("message_stop", {"type": "message_stop"})]
    return _sse(events)


def chat_completion(turn: Turn, t: str, model: str, ids: list[str]) -> dict:
    message = {"role": "assistant", "content": turn.text}
    if turn.calls:
        message["tool_calls"] = [{"id": ids[i], "type": "function", "function": {
            "name": c.name, "arguments": json.dumps(c.arguments)}} for i, c in enumerate(turn.calls)]
    return {"id": f"chatcmpl-scripted{t}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if turn.calls else "stop"}],
            "usage": {"prompt_tokens": USAGE["input_tokens"], "completion_tokens": USAGE["output_tokens"],
                      "total_tokens": USAGE["input_tokens"] + USAGE["output_tokens"]}}


def chat_events(completion: dict) -> bytes:
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    message, finish = completion["choices"][0]["message"], completion["choices"][0]["finish_reason"]
    chunks = [{"role": "assistant", "content": ""}]
    if message.get("content"):
        chunks.append({"content": message["content"]})
    for i, tc in enumerate(message.get("tool_calls") or []):
        chunks.append({"tool_calls": [{"index": i, **tc}]})
    events = [(None, {**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]}) for d in chunks]
    events.append((None, {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    events.append((None, {**head, "choices": [], "usage": completion["usage"]}))
    return _sse(events + [(None, "[DONE]")])


def responses_output(turn: Turn, t: str, ids: list[str]) -> list[dict]:
    items = []
    if turn.thinking:
        items.append({"type": "reasoning", "id": f"rs_scripted{t}", "summary": [
            {"type": "summary_text", "text": turn.thinking}]})
    if turn.text:
        items.append({"type": "message", "id": f"msg_scripted{t}", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
    items += [_responses_call(c, f"{t}{i:02d}", ids[i]) for i, c in enumerate(turn.calls)]
    return items


def _responses_call(c: Call, n: str, issued: str) -> dict:
    """A call as a Responses output item: a `function_call`, or, for a call named `COMPUTER_CALL`, the
    `computer_call` item OpenAI's computer-use models answer with (its arguments are the `action`)."""
    if c.name == COMPUTER_CALL:
        return {"type": "computer_call", "id": f"cu_scripted{n}", "call_id": issued, "action": c.arguments,
                "pending_safety_checks": [], "status": "completed"}
    return {"type": "function_call", "id": f"fc_scripted{n}", "call_id": issued, "name": c.name,
            "arguments": json.dumps(c.arguments), "status": "completed"}


def responses_response(turn: Turn, t: str, model: str, ids: list[str]) -> dict:
    return {"id": f"resp_scripted{t}", "object": "response", "created_at": int(time.time()), "model": model,
            "status": "completed", "output": responses_output(turn, t, ids),
            "usage": {**USAGE, "total_tokens": sum(USAGE.values()),
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def responses_events(response: dict) -> bytes:
    seq = itertools.count()
    pending = {**response, "status": "in_progress", "output": []}
    events = [("response.created", {"type": "response.created", "response": pending}),
              ("response.in_progress", {"type": "response.in_progress", "response": pending})]
    for i, item in enumerate(response["output"]):
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                       "item": {**item, "status": "in_progress"}}))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                          "output_index": i, "content_index": 0, "delta": text}))
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i,
                                                      "item": item}))
    events.append(("response.completed", {"type": "response.completed", "response": response}))
    return _sse([(name, {**data, "sequence_number": next(seq)}) for name, data in events])


def gemini_response(turn: Turn, t: str, model: str, ids: list[str]) -> dict:
    parts = [{"text": turn.thinking, "thought": True}] if turn.thinking else []
    parts += [{"text": turn.text}] if turn.text else []
    parts += [{"functionCall": {"id": ids[i], "name": c.name, "args": c.arguments}}
              for i, c in enumerate(turn.calls)]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": USAGE["input_tokens"],
                              "candidatesTokenCount": USAGE["output_tokens"],
                              "totalTokenCount": sum(USAGE.values())},
            "modelVersion": model, "responseId": f"scripted{t}"}


# --- the server -----------------------------------------------------------------------------------------------

def side_ok(protocol: str, body: dict) -> str:
    return "OK"


def _model(protocol: str, path: str, body: dict, default: str) -> str:
    if protocol == "gemini":  # .../models/<model>:generateContent
        return path.rsplit("/models/", 1)[-1].split(":", 1)[0] or default
    return body.get("model") or default


class ScriptedModelServer:
    """The stand-in server on 127.0.0.1 (see the module docstring). `url` is its root (`http://127.0.0.1:PORT`);
    agents append their own paths (`/v1/messages`, `/v1/responses`, `/v1beta/models/...`)."""

    def __init__(self, script: list[Turn], side: Callable[[str, dict], str] = side_ok, model: str = "scripted-model",
                 conversations: dict[str, list[Turn]] | None = None,
                 loop: Callable[[str, dict], bool] | None = None,
                 text_turn: Callable[[list[Turn], str, dict], int] | None = None):
        self.scripts = [list(script), *(list(s) for s in (conversations or {}).values())]
        self.markers = list(conversations or {})
        if any(not s or s[-1].calls for s in self.scripts):
            raise ValueError("a script ends with a final answer (a turn without calls)")
        self.script, self.side, self.model, self.loop = self.scripts[0], side, model, loop
        self.text_turn = text_turn or text_turn_for
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def __enter__(self) -> "ScriptedModelServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def agent_requests(self, script: int = 0) -> list[Request]:
        """The requests script `script` answered (0: the main script, n: the n-th of `conversations`), in order."""
        return [r for r in self.requests if r.turn is not None and r.script == script]

    def script_of(self, protocol: str, body: dict) -> int:
        """0, or n when the conversation's first user message holds the n-th marker of `conversations`."""
        first = first_user_text(protocol, body)
        return next((n for n, marker in enumerate(self.markers, 1) if marker in first), 0)

    def answer(self, method: str, path: str, query: str, body: dict) -> tuple[int, str, bytes]:
        """(status, content type, body) for one request; records it."""
        protocol = protocol_of(path) if method == "POST" else "other"
        request = Request(protocol, path if not query else f"{path}?{query}", body)
        with self.lock:
            self.requests.append(request)
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return 200, "application/json", json.dumps(_model_list(self.model)).encode()
        if path.endswith(("/count_tokens", ":countTokens")):
            return 200, "application/json", json.dumps({"input_tokens": USAGE["input_tokens"],
                                                        "totalTokens": USAGE["input_tokens"]}).encode()
        if protocol == "other":
            return 404, "application/json", json.dumps({"error": {"message": f"no such path {path}"}}).encode()
        request.results = results_in(protocol, body)
        request.stream = bool(body.get("stream")) or ":streamGenerateContent" in path
        if offers_tools(protocol, body):
            request.script = self.script_of(protocol, body)
            script = self.scripts[request.script]
            request.turn = turn_for(script, protocol, request.results, request.script)
            turn = script[request.turn]
        elif self.loop is not None and self.loop(protocol, body):  # an agent that edits through text
            request.turn = self.text_turn(self.script, protocol, body)
            turn = self.script[request.turn]
        else:
            turn = Turn(text=self.side(protocol, body))
        return _encode(protocol, turn, request.turn or 0, _model(protocol, path, body, self.model),
                       request.stream, "alt=sse" in query, request.script)


def _model_list(model: str) -> dict:
    return {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "scripted"}],
            "models": [{"name": f"models/{model}", "slug": model}]}


def _encode(protocol: str, turn: Turn, t: str, model: str, stream: bool, sse: bool,
            number: int = 0) -> tuple[int, str, bytes]:
    ids = [call_id(protocol, t, i, number) for i in range(len(turn.calls))]
    t = f"{number:02d}{t:02d}"  # the tag of this response's ids
    if protocol == "anthropic":
        message = anthropic_message(turn, t, model, ids)
        return (200, "text/event-stream", anthropic_events(message)) if stream else \
            (200, "application/json", json.dumps(message).encode())
    if protocol == "chat":
        completion = chat_completion(turn, t, model, ids)
        return (200, "text/event-stream", chat_events(completion)) if stream else \
            (200, "application/json", json.dumps(completion).encode())
    if protocol == "responses":
        response = responses_response(turn, t, model, ids)
        return (200, "text/event-stream", responses_events(response)) if stream else \
            (200, "application/json", json.dumps(response).encode())
    response = gemini_response(turn, t, model, ids)
    if stream and sse:
        return 200, "text/event-stream", _sse([(None, response)])
    return 200, "application/json", json.dumps([response] if stream else response).encode()


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        data = b""
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                handler.rfile.readline()
                return data
            data += handler.rfile.read(size)
            handler.rfile.readline()
    data = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
    encoding = handler.headers.get("Content-Encoding", "").lower()
    if encoding == "gzip":
        return gzip.decompress(data)
    if encoding == "deflate":
        return zlib.decompress(data)
    if encoding == "zstd":
        import zstandard  # only where an agent compresses its requests

        return zstandard.ZstdDecompressor().decompress(data, max_output_size=64 << 20)
    return data


def _handler(server: ScriptedModelServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _serve(self, method: str):
            raw = _read_body(self) if method == "POST" else b""
            try:
                body = json.loads(raw) if raw.strip() else {}
            except ValueError:
                body = {"unparsed": raw.decode("utf-8", "replace")}
            parts = urlsplit(self.path)
            status, kind, payload = server.answer(method, parts.path, parts.query, body)
            try:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the agent gave up on the request

        def do_POST(self):
            self._serve("POST")

        def do_GET(self):
            self._serve("GET")

    return Handler
