"""Hot-path validation time as a share of ingest time, with the great-expectations suite time beside it.

    .venv/bin/python bench/validate.py [--mb 200] [--repeats 3]

On the synthetic DroidBot corpus of bench/ingest.py (cached in bench/out/), each repeat ingests it in-process
(`bench.ingest.ingest_only`: the ingest stage alone, into a fresh lake) and then times, on the ingested
version, the hot path, one part group at a time as the validate stage's work does: reading the parts, the
schema contract and every rule (`transforms.validate.check`).
Repeats interleave the two, so machine noise hits both alike; the share is the ratio of the medians.
Then the GX suites run once on the last part group's kept tables (pandas engine, sampled above
`transforms.validate.gx.SAMPLE_ROWS` rows), import included. Target: hot path <= 15 % of ingest.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.ingest import corpus, ingest_only  # noqa: E402


def _read(lake, paths: list[str]) -> list:
    """(path, table) of each part, whole, as the validate stage's work reads them."""
    import pyarrow.parquet as pq

    return [(p, pq.read_table(lake.absolute(p), filesystem=lake.fs)) for p in paths]


def hot_path(lake_dir: str):
    """(seconds, the last group's outcome, every group's findings) of validating the lake's current android
    version as the validate stage's work does, one part group at a time: read, conform, every rule."""
    import polars as pl

    from pipelines.infra.lake import Lake
    from pipelines.infra.runs import open_catalog
    from pipelines.infra.stage_runner import all_groups
    from transforms.validate.check import conform_parts, validate

    lake = Lake(lake_dir)
    with open_catalog(lake, read_only=True) as cat:
        version = cat.current_version("android")
    started = time.perf_counter()
    found = []
    for group in all_groups(version):
        episodes, steps, prior = conform_parts(_read(lake, group["episodes"]), _read(lake, group["steps"]))
        outcome = validate(episodes, steps, prior=prior)
        found.append(outcome.findings)
    return time.perf_counter() - started, outcome, pl.concat(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from pipelines.infra.runner import run_ingest

    data, size = corpus(args.mb, REPO / "bench" / "out")
    ingests, hots = [], []
    with tempfile.TemporaryDirectory() as scratch:
        lake_dir = str(Path(scratch) / "lake")
        for i in range(args.repeats):
            shutil.rmtree(lake_dir, ignore_errors=True)
            started = time.perf_counter()
            result = run_ingest(ingest_only(), lake_dir, [str(data)], executor="local", progress=False,
                                log=lambda s: None)
            ingests.append(time.perf_counter() - started)
            seconds, outcome, findings = hot_path(lake_dir)
            hots.append(seconds)
            print(f"  repeat {i + 1}: ingest {ingests[-1]:7.2f} s   hot path {hots[-1]:6.3f} s "
                  f"({100 * hots[-1] / ingests[-1]:.1f} %)", flush=True)
        from transforms.validate.gx import run_suites

        gx_run = run_suites(outcome.episodes, outcome.steps)
    ingest_s, hot_s = statistics.median(ingests), statistics.median(hots)
    print(f"corpus      {size / 1e6:,.1f} MB, {result.episodes:,} episodes, {result.steps:,} steps")
    print(f"ingest      {ingest_s:8.2f} s  (median of {args.repeats})")
    print(f"hot path    {hot_s:8.3f} s  (median)  = {100 * hot_s / ingest_s:.1f} % of ingest (target <= 15 %)  "
          f"({findings.height} findings: {dict(findings['rule'].value_counts().iter_rows())})")
    print(f"GX suites   {gx_run.seconds:8.2f} s  ({len(gx_run.results)} expectations, import included, once)")


if __name__ == "__main__":
    main()
