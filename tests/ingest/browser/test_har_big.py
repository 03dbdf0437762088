"""Big HAR documents: an entry over the `record_bytes` budget is quarantined alone, naming the file, the entry
and the variable that raises the budget; a file over the budget is streamed one entry at a time with the same
result as a whole parse; a document cut short keeps the entries before the damage; and the memory a big
record costs stays within 10x its size (measured in a fresh process)."""

import json
import os
import subprocess
import sys

import fsspec
import pytest

import ingest.source
from ingest.browser import har
from ingest.record import Episode, Rejected
from ingest.source import Budgets, Source
from tests.conftest import REPO, SAMPLES

HAR = SAMPLES / "browser" / "har"


def _har_with(tmp_path, name: str, edit) -> str:
    doc = json.loads((HAR / "har-redirect.har").read_text())
    edit(doc["log"]["entries"])
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def _read(path: str, budgets: Budgets) -> list:
    source = Source(fs=fsspec.filesystem("file"), path=path, uri=os.path.basename(path),
                    put_blob=lambda data, media, uri: f"sha256:{len(data)}", budgets=budgets)
    return list(har.read(source)), source.sha256()


def test_an_entry_over_the_record_budget_is_quarantined_alone_naming_file_entry_and_variable(
        run, query, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest.source, "_DEFAULT", [Budgets(record_bytes=1 << 20)])
    body = "<p>page</p>" * 200_000  # 2.2 MB: over a 1 MiB budget
    path = _har_with(tmp_path, "big.har", lambda entries: entries[1]["response"]["content"].update(text=body))
    result = run("ingest-browser", [path], stages=["ingest"])
    assert result.status == "success" and result.steps == 2 and result.quarantined == 1
    rows = query("SELECT rule, reason, record_id FROM quarantine")
    assert rows == [{"rule": "budget_exceeded", "record_id": "1",
                     "reason": "big.har: log.entries[1]: the entry is not decoded: over the record_bytes budget of "
                               "1 MiB (raise it with TRAJFORGE_BUDGET_RECORD_BYTES=<larger>)"}]
    urls = [json.loads(r["a"])["url"] for r in query("SELECT action.arguments AS a FROM steps ORDER BY step_index")]
    assert urls == ["https://theverge.com/", "https://www.theverge.com/"]  # the entries either side are kept


def test_a_file_over_the_budget_is_streamed_with_the_steps_a_whole_parse_gives(tmp_path):
    path = tmp_path / "bom.har"  # with a byte order mark, which the streamed reader drops as the whole one does
    path.write_bytes(b"\xef\xbb\xbf" + (HAR / "har-redirect.har").read_bytes())
    whole, whole_digest = _read(str(path), Budgets())
    streamed, streamed_digest = _read(str(path), Budgets(record_bytes=8 << 10))  # the file is 18 KB
    assert [type(x) for x in whole] == [Episode] and [type(x) for x in streamed] == [Episode]
    assert streamed[0].steps == whole[0].steps and streamed[0].env == whole[0].env
    assert streamed[0].final_observation == whole[0].final_observation
    assert streamed_digest == whole_digest  # the unit's identity does not depend on how it was read


@pytest.mark.parametrize("budget", [Budgets(), Budgets(record_bytes=8 << 10)], ids=["whole", "streamed"])
def test_a_document_cut_short_keeps_the_entries_before_the_damage(tmp_path, budget):
    data = (HAR / "har-redirect.har").read_bytes()
    cut = data.index(b'"2022-06-16T21:41:24.050Z"')  # inside the third entry
    path = tmp_path / "cut.har"
    path.write_bytes(data[:cut])
    items, _ = _read(str(path), budget)
    rows = [x for x in items if isinstance(x, Rejected)]
    episodes = [x for x in items if isinstance(x, Episode)]
    assert [len(e.steps) for e in episodes] == [2]
    assert len(rows) == 1 and rows[0].rule == "parse_error" and rows[0].record_id == "2"
    assert rows[0].reason.startswith("cut.har: invalid JSON after log.entries[1] (what follows it is lost)")


def test_request_bodies_over_the_inline_size_go_to_the_blob_store_once(run, query, tmp_path):
    upload = "a=1&" * 10_000
    path = _har_with(tmp_path, "post.har", lambda entries: entries[0]["request"].update(
        method="POST", postData={"mimeType": "application/x-www-form-urlencoded", "text": upload}))
    run("ingest-browser", [path], stages=["ingest"])
    step = query("SELECT action FROM steps ORDER BY step_index")[0]["action"]
    arguments, raw = json.loads(step["arguments"]), json.loads(step["raw"])
    ref = arguments["body_blob"]
    assert arguments["body"] == f"[body: 40000 bytes application/x-www-form-urlencoded {ref}]"
    assert "text" not in raw["request"]["postData"] and upload not in step["raw"]
    assert query(f"SELECT size_bytes FROM blobs WHERE sha256 = '{ref[7:]}'") == [{"size_bytes": 40_000}]


_PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""
_INGEST = """
import dataclasses, sys
from pipelines.infra import definition
from pipelines.infra.runner import run_ingest
defn = dataclasses.replace(definition.load("ingest-browser"), stages=["ingest"])
r = run_ingest(defn, sys.argv[1], [sys.argv[2]], executor="local", progress=False, log=lambda line: None)
assert r.status == "success" and r.steps and not r.quarantined, r
"""


def _peak_mib(path: str, lake: str) -> float:
    """Peak RSS of an ingest of `path` in a fresh process (RUSAGE_CHILDREN of a wrapper that runs only it)."""
    out = subprocess.run([sys.executable, "-c", _PEAK, sys.executable, "-c", _INGEST, lake, path], cwd=REPO,
                         check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    return int(out.stdout.split()[-1]) / 1024


@pytest.mark.parametrize("where", ["response", "request"])
def test_a_20_mb_record_costs_at_most_10x_its_size(tmp_path, where):
    """Peak memory over an ingest of a small HAR: at most 10x the big record (a request body was held four
    times, as the step's arguments and raw and their Arrow and Parquet copies: 12x)."""
    size = 20 << 20
    body = ("<p>%08d</p>\n" * (size // 16)) % tuple(range(size // 16))

    def grow(entries):
        if where == "response":
            entries[0]["response"]["content"].update(text=body, mimeType="text/html")
        else:
            entries[0]["request"]["postData"] = {"mimeType": "text/plain", "text": body}

    big = _har_with(tmp_path, "big.har", grow)
    idle = _peak_mib(str(HAR / "har-redirect.har"), str(tmp_path / "lake-idle"))
    peak = _peak_mib(big, str(tmp_path / "lake-big"))
    assert peak - idle <= 10 * size / (1 << 20), (peak, idle)
