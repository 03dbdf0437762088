"""Runs an ingest pipeline: plan tasks, skip the finished ones, execute the rest in-process or on Ray,
then record the run and the dataset's new version in the catalog."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from pipelines.definition import Definition
from pipelines.lake import Lake
from pipelines.plan import Ignored, Plan, Task, plan
from pipelines.ray_setup import init_ray
from pipelines.runs import open_catalog, recorded_run
from pipelines import stages as stage_registry
from pipelines.task import TaskContext, run_ingest_task
from schemas import TABLES

MB = 1 << 20
# Measured here (bench/ingest.py, 2 cores): in-process ingest ~60 MB/s; starting a local Ray and its workers
# ~6 s. Ray pays off only when the parallel part saves more than that.
LOCAL_BYTES_PER_S = 60 * MB
RAY_STARTUP_S = 6.0


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
    units_in: int = 0
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


def _ray_pays_off(the_plan: Plan, cpus: int) -> bool:
    """Estimated Ray time (startup + rounds of parallel tasks) clearly under the in-process time."""
    sizes = sorted((t.size for t in the_plan.tasks), reverse=True)
    if cpus < 2 or len(sizes) < 2:
        return False
    local_s = sum(sizes) / LOCAL_BYTES_PER_S
    rounds = [sum(sizes[i::cpus]) for i in range(cpus)]  # tasks dealt to workers, largest first
    return RAY_STARTUP_S + max(rounds) / LOCAL_BYTES_PER_S < 0.8 * local_s


def _execute_local(tasks: list[Task], ctx: TaskContext) -> Iterator[tuple[Task, dict | None, str | None]]:
    for task in tasks:
        try:
            yield task, run_ingest_task(task, ctx), None
        except Exception as e:
            yield task, None, f"{type(e).__name__}: {e}"


def _execute_ray(tasks: list[Task], ctx: TaskContext, address: str | None) -> Iterator[tuple[Task, dict | None, str | None]]:
    import ray

    started_here = init_ray(address)
    try:
        remote = ray.remote(num_cpus=1, max_retries=1)(run_ingest_task)
        pending = {remote.remote(task, ctx): task for task in tasks}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            task = pending.pop(done[0])
            try:
                yield task, ray.get(done[0]), None
            except Exception as e:
                cause = getattr(e, "cause", None) or e
                yield task, None, f"{type(cause).__name__}: {cause}"
    finally:
        if started_here:
            ray.shutdown()


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
        return (f"  [{self.done}/{self.total_tasks} tasks] {self.bytes / MB:,.1f}/{self.total_bytes / MB:,.1f} MB"
                f"  {rate / MB:,.1f} MB/s  {self.steps / elapsed:,.0f} steps/s  ETA {left:,.0f} s"
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
               progress: bool = True, log: Callable[[str], None] | None = None) -> RunResult:
    """Run `defn` over `inputs` (its own default inputs when None) into the lake. Raises InputError or
    DefinitionError before anything is written when the run cannot start."""
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    lake = Lake(lake_url)
    inputs = inputs or defn.default_inputs()
    started = time.perf_counter()
    the_plan: Plan = plan(inputs, defn.formats, int((task_mb or defn.task_mb) * MB))
    if executor == "auto":
        executor = "ray" if ray_address or _ray_pays_off(the_plan, os.cpu_count() or 1) else "local"
    config = {"formats": defn.formats, "stages": defn.stages, "task_mb": task_mb or defn.task_mb,
              "executor": executor, "ray_address": ray_address}
    with recorded_run(lake, catalog, defn.name, defn.dataset, config, inputs) as run:
        result = RunResult(run.run_id, defn.name, defn.dataset, "running", lake=lake.url, bytes_in=the_plan.size,
                           units_in=the_plan.num_units, tasks_total=len(the_plan.tasks), ignored=the_plan.ignored,
                           executor=executor)
        _ingest(defn, lake, catalog, the_plan, len(inputs), ray_address, progress, log, run, result)
        if result.status == "success":
            _later_stages(defn, lake, catalog, log, run, result)
        run.status = result.status
        run.fields.update(version=result.version)
    result.seconds = time.perf_counter() - started
    return result


def _ingest(defn: Definition, lake: Lake, catalog: str | None, the_plan: Plan, n_inputs: int,
            ray_address: str | None, progress: bool, log: Callable[[str], None], run, result: RunResult) -> None:
    """Run the plan's unfinished tasks and commit the version their parts make (nothing when a task
    failed: a rerun resumes)."""
    started = time.perf_counter()
    ctx = TaskContext(lake.url, defn.dataset, run.run_id)
    markers: list[dict] = []
    todo: list[Task] = []
    for task in the_plan.tasks:
        marker = lake.read_marker(defn.dataset, task.task_id)
        (markers.append(marker) if marker else todo.append(task))
    result.tasks_skipped = len(markers)
    log(f"{defn.name}: {result.units_in} inputs, {the_plan.size / MB:,.1f} MB in {len(the_plan.tasks)} tasks"
        f" ({result.tasks_skipped} already done), executor {result.executor}, run {run.run_id}")

    bar = Progress(len(todo), sum(t.size for t in todo), enabled=progress)
    failures: list[str] = []
    scrubbed: list[dict] = []  # this run's tasks only: earlier runs recorded theirs
    executed = _execute_local(todo, ctx) if result.executor == "local" else _execute_ray(todo, ctx, ray_address)
    for task, marker, error in executed:
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
    result.tasks_failed = len(failures)
    result.messages.extend(failures)
    run.fields.update(bytes_in=result.bytes_in, units_in=result.units_in, files_ignored=len(result.ignored),
                      tasks_total=result.tasks_total, tasks_skipped=result.tasks_skipped,
                      tasks_failed=result.tasks_failed, episodes=result.episodes, steps=result.steps,
                      quarantined=result.quarantined)
    run.stage("ingest", result.units_in, result.steps, result.quarantined, time.perf_counter() - started)
    if scrubbed:
        with open_catalog(lake, catalog) as cat:
            cat.con.executemany("INSERT INTO scrub_audit (run_id, dataset, table_name, record_id, field, kind, count) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                [[run.run_id, defn.dataset, a["table_name"], a["record_id"], a["field"], a["kind"],
                                  a["count"]] for a in scrubbed])
    if result.ignored:
        with open_catalog(lake, catalog) as cat:
            cat.con.executemany("INSERT INTO ignored_inputs VALUES (?, ?, ?, ?, ?, ?)",
                                [[run.run_id, defn.dataset, i.path, i.size, i.reason, ",".join(defn.formats)]
                                 for i in result.ignored])
    if failures:
        result.status = "failed"
        run.fail(failures[0])
        return
    parts = {t: [m["parts"][t] for m in markers if t in m["parts"]] for t in TABLES}
    with open_catalog(lake, catalog) as cat:
        result.version, result.version_created = cat.commit_version(
            defn.dataset, run.run_id, parts, episodes=result.episodes, steps=result.steps,
            quarantined=result.quarantined, note=f"{defn.name} over {n_inputs} input(s)", keep_descendants=True)
    result.status = "success"


def _later_stages(defn: Definition, lake: Lake, catalog: str | None, log: Callable[[str], None], run,
                  result: RunResult) -> None:
    for stage in defn.stages[1:]:
        ctx = stage_registry.StageContext(lake, catalog, defn.dataset, run.run_id,
                                          defn.stage_options.get(stage, {}), log)
        started = time.perf_counter()
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
