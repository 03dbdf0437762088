"""SFT export throughput beside the Parquet read+write limit of the same data.

    .venv/bin/python bench/export.py [--episodes 2000] [--steps 20] [--repeats 3] [--tokenizer bound]
    .venv/bin/python bench/export.py --recipe [--episodes 20000] [--kinds cpt rl] [--repeats 3]

`--recipe`: the same corpus (with a failed command retried every 10th step, so the recipe's filters have
work; 8.9 MB of data in Arrow per 1,000 episodes of 20 steps: 22,600 make the budget's 200 MB corpus)
exported plain and with `--recipe agentworld`, alternating, per kind; prints the medians and the recipe's
cost as a ratio of the plain export (the budget: at most 1.3x), in wall time and in CPU time.

Builds a synthetic terminal dataset (episodes x steps, ~200-byte observations) in a temporary lake, exports
it as SFT (agentworld, JSONL) and prints records/s. The limit beside it is the time pyarrow takes to write
the records that export produced (loaded from its shards into an Arrow table beforehand, untimed) as one
zstd Parquet file and read that file back: the I/O floor of materializing this output, whatever renders it.
SFT output is much larger than its input (every record repeats the system prompt and the whole history), so
the limit is measured on the output, not on the input steps. Export and limit alternate `--repeats` times in
the same run; the printed figures are the medians, in wall time and in CPU time (the machine may be
shared: CPU time is the steadier figure there; the limit's CPU time counts pyarrow's threads too).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow as pa  # noqa: E402
import pyarrow.json as pj  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from pipelines.stages.export import export  # noqa: E402
from pipelines.infra.options import ExportOptions  # noqa: E402
from pipelines.infra.lake import Lake  # noqa: E402
from tests.transforms.export.lakes import commit_dataset, episode_row, step_row  # noqa: E402


def build_corpus(lake_url: str, n_episodes: int, n_steps: int, retries: bool = False) -> None:
    episodes, steps = [], []
    for e in range(n_episodes):
        eid = f"ep{e:06d}"
        episodes.append(episode_row(eid, "terminal", f"task {e % 500}"))
        for i in range(n_steps):
            screen = f"root@host:/app# ls -la step {i}\n" + "drwxr-xr-x 2 root root 4096 file.txt\n" * 4
            command = f"ls {i}\n"
            if retries and i % 10 == 9:  # this command fails (its next screen says so), the next retries it
                command = f"cat missing-{i}\n"
            if retries and i % 10 == 0 and i:
                screen = f"cat: missing-{i - 1}: No such file or directory\n"
                command = f"cat present-{i}\n"
            row = step_row(eid, i, "terminal", screen, {"kind": "keystrokes", "text": command, "duration_s": 0.5})
            if retries and i % 10 == 0 and i:
                row["observation"]["is_error"] = True
            steps.append(row)
    commit_dataset(lake_url, "bench", episodes, steps)


def compare_recipe(args) -> None:
    """Plain and recipe exports of the same corpus, alternating; medians and their ratio per kind."""
    with tempfile.TemporaryDirectory() as tmp:
        lake_url = f"{tmp}/lake"
        build_corpus(lake_url, args.episodes, args.steps, retries=True)
        lake = Lake(lake_url)
        parts_mb = sum(p.stat().st_size for p in Path(lake_url).rglob("*") if p.is_file()) / 1e6
        arrow_mb = sum(pq.read_table(p).nbytes for p in Path(lake_url).rglob("*.parquet")) / 1e6
        print(f"corpus: {args.episodes:,} episodes x {args.steps} steps, {arrow_mb:,.0f} MB in Arrow,"
              f" {parts_mb:,.1f} MB of lake files (zstd Parquet parts, catalog)")
        for kind in args.kinds:
            walls, cpus = {"plain": [], "recipe": []}, {"plain": [], "recipe": []}
            for _ in range(args.repeats):
                for name, extra in (("plain", {}), ("recipe", {"recipe": "agentworld"})):
                    manifest, wall, cpu = timed(export, lake, None, "bench", f"{tmp}/{kind}-{name}",
                                                ExportOptions(kind=kind, **extra), lambda line: None)
                    walls[name].append(wall)
                    cpus[name].append(cpu)
            plain, recipe = statistics.median(walls["plain"]), statistics.median(walls["recipe"])
            cpu_plain, cpu_recipe = statistics.median(cpus["plain"]), statistics.median(cpus["recipe"])
            dropped = manifest["recipe"]["turns_dropped"]["retry_cycle"]
            print(f"{kind:4s} plain {plain:7.2f} s  recipe {recipe:7.2f} s  ratio {recipe / plain:.3f}"
                  f"  (CPU {cpu_plain:.2f} s / {cpu_recipe:.2f} s = {cpu_recipe / cpu_plain:.3f})"
                  f"  ({manifest['rows']:,} rows; {dropped:,} retry turns dropped; medians of {args.repeats})")


def output_table(out: str, manifest: dict) -> pa.Table:
    """The export's records as one Arrow table, read from its shards."""
    paths = [f"{out}/{s['path']}" for s in manifest["shards"]]
    if manifest["file_type"] == "parquet":
        return pa.concat_tables([pq.read_table(p) for p in paths])
    return pa.concat_tables([pj.read_json(p) for p in paths])


def timed(fn, *args):
    """(result, wall seconds, CPU seconds of the process: every thread) of fn(*args)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def parquet_round_trip(table: pa.Table, path: str) -> None:
    """Write `table` as zstd Parquet to `path` and read it back."""
    pq.write_table(table, path, compression="zstd")
    pq.read_table(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--recipe", action="store_true", help="compare plain and --recipe agentworld exports")
    ap.add_argument("--kinds", nargs="+", default=["cpt", "sft", "rl"])
    ap.add_argument("--tokenizer", help="what counts tokens (default: the export's, Qwen3.5; 'bound' for none)")
    args = ap.parse_args()
    if args.recipe:
        compare_recipe(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        lake_url, out = f"{tmp}/lake", f"{tmp}/out"
        build_corpus(lake_url, args.episodes, args.steps)
        lake = Lake(lake_url)
        config = ExportOptions(kind="sft", tokenizer=args.tokenizer)
        export_wall, export_cpu, limit_wall, limit_cpu, table = [], [], [], [], None
        for _ in range(args.repeats):
            manifest, wall, cpu = timed(export, lake, None, "bench", out, config, lambda line: None)
            export_wall.append(wall)
            export_cpu.append(cpu)
            if table is None:  # every repeat writes the same records
                table = output_table(out, manifest)
            _, wall, cpu = timed(parquet_round_trip, table, f"{tmp}/limit.parquet")
            limit_wall.append(wall)
            limit_cpu.append(cpu)
        rows, median = manifest["rows"], statistics.median
        out_mb = sum(s["bytes"] for s in manifest["shards"]) / 1e6
        print(f"SFT export (agentworld)  {rows:,} records ({out_mb:,.0f} MB JSONL) in {median(export_wall):.2f} s"
              f" = {rows / median(export_wall):,.0f} records/s  (CPU {median(export_cpu):.2f} s)")
        print(f"Parquet write+read limit {table.num_rows:,} records ({table.nbytes / 1e6:,.0f} MB in Arrow) in"
              f" {median(limit_wall):.2f} s = {table.num_rows / median(limit_wall):,.0f} records/s"
              f"  (CPU {median(limit_cpu):.2f} s)")
        print(f"ratio                    {median(limit_wall) / median(export_wall):.3f} of the I/O limit"
              f" (wall), {median(limit_cpu) / median(export_cpu):.3f} (CPU); medians of {args.repeats}")

if __name__ == "__main__":
    main()
