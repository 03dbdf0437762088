"""Near-duplicate documents: MinHash signatures over word n-gram shingles, LSH banding, candidate
verification on the exact Jaccard of the shingle sets, connected components into clusters. All vectorized
numpy (polars for the token hash).

Stages and where they run:
- `sketch(texts, params)`: per batch of documents, independent (shingles, signatures, band keys); the
  pipeline maps it over batches in-process or as Ray tasks (same function).
- `candidate_pairs`, `jaccard`, `connected_components`: on the driver over all band keys and shingles;
  sort-based and linear in the number of documents, no Python loop per document or pair.

Why exact verification: a pair just above the threshold has a signature estimate below it about half the
time, so checking candidates on the estimate loses recall right where it matters. The banding is chosen
for recall instead (`lsh_params`: a pair at the threshold is missed with probability <= MAX_MISS) and the
false candidates it lets through are removed by the exact check, which costs a merge of two short sorted
arrays per pair.

Hashing: a token is hashed from its UTF-8 bytes (polars' seeded 64-bit string hash, vectorized over the
batch), an n-gram from its token hashes, finalized with splitmix64 and cut to 32 bits. Permutation j is
multiply-shift, `(a_j * x mod 2^64) >> 32` with a_j odd (universal on 32-bit keys); the shift is monotone,
so it is applied once to the per-document minimum instead of to every shingle.
Everything is seeded: the same text and params give the same signature with the same polars version (its
string hash is stable within a version, which every worker of one run shares).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

EMPTY = np.uint32(0xFFFFFFFF)  # the signature value of a document with no shingles
_SHINGLE_CHUNK = 1 << 12  # shingles per (num_perm x chunk) product block: 128 x 4k x 8 B = 4 MB, cache-sized
_PAIR_CHUNK = 1 << 22  # shingles gathered per verification block
MAX_MISS = 1e-3  # chance that LSH misses a pair whose Jaccard is exactly the threshold


@dataclass(frozen=True)
class MinHashParams:
    num_perm: int = 128
    ngram: int = 5  # words per shingle
    threshold: float = 0.8  # Jaccard of shingle sets at or above which two documents are near-duplicates
    seed: int = 42
    bands: int = field(default=0)  # 0: chosen from threshold and num_perm (`lsh_params`)
    rows: int = field(default=0)

    def __post_init__(self):
        if not 0 < self.threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")
        if not (self.bands and self.rows):
            b, r = lsh_params(self.threshold, self.num_perm)
            object.__setattr__(self, "bands", b)
            object.__setattr__(self, "rows", r)
        if self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands x rows ({self.bands} x {self.rows}) exceeds num_perm {self.num_perm}")


def lsh_params(threshold: float, num_perm: int, max_miss: float = MAX_MISS) -> tuple[int, int]:
    """(bands, rows) for recall: among the splits whose banding S-curve 1 - (1 - s^r)^b misses a pair at
    `threshold` with probability <= `max_miss`, the one with the least false-positive mass below the
    threshold (false candidates are removed by the exact check, but each costs a verification). When no
    split reaches `max_miss`, the one that misses least."""
    below = np.linspace(0, threshold, 201)
    best, best_key = (1, num_perm), (np.inf, np.inf)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            miss = (1 - threshold ** r) ** b
            fp = np.trapezoid(1 - (1 - below ** r) ** b, below)
            key = (0.0, fp) if miss <= max_miss else (miss, fp)
            if key < best_key:
                best, best_key = (b, r), key
    return best


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _constants(seed: int, n: int, salt: int) -> np.ndarray:
    """n odd 64-bit constants from (seed, salt)."""
    return np.random.default_rng([seed, salt]).integers(0, 2**63, size=n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def token_hashes(texts: pa.Array | list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Whitespace tokens of every text, hashed: (uint64 hash per token, int64 offsets: doc i's tokens are
    [offsets[i], offsets[i+1]))."""
    arr = pa.array(texts, pa.large_string()) if isinstance(texts, list) else texts.cast(pa.large_string())
    arr = pc.fill_null(arr, "")
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    lists = pc.utf8_split_whitespace(arr)
    list_offsets = lists.offsets.to_numpy()
    tokens = lists.flatten()
    keep = pc.binary_length(tokens).to_numpy(zero_copy_only=False) > 0  # "" splits into one empty token
    doc_of_token = np.repeat(np.arange(len(arr)), np.diff(list_offsets))
    counts = np.bincount(doc_of_token[keep], minlength=len(arr))
    offsets = np.zeros(len(arr) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if not keep.any():
        return np.zeros(0, np.uint64), offsets
    # one vectorized pass over all tokens of the batch (no per-token Python, no per-byte arrays)
    h = pl.Series(tokens, dtype=pl.String).hash(seed=0x5EED).to_numpy()
    return h[keep], offsets


def shingle_hashes(tok: np.ndarray, offsets: np.ndarray, ngram: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Word n-gram shingles of every document as 32-bit hashes (uint32), and their per-document offsets.
    A document with fewer than `ngram` tokens (but at least one) has one shingle, of all its tokens."""
    n_docs = len(offsets) - 1
    counts = np.diff(offsets)
    coef = _constants(seed, ngram, salt=1)
    n_tok = len(tok)
    if n_tok >= ngram:
        acc = np.zeros(n_tok - ngram + 1, dtype=np.uint64)
        for k in range(ngram):
            acc += tok[k: n_tok - ngram + 1 + k] * coef[k]
        doc_end = np.repeat(offsets[1:], counts)[: n_tok - ngram + 1]
        full = acc[np.arange(n_tok - ngram + 1) + ngram <= doc_end]
    else:
        full = np.zeros(0, dtype=np.uint64)
    per_doc = np.maximum(counts - ngram + 1, 0)
    short = (counts > 0) & (counts < ngram)
    if short.any():
        pos = np.arange(n_tok) - np.repeat(offsets[:-1], counts)
        in_short = np.repeat(short, counts)
        weighted = tok[in_short] * coef[pos[in_short]]
        short_counts = counts[short]
        short_hash = np.add.reduceat(weighted, np.cumsum(short_counts) - short_counts, dtype=np.uint64)
        # interleave: each short document's one shingle goes where its n-grams would be
        per_doc = per_doc + short
        out = np.empty(int(per_doc.sum()), dtype=np.uint64)
        out_off = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(per_doc, out=out_off[1:])
        is_short_slot = np.zeros(len(out), dtype=bool)
        is_short_slot[out_off[:-1][short]] = True
        out[is_short_slot] = short_hash
        out[~is_short_slot] = full
        full, offsets_out = out, out_off
    else:
        offsets_out = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(per_doc, out=offsets_out[1:])
    return (_splitmix64(full) >> np.uint64(32)).astype(np.uint32), offsets_out


def permutations(params: MinHashParams) -> np.ndarray:
    """The odd multipliers a_j of the num_perm multiply-shift permutations."""
    return _constants(params.seed, params.num_perm, salt=2)


def signatures_from_shingles(shingles: np.ndarray, offsets: np.ndarray, params: MinHashParams) -> np.ndarray:
    """(n_docs, num_perm) uint32 MinHash signatures; a document without shingles gets all EMPTY."""
    n_docs = len(offsets) - 1
    a = permutations(params)
    # (num_perm, chunk) layout: the per-document minimum runs along contiguous memory; blocks small enough
    # that the product stays in cache between the multiply and the minimum
    sig = np.full((params.num_perm, n_docs), np.iinfo(np.uint64).max, dtype=np.uint64)
    n = len(shingles)
    buf = np.empty((params.num_perm, _SHINGLE_CHUNK), dtype=np.uint64)
    doc_of_start = offsets[:-1]
    for lo in range(0, n, _SHINGLE_CHUNK):
        hi = min(lo + _SHINGLE_CHUNK, n)
        h = buf[:, : hi - lo]
        # one cast of the block first: a mixed uint32 x uint64 multiply casts per element, 3x slower
        np.multiply(a[:, None], shingles[None, lo:hi].astype(np.uint64), out=h)
        # documents overlapping [lo, hi): non-empty ones whose shingles start before hi and end after lo
        first = np.searchsorted(offsets[1:], lo, side="right")
        last = np.searchsorted(doc_of_start, hi, side="left")
        docs = np.arange(first, last)
        docs = docs[offsets[docs + 1] > offsets[docs]]
        if not len(docs):
            continue
        seg = np.maximum(offsets[docs], lo) - lo
        mins = np.minimum.reduceat(h, seg, axis=1)
        if offsets[docs[0]] < lo:  # the first document began in the previous block
            np.minimum(mins, sig[:, docs], out=mins)
        sig[:, docs] = mins
    return np.ascontiguousarray((sig >> np.uint64(32)).T.astype(np.uint32))


def signatures(texts: pa.Array | list[str], params: MinHashParams) -> np.ndarray:
    """MinHash signatures of a batch of texts."""
    return signatures_from_shingles(*shingles_of(texts, params), params)


def shingles_of(texts: pa.Array | list[str], params: MinHashParams) -> tuple[np.ndarray, np.ndarray]:
    """Every text's shingle hashes (uint32, repeats kept) and their offsets."""
    tok, offsets = token_hashes(texts)
    return shingle_hashes(tok, offsets, params.ngram, params.seed)


def band_keys(sig: np.ndarray, params: MinHashParams) -> np.ndarray:
    """(n_docs, bands) uint64: one hash per band of `rows` signature values."""
    n = sig.shape[0]
    coef = _constants(params.seed, params.rows, salt=4)
    bands = sig[:, : params.bands * params.rows].astype(np.uint64).reshape(n, params.bands, params.rows)
    return _splitmix64((bands * coef).sum(axis=2, dtype=np.uint64))


@dataclass
class Sketches:
    """The per-batch result: band keys for candidates, shingles for exact verification, and the signatures
    themselves when asked for (they are only needed to report the Jaccard estimate)."""
    keys: np.ndarray  # (n_docs, bands) uint64
    shingles: np.ndarray  # uint32 hashes; doc i's are [offsets[i], offsets[i+1]), repeats kept
    offsets: np.ndarray  # int64, n_docs + 1
    sig: np.ndarray | None = None  # (n_docs, num_perm) uint32

    @staticmethod
    def concat(parts: list["Sketches"]) -> "Sketches":
        sizes = np.array([len(p.shingles) for p in parts], dtype=np.int64)
        shift = np.r_[0, np.cumsum(sizes)[:-1]]
        offsets = np.concatenate([np.zeros(1, np.int64)] + [p.offsets[1:] + s for p, s in zip(parts, shift)])
        sig = np.concatenate([p.sig for p in parts]) if all(p.sig is not None for p in parts) else None
        return Sketches(np.concatenate([p.keys for p in parts]), np.concatenate([p.shingles for p in parts]),
                        offsets, sig)


def sketch(texts: pa.Array | list[str], params: MinHashParams, keep_signatures: bool = False) -> Sketches:
    """The per-batch work, distributable: shingles, signatures, band keys."""
    shingles, offsets = shingles_of(texts, params)
    sig = signatures_from_shingles(shingles, offsets, params)
    return Sketches(band_keys(sig, params), shingles, offsets, sig if keep_signatures else None)


def signatures_and_bands(texts: pa.Array | list[str], params: MinHashParams) -> tuple[np.ndarray, np.ndarray]:
    """(signatures, band keys) of a batch."""
    sig = signatures(texts, params)
    return sig, band_keys(sig, params)


def candidate_pairs(keys: np.ndarray, empty: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (u < v) of documents sharing a band key in some band. Within a bucket each member is paired
    with the bucket's first member and with its predecessor: linear in the bucket size, and a chain of
    similar members still joins one component. Documents flagged `empty` take no part."""
    n, n_bands = keys.shape
    idx = np.arange(n) if empty is None else np.flatnonzero(~empty)
    found = []
    for j in range(n_bands):
        col = keys[idx, j]
        order = idx[np.argsort(col, kind="stable")]
        sorted_keys = keys[order, j]
        same = sorted_keys[1:] == sorted_keys[:-1]
        if not same.any():
            continue
        pos = np.arange(len(order))
        group_first = np.maximum.accumulate(np.where(np.r_[True, ~same], pos, 0))
        members = np.flatnonzero(np.r_[False, same])
        found.append(np.stack([order[group_first[members]], order[members]]))
        chain = members[group_first[members] != members - 1]
        found.append(np.stack([order[chain - 1], order[chain]]))
    if not found:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pairs = np.concatenate(found, axis=1)
    u, v = np.minimum(pairs[0], pairs[1]), np.maximum(pairs[0], pairs[1])
    packed = np.unique(u.astype(np.int64) * n + v)
    return packed // n, packed % n


def similarity(sig: np.ndarray, u: np.ndarray, v: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
    """Estimated Jaccard of each pair: the share of equal signature values."""
    out = np.empty(len(u), dtype=np.float64)
    for lo in range(0, len(u), chunk):
        hi = lo + chunk
        out[lo:hi] = (sig[u[lo:hi]] == sig[v[lo:hi]]).mean(axis=1)
    return out


def _distinct(shingles: np.ndarray, offsets: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Sorted distinct keys `slot << 32 | shingle` of the documents `docs` (slot = position in `docs`)."""
    lens = offsets[docs + 1] - offsets[docs]
    total = int(lens.sum())
    gather = np.arange(total, dtype=np.int64) + np.repeat(offsets[docs] - (np.cumsum(lens) - lens), lens)
    slot = np.repeat(np.arange(len(docs), dtype=np.uint64), lens)
    return _sorted_distinct((slot << np.uint64(32)) | shingles[gather])


def _sorted_distinct(keys: np.ndarray) -> np.ndarray:
    # sort + neighbour compare: numpy's hash-based np.unique is several times slower on these keys
    keys = np.sort(keys)
    return keys[np.r_[True, keys[1:] != keys[:-1]]] if len(keys) else keys


def jaccard(shingles: np.ndarray, offsets: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Exact Jaccard of the shingle sets of each pair (u[i], v[i]); 1.0 when both are empty. Pairs go in
    blocks of about _PAIR_CHUNK shingles: each side's sets as sorted `pair << 32 | shingle` keys, the
    intersection counted as the repeats of one sort of both."""
    out = np.empty(len(u), dtype=np.float64)
    sizes = (offsets[u + 1] - offsets[u]) + (offsets[v + 1] - offsets[v])
    bounds = np.searchsorted(np.cumsum(sizes), np.arange(_PAIR_CHUNK, int(sizes.sum()), _PAIR_CHUNK))
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(u)]):
        if hi <= lo:
            continue
        merged = np.sort(np.concatenate([_distinct(shingles, offsets, u[lo:hi]),
                                         _distinct(shingles, offsets, v[lo:hi])]))
        both = merged[1:][merged[1:] == merged[:-1]]  # each side is distinct: a repeat is in both
        count = lambda keys: np.bincount((keys >> np.uint64(32)).astype(np.int64), minlength=hi - lo)  # noqa: E731
        inter, union = count(both), count(merged) - count(both)
        out[lo:hi] = np.where(union > 0, inter / np.maximum(union, 1), 1.0)
    return out


def connected_components(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Label of every node: the smallest node index of its component. Vectorized union-find: hook the larger
    root under the smaller for all edges at once, then compress paths by pointer jumping; repeat."""
    labels = np.arange(n, dtype=np.int64)
    while len(u):
        lu, lv = labels[u], labels[v]
        differ = lu != lv
        if not differ.any():
            break
        np.minimum.at(labels, np.maximum(lu[differ], lv[differ]), np.minimum(lu[differ], lv[differ]))
        while True:
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels = jumped
    return labels


@dataclass
class NearDuplicates:
    labels: np.ndarray  # per document: its cluster's smallest index (itself when alone)
    u: np.ndarray  # verified pairs
    v: np.ndarray
    sim: np.ndarray  # their Jaccard (exact when verified on shingles, else estimated)
    candidates: int  # pairs before verification


def cluster(sig: np.ndarray | None, keys: np.ndarray, threshold: float,
            shingles: tuple[np.ndarray, np.ndarray] | None = None) -> NearDuplicates:
    """Candidates from the band keys, kept when their Jaccard reaches `threshold`, joined into connected
    components. With `shingles` (values, offsets) the Jaccard is exact; without, the signature estimate."""
    if shingles is not None:
        values, offsets = shingles
        u, v = candidate_pairs(keys, np.diff(offsets) == 0)
        sim = jaccard(values, offsets, u, v)
    else:
        u, v = candidate_pairs(keys, (sig == EMPTY).all(axis=1))
        sim = similarity(sig, u, v)
    ok = sim >= threshold
    return NearDuplicates(connected_components(len(keys), u[ok], v[ok]), u[ok], v[ok], sim[ok], len(u))


def cluster_sketches(sk: Sketches, threshold: float) -> NearDuplicates:
    """`cluster` verified exactly on the sketches' shingles."""
    return cluster(sk.sig, sk.keys, threshold, (sk.shingles, sk.offsets))
