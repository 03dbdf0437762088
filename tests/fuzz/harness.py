"""Run fuzz variants: each in a child process (forked from a server that has the project imported) under
`RLIMIT_AS` and a timeout, through `run_ingest(ingest-all, ingest stage only)`; then classify.

    results = run_variants(variants(full), jobs=2)      # [Result]
    for r in results: print(r.variant.name, r.problems)

Conservation is checked against the intact sample ingested the same way: a variant may lose steps only with a
quarantine row (else `silent_loss`), and a variant that damages one record may lose at most that record's
steps (`Variant.max_loss`, else `unit_lost`).
"""

from __future__ import annotations

import dataclasses
import glob
import json
import multiprocessing
import os
import resource
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.fuzz.variants import PAYLOAD_MARKER, SAMPLES, Variant

MEMORY_LIMIT = 6 << 30  # RLIMIT_AS of a child: address space (pyarrow and duckdb reserve ~2 GiB of it idle)
RSS_LIMIT_MB = 2048  # what a variant may really use: peak resident memory
TIMEOUT_S = 90
PROBLEMS = ("hang", "killed", "over_2gb", "failed_task", "silent_loss", "unit_lost", "unnamed_record",
            "wrong_reason", "payload_ran")


@dataclass
class Outcome:
    """What one child reported (or what became of it)."""

    status: str = "ok"  # ok | hang | killed | error
    error: str | None = None
    steps: int = 0
    episodes: int = 0
    quarantined: int = 0
    tasks_failed: int = 0
    ignored: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)  # ingest quarantine rows: rule, location, record_id, line, reason
    rss_mb: float = 0.0
    seconds: float = 0.0


@dataclass
class Result:
    variant: Variant
    outcome: Outcome
    baseline: Outcome
    problems: list[str]
    unclaimed: bool


def _child(input_path: str, lake: str, out: str, memory_limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    started = time.perf_counter()
    report: dict = {}
    try:
        import pyarrow.parquet as pq

        from pipelines.infra import definition
        from pipelines.infra.runner import run_ingest

        defn = dataclasses.replace(definition.load("ingest-all"), stages=["ingest"])
        r = run_ingest(defn, lake, [input_path], executor="local", progress=False, log=lambda line: None)
        rows = []
        for part in sorted(glob.glob(os.path.join(lake, "datasets", "*", "parts", "quarantine", "*.parquet"))):
            rows += pq.read_table(part, columns=["rule", "location", "record_id", "line", "reason"]).to_pylist()
        report = dict(status="ok" if r.status == "success" else "error", steps=r.steps, episodes=r.episodes,
                      quarantined=r.quarantined, tasks_failed=r.tasks_failed,
                      ignored=[str(getattr(i, "path", i)) for i in r.ignored],
                      rows=[{**row, "reason": (row["reason"] or "")[:300]} for row in rows],
                      error=None if r.status == "success" else "; ".join(r.messages[-3:])[:500])
    except MemoryError:
        report = dict(status="killed", error="MemoryError under RLIMIT_AS")
    except BaseException as e:  # the harness must report, whatever happened
        report = dict(status="error", error=f"{type(e).__name__}: {e}"[:500])
    report["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report["seconds"] = time.perf_counter() - started
    with open(out, "w") as f:
        json.dump(report, f)


def _context():
    ctx = multiprocessing.get_context("forkserver")
    # the server imports the project once; each variant's child is a fork of it (no import per variant)
    ctx.set_forkserver_preload(["tests.fuzz.harness", "pipelines.infra.runner", "pipelines.infra.definition",
                                "pyarrow.parquet", "numpy"])
    return ctx


@dataclass
class _Running:
    key: str
    proc: multiprocessing.Process
    out: Path
    started: float
    timeout: float


def _prepare(sample: str, variant: Variant | None, scratch: Path) -> Path:
    """A copy of the sample (damaged by the variant) alone in a fresh input folder."""
    src = SAMPLES / sample
    dst = scratch / "input" / src.name
    dst.parent.mkdir(parents=True)
    if src.is_dir():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("PROVENANCE.md"))
    else:
        shutil.copy(src, dst)
    if variant is not None:
        variant.make(dst)
    return dst


def _run_all(jobs_in: list[tuple[str, Path, Path]], jobs: int, timeout: float,
             memory_limit: int) -> dict[str, Outcome]:
    """Run (key, input path, scratch dir) children, at most `jobs` at a time; Outcome by key."""
    ctx = _context()
    pending, running, done = list(jobs_in), [], {}
    while pending or running:
        while pending and len(running) < jobs:
            key, input_path, scratch = pending.pop(0)
            out = scratch / "report.json"
            proc = ctx.Process(target=_child, args=(str(input_path), str(scratch / "lake"), str(out), memory_limit))
            proc.start()
            running.append(_Running(key, proc, out, time.perf_counter(), timeout))
        time.sleep(0.05)
        for job in list(running):
            elapsed = time.perf_counter() - job.started
            if job.proc.is_alive() and elapsed < job.timeout:
                continue
            if job.proc.is_alive():
                job.proc.kill()
                job.proc.join()
                done[job.key] = Outcome(status="hang", error=f"still running after {job.timeout:.0f} s",
                                        seconds=elapsed)
            else:
                job.proc.join()
                if job.out.exists():
                    done[job.key] = Outcome(**json.loads(job.out.read_text()))
                else:
                    done[job.key] = Outcome(status="killed", error=f"exit code {job.proc.exitcode}", seconds=elapsed)
            running.remove(job)
    return done


def classify(variant: Variant, got: Outcome, baseline: Outcome, input_path: Path) -> tuple[list[str], bool]:
    """(problems, unclaimed) of one variant's outcome against the intact sample's."""
    problems = []
    if got.status == "hang":
        problems.append("hang")
    if got.status == "killed":
        problems.append("killed")
    if got.rss_mb > RSS_LIMIT_MB:
        problems.append("over_2gb")
    if got.tasks_failed or got.status == "error":
        problems.append("failed_task")
    if variant.cls == "pickle_reduce" and PAYLOAD_MARKER.exists():  # only that variant carries the payload
        problems.append("payload_ran")
        PAYLOAD_MARKER.unlink()
    target = str(input_path / variant.target) if variant.target else str(input_path)
    unclaimed = target in got.ignored and target.replace(str(input_path), "") not in \
        [p.replace(str(input_path), "") for p in baseline.ignored]
    if got.status == "ok":
        lost = baseline.steps - got.steps
        if lost > 0 and not got.rows and not unclaimed:
            problems.append("silent_loss")
        if variant.scope == "record" and lost > variant.max_loss:
            problems.append("unit_lost")
        if variant.scope == "record" and lost > 0 and \
                not any(row["record_id"] or row["line"] is not None for row in got.rows):
            problems.append("unnamed_record")  # a record was lost, but no row says which one
        if variant.expect and not any(variant.expect in f"{row['rule']} {row['reason']}" for row in got.rows):
            problems.append("wrong_reason")
    return problems, unclaimed


def run_variants(variants: list[Variant], jobs: int = 2, timeout: float = TIMEOUT_S,
                 memory_limit: int = MEMORY_LIMIT, scratch_root: str | None = None) -> list[Result]:
    """Ingest every variant (and each sample intact, as the baseline) in children; one Result per variant."""
    root = Path(tempfile.mkdtemp(prefix="trajforge-fuzz-", dir=scratch_root))
    try:
        samples = sorted({v.sample for v in variants})
        work: list[tuple[str, Path, Path]] = []
        inputs: dict[str, Path] = {}
        for i, sample in enumerate(samples):
            scratch = root / f"base{i}"
            work.append((f"base:{sample}", _prepare(sample, None, scratch), scratch))
        for i, variant in enumerate(variants):
            scratch = root / f"v{i}"
            inputs[variant.name] = _prepare(variant.sample, variant, scratch)
            work.append((variant.name, inputs[variant.name], scratch))
        outcomes = _run_all(work, jobs, timeout, memory_limit)
        results = []
        for variant in variants:
            baseline, got = outcomes[f"base:{variant.sample}"], outcomes[variant.name]
            problems, unclaimed = classify(variant, got, baseline, inputs[variant.name])
            results.append(Result(variant, got, baseline, problems, unclaimed))
        return results
    finally:
        shutil.rmtree(root, ignore_errors=True)


def summary(results: list[Result]) -> str:
    """One line per variant with a problem, then the totals by problem."""
    lines = []
    for r in results:
        if r.problems:
            o = r.outcome
            lines.append(f"{','.join(r.problems):24s} {r.variant.name}  (steps {o.steps}/{r.baseline.steps}, "
                         f"rows {len(o.rows)}, rss {o.rss_mb:.0f} MB, {o.seconds:.1f} s) {o.error or ''}")
    totals = {p: sum(p in r.problems for r in results) for p in PROBLEMS}
    unclaimed = sum(r.unclaimed for r in results)
    peak = max((r.outcome.rss_mb for r in results), default=0)
    slowest = max((r.outcome.seconds for r in results), default=0)
    lines.append(f"{len(results)} variants: " + ", ".join(f"{p} {n}" for p, n in totals.items())
                 + f"; unclaimed {unclaimed}; peak RSS {peak:.0f} MB; slowest {slowest:.1f} s")
    return "\n".join(lines)
