"""Incremental data: new inputs into an existing dataset add a version that shares the old parts; validate
reads only the groups it has not found clean, dedup computes signatures only for new groups and compares them
with every old one; the result equals a rebuild from all inputs at once."""

import dataclasses
import re
import shutil

import pyarrow.parquet as pq

from pipelines.infra import definition
from pipelines.stages.dedup import dedup_stage
from pipelines.stages.label import LabelOptions, label
from pipelines.infra.lake import Lake
from pipelines.infra.runner import run_ingest
from pipelines.infra.runs import open_catalog
from pipelines.stages import StageContext
from pipelines.stages.validate import validate_stage
from tests.conftest import SAMPLES
from tests.pipelines.label_servers import ScriptedServer, chat_completion

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
    assert re.search(r"; 1 of \d+ part groups and 0 of 0 branches parts read", validate_line), validate_line
    assert "1 exact" in dedup_line and f"1 of {first.tasks_total + 1} part groups read" in dedup_line, dedup_line

    rebuilt = tmp_path / "rebuilt"
    full = _ingest(rebuilt, inputs)
    assert full.units_in == second.units_in + second.units_known
    assert _content(lake) == _content(rebuilt)

    third = _ingest(lake, inputs)  # nothing new: nothing read, no version
    assert (third.units_in, third.version_created) == (0, False)


def test_after_a_label_run_validate_checks_only_the_new_branches(tmp_path):
    """A label run adds a branches part to groups validate found clean: the next validate checks that part's
    branches against those groups' step ids, without reading their steps' content again."""
    lake = tmp_path / "lake"
    first = _ingest(lake, ANDROID)
    server = ScriptedServer([(200, chat_completion("<predicted_observation>\nthe home screen\n"
                                                   "</predicted_observation>"), 0.0)])
    try:
        labeled = label(Lake(str(lake)), None, "android", LabelOptions(model="scripted-wm", endpoint=server.url,
                                                                      per_episode=1, backoff_s=0.01),
                        "run-label", log=lambda line: None)
    finally:
        server.close()
    assert labeled.branches_written > 0
    lines = []
    result = validate_stage(StageContext(Lake(str(lake)), None, "android", "run-validate", {"gx": False},
                                         lines.append))
    groups = first.tasks_total
    assert f"0 of {groups} part groups and 1 of 1 branches parts read" in result.summary, result.summary
    assert f"{labeled.branches_written} branches checked, 0 errors" in result.summary, result.summary
    again = validate_stage(StageContext(Lake(str(lake)), None, "android", "run-again", {"gx": False}, lines.append))
    assert f"0 of {groups} part groups and 0 of 1 branches parts read" in again.summary, again.summary


def test_a_damaged_signature_file_is_computed_again(tmp_path):
    lake = tmp_path / "lake"
    _ingest(lake, ANDROID)
    sidecars = sorted((lake / "datasets" / "android" / "dedup").rglob("*.parquet"))
    assert sidecars
    sidecars[0].write_bytes(sidecars[0].read_bytes()[:100])  # a torn copy
    result = dedup_stage(StageContext(Lake(str(lake)), None, "android", "run-again", {}, lambda line: None))
    assert "1 of " in result.summary and "part groups read" in result.summary, result.summary
    assert pq.read_metadata(sidecars[0]).num_rows > 0
