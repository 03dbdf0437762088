import numpy as np
import pyarrow as pa

from pipelines.dedup import episode_texts
from transforms.dedup import minhash
from transforms.dedup.representative import rank, representatives

PARAMS = minhash.MinHashParams(threshold=0.8)


def _shingles(text: str, n: int = 5) -> set:
    words = text.split()
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)} or ({tuple(words)} if words else set())


def test_edited_copy_is_a_near_duplicate_and_unrelated_trajectory_is_not(android):
    episodes, steps, ids = android
    order = [ids["droidbot-run"], ids["edited"], ids["getevent"]]
    texts = episode_texts(steps, order)
    exact_j = len(_shingles(texts[0].as_py()) & _shingles(texts[1].as_py())) / len(
        _shingles(texts[0].as_py()) | _shingles(texts[1].as_py()))
    assert 0.85 < exact_j < 1  # two of twelve events changed
    sig, keys = minhash.signatures_and_bands(texts, PARAMS)
    near = minhash.cluster(sig, keys, PARAMS.threshold)
    assert near.labels.tolist() == [0, 0, 2]
    assert abs(near.sim[0] - exact_j) < 0.1
    assert minhash.similarity(sig, np.array([0]), np.array([2]))[0] < 0.1


def test_signatures_are_deterministic_and_estimate_jaccard():
    rng = np.random.default_rng(7)
    # 400 pairs: the mean error's standard deviation is ~0.002, so the 0.01 bound below is ~5 sigma
    base = [" ".join(f"w{w}" for w in rng.integers(0, 10_000, 200)) for _ in range(400)]
    edited = []
    for text in base:
        words = text.split()
        for i in rng.choice(200, 6, replace=False):
            words[i] = "edit"
        edited.append(" ".join(words))
    texts = base + edited
    sig = minhash.signatures(pa.array(texts), PARAMS)
    assert np.array_equal(sig, minhash.signatures(texts, PARAMS))  # Arrow or list, same signature
    assert np.array_equal(sig[:10], minhash.signatures(texts[:10], PARAMS))  # batch-independent
    est = minhash.similarity(sig, np.arange(400), np.arange(400, 800))
    true = np.array([len(_shingles(a) & _shingles(b)) / len(_shingles(a) | _shingles(b)) for a, b in zip(base, edited)])
    assert abs((est - true).mean()) < 0.01 and np.abs(est - true).mean() < 0.05


def test_short_and_empty_documents():
    sig = minhash.signatures(["", "two words", "two words", "a b c d e f"], PARAMS)
    assert (sig[0] == minhash.EMPTY).all()
    assert np.array_equal(sig[1], sig[2]) and not np.array_equal(sig[1], sig[3])
    near = minhash.cluster(sig, minhash.band_keys(sig, PARAMS), PARAMS.threshold)
    assert near.labels.tolist() == [0, 1, 1, 3]


def test_connected_components_join_chains_to_their_smallest_member():
    u, v = np.array([5, 3, 1, 7]), np.array([3, 1, 0, 8])
    assert minhash.connected_components(9, u, v).tolist() == [0, 0, 2, 0, 4, 0, 6, 7, 7]


def test_representative_is_successful_then_longest_then_earliest_then_lowest_id():
    episodes = pa.table({
        "episode_id": ["d", "c", "b", "a"], "outcome": ["failure", "success", "unknown", "unknown"],
        "num_steps": [30, 5, 9, 9],
        "started_at": pa.array([None, None, 2_000, None], pa.timestamp("us", tz="UTC"))})
    ranks = rank(episodes)
    assert ranks.tolist() == [1, 0, 2, 3]
    labels = np.array([0, 0, 2, 2])
    assert representatives(labels, ranks).tolist() == [1, 1, 2, 2]


def test_pairs_just_above_the_threshold_are_found_even_when_their_estimate_falls_below():
    rng = np.random.default_rng(11)
    base = [[f"w{w}" for w in rng.integers(0, 10**6, 300)] for _ in range(200)]
    edited = []
    for i, words in enumerate(base):
        words = list(words)
        for pos in range(10, 300, 50):  # six isolated edits: 30 of 296 shingles change, Jaccard 0.816
            words[pos] = f"edit{i}_{pos}"
        edited.append(" ".join(words))
    texts = [" ".join(w) for w in base] + edited
    true = np.array([len(_shingles(a) & _shingles(b)) / len(_shingles(a) | _shingles(b))
                     for a, b in zip(texts[:200], edited)])
    assert np.allclose(true, 266 / 326)
    sk = minhash.sketch(texts, PARAMS, keep_signatures=True)
    est = minhash.similarity(sk.sig, np.arange(200), np.arange(200, 400))
    assert (est < PARAMS.threshold).sum() > 20  # verification on the estimate would lose these
    near = minhash.cluster_sketches(sk, PARAMS.threshold)
    assert near.labels.tolist() == list(range(200)) * 2
    assert np.allclose(near.sim, 266 / 326)  # the exact Jaccard, not the estimate


def test_exact_jaccard_of_shingle_sets_counts_repeats_once():
    texts = ["a b c d e f g", "a b c d e f g a b c d e", "x y z", "", ""]
    sh, off = minhash.shingles_of(texts, PARAMS)
    got = minhash.jaccard(sh, off, np.array([0, 0, 2, 3]), np.array([1, 2, 3, 4]))
    want = len(_shingles(texts[0]) & _shingles(texts[1])) / len(_shingles(texts[0]) | _shingles(texts[1]))
    assert got.tolist() == [want, 0.0, 0.0, 1.0]  # repeated 5-grams count once; two empty sets are equal


def test_banding_favours_recall_at_the_threshold():
    b, r = minhash.lsh_params(0.8, 128)
    assert b * r <= 128 and (1 - 0.8 ** r) ** b <= minhash.MAX_MISS
    assert (PARAMS.bands, PARAMS.rows) == (b, r)
