"""Near-duplicate detection end to end, ours against datasketch's bulk API (`MinHash.bulk` + `MinHashLSH`) and
datatrove's MinHash pipeline, in one run per size on the same synthetic documents.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/dedup.py --docs 20000                    # quick look, under a minute
    .venv/bin/python bench/dedup.py --docs 200000 1000000           # the issue's sizes: ~10 min on 2 cores
    .venv/bin/python bench/dedup.py --docs 1000000 --skip datatrove --peer-repeat 2   # ratios at 1M only

Documents look like agent traces, not random text: words are drawn from one shared 50k-word vocabulary with
Zipf frequencies, each document starts with one of a few hundred task headers and carries boilerplate
phrases from a shared pool of 2,000 (so unrelated documents share shingles, and LSH buckets fill with
false candidates). A share (`--dup-rate`) of the documents are edited copies of others (substitutions,
insertions, deletions; several copies of one source form a family): half with an edit amount aimed at a
Jaccard uniform in 0.6-0.95, half aimed within a few hundredths of the threshold, where mistakes happen.

Every contender runs in its own subprocess, which reads the same Arrow file (memory-mapped, every page
touched before the clock), so its peak RSS is its own: VmHWM of that process (for Ray: of the driver;
workers and Ray's object store are not in it). "x text" is that peak over the text's UTF-8 bytes, "+MB" the
peak minus the RSS once the input was loaded (the contender's working memory). The clock starts after the
input is loaded and stops when the contender has its pairs; "cpu s" is the process's CPU time, steadier
than the wall clock on a shared machine:
- ours: `pipelines.stages.dedup.map_signatures` (executor local, or Ray with 1 or 2 CPUs on a fresh local cluster
  started and warmed before the clock) + `minhash.cluster_sketches` (candidates verified on exact Jaccard);
  its pairs are the verified ones.
- datasketch: `MinHash.bulk` per chunk of 10k documents (5-word shingles made in Python, hashed with
  xxh32: the fast hash datasketch's docs advise instead of its default SHA-1; `--datasketch-hash sha1`
  for the default), `MinHashLSH` with its own optimal bands for the threshold (insertion session), then a
  query per document; its pairs are the LSH candidates, as its API returns them.
- datatrove: signature, buckets and cluster steps on one local task per step (its bucket step: one task
  per band), 5-grams, a whitespace word tokenizer (its spaCy one is slower and splits these words the
  same), the same bands x rows as datasketch; its pairs are those within its clusters.
Ground truth is the exact Jaccard of the 5-word shingle sets (each shingle as its xxh3-64, computed in
plain Python here, independent of our code) of every planted family pair and every pair any contender
reported; a pair is a near-duplicate when it reaches the threshold. docs/s is documents over the median
time of `--repeat` runs (peers: `--peer-repeat`); ratios are of those medians.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.peak import own_peak_mb  # noqa: E402

NGRAM = 5
NUM_PERM = 128
VOCAB = 50_000
PHRASES = 2_000
HEADERS = 300


# ---------------------------------------------------------------------------------------------- the documents

def _zipf_sampler(rng: np.random.Generator, n: int, exponent: float, offset: float):
    cdf = np.cumsum(1.0 / (np.arange(n) + offset) ** exponent)
    cdf /= cdf[-1]
    return lambda size: np.minimum(np.searchsorted(cdf, rng.random(size)), n - 1).astype(np.int32)


def _vocabulary(rng: np.random.Generator) -> pa.Array:
    """VOCAB distinct lowercase words of 2-9 letters."""
    lens = rng.integers(2, 10, VOCAB * 2)
    letters = rng.integers(ord("a"), ord("z") + 1, (VOCAB * 2, 9), dtype=np.uint8)
    words = dict.fromkeys(row[:n].tobytes().decode() for row, n in zip(letters, lens))
    return pa.array(list(words)[:VOCAB], pa.string())


def _segments(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, position within its segment) of segments of these lengths laid end to end."""
    off = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=off[1:])
    return off, np.arange(off[-1]) - np.repeat(off[:-1], lengths)


def make_corpus(n: int, words: int, dup_rate: float, threshold: float, seed: int):
    """Token ids of n documents (flat int32 + int64 offsets), the vocabulary, and the planted families as
    (source, copy) pairs. Vectorized except the edits of each copy."""
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng)
    word = _zipf_sampler(rng, VOCAB, 1.1, 10.0)
    n_copies = int(n * dup_rate)
    n_base = n - n_copies

    lengths = rng.integers(words // 2, words * 3 // 2 + 1, n_base)
    off, _ = _segments(lengths)
    ids = word(int(off[-1]))
    # boilerplate: every document opens with a task header, ~30% of its words are shared phrases
    ph_len = rng.integers(6, 25, PHRASES + HEADERS)
    ph_off, _ = _segments(ph_len)
    ph_tok = word(int(ph_off[-1]))
    n_ins = rng.poisson(lengths * 0.3 / 15)
    ins_doc = np.r_[np.arange(n_base), np.repeat(np.arange(n_base), n_ins)]
    ins_ph = np.r_[PHRASES + _zipf_sampler(rng, HEADERS, 1.0, 1.0)(n_base),
                   _zipf_sampler(rng, PHRASES, 1.0, 2.0)(int(n_ins.sum()))]
    anywhere = (rng.random(int(n_ins.sum())) * np.repeat(lengths, n_ins)).astype(np.int64)
    ins_start = np.r_[np.zeros(n_base, np.int64), anywhere]
    span = np.minimum(ph_len[ins_ph], lengths[ins_doc] - ins_start)
    _, within = _segments(span)
    ids[np.repeat(off[ins_doc] + ins_start, span) + within] = ph_tok[np.repeat(ph_off[ins_ph], span) + within]

    # edited copies: the number of edits aims at a Jaccard (each isolated edit changes ~NGRAM shingles)
    source = rng.integers(0, n_base, n_copies)
    aim = np.where(rng.random(n_copies) < 0.5, rng.uniform(0.6, 0.95, n_copies),
                   np.clip(rng.normal(threshold, 0.03, n_copies), 0.6, 0.95))
    kept = 2 * aim / (1 + aim)  # share of the source's shingles a copy keeps, for equal sizes
    copies = []
    for src, k in zip(source.tolist(), kept.tolist()):
        doc = ids[off[src]: off[src + 1]]
        n_edits = max(1, round((1 - k) * max(len(doc) - NGRAM + 1, 1) / NGRAM))
        kind = rng.random(n_edits)
        pos = np.sort(rng.integers(0, len(doc), n_edits))
        doc = doc.copy()
        sub = kind < 0.7
        doc[pos[sub]] = word(int(sub.sum()))
        dele = pos[(kind >= 0.7) & (kind < 0.85)]
        ins = pos[kind >= 0.85]
        doc = np.insert(np.delete(doc, dele), np.searchsorted(np.setdiff1d(np.arange(len(doc)), dele), ins),
                        word(len(ins)))
        copies.append(doc)
    copy_len = np.array([len(c) for c in copies], np.int64)
    all_ids = np.concatenate([ids, *copies]) if copies else ids
    all_len = np.r_[lengths, copy_len]

    # shuffle so copies are spread over the set (and over batches)
    order = rng.permutation(n)  # new position of old document i is where[i]
    where = np.empty(n, np.int64)
    where[order] = np.arange(n)
    old_off, _ = _segments(all_len)
    new_len = all_len[order]
    new_off, within = _segments(new_len)
    flat = all_ids[np.repeat(old_off[order], new_len) + within]
    pairs = np.stack([where[source], where[n_base + np.arange(n_copies)]], axis=1)
    # copies of one source are a family: each pair of them too
    by_src = np.argsort(source, kind="stable")
    sib = []
    for lo, hi in zip(*_runs(source[by_src])):
        members = where[n_base + by_src[lo:hi]]
        sib += [(a, b) for i, a in enumerate(members.tolist()) for b in members[i + 1:].tolist()]
    if sib:
        pairs = np.concatenate([pairs, np.array(sib, np.int64)])
    return flat, new_off, vocab, np.sort(pairs, axis=1)


def _runs(values: np.ndarray):
    """(starts, ends) of runs of 2+ equal values in a sorted array."""
    if not len(values):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    ends = np.r_[starts[1:], len(values)]
    keep = ends - starts > 1
    return starts[keep], ends[keep]


def texts_of(flat: np.ndarray, off: np.ndarray, vocab: pa.Array, chunk: int = 100_000) -> pa.Array:
    out = []
    for lo in range(0, len(off) - 1, chunk):
        hi = min(lo + chunk, len(off) - 1)
        part_off = off[lo:hi + 1] - off[lo]
        tokens = vocab.take(pa.array(flat[off[lo]: off[hi]]))
        out.append(pc.binary_join(pa.LargeListArray.from_arrays(pa.array(part_off, pa.int64()), tokens), " ")
                   .cast(pa.large_string()))
    return pa.concat_arrays(out)


# --------------------------------------------------------------------------------------------- ground truth

def _shingle_set(text: str) -> set:
    import xxhash

    w = text.split()
    grams = [" ".join(g) for g in zip(*(w[i:] for i in range(NGRAM)))] or ([" ".join(w)] if w else [])
    return {xxhash.xxh3_64_intdigest(g.encode()) for g in grams}


def exact_jaccard(texts: pa.Array, keys: np.ndarray, n: int) -> np.ndarray:
    """Exact Jaccard of the shingle sets of each pair packed as u * n + v (sorted by u: u's set is reused)."""
    out = np.empty(len(keys), np.float64)
    last_u, su = -1, set()
    for i, (u, v) in enumerate(zip((keys // n).tolist(), (keys % n).tolist())):
        if u != last_u:
            su, last_u = _shingle_set(texts[u].as_py()), u
        sv = _shingle_set(texts[v].as_py())
        union = len(su | sv)
        out[i] = len(su & sv) / union if union else 1.0
    return out


def cluster_pairs(labels: np.ndarray, cap: int = 20_000_000) -> np.ndarray:
    """Packed pairs u * n + v (u < v) of documents sharing a label (None when more than `cap`)."""
    n = len(labels)
    order = np.argsort(labels, kind="stable")
    starts, ends = _runs(labels[order])
    sizes = ends - starts
    if int((sizes * (sizes - 1) // 2).sum()) > cap:
        return None
    keys = [np.array([order[a] * n + order[b] if order[a] < order[b] else order[b] * n + order[a]
                      for i, a in enumerate(range(lo, hi)) for b in range(a + 1, hi)], np.int64)
            for lo, hi in zip(starts.tolist(), ends.tolist())]
    return np.unique(np.concatenate(keys)) if keys else np.zeros(0, np.int64)


# ---------------------------------------------------------------------------------------------- contenders

def _load(path: str) -> pa.Array:
    """The texts, memory-mapped (no copy: the file is written as one record batch)."""
    with pa.memory_map(path) as source:
        column = ipc.open_file(source).read_all().column("text")
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _cpu(children: bool = False) -> float:
    """CPU seconds of this process (and of its finished children): less sensitive than the wall clock to
    what else runs on a shared machine."""
    who = [resource.RUSAGE_SELF] + ([resource.RUSAGE_CHILDREN] if children else [])
    return sum(resource.getrusage(w).ru_utime + resource.getrusage(w).ru_stime for w in who)


def child_ours(args) -> dict:
    from pipelines.stages.dedup import map_signatures
    from transforms.dedup import minhash

    texts = _load(args.data)
    # touch every page of the mapped text before the clock: it counts in "loaded", as the peers' copies do
    _ = np.frombuffer(texts.buffers()[2], np.uint8)[::4096].sum()
    params = minhash.MinHashParams(num_perm=NUM_PERM, ngram=NGRAM, threshold=args.threshold)
    if args.workers:
        import ray

        # a fresh local cluster of that many CPUs (never one a previous run left behind)
        ray.init(address="local", num_cpus=args.workers, include_dashboard=False, logging_level="ERROR",
                 log_to_driver=False)
        ray.get([ray.remote(lambda: None).remote() for _ in range(args.workers)])  # workers up before the clock
    loaded = own_peak_mb()
    cpu, started = _cpu(), time.perf_counter()
    sketches = map_signatures(texts, params, args.batch, executor="ray" if args.workers else "local")
    mapped = time.perf_counter() - started
    near = minhash.cluster_sketches(sketches, args.threshold)
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    peak = own_peak_mb()
    if args.workers:
        ray.shutdown()
    np.savez(args.out, u=near.u, v=near.v, labels=near.labels)
    est = {}
    if args.planted:
        planted = np.load(args.planted)
        docs = np.unique(planted)
        sig = minhash.signatures(texts.take(pa.array(docs)), params)
        est["estimate"] = minhash.similarity(sig, np.searchsorted(docs, planted[:, 0]),
                                             np.searchsorted(docs, planted[:, 1])).tolist()
    return {"seconds": seconds, "cpu": cpu, "mapped": mapped, "candidates": int(near.candidates), "loaded_mb": loaded,
            "peak_mb": peak, "bands": params.bands, "rows": params.rows, **est}


def _shingle_bytes(text: str) -> list[bytes]:
    w = text.split()
    return [" ".join(g).encode() for g in zip(*(w[i:] for i in range(NGRAM)))] or ([" ".join(w).encode()] if w else [])


def child_datasketch(args) -> dict:
    import xxhash
    from datasketch import MinHash, MinHashLSH

    texts = _load(args.data).to_pylist()
    hashfunc = None if args.datasketch_hash == "sha1" else xxhash.xxh32_intdigest
    kwargs = {"num_perm": NUM_PERM} if hashfunc is None else {"num_perm": NUM_PERM, "hashfunc": hashfunc}
    loaded = own_peak_mb()
    cpu, started = _cpu(), time.perf_counter()
    lsh = MinHashLSH(threshold=args.threshold, num_perm=NUM_PERM)
    found = []
    chunk = 10_000
    for lo in range(0, len(texts), chunk):
        hashes = MinHash.bulk([_shingle_bytes(t) for t in texts[lo:lo + chunk]], **kwargs)
        with lsh.insertion_session() as session:
            for i, m in enumerate(hashes, lo):
                session.insert(i, m, check_duplication=False)
        for i, m in enumerate(hashes, lo):  # pairs with every document inserted so far (this chunk included)
            found.extend(j * len(texts) + i for j in lsh.query(m) if j < i)
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    peak = own_peak_mb()
    keys = np.unique(np.array(found, np.int64))
    np.savez(args.out, u=keys // len(texts), v=keys % len(texts))
    est = {}
    if args.planted:
        planted = np.load(args.planted)
        ms = {d: MinHash.bulk([_shingle_bytes(texts[d])], **kwargs)[0] for d in np.unique(planted).tolist()}
        est["estimate"] = [ms[a].jaccard(ms[b]) for a, b in planted.tolist()]
    return {"seconds": seconds, "cpu": cpu, "loaded_mb": loaded, "peak_mb": peak, "bands": lsh.b, "rows": lsh.r,
            **est}


def child_datatrove(args) -> dict:
    import contextlib
    import io
    import struct

    import xxhash
    from datasketch.lsh import _optimal_param
    from datatrove.data import Document
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster,
                                                  MinhashDedupSignature)
    import datatrove.utils.hashes.xxhash as datatrove_xxhash
    from datatrove.utils.text import TextNormConfig
    from datatrove.utils.word_tokenizers import WordTokenizer

    # datatrove hands str to xxhash, which xxhash >= 4 refuses: encode first (the digest older xxhash gave)
    datatrove_xxhash.xxhash64 = lambda data: xxhash.xxh64_intdigest(data.encode() if isinstance(data, str) else data)
    datatrove_xxhash.xxhash32 = lambda data: xxhash.xxh32_intdigest(data.encode() if isinstance(data, str) else data)

    class Whitespace(WordTokenizer):
        def word_tokenize(self, text):
            return text.split()

        def sent_tokenize(self, text):
            return [text]

        def span_tokenize(self, text):
            return [(0, len(text))]

    texts = _load(args.data).to_pylist()
    bands, rows = _optimal_param(args.threshold, NUM_PERM, 0.5, 0.5)
    # its default normalization maps digits to 0 (our words have none): off, the rest as it is
    config = MinhashConfig(n_grams=NGRAM, num_buckets=bands, hashes_per_bucket=rows,
                           norm_config=TextNormConfig(norm_numbers=False))
    docs = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]  # its input: a list (a generator won't pickle)
    loaded = own_peak_mb()
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stderr(io.StringIO()):
        cpu, started = _cpu(children=True), time.perf_counter()
        for step in (
            [docs, MinhashDedupSignature(output_folder=f"{tmp}/sigs", config=config, language=Whitespace())],
            [MinhashDedupBuckets(input_folder=f"{tmp}/sigs", output_folder=f"{tmp}/buckets", config=config)],
            [MinhashDedupCluster(input_folder=f"{tmp}/buckets", output_folder=f"{tmp}/clusters", config=config,
                                 save_cluster_id=True)],
        ):
            tasks = config.num_buckets if isinstance(step[0], MinhashDedupBuckets) else 1
            LocalPipelineExecutor(pipeline=step, tasks=tasks, workers=1, logging_dir=f"{tmp}/logs/{time.time()}",
                                  skip_completed=False).run()
        seconds, cpu = time.perf_counter() - started, _cpu(children=True) - cpu
        labels = np.arange(len(texts))
        path = Path(tmp) / "clusters" / "000000.clusters"
        if path.exists():
            for doc, cluster_id in struct.iter_unpack("<II", path.read_bytes()):
                labels[doc] = -1 - cluster_id
    peak = own_peak_mb()
    np.savez(args.out, labels=labels)
    return {"seconds": seconds, "cpu": cpu, "loaded_mb": loaded, "peak_mb": peak, "bands": bands, "rows": rows}


CHILDREN = {"ours": child_ours, "datasketch": child_datasketch, "datatrove": child_datatrove}


def run_child(kind: str, data: str, out: str, args, workers: int = 0, planted: str = "") -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--data", data, "--out", out, "--threshold", str(args.threshold),
           "--batch", str(args.batch), "--workers", str(workers), "--datasketch-hash", args.datasketch_hash]
    if planted:
        cmd += ["--planted", planted]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        raise RuntimeError(f"{kind} failed ({proc.returncode}): {proc.stderr.strip().splitlines()[-1:] or ''}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------------- main

def score(pred: np.ndarray, truth: np.ndarray) -> tuple[float, float, float]:
    tp = int(np.isin(pred, truth).sum())
    p = tp / len(pred) if len(pred) else 1.0
    r = tp / len(truth) if len(truth) else 1.0
    return p, r, 2 * p * r / (p + r) if p + r else 0.0


def bench_size(n: int, args) -> None:
    t0 = time.perf_counter()
    flat, off, vocab, planted = make_corpus(n, args.words, args.dup_rate, args.threshold, args.seed)
    texts = texts_of(flat, off, vocab)
    del flat
    text_mb = pc.sum(pc.binary_length(texts)).as_py() / 2**20
    print(f"\n== {n:,} documents: ~{args.words} words each ({text_mb:,.0f} MB of text), {len(planted):,} planted "
          f"family pairs, threshold {args.threshold}, {os.cpu_count()} CPUs ({time.perf_counter() - t0:.0f} s to "
          f"generate)")
    with tempfile.TemporaryDirectory() as tmp:
        data = f"{tmp}/texts.arrow"
        with pa.OSFile(data, "wb") as sink, ipc.new_file(sink, pa.schema([("text", pa.large_string())])) as w:
            w.write_table(pa.table({"text": texts}))
        sample = planted[np.random.default_rng(1).permutation(len(planted))[:5_000]]
        np.save(f"{tmp}/planted.npy", sample)

        runs: dict[str, list[dict]] = {}
        contenders = [("ours (1 process)", "ours", 0, args.repeat)]
        contenders += [(f"ours (Ray x{w})", "ours", w, args.repeat) for w in args.ray_workers]
        if "datasketch" not in args.skip:
            contenders.append(("datasketch bulk + LSH", "datasketch", 0, args.peer_repeat))
        if "datatrove" not in args.skip:
            if n <= args.datatrove_max_docs:
                contenders.append(("datatrove MinHash", "datatrove", 0, args.peer_repeat))
            else:
                print(f"datatrove: skipped above --datatrove-max-docs {args.datatrove_max_docs:,} (about 3k docs/s "
                      f"on one task here)")
        for name, kind, workers, repeat in contenders:
            for i in range(repeat):
                out = f"{tmp}/{kind}{workers}-{i}.npz"
                try:
                    res = run_child(kind, data, out, args, workers, f"{tmp}/planted.npy" if i == 0 else "")
                except RuntimeError as e:
                    print(f"{name}: could not run: {e}")
                    break
                res["out"] = out
                runs.setdefault(name, []).append(res)
                print(f"  {name} run {i + 1}/{repeat}: {res['seconds']:.1f} s, peak {res['peak_mb']:,.0f} MB",
                      flush=True)

        # predicted pairs of each contender (first run), packed u * n + v
        pred = {}
        for name, rs in runs.items():
            z = np.load(rs[0]["out"])
            if "u" in z:
                u, v = z["u"].astype(np.int64), z["v"].astype(np.int64)
                pred[name] = np.unique(np.minimum(u, v) * n + np.maximum(u, v))
            else:
                pred[name] = cluster_pairs(z["labels"])
            if "labels" in z and name == "ours (1 process)":
                pred["ours, as clusters"] = cluster_pairs(z["labels"])
        planted_keys = np.unique(planted[:, 0] * n + planted[:, 1])
        t1 = time.perf_counter()
        checked = np.unique(np.concatenate([planted_keys, *(p for p in pred.values() if p is not None)]))
        exact = exact_jaccard(texts, checked, n)
        truth = checked[exact >= args.threshold]
        pj = exact[np.searchsorted(checked, planted_keys)]
        print(f"ground truth: {len(truth):,} pairs with exact Jaccard >= {args.threshold} among {len(checked):,} "
              f"checked in {time.perf_counter() - t1:.0f} s; planted pairs' Jaccard: "
              f"{(np.abs(pj - args.threshold) < 0.05).mean():.0%} within 0.05 of the threshold, "
              f"quartiles {np.quantile(pj, [0.25, 0.5, 0.75]).round(3).tolist()}")

        _print_results(runs, pred, truth, n, text_mb, texts, sample, args)


def _print_results(runs: dict, pred: dict, truth, n: int, text_mb: float, texts, sample, args) -> None:
    """The contenders' table (medians), ours' stage split, the Ray scaling and the Jaccard estimate errors."""
    ds = runs.get("datasketch bulk + LSH")
    ds_s = float(np.median([r["seconds"] for r in ds])) if ds else None
    print(f"\n{'contender':24s} {'runs':>4s} {'median s':>8s} {'cpu s':>6s} {'docs/s':>8s} {'x datasketch':>12s} "
          f"{'peak MB':>8s} {'x text':>6s} {'+MB':>6s} {'b x r':>6s} {'precision':>9s} {'recall':>6s} {'F1':>6s}")
    for name, rs in runs.items():
        s = float(np.median([r["seconds"] for r in rs]))
        # a Ray driver's CPU leaves out its workers': not shown
        cpu = f"{np.median([r['cpu'] for r in rs]):6.1f}" if "Ray" not in name else f"{'-':>6s}"
        peak = float(np.median([r["peak_mb"] for r in rs]))
        extra = float(np.median([r["peak_mb"] - r["loaded_mb"] for r in rs]))
        p, r, f1 = score(pred[name], truth) if pred[name] is not None else (float("nan"),) * 3
        ratio = f"{ds_s / s:12.1f}" if ds_s else f"{'':12s}"
        br = f"{rs[0]['bands']}x{rs[0]['rows']}"
        print(f"{name:24s} {len(rs):4d} {s:8.1f} {cpu} {n / s:8,.0f} {ratio} {peak:8,.0f} "
              f"{peak / text_mb:6.1f} {extra:6,.0f} {br:>6s} {p:9.3f} {r:6.3f} {f1:6.3f}")
    if "ours, as clusters" in pred and pred["ours, as clusters"] is not None:
        p, r, f1 = score(pred["ours, as clusters"], truth)
        print(f"{'  ours, every pair within its clusters':99s} {p:9.3f} {r:6.3f} {f1:6.3f}")
    ours = runs.get("ours (1 process)")
    if ours:
        mapped = np.median([r["mapped"] for r in ours])
        total = np.median([r["seconds"] for r in ours])
        print(f"ours: median {mapped:.1f} s per-batch stage (shingles, signatures, band keys), "
              f"{total - mapped:.1f} s driver (candidates: {ours[0]['candidates']:,}, exact verification, "
              f"components); input loaded {ours[0]['loaded_mb']:,.0f} MB, peak {ours[0]['peak_mb']:,.0f} MB")
    ray = {w: runs.get(f"ours (Ray x{w})") for w in args.ray_workers}
    if len(ray) > 1 and all(ray.values()):
        (w1, r1), (w2, r2) = sorted(ray.items())[0], sorted(ray.items())[-1]
        med = lambda rs, key: float(np.median([r[key] for r in rs]))  # noqa: E731
        print(f"Ray {w1} -> {w2} workers: end to end x{med(r1, 'seconds') / med(r2, 'seconds'):.2f}, "
              f"per-batch stage x{med(r1, 'mapped') / med(r2, 'mapped'):.2f} ({os.cpu_count()} CPUs here: "
              f"the workers, the driver and Ray's own processes share them)")
    est = {name: np.array(rs[0]["estimate"]) for name, rs in runs.items() if "estimate" in rs[0]}
    if est:
        sj = exact_jaccard(texts, sample[:, 0] * n + sample[:, 1], n)
        print(f"Jaccard estimate on {len(sample):,} planted pairs (estimate - exact):")
        for name, e in est.items():
            if name.startswith("ours (Ray"):
                continue
            print(f"  {name:24s} mean {np.mean(e - sj):+.4f}  mean |err| {np.mean(np.abs(e - sj)):.4f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, nargs="+", default=[200_000, 1_000_000], help="set sizes, one table each")
    ap.add_argument("--words", type=int, default=100, help="mean words per document")
    ap.add_argument("--dup-rate", type=float, default=0.1, help="share of documents that are edited copies")
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--ray-workers", type=int, nargs="*", default=[1, 2],
                    help="also run ours with the per-batch work on a local Ray with this many CPUs, each (none: skip)")
    ap.add_argument("--batch", type=int, default=20_000, help="documents per signature task on Ray")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each of ours")
    ap.add_argument("--peer-repeat", type=int, default=1, help="runs of each peer")
    ap.add_argument("--skip", nargs="*", default=[], choices=("datasketch", "datatrove"))
    ap.add_argument("--datatrove-max-docs", type=int, default=1_000_000)
    ap.add_argument("--datasketch-hash", default="xxh32", choices=("xxh32", "sha1"))
    ap.add_argument("--seed", type=int, default=0)
    # a contender's subprocess
    ap.add_argument("--child", choices=tuple(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--planted", default="", help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](args)))
        return 0
    for n in args.docs:
        bench_size(n, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
