"""Secrets never reach the lake: ingest scrubs them before it writes a part, quarantined snippets included,
and says what kind it found where (never the secret)."""

import json
import shutil

import pyarrow.parquet as pq

from pipelines.infra.lake import Lake
from tests.conftest import SAMPLES

GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # planted, shaped like a real token
AWS = "AKIA" + "Q3EXAMPLE7KEY2ID"


def test_a_secret_in_a_trace_is_scrubbed_before_anything_is_written(run, query, lake, tmp_path):
    leaky = tmp_path / "in" / "run"
    shutil.copytree(SAMPLES / "android" / "droidbot-run", leaky)
    event_path = sorted((leaky / "events").glob("*.json"))[1]
    event = json.loads(event_path.read_text())
    event["event"]["intent"] += f" --es github_token {GITHUB}"
    event_path.write_text(json.dumps(event))
    # a record the reader cannot use keeps its snippet in the quarantine: scrubbed too
    (leaky / "events" / "event_2099-01-01_000000.json").write_text('{"tag": "x", "aws": "%s", ' % AWS)
    result = run("ingest-android", [leaky.parent], stages=["ingest"])
    assert result.status == "success" and result.quarantined == 1
    written = ""
    for path in (Lake(lake).fs.find(f"{lake}/datasets")):
        if path.endswith(".parquet"):
            written += json.dumps(pq.read_table(path).to_pylist(), default=str)
    assert GITHUB not in written and AWS not in written and "<REDACTED:github_token>" in written
    audit = query("SELECT table_name, field, kind FROM scrub_audit ORDER BY 1, 2")
    assert {(a["table_name"], a["kind"]) for a in audit} == {("steps", "github_token")}
    assert GITHUB not in json.dumps(query("SELECT * FROM scrub_audit"), default=str)


def test_quarantine_snippets_are_scrubbed_with_the_rest():
    import pyarrow as pa

    from schemas import QUARANTINE
    from transforms.scrub import scrub_tables

    row = {"stage": "ingest", "rule": "bad_record", "reason": "x", "record_id": "r1",
           "snippet": '{"aws": "%s", "n": 1}' % AWS}
    tables, audit = scrub_tables({"quarantine": pa.Table.from_pylist([row], schema=QUARANTINE)})
    assert tables["quarantine"].column("snippet").to_pylist() == ['{"aws": "<REDACTED:aws_access_key>", "n": 1}']
    assert audit == [{"record_id": "r1", "field": "snippet", "kind": "aws_access_key", "count": 1,
                      "table_name": "quarantine"}]
