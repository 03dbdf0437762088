"""Reading a dataset version and committing a derived one: the I/O every stage after ingest shares.

A stage (validate, dedup, label...) reads the current version's tables, computes with pyarrow/polars, writes
the tables it changes as new parts, and commits a new version that keeps the other tables' parts as they are.
"""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from catalog import Catalog, Version
from pipelines.infra.lake import Lake
from schemas import TABLES


class DatasetError(Exception):
    pass


def parse_ref(ref: str) -> tuple[str, int | None]:
    """"android" -> ("android", None); "android@3" -> ("android", 3)."""
    name, _, version = ref.partition("@")
    if version and not version.isdigit():
        raise DatasetError(f"bad dataset reference {ref!r}: expected NAME or NAME@VERSION")
    return name, int(version) if version else None


def resolve(cat: Catalog, ref: str, lake: Lake | None = None) -> Version:
    """The version `ref` names. With `lake`, also refuse a version written before schema 2 whose `steps`
    still hold labeler branches (no stage may read those as the real line)."""
    name, number = parse_ref(ref)
    version = cat.get_version(name, number) if number else cat.current_version(name)
    if version is None:
        known = [r[0] for r in cat.sql("SELECT name FROM datasets ORDER BY 1").fetchall()]
        what = f"{name} has no version {number}" if number and name in known else f"no dataset {name!r}"
        raise DatasetError(f"{what} (datasets: {', '.join(known) or 'none yet: run a pipeline first'})")
    if lake is not None:
        legacy = legacy_branch_parts(lake, version)
        if legacy:
            raise DatasetError(
                f"{version.dataset} v{version.version}: {len(legacy)} steps part(s) hold simulated steps written "
                f"before schema 2 (e.g. {legacy[0]}); run `pipelines migrate {version.dataset}` to move them "
                "into the branches table")
    return version


def legacy_branch_parts(lake: Lake, version: Version) -> list[str]:
    """The `steps` parts of `version` holding a non-real row (labeler output of schema 1). Reads Parquet
    footers only: min = max = "real" in every row group's `origin` statistics proves a part clean."""
    found = []
    for rel in version.parts.get("steps", []):
        meta = pq.read_metadata(lake.absolute(rel), filesystem=lake.fs)
        if (meta.metadata or {}).get(b"schema_version", b"1") != b"1":
            continue  # schema 2 and later never put a branch in steps
        column = meta.schema.names.index("origin") if "origin" in meta.schema.names else None
        for g in range(meta.num_row_groups if column is not None else 0):
            stats = meta.row_group(g).column(column).statistics
            if stats is None or not stats.has_min_max or stats.min != "real" or stats.max != "real" \
                    or stats.null_count:
                found.append(rel)
                break
    return found


def read_table(lake: Lake, version: Version, table: str, columns: list[str] | None = None) -> pa.Table:
    """All parts of one table of a version, as one Arrow table (empty, with the schema, when it has none)."""
    return read_parts(lake, version.parts.get(table, []), table, columns)


def read_parts(lake: Lake, parts: list[str], table: str, columns: list[str] | None = None) -> pa.Table:
    """The given parts of `table` as one Arrow table (empty, with the schema, when there are none)."""
    paths = [lake.absolute(p) for p in parts]
    if not paths:
        schema = TABLES[table]
        return schema.empty_table().select(columns) if columns else schema.empty_table()
    tables = [pq.read_table(p, columns=columns, filesystem=lake.fs) for p in paths]
    return pa.concat_tables(tables, promote_options="default")


def write_part(lake: Lake, dataset: str, table: str, data: pa.Table, stage: str) -> str:
    """Write a derived part named by a hash of the bytes written, so rewriting the same result is a no-op
    and two different results never share a name. Returns its lake-relative path."""
    data = data.replace_schema_metadata({**(TABLES[table].metadata or {})})
    payload = lake.parquet_bytes(data)
    path = lake.part_path(dataset, table, f"{stage}-{hashlib.sha256(payload).hexdigest()[:24]}")
    if not lake.fs.exists(path):
        lake.write_bytes_atomic(path, payload)
    return lake.relative(path)


def read_branches_of(lake: Lake, parts: list[str], episode_ids: pa.Array, columns: list[str] | None = None
                     ) -> pa.Table:
    """The rows of `branches` parts that belong to the given episodes (a part group's): what a per-group task
    reads instead of the whole table."""
    return read_of_episodes(lake, "branches", parts, episode_ids, columns)


def read_of_episodes(lake: Lake, table: str, parts: list[str], episode_ids: pa.Array,
                     columns: list[str] | None = None) -> pa.Table:
    """The rows of a table's parts (one keyed by `episode_id`: branches, targets) that belong to the given
    episodes."""
    if not parts:
        empty = TABLES[table].empty_table()
        return empty.select(columns) if columns else empty
    wanted = pc.field("episode_id").isin(episode_ids)
    return pa.concat_tables([pq.read_table(lake.absolute(p), columns=columns, filters=wanted, filesystem=lake.fs)
                             for p in parts], promote_options="default")


def part_groups(version: Version, tables: tuple[str, ...] = ("episodes", "steps")) -> list[dict[str, list[str]]] | None:
    """The version's parts of `tables` grouped by file stem, one group per ingest task (or derived group):
    each holds whole episodes with all their steps, so per-episode work can run a group at a time. None when
    the stems do not pair up (a version written before groups existed): then the tables go as one group."""
    by_stem: dict[str, dict[str, list[str]]] = {}
    for table in tables:
        for rel in version.parts.get(table, []):
            stem = rel.rsplit("/", 1)[-1].removesuffix(".parquet")
            by_stem.setdefault(stem, {t: [] for t in tables})[table].append(rel)
    if any(not all(group.values()) for group in by_stem.values()):
        return None
    return [by_stem[stem] for stem in sorted(by_stem)]


def group_stem(group: dict[str, list[str]]) -> str:
    """A group's name: the file stem its parts share."""
    return group["episodes"][0].rsplit("/", 1)[-1].removesuffix(".parquet") if group["episodes"] else "empty"


def group_sizes(lake: Lake, groups: list[dict[str, list[str]]]) -> list[int]:
    """Bytes of each group's parts (what the executor's cost model weighs)."""
    return [sum(lake.fs.size(lake.absolute(p)) for paths in g.values() for p in paths) for g in groups]


def write_group(lake: Lake, dataset: str, data: dict[str, pa.Table], stage: str) -> dict[str, str]:
    """Write the tables of one group as parts sharing one stem (a hash of all their bytes), so the group
    stays a group in the next version. Returns {table: lake-relative path}."""
    payloads = {table: lake.parquet_bytes(t.replace_schema_metadata({**(TABLES[table].metadata or {})}))
                for table, t in data.items()}
    digest = hashlib.sha256()
    for table in sorted(payloads):
        digest.update(table.encode() + hashlib.sha256(payloads[table]).digest())
    stem = f"{stage}-{digest.hexdigest()[:24]}"
    out = {}
    for table, payload in payloads.items():
        path = lake.part_path(dataset, table, stem)
        if not lake.fs.exists(path):
            lake.write_bytes_atomic(path, payload)
        out[table] = lake.relative(path)
    return out


def commit(lake: Lake, cat: Catalog, version: Version, run_id: str, replaced: dict[str, list[str]],
           note: str) -> tuple[int, bool]:
    """New version = `version` with the parts of the tables in `replaced` swapped for the given ones."""
    parts = {**version.parts, **replaced}
    counts = {}
    for table, column in (("episodes", "episodes"), ("steps", "steps"), ("quarantine", "quarantined")):
        counts[column] = sum(pq.read_metadata(lake.absolute(p), filesystem=lake.fs).num_rows for p in parts.get(table, []))
    return cat.commit_version(version.dataset, run_id, parts, note=note, **counts)
