"""A trace that is one turn of a conversation (a chat app traced one trace per user turn) sends its first model call
the earlier turns: they are context, not the trace's actions (`ingest.traces.threads`), by a conversation id in any
trace reader, else by unambiguous structure; otherwise they stay steps with a warning that says why. Hand-made
edge cases of each rule (spans built in-process, and through the OTLP, LangSmith and Langfuse decoders), then the
real samples the rule touches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.record import Episode
from ingest.traces import langfuse, langsmith, otel
from ingest.traces.genai import ToolUse
from ingest.transcript import Message
from tests.ingest.traces.read_util import read
from tests.ingest.traces.test_spans_read import (_calls, _chat_attrs, _model, _otlp_doc, _otlp_span, _read,
                                                 _span)

SYSTEM = Message("system", text="You help with the weather.")
FIRST_ASK = Message("user", text="Weather in Oslo?")
EARLIER_CALL = _calls(("c0", "get_weather", {"city": "Oslo"}))
EARLIER_RESULT = Message("tool", text="rain", tool_call_id="c0")
EARLIER_ANSWER = Message("assistant", text="Rain in Oslo.")
ASK = Message("user", text="And in Rome?")
TURN_1 = [SYSTEM, FIRST_ASK, EARLIER_CALL, EARLIER_RESULT, EARLIER_ANSWER]


def _turn_2(attributes: dict | None = None, earlier=TURN_1, tool_call_id="c1"):
    """Turn 2's trace: its first model call given turn 1, then its own call, its tool span, its answer."""
    call = _calls((tool_call_id, "get_weather", {"city": "Rome"}))
    first = _model("m1", None, 0, [*earlier, ASK], [call])
    first.attributes = dict(attributes or {})
    tool = _span("t1", None, "tool", 1, tool=ToolUse("get_weather", tool_call_id, {"city": "Rome"}, "sun"))
    second = _model("m2", None, 2, [*earlier, ASK, call, Message("tool", text="sun", tool_call_id=tool_call_id)],
                    [Message("assistant", text="Sun in Rome.")])
    return [first, tool, second]


def _steps(ep: Episode) -> list[tuple]:
    return [(s.action.kind, s.action.tool_name or s.action.text) for s in ep.steps]


THIS_TURN = [("tool_call", "get_weather"), ("message", "Sun in Rome.")]


@pytest.mark.parametrize("attribute", ["gen_ai.conversation.id", "session.id", "langfuse.session.id",
                                       "langsmith.metadata.thread_id", "gcp.vertex.agent.session_id"])
def test_a_trace_naming_its_conversation_keeps_the_earlier_turns_as_context(attribute):
    (ep,), rejected = _read(_turn_2({attribute: "conv-7"}))
    assert rejected == [] and _steps(ep) == THIS_TURN and ep.task == "And in Rome?"
    assert ep.env["trace"]["history_messages"] == 4  # turn 1's question, call, result and answer: none dropped
    assert ep.env["trace"]["earlier_turns"] == {"rule": "thread_id", "attribute": attribute, "thread_id": "conv-7"}
    assert ep.env["system_prompt"] == "You help with the weather." and "ingest_warnings" not in ep.env


def test_with_an_id_even_turns_with_no_tool_call_are_context():
    (ep,), _ = _read(_turn_2({"gen_ai.conversation.id": "c"}, earlier=[FIRST_ASK, EARLIER_ANSWER]))
    assert _steps(ep) == THIS_TURN and ep.env["trace"]["history_messages"] == 2


def test_without_an_id_earlier_calls_no_tool_span_ran_before_the_last_user_message_are_context():
    (ep,), _ = _read(_turn_2())
    assert _steps(ep) == THIS_TURN and ep.task == "And in Rome?" and ep.env["trace"]["history_messages"] == 4
    assert ep.env["trace"]["earlier_turns"] == {"rule": "structure", "tool_calls": 1}
    assert "ingest_warnings" not in ep.env


def _warned(ep: Episode) -> str:
    [warning] = ep.env["ingest_warnings"]
    assert warning["rule"] == "ambiguous_history" and "names no conversation id" in warning["reason"]
    assert "history_messages" not in ep.env["trace"] and "earlier_turns" not in ep.env["trace"]
    return warning["reason"]


def test_without_an_id_an_assistant_turn_after_the_last_user_message_stays_a_step_with_a_warning():
    # a trace that lost its first model call: the input's tail is this loop's own earlier call
    spans = [_model("m2", None, 0, [FIRST_ASK, EARLIER_CALL, EARLIER_RESULT], [Message("assistant", text="Rain.")])]
    (ep,), _ = _read(spans)
    assert _steps(ep) == [("tool_call", "get_weather"), ("message", "Rain.")]
    assert "after its last user message" in _warned(ep)


def test_without_an_id_an_earlier_call_a_tool_span_of_the_trace_ran_stays_a_step_with_a_warning():
    spans = _turn_2(tool_call_id="c0")  # the trace's tool span answers the earlier turn's call id
    (ep,), _ = _read(spans)
    assert [k for k, _ in _steps(ep)].count("tool_call") == 2
    assert "tool spans of this trace ran calls they hold (get_weather)" in _warned(ep)


def test_without_an_id_earlier_turns_with_no_tool_call_stay_steps_with_a_warning():
    (ep,), _ = _read(_turn_2(earlier=[FIRST_ASK, EARLIER_ANSWER]))
    assert _steps(ep) == [("message", "Rain in Oslo."), *THIS_TURN]
    assert "no tool call to check" in _warned(ep)


# --- through the decoders: the id each one finds --------------------------------------------------------------


def _genai(messages: list[Message]) -> list[dict]:
    out = []
    for m in messages:
        parts = [{"type": "text", "content": m.text}] if m.text else []
        parts += [{"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]
        if m.role == "tool":
            parts = [{"type": "tool_call_response", "id": m.tool_call_id, "response": m.text}]
        out.append({"role": m.role, "parts": parts})
    return out


@pytest.mark.parametrize("ids", [{"session.id": "s-1"}, {}])
def test_an_otlp_trace_of_turn_two_reads_by_openinference_session_id_or_by_structure(tmp_path, ids):
    ask = _genai([FIRST_ASK, EARLIER_CALL, EARLIER_RESULT, EARLIER_ANSWER, ASK])
    call = _genai([_calls(("c1", "get_weather", {"city": "Rome"}))])
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.result": "sun", **ids}
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Sun in Rome."}]}]
    doc = _otlp_doc(_otlp_span("00000000000000a1", "chat", {**_chat_attrs(ask, call), **ids}, start=10, end=20),
                    _otlp_span("00000000000000a2", "tool", tool, start=30, end=40),
                    _otlp_span("00000000000000a3", "chat",
                               {**_chat_attrs(ask + call + _genai([Message("tool", text="sun", tool_call_id="c1")]),
                                              answer), **ids}, start=50, end=60))
    path = tmp_path / "turn2.json"
    path.write_text(json.dumps(doc))
    [ep], rows = read(otel, path)
    assert rows == [] and _steps(ep) == THIS_TURN and ep.task == "And in Rome?"
    assert ep.env["trace"]["history_messages"] == 4
    assert ep.env["trace"]["earlier_turns"]["rule"] == ("thread_id" if ids else "structure")


ROOT = "1ef0a000-0000-0000-0000-000000000001"


def _lc(kind, content, calls=None, call_id=None):
    kwargs = {"content": content}
    if calls:
        kwargs["tool_calls"] = [{"id": i, "name": n, "args": a} for i, n, a in calls]
    if call_id:
        kwargs["tool_call_id"] = call_id
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": kwargs}


@pytest.mark.parametrize("metadata", [{"thread_id": "th-1"}, {}])
def test_a_langsmith_run_tree_reads_its_thread_by_the_root_runs_metadata_or_by_structure(tmp_path, metadata):
    history = [_lc("HumanMessage", "Weather in Oslo?"), _lc("AIMessage", "", [("c0", "get_weather", {"city": "Oslo"})]),
               _lc("ToolMessage", "rain", call_id="c0"), _lc("AIMessage", "Rain in Oslo."),
               _lc("HumanMessage", "And in Rome?")]
    llm = {"id": "1ef0a000-0000-0000-0000-000000000002", "trace_id": ROOT, "parent_run_id": ROOT, "name": "chat",
           "run_type": "llm", "dotted_order": f"20240405T012851000000Z{ROOT}.20240405T012851000000Z"
           "1ef0a000-0000-0000-0000-000000000002", "start_time": "2024-04-05T01:28:51", "end_time":
           "2024-04-05T01:28:52", "inputs": {"messages": [history]},
           "outputs": {"generations": [[{"text": "", "message": _lc("AIMessage", "Sun in Rome.")}]]}}
    root = {"id": ROOT, "trace_id": ROOT, "parent_run_id": None, "name": "chat app", "run_type": "chain",
            "dotted_order": f"20240405T012850000000Z{ROOT}", "start_time": "2024-04-05T01:28:50",
            "end_time": "2024-04-05T01:28:53", "inputs": {"messages": history}, "extra": {"metadata": metadata},
            "child_runs": [llm]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(root))
    [ep], rows = read(langsmith, path)
    assert rows == [] and _steps(ep) == [("message", "Sun in Rome.")] and ep.task == "And in Rome?"
    assert ep.env["trace"]["history_messages"] == 4
    expected = {"rule": "thread_id", "attribute": "metadata.thread_id", "thread_id": "th-1"} if metadata else \
        {"rule": "structure", "tool_calls": 1}
    assert ep.env["trace"]["earlier_turns"] == expected


def test_a_langfuse_trace_reads_its_conversation_by_the_traces_session_id(tmp_path):
    history = [{"role": "user", "content": "Weather in Oslo?"}, {"role": "assistant", "content": "Rain in Oslo."},
               {"role": "user", "content": "And in Rome?"}]
    generation = {"id": "g1", "traceId": "lf1", "type": "GENERATION", "name": "chat", "model": "gpt-4.1",
                  "startTime": "2025-01-01T00:00:00Z", "endTime": "2025-01-01T00:00:01Z", "input": history,
                  "output": {"role": "assistant", "content": "Sun in Rome."}}
    for session, steps, warned in (("chat-9", 1, False), (None, 2, True)):
        trace = {"id": "lf1", "name": "turn", "timestamp": "2025-01-01T00:00:00Z", "projectId": "p",
                 "sessionId": session, "observations": [generation]}
        path = tmp_path / "trace.json"
        path.write_text(json.dumps({"trace": trace, "observations": [generation]}))
        [ep], _ = read(langfuse, path)
        assert len(ep.steps) == steps and ("ingest_warnings" in ep.env) == warned
        if session:
            assert ep.env["trace"]["earlier_turns"] == {"rule": "thread_id", "attribute": "sessionId",
                                                        "thread_id": "chat-9"}


# --- the real samples the rule touches ------------------------------------------------------------------------

SAMPLES = Path(__file__).parents[3] / "samples" / "traces"
DATA = Path(__file__).parent / "data"


def test_real_turns_of_a_conversation_keep_their_earlier_turns_as_context_by_id():
    # kagent's second turn (gen_ai.conversation.id): turn 1's 3 steps are its first call's history, not its steps
    first, second = read(otel, SAMPLES / "otel" / "agentevals-kagent" / "adk_go_2turn.json")[0]
    assert (len(first.steps), len(second.steps)) == (3, 2)
    assert second.env["trace"]["history_messages"] == 5
    assert second.env["trace"]["earlier_turns"]["attribute"] == "gen_ai.conversation.id"
    # the chat-langchain LangSmith trace: the thread's two earlier questions and answers, by its `thread_id`
    [ep], _ = read(langsmith, next((SAMPLES / "langsmith" / "langsmith-sdk-chat-langchain").glob("*.jsonl")))
    assert len(ep.steps) == 17 and ep.env["trace"]["history_messages"] == 4
    assert ep.env["trace"]["earlier_turns"] == {"rule": "thread_id", "attribute": "metadata.thread_id",
                                                "thread_id": "a42dc55d-90cc-4671-93ec-63f025217bc2"}


def test_jaeger_uis_fixture_whose_model_input_ends_on_its_answer_keeps_it_as_a_step_and_says_why():
    # its first model call's input ends with the answer that call gives (after the user's question), no id: not
    # provably an earlier turn, so the 3 steps stay (the answer twice, then the search) and the episode says why
    episodes, _ = read(otel, DATA / "jaeger-ui" / "genai-flamegraph-traces.json")
    ep = next(e for e in episodes if e.key == "genai-full-trace-001")
    assert [s.action.kind for s in ep.steps] == ["message", "message", "tool_call"]
    assert "after its last user message" in _warned(ep)


def test_an_openai_agents_trace_reads_its_conversation_by_the_traces_group_id(tmp_path):
    from ingest.traces import openai_agents

    trace = "trace_0123456789abcdef0123456789abcdef"
    inputs = [{"role": "user", "content": "Weather in Oslo?"}, {"role": "assistant", "content": "Rain in Oslo."},
              {"role": "user", "content": "And in Rome?"}]
    for group, steps in (("conv-3", 1), (None, 2)):
        records = [{"object": "trace", "id": trace, "workflow_name": "Chat", "group_id": group},
                   {"object": "trace.span", "id": "span_1", "trace_id": trace, "parent_id": None,
                    "started_at": "2025-01-01T00:00:00Z", "ended_at": "2025-01-01T00:00:01Z",
                    "span_data": {"type": "generation", "model": "gpt-4.1", "input": inputs,
                                  "output": [{"role": "assistant", "content": "Sun in Rome."}]}}]
        path = tmp_path / "trace.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        [ep], _ = read(openai_agents, path)
        assert len(ep.steps) == steps and ep.steps[-1].action.text == "Sun in Rome."
        if group:
            assert ep.task == "And in Rome?" and ep.env["trace"]["earlier_turns"]["attribute"] == "group_id"
        else:
            assert "no tool call to check" in _warned(ep)
