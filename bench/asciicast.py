"""asciicast ingest throughput against the parse limit, on a synthetic corpus of shell sessions.

    .venv/bin/python bench/asciicast.py [--mb 200] [--repeats 3]

The corpus (generated once into bench/out/, deterministic) is 1 MB asciicast v2 files of shell sessions:
per command, a prompt, the command typed key by key (an `i` and an echoing `o` event per key), Enter, then
20-60 lines of output with colour escapes and an occasional progress line redrawn with carriage returns.
In one run, interleaved so machine noise hits both alike, it measures:
- limit: read every file, orjson-parse each line (GC paused), write the events as zstd Parquet
  (file, time, code, data): the floor any ingest of this data pays;
- ingest: `pipelines run ingest-ubuntu` in-process, its ingest stage alone (one core, like the limit): the
  pyte terminal replay, steps, Parquet parts and the catalog;
and prints MB/s medians and ingest/limit, by wall clock and by CPU time (steadier on a shared machine).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

_COMMANDS = ["ls -la", "git status", "pytest -q tests", "cat README.md", "grep -rn TODO src", "make build",
             "pip install -e .", "python train.py --epochs 3", "docker ps", "du -sh *"]
_WORDS = "error warning ok passed failed build src tests module import file line value total done".split()


def write_session(path: Path, rng: random.Random, target_bytes: int) -> int:
    lines = [json.dumps({"version": 2, "width": 120, "height": 40, "timestamp": 1700000000 + rng.randrange(10**6),
                         "env": {"SHELL": "/bin/bash", "TERM": "xterm-256color"}})]
    t, size = 0.0, len(lines[0])
    while size < target_bytes:
        events = [[t, "o", "\x1b[32muser@host\x1b[0m:\x1b[34m~/proj\x1b[0m$ "]]
        for ch in rng.choice(_COMMANDS):
            t += 0.05 + rng.random() * 0.1
            events += [[round(t, 6), "i", ch], [round(t + 0.002, 6), "o", ch]]
        t += 0.2
        events += [[round(t, 6), "i", "\r"], [round(t + 0.002, 6), "o", "\r\n"]]
        for n in range(rng.randrange(20, 60)):
            t += rng.random() * 0.05
            if n % 17 == 5:
                text = "".join(f"\r{p}%" for p in range(0, 101, 20)) + "\r\n"
            else:
                words = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(3, 14)))
                text = f"\x1b[{rng.choice((31, 33, 0))}m{words}\x1b[0m\r\n"
            events.append([round(t, 6), "o", text])
        for e in events:
            line = json.dumps(e)
            lines.append(line)
            size += len(line) + 1
    data = "\n".join(lines) + "\n"
    path.write_text(data)
    return len(data.encode())


def corpus(mb: float, cache: Path) -> tuple[Path, int]:
    path = cache / f"asciicast-{mb:g}mb"
    marker = path / ".done"
    if not marker.exists():
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        rng, total, i = random.Random(7), 0, 0
        while total < mb * 1e6:
            total += write_session(path / f"session-{i:05d}.cast", rng, min(1_000_000, int(mb * 1e6 - total) + 1))
            i += 1
        marker.write_text(json.dumps({"files": i, "bytes": total}))
    return path, json.loads(marker.read_text())["bytes"]


def limit_once(root: Path, out: Path) -> float:
    """Parse + write floor: every event line -> orjson -> columns -> zstd Parquet."""
    import orjson
    import pyarrow as pa
    import pyarrow.parquet as pq  # imported before the clock starts

    started, cpu = time.perf_counter(), time.process_time()
    files, times, codes, datas = [], [], [], []
    gc.disable()
    try:
        for name in sorted(os.listdir(root)):
            if not name.endswith(".cast"):
                continue
            with open(root / name, "rb") as f:
                lines = f.read().split(b"\n")
            orjson.loads(lines[0])
            for line in lines[1:]:
                if line:
                    t, code, data = orjson.loads(line)
                    files.append(name)
                    times.append(t)
                    codes.append(code)
                    datas.append(data)
    finally:
        gc.enable()
    pq.write_table(pa.table({"file": files, "time": times, "code": codes, "data": datas}),
                   out / "limit.parquet", compression="zstd")
    return time.perf_counter() - started, time.process_time() - cpu


def ingest_only():
    """The ingest-ubuntu definition without the stages after ingest (validate... are benchmarked apart)."""
    from pipelines.infra import definition

    defn = definition.load("ingest-ubuntu")
    defn.stages, defn.stage_options = ["ingest"], {}
    return defn


def ingest_once(root: Path, lake: Path) -> float:
    from pipelines.infra.runner import run_ingest

    shutil.rmtree(lake, ignore_errors=True)
    started, cpu = time.perf_counter(), time.process_time()
    result = run_ingest(ingest_only(), str(lake), [str(root)], executor="local",
                        progress=False, log=lambda line: None)
    assert result.status == "success" and result.quarantined == 0, result.messages[:3]
    return time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=200, help="corpus size in MB (default 200)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache", default=str(REPO / "bench" / "out"), help="where corpora are generated")
    args = parser.parse_args()

    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    root, size = corpus(args.mb, cache)
    mb = size / 1e6
    print(f"corpus: {root} ({mb:,.1f} MB of asciicast v2)")
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        scratch = Path(scratch)
        limits, ours = [], []  # (wall seconds, CPU seconds) per repeat
        for i in range(args.repeats):
            limits.append(limit_once(root, scratch))
            ours.append(ingest_once(root, scratch / "lake"))
            print(f"  repeat {i + 1}: limit {mb / limits[-1][0]:6.1f} MB/s   ingest {mb / ours[-1][0]:6.1f} MB/s"
                  f"   (CPU time: limit {mb / limits[-1][1]:6.1f}, ingest {mb / ours[-1][1]:6.1f} MB/s)", flush=True)
        # CPU time as well as wall time: on a shared machine the wall clock also counts other processes' turns
        for clock, name in ((0, "wall"), (1, "CPU ")):
            limit_rate = mb / statistics.median(t[clock] for t in limits)
            our_rate = mb / statistics.median(t[clock] for t in ours)
            print(f"{name}: limit (orjson line parse + zstd Parquet write, 1 core) {limit_rate:8.1f} MB/s (median)   "
                  f"ingest-ubuntu asciicast ingest stage {our_rate:8.1f} MB/s   ratio ingest/limit {our_rate / limit_rate:.2f}")

if __name__ == "__main__":
    main()
