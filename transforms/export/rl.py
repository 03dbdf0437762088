"""RL records in verl's Parquet layout, exactly one turn per trajectory (expanding a trajectory into many RL
samples made training collapse in the reference's experience).

Which turn: among the trajectory's eligible transitions (recorded real next observation, or any origin
with --include-simulated; fits the token budget), the one at position xxh64(trajectory id) mod n. The
choice is deterministic, spreads over early and late turns across a corpus, and does not depend on the
other trajectories in the export.

Record: `data_source` = "trajforge/<domain>", `prompt` = the AgentWorld messages (system .. final user
action), `ability` = "world_model/<domain>", `reward_model` = {"style": "rule", "ground_truth": the next
observation's text, without the `**Environment Observation:**` marker}, `extra_info` = {split, index,
episode_id, line, turn_idx (1-based), step_ids, target_step_id, origin}.
"""

from __future__ import annotations

import xxhash

from transforms.export.chat import Sample

FORMATS = ("verl",)
FILE_TYPES = {"verl": "parquet"}


def choose(trajectory_id: str, candidates: list) -> int:
    """Index into `candidates` of the one turn a trajectory contributes."""
    return xxhash.xxh64_intdigest(trajectory_id.encode()) % len(candidates)


def verl_record(sample: Sample, split: str, index: int) -> dict:
    transition = sample.transition
    trajectory = transition.trajectory
    return {
        "data_source": f"trajforge/{trajectory.domain}",
        "prompt": sample.messages,
        "ability": f"world_model/{trajectory.domain}",
        "reward_model": {"style": "rule", "ground_truth": transition.target},
        "extra_info": {"split": split, "index": index, "episode_id": trajectory.episode_id,
                       "line": trajectory.line, "turn_idx": transition.t + 1, "step_ids": transition.step_ids,
                       "target_step_id": transition.target_step_id, "origin": transition.origin},
    }
