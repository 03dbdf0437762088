"""Exact duplicates: episodes whose canonical actions and observations are identical step for step, and
no-change steps (an action after which the observation did not change).

Hashing is xxh3 (non-cryptographic, several GB/s): a step hash per canonical action and observation, an
episode key over the ordered step hashes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from transforms.canonicalize import action_key_column, observation_key_column


def hash_strings(values: pa.Array) -> np.ndarray:
    """xxh3-64 of every string of a column (nulls hash as "")."""
    h = xxhash.xxh3_64_intdigest
    return np.fromiter((h(v.encode()) if v else h(b"") for v in values.to_pylist()), dtype=np.uint64,
                       count=len(values))


def step_hashes(steps: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """(action hashes, observation hashes) per step row, over the canonical key texts."""
    return (hash_strings(action_key_column(steps.column("action"))),
            hash_strings(observation_key_column(steps.column("observation"))))


def _episode_order(steps: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row order sorting steps by (episode_id, step_index); each episode's start in that order; the ids."""
    order = pc.sort_indices(steps.select(["episode_id", "step_index"]),
                            sort_keys=[("episode_id", "ascending"), ("step_index", "ascending")]).to_numpy()
    ids = steps.column("episode_id").take(order).to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if len(ids) else np.array([], dtype=np.int64)
    return order, starts, ids[starts]


def episode_keys(steps: pa.Table) -> dict[str, str]:
    """episode_id -> exact key (xxh3-128 hex over the ordered step hashes). Two episodes are exact duplicates
    when their keys are equal. Needs steps columns episode_id, step_index, action, observation."""
    if steps.num_rows == 0:
        return {}
    action, observation = step_hashes(steps)
    order, starts, ids = _episode_order(steps)
    pairs = np.stack([action[order], observation[order]], axis=1)  # one row per step: 16 bytes
    ends = np.r_[starts[1:], len(order)]
    return {eid: xxhash.xxh3_128_hexdigest(pairs[s:e].tobytes()) for eid, s, e in zip(ids, starts, ends)}


def exact_groups(keys: dict[str, str]) -> list[list[str]]:
    """Groups of episode ids sharing a key (only groups of two or more), each sorted, sorted by first id."""
    by_key: dict[str, list[str]] = {}
    for eid, key in keys.items():
        by_key.setdefault(key, []).append(eid)
    return sorted(sorted(group) for group in by_key.values() if len(group) > 1)


def no_change_steps(steps: pa.Table) -> pa.Table:
    """Steps after whose action the observation stayed the same (the next step's canonical observation
    equals this step's): step_id, episode_id, step_index, next_step_id. They are real dynamics ("the tap did
    nothing") and are reported, not removed; a long run of them marks a stuck agent."""
    empty = pa.table({"step_id": pa.array([], pa.string()), "episode_id": pa.array([], pa.string()),
                      "step_index": pa.array([], pa.int32()), "next_step_id": pa.array([], pa.string())})
    if steps.num_rows < 2:
        return empty
    _, observation = step_hashes(steps)
    order, _, _ = _episode_order(steps)
    ids = steps.column("episode_id").take(order).to_numpy(zero_copy_only=False)
    obs = observation[order]
    kinds = pc.fill_null(steps.column("observation").combine_chunks().field("kind"), "none").take(order)
    known = pc.not_equal(kinds, "none").to_numpy(zero_copy_only=False)  # an unrecorded screen is not "same"
    same = (ids[1:] == ids[:-1]) & (obs[1:] == obs[:-1]) & known[1:] & known[:-1]
    rows = order[:-1][same]
    if not len(rows):
        return empty
    step_ids = steps.column("step_id")
    return pa.table({"step_id": step_ids.take(rows), "episode_id": steps.column("episode_id").take(rows),
                     "step_index": steps.column("step_index").take(rows),
                     "next_step_id": step_ids.take(order[1:][same])})
