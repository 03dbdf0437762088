"""Every stage in-process, on a local Ray with 1 worker and with 2 workers, and on a 2-node Ray cluster on
loopback (1 CPU a node), in one run: seconds per stage and the ratios (2 workers over 1; 2 nodes over 1 worker;
2 workers over in-process), with the machine's load beside them.

    .venv/bin/python bench/ray_scaling.py [--mb 200] [--task-mb 16] [--repeat 3]

Builds a synthetic DroidBot corpus (bench/android_corpus.py), then for each placement runs, in a fresh
process, ingest -> validate (GX off: it runs once in the driver) -> dedup -> export sft on a fresh lake,
timing each stage. Ray is started and its workers are up before the clock starts, as on a cluster that is
already running. Medians over `--repeat` rounds (the machine is shared and noisy). On a machine with N cores a
stage can gain at most N x; the driver (planning, the dedup reduce, the shard writer) is not parallel.

The load: before every round the CPU time other processes used over one second is read from /proc/stat (busy
cores). A ratio of 2 workers over 1 needs two free cores: when the median busy cores before the rounds leave
fewer than 1.5 free for them, the ratio is not printed, and the line says why; the seconds still are.

Beside it, what a busy machine can still measure: the speed-up 2 workers can reach over 1 on an idle 2-core
machine, "expected at most X.XXx (serial Y s of Z s, overhead per task W ms)", from the CPU seconds of the
1-worker rounds (bench/ray_profile.py: the driver's serial work, the tasks' functions, Ray's overhead in the
workers, raylet, GCS and driver; Amdahl with the tasks scheduled on 2 workers), then with the 2-worker rounds'
CPU seconds for the 2-worker side, and at 5 times the input (`ray_profile.scaled`: tasks and planning grow, the
commits and the workers' warm-up do not). The profile lines after the table give the parts.

    .venv/bin/python bench/ray_scaling.py --placements "ray 1 worker,ray 2 workers"   # the profile alone

With `--against DIR` (another checkout of the project, e.g. a worktree of the main branch), its code's rounds
run interleaved with this one's, on the same corpus and the same Ray, each round in a fresh process of its
own code, and its table and profile are printed after this one's: before and after a change, measured side by
side on the same machine state.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

STAGES = ("ingest", "validate", "dedup", "export sft")
PLACEMENTS = {"local": 0, "ray 1 worker": 1, "ray 2 workers": 2, "ray 2 nodes": -2}  # -2: a 2-node cluster
FREE_CORES_NEEDED = 1.5  # for a 2-worker ratio: less than this left by other work, and no ratio is shown


def busy_cores(seconds: float = 1.0) -> float:
    """Cores the machine's processes kept busy over `seconds` (from /proc/stat), before a round starts."""
    def sample() -> tuple[int, int]:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        return sum(values), values[3] + values[4]  # all, idle + iowait

    total0, idle0 = sample()
    time.sleep(seconds)
    total1, idle1 = sample()
    return (os.cpu_count() or 1) * (1 - (idle1 - idle0) / max(total1 - total0, 1))


def start_cluster(root: Path) -> tuple[str, list[subprocess.Popen]]:
    """A head and a worker node on loopback, 1 CPU each, started by their own process groups."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ray = str(Path(sys.executable).parent / "ray")
    # token authentication, as a secured cluster runs (and as Ray turns on when it finds a token file); the
    # driver, this process, joins with the same token
    os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1"]
    head = subprocess.Popen([ray, "start", *common, "--head", f"--port={port}", "--include-dashboard=false",
                             f"--temp-dir={root / 'head'}"], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(8)  # the head's GCS up before the worker joins (the worker retries a while if not)
    worker = subprocess.Popen([ray, "start", *common, f"--address=127.0.0.1:{port}", f"--temp-dir={root / 'w'}"],
                              env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return f"127.0.0.1:{port}", [head, worker]


def stop_cluster(nodes: list[subprocess.Popen]) -> None:
    for node in reversed(nodes):  # our own nodes only, by their process groups
        os.killpg(node.pid, signal.SIGTERM)
    for node in nodes:
        try:
            node.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(node.pid, signal.SIGKILL)
            node.wait()


def one_round(corpus: str, task_mb: float, workers: int, root: str) -> dict[str, float]:
    """Seconds per stage for one placement (0 workers: in-process), on a fresh lake under `root`."""
    import dataclasses

    from pipelines.infra import definition
    from pipelines.stages.dedup import dedup_stage
    from pipelines.stages.export import export
    from pipelines.infra.lake import Lake
    from pipelines.infra.options import ExportOptions
    from pipelines.infra.runner import run_ingest
    from pipelines.infra.runs import new_run_id
    from pipelines.stages import StageContext
    from pipelines.stages.validate import validate_stage

    executor = "ray" if workers else "local"
    if workers < 0:  # the cluster: both nodes alive before the clock starts
        address, nodes = start_cluster(Path(root))  # before Ray is imported: it reads the token once
        import ray

        deadline = time.monotonic() + 120
        while True:
            try:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False, _node_ip_address="127.0.0.1")
                break
            except ConnectionError:  # the head's GCS is not up yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(2)
        while sum(n["Alive"] for n in ray.nodes()) < -workers:
            if time.monotonic() > deadline:
                raise RuntimeError("the 2-node cluster did not come up in 120 s")
            time.sleep(1)
        ray.get([ray.remote(lambda: None).remote() for _ in range(-workers)])
    elif workers:
        import ray

        ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
                 _node_ip_address="127.0.0.1")
        ray.get([ray.remote(lambda: None).remote() for _ in range(workers)])
    quiet = lambda line: None  # noqa: E731
    lake = Lake(str(Path(root, "lake")))

    def ingest() -> None:
        defn = dataclasses.replace(definition.load("ingest-android"), stages=["ingest"])
        result = run_ingest(defn, lake.url, [corpus], executor=executor, task_mb=task_mb, progress=False, log=quiet)
        assert result.status == "success", result.messages[:3]

    runs = {"ingest": ingest,
            "validate": lambda: validate_stage(StageContext(lake, None, "android", new_run_id(), {"gx": False},
                                                            quiet, executor)),
            "dedup": lambda: dedup_stage(StageContext(lake, None, "android", new_run_id(), {}, quiet, executor)),
            "export sft": lambda: export(lake, None, "android", str(Path(root, "sft")), ExportOptions(kind="sft"),
                                         quiet, executor)}
    seconds, profiles = {}, {}
    for name, run in runs.items():
        seconds[name], profiles[name] = _timed(run, profiled=bool(workers))
    if workers < 0:
        ray.shutdown()
        stop_cluster(nodes)
    return {"seconds": seconds, "profiles": profiles}


def _timed(run, profiled: bool) -> tuple[float, dict | None]:
    """Wall seconds of `run()`; on Ray also its profile (`bench.ray_profile`): CPU by process before and after,
    and the executor's trace of its maps."""
    from bench.ray_profile import cpu_by_role, process_cpu, stage_profile
    from pipelines.infra.executor import traced

    if not profiled:
        started = time.perf_counter()
        run()
        return time.perf_counter() - started, None
    before = process_cpu()
    with traced() as traces:
        started, cpu_started = time.perf_counter(), time.process_time()
        run()
        wall = time.perf_counter() - started
    return wall, stage_profile(wall, cpu_by_role(before, process_cpu()), traces, cpu_started)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=200, help="MB of input")
    ap.add_argument("--task-mb", type=float, default=16, help="input MB per ingest task (the part size)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds per placement (medians are printed)")
    ap.add_argument("--placements", default=",".join(PLACEMENTS),
                    help="which of them to run, comma-separated (the profile needs 'ray 1 worker')")
    ap.add_argument("--against", type=Path, help="another checkout whose rounds run interleaved with these")
    ap.add_argument("--round", nargs=4, metavar=("CORPUS", "TASK_MB", "WORKERS", "ROOT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.round:
        corpus, task_mb, workers, root = args.round
        print(json.dumps(one_round(corpus, float(task_mb), int(workers), root)))
        return
    placements = {p: PLACEMENTS[p] for p in args.placements.split(",")}
    checkouts = {"this checkout": REPO, **({f"against {args.against}": args.against.resolve()} if args.against else {})}
    found, busy = _rounds(args, placements, checkouts)
    cpus, other = os.cpu_count() or 1, statistics.median(busy)
    print(f"{args.mb:g} MB of DroidBot input, {args.task_mb:g} MB tasks, median of {args.repeat} rounds (seconds); "
          f"load before the rounds: {other:.1f} of {cpus} cores busy (median, max {max(busy):.1f})")
    for name, (times, profiles) in found.items():
        if len(checkouts) > 1:
            print(f"{name}:")
        _print_table(times, profiles, cpus - other, cpus)
        _print_profiles(profiles)


def _print_table(times: dict, profiles: dict, free: float, cpus: int) -> None:
    med = {p: {s: statistics.median(v) for s, v in t.items()} for p, t in times.items()}
    print(f"{'stage':12s} {'local':>8s} {'ray 1':>8s} {'ray 2':>8s} {'2 nodes':>8s} {'2 / 1 workers':>14s} "
          f"{'2 nodes / 1':>12s} {'ray 2 / local':>14s}  on an idle 2-core machine (profile of ray 1)")
    for stage in STAGES:
        local, one, two, nodes = (med.get(p, {}).get(stage, math.nan) for p in PLACEMENTS)
        if free < FREE_CORES_NEEDED or cpus < 2:
            ratios = f"  no ratio: {free:.1f} cores free of {cpus} before the rounds (2 workers need 2)"
        else:
            ratios = f"{one / two:13.2f}x {one / nodes:11.2f}x {local / two:13.2f}x"
        print(f"{stage:12s} {local:8.2f} {one:8.2f} {two:8.2f} {nodes:8.2f} {ratios}  {_bound(profiles[stage])}")


def _rounds(args, placements: dict[str, int], checkouts: dict[str, Path]) -> tuple[dict, list[float]]:
    """Every placement of every checkout's code `--repeat` times, interleaved, each round in a fresh process
    of that checkout (its own code on the import path): per checkout the seconds per placement and stage and
    the 1- and 2-worker rounds' profiles per stage (with their worker count); and the busy cores before each
    round."""
    from bench.android_corpus import write_corpus

    found = {name: ({p: {s: [] for s in STAGES} for p in placements}, {s: [] for s in STAGES}) for name in checkouts}
    busy: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp, "corpus")
        write_corpus(corpus, args.mb)
        for i in range(args.repeat):
            for (n, (name, checkout)), (placement, workers) in itertools.product(enumerate(checkouts.items()),
                                                                                 placements.items()):
                root = Path(tmp, f"{n}-{placement}-{i}".replace(" ", "-"))
                busy.append(busy_cores())  # interleaved: drift on the machine hits all alike
                done = subprocess.run([sys.executable, str(checkout / "bench" / "ray_scaling.py"), "--round",
                                       str(corpus), str(args.task_mb), str(workers), str(root)], cwd=checkout,
                                      env={**os.environ, "PYTHONPATH": str(checkout)}, capture_output=True, text=True)
                if done.returncode:
                    raise SystemExit(f"{name}, {placement} failed: {done.stderr[-3000:]}")
                got = json.loads(done.stdout.strip().splitlines()[-1])
                times, profiles = found[name]
                for stage, s in got["seconds"].items():
                    times[placement][stage].append(s)
                    if workers in (1, 2):
                        profiles[stage].append((workers, got["profiles"][stage]))
                shutil.rmtree(root, ignore_errors=True)  # its lake: the corpus's size again, per round
    return found, busy


def _median_round(rounds: list[tuple[int, dict]], workers: int = 1) -> dict | None:
    """Of the rounds on `workers` workers, the one whose expected speed-up is the median (the machine is noisy)."""
    from bench.ray_profile import expected

    mine = sorted((p for w, p in rounds if w == workers), key=lambda p: expected(p)["ratio"])
    return mine[len(mine) // 2] if mine else None


def _bound(rounds: list[tuple[int, dict]]) -> str:
    from bench.ray_profile import expected, scaled

    one, two = _median_round(rounds, 1), _median_round(rounds, 2)
    if one is None:
        return "no profile (run 'ray 1 worker')"
    e = expected(one)
    also = f"; {expected(one, p_many=two)['ratio']:.2f}x with the 2-worker round's CPU" if two else ""
    return (f"expected at most {e['ratio']:.2f}x (serial {e['serial']:.2f} s of {e['one']:.2f} s, overhead per task "
            f"{e['per_task_ms']:.0f} ms{also}; at 5x the input {expected(scaled(one, 5))['ratio']:.2f}x)")


def _print_profiles(profiles: dict[str, list[tuple[int, dict]]]) -> None:
    from bench.ray_profile import describe

    for workers in (1, 2):
        print(f"profile on {workers} Ray worker{'s' * (workers > 1)} (CPU seconds; the round with the median bound):")
        for stage in STAGES:
            p = _median_round(profiles[stage], workers)
            if p is not None:
                print(f"  {stage:10s} {describe(p)}")


if __name__ == "__main__":
    main()
