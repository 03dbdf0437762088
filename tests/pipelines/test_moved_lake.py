"""A lake moved or copied to another folder (renamed, synced to a training host) answers the same queries: its
catalog's views name every part by absolute path, so they are bound again where the lake is now."""

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from pipelines.cli import main
from pipelines.infra.lake import Lake
from pipelines.view.db import Source

COUNTS = "SELECT (SELECT count(*) FROM steps) AS steps, (SELECT count(*) FROM export_rows) AS export_rows"


def _counts(con) -> tuple[int, int]:
    return con.execute(COUNTS).fetchall()[0]


def test_a_moved_lake_answers_from_its_new_place(tmp_path, capsys):
    first, moved = tmp_path / "first" / "lake", tmp_path / "moved" / "lake"
    assert main(["run", "ingest-android", "--lake", str(first), "-q"]) == 0
    assert main(["export", "sft", "android", "--lake", str(first), "--out", str(tmp_path / "out")]) == 0
    with duckdb.connect(str(first / "catalog.duckdb"), read_only=True) as con:
        expected = _counts(con)
    assert expected[0] > 0 and expected[1] > 0
    moved.parent.mkdir()
    shutil.move(str(first), str(moved))  # the original folder is gone: nothing may still read from it
    catalog = str(moved / "catalog.duckdb")
    with duckdb.connect(catalog, read_only=True) as con:  # the stored views still name the old place
        try:
            _counts(con)
            raise AssertionError("the stored views should name the parts where they were written")
        except duckdb.IOException as e:
            assert str(first) in str(e)

    capsys.readouterr()
    assert main(["sql", COUNTS, "--lake", str(moved), "--format", "csv"]) == 0  # read-only: temporary views
    assert capsys.readouterr().out.splitlines()[1] == f"{expected[0]},{expected[1]}"
    with Source(Lake(str(moved)), catalog).connect() as con:  # the viewer's connection
        assert _counts(con) == expected

    assert main(["validate", "android", "--lake", str(moved)]) == 0  # opened for writing: bound again
    shell = subprocess.run([str(Path(sys.executable).parent / "duckdb"), catalog, "-csv", "-noheader", "-c", COUNTS],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout.split() == [f"{expected[0]},{expected[1]}"]


def test_a_lake_copied_without_a_part_names_the_missing_file(tmp_path, capsys):
    first, copy = tmp_path / "first" / "lake", tmp_path / "copy" / "lake"
    assert main(["run", "ingest-android", "--lake", str(first), "-q"]) == 0
    shutil.copytree(first, copy)
    missing = next((copy / "datasets" / "android" / "parts" / "steps").iterdir())
    missing.unlink()  # a copy that stopped half-way
    capsys.readouterr()
    assert main(["sql", "SELECT count(*) FROM steps", "--lake", str(copy)]) != 0
    assert str(missing) in capsys.readouterr().err
    # a writer in the same process after the failed read-only open: the same clear error, not DuckDB's refusal
    # of a second connection with another configuration
    assert main(["validate", "android", "--lake", str(copy)]) != 0
    err = capsys.readouterr().err
    assert str(missing) in err and "configuration" not in err
