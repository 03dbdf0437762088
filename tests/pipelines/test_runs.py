"""Runs on one lake: one at a time (a lock taken before anything is written), a killed run shown as such and
its work resumed, and reruns that change nothing."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pipelines import cli
from pipelines.infra.phases import PAUSE_AT
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
from pipelines.infra.lake import Lake
from pipelines.infra.runs import lake_lock
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
import pipelines.infra.runner
from pipelines.infra import definition
pipelines.infra.runner.run_ingest_task = lambda task, ctx: time.sleep(600)
pipelines.infra.runner.run_ingest(definition.load("ingest-android"), {lake!r}, [{str(DROIDBOT)!r}], progress=False)
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
    assert run.returncode == -signal.SIGKILL  # it died of the signal, not of something else
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


def _content(lake: str) -> dict:
    """The current version's episodes and steps, without the columns naming the run that wrote them."""
    import pyarrow.parquet as pq

    from pipelines.infra.lake import Lake
    from pipelines.infra.runs import open_catalog

    with open_catalog(Lake(lake), read_only=True) as cat:
        version = cat.current_version("android")
    out = {}
    for table in ("episodes", "steps"):
        rows = []
        for part in version.parts[table]:
            data = pq.read_table(f"{lake}/{part}")
            rows += [repr(sorted((k, v) for k, v in r.items() if k not in ("_run_id", "ingest_run_id")))
                     for r in data.to_pylist()]
        out[table] = sorted(rows)
    return out


PHASES = {  # phase -> what the lake holds when the run is killed there (pipelines/infra/phases.py)
    "planning": lambda lake: not (lake / "datasets").exists(),
    "mid-task": lambda lake: any((lake / "datasets" / "android" / "parts").rglob("*.parquet"))
    and not (lake / "datasets" / "android" / "tasks").exists(),
    "committing": lambda lake: any((lake / "datasets" / "android" / "tasks").glob("*.json"))
    and _versions(lake) == 0,
    "stage:validate": lambda lake: _versions(lake) == 1,
}


def _versions(lake: Path) -> int:
    import duckdb

    with duckdb.connect(str(lake / "catalog.duckdb"), read_only=True) as con:
        return con.execute("SELECT count(*) FROM versions").fetchone()[0]


def _paused_at(proc: subprocess.Popen, phase: str, timeout_s: float = 120.0) -> None:
    """Wait until the run says it is paused at `phase` (it then waits to be killed)."""
    import select

    deadline, seen = time.monotonic() + timeout_s, ""
    while f"paused at {phase}\n" not in seen:
        assert proc.poll() is None, f"the run ended ({proc.returncode}) before {phase}: {seen[-2000:]}"
        assert time.monotonic() < deadline, f"the run never reached {phase}: {seen[-2000:]}"
        if select.select([proc.stderr], [], [], 0.5)[0]:
            seen += os.read(proc.stderr.fileno(), 65536).decode(errors="replace")


def test_killed_at_each_phase_then_run_again_gives_the_same_dataset(lake, tmp_path):
    """SIGKILL at each named phase of `pipelines run` (planning, mid-task, committing, before validate), checked
    on disk to be that phase and the process checked to have died of the signal; then the same command again:
    the dataset is the one a clean run makes, no temporary file is left, the run is recorded as died."""
    import duckdb

    reference = str(tmp_path / "reference")
    argv = ["run", "ingest-android", "--input", str(DROIDBOT), "-q"]
    assert cli.main([*argv, "--lake", reference]) == 0
    want = _content(reference)
    for phase, evidence in PHASES.items():
        trial_lake = tmp_path / f"lake-{phase.replace(':', '-')}"
        proc = subprocess.Popen([str(Path(sys.executable).parent / "pipelines"), *argv, "--lake", str(trial_lake)],
                                cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, PAUSE_AT: phase})
        try:
            _paused_at(proc, phase)
            assert evidence(trial_lake), f"the lake does not show phase {phase}"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stderr.close()
        assert proc.returncode == -signal.SIGKILL, (phase, proc.returncode)
        assert cli.main([*argv, "--lake", str(trial_lake)]) == 0
        assert _content(str(trial_lake)) == want, phase
        assert [p for p in trial_lake.rglob("*") if ".tmp-" in p.name] == []
        with duckdb.connect(str(trial_lake / "catalog.duckdb"), read_only=True) as con:
            runs = con.execute("SELECT status FROM runs ORDER BY started_at").fetchall()
        assert runs == [("died",), ("success",)], phase


def test_a_run_lends_one_catalog_connection_to_its_steps_and_frees_it_for_long_work(tmp_path):
    """Every step of a run gets the run's one connection (no reopening per step); before long work it is
    closed, so another process can query the catalog meanwhile, except under a step that still uses it."""
    from pipelines.infra.lake import Lake
    from pipelines.infra.runs import open_catalog, recorded_run, release_catalog

    lake = Lake(str(tmp_path / "lake"))
    path = str(tmp_path / "lake" / "catalog.duckdb")
    query = [sys.executable, "-c", "import duckdb, sys; "
             "print(duckdb.connect(sys.argv[1], read_only=True).execute('SELECT count(*) FROM runs').fetchone()[0])",
             path]
    with recorded_run(lake, None, "test", "d", {}, []):
        with open_catalog(lake) as first:
            pass
        with open_catalog(lake, read_only=True) as second:
            assert second is first
        with open_catalog(lake) as step:
            release_catalog()  # long work inside a step's block: the step goes on with its connection
            assert step.con.execute("SELECT count(*) FROM runs").fetchone() == (1,)
            assert subprocess.run(query, capture_output=True).returncode != 0  # held: DuckDB's file lock
        release_catalog()
        assert subprocess.run(query, capture_output=True, text=True, check=True).stdout.strip() == "1"
        with open_catalog(lake) as later:
            assert later is not first and later.con.execute("SELECT status FROM runs").fetchone() == ("running",)
    with open_catalog(lake) as after:  # the run is over: a connection of its own, the run finished
        assert after.con.execute("SELECT status FROM runs").fetchone() == ("success",)
