"""Scrubbing at its edges: a second pass changes and counts nothing (what is already redacted stays as it is,
empty values are not secrets), HAR cookie values are redacted as cookies, and `scrub_table` handles one-row
tables, a struct's first field, absent fields before present ones, and several rows, keeping column types."""

from collections import Counter

import pyarrow as pa

from tests.transforms.test_scrub import EXAMPLES
from transforms.scrub import scrub_array, scrub_table, scrub_text

HAR = ('{"request": {"cookies": [{"name": "sid", "value": "abc123"}, {"name": "empty", "value": ""}, '
       '{"name": "theme", "value": "dark"}]}}')


def test_a_second_pass_changes_and_counts_nothing():
    for text in EXAMPLES + [HAR]:
        once, found = scrub_text(text)
        assert found, text
        assert scrub_text(once) == (once, Counter()), text


def test_har_cookie_values_are_redacted_as_cookies_and_empty_ones_are_left():
    out, found = scrub_text(HAR)
    assert found == Counter({"cookie": 2})
    assert out == ('{"request": {"cookies": [{"name": "sid", "value": "<REDACTED:cookie>"}, {"name": "empty", '
                   '"value": ""}, {"name": "theme", "value": "<REDACTED:cookie>"}]}}')


def test_an_empty_password_is_not_a_secret():
    assert scrub_text("https://x.example/cb?token=&x=1") == ("https://x.example/cb?token=&x=1", Counter())


def test_scrub_array_keeps_the_column_type():
    values = pa.array(["ls", "DB_PASSWORD=hunter22", None], pa.large_string())
    out, audit = scrub_array(values)
    assert out.type == pa.large_string()
    assert out.to_pylist() == ["ls", "DB_PASSWORD=<REDACTED:env_secret>", None] and list(audit) == [1]
    chunked, audit = scrub_array(pa.chunked_array([values[:1], values[1:]]))
    assert chunked.to_pylist() == out.to_pylist() and list(audit) == [1]
    clean, audit = scrub_array(pa.chunked_array([["ls"], ["pwd"]]))  # one array back, as the contract says
    assert isinstance(clean, pa.Array) and clean.to_pylist() == ["ls", "pwd"] and audit == {}


def test_scrub_table_on_one_row_a_first_field_absent_fields_and_several_rows():
    action = pa.array([{"code": "export DB_PASSWORD=hunter22", "text": "x"}],
                      pa.struct([("code", pa.string()), ("text", pa.string())]))
    one = pa.table({"step_id": ["e:0"], "action": action, "reasoning": ["API_TOKEN=abcdef1"]})
    out, audit = scrub_table(one, ["task", "action.missing", "action.code", "reasoning"], "step_id")
    assert out.column("action").to_pylist() == [{"code": "export DB_PASSWORD=<REDACTED:env_secret>", "text": "x"}]
    assert out.column("reasoning").to_pylist() == ["API_TOKEN=<REDACTED:env_secret>"]
    assert audit == [{"record_id": "e:0", "field": "action.code", "kind": "env_secret", "count": 1},
                     {"record_id": "e:0", "field": "reasoning", "kind": "env_secret", "count": 1}]
    many = pa.table({"step_id": ["e:0", "e:1"], "reasoning": ["PASSWORD=aaaa1111", "SECRET=bbbb2222"]})
    _, audit = scrub_table(many, ["reasoning"], "step_id")
    assert [a["record_id"] for a in audit] == ["e:0", "e:1"]


def test_scrub_table_keeps_each_fields_redactions_across_chunks_and_fields_of_one_struct():
    # a table read back from several Parquet parts comes in chunks; two fields of one struct both hit
    obs = pa.struct([("text", pa.string()), ("ui_tree", pa.string())])
    first = pa.array([{"text": "DB_PASSWORD=hunter22", "ui_tree": "[]"}], obs)
    second = pa.array([{"text": "ok", "ui_tree": '{"password": "hunter22"}'}, None], obs)
    table = pa.Table.from_batches([pa.record_batch({"step_id": ["e:0"], "observation": first}),
                                   pa.record_batch({"step_id": ["e:1", "e:2"], "observation": second})])
    assert table.column("observation").num_chunks == 2
    out, audit = scrub_table(table, ["observation.text", "observation.ui_tree"], "step_id")
    assert out.column("observation").to_pylist() == [
        {"text": "DB_PASSWORD=<REDACTED:env_secret>", "ui_tree": "[]"},
        {"text": "ok", "ui_tree": '{"password": "<REDACTED:password>"}'}, None]
    assert [(a["record_id"], a["field"]) for a in audit] == [("e:0", "observation.text"), ("e:1", "observation.ui_tree")]
