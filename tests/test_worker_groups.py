"""The worker groups of `make test` (tests/worker_groups.py): modules that share producer runs, import another test
module or start Ray run on one worker; every other module is a group of its own."""

import types

from tests import worker_groups


def _groups(tmp_path, monkeypatch, sources: dict[str, str]) -> dict[str, str]:
    for path, source in sources.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(source)
    monkeypatch.setattr(worker_groups, "REPO", tmp_path)
    worker_groups._source.cache_clear()
    worker_groups._imports.cache_clear()
    try:
        return worker_groups.module_groups(sources)
    finally:
        worker_groups._source.cache_clear()
        worker_groups._imports.cache_clear()


def test_modules_sharing_a_producer_run_or_ray_share_a_worker(tmp_path, monkeypatch):
    ray = "import " + "ray\n"  # spelled apart: this module's own source starts no Ray
    groups = _groups(tmp_path, monkeypatch, {
        "tests/ingest/swe/coding_clis.py": "",
        "tests/ingest/chat/framework_runs.py": "from tests.ingest.traces.producer_runs import run\n",
        "tests/ingest/traces/producer_runs.py": "",
        "tests/a.py": "from tests.ingest.swe.coding_clis import cli_run\n",
        "tests/b.py": "from tests.ingest.swe import coding_clis\n",
        "tests/c.py": "from tests.ingest.swe.coding_clis import NOTES, PRODUCERS\n",  # constants: no run shared
        "tests/d.py": ray,
        "tests/e.py": 'main(["run", "x", "--executor", ' + '"ray"])\n',
        # framework runs reuse the trace producers' runs: a module using either shares their worker
        "tests/f.py": "from tests.ingest.chat.framework_runs import smolagents_runs\n",
        "tests/g.py": "from tests.ingest.traces import producer_runs\n",
        "tests/h.py": "from tests import a\n",  # another test module's fixtures
    })
    assert groups["tests/a.py"] == groups["tests/b.py"] == groups["tests/h.py"] == "tests/a.py"
    assert groups["tests/c.py"] == "tests/c.py"
    assert groups["tests/d.py"] == groups["tests/e.py"] == "ray"
    assert groups["tests/f.py"] == groups["tests/g.py"] != groups["tests/a.py"]


def test_a_worker_runs_its_groups_longest_first(tmp_path, monkeypatch):
    monkeypatch.setattr(worker_groups, "REPO", tmp_path)
    monkeypatch.setattr(worker_groups, "COST_S", {"slow.py": 100})
    for name in ("fast.py", "slow.py"):
        (tmp_path / name).write_text("")
    items = [types.SimpleNamespace(location=(path, 0, name))
             for path, name in (("fast.py", "f1"), ("slow.py", "s1"), ("fast.py", "f2"), ("slow.py", "s2"))]
    worker_groups.order(items)
    assert [i.location[2] for i in items] == ["s1", "s2", "f1", "f2"]
