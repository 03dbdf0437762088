"""Which member of a duplicate cluster is kept: deterministic, so reruns keep the same episode."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def rank(episodes: pa.Table) -> np.ndarray:
    """Rank of every episode row, best first: successful before the rest, then more steps, then the
    earliest start (unknown start last), then the lowest episode id. Needs columns episode_id, outcome,
    num_steps, started_at."""
    order = pa.table({
        "failed": pc.not_equal(pc.fill_null(episodes.column("outcome"), "unknown"), "success"),
        "steps": pc.fill_null(episodes.column("num_steps"), 0),
        # an unknown start sorts after every known one
        "start": pc.fill_null(episodes.column("started_at").cast(pa.int64()), np.iinfo(np.int64).max),
        "id": episodes.column("episode_id"),
    })
    indices = pc.sort_indices(order, sort_keys=[("failed", "ascending"), ("steps", "descending"),
                                                ("start", "ascending"), ("id", "ascending")]).to_numpy()
    ranks = np.empty(len(indices), dtype=np.int64)
    ranks[indices] = np.arange(len(indices))
    return ranks


def representatives(labels: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """For rows grouped by `labels` (a cluster label per row), the row index of each row's representative:
    the row of its cluster with the lowest rank."""
    n = len(labels)
    order = np.lexsort((ranks, labels))  # by cluster, best first
    sorted_labels = labels[order]
    starts = np.flatnonzero(np.r_[True, sorted_labels[1:] != sorted_labels[:-1]])
    sizes = np.diff(np.r_[starts, n])
    best = np.repeat(order[starts], sizes)
    out = np.empty(n, dtype=np.int64)
    out[order] = best
    return out
