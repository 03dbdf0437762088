"""Near-duplicate detection, ours against datasketch (MinHash + MinHashLSH) and datatrove's MinHash pipeline,
in one run on the same synthetic documents with planted near-duplicates.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/dedup.py                      # 50k documents: a few minutes on 2 cores
    .venv/bin/python bench/dedup.py --docs 1000000 --ray-workers 1 2 4   # the target size

Documents are random word sequences (so unrelated documents share no 5-gram); a share of them get a copy
with a random fraction of words replaced, spreading the pairs' Jaccard over both sides of the threshold.
Ground truth is the exact Jaccard of 5-word shingle sets: a pair is a duplicate when it reaches the
threshold. Every pair any method reports is checked exactly, so an unplanted match counts too.
Printed per method: documents/s end to end, pair precision / recall / F1, and for ours and datasketch the
Jaccard-estimate error on the planted pairs; ours also on 1 and 2 Ray workers, with the speedup.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipelines.dedup import map_signatures  # noqa: E402
from pipelines.options import DedupOptions  # noqa: E402
from transforms.dedup import minhash  # noqa: E402

NGRAM = 5


def make_docs(n: int, words: int, dup_rate: float, seed: int) -> tuple[list[str], np.ndarray]:
    """n documents; the last ones are edited copies of earlier ones. Returns (texts, planted pairs (k, 2))."""
    rng = np.random.default_rng(seed)
    n_dups = int(n * dup_rate)
    n_base = n - n_dups
    lengths = rng.integers(words // 2, words * 3 // 2, n_base)
    vocab = 1_000_000
    base = [rng.integers(0, vocab, length) for length in lengths]
    sources = rng.choice(n_base, n_dups, replace=False)
    docs = list(base)
    for src in sources:
        doc = base[src].copy()
        edit = rng.random(len(doc)) < rng.uniform(0, 0.06)  # up to 6% of words replaced
        doc[edit] = rng.integers(vocab, 2 * vocab, int(edit.sum()))
        docs.append(doc)
    texts = [" ".join(f"w{w}" for w in doc.tolist()) for doc in docs]
    return texts, np.stack([sources, np.arange(n_base, n)], axis=1)


def shingles(text: str) -> set[str]:
    w = text.split()
    return {" ".join(w[i:i + NGRAM]) for i in range(len(w) - NGRAM + 1)} or ({" ".join(w)} if w else set())


def jaccard(a: str, b: str) -> float:
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 1.0


def cluster_pairs(labels: np.ndarray) -> set[tuple[int, int]]:
    groups: dict[int, list[int]] = {}
    for i, label in enumerate(labels.tolist()):
        groups.setdefault(label, []).append(i)
    return {(a, b) for members in groups.values() if len(members) > 1
            for i, a in enumerate(members) for b in members[i + 1:]}


def run_ours(texts, threshold, batch, workers=0):
    """Our dedup end to end (shingles, signatures, bands, candidates, exact verification, components).
    With `workers`, the per-batch work runs as Ray tasks on a local Ray with that many CPUs, started before
    the clock (a standing cluster) and stopped after."""
    params = minhash.MinHashParams(threshold=threshold)
    options = DedupOptions(threshold=threshold, batch_docs=batch, executor="ray" if workers else "local")
    if workers:
        import ray

        ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        ray.get([ray.remote(lambda: None).remote() for _ in range(workers)])  # workers up before the clock
    arr = pa.array(texts, pa.large_string())
    try:
        started = time.perf_counter()
        sketches = map_signatures(arr, params, options, log=lambda line: None, keep_signatures=True)
        mapped = time.perf_counter() - started
        near = minhash.cluster_sketches(sketches, threshold)
        seconds = time.perf_counter() - started
    finally:
        if workers:
            ray.shutdown()
    return seconds, mapped, cluster_pairs(near.labels), sketches.sig, near.candidates


def run_datasketch(texts, threshold):
    from datasketch import MinHash, MinHashLSH

    started = time.perf_counter()
    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    hashes = []
    for i, text in enumerate(texts):
        m = MinHash(num_perm=128)
        m.update_batch([s.encode() for s in shingles(text)])
        hashes.append(m)
        lsh.insert(i, m)
    pairs = set()
    for i, m in enumerate(hashes):
        for j in lsh.query(m):
            if j != i:
                pairs.add((min(i, j), max(i, j)))
    return time.perf_counter() - started, pairs, hashes


def run_datatrove(texts, threshold):
    """datatrove's four MinHash steps on one local worker (its defaults: 14 buckets x 8 hashes, 5-grams).
    `threshold` is implied by its bucket config, not passed."""
    import struct

    from datatrove.data import Document
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster,
                                                  MinhashDedupSignature)

    import datatrove.utils.hashes.xxhash as datatrove_xxhash
    import xxhash

    # datatrove hands str to xxhash, which xxhash >= 4 refuses: encode first (the digest older xxhash gave)
    datatrove_xxhash.xxhash64 = lambda data: xxhash.xxh64_intdigest(data.encode() if isinstance(data, str) else data)
    datatrove_xxhash.xxhash32 = lambda data: xxhash.xxh32_intdigest(data.encode() if isinstance(data, str) else data)
    from datatrove.utils.text import TextNormConfig

    # its default text normalization maps every digit to 0, which would make all of our "w<number>" words one
    config = MinhashConfig(n_grams=NGRAM, norm_config=TextNormConfig(norm_numbers=False))
    # its per-task logs and progress bars go to stderr: keep them out of the table
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stderr(io.StringIO()):
        docs = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]
        started = time.perf_counter()
        for step in (
            [docs, MinhashDedupSignature(output_folder=f"{tmp}/sigs", config=config)],
            [MinhashDedupBuckets(input_folder=f"{tmp}/sigs", output_folder=f"{tmp}/buckets", config=config)],
            [MinhashDedupCluster(input_folder=f"{tmp}/buckets", output_folder=f"{tmp}/clusters", config=config,
                                 save_cluster_id=True)],
        ):
            tasks = config.num_buckets if isinstance(step[0], MinhashDedupBuckets) else 1
            LocalPipelineExecutor(pipeline=step, tasks=tasks, workers=1, logging_dir=f"{tmp}/logs/{time.time()}",
                                  skip_completed=False).run()
        seconds = time.perf_counter() - started
        labels = np.arange(len(texts))
        path = Path(tmp) / "clusters" / "000000.clusters"
        if path.exists():
            raw = path.read_bytes()
            for doc, cluster_id in struct.iter_unpack("<II", raw):
                labels[doc] = -1 - cluster_id
    return seconds, cluster_pairs(labels)


def score(pred: set, truth: set) -> tuple[float, float, float]:
    tp = len(pred & truth)
    p = tp / len(pred) if pred else 1.0
    r = tp / len(truth) if truth else 1.0
    return p, r, 2 * p * r / (p + r) if p + r else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=50_000, help="documents (the target is 1000000)")
    ap.add_argument("--words", type=int, default=100, help="mean words per document")
    ap.add_argument("--dup-rate", type=float, default=0.1, help="share of documents that are edited copies")
    ap.add_argument("--threshold", type=float, default=DedupOptions.threshold)
    ap.add_argument("--ray-workers", type=int, nargs="*", default=[1, 2],
                    help="also run ours with the per-batch work on this many Ray workers, each (none: skip)")
    ap.add_argument("--batch", type=int, default=5_000, help="documents per signature task")
    ap.add_argument("--skip", nargs="*", default=[], choices=("datasketch", "datatrove"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    t0 = time.perf_counter()
    texts, planted = make_docs(args.docs, args.words, args.dup_rate, args.seed)
    print(f"{len(texts):,} documents, {len(planted):,} planted near-duplicate pairs, ~{args.words} words each, "
          f"threshold {args.threshold}, {os.cpu_count()} CPUs ({time.perf_counter() - t0:.1f} s to generate)")

    results = {}
    seconds, mapped, pairs, sig, candidates = run_ours(texts, args.threshold, args.batch)
    results["ours (1 process)"] = (seconds, pairs)
    print(f"ours: {mapped:.1f} s shingles + signatures + bands, {seconds - mapped:.1f} s candidates "
          f"({candidates:,}), exact verification and components")
    ray_seconds = {}
    for workers in args.ray_workers:
        seconds, mapped, pairs, _, _ = run_ours(texts, args.threshold, args.batch, workers)
        results[f"ours (Ray x{workers})"] = (seconds, pairs)
        ray_seconds[workers] = (seconds, mapped)
    ds_hashes = None
    if "datasketch" not in args.skip:
        seconds, pairs, ds_hashes = run_datasketch(texts, args.threshold)
        results["datasketch MinHashLSH"] = (seconds, pairs)
    if "datatrove" not in args.skip:
        try:
            seconds, pairs = run_datatrove(texts, args.threshold)
            results["datatrove MinHash (1 task)"] = (seconds, pairs)
        except Exception as e:  # reported, not fatal: it is a peer, not ours
            hint = " (pip install spacy: its word tokenizer)" if isinstance(e, ImportError) else ""
            print(f"datatrove: could not run: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}{hint}")

    # ground truth: exact Jaccard of every planted pair and every pair any method reported
    candidates = {tuple(p) for p in planted.tolist()} | set().union(*(p for _, p in results.values()))
    exact = {pair: jaccard(texts[pair[0]], texts[pair[1]]) for pair in candidates}
    truth = {pair for pair, j in exact.items() if j >= args.threshold}
    print(f"ground truth: {len(truth):,} pairs with exact Jaccard >= {args.threshold} "
          f"({len(candidates):,} pairs checked exactly)\n")
    print(f"{'method':30s} {'seconds':>8s} {'docs/s':>10s} {'x datasketch':>12s} {'precision':>9s} {'recall':>7s} "
          f"{'F1':>6s}")
    ds = results.get("datasketch MinHashLSH")
    for name, (seconds, pairs) in results.items():
        p, r, f1 = score(pairs, truth)
        rate = len(texts) / seconds
        ratio = f"{ds[0] / seconds:12.1f}" if ds else f"{'':12s}"
        print(f"{name:30s} {seconds:8.1f} {rate:10,.0f} {ratio} {p:9.3f} {r:7.3f} {f1:6.3f}")

    if len(ray_seconds) > 1:
        (w1, (s1, m1)), (w2, (s2, m2)) = sorted(ray_seconds.items())[0], sorted(ray_seconds.items())[-1]
        print(f"\nRay {w1} -> {w2} workers: end to end x{s1 / s2:.2f}, per-batch stage (shingles, signatures, "
              f"bands) x{m1 / m2:.2f} ({os.cpu_count()} CPUs on this machine)")

    planted_pairs = [tuple(p) for p in planted.tolist()]
    true_j = np.array([exact[p] for p in planted_pairs])
    ours_est = minhash.similarity(sig, planted[:, 0], planted[:, 1])
    print(f"\nJaccard estimate on {len(planted_pairs):,} planted pairs (estimate - exact):")
    print(f"  ours        mean {np.mean(ours_est - true_j):+.4f}  mean |err| {np.mean(np.abs(ours_est - true_j)):.4f}")
    if ds_hashes is not None:
        ds_est = np.array([ds_hashes[a].jaccard(ds_hashes[b]) for a, b in planted_pairs])
        print(f"  datasketch  mean {np.mean(ds_est - true_j):+.4f}  mean |err| {np.mean(np.abs(ds_est - true_j)):.4f}")
        print(f"  ours - datasketch: mean {np.mean(ours_est - ds_est):+.4f} "
              f"(difference of mean |err| {np.mean(np.abs(ours_est - true_j)) - np.mean(np.abs(ds_est - true_j)):+.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
