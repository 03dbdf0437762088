"""Heavy readers against their own parse + write limit.

    .venv/bin/python bench/readers.py [--mb 20] [--repeats 3] [--formats playwright_trace har mcp_jsonrpc ...]

For each format, a corpus of about `--mb` MB made of its bundled samples copied into folders of their own (a
copy is an input of its own: its own episodes), or of copies of one generated file where the bundled samples are
too short to show what a long input costs (`bench/mcp_corpus.py`: an MCP JSON-RPC session of 20,000 calls
answered out of order, a call log of 20,000 lines), and, interleaved, `--repeats` times:
- limit: read every file, parse what is JSON (a `.json` / `.har` document, each line of a `.jsonl` / `.ndjson`
  / `.trace` / `.network` file, and the same inside a `.zip`), other files kept as bytes, and write it all as
  zstd Parquet rows (path, compact JSON or bytes) in 64 MB row groups: the floor any ingest of these files pays;
- ingest: `pipelines run` of that one format, ingest stage only, in-process (one core, like the limit).
Prints per format the medians (wall and CPU time) of both rates, their ratio and the machine's load (1-minute
average) beside them. DroidBot runs have their own benchmark with the work beyond the limit (`bench/ingest.py`),
whose limit runs the same loop (`bench.ingest.parse_and_write`) over their `.json` files alone, as strings.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench import mcp_corpus  # noqa: E402
from bench.ingest import parse_and_write, timed  # noqa: E402

SAMPLES = REPO / "samples"
# format -> its bundled samples (folders copied whole: a unit may be a folder)
CORPORA = {
    "playwright_trace": ["browser/playwright-trace", "browser/playwright-trace-versions"],
    "har": ["browser/har"],
    "agentnet_recording": ["macos/agentnet-raw-recording"],
    "atif": ["atif/harbor-claude-code", "atif/harbor-0.1.31-goldens"],
}
# format -> (file name, writer of one generated file)
GENERATED = {
    "mcp_jsonrpc": ("session.jsonl", mcp_corpus.jsonrpc_session),
    "mcp_audit_log": ("calls.jsonl", mcp_corpus.call_log),
}
_JSON_DOCS = (".json", ".har", ".stacks")
_JSON_LINES = (".jsonl", ".ndjson", ".trace", ".network")


def corpus(fmt: str, mb: float, out: Path) -> int:
    """Copies of the format's samples (or generated file) under `out` until about `mb` MB; returns the bytes
    written."""
    if fmt in GENERATED:
        return _generated_corpus(fmt, mb, out)
    one = sum(p.stat().st_size for s in CORPORA[fmt] for p in (SAMPLES / s).rglob("*")
              if p.is_file() and p.name != "PROVENANCE.md")
    copies = max(1, int(mb * 1e6 // one))
    for i in range(copies):
        for sample in CORPORA[fmt]:
            shutil.copytree(SAMPLES / sample, out / f"copy-{i:05d}" / sample.replace("/", "-"),
                            ignore=shutil.ignore_patterns("PROVENANCE.md"))
    return copies * one


def _generated_corpus(fmt: str, mb: float, out: Path) -> int:
    name, write = GENERATED[fmt]
    first = out / "copy-00000" / name
    first.parent.mkdir(parents=True)
    write(first)
    one = first.stat().st_size
    copies = max(1, int(mb * 1e6 // one))
    for i in range(1, copies):
        (out / f"copy-{i:05d}").mkdir()
        shutil.copyfile(first, out / f"copy-{i:05d}" / name)
    return copies * one


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
    from pipelines.infra import definition
    from pipelines.infra.runner import run_ingest

    defn = definition.load("ingest-all")
    defn.formats, defn.stages, defn.stage_options = [fmt], ["ingest"], {}
    shutil.rmtree(lake, ignore_errors=True)
    result = run_ingest(defn, str(lake), [str(root)], executor="local", progress=False, log=lambda line: None)
    assert result.status == "success" and result.steps, (fmt, result.status, result.messages[:3])


def bench_format(fmt: str, mb: float, repeats: int, scratch: Path) -> str:
    root = scratch / f"in-{fmt}"
    size = corpus(fmt, mb, root) / 1e6
    limit_once(root, scratch), ingest_once(fmt, root, scratch / "lake")  # warm-up: page cache, imports
    limits, ours, loads = [], [], []
    for _ in range(repeats):  # interleaved, so machine noise hits both alike
        limits.append(timed(limit_once, root, scratch))
        ours.append(timed(ingest_once, fmt, root, scratch / "lake"))
        loads.append(os.getloadavg()[0])
    shutil.rmtree(root)
    rates = []
    for k in (0, 1):
        limit_rate, our_rate = size / statistics.median(t[k] for t in limits), size / statistics.median(t[k] for t in ours)
        rates.append(f"limit {limit_rate:7.1f} MB/s  ingest {our_rate:6.1f} MB/s  ratio {our_rate / limit_rate:.2f}")
    return (f"{fmt:18s} {size:6.1f} MB   wall: {rates[0]}   CPU: {rates[1]}   "
            f"(load {statistics.median(loads):.2f} on {os.cpu_count()} CPUs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=20, help="corpus size per format in MB (default 20)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--formats", nargs="+", default=[*CORPORA, *GENERATED], choices=[*CORPORA, *GENERATED])
    parser.add_argument("--work", default=None, help="where corpora and lakes are written (a temporary folder)")
    args = parser.parse_args()
    print(f"heavy readers against their parse + write limit, medians of {args.repeats} interleaved repeats")
    with tempfile.TemporaryDirectory(dir=args.work) as scratch:
        for fmt in args.formats:
            print(bench_format(fmt, args.mb, args.repeats, Path(scratch)), flush=True)


if __name__ == "__main__":
    main()
