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
    base = [" ".join(f"w{w}" for w in rng.integers(0, 10_000, 200)) for _ in range(50)]
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
    est = minhash.similarity(sig, np.arange(50), np.arange(50, 100))
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
