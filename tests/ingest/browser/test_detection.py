"""Content-based detection: the browser samples, renamed and mixed in one folder, each go to their reader."""

import shutil

from ingest import registry
from pipelines.infra.plan import find_units
from tests.conftest import SAMPLES

BROWSER = SAMPLES / "browser"


def _mixed(tmp_path):
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    # names that say nothing about the format: only the content can tell
    shutil.copy(BROWSER / "har" / "har-redirect.har", mixed / "capture-1.json")
    shutil.copy(BROWSER / "har" / "har-sha1.har", mixed / "capture-2.log")
    shutil.copy(BROWSER / "cdp-devtoolslog" / "redirects-from-script.devtoolslog.json", mixed / "events.json")
    shutil.copy(BROWSER / "playwright-trace" / "test-trace1.zip", mixed / "recording.bin")
    shutil.copytree(BROWSER / "browsergym-agentlab", mixed / "run-196")
    return mixed


EXPECTED = {"mixed/capture-1.json": "har", "mixed/capture-2.log": "har", "mixed/events.json": "cdp",
            "mixed/recording.bin": "playwright_trace", "mixed/run-196": "browsergym"}


def test_every_registered_format_leaves_each_browser_sample_to_its_reader(tmp_path):
    units, _ignored = find_units([str(_mixed(tmp_path))], list(registry.names()))
    claimed = {u.uri: u.format for u in units}
    assert claimed == EXPECTED


def test_mixed_folder_ingests_every_format(run, query, tmp_path):
    result = run("ingest-browser", [_mixed(tmp_path)])
    assert result.status == "success" and result.quarantined == 0
    rows = query("SELECT source_uri, source_format, num_steps FROM episodes ORDER BY source_uri")
    assert [(r["source_uri"], r["source_format"], r["num_steps"]) for r in rows] == [
        ("mixed/capture-1.json", "har", 3), ("mixed/capture-2.log", "har", 1), ("mixed/events.json", "cdp", 4),
        ("mixed/recording.bin", "playwright_trace", 2), ("mixed/run-196", "browsergym", 5)]
