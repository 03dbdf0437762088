"""Peak memory and speed of ingesting one big record, per whole-document JSON format.

    .venv/bin/python bench/big_record.py [--mb 20 50] [--only har]

For each case it writes one input holding a record of MB megabytes (a HAR response body, a HAR request body,
a HAR of many ordinary entries, an ATIF step message, an OpenHands event, an AgentWorldBench line, a CDP
request body), runs pipeline ingest-all over it (the ingest stage; `--validate`: with validate) in a fresh process and prints that process's peak
RSS (ru_maxrss of it and its children), the same for the bundled sample of that format (the idle cost:
interpreter, pyarrow, duckdb), the difference as a multiple of the record's size, and input MB/s. The goal is
a difference of at most 10x the record.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
MB = 1_000_000

_PARAGRAPH = ("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut "
              "labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation %08d.</p>\n")


def text_of(size: int) -> str:
    """About `size` characters of HTML-like text (numbered paragraphs: not one repeated byte)."""
    n = size // len(_PARAGRAPH % 0) + 1
    return "".join(_PARAGRAPH % i for i in range(n))[:size]


def _load(rel: str):
    return json.loads((SAMPLES / rel).read_text())


def har_body(size: int) -> tuple[str, bytes]:
    doc = _load("browser/har/har-sha1.har")
    content = doc["log"]["entries"][0]["response"]["content"]
    content.update(text=text_of(size), mimeType="text/html", size=size)
    return "big.har", json.dumps(doc).encode()


def har_post(size: int) -> tuple[str, bytes]:
    doc = _load("browser/har/har-sha1.har")
    doc["log"]["entries"][0]["request"]["postData"] = {"mimeType": "text/plain", "text": text_of(size)}
    return "post.har", json.dumps(doc).encode()


def har_many(size: int) -> tuple[str, bytes]:
    """Ordinary entries (a 4 KB body each) up to `size` bytes."""
    doc = _load("browser/har/har-redirect.har")
    template = doc["log"]["entries"][0]
    template["response"]["content"].update(text=text_of(4000), mimeType="text/html")
    one = len(json.dumps(template))
    entries = []
    for i in range(max(1, size // one)):
        entry = copy.deepcopy(template)
        entry["request"]["url"] = f"http://example.test/page/{i}"
        entries.append(entry)
    doc["log"]["entries"] = entries
    return "many.har", json.dumps(doc).encode()


def atif_step(size: int) -> tuple[str, bytes]:
    doc = _load("atif/hello-world/trajectory.json")
    doc["steps"][2]["message"] = text_of(size)
    return "trajectory.json", json.dumps(doc).encode()


def openhands_event(size: int) -> tuple[str, bytes]:
    events = _load("swe/openhands-events/basic_interactions.json")
    events[1]["message"] = events[1]["args"]["content"] = text_of(size // 2)
    return "big_events.json", json.dumps(events).encode()


def agentworld_line(size: int) -> tuple[str, bytes]:
    lines = (SAMPLES / "agentworld/bench/terminal_test.jsonl").read_text().splitlines()
    big = json.loads(lines[-1])  # a sample of its own, last: the format is sniffed from the first line's keys
    big["id"], big["response"][0] = 1, text_of(size)
    return "big_test.jsonl", "\n".join([*lines, json.dumps(big)]).encode() + b"\n"


def cdp_post(size: int) -> tuple[str, bytes]:
    messages = _load("browser/cdp-devtoolslog/redirects-from-script.devtoolslog.json")
    sent = next(m for m in messages if m["method"] == "Network.requestWillBeSent")
    sent["params"]["request"]["postData"] = text_of(size)
    return "big.devtoolslog.json", json.dumps(messages).encode()


CASES: dict[str, tuple[Callable[[int], tuple[str, bytes]], str]] = {
    "har body": (har_body, "browser/har/har-sha1.har"),
    "har request body": (har_post, "browser/har/har-sha1.har"),
    "har many entries": (har_many, "browser/har/har-redirect.har"),
    "atif step": (atif_step, "atif/hello-world/trajectory.json"),
    "openhands event": (openhands_event, "swe/openhands-events/basic_interactions.json"),
    "agentworldbench line": (agentworld_line, "agentworld/bench/terminal_test.jsonl"),
    "cdp request body": (cdp_post, "browser/cdp-devtoolslog/redirects-from-script.devtoolslog.json"),
}

_CHILD = """
import dataclasses, resource, sys, time
from pipelines.infra import definition
from pipelines.infra.runner import run_ingest
defn = definition.load('ingest-all')
if %(ingest_only)r:
    defn = dataclasses.replace(defn, stages=['ingest'])
started = time.perf_counter()
r = run_ingest(defn, %(lake)r, [%(path)r], executor='local', progress=False, log=lambda line: None)
seconds = time.perf_counter() - started
from bench.peak import tree_peak_mb
peak = int(tree_peak_mb() * 1024)
sys.stderr.write('PEAK %%d %%f %%s steps %%d quarantined %%d\\n' %% (peak, seconds, r.status, r.steps, r.quarantined))
for m in r.messages[:5]:
    sys.stderr.write('MSG ' + m[:300] + '\\n')
"""


def ingest_peak(path: Path, lake: Path, ingest_only: bool = True) -> tuple[float, float, str]:
    """(peak RSS MB, seconds of the run, what it said) of ingest-all over PATH in a fresh process (the ingest
    stage alone unless `ingest_only` is false)."""
    code = _CHILD % {"ingest_only": ingest_only, "lake": str(lake), "path": str(path)}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    line = next((ln for ln in done.stderr.splitlines() if ln.startswith("PEAK ")), None)
    if line is None:
        raise RuntimeError(f"{path.name}: ingest failed: {done.stderr[-2000:]}")
    _, kib, seconds, *said = line.split()
    notes = [ln[4:] for ln in done.stderr.splitlines() if ln.startswith("MSG ")]
    return int(kib) / 1024, float(seconds), " ".join(said) + ("; " + notes[0] if notes else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, nargs="+", default=[20, 50], help="record sizes in MB")
    ap.add_argument("--only", help="cases whose name contains this text")
    ap.add_argument("--validate", action="store_true", help="run the validate stage too (default: ingest only)")
    args = ap.parse_args()
    print(f"{'case':22s} {'record':>8s} {'file':>8s} {'peak':>8s} {'idle':>7s} {'extra':>8s} {'x rec':>6s} "
          f"{'MB/s':>6s}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (build, sample) in CASES.items():
            if args.only and args.only not in name:
                continue
            idle, _, _ = ingest_peak(SAMPLES / sample, Path(tmp, f"idle-{time.monotonic_ns()}"), not args.validate)
            for mb in args.mb:
                size = int(mb * MB)
                filename, data = build(size)
                folder = Path(tmp, f"in-{time.monotonic_ns()}")
                folder.mkdir()
                path = folder / filename
                path.write_bytes(data)
                del data
                peak, seconds, said = ingest_peak(path, Path(tmp, f"lake-{time.monotonic_ns()}"), not args.validate)
                extra = peak - idle
                file_mb = path.stat().st_size / MB
                print(f"{name:22s} {mb:6g}MB {file_mb:6.1f}MB {peak:6.0f}MB {idle:5.0f}MB {extra:6.0f}MB "
                      f"{extra * (1 << 20) / size:6.1f} {file_mb / seconds:6.1f}  {said[:100]}", flush=True)
                path.unlink()


if __name__ == "__main__":
    main()
