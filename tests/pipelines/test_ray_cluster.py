"""A real 2-node Ray cluster on loopback, with Ray's token authentication on: `ray start --head` and
`ray start --address`, each with its own temp dir, started and stopped by this test by their own process
groups; the worker node declares one GPU (Ray takes a declared count as it is). Ingest, validate, dedup and
export run their per-part work on it (also after an incremental ingest) and give the dataset and the shards the
in-process run gives; a stage declared to need a GPU runs its tasks on the GPU node only.

The driver joins as Ray documents for a secured cluster: `RAY_AUTH_MODE=token` and the token in
`RAY_AUTH_TOKEN`, the same on every node and in the process that runs the command.
"""

import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog
from tests.conftest import SAMPLES
from tests.pipelines.label_servers import free_port

BIN = Path(sys.executable).parent
RUN_COLUMNS = {"_run_id", "ingest_run_id"}  # which run wrote a row: differs between the two runs by nature


def _start(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen([str(BIN / "ray"), "start", "--block", *args], env=env, start_new_session=True,
                            stdout=log.open("wb"), stderr=subprocess.STDOUT)


def _alive_nodes(address: str, env: dict) -> int:
    code = ("import ray; ray.init(address=%r, logging_level='ERROR', configure_logging=False); "
            "print(sum(n['Alive'] for n in ray.nodes()))" % address)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    return int(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("ray")
    # Ray's socket paths must fit in 107 bytes: its session folders go in a short folder of their own, not under
    # the test's (a pytest-xdist worker's is 10 bytes longer)
    short = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "RAY_USAGE_STATS_ENABLED": "0"}
    port = free_port()
    address = f"127.0.0.1:{port}"
    nodes = [_start(["--head", f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=1",
                     "--include-dashboard=false", f"--temp-dir={short / 'head'}"], env, root / "head.log")]
    try:
        deadline = time.monotonic() + 120
        while _alive_nodes(address, env) < 1:
            assert time.monotonic() < deadline and nodes[0].poll() is None, (root / "head.log").read_text()[-2000:]
            time.sleep(1)
        nodes.append(_start([f"--address={address}", "--node-ip-address=127.0.0.1", "--num-cpus=1", "--num-gpus=1",
                             f"--temp-dir={short / 'worker'}"], env, root / "worker.log"))
        while _alive_nodes(address, env) < 2:
            assert time.monotonic() < deadline, (root / "worker.log").read_text()[-2000:]
            time.sleep(1)
        yield address, env
    finally:
        for node in reversed(nodes):  # our own nodes only, by their process groups
            os.killpg(node.pid, signal.SIGTERM)
        for node in nodes:
            try:
                node.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait()
        shutil.rmtree(short, ignore_errors=True)


def _pipelines(env: dict, *args: str) -> str:
    done = subprocess.run([str(BIN / "pipelines"), *args], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


def _rows(lake: str, dataset: str) -> dict[str, dict[str, dict]]:
    """Per table of the current version: its rows keyed by their id (or their content), without the run id
    columns."""
    lake_ = Lake(lake)
    with open_catalog(lake_, read_only=True) as cat:
        version = cat.current_version(dataset)
    out = {}
    for table, parts in version.parts.items():
        rows = {}
        for part in parts:
            data = pq.read_table(lake_.absolute(part))
            data = data.select([c for c in data.column_names if c not in RUN_COLUMNS])
            for row in data.to_pylist():
                key = row.get("step_id") or row.get("episode_id") or row.get("sha256") or repr(sorted(row.items()))
                rows[key] = row
        out[table] = rows
    return out


def _same_rows(got: dict, want: dict) -> None:
    for table in sorted(set(got) | set(want)):
        a, b = got.get(table, {}), want.get(table, {})
        assert sorted(a) == sorted(b), table
        differing = [(table, key, column, a[key][column], b[key][column]) for key in sorted(a)
                     for column in a[key] if a[key][column] != b[key][column]]
        assert differing == [], differing[:3]


def test_every_stage_on_a_two_node_cluster_gives_the_in_process_dataset(cluster, tmp_path):
    """ingest (with validate) -> dedup -> export, then more input added incrementally: each on the cluster
    and in-process, the same rows and the same shards."""
    address, env = cluster
    local, remote = str(tmp_path / "local"), str(tmp_path / "remote")
    inputs = tmp_path / "in"
    shutil.copytree(SAMPLES, inputs)
    late = tmp_path / "late"
    shutil.move(inputs / "ubuntu", late)  # arrives after the first run
    on_ray = ["--executor", "ray", "--ray-address", address]
    on_local = ["--executor", "local"]
    for step in ("first", "added"):
        if step == "added":
            shutil.move(late, inputs / "ubuntu")
        common = ["--input", str(inputs), "--task-mb", "0.25", "-q"]
        _pipelines(env, "run", "ingest-all", "--lake", local, *on_local, *common)
        out = _pipelines(env, "run", "ingest-all", "--lake", remote, *on_ray, *common)
        assert "on ray" in out and "0 failed" in out and "validate all" in out
        _pipelines(env, "dedup", "all", "--lake", local, *on_local)
        out = _pipelines(env, "dedup", "all", "--lake", remote, *on_ray)
        assert "part groups on ray" in out
        _same_rows(_rows(remote, "all"), _rows(local, "all"))
        for kind in ("sft", "rl"):
            _pipelines(env, "export", kind, "all", "--out", f"{local}-{kind}", "--lake", local, *on_local)
            _pipelines(env, "export", kind, "all", "--out", f"{remote}-{kind}", "--lake", remote, *on_ray)
            shards = lambda root: {p.relative_to(root): p.read_bytes() for p in Path(root).rglob("*")  # noqa: E731
                                   if p.suffix in (".jsonl", ".parquet")}
            assert shards(f"{remote}-{kind}") == shards(f"{local}-{kind}") != {}
    read, total = map(int, re.search(r"(\d+) of (\d+) part groups read", out).groups())
    assert 0 < read < total  # the second dedup read only the groups the added input made


def test_a_driver_with_a_wrong_token_is_refused(cluster):
    address, env = cluster
    code = "import ray; ray.init(address=%r, logging_level='ERROR', configure_logging=False)" % address
    done = subprocess.run([sys.executable, "-c", code], env={**env, "RAY_AUTH_TOKEN": "not-the-token"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "auth" in done.stderr.lower(), done.stderr[-2000:]


def _gpu_nodes(address: str, env: dict) -> list[str]:
    code = ("import ray; ray.init(address=%r, logging_level='ERROR', configure_logging=False); "
            "print(' '.join(n['NodeID'][:12] for n in ray.nodes() if n['Alive'] and n['Resources'].get('GPU')))"
            % address)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_a_stage_declared_to_need_a_gpu_runs_on_the_gpu_node_only(cluster, tmp_path):
    address, env = cluster
    (gpu_node,) = _gpu_nodes(address, env)
    shutil.copytree(SAMPLES / "android", tmp_path / "in" / "android")
    (tmp_path / "gpu.toml").write_text('dataset = "gpu"\nformats = ["@android"]\ninputs = ["in"]\n'
                                       'stages = ["ingest", "validate"]\ntask_mb = 0.1\n'
                                       "[stage_resources.validate]\ngpus = 1\n")
    out = _pipelines(env, "run", str(tmp_path / "gpu.toml"), "--lake", str(tmp_path / "lake"), "--executor", "ray",
                     "--ray-address", address, "-q")
    validate = re.search(r"validate gpu: (\d+) part groups on Ray, each asking CPU 1, GPU 1, memory 1,024 MB, "
                         r"given CPU 1, GPU 1; nodes (.*)", out)
    assert validate, out[-3000:]
    assert validate.group(2) == f"{gpu_node} ({validate.group(1)})"  # every validate task on the GPU node
    ingest = re.search(r"ingest gpu: (\d+) tasks on Ray, each asking CPU 1, memory 1,024 MB, given CPU 1; "
                       r"nodes (.*)", out)
    assert ingest and int(ingest.group(1)) > 1, out[-3000:]
