"""Runs: their ids, the catalog they write to, the lake's lock, and the one recorder every command uses.

`recorded_run` takes the lake's lock before it writes anything (one run at a time per catalog: a second run
fails at once with a message naming the run that holds it), marks runs left `running` by a process that
died as `died`, writes the `runs` row, and finishes it exactly once: `success` (or the status the run set)
with its counts when the block ends, `failed` with the error when it raises. Stage numbers go to
`stage_stats` through `Run.stage`. A run keeps one catalog connection for its bookkeeping (`open_catalog` lends
it to every stage step of the run: each opening cost ~50 ms of DDL, view checks and a checkpoint on close)
and closes it before long work (`release_catalog`, called by the executor before it runs a stage's items and
by the labeler between its ledger writes), so `pipelines sql` in another process works while a run works:
DuckDB lets no other process open a file a process holds open for writing. The lock is an `flock` on `<catalog>.lock`: the kernel releases it when
the process ends, however it ends, so a killed run never leaves the lake locked.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

from catalog import Catalog
from pipelines.infra.lake import Lake


def new_run_id() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + secrets.token_hex(3)


def catalog_path(lake: Lake, explicit: str | None = None) -> str:
    if explicit:
        return explicit
    if not lake.is_local:
        raise ValueError(f"lake {lake.url} is not local: give --catalog PATH for the DuckDB file")
    return os.path.join(lake.root, "catalog.duckdb")


class _Held:
    """The connection a run of this process keeps for one catalog (None until a step opens it, or after it is
    released), and how many steps' `with` blocks have it now (it is not closed under them)."""

    def __init__(self):
        self.cat: Catalog | None = None
        self.lent = 0
        self.prepared = False  # a connection of this run made the tables and views (no other writer since: the lock)

    def close(self) -> None:
        if self.cat is not None:
            cat, self.cat = self.cat, None
            cat.close()


# catalog path -> what a run of this process keeps of it; a path is here only while the run holds the lake's lock
_HELD: dict[str, _Held] = {}


class _Lent:
    """The run's connection lent to one step: `with` gives the Catalog and leaves it open."""

    def __init__(self, held: _Held):
        self.held = held

    def __getattr__(self, name):
        return getattr(self.held.cat, name)

    def __enter__(self) -> Catalog:
        self.held.lent += 1
        return self.held.cat

    def __exit__(self, kind, *exc) -> None:
        self.held.lent -= 1
        if kind is not None and not self.held.lent:  # a failed step may leave a transaction open: closed, as
            self.held.close()  # its own connection was

    def close(self) -> None:
        pass


def open_catalog(lake: Lake, explicit: str | None = None, read_only: bool = False) -> Catalog:
    """The catalog, as a context manager. Inside a run of this process, the run's one connection (opened for
    writing on first use; it serves read-only steps too), kept open when the block ends."""
    root = lake.root if lake.is_local else lake.url
    path = catalog_path(lake, explicit)
    held = _HELD.get(path)
    if held is None:
        return Catalog(path, root, read_only=read_only)
    if held.cat is None:  # opened again after a release: the tables and views are as this run left them
        held.cat = Catalog(path, root, prepared=held.prepared)
        held.prepared = True
    return _Lent(held)  # type: ignore[return-value]


def release_catalog() -> None:
    """Close the connections runs of this process keep (the next step opens one again): before long work. One
    a step's `with` block has now stays open (the step uses it after its long work, as it used its own)."""
    for held in _HELD.values():
        if not held.lent:
            held.close()


@contextmanager
def _holding(path: str) -> Iterator[None]:
    _HELD[path] = _Held()
    try:
        yield
    finally:
        _HELD.pop(path).close()


@dataclass
class Run:
    run_id: str
    lake: Lake
    catalog: str | None
    status: str = "success"  # what the row says when the block ends without raising
    error: str | None = None
    fields: dict = field(default_factory=dict)  # `runs` columns to set at the end (version, steps, ...)

    def stage(self, name: str, records_in: int, records_out: int, quarantined: int, seconds: float) -> None:
        with open_catalog(self.lake, self.catalog) as cat:
            cat.add_stage_stats(self.run_id, name, records_in, records_out, quarantined, seconds)

    def fail(self, error: str) -> None:
        self.status, self.error = "failed", error


class LakeBusy(RuntimeError):
    pass


@contextmanager
def lake_lock(lake: Lake, catalog: str | None, run_id: str) -> Iterator[None]:
    """Hold the lake's lock for the block; LakeBusy at once when another run holds it."""
    import fcntl
    import json

    path = catalog_path(lake, catalog) + ".lock"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "{}"
            try:
                who = json.loads(holder)
            except ValueError:
                who = {}
            raise LakeBusy(f"the lake {lake.url} is in use by run {who.get('run_id', '?')} (pid {who.get('pid', '?')}, "
                           f"since {who.get('since', '?')}): wait for it to finish, then run again") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"run_id": run_id, "pid": os.getpid(),
                                  "since": dt.datetime.now(dt.timezone.utc).isoformat()}).encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def recorded_run(lake: Lake, catalog: str | None, pipeline: str, dataset: str, config: dict,
                 inputs: list[str], run_id: str | None = None) -> Iterator[Run]:
    run = Run(run_id or new_run_id(), lake, catalog)
    with lake_lock(lake, catalog, run.run_id), _holding(catalog_path(lake, catalog)):
        lake.remove_stale_temps(dataset)  # what a killed run was writing
        with open_catalog(lake, catalog) as cat, cat.transaction():  # one commit for both
            cat.mark_dead_runs()  # we hold the lock: no other run is alive
            cat.start_run(run.run_id, pipeline, dataset, config, inputs)
        try:
            yield run
        except BaseException as e:
            with open_catalog(lake, catalog) as cat:
                cat.finish_run(run.run_id, "failed", error=f"{type(e).__name__}: {e}", **run.fields)
            raise
        with open_catalog(lake, catalog) as cat:
            cat.finish_run(run.run_id, run.status, error=run.error, **run.fields)
