"""One lake for the view's browser tests, built the way users build theirs, plus a few planted rows:

- `all`: every bundled sample (ingest-all, validated); a simulated branch on the DroidBot run's step 1; a
  bad branch (no predicted state) that validate quarantines alone, its action holding a `<script>`; a web
  episode whose task, observation, action and reasoning hold HTML and scripts; an Android episode with a
  tap at (0.25, 0.75) on a real DroidBot screenshot (the bundled taps have no screenshot of their own).
- `android`: the DroidBot run, a rerun and an edited copy, deduplicated (one exact, one near cluster),
  then exported as SFT (export_rows); a placeholder GX report for v1.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.view.server import view_server
from tests.parts import require

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]
TAP = (0.25, 0.75)
PLANTED = "<script>window.__pwned = 1</script>"


def _id(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:32]


@dataclass
class ViewLake:
    path: str
    droidbot: str  # the DroidBot run's episode id in `all`
    tap_episode: str
    web_episode: str
    representative: str  # the DroidBot run in `android`, kept by dedup
    predicted: str  # the branch's predicted state
    real_next: str  # observation text of the DroidBot run's step 2


def _catalog_rows(lake: str, sql: str) -> list[dict]:
    from pipelines.infra.lake import Lake
    from pipelines.infra.runs import open_catalog

    with open_catalog(Lake(lake), read_only=True) as cat:
        return cat.sql(sql).to_arrow_table().to_pylist()


def _planted_episodes(screenshot: str) -> tuple[list[dict], list[dict]]:
    from tests.transforms.export.lakes import episode_row, step_row

    web, tap = _id("view-planted-web"), _id("view-planted-tap")
    web_ep = {**episode_row(web, "web", f"Planted {PLANTED} task"), "platform": "browser", "num_steps": 1}
    web_step = {**step_row(web, 0, "web", None, {
        "kind": "click", "x": 0.5, "y": 0.5, "element": '{"selector": "<img src=x onerror=\\"window.__pwned=2\\">"}',
        "raw": '{"html": "<script>window.__pwned = 4</script>"}'}),
        "observation": {"kind": "web", "url": "https://example.test/?q=<script>", "title": "<b>title</b>",
                        "text": f"Welcome {PLANTED}<img src=x onerror=\"window.__pwned = 3\">"},
        "reasoning": "<script>window.__pwned = 5</script>", "is_last": True}
    tap_ep = {**episode_row(tap, "android", "Planted tap on a real screenshot"), "platform": "android",
              "num_steps": 1}
    tap_step = {**step_row(tap, 0, "android", None, {"kind": "tap", "x": TAP[0], "y": TAP[1]}),
                "observation": {"kind": "screen", "text": "[0] home screen", "screenshot": screenshot,
                                "width": 1080, "height": 2280},
                "final_observation": {"kind": "screen", "text": "[0] after the tap"}, "is_last": True}
    return [web_ep, tap_ep], [web_step, tap_step]


def build_view_lake(root: Path) -> ViewLake:
    from pipelines.infra import definition
    from pipelines.cli import main
    from pipelines.infra.runner import run_ingest
    from tests.transforms.dedup.copies import DROIDBOT_RUN, edited_copy, volatile_copy
    from tests.transforms.export.lakes import branch_row, commit_dataset

    lake = str(root / "lake")
    quiet = dict(progress=False, log=lambda line: None)
    assert run_ingest(definition.load("ingest-all"), lake, **quiet).status == "success"
    copies = [str(DROIDBOT_RUN), str(volatile_copy(root / "rerun")), str(edited_copy(root / "edited"))]
    assert run_ingest(definition.load("ingest-android"), lake, copies, **quiet).status == "success"
    assert main(["dedup", "android", "--lake", lake]) == 0
    assert main(["export", "sft", "android", "--out", str(root / "sft"), "--lake", lake]) == 0

    droidbot = _catalog_rows(lake, "SELECT episode_id FROM episodes WHERE dataset = 'all' "
                                   "AND source_format = 'droidbot'")[0]["episode_id"]
    predicted = "[0] QQ Music <predicted> home screen"
    good = branch_row(f"{droidbot}:1", {"kind": "tap", "x": 0.5, "y": 0.3}, predicted, kind="screen",
                      suffix="good")
    bad = branch_row(f"{droidbot}:1", {"kind": "type", "text": "<script>window.__pwned = 6</script>"}, None,
                     kind="screen", suffix="bad")
    commit_dataset(lake, "all", [], [], branches=[good, bad])
    assert main(["validate", "all", "--lake", lake]) == 0  # quarantines the bad branch alone

    screenshot = _catalog_rows(lake, "SELECT observation.screenshot AS s FROM steps WHERE dataset = 'all' "
                                     f"AND episode_id = '{droidbot}' AND step_index = 0")[0]["s"]
    episodes, steps = _planted_episodes(screenshot)
    commit_dataset(lake, "all", episodes, steps)

    report = root / "lake" / "datasets" / "android" / "validation" / "v1"
    report.mkdir(parents=True)
    (report / "index.html").write_text("<html><body><h1>GX report for android v1</h1></body></html>")
    real_next = _catalog_rows(lake, "SELECT observation.text AS t FROM steps WHERE dataset = 'all' "
                                    f"AND episode_id = '{droidbot}' AND step_index = 2")[0]["t"]
    representative = _catalog_rows(lake, "SELECT DISTINCT representative FROM dedup_clusters")[0]["representative"]
    return ViewLake(lake, droidbot, _id("view-planted-tap"), _id("view-planted-web"), representative, predicted,
                    real_next)


@pytest.fixture(scope="session")
def view_lake(tmp_path_factory) -> ViewLake:
    return build_view_lake(tmp_path_factory.mktemp("view"))


@pytest.fixture(scope="session")
def view_url(view_lake) -> str:
    with view_server(view_lake.path) as url:
        yield url


def _require(what: str, ok: bool) -> None:
    require(what, ok, "apt-get install -y chromium; pip install playwright")


@pytest.fixture(scope="module")
def browser():
    """Chromium through Playwright's sync API, one per test module: while it runs, this thread has a running asyncio
    loop (Playwright's, in a greenlet), and a later test of the same worker that runs its own loop would fail."""
    import importlib.util

    _require("playwright", importlib.util.find_spec("playwright") is not None)
    _require(CHROMIUM, os.path.exists(CHROMIUM))
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh page; `page.problems` collects script errors and failed loads (none are expected)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.problems = []
    pg.on("pageerror", lambda e: pg.problems.append(f"page error: {e}"))
    pg.on("console", lambda m: pg.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    yield pg
    context.close()
