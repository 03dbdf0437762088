"""The DuckDB catalog: runs, datasets and their versions, per-stage counts, and views over the Parquet parts
of each dataset's current version. Only the driver process opens it for writing.

A dataset version is a list of Parquet parts per table (paths relative to the lake); versions are immutable
and parts are shared between versions, so a new version costs only the parts that changed.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass

import duckdb
import orjson
import pyarrow as pa

from schemas import TABLES

VIEW_TABLES = ("episodes", "steps", "branches", "quarantine", "blobs")
STORAGE_COMPATIBILITY = "v1.4.0"

DDL = """
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
"""


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


@dataclass
class Version:
    dataset: str
    version: int
    parts: dict[str, list[str]]  # table -> part paths relative to the lake


class Catalog:
    def __init__(self, path: str, lake_root: str, read_only: bool = False):
        """`lake_root` is where relative part paths resolve (an absolute local path or a URL)."""
        self.path, self.lake_root = path, lake_root.rstrip("/")
        if not read_only:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        # Written in a storage format the DuckDB CLI (`duckdb lake/catalog.duckdb`) also reads.
        config = {} if read_only else {"storage_compatibility_version": STORAGE_COMPATIBILITY}
        self.con = duckdb.connect(path, read_only=read_only, config=config)
        if not read_only:
            self.con.execute(DDL)

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

    def finish_run(self, run_id: str, status: str, **fields) -> None:
        fields = {"status": status, "ended_at": now(), **fields}
        sets = ", ".join(f"{k} = ?" for k in fields)
        self.con.execute(f"UPDATE runs SET {sets}, seconds = epoch(ended_at) - epoch(started_at) "
                         "WHERE run_id = ?", [*fields.values(), run_id])

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
                       steps: int, quarantined: int, note: str = "") -> tuple[int, bool]:
        """Make `parts` the dataset's current version. Returns (version, created); an identical part list
        keeps the current version (a rerun on the same input changes nothing)."""
        parts = {table: sorted(paths) for table, paths in sorted(parts.items()) if paths}
        current = self.current_version(dataset)
        if current and current.parts == parts:
            return current.version, False
        version = (current.version if current else 0) + 1
        self.con.execute("BEGIN")
        self.con.execute("INSERT INTO versions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         [dataset, version, run_id, now(), current.version if current else None,
                          orjson.dumps(parts).decode(), episodes, steps, quarantined, note])
        self.con.execute("INSERT OR REPLACE INTO datasets VALUES (?, ?, ?)", [dataset, version, now()])
        self.con.execute("COMMIT")
        self.refresh_views()
        return version, True

    def refresh_views(self) -> None:
        """(Re)create one view per table over the current version of every dataset, with absolute paths so
        the catalog works from any working directory."""
        currents = self.con.execute(
            "SELECT v.dataset, v.parts FROM datasets d JOIN versions v "
            "ON v.dataset = d.name AND v.version = d.current_version ORDER BY 1").fetchall()
        for table in VIEW_TABLES:
            selects = []
            for dataset, parts_json in currents:
                paths = orjson.loads(parts_json).get(table) or []
                if paths:
                    files = ", ".join(_sql_str(f"{self.lake_root}/{p}") for p in paths)
                    selects.append(f"SELECT {_sql_str(dataset)} AS dataset, * FROM read_parquet([{files}])")
            if not selects:
                columns = ", ".join(f"NULL::{_duck_type(f.type)} AS {f.name}" for f in TABLES[table])
                selects = [f"SELECT NULL::VARCHAR AS dataset, {columns} WHERE false"]
            self.con.execute(f"CREATE OR REPLACE VIEW {table} AS " + " UNION ALL BY NAME ".join(selects))

    def sql(self, query: str):
        return self.con.sql(query)


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
