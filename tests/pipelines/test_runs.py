"""Runs on one lake: one at a time (a lock taken before anything is written), a killed run shown as such and
its work resumed, and reruns that change nothing."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pipelines import cli
from tests.conftest import SAMPLES

DROIDBOT = SAMPLES / "android" / "droidbot-run"
REPO = Path(__file__).resolve().parents[2]


def _python(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _wait_for(predicate, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_second_run_on_a_busy_lake_fails_at_once_and_writes_nothing(lake, capsys):
    holder = _python(f"""
from pipelines.lake import Lake
from pipelines.runs import lake_lock
import sys, time
with lake_lock(Lake({lake!r}), None, "run-holding"):
    print("held", flush=True)
    time.sleep(60)
""")
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        code = cli.main(["run", "ingest-android", "--input", str(DROIDBOT), "--lake", lake, "-q"])
        err = capsys.readouterr().err
        assert code == 2 and time.monotonic() - started < 10
        assert "is in use by run run-holding (pid" in err and "wait for it to finish" in err
        assert not (Path(lake) / "datasets").exists()  # nothing written
    finally:
        holder.kill()
        holder.wait()
    # the holder is gone (killed): its lock went with it
    assert cli.main(["run", "ingest-android", "--input", str(DROIDBOT), "--lake", lake, "-q"]) == 0


def test_a_killed_run_is_shown_as_died_and_the_next_run_finishes_its_work(lake, query):
    # a run whose only task never finishes: killed with -9 while it is `running`
    run = _python(f"""
import time
import pipelines.runner
from pipelines import definition
pipelines.runner.run_ingest_task = lambda task, ctx: time.sleep(600)
pipelines.runner.run_ingest(definition.load("ingest-android"), {lake!r}, [{str(DROIDBOT)!r}], progress=False)
""")
    catalog = Path(lake) / "catalog.duckdb"

    def running() -> bool:
        if not catalog.exists():
            return False
        try:
            return query("SELECT count(*) n FROM runs WHERE status = 'running'")[0]["n"] == 1
        except Exception:  # the run holds the catalog open for a moment
            return False

    try:
        _wait_for(running)
    finally:
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
    assert cli.main(["run", "ingest-android", "--input", str(DROIDBOT), "--lake", lake, "-q"]) == 0
    runs = query("SELECT status, error, seconds FROM runs ORDER BY started_at")
    assert [r["status"] for r in runs] == ["died", "success"] and runs[1]["seconds"] > 0
    assert "without finishing" in runs[0]["error"]
    assert query("SELECT count(*) n FROM steps")[0]["n"] == 12  # the DroidBot run, whole


def test_rerunning_an_ingest_after_later_stages_keeps_what_they_made(lake, query, capsys, tmp_path):
    import shutil

    copy = tmp_path / "copy" / "droidbot-run"
    shutil.copytree(DROIDBOT, copy)
    inputs = ["--input", str(DROIDBOT), "--input", str(copy.parent), "--lake", lake, "-q"]
    assert cli.main(["run", "ingest-android", *inputs]) == 0
    assert cli.main(["dedup", "android", "--lake", lake]) == 0
    deduped = query("SELECT current_version v FROM datasets")[0]["v"]
    clusters = query("SELECT count(*) n FROM dedup_clusters")[0]["n"]
    assert clusters == 2 and query("SELECT count(*) n FROM episodes")[0]["n"] == 1
    capsys.readouterr()
    # the same input again: the dataset dedup made stays, and dedup again changes nothing
    assert cli.main(["run", "ingest-android", *inputs]) == 0
    assert f"android v{deduped} (unchanged" in capsys.readouterr().out
    assert cli.main(["dedup", "android", "--lake", lake]) == 0
    assert query("SELECT current_version v FROM datasets")[0]["v"] == deduped
    assert query("SELECT count(*) n FROM dedup_clusters")[0]["n"] == clusters
    assert query("SELECT count(*) n FROM versions")[0]["n"] == deduped
