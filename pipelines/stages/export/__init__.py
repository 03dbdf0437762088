"""`pipelines export {cpt,sft,rl} DATASET --out PATH`: render a dataset version into training shards.

Reads the version's `steps` through DuckDB ordered by episode (out-of-core, so memory stays bounded by the
largest episode, and episodes whose steps sit in several parts, like labeler branches, come out whole),
builds the canonical transition view (`transforms.export.transitions`), assigns grouped splits, renders
records with the chosen format, and writes:

    <out>/<split>/<kind>-<format>-<NNNNN>.<parquet|jsonl>   shards, capped by rows and bytes, numbered per split
    <out>/<split>/<domain>-<NNNNN>_<split>.jsonl            (sft --format bench: per domain, as the reference)
    <out>/dataset_info.json                                 (sft --format sharegpt: LLaMA-Factory)
    <out>/manifest.json                                     counts per split/domain, tokens, shard sha256s,
                                                            dataset version, the export config

and in the catalog: `exports` (one row per export, with its manifest) and `export_rows` (export_id, shard,
row, step_ids): every shard row mapped to the steps it was made from. The export id is a hash of the dataset
version and the config, so exporting the same thing again rewrites the same files and rows.

Origins: by default only the main line is read (`steps`; the `branches` table is never opened), so a
real-only export of a labeled version is byte-identical to the export before labeling; `include_simulated`
adds one line per branch (`schemas.branches`), and every record carries its `origin`.

Render once, write many: the records are rendered once, as a stream, and every output consumes it.

    options.py   ExportOptions checked, the recipe they ask for, the options as the manifest records them
    plan.py      what rendering a version takes, decided once: splits, held-out episodes, demonstrations, groups
    records.py   one trajectory's records (SFT / RL transitions, CPT documents), the recipe's decisions
    render.py    the stream of rendered records (step ids, split, domain, tokens): what export, eval and the
                 sampler consume (`RENDER`, `rendered_records`)
    totals.py    what the stream and the rows written add up to (skipped counts, rows, tokens, lengths)
    shards.py    the shards (row and byte caps, mixture weights) and their lineage
    outputs.py   the manifest, dataset_info.json, the verl fragment, trainer configs, budget warnings

This module is the stage itself, run by `pipelines.infra.stage_runner.run_parts` (`EXPORT`: the render's plan
and per-group work, `render.RENDER`, with the writing added): under the read-only catalog the plan; then the
records streamed into the shards, the files beside them and the manifest written (`_write`); under the
writable catalog the export recorded (`record_export`); the export's line logged. `export()` runs it on a
dataset, `export_stage` from a definition.
"""

from __future__ import annotations

import dataclasses
import posixpath
from dataclasses import dataclass, field
from typing import Callable, Iterator

import orjson
import xxhash

from catalog import Catalog
from pipelines.infra import executor as executors
from pipelines.infra.lake import Lake
from pipelines.infra.options import ExportOptions, from_mapping
from pipelines.infra.stage_runner import Outcome, Plan, StageRun, run_parts
from pipelines.stages import StageContext, StageResult
from pipelines.stages.export.options import ExportError, checked, recorded
from pipelines.stages.export.outputs import budget_warnings, manifest_of, remove_previous, write_extra_files
from pipelines.stages.export.plan import RENDER_BYTES_PER_S, render_plan
from pipelines.stages.export.render import RENDER, Rendered, RenderedRecord, add_rendered, rendered_records
from pipelines.stages.export.shards import Lineage, Shard, write_shards
from pipelines.stages.export.totals import new_totals
from transforms.export import recipe as recipes

# what other modules import from `pipelines.stages.export` (the CLI, export_atif, benches and tests)
__all__ = ["RENDER_BYTES_PER_S", "ExportError", "Lineage", "budget_warnings", "checked", "export", "export_options",
           "export_stage", "record_export", "rendered_records"]


def export_options(table: dict) -> ExportOptions:
    """A definition's `[stage_options.export]` table, checked."""
    return checked(from_mapping(ExportOptions, table, "stage_options.export"))


def export(lake: Lake, catalog_path: str | None, dataset_ref: str, out: str, config: ExportOptions,
           log: Callable[[str], None] = print, executor: str = "auto", ray_address: str | None = None,
           resources: executors.Resources = executors.ONE_CPU) -> dict:
    """Write the export and record it in the catalog. Returns the manifest. Splits are decided once over
    every episode (small global data); records are rendered one part group per task on the executor (each
    asking Ray for `resources`) and written into shards in group order, so memory follows the part size."""
    return run_parts(StageContext(lake, catalog_path, dataset_ref, "", {"config": config, "out": out}, log, executor,
                                  ray_address, resources), EXPORT)


@dataclass
class _Writing:
    """One export's own, from its plan to its manifest: the recipe and the output folder, then what writing it
    makes (the lineage, the shards, the manifest)."""

    recipe: recipes.Recipe
    out: str
    lineage: Lineage | None = None
    shards: list[Shard] = field(default_factory=list)
    manifest: dict = field(default_factory=dict)


def _plan(run: StageRun, cat: Catalog) -> Plan:
    """The render's plan (`plan.render_plan`), with this export's writing to come."""
    plan = render_plan(run, cat)
    plan.state = _Writing(plan.state, run.ctx.options["out"])
    return plan


def _write(run: StageRun, rendered: Iterator[Rendered]) -> Outcome:
    """The output folder emptied of the previous export's files, then the shards written as the groups' records
    arrive, the files beside them and the manifest; no new version."""
    writing, config, version = run.plan.state, run.options, run.version
    export_id = xxhash.xxh64_hexdigest(orjson.dumps(
        {"dataset": version.dataset, "version": version.version, "out": writing.out, "config": recorded(config)},
        option=orjson.OPT_SORT_KEYS))
    out_lake = Lake(writing.out)
    remove_previous(out_lake)
    writing.lineage = Lineage(export_id)  # removed by `_abandon` when anything fails before the export is recorded
    totals = new_totals(config, writing.recipe)

    def records() -> Iterator[RenderedRecord]:
        for group in rendered:
            add_rendered(totals, group)
            writing.lineage.add_unnamed(group.unnamed_dropped)  # the recipe's dropped turns of lines with no record
            writing.lineage.add_dropped_trajectories(group.dropped_trajectories)
            yield from group.records

    writing.shards = write_shards(out_lake, config, records(), writing.lineage, totals)
    extra_files, trainers = write_extra_files(out_lake, config, version.dataset, writing.shards, totals.lengths)
    writing.manifest = manifest_of(export_id, run.plan.job, writing.recipe, version, writing.shards, totals,
                                   extra_files, trainers)
    out_lake.write_bytes_atomic(out_lake.path("manifest.json"), orjson.dumps(writing.manifest,
                                                                             option=orjson.OPT_INDENT_2))
    return Outcome()


def _record(run: StageRun, cat: Catalog, number: int, outcome: Outcome) -> None:
    writing = run.plan.state
    record_export(run.ctx.lake, cat, run.options.kind, run.options.format, run.version, writing.out,
                  writing.manifest, writing.lineage)


def _finish(run: StageRun, outcome: Outcome, number: int, created: bool) -> dict:
    """The export's line and the budget's warnings logged; the manifest."""
    writing, config = run.plan.state, run.options
    run.ctx.log(f"export {config.kind}/{config.format}: {writing.manifest['rows']:,} rows in {len(writing.shards)} "
                f"shard(s) from {len(run.groups)} part group(s) on {run.executor} -> {writing.out}")
    for line in budget_warnings(writing.manifest):
        run.ctx.log(line)
    return writing.manifest


def _abandon(run: StageRun) -> None:
    if run.plan.state.lineage is not None:
        run.plan.state.lineage.remove()


EXPORT = dataclasses.replace(RENDER, plan=_plan, reduce=_write, finish=_finish, record=_record, abandon=_abandon)


def record_export(lake: Lake, cat: Catalog, kind: str, format: str, version, out: str, manifest: dict,
                  lineage: Lineage) -> None:
    """The export's row in `exports` and its lineage file in the lake (the catalog's `export_rows`),
    replacing an earlier export with the same id; the local lineage file is removed."""
    from catalog.catalog import export_rows_path, now

    lineage.close()
    try:
        rel = export_rows_path(lineage.export_id)
        lake.put_file_atomic(lineage.path, lake.path(rel))
        cat.add_export({"export_id": lineage.export_id, "kind": kind, "format": format, "dataset": version.dataset,
                        "version": version.version, "out": out, "created_at": now(), "rows": manifest["rows"],
                        "manifest": orjson.dumps(manifest).decode()}, rel)
    finally:
        lineage.remove()


def export_stage(ctx: StageContext) -> StageResult:
    """`stages = [..., "export"]` with `[stage_options.export]` (`pipelines.infra.options.ExportOptions`)."""
    config = export_options(ctx.options)
    out = config.out or f"exports/{ctx.dataset.partition('@')[0]}/{config.kind}-{config.format}"
    if "://" not in out and not posixpath.isabs(out):
        out = ctx.lake.path(out) if ctx.lake.is_local else f"{ctx.lake.url.rstrip('/')}/{out}"
    manifest = export(ctx.lake, ctx.catalog_path, ctx.dataset, out, config, ctx.log, ctx.executor, ctx.ray_address,
                      ctx.resources)
    return StageResult(records_in=manifest["transitions_in"], records_out=manifest["rows"],
                       summary=f"{manifest['rows']:,} {config.kind}/{config.format} rows -> {out}")
