"""Near-duplicate acceptance at its boundary: a pair exactly at the threshold is a near-duplicate, a pair just
below it is not, and both reach verification (they are LSH candidates), so the comparison itself decides."""

import numpy as np

from tests.transforms.dedup.near_pairs import EDITS, jaccard, pair_texts
from transforms.dedup import minhash


def _setup():
    pairs = pair_texts()
    sims = {name: jaccard(*texts) for name, texts in pairs.items()}
    texts = [t for name in EDITS for t in pairs[name]]
    return sims, texts


def test_the_pairs_straddle_the_threshold_closely():
    sims, _ = _setup()
    t = sims["at"]
    assert 0.80 < t < 0.83
    assert 0 < sims["above"] - t < 0.05 and 0 < t - sims["below"] < 0.05  # inside a +-0.05 slip
    assert t - sims["far"] > 0.1


def test_at_the_threshold_is_a_near_duplicate_and_just_below_is_not():
    sims, texts = _setup()
    threshold = sims["at"]
    params = minhash.MinHashParams(threshold=threshold)
    sk = minhash.sketch(texts, params)
    # every pair reaches verification: LSH proposes it
    u, v = minhash.candidate_pairs(sk.keys, np.diff(sk.offsets) == 0)
    proposed = set(zip(u.tolist(), v.tolist()))
    assert {(0, 1), (2, 3), (4, 5)} <= proposed
    near = minhash.cluster_sketches(sk, threshold)
    assert near.candidates == len(u)
    assert near.labels.tolist() == [0, 0, 2, 2, 4, 5, 6, 7]  # above and at joined; below and far apart
    got = dict(zip(zip(near.u.tolist(), near.v.tolist()), near.sim.tolist()))
    assert got == {(0, 1): sims["above"], (2, 3): sims["at"]}  # the exact Jaccard, bit for bit


def test_moving_the_threshold_across_a_pair_flips_it():
    sims, texts = _setup()
    sk = minhash.sketch(texts, minhash.MinHashParams(threshold=0.8))
    below = minhash.cluster_sketches(sk, np.nextafter(sims["below"], 1.0))
    assert below.labels[5] == 5  # one ulp above the pair's Jaccard: not a duplicate
    at = minhash.cluster_sketches(sk, sims["below"])
    assert at.labels[5] == 4
    # the estimate path (no shingles) applies the same rule to its estimates
    sig_sk = minhash.sketch(texts, minhash.MinHashParams(threshold=0.8), keep_signatures=True)
    est = minhash.similarity(sig_sk.sig, np.array([2]), np.array([3]))[0]
    assert minhash.cluster(sig_sk.sig, sig_sk.keys, est).labels[3] == 2
    assert minhash.cluster(sig_sk.sig, sig_sk.keys, np.nextafter(est, 1.0)).labels[3] == 3
