"""Where per-part work runs: in this process or as Ray tasks, one code path for every stage (ingest tasks,
validate groups, dedup signatures and rewrites).

A stage hands `run_each` a plain function, the items (ingest tasks, part groups) and the arguments they
share; the function runs once per item, reads its part from the lake and returns a small result. The
executor is chosen per stage by `choose` from the items' sizes with one cost model (measured here: starting
a local Ray and its workers ~6 s), unless the user named one or a cluster address. A run keeps one Ray
connection for all its stages (`ray_session`), so a remote cluster gets the project's packages once.

On Ray each task asks for the `Resources` its stage declares (`pipelines.stages.STAGES`, or a definition's
`[stage_resources.<stage>]`): Ray places it only on a node that has them free, so a GPU stage's tasks land on
GPU nodes and a CPU stage's never wait for them. With a `log`, a stage on Ray says where its tasks ran: how
many per node and what Ray gave each (`Placements`).
"""

from __future__ import annotations

import functools
import os
import pickle
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, TypeVar

from pipelines.infra.ray_setup import init_ray, prepare_worker

MB = 1 << 20
# The cost model's Ray terms, measured on this 2-core machine: starting a local Ray and its workers (~6 s);
# each worker's warm-up before its first task, the code's modules loaded (bench/ray_scaling.py's profile:
# 0.1-0.2 s a worker for ingest, validate and export, 0.03-0.1 s for dedup); Ray's own CPU per task (raylet,
# GCS, the driver's submit and wait: 2-7 ms on an idle machine)
RAY_STARTUP_S = 6.0
RAY_WORKER_WARMUP_S = 0.2
RAY_TASK_S = 0.005
EXECUTORS = ("auto", "local", "ray")

Item = TypeVar("Item")


@dataclass(frozen=True)
class Resources:
    """What one task of a stage needs on a worker: CPUs, GPUs (fractions allowed, as Ray takes them) and
    memory in MB (0: not declared, Ray places by CPUs and GPUs alone). Passed to Ray as the task's
    requirements; in-process runs ignore them."""

    cpus: float = 1.0
    gpus: float = 0.0
    memory_mb: int = 0

    def ray_options(self) -> dict:
        options = {"num_cpus": self.cpus, "num_gpus": self.gpus}
        if self.memory_mb:
            options["memory"] = self.memory_mb * MB
        return options

    def describe(self) -> str:
        shown = [f"CPU {self.cpus:g}"] + ([f"GPU {self.gpus:g}"] if self.gpus else [])
        return ", ".join(shown + ([f"memory {self.memory_mb:,} MB"] if self.memory_mb else []))


ONE_CPU = Resources()


class Placements:
    """Where a stage's tasks ran on Ray: tasks per node, and the resources Ray assigned them."""

    def __init__(self, resources: Resources):
        self.resources = resources
        self.nodes: Counter = Counter()
        self.assigned: dict[str, float] = {}

    def add(self, node: str, assigned: dict[str, float]) -> None:
        self.nodes[node] += 1
        for name, amount in assigned.items():  # the most any task got: tasks of one stage ask alike
            self.assigned[name] = max(amount, self.assigned.get(name, 0.0))

    def line(self, label: str, what: str) -> str:
        nodes = ", ".join(f"{node} ({n})" for node, n in sorted(self.nodes.items()))
        got = ", ".join(f"{name} {amount:g}" for name, amount in sorted(self.assigned.items()) if name != "memory")
        return (f"  {label}: {sum(self.nodes.values())} {what}s on Ray, each asking {self.resources.describe()}, "
                f"given {got or 'nothing'}; nodes {nodes}")


def _placed(fn: Callable) -> Callable:
    """On a Ray worker: `fn`'s result, the node it ran on, the resources Ray assigned its task and when the
    function ran there (wall start and end, CPU seconds of the worker process, its pid: cheap, read by
    `traced`)."""

    @functools.wraps(fn)
    def run(item, *shared):
        import ray

        prepare_worker()
        context = ray.get_runtime_context()
        started, cpu = time.time(), time.process_time()
        result = fn(item, *shared)
        ran = (started, time.time(), time.process_time() - cpu, os.getpid())
        return result, context.get_node_id()[:12], context.get_assigned_resources(), ran

    return run


@dataclass
class MapTrace:
    """One map on Ray as `traced` records it: when the driver began and ended it (wall, and its own CPU
    seconds), and per task when the function ran on its worker, its CPU seconds there, the worker's pid, when
    the driver had the result and the result's pickled size."""

    label: str
    started: float = field(default_factory=time.time)
    cpu_started: float = field(default_factory=time.process_time)
    ended: float = 0.0
    cpu_ended: float = 0.0
    tasks: list[tuple] = field(default_factory=list)  # start, end, cpu, worker pid, got, bytes
    measuring_cpu: float = 0.0  # driver CPU spent sizing the results for the trace: not the map's own
    caller_cpu: float = 0.0  # driver CPU the caller spent on the results between them (its own work)
    _handed: float = 0.0

    def got(self, result, ran: tuple[float, float, float, int]) -> None:
        """A result in the driver: recorded, then handed to the caller (`back` when it asks for the next)."""
        received, cpu = time.time(), time.process_time()
        size = len(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        self._handed = time.process_time()
        self.measuring_cpu += self._handed - cpu
        self.tasks.append((*ran, received, size))

    def back(self) -> None:
        self.caller_cpu += time.process_time() - self._handed

    def end(self) -> None:
        self.ended, self.cpu_ended = time.time(), time.process_time()


_traces: list[MapTrace] | None = None  # while `traced` records


@contextmanager
def traced() -> Iterator[list[MapTrace]]:
    """Every map run on Ray inside, recorded (`MapTrace`), for a profile of where a stage's time goes
    (bench/ray_scaling.py): sizing each result costs the driver a pickling, so runs do not trace."""
    global _traces
    _traces, outer = [], _traces
    try:
        yield _traces
    finally:
        _traces = outer


def _trace(label: str) -> MapTrace | None:
    if _traces is None:
        return None
    _traces.append(MapTrace(label))
    return _traces[-1]


def ray_pays_off(sizes: list[int], bytes_per_s: float, cpus: int) -> bool:
    """Estimated Ray time (startup, each worker's warm-up, then the items dealt out largest first to one
    worker a core, each paying Ray's cost per task) clearly under the in-process time: by a fifth, as 2
    workers measured 1.3-1.8x one worker, not 2x (bench/ray_scaling.py: the driver's own work does not
    spread)."""
    workers = min(cpus, len(sizes))
    if workers < 2:
        return False
    sizes = sorted(sizes, reverse=True)
    local_s = sum(sizes) / bytes_per_s
    rounds = [sum(sizes[i::workers]) / bytes_per_s + RAY_TASK_S * len(sizes[i::workers]) for i in range(workers)]
    return RAY_STARTUP_S + RAY_WORKER_WARMUP_S + max(rounds) < 0.8 * local_s


def choose(executor: str, ray_address: str | None, sizes: list[int], bytes_per_s: float) -> str:
    """"local" or "ray": the one asked for; with auto, Ray when joining a cluster or when it pays off here
    (or when this process is already connected to Ray by the run)."""
    if executor not in EXECUTORS:
        raise ValueError(f"executor {executor!r}: expected one of {', '.join(EXECUTORS)}")
    if executor != "auto":
        return executor
    if ray_address or _connected():
        return "ray"
    return "ray" if ray_pays_off(sizes, bytes_per_s, os.cpu_count() or 1) else "local"


def _connected() -> bool:
    import sys

    return "ray" in sys.modules and sys.modules["ray"].is_initialized()


def release_freed_memory() -> None:
    """Hand memory freed but kept by the allocators back to the system: Arrow's pool (mimalloc keeps freed
    pages for reuse: after validating 149 part groups of 10 GB of input 137 MB more than after 30 of 2 GB,
    nothing of it in use) and the C heap (glibc only: planning frees its listing and file heads in many small
    blocks; at 290k files the process stayed at 260 MB after planning, 74 MB once trimmed)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=None)
def _malloc_trim():
    """glibc's `malloc_trim`, or None elsewhere: looked up once (`find_library` runs a helper program, ~1.5 ms,
    and the trim runs after every item)."""
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim
    except (OSError, AttributeError, TypeError):  # not glibc: nothing to trim
        return None


def _releasing(fn: Callable) -> Callable:
    """`fn`, then what its item freed handed back (`release_freed_memory`), in-process or in a Ray worker."""

    @functools.wraps(fn)
    def run(item, *shared):
        try:
            return fn(item, *shared)
        finally:
            release_freed_memory()

    return run


def run_each(fn: Callable, items: list[Item], *shared, executor: str = "local", ray_address: str | None = None,
             resources: Resources = ONE_CPU, log: Callable[[str], None] | None = None, label: str = "",
             what: str = "task") -> Iterator[tuple[int, Item, object | None, str | None]]:
    """`fn(item, *shared)` for every item: yields (index, item, result, None) or (index, item, None, error
    line) as each finishes (in item order in-process, in completion order on Ray, each task asking for
    `resources`). A failed item does not stop the others; the caller decides what a failure means. With
    `log`, a run on Ray ends with the placement line. The run's catalog connection is closed first
    (`release_catalog`): the items are the long work, and another process may query the catalog meanwhile."""
    from pipelines.infra.runs import release_catalog

    if items:  # no items, no long work: the run keeps its connection (a rerun with nothing new opens it once)
        release_catalog()
    fn = _releasing(fn)
    if executor == "local":
        for i, item in enumerate(items):
            try:
                yield i, item, fn(item, *shared), None
            except Exception as e:
                yield i, item, None, f"{type(e).__name__}: {e}"
        return
    import ray

    placements = Placements(resources)
    trace = _trace(label or fn.__name__)
    with ray_session(ray_address):
        remote = ray.remote(max_retries=1, **resources.ray_options())(_placed(fn))
        refs = [ray.put(s) for s in shared]  # shipped once, not once per item
        pending = {remote.remote(item, *refs): (i, item) for i, item in enumerate(items)}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            i, item = pending.pop(done[0])
            try:
                result, node, assigned, ran = ray.get(done[0])
            except Exception as e:
                cause = getattr(e, "cause", None) or e
                yield i, item, None, f"{type(cause).__name__}: {cause}"
                continue
            placements.add(node, assigned)
            if trace:
                trace.got(result, ran)
            yield i, item, result, None
            if trace:
                trace.back()
    if trace:
        trace.end()
    if log and items:
        log(placements.line(label or fn.__name__, what))


class Ticker:
    """A long stage says it is alive: a line at most every `every` seconds with items done, elapsed, ETA."""

    def __init__(self, log: Callable[[str], None] | None, label: str, total: int, what: str, every: float = 10.0):
        self.log, self.label, self.total, self.what, self.every = log, label, total, what, every
        self.done, self.started = 0, time.perf_counter()
        self.last = self.started

    def tick(self) -> None:
        self.done += 1
        now = time.perf_counter()
        if self.log is None or self.done == self.total or now - self.last < self.every:
            return
        self.last = now
        elapsed = now - self.started
        left = elapsed / self.done * (self.total - self.done)
        self.log(f"  {self.label}: {self.done:,}/{self.total:,} {self.what}s, {elapsed:,.0f} s, ETA {left:,.0f} s")


def run_all(fn: Callable, items: list[Item], *shared, executor: str = "local", ray_address: str | None = None,
            what: str = "part group", name: Callable[[Item], str] = str, log: Callable[[str], None] | None = None,
            label: str = "", fold: Callable[[object], object] | None = None, resources: Resources = ONE_CPU,
            arrived: Callable[[object], object] | None = None) -> list:
    """`run_each` for stages whose result needs every item: the results in item order; the first failure
    raises RuntimeError naming the item. With `log`, a progress line every 10 s. With `fold`, each result is
    handed to it in item order as soon as the results before it are in, and what it returns is kept: a stage
    folds the bulky part of a result (validate's GX sample) into its own total instead of holding every
    item's until the last one ends. With `arrived`, each result first goes through it as it comes (on Ray in
    completion order): what cannot wait for the items before it (the labeler's answers for its ledger)."""
    results: list = [None] * len(items)
    ready: dict[int, object] = {}  # results that came before an earlier item's (Ray: completion order)
    next_fold = 0
    ticker = Ticker(log, label, len(items), what)
    for i, item, result, error in run_each(fn, items, *shared, executor=executor, ray_address=ray_address,
                                           resources=resources, log=log, label=label, what=what):
        if error:
            raise RuntimeError(f"{what} {name(item)} failed: {error}")
        ready[i] = arrived(result) if arrived else result
        while next_fold in ready:
            found = ready.pop(next_fold)
            results[next_fold] = fold(found) if fold else found
            next_fold += 1
        ticker.tick()
    return results


def run_ordered(fn: Callable, items: list[Item], *shared, executor: str = "local", ray_address: str | None = None,
                window: int = 4, what: str = "part group", name: Callable[[Item], str] = str,
                log: Callable[[str], None] | None = None, label: str = "", resources: Resources = ONE_CPU) -> Iterator:
    """`fn(item, *shared)` results in item order, for a driver that writes them in order (export shards):
    on Ray at most `window` items run or wait ahead of the next one to hand out, so the driver holds at most
    that many results. The first failure raises RuntimeError naming the item. With `log`, a progress line
    every 10 s."""
    ticker = Ticker(log, label, len(items), what)
    placements = Placements(resources)
    for result in _ordered(fn, items, shared, executor, ray_address, window, what, name, placements):
        yield result
        ticker.tick()
    if log and executor != "local" and items:
        log(placements.line(label or fn.__name__, what))


def _ordered(fn: Callable, items: list[Item], shared: tuple, executor: str, ray_address: str | None, window: int,
             what: str, name: Callable[[Item], str], placements: Placements) -> Iterator:
    from pipelines.infra.runs import release_catalog

    if items:  # as run_each does
        release_catalog()
    fn = _releasing(fn)
    if executor == "local":
        for item in items:
            try:
                yield fn(item, *shared)
            except Exception as e:
                raise RuntimeError(f"{what} {name(item)} failed: {type(e).__name__}: {e}") from e
        return
    import ray

    trace = _trace(what)
    with ray_session(ray_address):
        remote = ray.remote(max_retries=1, **placements.resources.ray_options())(_placed(fn))
        refs = [ray.put(s) for s in shared]
        pending: dict[int, object] = {}
        for i, item in enumerate(items):
            pending[i] = remote.remote(item, *refs)
            while len(pending) >= window or (i == len(items) - 1 and pending):
                first = min(pending)
                try:
                    result, node, assigned, ran = ray.get(pending.pop(first))
                except Exception as e:
                    cause = getattr(e, "cause", None) or e
                    raise RuntimeError(f"{what} {name(items[first])} failed: {type(cause).__name__}: {cause}") from e
                placements.add(node, assigned)
                if trace:
                    trace.got(result, ran)
                yield result
                if trace:
                    trace.back()
    if trace:
        trace.end()


@contextmanager
def ray_session(address: str | None):
    """Connected to Ray inside (a local one started for it without an address); disconnected at the end
    only when this call connected."""
    import ray

    started_here = init_ray(address)
    try:
        yield
    finally:
        if started_here:
            ray.shutdown()
