"""SFT export throughput beside the Parquet read+write limit of the same data.

    .venv/bin/python bench/export.py [--episodes 2000] [--steps 20]

Builds a synthetic terminal dataset (episodes x steps, ~200-byte observations) in a temporary lake, exports
it as SFT (agentworld, JSONL) and prints records/s, next to the time pyarrow takes just to read the steps
parts and write them back as zstd Parquet (the floor any export of this data pays).
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow.parquet as pq  # noqa: E402

from catalog import Catalog  # noqa: E402
from pipelines.export import ExportConfig, export  # noqa: E402
from pipelines.lake import Lake  # noqa: E402
from tests.transforms.export.lakes import commit_dataset, episode_row, step_row  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lake_url = f"{tmp}/lake"
        episodes, steps = [], []
        for e in range(args.episodes):
            eid = f"ep{e:06d}"
            episodes.append(episode_row(eid, "terminal", f"task {e % 500}"))
            for i in range(args.steps):
                screen = f"root@host:/app# ls -la step {i}\n" + "drwxr-xr-x 2 root root 4096 file.txt\n" * 4
                steps.append(step_row(eid, i, "terminal", screen, {"kind": "keystrokes", "text": f"ls {i}\n",
                                                                    "duration_s": 0.5}))
        commit_dataset(lake_url, "bench", episodes, steps)
        lake = Lake(lake_url)
        with Catalog(lake.path("catalog.duckdb"), lake.url, read_only=True) as cat:
            parts = cat.current_version("bench").parts["steps"]

        started = time.perf_counter()
        for p in parts:
            buf = io.BytesIO()
            pq.write_table(pq.read_table(lake.absolute(p)), buf, compression="zstd")
        floor = time.perf_counter() - started

        started = time.perf_counter()
        manifest = export(lake, None, "bench", f"{tmp}/out", ExportConfig(kind="sft"), log=lambda line: None)
        seconds = time.perf_counter() - started
        rows = manifest["rows"]
        print(f"SFT export (agentworld)  {rows:,} records in {seconds:.2f} s = {rows / seconds:,.0f} records/s")
        print(f"Parquet read+write limit {len(steps):,} steps in {floor:.3f} s = {len(steps) / floor:,.0f} rows/s")
        print(f"ratio                    {(rows / seconds) / (len(steps) / floor):.3f} of the I/O limit")


if __name__ == "__main__":
    main()
