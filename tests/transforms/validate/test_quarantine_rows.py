"""The quarantine rows of the validate stage for findings the step rules do not make: a whole episode's
finding (its row as the snippet), a step with no episode row, a step without an episode id."""

import json

import pyarrow as pa
import pytest

from schemas import v1
from transforms.validate.check import conform_parts, quarantine_rows, validate


def _rows(episodes, steps):
    ep, st = pa.Table.from_pylist(episodes, schema=v1.EPISODES), pa.Table.from_pylist(steps, schema=v1.STEPS)
    return quarantine_rows(validate(ep, st), ep, st, "run-q").to_pylist()


def test_an_episode_finding_holds_the_episode_row_as_its_snippet(droidbot):
    episodes, steps = [dict(e) for e in droidbot[0]], droidbot[1]
    episodes[0]["num_steps"] = 13
    (row,) = _rows(episodes, steps)
    eid = episodes[0]["episode_id"]
    assert (row["rule"], row["location"], row["record_id"], row["line"]) == \
        ("episode.num_steps_mismatch", "episode", eid, None)
    assert row["reason"] == f"num_steps = 13 but 12 step rows (episode {eid} quarantined whole: 13 steps)"
    assert json.loads(row["snippet"]) == {"episode_id": eid, "domain": "android", "source_format": "droidbot",
                                          "task": episodes[0]["task"], "num_steps": 13,
                                          "source_uri": "droidbot-run"}


def test_a_step_without_an_episode_row_is_quarantined_without_an_episode_to_name(droidbot):
    rows = _rows([], droidbot[1])
    assert len(rows) == 12 and {r["rule"] for r in rows} == {"step.orphan"}
    assert rows[0]["reason"] == "no episode row has this episode_id"  # no episode: no "quarantined whole"
    assert rows[0]["source_uri"] is None and rows[0]["location"] == "step 0"
    assert rows[0]["record_id"] == droidbot[1][0]["step_id"]


def test_a_step_without_an_episode_id_is_dropped_and_quarantined(droidbot):
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    steps[4]["episode_id"] = None
    ep, st = pa.Table.from_pylist(episodes, schema=v1.EPISODES), pa.Table.from_pylist(steps, schema=v1.STEPS)
    outcome = validate(ep, st)
    rows = quarantine_rows(outcome, ep, st, "run-q").to_pylist()
    null_id = [r for r in rows if r["record_id"] == steps[4]["step_id"] and r["rule"] == "schema.required_null"]
    assert null_id and null_id[0]["reason"] == "episode_id is null"
    assert outcome.steps.num_rows == 0  # the episode has a hole now: removed whole


def test_a_finding_without_any_episode_still_becomes_a_row(droidbot):
    steps = [{**droidbot[1][0], "episode_id": None}]
    ep, st = v1.EPISODES.empty_table(), pa.Table.from_pylist(steps, schema=v1.STEPS)
    outcome = validate(ep, st)
    assert outcome.bad_episodes == []
    rows = quarantine_rows(outcome, ep, st, "run-q").to_pylist()
    assert [r["reason"] for r in rows if r["rule"] == "schema.required_null"] == ["episode_id is null"]


def test_an_episodes_part_takes_its_own_formats_contract(droidbot):
    episodes = pa.Table.from_pylist(droidbot[0], schema=v1.EPISODES).drop_columns(["license"])
    steps = pa.Table.from_pylist(droidbot[1], schema=v1.STEPS)
    _, _, found = conform_parts([("episodes/a.parquet", episodes)], [("s", steps)], {"droidbot": "freeze"})
    assert found["reason"].to_list() == ["episodes/a.parquet: no column license"]
    _, _, found = conform_parts([("episodes/a.parquet", episodes)], [("s", steps)], {"other": "freeze"})
    assert found.height == 0


def test_every_quarantine_row_has_the_schema_and_a_snippet_cut_at_2000_characters(droidbot):
    episodes, steps = [dict(e) for e in droidbot[0]], [dict(s) for s in droidbot[1]]
    episodes[0]["task"] = "t" * 3000
    episodes[0]["num_steps"] = 13
    steps[5]["action"], steps[5]["origin"] = None, None  # an observation-only step with an error
    ep, st = pa.Table.from_pylist(episodes, schema=v1.EPISODES), pa.Table.from_pylist(steps, schema=v1.STEPS)
    table = quarantine_rows(validate(ep, st), ep, st, "run-q")
    assert table.schema == v1.QUARANTINE
    rows = {r["rule"]: r for r in table.to_pylist()}
    assert len(rows["episode.num_steps_mismatch"]["snippet"]) == 2000
    assert rows["episode.num_steps_mismatch"]["snippet"].startswith('{"episode_id":')
    assert rows["origin.missing"]["snippet"] is None and rows["origin.missing"]["location"] == "step 5"


def test_severities_must_name_known_rules_and_skipped_rules_decide_nothing(droidbot):
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    ep, st = pa.Table.from_pylist(episodes, schema=v1.EPISODES), pa.Table.from_pylist(steps, schema=v1.STEPS)
    with pytest.raises(ValueError) as e:
        validate(ep, st, severity={"z.rule": "warning", "a.rule": "error", "step.is_last": "warning"})
    assert str(e.value) == "severity given for unknown rules: a.rule, z.rule"
    with pytest.raises(ValueError) as e:
        validate(ep, st, severity={"step.is_last": "fatal"})
    assert str(e.value) == "severity for step.is_last must be 'error' or 'warning', not 'fatal'"
    steps[3]["action"] = {**steps[3]["action"], "x": 1.5}
    st = pa.Table.from_pylist(steps, schema=v1.STEPS)
    assert validate(ep, st).bad_episodes == [episodes[0]["episode_id"]]
    skipped = validate(ep, st, skip=("step.coordinate_out_of_range",))
    assert skipped.findings.height == 0 and skipped.bad_episodes == [] and skipped.steps.num_rows == 12
