"""Producers in the loop for the SWE readers: run an agent framework installed in its own venv
(`.venv/producers/<name>-<version>/`, built by `make setup-test`) as a subprocess, once per test session."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import REPO
from tests.parts import require

PRODUCERS = REPO / ".venv" / "producers"
SCRIPTS = Path(__file__).resolve().parent / "producers"


def producer_python(name: str, version: str) -> Path:
    """The venv's interpreter; skips (fails under CI) when `make setup-test` has not built it."""
    python = PRODUCERS / f"{name}-{version}" / "bin" / "python"
    require(f"{name} {version} (venv {python.parent.parent})", (python.parent.parent / ".installed").exists(),
            "make parts (part of make setup-test) builds it")
    return python


def run_script(python: Path, script: str, args: list[str], home: Path, timeout: float = 300) -> str:
    """Run one of `producers/*.py` in the producer's venv with HOME in `home` (nothing written to the real
    home); returns stdout, raising with its stderr when it fails."""
    home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "MSWEA_GLOBAL_CONFIG_DIR": str(home),
           "MSWEA_SILENT_STARTUP": "1", "OPENHANDS_SUPPRESS_BANNER": "1", "LANG": "C.UTF-8",
           "TMPDIR": str(home)}
    done = subprocess.run([str(python), str(SCRIPTS / script), *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=home)
    if done.returncode != 0:
        raise AssertionError(f"{script} {args[:1]} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return done.stdout


def last_json_line(stdout: str):
    """The JSON a script printed last (producers print banners before it)."""
    return json.loads(stdout.strip().splitlines()[-1])


_RUNS: dict[tuple[str, str], tuple] = {}  # one run of each producer per test session, shared by the modules


def mini_swe_agent_run(version: str, tmp_path_factory):
    """(output folder, {trajectory path: what mini-swe-agent's own code reads}) of mini-swe-agent `version`'s
    run (`producers/mini_swe_agent.py`), made once per session."""
    key = ("mini-swe-agent", version)
    if key not in _RUNS:
        python = producer_python("mini-swe-agent", version)
        base = tmp_path_factory.mktemp(f"mini-{version}")
        oracle = last_json_line(run_script(python, "mini_swe_agent.py", ["run", str(base / "out")], base / "home"))
        _RUNS[key] = (base / "out", oracle)
    return _RUNS[key]


def openhands_sdk_run(version: str, tmp_path_factory):
    """(conversations folder, what the SDK's event models read from each) of openhands-sdk `version`'s run
    (`producers/openhands_sdk.py`), made once per session."""
    key = ("openhands-sdk", version)
    if key not in _RUNS:
        python = producer_python("openhands-sdk", version)
        base = tmp_path_factory.mktemp("openhands-sdk")
        oracle = last_json_line(run_script(python, "openhands_sdk.py", ["run", str(base / "out")], base / "home"))
        assert oracle["version"] == version
        _RUNS[key] = (base / "out" / "conversations", oracle["conversations"])
    return _RUNS[key]
