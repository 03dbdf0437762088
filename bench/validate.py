"""Hot-path validation time as a share of ingest time, with the great-expectations suite time beside it.

    .venv/bin/python bench/validate.py [--mb 200]

On the synthetic DroidBot corpus of bench/ingest.py (cached in bench/out/): ingest it in-process with the
validate stage's GX suites off, then time, on the ingested version, (a) the hot path: reading the parts,
the schema contract and every rule (`transforms.validate.check`), and (b) the GX suites (pandas engine,
sampled above `transforms.validate.gx.SAMPLE_ROWS` rows), import included. Target: hot path <= 15 % of ingest.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.ingest import corpus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200)
    args = parser.parse_args()
    os.environ["PIPELINES_GX"] = "0"
    from pipelines import definition
    from pipelines.lake import Lake
    from pipelines.runner import open_catalog, run_ingest
    from pipelines.validate import _read_parts
    from transforms.validate.check import conform_parts, validate

    data, size = corpus(args.mb, REPO / "bench" / "out")
    with tempfile.TemporaryDirectory() as lake_dir:
        defn = definition.load("ingest-android")
        defn.stages = ["ingest"]  # ingest alone; validation is timed below
        started = time.perf_counter()
        result = run_ingest(defn, lake_dir, [str(data)], executor="local", progress=False, log=lambda s: None)
        ingest_s = time.perf_counter() - started
        lake = Lake(lake_dir)
        with open_catalog(lake) as cat:
            version = cat.current_version("android")
        started = time.perf_counter()
        episodes, steps, prior = conform_parts(_read_parts(lake, version, "episodes"),
                                               _read_parts(lake, version, "steps"))
        outcome = validate(episodes, steps, prior=prior)
        hot_s = time.perf_counter() - started
        from transforms.validate.gx import run_suites

        gx_run = run_suites(outcome.episodes, outcome.steps)
    print(f"corpus      {size / 1e6:,.1f} MB, {result.episodes:,} episodes, {result.steps:,} steps")
    print(f"ingest      {ingest_s:8.2f} s")
    print(f"hot path    {hot_s:8.2f} s  = {100 * hot_s / ingest_s:.1f} % of ingest  "
          f"({outcome.findings.height} findings: {dict(outcome.findings['rule'].value_counts().iter_rows())})")
    print(f"GX suites   {gx_run.seconds:8.2f} s  ({len(gx_run.results)} expectations, import included)")


if __name__ == "__main__":
    main()
