"""A cost model to plan a corpus with: what ingest -> validate -> dedup -> export would cost for N trajectories
like the ones in a sample of your input.

    .venv/bin/python bench/estimate.py --input /data/traces --trajectories 10000000 [--cores 64] [--sample-mb 64]
    .venv/bin/python bench/estimate.py                      # the bundled mix (samples/), 10M trajectories

It draws a sample of the input's units (whole runs, sessions, trial folders: what the readers claim, chosen at
random with a fixed seed up to `--sample-mb`), then runs every stage of `bench/scale.py` (ingest + validate,
validate --gx, dedup, export cpt / sft / rl, label planning), each in a fresh interpreter on the in-process
executor (one core), over the sample copied `--small` and `--large` times (each copy in its own folder, so its
trajectories are new ones). The difference between the two runs is what the added trajectories cost: a
stage's fixed costs (interpreter start, imports, the catalog, great-expectations' suite setup) fall out, and
what is left, per trajectory, is multiplied up. It prints, per stage: CPU seconds per 1,000 trajectories, the
projected core-hours for N, the wall hours on `--cores` cores if the stage's per-part work spreads over them
(the driver's reduce does not: its share is shown), and the peak memory of one worker (a task of `--task-mb`;
the stages' memory is bounded by the part, not the dataset: bench/scale.py), and the lake's bytes per
trajectory (what the object store or shared filesystem holds).

Ray's object store carries only the tasks' arguments and small results (part paths, counts, signatures per
episode for dedup): every part is read and written by the task itself, so the lake traffic below is the
traffic. The sample's copies are exact duplicates of each other, which dedup would remove: it runs last here,
so that the exports and the labeler's planning are priced on every copy.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.scale import STAGES, measure  # noqa: E402

# stages whose per-part work the executor spreads over the cores; the rest of their time is the driver's
SPREAD = {"ingest + validate": 0.95, "validate --gx": 0.9, "dedup": 0.7, "export cpt": 0.85, "export sft": 0.85,
          "export rl": 0.85, "label (plan)": 0.5}


def sample_units(inputs: list[str], pipeline: str, sample_mb: float, seed: int) -> list[tuple[str, str, int]]:
    """(path, its path under the input root, bytes) of a random sample of the input's units up to sample_mb."""
    from pipelines.infra import definition
    from pipelines.infra.plan import find_units

    units, _ = find_units(inputs, definition.load(pipeline).formats)
    random.Random(seed).shuffle(units)
    chosen, total = [], 0
    for u in units:
        if total and total + u.size > sample_mb * 1e6:
            continue
        chosen.append((u.path, os.path.relpath(u.path, u.root), u.size))
        total += u.size
    if not chosen:
        raise SystemExit(f"no unit of {inputs} is read by {pipeline}: nothing to estimate from")
    return chosen


def lay_copies(units: list[tuple[str, str, int]], out: Path, copies: int) -> None:
    for i in range(copies):
        for path, rel, _ in units:
            target = out / f"copy-{i:03d}" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if os.path.isdir(path) else shutil.copy2)(path, target)


def counts(lake: Path) -> tuple[int, int]:
    """(episodes, steps) of the lake's `all` dataset."""
    import duckdb

    with duckdb.connect(str(lake / "catalog.duckdb"), read_only=True) as con:
        return con.execute("SELECT (SELECT count(*) FROM episodes), (SELECT count(*) FROM steps)").fetchall()[0]


def parts_bytes(lake: Path) -> int:
    """Bytes of the dataset's parts and the blob store, the catalog and reports left out."""
    files = [*lake.glob("datasets/*/parts/**/*"), *lake.glob("blobs/**/*")]
    return sum(p.stat().st_size for p in files if p.is_file())


def run_size(units, copies: int, work: Path, task_mb: float, stages: list[str]) -> dict:
    """Seconds and peak MB of every stage over `copies` copies of the sample, and the lake's counts and size."""
    corpus, lake, out = work / f"in-{copies}", work / f"lake-{copies}", work / f"out-{copies}"
    lay_copies(units, corpus, copies)
    found = {}
    for name in stages:
        argv = [a.format(corpus=corpus, out=out, task_mb=task_mb) for a in STAGES[name]]
        found[name] = measure(argv, lake)
        if name == "ingest + validate":
            found["episodes"], found["steps"] = counts(lake)
            found["parts_bytes"] = parts_bytes(lake)
        print(f"  x{copies} {name:18s} {found[name][0]:8.1f} s {found[name][1]:8.0f} MB", file=sys.stderr, flush=True)
    return found


def report(small: dict, large: dict, stages: list[str], args) -> list[str]:
    added = large["episodes"] - small["episodes"]
    if added <= 0:
        raise SystemExit("the larger run holds no more trajectories than the smaller one: nothing to measure")
    n = args.trajectories
    lines = [f"{n:,.0f} trajectories like the sample's ({large['episodes'] / args.large:,.0f} per copy, "
             f"{large['steps'] / max(large['episodes'], 1):.1f} steps each); {args.cores} cores; one worker per core, "
             f"tasks of {args.task_mb:g} MB", "",
             f"{'stage':20s} {'s / 1k traj':>12s} {'core-hours':>11s} {'wall h':>8s} {'driver':>7s} "
             f"{'worker peak MB':>15s}"]
    total_core_h = total_wall_h = 0.0
    for name in stages:
        per_traj = max(large[name][0] - small[name][0], 0.0) / added
        core_h = per_traj * n / 3600
        wall_h = core_h * (SPREAD[name] / args.cores + (1 - SPREAD[name]))
        total_core_h, total_wall_h = total_core_h + core_h, total_wall_h + wall_h
        lines.append(f"{name:20s} {per_traj * 1000:12.2f} {core_h:11,.1f} {wall_h:8,.1f} {1 - SPREAD[name]:7.0%} "
                     f"{max(small[name][1], large[name][1]):15,.0f}")
    # blobs are stored once by content, so copies share their screenshots: the smaller run's bytes per trajectory
    # are the measure, exact with one copy (the default --small 1)
    lake_per_traj = small["parts_bytes"] / max(small["episodes"], 1)
    lines += [f"{'all stages':20s} {'':12s} {total_core_h:11,.1f} {total_wall_h:8,.1f}", "",
              f"lake: {lake_per_traj / 1e3:,.1f} kB per trajectory after ingest -> {lake_per_traj * n / 1e12:,.2f} TB "
              "for the corpus (exports add their shards)",
              f"measured on {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} (1 min) at the end: a busy machine "
              "makes every figure larger"]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", action="append", help="input folder(s) to sample (default: the bundled samples)")
    ap.add_argument("--pipeline", default="ingest-all", help="the pipeline whose formats read the input")
    ap.add_argument("--trajectories", type=float, default=10e6, help="corpus size to project to (default 10M)")
    ap.add_argument("--cores", type=int, default=64, help="cores of the cluster to project wall time on")
    ap.add_argument("--sample-mb", type=float, default=64, help="MB of input units to sample (default 64)")
    ap.add_argument("--small", type=int, default=1, help="copies of the sample in the smaller run")
    ap.add_argument("--large", type=int, default=3, help="copies of the sample in the larger run")
    ap.add_argument("--task-mb", type=float, default=64, help="input MB per ingest task (the part size)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", help="folder for the copies and lakes (default: a temporary folder)")
    args = ap.parse_args()
    stages = [s for s in STAGES if s != "dedup"] + ["dedup"]  # last: the copies are duplicates of each other
    units = sample_units(args.input or [str(REPO / "samples")], args.pipeline, args.sample_mb, args.seed)
    print(f"sample: {len(units)} units, {sum(u[2] for u in units) / 1e6:,.1f} MB", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        small = run_size(units, args.small, Path(tmp), args.task_mb, stages)
        large = run_size(units, args.large, Path(tmp), args.task_mb, stages)
    print("\n".join(report(small, large, stages, args)))


if __name__ == "__main__":
    main()
