"""The `pipelines` command as a user runs it: a real subprocess, a real lake, queried from elsewhere."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import SAMPLES

PIPELINES = str(Path(sys.executable).parent / "pipelines")


def cli(*args, cwd):
    return subprocess.run([PIPELINES, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_run_on_bundled_samples_then_query_from_another_directory(tmp_path):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir(), elsewhere.mkdir()
    done = cli("run", "ingest-android", cwd=work)
    assert done.returncode == 0, done.stderr
    assert "ingest-android: ok" in done.stdout and "dataset      android v1 (new)" in done.stdout
    assert "[1/" in done.stderr  # progress lines
    lake = work / "lake"
    assert (lake / "catalog.duckdb").exists()

    out = cli("sql", "SELECT domain, count(*) AS n FROM steps GROUP BY 1", "--lake", str(lake), "--format", "csv",
              cwd=elsewhere)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == '"domain","n"' and out.stdout.splitlines()[1].startswith('"android",')

    # the plain `duckdb` command sees the same tables and views from any working directory
    shell = subprocess.run([str(Path(sys.executable).parent / "duckdb"), str(lake / "catalog.duckdb"), "-csv", "-c",
                            "SELECT table_name FROM information_schema.tables ORDER BY 1; "
                            "SELECT count(*) AS n FROM episodes WHERE dataset = 'android'"],
                           cwd=elsewhere, capture_output=True, text=True, timeout=60)
    assert shell.returncode == 0, shell.stderr
    for name in ("episodes", "steps", "quarantine", "runs", "datasets", "versions"):
        assert name in shell.stdout.split()
    # the bundled DroidBot run, getevent log, UI Automator dump and AndroidWorld task-runner run
    assert shell.stdout.split()[-1] == "4"


def test_list_shows_pipelines(tmp_path):
    out = cli("list", cwd=tmp_path)
    assert out.returncode == 0 and "ingest-android" in out.stdout and "android" in out.stdout


def test_strict_fails_when_records_are_quarantined(tmp_path):
    bad = tmp_path / "input" / "run"
    shutil.copytree(SAMPLES / "android" / "droidbot-run", bad)
    (bad / "events" / "event_2021-12-06_204513.json").write_text('{"tag": ')
    out = cli("run", "ingest-android", "--input", str(bad), "--lake", str(tmp_path / "lake"), "--strict",
              cwd=tmp_path)
    assert out.returncode == 3
    assert "quarantined  1" in out.stdout
    assert "events/event_2021-12-06_204513.json: invalid JSON" in out.stdout


def test_bad_usage_is_one_line(tmp_path):
    out = cli("run", "ingest-android", "--input", str(tmp_path / "missing"), "--lake", str(tmp_path / "l"),
              cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "no such file or directory" in out.stderr
    out = cli("sql", "SELECT nope FROM steps", "--lake", str(tmp_path / "l"), cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("error:")


def test_files_no_format_reads_are_recorded_shown_and_count_for_strict(tmp_path):
    run_dir = tmp_path / "input" / "run"
    shutil.copytree(SAMPLES / "android" / "droidbot-run", run_dir)
    (run_dir.parent / "notes.bin").write_bytes(b"\x00\x01 not a trace")  # beside the run, not inside it
    lake = tmp_path / "lake"
    out = cli("run", "ingest-android", "--input", str(run_dir.parent), "--lake", str(lake), "--strict", "-q",
              cwd=tmp_path)
    assert out.returncode == 3  # nothing quarantined, but a file was left unread
    assert "quarantined  0" in out.stdout and "1 files not read (no format reads it: 1)" in out.stdout
    rows = cli("sql", "SELECT path, size, reason, formats FROM ignored_inputs ORDER BY path", "--lake", str(lake),
               "--format", "json", cwd=tmp_path)
    found = [json.loads(line) for line in rows.stdout.splitlines()]
    assert [(Path(r["path"]).name, r["size"], r["reason"]) for r in found] == [("notes.bin", 14, "no format reads it")]
    assert found[0]["formats"].startswith("droidbot,getevent")  # every format of the pipeline declined it
