"""The span model every trace reader assembles its episodes with (`ingest.traces.spans.trace_records`), called on
spans built in-process in the shapes the decoders give them: handoffs between agents, tool spans that name no
call id or a call the model spans never recorded, results a span did not keep, and the trace facts kept in env."""

from __future__ import annotations

import datetime as dt
import json

from ingest.record import Episode, Rejected, episode_id
from ingest.traces.genai import ModelTurn, ToolUse
from ingest.traces.spans import Span, trace_records
from ingest.transcript import Message, ToolCall

T0 = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.timezone.utc)


def _span(sid, parent, kind, at, name=None, **fields) -> Span:
    return Span(trace_id="t1", span_id=sid, parent_id=parent, name=name or kind or "other",
                start=T0 + dt.timedelta(seconds=at), end=T0 + dt.timedelta(seconds=at, milliseconds=500),
                order=at, where=f"spans[{at}]", kind=kind, **fields)


def _model(sid, parent, at, inputs, outputs, model="m1") -> Span:
    return _span(sid, parent, "model", at, model=ModelTurn(inputs=inputs, outputs=outputs, model=model))


def _calls(*calls) -> Message:
    return Message("assistant", tool_calls=[ToolCall(i, n, a) for i, n, a in calls])


def _read(spans) -> tuple[list[Episode], list[Rejected]]:
    out = list(trace_records("otel", "in/t.json", "t.json", "t1", spans, {}))
    return [r for r in out if isinstance(r, Episode)], [r for r in out if isinstance(r, Rejected)]


USER = Message("user", text="Plan a trip")


def test_a_handoff_opens_the_target_agents_episode_and_answers_the_transfer_call():
    spans = [_span("a1", None, "agent", 0, agent="Triage"),
             _model("m1", "a1", 1, [USER], [_calls(("c1", "transfer_to_planner", {}))]),
             _span("h1", "a1", "handoff", 2, agent="Planner", handoff_from="Triage"),
             _span("a2", None, "agent", 3, agent="Planner"),
             _model("m2", "a2", 4, [USER, _calls(("c1", "transfer_to_planner", {})),
                                    Message("tool", text="ok", tool_call_id="c1")],
                    [Message("assistant", text="Two days in Rome.")], model="m2")]
    (main, sub), rejected = _read(spans)
    assert rejected == []
    assert [s.action.tool_name for s in main.steps] == ["transfer_to_planner"]
    assert main.final_observation.text == "handoff from Triage to Planner" and not main.terminated
    assert main.env["subagents"] == [{"key": "t1/agent:a2", "episode_id": episode_id("otel", "in/t.json", sub.key),
                                      "agent": "Planner", "span_id": "a2", "relation": "handoff", "after_steps": 1}]
    assert sub.key == "t1/agent:a2" and sub.env["parent"]["relation"] == "handoff"
    assert sub.env["parent"] == {"key": "t1", "episode_id": episode_id("otel", "in/t.json", "t1"), "span_id": "a2",
                                 "relation": "handoff"}
    assert sub.env["agent_name"] == "Planner" and "agent_name" not in main.env
    # what the planner was handed (up to the transfer call) is its context, not its actions; its task is the
    # first user message there, and the transfer's result, answered by the handoff, is not added again
    assert sub.env["trace"]["history_messages"] == 2 and sub.task == "Plan a trip"
    assert [s.action.text for s in sub.steps] == ["Two days in Rome."] and sub.terminated and sub.agent == "m2"


def test_a_handoff_without_a_transfer_call_is_a_handoff_action_of_its_own():
    spans = [_model("m1", None, 0, [USER], [Message("assistant", text="Passing on.")]),
             _span("h1", None, "handoff", 1, agent="B", handoff_from="A")]
    (ep,), _ = _read(spans)
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps[1:]] == [
        ("handoff", {"from_agent": "A", "to_agent": "B"})]
    handoff = ep.steps[1]
    assert handoff.timestamp == T0 + dt.timedelta(seconds=1)  # its span's start
    assert json.loads(handoff.action.raw) == {"name": "handoff", "span_id": "h1", "parent_id": None}
    assert ep.final_observation.text == "handoff from A to B" and not ep.terminated


def test_past_the_limit_other_spans_are_counted_not_kept():
    from ingest.traces.spans import MAX_OTHER_SPANS

    spans = [_model("m1", None, 0, [USER], [Message("assistant", text="Hi.")])]
    spans += [_span(f"x{i}", None, None, 1 + i, name=f"op{i}") for i in range(MAX_OTHER_SPANS + 2)]
    (ep,), _ = _read(spans)
    trace = ep.env["trace"]
    assert len(trace["other_spans"]) == MAX_OTHER_SPANS and trace["other_spans_left_out"] == 2
    assert trace["other_spans"][-1]["name"] == f"op{MAX_OTHER_SPANS - 1}" and trace["spans"] == MAX_OTHER_SPANS + 3


def test_tool_spans_without_a_call_id_answer_by_arguments_then_name_then_order():
    calls = _calls(("c1", "get", {"city": "Paris"}), ("c2", "get", {"city": "Rome"}), ("c3", "look", {}))
    spans = [_model("m1", None, 0, [USER], [calls]),
             _span("t1", None, "tool", 1, tool=ToolUse("get", None, {"city": "Rome"}, "sunny")),
             _span("t2", None, "tool", 2, tool=ToolUse("other", None, None, "seen")),
             _span("t3", None, "tool", 3, tool=ToolUse("get", None, '{"city": "Nice"}', "rainy"))]
    (ep,), _ = _read(spans)
    assert [s.action.tool_name for s in ep.steps] == ["get", "get", "look"]
    # c2 (Rome) by its arguments; "other", no open call's name, takes the earliest (c1); the last `get` finds no
    # `get` open and takes the earliest left (c3)
    assert [s.observation.text for s in ep.steps[1:]] + [ep.final_observation.text] == ["seen", "sunny", "rainy"]
    raw = json.loads(ep.steps[1].action.raw)
    assert raw["span"]["span_id"] == "t1" and raw["span"]["name"] == "tool"


def test_a_tool_span_the_model_spans_never_recorded_is_an_action_of_its_own():
    spans = [_model("m1", None, 0, [USER], [Message("assistant", text="Let me check.")]),
             _span("t1", None, "tool", 5, tool=ToolUse("search", "x9", {"q": "rome"}, "3 hits"),
                   attributes={"k": "v"}, error="boom")]
    (ep,), _ = _read(spans)
    tool = ep.steps[1]
    assert (tool.action.tool_name, json.loads(tool.action.arguments)) == ("search", {"q": "rome"})
    assert tool.timestamp == T0 + dt.timedelta(seconds=5)  # its span's start
    assert json.loads(tool.action.raw) == {"name": "tool", "span_id": "t1", "parent_id": None,
                                           "attributes": {"k": "v"}, "error": "boom"}
    assert ep.final_observation.text == "3 hits"
    assert ep.env["trace"]["errors"] == [{"span": "tool", "span_id": "t1", "error": "boom"}]


def _timed(span: Span, start_ms: int, end_ms: int) -> Span:
    span.start, span.end = T0 + dt.timedelta(milliseconds=start_ms), T0 + dt.timedelta(milliseconds=end_ms)
    return span


def _times(ep: Episode) -> list[int]:
    return [int((s.timestamp - T0) / dt.timedelta(milliseconds=1)) for s in ep.steps]


def test_tool_spans_run_while_a_model_span_streams_come_before_its_answer_and_times_never_go_back():
    """Overlapping spans: two tool calls of their own begin while the model span still answers, and a second
    model call begins before the first one's answer came. Steps go in the order the actions became known (a tool
    call at its span's start, an answer at its model span's end), each taking a time its spans recorded."""
    spans = [_timed(_model("m1", None, 0, [USER], [Message("assistant", text="Looking.")]), 0, 2000),
             _timed(_span("t1", None, "tool", 1, tool=ToolUse(call_id="c1", name="search", arguments={"q": "a"},
                                                              result="r1")), 100, 900),
             _timed(_span("t2", None, "tool", 2, tool=ToolUse(call_id="c2", name="fetch", arguments={"u": "b"},
                                                              result="r2")), 200, 2500),
             _timed(_model("m2", None, 3, [USER], [Message("assistant", text="Rome it is.")]), 300, 3000)]
    (ep,), rejected = _read(spans)
    assert rejected == []
    assert [s.action.tool_name or s.action.text for s in ep.steps] == ["search", "fetch", "Looking.", "Rome it is."]
    assert _times(ep) == [100, 200, 2000, 3000]
    # each result is the observation after its own call, its span's end kept in extras; the second model call's
    # input (sent at 300 ms) is the question the first one was given, in the same place: not said again
    assert ep.steps[1].observation.text == "r1" and ep.steps[2].observation.text == "r2"
    assert {(e["step"], e["timestamp"]) for e in ep.env["message_extras"] if e["role"] == "tool"} == {
        (1, (T0 + dt.timedelta(milliseconds=900)).isoformat()), (2, (T0 + dt.timedelta(milliseconds=2500)).isoformat())}
    assert ep.terminated


def test_a_user_who_types_the_same_text_again_says_it_again():
    """The second call's input repeats the first one's and then holds the same text once more, after the answer:
    a new turn of the user, in its place."""
    spans = [_model("m1", None, 0, [USER], [Message("assistant", text="Where to?")]),
             _model("m2", None, 1, [USER, Message("assistant", text="Where to?"), Message("user", text="Plan a trip")],
                    [Message("assistant", text="Rome, then.")])]
    (ep,), _ = _read(spans)
    assert [s.action.text for s in ep.steps] == ["Where to?", "Rome, then."]
    assert [s.observation.text for s in ep.steps] == ["Plan a trip", "Plan a trip"]


def test_calls_given_only_what_is_new_hear_a_user_who_says_the_same_text_again():
    """A provider that holds the conversation (the Responses API's previous_response_id) is sent only what is new:
    the second call opens with the tool's result, so the later "yes", in the place where the first input held its
    "yes", is the user's new turn, not a re-send."""
    yes = Message("user", text="yes")
    spans = [_model("m1", None, 0, [yes], [_calls(("c1", "search", {"q": "a"}))]),
             _span("t1", None, "tool", 1, tool=ToolUse(call_id="c1", name="search", arguments={"q": "a"}, result="r1")),
             _model("m2", None, 2, [Message("tool", text="r1", tool_call_id="c1")], [Message("assistant", text="Go?")]),
             _model("m3", None, 3, [yes], [Message("assistant", text="Going.")])]
    (ep,), _ = _read(spans)
    assert [s.action.tool_name or s.action.text for s in ep.steps] == ["search", "Go?", "Going."]
    assert [s.observation.text for s in ep.steps] == ["yes", "r1", "yes"]


def test_a_conversation_a_later_call_is_given_again_is_not_said_again():
    """A graph's nodes give the conversation to several calls, each under a system prompt of its own: what an
    earlier call's input held in the same places is no new message (the user's turn after the last answer among
    them); a message after them is."""
    ask = Message("user", text="And by train?")
    spans = [_model("m1", None, 0, [USER], [Message("assistant", text="Rome.")]),
             _model("m2", None, 1, [Message("system", text="Search."), USER, Message("assistant", text="Rome."),
                                    ask], [_calls(("c1", "search", {"q": "trains"}))]),
             _span("t1", None, "tool", 2, tool=ToolUse(call_id="c1", name="search", arguments={"q": "trains"},
                                                       result="Hourly.")),
             _model("m3", None, 3, [Message("system", text="Answer from: Hourly."), USER,
                                    Message("assistant", text="Rome."), ask],
                    [Message("assistant", text="Hourly trains.")]),
             _model("m4", None, 4, [Message("system", text="Grade."), USER, Message("assistant", text="Rome."), ask,
                                    Message("user", text="Is it grounded?")], [Message("assistant", text="yes")])]
    (ep,), _ = _read(spans)
    assert [s.action.tool_name or s.action.text for s in ep.steps] == ["Rome.", "search", "Hourly trains.", "yes"]
    assert [s.observation.text for s in ep.steps] == ["Plan a trip", "And by train?", "Hourly.", "Is it grounded?"]


def test_a_tool_run_before_the_streamed_answer_that_called_it_ended_answers_that_call():
    """A streaming model's tool call runs as soon as its chunk arrived, before the model span ended: the tool span
    is the result of the model's call (one step, at the answer's time), not a second call of its own."""
    spans = [_timed(_model("m1", None, 0, [USER], [_calls(("c1", "search", {"q": "a"}))]), 0, 1000),
             _timed(_span("t1", None, "tool", 1, tool=ToolUse(call_id="c1", name="search", arguments={"q": "a"},
                                                              result="r1")), 400, 800),
             _timed(_model("m2", None, 2, [USER, _calls(("c1", "search", {"q": "a"})),
                                           Message("tool", text="r1", tool_call_id="c1")],
                           [Message("assistant", text="Done.")]), 1100, 1500)]
    (ep,), _ = _read(spans)
    assert [s.action.tool_name or s.action.text for s in ep.steps] == ["search", "Done."]
    assert _times(ep) == [1000, 1500] and ep.steps[1].observation.text == "r1"


def test_a_tool_span_that_follows_an_answer_no_longer_holding_its_call_takes_the_answers_time_and_says_so():
    """Two tool spans named as the streamed answer's one call, both begun before it ended: the first answers the
    call; the second is a call of its own, after the answer, so its step cannot take its earlier start: it takes
    the answer's time and its raw keeps the start its span recorded."""
    spans = [_timed(_model("m1", None, 0, [USER], [_calls(("c1", "search", {"q": "a"}))]), 0, 1000),
             _timed(_span("t1", None, "tool", 1, tool=ToolUse(call_id="c1", name="search", arguments={"q": "a"},
                                                              result="r1")), 400, 800),
             _timed(_span("t2", None, "tool", 2, tool=ToolUse(name="search", arguments={"q": "b"}, result="r2")),
                    500, 900)]
    (ep,), _ = _read(spans)
    assert [json.loads(s.action.arguments) for s in ep.steps] == [{"q": "a"}, {"q": "b"}]
    assert _times(ep) == [1000, 1000]
    raw = json.loads(ep.steps[1].action.raw)
    assert raw["recorded_start"] == (T0 + dt.timedelta(milliseconds=500)).isoformat()
    assert raw["timestamp_clamped"].startswith("to the previous step's time")


def test_a_tool_span_without_a_result_leaves_the_call_open_for_the_next_model_input():
    call = _calls(("c1", "read", {}))
    spans = [_model("m1", None, 0, [USER], [call]),
             _span("t1", None, "tool", 1, tool=ToolUse("read", "c1", "", None)),
             _model("m2", None, 2, [USER, call, Message("tool", text="file body", tool_call_id="c1")],
                    [Message("assistant", text="Read it.")])]
    (ep,), _ = _read(spans)
    assert [s.action.kind for s in ep.steps] == ["tool_call", "message"]
    assert ep.steps[1].observation.text == "file body" and ep.terminated


def test_a_tool_span_fills_in_the_arguments_the_model_record_lost():
    spans = [_model("m1", None, 0, [USER], [_calls(("c1", "get", "{}"))]),
             _span("t1", None, "tool", 1, tool=ToolUse("get", "c1", {"city": "Oslo"}, "cold"))]
    (ep,), _ = _read(spans)
    assert json.loads(ep.steps[0].action.arguments) == {"city": "Oslo"} and ep.final_observation.text == "cold"


def test_spans_of_no_step_kind_are_kept_in_env_and_the_agent_is_named_when_no_model_is():
    spans = [_span("a1", None, "agent", 0, agent="Helper"),
             _span("x1", "a1", None, 1, name="db.query", attributes={"db": "pg"}),
             _span("t1", "a1", "tool", 2, tool=ToolUse("run", "r1", {}, "done"))]
    (ep,), _ = _read(spans)
    assert ep.env["trace"]["other_spans"] == [{"name": "db.query", "span_id": "x1", "parent_id": "a1",
                                               "attributes": {"db": "pg"}}]
    assert ep.env["trace"]["agents"] == ["Helper"] and ep.agent == "Helper"
    assert ep.env["trace"]["spans"] == 3 and ep.env["trace"]["trace_id"] == "t1"


# --- the OTLP reader's spans: ids, times, records written twice, file order ----------------------------------


def _otel(tmp_path, lines, name="spans.jsonl"):
    from ingest.traces import otel
    from tests.ingest.traces.read_util import read

    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return read(otel, path)


def _otlp_doc(*spans) -> dict:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def _otlp_span(sid, name, attrs: dict, start=None, end=None, trace="5b8efff798038103d269b633813fc60c", **more):
    span = {"traceId": trace, "spanId": sid, "name": name,
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()], **more}
    if start is not None:
        span["startTimeUnixNano"] = str(start)
    if end is not None:
        span["endTimeUnixNano"] = str(end)
    return span


def _chat_attrs(inputs, outputs) -> dict:
    return {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1",
            "gen_ai.input.messages": json.dumps(inputs), "gen_ai.output.messages": json.dumps(outputs)}


ASK = {"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}
CALLS = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {}}]}
SAID = {"role": "assistant", "parts": [{"type": "text", "content": "Rainy."}]}
TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.call.result": "rain"}


def test_spans_without_times_keep_their_file_order(tmp_path):
    lines = [_otlp_doc(_otlp_span("00000000000000a1", "chat", _chat_attrs([ASK], [CALLS])),
                       _otlp_span("00000000000000a2", "tool", TOOL),
                       _otlp_span("00000000000000a3", "chat", _chat_attrs([ASK, CALLS], [SAID])))]
    (ep,), rejected = _otel(tmp_path, lines)
    assert rejected == [] and [s.action.kind for s in ep.steps] == ["tool_call", "message"]
    assert ep.steps[1].observation.text == "rain" and ep.steps[1].action.text == "Rainy." and ep.terminated


def test_a_span_written_when_it_started_and_again_when_it_ended_is_read_once_as_ended(tmp_path):
    started = _otlp_span("00000000000000a2", "tool", {**TOOL, "gen_ai.tool.call.result": "pending"}, start=2 * 10**18)
    ended = _otlp_span("00000000000000a2", "tool", TOOL, start=2 * 10**18, end=2 * 10**18 + 10**9)
    again = _otlp_span("00000000000000a2", "tool", {**TOOL, "gen_ai.tool.call.result": "late"}, start=2 * 10**18)
    chat = _otlp_span("00000000000000a1", "chat", _chat_attrs([ASK], [CALLS]), start=10**18, end=10**18 + 1)
    (ep,), rejected = _otel(tmp_path, [_otlp_doc(started), "{not json", _otlp_doc(chat, ended, again)])
    assert [r.rule for r in rejected] == ["parse_error"]  # the bad line, and the lines after it are read
    assert ep.final_observation.text == "rain" and ep.env["trace"]["spans"] == 2


def test_ids_are_lowercase_hex_whichever_way_they_were_written(tmp_path):
    import base64

    from ingest.traces import otel

    assert otel.span_id("0xAABBCCDDEEFF0011") == "aabbccddeeff0011"
    assert otel.span_id(base64.b64encode(bytes.fromhex("aabbccddeeff0011")).decode()) == "aabbccddeeff0011"
    trace = bytes.fromhex("5b8efff798038103d269b633813fc60c")
    assert otel.span_id(base64.b64encode(trace).decode()) == trace.hex()
    assert otel.span_id(base64.b64encode(b"abc").decode()) == base64.b64encode(b"abc").decode()  # no id's size
    assert otel.span_id("not an id!") == "not an id!" and otel.span_id("") is None and otel.span_id(7) is None


def test_times_of_zero_or_past_a_datetime_are_none_and_sdk_integers_are_nanoseconds():
    from ingest.traces import otel

    assert otel._nanos("0") is None and otel._nanos(1) == dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    assert otel._nanos(10**30) is None and otel._nanos("soon") is None
    at = dt.datetime(2025, 3, 1, 12, tzinfo=dt.timezone.utc)
    ns = int(at.timestamp()) * 10**9
    assert otel._sdk_time(ns) == at and otel._sdk_time("2025-03-01T12:00:00Z") == at
    assert otel._sdk_time(10**15 + 1) == dt.datetime.fromtimestamp((10**15 + 1) / 1e9, dt.timezone.utc)


def test_integer_ids_of_the_sdks_span_model_are_padded_hex():
    from ingest.traces import otel

    assert otel._int_id(255, 16) == "00000000000000ff" and otel._int_id(1, 32) == "0" * 31 + "1"
    assert otel._int_id(float(2**70), 32) == f"{2**70:032x}"
    assert otel._int_id(0, 16) == 0 and otel._int_id(-5, 16) == -5 and otel._int_id(True, 16) is True
    assert otel._int_id(0.0, 16) == 0.0 and otel._int_id(1.5, 16) == 1.5


def test_a_failed_status_without_a_message_still_says_the_span_failed():
    from ingest.traces import otel

    assert otel._error({"code": 2}) == "the span failed"
    assert otel._error({"code": "STATUS_CODE_ERROR", "message": "timeout"}) == "timeout"
    assert otel._error({"code": 1}) is None and otel._error("error") is None


# --- which agent spans open episodes ---------------------------------------------------------------------------


def test_an_agent_inside_a_workflow_span_with_no_step_of_its_own_is_the_episodes_agent_not_a_sub_episode():
    spans = [_span("w1", None, "agent", 0, agent="Agent workflow"),
             _span("a1", "w1", "agent", 1, agent="Writer"),
             _model("m1", "a1", 2, [USER], [Message("assistant", text="Rome, then Florence.")])]
    (ep,), _ = _read(spans)
    assert ep.key == "t1" and "subagents" not in ep.env and "parent" not in ep.env
    assert ep.env["trace"]["agents"] == ["Agent workflow", "Writer"]
    assert [s.action.text for s in ep.steps] == ["Rome, then Florence."] and ep.terminated


def test_an_agent_called_through_a_tool_is_a_subagent_linked_after_the_call():
    spans = [_span("a1", None, "agent", 0, agent="Lead"),
             _model("m1", "a1", 1, [USER], [_calls(("c1", "ask_researcher", {"q": "Rome"}))]),
             _span("t1", "a1", "tool", 2, tool=ToolUse("ask_researcher", "c1", {"q": "Rome"}, "Rome is warm")),
             _span("b1", "t1", "agent", 3, agent="Researcher"),
             _model("m2", "b1", 4, [Message("user", text="Rome")], [Message("assistant", text="Rome is warm")],
                    model="m2")]
    (main, sub), _ = _read(spans)
    assert [s.action.tool_name for s in main.steps] == ["ask_researcher"] and not main.terminated
    assert main.final_observation.text == "Rome is warm"
    assert [(s["key"], s["relation"], s["after_steps"]) for s in main.env["subagents"]] == [
        ("t1/agent:b1", "subagent", 1)]
    assert sub.env["parent"]["key"] == "t1" and sub.env["parent"]["relation"] == "subagent"
    assert [s.action.text for s in sub.steps] == ["Rome is warm"] and sub.agent == "m2" and sub.task == "Rome"
    assert sub.env["trace"]["spans"] == 2  # its own agent span and model call, none of the lead's


def test_a_handoff_names_the_next_agent_span_of_its_target_not_an_earlier_one():
    spans = [_span("q0", None, "agent", -1, agent="Triage"),  # before the handoff: not its target
             _span("p0", None, "agent", 0, agent="Planner"),
             _model("m0", "p0", 1, [USER], [_calls(("c0", "transfer_to_triage", {}))]),
             _span("h0", "p0", "handoff", 2, agent="Triage", handoff_from="Planner"),
             _span("q1", None, "agent", 3, agent="Triage"),
             _model("m1", "q1", 4, [Message("user", text="Again")], [Message("assistant", text="Done.")])]
    episodes, _ = _read(spans)
    assert [e.key for e in episodes] == ["t1", "t1/agent:q1"]
    assert episodes[1].env["parent"]["relation"] == "handoff" and episodes[1].steps[0].action.text == "Done."
    assert [s.action.tool_name for s in episodes[0].steps] == ["transfer_to_triage"]
    assert episodes[0].env["trace"]["agents"] == ["Triage", "Planner"]


def test_a_subagent_of_a_subagent_and_a_handoff_inside_one_name_their_own_parents():
    spans = [_span("a1", None, "agent", 0, agent="Lead"),
             _model("m1", "a1", 1, [USER], [_calls(("c1", "ask_b", {}))]),
             _span("t1", "a1", "tool", 2, tool=ToolUse("ask_b", "c1", {}, "B done")),
             _span("b1", "t1", "agent", 3, agent="B"),
             _model("m2", "b1", 4, [Message("user", text="b task")], [_calls(("c2", "ask_c", {}))]),
             _span("t2", "b1", "tool", 5, tool=ToolUse("ask_c", "c2", {}, "C done")),
             _span("c1a", "t2", "agent", 6, agent="C"),
             _model("m3", "c1a", 7, [Message("user", text="c task")], [Message("assistant", text="C says")]),
             _model("m4", "b1", 8, [Message("user", text="b task")], [_calls(("c3", "transfer_to_d", {}))]),
             _span("h1", "b1", "handoff", 9, agent="D", handoff_from="B"),
             _span("d1", None, "agent", 10, agent="D"),
             _model("m5", "d1", 11, [Message("user", text="d task")], [Message("assistant", text="D says")])]
    episodes, rejected = _read(spans)
    assert rejected == []
    by_key = {e.key: e for e in episodes}
    assert list(by_key) == ["t1", "t1/agent:b1", "t1/agent:c1a", "t1/agent:d1"]  # the trace's, then by start
    parents = {k: (e.env["parent"]["key"], e.env["parent"]["relation"]) for k, e in by_key.items() if k != "t1"}
    assert parents == {"t1/agent:b1": ("t1", "subagent"), "t1/agent:c1a": ("t1/agent:b1", "subagent"),
                       "t1/agent:d1": ("t1/agent:b1", "handoff")}
    assert [s["key"] for s in by_key["t1/agent:b1"].env["subagents"]] == ["t1/agent:c1a", "t1/agent:d1"]
    assert [s["after_steps"] for s in by_key["t1/agent:b1"].env["subagents"]] == [1, 2]
    assert [s.action.tool_name for s in by_key["t1/agent:b1"].steps] == ["ask_c", "transfer_to_d"]


def test_results_in_a_model_calls_input_answer_their_calls_once_and_system_prompts_are_kept_once():
    system = Message("system", text="Be brief.")
    first = _calls(("c1", "look", {}), (None, "peek", {}))
    spans = [_model("m1", None, 0, [system, Message("system", text=""), USER], [first]),
             _model("m2", None, 1, [system, USER, first, Message("tool", text="seen", tool_call_id="c1"),
                                    Message("tool", text="peeked", tool_name="peek")],
                    [_calls(("c2", "look", {}))]),
             _model("m3", None, 2, [system, USER, first, Message("tool", text="seen", tool_call_id="c1"),
                                    _calls(("c2", "look", {})), Message("tool", text="again", tool_call_id="c2"),
                                    Message("tool", text="seen", tool_call_id="c1")],
                    [Message("assistant", text="All seen.")])]
    (ep,), _ = _read(spans)
    assert [s.action.tool_name for s in ep.steps] == ["look", "peek", "look", None]
    assert [s.observation.text for s in ep.steps[1:]] == ["seen", "peeked", "again"]
    assert ep.env["system_prompt"] == "Be brief." and ep.terminated


def test_documents_of_every_layout_are_read_and_others_are_named(tmp_path):
    def sdk(sid, name, attrs, parent=None):
        return {"name": name, "context": {"trace_id": "0x5b8efff798038103d269b633813fc60c", "span_id": "0x" + sid},
                "parent_id": parent, "start_time": "2025-03-01T12:00:01Z", "end_time": "2025-03-01T12:00:02Z",
                "attributes": attrs, "events": [{"name": "note", "timestamp": "2025-03-01T12:00:01.5Z"}]}
    tool = {"openinference.span.kind": "TOOL", "tool.name": "get_weather", "input.value": "{}", "output.value": "sun"}
    lines = [[sdk("00000000000000c1", "get_weather", tool), {"what": "else"}],   # a JSON array of SDK spans
             {"resource_spans": [{"instrumentation_library_spans": [
                 {"spans": [_otlp_span("00000000000000d1", "db", {"db.system": "pg"}, start=10**18,
                                       events=[{"name": "retry", "time_unix_nano": str(10**18 + 5)}])]},
                 "not a scope"]}]},
             {"resourceSpans": [{"scopeSpans": "not a list"}]}]
    (ep,), rejected = _otel(tmp_path, lines)
    assert [(r.rule, r.location) for r in rejected] == [("unknown_content", "spans.jsonl:1[1]")]
    assert json.loads(rejected[0].snippet) == {"what": "else"}
    assert [s.action.tool_name for s in ep.steps] == ["get_weather"] and ep.final_observation.text == "sun"
    (db,) = ep.env["trace"]["other_spans"]
    assert db["name"] == "db" and db["events"][0]["time"] == dt.datetime.fromtimestamp(
        (10**18 + 5) / 1e9, dt.timezone.utc)


# --- which model call a tool span run during its answer belongs to -----------------------------------------------

SEARCH_A = ("c1", "search", {"q": "a"})


def _steps(ep: Episode) -> list[tuple]:
    return [(s.action.tool_name or s.action.text, s.observation.text if s.observation else None) for s in ep.steps]


def test_a_tool_span_run_during_a_later_model_call_answers_that_call():
    """The tool runs while the second model call streams: the second call's answer holds the tool's call."""
    spans = [_timed(_model("m0", None, 0, [USER], [Message("assistant", text="Thinking.")]), 0, 100),
             _timed(_model("m1", None, 1, [USER], [_calls(SEARCH_A)]), 200, 1000),
             _timed(_span("t1", None, "tool", 2, tool=ToolUse("search", "c1", {"q": "a"}, "r1")), 400, 800)]
    (ep,), _ = _read(spans)
    assert [s.action.tool_name or s.action.text for s in ep.steps] == ["Thinking.", "search"]
    assert _times(ep) == [100, 1000] and ep.final_observation.text == "r1"


def test_a_tool_span_begun_before_the_model_was_called_is_not_that_calls_answer():
    spans = [_timed(_model("m1", None, 0, [USER], [_calls(SEARCH_A)]), 100, 1000),
             _timed(_span("t1", None, "tool", 1, tool=ToolUse("search", "c1", {"q": "a"}, "r1")), 50, 800)]
    (ep,), _ = _read(spans)
    assert [s.action.tool_name for s in ep.steps] == ["search", "search"] and _times(ep) == [50, 1000]
    assert ep.steps[1].observation.text.startswith("r1") and ep.final_observation is None  # the model's call: no result


def test_a_tool_span_run_during_an_answer_that_holds_no_call_of_it_is_a_call_of_its_own_before_the_answer():
    """Another id of the same tool, or no id and another tool's name: not the answer's call."""
    spans = [_timed(_model("m1", None, 0, [USER], [_calls(SEARCH_A)]), 0, 1000),
             _timed(_span("t1", None, "tool", 1, tool=ToolUse("search", "c2", {"q": "b"}, "rb")), 400, 600),
             _timed(_span("t2", None, "tool", 2, tool=ToolUse("fetch", None, {"u": "x"}, "page")), 500, 700)]
    (ep,), _ = _read(spans)
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == [
        ("search", {"q": "b"}), ("fetch", {"u": "x"}), ("search", {"q": "a"})]
    assert _times(ep) == [400, 500, 1000] and ep.final_observation is None


def test_tool_spans_run_during_an_answer_answer_its_calls_in_the_order_they_began():
    """Two calls of one tool without ids, and tool spans that recorded neither id nor arguments, written in
    another order than they ran: the one that began first answers the first call."""
    both = _calls((None, "search", {"q": "a"}), (None, "search", {"q": "b"}))
    spans = [_timed(_model("m1", None, 0, [USER], [both]), 0, 1000),
             _timed(_span("t2", None, "tool", 1, tool=ToolUse("search", None, None, "rb")), 600, 900),
             _timed(_span("t1", None, "tool", 2, tool=ToolUse("search", None, None, "ra")), 400, 700)]
    (ep,), _ = _read(spans)
    assert [json.loads(s.action.arguments) for s in ep.steps] == [{"q": "a"}, {"q": "b"}]
    assert [s.observation.text for s in ep.steps[1:]] + [ep.final_observation.text] == ["ra", "rb"]


def test_a_tool_span_that_starts_as_the_answer_comes_follows_the_answer_whatever_the_file_order():
    """Written before the model span (spans are exported in any order), begun the millisecond its answer came."""
    spans = [_timed(_span("t1", None, "tool", 0, tool=ToolUse("search", "c1", {"q": "a"}, "r1")), 1000, 1200),
             _timed(_model("m1", None, 1, [USER], [_calls(SEARCH_A)]), 0, 1000)]
    (ep,), _ = _read(spans)
    assert [s.action.tool_name for s in ep.steps] == ["search"] and ep.final_observation.text == "r1"


def test_a_call_of_its_own_begun_as_the_step_before_took_its_time_keeps_its_time_unmarked():
    spans = [_timed(_model("m1", None, 0, [USER], [_calls(SEARCH_A)]), 0, 1000),
             _timed(_span("t1", None, "tool", 1, tool=ToolUse("search", "c1", {"q": "a"}, "r1")), 400, 800),
             _timed(_span("t2", None, "tool", 2, tool=ToolUse("search", None, {"q": "b"}, "r2")), 1000, 1100)]
    (ep,), _ = _read(spans)
    assert _times(ep) == [1000, 1000]
    assert "timestamp_clamped" not in json.loads(ep.steps[1].action.raw)


def test_spans_whose_turn_or_call_was_not_read_overlapping_an_answer_are_kept_as_other_spans():
    """A model span that names no turn and a tool span that names no call (content not recorded), both within a
    streaming answer, a failed model call's error listed once, and no empty trace facts."""
    failed = _timed(_model("m1", None, 0, [USER], [_calls(SEARCH_A)]), 50, 1000)
    failed.error = "rate limited"
    spans = [_timed(_span("x1", None, "model", -1), 0, 900), failed, _timed(_span("x2", None, "tool", 2), 200, 300),
             _timed(_span("t1", None, "tool", 3, tool=ToolUse("search", "c1", {"q": "a"}, "r1")), 400, 800)]
    (ep,), rejected = _read(spans)
    assert rejected == [] and [s.action.tool_name for s in ep.steps] == ["search"]
    assert [o["name"] for o in ep.env["trace"]["other_spans"]] == ["model", "tool"]
    assert ep.env["trace"]["errors"] == [{"span": "model", "span_id": "m1", "error": "rate limited"}]
    (plain,), _ = _read([_model("m1", None, 0, [USER], [Message("assistant", text="Hi.")])])
    assert plain.env["trace"] == {"trace_id": "t1", "spans": 1}
