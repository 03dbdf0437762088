"""The executor every stage hands its per-part work to: placement, order, failures, progress. (On Ray it
runs in the cluster test and the Ray-placement ingest test; here, what a Ray worker loads.)"""

import pytest

from pipelines.infra import executor


def _square(item: int, offset: int) -> int:
    if item == 3:
        raise ValueError("bad part")
    return item * item + offset


def test_results_come_in_item_order_and_a_failure_names_its_item():
    assert executor.run_all(_square, [1, 2], 10) == [11, 14]
    assert list(executor.run_ordered(_square, [2, 1], 0)) == [4, 1]
    with pytest.raises(RuntimeError, match="part group 3 failed: ValueError: bad part"):
        executor.run_all(_square, [1, 3, 2], 0)
    with pytest.raises(RuntimeError, match="part group 3 failed"):
        list(executor.run_ordered(_square, [1, 3], 0))
    outcomes = list(executor.run_each(_square, [3, 2], 0))  # the others go on
    assert [(i, r, e) for i, _, r, e in outcomes] == [(0, None, "ValueError: bad part"), (1, 4, None)]


def test_choose_takes_what_is_asked_and_weighs_ray_startup_otherwise():
    mb = 1 << 20
    assert executor.choose("local", "10.0.0.1:6379", [mb] * 100, mb) == "local"
    assert executor.choose("ray", None, [], mb) == "ray"
    assert executor.choose("auto", "10.0.0.1:6379", [], mb) == "ray"  # a cluster named: use it
    assert executor.choose("auto", None, [mb] * 4, 60 * mb) == "local"  # 4 MB: Ray's startup costs more
    with pytest.raises(ValueError, match="executor 'gpu'"):
        executor.choose("gpu", None, [], mb)


def test_a_long_stage_reports_progress_but_not_its_last_item():
    lines = []
    executor.run_all(_square, [1, 2, 4], 0, log=lines.append, label="validate android")
    assert lines == []  # under the interval: quiet
    ticker = executor.Ticker(lines.append, "validate android", 3, "part group", every=0.0)
    for _ in range(3):
        ticker.tick()
    assert [line.split(",")[0] for line in lines] == ["  validate android: 1/3 part groups",
                                                      "  validate android: 2/3 part groups"]


def test_fold_sees_results_in_item_order_as_soon_as_the_earlier_ones_are_in(monkeypatch):
    arrivals = [(2, "c"), (0, "a"), (3, "d"), (1, "b")]  # Ray's completion order
    folded: list[tuple[str, int]] = []

    def out_of_order(fn, items, *shared, executor="local", ray_address=None, **_placement):
        for i, item in arrivals:
            yield i, item, fn(item, *shared), None
            folded.append(("arrived", i))  # noted once run_all asks for the next: after it folded what it could

    monkeypatch.setattr(executor, "run_each", out_of_order)
    kept = executor.run_all(lambda item: item.upper(), list("abcd"), fold=lambda r: folded.append(("fold", r)) or r * 2)
    assert kept == ["AA", "BB", "CC", "DD"]
    assert folded == [("arrived", 2), ("fold", "A"), ("arrived", 0), ("arrived", 3), ("fold", "B"), ("fold", "C"),
                      ("fold", "D"), ("arrived", 1)]


def test_what_each_item_freed_is_handed_back_after_it_even_when_it_fails(monkeypatch):
    # Arrow's allocator keeps freed pages for reuse: kept across part groups they grew with the dataset
    released = []
    monkeypatch.setattr(executor, "release_freed_memory", lambda: released.append(len(seen)))
    seen = []

    def work(item):
        seen.append(item)
        if item == 2:
            raise ValueError("bad part")
        return item

    results = list(executor.run_each(work, [1, 2, 3]))
    assert [r[3] is None for r in results] == [True, False, True] and released == [1, 2, 3]
    assert list(executor.run_ordered(work, [1, 3])) == [1, 3] and released[3:] == [4, 5]



def test_a_ray_worker_builds_arrays_without_loading_pandas_and_still_converts_to_it():
    # pyarrow imports pandas on a process's first array built from Python values, to tell a Series from a
    # list: 0.14 s of CPU and 36 MB in every Ray worker of every run, though no task hands pyarrow a pandas
    # object. A worker does without it, and what does need pandas still gets it.
    def first_arrays(item: int) -> tuple[bool, str, int]:
        import sys

        import pyarrow as pa

        pa.array([item, None])
        pa.Table.from_pylist([{"n": item}])
        loaded = "pandas" in sys.modules
        frame = pa.table({"n": [item]}).to_pandas()
        return loaded, type(frame).__name__, int(frame["n"][0])

    done = list(executor.run_each(first_arrays, [7], executor="ray"))
    assert [(result, error) for _, _, result, error in done] == [((False, "DataFrame", 7), None)]
