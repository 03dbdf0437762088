"""An object-store lake: inputs, lake and exports on `s3://`, the catalog a local file.

moto's S3 server runs on a free loopback port for the module (started and stopped here); the lake's settings
come from the environment every S3 client reads (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...). The same chain runs
twice, once into a local lake and once into `s3://`: `pipelines run ingest-all` (ingest + validate) over the
bundled samples plus a copy of the DroidBot run (a duplicate for dedup), `label` against a scripted
OpenAI-compatible server on loopback, `validate` (with its great-expectations report, uploaded to the
bucket), `dedup`, and every export kind and format. The S3 run must give the local run's rows (run ids aside)
and byte-identical export shards, never copy an object (a rename on S3 is a copy and a delete), leave no
temporary object or unfinished multipart upload, and its catalog views must answer over the `s3://` parts.

The catalog's DuckDB reads those parts with httpfs (the build `duckdb-extension-httpfs` ships for the pinned
DuckDB, with an S3 secret made from the lake's settings); where httpfs cannot load, through the lake's fsspec
filesystem registered on the connection (`catalog.object_store.attach`): both are checked here.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import socket

import orjson
import pytest

from catalog import Catalog, object_store
from catalog.catalog import VIEW_TABLES
from pipelines import cli
from pipelines.infra.datasets import read_table
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog
from tests.conftest import SAMPLES
from tests.pipelines.label_servers import ScriptedServer, chat_completion
from tests.parts import require, require_module

BUCKET = "trajforge-test"
S3_LAKE = f"s3://{BUCKET}/lake"
EXPORTS = [("cpt", "text"), ("cpt", "swift"), ("sft", "agentworld"), ("sft", "trl"), ("sft", "swift"),
           ("sft", "sharegpt"), ("sft", "bench"), ("rl", "verl"), ("atif", None)]
RUN_COLUMNS = ("_run_id", "ingest_run_id")  # the only columns that differ between two runs of the same chain


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scripted_state(body):
    kind = (body["messages"][-1]["content"].rsplit('"kind": "', 1)[-1].split('"', 1)[0] or "act")[:40]
    return 200, chat_completion(f"<predicted_observation>\n**Environment Observation:**\nstate after {kind}\n"
                                "</predicted_observation>"), 0.0


def _cli(*args: str) -> None:
    assert cli.main(list(args)) == 0, args


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """(fsspec S3 filesystem, S3 calls made so far) with moto's server on loopback and the environment
    pointing at it; a fresh bucket."""
    missing = [m for m in ("moto", "s3fs", "flask") if importlib.util.find_spec(m) is None]
    require(f"{', '.join(missing)} (the object-store lake's test dependencies)", not missing,
            "pip install 'moto[server]>=5' 's3fs>=2024.2'")
    import s3fs
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    nowhere = str(tmp_path_factory.mktemp("aws") / "none")
    calls: list[str] = []
    real_call = s3fs.S3FileSystem._call_s3

    async def recorded(self, method, *args, **kwargs):
        calls.append(method if isinstance(method, str) else getattr(method, "__name__", str(method)))
        return await real_call(self, method, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_REGION"):
            mp.delenv(name, raising=False)
        for name, value in {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "testing",
                            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                            "AWS_CONFIG_FILE": nowhere, "AWS_SHARED_CREDENTIALS_FILE": nowhere,
                            "AWS_EC2_METADATA_DISABLED": "true"}.items():
            mp.setenv(name, value)
        mp.setattr(s3fs.S3FileSystem, "_call_s3", recorded)
        s3fs.S3FileSystem.clear_instance_cache()  # an instance made before would keep its old endpoint
        try:
            fs = s3fs.S3FileSystem()
            fs.mkdir(BUCKET)
            yield fs, calls
        finally:
            s3fs.S3FileSystem.clear_instance_cache()
            server.stop()


@pytest.fixture(scope="module")
def chains(s3, tmp_path_factory):
    """The chain run into a local lake and into the S3 lake, from the same inputs."""
    fs, calls = s3
    root = tmp_path_factory.mktemp("s3lake")
    shutil.copytree(SAMPLES, root / "in")
    shutil.copytree(SAMPLES / "android" / "droidbot-run", root / "dup" / "droidbot-run")
    fs.put(str(root / "in") + "/", f"{BUCKET}/in/", recursive=True)
    fs.put(str(root / "dup") + "/", f"{BUCKET}/dup/", recursive=True)
    assert len(fs.find(f"{BUCKET}/in")) == sum(1 for p in (root / "in").rglob("*") if p.is_file())

    server = ScriptedServer([_scripted_state])
    try:
        local = _chain(str(root / "lake"), [], [str(root / "in"), str(root / "dup")], str(root / "exports"),
                       server.url, gx="--no-gx")
        del calls[:]
        s3_catalog = str(root / "catalog" / "catalog.duckdb")
        remote = _chain(S3_LAKE, ["--catalog", s3_catalog], [f"s3://{BUCKET}/in", f"s3://{BUCKET}/dup"],
                        f"s3://{BUCKET}/exports", server.url, gx="--gx")
        s3_calls = list(calls)
    finally:
        server.close()
    return {"root": root, "local": local, "s3": remote, "s3_catalog": s3_catalog, "s3_calls": s3_calls, "fs": fs}


def _chain(lake: str, catalog: list[str], inputs: list[str], exports: str, endpoint: str, gx: str) -> dict:
    where = ["--lake", lake, *catalog]
    _cli("run", "ingest-all", *[a for i in inputs for a in ("--input", i)], *where, "--quiet")
    _cli("label", "all", "--endpoint", endpoint, "--model", "scripted-wm", "--per-episode", "1", *where)
    _cli("validate", "all", gx, *where)
    _cli("dedup", "all", *where)
    outs = {}
    for kind, fmt in EXPORTS:
        name = f"{kind}-{fmt or 'atif'}"
        outs[name] = f"{exports}/{name}"
        _cli("export", kind, "all", "--out", outs[name], *(["--format", fmt] if fmt else []), *where)
    _cli("export", "sft", "all", "--out", f"{exports}/sft-branches", "--include-simulated", *where)
    outs["sft-branches"] = f"{exports}/sft-branches"
    return {"lake": lake, "catalog": catalog[1] if catalog else None, "exports": outs}


def _query(chain: dict, sql: str) -> list[dict]:
    with open_catalog(Lake(chain["lake"]), chain["catalog"], read_only=True) as cat:
        return cat.sql(sql).to_arrow_table().to_pylist()


def _rows(chain: dict) -> dict[str, list[dict]]:
    """Every table of the current version of `all`, read from its parts, without run ids, in a fixed order."""
    lake = Lake(chain["lake"])
    with open_catalog(lake, chain["catalog"], read_only=True) as cat:
        version = cat.current_version("all")
    tables = {}
    for table in VIEW_TABLES:
        data = read_table(lake, version, table)
        data = data.drop_columns([c for c in RUN_COLUMNS if c in data.column_names])
        tables[table] = sorted(data.to_pylist(), key=lambda r: orjson.dumps(r, default=str,
                                                                           option=orjson.OPT_SORT_KEYS))
    return tables


def _read(path: str) -> bytes:
    lake = Lake(path)
    with lake.fs.open(lake.root, "rb") as f:
        return f.read()


def _manifest(out: str) -> dict:
    return orjson.loads(_read(f"{out}/manifest.json"))


def test_the_s3_run_succeeds_with_the_local_runs_versions(chains):
    runs = _query(chains["s3"], "SELECT pipeline, status, error FROM runs ORDER BY started_at")
    assert [r["pipeline"] for r in runs[:4]] == ["ingest-all", "label", "validate", "dedup"]
    assert all(r["status"] == "success" for r in runs), runs
    history = "SELECT version, parent_version, episodes, steps, quarantined, note FROM versions ORDER BY version"
    assert _query(chains["s3"], history) == _query(chains["local"], history)
    (v,) = _query(chains["s3"], "SELECT count(*) n, max(version) AS last FROM versions")
    assert v["n"] == v["last"] >= 3  # ingest, label, dedup each made a version


def test_the_s3_lake_holds_the_local_lakes_rows(chains):
    local, remote = _rows(chains["local"]), _rows(chains["s3"])
    for table in VIEW_TABLES:
        assert remote[table] == local[table], table
    assert local["steps"] and local["branches"] and local["blobs"]
    assert any(r["stage"] == "dedup" for r in local["quarantine"])  # the duplicate DroidBot run went


def test_catalog_views_answer_over_the_s3_parts(chains, capsys):
    """`pipelines sql` over the S3 lake: the catalog's views read the `s3://` parts (httpfs, else fsspec)."""
    counts = "SELECT (SELECT count(*) FROM steps) steps, (SELECT count(*) FROM episodes) episodes, " \
             "(SELECT count(*) FROM branches) branches, (SELECT count(*) FROM quarantine) quarantined, " \
             "(SELECT count(*) FROM blobs) blobs"
    assert _query(chains["s3"], counts) == _query(chains["local"], counts)
    capsys.readouterr()
    _cli("sql", "SELECT count(*) AS n FROM steps", "--lake", S3_LAKE, "--catalog", chains["s3_catalog"],
         "--format", "csv")
    out = capsys.readouterr().out.replace('"', "").split()
    assert out == ["n", str(_query(chains["local"], "SELECT count(*) n FROM steps")[0]["n"])]
    views = _query(chains["s3"], "SELECT sql FROM duckdb_views() WHERE view_name = 'steps'")
    assert f"'{S3_LAKE}/datasets/all/parts/steps/" in views[0]["sql"]
    with Catalog(chains["s3_catalog"], S3_LAKE, read_only=True) as cat:
        assert cat.storage == "httpfs"


def test_every_export_on_s3_is_the_local_export(chains):
    for name, out in chains["s3"]["exports"].items():
        remote, local = _manifest(out), _manifest(chains["local"]["exports"][name])
        assert remote["rows"] == local["rows"] > 0, name
        assert remote["shards"] == local["shards"], name
        for shard in remote["shards"]:
            assert _read(f"{out}/{shard['path']}") == _read(f"{chains['local']['exports'][name]}/{shard['path']}")
        for extra in remote.get("extra_files", []):
            there, here = _read(f"{out}/{extra}"), _read(f"{chains['local']['exports'][name]}/{extra}")
            if extra == "verl_reward.yaml":  # names each export's own shard files: the same but for those
                there, here = (b"\n".join(line for line in text.splitlines() if b"_files:" not in line)
                               for text in (there, here))
            assert there == here, (name, extra)
    (n,) = _query(chains["s3"], "SELECT count(*) n FROM exports WHERE out LIKE 's3://%'")
    assert n["n"] == len(chains["s3"]["exports"])
    # each export's lineage, read by the catalog's `export_rows` view from its file in the S3 lake
    lineage = ('SELECT e.kind, e.format, r.shard, r."row", r.step_ids FROM export_rows r JOIN exports e USING '
               '(export_id) ORDER BY ALL')
    remote = _query(chains["s3"], lineage)
    assert remote == _query(chains["local"], lineage) and len(remote) >= n["n"]
    files = _query(chains["s3"], "SELECT lineage FROM exports")
    assert all(chains["fs"].exists(f"{BUCKET}/lake/{f['lineage']}") for f in files), files


def test_s3_exports_load_with_hf_datasets(chains):
    datasets = require_module("datasets")
    options = {"endpoint_url": os.environ["AWS_ENDPOINT_URL"], "key": "testing", "secret": "testing"}
    cache = str(chains["root"] / "hf-cache")
    for name, builder in (("rl-verl", "parquet"), ("sft-agentworld", "json")):
        out = chains["s3"]["exports"][name]
        manifest = _manifest(out)
        train = [f"{out}/{s['path']}" for s in manifest["shards"] if s["split"] == "train"]
        loaded = datasets.load_dataset(builder, data_files={"train": train}, storage_options=options,
                                       cache_dir=cache, split="train")
        assert len(loaded) == sum(s["rows"] for s in manifest["shards"] if s["split"] == "train") > 0


def test_nothing_on_s3_was_renamed_half_written_or_left_behind(chains):
    fs, calls = chains["fs"], chains["s3_calls"]
    assert "put_object" in calls
    assert not {"copy_object", "upload_part_copy"} & set(calls)  # no rename (a copy and a delete) anywhere
    keys = fs.find(BUCKET)
    assert not [k for k in keys if ".tmp-" in k or "trajforge-upload-" in k]
    assert fs.call_s3("list_multipart_uploads", Bucket=BUCKET).get("Uploads", []) == []
    markers = [k for k in keys if k.startswith(f"{BUCKET}/lake/datasets/all/tasks/")]
    assert markers and all(orjson.loads(fs.cat_file(k))["parts"] for k in markers)
    assert any(k.endswith("index.html") for k in keys if "/validation/" in k)  # the GX report went up too


def test_an_object_store_write_is_one_put_and_a_streamed_file_appears_only_when_committed(s3):
    fs, calls = s3
    lake = Lake(f"s3://{BUCKET}/atomic")
    assert lake.is_object_store and not lake.is_local and lake.uri("p") == f"s3://{BUCKET}/atomic/p"
    del calls[:]
    lake.write_bytes_atomic(lake.path("one.bin"), b"x" * 1000)
    assert calls == ["put_object"] and fs.cat_file(lake.path("one.bin")) == b"x" * 1000

    target = lake.path("shard.jsonl")
    f = lake.open_atomic(target)
    f.write(b'{"a": 1}\n')
    assert not fs.exists(target) and fs.find(lake.root) == [lake.path("one.bin")]
    f.commit()
    assert fs.cat_file(target) == b'{"a": 1}\n'

    gone = lake.path("discarded.jsonl")
    f = lake.open_atomic(gone)
    f.write(b"partial")
    f.discard()
    assert sorted(fs.find(lake.root)) == sorted([lake.path("one.bin"), target])
    assert not {"copy_object", "upload_part_copy"} & set(calls)


def test_views_read_s3_parts_through_fsspec_where_httpfs_cannot_load(chains, monkeypatch):
    monkeypatch.setattr(object_store, "load_httpfs", lambda con: False)  # as on a DuckDB without a build
    with Catalog(chains["s3_catalog"], S3_LAKE, read_only=True) as cat:
        assert cat.storage == "fsspec"
        (n,) = cat.sql("SELECT count(*) FROM steps").fetchall()[0]
    assert n == _query(chains["local"], "SELECT count(*) n FROM steps")[0]["n"]


def test_s3_settings_come_from_the_environment_and_make_duckdbs_secret():
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9001",
           "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "it's-secret", "AWS_DEFAULT_REGION": "eu-west-1"}
    settings = object_store.s3_settings(env)
    assert settings == {"endpoint_url": "http://127.0.0.1:9001", "key": "AKID", "secret": "it's-secret",
                        "token": None, "region": "eu-west-1"}
    sql = object_store.s3_secret_sql(settings, scope="s3://bucket")
    assert sql == ("CREATE OR REPLACE TEMPORARY SECRET trajforge_lake (TYPE s3, KEY_ID 'AKID', SECRET 'it''s-secret', "
                   "REGION 'eu-west-1', ENDPOINT '127.0.0.1:9001', URL_STYLE 'path', USE_SSL false, "
                   "SCOPE 's3://bucket')")
    assert object_store.s3_secret_sql({"region": "us-east-1"}) == \
        "CREATE OR REPLACE TEMPORARY SECRET trajforge_lake (TYPE s3, REGION 'us-east-1')"
    assert object_store.s3_settings({"AWS_ENDPOINT_URL": "https://s3.example"})["endpoint_url"] == "https://s3.example"
    assert "USE_SSL true" in object_store.s3_secret_sql({"endpoint_url": "https://s3.example"})


def test_a_local_lake_keeps_temporary_name_then_rename(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    assert lake.is_local and not lake.is_object_store and lake.uri("x/y") == str(tmp_path / "lake" / "x" / "y")
    f = lake.open_atomic(lake.path("a", "b.jsonl"))
    f.write(b"line\n")
    assert [p.name.startswith("b.jsonl.tmp-") for p in (tmp_path / "lake" / "a").iterdir()] == [True]
    f.commit()
    assert [p.name for p in (tmp_path / "lake" / "a").iterdir()] == ["b.jsonl"]
