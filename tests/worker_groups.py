"""Which tests share a worker when the suite runs on several processes (`make test`: pytest-xdist,
`-n 2 --dist loadgroup --no-loadscope-reorder`), and in what order the groups are handed out.

A test module is a group of its own, except where running it beside another module on a second worker would
repeat work or collide:
- modules that use the same once-per-process producer runs (`CACHES`: each caches its producers' output in a
  module dict, so two workers would run the same CLI or framework twice) share one group, transitively, and so
  do modules that import another test module (its fixtures): a test run still runs each producer once;
- modules that start Ray (a local instance or `ray start`) share one group: two Ray instances at once would
  contend for Ray's fixed default ports and for the machine's cores the Ray tests measure.
The groups are read from the modules' source (their imports), so the controller, which collects no tests, and
every worker find the same groups. The controller's scheduler (`Scheduler`, given to xdist by the conftest)
hands a worker a whole group; each worker sorts its collection longest group first (a group costs its modules'
`COST_S`, the seconds measured on a 2-core machine, or `SECONDS_A_TEST` a test for a module not listed), so the
last group a worker picks up is a short one.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# modules whose producer runs are cached per process (a module-level dict)
CACHES = ("tests.ingest.producers", "tests.ingest.traces.producer_runs", "tests.ingest.swe.producer_runs",
          "tests.ingest.swe.coding_clis", "tests.ingest.chat.framework_runs")
RAY_SOURCE = re.compile(r"^\s*(import ray|from ray\b)|ray\.init\(|\"--executor\", \"ray\"|executor=\"ray\"|"
                        r"\"ray\", \"start\"|ray_setup", re.M)
RAY_GROUP = "ray"
# the modules of 20 s or more (setup + calls + teardown, JUnit times of one process on 2 cores, 2026-12-07); only
# the order depends on them
COST_S = {"tests/pipelines/test_readme_walkthrough.py": 148, "tests/pipelines/test_trainer_configs.py": 137,
          "tests/pipelines/test_ray_cluster.py": 121, "tests/pipelines/test_branches_chain.py": 113,
          "tests/pipelines/test_eval.py": 75, "tests/pipelines/test_label.py": 63,
          "tests/pipelines/test_sample_targets.py": 56, "tests/ingest/swe/test_cline_cli.py": 54,
          "tests/pipelines/test_runner.py": 48, "tests/pipelines/test_s3_lake.py": 33,
          "tests/ingest/swe/test_mixed_clis.py": 30, "tests/fuzz/test_fuzz.py": 28,
          "tests/ingest/browser/test_agentlab_producer.py": 26, "tests/ingest/desktop/test_cua_producer.py": 25,
          "tests/ingest/browser/test_browser_use_producer.py": 20}
SECONDS_A_TEST = 0.3  # the median module's cost a test


def _module_path(name: str) -> str:
    return name.replace(".", "/") + ".py"


@functools.cache
def _source(path: str) -> str:
    return (REPO / path).read_text(encoding="utf-8")


@functools.cache
def _imports(path: str) -> frozenset[str]:
    """The `tests.` modules the module at `path` (relative to the repository) imports something of, other than
    constants only (`from tests.ingest.producers import PRODUCERS` shares no producer run)."""
    found = set()
    for node in ast.walk(ast.parse(_source(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if any(not alias.name.isupper() for alias in node.names):
                found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(name for name in found if name.startswith("tests."))


def _caches(path: str) -> set[str]:
    """The cached producer modules the module at `path` uses, directly or through another cached module."""
    todo, seen = [path], set()
    while todo:
        for name in _imports(todo.pop()):
            if name in CACHES and name not in seen:
                seen.add(name)
                todo.append(_module_path(name))
    return seen


def _keys(path: str, paths: set[str]) -> set[str]:
    """What ties the module at `path` to others: the cached modules it uses, itself and the test modules it
    imports, `ray`."""
    keys = _caches(path) | {path} | {_module_path(name) for name in _imports(path)} & paths
    if RAY_SOURCE.search(_source(path)):
        keys.add(RAY_GROUP)
    return keys


def module_groups(paths) -> dict[str, str]:
    """{test module path: its group}: `ray`, or the first path (in sorted order) of the modules it shares runs
    with, or its own path."""
    paths = set(paths)
    parent = {path: path for path in paths}

    def root(path: str) -> str:
        while parent[path] != path:
            path = parent[path]
        return path

    owner: dict[str, str] = {}  # key -> the first module tied to it
    for path in sorted(paths):
        for key in sorted(_keys(path, paths)):
            a, b = root(path), root(owner.setdefault(key, path))
            parent[max(a, b)] = min(a, b)
    ray_root = root(owner[RAY_GROUP]) if RAY_GROUP in owner else None
    return {path: RAY_GROUP if root(path) == ray_root else root(path) for path in paths}


def order(items: list) -> None:
    """Sort a worker's collected `items` in place: groups longest first, each group's tests in collection order."""
    tests: dict[str, int] = {}
    for item in items:
        tests[item.location[0]] = tests.get(item.location[0], 0) + 1
    groups = module_groups(tests)
    cost: dict[str, float] = {}
    for path, group in groups.items():
        cost[group] = cost.get(group, 0.0) + COST_S.get(path, tests[path] * SECONDS_A_TEST)
    position = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (-cost[groups[item.location[0]]], groups[item.location[0]], position[id(item)]))


def scheduler(config, log):
    """xdist's load-scope scheduler handing out the groups above (its own `xdist_group` marks cannot be read by
    xdist 3.8 under pytest 9, whose items no longer keep a writable `_nodeid`)."""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:
                self.groups = module_groups({n.split("::")[0] for n in self.collection})
            return self.groups[nodeid.split("::")[0]]

    return GroupScheduling(config, log)
