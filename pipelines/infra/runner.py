"""Runs an ingest pipeline: plan tasks, skip the finished ones, execute the rest in-process or on Ray,
then record the run and the dataset's new version in the catalog."""

from __future__ import annotations

import contextlib
import pickle
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import pyarrow as pa

from pipelines.infra.definition import Definition
from pipelines.infra.lake import Lake
from pipelines.infra import phases
from pipelines.infra import executor as executors
from pipelines.infra.plan import Ignored, Plan, Task, Unit, find_units, pack
from pipelines.infra.runs import open_catalog, recorded_run
from pipelines import stages as stage_registry
from pipelines.infra.task import TaskContext, run_ingest_task
from schemas import TABLES

MB = 1 << 20  # sizes the plan works in (task_mb)
SHOWN_MB = 1e6  # sizes shown to people: MB as the run's summary counts them (one unit in every line)
# Measured here (bench/ingest.py, 2 cores): in-process ingest ~60 MB/s (the executor's cost model)
LOCAL_BYTES_PER_S = 60 * MB


@dataclass
class RunResult:
    run_id: str
    pipeline: str
    dataset: str
    status: str  # success | failed
    version: int | None = None
    version_created: bool = False
    lake: str = ""
    seconds: float = 0.0
    bytes_in: int = 0
    units_in: int = 0  # read by this run
    units_known: int = 0  # already in the dataset, not read again
    tasks_total: int = 0
    tasks_skipped: int = 0
    tasks_failed: int = 0
    episodes: int = 0
    steps: int = 0
    quarantined: int = 0
    ignored: list[Ignored] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # one line per quarantined record or failed task
    executor: str = "local"
    stage_summaries: list[str] = field(default_factory=list)  # one line per stage after ingest


class Progress:
    """Task progress on stderr: in a terminal one live line (tasks, MB, MB/s, steps/s, ETA), redrawn in place;
    otherwise (a log, CI) one plain line per finished task."""

    def __init__(self, total_tasks: int, total_bytes: int, stream=sys.stderr, enabled: bool = True):
        self.total_tasks, self.total_bytes, self.stream, self.enabled = total_tasks, total_bytes, stream, enabled
        self.done = self.bytes = self.episodes = self.steps = self.quarantined = 0
        self.started = time.perf_counter()
        self.live = enabled and hasattr(stream, "isatty") and stream.isatty()

    def line(self) -> str:
        elapsed = max(time.perf_counter() - self.started, 1e-9)
        rate = self.bytes / elapsed
        left = (self.total_bytes - self.bytes) / rate if rate > 0 else 0.0
        return (f"  [{self.done}/{self.total_tasks} tasks] "
                f"{self.bytes / SHOWN_MB:,.1f}/{self.total_bytes / SHOWN_MB:,.1f} MB"
                f"  {rate / SHOWN_MB:,.1f} MB/s  {self.steps / elapsed:,.0f} steps/s  ETA {left:,.0f} s"
                f"  episodes {self.episodes:,}  quarantined {self.quarantined:,}")

    def update(self, marker: dict | None, size: int) -> None:
        self.done += 1
        self.bytes += size
        if marker:
            self.episodes += marker["counts"]["episodes"]
            self.steps += marker["counts"]["steps"]
            self.quarantined += marker["counts"]["quarantined"]
        if not self.enabled:
            return
        if self.live:
            end = "\n" if self.done == self.total_tasks else ""
            print("\r\x1b[2K" + self.line(), end=end, file=self.stream, flush=True)
        else:
            print(self.line(), file=self.stream, flush=True)


def run_ingest(defn: Definition, lake_url: str, inputs: list[str] | None = None, *, ray_address: str | None = None,
               executor: str = "auto", catalog: str | None = None, task_mb: float | None = None,
               progress: bool = True, log: Callable[[str], None] | None = None, replace: bool = False) -> RunResult:
    """Run `defn` over `inputs` (its own default inputs when None) into the lake. Inputs the dataset already
    holds are not read again: new ones add a version that shares the old parts; `replace` starts the
    dataset over from `inputs` alone. Raises InputError or DefinitionError before anything is written when
    the run cannot start."""
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    lake = Lake(lake_url)
    inputs = inputs or defn.default_inputs()
    started = time.perf_counter()
    units, ignored = _planned(inputs, defn.formats)
    config = {"formats": defn.formats, "stages": defn.stages, "task_mb": task_mb or defn.task_mb,
              "executor": executor, "ray_address": ray_address, "replace": replace}
    with recorded_run(lake, catalog, defn.name, defn.dataset, config, inputs) as run:
        with open_catalog(lake, catalog) as cat:
            base = None if replace else _base_version(cat, defn.dataset)
        new_units, known = _new_units(units, base, ignored)
        the_plan = Plan(pack(new_units, int((task_mb or defn.task_mb) * MB)), ignored)
        chosen = executors.choose(executor, ray_address, [t.size for t in the_plan.tasks], LOCAL_BYTES_PER_S)
        result = RunResult(run.run_id, defn.name, defn.dataset, "running", lake=lake.url, bytes_in=the_plan.size,
                           units_in=the_plan.num_units, units_known=known, tasks_total=len(the_plan.tasks),
                           ignored=the_plan.ignored, executor=chosen)
        phases.reached("planning")
        # one Ray connection for the whole run when it runs on Ray: a cluster gets the packages once
        session = executors.ray_session(ray_address) if chosen == "ray" else contextlib.nullcontext()
        with session:
            _ingest(defn, lake, catalog, the_plan, base, len(inputs), ray_address, progress, log, run, result)
            # the later stages need none of the plan: its units (a few hundred bytes each, ~25 MB at 10 GB of
            # input) and what they freed stayed in the process through validate
            del units, new_units, the_plan, base
            executors.release_freed_memory()
            if result.status == "success":
                _later_stages(defn, lake, catalog, log, run, result, executor, ray_address)
        run.status = result.status
        run.fields.update(version=result.version)
    result.seconds = time.perf_counter() - started
    return result


def _planned(inputs: list[str], formats: list[str]) -> tuple[list[Unit], list[Ignored]]:
    """`find_units`, its result copied after the listing is freed. The units are made while the listing's
    strings (one a file) live around them, so the heap's blocks stay partly in use for the whole run: at a
    million files the process kept 307 MB after planning (imports 133 MB, units 18 MB); made anew from one
    pickled copy once the listing is gone, 181 MB. (Our own objects, in-process: nothing untrusted is
    unpickled.)"""
    copy = pickle.dumps(find_units(inputs, formats), protocol=pickle.HIGHEST_PROTOCOL)
    executors.release_freed_memory()
    return pickle.loads(copy)


@dataclass
class _Base:
    """The version an incremental ingest adds to, and the input units it holds (None: made before units
    were recorded, so this ingest replaces its content as ingests used to)."""

    version: int
    parts: dict[str, list[str]]
    counts: tuple[int, int, int]  # episodes, steps, quarantined
    units: dict[tuple[str, str], tuple[str, int]] | None


def _base_version(cat, dataset: str) -> _Base | None:
    current = cat.current_version(dataset)
    if current is None:
        return None
    counts = cat.con.execute("SELECT episodes, steps, quarantined FROM versions WHERE dataset = ? AND version = ?",
                             [dataset, current.version]).fetchone()
    return _Base(current.version, current.parts, tuple(c or 0 for c in counts),
                 cat.ingested_units(dataset, current.version))


def _new_units(units: list[Unit], base: _Base | None, ignored: list[Ignored]) -> tuple[list[Unit], int]:
    """The units to read: those the base version does not hold. A unit it holds whose files changed since is
    not read (its old episodes share parts with others): it is listed as ignored with what to do."""
    if base is None or base.units is None:
        return units, 0
    new, known = [], 0
    for unit in units:
        seen = base.units.get((unit.format, unit.uri))
        if seen is None:
            new.append(unit)
        elif seen[0] == unit.fingerprint:
            known += 1
        else:
            ignored.append(Ignored(unit.path, unit.size, f"skipped: changed since v{seen[1]} ingested it "
                                                         "(--replace rebuilds the dataset from the inputs given)"))
    return new, known


def _ingest(defn: Definition, lake: Lake, catalog: str | None, the_plan: Plan, base: _Base | None, n_inputs: int,
            ray_address: str | None, progress: bool, log: Callable[[str], None], run, result: RunResult) -> None:
    """Run the plan's unfinished tasks and commit the version their parts make, added to the base version's
    (nothing when a task failed: a rerun resumes)."""
    started = time.perf_counter()
    ctx = TaskContext(lake.url, defn.dataset, run.run_id, tuple(defn.formats))
    markers: list[dict] = []
    todo: list[Task] = []
    for task in the_plan.tasks:
        marker = lake.read_marker(defn.dataset, task.task_id)
        (markers.append(marker) if marker else todo.append(task))
    result.tasks_skipped = len(markers)
    held = f", {result.units_known} already in the dataset" if result.units_known else ""
    log(f"{defn.name}: {result.units_in} new inputs{held}, {the_plan.size / SHOWN_MB:,.1f} MB in {len(the_plan.tasks)} "
        f"tasks ({result.tasks_skipped} already done), executor {result.executor}, run {run.run_id}")

    bar = Progress(len(todo), sum(t.size for t in todo), enabled=progress)
    failures: list[str] = []
    scrubbed: list[dict] = []  # this run's tasks only: earlier runs recorded theirs
    for _, task, marker, error in executors.run_each(
            run_ingest_task, todo, ctx, executor=result.executor, ray_address=ray_address, log=log,
            label=f"ingest {defn.dataset}", resources=defn.resources("ingest")):
        bar.update(marker, task.size)
        if marker:
            markers.append(marker)
            scrubbed += marker.get("scrubbed", [])
        else:
            failures.append(f"task {task.task_id} ({task.units[0].uri}, {len(task.units)} inputs) failed: {error}")
            log(f"  {failures[-1]}")

    for marker in markers:
        for key in ("episodes", "steps", "quarantined"):
            setattr(result, key, getattr(result, key) + marker["counts"][key])
        result.messages.extend(marker.get("messages", []))
        # units a reader claimed and no reader got a step from: unread inputs, with each reader's reason
        result.ignored.extend(Ignored(u["path"], u["size"], u["reason"]) for u in marker.get("unread", []))
    result.tasks_failed = len(failures)
    result.messages.extend(failures)
    run.fields.update(bytes_in=result.bytes_in, units_in=result.units_in, files_ignored=len(result.ignored),
                      tasks_total=result.tasks_total, tasks_skipped=result.tasks_skipped,
                      tasks_failed=result.tasks_failed, episodes=result.episodes, steps=result.steps,
                      quarantined=result.quarantined)
    with open_catalog(lake, catalog) as cat, cat.transaction():  # the run's rows of its ingest: one commit
        run.stage("ingest", result.units_in, result.steps, result.quarantined, time.perf_counter() - started)
        _record_unread_and_scrubbed(lake, catalog, run.run_id, defn, result.ignored, scrubbed)
    if failures:
        result.status = "failed"
        run.fail(failures[0])
        return
    result.status = "success"
    incremental = base is not None and base.units is not None
    if incremental and not the_plan.tasks:  # nothing new: the dataset stays as it is
        result.version = base.version
        return
    parts = {t: [m["parts"][t] for m in markers if t in m["parts"]] for t in TABLES}
    counts = [result.episodes, result.steps, result.quarantined]
    if incremental:
        parts = {t: base.parts.get(t, []) + parts.get(t, []) for t in TABLES}
        counts = [a + b for a, b in zip(base.counts, counts)]
    added = [(u.format, u.uri, u.fingerprint) for t in the_plan.tasks for u in t.units]
    phases.reached("committing")
    with open_catalog(lake, catalog) as cat:
        result.version, result.version_created = cat.commit_version(
            defn.dataset, run.run_id, parts, episodes=counts[0], steps=counts[1], quarantined=counts[2],
            note=f"{defn.name} over {n_inputs} input(s)" + (f", added to v{base.version}" if incremental else ""),
            keep_descendants=not incremental, ingest=(not incremental, added))


def _record_unread_and_scrubbed(lake: Lake, catalog: str | None, run_id: str, defn: Definition,
                                ignored: list[Ignored], scrubbed: list[dict]) -> None:
    """The run's `scrub_audit` rows (what kind of secret was replaced where) and `ignored_inputs` rows."""
    if scrubbed:
        with open_catalog(lake, catalog) as cat:
            # one Arrow table, not executemany: DuckDB inserts parameter rows one by one (~3 ms each), so a
            # HAR whose every entry carries a cookie spent most of its ingest here
            cat.insert_rows("scrub_audit", {
                "run_id": pa.array([run_id] * len(scrubbed), pa.string()),
                "dataset": pa.array([defn.dataset] * len(scrubbed), pa.string()),
                **{k: pa.array([a[k] for a in scrubbed]) for k in ("table_name", "record_id", "field", "kind")},
                "count": pa.array([a["count"] for a in scrubbed], pa.int32())})
    if ignored:
        with open_catalog(lake, catalog) as cat:  # one Arrow table too: a corpus may leave thousands unread
            n = len(ignored)
            cat.insert_rows("ignored_inputs", {
                "run_id": pa.array([run_id] * n, pa.string()), "dataset": pa.array([defn.dataset] * n, pa.string()),
                "path": pa.array([i.path for i in ignored], pa.string()),
                "size": pa.array([i.size for i in ignored], pa.int64()),
                "reason": pa.array([i.reason for i in ignored], pa.string()),
                "formats": pa.array([",".join(defn.formats)] * n, pa.string())})


def _later_stages(defn: Definition, lake: Lake, catalog: str | None, log: Callable[[str], None], run,
                  result: RunResult, executor: str, ray_address: str | None) -> None:
    for stage in defn.stages[1:]:
        ctx = stage_registry.StageContext(lake, catalog, defn.dataset, run.run_id,
                                          defn.stage_options.get(stage, {}), log, executor, ray_address,
                                          defn.resources(stage))
        started = time.perf_counter()
        phases.reached(f"stage:{stage}")
        try:
            outcome = stage_registry.load(stage)(ctx)
        except Exception as e:
            result.status = "failed"
            result.messages.append(f"stage {stage} failed: {type(e).__name__}: {e}")
            run.fail(result.messages[-1])
            return
        run.stage(stage, outcome.records_in, outcome.records_out, outcome.quarantined, time.perf_counter() - started)
        result.quarantined += outcome.quarantined  # the run's count: ingest's and every later stage's
        run.fields["quarantined"] = result.quarantined
        if outcome.version is not None:
            result.version, result.version_created = outcome.version, True
        if outcome.summary:
            result.stage_summaries.append(f"{stage}: {outcome.summary}")
