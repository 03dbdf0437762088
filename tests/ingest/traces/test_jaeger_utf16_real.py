"""A real Jaeger trace saved as UTF-16 (Windows PowerShell's `>` of the query API's answer, byte-order mark
FF FE): DoTrungDuc1908/Day23-Track2-Observability-Lab @ af465922b90f98c10c6988ab3ccc5906a497dc76,
`single_trace.json` (3,272 bytes; no license, so it lies in ../shared/samples/traces/jaeger/day23-utf16/, never in
the repository). What a person counts in it: one trace `8c72645033aa8810f2b2fa49235ca09b` of one span, `predict`
of the service `inference-api`, with `gen_ai.request.model` = `llama3-mock` and nothing else of an agent: no
messages, no tool call (0 tool calls), no agent span. It is read as its UTF-8 form is: the trace reader claims it
and says in a row that its one trace holds no agent's span, instead of the file being left unread."""

import json
from pathlib import Path

import fsspec

from ingest.source import Source
from tests.parts import SHARED, require_shared_sample

SAMPLE = SHARED / "samples" / "traces" / "jaeger" / "day23-utf16" / "single_trace.json"


def test_a_real_utf16_jaeger_trace_is_read_as_its_utf8_form(tmp_path, run, query):
    path = require_shared_sample(SAMPLE)
    raw = path.read_bytes()
    assert raw[:2] == b"\xff\xfe"
    source = Source(fsspec.filesystem("file"), str(path), path.name, lambda data, media, uri: "sha256:")
    trace = json.loads(source.read_bytes())
    assert source.decoded[""].encoding == "UTF-16LE" and source.decoded[""].byte_order_mark
    assert [s["operationName"] for s in trace["spans"]] == ["predict"]  # one span, no tool call
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "single_trace.json").write_bytes(raw)
    (folder / "single_trace_utf8.json").write_text(raw.decode("utf-16"), encoding="utf-8")
    assert run("ingest-all", [folder], stages=["ingest"]).status == "success"
    assert query("SELECT path FROM ignored_inputs") == []  # before: "UTF-16 text ... no reader decodes it"
    rows = query("SELECT rule, source_uri, reason FROM quarantine ORDER BY source_uri")
    assert [(r["rule"], r["source_uri"]) for r in rows] == [("no_agent_spans", "in/single_trace.json"),
                                                           ("no_agent_spans", "in/single_trace_utf8.json")]
    assert "1 of 1 traces hold no span of an agent" in rows[0]["reason"]
    assert rows[0]["reason"].replace("single_trace.json", "") == rows[1]["reason"].replace("single_trace_utf8.json", "")
    assert query("SELECT count(*) AS n FROM episodes")[0]["n"] == 0
