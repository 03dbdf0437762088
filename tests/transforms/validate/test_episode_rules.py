"""Episode-level rules and what readers warned about, with the exact reasons: vocabularies, required fields
(no step to name), reader warnings however the env holds them, an action without a kind."""

import json

import pyarrow as pa

from schemas import v1
from transforms.validate.check import validate


def _findings(episodes, steps):
    outcome = validate(pa.Table.from_pylist(episodes, schema=v1.EPISODES), pa.Table.from_pylist(steps, schema=v1.STEPS))
    return [(f["rule"], f["step_id"], f["reason"], f["severity"]) for f in outcome.findings.iter_rows(named=True)]


def test_each_episode_vocabulary_names_the_field_and_its_value(droidbot):
    episodes, steps = droidbot
    for field, value in (("domain", "androidx"), ("platform", "palm"), ("outcome", "won")):
        found = _findings([{**episodes[0], field: value}], steps)
        assert (f"vocab.{field}", None, f"{field} {value} is not in the vocabulary", "error") in found


def test_a_required_episode_field_that_is_null_names_no_step(droidbot):
    episodes, steps = droidbot
    assert _findings([{**episodes[0], "outcome": None}], steps) == [
        ("schema.required_null", None, "outcome is null", "error")]


def test_an_action_without_a_kind_is_a_required_field(droidbot):
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    steps[2]["action"] = {**steps[2]["action"], "kind": None}
    assert _findings(episodes, steps) == [("schema.required_null", steps[2]["step_id"], "action.kind is null", "error")]


def test_reader_warnings_are_read_from_the_env_however_it_holds_them(droidbot):
    episodes, steps = droidbot
    first, second = dict(episodes[0]), {**episodes[0], "episode_id": "e2"}
    first["env"] = '{"note": "ingest_warnings", "x": '  # names the key, and is not JSON
    second["env"] = json.dumps({"ingest_warnings": ["a plain string", {"rule": "r1", "reason": "kept raw"}]})
    steps_two = [*steps, *[{**s, "episode_id": "e2", "step_id": f"e2:{s['step_index']}"} for s in steps]]
    found = [f for f in _findings([first, second], steps_two) if f[0] == "ingest.kept_unknown"]
    assert found == [("ingest.kept_unknown", None, "r1: kept raw", "warning")]
    for env in ({"note": "ingest_warnings"}, {"ingest_warnings": {"rule": "r"}}, {"ingest_warnings": None}):
        assert _findings([{**episodes[0], "env": json.dumps(env)}], steps) == []


def test_structure_findings_name_the_episode_and_say_what_is_off(droidbot):
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    eid = episodes[0]["episode_id"]
    gap = [*steps[:11], {**steps[11], "step_index": 12, "step_id": f"{eid}:12"}]
    assert _findings(episodes, gap) == [
        ("step.index_not_contiguous", None, "12 steps with step_index 0..12 (12 distinct)", "error")]
    firsts = [*steps[:5], {**steps[5], "is_first": True}, *steps[6:]]
    assert _findings(episodes, firsts) == [("step.is_first", None, "2 steps marked is_first; step 0 marked: true",
                                            "error")]
    lasts = [*steps[:11], {**steps[11], "is_last": False}]
    assert _findings(episodes, lasts) == [("step.is_last", None, "0 steps marked is_last; last step marked: false",
                                           "error")]
    assert _findings(episodes, [{**s, "observation": {**s["observation"], "kind": None}} if s["step_index"] == 4
                                else s for s in steps]) == [
        ("schema.required_null", steps[4]["step_id"], "observation.kind is null", "error")]
    empty = {**steps[2], "observation": {**steps[2]["observation"], "text": None, "screenshot": None}}
    assert _findings(episodes, [*steps[:2], empty, *steps[3:]]) == [
        ("observation.empty", steps[2]["step_id"], "screen observation has neither text nor screenshot", "error")]


def test_steps_are_judged_in_step_order_whatever_the_row_order(droidbot):
    import datetime as dt

    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    t0 = dt.datetime(2021, 12, 6, 20, 44, 49, tzinfo=dt.timezone.utc)
    for s in steps:
        s["timestamp"] = t0 + dt.timedelta(seconds=s["step_index"])
    assert _findings(episodes, list(reversed(steps))) == []
    steps[6]["timestamp"] = t0
    assert _findings(episodes, list(reversed(steps))) == [
        ("step.timestamp_decreasing", steps[6]["step_id"],
         "timestamp 2021-12-06 20:44:49.000000+00:00 is before the previous step's 2021-12-06 20:44:54.000000+00:00",
         "error")]


def _outcome(episodes, steps):
    return validate(pa.Table.from_pylist(episodes, schema=v1.EPISODES), pa.Table.from_pylist(steps, schema=v1.STEPS))


def test_step_and_structure_findings_carry_their_episode_and_remove_it(droidbot):
    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    eid = episodes[0]["episode_id"]
    cases = {
        "action.kind": [{**s, "action": {**s["action"], "kind": None}} if s["step_index"] == 2 else s for s in steps],
        "observation.kind": [{**s, "observation": {**s["observation"], "kind": None}} if s["step_index"] == 2 else s
                             for s in steps],
        "gap": [*steps[:11], {**steps[11], "step_index": 12, "step_id": f"{eid}:12"}],
        "last": [{**s, "is_last": s["step_index"] == 5} for s in steps],
        "terminal": [{**s, "is_terminal": s["step_index"] == 3} for s in steps],
    }
    for name, rows in cases.items():
        outcome = _outcome(episodes, rows)
        assert outcome.bad_episodes == [eid], name
        assert outcome.findings["episode_id"].to_list() == [eid] * outcome.findings.height, name
    found = _findings(episodes, cases["last"])
    assert found == [("step.is_last", None, "1 steps marked is_last; last step marked: false", "error")]
    assert _findings(episodes, cases["terminal"]) == [
        ("step.terminal_not_last", steps[3]["step_id"], "step 3 is terminal but not last", "error")]


def test_structure_findings_of_ids_times_and_orphans_name_their_episode_and_reason(droidbot):
    import datetime as dt

    episodes, steps = droidbot[0], [dict(s) for s in droidbot[1]]
    eid = episodes[0]["episode_id"]
    renamed = [{**s, "step_id": f"{eid}:x3"} if s["step_index"] == 3 else s for s in steps]
    assert _findings(episodes, renamed) == [
        ("step.step_id_mismatch", f"{eid}:x3", f"step_id {eid}:x3 is not episode_id:step_index (3)", "error")]
    # a timestamp equal to the previous one is not going back; an earlier one is, in its episode
    t0 = dt.datetime(2021, 12, 6, 20, 44, 49, tzinfo=dt.timezone.utc)
    timed = [{**s, "timestamp": t0 + dt.timedelta(seconds=min(s["step_index"], 5))} for s in steps]
    assert _findings(episodes, timed) == []
    timed[8]["timestamp"] = t0
    outcome = _outcome(episodes, timed)
    assert [(f["rule"], f["episode_id"], f["step_id"]) for f in outcome.findings.iter_rows(named=True)] == [
        ("step.timestamp_decreasing", eid, steps[8]["step_id"])]
    # an episode row without steps, and steps without an episode row
    other = {**episodes[0], "episode_id": "e2"}
    orphans = [{**s, "episode_id": "e3", "step_id": f"e3:{s['step_index']}"} for s in steps[:2]]
    outcome = _outcome([*episodes, other], [*steps, *orphans])
    found = [(f["rule"], f["episode_id"], f["step_id"], f["reason"]) for f in outcome.findings.iter_rows(named=True)
             if f["rule"] in ("episode.no_steps", "step.orphan")]  # (the two-step fragment also lacks is_last)
    assert found == [("episode.no_steps", "e2", None, "the episode has no step rows"),
                     *[("step.orphan", "e3", s["step_id"], "no episode row has this episode_id") for s in orphans]]
    assert outcome.bad_episodes == ["e2", "e3"]
