"""The chain a user runs over the bundled samples of every domain, with labeler branches in it:
ingest -> label -> validate -> dedup -> export (every kind and format, and ATIF) -> ingest the ATIF export.

Two world models label: llama.cpp serving SmolLM2-135M (the real server, on loopback) answers the Android
HOME branches; it takes ~10 s a request on two cores, so the every-domain run is answered by a scripted
OpenAI-compatible server on loopback (a stand-in for the model, not for the protocol), one predicted state
per request. A copy of the DroidBot run makes one exact duplicate episode, so dedup has branches to take
with it.
"""

import re
import shutil
from collections import Counter
from pathlib import Path

import orjson
import pytest

from pipelines import cli

from pipelines.infra import definition
from pipelines.stages.label import LabelOptions, label
from pipelines.infra.label_client import Sampling
from pipelines.infra.lake import Lake
from pipelines.infra.runner import run_ingest
from pipelines.infra.runs import open_catalog
from tests.conftest import SAMPLES
from tests.pipelines.label_servers import ScriptedServer, chat_completion

EXPORTS = [("cpt", "text"), ("cpt", "swift"), ("sft", "agentworld"), ("sft", "trl"), ("sft", "swift"),
           ("sft", "sharegpt"), ("sft", "bench"), ("rl", "verl"), ("atif", None)]
BRANCH_KEYS = ("origin", "strategy", "labeler", "request_key")


def _scripted_state(body):
    """A state that names the action it answers, in the reference's answer block, after some reasoning."""
    kind = (re.findall(r'"(?:kind|name|keystrokes)": "([^"]{1,40})"', body["messages"][-1]["content"]) or ["act"])[-1]
    return 200, chat_completion(f"<think>The agent did {kind}.</think>\n<predicted_observation>\n"
                                f"**Environment Observation:**\nstate after {kind}\n</predicted_observation>"), 0.0


def _cli(*args) -> None:
    assert cli.main(list(args)) == 0, args


def _export_all(lake: str, out: Path, *extra: str) -> dict[str, dict]:
    manifests = {}
    for kind, fmt in EXPORTS:
        name = f"{kind}-{fmt or 'atif'}"
        _cli("export", kind, "all", "--out", str(out / name), "--lake", lake, *(["--format", fmt] if fmt else []),
             *extra)
        manifests[name] = orjson.loads((out / name / "manifest.json").read_bytes())
    return manifests


def _files(out: Path, manifests: dict[str, dict]) -> dict[str, bytes]:
    """Every shard's bytes, by export name and shard path (manifests differ in the version they name)."""
    return {f"{name}/{s['path']}": (out / name / s["path"]).read_bytes()
            for name, m in manifests.items() for s in m["shards"]}


def _query(lake: str, sql: str, params=()) -> list[dict]:
    with open_catalog(Lake(lake), read_only=True) as cat:
        cursor = cat.con.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]


@pytest.fixture(scope="module")
def chain(tmp_path_factory, llama_server):
    root = tmp_path_factory.mktemp("chain")
    lake = str(root / "lake")
    rerun = root / "rerun"
    shutil.copytree(SAMPLES / "android" / "droidbot-run", rerun / "droidbot-run")
    ingest_only = definition.load("ingest-all")
    ingest_only.stages = ["ingest"]
    first = run_ingest(ingest_only, lake, [str(SAMPLES), str(rerun)], progress=False, log=lambda line: None)
    assert first.status == "success" and first.quarantined == 0
    before = _export_all(lake, root / "before")

    real = label(Lake(lake), None, "all", LabelOptions(
        model="smollm2", endpoint=llama_server, per_episode=1, strategies=["home"], concurrency=1, timeout=120,
        retries=0, sampling=Sampling(temperature=0.0, max_tokens=48, seed=0, stop=("\n\n",))),
        "run-llama", log=lambda line: None)
    scripted = ScriptedServer([_scripted_state])
    try:
        stand_in = label(Lake(lake), None, "all", LabelOptions(model="scripted-wm", endpoint=scripted.url,
                                                               per_episode=1, backoff_s=0.01),
                         "run-scripted", log=lambda line: None)
    finally:
        scripted.close()
    labeled = _query(lake, "SELECT current_version v FROM datasets WHERE name = 'all'")[0]["v"]
    _cli("validate", "all", "--lake", lake, "--no-gx")
    validated = _query(lake, "SELECT current_version v FROM datasets WHERE name = 'all'")[0]["v"]
    after_label = _export_all(lake, root / "after-label")
    _cli("dedup", "all", "--lake", lake)
    deduped = _query(lake, "SELECT current_version v FROM datasets WHERE name = 'all'")[0]["v"]
    with_branches = _export_all(lake, root / "with-branches", "--include-simulated")
    lake2 = str(root / "lake2")
    again = run_ingest(definition.load("ingest-all"), lake2, [str(root / "with-branches" / "atif-atif")],
                       progress=False, log=lambda line: None)
    return {"root": root, "lake": lake, "lake2": lake2, "first": first, "real": real, "stand_in": stand_in,
            "labeled": labeled, "validated": validated, "deduped": deduped, "before": before,
            "after_label": after_label, "with_branches": with_branches, "again": again}


def test_the_labelers_write_branches_for_every_domain_and_leave_steps_alone(chain):
    lake = chain["lake"]
    assert chain["real"].errors < chain["real"].requests  # the real server answered
    assert chain["stand_in"].branches_written == chain["stand_in"].requests > 0
    per_domain = {r["domain"]: r["n"] for r in _query(lake, "SELECT domain, count(*) n FROM branches GROUP BY 1")}
    assert set(per_domain) == {"android", "web", "os", "terminal", "swe", "mcp", "search"}
    labeled = _query(lake, "SELECT DISTINCT labeler FROM read_parquet(?)", [_paths(lake, chain["labeled"], "branches")])
    models = Counter(orjson.loads(r["labeler"])["model"] for r in labeled)
    assert models["scripted-wm"] == len(per_domain)  # one labeler id per domain template
    assert ("smollm2" in models) == (chain["real"].branches_written > 0)
    steps = _query(lake, "SELECT list(DISTINCT origin) origins, count(*) n FROM steps")[0]
    labeled_steps = _query(lake, "SELECT count(*) n FROM read_parquet(?)", [_paths(lake, chain["labeled"], "steps")])
    assert steps["origins"] == ["real"] and labeled_steps[0]["n"] == chain["first"].steps  # labeling added none


def test_validate_quarantines_no_real_episode_because_of_its_branches(chain):
    lake = chain["lake"]
    assert chain["validated"] == chain["labeled"]  # nothing to remove: the version stays
    assert _query(lake, "SELECT count(*) n FROM quarantine WHERE stage = 'validate'")[0]["n"] == 0
    (found,) = _query(lake, "SELECT count(*) n FROM validation_findings WHERE severity = 'error'")
    assert found["n"] == 0


def test_real_only_exports_of_the_labeled_version_are_the_exports_before_labeling(chain):
    before, after = chain["before"], chain["after_label"]
    assert _files(chain["root"] / "after-label", after) == _files(chain["root"] / "before", before)
    for name, manifest in after.items():
        assert manifest["version"] == chain["validated"] != before[name]["version"]


def test_dedup_takes_the_duplicate_episodes_branches_with_it(chain):
    lake = chain["lake"]
    dropped = {r["record_id"] for r in _query(lake, "SELECT record_id FROM quarantine WHERE stage = 'dedup' "
                                                   "AND rule IN ('exact_duplicate', 'near_duplicate')")}
    copies = _query(lake, "SELECT episode_id FROM read_parquet(?) WHERE source_uri LIKE '%droidbot-run%'",
                    [_paths(lake, chain["labeled"], "episodes")])
    assert len(copies) == 2 and len(dropped & {c["episode_id"] for c in copies}) == 1  # the copy went
    gone = _query(lake, "SELECT record_id, reason FROM quarantine WHERE rule = 'branch_of_duplicate'")
    labeled_branches = _query(lake, "SELECT step_id, episode_id FROM read_parquet(?)",
                              [_paths(lake, chain["labeled"], "branches")])
    of_dropped = [b["step_id"] for b in labeled_branches if b["episode_id"] in dropped]
    assert of_dropped and sorted(r["record_id"] for r in gone) == sorted(of_dropped)
    assert all(r["reason"].startswith("branch of episode ") and r["reason"].split()[3].rstrip(",") in dropped for r in gone)
    orphans = _query(lake, "SELECT count(*) n FROM branches b ANTI JOIN steps s ON b.parent_step_id = s.step_id")
    assert orphans[0]["n"] == 0


def test_exports_with_branches_mark_their_origin_and_map_every_row_to_its_steps(chain):
    lake, manifests = chain["lake"], chain["with_branches"]
    known = {r["step_id"] for r in _query(lake, "SELECT step_id FROM steps UNION ALL SELECT step_id FROM branches")}
    branch_ids = {r["step_id"] for r in _query(lake, "SELECT step_id FROM branches")}
    for name, manifest in manifests.items():
        rows = _query(lake, "SELECT shard, \"row\", step_ids FROM export_rows WHERE export_id = ?", [manifest["export_id"]])
        assert len(rows) == manifest["rows"] > 0, name
        assert set().union(*(r["step_ids"] for r in rows)) <= known, name
        if name != "rl-verl":  # RL takes one turn per trajectory: a branch line may or may not be the one chosen
            assert any(set(r["step_ids"]) & branch_ids for r in rows), name
    sft = chain["root"] / "with-branches" / "sft-agentworld"
    records = [orjson.loads(line) for s in manifests["sft-agentworld"]["shards"]
               for line in (sft / s["path"]).read_bytes().splitlines()]
    simulated = {r["id"] for r in records if r["origin"] == "simulated"}
    assert simulated and simulated <= branch_ids  # one SFT record per branch line, named by its branch step
    assert len(records) - len(simulated) < chain["after_label"]["sft-agentworld"]["rows"]  # minus the duplicate
    predicted = [r for r in records if r["origin"] == "simulated" and "state after" in r["messages"][-1]["content"]]
    assert predicted  # the stand-in's answer, parsed like the reference, is the target


def test_the_atif_round_trip_keeps_every_branch_and_its_origin(chain):
    lake, lake2 = chain["lake"], chain["lake2"]
    assert chain["again"].status == "success" and chain["again"].quarantined == 0
    fields = ", ".join(BRANCH_KEYS) + ", action.kind AS kind, next_observation.text AS state"
    source = _query(lake, f"SELECT {fields} FROM branches")
    back = _query(lake2, f"SELECT {fields} FROM branches")
    key = lambda r: tuple(str(r[k]) for k in (*BRANCH_KEYS, "kind", "state"))  # noqa: E731
    assert sorted(map(key, back)) == sorted(map(key, source)) and len(back) > 0
    assert _query(lake2, "SELECT list(DISTINCT origin) o FROM steps")[0]["o"] == ["real"]
    assert _query(lake2, "SELECT count(*) n FROM steps")[0]["n"] == _query(lake, "SELECT count(*) n FROM steps")[0]["n"]
    orphans = _query(lake2, "SELECT count(*) n FROM branches b ANTI JOIN steps s ON b.parent_step_id = s.step_id")
    assert orphans[0]["n"] == 0


def _paths(lake: str, version: int, table: str) -> list[str]:
    """The files of one table of a version of `all`."""
    (row,) = _query(lake, "SELECT parts FROM versions WHERE dataset = 'all' AND version = ?", [version])
    return [str(Path(lake) / p) for p in orjson.loads(row["parts"]).get(table, [])]
