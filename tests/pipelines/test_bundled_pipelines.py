"""Every ingest pipeline validates what it ingested, and its bundled samples come out clean: status ok, the
validate stage ran, and nothing is quarantined by either stage."""

import pytest

from pipelines.infra import definition

PIPELINES = sorted(name for name in definition.names() if name.startswith("ingest-"))


def test_every_ingest_pipeline_runs_validate():
    assert len(PIPELINES) >= 7
    assert all(definition.load(name).stages[:2] == ["ingest", "validate"] for name in PIPELINES)


@pytest.mark.parametrize("name", PIPELINES)
def test_bundled_samples_end_ok_with_nothing_quarantined(run, query, name):
    result = run(name)
    assert result.status == "success" and result.episodes > 0
    assert [s.split(":")[0] for s in result.stage_summaries] == ["validate"]
    stats = {r["stage"]: r for r in query("SELECT stage, records_in, records_out, quarantined FROM stage_stats")}
    assert stats["validate"]["quarantined"] == 0 and stats["validate"]["records_in"] == stats["validate"]["records_out"]
    assert query("SELECT stage, rule, reason FROM quarantine") == []
