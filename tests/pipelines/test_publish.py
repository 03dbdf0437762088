"""`pipelines publish`: an export or a dataset laid out as a Hub dataset repository that `datasets` loads as
it is, with a card naming every source's format, producer, version and license; publishing refused while a
source states no license; the upload through `huggingface_hub` to a loopback stand-in of the Hub's API."""

import glob
import json
import os

import orjson
import pyarrow.parquet as pq
import pytest
import yaml

from pipelines.cli import main
from pipelines.stages.export import export
from pipelines.infra.lake import Lake
from pipelines.infra.options import ExportOptions
from pipelines.stages.publish import PublishError, publish
from tests.pipelines.hub_standin import HubStandIn


def _export(lake: str, out, fmt: str, kind: str = "sft") -> dict:
    return export(Lake(lake), None, "all", str(out), ExportOptions(kind=kind, format=fmt), log=lambda line: None)


def _card(out) -> tuple[dict, str]:
    text = open(os.path.join(out, "README.md"), encoding="utf-8").read()
    _, header, body = text.split("---\n", 2)
    return yaml.safe_load(header), body


def _exported_rows(folder, manifest: dict, split: str) -> list[dict]:
    rows = []
    for shard in manifest["shards"]:
        if shard["split"] != split:
            continue
        path = os.path.join(folder, shard["path"])
        if manifest["file_type"] == "parquet":
            rows += pq.read_table(path).to_pylist()
        else:
            rows += [orjson.loads(line) for line in open(path, "rb") if line.strip()]
    return rows


def _episodes(lake: str, manifest: dict) -> list[dict]:
    from pipelines.infra.runs import open_catalog

    with open_catalog(Lake(lake), None) as cat:
        rows = cat.con.execute(
            "SELECT source_format, source_uri, license FROM episodes WHERE dataset = 'all' AND episode_id IN "
            "(SELECT DISTINCT split_part(s, ':', 1) FROM (SELECT unnest(step_ids) AS s FROM export_rows "
            "WHERE export_id = ?))", [manifest["export_id"]]).fetchall()
    return [dict(zip(("source_format", "source_uri", "license"), row)) for row in rows]


def test_an_unlicensed_source_stops_the_publish_and_is_named(bundled_lake, tmp_path):
    manifest = _export(bundled_lake, tmp_path / "sft", "trl")
    unlicensed = sorted({e["source_uri"] for e in _episodes(bundled_lake, manifest) if e["license"] is None})
    assert unlicensed  # the bundled hand-made samples state no license (PROVENANCE.md: "same as this repository")
    with pytest.raises(PublishError, match="state no license") as e:
        publish(Lake(bundled_lake), None, str(tmp_path / "sft"), str(tmp_path / "hub"), log=lambda line: None)
    assert unlicensed[0] in str(e.value)
    assert not os.path.exists(tmp_path / "hub" / "README.md")  # nothing written
    assert main(["publish", str(tmp_path / "sft"), "--out", str(tmp_path / "hub"), "--lake", bundled_lake]) == 2


def test_an_export_of_another_lake_names_the_lake_it_looked_in_and_the_flag(bundled_lake, tmp_path, capsys):
    """Run from another folder (its ./lake empty), publish must say where it looked and that --lake picks the
    lake the export came from, not only "no dataset 'all'"."""
    _export(bundled_lake, tmp_path / "sft", "trl")
    other = str(tmp_path / "other-lake")
    assert main(["publish", str(tmp_path / "sft"), "--out", str(tmp_path / "hub"), "--lake", other]) == 2
    err = capsys.readouterr().err
    assert "no dataset 'all'" in err and f"not in the lake at {Lake(other).url}" in err and "pass --lake" in err
    assert not os.path.exists(tmp_path / "hub" / "README.md")


@pytest.mark.parametrize("fmt", ["trl", "agentworld", "swift"])
def test_a_published_export_loads_with_datasets_as_it_is(bundled_lake, tmp_path, fmt):
    import datasets

    manifest = _export(bundled_lake, tmp_path / "sft", fmt)
    done = publish(Lake(bundled_lake), None, str(tmp_path / "sft"), str(tmp_path / "hub"), allow_unlicensed=True,
                   log=lambda line: None)
    loaded = datasets.load_dataset(str(tmp_path / "hub"))
    assert set(loaded) == set(manifest["counts"])
    for split in loaded:
        exported = _exported_rows(tmp_path / "sft", manifest, split)
        assert loaded[split].num_rows == len(exported) == sum(manifest["counts"][split].values())
        assert [r["id"] for r in loaded[split]] == [r["id"] for r in exported]
        key = "completion" if fmt == "trl" else "messages"
        assert [r[key] for r in loaded[split]][:5] == [
            [{k: m.get(k) for k in r[key][0]} for m in row[key]] for row, r in zip(exported, loaded[split])][:5]
    meta, body = _card(tmp_path / "hub")
    assert [c["config_name"] for c in meta["configs"]] == [f"sft-{fmt}"] and meta["configs"][0]["default"]
    info = meta["dataset_info"][0]
    assert {s["name"]: s["num_examples"] for s in info["splits"]} == {
        s: sum(d.values()) for s, d in manifest["counts"].items()}
    assert [f["name"] for f in info["features"]] == list(loaded["train"].features)
    assert meta["task_categories"] == ["text-generation"] and meta["license"] == "other"
    assert done.rows == manifest["rows"]


def test_the_card_names_every_source_its_producer_version_and_license(bundled_lake, tmp_path):
    manifest = _export(bundled_lake, tmp_path / "sft", "trl")
    publish(Lake(bundled_lake), None, str(tmp_path / "sft"), str(tmp_path / "hub"), allow_unlicensed=True,
            log=lambda line: None)
    meta, body = _card(tmp_path / "hub")
    episodes = _episodes(bundled_lake, manifest)
    sources = body.split("## Sources")[1].split("## Licenses")[0]
    for fmt in {e["source_format"] for e in episodes}:
        line = next(l for l in sources.splitlines() if l.startswith(f"| `{fmt}` |"))
        licenses = {e["license"] or "none" for e in episodes if e["source_format"] == fmt}
        assert all(f"{lic} " in line for lic in licenses), line
    assert "| Claude Code (2.0.46) |" in sources  # the producer's version, as its session file records it
    licensed = {e["license"] for e in episodes if e["license"]}
    assert licensed >= {"MIT", "Apache-2.0"}
    assert meta["license_name"] == "-and-".join(sorted(l.lower() for l in licensed) + ["none"])
    for uri in {e["source_uri"] for e in episodes if e["license"] is None}:
        assert f"- `{uri}`" in body
    for e in episodes:  # each source with its license
        assert f"| `{e['source_uri']}` | {e['license'] or 'none'} |" in body
    record = json.load(open(tmp_path / "hub" / "publish.json"))
    assert record["export_id"] == manifest["export_id"]
    assert record["sources"]["episodes"] == len(episodes)
    assert f"--format trl` (export `{manifest['export_id']}`" in body and "## Counts" in body


def test_license_rules_license_the_sources_that_stated_none(bundled_lake, tmp_path):
    _export(bundled_lake, tmp_path / "sft", "trl")
    rules = ["--license", "samples/mcp/*=CC-BY-4.0", "--license", "samples/*=Apache-2.0"]  # the first match wins
    assert main(["publish", str(tmp_path / "sft"), "--out", str(tmp_path / "hub"), "--lake", bundled_lake, *rules]) == 0
    record = json.load(open(tmp_path / "hub" / "publish.json"))["sources"]
    assert record["unlicensed"] == [] and record["licenses_from_rules"] > 0
    assert record["formats"]["mcp_sdk"]["licenses"] == {"CC-BY-4.0": 1}  # samples/mcp/sdk-stdio/sdk-calls.jsonl


def test_a_published_dataset_has_its_episodes_and_steps_as_configs(bundled_lake, tmp_path):
    import datasets

    assert main(["publish", "all", "--out", str(tmp_path / "hub"), "--lake", bundled_lake, "--allow-unlicensed"]) == 0
    episodes = datasets.load_dataset(str(tmp_path / "hub"))  # the default config
    steps = datasets.load_dataset(str(tmp_path / "hub"), "steps")
    from pipelines.infra.runs import open_catalog

    with open_catalog(Lake(bundled_lake), None) as cat:
        n_episodes, n_steps = cat.con.execute("SELECT (SELECT count(*) FROM episodes WHERE dataset = 'all'), "
                                              "(SELECT count(*) FROM steps WHERE dataset = 'all')").fetchone()
    assert episodes["train"].num_rows == n_episodes and steps["train"].num_rows == n_steps
    assert "license" in episodes["train"].features and "observation" in steps["train"].features
    meta, _ = _card(tmp_path / "hub")
    assert [c["config_name"] for c in meta["configs"]] == ["episodes", "steps"]


def test_the_upload_puts_every_file_in_the_hub_repository(bundled_lake, tmp_path):
    _export(bundled_lake, tmp_path / "sft", "trl")
    hub = HubStandIn(token="hf_test_token")
    try:
        args = ["publish", str(tmp_path / "sft"), "--out", str(tmp_path / "hub"), "--lake", bundled_lake,
                "--allow-unlicensed", "--repo-id", "someone/agent-sft", "--endpoint", hub.url]
        assert main([*args, "--token", "wrong"]) == 2  # the Hub refuses the token: the command says so
        assert main([*args, "--token", "hf_test_token"]) == 0
        files = hub.repos["datasets/someone/agent-sft"]["files"]
        local = {os.path.relpath(p, tmp_path / "hub"): open(p, "rb").read()
                 for p in glob.glob(str(tmp_path / "hub" / "**" / "*"), recursive=True) if os.path.isfile(p)}
        assert files == local and "README.md" in files and any(p.endswith(".parquet") for p in files)
        assert "/api/validate-yaml" in hub.requests  # the card's metadata went through the Hub's check
    finally:
        hub.close()


def test_an_upload_without_a_token_is_refused_before_anything_is_written(bundled_lake, tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert main(["publish", "all", "--out", str(tmp_path / "hub"), "--lake", bundled_lake, "--repo-id", "a/b"]) == 2
    assert not os.path.exists(tmp_path / "hub")
