"""Every stage in-process, on a local Ray with 1 worker and with 2 workers, in one run: seconds per stage and
the ratios (2 workers over 1; 2 workers over in-process).

    .venv/bin/python bench/ray_scaling.py [--mb 200] [--task-mb 16] [--repeat 3]

Builds a synthetic DroidBot corpus (bench/android_corpus.py), then for each placement runs, in a fresh
process, ingest -> validate (GX off: it runs once in the driver) -> dedup -> export sft on a fresh lake,
timing each stage. Ray is started and its workers are up before the clock starts, as on a cluster that is
already running. Medians over `--repeat` rounds (the machine is shared and noisy). On a machine with N cores a
stage can gain at most N x; the driver (planning, the dedup reduce, the shard writer) is not parallel.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

STAGES = ("ingest", "validate", "dedup", "export sft")
PLACEMENTS = {"local": 0, "ray 1 worker": 1, "ray 2 workers": 2}


def one_round(corpus: str, task_mb: float, workers: int, root: str) -> dict[str, float]:
    """Seconds per stage for one placement (0 workers: in-process), on a fresh lake under `root`."""
    import dataclasses

    from pipelines import definition
    from pipelines.dedup import dedup_stage
    from pipelines.export import export
    from pipelines.lake import Lake
    from pipelines.options import ExportOptions
    from pipelines.runner import run_ingest
    from pipelines.runs import new_run_id
    from pipelines.stages import StageContext
    from pipelines.validate import validate_stage

    executor = "ray" if workers else "local"
    if workers:
        import ray

        ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
                 _node_ip_address="127.0.0.1")
        ray.get([ray.remote(lambda: None).remote() for _ in range(workers)])
    quiet = lambda line: None  # noqa: E731
    lake = Lake(str(Path(root, "lake")))
    seconds = {}
    started = time.perf_counter()
    defn = dataclasses.replace(definition.load("ingest-android"), stages=["ingest"])
    result = run_ingest(defn, lake.url, [corpus], executor=executor, task_mb=task_mb, progress=False, log=quiet)
    assert result.status == "success", result.messages[:3]
    seconds["ingest"] = time.perf_counter() - started
    for name, stage, options in (("validate", validate_stage, {"gx": False}), ("dedup", dedup_stage, {})):
        started = time.perf_counter()
        stage(StageContext(lake, None, "android", new_run_id(), options, quiet, executor))
        seconds[name] = time.perf_counter() - started
    started = time.perf_counter()
    export(lake, None, "android", str(Path(root, "sft")), ExportOptions(kind="sft"), quiet, executor)
    seconds["export sft"] = time.perf_counter() - started
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=200, help="MB of input")
    ap.add_argument("--task-mb", type=float, default=16, help="input MB per ingest task (the part size)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds per placement (medians are printed)")
    ap.add_argument("--round", nargs=4, metavar=("CORPUS", "TASK_MB", "WORKERS", "ROOT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.round:
        corpus, task_mb, workers, root = args.round
        print(json.dumps(one_round(corpus, float(task_mb), int(workers), root)))
        return

    from bench.android_corpus import write_corpus

    times: dict[str, dict[str, list[float]]] = {p: {s: [] for s in STAGES} for p in PLACEMENTS}
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp, "corpus")
        write_corpus(corpus, args.mb)
        for i in range(args.repeat):
            for placement, workers in PLACEMENTS.items():  # interleaved: drift on the machine hits all alike
                root = Path(tmp, f"{placement}-{i}".replace(" ", "-"))
                done = subprocess.run([sys.executable, __file__, "--round", str(corpus), str(args.task_mb),
                                       str(workers), str(root)], cwd=REPO, capture_output=True, text=True)
                if done.returncode:
                    raise SystemExit(f"{placement} failed: {done.stderr[-3000:]}")
                for stage, s in json.loads(done.stdout.strip().splitlines()[-1]).items():
                    times[placement][stage].append(s)
    med = {p: {s: statistics.median(v) for s, v in t.items()} for p, t in times.items()}
    print(f"{args.mb:g} MB of DroidBot input, {args.task_mb:g} MB tasks, median of {args.repeat} rounds (seconds)")
    print(f"{'stage':12s} {'local':>8s} {'ray 1':>8s} {'ray 2':>8s} {'2 / 1 workers':>14s} {'ray 2 / local':>14s}")
    for stage in STAGES:
        local, one, two = (med[p][stage] for p in PLACEMENTS)
        print(f"{stage:12s} {local:8.2f} {one:8.2f} {two:8.2f} {one / two:13.2f}x {local / two:13.2f}x")


if __name__ == "__main__":
    main()
