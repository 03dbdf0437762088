"""The scale proof: a mixed corpus through every stage at two sizes, each stage in a fresh process.

    .venv/bin/python bench/scale.py [--sizes 2000,10000] [--task-mb 64] [--work DIR]

For each size (MB of input) it writes a corpus of 100 MB batches, each alike: every bundled sample (samples/)
copied once, so that every reader and the dedup of exact copies take part, and synthetic DroidBot runs
(bench/android_corpus.py, varied per run) for the rest. Then, in order, each in a fresh interpreter on the in-process
executor (one core for the work, as the limits assume):

    ingest (ingest-all: ingest then validate, great-expectations included) -> validate --gx -> dedup
    -> export cpt / sft / rl -> label planning (--dry-run, every branch point)

and prints per stage the seconds, MB/s of input, and the peak RSS of the process tree (the stage's process and
the largest of its children), then the ratio of each stage's peak between the largest and the smallest size
(goal: every stage <= 2 GB, <= 1.1x from 2 GB to 10 GB), and ingest's rate against its limit (orjson parse +
zstd Parquet write of the same JSON, `bench/ingest.py`; goal >= 0.85), with and without the validate stage (its
seconds from the catalog's `stage_stats`), and the ceiling on that ratio set by the work ingest does beyond the
limit (screen text, content digest, secret scan, each timed alone). The exports run with `--shard-mb 64`:
a Parquet shard is built in memory, so the shard size is part of the part size.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.android_corpus import write_corpus  # noqa: E402
from bench.ingest import ceiling, work_beyond_limit  # noqa: E402

STAGES = {
    "ingest + validate": ["run", "ingest-all", "--input", "{corpus}", "--task-mb", "{task_mb}", "--executor", "local",
                          "-q"],
    "validate --gx": ["validate", "all", "--gx", "--contract", "default=evolve", "--executor", "local"],
    "dedup": ["dedup", "all", "--executor", "local"],
    "export cpt": ["export", "cpt", "all", "--out", "{out}/cpt", "--shard-mb", "64", "--executor", "local"],
    "export sft": ["export", "sft", "all", "--out", "{out}/sft", "--shard-mb", "64", "--executor", "local"],
    "export rl": ["export", "rl", "all", "--out", "{out}/rl", "--shard-mb", "64", "--executor", "local"],
    "label (plan)": ["label", "all", "--model", "m", "--dry-run", "--branch-points", "every"],
}
_MEASURE = ("import sys, time; from pipelines import cli; from bench.peak import tree_peak_mb; "
            "sys.stdout = open('/dev/null', 'w'); t = time.perf_counter(); code = cli.main(%r); "
            "sys.stderr.write('STATS %%f %%f\\n' %% (time.perf_counter() - t, tree_peak_mb())); sys.exit(code)")


def write_mixed_corpus(out: Path, megabytes: float) -> int:
    """Batches of 100 MB, each a copy of every bundled sample beside DroidBot runs; returns the bytes written.
    Every batch is alike, so every ingest task (packed in path order) holds the same mix whatever the size:
    with the copies in one folder of their own, the parts of bundled samples (screenshots, HAR bodies, casts:
    the heaviest per MB to validate, scrub and render) filled a whole task only at the larger sizes, and the
    growth measured between sizes was that part's, not the dataset's."""
    total, runs = 0, 0
    for i in range(max(1, int(megabytes // 100))):
        batch = out / f"batch-{i:04d}"
        shutil.copytree(REPO / "samples", batch / "samples")
        copied = sum(p.stat().st_size for p in (batch / "samples").rglob("*") if p.is_file())
        n, size = write_corpus(batch / "droidbot", max(min(100, megabytes) - copied / 1e6, 1), seed=i, first_run=runs)
        runs, total = runs + n, total + copied + size
    return total


def measure(argv: list[str], lake: Path) -> tuple[float, float]:
    """(seconds, peak RSS MB of the process tree) of `pipelines ARGV --lake LAKE` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", _MEASURE % ([*argv, "--lake", str(lake)],)], cwd=REPO,
                          capture_output=True, text=True)
    if done.returncode not in (0, 3):  # 3: --strict-like "something was quarantined" is fine here
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-2000:]}")
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("STATS "))
    seconds, peak = line.split()[1:]
    return float(seconds), float(peak)


def later_stage_seconds(lake: Path) -> float:
    """Seconds of the stages after ingest (validate) in the lake's only ingest run, from its catalog."""
    import duckdb

    with duckdb.connect(str(lake / "catalog.duckdb"), read_only=True) as con:
        return con.execute("SELECT coalesce(sum(seconds), 0) FROM stage_stats WHERE stage <> 'ingest' AND run_id = "
                           "(SELECT run_id FROM runs WHERE pipeline = 'ingest-all')").fetchall()[0][0]


def limit_run(corpus: Path, scratch: Path) -> tuple[float, float]:
    """(MB of the corpus's JSON files, seconds) of the ingest limit (bench/ingest.py) on them."""
    from bench.ingest import limit_once

    started = time.perf_counter()
    limit_once(corpus, scratch)
    seconds = time.perf_counter() - started
    return sum(p.stat().st_size for p in corpus.rglob("*.json")) / 1e6, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2000,10000", help="input sizes in MB, comma-separated")
    ap.add_argument("--task-mb", type=float, default=64, help="input MB per ingest task (the part size)")
    ap.add_argument("--work", help="folder for the corpora and lakes (default: a temporary folder)")
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    rows: dict[str, list[tuple[float, float, float]]] = {name: [] for name in STAGES}
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        for size in sizes:
            corpus, lake, out = Path(tmp, f"in-{size:g}"), Path(tmp, f"lake-{size:g}"), Path(tmp, f"out-{size:g}")
            written = write_mixed_corpus(corpus, size)
            mb = written / 1e6
            print(f"{size:g} MB corpus: {mb:,.0f} MB written", file=sys.stderr, flush=True)
            for name, argv in STAGES.items():
                argv = [a.format(corpus=corpus, out=out, task_mb=args.task_mb) for a in argv]
                seconds, peak = measure(argv, lake)
                rows[name].append((seconds, mb / seconds, peak))
                print(f"  {size:g} MB  {name:18s} {seconds:8.1f} s {mb / seconds:8.1f} MB/s {peak:8.0f} MB",
                      file=sys.stderr, flush=True)
            ingest_rate = rows["ingest + validate"][-1][1]
            ingest_only = mb / (rows["ingest + validate"][-1][0] - later_stage_seconds(lake))
            json_mb, limit_seconds = limit_run(corpus, Path(tmp))
            limit = json_mb / limit_seconds
            print(f"  {size:g} MB  ingest + validate at {ingest_rate:.1f} MB/s = {ingest_rate / limit:.2f} of the "
                  f"limit ({limit:.1f} MB/s); ingest alone (planning included) {ingest_only:.1f} MB/s = "
                  f"{ingest_only / limit:.2f}", file=sys.stderr, flush=True)
            print(f"  {size:g} MB  {ceiling(limit_seconds, work_beyond_limit(corpus))}", file=sys.stderr, flush=True)
            shutil.rmtree(corpus), shutil.rmtree(out, ignore_errors=True), shutil.rmtree(lake)
    head = "".join(f"{f'{s:g} MB: s, MB/s, peak MB':>34s}" for s in sizes)
    print(f"{'stage':20s}{head}   peak largest/smallest")
    for name, results in rows.items():
        cells = "".join(f"{s:12.1f}{r:11.1f}{p:11.0f}" for s, r, p in results)
        print(f"{name:20s}{cells}   {results[-1][2] / results[0][2]:.2f}x")
    print(json.dumps({name: results for name, results in rows.items()}))


if __name__ == "__main__":
    main()
