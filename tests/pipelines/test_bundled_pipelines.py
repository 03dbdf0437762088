"""Every ingest pipeline validates what it ingested, and its bundled samples come out clean: status ok, the
validate stage ran, and nothing is quarantined by either stage."""

import pytest

from pipelines import definition

PIPELINES = sorted(definition.names())
# The bundled AgentNet trajectory names 11 screenshots of which 2 were copied: a real hole in the trajectory.
AGENTNET_HOLES = pytest.mark.xfail(strict=True, reason="samples/macos/agentnet-darwin lacks 9 of 11 screenshots")


def test_every_ingest_pipeline_runs_validate():
    assert PIPELINES and all(definition.load(name).stages == ["ingest", "validate"] for name in PIPELINES)


@pytest.mark.parametrize("name", [pytest.param(n, marks=AGENTNET_HOLES) if n in ("ingest-all", "ingest-macos")
                                  else n for n in PIPELINES])
def test_bundled_samples_end_ok_with_nothing_quarantined(run, query, name):
    result = run(name)
    assert result.status == "success" and result.episodes > 0
    assert [s.split(":")[0] for s in result.stage_summaries] == ["validate"]
    stats = {r["stage"]: r for r in query("SELECT stage, records_in, records_out, quarantined FROM stage_stats")}
    assert stats["validate"]["quarantined"] == 0 and stats["validate"]["records_in"] == stats["validate"]["records_out"]
    assert query("SELECT stage, rule, reason FROM quarantine") == []
