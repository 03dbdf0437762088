"""Exports end to end: the DroidBot sample ingested into a real lake, exported, and loaded back with
`datasets` the way trainers load it."""

import json
from pathlib import Path

import datasets
import pytest

from pipelines import cli

from pipelines.infra import definition
from pipelines.stages.export import export
from pipelines.infra.options import ExportOptions
from pipelines.infra.lake import Lake
from pipelines.infra.runner import run_ingest
from tests import goldens
from tests.conftest import SAMPLES
from tests.transforms.export.lakes import branch_row, commit_dataset, episode_row, step_row
from transforms import agentworld

RUN = SAMPLES / "android" / "droidbot-run"
GOLDEN = Path(__file__).resolve().parent.parent / "transforms" / "export" / "golden"
EPISODE = "6414789468d66bb44bae15b1d6a17402"  # droidbot-run ingested as its own input


def _load(out: Path, manifest: dict):
    files = [str(out / s["path"]) for s in manifest["shards"]]
    kind = "parquet" if manifest["file_type"] == "parquet" else "json"
    return datasets.load_dataset(kind, data_files=files, split="train")


# Only the DroidBot reader and the ingest stage: these tests do not depend on what the shared android
# pipeline definition adds over time.
DROIDBOT_ONLY = definition.parse("ingest-droidbot", 'dataset = "android"\nformats = ["droidbot"]\n'
                                 'inputs = ["samples/android/droidbot-run"]\nstages = ["ingest"]\n')


@pytest.fixture
def droidbot(lake):
    result = run_ingest(DROIDBOT_ONLY, lake, [str(RUN)], progress=False, log=lambda line: None)
    assert result.status == "success" and result.steps == 12
    return Lake(lake)


def _export(lake, tmp_path, kind, fmt=None, name=None, **options):
    out = tmp_path / (name or f"{kind}-{fmt}")
    manifest = export(lake, None, "android", str(out), ExportOptions(kind=kind, format=fmt, **options),
                      log=lambda line: None)
    return out, manifest


@pytest.mark.parametrize("kind,fmt,rows", [("sft", "agentworld", 3), ("sft", "trl", 3), ("sft", "swift", 3),
                                           ("sft", "sharegpt", 3), ("sft", "bench", 3), ("cpt", "text", 1),
                                           ("cpt", "swift", 1), ("rl", "verl", 1)])
def test_every_export_loads_with_datasets(droidbot, tmp_path, kind, fmt, rows):
    out, manifest = _export(droidbot, tmp_path, kind, fmt)
    data = _load(out, manifest)
    assert data.num_rows == rows == manifest["rows"] == manifest["counts"]["train"]["android"]
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk == manifest and on_disk["dataset"] == "android" and on_disk["version"] == 1
    import hashlib
    for shard in manifest["shards"]:
        assert hashlib.sha256((out / shard["path"]).read_bytes()).hexdigest() == shard["sha256"]


def _golden(name: str, records: list[dict]) -> None:
    goldens.check_jsonl(GOLDEN / name, records)


def test_sft_records_of_the_droidbot_run_match_the_golden_file(droidbot, tmp_path):
    out, manifest = _export(droidbot, tmp_path, "sft", "agentworld")
    records = [json.loads(line) for line in (out / manifest["shards"][0]["path"]).read_text().splitlines()]
    _golden("droidbot-sft-agentworld.jsonl", records)
    # the AgentWorld layout: system, then alternating user/assistant, the final user action, then the target
    for r in records:
        roles = [m["role"] for m in r["messages"]]
        assert roles[0] == "system" and roles[-2:] == ["user", "assistant"]
        assert roles[1:-1] == ["user", "assistant"] * ((len(roles) - 3) // 2) + ["user"]
        # the android prompt demands exactly one closed block and nothing else: the target is that block
        assert r["messages"][-1]["content"].startswith("<predicted_observation>\n")
        assert r["messages"][-1]["content"].endswith("\n</predicted_observation>")
    third = records[2]
    assert third["id"] == f"{EPISODE}:2" and third["origin"] == "real"
    # a DroidBot run's screens in DroidBot's own state text (the benchmark's rendering for DroidBot sources)
    assert third["messages"][1]["content"].startswith(
        "### Turn 1\n**Current State:**\n<button id=0 text='Apps list' bound_box=515,1797,565,1814></button>\n")
    assert third["messages"][3]["content"].endswith(
        "**Action:**\n```text\nintent am start com.tencent.qqmusic/com.tencent.qqmusic.activity.AppStarterActivity\n```")
    assert third["messages"][5]["content"].endswith("**Action:**\n```text\nkey BACK\n```")  # DroidBot's event text
    assert "<button id=3 bound_box=932,359,1012,403>跳过</button>" in third["messages"][6]["content"]


def test_our_android_rendering_stays_an_option(droidbot, tmp_path):
    out, manifest = _export(droidbot, tmp_path, "sft", "agentworld", android_state="ours")
    records = [json.loads(line) for line in (out / manifest["shards"][0]["path"]).read_text().splitlines()]
    assert records[2]["messages"][1]["content"].startswith(
        "### Turn 1\n**Current State:**\nActivity: com.android.launcher3")
    assert '[10] TextView "跳过"' in records[2]["messages"][6]["content"]
    assert '"action_type": "navigate_back"' in records[2]["messages"][5]["content"]  # the JSONAction form
    assert manifest["config"]["android_state"] == "ours"


def test_cpt_and_rl_records_match_the_golden_files(droidbot, tmp_path):
    out, manifest = _export(droidbot, tmp_path, "cpt", "text")
    doc = _load(out, manifest)[0]
    _golden("droidbot-cpt-text.jsonl", [doc])
    # three turns have a recorded next observation; the document ends after the last of them
    assert doc["text"].count("### Turn") == 3 and doc["text"].count("</predicted_observation>") == 3
    out, manifest = _export(droidbot, tmp_path, "rl", "verl")
    row = _load(out, manifest)[0]
    _golden("droidbot-rl-verl.jsonl", [row])
    assert row["reward_model"]["style"] == "rule" and row["data_source"] == "trajforge/android"
    assert row["prompt"][-1]["role"] == "user"
    turn = row["extra_info"]["turn_idx"]
    assert row["extra_info"]["target_step_id"] == f"{EPISODE}:{turn}"


def test_trl_swift_sharegpt_and_bench_shapes(droidbot, tmp_path):
    out, m = _export(droidbot, tmp_path, "sft", "trl")
    trl = _load(out, m)[2]
    assert [p["role"] for p in trl["prompt"]] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert trl["completion"][0]["role"] == "assistant"
    out, m = _export(droidbot, tmp_path, "sft", "swift")
    swift = _load(out, m)[2]
    assert [x["loss"] for x in swift["messages"]] == [False] * 6 + [True]
    out, m = _export(droidbot, tmp_path, "sft", "sharegpt")
    info = json.loads((out / "dataset_info.json").read_text())
    assert info["trajforge_android_train"]["formatting"] == "sharegpt"
    assert info["trajforge_android_train"]["file_name"] == "train"
    share = _load(out, m)[0]
    assert [c["from"] for c in share["conversations"]] == ["human", "gpt"]
    assert share["system"].startswith("# Role and Objective")
    out, m = _export(droidbot, tmp_path, "sft", "bench")
    assert m["shards"][0]["path"] == "train/android-00000_train.jsonl"
    bench = _load(out, m)
    second = bench[1]
    assert second["task"] == "android" and second["turn_idx"] == 2 and second["total_turns"] == 3
    # the evaluated prompt ends with the released lines' evaluation instruction; `current_prompt` (the judge's)
    # is the turn without it; one id per trajectory, as in the released files
    assert second["prompt"][1] == second["current_prompt"] + agentworld.EVALUATION_INSTRUCTION
    assert isinstance(second["id"], int) and len({r["id"] for r in bench}) == 1
    # the benchmark's own format: the marker in every domain (its evaluation strips it from the ground truth)
    assert all(r.startswith("**Environment Observation:**\n") for r in second["response"])


def test_export_rows_map_every_row_to_its_steps(droidbot, tmp_path, query):
    out, manifest = _export(droidbot, tmp_path, "sft", "agentworld")
    rows = query("SELECT shard, \"row\", step_ids FROM export_rows ORDER BY \"row\"")
    assert [r["row"] for r in rows] == [0, 1, 2] and {r["shard"] for r in rows} == {"train/sft-agentworld-00000.jsonl"}
    assert rows[2]["step_ids"] == [f"{EPISODE}:{i}" for i in range(4)]
    which = query(f"SELECT shard, \"row\" FROM export_rows WHERE list_contains(step_ids, '{EPISODE}:3')")
    assert which == [{"shard": "train/sft-agentworld-00000.jsonl", "row": 2}]
    # exporting again is idempotent: same id, same files, no duplicate rows
    _, again = _export(droidbot, tmp_path, "sft", "agentworld")
    assert again["export_id"] == manifest["export_id"] and again["shards"] == manifest["shards"]
    assert query("SELECT count(*) AS n FROM export_rows")[0]["n"] == 3


def test_shards_are_capped_and_named_deterministically(droidbot, tmp_path):
    out, manifest = _export(droidbot, tmp_path, "sft", "trl", shard_rows=2)
    assert [(s["path"], s["rows"]) for s in manifest["shards"]] == [
        ("train/sft-trl-00000.parquet", 2), ("train/sft-trl-00001.parquet", 1)]
    assert _load(out, manifest).num_rows == 3


def test_jsonl_shards_stream_to_their_final_names_and_a_failed_export_leaves_none(droidbot, tmp_path, monkeypatch):
    import hashlib
    from transforms.export import sft
    out, manifest = _export(droidbot, tmp_path, "sft", "agentworld", shard_rows=2)
    names = ["sft-agentworld-00000.jsonl", "sft-agentworld-00001.jsonl"]
    assert [(s["path"], s["rows"]) for s in manifest["shards"]] == [(f"train/{names[0]}", 2), (f"train/{names[1]}", 1)]
    assert sorted(p.name for p in (out / "train").iterdir()) == names  # no temporary files left
    for shard in manifest["shards"]:
        data = (out / shard["path"]).read_bytes()
        assert shard["bytes"] == len(data) and shard["sha256"] == hashlib.sha256(data).hexdigest()
    # stand-in failure: rendering breaks on the second record, while the first shard's file is open
    rendered = []
    real = sft.RENDER["agentworld"]

    def breaks_on_second(*args):
        rendered.append(1)
        if len(rendered) == 2:
            raise RuntimeError("render failed")
        return real(*args)

    monkeypatch.setitem(sft.RENDER, "agentworld", breaks_on_second)
    with pytest.raises(RuntimeError, match="render failed"):
        _export(droidbot, tmp_path, "sft", "agentworld", name="failed", shard_rows=2)
    assert [p for p in (tmp_path / "failed").rglob("*") if p.is_file()] == []


def test_an_export_that_fails_after_its_shards_leaves_no_lineage_file_behind(droidbot, tmp_path, monkeypatch):
    import tempfile

    from pipelines.stages.export import outputs

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where Lineage keeps its file until recorded

    def fails(*args):
        raise OSError("disk full")

    monkeypatch.setattr(outputs, "write_trainer_configs", fails)  # stand-in failure: after the shards
    with pytest.raises(OSError, match="disk full"):
        _export(droidbot, tmp_path, "rl", "verl")
    assert list(temp.iterdir()) == []


def _shard_bytes(out: Path, manifest: dict) -> dict[str, bytes]:
    return {s["path"]: (out / s["path"]).read_bytes() for s in manifest["shards"]}


def test_simulated_steps_stay_out_unless_included(droidbot, tmp_path, lake):
    before = {kind: _export(droidbot, tmp_path, kind, name=f"before-{kind}") for kind in ("sft", "rl", "cpt")}
    # a labeler-style branch at step 2: another action in the real state, a predicted next state
    sim = branch_row(f"{EPISODE}:2", {"kind": "home"}, "Activity: com.android.launcher3/.uioverrides.QuickstepLauncher "
                     "(predicted)", kind="screen")
    assert commit_dataset(lake, "android", [], [], [sim]) == 2
    for kind, (out_before, manifest_before) in before.items():
        out, real = _export(droidbot, tmp_path, kind, name=f"real-{kind}")
        assert real["version"] == 2 and real["rows"] == manifest_before["rows"]
        # the real-only export of the labeled version is the export before labeling, byte for byte
        assert _shard_bytes(out, real) == _shard_bytes(out_before, manifest_before)
    out, both = _export(droidbot, tmp_path, "sft", "agentworld", name="both", include_simulated=True)
    rows = _load(out, both)
    assert both["rows"] == 4
    simulated = [r for r in rows if r["origin"] == "simulated"]
    assert len(simulated) == 1 and simulated[0]["id"] == f"{EPISODE}:2:sim-x"
    assert simulated[0]["messages"][-1]["content"].endswith("(predicted)\n</predicted_observation>")
    # a DroidBot source's action in DroidBot's event text (the benchmark's form for DroidBot sources)
    assert simulated[0]["messages"][-2]["content"].endswith("**Action:**\n```text\nkey HOME\n```")
    _, cpt_both = _export(droidbot, tmp_path, "cpt", name="cpt-both", include_simulated=True)
    assert cpt_both["rows"] == before["cpt"][1]["rows"] + 1  # the branch line adds one document, not a copy


def test_splits_never_split_a_dedup_cluster(tmp_path, lake, query):
    episodes, steps = [], []
    for i in range(40):
        e = f"ep{i:02d}"
        episodes.append(episode_row(e, "terminal", f"task number {i}"))
        steps.append(step_row(e, 0, "terminal", "root@h:/# ", {"kind": "keystrokes", "text": f"echo {i}\n"}))
        steps.append(step_row(e, 1, "terminal", f"root@h:/# echo {i}\n{i}\nroot@h:/# ",
                              {"kind": "done"}))
    commit_dataset(lake, "term", episodes, steps)
    lk = Lake(lake)
    from catalog import Catalog
    with Catalog(lk.path("catalog.duckdb"), lk.url) as cat:
        # pair episode i with episode i+20 (different tasks, so only the cluster joins them)
        cat.con.executemany("INSERT INTO dedup_clusters (run_id, dataset, cluster_id, episode_id, representative, "
                            "similarity, kind) VALUES ('r', 'term', ?, ?, ?, 1.0, 'near')",
                            [(f"near:ep{i:02d}", f"ep{j:02d}", f"ep{i:02d}") for i in range(20) for j in (i, i + 20)])
    manifest = export(lk, None, "term", str(tmp_path / "out"),
                      ExportOptions(kind="sft", split_ratios=(0.5, 0.25, 0.25)), log=lambda line: None)
    assert sum(sum(d.values()) for d in manifest["counts"].values()) == 40
    assert len(manifest["counts"]) == 3  # all three splits got data
    rows = query("SELECT split_part(shard, '/', 1) AS split, step_ids[1] AS first FROM export_rows")
    split_of = {r["first"].split(":")[0]: r["split"] for r in rows}
    assert all(split_of[f"ep{i:02d}"] == split_of[f"ep{i + 20:02d}"] for i in range(20))
    first = json.loads((tmp_path / "out" / manifest["shards"][0]["path"]).read_text().splitlines()[0])
    assert '"keystrokes": "echo' in first["messages"][1]["content"]


def test_held_out_mix_and_domains(droidbot, tmp_path):
    _, held = _export(droidbot, tmp_path, "sft", "agentworld", name="held", held_out=["com.tencent.qqmusic"])
    assert held["rows"] == 0 and held["skipped"]["held_out"] == 3
    _, doubled = _export(droidbot, tmp_path, "sft", "agentworld", name="mix", mix={"android": 2})
    assert doubled["rows"] == 6
    _, none = _export(droidbot, tmp_path, "sft", "agentworld", name="dom", domains=["web"])
    assert none["rows"] == 0 and none["skipped"]["domain_not_selected"] == 3


def test_cli_export_and_the_export_stage(droidbot, tmp_path, lake, capsys):
    out = tmp_path / "cli"
    code = cli.main(["export", "rl", "android", "--out", str(out), "--lake", lake, "--max-tokens", "4000"])
    assert code == 0 and "1 rows" in capsys.readouterr().out
    assert json.loads((out / "manifest.json").read_text())["config"]["max_tokens"] == 4000
    assert cli.main(["export", "sft", "android", "--out", str(out), "--lake", lake, "--format", "nope"]) == 2
    from pipelines.stages import StageContext, load
    ctx = StageContext(Lake(lake), None, "android", "run-x", {"kind": "cpt", "format": "swift"}, lambda line: None)
    result = load("export")(ctx)
    assert result.records_out == 1 and (Path(lake) / "exports" / "android" / "cpt-swift" / "manifest.json").exists()


def test_every_action_read_is_a_row_or_a_skipped_count_in_one_unit(tmp_path, capsys):
    """The bundled Android samples: 73 steps (DroidBot's 12, a getevent log's 48 touches, a UI Automator dump, an
    AndroidWorld task-runner run's 12) give 14 SFT rows (3, and the task-runner run's 11 steps followed by its next
    screen); the other 59 actions have no recorded next observation (getevent records no screen, DroidBot kept few
    states, the task-runner run's last step) and the manifest says so. The summary prints each unit on a line of its own."""
    lake = str(tmp_path / "lake")
    assert run_ingest(definition.load("ingest-android"), lake, progress=False, log=lambda l: None).status == "success"
    assert cli.main(["export", "sft", "android", "--out", str(tmp_path / "sft"), "--lake", lake]) == 0
    manifest = json.loads((tmp_path / "sft" / "manifest.json").read_text())
    assert (manifest["actions_in"], manifest["transitions_in"], manifest["rows"]) == (73, 14, 14)
    assert manifest["skipped"]["no_next_observation"] == 59
    assert manifest["skipped_units"]["no_next_observation"] == "actions"
    assert manifest["skipped_units"]["held_out"] == "transitions"
    out = capsys.readouterr().out
    assert "  read       73 actions, 14 of them with a recorded next observation (transitions)" in out
    assert "  skipped    actions: no_next_observation 59" in out
    capsys.readouterr()
    assert cli.main(["export", "cpt", "android", "--out", str(tmp_path / "cpt"), "--lake", lake]) == 0
    cpt = json.loads((tmp_path / "cpt" / "manifest.json").read_text())
    assert cpt["skipped_units"]["no_observation"] == "trajectories" and cpt["skipped_units"]["over_budget"] == "turns"
    lines = [l for l in capsys.readouterr().out.splitlines() if l.startswith("  skipped")]
    assert all(l.count(":") == 1 for l in lines)  # one unit a line


def test_exporting_from_a_lake_without_a_catalog_says_the_dataset_is_missing(tmp_path, capsys):
    """The export reads the catalog read-only; on a lake that has none yet it still says what is missing."""
    lake = tmp_path / "fresh"
    assert cli.main(["export", "sft", "android", "--lake", str(lake), "--out", str(tmp_path / "out")]) == 2
    assert "no dataset 'android' (datasets: none yet: run a pipeline first)" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
