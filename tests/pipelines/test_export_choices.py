"""Choices the export makes per trajectory, checked over many trajectories: the RL exporter's one turn (spread
over every position, each trajectory's choice its own), and the split group of a web episode (the site of
its FIRST page)."""

from collections import Counter

import pyarrow.parquet as pq

from pipelines.stages.export import export
from pipelines.infra.lake import Lake
from pipelines.infra.options import ExportOptions
from tests.transforms.export.lakes import commit_dataset, episode_row, step_row

TURNS = 5


def _terminal_episodes(lake: str, dataset: str, ids: list[str]) -> None:
    """Episodes of TURNS commands each; the screen after command k of episode e reads `e out k`."""
    episodes, steps = [], []
    for e in ids:
        episodes.append(episode_row(e, "terminal", f"task of {e}"))
        for k in range(TURNS):
            steps.append(step_row(e, k, "terminal", "$ " if k == 0 else f"{e} out {k - 1}\n$ ",
                                  {"kind": "keystrokes", "text": f"step {k}\n"},
                                  final_text=f"{e} out {k}\n$ " if k == TURNS - 1 else None))
    commit_dataset(lake, dataset, episodes, steps)


def _rl_records(lake: str, dataset: str, out) -> dict[str, dict]:
    manifest = export(Lake(lake), None, dataset, str(out), ExportOptions(kind="rl", split_ratios=(1.0, 0.0, 0.0)),
                      log=lambda line: None)
    rows = [r for s in manifest["shards"] for r in pq.read_table(out / s["path"]).to_pylist()]
    return {r["extra_info"]["episode_id"]: r for r in rows}


def test_rl_takes_one_turn_per_trajectory_spread_over_every_position(lake, tmp_path):
    ids = [f"ep{i:03d}" for i in range(200)]
    _terminal_episodes(lake, "term", ids)
    records = _rl_records(lake, "term", tmp_path / "all")
    assert sorted(records) == ids  # exactly one record per trajectory
    turns = Counter(r["extra_info"]["turn_idx"] for r in records.values())
    assert sorted(turns) == list(range(1, TURNS + 1))  # first, last and every turn between are chosen
    assert min(turns.values()) >= 200 / TURNS / 2, turns  # about evenly: 40 expected each
    for e, r in records.items():  # the record is the chosen turn: its action in the prompt, its screen as truth
        k = r["extra_info"]["turn_idx"] - 1
        assert r["reward_model"]["ground_truth"] == f"{e} out {k}\n$ "
        assert f"step {k}" in r["prompt"][-1]["content"] and f"step {k + 1}" not in r["prompt"][-1]["content"]
        assert r["extra_info"]["target_step_id"] == (f"{e}:{k + 1}" if k + 1 < TURNS else f"{e}:{k}")
    # a trajectory's choice does not depend on the others in the export
    _terminal_episodes(lake, "few", ids[::7])
    few = _rl_records(lake, "few", tmp_path / "few")
    assert {e: r["extra_info"]["turn_idx"] for e, r in few.items()} == {
        e: records[e]["extra_info"]["turn_idx"] for e in ids[::7]}


def _web_episode(e: str, urls: list[str]) -> tuple[dict, list[dict]]:
    steps = []
    for k, url in enumerate(urls):
        row = step_row(e, k, "web", f"page {k} of {e}", {"kind": "click", "text": f"link {k}"})
        row["observation"] = {"kind": "web", "text": f"page {k} of {e}", "url": url}
        steps.append(row)
    return episode_row(e, "web", None), steps


def test_a_web_episode_is_grouped_by_the_site_of_its_first_page(lake, tmp_path):
    episodes, steps = [], []
    # each starts on its own site and ends on a shared one; `quiet` has no URL on its first step
    for e, urls in {"w1": [None, "https://first.example/a", "https://shared.example/x"],
                    "w2": ["https://second.example/", "https://shared.example/y", "https://shared.example/z"]}.items():
        episode, rows = _web_episode(e, urls)
        episodes.append(episode)
        steps += rows
    commit_dataset(lake, "web", episodes, steps)

    def exported(held_out: list[str]) -> set[str]:
        out = tmp_path / "-".join(held_out)
        manifest = export(Lake(lake), None, "web", str(out), ExportOptions(kind="sft", held_out=held_out),
                          log=lambda line: None)
        rows = [r for s in manifest["shards"] for r in (out / s["path"]).read_text().splitlines()]
        return {e for e in ("w1", "w2") if any(f"of {e}" in r for r in rows)}

    # the group key is `web:site=<host of the first URL>`: holding a site out drops the episodes starting there
    assert exported(["first.example"]) == {"w2"}
    assert exported(["second.example"]) == {"w1"}
    assert exported(["shared.example"]) == {"w1", "w2"}  # a later page's site is not the group
    assert exported(["web:site=second.example"]) == {"w1"}


class _Buffer:
    def __init__(self, name: str, pending: int):
        self.name, self.pending_bytes, self.written = name, pending, False

    def write_row_group(self) -> None:
        self.written, self.pending_bytes = True, 0


def test_parquet_records_waiting_for_their_row_group_hold_one_row_group_in_memory_together():
    from pipelines.stages.export.shards import bound_buffered

    train, val, test, jsonl = _Buffer("train", 30), _Buffer("val", 20), _Buffer("test", 13), _Buffer("sft", 0)
    bound_buffered([train, val, test, jsonl], 64)  # 63 held; a JSONL writer streams, holds no records
    assert not any(w.written for w in (train, val, test, jsonl))
    test.pending_bytes += 1
    bound_buffered([train, val, test, jsonl], 64)
    assert [w.written for w in (train, val, test, jsonl)] == [True, False, False, False]  # the largest goes
