"""Producers in the loop for the trace readers: the OpenAI Agents SDK and the OpenTelemetry SDK (with OpenInference's
OpenAI instrumentation), each in its own venv (`.venv/producers/<name>-<version>/`, built by `make parts`), run as
a subprocess against the scripted model server stand-in (`model_server.py`), once per test session and mode."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import REPO
from tests.parts import require
from tests.ingest.traces.model_server import ModelServer, Script, Turn

PRODUCERS = REPO / ".venv" / "producers"
SCRIPTS = Path(__file__).resolve().parent / "producers"
AGENTS = ("openai-agents", "0.24.0")
OTEL = ("opentelemetry-sdk", "1.45.2")
TASK = "What is the weather in Paris and in Oslo?"
PLAN = "I will look up both cities."
ANSWER = "Sunny in Paris and in Oslo."

# what the model server says, per mode: the oracle
SCRIPTS_BY_MODE = {
    "chat": [Turn(calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})], text=PLAN),
             Turn(text=ANSWER)],
    "responses": [Turn(calls=[("get_weather", {"city": "Paris"})], text=PLAN),
                  Turn(calls=[("get_weather", {"city": "Oslo"})]), Turn(text=ANSWER)],
    "handoff": [Turn(calls=[("transfer_to_weather_agent", {})]),
                Turn(calls=[("get_weather", {"city": "Oslo"})], text=PLAN), Turn(text=ANSWER)],
    "tool-spans": [Turn(calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})], text=PLAN),
                   Turn(text=ANSWER)],
    "model-spans": [Turn(calls=[("get_weather", {"city": "Paris"})], text=PLAN),
                    Turn(calls=[("get_weather", {"city": "Oslo"})]), Turn(text=ANSWER)],
    "genai": [Turn(calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})], text=PLAN),
              Turn(text=ANSWER)],
}
SCRIPTS_BY_MODE["openllmetry"] = SCRIPTS_BY_MODE["model-spans"]
OTEL_MODES = ("tool-spans", "model-spans", "genai", "openllmetry")
SCRIPTS_BY_MODE["langsmith"] = SCRIPTS_BY_MODE["tool-spans"]
LANGSMITH = ("langsmith", "0.15.1")


def weather(city: str) -> str:
    """What the producers' `get_weather` tool returns (the server sees it come back in the next request)."""
    return f"The weather in {city} is sunny, 21 C."


def producer_python(name: str, version: str) -> Path:
    python = PRODUCERS / f"{name}-{version}" / "bin" / "python"
    require(f"{name} {version} (venv {python.parent.parent})", (python.parent.parent / ".installed").exists(),
            "make parts (part of make setup-test) builds it")
    return python


_RUNS: dict[str, tuple[Path, Script]] = {}


def run(mode: str, tmp_path_factory) -> tuple[Path, Script]:
    """(output folder, the script with the requests it got) of one producer run in `mode`."""
    if mode not in _RUNS:
        name, version = OTEL if mode in OTEL_MODES else LANGSMITH if mode == "langsmith" else AGENTS
        python = producer_python(name, version)
        out = tmp_path_factory.mktemp(mode)
        script = Script(list(SCRIPTS_BY_MODE[mode]),
                        traces_file=out / ("runs.jsonl" if mode == "langsmith" else "backend.jsonl"))
        args = [{OTEL[0]: "otel_run.py", AGENTS[0]: "agents_run.py", LANGSMITH[0]: "langsmith_run.py"}[name], mode]
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(out), "TMPDIR": str(out), "LANG": "C.UTF-8",
               "OPENAI_AGENTS_DISABLE_TRACING": "0"}
        with ModelServer(script) as server:
            argv = [server.base_url] if mode == "langsmith" else [server.base_url, str(out), args[1]]
            done = subprocess.run([str(python), str(SCRIPTS / args[0]), *argv],
                                  capture_output=True, text=True, timeout=300, env=env, cwd=out)
        if done.returncode != 0:
            raise AssertionError(f"{args[0]} {mode} failed ({done.returncode}):\n{done.stderr[-4000:]}")
        assert done.stdout.strip().splitlines()[-1] == ANSWER, done.stdout
        _RUNS[mode] = (out, script)
    return _RUNS[mode]


def scripted_calls(script: Script) -> list[tuple[str, dict]]:
    return [call for turn in script.turns for call in turn.calls]


def json_lines(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
