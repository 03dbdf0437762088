"""Which tests share a worker when the suite runs on several processes (`make test`: pytest-xdist with
`--dist loadgroup --no-loadscope-reorder`), and in what order the groups are handed out.

A test module is a group of its own, except where running it beside another module on a second worker would
repeat work or collide:
- modules that use the same once-per-process producer runs (`CACHES`: each caches its producers' output in a
  module dict, so two workers would run the same CLI or framework twice) share one group, transitively: a test
  run still runs each producer once;
- modules that start Ray (a local instance or `ray start`) share one group: two Ray instances at once would
  contend for Ray's fixed default ports and for the machine's cores the Ray tests measure.
Groups are handed out longest first (a group costs its modules' `COST_S`, the seconds measured on a 2-core machine,
or `SECONDS_A_TEST` a test for a module not listed), so the last group a worker picks up is a short one.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

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


def _caches_of(module: types.ModuleType) -> set[str]:
    """The cached producer modules `module` refers to: imported whole, or a fixture or function of theirs."""
    found = set()
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
        if name in CACHES and name != module.__name__:
            found.add(name)
    return found


def _closure(names: set[str]) -> set[str]:
    """`names` with the cached modules they use themselves (framework runs also run the trace producers)."""
    todo, seen = list(names), set(names)
    while todo:
        module = sys.modules.get(todo.pop())
        for name in _caches_of(module) if module else ():
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def module_groups(modules: dict[str, types.ModuleType]) -> dict[str, str]:
    """{test module path: group name}: its own path, `ray`, or the first path of the modules it shares runs with."""
    parent = {path: path for path in modules}

    def root(path: str) -> str:
        while parent[path] != path:
            path = parent[path]
        return path

    owner: dict[str, str] = {}  # cached module or `ray` -> the first test module using it
    for path, module in modules.items():
        source = Path(module.__file__).read_text(encoding="utf-8") if module.__file__ else ""
        keys = _closure(_caches_of(module)) | ({RAY_GROUP} if RAY_SOURCE.search(source) else set())
        for key in sorted(keys):
            if key in owner:
                parent[root(path)] = root(owner[key])
            else:
                owner[key] = path
    ray_root = root(owner[RAY_GROUP]) if RAY_GROUP in owner else None
    return {path: RAY_GROUP if root(path) == ray_root else root(path) for path in modules}


def order_and_mark(items: list, mark) -> None:
    """Mark every item with its group (`mark(name)` gives the marker) and sort `items` in place: groups longest
    first, each group's tests in their collection order."""
    modules = {}
    for item in items:
        modules.setdefault(item.location[0], item.module)
    groups = module_groups(modules)
    tests: dict[str, int] = {}
    for item in items:
        tests[item.location[0]] = tests.get(item.location[0], 0) + 1
    cost: dict[str, float] = {}
    for path, group in groups.items():
        cost[group] = cost.get(group, 0.0) + COST_S.get(path, tests[path] * SECONDS_A_TEST)
    position = {id(item): index for index, item in enumerate(items)}
    for item in items:
        item.add_marker(mark(groups[item.location[0]]))
    items.sort(key=lambda item: (-cost[groups[item.location[0]]], groups[item.location[0]], position[id(item)]))
