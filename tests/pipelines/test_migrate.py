"""A lake labeled before schema 2 (simulated steps inside `steps`, the way the labeler wrote them then):
every stage refuses it with the fix named, and `pipelines migrate` moves the branches out, once."""

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines import cli
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog
from schemas import STEPS
from tests.conftest import SAMPLES

RUN = SAMPLES / "android" / "droidbot-run"
LABELER = '{"model":"wm","sampling":{},"template":"t"}'


def _schema1_labeled(run, lake) -> tuple[str, dict]:
    """Ingest the DroidBot run, then add a schema-1 label part: one simulated step at step 2."""
    run("ingest-android", [RUN], stages=["ingest"])
    lake_ = Lake(lake)
    with open_catalog(lake_) as cat:
        version = cat.current_version("android")
        real = pq.read_table(lake_.absolute(version.parts["steps"][0])).to_pylist()
        parent = real[2]
        sim = {**parent, "step_id": f"{parent['step_id']}:sim-0123456789abcdef", "origin": "simulated",
               "action": {"kind": "home", "raw": '{"counterfactual": "home", "replaces": "x"}'},
               "final_observation": {"kind": "screen", "text": "Activity: launcher (predicted)"},
               "is_last": True, "is_terminal": False, "parent_step_id": parent["step_id"], "branch_id": "b1",
               "labeler": LABELER}
        table = pa.Table.from_pylist([sim], schema=STEPS).replace_schema_metadata({b"schema_version": b"1"})
        rel = "datasets/android/parts/steps/label-old.parquet"
        pq.write_table(table, lake_.absolute(rel))
        cat.commit_version("android", "old-label", {**version.parts, "steps": [*version.parts["steps"], rel]},
                           episodes=1, steps=13, quarantined=0)
    return rel, sim


def test_stages_refuse_a_schema1_labeled_version_and_name_the_fix(run, lake, tmp_path, capsys):
    rel, _ = _schema1_labeled(run, lake)
    for argv in (["validate", "android"], ["dedup", "android"], ["export", "sft", "android", "--out", str(tmp_path / "o")],
                 ["export", "atif", "android", "--out", str(tmp_path / "a")],
                 ["label", "android", "--model", "m", "--dry-run"]):
        assert cli.main([*argv, "--lake", lake]) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err == (f"error: android v2: 1 steps part(s) hold simulated steps written before schema 2 (e.g. {rel}); "
                       "run `pipelines migrate android` to move them into the branches table"), argv


def test_migrate_moves_the_branches_out_once(run, lake, query, tmp_path, capsys):
    _, sim = _schema1_labeled(run, lake)
    assert cli.main(["migrate", "android", "--lake", lake]) == 0
    assert capsys.readouterr().out.strip() == "migrate android: 1 branch steps moved to the branches table, v3"
    assert query("SELECT list(DISTINCT origin) o, count(*) n FROM steps")[0] == {"o": ["real"], "n": 12}
    (branch,) = query("SELECT * FROM branches")
    assert (branch["step_id"], branch["parent_step_id"], branch["origin"], branch["labeler"], branch["strategy"]) == \
        (sim["step_id"], sim["parent_step_id"], "simulated", LABELER, "home")
    assert branch["next_observation"]["text"] == "Activity: launcher (predicted)" and branch["action"]["kind"] == "home"
    assert cli.main(["migrate", "android", "--lake", lake]) == 0
    assert capsys.readouterr().out.strip() == "migrate android: already at the current layout (v3)"
    # the migrated version is a normal one: validate keeps everything, the branch exports when asked for
    assert cli.main(["validate", "android", "--lake", lake, "--no-gx"]) == 0
    assert query("SELECT count(*) n FROM branches")[0]["n"] == 1
    assert cli.main(["export", "sft", "android", "--out", str(tmp_path / "sft"), "--lake", lake,
                     "--include-simulated"]) == 0
    assert '"origin":"simulated"' in "".join(p.read_text() for p in (tmp_path / "sft").rglob("*.jsonl"))
