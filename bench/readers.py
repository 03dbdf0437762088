"""Heavy readers against their own parse + write limit.

    .venv/bin/python bench/readers.py [--mb 20] [--repeats 3] [--compare] [--formats har claude_code codex kea ...]

For each line, a corpus of about `--mb` MB: its bundled samples copied into folders of their own (a copy is an
input of its own: its own episodes; Playwright traces, AgentNet recordings), a real Kea run in
../shared/samples copied the same way, each copy's screenshots made its own bytes (`kea`, read by `droidbot`;
skipped where that sample is absent), or
generated files, each written from its own seed so that no two are alike, where the bundled samples are too short
to show what a real input costs or repeated copies would let what a reader does once per distinct text flatter it:
HAR captures of a browser session (`bench/har_corpus.py`: 2-4 pages of 20-60 subresources with their bodies, 2-6
MB each), Claude Code sessions and Codex rollouts of 150-250 tool-calling turns and Harbor trials whose ATIF
trajectory holds a Terminus 2 run of 100-200 turns (`bench/transcript_corpus.py`, 0.5-2 MB each), an MCP
JSON-RPC session of 20,000 calls answered out of order and a call log of 20,000 lines (`bench/mcp_corpus.py`),
and, interleaved, `--repeats` times, each in a Python process of its own (`bench/fresh.py`):
- limit: read every file, parse what is JSON (a `.json` / `.har` document, each line of a `.jsonl` / `.ndjson`
  / `.trace` / `.network` file, and the same inside a `.zip`), other files kept as bytes, and write it all as
  zstd Parquet rows (path, compact JSON or bytes) in 64 MB row groups: the floor any ingest of these files pays;
- ingest: `pipelines run` of that one format, ingest stage only, with the in-process executor (one core, like
  the limit).
Both are measured the same way: a first run of each fills the page cache and finds what it imports; then every
repeat of each side runs in a fresh process that imports those modules before its clock starts (imports out of
both sides; other first-call costs in both) and times one call in CPU time (all the process's threads) and wall
time. Timed in one process, one after the other, each side paid or saved for what the other left in the
allocators (an ingest after a limit ran up to 10 % cheaper on the memory the limit left mapped; a limit costs 0.17
or 0.30 CPU s on the MCP call log as its freed buffers stayed mapped or not); `--compare` also times each repeat
that way and prints both ratios. Prints per format the medians (wall and CPU time) of both rates, their ratio and the machine's load
(1-minute average) beside them. DroidBot runs have their own benchmark with the work beyond the limit
(`bench/ingest.py`), whose limit runs the same loop (`bench.ingest.parse_and_write`) over their `.json` files
alone, as strings, measured the same way.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import struct
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench import fresh, har_corpus, mcp_corpus, transcript_corpus  # noqa: E402
from bench.ingest import parse_and_write  # noqa: E402

SAMPLES = REPO / "samples"
SHARED_SAMPLES = REPO.parent / "shared" / "samples"
# format -> its bundled samples (folders copied whole: a unit may be a folder)
CORPORA = {
    "playwright_trace": ["browser/playwright-trace", "browser/playwright-trace-versions"],
    "agentnet_recording": ["macos/agentnet-raw-recording"],
}
# bench line -> a real run in ../shared/samples (read where it lies when present; not bundled)
SHARED = {"kea": "android/kea-llm-myexpenses"}
# bench line -> (file name, writer of one generated file from a seed): each copy is written from its own seed
GENERATED = {
    "har": ("capture.har", har_corpus.har_session),
    "atif": ("trial", transcript_corpus.harbor_trial),  # a folder
    "claude_code": ("session.jsonl", transcript_corpus.claude_code_session),
    "codex": ("rollout-2025-11-22T21-45-35-019aad50-a7e6-7422-b7a8-0b384290624f.jsonl",
              transcript_corpus.codex_rollout),
    "mcp_jsonrpc": ("session.jsonl", mcp_corpus.jsonrpc_session),
    "mcp_audit_log": ("calls.jsonl", mcp_corpus.call_log),
}
# bench line -> the format it runs, where they differ (Kea's output folders are DroidBot's)
FORMAT_OF = {"kea": "droidbot"}
_JSON_DOCS = (".json", ".har", ".stacks")
_JSON_LINES = (".jsonl", ".ndjson", ".trace", ".network")


def corpus(fmt: str, mb: float, out: Path) -> int:
    """Copies of the format's samples (or generated file) under `out` until about `mb` MB; returns the bytes
    written."""
    if fmt in GENERATED:
        return _generated_corpus(fmt, mb, out)
    samples = [SHARED_SAMPLES / SHARED[fmt]] if fmt in SHARED else [SAMPLES / s for s in CORPORA[fmt]]
    one = sum(p.stat().st_size for s in samples for p in s.rglob("*") if p.is_file() and p.name != "PROVENANCE.md")
    copies = max(1, int(mb * 1e6 // one))
    for i in range(copies):
        for sample in samples:
            copy = out / f"copy-{i:05d}" / sample.name
            shutil.copytree(sample, copy, ignore=shutil.ignore_patterns("PROVENANCE.md"))
            if fmt in SHARED:
                _own_screenshots(copy, i)
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


def _own_screenshots(copy: Path, i: int) -> None:
    """Each copy's PNG screenshots made its own: a `tEXt` chunk naming the copy after the header (the same
    picture, other bytes; a screen saved twice in one run stays one image). Other runs' screens are other
    images, and byte-identical ones in every copy flatter both sides: the blob store writes a distinct image
    once per task, and the limit's Parquet writer dictionary-encodes its column, so it stored and compressed
    each image once (on five copies of the Kea run: a 2.0 MB file for 16.2 MB of screenshots, in a quarter of
    the time of the same images made distinct; the limit took 32 ms instead of 54, ingest 118 instead of
    127)."""
    for png in copy.rglob("*.png"):
        data = png.read_bytes()
        if data[12:16] != b"IHDR":
            continue
        text = b"tEXt" + b"Comment\0bench copy " + str(i).encode()
        chunk = struct.pack(">I", len(text) - 4) + text + struct.pack(">I", zlib.crc32(text))
        png.write_bytes(data[:33] + chunk + data[33:])


def _generated_corpus(fmt: str, mb: float, out: Path) -> int:
    """Generated files, each from its own seed, until about `mb` MB (at least one)."""
    name, write = GENERATED[fmt]
    size, seed = 0, 0
    while size < mb * 1e6 or not seed:
        path = out / f"copy-{seed:05d}" / name
        path.parent.mkdir(parents=True)
        write(path, seed=seed)
        size += sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size
        seed += 1
    return size


def available(fmt: str) -> bool:
    """Whether the line's corpus can be made here (a ../shared sample may be absent)."""
    return fmt not in SHARED or (SHARED_SAMPLES / SHARED[fmt]).is_dir()


def _docs(name: str, data: bytes):
    """What the limit keeps of one file: its JSON values, compact (a document, or one a line), else its bytes."""
    import orjson

    lower = name.lower()
    if lower.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.namelist():
                yield from _docs(member, archive.read(member))
    elif lower.endswith(_JSON_DOCS):
        yield orjson.dumps(orjson.loads(data))
    elif lower.endswith(_JSON_LINES):
        for line in data.splitlines():
            if line.strip():
                yield orjson.dumps(orjson.loads(line))
    else:
        yield data


def limit_once(root: Path, out: Path, batch_mb: float = 64) -> None:
    """Read, parse and write every file of `root` as zstd Parquet rows (see the module's docstring)."""
    import pyarrow as pa

    def docs(name: str, path: str):
        with open(path, "rb") as f:
            yield from _docs(name, f.read())

    parse_and_write(root, out / "limit.parquet", docs, pa.binary(), batch_mb)


def ingest_once(fmt: str, root: Path, lake: Path) -> None:
    """`pipelines run` of the line's format into `lake`, which must not exist (deleting the last repeat's lake,
    its blob folders among them, is no part of what ingest costs: the bench does it before the clock starts)."""
    from pipelines.infra import definition
    from pipelines.infra.runner import run_ingest

    defn = definition.load("ingest-all")
    defn.formats, defn.stages, defn.stage_options = [FORMAT_OF.get(fmt, fmt)], ["ingest"], {}
    result = run_ingest(defn, str(lake), [str(root)], executor="local", progress=False, log=lambda line: None)
    assert result.status == "success" and result.steps, (fmt, result.status, result.messages[:3])


def bench_format(fmt: str, mb: float, repeats: int, scratch: Path, compare: bool = False) -> str:
    root = scratch / f"in-{fmt}"
    size = corpus(fmt, mb, root) / 1e6
    lake = scratch / "lake"
    limit = fresh.call("bench.readers:limit_once", root, scratch)
    ingest = fresh.call("bench.readers:ingest_once", fmt, root, lake, clear=(lake,))
    runs = fresh.measure(limit, ingest, repeats, compare)
    shutil.rmtree(root)
    return f"{fmt:18s} {size:6.1f} MB   " + fresh.rates(size, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=20, help="corpus size per format in MB (default 20)")
    parser.add_argument("--repeats", type=int, default=3)
    lines = [*CORPORA, *SHARED, *GENERATED]
    parser.add_argument("--formats", nargs="+", default=lines, choices=lines)
    parser.add_argument("--work", default=None, help="where corpora and lakes are written (a temporary folder)")
    parser.add_argument("--compare", action="store_true",
                        help="also time each repeat as a bench in one process did (limit after ingest...)")
    args = parser.parse_args()
    print(f"heavy readers against their parse + write limit, medians of {args.repeats} interleaved repeats,"
          " each in a process of its own")
    with tempfile.TemporaryDirectory(dir=args.work) as scratch:
        for fmt in args.formats:
            if not available(fmt):
                print(f"{fmt:18s} skipped: its corpus, ../shared/samples/{SHARED[fmt]}, is not here", flush=True)
                continue
            print(bench_format(fmt, args.mb, args.repeats, Path(scratch), args.compare), flush=True)


if __name__ == "__main__":
    main()
