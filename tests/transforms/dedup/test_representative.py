"""Which member of a duplicate cluster is kept, where the episode table has gaps (no outcome, no step count,
no start): each gap ranks as documented, and the representatives are row indices a caller can index with."""

import numpy as np
import pyarrow as pa

from transforms.dedup.representative import rank, representatives


def _episodes(rows):
    return pa.table({
        "episode_id": [r[0] for r in rows],
        "outcome": pa.array([r[1] for r in rows], pa.string()),
        "num_steps": pa.array([r[2] for r in rows], pa.int32()),
        "started_at": pa.array([r[3] for r in rows], pa.timestamp("us", tz="UTC"))})


def test_no_outcome_is_not_a_success_and_steps_then_decide():
    # "a" has no outcome but more steps than the failed "b": neither succeeded, so the longer one leads
    ranks = rank(_episodes([("a", None, 9, None), ("b", "failure", 3, None), ("c", "success", 1, None)]))
    assert ranks.tolist() == [1, 2, 0]


def test_no_step_count_counts_as_zero_steps():
    # "a" (unknown count) started first, "b" has 1 step, "c" has 0 steps and started before "b"
    ranks = rank(_episodes([("a", None, None, 1_000), ("b", None, 1, 3_000), ("c", None, 0, 2_000)]))
    assert ranks.tolist() == [1, 0, 2]  # b (1 step) first; a and c tie on 0 steps, a started earlier


def test_an_unknown_start_ranks_after_every_known_one_then_ids_decide():
    ranks = rank(_episodes([("a", None, 2, None), ("b", None, 2, 5_000), ("c", None, 2, None)]))
    assert ranks.tolist() == [1, 0, 2]


def test_representatives_are_row_indices():
    ranks = rank(_episodes([("a", None, 2, None), ("b", "success", 2, None), ("c", None, 4, None)]))
    reps = representatives(np.array([0, 0, 2]), ranks)
    assert reps.dtype.kind == "i" and ranks.dtype.kind == "i"
    ids = ["a", "b", "c"]
    assert [ids[r] for r in reps] == ["b", "b", "c"]
