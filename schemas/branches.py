"""The main line and its branches: the one definition every stage uses.

- The **main line** of an episode is its rows in `steps`, in `step_index` order: what really happened.
  Every row of `steps` is `real`; no stage ever finds a counterfactual there.
- A **branch** is a row of `branches`: at a real step (`parent_step_id`), in the state that step observed,
  another action was taken (`action`, made by `strategy`) and a world model predicted the state it leads to
  (`next_observation`); `origin` says how synthetic it is (`simulated`, or `perturbed`). Its history is the
  parent episode's real steps before the parent, so a branch never copies real data.
- The **line of a branch** is therefore: the main-line steps with `step_index` below the parent's, then one
  branch step whose observation is the parent's observation, whose action is the branch's, and whose
  `final_observation` is the predicted state (`branch_line`). Exports, the ATIF writer and the viewer build
  branch lines with it and nothing else.
- `branch_id` names the counterfactual (parent step + action, `branch_key`): the same branch labeled by two
  world models shares it; `step_id` names one labeler's answer (`{parent_step_id}:sim-<request key>`).
A branch goes wherever its parent episode goes: a stage that drops the episode drops its branches and says so.
"""

from __future__ import annotations

import hashlib

import orjson


def branch_key(parent_step_id: str, action: dict) -> str:
    """The branch id of `action` taken at `parent_step_id` (the action's verbatim `raw` left out: two ways
    of writing the same action are one branch)."""
    key = {k: v for k, v in action.items() if k != "raw"}
    return hashlib.sha256(orjson.dumps([parent_step_id, key], option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def branch_step(branch: dict, parent: dict) -> dict:
    """The branch as a step of its line: the parent's observation, the branch's action, the predicted state
    as `final_observation`, and the branch's own id, origin and lineage."""
    return {**parent, "step_id": branch["step_id"], "action": branch["action"],
            "final_observation": branch["next_observation"], "origin": branch["origin"],
            "parent_step_id": branch["parent_step_id"], "branch_id": branch["branch_id"],
            "labeler": branch.get("labeler"), "is_last": True, "is_terminal": False, "reasoning": None,
            "timestamp": None, "reward": None}


def branch_line(main: list[dict], branch: dict) -> list[dict] | None:
    """The steps of a branch's line (`main`: the episode's steps in step_index order), or None when the
    parent step is not in `main`."""
    for i, step in enumerate(main):
        if step["step_id"] == branch["parent_step_id"]:
            return main[:i] + [branch_step(branch, step)]
    return None
