"""The `validate` stage: run the hot-path rules over a dataset version, quarantine the episodes with errors,
commit the cleaned version, record findings and great-expectations results in the catalog, and write the
Data Docs report next to the dataset.

Stage options: `pipelines.infra.options.ValidateOptions` (`[stage_options.validate]` keys and the command's
flags), e.g. `contract = {droidbot = "freeze", default = "evolve"}`, `severity = {"terminal.cwd_discontinuity"
= "error"}`, `gx = false`, `sample_rows = 100000`.

Catalog tables (created with the catalog, `catalog.catalog.DDL`):
    validation_findings (run_id, dataset, version, rule, severity, findings, episodes, example_record,
                         example_reason): every rule that fired, warnings included
    validation_results  (run_id, dataset, version, suite, expectation, success, observed_value, rows,
                         sampled): one row per GX expectation
Data Docs: <lake>/datasets/<name>/validation/v<version>/index.html
"""

from __future__ import annotations

import functools
import io
import os
import tempfile
from dataclasses import dataclass, field

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from catalog import Catalog, Version
from pipelines.infra import datasets
from pipelines.infra.lake import Lake
from pipelines.infra.options import ValidateOptions, validate_options
from pipelines.infra.stage_runner import Outcome, PartsStage, Plan, StageRun, run_parts
from pipelines.stages import StageContext, StageResult
from schemas import v1


# Measured here (bench/memory.py, 2 cores): the rules read ~20 MB/s of parts (the executor's cost model)
BYTES_PER_S = 20 * (1 << 20)


def _read(lake: Lake, paths: list[str]) -> list[tuple[str, pa.Table]]:
    return [(p, pq.read_table(lake.absolute(p), filesystem=lake.fs)) for p in paths]


class _GxSample:
    """The scalar columns the GX suites read, at most `limit` rows and `SAMPLE_BYTES` per table whatever the
    dataset's size: a uniform sample, each row kept when the hash of its id falls under the table's `rate`,
    which is lowered (the rows held filtered to match) as groups are added. A row's fate depends on its id
    alone, so a group sampled apart (`merge`) and thinned rows agree, and a rerun draws the same sample.
    Thinning once the rows reached twice the bound held the dataset's first ~2x in full at 2 GB and a
    thinned 2x plus its copy at 10 GB (validate grew 619 -> 686 MB); the rate is now lowered at the bound,
    each frame filtered alone (no concatenated copy). A group's frame is copied out of the Arrow buffers it
    was flattened from: a zero-copy column keeps the whole decoded part alive (measured: ~150 MB of RSS per
    50 MB DroidBot part group, growing with the dataset), a copy keeps ~100 bytes a row."""

    IDS = {"episodes": "episode_id", "steps": "step_id"}

    def __init__(self, limit: int):
        from transforms.validate.gx import SAMPLE_BYTES, SAMPLE_SEED

        self.limit, self.max_bytes, self.seed = limit, SAMPLE_BYTES, SAMPLE_SEED
        self.parts: dict[str, list[pl.DataFrame]] = {"episodes": [], "steps": []}
        self.rates = {"episodes": 1.0, "steps": 1.0}

    @property
    def sampled(self) -> bool:
        return any(rate < 1.0 for rate in self.rates.values())

    def add(self, episodes: pa.Table, steps: pa.Table) -> None:
        from transforms.validate.gx import episode_frame, flatten_steps

        self._append("episodes", _owned(episode_frame(episodes)))
        self._append("steps", _owned(flatten_steps(steps)))

    def merge(self, other: "_GxSample") -> None:
        for table, frames in other.parts.items():
            if other.rates[table] < self.rates[table]:
                self._thin(table, other.rates[table])
            for frame in frames:
                self._append(table, frame)

    def _kept(self, table: str, frame: pl.DataFrame) -> pl.DataFrame:
        rate = self.rates[table]
        if rate >= 1.0 or frame.height == 0:
            return frame
        return frame.filter(pl.col(self.IDS[table]).hash(self.seed) < int(rate * 2.0 ** 64))

    def _thin(self, table: str, rate: float) -> None:
        self.rates[table] = rate
        self.parts[table] = [self._kept(table, f) for f in self.parts[table]]

    def _append(self, table: str, frame: pl.DataFrame) -> None:
        self.parts[table].append(self._kept(table, frame))
        rows = sum(f.height for f in self.parts[table])
        size = sum(f.estimated_size() for f in self.parts[table])
        if rows > self.limit or size > self.max_bytes:
            # to 80 % of the bound: each thinning makes room for a few more groups
            self._thin(table, self.rates[table] * 0.8 * min(self.limit / rows, self.max_bytes / max(size, 1)))

    def frames(self) -> dict[str, pl.DataFrame]:
        return {table: pl.concat(parts) if parts else pl.DataFrame() for table, parts in self.parts.items()}


def _owned(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` in buffers of its own (an IPC round trip: polars has no deep copy)."""
    buffer = io.BytesIO()
    frame.write_ipc(buffer)
    buffer.seek(0)
    return pl.read_ipc(buffer)


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
    branch_parts: list[str]  # every branches part: a group not yet found clean checks all its branches
    new_branch_parts: list[str]  # the parts no earlier validate checked: all a clean group checks
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


def validate_group(item: tuple[dict[str, list[str]], bool], job: ValidateJob) -> GroupResult:
    """One part group (whole episodes with their steps, and the branches of those episodes): the hot-path
    rules, the branch rules, and the group written again without its quarantined episodes (shared as is when
    none was). A group found clean before (`item` = (group, True)) has only its new branches checked, against
    the few step columns they need."""
    from transforms.validate import branches as branch_rules
    from transforms.validate.check import conform_parts, quarantine_rows, validate

    group, clean = item
    lake, options = Lake(job.lake_url), job.options
    if clean:
        episodes = datasets.read_parts(lake, group["episodes"], "episodes", ["episode_id", "source_uri"])
        steps = datasets.read_parts(lake, group["steps"], "steps", ["step_id", "episode_id", "step_index", "origin"])
        outcome, bad, quarantine, findings = None, [], [], []
    else:
        episodes, steps, prior = conform_parts(_read(lake, group["episodes"]), _read(lake, group["steps"]),
                                               options.contract)
        outcome = validate(episodes, steps, severity=options.severity, prior=prior)
        bad, quarantine, findings = outcome.bad_episodes, [quarantine_rows(outcome, episodes, steps, job.run_id)], \
            [outcome.findings]
    parts = job.new_branch_parts if clean else job.branch_parts
    mine = datasets.read_branches_of(lake, parts, episodes["episode_id"])
    kept, branch_findings = branch_rules.check_branches(mine, steps, bad, options.severity)
    quarantine.append(branch_rules.quarantine_rows(branch_findings, mine, episodes, job.run_id))
    findings.append(branch_findings)
    sample = None
    if outcome is not None:
        if outcome.steps.num_rows != steps.num_rows or outcome.episodes.num_rows != episodes.num_rows:
            written = datasets.write_group(lake, job.dataset, {"episodes": outcome.episodes,
                                                               "steps": outcome.steps}, "validate")
            group = {t: [p] for t, p in written.items()}
        if job.sample_rows:
            sample = _GxSample(job.sample_rows)
            sample.add(outcome.episodes, outcome.steps)
    return GroupResult(group, pa.concat_tables(quarantine), findings, sample, kept.column("step_id").to_pylist(),
                       mine.column("step_id").to_pylist(), 0 if clean else steps.num_rows,
                       0 if clean else outcome.steps.num_rows, len(bad))


def _digest(options: ValidateOptions) -> str:
    """What a verdict depends on besides the data: the rules' code and the options that change verdicts (the
    contract and severities; not GX's)."""
    import hashlib
    import pathlib

    import transforms.validate

    h = hashlib.sha256()
    for path in sorted(pathlib.Path(transforms.validate.__file__).parent.glob("*.py")) + [pathlib.Path(v1.__file__)]:
        h.update(path.read_bytes())
    h.update(orjson.dumps({"contract": options.contract, "severity": options.severity}, option=orjson.OPT_SORT_KEYS))
    return h.hexdigest()[:24]


def validate_stage(ctx: StageContext) -> StageResult:
    """Validate `ctx.dataset` (NAME or NAME@VERSION), one part group (whole episodes with their steps) per
    task on the executor, so memory follows the part size, not the dataset's. A group with errors is
    written again without its quarantined episodes; the others are shared with the new version. Part groups
    and branches parts an earlier validate found clean under the same rules and options are not checked again
    (after an incremental ingest only the new groups are read; after a label run only the new branches).
    Commits a new version only when any rule found an error."""
    return run_parts(ctx, VALIDATE)


@dataclass
class _Checking:
    """One validate run's own, from its plan to its summary."""

    gx_on: bool
    digest: str  # `_digest` of the options: the memo's key
    clean: set[str]  # group stems and branches parts an earlier run found clean under the same digest
    sample: _GxSample  # the groups' GX samples, folded in as they end
    n_read: int  # groups read in full (the others were found clean before)
    results: dict[str, GroupResult] = field(default_factory=dict)  # group stem -> its result
    verdicts: _Verdicts | None = None
    summary: str = ""


def _plan(run: StageRun, cat: Catalog) -> Plan:
    """The groups to check: all but those an earlier validate found clean under the same rules and options
    (`validated_groups`), which are still read for their new branches when there are any."""
    from transforms.validate.gx import SAMPLE_ROWS

    options, name = run.options, run.dataset
    gx_on = options.gx if options.gx is not None else os.environ.get("PIPELINES_GX", "1") != "0"
    digest = _digest(options)
    clean = {r[0] for r in cat.con.execute("SELECT stem FROM validated_groups WHERE dataset = ? AND digest = ?",
                                           [name, digest]).fetchall()}
    branch_parts = run.version.parts.get("branches", [])
    new_branch_parts = [p for p in branch_parts if p not in clean]
    todo = [(g, datasets.group_stem(g) in clean) for g in run.groups]
    todo = [(g, known) for g, known in todo if not known or new_branch_parts]
    job = ValidateJob(run.ctx.lake.url, name, options, run.ctx.run_id, branch_parts, new_branch_parts,
                      (options.sample_rows or SAMPLE_ROWS) if gx_on else None)
    checking = _Checking(gx_on, digest, clean, _GxSample(job.sample_rows or SAMPLE_ROWS),
                         sum(not known for _, known in todo))
    return Plan(todo, job, [g for g, known in todo if not known], f"validate {name}",
                name=lambda item: datasets.group_stem(item[0]), fold=functools.partial(_fold_sample, checking.sample),
                state=checking)


def _fold_sample(sample: _GxSample, r: GroupResult) -> GroupResult:
    """A group's GX sample into the run's as the group ends (in group order, thinned as it grows): each
    group's whole sample, held until the last group, grew with the dataset (~300 MB at 10 GB)."""
    if r.sample is not None:
        sample.merge(r.sample)
        r.sample = None
    return r


def _opening(run: StageRun, results: list[GroupResult]) -> str:
    job = run.plan.job
    return (f"{run.plan.state.n_read} of {len(run.groups)} part groups and {len(job.new_branch_parts)} "
            f"of {len(job.branch_parts)} branches parts to check, on {run.executor}")


def _reduce(run: StageRun, results: list[GroupResult]) -> Outcome:
    """The verdicts over the whole version; the parts a new version replaces (none when no rule found an
    error)."""
    checking, job = run.plan.state, run.plan.job
    checking.results = dict(zip((datasets.group_stem(g) for g, _ in run.plan.items), results))
    verdicts = checking.verdicts = _verdicts(run.ctx.lake, run.version, run.groups, checking.results,
                                             checking.clean, job)
    return Outcome(_replaced_parts(run.ctx.lake, run.version, verdicts),
                   note=f"validate: {verdicts.bad_episodes} episodes and {verdicts.dropped_branches} branches "
                        "quarantined")


def _record(run: StageRun, cat: Catalog, number: int, outcome: Outcome) -> None:
    """The memo of what was found clean, the findings, and the GX suites with their report (from an earlier
    run when every group was found clean before and that run reported this version)."""
    checking, job, ctx, name = run.plan.state, run.plan.job, run.ctx, run.dataset
    verdicts = checking.verdicts
    memo = {datasets.group_stem(r.group) for r in checking.results.values()}
    memo |= set(outcome.replaced.get("branches", job.branch_parts)) - checking.clean
    if memo:
        cat.con.executemany("INSERT INTO validated_groups VALUES (?, ?, ?, ?)",
                            [[name, checking.digest, stem, ctx.run_id] for stem in sorted(memo)])
    if verdicts.found is not None:
        _record_findings(cat, ctx.run_id, name, number, verdicts.found)
    summary = _summary(verdicts, checking.n_read, run.groups, job.new_branch_parts, job.branch_parts)
    reported = checking.gx_on and cat.con.execute(  # asked only with GX on
        "SELECT count(*) FROM validation_results WHERE dataset = ? AND version = ?", [name, number]).fetchone()[0]
    if checking.gx_on and not checking.n_read and reported:
        summary += f"; GX report of v{number} from an earlier run"
    elif checking.gx_on:
        if not checking.n_read:  # every group was found clean before: the report still covers this version
            for group in run.groups:
                checking.sample.add(datasets.read_parts(ctx.lake, group["episodes"], "episodes"),
                                    datasets.read_parts(ctx.lake, group["steps"], "steps"))
        summary += "; " + _run_gx(ctx, cat, name, number, checking.sample)
    checking.summary = summary


def _finish(run: StageRun, outcome: Outcome, number: int, created: bool) -> StageResult:
    verdicts, summary = run.plan.state.verdicts, run.plan.state.summary
    run.ctx.log(f"validate {run.dataset} v{run.version.version}: {summary}")
    return StageResult(records_in=verdicts.n_steps + verdicts.n_checked_branches,
                       records_out=verdicts.n_kept_steps + len(verdicts.kept_branch_ids),
                       quarantined=verdicts.quarantine.num_rows, version=number if created else None, summary=summary)


VALIDATE = PartsStage("validate", validate_group, BYTES_PER_S, _plan, _reduce, _finish, options=validate_options,
                      opening=_opening, record=_record)


@dataclass
class _Verdicts:
    """A run's verdicts over the whole version: the groups' results put together, and the branches no group
    checked."""

    parts: dict[str, list[str]]  # the new version's episodes and steps parts
    found: pl.DataFrame | None  # every finding, warnings included; None when no rule fired
    quarantine: pa.Table  # this run's quarantine rows (episodes, steps and branches)
    kept_branch_ids: set[str]  # the branches the new version keeps
    dropped_branches: int  # the branches quarantined
    n_checked_branches: int  # branches this run checked (of the groups read, and orphans)
    n_steps: int  # steps this run checked
    n_kept_steps: int
    bad_episodes: int


def _verdicts(lake: Lake, version: Version, groups: list[dict[str, list[str]]], results: dict[str, GroupResult],
              clean: set[str], job: ValidateJob) -> _Verdicts:
    """The groups' results in group order (a group not read is shared as is), and the branches no group
    checked: those of parts found clean before are kept, the new ones of episodes the version does not hold
    are checked alone."""
    from transforms.validate import branches as branch_rules

    parts: dict[str, list[str]] = {"episodes": [], "steps": []}
    quarantines, findings, kept_branch_ids, checked = [], [], set(), set()
    n_steps = n_kept_steps = bad_episodes = 0
    for group in groups:
        r = results.get(datasets.group_stem(group))
        if r is None:  # clean already and no new branches: shared as is
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
    all_ids = set(datasets.read_table(lake, version, "branches", ["step_id"])["step_id"].to_pylist())
    clean_ids = set(datasets.read_parts(lake, [p for p in job.branch_parts if p in clean], "branches",
                                        ["step_id"])["step_id"].to_pylist())
    kept_branch_ids |= clean_ids - checked  # checked before, and not affected by this run's verdicts
    unchecked = all_ids - checked - clean_ids
    if unchecked:  # new branches of episodes this version does not hold
        branches = datasets.read_parts(lake, job.new_branch_parts, "branches")
        orphans = branches.filter(pc.is_in(branches["step_id"], pa.array(sorted(unchecked), pa.string())))
        _, branch_findings = branch_rules.check_branches(orphans, v1.STEPS.empty_table(), [], job.options.severity)
        quarantines.append(branch_rules.quarantine_rows(branch_findings, orphans, v1.EPISODES.empty_table(),
                                                        job.run_id))
        findings.append(branch_findings)
        kept_branch_ids |= unchecked - set(branch_findings.filter(pl.col("severity") == "error")["step_id"].to_list())
    nonempty = [f for f in findings if f.height]
    found = pl.concat(nonempty) if nonempty else None
    quarantine = pa.concat_tables(quarantines) if quarantines else v1.QUARANTINE.empty_table()
    return _Verdicts(parts, found, quarantine, kept_branch_ids, len(all_ids) - len(kept_branch_ids),
                     len(checked | unchecked), n_steps, n_kept_steps, bad_episodes)


def _replaced_parts(lake: Lake, version: Version, verdicts: _Verdicts) -> dict[str, list[str]]:
    """The parts the new version replaces (none: no new version): the episodes and steps when a group was
    written again, the branches without the quarantined ones, the quarantine with this run's rows added.
    The new branches and quarantine parts are written here."""
    name = version.dataset
    replaced: dict[str, list[str]] = {}
    parts = verdicts.parts
    if parts["steps"] != version.parts.get("steps", []) or parts["episodes"] != version.parts.get("episodes", []):
        replaced.update(parts)
    if verdicts.dropped_branches:
        branches = datasets.read_table(lake, version, "branches")
        kept = branches.filter(pc.is_in(branches["step_id"], pa.array(sorted(verdicts.kept_branch_ids), pa.string())))
        replaced["branches"] = [datasets.write_part(lake, name, "branches", kept, "validate")]
    if verdicts.quarantine.num_rows:
        replaced["quarantine"] = [*version.parts.get("quarantine", []),
                                  datasets.write_part(lake, name, "quarantine", verdicts.quarantine, "validate")]
    return replaced


def _summary(verdicts: _Verdicts, n_read: int, groups: list[dict[str, list[str]]], new_branch_parts: list[str],
             branch_parts: list[str]) -> str:
    """The run's summary line without its GX part: what was checked, found and quarantined, each rule's
    count, and what was not read again."""
    counts: dict[str, dict[str, int]] = {}
    if verdicts.found is not None:
        for row in verdicts.found.group_by("severity", "rule").len().iter_rows(named=True):
            counts.setdefault(row["severity"], {})[row["rule"]] = row["len"]
    errors, warnings = sum(counts.get("error", {}).values()), sum(counts.get("warning", {}).values())
    summary = (f"{verdicts.n_steps:,} steps and {verdicts.n_checked_branches:,} branches checked, {errors} errors "
               f"in {verdicts.bad_episodes} episodes and {verdicts.dropped_branches} branches (quarantined), "
               f"{warnings} warnings (kept)")
    if counts:
        summary += "; " + ", ".join(f"{rule} {n}" for sev in ("error", "warning")
                                    for rule, n in sorted(counts.get(sev, {}).items()))
    if n_read < len(groups) or len(new_branch_parts) < len(branch_parts):
        summary += (f"; {n_read} of {len(groups)} part groups and {len(new_branch_parts)} of {len(branch_parts)} "
                    "branches parts read, the others found clean before")
    return summary
