"""Read-only access to the catalog, one short connection per request.

DuckDB lets one process write a database file; a read-only connection that another process keeps open holds
a shared lock that keeps the writer (`pipelines run`, `validate`, ...) out. So the view never holds the
file between requests: it opens it read-only, answers, and closes it (~30 ms here). While a writer holds
the file, opening fails: wait a little, then report the catalog as busy.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import duckdb

from catalog.catalog import bind_moved_views
from pipelines.infra.lake import Lake

BUSY_WAIT_S = 2.0
_REGISTER = threading.Lock()  # connections to one file share a database: register its filesystem once


class CatalogBusy(Exception):
    """A writer holds the catalog file."""


@dataclass(frozen=True)
class Source:
    lake: Lake
    catalog_path: str

    @property
    def root(self) -> str:
        """Where the catalog's part paths resolve (as the writers' `open_catalog` sets it)."""
        return self.lake.root if self.lake.is_local else self.lake.url

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        con = _open_read_only(self.catalog_path)
        try:
            if not self.lake.is_local:  # views point at the object store: read it through the lake's fsspec
                _register(con, self.lake.fs)
            bind_moved_views(con, self.root)  # a lake moved or copied since it was written
            yield con
        finally:
            con.close()


def _open_read_only(path: str) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + BUSY_WAIT_S
    while True:
        try:
            return duckdb.connect(path, read_only=True)
        except (duckdb.IOException, duckdb.ConnectionException) as e:
            # another process writes (a file lock), or this process holds a writing connection
            busy = "lock" in str(e).lower() or "different configuration" in str(e).lower()
            if not busy:
                raise
            if time.monotonic() > deadline:
                raise CatalogBusy(str(e).splitlines()[0]) from e
            time.sleep(0.1)


def _register(con: duckdb.DuckDBPyConnection, fs) -> None:
    with _REGISTER:
        protocols = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
        if not set(protocols) & set(con.list_filesystems()):
            try:
                con.register_filesystem(fs)
            except duckdb.InvalidInputException as e:  # registered under another name of the same protocol
                if "already been registered" not in str(e):
                    raise


def tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Tables and views in the catalog: a catalog written by an older version may lack some."""
    return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]
