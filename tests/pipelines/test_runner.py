"""The ingest runner: idempotent reruns, resume after a failed task, Ray placement, the run record."""

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import pipelines.infra.task
from pipelines.infra import definition, executor
from pipelines.infra.plan import InputError
from pipelines.infra.runner import run_ingest
from tests.conftest import SAMPLES

RUN = SAMPLES / "android" / "droidbot-run"


def _three_runs(tmp_path):
    """Three copies of the DroidBot run under one input folder: three episodes, three units."""
    root = tmp_path / "runs"
    for name in ("a", "b", "c"):
        shutil.copytree(RUN, root / name)
    return root


def test_rerun_on_the_same_input_gives_the_same_dataset(run, query):
    first = run("ingest-android", [RUN])
    ids_before = query("SELECT step_id, _run_id FROM steps ORDER BY step_id")
    second = run("ingest-android", [RUN])
    assert second.status == "success" and second.units_known == 1 and second.tasks_total == 0
    assert (second.version, second.version_created) == (first.version, False)
    assert query("SELECT step_id, _run_id FROM steps ORDER BY step_id") == ids_before
    assert query("SELECT count(*) AS n, count(DISTINCT step_id) AS d FROM steps") == [{"n": 12, "d": 12}]
    runs = query("SELECT status, tasks_skipped, version FROM runs ORDER BY started_at")
    assert runs == [{"status": "success", "tasks_skipped": 0, "version": 1},
                    {"status": "success", "tasks_skipped": 0, "version": 1}]


def test_episode_ids_are_deterministic_across_lakes(run, query, tmp_path):
    run("ingest-android", [RUN])
    other = tmp_path / "other-lake"
    r = run_ingest(definition.load("ingest-android"), str(other), [str(RUN)], progress=False, log=lambda s: None)
    assert r.status == "success"
    import duckdb
    con = duckdb.connect(str(other / "catalog.duckdb"), read_only=True)
    assert con.sql("SELECT episode_id FROM episodes").fetchall() == [
        (row["episode_id"],) for row in query("SELECT episode_id FROM episodes")]


def test_resume_after_a_task_fails(run, query, tmp_path, monkeypatch):
    inputs = _three_runs(tmp_path)
    real = pipelines.infra.task.run_ingest_task
    calls = []

    def crash_on_second(task, ctx):
        calls.append(task.task_id)
        if len(calls) == 2:
            raise OSError("disk full (stand-in for a worker crash)")
        return real(task, ctx)

    monkeypatch.setattr("pipelines.infra.runner.run_ingest_task", crash_on_second)
    failed = run("ingest-android", [inputs], task_mb=0.1)  # one unit per task
    assert failed.status == "failed" and failed.tasks_total == 3 and failed.tasks_failed == 1
    assert any("disk full" in m for m in failed.messages)
    assert query("SELECT count(*) AS n FROM datasets") == [{"n": 0}]  # no version from a failed run
    assert query("SELECT status, error FROM runs")[0]["status"] == "failed"

    monkeypatch.setattr("pipelines.infra.runner.run_ingest_task", real)
    resumed = run("ingest-android", [inputs], task_mb=0.1)
    assert resumed.status == "success" and resumed.tasks_skipped == 2 and resumed.episodes == 3
    assert query("SELECT count(*) AS n, count(DISTINCT step_id) AS d FROM steps") == [{"n": 36, "d": 36}]


def test_ray_placement_gives_the_same_rows_as_in_process(run, query, tmp_path):
    inputs = _three_runs(tmp_path)
    local = run("ingest-android", [inputs], task_mb=0.1, executor="local")
    rows_local = query("SELECT step_id, action, observation FROM steps ORDER BY step_id")
    shutil.rmtree(local.lake)
    with executor.traced() as traces:
        on_ray = run("ingest-android", [inputs], task_mb=0.1, executor="ray")
    assert on_ray.status == "success" and on_ray.executor == "ray" and on_ray.tasks_total == 3
    assert query("SELECT step_id, action, observation FROM steps ORDER BY step_id") == rows_local
    # the trace the Ray bench profiles from: each task's run on its worker (another process), its CPU there and
    # its result's size, the map's first (the later stages' maps follow)
    ingest = traces[0]
    assert ingest.label == "ingest android" and len(ingest.tasks) == 3 and ingest.cpu_ended >= ingest.cpu_started
    for started, ended, cpu, pid, received, size in ingest.tasks:
        assert pid != os.getpid() and started <= ended <= received and cpu > 0 and size > 0


def test_new_input_adds_a_version_sharing_the_old_parts(run, query, tmp_path):
    inputs = _three_runs(tmp_path)
    shutil.rmtree(inputs / "c")
    run("ingest-android", [inputs], task_mb=0.1)
    shutil.copytree(RUN, inputs / "c")
    second = run("ingest-android", [inputs], task_mb=0.1)
    # only the new run is read; the two old ones are not read again
    assert (second.version, second.units_known, second.units_in, second.episodes) == (2, 2, 1, 1)
    assert query("SELECT version, episodes, parent_version FROM versions ORDER BY version") == [
        {"version": 1, "episodes": 2, "parent_version": None}, {"version": 2, "episodes": 3, "parent_version": 1}]
    parts = {r["version"]: set(json.loads(r["parts"])["steps"]) for r in query("SELECT version, parts FROM versions")}
    assert parts[1] < parts[2] and len(parts[2] - parts[1]) == 1
    assert query("SELECT count(*) AS n, count(DISTINCT step_id) AS d FROM steps") == [{"n": 36, "d": 36}]


def test_a_changed_input_is_reported_not_read_and_replace_starts_over(run, query, tmp_path):
    inputs = _three_runs(tmp_path)
    run("ingest-android", [inputs], task_mb=0.1)
    changed = next((inputs / "b").rglob("*.json"))
    changed.write_bytes(changed.read_bytes() + b" ")
    again = run("ingest-android", [inputs], task_mb=0.1)
    assert again.version == 1 and not again.version_created and again.units_known == 2
    assert [i.reason for i in again.ignored] == ["skipped: changed since v1 ingested it (--replace rebuilds the "
                                                 "dataset from the inputs given)"]
    shutil.rmtree(inputs / "c")
    replaced = run("ingest-android", [inputs], task_mb=0.1, replace=True)
    assert replaced.version == 2 and replaced.units_in == 2 and replaced.units_known == 0
    assert query("SELECT count(DISTINCT episode_id) AS n FROM steps") == [{"n": 2}]


def test_missing_input_is_a_clear_error(run, tmp_path):
    with pytest.raises(InputError, match="no such file or directory"):
        run("ingest-android", [tmp_path / "nope"])
    with pytest.raises(InputError, match="matches nothing"):
        run("ingest-android", [str(tmp_path / "*.json")])


def test_glob_inputs(run, tmp_path):
    inputs = _three_runs(tmp_path)
    result = run("ingest-android", [str(inputs / "[ab]")])
    assert result.episodes == 2


def test_ray_address_joins_an_existing_cluster(lake, query, tmp_path):
    """A real `ray start --head` on loopback stands for the user's cluster, secured with a token as Ray
    prescribes; stopped by its own process group. The command runs in a process of its own, as a user's
    does (a process that ran a local Ray before keeps that Ray's settings)."""
    import secrets
    import signal
    import socket
    import tempfile
    import time

    from tests.pipelines.label_servers import free_port

    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    port = free_port()
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    log = tmp_path / "head.log"
    head = subprocess.Popen([str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", f"--port={port}",
                             "--node-ip-address=127.0.0.1", "--num-cpus=2", "--include-dashboard=false",
                             "--disable-usage-stats", f"--temp-dir={temp}"],
                            start_new_session=True, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)
    try:
        inputs = _three_runs(tmp_path)
        deadline = time.monotonic() + 120
        while True:  # the head's GCS port accepts connections once it is up
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and head.poll() is None, log.read_text()[-2000:]
                time.sleep(1)
        done = subprocess.run([str(Path(sys.executable).parent / "pipelines"), "run", "ingest-android", "--input",
                               str(inputs), "--task-mb", "0.1", "--ray-address", f"127.0.0.1:{port}", "--lake", lake,
                               "-q"], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0 and "on ray" in done.stdout, done.stderr[-3000:]
        assert query("SELECT count(DISTINCT episode_id) AS n FROM steps") == [{"n": 3}]
    finally:
        if head.poll() is None:
            os.killpg(head.pid, signal.SIGTERM)
            try:
                head.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(head.pid, signal.SIGKILL)
                head.wait()
        shutil.rmtree(temp, ignore_errors=True)


def test_auto_executor_uses_ray_only_when_parallel_tasks_outweigh_its_startup():
    from pipelines.infra.executor import ray_pays_off
    from pipelines.infra.runner import LOCAL_BYTES_PER_S

    def pays(*sizes_mb, cpus):
        return ray_pays_off([int(mb * 2**20) for mb in sizes_mb], LOCAL_BYTES_PER_S, cpus)

    assert not pays(96, 96, 8, cpus=2)  # 200 MB: in-process is faster on 2 cores
    assert not pays(*[96] * 20, cpus=1)  # nothing to parallelize onto
    assert pays(*[96] * 24, cpus=2)  # 2.3 GB: halving the work beats the startup
    assert pays(*[96] * 8, cpus=16)
    # 2 GB in 4,000 tasks: Ray's own cost per task (a few ms) outweighs what the second core saves
    assert not pays(*[0.5] * 4000, cpus=2)


def test_fifos_devices_and_links_out_of_the_input_are_skipped_and_reported(run, query, tmp_path):
    # A FIFO blocks whoever opens it, /dev/zero never ends, a link out of the input leaks another file:
    # none is read, the run finishes, and each is named in the run's ignored files with its reason.
    root = tmp_path / "runs"
    shutil.copytree(RUN, root / "a")
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2-top-secret")
    os.mkfifo(root / "a" / "pipe")
    (root / "a" / "leak.json").symlink_to(secret)
    (root / "a" / "zero").symlink_to("/dev/zero")
    done = {}
    worker = threading.Thread(target=lambda: done.setdefault("result", run("ingest-android", [root])), daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), "ingest hung on a FIFO or device"
    result = done["result"]
    assert result.status == "success"
    assert query("SELECT count(*) AS n FROM steps") == [{"n": 12}]
    assert "hunter2" not in str(query("SELECT * FROM steps"))
    reasons = "\n".join(map(str, result.ignored))
    assert f"{root}/a/pipe (skipped: a FIFO)" in reasons
    assert f"{root}/a/leak.json (skipped: a link to {secret}, outside the input)" in reasons
    assert f"{root}/a/zero (skipped: a link to /dev/zero, outside the input)" in reasons


def test_derived_parts_are_named_by_the_bytes_written(tmp_path):
    """Two different slices of one table share their Arrow buffers: they still get two names."""
    import pyarrow as pa

    from pipelines.infra.datasets import write_part
    from pipelines.infra.lake import Lake

    lake = Lake(str(tmp_path / "lake"))
    table = pa.table({"stage": ["a", "b", "c", "d"]}).cast(pa.schema([("stage", pa.string())]))
    first, second = table.slice(0, 2), table.slice(2, 2)
    names = {write_part(lake, "d", "quarantine", t, "x") for t in (first, second)}
    assert len(names) == 2
    assert write_part(lake, "d", "quarantine", first, "x") in names  # the same rows again: the same part


def test_progress_is_one_live_line_in_a_terminal_and_a_line_per_task_in_a_log():
    import io

    from pipelines.infra.runner import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    marker = {"counts": {"episodes": 2, "steps": 30, "quarantined": 1}}
    for stream, live in ((Terminal(), True), (io.StringIO(), False)):
        bar = Progress(3, 3_000_000, stream=stream)
        for _ in range(3):
            bar.update(marker, 1_000_000)
        text = stream.getvalue()
        # MB of 10^6 bytes, as the run's summary counts them
        assert "[3/3 tasks] 3.0/3.0 MB" in text and "steps/s  ETA 0 s" in text and "quarantined 3" in text
        if live:  # redrawn in place, one final newline
            assert text.count("\r\x1b[2K") == 3 and text.count("\n") == 1
        else:
            assert text.count("\n") == 3 and "\r" not in text
