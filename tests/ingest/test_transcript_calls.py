"""The transcript core's ways to make steps without messages, for logs made of tool calls alone: `call_steps`
(each call with its result, a call log's lines) and `exchange_steps` (calls and the results that answer them by
id, in any order, an MCP session) make the steps, the final observation and the extras that the same transcript
written as messages makes, whatever order the results came in, with a result never given, a second result
for one call, or a result for no call."""

import datetime as dt

import pytest

from ingest.record import Action, Observation
from ingest.transcript import Message, Steps, ToolCall, call_steps, exchange_steps, steps_of

T0 = dt.datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=dt.timezone.utc)


def _at(s: int) -> dt.datetime:
    return T0 + dt.timedelta(seconds=s)


def _action(i: int) -> Action:
    return Action(kind="tool_call", tool_name="read", arguments=f'{{"n":{i}}}', raw=f"call {i}")


def _result(i: int) -> Observation:
    return Observation(kind="tool_result", text=f"result {i}", is_error=i % 2 == 0)


def _same(made: Steps, expected: Steps) -> None:
    assert [vars(s.observation) for s in made.steps] == [vars(s.observation) for s in expected.steps]
    assert [(vars(s.action), s.timestamp, s.reward, s.reasoning) for s in made.steps] == \
        [(vars(s.action), s.timestamp, s.reward, s.reasoning) for s in expected.steps]
    final = made.final_observation
    assert (final and vars(final)) == (expected.final_observation and vars(expected.final_observation))
    assert (made.models, made.extras, made.unmapped, made.system, made.task) == \
        (expected.models, expected.extras, expected.unmapped, expected.system, expected.task)
    assert [vars(w) for w in made.warnings] == [vars(w) for w in expected.warnings]


@pytest.mark.parametrize("results", [[0, 1, 2], [0, None, 2], [None, None, None], [0, 1, None]])
def test_call_steps_are_the_steps_of_one_call_turns_with_their_results(results):
    calls = [(_action(i), None if r is None else _result(r), _at(i) if i != 1 else None) for i, r in enumerate(results)]
    as_messages = [Message("assistant", tool_calls=[ToolCall(None, None, action=a, result=r)], timestamp=t)
                   for a, r, t in calls]
    _same(call_steps(calls), steps_of(as_messages))
    assert call_steps(calls).steps[1].observation.text == (None if results[0] is None else "result 0")


def test_call_steps_of_no_call_are_none():
    assert call_steps([]).steps == [] and call_steps([]).final_observation is None


# (call id, event): "c" a call, "r" its result; results out of order, one never given, one twice, one for no call
@pytest.mark.parametrize("events", [
    [("0", "c"), ("1", "c"), ("1", "r"), ("0", "r"), ("2", "c"), ("2", "r")],
    [("0", "c"), ("1", "c"), ("2", "c"), ("2", "r"), ("0", "r")],
    [("0", "c"), ("0", "r"), ("0", "r"), ("1", "c")],
    [("9", "r"), ("0", "c"), ("7", "r"), ("0", "r")],
    [("0", "c"), (None, "r"), ("1", "c"), (None, "r")],
    [("0", "c"), ("1", "c"), (None, "r"), (None, "r")],  # results of no id: the earliest call still open
    [("0", "c"), ("1", "c"), ("0", "r"), (None, "r")],
    [("0", "c"), ("1", "c"), ("9", "r"), ("1", "r")],  # a result for no call while two are open
    [(5, "c"), ("1", "c"), ("5", "r"), ("1", "r")],  # an id written as a number, its result's as text
    [("0", "c"), ("1", "c"), ("1", "r"), ("1", "r")],  # the later call answered twice
])
def test_exchange_steps_are_the_steps_of_the_same_calls_and_results_as_messages(events):
    made, messages = [], []
    for i, (call_id, kind) in enumerate(events):
        when = _at(i) if i % 3 else None
        if kind == "c":
            made.append((call_id, _action(i), when))
            turn = [ToolCall(call_id, None, action=_action(i))]
            messages.append(Message("assistant", tool_calls=turn, timestamp=when))
        else:
            made.append((call_id, _result(i), when))
            messages.append(Message("tool", tool_call_id=call_id, observation=_result(i), timestamp=when))
    _same(exchange_steps(made), steps_of(messages))


def test_a_results_time_is_kept_with_the_step_it_is_seen_by():
    made = exchange_steps([("0", _action(0), T0), ("1", _action(1), T0), ("1", _result(1), _at(1)),
                           ("0", _result(0), _at(2))])
    assert made.extras == [{"step": 2, "role": "tool", "timestamp": "2026-01-02T03:04:06.006000+00:00"},
                           {"step": 1, "role": "tool", "timestamp": "2026-01-02T03:04:07.006000+00:00"}]
