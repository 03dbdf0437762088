import numpy as np
import pyarrow as pa

from pipelines.stages.dedup import episode_texts
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
    found = near.labels[200:] == np.arange(200)
    # LSH misses a pair at Jaccard 0.816 with probability (1 - 0.816^5)^18 = 3e-4: all 200 expected
    assert found.sum() >= 199
    assert (found & (est < PARAMS.threshold)).sum() > 20  # kept although their estimate falls below
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


def _zipf_corpus(rng, n_docs: int, words: int, vocab: int = 3_000) -> list[list[str]]:
    """Documents over one shared Zipf vocabulary, each with a few shared boilerplate phrases, as traces are."""
    p = 1 / np.arange(1, vocab + 1)
    p /= p.sum()
    phrases = [[f"v{w}" for w in rng.choice(vocab, 12, p=p)] for _ in range(50)]
    docs = []
    for _ in range(n_docs):
        doc = [f"v{w}" for w in rng.choice(vocab, words, p=p)]
        for start in rng.integers(0, words - 12, 3):
            doc[start:start + 12] = phrases[rng.integers(0, 50)]
        docs.append(doc)
    return docs


def _edited(rng, doc: list[str], edits: int) -> list[str]:
    doc = list(doc)
    for pos in rng.choice(len(doc), edits, replace=False):
        doc[pos] = f"edit{rng.integers(10**9)}"
    return doc


def test_recall_on_planted_pairs_at_the_threshold_over_a_shared_vocabulary():
    rng = np.random.default_rng(21)
    base = _zipf_corpus(rng, 1500, 200)
    copies = [_edited(rng, doc, int(e)) for doc, e in zip(base, rng.integers(4, 6, 1500))]  # Jaccard 0.77-0.82
    texts = [" ".join(d) for d in base + copies]
    exact = np.array([len(_shingles(a) & _shingles(b)) / len(_shingles(a) | _shingles(b))
                      for a, b in zip(texts[:1500], texts[1500:])])
    at = exact >= PARAMS.threshold
    assert at.sum() > 500 and (np.abs(exact - PARAMS.threshold) < 0.03).mean() > 0.8  # crowded at the threshold
    near = minhash.cluster_sketches(minhash.sketch(texts, PARAMS), PARAMS.threshold)
    found = near.labels[1500:] == near.labels[:1500]
    # the banding misses a pair at Jaccard 0.8 with probability 7e-4: about 0.6 expected here
    assert (at & ~found).sum() <= 4
    # verified pairs (planted or not) really reach the threshold, by Python's sets
    assert all(len(_shingles(texts[u]) & _shingles(texts[v])) / len(_shingles(texts[u]) | _shingles(texts[v]))
               >= PARAMS.threshold for u, v in zip(near.u.tolist(), near.v.tolist()))


def test_candidate_rate_follows_the_banding_s_curve():
    """One permutation hashing with densification must collide like independent permutations: the share of
    planted pairs that become candidates matches 1 - (1 - s^r)^b, over the whole S (Jaccard 0.4-0.95)."""
    rng = np.random.default_rng(4)
    base = [[f"w{w}" for w in rng.integers(0, 10**7, 150)] for _ in range(2400)]
    copies = [_edited(rng, doc, int(e)) for doc, e in zip(base, rng.integers(2, 14, 2400))]
    texts = [" ".join(d) for d in base + copies]
    exact = np.array([len(_shingles(a) & _shingles(b)) / len(_shingles(a) | _shingles(b))
                      for a, b in zip(texts[:2400], texts[2400:])])
    u, v = minhash.candidate_pairs(minhash.sketch(texts, PARAMS).keys)
    found = np.isin(np.arange(2400) * 4800 + np.arange(2400, 4800), u * 4800 + v)
    p = 1 - (1 - exact ** PARAMS.rows) ** PARAMS.bands
    assert p.min() < 0.3 and p.max() > 0.99  # the whole S
    assert abs(found.sum() - p.sum()) < 4 * np.sqrt((p * (1 - p)).sum())


def test_results_do_not_depend_on_batching_chunking_or_input_type(monkeypatch):
    rng = np.random.default_rng(8)
    texts = [" ".join(d) for d in _zipf_corpus(rng, 300, 60)] + ["", "short", None] * 3
    arrays = [pa.array(texts, pa.string()), pa.array(texts, pa.large_string()),
              pa.chunked_array([texts[:100], texts[100:]])]
    whole = minhash.sketch(arrays[0], PARAMS, keep_signatures=True)
    nulls_as_empty = minhash.sketch(["" if t is None else t for t in texts], PARAMS, keep_signatures=True)
    halves = minhash.Sketches.concat([minhash.sketch(arrays[1].slice(0, 150), PARAMS, True),
                                      minhash.sketch(arrays[1].slice(150), PARAMS, True)])
    monkeypatch.setattr(minhash, "_TEXT_CHUNK", 777)
    monkeypatch.setattr(minhash, "_CHUNK_DOCS", 7)
    small_chunks = minhash.sketch(arrays[2], PARAMS, keep_signatures=True)
    for other in (nulls_as_empty, halves, small_chunks):
        for field in ("keys", "shingles", "offsets", "sig"):
            assert np.array_equal(getattr(whole, field), getattr(other, field)), field


def test_band_keys_are_pinned():
    """Every constant comes from the seed (splitmix64), so the same text gives these keys in any version."""
    keys = minhash.sketch(["the quick brown fox jumps over the lazy dog"], PARAMS).keys
    assert keys[0, :2].tolist() == [2561423719419097983, 9858505982482873052]


def test_no_documents():
    sk = minhash.sketch([], PARAMS, keep_signatures=True)
    assert sk.keys.shape == (0, PARAMS.bands) and sk.sig.shape == (0, PARAMS.num_perm)
    assert minhash.cluster_sketches(sk, PARAMS.threshold).labels.tolist() == []
    empty = minhash.sketch(["", " "], PARAMS)
    assert minhash.cluster_sketches(empty, PARAMS.threshold).labels.tolist() == [0, 1]  # nothing to compare
