"""The vectorized near-duplicate code against a plain-Python statement of what it computes: tokens (Python's
`str.split`), token and shingle hashes, one permutation hashing with optimal densification, band keys,
candidate buckets and exact Jaccard. Every constant comes from the seed by splitmix64, so the expected values
do not depend on numpy's random generators."""

import numpy as np
import pyarrow as pa
import pytest

from transforms.dedup import minhash

M64, M32 = 2**64 - 1, 2**32 - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix64(x: int) -> int:
    x = (x + GOLDEN) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def fmix32(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    return h ^ (h >> 16)


def stream(seed: int, salt: int, n: int) -> list[int]:
    start = splitmix64((seed ^ (salt << 40)) & M64)
    return [splitmix64((i * GOLDEN + start) & M64) for i in range(n)]


def odd32(seed: int, n: int, salt: int) -> list[int]:
    return [(x >> 32) | 1 for x in stream(seed, salt, n)]


def token_hash(token: str) -> int:
    """Bytes read 8 at a time as little-endian words, chained by splitmix64; plus the length; multiply-shift."""
    b = token.encode()
    h = int.from_bytes(b[:8], "little")
    for k in range(8, len(b), 8):
        h = splitmix64(h) ^ int.from_bytes(b[k:k + 8], "little")
    h = (h + len(b) * GOLDEN) & M64
    return ((h * 0xD6E8FEB86659FD93) & M64) >> 32


def shingle_set(text: str, p: minhash.MinHashParams) -> list[int]:
    t = [token_hash(w) for w in text.split()]
    c = odd32(p.seed, p.ngram, 1)
    grams = [t[i:i + p.ngram] for i in range(len(t) - p.ngram + 1)] or ([t] if t else [])
    return sorted({fmix32(sum(ci * ti for ci, ti in zip(c, g)) & M32) for g in grams})


def signature(shingles: list[int], p: minhash.MinHashParams) -> list[int]:
    """One permutation hashing (bin: top bits; value: fmix32 of the shingle xor a seeded constant, least one
    kept) with optimal densification (an empty bin copies the first filled bin of its seeded probe order)."""
    k = p.num_perm
    if not shingles:
        return [M32] * k
    c = odd32(p.seed, 1, 2)[0]
    bins: dict[int, int] = {}
    for x in shingles:
        b = (x * k) >> 32
        bins[b] = min(bins.get(b, M32 + 1), fmix32(x ^ c))
    order = stream(p.seed, 3, k * k)
    out = []
    for j in range(k):
        if j in bins:
            out.append(bins[j])
            continue
        row = order[j * k:(j + 1) * k]
        probes = sorted(range(k), key=lambda t: row[t])
        out.append(next(bins[b] for b in probes if b in bins))
    return out


def band_keys(sig: list[int], p: minhash.MinHashParams) -> list[int]:
    c = [x | 1 for x in stream(p.seed, 4, p.rows)]
    return [splitmix64(sum(sig[i * p.rows + r] * c[r] for r in range(p.rows)) & M64) for i in range(p.bands)]


TEXTS = [
    "", "   \t\n", "one", "two words", "a b c d", "a b c d e", "a b c d e f g a b c d e",
    "the quick brown fox jumps over the lazy dog " * 3,
    "tokens longer than sixteen bytes: supercalifragilisticexpialidocious antidisestablishmentarianism x",
    "unicode:\u00a0café\u2009naïve\u3000日本語 テキスト\u2028emoji 😀 and\x1ccontrols\x00 kept",
    "Activity: com.android.settings\nButton 'OK' (120, 340)\tText 'Wi\u2011Fi' " * 4,
]


@pytest.mark.parametrize("params", [minhash.MinHashParams(), minhash.MinHashParams(num_perm=96, ngram=3, seed=7,
                                                                                     threshold=0.7)])
def test_sketch_is_the_plain_python_definition(params):
    sk = minhash.sketch(pa.array(TEXTS), params, keep_signatures=True)
    for i, text in enumerate(TEXTS):
        want = shingle_set(text, params)
        assert sk.shingles[sk.offsets[i]:sk.offsets[i + 1]].tolist() == want, text
        sig = signature(want, params)
        assert sk.sig[i].tolist() == sig, text
        assert sk.keys[i].tolist() == band_keys(sig, params), text


def test_tokens_are_pythons_str_split_on_every_unicode_space():
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    lookalikes = ["\u200b", "\u2060", "\u00ad", "\u180e", "\ufeff", "\u2011", "\x00", "\x1b", "\x7f", "\u0100",
                  "\u1681", "\u2080", "\u3001", "\u00c2", "é", "😀"]
    rng = np.random.default_rng(5)
    alphabet = list("abcxyz019") + spaces + lookalikes
    texts = ["".join(rng.choice(alphabet, rng.integers(0, 30))) for _ in range(3000)] + ["x" * n for n in range(40)]
    tok, offsets = minhash.token_hashes(texts)
    words = [t.split() for t in texts]
    assert np.diff(offsets).tolist() == [len(w) for w in words]
    flat = [w for ws in words for w in ws]
    assert tok.tolist() == [token_hash(w) for w in flat]
    assert len(set(tok.tolist())) == len(set(flat))  # no two distinct tokens of this set share a hash


def test_candidate_buckets_pair_each_member_with_the_first_and_the_previous():
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 40, (500, 6)).astype(np.uint64) * np.uint64(GOLDEN)  # crowded buckets
    empty = rng.random(500) < 0.1
    want = set()
    for j in range(keys.shape[1]):
        buckets: dict[int, list[int]] = {}
        for doc in np.flatnonzero(~empty).tolist():
            buckets.setdefault(int(keys[doc, j]), []).append(doc)
        for members in buckets.values():
            want |= {(members[0], m) for m in members[1:]} | set(zip(members, members[1:]))
    for layout in (keys, np.asfortranarray(keys)):
        u, v = minhash.candidate_pairs(layout, empty)
        assert set(zip(u.tolist(), v.tolist())) == want


def test_exact_jaccard_on_sketch_sets_and_on_raw_shingles_agree_with_python_sets():
    rng = np.random.default_rng(9)
    texts = [" ".join(f"w{w}" for w in rng.integers(0, 25, rng.integers(0, 30))) for _ in range(400)]
    params = minhash.MinHashParams()
    sets = [set(shingle_set(t, params)) for t in texts]
    u, v = rng.integers(0, 400, 3000), rng.integers(0, 400, 3000)
    want = [len(sets[a] & sets[b]) / len(sets[a] | sets[b]) if sets[a] | sets[b] else 1.0 for a, b in zip(u, v)]
    sk = minhash.sketch(texts, params)
    assert minhash.jaccard(sk.shingles, sk.offsets, u, v).tolist() == want  # sorted sets: no sort needed
    raw, offsets = minhash.shingles_of(texts, params)  # text order, repeats kept
    assert minhash.jaccard(raw, offsets, u, v).tolist() == want
