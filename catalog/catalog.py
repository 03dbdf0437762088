"""The DuckDB catalog: runs, datasets and their versions, per-stage counts, and views over the Parquet parts
of each dataset's current version. Only the driver process opens it for writing.

A dataset version is a list of Parquet parts per table (paths relative to the lake); versions are immutable
and parts are shared between versions, so a new version costs only the parts that changed.
"""

from __future__ import annotations

import datetime as dt
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import duckdb
import orjson
import pyarrow as pa

from catalog.object_store import attach as attach_lake_storage
from schemas import TABLES

VIEW_TABLES = ("episodes", "steps", "branches", "quarantine", "blobs", "targets")
STORAGE_COMPATIBILITY = "v1.4.0"

# An export's lineage (pipelines/stages/export/shards.py): every output row's step ids, one Parquet file per export
# under the lake's EXPORT_ROWS_DIR, read by the `export_rows` view. Inserted into a catalog table instead, the
# rows were held in DuckDB's memory until written (~0.35 KB a row: +184 MB at the end of an SFT export of
# 10 GB of input). With a data recipe (transforms/export/recipe.py) a row also has its system-prompt variant,
# its turns without loss (CPT masking) and the dropped turns it names (those since the line's previous record;
# the line's last record also those after it); the dropped turns of lines with no record are named by run-level
# rows with no shard and no step ids (one per 65,536 turns, the last holding the rest). Null without a recipe.
# A line (a trajectory) a recipe's trajectory filter dropped is a row of its own: no shard, no row, no step ids;
# its `episode_id`, `line` ("main" or the branch's step id), the filter (`dropped_by`, one of the manifest's
# `trajectories_dropped`) and its own turns in `dropped_step_ids`; those three are null on every other row (and
# in the files of exports written before them).
EXPORT_ROWS_DIR = "export_rows"
EXPORT_ROWS = pa.schema([("export_id", pa.string()), ("shard", pa.string()), ("row", pa.int64()),
                         ("step_ids", pa.list_(pa.string())), ("prompt_variant", pa.string()),
                         ("masked_step_ids", pa.list_(pa.string())), ("dropped_step_ids", pa.list_(pa.string())),
                         ("episode_id", pa.string()), ("line", pa.string()), ("dropped_by", pa.string())])

# Every catalog table, created when the catalog opens for writing, so a fresh lake has all of them. A
# table's columns are documented where its stage writes it (named in the comment).
DDL = """
CREATE TABLE IF NOT EXISTS catalog_meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, pipeline VARCHAR, dataset VARCHAR, status VARCHAR,
    started_at TIMESTAMPTZ, ended_at TIMESTAMPTZ, seconds DOUBLE, config JSON, inputs JSON,
    version INTEGER, bytes_in BIGINT, units_in BIGINT, files_ignored BIGINT,
    tasks_total INTEGER, tasks_skipped INTEGER, tasks_failed INTEGER,
    episodes BIGINT, steps BIGINT, quarantined BIGINT, error VARCHAR);
CREATE TABLE IF NOT EXISTS datasets (name VARCHAR PRIMARY KEY, current_version INTEGER, updated_at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS versions (
    dataset VARCHAR, version INTEGER, run_id VARCHAR, created_at TIMESTAMPTZ, parent_version INTEGER,
    parts JSON, episodes BIGINT, steps BIGINT, quarantined BIGINT, note VARCHAR,
    PRIMARY KEY (dataset, version));
CREATE TABLE IF NOT EXISTS stage_stats (
    run_id VARCHAR, stage VARCHAR, records_in BIGINT, records_out BIGINT, quarantined BIGINT, seconds DOUBLE);
-- input files an ingest run did not read: no format claims them (all of `formats` declined), or skipped
CREATE TABLE IF NOT EXISTS ignored_inputs (
    run_id VARCHAR, dataset VARCHAR, path VARCHAR, size BIGINT, reason VARCHAR, formats VARCHAR);
-- incremental ingest (pipelines/infra/runner.py): the input units each ingest added to a dataset, so the next
-- ingest reads only new ones; `replaces` marks an ingest that started the dataset over (`--replace`)
CREATE TABLE IF NOT EXISTS ingests (dataset VARCHAR, version INTEGER, run_id VARCHAR, replaces BOOLEAN);
CREATE TABLE IF NOT EXISTS ingested_units (
    dataset VARCHAR, version INTEGER, format VARCHAR, uri VARCHAR, fingerprint VARCHAR);
-- validate (pipelines/stages/validate.py); validated_groups: part groups (by stem) and branches parts (by path)
-- found clean under a rules+options digest, which a later validate does not check again
CREATE TABLE IF NOT EXISTS validated_groups (dataset VARCHAR, digest VARCHAR, stem VARCHAR, run_id VARCHAR);
CREATE TABLE IF NOT EXISTS validation_findings (
    run_id VARCHAR, dataset VARCHAR, version INTEGER, rule VARCHAR, severity VARCHAR, findings BIGINT,
    episodes BIGINT, example_record VARCHAR, example_reason VARCHAR);
CREATE TABLE IF NOT EXISTS validation_results (
    run_id VARCHAR, dataset VARCHAR, version INTEGER, suite VARCHAR, expectation VARCHAR, success BOOLEAN,
    observed_value VARCHAR, rows BIGINT, sampled BOOLEAN);
-- dedup and scrub (pipelines/stages/dedup.py)
CREATE TABLE IF NOT EXISTS dedup_clusters (
    run_id VARCHAR, dataset VARCHAR, cluster_id VARCHAR, episode_id VARCHAR, representative VARCHAR,
    similarity DOUBLE, kind VARCHAR);
CREATE TABLE IF NOT EXISTS dedup_no_change (
    run_id VARCHAR, dataset VARCHAR, step_id VARCHAR, episode_id VARCHAR, step_index INTEGER,
    next_step_id VARCHAR);
CREATE TABLE IF NOT EXISTS scrub_audit (
    run_id VARCHAR, dataset VARCHAR, table_name VARCHAR, record_id VARCHAR, field VARCHAR, kind VARCHAR,
    count INTEGER);
-- exports (pipelines/stages/export/, pipelines/stages/export_atif.py)
CREATE TABLE IF NOT EXISTS exports (
    export_id VARCHAR PRIMARY KEY, kind VARCHAR, format VARCHAR, dataset VARCHAR, version INTEGER,
    out VARCHAR, created_at TIMESTAMPTZ, rows BIGINT, manifest JSON);
-- the export's lineage file (EXPORT_ROWS), relative to the lake: the `export_rows` view reads them all
ALTER TABLE exports ADD COLUMN IF NOT EXISTS lineage VARCHAR;
-- the labeler's request ledger (pipelines/stages/label_ledger.py)
CREATE TABLE IF NOT EXISTS label_ledger (
    request_key VARCHAR PRIMARY KEY, model VARCHAR, template_hash VARCHAR, input_hash VARCHAR, sampling JSON,
    domain VARCHAR, parent_step_id VARCHAR, strategy VARCHAR, branch_id VARCHAR, status VARCHAR,
    observation VARCHAR, output VARCHAR, finish_reason VARCHAR, tokens_in INTEGER, tokens_out INTEGER,
    latency_s DOUBLE, attempts INTEGER, error VARCHAR, run_id VARCHAR, created_at TIMESTAMPTZ);
-- `pipelines label --mode sample` (pipelines/stages/sample.py): every rollout of rejection sampling with its
-- judge's scores (0 when unusable or not judged) and whether it became its transition's target
CREATE TABLE IF NOT EXISTS sampled_rollouts (
    request_key VARCHAR, judge_model VARCHAR, step_id VARCHAR, domain VARCHAR, rollout INTEGER, model VARCHAR,
    status VARCHAR, judge_key VARCHAR, score DOUBLE, format INTEGER, factuality INTEGER, consistency INTEGER,
    realism INTEGER, quality INTEGER, error VARCHAR, chosen BOOLEAN, kept BOOLEAN, min_score DOUBLE,
    target_id VARCHAR, run_id VARCHAR, created_at TIMESTAMPTZ, PRIMARY KEY (step_id, request_key, judge_model));
-- `pipelines eval` (pipelines/stages/eval.py): every world-model and judge request (a ledger like the
-- labeler's), one row per evaluation, per sample, and per domain x dimension of its table
CREATE TABLE IF NOT EXISTS eval_requests (
    request_key VARCHAR PRIMARY KEY, kind VARCHAR, model VARCHAR, sampling JSON, domain VARCHAR,
    sample_key VARCHAR, attempt INTEGER, status VARCHAR, output VARCHAR, finish_reason VARCHAR,
    tokens_in INTEGER, tokens_out INTEGER, latency_s DOUBLE, attempts INTEGER, error VARCHAR, run_id VARCHAR,
    created_at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS evals (
    eval_id VARCHAR PRIMARY KEY, source VARCHAR, dataset VARCHAR, version INTEGER, split VARCHAR,
    model VARCHAR, judge_model VARCHAR, samples BIGINT, valid BIGINT, failed BIGINT, overall DOUBLE,
    config JSON, run_id VARCHAR, created_at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS eval_samples (
    eval_id VARCHAR, sample_key VARCHAR, domain VARCHAR, source_id VARCHAR, turn_idx INTEGER,
    infer_key VARCHAR, judge_key VARCHAR, prediction VARCHAR, ground_truth VARCHAR, failed BOOLEAN,
    error VARCHAR, format INTEGER, factuality INTEGER, consistency INTEGER, realism INTEGER, quality INTEGER,
    total_score DOUBLE, rule_score DOUBLE, strengths JSON, weaknesses JSON, run_id VARCHAR);
CREATE TABLE IF NOT EXISTS eval_scores (
    eval_id VARCHAR, domain VARCHAR, dimension VARCHAR, score DOUBLE, samples BIGINT, valid BIGINT,
    failed BIGINT);
"""


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


@dataclass
class Version:
    dataset: str
    version: int
    parts: dict[str, list[str]]  # table -> part paths relative to the lake


class Catalog:
    def __init__(self, path: str, lake_root: str, read_only: bool = False, prepared: bool = False):
        """`lake_root` is where relative part paths resolve (an absolute local path or a URL). `prepared`: this
        process made the file's tables and views this run, holding the lake's lock since (a run's second
        connection): only the lake's storage is attached again."""
        self.path, self.lake_root = path, lake_root.rstrip("/")
        if not read_only:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        # Written in a storage format the DuckDB CLI (`duckdb lake/catalog.duckdb`) also reads. A run's connection
        # (its records, the stages' lookups in the catalog's own tables) works on one thread: DuckDB's pool of a
        # thread a core cost a run ~10 ms more CPU; read-only connections answer users' queries over the lake's
        # views with every core.
        config = {} if read_only else {"storage_compatibility_version": STORAGE_COMPATIBILITY, "threads": 1}
        self.con = duckdb.connect(path, read_only=read_only, config=config)
        try:
            if prepared and not read_only:
                self.storage = attach_lake_storage(self.con, self.lake_root)
            else:
                self._prepare(read_only)
        except BaseException:  # a part the views name is gone, a bad S3 setting: the file is not left open
            self.con.close()
            raise

    def _prepare(self, read_only: bool) -> None:
        # parts on an object store: httpfs with the lake's S3 settings, else the lake's fsspec filesystem
        self.storage = attach_lake_storage(self.con, self.lake_root)
        if not read_only:
            with self.transaction():  # one commit for every table: one each cost a fresh catalog ~80 ms of wall time
                self.con.execute(DDL)
            if self._table_type("export_rows") == "BASE TABLE":
                self._move_export_rows_to_files()
            # a fresh catalog answers queries on its views before any dataset exists; a moved lake's views
            # are bound to its new place (they name every part by its absolute path)
            if views_root(self.con) != self.lake_root or self._table_type("steps") != "VIEW" \
                    or self._table_type("export_rows") != "VIEW":
                self.refresh_views()
                self.refresh_export_rows()
                self.con.execute("INSERT OR REPLACE INTO catalog_meta VALUES ('views_root', ?)", [self.lake_root])
        else:
            bind_moved_views(self.con, self.lake_root)

    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # runs -------------------------------------------------------------------------------------------
    def start_run(self, run_id: str, pipeline: str, dataset: str, config: dict, inputs: list[str]) -> None:
        self.con.execute(
            "INSERT INTO runs (run_id, pipeline, dataset, status, started_at, config, inputs) "
            "VALUES (?, ?, ?, 'running', ?, ?, ?)",
            [run_id, pipeline, dataset, now(), orjson.dumps(config).decode(), orjson.dumps(inputs).decode()])

    def mark_dead_runs(self) -> int:
        """Runs still `running` when no run holds the lake's lock died (killed, crashed host): say so."""
        rows = self.con.execute("UPDATE runs SET status = 'died', error = coalesce(error, "
                                "'the process ended without finishing the run (killed or crashed)') "
                                "WHERE status = 'running' RETURNING run_id").fetchall()
        return len(rows)

    def finish_run(self, run_id: str, status: str, **fields) -> None:
        ended = now()
        fields = {"status": status, "ended_at": ended, **fields}
        sets = ", ".join(f"{k} = ?" for k in fields)
        # the right-hand side of an UPDATE sees the row as it was: compute the duration from the new end time
        self.con.execute(f"UPDATE runs SET {sets}, seconds = epoch(?::TIMESTAMPTZ) - epoch(started_at) "
                         "WHERE run_id = ?", [*fields.values(), ended, run_id])

    def add_stage_stats(self, run_id: str, stage: str, records_in: int, records_out: int, quarantined: int,
                        seconds: float) -> None:
        self.con.execute("INSERT INTO stage_stats VALUES (?, ?, ?, ?, ?, ?)",
                         [run_id, stage, records_in, records_out, quarantined, seconds])

    # versions ---------------------------------------------------------------------------------------
    def _first(self, query: str, params: list):
        # fetchall, not fetchone: a half-read result keeps the connection busy for the next query
        rows = self.con.execute(query, params).fetchall()
        return rows[0] if rows else None

    def current_version(self, dataset: str) -> Version | None:
        row = self._first(
            "SELECT v.version, v.parts FROM datasets d JOIN versions v "
            "ON v.dataset = d.name AND v.version = d.current_version WHERE d.name = ?", [dataset])
        return Version(dataset, row[0], orjson.loads(row[1])) if row else None

    def get_version(self, dataset: str, version: int) -> Version | None:
        row = self._first("SELECT parts FROM versions WHERE dataset = ? AND version = ?", [dataset, version])
        return Version(dataset, version, orjson.loads(row[0])) if row else None

    def commit_version(self, dataset: str, run_id: str, parts: dict[str, list[str]], *, episodes: int,
                       steps: int, quarantined: int, note: str = "", keep_descendants: bool = False,
                       ingest: tuple[bool, list[tuple[str, str, str]]] | None = None) -> tuple[int, bool]:
        """Make `parts` the dataset's current version. Returns (version, created); an identical part list
        keeps the current version (a rerun on the same input changes nothing). With `keep_descendants` (an
        ingest), parts that an earlier version already had keep the current version too when it was made
        from that one by later stages: rerunning an ingest does not undo validate or dedup. An ingest passes
        `ingest` = (replaces, [(format, uri, fingerprint) of the units it added]), recorded with the version
        in one transaction."""
        parts = {table: sorted(set(paths)) for table, paths in sorted(parts.items()) if paths}
        current = self.current_version(dataset)
        if current and current.parts == parts:
            return current.version, False
        if current and keep_descendants:
            earlier = [r[0] for r in self.con.execute(
                "SELECT version FROM versions WHERE dataset = ? AND parts = ?::JSON ORDER BY version DESC",
                [dataset, orjson.dumps(parts).decode()]).fetchall()]
            if earlier and self.descends_from(dataset, current.version, earlier[0]):
                return current.version, False
        version = (current.version if current else 0) + 1
        self.con.execute("BEGIN")
        self.con.execute("INSERT INTO versions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         [dataset, version, run_id, now(), current.version if current else None,
                          orjson.dumps(parts).decode(), episodes, steps, quarantined, note])
        self.con.execute("INSERT OR REPLACE INTO datasets VALUES (?, ?, ?)", [dataset, version, now()])
        if ingest is not None:
            replaces, units = ingest
            self.con.execute("INSERT INTO ingests VALUES (?, ?, ?, ?)", [dataset, version, run_id, replaces])
            if units:
                self.insert_rows("ingested_units", {
                    "dataset": pa.array([dataset] * len(units), pa.string()),
                    "version": pa.array([version] * len(units), pa.int32()),
                    **{k: pa.array([u[i] for u in units], pa.string())
                       for i, k in enumerate(("format", "uri", "fingerprint"))}})
        self.con.execute("COMMIT")
        self.refresh_views()
        return version, True

    def insert_rows(self, table: str, columns: dict[str, pa.Array]) -> None:
        """Insert rows given as columns (in the table's column order) through one Arrow table: `executemany`
        inserts parameter rows one by one (~0.2 ms each: a second per 5,000 units ingested, minutes at a million)."""
        name = f"{table}_rows"
        self.con.register(name, pa.table(columns))
        try:
            self.con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM {name}")
        finally:
            self.con.unregister(name)

    def ingested_units(self, dataset: str, version: int) -> dict[tuple[str, str], tuple[str, int]] | None:
        """(format, uri) -> (fingerprint, version that added it) for every input unit in `version`: the units
        of the ingests in its ancestry, back to the last one that started the dataset over. None when no
        ingest of its ancestry was recorded (versions made before incremental ingest)."""
        lineage = self.lineage(dataset, version)
        ingests = dict(self.con.execute(
            f"SELECT version, replaces FROM ingests WHERE dataset = ? AND version IN ({','.join('?' * len(lineage))})",
            [dataset, *lineage]).fetchall())
        chain = []
        for v in lineage:  # newest first
            if v in ingests:
                chain.append(v)
                if ingests[v]:
                    break
        if not chain:
            return None
        rows = self.con.execute(
            f"SELECT format, uri, fingerprint, version FROM ingested_units WHERE dataset = ? "
            f"AND version IN ({','.join('?' * len(chain))}) ORDER BY version", [dataset, *chain]).fetchall()
        return {(f, uri): (fp, v) for f, uri, fp, v in rows}

    def lineage(self, dataset: str, version: int) -> list[int]:
        """`version` and its ancestors, newest first."""
        out, v = [], version
        while v is not None:
            out.append(v)
            row = self._first("SELECT parent_version FROM versions WHERE dataset = ? AND version = ?", [dataset, v])
            v = row[0] if row else None
        return out

    def descends_from(self, dataset: str, version: int, ancestor: int) -> bool:
        return ancestor in self.lineage(dataset, version)

    def refresh_views(self) -> None:
        """(Re)create one view per table over the current version of every dataset, in one transaction (one
        commit, not one a view: each commit waits for the disk, ~15 ms of a run's wall time)."""
        with self.transaction():
            bind_views(self.con, self.lake_root)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The block's statements committed together, or none of them when it raises."""
        self.con.execute("BEGIN")
        try:
            yield
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def sql(self, query: str):
        return self.con.sql(query)

    def _table_type(self, name: str) -> str | None:
        row = self._first("SELECT table_type FROM information_schema.tables WHERE table_name = ?", [name])
        return row[0] if row else None

    # exports ----------------------------------------------------------------------------------------
    def add_export(self, row: dict, lineage: str) -> None:
        """`row`: the export's `exports` columns; `lineage`: its EXPORT_ROWS file, relative to the lake and
        written already. An earlier export with the same id is replaced."""
        self.con.execute("BEGIN")
        self.con.execute("DELETE FROM exports WHERE export_id = ?", [row["export_id"]])
        self.con.execute(f"INSERT INTO exports ({', '.join(row)}, lineage) VALUES ({', '.join('?' * len(row))}, ?)",
                         [*row.values(), lineage])
        self.con.execute("COMMIT")
        self.refresh_export_rows()

    def refresh_export_rows(self) -> None:
        """(Re)create the `export_rows` view over every export's lineage file: when an export is recorded, not
        with the datasets' views (binding the view reads every file's footer: on an object store a request
        each, on every version committed)."""
        bind_export_rows(self.con, self.lake_root)

    def _move_export_rows_to_files(self) -> None:
        """A catalog written before the lineage files kept `export_rows` as a table: each export's rows go to
        its file in the lake, then the table is dropped (the view takes its name)."""
        import fsspec
        import pyarrow.parquet as pq

        fs, root = fsspec.core.url_to_fs(self.lake_root)
        for column, kind in (("prompt_variant", "VARCHAR"), ("masked_step_ids", "VARCHAR[]"),
                             ("dropped_step_ids", "VARCHAR[]"), ("episode_id", "VARCHAR"), ("line", "VARCHAR"),
                             ("dropped_by", "VARCHAR")):  # tables older than the recipe columns
            self.con.execute(f"ALTER TABLE export_rows ADD COLUMN IF NOT EXISTS {column} {kind}")
        ids = [r[0] for r in self.con.execute("SELECT DISTINCT export_id FROM export_rows ORDER BY 1").fetchall()]
        fs.makedirs(f"{root.rstrip('/')}/{EXPORT_ROWS_DIR}", exist_ok=True)
        for export_id in ids:
            rel = export_rows_path(export_id)
            table = self.con.execute(f'SELECT {_export_rows_columns()} FROM export_rows '
                                     'WHERE export_id IS NOT DISTINCT FROM ? ORDER BY shard, "row"',
                                     [export_id]).to_arrow_table().cast(EXPORT_ROWS)
            with fs.open(f"{root.rstrip('/')}/{rel}", "wb") as f:
                pq.write_table(table, f, compression="zstd")
            self.con.execute("UPDATE exports SET lineage = ? WHERE export_id IS NOT DISTINCT FROM ?", [rel, export_id])
        self.con.execute("DROP TABLE export_rows")


def views_root(con: duckdb.DuckDBPyConnection) -> str | None:
    """The lake root the catalog's views were bound to (None: a catalog from before it was recorded)."""
    try:
        rows = con.execute("SELECT value FROM catalog_meta WHERE key = 'views_root'").fetchall()
    except duckdb.CatalogException:
        return None
    return rows[0][0] if rows else None


def bind_moved_views(con: duckdb.DuckDBPyConnection, lake_root: str) -> bool:
    """On a read-only connection to the catalog of a lake that was moved or copied (its views name the parts
    where they were written): temporary views of the same names over the parts where the lake is now, which
    shadow the stored ones for this connection. Whether it did."""
    bound = views_root(con)
    if bound is None or bound == lake_root.rstrip("/"):
        return False
    bind_views(con, lake_root, temporary=True)
    bind_export_rows(con, lake_root, temporary=True)
    return True


def bind_views(con: duckdb.DuckDBPyConnection, lake_root: str, temporary: bool = False) -> None:
    """One view per table over the current version of every dataset, with absolute paths so the catalog
    works from any working directory (the DuckDB command line's too)."""
    lake_root = lake_root.rstrip("/")
    currents = con.execute(
        "SELECT v.dataset, v.parts FROM datasets d JOIN versions v "
        "ON v.dataset = d.name AND v.version = d.current_version ORDER BY 1").fetchall()
    for table in VIEW_TABLES:
        selects = []
        for dataset, parts_json in currents:
            paths = orjson.loads(parts_json).get(table) or []
            if paths:
                files = ", ".join(_sql_str(f"{lake_root}/{p}") for p in paths)
                # by name: a version may share parts written before a column was added (read as null)
                selects.append(f"SELECT {_sql_str(dataset)} AS dataset, * FROM read_parquet([{files}], "
                               "union_by_name = true)")
        if not selects:
            columns = ", ".join(f"NULL::{_duck_type(f.type)} AS {f.name}" for f in TABLES[table])
            selects = [f"SELECT NULL::VARCHAR AS dataset, {columns} WHERE false"]
        con.execute(f"CREATE OR REPLACE {'TEMP ' if temporary else ''}VIEW {table} AS "
                    + " UNION ALL BY NAME ".join(selects))


def bind_export_rows(con: duckdb.DuckDBPyConnection, lake_root: str, temporary: bool = False) -> None:
    """The `export_rows` view over every export's lineage file; a file removed by hand is left out."""
    lake_root = lake_root.rstrip("/")
    files = [f"{lake_root}/{r[0]}" for r in con.execute(
        "SELECT lineage FROM exports WHERE lineage IS NOT NULL ORDER BY export_id").fetchall()]
    try:
        con.execute(_export_rows_view(files, temporary))
    except duckdb.IOException:
        import fsspec

        fs = fsspec.core.url_to_fs(lake_root)[0]
        con.execute(_export_rows_view([f for f in files if fs.exists(f)], temporary))


def _export_rows_view(files: list[str], temporary: bool = False) -> str:
    create = f"CREATE OR REPLACE {'TEMP ' if temporary else ''}VIEW export_rows AS SELECT "
    empty = ", ".join(f"NULL::{_duck_type(f.type)} AS {_sql_name(f.name)}" for f in EXPORT_ROWS) + " WHERE false"
    if not files:
        return create + empty
    # by name, under an empty row of every column: the files of older exports lack the newer columns (null)
    return (create + f"{_export_rows_columns()} FROM (SELECT {empty} UNION ALL BY NAME SELECT * "
            f"FROM read_parquet([{', '.join(map(_sql_str, files))}], union_by_name = true))")


def _export_rows_columns() -> str:
    return ", ".join(_sql_name(f.name) for f in EXPORT_ROWS)


def export_rows_path(export_id: str | None) -> str:
    """An export's lineage file, relative to the lake (export ids are hex digests)."""
    return f"{EXPORT_ROWS_DIR}/{export_id}.parquet"


def _sql_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _duck_type(arrow_type) -> str:
    if pa.types.is_struct(arrow_type):
        return "STRUCT(" + ", ".join(f"{f.name} {_duck_type(f.type)}" for f in arrow_type) + ")"
    if pa.types.is_list(arrow_type):
        return _duck_type(arrow_type.value_type) + "[]"
    if pa.types.is_timestamp(arrow_type):
        return "TIMESTAMPTZ"
    return {pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.float64(): "DOUBLE",
            pa.bool_(): "BOOLEAN"}[arrow_type]
