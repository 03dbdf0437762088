"""Ingest throughput against the limit, and peak memory as the input doubles.

    .venv/bin/python bench/ingest.py [--mb 200] [--repeats 3] [--compare] [--ratio-only]

On one synthetic DroidBot corpus (bench/android_corpus.py, the bundled run's shapes) it measures, in one run:
- limit: read every file, orjson-parse it (GC paused), write the same records as zstd Parquet (the floor any
  ingest of this data pays);
- ingest: `pipelines run ingest-android` with the in-process executor (one core, like the limit), from
  planning to catalog;
each repeat of each in a Python process of its own (`bench/fresh.py`: after a first run of each that fills the
page cache and finds what it imports, imported before the clock, so imports are out of both sides), interleaved,
and prints wall-clock and CPU-time medians and the ratio ingest/limit (`--compare`: also as one process measured
them, the limit after an ingest and the ingest after a limit, each paying for what the other left in the
allocators); then the work ingest must do that the limit leaves out (screen text, content
digest, secret scan), each timed alone, and the ceiling it sets on that ratio. The machine's load is printed
beside every rate (a shared machine slows both sides, not always alike); `--parts` adds the CPU seconds of
ingest's parts in one ingest (reading, parsing, screen text, view-tree JSON, the scan...), `--profile N` the N
functions with the most own time in one profiled ingest. Then local Ray on all cores, and peak RSS of an ingest process
on the corpus and on twice the corpus: with a fixed task size it must stay flat.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench import fresh  # noqa: E402
from bench.android_corpus import write_corpus  # noqa: E402


def corpus(mb: float, cache: Path) -> tuple[Path, int]:
    path = cache / f"droidbot-{mb:g}mb"
    marker = path / ".done"
    if not marker.exists():
        shutil.rmtree(path, ignore_errors=True)
        runs, size = write_corpus(path, mb)
        marker.write_text(json.dumps({"runs": runs, "bytes": size}))
    return path, json.loads(marker.read_text())["bytes"]


def timed(fn, *args) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu


def limit_once(root: Path, out: Path, batch_mb: float = 64) -> None:
    """Parse + write floor: every JSON file -> dict -> (path, compact JSON) rows -> zstd Parquet, written in
    row groups of `batch_mb` (memory bounded like an ingest task's, whatever the corpus size)."""
    import orjson
    import pyarrow as pa

    def docs(name: str, path: str):
        if not name.endswith(".json"):  # a DroidBot run's other files (logs, screenshots) are not read
            return ()
        with open(path, "rb") as f:
            return (orjson.dumps(orjson.loads(f.read())).decode(),)

    parse_and_write(root, out / "limit.parquet", docs, pa.string(), batch_mb)


def parse_and_write(root: Path, target: Path, docs, doc_type, batch_mb: float = 64) -> None:
    """The limits' loop: `docs(name, path)` gives what the limit keeps of each file under `root` (it reads the
    file, or not), written as (path, doc) rows of `doc_type` to zstd Parquet in row groups of about `batch_mb`,
    the garbage collector paused (as ingest tasks run)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("path", pa.string()), ("doc", doc_type)])
    paths, kept, held = [], [], 0
    with pq.ParquetWriter(target, schema, compression="zstd") as writer:
        gc.disable()
        try:
            for dirpath, _, names in os.walk(root):
                for name in names:
                    path = os.path.join(dirpath, name)
                    for doc in docs(name, path):
                        paths.append(path)
                        kept.append(doc)
                        held += len(doc)
                    if held >= batch_mb * 1e6:
                        writer.write_table(pa.table({"path": paths, "doc": kept}, schema=schema))
                        paths, kept, held = [], [], 0
        finally:
            gc.enable()
        if paths:
            writer.write_table(pa.table({"path": paths, "doc": kept}, schema=schema))


def work_beyond_limit(root: Path, batch_mb: float = 64, counts: dict | None = None) -> dict[str, float]:
    """Seconds of the work ingest must do that the limit leaves out, each timed alone on the corpus (the
    parsing before it not counted): the screen text each distinct DroidBot screen is rendered to (the
    observation a world model predicts: the reader renders a view tree and activity seen again in the same run
    once, so this does too, the look-up of every state timed with it; `counts`, when given, gets the number of
    `states` and of distinct `screens`), the sha256 of every file read (a unit's identity, what a rerun skips
    by), and the secret scrubber's first pass (Arrow's regex scan for its triggers over the text and view-tree
    columns, one row per state as in the steps table)."""
    import hashlib

    import orjson
    import pyarrow as pa
    import pyarrow.compute as pc

    from schemas.render import render_android_screen
    from transforms.scrub import TRIGGERS

    seconds = dict.fromkeys(("screen text", "content digest", "secret scan"), 0.0)
    counts = {} if counts is None else counts
    counts.update(states=0, screens=0)
    clock, digest = time.perf_counter, hashlib.sha256()
    rendered: dict = {}  # (view tree, activity) -> its text, for the run being read
    run = None
    texts: list[str] = []
    trees: list[bytes] = []
    held = 0  # bytes of view trees waiting for the scan

    def scan():
        start = clock()
        for column in (pa.array(texts), pa.array(trees, pa.binary()).cast(pa.string())):
            pc.match_substring_regex(column, TRIGGERS)
        seconds["secret scan"] += clock() - start
        texts.clear(), trees.clear()

    gc.disable()
    try:
        for dirpath, _, names in os.walk(root):
            for name in sorted(names):
                with open(os.path.join(dirpath, name), "rb") as f:
                    data = f.read()
                start = clock()
                digest.update(name.encode() + b"\0")
                digest.update(data)
                seconds["content digest"] += clock() - start
                if os.path.basename(dirpath) != "states" or not name.endswith(".json"):
                    continue
                state = orjson.loads(data)
                views = state.get("views") or []
                trees.append(orjson.dumps(views))
                activity = state.get("foreground_activity")
                if dirpath != run:  # the reader's cache holds one run's screens
                    rendered, run = {}, dirpath
                start = clock()  # the look-up is timed too: ingest pays it for every state
                text = rendered.get((trees[-1], activity))
                if text is None:
                    text = rendered[trees[-1], activity] = render_android_screen(views, f"Activity: {activity}")
                    counts["screens"] += 1
                seconds["screen text"] += clock() - start
                counts["states"] += 1
                texts.append(text)
                held += len(trees[-1])
                if held > batch_mb * 1e6:
                    scan()
                    held = 0
    finally:
        gc.enable()
    scan()
    return seconds


def ceiling(limit_seconds: float, beyond: dict[str, float]) -> str:
    """The work beyond the limit and the ceiling it sets on ingest's ratio: limit / (limit + that work)."""
    return (", ".join(f"{k} {v:.2f} s" for k, v in beyond.items()) + f" beyond the limit's {limit_seconds:.2f} s: "
            f"ingest's ceiling with nothing else, limit / (limit + these) = "
            f"{limit_seconds / (limit_seconds + sum(beyond.values())):.2f}")


def ingest_only():
    """The ingest-android definition without the stages after ingest (validate... are benchmarked apart)."""
    from pipelines.infra import definition

    defn = definition.load("ingest-android")
    defn.stages, defn.stage_options = ["ingest"], {}
    return defn


def ingest_once(root: Path, lake: Path, executor: str = "local") -> None:
    from pipelines.infra.runner import run_ingest

    shutil.rmtree(lake, ignore_errors=True)
    result = run_ingest(ingest_only(), str(lake), [str(root)], executor=executor, progress=False,
                        log=lambda line: None)
    assert result.status == "success" and result.quarantined == 0, result.messages[:3]


def ray_ingest_seconds(root: Path, lake: Path) -> float:
    """Wall seconds of one ingest on a local Ray this process starts, with token authentication asked for as
    the README documents it (Ray would otherwise turn it on by itself on finding a token file, and say so)."""
    from pipelines.infra.ray_setup import ask_for_token_auth

    ask_for_token_auth()
    return timed(ingest_once, root, lake, "ray")[0]


def profile_shares(root: Path, lake: Path, top: int) -> str:
    """One ingest under cProfile: the `top` functions by their own time, each as a share of the whole, and the
    same for the time spent under them (cumulative). cProfile slows calls, not C work: Python-heavy functions
    weigh more here than in wall time; compare profiles with each other, not with the rates above."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(ingest_once, root, lake)
    stats = pstats.Stats(profiler).stats  # (file, line, name) -> (calls, primitive, own, cumulative, callers)
    total = sum(own for _, _, own, _, _ in stats.values())

    def name(key) -> str:
        path, line, func = key
        return f"{func} ({os.path.relpath(path, REPO) if path.startswith(str(REPO)) else os.path.basename(path)}:{line})"

    lines = [f"profile of one ingest ({total:.2f} s under cProfile): own time share, then time under it"]
    for key, (_, calls, own, cum, _) in sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]:
        lines.append(f"  {100 * own / total:5.1f} %  {100 * cum / total:5.1f} %  {calls:>9,d}  {name(key)}")
    return "\n".join(lines)


# The parts `--parts` times inside one ingest: (module, function or Class.method as the caller finds it there)
PARTS = (
    ("ingest.source", "Source._read"), ("ingest.android.droidbot", "parse_json"),
    ("ingest.android.droidbot", "render_android_screen"), ("ingest.android.droidbot", "_observation"),
    ("pipelines.infra.task", "_collect"), ("ingest.arrow", "TableBuilder.add_episode"),
    ("ingest.arrow", "TableBuilder.tables"), ("pipelines.infra.task", "scrub_tables"),
    ("pipelines.infra.lake", "Lake.write_parquet"), ("pipelines.infra.task", "_ingest"),
)


def parts_cpu(root: Path, lake: Path) -> dict[str, float]:
    """CPU seconds of ingest's parts in one in-process ingest, each without the parts it calls: the functions
    of `PARTS` wrapped with a process-time clock for that ingest (two clock reads a call, ~60,000 calls on the
    200 MB corpus: a few hundredths of a second, counted in the callers' parts). Unlike `--profile` it does not
    slow Python code more than C code, so its shares are those of an ingest run without it."""
    import importlib

    spent = dict.fromkeys((f"{m}:{f}" for m, f in PARTS), 0.0)
    originals = []
    for module_name, path in PARTS:
        module = importlib.import_module(module_name)
        owner, name = (getattr(module, path.split(".")[0]), path.split(".")[1]) if "." in path else (module, path)
        original = getattr(owner, name)
        originals.append((owner, name, original))

        def clocked(*args, _original=original, _key=f"{module_name}:{path}", **kwargs):
            start = time.process_time()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_key] += time.process_time() - start

        setattr(owner, name, clocked)
    try:
        _, total = timed(ingest_once, root, lake)
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
    part = {k.split(":")[1]: v for k, v in spent.items()}
    reader = part["_collect"] - part["Source._read"] - part["parse_json"] - part["_observation"]
    within = (part["_collect"] + part["TableBuilder.add_episode"] + part["TableBuilder.tables"]
              + part["scrub_tables"] + part["Lake.write_parquet"])
    return {
        "reading + sha256 of the files": part["Source._read"], "JSON parsing": part["parse_json"],
        "screen text": part["render_android_screen"],
        "view-tree JSON + screen look-up": part["_observation"] - part["render_android_screen"],
        "the reader's own work (events, states, actions; freeing them)": reader,
        "rows + their checks": part["TableBuilder.add_episode"], "Arrow tables": part["TableBuilder.tables"],
        "secret scan + scrub": part["scrub_tables"], "Parquet writes": part["Lake.write_parquet"],
        "rest of the tasks": part["_ingest"] - within,
        "the run's own (planning, catalog, markers)": total - part["_ingest"],
        "total": total,
    }


def peak_rss_mb(root: Path, lake: Path, task_mb: float) -> float:
    """Peak RSS of a fresh ingest process (in-process executor, fixed task size)."""
    shutil.rmtree(lake, ignore_errors=True)
    code = ("import resource, sys; sys.path.insert(0, %r)\n"
            "from bench.ingest import ingest_only; from pipelines.infra.runner import run_ingest\n"
            "r = run_ingest(ingest_only(), %r, [%r], executor='local', task_mb=%r,"
            " progress=False, log=lambda s: None)\n"
            "assert r.status == 'success'\n"
            "from bench.peak import own_peak_mb; print(own_peak_mb())") % (str(REPO), str(lake), str(root), task_mb)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=200, help="corpus size in MB (default 200)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--task-mb", type=float, default=32, help="task size for the memory check")
    parser.add_argument("--cache", default=str(REPO / "bench" / "out"), help="where corpora are generated")
    parser.add_argument("--compare", action="store_true",
                        help="also time each repeat as the bench in one process did (limit after ingest...)")
    parser.add_argument("--ratio-only", action="store_true", help="stop after the ratio (no ceiling, Ray, memory)")
    parser.add_argument("--parts", action="store_true",
                        help="also print the CPU seconds of ingest's parts (reading, parsing, screen text...)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also profile one ingest (cProfile) and print the N functions with the most own time")
    args = parser.parse_args()

    cache = Path(args.cache)
    root, size = corpus(args.mb, cache)
    print(f"corpus: {root} ({size / 1e6:,.1f} MB of DroidBot JSON)")
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        scratch = Path(scratch)
        lake = scratch / "lake"
        limit = fresh.call("bench.ingest:limit_once", root, scratch)
        ingest = fresh.call("bench.ingest:ingest_once", root, lake, clear=(lake,))
        runs = fresh.measure(limit, ingest, args.repeats, args.compare)
        for i, (lim, ours, load) in enumerate(zip(runs["limit"], runs["ingest"], runs["load"])):
            print(f"  repeat {i + 1}: limit {size / 1e6 / lim['cpu']:6.1f} MB/s   "
                  f"ingest {size / 1e6 / ours['cpu']:6.1f} MB/s of CPU time   (load {load:.2f})")
        print("limit (orjson parse + zstd Parquet write, 1 core) against ingest-android, "
              f"{fresh.rates(size / 1e6, runs)} (the ceiling below bounds the ratio)")
        if args.ratio_only:
            return
        mb = size / 1e6
        if args.parts or args.profile:
            ingest_once(root, lake)  # imports and first-call costs out of the parts and the profile, as before
        if args.parts:
            parts = parts_cpu(root, scratch / "lake")
            print("CPU seconds of ingest's parts in one ingest (each without the parts it calls): " + ", ".join(
                f"{k} {v:.3f}" for k, v in parts.items()) + f" (load {os.getloadavg()[0]:.2f})")
        if args.profile:
            print(profile_shares(root, scratch / "lake", args.profile))

        counts: dict = {}
        beyond = [work_beyond_limit(root, counts=counts) for _ in range(args.repeats)]
        extra = {k: statistics.median(b[k] for b in beyond) for k in beyond[0]}
        print(f"work ingest does beyond the limit, each timed alone (medians; {counts['screens']:,} distinct screens "
              f"rendered of {counts['states']:,} states): "
              + ceiling(statistics.median(t["wall"] for t in runs["limit"]), extra))

        print(f"ingest-android on local Ray ({os.cpu_count()} cores, incl. ray.init): "
              f"{mb / ray_ingest_seconds(root, scratch / 'lake'):8.1f} MB/s")

        double, double_size = corpus(args.mb * 2, cache)
        rss_1 = peak_rss_mb(root, scratch / "lake", args.task_mb)
        rss_2 = peak_rss_mb(double, scratch / "lake", args.task_mb)
        print(f"peak RSS, task {args.task_mb:g} MB: {size / 1e6:,.0f} MB input -> {rss_1:,.0f} MB; "
              f"{double_size / 1e6:,.0f} MB input -> {rss_2:,.0f} MB (ratio {rss_2 / rss_1:.2f}, flat is ~1)")


if __name__ == "__main__":
    main()
