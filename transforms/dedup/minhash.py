"""Near-duplicate documents: MinHash signatures over word n-gram shingles, LSH banding, candidate
verification on the signatures, connected components into clusters. All vectorized numpy.

Stages and where they run:
- `signatures(texts, params)` and `band_keys(sig, params)`: per batch of documents, independent; the
  pipeline maps them over batches in-process or as Ray tasks (same function).
- `candidate_pairs`, `verify`, `connected_components`: on the driver over all band keys; sort-based and
  linear in the number of documents, no Python loop per document.

Hashing: a token is hashed from its UTF-8 bytes (a polynomial hash, vectorized over the whole batch), an
n-gram from its token hashes; both finalized with splitmix64 and cut to 32 bits. Permutation j is
`((a_j * x + b_j) mod 2^64) >> 32` (multiply-add-shift, a strongly universal family on 32-bit keys).
Everything is seeded: the same text and params give the same signature on any machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

EMPTY = np.uint32(0xFFFFFFFF)  # the signature value of a document with no shingles
_SHINGLE_CHUNK = 1 << 14  # shingles per (num_perm x chunk) matrix: 128 x 16k x 8 B = 16 MB


@dataclass(frozen=True)
class MinHashParams:
    num_perm: int = 128
    ngram: int = 5  # words per shingle
    threshold: float = 0.8  # estimated Jaccard at or above which two documents are near-duplicates
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


def lsh_params(threshold: float, num_perm: int) -> tuple[int, int]:
    """(bands, rows) minimizing the equally weighted false-positive and false-negative probability mass of
    the banding S-curve 1 - (1 - s^r)^b around `threshold`."""
    best, best_cost = (1, num_perm), np.inf
    below, above = np.linspace(0, threshold, 201), np.linspace(threshold, 1, 201)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = np.trapezoid(1 - (1 - below ** r) ** b, below)
            fn = np.trapezoid((1 - above ** r) ** b, above)
            if 0.5 * fp + 0.5 * fn < best_cost:
                best, best_cost = (b, r), 0.5 * fp + 0.5 * fn
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
    n_tok = len(tokens)
    tok_off = np.frombuffer(tokens.buffers()[1], dtype=np.int64)[tokens.offset: tokens.offset + n_tok + 1]
    lengths = np.diff(tok_off)
    keep = lengths > 0  # "" splits into one empty token
    doc_of_token = np.repeat(np.arange(len(arr)), np.diff(list_offsets))
    counts = np.bincount(doc_of_token[keep], minlength=len(arr))
    offsets = np.zeros(len(arr) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    starts, lengths = tok_off[:-1][keep], lengths[keep]
    if not len(starts):
        return np.zeros(0, np.uint64), offsets
    data = np.frombuffer(tokens.buffers()[2], dtype=np.uint8)[tok_off[0]: tok_off[-1]]
    first = tok_off[0]
    # byte b of a token starting at s weighs P^(b - s): a polynomial hash of the bytes, mod 2^64
    power = np.cumprod(np.r_[np.uint64(1), np.full(int(lengths.max()) - 1, 0x100000001B3, dtype=np.uint64)],
                       dtype=np.uint64)
    pos = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    byte_index = np.repeat(starts - first, lengths) + pos
    weighted = data[byte_index].astype(np.uint64) * power[pos]
    seg = np.cumsum(lengths) - lengths
    h = np.add.reduceat(weighted, seg, dtype=np.uint64)
    return _splitmix64(h ^ lengths.astype(np.uint64)), offsets


def shingle_hashes(tok: np.ndarray, offsets: np.ndarray, ngram: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Word n-gram shingles of every document as 32-bit hashes (in uint64), and their per-document offsets.
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
    return _splitmix64(full) >> np.uint64(32), offsets_out


def permutations(params: MinHashParams) -> tuple[np.ndarray, np.ndarray]:
    a = _constants(params.seed, params.num_perm, salt=2)
    b = np.random.default_rng([params.seed, 3]).integers(0, 2**63, size=params.num_perm, dtype=np.uint64)
    return a, b


def signatures_from_shingles(shingles: np.ndarray, offsets: np.ndarray, params: MinHashParams) -> np.ndarray:
    """(n_docs, num_perm) uint32 MinHash signatures; a document without shingles gets all EMPTY."""
    n_docs = len(offsets) - 1
    a, b = permutations(params)
    # (num_perm, chunk) layout: the per-document minimum runs along contiguous memory
    sig = np.full((params.num_perm, n_docs), 0xFFFFFFFF, dtype=np.uint64)
    n = len(shingles)
    buf = np.empty((params.num_perm, _SHINGLE_CHUNK), dtype=np.uint64)
    doc_of_start = offsets[:-1]
    for lo in range(0, n, _SHINGLE_CHUNK):
        hi = min(lo + _SHINGLE_CHUNK, n)
        h = buf[:, : hi - lo]
        np.multiply(a[:, None], shingles[None, lo:hi], out=h)
        np.add(h, b[:, None], out=h)
        np.right_shift(h, np.uint64(32), out=h)
        # documents overlapping [lo, hi): non-empty ones whose shingles start before hi and end after lo
        first = np.searchsorted(offsets[1:], lo, side="right")
        last = np.searchsorted(doc_of_start, hi, side="left")
        docs = np.arange(first, last)
        docs = docs[offsets[docs + 1] > offsets[docs]]
        if not len(docs):
            continue
        seg = np.maximum(offsets[docs], lo) - lo
        mins = np.minimum.reduceat(h, seg, axis=1)
        sig[:, docs] = np.minimum(sig[:, docs], mins)
    return np.ascontiguousarray(sig.T.astype(np.uint32))


def signatures(texts: pa.Array | list[str], params: MinHashParams) -> np.ndarray:
    """MinHash signatures of a batch of texts."""
    tok, offsets = token_hashes(texts)
    shingles, sh_offsets = shingle_hashes(tok, offsets, params.ngram, params.seed)
    return signatures_from_shingles(shingles, sh_offsets, params)


def band_keys(sig: np.ndarray, params: MinHashParams) -> np.ndarray:
    """(n_docs, bands) uint64: one hash per band of `rows` signature values."""
    n = sig.shape[0]
    coef = _constants(params.seed, params.rows, salt=4)
    bands = sig[:, : params.bands * params.rows].astype(np.uint64).reshape(n, params.bands, params.rows)
    return _splitmix64((bands * coef).sum(axis=2, dtype=np.uint64))


def signatures_and_bands(texts: pa.Array | list[str], params: MinHashParams) -> tuple[np.ndarray, np.ndarray]:
    """The per-batch work, distributable: (signatures, band keys)."""
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
    sim: np.ndarray  # their estimated Jaccard
    candidates: int  # pairs before verification


def cluster(sig: np.ndarray, keys: np.ndarray, threshold: float) -> NearDuplicates:
    """Candidates from the band keys, kept when their estimated Jaccard reaches `threshold`, joined into
    connected components."""
    empty = (sig == EMPTY).all(axis=1)
    u, v = candidate_pairs(keys, empty)
    sim = similarity(sig, u, v)
    ok = sim >= threshold
    return NearDuplicates(connected_components(len(sig), u[ok], v[ok]), u[ok], v[ok], sim[ok], len(u))
