"""The worker groups of `make test` (tests/worker_groups.py): modules that share producer runs or start Ray run on
one worker, every other module is a group of its own."""

import types

import tests.ingest.chat.framework_runs  # noqa: F401 (its producer runs use the trace producers' runs)
from tests import worker_groups


def _module(tmp_path, name: str, source: str = "", **values) -> types.ModuleType:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    vars(module).update(values)
    return module


def _run_of(cache: str):
    def fixture():
        pass

    fixture.__module__ = cache
    return fixture


def test_modules_sharing_a_producer_cache_or_ray_share_a_worker(tmp_path):
    modules = {
        "a.py": _module(tmp_path, "a", cli_runs=_run_of("tests.ingest.swe.coding_clis")),
        "b.py": _module(tmp_path, "b", session=_run_of("tests.ingest.swe.coding_clis")),
        "c.py": _module(tmp_path, "c", "import json\n"),
        "d.py": _module(tmp_path, "d", "import ray\n"),
        "e.py": _module(tmp_path, "e", 'main(["run", "x", "--executor", "ray"])\n'),
        # framework runs reuse the trace producers' runs: a module using either shares their worker
        "f.py": _module(tmp_path, "f", framework=_run_of("tests.ingest.chat.framework_runs")),
        "g.py": _module(tmp_path, "g", traces=tests.ingest.traces.producer_runs),
    }
    groups = worker_groups.module_groups(modules)
    assert groups["a.py"] == groups["b.py"] == "a.py"
    assert groups["c.py"] == "c.py"
    assert groups["d.py"] == groups["e.py"] == "ray"
    assert groups["f.py"] == groups["g.py"] == "f.py"


def test_items_are_marked_and_ordered_longest_group_first(tmp_path, monkeypatch):
    monkeypatch.setattr(worker_groups, "COST_S", {"slow.py": 100})
    modules = {name: _module(tmp_path, name.removesuffix(".py")) for name in ("fast.py", "slow.py")}
    items = [types.SimpleNamespace(location=(path, 0, name), module=modules[path], marks=[])
             for path, name in (("fast.py", "f1"), ("slow.py", "s1"), ("fast.py", "f2"), ("slow.py", "s2"))]
    for item in items:
        item.add_marker = item.marks.append
    worker_groups.order_and_mark(items, lambda name: name)
    assert [i.location[2] for i in items] == ["s1", "s2", "f1", "f2"]
    assert [i.marks for i in items] == [["slow.py"], ["slow.py"], ["fast.py"], ["fast.py"]]
