"""The transcript core at its edges: what each action's `raw` holds, which call a result answers when ids are
missing or unknown, where a message the core cannot place goes (and the row that says so), what the episode
keeps of the run, and the rows `records` yields instead of an episode it cannot write."""

import datetime as dt
import json

from ingest.record import Action, Episode, Observation, Rejected
from ingest.transcript import Message, Run, ToolCall, episode, merge, records

T0 = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def _go(*msgs: Message, run: Run | None = None):
    return episode([Message("user", "go"), *msgs], run or Run())


def test_an_actions_raw_is_the_call_as_written_or_the_call_rebuilt():
    calls = [ToolCall("a", "bash", {"command": "ls"}),  # no raw: the call itself, as JSON
             ToolCall("b", "t", {"k": 1}, raw='{"as": "written"}'),  # a str kept as it is
             ToolCall("c", "t", {}, raw={"id": "c", "extra": [1]}),  # any other value as JSON
             ToolCall("d", "t", {}, raw=b"bytes")]
    ep, _ = _go(Message("assistant", tool_calls=calls))
    assert json.loads(ep.steps[0].action.raw) == {"id": "a", "name": "bash", "arguments": {"command": "ls"}}
    assert ep.steps[1].action.raw == '{"as": "written"}'
    assert json.loads(ep.steps[2].action.raw) == {"id": "c", "extra": [1]}
    assert ep.steps[3].action.raw == b"bytes"


def test_a_message_turn_is_a_message_action_with_its_time_reasoning_and_raw():
    ep, warnings = _go(Message("assistant", "hello", reasoning="why", timestamp=T0, raw={"usage": 3}),
                       Message("assistant", "bye", raw="verbatim"), Message("assistant", "plain"))
    assert warnings == []
    steps = ep.steps
    assert [(s.action.kind, s.action.text) for s in steps] == [("message", "hello"), ("message", "bye"),
                                                              ("message", "plain")]
    assert (steps[0].timestamp, steps[0].reasoning, json.loads(steps[0].action.raw)) == (T0, "why", {"usage": 3})
    assert (steps[1].timestamp, steps[1].reasoning, steps[1].action.raw) == (None, None, "verbatim")
    assert steps[2].action.raw is None


def test_a_message_step_takes_no_result_a_later_call_waits_for():
    """Results without ids go to the earliest call still waiting: a message step never waits."""
    ep, _ = _go(Message("assistant", "thinking aloud"),
                Message("assistant", tool_calls=[ToolCall(None, "bash", {"command": "ls"})]),
                Message("tool", "out"))
    assert ep.steps[1].observation == Observation()  # nothing came back after the message
    assert ep.final_observation.text == "out"


def test_a_result_without_an_id_pairs_with_the_earliest_open_call_even_beside_an_id_that_reads_none():
    ep, _ = _go(Message("assistant", tool_calls=[ToolCall(None, "bash", {"command": "a"}),
                                                 ToolCall("None", "bash", {"command": "b"})]),
                Message("tool", "out-a"), Message("tool", "out-b", tool_call_id="None"))
    assert ep.steps[1].observation.text == "out-a" and ep.final_observation.text == "out-b"


def test_a_result_with_an_unknown_id_goes_after_the_latest_step_not_to_an_open_call():
    ep, _ = _go(Message("assistant", tool_calls=[ToolCall("a", "bash", {"command": "a"}),
                                                 ToolCall("b", "bash", {"command": "b"})]),
                Message("tool", "out-b", tool_call_id="b"), Message("tool", "stray", tool_call_id="zz"),
                Message("tool", "out-a", tool_call_id="a"))
    assert ep.steps[1].observation.text == "out-a"
    assert ep.final_observation.text == "out-b\n\nstray"


def test_user_messages_go_after_the_latest_step():
    ep, _ = _go(Message("assistant", "one"), Message("assistant", "two"), Message("assistant", "three"),
                Message("user", "late"))
    assert [s.observation.text for s in ep.steps] == ["go", None, None]
    assert ep.final_observation.text == "late" and ep.final_observation.kind == "text"


def test_messages_the_core_cannot_place_are_rows_naming_them_and_kept_raw():
    msgs = [Message("tool", "orphan", raw={"k": 1}, where="messages[0]"),
            Message("critic", "meh", raw=[2], where="messages[1]"),
            Message("user", "go"),
            Message("assistant", raw={"empty": True}, where="messages[3]"),
            Message("assistant", "", reasoning="  ", where="messages[4]"),
            Message("narrator")]
    ep, warnings = episode(msgs, Run())
    assert [(w.rule, w.location, w.reason) for w in warnings] == [
        ("unknown_content", "messages[0]", "messages[0]: a tool result before any action; kept raw in env.unmapped"),
        ("unknown_content", "messages[1]",
         "messages[1]: role 'critic' is none of system, user, assistant, tool; kept raw in env.unmapped"),
        ("unknown_content", "messages[3]",
         "messages[3]: an assistant turn with neither text nor tool calls; kept raw in env.unmapped"),
        ("unknown_content", "messages[4]",
         "messages[4]: an assistant turn with neither text nor tool calls; kept raw in env.unmapped"),
        ("unknown_content", "a narrator message",
         "a narrator message: role 'narrator' is none of system, user, assistant, tool; kept raw in env.unmapped")]
    assert ep.env["unmapped"] == [
        {"where": "messages[0]", "role": "tool", "text": "orphan", "raw": {"k": 1}},
        {"where": "messages[1]", "role": "critic", "text": "meh", "raw": [2]},
        {"where": "messages[3]", "role": "assistant", "text": None, "raw": {"empty": True}},
        {"where": "messages[4]", "role": "assistant", "text": "", "raw": None},
        {"where": "a narrator message", "role": "narrator", "text": None, "raw": None}]
    assert ep.steps == [] and ep.task == "go"


def test_an_unplaced_message_with_text_is_seen_as_text():
    ep, _ = episode([Message("tool", "orphan"), Message("assistant", tool_calls=[ToolCall("x", "t", {})])], Run())
    obs = ep.steps[0].observation
    assert (obs.kind, obs.text) == ("text", "orphan")
    assert ep.task is None  # no user message: no task


def test_a_message_of_unknown_role_after_an_action_is_seen_before_the_first_one():
    """The core cannot say what such a message answers: its text joins observation 0, not the latest step's."""
    ep, warnings = _go(Message("assistant", "hi"), Message("critic", "meh"), Message("assistant", "bye"))
    assert [s.observation.text for s in ep.steps] == ["go\n\nmeh", None]
    assert ep.final_observation is None and [w.rule for w in warnings] == ["unknown_content"]


def test_the_episode_keeps_the_runs_facts():
    run = Run(key="k1", domain="web", platform="windows", task=None, agent=None, outcome="failure", reward=0.25,
              env={"x": 1}, license="MIT")
    ep, _ = episode([Message("system", "rule one"), Message("system", ""), Message("system", "rule two"),
                     Message("user", "do it"), Message("assistant", "ok", model="m1"),
                     Message("assistant", "again", model="m1")], run)
    assert (ep.key, ep.domain, ep.platform, ep.license) == ("k1", "web", "windows", "MIT")
    assert (ep.task, ep.agent, ep.outcome, ep.reward) == ("do it", "m1", "failure", 0.25)
    assert ep.env == {"x": 1, "system_prompt": "rule one\n\nrule two"}  # one model: no per-step list
    assert run.env == {"x": 1}  # the run's env is not changed
    assert not ep.terminated


def test_merge_keeps_the_first_parts_fields_and_joins_the_texts():
    a = Observation(kind="terminal", text="a", exit_code=0, width=80)
    b = Observation(kind="terminal", text=None, exit_code=1)
    c = Observation(kind="terminal", text="c", exit_code=2, height=24)
    merged = merge([a, b, c])
    assert (merged.kind, merged.text, merged.exit_code, merged.width, merged.height) == ("terminal", "a\n\nc", 0,
                                                                                         80, None)
    assert merged is not a and a.text == "a"
    assert merge([b]) is b and merge([]) == Observation()
    mixed = merge([Observation(kind="screen", text="s", width=5), Observation(kind="text", text="t")])
    assert (mixed.kind, mixed.text, mixed.width) == ("text", "s\n\nt", 5)


def test_env_fields_that_cannot_be_written_are_rows_and_the_rest_kept():
    out = list(records([Message("user", "go"), Message("assistant", "hi")],
                       Run(env={"ok": 1, "bad": {1, 2}, "huge": 1 << 70}), "run.json"))
    rows, (ep,) = out[:-1], out[-1:]
    assert [(r.rule, r.location, r.record_id) for r in rows] == [("bad_record", "run.json", "bad"),
                                                                ("bad_record", "run.json", "huge")]
    assert rows[0].reason.startswith("run.json: env field bad: cannot be written as JSON (")
    assert rows[0].reason.endswith("; left out of the episode's env")
    assert isinstance(ep, Episode) and ep.env == {"ok": 1}


def test_an_episode_without_actions_is_one_row_with_its_facts():
    (row,) = records([Message("user", "go", model="m0")], Run(key="ep-3", agent="bot", outcome="success", reward=1.0),
                     "run.json")
    assert (row.rule, row.location, row.record_id) == ("empty_episode", "run.json", "ep-3")
    assert row.reason.startswith("run.json: no actions in the transcript; the episode's outcome (success, reward 1.0)")
    assert json.loads(row.snippet) == {"outcome": "success", "reward": 1.0, "task": "go", "agent": "bot"}
    (row,) = records([], Run(), "r2.json")
    assert row.record_id is None and json.loads(row.snippet) == {"outcome": "unknown", "reward": None}


def test_an_episode_whose_own_field_does_not_fit_is_quarantined_naming_the_file():
    (row,) = records([Message("user", "go"), Message("assistant", "hi")], Run(task=["not", "text"]), "run.json")
    assert isinstance(row, Rejected) and (row.rule, row.location) == ("schema_mismatch", "run.json")
    assert row.reason.startswith("run.json: the episode: field task")


def test_what_a_message_carried_beyond_its_step_fields_is_kept_in_env_by_step():
    """The time and raw of user, system and tool messages (and the raw of an assistant turn whose calls keep
    their own) have no step field: each is kept in `env["message_extras"]` with the step it belongs to."""
    T1, T2 = T0 + dt.timedelta(seconds=1), T0 + dt.timedelta(seconds=2)
    done = Action(kind="done", text="bye")
    msgs = [Message("system", "rules", raw={"cache": "ephemeral"}, timestamp=T0),
            Message("user", "go", timestamp=T0, raw={"id": "u1"}),
            Message("assistant", tool_calls=[ToolCall("a", "t", {}), ToolCall("b", "t", {})], timestamp=T1,
                    raw={"usage": {"out": 7}}),
            Message("tool", "out-b", tool_call_id="b", timestamp=T2, raw={"duration_ms": 4}),
            Message("tool", "out-a", tool_call_id="a", timestamp=T1),
            Message("tool", "plain", tool_call_id="a"),  # neither raw nor time: nothing to keep
            Message("user", "more", raw="typed at the console"),
            Message("assistant", action=done, raw={"finish": True}, timestamp=T2),
            Message("assistant", "said", raw={"kept": "as the action's raw"}, timestamp=T2)]
    ep, warnings = episode(msgs, Run())
    assert warnings == [] and [s.action.kind for s in ep.steps] == ["tool_call", "tool_call", "done", "message"]
    assert [s.observation.text for s in ep.steps] == ["go", "out-a\n\nplain", "out-b\n\nmore", None]
    assert ep.env["message_extras"] == [
        {"step": 0, "role": "system", "timestamp": T0.isoformat(), "raw": {"cache": "ephemeral"}},
        {"step": 0, "role": "user", "timestamp": T0.isoformat(), "raw": {"id": "u1"}},
        {"step": 0, "role": "assistant", "raw": {"usage": {"out": 7}}},  # its time is on its steps
        {"step": 2, "role": "tool", "timestamp": T2.isoformat(), "raw": {"duration_ms": 4}},
        {"step": 1, "role": "tool", "timestamp": T1.isoformat()},
        {"step": 2, "role": "user", "raw": "typed at the console"},
        {"step": 2, "role": "assistant", "raw": {"finish": True}}]  # its own action: the message's raw beside it
    assert json.loads(ep.steps[3].action.raw) == {"kept": "as the action's raw"} and ep.steps[3].timestamp == T2
    assert ep.steps[2].timestamp == T2  # the turn's time is its step's, not kept twice


def test_a_time_that_is_no_datetime_is_kept_as_the_adapter_gave_it():
    ep, _ = _go(Message("assistant", tool_calls=[ToolCall("a", "t", {})]),
                Message("tool", "out", tool_call_id="a", timestamp="2025-01-01 10:00 (local)"))
    assert ep.env["message_extras"] == [{"step": 1, "role": "tool", "timestamp": "2025-01-01 10:00 (local)"}]


def test_an_unplaced_message_without_text_adds_nothing_to_what_was_seen():
    ep, warnings = episode([Message("critic"), Message("assistant", "hi")], Run())
    assert ep.steps[0].observation == Observation() and [w.rule for w in warnings] == ["unknown_content"]


def test_a_result_after_the_last_step_keeps_its_time_with_the_final_observation_and_unplaced_ones_theirs():
    ep, _ = episode([Message("tool", "early", timestamp=T0, where="m[0]"), Message("user", "go"),
                     Message("assistant", tool_calls=[ToolCall("a", "t", {})]),
                     Message("tool", "late", tool_call_id="a", timestamp=T0)], Run())
    assert ep.env["message_extras"] == [{"step": 1, "role": "tool", "timestamp": T0.isoformat()}]
    assert len(ep.steps) == 1 and ep.final_observation.text == "late"
    assert ep.env["unmapped"] == [{"where": "m[0]", "role": "tool", "text": "early", "raw": None,
                                   "timestamp": T0.isoformat()}]
    ep, _ = _go(Message("assistant", "hi"))
    assert "message_extras" not in ep.env  # nothing carried beyond the steps: no entry


def test_a_thought_of_blanks_beside_calls_is_no_reasoning():
    """Text or reasoning of blanks alone says nothing: the step's reasoning is None, not an empty string."""
    ep, _ = _go(Message("assistant", " \n ", [ToolCall("a", "t", {})], reasoning="\t"))
    assert ep.steps[0].reasoning is None


def test_a_generator_of_messages_is_read_once_for_steps_system_prompt_and_task():
    """`episode` reads its messages once: the system prompt and the task come from the same pass as the steps."""
    def messages():
        yield Message("system", "be brief")
        yield Message("user", "")
        yield Message("user", "the task")
        yield Message("system", "and kind")
        yield Message("assistant", "done")
    ep, _ = episode(messages(), Run())
    assert (ep.task, ep.env["system_prompt"], len(ep.steps)) == ("the task", "be brief\n\nand kind", 1)
