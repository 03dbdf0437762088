"""Every stage that runs after `ingest` in a pipeline definition (`stages = ["ingest", "validate", ...]`), as one
type: `Stage`.

A stage is a function `stage(ctx) -> StageResult`: it reads the dataset's current version, and may commit a
new one (see `pipelines.infra.datasets`). What it reads is one of two things: the version's part groups (`parts`:
validate, dedup, migrate, export, label: the per-group work is a plain function of one part group that runs on
`pipelines.infra.executor`, in-process or as Ray tasks, as `ctx.executor` and `ctx.ray_address` say, and what needs
every episode, duplicate groups or splits, runs once in the stage over small per-episode data; the labeler's
groups send their requests to the world model from their task), or its transitions as rendered records
(`records`: sample, eval, which send them to a model). Each declares the `Resources` one of its tasks needs;
the executor asks Ray for them, and a definition may change them (`[stage_resources.<stage>]`: cpus, gpus,
memory_mb), so a GPU stage lands on a cluster's GPU nodes; a stage whose needs follow its options says so in
its `PartsStage.needs` (the labeler's vllm backend: the engine's GPUs where the definition names none).
The same function backs the stage's `pipelines <stage> DATASET` command (`run_alone`).

Adding a stage:
1. A `parts` stage declares its pieces as a `pipelines.infra.stage_runner.PartsStage` and its function is
   `return run_parts(ctx, MY_STAGE)`: the runner resolves the version, lists its part groups, chooses the
   executor, maps the work with the declared resources, logs `<stage> NAME vN: ...`, commits and records.
   The author supplies: `work(item, job)` (one part group's work, a module-level function: it reads its parts
   through `Lake(job.lake_url)` and returns a small result), its measured `bytes_per_s`, `plan` (the items and
   the job they share, skipping what the stage's memo table says is done), `reduce` (the results put
   together: the parts the new version replaces and its note), `finish` (the `StageResult`), and where needed
   `options` (the checker below), `opening` (the rest of the opening line), `record` (catalog rows written
   with the commit), `abandon` (undo files a failed run wrote), `needs` (resources that follow the options),
   and for work the driver must see as it goes, `report` (pieces a running group sends: ledger rows, progress
   lines) and `each` (the driver's step after each group, in group order). `pipelines/stages/validate.py` is
   the fullest example; `migrate.py` the smallest; `label.py` uses the driver's hooks.
2. A `records` stage takes the version's rendered records from `pipelines.stages.export.rendered_records`
   (its options a `pipelines.stages.judge.ModelAndJudgeOptions`, whose `render_options` render them as
   `pipelines export sft` does, so its split is the export's) and sends them to its model.
3. Its options checker (a definition's table -> its options, ValueError naming the bad key), then one
   `Stage(...)` line in `STAGES` with its declared resources.
This package imports nothing heavy, so the reward function that verl loads can use `pipelines.stages.judge`
without the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable

from pipelines.infra.executor import ONE_CPU, Resources

if TYPE_CHECKING:
    from pipelines.infra.lake import Lake

READS = ("parts", "records")


@dataclass
class StageContext:
    lake: Lake
    catalog_path: str | None  # None: <lake>/catalog.duckdb
    dataset: str  # NAME or NAME@VERSION
    run_id: str
    options: dict = field(default_factory=dict)  # the definition's [stage_options.<stage>] table
    log: Callable[[str], None] = print
    executor: str = "auto"  # where per-part work runs: auto | local | ray (`pipelines.infra.executor`)
    ray_address: str | None = None  # join this Ray cluster
    resources: Resources = ONE_CPU  # what each of its tasks asks Ray for


@dataclass
class StageResult:
    records_in: int
    records_out: int
    quarantined: int = 0
    version: int | None = None
    summary: str = ""  # one line for the run summary


@dataclass(frozen=True)
class Stage:
    name: str  # as definitions and commands name it
    run: str  # "module:function": StageContext -> StageResult, imported when used
    options: str  # "module:function": a definition's [stage_options.<name>] table -> its options (ValueError)
    reads: str  # one of READS
    resources: Resources  # what one of its tasks needs
    about: str  # one line for `pipelines stages` and the README


# the stages, in the order a pipeline usually runs them; light modules for the checkers where they can be
# (definitions are read at startup). A model stage's tasks run where its requests are sent from: one CPU (the
# labeler's offline engine adds its GPUs: `pipelines.stages.label._needs`).
STAGES: dict[str, Stage] = {s.name: s for s in (
    Stage("migrate", "pipelines.stages.migrate:migrate_stage", "pipelines.infra.options:no_options", "parts", ONE_CPU,
          "bring a dataset written before schema 2 to the current layout"),
    Stage("validate", "pipelines.stages.validate:validate_stage", "pipelines.infra.options:validate_options", "parts",
          Resources(cpus=1, memory_mb=1024), "schema, rules and GX checks; errors to the quarantine"),
    Stage("label", "pipelines.stages.label:label_stage", "pipelines.stages.label:label_stage_options", "parts", ONE_CPU,
          "simulated counterfactual next states from a model, kept apart as branches"),
    Stage("sample", "pipelines.stages.sample:sample_stage", "pipelines.stages.sample:sample_options", "records",
          ONE_CPU, "rejection-sampled reasoning targets for real transitions, judged"),
    Stage("dedup", "pipelines.stages.dedup:dedup_stage", "pipelines.infra.options:dedup_options", "parts",
          Resources(cpus=1, memory_mb=1024), "exact and near-duplicate episodes removed, clusters recorded"),
    Stage("export", "pipelines.stages.export:export_stage", "pipelines.stages.export:export_options", "parts",
          Resources(cpus=1, memory_mb=1024), "CPT / SFT / RL shards with lineage, manifest and trainer configs"),
    Stage("eval", "pipelines.stages.eval:eval_stage", "pipelines.stages.eval:eval_options", "records", ONE_CPU,
          "the AgentWorldBench protocol on the held-out split: infer, judge, score"),
)}
# the ingest tasks the runner starts (ingest is not a Stage: it makes the version the others read)
INGEST_RESOURCES = Resources(cpus=1, memory_mb=1024)
RESOURCE_KEYS = ("cpus", "gpus", "memory_mb")


def resources_for(name: str, table: dict | None = None, where: str = "stage_resources") -> Resources:
    """The stage's declared resources, changed by a definition's `[stage_resources.<name>]` table (cpus,
    gpus, memory_mb); ValueError naming the bad key."""
    declared = INGEST_RESOURCES if name == "ingest" else STAGES[name].resources
    table = table or {}
    unknown = sorted(set(table) - set(RESOURCE_KEYS))
    if unknown:
        raise ValueError(f"{where}.{name}: unknown key {', '.join(unknown)} (known: {', '.join(RESOURCE_KEYS)})")
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"{where}.{name}.{key}: a number >= 0, not {value!r}")
    if table.get("memory_mb", 0) != int(table.get("memory_mb", 0)):
        raise ValueError(f"{where}.{name}.memory_mb: a whole number of MB")
    if "memory_mb" in table:
        table = {**table, "memory_mb": int(table["memory_mb"])}
    return replace(declared, **table)


def check_options(name: str, table: dict):
    """The stage's options from a definition's table; ValueError when they are wrong."""
    return _imported(STAGES[name].options)(table)


def _imported(target: str):
    import importlib

    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


def load(name: str) -> Callable[[StageContext], StageResult]:
    return _imported(STAGES[name].run)


def run_alone(stage: str, lake: Lake, catalog_path: str | None, dataset: str, options: dict,
              log: Callable[[str], None], counted: str = "steps", executor: str = "auto",
              ray_address: str | None = None, resources: Resources | None = None) -> tuple[str, StageResult]:
    """Run registered `stage` on DATASET[@VERSION] as a run of its own (the `pipelines <stage>` commands):
    (run_id, result), recorded by `pipelines.infra.runs.recorded_run`; `counted` is the `runs` column that
    `records_out` fills (steps or episodes); `resources`, what each task asks for (None: as declared)."""
    import time

    from pipelines.infra.runs import recorded_run

    config = {**options, "executor": executor, "ray_address": ray_address}
    with recorded_run(lake, catalog_path, stage, dataset.partition("@")[0], config, [dataset]) as run:
        started = time.perf_counter()
        result = load(stage)(StageContext(lake, catalog_path, dataset, run.run_id, options, log, executor,
                                          ray_address, resources or STAGES[stage].resources))
        run.stage(stage, result.records_in, result.records_out, result.quarantined, time.perf_counter() - started)
        run.fields.update(version=result.version, quarantined=result.quarantined, **{counted: result.records_out})
    return run.run_id, result
