"""Branch rules over the real DroidBot run (ingested once) with hand-made branches, each broken in one way:
a bad branch is quarantined alone and its real episode stays."""

import pyarrow as pa
import pytest

from schemas import BRANCHES, v1
from transforms.validate import branches as branch_rules


def _branch(parent: dict, **changes) -> dict:
    row = {"step_id": f"{parent['step_id']}:sim-a", "branch_id": "b1", "parent_step_id": parent["step_id"],
           "episode_id": parent["episode_id"], "step_index": parent["step_index"], "domain": "android",
           "origin": "simulated", "action": {"kind": "home"},
           "next_observation": {"kind": "screen", "text": "Activity: launcher"}, "strategy": "home",
           "labeler": '{"model": "wm"}', "request_key": "k"}
    for key, value in changes.items():
        row[key] = value
    return row


BROKEN = [
    ({"parent_step_id": "nope:1"}, "branch.parent_missing"),
    ({"step_index": 5}, "branch.prefix_mismatch"),
    ({"origin": "real"}, "branch.origin"),
    ({"labeler": None}, "branch.lineage_missing"),
    ({"next_observation": {"kind": "screen", "text": None}}, "branch.state_missing"),
    ({"next_observation": {"kind": "screen", "text": ""}}, "branch.state_empty"),
    ({"next_observation": {"kind": "screen", "text": "<think>hm</think> Activity"}}, "branch.state_unparsed"),
]


def _check(steps, rows, quarantined=()):
    return branch_rules.check_branches(pa.Table.from_pylist(rows, schema=BRANCHES),
                                       pa.Table.from_pylist(steps, schema=v1.STEPS), list(quarantined))


def test_a_well_formed_branch_passes(droidbot):
    kept, found = _check(droidbot[1], [_branch(droidbot[1][2])])
    assert kept.num_rows == 1 and found.height == 0


@pytest.mark.parametrize("changes, rule", BROKEN, ids=[b[1] for b in BROKEN])
def test_each_broken_branch_is_quarantined_alone(droidbot, changes, rule):
    episodes, steps = droidbot
    good, bad = _branch(steps[2]), _branch(steps[3], step_id=f"{steps[3]['step_id']}:sim-bad", **changes)
    kept, found = _check(steps, [good, bad])
    assert kept.column("step_id").to_pylist() == [good["step_id"]]
    assert found["rule"].to_list() == [rule] and found["step_id"].to_list() == [bad["step_id"]]
    rows = branch_rules.quarantine_rows(found, pa.Table.from_pylist([good, bad], schema=BRANCHES),
                                        pa.Table.from_pylist(episodes, schema=v1.EPISODES), "run").to_pylist()
    (row,) = rows
    assert row["stage"] == "validate" and row["rule"] == rule and row["record_id"] == bad["step_id"]
    assert row["reason"].startswith(f"branch {bad['step_id']}: ") and row["source_uri"] == episodes[0]["source_uri"]


def test_an_empty_predicted_terminal_output_is_a_silent_command(droidbot):
    silent = _branch(droidbot[1][2], domain="terminal", next_observation={"kind": "terminal", "text": ""})
    kept, found = _check(droidbot[1], [silent])
    assert kept.num_rows == 1 and found.height == 0


def test_branches_go_with_a_quarantined_episode_and_say_so(droidbot):
    steps = droidbot[1]
    kept, found = _check(steps, [_branch(steps[2])], quarantined=[steps[2]["episode_id"]])
    assert kept.num_rows == 0 and found["rule"].to_list() == ["branch.parent_quarantined"]
    assert steps[2]["episode_id"] in found["reason"][0]


def test_a_severity_override_keeps_the_branch(droidbot):
    steps = droidbot[1]
    bad = _branch(steps[2], next_observation={"kind": "screen", "text": ""})
    kept, found = branch_rules.check_branches(pa.Table.from_pylist([bad], schema=BRANCHES),
                                              pa.Table.from_pylist(steps, schema=v1.STEPS), [],
                                              {"branch.state_empty": "warning"})
    assert kept.num_rows == 1 and found["severity"].to_list() == ["warning"]
