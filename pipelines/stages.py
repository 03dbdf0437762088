"""Stages that run after `ingest` in a pipeline definition (`stages = ["ingest", "validate", ...]`).

A stage is a function `stage(ctx) -> StageResult`: it reads the dataset's current version, and may commit a
new one (see `pipelines.datasets`). It is registered in `STAGES` (as "module:function") under the name definitions use, and the same
function backs its `pipelines <stage> DATASET` command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from pipelines.lake import Lake


@dataclass
class StageContext:
    lake: Lake
    catalog_path: str | None  # None: <lake>/catalog.duckdb
    dataset: str  # NAME or NAME@VERSION
    run_id: str
    options: dict = field(default_factory=dict)  # the definition's [stage_options.<stage>] table
    log: Callable[[str], None] = print


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
    "export": "pipelines.export:export_stage",
    "dedup": "pipelines.dedup:dedup_stage",
}


def load(name: str) -> Callable[[StageContext], StageResult]:
    import importlib

    module, _, function = STAGES[name].partition(":")
    return getattr(importlib.import_module(module), function)
