"""Stages that run after `ingest` in a pipeline definition (`stages = ["ingest", "validate", ...]`).

A stage is a function `stage(ctx) -> StageResult`: it reads the dataset's current version, and may commit a
new one (see `pipelines.datasets`). Its per-part work is a plain function of one part group that it hands to
`pipelines.executor` (in-process or Ray tasks, as `ctx.executor` and `ctx.ray_address` say); what needs every
episode (duplicate groups, splits) runs once in the stage over small per-episode data. It is registered in
`STAGES` (as "module:function") under the name definitions use, and the same function backs its
`pipelines <stage> DATASET` command.

This package holds the stage drivers written since (`eval`, and the judge I/O it shares with the RL reward);
it imports nothing heavy itself, so the reward function that verl loads can use `pipelines.stages.judge`
without the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from pipelines.lake import Lake


@dataclass
class StageContext:
    lake: Lake
    catalog_path: str | None  # None: <lake>/catalog.duckdb
    dataset: str  # NAME or NAME@VERSION
    run_id: str
    options: dict = field(default_factory=dict)  # the definition's [stage_options.<stage>] table
    log: Callable[[str], None] = print
    executor: str = "auto"  # where per-part work runs: auto | local | ray (`pipelines.executor`)
    ray_address: str | None = None  # join this Ray cluster


@dataclass
class StageResult:
    records_in: int
    records_out: int
    quarantined: int = 0
    version: int | None = None
    summary: str = ""  # one line for the run summary


# name -> "module:function", imported when used (stage modules import this one for StageContext)
STAGES: dict[str, str] = {
    "validate": "pipelines.validate:validate_stage",
    "label": "pipelines.label:label_stage",
    "dedup": "pipelines.dedup:dedup_stage",
    "export": "pipelines.export:export_stage",
}


# name -> "module:function" that turns a definition's [stage_options.<name>] table into the stage's options,
# raising ValueError naming the bad key; light modules where they can be (definitions are read at startup)
OPTIONS: dict[str, str] = {
    "validate": "pipelines.options:validate_options",
    "dedup": "pipelines.options:dedup_options",
    "export": "pipelines.export:export_options",
    "label": "pipelines.label:options_from_dict",
}


def check_options(name: str, table: dict):
    """The stage's options from a definition's table; ValueError when they are wrong."""
    return _imported(OPTIONS[name])(table)


def _imported(target: str):
    import importlib

    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


def load(name: str) -> Callable[[StageContext], StageResult]:
    return _imported(STAGES[name])


def run_alone(stage: str, lake: Lake, catalog_path: str | None, dataset: str, options: dict,
              log: Callable[[str], None], counted: str = "steps", executor: str = "auto",
              ray_address: str | None = None) -> tuple[str, StageResult]:
    """Run registered `stage` on DATASET[@VERSION] as a run of its own (the `pipelines <stage>` commands):
    (run_id, result), recorded by `pipelines.runs.recorded_run`; `counted` is the `runs` column that
    `records_out` fills (steps or episodes)."""
    import time

    from pipelines.runs import recorded_run

    config = {**options, "executor": executor, "ray_address": ray_address}
    with recorded_run(lake, catalog_path, stage, dataset.partition("@")[0], config, [dataset]) as run:
        started = time.perf_counter()
        result = load(stage)(StageContext(lake, catalog_path, dataset, run.run_id, options, log, executor,
                                          ray_address))
        run.stage(stage, result.records_in, result.records_out, result.quarantined, time.perf_counter() - started)
        run.fields.update(version=result.version, quarantined=result.quarantined, **{counted: result.records_out})
    return run.run_id, result
