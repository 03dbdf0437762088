"""Near-duplicate documents: MinHash signatures over word n-gram shingles, LSH banding, candidate
verification on the exact Jaccard of the shingle sets, connected components into clusters. All vectorized
numpy over the texts' UTF-8 bytes: no Python object per document, token or shingle.

Stages and where they run:
- `sketch(texts, params)`: per batch of documents, independent (shingle sets, signatures, band keys); the
  pipeline maps it over batches in-process or as Ray tasks (same function). Inside a batch the work goes in
  cache-sized chunks of text (`_TEXT_CHUNK` bytes), so its transient memory is bounded by the chunk, not
  the batch; a batch returns 4 bytes per distinct shingle, 8 per band per document and the offsets (the
  signatures themselves only when asked for).
- `candidate_pairs`, `jaccard`, `connected_components`: on the driver over all band keys and shingles;
  sort-based and linear in the number of documents, no Python loop per document or pair.

Why exact verification: a pair just above the threshold has a signature estimate below it about half the
time, so checking candidates on the estimate loses recall right where it matters. The banding is chosen
for recall instead (`lsh_params`: a pair at the threshold is missed with probability <= MAX_MISS) and the
false candidates it lets through are removed by the exact check: each document's shingles are kept as a
sorted set, so a pair costs a lookup of one sorted array in another.

Tokens are the runs of non-whitespace, whitespace being what Python's `str.isspace` and Arrow's
`utf8_split_whitespace` call whitespace (the ASCII ones and 19 Unicode spaces, found on the UTF-8 bytes).
Hashing depends on nothing but the seed (every constant is splitmix64 of a counter; no library hash or
random generator): a token's bytes are read 8 at a time as little-endian words (chained by splitmix64
past 8 bytes), its length added, and 32 bits kept by multiply-shift; an n-gram is
`fmix32(sum_k c_k * t_(i+k) mod 2^32)` over its token hashes (c_k odd; murmur3's 32-bit finalizer).

Signatures are one permutation hashing with optimal densification (Shrivastava, "Optimal densification for
fast and accurate minwise hashing", ICML 2017): each shingle goes to one of num_perm bins by the top bits
of its hash, and a bin keeps the least seeded mix (`fmix32(shingle ^ c)`, a bijection) of its shingles; an
empty bin takes the value of the first filled bin along a probe sequence fixed per bin (a seeded
permutation of the bins, the same for every document). Two documents' values in a bin are equal with
probability exactly their Jaccard, as with num_perm independent permutations, at the cost of one hash per
shingle instead of num_perm. The banding S-curve it gives matches the k-permutation one (simulated on sets
of 10 to 1,000 shingles, and measured in `tests/transforms/dedup`: the share of planted pairs that become
candidates follows `1 - (1 - s^r)^b`, and recall on pairs at the threshold).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

EMPTY = np.uint32(0xFFFFFFFF)  # the signature value of a document with no shingles
_TEXT_CHUNK = 1 << 18  # bytes of text per chunk of `sketch`: its transients (~10x) stay in cache
_CHUNK_DOCS = 4096  # and at most this many documents per chunk (a (docs x num_perm) block of 2 MB)
_PAIR_CHUNK = 1 << 16  # shingles gathered per verification block (cache-sized)
MAX_MISS = 1e-3  # chance that LSH misses a pair whose Jaccard is exactly the threshold
MAX_PERM = 4096  # signature length limit: the densification's probe table is num_perm^2 uint16

_U64 = np.uint64
_U32 = np.uint32
_U8 = np.uint8
# ASCII whitespace (the bytes below 0x20 that are not, and 0x20 itself, are settled by this table)
_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[[0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20]] = True
# the low k bytes of a little-endian word, k = 0..8
_BYTE_MASKS = np.array([0] + [(1 << (8 * k)) - 1 for k in range(1, 8)] + [(1 << 64) - 1], dtype=_U64)


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
        if not 1 <= self.num_perm <= MAX_PERM:
            raise ValueError(f"num_perm must be in [1, {MAX_PERM}], got {self.num_perm}")
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
    return _lsh_params(float(threshold), int(num_perm), float(max_miss))


@lru_cache(maxsize=64)
def _lsh_params(threshold: float, num_perm: int, max_miss: float) -> tuple[int, int]:
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
    x = x + _U64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> _U64(27))) * _U64(0x94D049BB133111EB)
    return x ^ (x >> _U64(31))


def _fmix32(h: np.ndarray) -> np.ndarray:
    """murmur3's finalizer, a bijection of uint32 (in place on `h`, which it returns)."""
    h ^= h >> _U32(16)
    h *= _U32(0x85EBCA6B)
    h ^= h >> _U32(13)
    h *= _U32(0xC2B2AE35)
    h ^= h >> _U32(16)
    return h


def _stream(seed: int, salt: int, n: int) -> np.ndarray:
    """n pseudo-random uint64 from (seed, salt): splitmix64 of a counter, so the constants (and with them
    every signature) depend on nothing but the seed, never on a library's random generator."""
    start = _splitmix64(np.array([(seed ^ (salt << 40)) & (2**64 - 1)], dtype=_U64))[0]
    return _splitmix64(np.arange(n, dtype=_U64) * _U64(0x9E3779B97F4A7C15) + start)


@lru_cache(maxsize=256)
def _constants(seed: int, n: int, salt: int) -> np.ndarray:
    """n odd 64-bit constants from (seed, salt) (read-only: cached)."""
    out = _stream(seed, salt, n) | _U64(1)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=256)
def _constants32(seed: int, n: int, salt: int) -> np.ndarray:
    """n odd 32-bit constants from (seed, salt) (read-only: cached)."""
    out = (_stream(seed, salt, n) >> _U64(32)).astype(_U32) | _U32(1)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=16)
def _probe_sequences(seed: int, num_perm: int) -> np.ndarray:
    """Row j: the order in which an empty bin j looks for a filled one (a seeded permutation of the bins),
    flattened: bin j's t-th probe is at [j * num_perm + t]."""
    order = _stream(seed, 3, num_perm * num_perm).reshape(num_perm, num_perm)
    seq = np.argsort(order, axis=1, kind="stable").astype(np.uint16).ravel()
    seq.flags.writeable = False
    return seq


# ------------------------------------------------------------------------------------------- text -> tokens

def _utf8(texts: pa.Array | pa.ChunkedArray | list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The texts' UTF-8 bytes (a zero-copy view when the input is a large_string array without nulls) and
    int64 offsets into them: text i is bytes[offsets[i]:offsets[i+1]]. Nulls are empty texts."""
    if isinstance(texts, list):
        arr = pa.array(texts, pa.large_string())
    else:
        arr = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
        if arr.type != pa.large_string():
            arr = arr.cast(pa.large_string())
    if arr.null_count:
        arr = pc.fill_null(arr, "")
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=len(arr) + 1, offset=arr.offset * 8)
    data = arr.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None and data.size else np.zeros(0, np.uint8)
    return data, offsets


def _whitespace(b: np.ndarray) -> np.ndarray:
    """Per byte of UTF-8 text `b` (padded with 2 zero bytes past its end): is it part of a whitespace
    character."""
    ws = b <= 0x20
    # bytes that need a closer look: controls (whitespace or not by the table) and the lead bytes of the
    # Unicode spaces U+0085, U+00A0 (C2 xx), U+1680 (E1 9A 80), U+2000-200A, 2028, 2029, 202F (E2 80 xx),
    # U+205F (E2 81 9F), U+3000 (E3 80 80)
    odd = np.flatnonzero((b < 0x20) | ((b - _U8(0xC2)) <= _U8(0xE3 - 0xC2)))  # 0xC2 <= b <= 0xE3, wrapping
    if not len(odd):
        return ws[: len(b) - 2]
    c0 = b[odd]
    low = c0 < 0x20
    ws[odd[low]] = _ASCII_SPACE[c0[low]]
    lead, c0 = odd[~low], c0[~low]
    if len(lead):
        c1, c2 = b[lead + 1], b[lead + 2]
        two = (c0 == 0xC2) & ((c1 == 0x85) | (c1 == 0xA0))
        three = (((c0 == 0xE1) & (c1 == 0x9A) & (c2 == 0x80))
                 | ((c0 == 0xE2) & (c1 == 0x80) & ((c2 <= 0x8A) | (c2 == 0xA8) | (c2 == 0xA9) | (c2 == 0xAF)))
                 | ((c0 == 0xE2) & (c1 == 0x81) & (c2 == 0x9F))
                 | ((c0 == 0xE3) & (c1 == 0x80) & (c2 == 0x80)))
        at = lead[two | three]
        ws[at] = True
        ws[at + 1] = True
        ws[lead[three] + 2] = True
    return ws[: len(b) - 2]


def _tokenize(data: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hashes (uint32) of the whitespace-separated tokens of the texts data[bounds[i]:bounds[i+1]], and
    int64 offsets: text i's tokens are [offsets[i], offsets[i+1])."""
    base, end = int(bounds[0]), int(bounds[-1])
    rel = bounds - base
    size = end - base
    pad = np.zeros(size + 8, dtype=np.uint8)  # room for 8-byte reads at any token start
    pad[:size] = data[base:end]
    # word[i + 1]: is byte i part of a token; word[0] and word[size + 1] are borders (whitespace)
    word = np.zeros(size + 2, dtype=bool)
    np.invert(_whitespace(pad[: size + 2]), out=word[1: size + 1])
    # token edges: where word/whitespace flips, plus a text's start inside a run of word bytes (there a token
    # of one text ends and one of the next begins: the edge counts twice); edges alternate start, end, ...
    edges = np.flatnonzero(word[1:] != word[:-1])
    inner = rel[1:-1][(rel[1:-1] > 0) & (rel[1:-1] < size)]
    glued = inner[word[inner + 1] & word[inner]]
    if len(glued):
        glued = glued[np.r_[True, glued[1:] != glued[:-1]]]  # empty texts repeat a boundary
        edges = np.insert(edges, np.repeat(np.searchsorted(edges, glued), 2), np.repeat(glued, 2))
    starts, lengths = edges[0::2], edges[1::2] - edges[0::2]
    offsets = np.searchsorted(starts, rel).astype(np.int64)
    # 8 bytes from every position, read as one little-endian word (unaligned: a strided view, no copy)
    words = np.ndarray((size + 1,), dtype="<u8", buffer=pad, strides=(1,))
    h = words[starts] & _BYTE_MASKS[np.minimum(lengths, 8)]
    longer, k = np.flatnonzero(lengths > 8), 8
    while len(longer):
        more = words[starts[longer] + k] & _BYTE_MASKS[np.minimum(lengths[longer] - k, 8)]
        h[longer] = _splitmix64(h[longer]) ^ more
        k += 8
        longer = longer[lengths[longer] > k]
    # the length in (so a token is not its prefix padded with zero bytes), then multiply-shift to 32 bits
    h += lengths.astype(_U64) * _U64(0x9E3779B97F4A7C15)
    h *= _U64(0xD6E8FEB86659FD93)
    return (h >> _U64(32)).astype(_U32), offsets


def token_hashes(texts: pa.Array | list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Whitespace tokens of every text, hashed: (uint32 hash per token, int64 offsets: doc i's tokens are
    [offsets[i], offsets[i+1]))."""
    data, bounds = _utf8(texts)
    return _tokenize(data, bounds)


# ------------------------------------------------------------------------------------- tokens -> shingles

def shingle_hashes(tok: np.ndarray, offsets: np.ndarray, ngram: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Word n-gram shingles of every document as 32-bit hashes (uint32), and their per-document offsets.
    A document with fewer than `ngram` tokens (but at least one) has one shingle, of all its tokens."""
    n_docs = len(offsets) - 1
    counts = np.diff(offsets)
    coef = _constants32(seed, ngram, salt=1)
    tok = tok.astype(_U32, copy=False)
    per_doc = np.maximum(counts - ngram + 1, 0)
    short = (counts > 0) & (counts < ngram)
    per_doc_out = per_doc + short
    out_off = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(per_doc_out, out=out_off[1:])
    out = np.empty(int(out_off[-1]), dtype=_U32)
    n_full = int(per_doc.sum())
    if n_full:
        m = len(tok) - ngram + 1
        acc = tok[:m] * coef[0]
        for k in range(1, ngram):
            acc += tok[k: m + k] * coef[k]
        # n-gram i of doc d starts at token offsets[d] + i
        starts = np.repeat(offsets[:-1] - (np.cumsum(per_doc) - per_doc), per_doc) + np.arange(n_full)
        full = acc[starts]
    else:
        full = np.zeros(0, dtype=_U32)
    if short.any():
        short_counts = counts[short]
        pos = np.arange(int(short_counts.sum())) - np.repeat(np.cumsum(short_counts) - short_counts, short_counts)
        weighted = tok[np.repeat(offsets[:-1][short], short_counts) + pos] * coef[pos]
        short_hash = np.add.reduceat(weighted, np.cumsum(short_counts) - short_counts, dtype=_U32)
        # each short document's one shingle goes where its n-grams would be
        is_short_slot = np.zeros(len(out), dtype=bool)
        is_short_slot[out_off[:-1][short]] = True
        out[is_short_slot] = short_hash
        out[~is_short_slot] = full
    else:
        out[:] = full
    return _fmix32(out), out_off


def shingle_sets(shingles: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each document's shingles sorted and distinct (its set), and the new offsets."""
    n_docs = len(offsets) - 1
    if not len(shingles):
        return shingles, offsets
    doc = np.repeat(np.arange(n_docs, dtype=_U64), np.diff(offsets))
    keys = (doc << _U64(32)) | shingles
    keys.sort()
    keep = np.empty(len(keys), dtype=bool)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    # sorting kept every document's keys inside its old range: the kept ones before each old offset
    kept_before = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    return keys[keep].astype(_U32), kept_before[offsets]


def shingles_of(texts: pa.Array | list[str], params: MinHashParams) -> tuple[np.ndarray, np.ndarray]:
    """Every text's shingle hashes (uint32, repeats kept) and their offsets."""
    tok, offsets = token_hashes(texts)
    return shingle_hashes(tok, offsets, params.ngram, params.seed)


# ----------------------------------------------------------------------------------- shingles -> signatures

def _signatures_t(shingles: np.ndarray, offsets: np.ndarray, params: MinHashParams) -> np.ndarray:
    """uint32 MinHash signatures (one permutation hashing, optimal densification; a document without
    shingles gets all EMPTY), transposed, (num_perm, n_docs): bin-major, so densification moves whole rows."""
    n_docs, k = len(offsets) - 1, params.num_perm
    sig = np.full((k, n_docs), EMPTY, dtype=_U32)
    if not len(shingles):
        return sig
    # the bin: the shingle hash (uniform on 32 bits) scaled to k; the value: a seeded mix of it (a bijection,
    # so distinct shingles keep distinct values)
    if k & (k - 1) == 0:  # a power of two: the top log2(k) bits
        bins = (shingles.astype(_U64) >> _U64(32 - (k.bit_length() - 1))).astype(np.int64)
    else:
        bins = ((shingles.astype(_U64) * _U64(k)) >> _U64(32)).astype(np.int64)
    cell = bins * n_docs + np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(offsets))
    np.minimum.at(sig.reshape(-1), cell, _fmix32(shingles ^ _constants32(params.seed, 1, salt=2)[0]))
    filled = np.zeros((k, n_docs), dtype=bool)
    filled.reshape(-1)[cell] = True
    _densify(sig, filled, np.diff(offsets) > 0, params.seed)
    return sig


def _densify(sig: np.ndarray, filled: np.ndarray, nonempty: np.ndarray, seed: int, dense_probes: int = 6) -> None:
    """Optimal densification, in place on `sig` (num_perm, n_docs): an empty bin of a non-empty document
    copies the first filled bin on its probe sequence (the same sequences in every document, which keeps
    P[equal] = Jaccard). Filled bins are never written, so every copy is of an original value. The first
    probes move whole rows (bin j's t-th probe for every document at once); the few bins still empty after
    them (documents with few shingles) go on one by one."""
    k, n_docs = sig.shape
    seq = _probe_sequences(seed, k)
    by_probe = seq.reshape(k, k).T  # [t, j]: bin j's t-th probe
    pending = ~filled
    pending[:, ~nonempty] = False
    for t in range(min(dense_probes, k)):
        if t >= 2 and not pending.any():
            return
        src = by_probe[t]
        hit = pending & filled[src]
        select = hit.view(np.uint8).astype(_U32) * EMPTY  # all ones where hit
        sig ^= (sig ^ sig[src]) & select
        pending &= ~hit
    left = np.flatnonzero(pending.reshape(-1))
    if not len(left):
        return
    flat_sig, flat_filled = sig.reshape(-1), filled.reshape(-1)
    doc = left % n_docs
    step = (left // n_docs) * k + min(dense_probes, k)  # the bin's next probe
    while len(left):
        src = seq[step].astype(np.int64) * n_docs + doc
        hit = flat_filled[src]
        flat_sig[left[hit]] = flat_sig[src[hit]]
        miss = ~hit
        left, doc, step = left[miss], doc[miss], step[miss] + 1


def signatures(texts: pa.Array | list[str], params: MinHashParams) -> np.ndarray:
    """MinHash signatures of a batch of texts."""
    return sketch(texts, params, keep_signatures=True).sig


def band_keys(sig: np.ndarray, params: MinHashParams) -> np.ndarray:
    """(n_docs, bands) uint64: one hash per band of `rows` signature values."""
    return _band_keys_t(sig.T, params)


def _band_keys_t(sig_t: np.ndarray, params: MinHashParams) -> np.ndarray:
    """`band_keys` from the signatures transposed, (num_perm, n_docs)."""
    coef = _constants(params.seed, params.rows, salt=4)
    acc = np.zeros((params.bands, sig_t.shape[1]), dtype=_U64)
    for r in range(params.rows):  # band i's row r is bin i * rows + r
        acc += sig_t[r: params.bands * params.rows: params.rows].astype(_U64) * coef[r]
    return _splitmix64(acc).T  # (n_docs, bands), column-major: a band's keys are contiguous for its sort


@dataclass
class Sketches:
    """The per-batch result: band keys for candidates, shingles for exact verification, and the signatures
    themselves when asked for (they are only needed to report the Jaccard estimate)."""
    keys: np.ndarray  # (n_docs, bands) uint64
    shingles: np.ndarray  # uint32 hashes; doc i's are [offsets[i], offsets[i+1]), sorted and distinct
    offsets: np.ndarray  # int64, n_docs + 1
    sig: np.ndarray | None = None  # (n_docs, num_perm) uint32

    @staticmethod
    def concat(parts: list["Sketches"]) -> "Sketches":
        if len(parts) == 1:
            return parts[0]
        sizes = np.array([len(p.shingles) for p in parts], dtype=np.int64)
        shift = np.r_[0, np.cumsum(sizes)[:-1]]
        offsets = np.concatenate([np.zeros(1, np.int64)] + [p.offsets[1:] + s for p, s in zip(parts, shift)])
        sig = np.concatenate([p.sig for p in parts]) if all(p.sig is not None for p in parts) else None
        keys = np.empty((len(offsets) - 1, parts[0].keys.shape[1]), dtype=_U64, order="F")  # see _band_keys_t
        lo = 0
        for p in parts:
            keys[lo: lo + len(p.keys)] = p.keys
            lo += len(p.keys)
        return Sketches(keys, np.concatenate([p.shingles for p in parts]), offsets, sig)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.keys, self.shingles, self.offsets, self.sig) if a is not None)


def _chunks(bounds: np.ndarray) -> list[tuple[int, int]]:
    """Document ranges [lo, hi) of about _TEXT_CHUNK bytes and at most _CHUNK_DOCS documents each."""
    n = len(bounds) - 1
    by_bytes = np.searchsorted(bounds, np.arange(int(bounds[0]) + _TEXT_CHUNK, int(bounds[-1]), _TEXT_CHUNK))
    edges = np.unique(np.r_[0, by_bytes, np.arange(_CHUNK_DOCS, n, _CHUNK_DOCS), n])
    return list(zip(edges[:-1].tolist(), edges[1:].tolist()))


def sketch(texts: pa.Array | list[str], params: MinHashParams, keep_signatures: bool = False) -> Sketches:
    """The per-batch work, distributable: shingle sets, signatures, band keys; chunk by chunk of text, each
    chunk's results written straight into the batch's arrays."""
    data, bounds = _utf8(texts)
    n = len(bounds) - 1
    keys = np.empty((n, params.bands), dtype=_U64, order="F")  # column-major: see _band_keys_t
    sig = np.empty((n, params.num_perm), dtype=_U32) if keep_signatures else None
    offsets = np.zeros(n + 1, dtype=np.int64)
    # a text of L bytes has at most L // 2 + 1 tokens, hence shingles: an upper bound whose untouched tail
    # costs address space only (and a slice of it is all that pickles, to Ray)
    shingles = np.empty(int(bounds[-1] - bounds[0]) // 2 + n, dtype=_U32)
    used = 0
    for lo, hi in _chunks(bounds):
        tok, tok_offsets = _tokenize(data, bounds[lo: hi + 1])
        chunk, chunk_offsets = shingle_sets(*shingle_hashes(tok, tok_offsets, params.ngram, params.seed))
        sig_t = _signatures_t(chunk, chunk_offsets, params)
        keys[lo:hi] = _band_keys_t(sig_t, params)
        if sig is not None:
            sig[lo:hi] = sig_t.T
        shingles[used: used + len(chunk)] = chunk
        offsets[lo + 1: hi + 1] = chunk_offsets[1:] + used
        used += len(chunk)
    return Sketches(keys, shingles[:used], offsets, sig)


def signatures_and_bands(texts: pa.Array | list[str], params: MinHashParams) -> tuple[np.ndarray, np.ndarray]:
    """(signatures, band keys) of a batch."""
    sk = sketch(texts, params, keep_signatures=True)
    return sk.sig, sk.keys


# ------------------------------------------------------------------------------ candidates and verification

def candidate_pairs(keys: np.ndarray, empty: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (u < v) of documents sharing a band key in some band. Within a bucket each member is paired
    with the bucket's first member and with its predecessor: linear in the bucket size, and a chain of
    similar members still joins one component. Documents flagged `empty` take no part.
    Buckets come from one sort per band of `key with its low bits replaced by the document index`: the
    index rides along (no argsort), members of a bucket come out in index order, and the key keeps
    64 - log2(n) bits (two unrelated buckets merging is then ~n^2 / 2^(65 - log2 n) pairs per band over the
    whole set, and such pairs are dropped by the exact check)."""
    n, n_bands = keys.shape
    idx = np.arange(n, dtype=_U64) if empty is None else np.flatnonzero(~empty).astype(_U64)
    if not len(idx) or not n_bands:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    shift = _U64(max(int(n - 1).bit_length(), 1))
    low = (_U64(1) << shift) - _U64(1)
    rows = slice(None) if empty is None else idx.astype(np.int64)
    packed = np.empty(len(idx), dtype=_U64)
    found = []
    for j in range(n_bands):
        # keys from `sketch` are column-major (one band's keys contiguous); any layout works
        np.bitwise_and(keys[rows, j], ~low, out=packed)
        packed |= idx
        packed.sort()
        same = (packed[1:] ^ packed[:-1]) <= low  # same high bits: same bucket
        members = np.flatnonzero(same) + 1  # positions that continue a bucket (in sorted order)
        if not len(members):
            continue
        # a bucket's first position: the member before a member that does not follow another member
        opens = np.r_[True, members[1:] != members[:-1] + 1]
        first = np.maximum.accumulate(np.where(opens, members - 1, 0))
        doc = lambda at: (packed[at] & low).astype(np.int64)  # noqa: E731
        found.append(np.stack([doc(first), doc(members)]))
        chain = members[first != members - 1]
        found.append(np.stack([doc(chain - 1), doc(chain)]))
    if not found:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pairs = np.concatenate(found, axis=1)
    packed = np.unique(pairs[0] * n + pairs[1])  # already u < v: members come in index order
    return packed // n, packed % n


def similarity(sig: np.ndarray, u: np.ndarray, v: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
    """Estimated Jaccard of each pair: the share of equal signature values."""
    out = np.empty(len(u), dtype=np.float64)
    for lo in range(0, len(u), chunk):
        hi = lo + chunk
        out[lo:hi] = (sig[u[lo:hi]] == sig[v[lo:hi]]).mean(axis=1)
    return out


def _pair_keys(shingles: np.ndarray, offsets: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keys `slot << 32 | shingle` of the documents `docs` (slot = position in `docs`), sorted and distinct,
    and the number of distinct shingles per slot. Sketches hold each document's shingles sorted and distinct
    already: then this is a gather and one check, no sort."""
    lens = offsets[docs + 1] - offsets[docs]
    total = int(lens.sum())
    gather = np.arange(total, dtype=np.int64) + np.repeat(offsets[docs] - (np.cumsum(lens) - lens), lens)
    slot = np.repeat(np.arange(len(docs), dtype=_U64), lens)
    keys = (slot << _U64(32)) | shingles[gather]
    if len(keys) > 1 and not (keys[1:] > keys[:-1]).all():
        # sort + neighbour compare: numpy's hash-based np.unique is several times slower on these keys
        keys = np.sort(keys)
        keys = keys[np.r_[True, keys[1:] != keys[:-1]]]
        lens = np.bincount((keys >> _U64(32)).astype(np.int64), minlength=len(docs))
    return keys, lens


def jaccard(shingles: np.ndarray, offsets: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Exact Jaccard of the shingle sets of each pair (u[i], v[i]); 1.0 when both are empty. Pairs go in
    blocks of about _PAIR_CHUNK shingles: each side's sets as sorted `pair << 32 | shingle` keys, the
    intersection counted by looking every u-side key up in the v-side keys (one vectorized binary search)."""
    out = np.empty(len(u), dtype=np.float64)
    if not len(u):
        return out
    sizes = (offsets[u + 1] - offsets[u]) + (offsets[v + 1] - offsets[v])
    bounds = np.searchsorted(np.cumsum(sizes), np.arange(_PAIR_CHUNK, int(sizes.sum()), _PAIR_CHUNK))
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(u)]):
        if hi <= lo:
            continue
        ku, nu = _pair_keys(shingles, offsets, u[lo:hi])
        kv, nv = _pair_keys(shingles, offsets, v[lo:hi])
        if len(kv):
            at = np.minimum(np.searchsorted(kv, ku), len(kv) - 1)
            inter = np.bincount((ku[kv[at] == ku] >> _U64(32)).astype(np.int64), minlength=hi - lo)
        else:
            inter = np.zeros(hi - lo, dtype=np.int64)
        union = nu + nv - inter
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
