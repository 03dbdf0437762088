"""The OpenTelemetry reader on hand-made traces in the shapes the conventions define (their own examples' forms):
the GenAI semantic conventions' `gen_ai.input.messages` / `gen_ai.output.messages` parts and `execute_tool` spans,
their older event-based messages, OpenLLMetry's flattened prompt and completion, a nested agent as a sub-episode,
failures, and the rows for what cannot be read."""

import json

from ingest.traces import otel
from tests.ingest.traces.read_util import calls, claims, read, results

TRACE = "5b8efff798038103d269b633813fc60c"


def _attrs(d: dict) -> list:
    def value(v):
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        return {"stringValue": v if isinstance(v, str) else json.dumps(v)}
    return [{"key": k, "value": value(v)} for k, v in d.items() if v is not None]


def _span(sid, parent, name, start, attrs, events=(), status=None, trace=TRACE):
    span = {"traceId": trace, "spanId": sid, "name": name, "kind": 1,
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + start * 10**9),
            "endTimeUnixNano": str(1_700_000_000_000_000_000 + start * 10**9 + 5 * 10**8),
            "attributes": _attrs(attrs), "events": list(events)}
    if parent:
        span["parentSpanId"] = parent
    if status:
        span["status"] = status
    return span


def _otlp(tmp_path, spans, name="trace.json"):
    doc = {"resourceSpans": [{"resource": {"attributes": _attrs({"service.name": "travel"})},
                              "scopeSpans": [{"scope": {"name": "app"}, "spans": spans}]}]}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _chat(sid, parent, start, inputs, outputs, model="gpt-4.1"):
    return _span(sid, parent, f"chat {model}", start, {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": model,
        "gen_ai.input.messages": json.dumps(inputs), "gen_ai.output.messages": json.dumps(outputs)})


def _tool(sid, parent, start, name, call_id, args, result, status=None):
    return _span(sid, parent, f"execute_tool {name}", start, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": None if args is None else json.dumps(args), "gen_ai.tool.call.result": result},
        status=status)


USER = {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}
CALL = {"role": "assistant", "parts": [{"type": "reasoning", "content": "Need the forecast."},
                                       {"type": "text", "content": "Checking."},
                                       {"type": "tool_call", "id": "c1", "name": "get_weather",
                                        "arguments": {"location": "Paris"}}], "finish_reason": "tool_call"}
RESULT = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "rainy, 57F"}]}
ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": "Rainy, 57F."}], "finish_reason": "stop"}
OUTER_CALL = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c9", "name": "researcher",
                                              "arguments": {"topic": "tides"}}]}


def _nested_agent_trace(sub_chat=None, result="calm", status=None) -> list:
    """The Planner agent calls the Researcher agent as a tool (its `invoke_agent` span under the `execute_tool`
    span), which calls get_weather: `sub_chat` is the Researcher's model span (by default GenAI parts asking for
    the call), `result` and `status` its tool span's."""
    sub_chat = sub_chat or _chat("c000000000000002", "a000000000000002", 4, [{"role": "user", "parts": [
        {"type": "text", "content": "tides"}]}], [CALL])
    return [_span("a000000000000001", None, "invoke_agent Planner", 0,
                  {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Planner"}),
            _chat("c000000000000001", "a000000000000001", 1, [USER], [OUTER_CALL]),
            _tool("f000000000000001", "a000000000000001", 2, "researcher", "c9", {"topic": "tides"}, "high at 6"),
            _span("a000000000000002", "f000000000000001", "invoke_agent Researcher", 3,
                  {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Researcher"}),
            sub_chat,
            _tool("f000000000000002", "a000000000000002", 5, "get_weather", "c1", {"location": "Paris"}, result,
                  status=status)]


def test_genai_parts_and_execute_tool_spans(tmp_path):
    spans = [_span("a000000000000001", None, "invoke_agent Weather", 0,
                   {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Weather"}),
             _chat("c000000000000001", "a000000000000001", 1, [USER], [CALL]),
             _tool("t000000000000001", "a000000000000001", 2, "get_weather", "c1", {"location": "Paris"},
                   "rainy, 57F"),
             _chat("c000000000000002", "a000000000000001", 3, [USER, CALL, RESULT], [ANSWER], model="gpt-4.1-mini")]
    path = _otlp(tmp_path, spans)
    assert claims(otel, path)
    (ep,), rejected = read(otel, path)
    assert rejected == []
    assert ep.key == TRACE and ep.task == "Weather in Paris?"
    assert calls(ep) == [("get_weather", {"location": "Paris"})]
    assert results(ep) == ["rainy, 57F"]  # once: the second chat's input repeats what the tool span gave
    assert ep.steps[0].reasoning == "Need the forecast.\n\nChecking."
    assert [s.action.kind for s in ep.steps] == ["tool_call", "message"] and ep.terminated
    assert ep.env["models"] == ["gpt-4.1", "gpt-4.1-mini"] and ep.env["model_per_step"] == ["gpt-4.1", "gpt-4.1-mini"]
    assert ep.env["trace"]["agents"] == ["Weather"]
    assert ep.steps[0].timestamp.isoformat() == "2023-11-14T22:13:21.500000+00:00"  # the model span's end


def test_a_failed_tool_span_is_an_error_result(tmp_path):
    spans = [_chat("c000000000000001", None, 1, [USER], [CALL]),
             _tool("t000000000000001", None, 2, "get_weather", "c1", {"location": "Paris"}, None,
                   status={"code": 2, "message": "timeout after 30 s"})]
    (ep,), _ = read(otel, _otlp(tmp_path, spans))
    assert ep.final_observation.text == "timeout after 30 s" and ep.final_observation.is_error
    assert not ep.terminated
    assert ep.env["trace"]["errors"][0]["error"] == "timeout after 30 s"


def test_a_nested_agent_is_a_sub_episode_linked_to_its_parent(tmp_path):
    """An agent used as a tool: its invoke_agent span under the outer agent's execute_tool span."""
    (main, sub), rejected = read(otel, _otlp(tmp_path, _nested_agent_trace()))
    assert rejected == []
    assert calls(main) == [("researcher", {"topic": "tides"})] and results(main) == ["high at 6"]
    assert calls(sub) == [("get_weather", {"location": "Paris"})] and results(sub) == ["calm"]
    assert sub.key == f"{TRACE}/agent:a000000000000002" and sub.task == "tides"
    link, = main.env["subagents"]
    assert link["key"] == sub.key and link["agent"] == "Researcher" and link["after_steps"] == 1
    assert sub.env["parent"]["key"] == TRACE and sub.env["parent"]["relation"] == "subagent"
    assert sub.env["parent"]["span_id"] == "a000000000000002"
    assert link["episode_id"] != sub.env["parent"]["episode_id"]  # each names the other's id


def test_event_based_messages(tmp_path):
    """The older conventions: messages as span events, the answer as `gen_ai.choice`."""
    choice = {"name": "gen_ai.choice", "attributes": _attrs({"index": 0, "finish_reason": "tool_calls", "message": {
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather",
                                                                     "arguments": "{\"location\": \"Paris\"}"}}]}})}
    events = [{"name": "gen_ai.system.message", "attributes": _attrs({"content": "Be brief."})},
              {"name": "gen_ai.user.message", "attributes": _attrs({"content": "Weather in Paris?"})}, choice]
    events2 = events[:2] + [
        {"name": "gen_ai.assistant.message", "attributes": _attrs({"tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]})},
        {"name": "gen_ai.tool.message", "attributes": _attrs({"id": "c1", "content": "rainy"})},
        {"name": "gen_ai.choice", "attributes": _attrs({"message": {"content": "Rainy."}})}]
    spans = [_span("c000000000000001", None, "chat gpt-4o", 1, {"gen_ai.operation.name": "chat",
                                                                "gen_ai.request.model": "gpt-4o"}, events),
             _span("c000000000000002", None, "chat gpt-4o", 2, {"gen_ai.operation.name": "chat",
                                                                "gen_ai.request.model": "gpt-4o"}, events2)]
    (ep,), rejected = read(otel, _otlp(tmp_path, spans))
    assert rejected == []
    assert calls(ep) == [("get_weather", {"location": "Paris"})] and results(ep) == ["rainy"]
    assert ep.steps[-1].action.text == "Rainy." and ep.env["system_prompt"] == "Be brief."
    assert ep.task == "Weather in Paris?" and ep.agent == "gpt-4o"


def test_openllmetry_flattened_prompt_and_completion(tmp_path):
    attrs = {"llm.request.type": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.prompt.0.role": "user",
             "gen_ai.prompt.0.content": "Weather in Paris?", "gen_ai.completion.0.role": "assistant",
             "gen_ai.completion.0.tool_calls.0.id": "c1", "gen_ai.completion.0.tool_calls.0.name": "get_weather",
             "gen_ai.completion.0.tool_calls.0.arguments": "{\"location\": \"Paris\"}"}
    (ep,), _ = read(otel, _otlp(tmp_path, [_span("c000000000000001", None, "openai.chat", 1, attrs)]))
    assert calls(ep) == [("get_weather", {"location": "Paris"})] and ep.task == "Weather in Paris?"


def test_unreadable_parts_are_rows_and_the_rest_is_read(tmp_path):
    """SDK span JSON printed to a console between a program's own prints; a span without its trace id."""
    good = {"name": "get_weather", "context": {"trace_id": "0x" + TRACE, "span_id": "0x00000000000000a1"},
            "parent_id": None, "start_time": "2025-01-01T00:00:00.000000Z", "end_time": "2025-01-01T00:00:01Z",
            "attributes": {"openinference.span.kind": "TOOL", "tool.name": "get_weather",
                           "input.value": "{\"location\": \"Paris\"}", "output.value": "rainy"},
            "events": [], "resource": {"attributes": {"service.name": "x"}}}
    bad = {**good, "context": {"span_id": "0x00000000000000a2"}}
    path = tmp_path / "console.log"
    path.write_text(json.dumps(good, indent=4) + "\nstarting the agent...\n" + json.dumps(bad, indent=4) + "\n")
    assert claims(otel, path)
    (ep,), rejected = read(otel, path)
    assert sorted(r.rule for r in rejected) == ["bad_record", "parse_error"]
    parse = next(r for r in rejected if r.rule == "parse_error")
    assert parse.line == 23 and "console.log:23" in parse.reason  # the line of the print
    assert next(r for r in rejected if r.rule == "bad_record").record_id == "trace_id"
    assert ep.key == TRACE and calls(ep) == [("get_weather", {"location": "Paris"})] and results(ep) == ["rainy"]
    assert ep.steps[0].timestamp.isoformat() == "2025-01-01T00:00:00+00:00"


def test_no_claim_without_trace_evidence(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "trace_id"}], "spans": "none"}))
    assert not claims(otel, path)


def test_a_service_trace_beside_an_agent_trace_is_named_not_read(tmp_path):
    """An export holds every span the process made: a web request's trace is no agent's trajectory. And with
    message content not recorded (the instrumentations' default), the model spans still name the model."""
    http = _span("h000000000000001", None, "GET /health", 0, {"http.request.method": "GET", "url.path": "/health"},
                 trace="0af7651916cd43dd8448eb211c80319c")
    chat = _span("c000000000000001", None, "chat gpt-4o", 1,
                 {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"})
    tool = _tool("t000000000000001", None, 2, "get_weather", "c1", None, None)
    (ep,), rejected = read(otel, _otlp(tmp_path, [http, chat, tool]))
    assert [(r.rule, r.snippet) for r in rejected] == [("no_agent_spans", "0af7651916cd43dd8448eb211c80319c")]
    assert ep.key == TRACE and ep.agent == "gpt-4o" and calls(ep) == [("get_weather", None)]


def test_a_spans_dump_of_sdk_spans(tmp_path):
    """The `{"spans": [...]}` dump an app writes of its SDK spans (here with the context's keys in another order and
    OpenInference messages): one episode, the LLM's tool call answered by the TOOL span."""
    def span(sid, parent, name, start, attrs):
        return {"name": name, "context": {"span_id": "0x" + sid, "trace_id": "0x" + TRACE}, "parent_id": parent,
                "start_time": f"2025-03-01T12:00:0{start}.000000Z", "end_time": f"2025-03-01T12:00:0{start}.500000Z",
                "attributes": attrs, "events": []}
    llm = span("00000000000000b1", "0x00000000000000a1", "ChatCompletion", 1, {
        "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
        "llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": "Be brief.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": "Weather in Paris?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_7",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{\"city\": \"Paris\"}"})
    tool = span("00000000000000c1", "0x00000000000000a1", "get_weather", 2, {
        "openinference.span.kind": "TOOL", "tool.name": "get_weather", "input.value": "{\"city\": \"Paris\"}",
        "output.value": "rainy"})
    root = span("00000000000000a1", None, "agent", 0, {"openinference.span.kind": "CHAIN"})
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"spans": [llm, tool, root]}, indent=2))
    assert claims(otel, path)
    (ep,), rejected = read(otel, path)
    assert rejected == []
    assert ep.task == "Weather in Paris?" and ep.env["system_prompt"] == "Be brief." and ep.agent == "gpt-4o-mini"
    assert calls(ep) == [("get_weather", {"city": "Paris"})] and results(ep) == ["rainy"]
    assert ep.env["trace"]["other_spans"][0]["name"] == "agent"  # the CHAIN span: no step, kept


def test_values_of_the_wrong_type_are_rows_or_kept_never_a_crash(tmp_path):
    """Each line damages one thing a span can carry; the good span of the last line is still read."""
    good = _tool("t000000000000009", None, 9, "get_weather", "c1", {"location": "Oslo"}, "cold")
    odd_name = _span("t000000000000008", None, "execute_tool", 8, {})
    odd_name["attributes"] = [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                              {"key": {"not": "a key"}, "value": {"stringValue": "x"}},
                              {"key": "gen_ai.tool.name", "value": {"arrayValue": {"values": [{"intValue": "1"}]}}}]
    docs = [{"resourceSpans": 3},
            {"resourceSpans": [{"scopeSpans": [{"spans": ["not a span"]}]}]},
            {"resourceSpans": [{"resource": "x", "scopeSpans": [{"spans": [
                {**good, "spanId": "t000000000000007", "startTimeUnixNano": "9" * 40, "events": 5,
                 "status": {"code": [2]}}]}]}]},
            {"resourceSpans": [{"scopeSpans": [{"spans": [odd_name, good]}]}]}]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    (ep,), rejected = read(otel, path)
    assert [r.rule for r in rejected] == ["bad_record", "bad_record"]
    assert [name for name, _ in calls(ep)] == ["get_weather", '[1]', "get_weather"]
    assert ep.steps[0].timestamp is None  # a time past what a datetime holds


def test_only_a_continued_conversation_is_stitched(tmp_path):
    """Three root chat spans, each its own trace: the second continues the first (its input begins with all the
    first was sent and answered); the third starts the same question afresh, so it is an episode of its own."""
    ids = ["1" * 32, "2" * 32, "3" * 32]
    spans = [_chat("c000000000000001", None, 1, [USER], [CALL]),
             _chat("c000000000000002", None, 2, [USER, CALL, RESULT], [ANSWER]),
             _chat("c000000000000003", None, 3, [USER], [ANSWER])]
    for span, trace in zip(spans, ids):
        span["traceId"] = trace
    first, second = read(otel, _otlp(tmp_path, spans))[0]
    assert first.key == ids[0] and first.env["stitched"] == ids[:2]
    assert calls(first) == [("get_weather", {"location": "Paris"})] and results(first) == ["rainy, 57F"]
    assert first.steps[-1].action.text == "Rainy, 57F."
    assert second.key == ids[2] and "stitched" not in second.env and len(second.steps) == 1


def _snake_case(value):
    """The protobuf JSON mapping's other spelling of the same document: every field name in snake_case."""
    if isinstance(value, dict):
        return {"".join(f"_{c.lower()}" if c.isupper() else c for c in k): _snake_case(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake_case(v) for v in value]
    return value


def _summary(ep):
    return (ep.key, ep.task, calls(ep), results(ep), [s.timestamp for s in ep.steps], ep.terminated,
            ep.final_observation.text if ep.final_observation else None, ep.env)


def test_snake_case_names_the_older_scope_key_and_any_span_order_read_alike(tmp_path):
    """The same nested-agent trace written by a snake_case exporter, with the pre-1.0 `instrumentation_library_spans`
    and its spans in reverse order: the same episodes, step times and links; a resource that is no object is
    skipped, a span that is no object is a row naming where it is, and the spans after it are read."""
    spans = _nested_agent_trace(status={"code": 2, "message": "storm warning"})
    (tmp_path / "camel").mkdir()
    (tmp_path / "snake").mkdir()
    camel, rejected = read(otel, _otlp(tmp_path / "camel", spans))  # the same file name: the same episode ids
    assert rejected == [] and len(camel) == 2
    assert camel[1].final_observation.is_error and camel[1].env["trace"]["errors"][0]["error"] == "storm warning"
    doc = _snake_case(json.loads(_otlp(tmp_path, list(reversed(spans)), "r.json").read_text()))
    [resource] = doc["resource_spans"]
    resource["instrumentation_library_spans"] = resource.pop("scope_spans")
    resource["instrumentation_library_spans"][0]["spans"].insert(0, 7)
    doc["resource_spans"] = ["not a resource", resource]
    path = tmp_path / "snake" / "trace.json"
    path.write_text(json.dumps(doc))
    snake, rejected = read(otel, path)
    assert [_summary(e) for e in snake] == [_summary(e) for e in camel]
    assert snake[0].env["otel"]["resources"] == [{"service.name": "travel"}]
    assert [s.timestamp.isoformat() for s in snake[0].steps] == ["2023-11-14T22:13:21.500000+00:00"]
    [row] = rejected
    assert (row.rule, row.location, row.snippet) == ("bad_record", "trace.json:1", "7")
    assert row.reason == "trace.json:1.resourceSpans[1].scopeSpans[0].spans[0]: a span that is no object; left out"


def test_a_document_whose_resource_spans_is_no_list_is_one_row(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"resource_spans": {"x": 1}}))
    assert read(otel, path) == ([], [otel.Rejected(
        "bad_record", "bad.json:1.resourceSpans: not a list; the document is left out", "bad.json:1",
        record_id="resourceSpans", snippet='{"resource_spans":{"x":1}}')])


def _sdk_form(span: dict) -> dict:
    """One OTLP span as the Python SDK's `ReadableSpan.to_json()` writes the same span."""
    def iso(nanos: str) -> str:
        import datetime as dt
        return dt.datetime.fromtimestamp(int(nanos) / 1e9, dt.timezone.utc).isoformat().replace("+00:00", "Z")
    status = span.get("status")
    return {"name": span["name"], "context": {"trace_id": "0x" + span["traceId"], "span_id": "0x" + span["spanId"]},
            "kind": "SpanKind.INTERNAL", "parent_id": "0x" + span["parentSpanId"] if "parentSpanId" in span else None,
            "start_time": iso(span["startTimeUnixNano"]), "end_time": iso(span["endTimeUnixNano"]),
            "status": {"status_code": "ERROR", "description": status["message"]} if status else {"status_code": "UNSET"},
            "attributes": {kv["key"]: otel.any_value(kv["value"]) for kv in span["attributes"]},
            "events": [{"name": e["name"], "timestamp": iso(e["timeUnixNano"]),
                        "attributes": {kv["key"]: otel.any_value(kv["value"]) for kv in e["attributes"]}}
                       for e in span["events"]],
            "links": [], "resource": {"attributes": {"service.name": "travel"}, "schema_url": ""}}


def test_the_sdks_span_json_reads_as_the_same_otlp_trace(tmp_path):
    """A nested agent, a failed tool and event-based messages, as the SDK's console exporter prints them (one
    indented span after another; hex ids as 0x numbers): the same episodes, step times, errors and resources as their OTLP/JSON."""
    stamp = str(1_700_000_000_000_000_000 + 4 * 10**9)
    events = [{"name": "gen_ai.user.message", "timeUnixNano": stamp, "attributes": _attrs({"content": "tides"})},
              {"name": "gen_ai.choice", "timeUnixNano": stamp, "attributes": _attrs({"message": {
                  "tool_calls": [{"id": "c1", "type": "function", "function": {
                      "name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}}]}})}]
    sub_chat = _span("c000000000000002", "a000000000000002", "chat gpt-4o", 4,
                     {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}, events)
    spans = _nested_agent_trace(sub_chat, result=None, status={"code": 2, "message": "storm warning"})
    (tmp_path / "otlp").mkdir()
    (tmp_path / "sdk").mkdir()
    otlp, rejected = read(otel, _otlp(tmp_path / "otlp", spans))
    assert rejected == [] and len(otlp) == 2
    sub = otlp[1]
    assert sub.task == "tides" and calls(sub) == [("get_weather", {"location": "Paris"})]
    assert (sub.final_observation.text, sub.final_observation.is_error) == ("storm warning", True)
    path = tmp_path / "sdk" / "trace.json"
    path.write_text("\n".join(json.dumps(_sdk_form(s), indent=4) for s in spans) + "\n")
    assert claims(otel, path)
    sdk, rejected = read(otel, path)
    assert rejected == []
    assert [_summary(e) for e in sdk] == [_summary(e) for e in otlp]


def test_every_kind_of_attribute_value_in_both_spellings():
    for camel in (True, False):
        def k(name):
            return name if camel else "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
        assert otel.any_value({k("stringValue"): "a"}) == "a" and otel.any_value({k("boolValue"): False}) is False
        assert otel.any_value({k("doubleValue"): 0.5}) == 0.5 and otel.any_value({k("bytesValue"): "AAE="}) == "AAE="
        assert otel.any_value({k("intValue"): "42"}) == 42 and otel.any_value({k("intValue"): "4x"}) == "4x"
        assert otel.any_value({k("arrayValue"): {"values": [{k("intValue"): "1"}, {k("stringValue"): "b"}]}}) == [1, "b"]
        assert otel.any_value({k("kvlistValue"): {"values": [{"key": "n", "value": {k("intValue"): 7}}]}}) == {"n": 7}
        assert otel.any_value({k("arrayValue"): {}}) == [] and otel.any_value({}) is None
    assert otel.any_value("plain") == "plain"


def test_a_span_without_its_ids_is_a_row_naming_the_line_and_the_field_and_the_rest_is_read(tmp_path):
    good = _tool("f000000000000009", None, 9, "get_weather", "c1", {"location": "Oslo"}, "cold")
    no_span_id = {k: v for k, v in good.items() if k != "spanId"}
    no_trace_id = {**{k: v for k, v in good.items() if k != "traceId"}, "spanId": "f000000000000008"}
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [s]}]}]})
                              for s in (no_span_id, no_trace_id, good)) + "\n")
    (ep,), rejected = read(otel, path)
    assert [(r.rule, r.reason, r.location, r.line, r.record_id) for r in rejected] == [
        ("bad_record", "m.jsonl:1.resourceSpans[0].scopeSpans[0].spans[0]: the span has no span_id; left out",
         "m.jsonl", 1, "span_id"),
        ("bad_record", "m.jsonl:2.resourceSpans[0].scopeSpans[0].spans[0]: the span has no trace_id; left out",
         "m.jsonl", 2, "trace_id")]
    assert calls(ep) == [("get_weather", {"location": "Oslo"})] and results(ep) == ["cold"]


def test_a_tool_span_that_recorded_no_arguments_reads_as_unrecorded_not_empty(tmp_path):
    """An instrumentation that does not capture content writes the tool span without `gen_ai.tool.call.arguments`:
    the call's arguments are unknown (null), unlike a call recorded with no arguments (`{}`)."""
    spans = [_tool("f000000000000001", None, 1, "get_weather", "c1", None, None),
             _tool("f000000000000002", None, 2, "get_time", "c2", {}, "noon")]
    (ep,), rejected = read(otel, _otlp(tmp_path, spans))
    assert rejected == []
    assert [(s.action.tool_name, s.action.arguments) for s in ep.steps] == [("get_weather", None), ("get_time", "{}")]
    assert json.loads(ep.steps[0].action.raw)["span_id"] == "f000000000000001"  # the span is kept as the action


def _b64(hex_id: str) -> str:
    import base64
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def test_oteltest_saved_requests_are_read_as_their_otlp_documents(tmp_path):
    """oteltest saves what its OTLP receiver got: metric requests first (past the bytes a reader sniffs, the trace
    requests), each request's OTLP document under `pbreq` with base64 ids; a request without one is a row."""
    span = _chat("c000000000000001", None, 1, [USER], [ANSWER])
    span.update(traceId=_b64(TRACE), spanId=_b64("c000000000000001"))
    metrics = {"pbreq": {"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": "gen_ai.client.token.usage",
                                                                            "description": "x" * 5000}]}]}]}}
    doc = {"metric_requests": [metrics],
           "trace_requests": [{"pbreq": {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]},
                               "headers": {"user-agent": "grpc-python"}, "test_elapsed_ms": 30144},
                              {"headers": {}}],
           "log_requests": []}
    path = tmp_path / "ott-app.json"
    path.write_text(json.dumps(doc, indent=2))
    assert claims(otel, path)
    (ep,), rejected = read(otel, path)
    assert ep.key == TRACE and ep.task == "Weather in Paris?" and ep.steps[-1].action.text == "Rainy, 57F."
    assert [(r.rule, r.record_id) for r in rejected] == [("bad_record", "pbreq")]
    assert "ott-app.json:1.trace_requests[1].pbreq: no OTLP request object" in rejected[0].reason


def test_openlit_text_events_and_a_framework_model_span_around_the_providers(tmp_path):
    """OpenLit writes the prompt and the completion as text in `gen_ai.content.*` events, and LangChain's `chat`
    span around the OpenAI client's: one call, one step, the outer span kept with the other spans."""
    def events(prompt, completion):
        return [{"name": "gen_ai.content.prompt", "timeUnixNano": "1", "attributes": _attrs({"gen_ai.prompt": prompt})},
                {"name": "gen_ai.content.completion", "timeUnixNano": "2",
                 "attributes": _attrs({"gen_ai.completion": completion})}]
    outer = _span("c000000000000001", None, "chat gpt-3.5-turbo", 1,
                  {"gen_ai.operation.name": "chat", "gen_ai.system": "langchain"},
                  events("messages=[HumanMessage(content='Capital of France?')]", "Paris."))
    inner = _span("c000000000000002", "c000000000000001", "chat gpt-3.5-turbo", 1,
                  {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
                   "gen_ai.response.model": "gpt-3.5-turbo-0125"}, events("user: Capital of France?", "Paris."))
    (ep,), rejected = read(otel, _otlp(tmp_path, [outer, inner]))
    assert rejected == []
    assert [(s.action.kind, s.action.text) for s in ep.steps] == [("message", "Paris.")]
    # OpenLit's `user: ` is its role prefix, not the user's words
    assert ep.task == "Capital of France?" and ep.agent == "gpt-3.5-turbo-0125" and ep.terminated
    assert [s["span_id"] for s in ep.env["trace"]["other_spans"]] == ["c000000000000001"]


def test_openlit_prompt_text_is_its_messages_each_with_its_role(tmp_path):
    """OpenLit joins the request's messages as `role: content` lines: a system prompt and a question are two
    messages, and text with no role prefix (another writer's) stays the user's."""
    def span(span_id, prompt):
        return _span(span_id, None, "chat gpt-4o", 1, {"gen_ai.operation.name": "chat", "gen_ai.system": "openai"},
                     [{"name": "gen_ai.content.prompt", "timeUnixNano": "1",
                       "attributes": _attrs({"gen_ai.prompt": prompt})},
                      {"name": "gen_ai.content.completion", "timeUnixNano": "2",
                       "attributes": _attrs({"gen_ai.completion": "Paris."})}])
    (ep,), _ = read(otel, _otlp(tmp_path, [span("d000000000000001", "system: Be brief.\nuser: Capital of France?")]))
    assert ep.task == "Capital of France?" and ep.env.get("system_prompt") == "Be brief."
    (ep,), _ = read(otel, _otlp(tmp_path, [span("d000000000000002", "Capital of France? user: answer")]))
    assert ep.task == "Capital of France? user: answer"


def test_langsmith_runs_sent_as_otel_spans(tmp_path):
    """The LangSmith SDK's OTel exporter: the run type in `langsmith.span.kind`, inputs and outputs as JSON in
    `gen_ai.prompt` / `gen_ai.completion` (LangChain's serialized messages); a prompt template's span says
    `gen_ai.operation.name` `chat` but is no model call."""
    def lc(kind, **kwargs):
        return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": kwargs}
    human = lc("HumanMessage", content="Weather in Paris?", type="human")
    asked = lc("AIMessage", content="", type="ai",
               tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}])
    answered = lc("AIMessage", content="Rainy.", type="ai")
    tool_msg = lc("ToolMessage", content="rainy", tool_call_id="call_1", type="tool")

    def run(sid, parent, name, start, kind, prompt, completion, **attrs):
        return _span(sid, parent, name, start, {"langsmith.span.kind": kind, "gen_ai.system": "langchain",
                                                "gen_ai.operation.name": attrs.pop("op", "chain"),
                                                "gen_ai.prompt": prompt, "gen_ai.completion": completion, **attrs})
    spans = [run("a000000000000001", None, "agent", 0, "chain", {"input": "Weather in Paris?"}, {"output": "Rainy."}),
             run("b000000000000001", "a000000000000001", "ChatPromptTemplate", 1, "prompt",
                 {"question": "Weather in Paris?"}, {"output": {"messages": [human]}}, op="chat"),
             run("c000000000000001", "a000000000000001", "ChatOpenAI", 2, "llm", {"messages": [[human]]},
                 {"generations": [[{"message": asked}]]}, **{"gen_ai.request.model": "gpt-4o"}),
             run("d000000000000001", "a000000000000001", "get_weather", 3, "tool", {"input": "{'city': 'Paris'}"},
                 {"output": "rainy"}),
             run("c000000000000002", "a000000000000001", "ChatOpenAI", 4, "llm",
                 {"messages": [[human, asked, tool_msg]]}, {"generations": [[{"message": answered}]]},
                 **{"gen_ai.request.model": "gpt-4o"})]
    (ep,), rejected = read(otel, _otlp(tmp_path, spans))
    assert rejected == []
    assert calls(ep) == [("get_weather", {"city": "Paris"})] and results(ep) == ["rainy"]
    assert ep.steps[-1].action.text == "Rainy." and ep.task == "Weather in Paris?" and ep.agent == "gpt-4o"
    assert sorted(s["name"] for s in ep.env["trace"]["other_spans"]) == ["ChatPromptTemplate", "agent"]


def test_a_langsmith_retriever_span_is_a_search_action(tmp_path):
    """A `retriever` run sent as an OTel span: a `search` action with its query, its documents the observation."""
    docs = {"documents": [{"page_content": "Rain all day.", "metadata": {"source": "https://w.example/paris",
                                                                         "title": "Paris"}, "type": "Document"}]}
    spans = [_span("a000000000000001", None, "agent", 0, {"langsmith.span.kind": "chain"}),
             _span("b000000000000001", "a000000000000001", "VectorStoreRetriever", 1,
                   {"langsmith.span.kind": "retriever", "gen_ai.prompt": {"query": "Paris weather"},
                    "gen_ai.completion": docs})]
    (ep,), rejected = read(otel, _otlp(tmp_path, spans))
    assert rejected == [] and calls(ep) == [("search", {"query": "Paris weather"})] and ep.domain == "search"
    assert ep.final_observation.text == "[1] https://w.example/paris\nTitle: Paris\nSnippet: Rain all day."


def _span_document(span: dict) -> dict:
    """One OTLP span as OpenSearch's trace index stores it (Data Prepper's document: ISO times, a map of
    attributes, the scope and the resource beside the span)."""
    import datetime as dt

    def iso(nanos: str) -> str:
        return dt.datetime.fromtimestamp(int(nanos) / 1e9, dt.timezone.utc).isoformat().replace("+00:00", "Z")
    return {"traceId": span["traceId"], "spanId": span["spanId"], "parentSpanId": span.get("parentSpanId", ""),
            "name": span["name"], "kind": "SPAN_KIND_INTERNAL", "startTime": iso(span["startTimeUnixNano"]),
            "endTime": iso(span["endTimeUnixNano"]),
            "durationInNanos": int(span["endTimeUnixNano"]) - int(span["startTimeUnixNano"]),
            "status": {"code": 2, "message": span["status"]["message"]} if span.get("status") else {"code": 0},
            "attributes": {kv["key"]: otel.any_value(kv["value"]) for kv in span["attributes"]},
            "events": [], "instrumentationScope": {"name": "app"}, "serviceName": "travel", "traceGroup": "agent",
            "resource": {"attributes": {"service.name": "travel"}}}


def test_span_documents_of_opensearch_read_as_the_same_trace(tmp_path):
    """A search of OpenSearch's trace index (`hits.hits[]._source`) and the same documents as a JSON array: the
    episode of the OTLP trace they came from; a hit with no document is a row."""
    spans = [_chat("c000000000000001", None, 1, [USER], [CALL]),
             _tool("f000000000000001", None, 2, "get_weather", "c1", {"location": "Paris"}, None,
                   status={"code": 2, "message": "timeout"}),
             _chat("c000000000000002", None, 3, [USER, CALL, RESULT], [ANSWER])]
    (tmp_path / "otlp").mkdir()
    (tmp_path / "search").mkdir()
    (otlp,), _ = read(otel, _otlp(tmp_path / "otlp", spans))
    hits = [{"_index": "otel-v1-apm-span-000001", "_source": _span_document(s)} for s in reversed(spans)]
    search = tmp_path / "search" / "trace.json"
    search.write_text(json.dumps({"took": 3, "hits": {"total": {"value": 3}, "hits": hits + [{"_id": "x"}]}}))
    array = tmp_path / "spans.json"
    array.write_text(json.dumps([_span_document(s) for s in spans], indent=2))
    assert claims(otel, search) and claims(otel, array)
    (found,), rejected = read(otel, search)
    assert [r.rule for r in rejected] == ["unknown_content"] and "hits.hits[3]._source" in rejected[0].reason
    assert _summary(found)[:7] == _summary(otlp)[:7]
    assert found.final_observation is None and results(found) == ["timeout"]
    (same,), rejected = read(otel, array)
    assert rejected == [] and calls(same) == calls(otlp) and same.steps[-1].action.text == "Rainy, 57F."


def test_a_document_with_a_trace_id_alone_is_not_claimed(tmp_path):
    path = tmp_path / "order.json"
    path.write_text(json.dumps({"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "a1", "order": 7}))
    assert not claims(otel, path)


def test_promptflow_tool_and_llm_spans(tmp_path):
    """promptflow's tracer: `span_type` Tool (its `function`, `inputs` and `output` as JSON) between two `LLM`
    spans (the messages in `inputs`, the answer in `llm.generated_message`); a `Function` span is no step, and a
    `span_type` without `framework: promptflow` says nothing."""
    def pf(sid, parent, name, start, span_type, **attrs):
        return _span(sid, parent, name, start, {"framework": "promptflow", "span_type": span_type, **attrs})
    asked = {"role": "user", "content": "Sales in May?"}
    call = {"role": "assistant", "content": None, "function_call": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "sales_data_insights",
                                                          "arguments": '{"question": "sales in May"}'}}]}
    spans = [pf("a000000000000001", None, "run_conversation", 0, "Function", inputs='{"question": "Sales in May?"}'),
             pf("b000000000000001", "a000000000000001", "openai_chat", 1, "LLM",
                inputs=json.dumps({"messages": [asked], "model": "gpt-35-turbo-1106"}),
                **{"llm.generated_message": json.dumps(call)}),
             pf("c000000000000001", "a000000000000001", "sales_data_insights", 2, "Tool",
                function="sales_data_insights", inputs='{"question": "sales in May"}', output='{"total": 42}'),
             pf("d000000000000001", "a000000000000001", "openai_chat", 3, "LLM",
                inputs=json.dumps({"messages": [asked, call, {"role": "tool", "tool_call_id": "call_1",
                                                              "content": '{"total": 42}'}]}),
                **{"llm.generated_message": '{"role": "assistant", "content": "42."}',
                   "llm.response.model": "gpt-35-turbo"}),
             _span("e000000000000001", "a000000000000001", "step", 4, {"span_type": "LLM"})]
    (ep,), rejected = read(otel, _otlp(tmp_path, spans))
    assert rejected == []
    assert calls(ep) == [("sales_data_insights", {"question": "sales in May"})] and results(ep) == ['{"total":42}']
    assert ep.steps[-1].action.text == "42." and ep.task == "Sales in May?"
    assert ep.agent == "gpt-35-turbo-1106"  # the first call's: its request's model where no response named one


def test_a_failed_promptflow_tool_span_is_an_error_result(tmp_path):
    asked = {"role": "user", "content": "Sales in May?"}
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "sales_data_insights", "arguments": "{}"}}]}
    spans = [_span("b000000000000001", None, "openai_chat", 1, {
                 "framework": "promptflow", "span_type": "LLM", "inputs": json.dumps({"messages": [asked]}),
                 "llm.generated_message": json.dumps(call)}),
             _span("c000000000000001", None, "sales_data_insights", 2, {
                 "framework": "promptflow", "span_type": "Tool", "function": "sales_data_insights", "inputs": "{}"},
                 status={"code": 2, "message": "database unreachable"})]
    (ep,), _ = read(otel, _otlp(tmp_path, spans))
    assert ep.final_observation.text == "database unreachable" and ep.final_observation.is_error


def test_a_model_span_whose_output_holds_no_message_is_kept_raw_in_env_with_a_warning(tmp_path):
    """A chat span whose output attribute holds no message the reader reads makes no step; its output attributes
    are kept as written in the episode's env with one warning."""
    odd = json.dumps({"finish_reason": "length"})
    path = _otlp(tmp_path, [
        _span("a1", None, "chat m", 0, {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                                        "gen_ai.input.messages": json.dumps([USER]), "gen_ai.output.messages": odd}),
        _tool("a2", None, 1, "get_weather", "c1", {"city": "Paris"}, "rain")])
    [ep], rows = read(otel, path)
    assert calls(ep) == [("get_weather", {"city": "Paris"})]
    assert ep.env["unread_outputs"] == [{"span": "chat m", "span_id": "a1", "after_steps": 0,
                                         "output": {"gen_ai.output.messages": odd}}]
    assert [r.rule for r in rows] == ["unknown_content"] and "a1" in rows[0].reason


def test_log_records_of_a_span_are_its_events_and_records_naming_no_span_are_a_row(tmp_path):
    """The conventions' event-based messages written as OTLP log records (`resourceLogs`, `eventName`, the message
    in `body`, the span's ids) read as that span's events; a record naming no span of the document is one row."""
    def record(sid, name, body):
        kv = [{"key": k, "value": v} for k, v in body.items()]
        return {"timeUnixNano": "1700000000100000000", "eventName": name, "traceId": TRACE, "spanId": sid,
                "body": {"kvlistValue": {"values": kv}}}
    chat = _span("a1", None, "chat gpt-4.1", 0, {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1"})
    message = {"kvlistValue": {"values": [{"key": "role", "value": {"stringValue": "assistant"}},
                                          {"key": "content", "value": {"stringValue": "Rainy, 57F."}}]}}
    logs = [record("a1", "gen_ai.user.message", {"content": {"stringValue": "Weather in Paris?"}}),
            record("a1", "gen_ai.choice", {"index": {"intValue": "0"}, "finish_reason": {"stringValue": "stop"},
                                           "message": message}),
            record("ffffffffffffffff", "gen_ai.user.message", {"content": {"stringValue": "elsewhere"}})]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [chat]}]}],
                                "resourceLogs": [{"resource": {}, "scopeLogs": [{"logRecords": logs}]}]}))
    [ep], rejected = read(otel, path)
    assert ep.task == "Weather in Paris?" and [s.action.text for s in ep.steps] == ["Rainy, 57F."]
    assert [(r.rule, r.record_id) for r in rejected] == [("unknown_content", "resourceLogs")]
    assert "1 log record(s) name no span" in rejected[0].reason and "ffffffffffffffff" in rejected[0].snippet
