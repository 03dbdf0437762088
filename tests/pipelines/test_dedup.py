import dataclasses
import json

from pipelines.infra import definition
from pipelines.cli import main
from pipelines.infra.runner import run_ingest
from tests.conftest import SAMPLES
from tests.transforms.dedup.copies import DROIDBOT_RUN, edited_copy, volatile_copy
from tests.transforms.export.lakes import branch_row, commit_dataset

GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # planted, shaped like a real token


def _inputs(tmp_path):
    return [DROIDBOT_RUN, volatile_copy(tmp_path / "rerun"), edited_copy(tmp_path / "edited"),
            SAMPLES / "android" / "getevent"]


def test_dedup_command_records_clusters_then_removes_duplicates_in_a_new_version(run, query, lake, tmp_path, capsys):
    assert run("ingest-android", _inputs(tmp_path)).episodes == 4
    assert main(["dedup", "android", "--lake", lake]) == 0
    assert "1 exact and 1 near duplicates removed, 2 kept" in capsys.readouterr().out
    ids = {r["uri"]: r["episode_id"] for r in query(
        "SELECT split_part(source_uri, '/', 1) AS uri, episode_id FROM read_parquet("
        f"'{lake}/datasets/android/parts/episodes/*.parquet') WHERE _run_id IN (SELECT run_id FROM runs "
        "WHERE pipeline = 'ingest-android')")}
    original = ids["droidbot-run"]
    clusters = query("SELECT kind, episode_id, representative, similarity FROM dedup_clusters ORDER BY kind, episode_id")
    assert {(c["kind"], c["episode_id"]) for c in clusters} == {
        ("exact", original), ("exact", ids["rerun"]), ("near", original), ("near", ids["edited"])}
    assert all(c["representative"] == original for c in clusters)  # same outcome, length, unknown start: lowest id
    near = next(c for c in clusters if c["episode_id"] == ids["edited"])
    assert 0.85 < near["similarity"] < 1
    kept = query("SELECT split_part(source_uri, '/', 1) AS uri FROM episodes ORDER BY 1")
    assert [k["uri"] for k in kept] == ["droidbot-run", "getevent"]
    assert query("SELECT count(*) AS n FROM steps")[0]["n"] == 12 + 48
    dropped = query("SELECT rule, record_id, reason, source_uri FROM quarantine WHERE stage = 'dedup' ORDER BY rule")
    assert [(d["rule"], d["record_id"]) for d in dropped] == [("exact_duplicate", ids["rerun"]),
                                                              ("near_duplicate", ids["edited"])]
    assert all(f"duplicate of episode {original}" in d["reason"] for d in dropped)
    assert dropped[0]["source_uri"] == "rerun"
    versions = query("SELECT version, episodes, note FROM versions WHERE dataset = 'android' ORDER BY version")
    assert [(v["version"], v["episodes"]) for v in versions] == [(1, 4), (2, 2)]
    # input = kept + deduplicated, and a second pass finds nothing new
    assert main(["dedup", "android", "--lake", lake]) == 0
    assert query("SELECT max(version) AS v FROM versions")[0]["v"] == 2


def test_secrets_are_scrubbed_from_steps_and_audited_without_the_secret(run, query, lake, tmp_path):
    leaky = edited_copy(tmp_path / "leaky")
    event_path = leaky / "events" / "event_2021-12-06_204452.json"
    event = json.loads(event_path.read_text())
    event["event"]["intent"] += f" --es github_token {GITHUB}"
    event_path.write_text(json.dumps(event))
    run("ingest-android", [leaky])
    assert main(["dedup", "android", "--lake", lake]) == 0
    step = query("SELECT step_id, action FROM steps WHERE step_index = 1")[0]
    assert GITHUB not in json.dumps(step, default=str)
    assert step["action"]["code"].endswith("--es github_token <REDACTED:github_token>")
    audit = query("SELECT table_name, record_id, field, kind, count FROM scrub_audit ORDER BY field")
    assert [(a["record_id"], a["field"], a["kind"]) for a in audit] == [
        (step["step_id"], "action.code", "github_token"), (step["step_id"], "action.raw", "github_token"),
        (step["step_id"], "action.text", "github_token")]
    assert GITHUB not in json.dumps(query("SELECT * FROM scrub_audit"), default=str)


def test_a_secret_a_world_model_echoed_into_a_branch_is_scrubbed_too(run, query, lake):
    run("ingest-android", [DROIDBOT_RUN], stages=["ingest"])
    (parent,) = query("SELECT step_id FROM steps WHERE step_index = 2")
    commit_dataset(lake, "android", [], [], [branch_row(parent["step_id"], {"kind": "home"},
                                                        f"Activity: settings\ntoken={GITHUB}", kind="screen")])
    assert main(["dedup", "android", "--lake", lake]) == 0
    (branch,) = query("SELECT step_id, next_observation FROM branches")
    assert branch["next_observation"]["text"] == "Activity: settings\ntoken=<REDACTED:github_token>"
    audit = query("SELECT table_name, record_id, field, kind FROM scrub_audit")
    assert audit == [{"table_name": "branches", "record_id": branch["step_id"], "field": "next_observation.text",
                      "kind": "github_token"}]
    assert query("SELECT count(*) n FROM steps")[0]["n"] == 12  # the real line decided: nothing was a duplicate


def test_dedup_as_a_pipeline_stage(lake, query, tmp_path):
    android = definition.load("ingest-android")
    defn = dataclasses.replace(android, stages=[*android.stages, "dedup"],
                               stage_options={**android.stage_options, "dedup": {"threshold": 0.85}})
    result = run_ingest(defn, lake, [str(p) for p in _inputs(tmp_path)], progress=False, log=lambda line: None)
    assert result.status == "success" and result.version == 2
    # the edited copy's exact Jaccard is 0.880: a near duplicate at 0.85 (at 0.9 it would be kept)
    assert result.stage_summaries[-1].startswith("dedup: 4 episodes: 1 exact and 1 near duplicates removed")
    assert query("SELECT count(*) AS n FROM episodes")[0]["n"] == 2
