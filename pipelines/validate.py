"""The `validate` stage: run the hot-path rules over a dataset version, quarantine the episodes with errors,
commit the cleaned version, record findings and great-expectations results in the catalog, and write the
Data Docs report next to the dataset.

Stage options: `pipelines.options.ValidateOptions` (`[stage_options.validate]` keys and the command's
flags), e.g. `contract = {droidbot = "freeze", default = "evolve"}`, `severity = {"terminal.cwd_discontinuity"
= "error"}`, `gx = false`, `sample_rows = 250000`.

Catalog tables (created with the catalog, `catalog.catalog.DDL`):
    validation_findings (run_id, dataset, version, rule, severity, findings, episodes, example_record,
                         example_reason): every rule that fired, warnings included
    validation_results  (run_id, dataset, version, suite, expectation, success, observed_value, rows,
                         sampled): one row per GX expectation
Data Docs: <lake>/datasets/<name>/validation/v<version>/index.html
"""

from __future__ import annotations

import os
import tempfile

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from catalog import Catalog
from pipelines import datasets
from pipelines.lake import Lake
from pipelines.runs import open_catalog
from pipelines.options import validate_options
from pipelines.stages import StageContext, StageResult



def _read_parts(lake: Lake, version, table: str) -> list[tuple[str, object]]:
    return [(p, pq.read_table(lake.absolute(p), filesystem=lake.fs)) for p in version.parts.get(table, [])]


def _record_findings(cat: Catalog, run_id: str, dataset: str, version: int, found: pl.DataFrame) -> None:
    if found.height == 0:
        return
    summary = found.group_by("rule", "severity").agg(
        pl.len().alias("findings"), pl.col("episode_id").n_unique().alias("episodes"),
        pl.coalesce("step_id", "episode_id").first().alias("example_record"),
        pl.col("reason").first().alias("example_reason")).sort("rule")
    for r in summary.iter_rows(named=True):
        cat.con.execute("INSERT INTO validation_findings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [run_id, dataset, version, r["rule"], r["severity"], r["findings"], r["episodes"],
                         r["example_record"], r["example_reason"]])


def _run_gx(ctx: StageContext, cat: Catalog, name: str, version: int, episodes, steps, sample_rows) -> str:
    from transforms.validate.gx import SAMPLE_ROWS, run_suites

    with tempfile.TemporaryDirectory() as docs:
        run = run_suites(episodes, steps, docs_dir=docs, sample_rows=sample_rows or SAMPLE_ROWS)
        target = ctx.lake.path("datasets", name, "validation", f"v{version}")
        ctx.lake.fs.makedirs(target, exist_ok=True)
        ctx.lake.fs.put(docs.rstrip("/") + "/", target, recursive=True)
    for r in run.results:
        cat.con.execute("INSERT INTO validation_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [ctx.run_id, name, version, r["suite"], r["expectation"], r["success"],
                         r["observed_value"], r["rows"], r["sampled"]])
    failed = sum(not r["success"] for r in run.results)
    return (f"GX {len(run.results)} expectations, {failed} failed, {run.seconds:.1f} s; "
            f"report {target}/index.html")


def validate_stage(ctx: StageContext) -> StageResult:
    """Validate `ctx.dataset` (NAME or NAME@VERSION). Commits a new version without the quarantined
    episodes when any rule found an error; otherwise the version stays as it is."""
    from transforms.validate import branches as branch_rules
    from transforms.validate.check import conform_parts, quarantine_rows, validate

    options = validate_options(ctx.options)
    with open_catalog(ctx.lake, ctx.catalog_path) as cat:
        version = datasets.resolve(cat, ctx.dataset, ctx.lake)
        episodes, steps, contract_findings = conform_parts(
            _read_parts(ctx.lake, version, "episodes"), _read_parts(ctx.lake, version, "steps"),
            options.contract)
        outcome = validate(episodes, steps, severity=options.severity, prior=contract_findings)
        quarantine = quarantine_rows(outcome, episodes, steps, ctx.run_id)
        branches = datasets.read_table(ctx.lake, version, "branches")
        kept_branches, branch_findings = branch_rules.check_branches(
            branches, steps, outcome.bad_episodes, options.severity)
        branch_quarantine = branch_rules.quarantine_rows(branch_findings, branches, episodes, ctx.run_id)
        number, created = version.version, False
        name = version.dataset
        replaced = {}
        if quarantine.num_rows or outcome.steps.num_rows != steps.num_rows:
            replaced["episodes"] = [datasets.write_part(ctx.lake, name, "episodes", outcome.episodes, "validate")]
            replaced["steps"] = [datasets.write_part(ctx.lake, name, "steps", outcome.steps, "validate")]
        if kept_branches.num_rows != branches.num_rows:
            replaced["branches"] = [datasets.write_part(ctx.lake, name, "branches", kept_branches, "validate")]
        if quarantine.num_rows or branch_quarantine.num_rows:
            both = pa.concat_tables([quarantine, branch_quarantine])
            replaced["quarantine"] = [*version.parts.get("quarantine", []),
                                      datasets.write_part(ctx.lake, name, "quarantine", both, "validate")]
        if replaced:
            number, created = datasets.commit(
                ctx.lake, cat, version, ctx.run_id, replaced,
                note=f"validate: {len(outcome.bad_episodes)} episodes and "
                     f"{branches.num_rows - kept_branches.num_rows} branches quarantined")
        _record_findings(cat, ctx.run_id, version.dataset, number, pl.concat([outcome.findings, branch_findings]))
        counts = outcome.counts()
        for row in branch_findings.group_by("severity", "rule").len().iter_rows(named=True):
            counts.setdefault(row["severity"], {})[row["rule"]] = row["len"]
        errors, warnings = sum(counts.get("error", {}).values()), sum(counts.get("warning", {}).values())
        summary = (f"{steps.num_rows:,} steps and {branches.num_rows:,} branches checked, {errors} errors in "
                   f"{len(outcome.bad_episodes)} episodes and {branches.num_rows - kept_branches.num_rows} branches "
                   f"(quarantined), {warnings} warnings (kept)")
        if counts:
            summary += "; " + ", ".join(f"{rule} {n}" for sev in ("error", "warning")
                                        for rule, n in sorted(counts.get(sev, {}).items()))
        if options.gx if options.gx is not None else os.environ.get("PIPELINES_GX", "1") != "0":
            summary += "; " + _run_gx(ctx, cat, version.dataset, number, outcome.episodes, outcome.steps,
                                      options.sample_rows)
    ctx.log(f"validate {version.dataset} v{version.version}: {summary}")
    return StageResult(records_in=steps.num_rows + branches.num_rows,
                       records_out=outcome.steps.num_rows + kept_branches.num_rows,
                       quarantined=quarantine.num_rows + branch_quarantine.num_rows, version=number if created else None, summary=summary)
