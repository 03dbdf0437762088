"""The dedup stage at the threshold's boundary, end to end on a lake: pairs just above, exactly at, just below
and well below `--threshold` all reach verification; exactly the first two lose their copy, with a reason
that says which kind of duplicate it was."""

import numpy as np
import pyarrow as pa

from pipelines.cli import main
from pipelines.stages.dedup import episode_texts
from schemas import STEPS
from tests.transforms.dedup.near_pairs import EDITS, jaccard, pair_texts
from tests.transforms.export.lakes import commit_dataset, episode_row, step_row
from transforms.dedup import minhash

ACTION = {"kind": "keystrokes", "text": "cat notes"}


def _dataset(lake: str) -> tuple[dict[str, str], dict[str, float]]:
    """One single-step episode per text: `<pair>-a` (the base), `<pair>-b` (the edited copy), and `exact-b`,
    an identical copy of the `above` pair's base. Returns (episode id -> text as dedup reads it, pair -> its
    exact Jaccard)."""
    texts = {}
    for name, (base, edited) in pair_texts().items():
        texts[f"{name}-a"], texts[f"{name}-b"] = base, edited
    texts["exact-b"] = texts["above-a"]
    episodes = [episode_row(e, "terminal", None) for e in texts]
    steps = [step_row(e, 0, "terminal", text, ACTION) for e, text in texts.items()]
    commit_dataset(lake, "term", episodes, steps)
    table = pa.Table.from_pylist(steps, schema=STEPS)
    read = dict(zip(texts, episode_texts(table, list(texts)).to_pylist()))
    sims = {name: jaccard(read[f"{name}-a"], read[f"{name}-b"]) for name in EDITS}
    return read, sims


def test_pairs_at_and_just_above_the_threshold_are_removed_and_just_below_are_kept(lake, query, capsys):
    read, sims = _dataset(lake)
    threshold = sims["at"]
    assert 0 < sims["above"] - threshold < 0.05 and 0 < threshold - sims["below"] < 0.05
    # the pairs reach verification: LSH at these parameters proposes every one of them
    ids = list(read)
    sk = minhash.sketch(list(read.values()), minhash.MinHashParams(threshold=threshold))
    u, v = minhash.candidate_pairs(sk.keys, np.diff(sk.offsets) == 0)
    proposed = {(ids[a], ids[b]) for a, b in zip(u.tolist(), v.tolist())}
    assert {("above-a", "above-b"), ("at-a", "at-b"), ("below-a", "below-b")} <= proposed

    assert main(["dedup", "term", "--lake", lake, "--threshold", repr(threshold)]) == 0
    assert "1 exact and 2 near duplicates removed, 6 kept" in capsys.readouterr().out
    kept = sorted(r["episode_id"] for r in query("SELECT episode_id FROM episodes"))
    assert kept == ["above-a", "at-a", "below-a", "below-b", "far-a", "far-b"]
    dropped = query("SELECT rule, record_id, reason FROM quarantine WHERE stage = 'dedup' ORDER BY record_id")
    assert dropped == [
        {"rule": "near_duplicate", "record_id": "above-b",
         "reason": f"duplicate of episode above-a (Jaccard {sims['above']:.3f})"},
        {"rule": "near_duplicate", "record_id": "at-b",
         "reason": f"duplicate of episode at-a (Jaccard {sims['at']:.3f})"},
        {"rule": "exact_duplicate", "record_id": "exact-b",
         "reason": "duplicate of episode above-a (identical canonical actions and observations)"}]
    clusters = query("SELECT kind, cluster_id, episode_id, representative, similarity FROM dedup_clusters "
                     "ORDER BY kind, cluster_id, episode_id")
    assert [(c["kind"], c["cluster_id"], c["episode_id"], c["representative"], c["similarity"]) for c in clusters] == [
        ("exact", "exact:above-a", "above-a", "above-a", 1.0), ("exact", "exact:above-a", "exact-b", "above-a", 1.0),
        ("near", "near:above-a", "above-a", "above-a", 1.0),
        ("near", "near:above-a", "above-b", "above-a", sims["above"]),
        ("near", "near:at-a", "at-a", "at-a", 1.0), ("near", "near:at-a", "at-b", "at-a", sims["at"])]


def test_one_ulp_above_the_pair_keeps_both(lake, query):
    _, sims = _dataset(lake)
    assert main(["dedup", "term", "--lake", lake, "--threshold", repr(float(np.nextafter(sims["at"], 1.0)))]) == 0
    kept = sorted(r["episode_id"] for r in query("SELECT episode_id FROM episodes"))
    assert kept == ["above-a", "at-a", "at-b", "below-a", "below-b", "far-a", "far-b"]
