"""Start `pipelines view` on a free loopback port in a child process, and stop it by its handle."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from tests.conftest import REPO


@contextmanager
def view_server(lake: str, *args: str, timeout: float = 30.0) -> Iterator[str]:
    """Yields the base URL (no trailing slash) the server printed."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.view.serve", "--lake", lake, "--port", "0", *args],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()
    drain = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)
    drain.start()
    seen, url = [], None
    deadline = time.monotonic() + timeout
    try:
        while url is None:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                if proc.poll() is not None:
                    raise RuntimeError(f"pipelines view exited {proc.returncode}: {''.join(seen)}") from None
                if time.monotonic() > deadline:
                    raise RuntimeError(f"pipelines view printed no URL in {timeout} s: {''.join(seen)}") from None
                continue
            seen.append(line)
            if line.startswith("pipelines view: http://"):
                url = line.split()[2].rstrip("/")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def thread_server(app) -> Iterator[str]:
    """Serve `app` from a thread of this process on a free loopback port; yields the base URL."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the view server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def get(url: str, path: str, headers: dict | None = None) -> tuple[int, bytes, dict]:
    """A raw GET: the path is sent exactly as given (no client-side `..` normalization)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read(), {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()
