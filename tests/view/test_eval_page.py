"""The eval pages in a real headless browser: the evaluations list, one evaluation's AgentWorldBench table, and
its worst-scored samples with the prediction and the real state side by side (a lake evaluated with the
scripted judge stand-in, one prediction holding a planted script)."""

from __future__ import annotations

import pytest

from tests.view.conftest import PLANTED
from tests.view.server import view_server


@pytest.fixture(scope="module")
def eval_url(tmp_path_factory):
    from pipelines import cli
    from pipelines.infra import definition
    from pipelines.infra.runner import run_ingest
    from tests.pipelines.judge_servers import ScriptedJudgeAndWorld, all_scores, verdict_text
    from transforms.agentworld import answer_in_block, system_prompt

    lake = str(tmp_path_factory.mktemp("evalview") / "lake")
    assert run_ingest(definition.load("ingest-all"), lake, None, progress=False,
                      log=lambda line: None).status == "success"

    def world(messages):
        domain = next(d for d in ("android", "web", "swe") if system_prompt(d)[:300] == messages[0]["content"][:300])
        text = f"predicted {domain} {PLANTED}" if domain == "web" else f"predicted {domain}"
        return f"<predicted_observation>\n{text}\n</predicted_observation>" if answer_in_block(domain) \
            else f"**Environment Observation:**\n{text}"

    def verdict(prediction, truth, attempt):
        if prediction.startswith("predicted swe"):
            return "no verdict here"
        return verdict_text(all_scores(2 if "web" in prediction else 4))

    server = ScriptedJudgeAndWorld(world, verdict)
    try:
        assert cli.main(["eval", "all", "--lake", lake, "--endpoint", server.url, "--model", "wm",
                         "--judge-endpoint", server.url, "--judge-model", "judge", "--split-ratios", "0,0,1",
                         "--per-domain", "2", "--domains", "android", "web", "swe"]) == 0
    finally:
        server.close()
    with view_server(lake) as url:
        yield url


def test_the_eval_table_and_its_worst_samples(eval_url, page):
    page.goto(eval_url + "/evals")
    assert page.locator("h1").inner_text() == "Evals"
    row = page.locator("table.evals tbody tr")
    assert row.count() == 1 and "50.00" in row.inner_text()  # android 4 -> 75, web 2 -> 25: overall 50
    with page.expect_navigation():
        row.locator("a").first.click()
    table = {r.split("\t")[0]: r.split("\t")[1:] for r in page.locator("table.eval-table tbody tr").all_inner_texts()}
    assert table["android"][:3] == ["2/2", "0", "75.00"] and table["web"][-1] == "25.00"
    assert table["swe"][:3] == ["0/2", "2", "–"] and table["overall"][-1] == "50.00"
    samples = page.locator("section.sample")
    assert samples.count() == 6
    first = samples.first  # failed samples come first
    assert "failed" in first.locator("p.meta").inner_text() and "Judge scoring failed" in first.inner_text()
    assert first.locator("pre.predicted").inner_text() == "predicted swe"
    assert first.locator("pre.real").inner_text().strip()  # the real state beside it
    web = samples.nth(2)  # then the lowest judge totals: web
    assert PLANTED in web.locator("pre.predicted").inner_text()
    assert page.locator("script").count() == 0 and page.evaluate("() => window.__pwned") is None
    with page.expect_navigation():
        page.locator("table.eval-table a", has_text="android").click()
    assert page.locator("section.sample").count() == 2 and "domain android" in page.locator("p.filter").inner_text()
    assert page.problems == []


def test_unknown_eval_is_not_found(eval_url, page):
    assert page.goto(eval_url + "/evals/nope").status == 404


def test_the_runs_say_failed_for_eval_samples_and_an_app_names_a_taskless_episode(eval_url, page):
    """An eval run's failed samples are failures, not quarantined records; a DroidBot run, which explores an
    app with no task, is titled by its app on the episode list and its page."""
    page.goto(eval_url + "/datasets")
    stages = page.locator("table.runs div.stage").all_inner_texts()
    evals = [s for s in stages if s.startswith("eval:")]
    assert evals and all("2 failed" in s and "quarantined" not in s for s in evals), stages
    assert any(s.startswith("validate:") and "quarantined" in s for s in stages)
    page.goto(eval_url + "/episodes?source_format=droidbot")
    title = page.locator("td.task a").first
    assert title.inner_text().startswith("com.tencent.qqmusic") and "(no task recorded)" in title.inner_text()
    with page.expect_navigation():
        title.click()
    assert page.locator("h1.task").inner_text() == "com.tencent.qqmusic (no task recorded)"
