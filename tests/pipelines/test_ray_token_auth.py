"""A local Ray started by the benches asks for token authentication, as the README documents, so Ray does not
turn it on by itself (on finding its default token file) and print its notice on every start."""

from __future__ import annotations

import os
import subprocess
import sys

from pipelines.infra import ray_setup
from tests.conftest import REPO, SAMPLES

NOTICE = "Token authentication is enabled for this Ray cluster"

_BENCH_RAY_STEP = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench.ingest import ray_ingest_seconds
print("seconds", ray_ingest_seconds(Path(sys.argv[2]), Path(sys.argv[3])))
"""


def test_the_ingest_bench_starts_ray_without_the_token_notice(tmp_path):
    token_file = tmp_path / "home" / ".ray" / "auth_token"  # the file `ray get-auth-token --generate` writes
    token_file.parent.mkdir(parents=True)
    token_file.write_text("a" * 64)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env.update(HOME=str(token_file.parents[1]), PYTHONPATH=str(REPO), RAY_USAGE_STATS_ENABLED="0")
    done = subprocess.run([sys.executable, "-c", _BENCH_RAY_STEP, str(REPO), str(SAMPLES / "android" / "droidbot-run"),
                           str(tmp_path / "lake")], env=env, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "seconds" in done.stdout and (tmp_path / "lake").is_dir()
    assert NOTICE not in output, output[-3000:]


def test_token_auth_is_asked_for_with_the_token_at_hand(tmp_path, monkeypatch):
    monkeypatch.setattr(ray_setup, "DEFAULT_TOKEN_FILE", tmp_path / "auth_token")
    fresh: dict = {}
    ray_setup.ask_for_token_auth(fresh)  # no token anywhere: one made for this Ray and its driver
    assert fresh["RAY_AUTH_MODE"] == "token" and len(fresh["RAY_AUTH_TOKEN"]) == 64
    (tmp_path / "auth_token").write_text("b" * 64)
    from_file: dict = {}
    ray_setup.ask_for_token_auth(from_file)  # Ray reads the default file itself
    assert from_file == {"RAY_AUTH_MODE": "token"}
    chosen = {"RAY_AUTH_MODE": "disabled"}
    ray_setup.ask_for_token_auth(chosen)  # the user's choice stands
    assert chosen == {"RAY_AUTH_MODE": "disabled"}
