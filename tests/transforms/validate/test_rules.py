"""Each hot-path rule broken on purpose in one place of the real DroidBot run (ingested once), with the exact
rule id it must raise; the untouched run raises nothing."""

import datetime as dt
import json

import pyarrow as pa
import pytest

from schemas import v1
from tests.conftest import SAMPLES
from transforms.validate.check import conform_parts, quarantine_rows, validate

RUN = SAMPLES / "android" / "droidbot-run"


def check(episodes, steps, **kw):
    return validate(pa.Table.from_pylist(episodes, schema=v1.EPISODES),
                    pa.Table.from_pylist(steps, schema=v1.STEPS), **kw)


def rules(outcome):
    return sorted(set(outcome.findings["rule"].to_list()))


def test_the_real_run_passes_with_zero_findings(droidbot):
    outcome = check(*droidbot)
    assert outcome.findings.height == 0 and outcome.bad_episodes == []
    assert outcome.steps.num_rows == 12 and outcome.episodes.num_rows == 1


def _set(step, path, value):
    if "." in path:
        outer, inner = path.split(".")
        step[outer] = {**step[outer], inner: value}
    else:
        step[path] = value


ALTERATIONS = [
    # (step index, field, new value, the rule it must raise)
    (2, "is_first", True, "step.is_first"),
    (11, "is_last", False, "step.is_last"),
    (3, "is_terminal", True, "step.terminal_not_last"),
    (3, "action.x", 1.2, "step.coordinate_out_of_range"),
    (3, "action.y", float("nan"), "step.coordinate_out_of_range"),
    (2, "action.kind", "navigate", "action.kind_not_allowed"),
    (2, "action.kind", "teleport", "vocab.action_kind"),
    (2, "observation.kind", "hologram", "vocab.observation_kind"),
    (5, "origin", None, "origin.missing"),
    (5, "origin", "dreamed", "origin.not_in_vocabulary"),
    (5, "origin", "simulated", "origin.not_real"),
    (5, "step_id", "x:5", "step.step_id_mismatch"),
    (0, "is_terminal", None, "schema.required_null"),
]


@pytest.mark.parametrize("index, field, value, rule", ALTERATIONS, ids=[f"{a[3]}:{a[1]}" for a in ALTERATIONS])
def test_one_altered_step_raises_its_rule_and_quarantines_the_episode(droidbot, index, field, value, rule):
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    _set(steps[index], field, value)
    outcome = check(episodes, steps)
    assert rules(outcome) == [rule]
    eid = episodes[0]["episode_id"]
    assert outcome.bad_episodes == [eid] and outcome.steps.num_rows == 0 and outcome.episodes.num_rows == 0
    row = quarantine_rows(outcome, pa.Table.from_pylist(episodes, schema=v1.EPISODES),
                          pa.Table.from_pylist(steps, schema=v1.STEPS), "run-x").to_pylist()[0]
    assert row["stage"] == "validate" and row["rule"] == rule and row["_run_id"] == "run-x"
    assert row["source_uri"] == "droidbot-run"
    if rule not in ("step.is_first", "step.is_last"):  # those two are judged per episode
        assert row["location"] == f"step {index}" and row["record_id"] == steps[index]["step_id"]
    assert f"episode {eid} quarantined whole: 12 steps" in row["reason"]


def test_tap_on_a_view_missing_from_the_screen_it_was_made_on(droidbot):
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    element = json.loads(steps[3]["action"]["element"])  # the ImageView, temp_id 5 of state 548af0...
    _set(steps[3], "action.element", json.dumps({**element, "view_str": "0" * 32}))
    outcome = check(episodes, steps)
    assert rules(outcome) == ["android.tap_target_missing"]
    assert outcome.findings["reason"][0] == f"target view {'0' * 32} is not in the view hierarchy"
    # without DroidBot's view id the bounds decide: [[0,171],[1080,2148]] is a node, [[0,0],[9,9]] is not
    _set(steps[3], "action.element", json.dumps({**element, "view_str": None, "bounds": [[0, 0], [9, 9]]}))
    assert rules(check(episodes, steps)) == ["android.tap_target_missing"]
    _set(steps[3], "action.element", json.dumps({**element, "view_str": None}))
    assert rules(check(episodes, steps)) == []


def test_timestamps_must_not_go_back(droidbot):
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    t0 = dt.datetime(2021, 12, 6, 20, 44, 49, tzinfo=dt.timezone.utc)
    for i, s in enumerate(steps):
        s["timestamp"] = t0 + dt.timedelta(seconds=5 * i)
    steps[4]["timestamp"] = None  # unknown times are skipped, not compared
    assert rules(check(episodes, steps)) == []
    steps[7]["timestamp"] = t0
    outcome = check(episodes, steps)
    assert rules(outcome) == ["step.timestamp_decreasing"]
    assert outcome.findings["step_id"][0] == steps[7]["step_id"]


def test_episode_level_rules(droidbot):
    episodes, steps = [dict(e) for e in droidbot[0]], droidbot[1]
    assert rules(check([{**episodes[0], "num_steps": 13}], steps)) == ["episode.num_steps_mismatch"]
    assert rules(check([{**episodes[0], "domain": "androidx"}], steps)) == ["vocab.domain"]
    assert rules(check(episodes, steps[:11])) == ["episode.num_steps_mismatch", "step.is_last"]
    gap = [dict(s) for s in steps]
    gap[11] = {**gap[11], "step_index": 12, "step_id": f"{episodes[0]['episode_id']}:12"}
    assert rules(check(episodes, gap)) == ["step.index_not_contiguous"]
    assert rules(check(episodes, [])) == ["episode.no_steps"]
    assert rules(check([], steps)) == ["step.orphan"]


def test_observation_without_text_or_screenshot(droidbot):
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    _set(steps[2], "observation.text", " ")
    assert rules(check(episodes, steps)) == []  # its screenshot (screen_2021-12-06_204500.jpg) is still there
    _set(steps[2], "observation.screenshot", None)
    assert rules(check(episodes, steps)) == ["observation.empty"]


def test_severity_override_keeps_the_episode(droidbot):
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    _set(steps[3], "action.x", 1.2)
    outcome = check(episodes, steps, severity={"step.coordinate_out_of_range": "warning"})
    assert outcome.counts() == {"warning": {"step.coordinate_out_of_range": 1}}
    assert outcome.bad_episodes == [] and outcome.steps.num_rows == 12


def _parts(droidbot, extra=None, drop=None):
    episodes = pa.Table.from_pylist(droidbot[0], schema=v1.EPISODES)
    steps = pa.Table.from_pylist(droidbot[1], schema=v1.STEPS)
    if extra:
        steps = steps.append_column(extra, pa.array([None] * 11 + ["dbg"]))
    if drop:
        steps = steps.drop_columns([drop])
    return [("episodes/a.parquet", episodes)], [("steps/a.parquet", steps)]


@pytest.mark.parametrize("mode, severity, kept", [("evolve", "warning", 12), ("freeze", "error", 0),
                                                   ("discard_row", "error", 0)])
def test_contract_on_a_new_column(droidbot, mode, severity, kept):
    eps, sts = _parts(droidbot, extra="debug_note")
    episodes, steps, prior = conform_parts(eps, sts, {"droidbot": mode})
    outcome = validate(episodes, steps, prior=prior)
    expected = 12 if mode == "freeze" else 1  # freeze condemns every row of the source, discard_row the one
    assert outcome.findings.height == expected
    assert set(outcome.findings["rule"]) == {"schema.new_column"} and set(outcome.findings["severity"]) == {severity}
    assert outcome.steps.num_rows == kept
    assert ("debug_note" in outcome.steps.column_names) == (mode == "evolve")


def test_contract_on_a_missing_column(droidbot):
    eps, sts = _parts(droidbot, drop="origin")
    episodes, steps, prior = conform_parts(eps, sts, {"default": "evolve"})
    assert set(validate(episodes, steps, prior=prior).findings["rule"]) == {"origin.missing"}
    episodes, steps, prior = conform_parts(eps, sts, {"droidbot": "freeze"})
    assert set(validate(episodes, steps, prior=prior).findings["rule"]) == {"schema.missing_column",
                                                                            "origin.missing"}
    with pytest.raises(ValueError, match="contract mode for 'droidbot' is 'strict'"):
        conform_parts(eps, sts, {"droidbot": "strict"})


def test_a_tap_outside_every_detected_box_is_a_warning_for_aitw_and_an_error_for_droidbot(droidbot):
    """DroidBot lists every view: a tap on a view not on the screen is a broken step. AITW's boxes come from
    screen detection: the same finding there is kept, as a warning."""
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    tap = next(i for i, s in enumerate(steps) if s["action"] and s["action"]["kind"] == "tap")
    element = json.loads(steps[tap]["action"]["element"])
    steps[tap]["action"] = {**steps[tap]["action"], "element": json.dumps({**element, "view_str": "0" * 32})}
    as_droidbot = check(episodes, steps)
    assert rules(as_droidbot) == ["android.tap_target_missing"] and as_droidbot.bad_episodes
    as_aitw = check([{**e, "source_format": "aitw"} for e in episodes], steps)
    assert as_aitw.findings["severity"].to_list() == ["warning"] and as_aitw.bad_episodes == []
    forced = check([{**e, "source_format": "aitw"} for e in episodes], steps,
                   severity={"android.tap_target_missing": "error"})
    assert forced.bad_episodes  # an explicit severity still wins


def test_what_a_reader_kept_without_knowing_it_is_a_warning_finding_and_the_episode_is_kept(droidbot):
    from ingest.record import warn

    episodes, steps = [dict(e) for e in droidbot[0]], droidbot[1]
    env = json.loads(episodes[0]["env"] or "{}")
    warn(env, "unknown_pickle_class", "step_3.pkl.gz holds agentlab.llm.llm_utils.Discussion, kept as its state")
    warn(env, "unknown_pickle_class", "step_3.pkl.gz holds agentlab.llm.llm_utils.Discussion, kept as its state")
    warn(env, "unknown_event", "event 4: kind SpinEvent kept raw")
    episodes[0]["env"] = json.dumps(env)
    outcome = check(episodes, steps)
    assert outcome.bad_episodes == [] and outcome.steps.num_rows == 12
    found = outcome.findings.to_dicts()
    assert [(f["rule"], f["severity"], f["reason"]) for f in found] == [
        ("ingest.kept_unknown", "warning",
         "unknown_pickle_class: step_3.pkl.gz holds agentlab.llm.llm_utils.Discussion, kept as its state"),
        ("ingest.kept_unknown", "warning", "unknown_event: event 4: kind SpinEvent kept raw")]
    assert {f["episode_id"] for f in found} == {episodes[0]["episode_id"]}


def test_a_point_off_its_screen_is_a_warning_that_keeps_the_episode(droidbot):
    """`ingest.coords.place` keeps an off-screen point at the edge and says so in raw.point: validate names
    the step with the source's numbers and space, and keeps the run (the agent really acted there)."""
    from ingest.coords import Space, place

    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    x, y, point = place(1100, 2500, Space("screen", 1080, 2400))
    assert (x, y) == (1.0, 1.0) and point["outside_screen"] is True
    _set(steps[3], "action.raw", json.dumps({"point": point}, separators=(",", ":")))
    _set(steps[4], "action.raw", json.dumps({"point": place(540, 1200, Space("screen", 1080, 2400))[2]},
                                            separators=(",", ":")))
    outcome = check(episodes, steps)
    assert outcome.counts() == {"warning": {"action.point_outside_screen": 1}}
    (finding,) = outcome.findings.to_dicts()
    assert finding["step_id"] == steps[3]["step_id"]
    assert finding["reason"] == "the point (1100, 2500) in screen lies outside its 1080x2400 screen"
    assert outcome.bad_episodes == [] and outcome.steps.num_rows == 12
