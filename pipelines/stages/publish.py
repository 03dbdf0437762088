"""`pipelines publish SOURCE --out DIR`: an export, or a dataset, laid out as a Hugging Face Hub dataset
repository, and uploaded there when a repository id and a token are given.

SOURCE is an export's folder (its `manifest.json` says what it holds) or a dataset `NAME[@VERSION]`. The
folder written:

    README.md                          the dataset card (`pipelines.stages.publish_card`): YAML with the configs, their
                                       splits and features, the license and task categories; then every source
                                       format with its producer and version, each license, the sources with
                                       none, the recipe and the counts
    <config>/<split>-NNNNN.parquet     the rows: an export is one config (`<kind>-<format>`) with its splits;
                                       a dataset is two (`episodes`, `steps`: the real line), split `train`
    publish.json                       what was published: the sources, the configs, the export it came from

Every split of a config is written with one schema (the union of its shards', so a column empty in one split
has the type the others give it), which the card's `dataset_info` states, so `datasets.load_dataset(DIR)`
loads the folder as it is. Episodes whose source states no license (`episodes.license`, filled at ingest from
the input's PROVENANCE.md or LICENSE: `ingest.licenses`; or a `--license GLOB=ID` rule over their source URIs)
make publishing fail, naming them, unless `allow_unlicensed`; the card then names them too.

Memory: one batch of rows at a time (`BATCH_ROWS`), read twice (the schema, then the rows).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from typing import Callable, Iterator

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.stages import publish_card
from pipelines.infra.datasets import DatasetError, resolve
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog

BATCH_ROWS = 2_000
FILE_BYTES = 256 << 20  # a split's Parquet file is closed past this many bytes of rows and another begun
EPISODE_COLUMNS = ["episode_id", "source_format", "source_uri", "license", "ingestor_version", "env"]
TASKS = {"cpt": ["text-generation"], "sft": ["text-generation"], "rl": ["reinforcement-learning", "text-generation"]}
RECORD = "publish.json"


class PublishError(ValueError):
    pass


@dataclass
class Published:
    out: str
    configs: list[publish_card.Config]
    sources: publish_card.Sources
    manifest: dict | None  # the export's, when an export was published
    uploaded: str | None = None  # the repository's URL after an upload
    rows: int = field(init=False)

    def __post_init__(self):
        self.rows = sum(sp["rows"] for c in self.configs for sp in c.splits.values())


def parse_license_rules(rules: list[str] | None) -> list[tuple[str, str]]:
    """`GLOB=LICENSE` strings -> (glob, license) pairs; PublishError on one without `=`."""
    out = []
    for rule in rules or []:
        pattern, sep, license_ = rule.rpartition("=")
        if not sep or not pattern or not license_:
            raise PublishError(f"--license {rule!r}: expected GLOB=LICENSE (e.g. 'runs/*=MIT')")
        out.append((pattern, license_))
    return out


def _export_manifest(source: str) -> tuple[Lake, dict] | None:
    folder = Lake(source)
    path = folder.path("manifest.json")
    if not folder.fs.exists(path):
        return None
    with folder.fs.open(path, "rb") as f:
        return folder, orjson.loads(f.read())


def _exported_version(cat, lake: Lake, source: str, manifest: dict):
    """The dataset version an export was made from, in this lake; an export of another lake is a PublishError
    naming the lake looked in and the flag that names the right one."""
    try:
        return resolve(cat, f"{manifest['dataset']}@{manifest['version']}", lake)
    except DatasetError as e:
        raise PublishError(f"{source}: export {manifest['export_id']} of {manifest['dataset']} "
                           f"v{manifest['version']} is not in the lake at {lake.url} ({e}): pass --lake LAKE, "
                           "the lake it was exported from") from None


def _episode_rows(lake: Lake, parts: list[str], wanted: set[str] | None) -> list[dict]:
    rows = []
    for rel in parts:
        table = pq.read_table(lake.absolute(rel), columns=EPISODE_COLUMNS, filesystem=lake.fs)
        rows += [r for r in table.to_pylist() if wanted is None or r["episode_id"] in wanted]
    return rows


def _exported_episodes(cat, export_id: str) -> set[str]:
    """The episodes an export's rows were made from (`export_rows`: step ids are `<episode_id>:<index>`)."""
    found = cat.con.execute("SELECT DISTINCT split_part(s, ':', 1) FROM (SELECT unnest(step_ids) AS s "
                            "FROM export_rows WHERE export_id = ?)", [export_id]).fetchall()
    return {r[0] for r in found}


# reading batches ---------------------------------------------------------------------------------------
def _batches(fs, path: str, file_type: str) -> Iterator[pa.Table]:
    if file_type == "parquet":
        with fs.open(path, "rb") as f:
            for batch in pq.ParquetFile(f).iter_batches(batch_size=BATCH_ROWS):
                yield pa.Table.from_batches([batch])
        return
    with fs.open(path, "rb") as f:
        rows = []
        for line in f:
            if line.strip():
                rows.append(orjson.loads(line))
            if len(rows) >= BATCH_ROWS:
                yield pa.Table.from_pylist(rows)
                rows = []
        if rows:
            yield pa.Table.from_pylist(rows)


def _conformed(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` with exactly `schema`'s columns (a missing one null), each cast to its type."""
    columns = [table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(table.num_rows, f.type)
               for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _write_config(name: str, splits: dict[str, list[tuple[str, str]]], fs, out: str) -> publish_card.Config:
    """One config's splits (split -> [(shard path, file type)]) as Parquet files under `out/<name>/`."""
    import datasets

    schema = pa.schema([])
    for files in splits.values():
        for path, kind in files:
            for table in _batches(fs, path, kind):
                schema = pa.unify_schemas([schema, table.schema], promote_options="permissive")
    schema = pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in schema])
    config = publish_card.Config(name, datasets.Features.from_arrow_schema(schema)._to_yaml_list())
    os.makedirs(os.path.join(out, name), exist_ok=True)
    for split, files in splits.items():
        written, rows, size, writer, index = [], 0, 0, None, 0
        for path, kind in files:
            for table in _batches(fs, path, kind):
                if writer is None:
                    rel = f"{name}/{split}-{index:05d}.parquet"
                    writer = pq.ParquetWriter(os.path.join(out, rel), schema, compression="zstd")
                    written.append(rel)
                writer.write_table(_conformed(table, schema))
                rows += table.num_rows
                size += table.nbytes
                if size >= FILE_BYTES * (index + 1):
                    writer.close()
                    writer, index = None, index + 1
        if writer is not None:
            writer.close()
        if not written:  # an empty split still loads: one file with the schema and no rows
            rel = f"{name}/{split}-00000.parquet"
            pq.write_table(schema.empty_table(), os.path.join(out, rel), compression="zstd")
            written.append(rel)
        config.splits[split] = {"files": written, "rows": rows,
                                "bytes": sum(os.path.getsize(os.path.join(out, rel)) for rel in written)}
    return config


# the publish ---------------------------------------------------------------------------------------------
def _clear(out: str) -> None:
    """Remove what an earlier publish into `out` wrote (the files its record lists), nothing else."""
    record = os.path.join(out, RECORD)
    if not os.path.exists(record):
        return
    with open(record, "rb") as f:
        old = orjson.loads(f.read())
    for config in old.get("configs", []):
        shutil.rmtree(os.path.join(out, config), ignore_errors=True)
    for name in ("README.md", RECORD):
        if os.path.exists(os.path.join(out, name)):
            os.remove(os.path.join(out, name))


def _unlicensed_error(s: publish_card.Sources) -> PublishError:
    shown = ", ".join(s.unlicensed[:5]) + (f" and {len(s.unlicensed) - 5:,} more" if len(s.unlicensed) > 5 else "")
    return PublishError(
        f"{len(s.unlicensed):,} source(s) state no license: {shown}. Put a PROVENANCE.md or LICENSE beside them "
        "and ingest again, name their license with --license 'GLOB=LICENSE', or publish anyway with "
        "--allow-unlicensed (the card names them)")


def publish(lake: Lake, catalog_path: str | None, source: str, out: str, *, allow_unlicensed: bool = False,
            license_rules: list[tuple[str, str]] = (), log: Callable[[str], None] = print) -> Published:
    """Lay `source` (an export's folder or a dataset ref) out as a Hub dataset repository in the local folder
    `out`. PublishError when a source states no license and `allow_unlicensed` is false (nothing written)."""
    try:  # the card's features are `datasets`' own YAML form of the schema
        import datasets  # noqa: F401
    except ImportError as e:
        raise PublishError("publishing needs the `datasets` package: pip install 'trajforge[publish]'") from e
    found = _export_manifest(source) if ("/" in source or os.path.isdir(source)) else None
    with open_catalog(lake, catalog_path) as cat:
        if found is not None:
            folder, manifest = found
            version = _exported_version(cat, lake, source, manifest)
            wanted = _exported_episodes(cat, manifest["export_id"])
            if not wanted and manifest["rows"]:
                raise PublishError(f"{source}: export {manifest['export_id']} is not in this lake's catalog "
                                   f"({lake.url}): publish it with the --lake it was exported from")
        else:
            folder, manifest = lake, None
            version = resolve(cat, source, lake)
            wanted = None
    rows = _episode_rows(lake, version.parts.get("episodes", []), wanted)
    s = publish_card.sources(rows, license_rules)
    if s.unlicensed and not allow_unlicensed:
        raise _unlicensed_error(s)
    os.makedirs(out, exist_ok=True)
    _clear(out)
    if manifest is not None:
        splits: dict[str, list] = {}
        for shard in manifest["shards"]:
            splits.setdefault(shard["split"], []).append((folder.path(shard["path"]), manifest["file_type"]))
        configs = [_write_config(f"{manifest['kind']}-{manifest['format']}", splits, folder.fs, out)]
        title, tasks = (f"{manifest['dataset']} {manifest['kind'].upper()} ({manifest['format']})",
                        TASKS[manifest["kind"]])
    else:
        parts = {table: [(lake.absolute(p), "parquet") for p in version.parts.get(table, [])]
                 for table in ("episodes", "steps")}
        configs = [_write_config(table, {"train": files}, lake.fs, out) for table, files in parts.items()]
        title, tasks = f"{version.dataset} trajectories", ["text-generation"]
    for c in configs:
        log(f"  {c.name}: " + ", ".join(f"{split} {sp['rows']:,} rows" for split, sp in c.splits.items()))
    with open(os.path.join(out, "README.md"), "w", encoding="utf-8") as f:
        f.write(publish_card.card(configs, s, manifest, title, tasks))
    record = {"source": source, "dataset": version.dataset, "version": version.version,
              "export_id": manifest["export_id"] if manifest else None, "configs": [c.name for c in configs],
              "splits": {c.name: c.splits for c in configs}, "sources": publish_card.as_json(s)}
    with open(os.path.join(out, RECORD), "wb") as f:
        f.write(orjson.dumps(record, option=orjson.OPT_INDENT_2))
    return Published(out, configs, s, manifest)


def upload(out: str, repo_id: str, token: str, *, private: bool = False, endpoint: str | None = None,
           message: str = "trajforge publish") -> str:
    """Upload the folder `out` to the Hub dataset repository `repo_id` (made when missing) with
    `huggingface_hub`; `endpoint` (else $HF_ENDPOINT, else the Hub) is where the Hub's API answers. Returns the
    commit's URL."""
    try:
        from huggingface_hub import HfApi
    except ImportError as e:
        raise PublishError("uploading needs the `huggingface_hub` package: pip install 'trajforge[publish]'") from e

    api = HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None, token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(repo_id=repo_id, folder_path=out, repo_type="dataset", commit_message=message)
    return str(getattr(info, "commit_url", info))
