"""The validate stage end to end: real DroidBot run on disk, altered in one place, through ingest-android
(whose stages end with validate), into the quarantine and the catalog."""

import json
from pathlib import Path

from pipelines import cli
from pipelines.infra.lake import Lake
from pipelines.stages import StageContext
from pipelines.stages.validate import validate_stage
from tests.conftest import SAMPLES

RUN = SAMPLES / "android" / "droidbot-run"
TAP_EVENT = "events/event_2021-12-06_204505.json"  # the tap on the ImageView temp_id 5


def test_clean_run_passes_with_zero_findings_and_keeps_its_version(run, query):
    result = run("ingest-android", [RUN])
    assert result.status == "success" and result.version == 1  # nothing removed: no new version
    assert any(s.startswith("validate: 12 steps and 0 branches checked, 0 errors") for s in result.stage_summaries)
    assert query("SELECT count(*) AS n FROM validation_findings") == [{"n": 0}]
    assert query("SELECT count(*) AS n FROM steps") == [{"n": 12}]
    assert query("SELECT stage, records_in, records_out, quarantined FROM stage_stats WHERE stage = 'validate'") \
        == [{"stage": "validate", "records_in": 12, "records_out": 12, "quarantined": 0}]


def test_tap_on_a_missing_view_quarantines_the_episode(run, query, sample_copy, lake, capsys):
    bad = sample_copy("android/droidbot-run")
    event = json.loads((bad / TAP_EVENT).read_text())
    event["event"]["view"]["view_str"] = "0" * 32  # DroidBot's id of a view that is not on that screen
    (bad / TAP_EVENT).write_text(json.dumps(event))
    result = run("ingest-android", [bad])
    assert result.status == "success" and result.version == 2  # v1 ingest, v2 validated
    assert query("SELECT count(*) AS n FROM steps") == [{"n": 0}]
    assert query("SELECT count(*) AS n FROM episodes") == [{"n": 0}]
    row = query("SELECT * FROM quarantine")[0]
    eid = query("SELECT episode_id FROM read_parquet("
                f"'{lake}/datasets/android/parts/episodes/*.parquet') LIMIT 1")[0]["episode_id"]
    assert row["stage"] == "validate" and row["rule"] == "android.tap_target_missing"
    assert row["record_id"] == f"{eid}:3" and row["location"] == "step 3"
    assert row["source_uri"] == "droidbot-run"
    assert row["reason"] == (f"target view {'0' * 32} is not in the view hierarchy "
                             f"(episode {eid} quarantined whole: 12 steps)")
    assert json.loads(row["snippet"])["kind"] == "tap"
    assert query("SELECT rule, severity, findings, episodes FROM validation_findings") == [
        {"rule": "android.tap_target_missing", "severity": "error", "findings": 1, "episodes": 1}]
    # the parent version still holds the removed records
    assert query("SELECT version, steps, quarantined FROM versions ORDER BY version") == [
        {"version": 1, "steps": 12, "quarantined": 0}, {"version": 2, "steps": 0, "quarantined": 1}]

    assert cli.main(["sql", "SELECT rule, count(*) AS n FROM quarantine GROUP BY 1", "--lake", lake,
                     "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ['"rule","n"', '"android.tap_target_missing",1']


def test_cli_validate_an_older_version_with_a_contract(run, query, lake, capsys):
    run("ingest-android", [RUN])
    code = cli.main(["validate", "android@1", "--no-gx", "--contract", "droidbot=freeze", "--lake", lake])
    assert code == 0
    assert "12 steps and 0 branches checked, 0 errors in 0 episodes" in capsys.readouterr().out
    assert query("SELECT pipeline, status FROM runs WHERE pipeline = 'validate'") == [
        {"pipeline": "validate", "status": "success"}]
    assert cli.main(["validate", "android@9", "--no-gx", "--lake", lake]) == 2
    assert "android has no version 9" in capsys.readouterr().err


def test_gx_suites_write_results_and_data_docs(run, query, lake):
    run("ingest-android", [RUN])
    ctx = StageContext(Lake(lake), None, "android", "run-gx", {"gx": True}, log=lambda s: None)
    result = validate_stage(ctx)
    assert "GX 23 expectations, 0 failed" in result.summary
    rows = query("SELECT suite, count(*) AS n, bool_and(success) AS ok FROM validation_results "
                 "WHERE run_id = 'run-gx' GROUP BY 1 ORDER BY 1")
    assert rows == [{"suite": "episodes", "n": 10, "ok": True}, {"suite": "steps", "n": 11, "ok": True},
                    {"suite": "steps.android", "n": 2, "ok": True}]
    # every observation kind is one the android suite allows
    seen = query("SELECT observed_value FROM validation_results WHERE suite = 'steps.android' "
                 "AND expectation LIKE '%observation_kind%'")
    assert [json.loads(r["observed_value"])["unexpected_count"] for r in seen] == [0]
    index = Path(lake) / "datasets" / "android" / "validation" / "v1" / "index.html"
    assert index.exists() and "steps.android" in index.read_text()


def test_validate_works_a_part_group_at_a_time_and_shares_the_groups_it_did_not_change(run, lake, tmp_path):
    """Two ingest tasks (two part groups); a tap on a missing view breaks the episode of the second: the new
    version rewrites that group only and keeps the first group's parts as they were."""
    import shutil

    from pipelines.infra.runs import open_catalog
    from pipelines.stages import run_alone

    first, second = tmp_path / "in" / "a-run", tmp_path / "in" / "b-run"
    shutil.copytree(RUN, first)
    shutil.copytree(RUN, second)
    event = json.loads((second / TAP_EVENT).read_text())
    event["event"]["view"]["view_str"] = "0" * 32
    (second / TAP_EVENT).write_text(json.dumps(event))
    assert run("ingest-android", [first.parent], stages=["ingest"], task_mb=0.1).tasks_total == 2
    with open_catalog(Lake(lake), read_only=True) as cat:
        before = cat.current_version("android").parts
    _, outcome = run_alone("validate", Lake(lake), None, "android", {"gx": False}, log=lambda line: None)
    with open_catalog(Lake(lake), read_only=True) as cat:
        after = cat.current_version("android").parts
    assert outcome.version == 2 and outcome.quarantined == 1
    assert len(set(after["steps"]) & set(before["steps"])) == 1 and len(after["steps"]) == 2
    assert len(set(after["episodes"]) & set(before["episodes"])) == 1
    stems = lambda paths: {p.rsplit("/", 1)[-1] for p in paths}  # noqa: E731
    assert stems(after["steps"]) == stems(after["episodes"])  # the rewritten group is still a group
