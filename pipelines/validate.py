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
from dataclasses import dataclass

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from catalog import Catalog
from pipelines import datasets
from pipelines import executor as executors
from pipelines.lake import Lake
from pipelines.runs import open_catalog
from pipelines.options import ValidateOptions, validate_options
from pipelines.stages import StageContext, StageResult
from schemas import v1


# Measured here (bench/memory.py, 2 cores): the rules read ~20 MB/s of parts (the executor's cost model)
BYTES_PER_S = 20 * (1 << 20)


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

    def merge(self, other: "_GxSample") -> None:
        for table, frames in other.parts.items():
            for frame in frames:
                self.parts[table].append(frame)
                if sum(f.height for f in self.parts[table]) > 2 * self.limit:
                    self.parts[table] = [pl.concat(self.parts[table]).sample(self.limit, seed=self.seed)]
                    self.sampled = True
        self.sampled = self.sampled or other.sampled

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


@dataclass
class ValidateJob:
    """What every group's validation shares."""

    lake_url: str
    dataset: str
    options: ValidateOptions
    run_id: str
    branch_parts: list[str]
    sample_rows: int | None  # GX sample kept per group; None: GX off


@dataclass
class GroupResult:
    group: dict[str, list[str]]  # the group's parts in the new version
    quarantine: pa.Table
    findings: list[pl.DataFrame]
    sample: _GxSample | None
    kept_branches: list[str]
    checked_branches: list[str]
    steps_in: int
    steps_out: int
    bad_episodes: int


def validate_group(group: dict[str, list[str]], job: ValidateJob) -> GroupResult:
    """One part group (whole episodes with their steps, and the branches of those episodes): the hot-path
    rules, the branch rules, and the group written again without its quarantined episodes (shared as is when
    none was)."""
    from transforms.validate import branches as branch_rules
    from transforms.validate.check import conform_parts, quarantine_rows, validate

    lake, options = Lake(job.lake_url), job.options
    episodes, steps, contract_findings = conform_parts(_read(lake, group["episodes"]), _read(lake, group["steps"]),
                                                       options.contract)
    outcome = validate(episodes, steps, severity=options.severity, prior=contract_findings)
    ids = episodes["episode_id"]
    mine = pa.concat_tables([pq.read_table(lake.absolute(p), filesystem=lake.fs,
                                           filters=pc.field("episode_id").isin(ids)) for p in job.branch_parts]
                            ) if job.branch_parts else v1.BRANCHES.empty_table()
    kept, branch_findings = branch_rules.check_branches(mine, steps, outcome.bad_episodes, options.severity)
    quarantine = pa.concat_tables([quarantine_rows(outcome, episodes, steps, job.run_id),
                                   branch_rules.quarantine_rows(branch_findings, mine, episodes, job.run_id)])
    if outcome.steps.num_rows != steps.num_rows or outcome.episodes.num_rows != episodes.num_rows:
        written = datasets.write_group(lake, job.dataset, {"episodes": outcome.episodes, "steps": outcome.steps},
                                       "validate")
        group = {t: [p] for t, p in written.items()}
    sample = None
    if job.sample_rows:
        sample = _GxSample(job.sample_rows)
        sample.add(outcome.episodes, outcome.steps)
    return GroupResult(group, quarantine, [outcome.findings, branch_findings], sample,
                       kept.column("step_id").to_pylist(), mine.column("step_id").to_pylist(), steps.num_rows,
                       outcome.steps.num_rows, len(outcome.bad_episodes))


def _digest(options: ValidateOptions, branch_parts: list[str]) -> str:
    """What a group's verdict depends on besides its own parts: the rules' code, the options, and the
    version's branches (a label run adds branches to old groups)."""
    import dataclasses
    import hashlib
    import pathlib

    import transforms.validate

    h = hashlib.sha256()
    for path in sorted(pathlib.Path(transforms.validate.__file__).parent.glob("*.py")) + [pathlib.Path(v1.__file__)]:
        h.update(path.read_bytes())
    h.update(orjson.dumps(dataclasses.asdict(options), option=orjson.OPT_SORT_KEYS))
    h.update("\n".join(sorted(branch_parts)).encode())
    return h.hexdigest()[:24]


def validate_stage(ctx: StageContext) -> StageResult:
    """Validate `ctx.dataset` (NAME or NAME@VERSION), one part group (whole episodes with their steps) per
    task on the executor, so memory follows the part size, not the dataset's. A group with errors is
    written again without its quarantined episodes; the others are shared with the new version. Groups an
    earlier validate found clean under the same rules, options and branches are shared without being read
    (after an incremental ingest only the new groups are). Commits a new version only when any rule found
    an error."""
    from transforms.validate import branches as branch_rules
    from transforms.validate.gx import SAMPLE_ROWS

    options = validate_options(ctx.options)
    gx_on = options.gx if options.gx is not None else os.environ.get("PIPELINES_GX", "1") != "0"
    lake = ctx.lake
    with open_catalog(lake, ctx.catalog_path, read_only=True) as cat:
        version = datasets.resolve(cat, ctx.dataset, lake)
        name = version.dataset
        digest = _digest(options, version.parts.get("branches", []))
        clean = {r[0] for r in cat.con.execute("SELECT stem FROM validated_groups WHERE dataset = ? AND digest = ?",
                                               [name, digest]).fetchall()}
    groups = datasets.part_groups(version) or [{t: version.parts.get(t, []) for t in ("episodes", "steps")}]
    todo = [g for g in groups if datasets.group_stem(g) not in clean]
    job = ValidateJob(lake.url, name, options, ctx.run_id, version.parts.get("branches", []),
                      (options.sample_rows or SAMPLE_ROWS) if gx_on else None)
    executor = executors.choose(ctx.executor, ctx.ray_address, datasets.group_sizes(lake, todo), BYTES_PER_S)
    results = dict(zip(map(datasets.group_stem, todo), executors.run_all(validate_group, todo, job, executor=executor,
                                                           ray_address=ctx.ray_address, name=datasets.group_stem)))
    ctx.log(f"validate {name} v{version.version}: {len(todo)} of {len(groups)} part groups to read on {executor}"
            + (f" ({len(groups) - len(todo)} found clean by an earlier run)" if len(todo) < len(groups) else ""))
    parts: dict[str, list[str]] = {"episodes": [], "steps": []}
    sample = _GxSample(job.sample_rows or SAMPLE_ROWS)
    quarantines, findings, kept_branch_ids, checked = [], [], set(), set()
    n_steps = n_kept_steps = bad_episodes = 0
    for group in groups:
        r = results.get(datasets.group_stem(group))
        if r is None:  # clean already: shared as is, its branches kept
            parts["episodes"] += group["episodes"]
            parts["steps"] += group["steps"]
            continue
        parts["episodes"] += r.group["episodes"]
        parts["steps"] += r.group["steps"]
        quarantines.append(r.quarantine)
        findings += r.findings
        kept_branch_ids.update(r.kept_branches)
        checked.update(r.checked_branches)
        n_steps, n_kept_steps, bad_episodes = n_steps + r.steps_in, n_kept_steps + r.steps_out, bad_episodes + r.bad_episodes
        if r.sample is not None:
            sample.merge(r.sample)
    branch_ids = datasets.read_table(lake, version, "branches", ["step_id", "episode_id"])
    all_ids = branch_ids["step_id"].to_pylist()
    shared = [g for g in groups if datasets.group_stem(g) not in results]
    if shared and branch_ids.num_rows:  # the branches of groups found clean are clean too (same digest)
        shared_ids = pa.concat_arrays([datasets.read_parts(lake, g["episodes"], "episodes", ["episode_id"])
                                       ["episode_id"].combine_chunks() for g in shared])
        of_shared = [b for b, yes in zip(all_ids, pc.is_in(branch_ids["episode_id"], shared_ids).to_pylist()) if yes]
        kept_branch_ids.update(of_shared)
        checked.update(of_shared)
    unchecked = set(all_ids) - checked
    if unchecked:  # branches of episodes this version does not hold
        branches = datasets.read_table(lake, version, "branches")
        orphans = branches.filter(pc.is_in(branches["step_id"], pa.array(sorted(unchecked), pa.string())))
        _, branch_findings = branch_rules.check_branches(orphans, v1.STEPS.empty_table(), [], options.severity)
        quarantines.append(branch_rules.quarantine_rows(branch_findings, orphans, v1.EPISODES.empty_table(),
                                                        ctx.run_id))
        findings.append(branch_findings)
    nonempty = [f for f in findings if f.height]
    found = pl.concat(nonempty) if nonempty else None
    quarantine = pa.concat_tables(quarantines) if quarantines else v1.QUARANTINE.empty_table()
    n_branches = len(all_ids)
    dropped_branches = n_branches - len(kept_branch_ids)
    replaced: dict[str, list[str]] = {}
    if parts["steps"] != version.parts.get("steps", []) or parts["episodes"] != version.parts.get("episodes", []):
        replaced.update(parts)
    if dropped_branches:
        branches = datasets.read_table(lake, version, "branches")
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
        new_digest = _digest(options, replaced.get("branches", version.parts.get("branches", [])))
        memo = [[name, new_digest, datasets.group_stem(r.group), ctx.run_id] for r in results.values()]
        memo += [[name, new_digest, s, ctx.run_id] for s in clean] if new_digest != digest else []
        if memo:
            cat.con.executemany("INSERT INTO validated_groups VALUES (?, ?, ?, ?)", memo)
        counts: dict[str, dict[str, int]] = {}
        if found is not None:
            _record_findings(cat, ctx.run_id, name, number, found)
            for row in found.group_by("severity", "rule").len().iter_rows(named=True):
                counts.setdefault(row["severity"], {})[row["rule"]] = row["len"]
        errors, warnings = sum(counts.get("error", {}).values()), sum(counts.get("warning", {}).values())
        summary = (f"{n_steps:,} steps and {n_branches:,} branches checked, {errors} errors in {bad_episodes} "
                   f"episodes and {dropped_branches} branches (quarantined), {warnings} warnings (kept)")
        if counts:
            summary += "; " + ", ".join(f"{rule} {n}" for sev in ("error", "warning")
                                        for rule, n in sorted(counts.get(sev, {}).items()))
        if len(todo) < len(groups):
            summary += f"; {len(todo)} of {len(groups)} part groups read, the others found clean before"
        if gx_on and todo:
            summary += "; " + _run_gx(ctx, cat, name, number, sample)
    ctx.log(f"validate {name} v{version.version}: {summary}")
    return StageResult(records_in=n_steps + n_branches, records_out=n_kept_steps + len(kept_branch_ids),
                       quarantined=quarantine.num_rows, version=number if created else None, summary=summary)
