"""`pipelines view` driven in a real headless browser (Debian's Chromium through Playwright) over the bundled
samples of every domain (see conftest.py for the lake)."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import REPO
from tests.goldens import REGEN
from tests.parts import in_ci
from tests.view.conftest import PLANTED, TAP, _catalog_rows

SCREENSHOT = REPO / "pipelines" / "view" / "static" / "screenshot-episode.png"  # the README's picture


def _open(page, url: str):
    response = page.goto(url)  # returns after the load event: stylesheet and images are in
    assert response.status == 200, f"{url}: HTTP {response.status}"
    return response


def _column(page, name: str) -> list[str]:
    """The cells of the episode table's column `name`."""
    headers = page.locator("table.episodes thead th").all_inner_texts()
    index = headers.index(name) + 1
    return page.locator(f"table.episodes tbody tr td:nth-child({index})").all_inner_texts()


def test_every_page_renders(page, view_url, view_lake):
    for path, heading in [("/datasets", "Datasets"), ("/datasets/all", "Dataset all"),
                          ("/datasets/android", "Dataset android"), ("/episodes", "Episodes"),
                          ("/quarantine", "Quarantine"), ("/duplicates", "Duplicates")]:
        _open(page, view_url + path)
        assert page.locator("h1").inner_text() == heading
    # one episode of every domain, step by step
    firsts = _catalog_rows(view_lake.path, "SELECT domain, min(episode_id) AS episode_id FROM episodes "
                                           "WHERE dataset = 'all' GROUP BY 1")
    assert {f["domain"] for f in firsts} == {"android", "web", "os", "terminal", "swe", "mcp", "search"}
    for f in firsts:
        steps = _catalog_rows(view_lake.path, f"SELECT count(*) AS n FROM steps WHERE dataset = 'all' "
                                              f"AND episode_id = '{f['episode_id']}'")[0]["n"]
        _open(page, f"{view_url}/episodes/all/{f['episode_id']}")
        assert page.locator("section.step").count() == min(steps, 20), f["domain"]
        assert page.locator("section.step .did").first.inner_text().startswith("Did")
    assert page.problems == []


def test_datasets_show_versions_stage_counts_runs_and_the_gx_report(page, view_url, view_lake):
    _open(page, view_url + "/datasets")
    assert page.locator("table.datasets tbody tr td:first-child").all_inner_texts() == ["all", "android"]
    runs = _catalog_rows(view_lake.path, "SELECT run_id FROM runs ORDER BY started_at DESC")
    assert page.locator("table.runs td.id").all_inner_texts() == [r["run_id"] for r in runs]
    assert "ingest: " in page.locator("table.runs").inner_text()
    _open(page, view_url + "/datasets/android")
    versions = page.locator("table.versions tbody tr")
    assert versions.count() == 2
    newest = versions.nth(0).inner_text()
    assert newest.startswith("v2") and "-2" in newest  # dedup removed 2 of 3 episodes
    assert "dedup: 3 in → 1 out" in newest
    chart = page.locator("figure.chart").inner_text()
    assert "exact_duplicate" in chart and "near_duplicate" in chart
    with page.expect_navigation():
        page.locator("table.versions a.gx").click()
    assert page.locator("h1").inner_text() == "GX report for android v1"


def test_episode_filters(page, view_url, view_lake):
    _open(page, view_url + "/episodes")
    page.select_option("select[name=domain]", "android")
    with page.expect_navigation():
        page.click("form.filters button[type=submit]")
    assert parse_qs(urlsplit(page.url).query)["domain"] == ["android"]
    android = _catalog_rows(view_lake.path, "SELECT count(*) AS n FROM episodes WHERE domain = 'android'")[0]["n"]
    assert set(_column(page, "domain")) == {"android"} and len(_column(page, "domain")) == android
    assert page.locator("#total").inner_text() == str(android)

    page.select_option("select[name=domain]", "")
    page.fill("input[name=q]", "'Hello, world!'")  # Harbor's goldens ask for hello.txt too, in double quotes
    with page.expect_navigation():
        page.click("form.filters button[type=submit]")
    assert [t.splitlines()[0] for t in _column(page, "task")] == [
        "Create a file called hello.txt with 'Hello, world!' as the content."]

    _open(page, view_url + "/episodes?branches=yes")
    assert page.locator("tr.episode").evaluate_all("rows => rows.map(r => r.dataset.episode)") == [view_lake.droidbot]
    _open(page, view_url + "/episodes?cluster=yes")
    assert page.locator("tr.episode").evaluate_all("rows => rows.map(r => r.dataset.episode)") == [
        view_lake.representative]
    _open(page, view_url + "/episodes?dataset=android&cluster=no")
    assert page.locator("p.empty").inner_text() == "No episode matches these filters."
    _open(page, view_url + "/episodes?outcome=success")
    assert set(_column(page, "outcome")) == {"success"}
    assert page.problems == []


def test_a_tap_is_drawn_where_it_landed_on_the_screenshot(page, view_url, view_lake):
    _open(page, f"{view_url}/episodes/all/{view_lake.tap_episode}")
    image = page.locator("#step-0 .saw .shot img")
    assert image.evaluate("img => img.complete && img.naturalWidth") == 1080  # the real DroidBot screenshot
    mark = page.locator("#step-0 .saw circle.mark-tap")
    box, spot = image.bounding_box(), mark.bounding_box()
    center = (spot["x"] + spot["width"] / 2, spot["y"] + spot["height"] / 2)
    expected = (box["x"] + TAP[0] * box["width"], box["y"] + TAP[1] * box["height"])
    assert abs(center[0] - expected[0]) < 1.5 and abs(center[1] - expected[1]) < 1.5, (center, expected, box)
    assert page.locator("#step-0 .saw figcaption").inner_text() == "tap at x 0.250, y 0.750"
    assert page.problems == []


def test_a_branch_shows_the_real_and_the_predicted_next_state_side_by_side(page, view_url, view_lake, tmp_path):
    _open(page, f"{view_url}/episodes/all/{view_lake.droidbot}")
    step = page.locator("#step-1")
    real, branch = step.locator(".alt.real-next"), step.locator(".alt.branch")
    assert branch.count() == 1  # the branch without a predicted state was quarantined by validate
    assert real.locator("pre.text").inner_text() == view_lake.real_next  # the observation of step 2
    assert branch.locator(".obs.predicted pre.text").inner_text() == view_lake.predicted
    assert "tap at (0.500, 0.300)" in branch.inner_text()
    left, right = real.bounding_box(), branch.bounding_box()
    assert abs(left["y"] - right["y"]) < 1 and right["x"] >= left["x"] + left["width"]
    assert page.locator("section.step .branch").count() == 1  # only beside the step it leaves from
    step.scroll_into_view_if_needed()
    shot = tmp_path / "screenshot-episode.png"
    step.screenshot(path=str(shot))
    _assert_shows(shot, step.bounding_box())
    _keep_readme_screenshot(shot)
    assert page.problems == []


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (the first chunk, right after the 8-byte signature)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def _assert_shows(shot: Path, box: dict) -> None:
    """The picture is the whole step: its size is the step's box (at any device scale), and it holds the
    screenshot image, not a blank panel (a blank PNG of this size compresses to a few KB)."""
    width, height = _png_size(shot)
    scale = width / box["width"]
    assert scale >= 1 and abs(height - box["height"] * scale) <= 2 * scale, ((width, height), box)
    assert shot.stat().st_size > 50_000, f"{shot}: {shot.stat().st_size} bytes, the step's image is missing"


def _keep_readme_screenshot(shot: Path) -> None:
    """The README's screenshot is rewritten only on request, like a golden: a plain test run leaves the
    working tree as it found it."""
    if os.environ.get(REGEN) != "1":
        return
    if in_ci():
        pytest.fail(f"{REGEN} is set under CI: the README's screenshot is written by a person, then reviewed")
    SCREENSHOT.write_bytes(shot.read_bytes())


def test_export_rows_are_listed_beside_the_steps_they_contain(page, view_url, view_lake):
    _open(page, f"{view_url}/episodes/android/{view_lake.representative}")
    exports = page.locator("#step-0 .exports").inner_text()
    assert "sft/agentworld" in exports and "row 0" in exports


def test_planted_scripts_are_shown_as_text_and_never_run(page, view_url, view_lake):
    _open(page, f"{view_url}/episodes/all/{view_lake.web_episode}")
    assert PLANTED in page.locator("h1").inner_text()
    assert PLANTED in page.locator("#step-0 .saw pre.text").inner_text()
    assert "window.__pwned = 5" in page.locator("#step-0 pre.reasoning").inner_text()
    assert page.locator("script").count() == 0 and page.locator("img[src='x']").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    _open(page, view_url + "/episodes?q=Planted")
    assert any(PLANTED in t for t in _column(page, "task"))
    assert page.evaluate("() => window.__pwned") is None
    # the quarantined branch's snippet holds its action, a <script>; its record links to the episode
    _open(page, view_url + "/quarantine?dataset=all&stage=validate&rule=branch.state_missing")
    record = page.locator("article.record")
    assert record.count() == 1
    assert "window.__pwned = 6" in record.locator("pre.snippet").inner_text()
    assert page.evaluate("() => window.__pwned") is None
    with page.expect_navigation():
        record.locator(".where a").click()
    assert urlsplit(page.url).path == f"/episodes/all/{view_lake.droidbot}"
    assert page.problems == []


def test_quarantine_is_grouped_by_stage_and_rule(page, view_url, view_lake):
    _open(page, view_url + "/quarantine")
    groups = {tuple(r.split("\t")) for r in page.locator("table.groups tbody tr").all_inner_texts()}
    expected = _catalog_rows(view_lake.path, "SELECT dataset, stage, rule, count(*) AS n FROM quarantine GROUP BY ALL")
    assert groups == {(g["dataset"], g["stage"], g["rule"], str(g["n"])) for g in expected}
    assert ("android", "dedup", "exact_duplicate", "1") in groups
    with page.expect_navigation():
        page.click("table.groups a:text('near_duplicate')")
    record = page.locator("article.record")
    assert record.count() == 1 and "Jaccard" in record.locator(".reason").inner_text()
    assert record.locator(".where a").count() == 0  # the removed episode is not in the current version


def test_duplicates_show_each_cluster_with_its_representative_first(page, view_url, view_lake):
    _open(page, view_url + "/duplicates")
    clusters = page.locator("section.cluster")
    assert clusters.count() == 2
    exact, near = page.locator("section.kind-exact"), page.locator("section.kind-near")
    for cluster, why in [(exact, "exact duplicate"), (near, "Jaccard 0.")]:
        members = cluster.locator(".member")
        assert members.count() == 2
        assert members.nth(0).locator("h3").inner_text() == "representative (kept)"
        assert view_lake.representative in members.nth(0).inner_text()
        assert why in members.nth(1).locator("h3").inner_text()
        left, right = members.nth(0).bounding_box(), members.nth(1).bounding_box()
        assert abs(left["y"] - right["y"]) < 1 and right["x"] > left["x"]  # side by side
        assert members.nth(1).locator("pre.text").count() == 1  # what it saw first, to compare


def test_blob_requests_outside_the_lake_are_refused(page, view_url, view_lake):
    screenshot = _catalog_rows(view_lake.path, "SELECT observation.screenshot AS s FROM steps "
                                               f"WHERE episode_id = '{view_lake.tap_episode}'")[0]["s"]
    assert page.goto(f"{view_url}/blob/{screenshot}").status == 200
    for path in ["/blob/sha256:zzz", "/blob/..%2F..%2Fetc%2Fpasswd", "/blob/sha256:" + "0" * 64]:
        response = page.goto(view_url + path)
        assert response.status in (400, 404), path
        assert "root:" not in page.content()
