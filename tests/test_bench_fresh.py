"""The benchmarks' fresh processes: what a call imports is found and imported before the clock of the next
process, and a folder a call must not find (the last repeat's lake) is gone before its clock starts."""

import pytest

from bench import fresh


def test_a_call_imports_are_found_and_imported_before_the_clock_next_time():
    first = fresh.call("importlib:import_module", "colorsys")
    found = fresh.imports(first)
    assert "colorsys" in found
    result = fresh.sequence([first, first], found)
    assert result["imported"] == []
    assert len(result["times"]) == 2 and all(t["cpu"] >= 0 and t["wall"] > 0 for t in result["times"])


def test_the_folders_a_call_clears_are_gone_before_it_runs(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    fresh.sequence([fresh.call("os:mkdir", lake, clear=(lake,))])  # mkdir fails where the folder is left
    with pytest.raises(RuntimeError, match="FileExistsError"):
        fresh.sequence([fresh.call("os:mkdir", lake)])


def test_rates_are_medians_of_the_fresh_processes_with_the_compared_ways_beside():
    def times(cpu):
        return [{"cpu": c, "wall": c, "minflt": 0} for c in cpu]

    runs = {"limit": times([1.0, 9.0, 2.0]), "ingest": times([4.0, 5.0, 40.0]), "load": [1.0, 2.0, 3.0],
            **{way: [] for way in fresh.COMPARED}}
    assert "cpu: limit     5.0 MB/s  ingest    2.0 MB/s  ratio 0.40" in fresh.rates(10.0, runs)
    assert "in one process" not in fresh.rates(10.0, runs)
    runs.update({way: times([1.0]) for way in fresh.COMPARED})
    runs["limit after ingest"] = times([0.5])
    assert "in one process (as before): CPU ratio 0.50" in fresh.rates(10.0, runs)
