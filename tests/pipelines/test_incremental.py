"""Incremental data: new inputs into an existing dataset add a version that shares the old parts; validate
reads only the groups it has not found clean, dedup computes signatures only for new groups and compares them
with every old one; the result equals a rebuild from all inputs at once."""

import dataclasses
import shutil

import pyarrow.parquet as pq

from pipelines import definition
from pipelines.lake import Lake
from pipelines.runner import run_ingest
from pipelines.runs import open_catalog
from tests.conftest import SAMPLES

ANDROID = SAMPLES / "android"
RUN_COLUMNS = {"_run_id", "ingest_run_id"}


def _ingest(lake, inputs, **kwargs):
    defn = dataclasses.replace(definition.load("ingest-android"), stages=["ingest", "validate", "dedup"])
    result = run_ingest(defn, str(lake), [str(inputs)], task_mb=0.05, progress=False, log=lambda s: None, **kwargs)
    assert result.status == "success", result.messages
    return result


def _content(lake) -> dict[str, list]:
    """The current version's rows per table, without the columns naming the run that wrote them."""
    lake_ = Lake(str(lake))
    with open_catalog(lake_, read_only=True) as cat:
        version = cat.current_version("android")
    out = {}
    for table in ("episodes", "steps", "branches"):
        rows = []
        for part in version.parts.get(table, []):
            data = pq.read_table(lake_.absolute(part))
            rows += data.select([c for c in data.column_names if c not in RUN_COLUMNS]).to_pylist()
        out[table] = sorted(rows, key=lambda r: r.get("step_id") or r["episode_id"])
    return out


def test_incremental_ingest_validate_dedup_equals_a_rebuild(tmp_path):
    inputs = tmp_path / "in"
    shutil.copytree(ANDROID, inputs / "android")
    shutil.copytree(ANDROID / "droidbot-run", inputs / "copy-1")  # an exact duplicate of a bundled run
    late = tmp_path / "late"
    shutil.move(inputs / "android" / "droidbot-run", late)

    lake = tmp_path / "lake"
    first = _ingest(lake, inputs)
    assert "0 exact" in next(s for s in first.stage_summaries if s.startswith("dedup"))

    shutil.move(late, inputs / "android" / "droidbot-run")  # arrives later: duplicates copy-1, already in
    second = _ingest(lake, inputs)
    assert second.units_in == 1 and second.units_known == first.units_in
    validate_line = next(s for s in second.stage_summaries if s.startswith("validate"))
    dedup_line = next(s for s in second.stage_summaries if s.startswith("dedup"))
    assert "1 of " in validate_line and "part groups read" in validate_line, validate_line
    assert "1 exact" in dedup_line and f"1 of {first.tasks_total + 1} part groups read" in dedup_line, dedup_line

    rebuilt = tmp_path / "rebuilt"
    full = _ingest(rebuilt, inputs)
    assert full.units_in == second.units_in + second.units_known
    assert _content(lake) == _content(rebuilt)

    third = _ingest(lake, inputs)  # nothing new: nothing read, no version
    assert (third.units_in, third.version_created) == (0, False)
