"""Where a stage's time goes on Ray, measured so that a busy machine does not blur it: CPU seconds per process
(the driver, each Ray worker, the raylet, the GCS, Ray's other processes, read from /proc before and after the
stage) and the executor's trace of every map (`pipelines.infra.executor.traced`: when each task's function ran
on its worker and its CPU seconds there, when the driver had the result, its size, the driver's CPU in the map
and what its caller did with the results).

From those, a stage splits into:
- serial: the driver's CPU outside the maps (planning, the reduce, catalog commits);
- tasks: CPU of the stage's functions on the workers;
- the caller's: the driver's CPU on each result while the map runs (progress, markers): serial too, but it
  overlaps the tasks;
- each worker's warm-up: its CPU outside the functions (the code's modules loaded to unpickle the function,
  arguments and results (de)serialized) and its first task's CPU beyond the others' median (modules loaded
  on first use): paid once per worker, so twice on 2 workers;
- Ray's overhead per task: the raylet's and GCS's CPU (scheduling, the object store) and the driver's in the
  maps beyond its caller's (submitting, waiting, results deserialized).

`expected` turns a profile into the speed-up k workers can reach over 1 on an idle machine of `cores` cores:
each map takes the longest of its tasks' schedule on k workers (in order, after each worker's warm-up), the
driver's work in it, and all of its CPU spread over the cores; the serial part is added as it is (Amdahl).
An upper bound: it assumes the CPU seconds measured here, no memory-bandwidth or cache contention and no I/O wait.
"""

from __future__ import annotations

import heapq
import os
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
ROLES = ("driver", "workers", "raylet", "gcs", "ray other")


def _stat(pid: str) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a process from /proc/<pid>/stat; None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK  # ppid, utime + stime


def _role(pid: int, me: int) -> str:
    if pid == me:
        return "driver"
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "ray other"
    if cmdline.startswith("ray::") or "default_worker.py" in cmdline:  # a worker renames itself ray::<task>
        return "workers"
    if comm in ("raylet", "gcs_server"):
        return "raylet" if comm == "raylet" else "gcs"
    return "ray other"


def process_cpu() -> dict[int, tuple[str, float]]:
    """CPU seconds so far of this process and every process under it (a local Ray's, or the loopback cluster's
    nodes this process started), by pid, with its role."""
    me = os.getpid()
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := _stat(entry)) is not None:
            stats[int(entry)] = found
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    mine, todo = {}, [me]
    while todo:
        pid = todo.pop()
        if pid in stats:
            mine[pid] = (_role(pid, me), stats[pid][1])
        todo += children.get(pid, [])
    return mine


def cpu_by_role(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds each role used between two `process_cpu` readings (a process started between: all of it)."""
    used = dict.fromkeys(ROLES, 0.0)
    for pid, (role, cpu) in after.items():
        used[role] += cpu - before.get(pid, (role, 0.0))[1]
    return used


def _first_task_excess(tasks: list[tuple]) -> dict[int, float]:
    """CPU seconds each worker's first task took beyond the other tasks' median: the worker's warm-up inside
    the function (modules its code imports on first use: pyarrow loads pandas on its first Python list)."""
    first: dict[int, tuple] = {}
    for task in sorted(tasks):  # by start time
        first.setdefault(task[3], task)
    rest = sorted(task[2] for task in tasks if first[task[3]] is not task)
    if not rest:
        return {}
    median = rest[len(rest) // 2]
    return {pid: max(task[2] - median, 0.0) for pid, task in first.items()}


def stage_profile(wall: float, cpu: dict[str, float], traces: list, cpu_started: float) -> dict:
    """One stage's profile from its wall seconds, its CPU by role and its maps' traces (plain numbers: it goes
    through JSON). A worker's warm-up (its CPU outside the functions: the code's modules loaded to unpickle the
    function, results pickled; and its first task's excess) is kept apart from the tasks: each worker pays it
    once, so 2 workers pay it twice. The driver's serial CPU before the first map is kept apart too
    (`pre_serial`: planning, which grows with the input). `cpu_started`: the driver's `time.process_time()` when
    the stage began."""
    pre_serial = (traces[0].cpu_started if traces else time.process_time()) - cpu_started
    tasks = [task for t in traces for task in t.tasks]
    excess = _first_task_excess(tasks)
    firsts = {min((task for task in tasks if task[3] == pid)) for pid in excess}
    measuring = sum(t.measuring_cpu for t in traces)
    in_maps = sum(t.cpu_ended - t.cpu_started for t in traces) - measuring
    task_cpu = sum(task[2] for task in tasks)
    worker_overhead = max(cpu["workers"] - task_cpu, 0.0)
    workers = max(len({task[3] for task in tasks}), 1)
    maps = [{"label": t.label, "tasks": [task[2] - (excess[task[3]] if task in firsts else 0.0) for task in t.tasks],
             "caller": t.caller_cpu, "driver": t.cpu_ended - t.cpu_started - t.measuring_cpu,
             "wall": t.ended - t.started, "result_bytes": sum(task[5] for task in t.tasks),
             "latency": sorted(task[4] - task[1] for task in t.tasks)} for t in traces]
    return {"wall": wall, "cpu": cpu, "tasks": len(tasks), "task_cpu": task_cpu - sum(excess.values()),
            "serial": cpu["driver"] - measuring - in_maps, "serial_wall": wall - sum(m["wall"] for m in maps),
            "caller": sum(t.caller_cpu for t in traces), "workers": workers,
            "warmup": (worker_overhead + sum(excess.values())) / workers, "worker_overhead": worker_overhead,
            "system": cpu["raylet"] + cpu["gcs"] + cpu["ray other"], "driver_in_maps": in_maps,
            "result_bytes": sum(m["result_bytes"] for m in maps), "maps": maps, "pre_serial": pre_serial}


def overhead(p: dict) -> float:
    """Ray's CPU seconds in a stage per task, beyond the workers' warm-up: the raylet's, GCS's and Ray's other
    processes', and the driver's in the maps beyond its caller's work on the results (submitting, waiting,
    results deserialized)."""
    return p["system"] + max(p["driver_in_maps"] - p["caller"], 0.0)


def _schedule(tasks: list[float], k: int, ready: float = 0.0) -> float:
    """Seconds until the last of `tasks` ends on k workers free after `ready` seconds, each taking the next task
    as it frees (in order, as Ray hands them out)."""
    ends = [ready] * k
    for cpu in tasks:
        heapq.heappush(ends, heapq.heappop(ends) + cpu)
    return max(ends)


def projected(p: dict, workers: int, cores: int = 2) -> float:
    """Seconds the stage would take on `workers` Ray workers on an idle machine of `cores` cores: the serial
    part, then each map (each worker warming up before its first task)."""
    n = max(p["tasks"], 1)
    seconds, warm_cpu = max(p["serial"], 0.0), workers * p["warmup"]
    for m in p["maps"]:
        tasks = m["tasks"]
        total = sum(tasks) + warm_cpu + m["driver"] + p["system"] * len(tasks) / n
        seconds += max(_schedule(tasks, workers, warm_cpu / workers), m["driver"], total / cores)
        warm_cpu = 0.0  # paid once a stage
    return seconds


def expected(p: dict, workers: int = 2, cores: int = 2, p_many: dict | None = None) -> dict:
    """The speed-up `workers` can reach over 1 on an idle machine (`projected`), with what bounds it: from the
    1-worker profile `p` alone, or with `p_many`, a round on `workers` workers, for their side (its CPU seconds
    carry what running side by side costs: caches, memory bandwidth)."""
    one, many = projected(p, 1, cores), projected(p_many or p, workers, cores)
    return {"ratio": one / many if many else 1.0, "serial": max(p["serial"], 0.0), "one": one,
            "per_task_ms": 1000 * overhead(p) / max(p["tasks"], 1),
            "per_mb_ms": 1000 * overhead(p) / max(p["result_bytes"] / 1e6, 1e-9)}


def scaled(p: dict, factor: int) -> dict:
    """The profile of `factor` times the input, projected: each map's tasks repeated, the driver's serial work
    before the first map (planning: it lists and claims every file) and its work in the maps multiplied, the
    rest (commits, the workers' warm-up) as it was."""
    grown = {**p, "tasks": p["tasks"] * factor, "task_cpu": p["task_cpu"] * factor,
             "serial": p["serial"] + p["pre_serial"] * (factor - 1), "pre_serial": p["pre_serial"] * factor,
             "system": p["system"] * factor, "driver_in_maps": p["driver_in_maps"] * factor,
             "caller": p["caller"] * factor}
    grown["maps"] = [{**m, "tasks": m["tasks"] * factor, "driver": m["driver"] * factor} for m in p["maps"]]
    return grown


def describe(p: dict) -> str:
    """The profile in one line: CPU seconds by part, and what Ray costs per task and per MB of results."""
    e = expected(p)
    longest = max((max(m["tasks"], default=0.0) for m in p["maps"]), default=0.0)
    latency = sorted(x for m in p["maps"] for x in m["latency"])
    median_latency = 1000 * latency[len(latency) // 2] if latency else 0.0
    return (f"{p['tasks']} tasks: functions {p['task_cpu']:.2f} s CPU (longest {longest:.2f} s), warm-up "
            f"{p['warmup']:.2f} s a worker ({p['workers']} ran), driver serial "
            f"{e['serial']:.2f} s ({p['serial_wall']:.2f} s wall), driver on results {p['caller']:.2f} s, Ray {overhead(p):.2f} s "
            f"(raylet/GCS/other {p['system']:.2f}, driver {max(p['driver_in_maps'] - p['caller'], 0.0):.2f}) = "
            f"{e['per_task_ms']:.0f} ms a task, results "
            f"{_shipped(p['result_bytes'], e['per_mb_ms'])}; a result in the driver {median_latency:.0f} ms after "
            f"its task ended (median)")


def _shipped(size: int, per_mb_ms: float) -> str:
    """The results' size, and Ray's overhead per MB of them where they are big enough for the figure to mean
    something (a few kB of markers cost what their tasks cost, not what their bytes do)."""
    if size < 1e6:
        return f"{size / 1e3:,.0f} kB in all"
    return f"{size / 1e6:,.1f} MB in all ({per_mb_ms:.0f} ms of overhead per MB)"
