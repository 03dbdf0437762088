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
import pyarrow.compute as pc
import pyarrow.parquet as pq

from catalog import Catalog
from pipelines import datasets
from pipelines.lake import Lake
from pipelines.runs import open_catalog
from pipelines.options import validate_options
from pipelines.stages import StageContext, StageResult
from schemas import v1



def _read(lake: Lake, paths: list[str]) -> list[tuple[str, pa.Table]]:
    return [(p, pq.read_table(lake.absolute(p), filesystem=lake.fs)) for p in paths]


class _GxSample:
    """The scalar columns the GX suites read, kept to about `limit` rows per table whatever the dataset's
    size: groups are added as they are validated, and the sample is thinned (seeded) when it doubles."""

    def __init__(self, limit: int):
        from transforms.validate.gx import SAMPLE_SEED

        self.limit, self.seed, self.sampled = limit, SAMPLE_SEED, False
        self.parts: dict[str, list[pl.DataFrame]] = {"episodes": [], "steps": []}

    def add(self, episodes: pa.Table, steps: pa.Table) -> None:
        from transforms.validate.gx import episode_frame, flatten_steps

        for table, frame in (("episodes", episode_frame(episodes)), ("steps", flatten_steps(steps))):
            self.parts[table].append(frame)
            if sum(f.height for f in self.parts[table]) > 2 * self.limit:
                self.parts[table] = [pl.concat(self.parts[table]).sample(self.limit, seed=self.seed)]
                self.sampled = True

    def frames(self) -> dict[str, pl.DataFrame]:
        return {table: pl.concat(parts) if parts else pl.DataFrame() for table, parts in self.parts.items()}


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


def _run_gx(ctx: StageContext, cat: Catalog, name: str, version: int, sample: _GxSample) -> str:
    from transforms.validate.gx import run_frames

    with tempfile.TemporaryDirectory() as docs:
        run = run_frames(sample.frames(), docs_dir=docs, sample_rows=sample.limit, presampled=sample.sampled)
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
    """Validate `ctx.dataset` (NAME or NAME@VERSION), one part group (whole episodes with their steps) at a
    time, so memory follows the part size, not the dataset's. A group with errors is written again without
    its quarantined episodes; the others are shared with the new version. Commits a new version only when
    any rule found an error."""
    from transforms.validate import branches as branch_rules
    from transforms.validate.check import conform_parts, quarantine_rows, validate
    from transforms.validate.gx import SAMPLE_ROWS

    options = validate_options(ctx.options)
    gx_on = options.gx if options.gx is not None else os.environ.get("PIPELINES_GX", "1") != "0"
    lake = ctx.lake
    with open_catalog(lake, ctx.catalog_path, read_only=True) as cat:
        version = datasets.resolve(cat, ctx.dataset, lake)
    name = version.dataset
    groups = datasets.part_groups(version) or [{t: version.parts.get(t, []) for t in ("episodes", "steps")}]
    branches = datasets.read_table(lake, version, "branches")
    unchecked = set(branches.column("step_id").to_pylist())
    sample = _GxSample(options.sample_rows or SAMPLE_ROWS)
    parts: dict[str, list[str]] = {"episodes": [], "steps": []}
    kept_branch_ids: set[str] = set()
    quarantines, findings = [], []
    n_steps = n_kept_steps = bad_episodes = 0
    for group in groups:
        episodes, steps, contract_findings = conform_parts(_read(lake, group["episodes"]), _read(lake, group["steps"]),
                                                           options.contract)
        outcome = validate(episodes, steps, severity=options.severity, prior=contract_findings)
        quarantines.append(quarantine_rows(outcome, episodes, steps, ctx.run_id))
        mine = branches.filter(pc.is_in(branches["episode_id"], episodes["episode_id"]))
        kept, branch_findings = branch_rules.check_branches(mine, steps, outcome.bad_episodes, options.severity)
        quarantines.append(branch_rules.quarantine_rows(branch_findings, mine, episodes, ctx.run_id))
        kept_branch_ids.update(kept.column("step_id").to_pylist())
        unchecked.difference_update(mine.column("step_id").to_pylist())
        findings += [outcome.findings, branch_findings]
        n_steps, n_kept_steps, bad_episodes = (n_steps + steps.num_rows, n_kept_steps + outcome.steps.num_rows,
                                               bad_episodes + len(outcome.bad_episodes))
        if outcome.steps.num_rows != steps.num_rows or outcome.episodes.num_rows != episodes.num_rows:
            written = datasets.write_group(lake, name, {"episodes": outcome.episodes, "steps": outcome.steps},
                                           "validate")
            parts["episodes"].append(written["episodes"])
            parts["steps"].append(written["steps"])
        else:  # nothing removed: the group's parts are shared with the new version
            parts["episodes"] += group["episodes"]
            parts["steps"] += group["steps"]
        if gx_on:
            sample.add(outcome.episodes, outcome.steps)
    if unchecked:  # branches of episodes this version does not hold
        orphans = branches.filter(pc.is_in(branches["step_id"], pa.array(sorted(unchecked), pa.string())))
        _, branch_findings = branch_rules.check_branches(orphans, v1.STEPS.empty_table(), [], options.severity)
        quarantines.append(branch_rules.quarantine_rows(branch_findings, orphans, v1.EPISODES.empty_table(),
                                                        ctx.run_id))
        findings.append(branch_findings)
    nonempty = [f for f in findings if f.height]
    found = pl.concat(nonempty) if nonempty else None
    quarantine = pa.concat_tables(quarantines) if quarantines else v1.QUARANTINE.empty_table()
    dropped_branches = branches.num_rows - len(kept_branch_ids)
    replaced: dict[str, list[str]] = {}
    if parts["steps"] != version.parts.get("steps", []) or parts["episodes"] != version.parts.get("episodes", []):
        replaced.update(parts)
    if dropped_branches:
        kept = branches.filter(pc.is_in(branches["step_id"], pa.array(sorted(kept_branch_ids), pa.string())))
        replaced["branches"] = [datasets.write_part(lake, name, "branches", kept, "validate")]
    if quarantine.num_rows:
        replaced["quarantine"] = [*version.parts.get("quarantine", []),
                                  datasets.write_part(lake, name, "quarantine", quarantine, "validate")]
    with open_catalog(lake, ctx.catalog_path) as cat:
        number, created = version.version, False
        if replaced:
            number, created = datasets.commit(lake, cat, version, ctx.run_id, replaced,
                                              note=f"validate: {bad_episodes} episodes and {dropped_branches} "
                                                   "branches quarantined")
        counts: dict[str, dict[str, int]] = {}
        if found is not None:
            _record_findings(cat, ctx.run_id, name, number, found)
            for row in found.group_by("severity", "rule").len().iter_rows(named=True):
                counts.setdefault(row["severity"], {})[row["rule"]] = row["len"]
        errors, warnings = sum(counts.get("error", {}).values()), sum(counts.get("warning", {}).values())
        summary = (f"{n_steps:,} steps and {branches.num_rows:,} branches checked, {errors} errors in "
                   f"{bad_episodes} episodes and {dropped_branches} branches (quarantined), {warnings} warnings (kept)")
        if counts:
            summary += "; " + ", ".join(f"{rule} {n}" for sev in ("error", "warning")
                                        for rule, n in sorted(counts.get(sev, {}).items()))
        if gx_on:
            summary += "; " + _run_gx(ctx, cat, name, number, sample)
    ctx.log(f"validate {name} v{version.version}: {summary}")
    return StageResult(records_in=n_steps + branches.num_rows, records_out=n_kept_steps + len(kept_branch_ids),
                       quarantined=quarantine.num_rows, version=number if created else None, summary=summary)
