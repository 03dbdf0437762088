"""ingest.arrow: readers' records to schema-v1 rows (ids, first/last/terminal, start and end times, branches,
quarantine rows) and the per-value checks that reject a record naming its step and field, with the budget's
exact edges. (Budgets and the common mismatches: tests/ingest/test_safe_budgets.py.)"""

import datetime as dt

import pytest

import ingest.arrow as arrow
from ingest.arrow import SchemaMismatch, TableBuilder, checked_env, checked_episode, episode_problem, step_problem
from ingest.record import Action, Branch, Episode, Observation, Rejected, Step, StepColumns, episode_id
from ingest.source import Budgets
from ingest.value_steps import field_arrays
from schemas import v1
from schemas.branches import branch_key

UTC = dt.timezone.utc


def _step(obs=None, action=None, **rest) -> Step:
    return Step(obs or Observation(kind="screen"), action if action is not None else Action(kind="tap"), **rest)


def _episode(steps=None, **fields) -> Episode:
    fields.setdefault("key", "k")
    return Episode(domain="android", platform="android", steps=steps or [_step(), _step()], **fields)


def _add(builder: TableBuilder, ep: Episode, source_format: str = "droidbot") -> str:
    return builder.add_episode(ep, source_format=source_format, source_uri="in/x", source_sha256="abc",
                               ingestor_version="1.2")


# --- the rows ---------------------------------------------------------------------------------------------------


def test_an_episode_becomes_one_row_with_its_source_and_its_first_and_last_known_time():
    builder = TableBuilder("run-1")
    times = [None, dt.datetime(2024, 1, 1, 12, 0, 5), dt.datetime(2024, 1, 1, 13, 0, tzinfo=dt.timezone(
        dt.timedelta(hours=2))), dt.datetime(2024, 1, 1, 12, 0, 1, tzinfo=UTC)]
    ep = _episode([_step(timestamp=t) for t in times], task="open the app", agent="m", outcome="success",
                  reward=1.0, env={"b": 1, "a": [2]}, license="MIT")
    eid = _add(builder, ep)
    assert eid == episode_id("droidbot", "in/x", "k")
    [row] = builder.tables()["episodes"].to_pylist()
    assert row["episode_id"] == eid
    # a naive time is UTC, an aware one converted: 13:00+02:00 is 11:00 UTC, the earliest
    assert row["started_at"] == dt.datetime(2024, 1, 1, 11, 0, tzinfo=UTC)
    assert row["ended_at"] == dt.datetime(2024, 1, 1, 12, 0, 5, tzinfo=UTC)
    assert row["num_steps"] == 4 and row["env"] == '{"a":[2],"b":1}'
    assert (row["task"], row["agent"], row["outcome"], row["reward"], row["license"]) == \
        ("open the app", "m", "success", 1.0, "MIT")
    assert (row["domain"], row["platform"], row["source_format"]) == ("android", "android", "droidbot")
    assert (row["source_uri"], row["source_sha256"], row["ingest_run_id"], row["_run_id"]) == \
        ("in/x", "abc", "run-1", "run-1")
    assert row["ingestor_version"] == "droidbot/1.2"


def test_an_episode_without_any_time_has_no_start_or_end():
    builder = TableBuilder("run")
    _add(builder, _episode())
    [row] = builder.tables()["episodes"].to_pylist()
    assert row["started_at"] is None and row["ended_at"] is None


@pytest.mark.parametrize("terminated", [True, False])
def test_every_step_row_carries_its_index_id_position_and_time(terminated):
    builder = TableBuilder("run")
    final = Observation(kind="screen", text="done")
    t0 = dt.datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
    steps = [_step(Observation(kind="screen", text=f"s{i}"), Action(kind="tap", x=0.1 * i),
                   timestamp=t0 + dt.timedelta(seconds=i), reward=float(i), reasoning=f"r{i}",
                   action_inferred=i == 1) for i in range(3)]
    steps[2].action = None
    eid = _add(builder, _episode(steps, terminated=terminated, final_observation=final))
    assert builder.num_steps == 3
    rows = builder.tables()["steps"].to_pylist()
    assert [r["step_index"] for r in rows] == [0, 1, 2]
    assert [r["step_id"] for r in rows] == [f"{eid}:0", f"{eid}:1", f"{eid}:2"]
    assert [r["episode_id"] for r in rows] == [eid] * 3 and [r["domain"] for r in rows] == ["android"] * 3
    assert [r["timestamp"] for r in rows] == [t0, t0 + dt.timedelta(seconds=1), t0 + dt.timedelta(seconds=2)]
    assert [r["observation"]["text"] for r in rows] == ["s0", "s1", "s2"]
    assert [r["action"] and r["action"]["x"] for r in rows] == [0.0, 0.1, None]
    assert [r["reward"] for r in rows] == [0.0, 1.0, 2.0] and [r["reasoning"] for r in rows] == ["r0", "r1", "r2"]
    assert [r["is_first"] for r in rows] == [True, False, False]
    assert [r["is_last"] for r in rows] == [False, False, True]
    assert [r["is_terminal"] for r in rows] == [False, False, terminated]
    assert [r["final_observation"] and r["final_observation"]["text"] for r in rows] == [None, None, "done"]
    assert [r["action_inferred"] for r in rows] == [False, True, False]
    for r in rows:
        assert (r["origin"], r["parent_step_id"], r["branch_id"], r["labeler"], r["_run_id"]) == \
            ("real", None, None, None, "run")


def test_a_one_step_episode_is_first_last_and_terminal_at_once():
    builder = TableBuilder("run")
    _add(builder, _episode([_step()], terminated=True))
    [row] = builder.tables()["steps"].to_pylist()
    assert (row["is_first"], row["is_last"], row["is_terminal"]) == (True, True, True)
    assert row["final_observation"] is None  # the episode has none


def test_steps_of_two_episodes_follow_each_other_with_their_own_ids():
    builder = TableBuilder("run")
    first, second = _add(builder, _episode(key="a")), _add(builder, _episode([_step()], key="b"))
    rows = builder.tables()["steps"].to_pylist()
    assert [(r["episode_id"], r["step_index"], r["is_first"], r["is_last"]) for r in rows] == \
        [(first, 0, True, False), (first, 1, False, True), (second, 0, True, True)]


def test_a_branch_row_names_its_parent_step_and_its_id_from_the_action():
    builder = TableBuilder("run")
    tap = Action(kind="tap", x=0.5, y=0.25, raw='{"src": 1}')
    ep = _episode([_step(), _step(), _step()], branches=[
        Branch(1, "simulated", tap, Observation(kind="screen", text="next"), strategy="s", labeler="wm"),
        Branch(2, "perturbed", Action(kind="back"), Observation(kind="screen"), request_key="0123456789abcdefXYZ")])
    eid = _add(builder, ep)
    rows = builder.tables()["branches"].to_pylist()
    key = branch_key(f"{eid}:1", vars(tap))
    assert rows[0]["branch_id"] == key and rows[0]["step_id"] == f"{eid}:1:sim-{key}"
    assert (rows[0]["parent_step_id"], rows[0]["episode_id"], rows[0]["step_index"]) == (f"{eid}:1", eid, 1)
    assert (rows[0]["origin"], rows[0]["strategy"], rows[0]["labeler"], rows[0]["request_key"]) == \
        ("simulated", "s", "wm", None)
    assert rows[0]["action"]["x"] == 0.5 and rows[0]["next_observation"]["text"] == "next"
    assert (rows[0]["domain"], rows[0]["_run_id"]) == ("android", "run")
    # a request key names the branch's step (its first 16 characters); the branch id stays the action's
    assert rows[1]["step_id"] == f"{eid}:2:sim-0123456789abcdef"
    assert rows[1]["branch_id"] == branch_key(f"{eid}:2", vars(Action(kind="back")))
    assert (rows[1]["origin"], rows[1]["request_key"]) == ("perturbed", "0123456789abcdefXYZ")


def test_a_rejected_record_becomes_a_quarantine_row_of_the_builders_stage():
    builder = TableBuilder("run-2", stage="validate")
    builder.add_rejected(Rejected("parse_error", "bad line", "f.jsonl", line=3, snippet="x" * 2500,
                                  record_id="r"), source_uri="in/f")
    builder.add_rejected(Rejected("missing_file", "gone"), source_uri="in/g")
    rows = builder.tables()["quarantine"].to_pylist()
    assert rows[0] == {"stage": "validate", "rule": "parse_error", "reason": "bad line", "source_uri": "in/f",
                       "location": "f.jsonl", "line": 3, "record_id": "r", "snippet": "x" * 2000,
                       "snippet_blob": None, "_run_id": "run-2"}
    assert rows[1]["snippet"] is None and rows[1]["location"] is None and rows[1]["line"] is None
    assert TableBuilder("r").stage == "ingest"


# --- what does not fit ------------------------------------------------------------------------------------------


def test_a_text_at_the_budget_fits_one_character_more_does_not():
    limit = 10
    assert step_problem(_step(Observation(kind="screen", text="é" * limit)), limit) is None
    assert step_problem(_step(Observation(kind="screen", text="a" * limit)), limit) is None
    assert step_problem(_step(Observation(kind="screen", ui_tree=b"a" * limit)), limit) is None
    over = "observation.text: 11 characters, over the field_bytes budget of 10 bytes (raise it with " \
           "TRAJFORGE_BUDGET_FIELD_BYTES=<larger>)"
    assert step_problem(_step(Observation(kind="screen", text="é" * (limit + 1))), limit) == over
    assert step_problem(_step(Observation(kind="screen", text="a" * (limit + 1))), limit) == over
    assert step_problem(_step(Observation(kind="screen", ui_tree=b"a" * (limit + 1))), limit) == \
        over.replace("observation.text", "observation.ui_tree")
    assert step_problem(_step(reasoning="a" * (limit + 1)), limit) == over.replace("observation.text", "reasoning")
    assert step_problem(_step(reasoning="a" * limit), limit) is None


def test_the_budget_defaults_to_the_processs_field_bytes(monkeypatch):
    monkeypatch.setattr(arrow, "default_budgets", lambda: Budgets(field_bytes=8))
    assert step_problem(_step(Observation(kind="screen", text="abcdefgh"))) is None
    assert step_problem(_step(Observation(kind="screen", text="abcdefghi"))).startswith(
        "observation.text: 9 characters")
    assert episode_problem(_episode(task="abcdefghi")) == (None, "task: 9 characters, over the field_bytes budget "
                                                                 "of 8 bytes (raise it with TRAJFORGE_BUDGET_"
                                                                 "FIELD_BYTES=<larger>)")
    assert TableBuilder("run").field_limit == 8


def test_non_ascii_text_passes_and_a_lone_surrogate_anywhere_is_named():
    surrogate = "a string holding a lone surrogate (not encodable as UTF-8)"
    assert step_problem(_step(Observation(kind="screen", title="écran 日本"))) is None
    for field in ("kind", "text", "ui_tree", "url", "title", "screenshot"):
        obs = Observation(**{"kind": "screen", field: "é\udc80"})
        assert step_problem(_step(obs)) == f"observation.{field}: {surrogate}"
    for field in ("kind", "text", "element", "direction", "tool_name", "arguments", "code", "raw"):
        action = Action(**{"kind": "tap", field: "é\ud800"})
        assert step_problem(_step(action=action)) == f"action.{field}: {surrogate}"


def test_integers_past_int32_and_non_integers_are_named():
    for field in ("exit_code", "width", "height"):
        for fits in ((1 << 31) - 1, -(1 << 31), 0):
            assert step_problem(_step(Observation(kind="screen", **{field: fits}))) is None
        for bad in (1 << 31, -(1 << 31) - 1):
            problem = step_problem(_step(Observation(kind="screen", **{field: bad})))
            assert problem.startswith(f"observation.{field}: int {bad} does not fit int32 (") and problem[-1] == ")"
    assert step_problem(_step(Observation(kind="screen", width="wide"))).startswith(
        "observation.width: str 'wide' does not fit int32")
    # a whole float is stored as its integer; one with a fraction would be truncated (1.5 -> 1) and is named
    assert step_problem(_step(Observation(kind="terminal", exit_code=2.0))) is None
    for bad in (1.5, -0.25, float("nan"), float("inf")):
        assert step_problem(_step(Observation(kind="terminal", exit_code=bad))) == (
            f"observation.exit_code: float {bad!r} is not a whole number (int32 would store it truncated)")


def test_floats_and_bools_are_checked_field_by_field():
    for field in ("x", "y", "x2", "y2", "duration_s"):
        assert step_problem(_step(action=Action(kind="tap", **{field: 0.5}))) is None
        assert step_problem(_step(action=Action(kind="tap", **{field: "0.5"}))).startswith(
            f"action.{field}: str '0.5' does not fit double")
    assert step_problem(_step(Observation(kind="screen", is_error=True))) is None
    assert step_problem(_step(Observation(kind="screen", is_error="yes"))).startswith(
        "observation.is_error: str 'yes' does not fit bool")


def test_a_refused_value_is_shown_cut_at_60_characters_and_the_error_at_its_first_line():
    shown_60 = "a" * 58  # repr adds the quotes: 60 characters, shown whole
    problem = step_problem(_step(Observation(kind="screen", width=shown_60)))
    assert problem.startswith(f"observation.width: str '{shown_60}' does not fit int32 (")
    long_value = "a" * 59
    problem = step_problem(_step(Observation(kind="screen", width=long_value)))
    assert problem.startswith(f"observation.width: str '{'a' * 56}... does not fit int32 (")
    problem = step_problem(_step(Observation(kind="screen", width="a" * 200)))
    why = problem.split(" does not fit int32 (", 1)[1]
    assert why.endswith(")") and len(why) == 121 and "\n" not in why  # the error's first 120 characters
    assert why.startswith("Could not convert")


def test_keys_must_be_a_list_of_strings_within_the_budget():
    def problem(keys, limit=10):
        return step_problem(_step(action=Action(kind="key", keys=keys)), limit)

    assert problem(["ctrl", "c"]) is None and problem(["é", "ß"]) is None and problem([]) is None
    assert problem(["é", "a\udc80", "b\udc80"]) == \
        "action.keys: a string holding a lone surrogate (not encodable as UTF-8)"
    assert problem(["é", "a" * 11]).startswith("action.keys: 11 characters, over the field_bytes budget of 10 bytes")
    assert problem(["é" * 10]) is None
    assert problem({"ctrl": 1}).startswith("action.keys: dict {'ctrl': 1} does not fit list<item: string>")
    assert problem(("ctrl",)) is None  # pyarrow takes a tuple as a list
    assert problem("ctrl") == "action.keys: str 'ctrl' is not a list of keys"  # never stored as c, t, r, l
    assert problem([1]).startswith("action.keys: list [1] does not fit list<item: string>")


def test_a_timestamp_that_is_not_a_datetime_is_shown_cut_at_40_characters():
    text = "2024-01-01T00:00:00 and a long tail of words"
    assert step_problem(_step(timestamp=text)) == f"timestamp: str {text[:40]!r} is not a datetime"
    assert step_problem(_step(timestamp=dt.datetime(2024, 1, 1))) is None


def test_a_reward_pyarrow_reads_as_a_double_passes_any_other_is_named():
    assert step_problem(_step(reward=1)) is None and step_problem(_step(reward=0.5)) is None
    assert step_problem(_step(reward="high")).startswith("reward: str 'high' does not fit double")
    assert episode_problem(_episode(reward=1)) is None
    assert episode_problem(_episode(reward="high"))[1].startswith("reward: str 'high' does not fit double")


@pytest.mark.parametrize("field", ["domain", "platform", "task", "agent", "outcome", "license"])
def test_every_text_field_of_the_episode_is_checked(field):
    ep = _episode()
    setattr(ep, field, "x\udc80")
    assert episode_problem(ep) == (None, f"{field}: a string holding a lone surrogate (not encodable as UTF-8)")


def test_the_final_observation_and_each_step_are_named_in_what_does_not_fit():
    ep = _episode(final_observation=Observation(kind="screen", width=1 << 40))
    assert episode_problem(ep)[0] is None
    assert episode_problem(ep)[1].startswith("final_observation.width: int 1099511627776 does not fit int32")
    ep = _episode([_step(), _step(), _step(Observation(kind="screen", text="\udc80"))])
    assert episode_problem(ep) == ("step 2", "observation.text: a string holding a lone surrogate (not encodable "
                                             "as UTF-8)")
    assert episode_problem(ep, steps=False) is None
    ep = _episode([_step(), Step(None, Action(kind="tap"))])
    record, problem = episode_problem(ep)
    assert record == "step 1" and problem.startswith("not a step of Observation and Action (vars() argument")


def test_a_branch_must_leave_from_one_of_the_episodes_steps():
    def problem(step, action=None, next_obs=None):
        branch = Branch(step, "simulated", action or Action(kind="tap"), next_obs or Observation(kind="screen"))
        return episode_problem(_episode([_step(), _step()], branches=[branch]))

    assert problem(0) is None and problem(1) is None
    for bad in (2, -1, "1", 1.0):
        assert problem(bad) == ("branch 0", f"step: {bad!r} is not the index of one of the episode's steps")
    assert problem(1, action=Action(kind="tap", x="left"))[1].startswith("action.x: str 'left' does not fit")
    record, why = problem(1, next_obs=Observation(kind="screen", height=1 << 33))
    assert record == "branch 0" and why.startswith("next_observation.height: int 8589934592 does not fit int32 (")
    # the step's own fault is named first
    assert problem(5, action=Action(kind="tap", x="left"))[1].startswith("step: 5 is not the index")


def test_the_builder_names_episode_step_or_branch_and_keeps_nothing_of_a_rejected_episode():
    builder = TableBuilder("run")
    with pytest.raises(SchemaMismatch) as e:
        _add(builder, _episode(task="\udc80"))
    assert e.value.rejected == Rejected("schema_mismatch", "episode 'k': field task: a string holding a lone "
                                        "surrogate (not encodable as UTF-8)", "k", record_id=None)
    assert str(e.value) == e.value.rejected.reason
    with pytest.raises(SchemaMismatch) as e:
        _add(builder, _episode(key="", branches=[Branch(7, "simulated", Action(kind="tap"), Observation())]))
    assert e.value.rejected == Rejected("schema_mismatch", "the episode: branch 0 field step: 7 is not the index "
                                        "of one of the episode's steps", None, record_id="branch 0")
    with pytest.raises(SchemaMismatch) as e:  # the value's fault comes before the env's
        _add(builder, _episode(task="\udc80", env={"n": 1 << 70}))
    assert "field task:" in e.value.rejected.reason
    assert not builder.episodes and not builder.steps["step_id"] and not builder.branches


def test_checked_episode_names_its_where_and_record_and_the_env_it_cannot_write():
    ep = _episode(branches=[Branch(9, "simulated", Action(kind="tap"), Observation())])
    rejected = checked_episode(ep, "a.json")
    assert rejected == Rejected("schema_mismatch", "a.json: episode 'k': field step: 9 is not the index of one of "
                                "the episode's steps; the episode is quarantined whole", "a.json",
                                record_id="branch 0")
    ep = _episode(key="", env={"when": dt.date(2024, 1, 1), "n": 1 << 70})
    rejected = checked_episode(ep, "b.json")
    assert rejected.reason == "b.json: the episode: field env: cannot be written as JSON (Integer exceeds 64-bit " \
                              "range); the episode is quarantined whole"
    assert rejected.record_id is None and rejected.location == "b.json"
    ep = _episode(key="e7", env={"n": 1 << 70})
    assert checked_episode(ep, "c.json").record_id == "e7"
    # its steps were checked one by one by the reader: not again
    ep = _episode([_step(Observation(kind="screen", text="\udc80"))])
    assert checked_episode(ep, "d.json") is ep


def test_checked_env_keeps_what_orjson_writes_and_names_what_it_leaves_out():
    env = {"b": 1, "a": {"nested": [1, 2]}}
    assert checked_env(env) == (env, [])
    assert checked_env(env)[0] is env
    kept, dropped = checked_env({"ok": "x", 3: "three", "big": 1 << 70, "obj": object()})
    assert kept == {"ok": "x"}
    assert dropped[0] == "3: cannot be written as JSON (int key)"
    assert dropped[1] == "big: cannot be written as JSON (Integer exceeds 64-bit range)"
    assert dropped[2].startswith("obj: cannot be written as JSON (Type is not JSON serializable: object")


def test_the_tables_follow_the_schema_even_when_empty():
    tables = TableBuilder("run").tables()
    assert {name: t.num_rows for name, t in tables.items()} == \
        {"episodes": 0, "steps": 0, "branches": 0, "quarantine": 0}
    expected = {"episodes": v1.EPISODES, "steps": v1.STEPS, "branches": v1.BRANCHES, "quarantine": v1.QUARANTINE}
    assert {name: t.schema for name, t in tables.items()} == expected
    builder = TableBuilder("run")
    _add(builder, _episode(branches=[Branch(0, "simulated", Action(kind="tap"), Observation())]))
    builder.add_rejected(Rejected("parse_error", "bad"), source_uri="in/y")
    assert {name: t.schema for name, t in builder.tables().items()} == expected


def test_text_fields_take_strings_or_json_bytes_only():
    assert step_problem(_step(Observation(kind="screen", ui_tree="écran".encode()))) is None  # UTF-8 as orjson wrote
    assert step_problem(_step(Observation(kind="screen", ui_tree=7))).startswith(
        "observation.ui_tree: int 7 does not fit string")
    assert step_problem(_step(action=Action(kind="tap", arguments={"a": 1}))).startswith(
        "action.arguments: dict {'a': 1} does not fit string")


def test_the_builders_own_budget_applies_to_every_field_of_the_episode():
    builder = TableBuilder("run")
    builder.field_limit = 10
    for ep in (_episode(task="a" * 11), _episode([_step(), _step(reasoning="a" * 11)])):
        with pytest.raises(SchemaMismatch, match="11 characters, over the field_bytes budget of 10 bytes"):
            _add(builder, ep)
    _add(builder, _episode([_step(reasoning="a" * 10)], task="a" * 10))
    assert episode_problem(_episode(agent="a" * 11), limit=10)[1].startswith("agent: 11 characters")
    assert episode_problem(_episode([_step(reasoning="a" * 11)]), limit=10) == \
        ("step 0", "reasoning: 11 characters, over the field_bytes budget of 10 bytes (raise it with "
                   "TRAJFORGE_BUDGET_FIELD_BYTES=<larger>)")


# --- steps handed as values (StepColumns) -----------------------------------------------------------------------


class _Text(str):
    """A str subclass: not plainly a str, so pyarrow is asked."""


T1 = dt.datetime(2024, 1, 1, 12, 0, 5)
PLAIN = [
    _step(Observation(kind="screen", text="écran 日本", ui_tree=b'{"a":1}', width=1080, height=2400, exit_code=0),
          Action(kind="swipe", x=0.1, y=0.2, x2=0.3, y2=0.4, duration_s=1.0, element="é" * 10), timestamp=T1),
    Step(Observation(kind="none"), None, dt.datetime(2024, 1, 1, 13, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))),
    _step(Observation(kind="tool_result", text="r", is_error=True), Action(kind="tool_call", tool_name="t",
          arguments='{"x":1}', raw=b'{"call":1}'), reward=0.5, reasoning="why", action_inferred=True),
    _step(Observation(kind="terminal", text=_Text("out")), Action(kind="command", code="ls", x=1)),
]
ODD = [_step(Observation(kind="terminal", exit_code=2.0))]  # taken (as 2), but not plainly: looked into as objects
REFUSED = [  # each value the object path names: the same row either way
    Observation(kind="screen", text="é\udc80"), Observation(kind="screen", width=1 << 31),
    Observation(kind="terminal", exit_code=1.5), Observation(kind="screen", is_error="yes"),
    Observation(kind="screen", ui_tree="a" * 11), Action(kind="key", keys="ctrl"), Action(kind="key", keys=[1]),
    Action(kind="tap", x="left"), Action(kind="tool_call", arguments={"a": 1}), "2024-01-01", "reward", "reasoning"]


def _columns(steps: list[Step]) -> StepColumns:
    columns = StepColumns()
    for step in steps:
        columns.add_step(step)
    return columns


def _rows(*episodes: Episode, limit: int = 10) -> dict:
    builder = TableBuilder("run")
    builder.field_limit = limit
    for ep in episodes:
        _add(builder, ep)
    return {name: table.to_pylist() for name, table in builder.tables().items()}


def test_steps_handed_as_values_become_the_rows_the_same_steps_as_objects_become():
    final = Observation(kind="screen", text="end")
    assert field_arrays(_columns(PLAIN), 64) is not None and field_arrays(_columns(ODD), 64) is None
    bare = [Step(Observation(), Action(kind="wait"))] * 3  # fields the episodes before and after set: null here
    as_objects = _rows(_episode(PLAIN, key="a", final_observation=final, terminated=True), _episode(key="b"),
                       _episode(PLAIN[:1], key="c"), _episode(bare, key="e"), _episode(PLAIN[1:], key="f"),
                       _episode(ODD, key="d"), limit=64)
    as_values = _rows(_episode(_columns(PLAIN), key="a", final_observation=final, terminated=True),
                      _episode(key="b"), _episode(_columns(PLAIN[:1]), key="c"), _episode(_columns(bare), key="e"),
                      _episode(_columns(PLAIN[1:]), key="f"), _episode(_columns(ODD), key="d"), limit=64)
    assert as_values == as_objects  # rows in the order their episodes came, whichever way each was handed
    assert [s["step_id"][-2:] for s in as_values["steps"]] == \
        [":0", ":1", ":2", ":3", ":0", ":1", ":0", ":0", ":1", ":2", ":0", ":1", ":2", ":0"]
    assert as_values["steps"][-1]["observation"]["exit_code"] == 2
    assert [(vars(s.observation), s.action and vars(s.action), s.timestamp, s.reward, s.reasoning, s.action_inferred)
            for s in _columns(PLAIN)] == [(vars(s.observation), s.action and vars(s.action), s.timestamp, s.reward,
                                           s.reasoning, s.action_inferred) for s in PLAIN]
    # the budget counts characters: ten two-byte characters fit a budget of 10 as they do as objects
    assert _rows(_episode(_columns([_step(Observation(kind="screen", text="é" * 10))])))["steps"][0][
        "observation"]["text"] == "é" * 10


@pytest.mark.parametrize("bad", REFUSED, ids=range(len(REFUSED)))
def test_a_value_handed_as_values_is_refused_as_the_same_step_as_an_object_is(bad):
    if isinstance(bad, Observation):
        step = _step(bad)
    elif isinstance(bad, Action):
        step = _step(action=bad)
    else:
        step = _step(**{{"reward": "reward", "reasoning": "reasoning"}.get(bad, "timestamp"): bad if bad != "reasoning"
                        else "a" * 11})
    refused = []
    for steps in ([_step(), step], _columns([_step(), step])):
        builder = TableBuilder("run")
        builder.field_limit = 10
        with pytest.raises(SchemaMismatch) as e:
            _add(builder, _episode(steps))
        refused.append(e.value.rejected)
        assert not builder.episodes and builder.num_steps == 0
    assert refused[0] == refused[1] and refused[0].record_id == "step 1"
