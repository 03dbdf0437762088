"""Calls of a benchmark's measured functions, each sequence in a Python process of its own, timed there.

What a call costs in CPU time depends on what its process did before it. glibc's malloc gives freed memory back
to the kernel (the heap's top trimmed, large blocks unmapped) unless something allocated after it pins it, and a
call that maps its buffers again pays a minor page fault and a zeroed page per 4 KB: on the MCP call log's 22.8
MB the limit took 0.17 CPU s as the second call of a process whose first call had done its imports (its freed
buffers pinned by them: ~6,000 faults), 0.30 in a process of its own or right after an ingest (~100,000 faults,
~0.13 s more system time); an ingest after a limit ran up to 10 % cheaper than alone, on the memory the limit
left mapped. A bench that runs both sides in one process measures, besides each, what the other left behind.

So the benchmarks time each side in a fresh process: `sequence` starts `python bench/fresh.py`, which imports
what the calls need, then runs them in turn, each between two reads of its process's clocks (CPU time of all its
threads, wall time, minor page faults), and prints them as JSON. What the functions import when first called is
found by a first run of each (`imports`, which also fills the page cache) and imported before the clock in every
later process: imports are left out of both sides alike; a first call's other one-time costs (compiled patterns,
the registry's look-up of the formats, a first Parquet writer) are counted on both sides, as a process that
ingests once pays them.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def call(function: str, *args, clear: tuple = ()) -> dict:
    """One call for `sequence`: `function` as "module:name", its arguments (Paths and strings), and folders to
    delete before its clock starts (the lake a repeat before it wrote)."""
    return {"function": function, "args": [["path", str(a)] if isinstance(a, Path) else ["str", a] for a in args],
            "clear": [str(c) for c in clear]}


def sequence(calls: list[dict], preload: list[str] = (), timeout: float = 3600) -> dict:
    """Run `calls` in turn in one new process, `preload` imported before the first; returns {"times": [one
    {cpu, wall, minflt, sys} per call], "imported": the modules the calls imported, "load": the 1-minute load
    average at the end}."""
    spec = json.dumps({"calls": calls, "preload": list(preload)})
    out = subprocess.run([sys.executable, str(Path(__file__).resolve())], input=spec, capture_output=True,
                         text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(REPO)})
    if out.returncode:
        raise RuntimeError(f"bench process failed: {out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["load"] = os.getloadavg()[0]
    return result


def imports(one: dict) -> list[str]:
    """The modules a fresh process imports during `one` call (run once here: it warms the page cache too)."""
    return sequence([one])["imported"]


def _resolve(function: str):
    module, name = function.split(":")
    return getattr(importlib.import_module(module), name)


def _timed(fn, args) -> dict:
    before = resource.getrusage(resource.RUSAGE_SELF)
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu": cpu, "wall": wall, "minflt": after.ru_minflt - before.ru_minflt,
            "sys": after.ru_stime - before.ru_stime}


def _child(spec: dict) -> dict:
    sys.path[0] = str(REPO)  # not bench/, whose modules' names could hide installed ones
    for module in spec["preload"]:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - a module only importable from where it was first imported
            pass
    functions = [_resolve(c["function"]) for c in spec["calls"]]
    known = set(sys.modules)
    times = []
    for fn, c in zip(functions, spec["calls"]):
        for folder in c["clear"]:
            shutil.rmtree(folder, ignore_errors=True)
        times.append(_timed(fn, [Path(v) if kind == "path" else v for kind, v in c["args"]]))
    return {"times": times, "imported": sorted(m for m in set(sys.modules) - known if not m.startswith("__"))}


def measure(limit: dict, ingest: dict, repeats: int, compare: bool = False) -> dict[str, list]:
    """`repeats` of the limit and of ingest, each in a process of its own, interleaved, after a first run of
    each (imports found, page cache warm): {"limit": [times], "ingest": [times], "load": [...]}. With
    `compare`, per repeat also each side run twice in a process of its own ("limit again", "ingest again": the
    second call timed) and a process that runs them as the bench in one process did, under both sides' imports
    ("in one process": a first limit, a first ingest, the limit after that ingest, the ingest after that
    limit)."""
    limit_imports, ingest_imports = imports(limit), imports(ingest)
    both = sorted(set(limit_imports) | set(ingest_imports))
    runs: dict[str, list] = {key: [] for key in ("limit", "ingest", "load", *COMPARED)}
    for _ in range(repeats):  # interleaved, so machine noise hits both alike
        runs["limit"].append(sequence([limit], limit_imports)["times"][0])
        runs["ingest"].append(sequence([ingest], ingest_imports)["times"][0])
        if compare:
            runs["limit again"].append(sequence([limit, limit], limit_imports)["times"][1])
            runs["ingest again"].append(sequence([ingest, ingest], ingest_imports)["times"][1])
            times = sequence([limit, ingest, limit, ingest], both)["times"]
            runs["limit after ingest"].append(times[2])
            runs["ingest after limit"].append(times[3])
        runs["load"].append(os.getloadavg()[0])
    return runs


COMPARED = ("limit again", "ingest again", "limit after ingest", "ingest after limit")


def rates(mb: float, runs: dict[str, list]) -> str:
    """Medians of the fresh processes' rates and their ratio, wall and CPU; with the compared runs, the ratio
    as the bench in one process measured it and each way's CPU seconds and minor page faults."""
    def median(key: str, field: str) -> float:
        return statistics.median(t[field] for t in runs[key])

    parts = []
    for field in ("wall", "cpu"):
        limit_rate, our_rate = mb / median("limit", field), mb / median("ingest", field)
        parts.append(f"{field}: limit {limit_rate:7.1f} MB/s  ingest {our_rate:6.1f} MB/s  "
                     f"ratio {our_rate / limit_rate:.2f}")
    text = "fresh processes, " + "   ".join(parts)
    if runs["limit again"]:
        ways = ("limit", "limit again", "limit after ingest", "ingest", "ingest again", "ingest after limit")
        text += (f"\n    in one process (as before): CPU ratio "
                 f"{median('limit after ingest', 'cpu') / median('ingest after limit', 'cpu'):.2f};  CPU s (minor "
                 f"faults): " + ", ".join(f"{way} {median(way, 'cpu'):.3f} ({median(way, 'minflt'):,.0f})"
                                          for way in ways))
    load = statistics.median(runs["load"])
    return text + f"   (load {load:.2f} on {os.cpu_count()} CPUs, {len(runs['load'])} repeats)"


if __name__ == "__main__":
    print(json.dumps(_child(json.loads(sys.stdin.read()))))
