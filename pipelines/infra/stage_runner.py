"""One runner for the stages that read a dataset version's part groups (`reads = "parts"`: validate, dedup,
migrate, export, label): the steps each of them once wrote by hand, done here once.

`run_parts(ctx, stage)`:
1. under a read-only catalog (an empty one made where the lake has none yet): resolve `ctx.dataset` (NAME or
   NAME@VERSION; a version written before schema 2 is refused unless the stage `reads_legacy`), list its part
   groups, and ask the stage's `plan` what to run (the plan may read the stage's memo table to skip what an
   earlier run did);
2. choose the executor (`executor.choose`) from the bytes of the groups the plan will read and the stage's
   measured `bytes_per_s`;
3. run the stage's `work` once per item on it (`executor.run_all`: progress every 10 s, the stage's declared
   resources on Ray (`ctx.resources`, or what the stage's `needs` makes of them for its options), the placement
   line, the first failure raised naming its item; with a `window`, `executor.run_ordered`: the results
   streamed in item order to a reduce that writes them out as they come). What must happen in the driver
   while items run goes through two hooks: `report` takes the pieces a running item hands over (the labeler's
   ledger rows and progress lines: in-process at once, from a Ray task with its result as it arrives), `each`
   takes every item's result in item order as soon as those before it are in (in-process before the next item
   starts);
4. log the stage's opening line, `<stage> NAME vN: ...`, with the rest from its `opening`;
5. hand the results to its `reduce`, which writes the parts that change and says what the new version
   replaces (`Outcome`);
6. under a writable catalog (opened only when there is something to write): commit the new version with the
   outcome's note (`datasets.commit`), then let the stage `record` its rows in the same session;
7. return what its `finish` makes of it (a `StageResult`). When a step from 3 on raises, the stage's
   `abandon` undoes what it wrote outside the lake's content-named parts, and the error goes on.

What a stage author supplies is a `PartsStage`; a stage function is then one line,
`def validate_stage(ctx): return run_parts(ctx, VALIDATE)`. The `records` stages (sample, eval) read
rendered records instead: `pipelines.stages.export.rendered_records`, which plans and maps the export's render
with steps 1 to 3 (`planned`, `mapped`) and hands the records on as they come.
"""

from __future__ import annotations

import functools
import itertools
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from pipelines.infra import datasets
from pipelines.infra import executor as executors
from pipelines.infra.executor import Resources
from pipelines.infra.runs import catalog_path, open_catalog

if TYPE_CHECKING:
    from catalog import Catalog, Version
    from pipelines.stages import StageContext

Group = dict[str, list[str]]


@dataclass
class Plan:
    """What one run of a stage maps on the executor, decided under the read-only catalog by the stage's `plan`."""

    items: list  # what `work` runs on, one task each: part groups, (group, flag) pairs, parts...
    job: Any  # what every item's work shares (shipped to Ray once): the lake's URL, the options
    reads: list[Group]  # the part groups the items will read: their bytes choose the executor
    label: str  # progress and placement lines' label, e.g. "validate android"
    name: Callable[[Any], str] = datasets.group_stem  # an item's name in progress lines and errors
    what: str = "part group"  # what an item is, in progress lines and errors
    fold: Callable[[Any], Any] | None = None  # `executor.run_all`'s fold: a result's bulky part folded in order
    window: int | None = None  # stream: results handed to the reduce as they come, at most this many ahead
    state: Any = None  # the stage's own, for its later pieces (options, memo keys, start time...)


@dataclass
class Outcome:
    """What a stage's `reduce` decided: the tables whose parts the new version swaps (empty: no new version) and
    the version's note; `state` carries what `record` and `finish` need."""

    replaced: dict[str, list[str]] = field(default_factory=dict)
    note: str = ""
    state: Any = None


@dataclass
class StageRun:
    """One run of a parts stage as the runner hands it to the stage's pieces."""

    ctx: StageContext
    version: Version  # the version read
    groups: list[Group]  # its part groups in order (one group of all its parts for a version without groups)
    options: Any = None  # the stage's options, checked (`PartsStage.options`)
    plan: Plan | None = None
    executor: str = "local"  # the one chosen for the plan's items
    started: float = field(default_factory=time.perf_counter)
    resources: Resources | None = None  # what each task asks Ray for: `ctx.resources` as the stage's `needs` has them


    @property
    def dataset(self) -> str:
        return self.version.dataset

    def catalog(self):
        """The catalog, writable, for rows a reduce records before the commit (dedup's clusters are written
        before the version that removes them)."""
        return open_catalog(self.ctx.lake, self.ctx.catalog_path)

    def map(self, fn: Callable, items: list, *shared) -> list:
        """`fn(item, *shared)` for more items on the run's executor (a second pass: dedup rewrites the groups
        that lose an episode), quietly; in-process when there are none (no Ray started for nothing)."""
        return executors.run_all(fn, items, *shared, executor=self.executor if items else "local",
                                 ray_address=self.ctx.ray_address, name=datasets.group_stem,
                                 resources=self.resources or self.ctx.resources)


@dataclass(frozen=True)
class PartsStage:
    """A stage that reads part groups, as its author declares it for `run_parts`.

    - `name`: the stage's name, the first word of its log lines;
    - `options(table)`: its options checked (ValueError naming the bad key) before anything is read; the
      runner keeps them as `run.options`;
    - `work(item, job)`: one item's work, a module-level function (Ray ships it by reference): reads its parts
      from the lake (`Lake(job.lake_url)`), writes any new part, returns a small result;
    - `bytes_per_s`: how fast `work` reads parts, measured: with the read bytes it chooses the executor;
    - `plan(run, cat) -> Plan`: the items, the shared job, what they read; `cat` is open read-only for the
      stage's memo table (what an earlier run found done);
    - `reduce(run, results) -> Outcome`: the results (in item order; an iterator when the plan has a `window`,
      for a stage that writes them out in order, as export writes shards) put together; writes the tables
      that change and names the parts they replace;
    - `finish(run, outcome, version, created)`: what the stage returns (`version`: the new one, or the one read);
    - `opening(run, results) -> str | None`: the rest of the line `<name> NAME vN: ...` logged after the map;
    - `record(run, cat, version, outcome)`: rows written under the writable catalog after the commit
      (memo rows, findings); a stage with one has the catalog opened even when nothing is committed;
    - `abandon(run)`: undo what a failed run wrote outside the lake's content-named parts (a half-written
      export's files); called when the map, reduce, commit or record raises, before the error goes on;
    - `reads_legacy`: read a version written before schema 2, which every other stage refuses (migrate);
    - `needs(options, declared) -> Resources`: what one task asks Ray for with these options, from the declared
      (or the definition's) resources: the labeler's offline engine takes GPUs, its HTTP client one CPU;
    - `report(run, piece)`: the driver's handling of a piece a running item hands over; `work` is then called
      as `work(item, job, send)` and `send(piece)` reaches `report` at once in-process, or, from a Ray task,
      with the item's result as it arrives (completion order): the labeler's ledger rows, written to the
      catalog as they come so that an interrupted run resumes from them, and its progress lines;
    - `each(run, item, result)`: the driver's step after each item, in item order, as soon as the results
      before it are in (in-process: before the next item starts); what it returns is what `reduce` gets for
      the item: the labeler's dry-run preview and branch rows, made group by group.

    `reduce` and `finish` are left out only where the results are read through `planned` and `mapped` instead of
    `run_parts` (the export's render, which `rendered_records` streams).
    """

    name: str
    work: Callable[[Any, Any], Any]
    bytes_per_s: float
    plan: Callable[[StageRun, Catalog], Plan]
    reduce: Callable[[StageRun, list], Outcome] | None = None
    finish: Callable[[StageRun, Outcome, int, bool], Any] | None = None
    options: Callable[[dict], Any] | None = None
    opening: Callable[[StageRun, list], str | None] | None = None
    record: Callable[[StageRun, Catalog, int, Outcome], None] | None = None
    abandon: Callable[[StageRun], None] | None = None
    reads_legacy: bool = False
    needs: Callable[[Any, Resources], Resources] | None = None
    report: Callable[[StageRun, Any], None] | None = None
    each: Callable[[StageRun, Any, Any], Any] | None = None


def run_parts(ctx: StageContext, stage: PartsStage):
    """Run `stage` on `ctx.dataset`: the steps of this module's docstring. Returns what `stage.finish` returns."""
    run = planned(ctx, stage)
    try:
        results = mapped(run, stage)
        line = stage.opening(run, results) if stage.opening else None
        if line is not None:
            ctx.log(f"{stage.name} {run.dataset} v{run.version.version}: {line}")
        outcome = stage.reduce(run, results)
        number, created = _committed(run, stage, outcome)
    except BaseException:
        if stage.abandon:  # what the stage wrote outside the lake's content-named parts
            stage.abandon(run)
        raise
    return stage.finish(run, outcome, number, created)


def planned(ctx: StageContext, stage: PartsStage) -> StageRun:
    """Steps 1 and 2: the stage's options checked; the version, its groups and the stage's plan read under one
    read-only catalog session; the executor chosen for what the plan reads. A reader of the stage's results
    that writes nothing (`rendered_records`: the export's records as a stream) stops here and maps them."""
    options = stage.options(ctx.options) if stage.options else None
    started = time.perf_counter()
    # a lake without a catalog yet gets its empty one, so a missing dataset is said as `resolve` says it
    read_only = os.path.exists(catalog_path(ctx.lake, ctx.catalog_path))
    with open_catalog(ctx.lake, ctx.catalog_path, read_only=read_only) as cat:
        version = datasets.resolve(cat, ctx.dataset, None if stage.reads_legacy else ctx.lake)
        run = StageRun(ctx, version, all_groups(version), options, started=started)
        run.plan = stage.plan(run, cat)
    run.resources = stage.needs(options, ctx.resources) if stage.needs else ctx.resources
    run.executor = executors.choose(ctx.executor, ctx.ray_address, datasets.group_sizes(ctx.lake, run.plan.reads),
                                    stage.bytes_per_s)
    return run


def mapped(run: StageRun, stage: PartsStage):
    """Step 3: the plan's items through `stage.work` on the chosen executor: a list, or with a `window` an
    iterator in item order that its reader consumes as the results arrive."""
    plan, ctx = run.plan, run.ctx
    where = dict(executor=run.executor, ray_address=ctx.ray_address, what=plan.what, name=plan.name, log=ctx.log,
                 label=plan.label, resources=run.resources or ctx.resources)
    work, arrived, fold = _with_driver_steps(run, stage)
    if plan.window:  # results arrive in item order
        ordered = executors.run_ordered(work, plan.items, plan.job, window=plan.window, **where)
        steps = [step for step in (arrived, fold) if step]
        return functools.reduce(lambda results, step: map(step, results), steps, ordered)
    return executors.run_all(work, plan.items, plan.job, fold=fold, arrived=arrived, **where)


@dataclass
class Reported:
    """An item's result as a Ray task hands it back with the pieces its work sent meanwhile."""

    pieces: list
    result: Any


def keeping_pieces(work: Callable, item, job) -> Reported:
    """`work(item, job, send)` in a Ray task: what it sends is kept and handed back with its result."""
    pieces: list = []
    return Reported(pieces, work(item, job, pieces.append))


def _with_driver_steps(run: StageRun, stage: PartsStage) -> tuple[Callable, Callable | None, Callable | None]:
    """The work as the executor runs it, what the driver does with a result as it arrives (a Ray task's pieces
    to `report`, in completion order) and the fold of its steps in item order (the stage's `each`, the plan's
    `fold`)."""
    plan, arrived = run.plan, None
    if stage.report is None:
        work = stage.work
    elif run.executor == "local":  # the item runs in this process: its pieces reach the driver as they are sent
        work = lambda item, job: stage.work(item, job, lambda piece: stage.report(run, piece))  # noqa: E731
    else:
        work = functools.partial(keeping_pieces, stage.work)

        def arrived(reported: Reported):
            for piece in reported.pieces:
                stage.report(run, piece)
            return reported.result

    if not stage.each:
        return work, arrived, plan.fold
    index = itertools.count()  # folds come in item order: the n-th is item n's

    def fold(result):
        result = stage.each(run, plan.items[next(index)], result)
        return plan.fold(result) if plan.fold else result

    return work, arrived, fold


def _committed(run: StageRun, stage: PartsStage, outcome: Outcome) -> tuple[int, bool]:
    """The new version committed when the outcome replaces any part, and the stage's rows recorded, in one
    writable catalog session (none opened when there is neither): (version, created)."""
    number, created = run.version.version, False
    if outcome.replaced or stage.record:
        with open_catalog(run.ctx.lake, run.ctx.catalog_path) as cat:
            if outcome.replaced:
                number, created = datasets.commit(run.ctx.lake, cat, run.version, run.ctx.run_id, outcome.replaced,
                                                  note=outcome.note)
            if stage.record:
                stage.record(run, cat, number, outcome)
    return number, created


def all_groups(version: Version) -> list[Group]:
    """The version's part groups; one group of all its episodes and steps parts for a version written before
    groups existed."""
    return datasets.part_groups(version) or [{t: version.parts.get(t, []) for t in ("episodes", "steps")}]
