import json
import shutil
from pathlib import Path

from ingest.android import uiautomator
from tests.conftest import SAMPLES

DUMP = SAMPLES / "android" / "uiautomator-dump" / "window_dump.xml"


def test_a_lone_dump_is_one_observation_step(run, query):
    result = run("ingest-android", [DUMP.parent])
    assert result.status == "success" and result.episodes == 1 and result.steps == 1
    assert result.quarantined == 0
    step = query("SELECT * FROM steps")[0]
    obs = step["observation"]
    # the Pixel launcher home screen, 1080x1794 from the root node's bounds
    assert obs["kind"] == "screen" and obs["width"] == 1080 and obs["height"] == 1794
    assert obs["text"].splitlines()[0] == "Package: com.google.android.apps.nexuslauncher"
    assert '[20] TextView "Chrome" desc="Chrome" {clickable,long_clickable} @[641,1382][843,1548]' in obs["text"]
    tree = json.loads(obs["ui_tree"])
    assert len(tree) == 25 and tree[3]["resource_id"] == "com.google.android.apps.nexuslauncher:id/launcher"
    assert tree[3]["parent"] == 2 and tree[3]["children"] == [4] and tree[3]["bounds"] == [[0, 0], [1080, 1794]]
    assert step["action"] is None  # a dump records a screen, never an action
    assert step["is_first"] and step["is_last"] and not step["is_terminal"] and step["timestamp"] is None
    ep = query("SELECT * FROM episodes")[0]
    env = json.loads(ep["env"])
    assert ep["source_format"] == "uiautomator" and env["screen_size"] == [1080, 1794]
    assert env["observation_only"] is True and env["dumps"] == ["window_dump.xml"] and env["rotation"] == "0"


def test_dumps_of_one_folder_form_one_episode_in_name_order(run, query, tmp_path):
    folder = tmp_path / "session"
    folder.mkdir()
    xml = DUMP.read_bytes()
    (folder / "0002.xml").write_bytes(xml.replace(b'text="Chrome"', b'text="Browser"'))
    (folder / "0001.xml").write_bytes(xml)
    result = run("ingest-android", [folder])
    assert result.episodes == 1 and result.steps == 2
    texts = [r["t"] for r in query("SELECT observation.text AS t FROM steps ORDER BY step_index")]
    assert '"Chrome"' in texts[0] and '"Browser"' in texts[1]
    assert json.loads(query("SELECT env FROM episodes")[0]["env"])["dumps"] == ["0001.xml", "0002.xml"]


def test_malformed_dump_is_quarantined_with_line_and_column(run, query, tmp_path):
    folder = tmp_path / "session"
    folder.mkdir()
    shutil.copy(DUMP, folder / "0001.xml")
    (folder / "0002.xml").write_bytes(DUMP.read_bytes()[:5000])  # cut mid-document
    result = run("ingest-android", [folder])
    assert result.status == "success" and result.steps == 1 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "truncated_file" and row["location"] == "0002.xml" and row["line"] == 1
    assert row["reason"] == "0002.xml: truncated at byte 5000 (the XML ends before its root element closes)"


def test_units_sniff_content_and_keep_nested_folders_apart():
    heads = {"/in/a/1.xml": b"<?xml version='1.0' ?><hierarchy rotation=\"0\">", "/in/a/2.xml": b"<hierarchy>",
             "/in/a/b/1.xml": b"<hierarchy>", "/in/a/b/2.xml": b"<hierarchy>", "/in/a/c.xml": b"<manifest>",
             "/in/lone/renamed.xml": b"<hierarchy>"}
    units = uiautomator.units(sorted(heads), heads.__getitem__)
    assert units == ["/in/a/b", "/in/lone/renamed.xml", "/in/a"]  # children before parents


def test_a_bad_dump_is_quarantined_alone_and_the_folder_keeps_the_others(run, query, tmp_path):
    folder = tmp_path / "session"
    folder.mkdir()
    xml = DUMP.read_bytes()
    (folder / "0001.xml").write_bytes(xml)
    (folder / "0002.xml").write_bytes(xml.replace(b'bounds="[0,0][1080,1794]"', b'bounds="[0,0][99999999999,1794]"', 1))
    (folder / "0003.xml").write_bytes(xml[: len(xml) // 2])
    (folder / "0004.xml").write_bytes(b"")
    (folder / "0005.xml").write_bytes(xml)
    result = run("ingest-android", [folder], stages=["ingest"])
    assert result.status == "success" and result.episodes == 1 and result.steps == 2 and result.quarantined == 3
    rows = {r["location"]: r for r in query("SELECT * FROM quarantine")}
    assert rows["0002.xml"]["rule"] == "bad_record"
    assert rows["0002.xml"]["reason"] == ("0002.xml: node 0 field bounds: 99999999999,1794 is out of the pixel range "
                                          "(int32)")
    assert rows["0003.xml"]["rule"] == "truncated_file" and rows["0003.xml"]["line"]
    assert rows["0004.xml"]["rule"] == "not_a_dump" and "empty" in rows["0004.xml"]["reason"]
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert env["dumps"] == ["0001.xml", "0005.xml"]  # the steps' dumps: the gaps show


def test_a_hierarchy_nested_past_the_recursion_limit_is_one_bad_dump(run, query, tmp_path):
    xml = DUMP.read_bytes()
    i = xml.find(b"<node")
    deep = b'<node class="x" bounds="[0,0][1,1]">' * 5000 + b"</node>" * 5000
    dump = tmp_path / "deep.xml"
    dump.write_bytes(xml[:i] + deep + xml[i:])
    result = run("ingest-android", [dump], stages=["ingest"])
    assert result.status == "success" and result.steps == 0 and result.quarantined == 1
    assert "nested deeper than Python's recursion limit" in query("SELECT reason FROM quarantine")[0]["reason"]


def test_a_broken_dump_no_format_claims_says_what_is_wrong_with_it(run, query, tmp_path):
    """An empty dump, or one cut before its <hierarchy> element, is claimed by no format: the ignored-inputs
    row says it is empty or where it was cut, not only that no format reads it."""
    folder = tmp_path / "session"
    folder.mkdir()
    (folder / "window_dump.xml").write_bytes(b"")
    (folder / "window_dump_2.xml").write_bytes(DUMP.read_bytes()[:40])
    (folder / "notes.json").write_bytes(b'{"steps": [{"action": "tap"')
    (folder / "whole.json").write_bytes(b'{"not": "a trace"}')
    run("ingest-android", [folder], stages=["ingest"])
    reasons = {Path(r["path"]).name: r["reason"] for r in query("SELECT path, reason FROM ignored_inputs")}
    assert reasons == {
        "window_dump.xml": "empty file; no format reads it",
        "window_dump_2.xml": "truncated at byte 40 (the XML ends before its root element closes); no format reads it",
        "notes.json": "truncated at byte 27 (the JSON ends before its last value closes); no format reads it",
        "whole.json": "no format reads it"}
