"""A small stand-in for a scripted OpenAI-compatible model server on loopback, for the trace producers' tests.

It answers `POST /v1/chat/completions` and `POST /v1/responses` (non-streaming and streaming) from a fixed
script: each request takes the next turn, a turn is tool calls (`Turn(calls=[(name, arguments)])`) or a final
answer (`Turn(text=...)`), with deterministic ids (`call_1`, `call_2`...). It records every request it gets, and
keeps the payloads the Agents SDK's `BackendSpanExporter` posts to `/v1/traces/ingest` and the run batches the
LangSmith SDK posts to `/runs/batch` (its `GET /info` says the multipart endpoint is off), each written to the
traces file as one JSON line. The script is the oracle: every call and answer it fixed must be in the ingested episode.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MODEL = "scripted-model-1"


@dataclass
class Turn:
    calls: list[tuple[str, dict]] = field(default_factory=list)
    text: str | None = None
    model: str = MODEL


@dataclass
class Script:
    turns: list[Turn]
    traces_file: Path | None = None
    requests: list[tuple[str, dict]] = field(default_factory=list)
    next_turn: int = 0
    call_ids: int = 0

    def take(self) -> tuple[Turn, list[str]]:
        if self.next_turn >= len(self.turns):
            return Turn(text="(the script has no more turns)"), []
        turn = self.turns[self.next_turn]
        self.next_turn += 1
        ids = []
        for _ in turn.calls:
            self.call_ids += 1
            ids.append(f"call_{self.call_ids}")
        return turn, ids


def _chat(turn: Turn, ids: list[str], n: int) -> dict:
    calls = [{"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
             for i, (name, args) in zip(ids, turn.calls)]
    message = {"role": "assistant", "content": turn.text}
    if calls:
        message["tool_calls"] = calls
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1767225600 + n, "model": turn.model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _chat_chunks(turn: Turn, ids: list[str], n: int) -> list[dict]:
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 1767225600 + n, "model": turn.model}
    delta: dict = {"role": "assistant", "content": turn.text}
    if turn.calls:
        delta["tool_calls"] = [{"index": k, "id": i, "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)}}
                               for k, (i, (name, args)) in enumerate(zip(ids, turn.calls))]
    return [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if turn.calls else "stop"}],
             "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}]


def _response(turn: Turn, ids: list[str], n: int) -> dict:
    output = [{"type": "function_call", "id": f"fc_{i}", "call_id": i, "name": name, "arguments": json.dumps(args),
               "status": "completed"} for i, (name, args) in zip(ids, turn.calls)]
    if turn.text is not None:
        output.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
    return {"id": f"resp_{n}", "object": "response", "created_at": 1767225600 + n, "model": turn.model,
            "status": "completed", "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [], "error": None, "incomplete_details": None, "instructions": None, "metadata": {},
            "temperature": None, "top_p": None,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def _response_events(body: dict) -> list[dict]:
    events = [{"type": "response.created", "sequence_number": 0, "response": {**body, "status": "in_progress",
                                                                               "output": []}}]
    for k, item in enumerate(body["output"]):
        events.append({"type": "response.output_item.done", "sequence_number": len(events), "output_index": k,
                       "item": item})
    events.append({"type": "response.completed", "sequence_number": len(events), "response": body})
    return events


def _handler(script: Script, lock: threading.Lock):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # the test's output stays the test's
            pass

        def _send(self, body: dict | None = None, events: list[dict] | None = None):
            if events is None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
            else:
                data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.rstrip("/").endswith("/info"):
                return self._send({"version": "0.10.0", "batch_ingest_config": {
                    "use_multipart_endpoint": False, "size_limit": 100, "size_limit_bytes": 20 << 20,
                    "scale_up_qsize_trigger": 1000, "scale_up_nthreads_limit": 1, "scale_down_nempty_trigger": 4}})
            self.send_error(404)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            path = self.path.rstrip("/")
            with lock:
                if path.endswith(("/traces/ingest", "/runs/batch")):
                    if script.traces_file is not None:
                        with script.traces_file.open("a") as out:
                            out.write(json.dumps(body) + "\n")
                    return self._send({})
                script.requests.append((path, body))
                turn, ids = script.take()
                n = len(script.requests)
            if path.endswith("/chat/completions"):
                if body.get("stream"):
                    return self._send(events=_chat_chunks(turn, ids, n))
                return self._send(_chat(turn, ids, n))
            if path.endswith("/responses"):
                reply = _response(turn, ids, n)
                return self._send(events=_response_events(reply)) if body.get("stream") else self._send(reply)
            self.send_error(404)

    return Handler


class ModelServer:
    """`with ModelServer(script) as server:` serves on `server.base_url` (`http://127.0.0.1:<port>/v1`)."""

    def __init__(self, script: Script):
        self.script = script
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script, threading.Lock()))
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "ModelServer":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
