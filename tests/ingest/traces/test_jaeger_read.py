"""Jaeger's JSON (Jaeger UI's "Download JSON", the query API's answer) read by the OpenTelemetry trace reader: a real
agent's trace saved from Jaeger (data/agentevals), GenAI traces of Jaeger UI's fixtures (data/jaeger-ui) and Jaeger's
own converter output (data/jaeger: its query service's answer for an OTLP input it holds beside it, and its
domain-to-UI converter's fixture), against goldens a person read against the raw files; hand-made edge cases. They lie
in data/, not samples/: they yield rows (an empty trace, no agent), steps that go back in time or are large, and the
bundled samples are small and ingest with nothing quarantined (each folder's PROVENANCE.md)."""

import datetime as dt
import json
from pathlib import Path

from ingest.record import Episode, Rejected
from ingest.traces import jaeger, otel
from tests.ingest import golden
from tests.ingest.golden import read_records
from tests.ingest.traces.read_util import calls, claims, results
from tests.ingest.traces.test_langfuse_read import GOLDEN

DATA = Path(__file__).parent / "data"
JAEGER_UI = DATA / "jaeger-ui"
TIMELINE = JAEGER_UI / "genai-timeline-trace.json"
JAEGER = DATA / "jaeger"
WINDOW = {"window": "1h"}
ROWS = '{"status":"ok","rows":12}'


def _episodes(records) -> list[Episode]:
    return [r for r in records if isinstance(r, Episode)]


def test_a_genai_trace_with_a_nested_agent_reads_as_a_person_counts_it():
    path = TIMELINE
    assert claims(otel, path)
    records = read_records(otel, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    main, sub = _episodes(records)
    assert calls(main) == [("list_dashboards", WINDOW), ("search_traces", WINDOW)] * 3 + [("summarize_findings", None)]
    answers = [s.action.text for s in main.steps if s.action.kind == "message"]
    assert len(answers) == 4 and all(a.startswith("Latency rose with a slow pod rollout.") for a in answers)
    assert main.task == "Why did the checkout latency regress this afternoon?" and main.agent == "model-a"
    seen = [s.observation.text or "" for s in main.steps]
    assert "".join(seen).count(ROWS) == 6  # each list_dashboards / search_traces result, once
    services = {r["service.name"] for r in main.env["otel"]["resources"]}
    assert {"coding-agent", "summarizer-agent", "mcp-gateway"} <= services
    assert main.env["trace"]["errors"] == [{"span": "GET /api/v1/pods", "span_id": "0000000000000011",
                                            "error": "the span failed"}]
    # the summarizer, below the MCP gateway's tool call, is a sub-episode of the triage agent's
    assert sub.env["parent"]["key"] == main.key and sub.env["parent"]["relation"] == "subagent"
    assert [s.action.text for s in sub.steps] == ["A pod rollout at 14:05 slowed checkout; latency recovered once it "
                                                  "completed."]
    assert sub.agent == "model-b" and sub.task == "Summarise the findings from the dashboards and traces."
    # microseconds since the epoch: the first tool span starts at 1770000000007000 µs, while the first model span
    # (started at ...005000 µs) still answers: its answer came at its end (...1805000 µs), after every tool call
    # the triage agent made (the model spans overlap the tool spans), so the steps go in that order and no time
    # goes back
    assert main.steps[0].action.tool_name == "list_dashboards"
    assert main.steps[0].timestamp == dt.datetime(2026, 2, 2, 2, 40, 0, 7000, tzinfo=dt.timezone.utc)
    assert main.steps[7].action.kind == "message"
    assert main.steps[7].timestamp == dt.datetime(2026, 2, 2, 2, 40, 1, 805000, tzinfo=dt.timezone.utc)
    times = [s.timestamp for s in main.steps]
    assert times == sorted(times)
    golden.check(records, GOLDEN / "otel-jaeger-ui-genai-timeline.json")


def test_a_download_json_answer_is_read_trace_by_trace():
    path = JAEGER_UI / "genai-flamegraph-traces.json"
    assert claims(otel, path)
    records = read_records(otel, path)
    [ep] = _episodes(records)
    assert ep.key == "genai-full-trace-001" and ep.agent == "gpt-4o"
    assert calls(ep) == [("web_search", {"query": "OpenTelemetry Jaeger v2 configuration OTLP receiver setup example"})]
    assert results(ep)[0].startswith('{"results":[{"url":"https://jaegertracing.io/docs/latest/getting-started/"')
    assert ep.env["system_prompt"].startswith("You are an expert in distributed tracing")
    # the second trace's model span names no message: said in a row, not dropped
    [row] = [r for r in records if isinstance(r, Rejected)]
    assert row.rule == "empty_episode" and "genai-partial-trace-002" in row.reason
    golden.check(records, GOLDEN / "otel-jaeger-ui-genai-flamegraph.json")


def _decoded(doc, where):
    return [found for found in otel._doc_spans(doc, where) if not isinstance(found, Rejected)]


def test_jaegers_answer_for_otlp_spans_decodes_to_the_spans_it_was_given():
    """The query service's own conversion (its handler test's input and answer) is the oracle: the reader makes the
    answer's spans the spans of the OTLP input, with the tags Jaeger adds kept as attributes."""
    otlp = json.loads((JAEGER / "otlp2jaeger-in.json").read_text())
    answer = json.loads((JAEGER / "otlp2jaeger-out.json").read_text())
    assert claims(otel, JAEGER / "otlp2jaeger-out.json")
    given, read = _decoded(otlp, "in"), _decoded(answer, "out")
    assert len(given) == len(read) == 2
    for (f_in, a_in, e_in, _, r_in), (f_out, a_out, e_out, _, r_out) in zip(given, read):
        assert {k: f_in[k] for k in ("trace_id", "span_id", "parent_id", "name", "start", "end", "error")} == \
            {k: f_out[k] for k in ("trace_id", "span_id", "parent_id", "name", "start", "end", "error")}
        assert a_out == {**a_in, "otel.scope.name": "telemetrygen", "span.kind": "server"}
        assert e_in == e_out == [] and r_in == r_out == {"service.name": "telemetrygen"}
    [row] = read_records(otel, JAEGER / "otlp2jaeger-out.json")
    assert (row.rule, row.snippet) == ("no_agent_spans", "83a9efd15c1c98a977e0711cc93ee28b")


def test_the_converters_typed_tags_logs_references_and_warnings_are_kept():
    path = JAEGER / "ui_01.json"
    assert claims(otel, path)
    spans = _decoded(json.loads(path.read_text()), "ui_01")
    assert len(spans) == 5
    logs = spans[0][2]
    assert [e["name"] for e in logs] == ["some-event", None] and logs[1]["attributes"] == {"x": "y"}
    assert logs[0]["time"] == dt.datetime(2017, 1, 26, 21, 46, 31, 639875, tzinfo=dt.timezone.utc)
    tags = spans[1][1]
    assert tags == {"peer.service": "service-y", "peer.ipv4": 23456, "error": True, "temperature": 72.5,
                    "javascript_limit": 9223372036854775222, "blob": "AAAwOQ=="}
    assert spans[1][0]["error"] == "the span failed"
    fields, attrs, _, _, resource = spans[3]
    # the parent is the CHILD_OF reference in the same trace; the one into another trace and FOLLOWS_FROM are kept
    assert fields["parent_id"] == "0000000000000002" and resource == {"service.name": "service-y"}
    assert [r["refType"] for r in attrs["jaeger.references"]] == ["CHILD_OF", "FOLLOWS_FROM"]
    assert attrs["jaeger.warnings"] == ["some span warning"]
    assert spans[0][1]["jaeger.trace_warnings"] == ["some trace warning"]
    assert fields["end"] - fields["start"] == dt.timedelta(microseconds=5)
    [row] = read_records(otel, path)
    assert (row.rule, row.snippet) == ("no_agent_spans", "0000000000000001")  # a 64-bit trace id


def _jaeger_span(span_id, name, parent=None, tags=(), **extra):
    span = {"traceID": "ab" * 16, "spanID": span_id, "operationName": name,
            "references": [{"refType": "CHILD_OF", "traceID": "ab" * 16, "spanID": parent}] if parent else [],
            "startTime": 1_770_000_000_000_000 + int(span_id, 16) * 1000, "duration": 500,
            "tags": [{"key": k, "type": "string", "value": v} for k, v in tags], "logs": []}
    span.update(extra)
    return span


TOOL_SPAN = (("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", "get_weather"),
             ("gen_ai.tool.call.arguments", '{"city":"Oslo"}'), ("gen_ai.tool.call.result", "rain"))


def test_spans_that_carry_their_process_and_an_answers_errors(tmp_path):
    """Spans with their own `process` (the anonymizer's span list, a storage document with tags as a `tag` map);
    an answer whose `errors` name a trace it could not give: a row naming it, the rest read."""
    spans = [_jaeger_span("0000000000000001", "invoke_agent helper", process={"serviceName": "app", "tags": []},
                          tags=(("gen_ai.operation.name", "invoke_agent"),)),
             _jaeger_span("0000000000000002", "execute_tool get_weather", "0000000000000001",
                          process={"serviceName": "app", "tags": []}, tags=TOOL_SPAN)]
    listed = tmp_path / "spans.json"
    listed.write_text(json.dumps(spans))
    [ep] = _episodes(read_records(otel, listed))
    assert calls(ep) == [("get_weather", {"city": "Oslo"})] and results(ep) == ["rain"]
    assert ep.env["otel"]["resources"] == [{"service.name": "app"}]
    stored = dict(spans[1], tags=[], tag={"gen_ai@" + k[len("gen_ai."):]: v for k, v in TOOL_SPAN})
    assert jaeger.span(stored, "doc", {})[1] == dict(TOOL_SPAN)
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"data": [{"traceID": "ab" * 16, "spans": spans[1:], "processes": {}}],
                                  "total": 0, "limit": 0, "offset": 0,
                                  "errors": [{"code": 404, "msg": "trace not found", "traceID": "cd" * 16}]}))
    records = read_records(otel, answer)
    [row] = [r for r in records if isinstance(r, Rejected)]
    assert row.rule == "bad_record" and "trace not found" in row.reason and row.record_id == "errors[0]"
    assert calls(_episodes(records)[0]) == [("get_weather", {"city": "Oslo"})]


def test_a_status_tag_says_the_span_failed():
    failed = _jaeger_span("0000000000000003", "execute_tool x", tags=(("otel.status_code", "ERROR"),
                                                                     ("otel.status_description", "timed out")))
    assert jaeger.span(failed, "w", {})[0]["error"] == "timed out"
    assert jaeger.span(dict(failed, tags=[{"key": "error", "type": "bool", "value": "true"}]), "w", {})[0]["error"] \
        == "the span failed"  # the anonymizer writes the bool as text


def test_one_generic_key_claims_nothing(tmp_path):
    """A GraphQL request names an `operationName` too; a span needs its `spanID` beside its references or process."""
    graphql = tmp_path / "graphql.json"
    graphql.write_text(json.dumps({"operationName": "GetUser", "query": "query GetUser { user { id } }",
                                   "variables": {"processID": "p1"}}))
    no_id = tmp_path / "no_id.json"
    no_id.write_text(json.dumps({"operationName": "x", "references": [], "processID": "p1"}))
    assert not claims(otel, graphql) and not claims(otel, no_id)


def test_the_same_trace_as_otlp_reads_to_the_same_episodes(tmp_path):
    """The adapter and OTLP/JSON meet in one span assembly: the GenAI trace written as OTLP (tags as typed
    attributes, the parent reference as `parentSpanId`, microseconds as nanoseconds, processes as resources) reads
    to the episodes its Jaeger form reads to."""
    trace = json.loads(TIMELINE.read_text())
    values = {"string": "stringValue", "int64": "intValue", "bool": "boolValue", "float64": "doubleValue"}
    resource_spans = []
    for pid, process in trace["processes"].items():
        otlp_spans = [{"traceId": s["traceID"], "spanId": s["spanID"], "name": s["operationName"],
                       "parentSpanId": next((r["spanID"] for r in s["references"]), ""),
                       "startTimeUnixNano": str(s["startTime"] * 1000),
                       "endTimeUnixNano": str((s["startTime"] + s["duration"]) * 1000),
                       "attributes": [{"key": t["key"], "value": {values[t["type"]]: t["value"]}} for t in s["tags"]]}
                      for s in trace["spans"] if s["processID"] == pid]
        resource_spans.append({"resource": {"attributes": [{"key": "service.name",
                                                            "value": {"stringValue": process["serviceName"]}}]},
                               "scopeSpans": [{"spans": otlp_spans}]})
    as_otlp = tmp_path / "genai-timeline-trace.json"
    as_otlp.write_text(json.dumps({"resourceSpans": resource_spans}))
    from_jaeger = _episodes(read_records(otel, TIMELINE))
    from_otlp = _episodes(read_records(otel, as_otlp))
    assert golden.fingerprint(from_otlp) == golden.fingerprint(from_jaeger)
    # resources are gathered in span order in both: the same services
    assert from_otlp[0].env["otel"]["resources"] == from_jaeger[0].env["otel"]["resources"]


def test_a_real_adk_agents_trace_saved_from_jaeger_reads_as_a_person_counts_it():
    """data/agentevals (PROVENANCE.md): a kagent Helm agent (Google ADK behind an A2A server) as Jaeger's query API
    answered it: 96 spans, of which two model calls and one MCP tool call are the agent's steps."""
    path = DATA / "agentevals" / "helm.json"
    assert claims(otel, path)
    records = read_records(otel, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = _episodes(records)
    assert ep.task == "list all Helm releases" and ep.agent == "gpt-4.1-mini-2025-04-14"
    assert calls(ep) == [("helm_list_releases", {})]
    assert results(ep)[0].startswith("NAME") and "kagent" in results(ep)[0]
    assert [s.action.kind for s in ep.steps] == ["tool_call", "message"] and ep.terminated
    assert ep.steps[1].action.text.startswith("There are two Helm releases installed in the cluster")
    assert ep.env["otel"]["resources"] == [{"service.name": "helm_agent", "service.namespace": "kagent"}]
    assert ep.env["trace"]["spans"] == 96
    golden.check(records, GOLDEN / "otel-jaeger-agentevals-helm.json")


def test_the_timeline_trace_passes_validation_through_ingest_all(run, query, tmp_path):
    """Its model spans overlap its tool spans (tools begin while the model span still answers): ingested and
    validated, no step goes back in time and nothing is quarantined."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / TIMELINE.name).write_bytes(TIMELINE.read_bytes())
    result = run("ingest-all", [tmp_path / "in"])
    assert result.status == "success", result.messages
    assert query("SELECT rule FROM quarantine") == []
    assert [r["n"] for r in query("SELECT count(*) AS n FROM episodes WHERE source_format = 'otel'")] == [2]
    steps = query("SELECT episode_id, step_index, timestamp FROM steps ORDER BY 1, 2")
    assert len(steps) == 12
    for key in {r["episode_id"] for r in steps}:
        times = [r["timestamp"] for r in steps if r["episode_id"] == key]
        assert times == sorted(times)


def test_a_damaged_answer_gives_a_row_per_damage_naming_where_and_its_other_spans_are_read():
    """A trace without a `spans` list and a span that is no object are rows naming them, with a snippet cut to
    300 characters; the spans after them are read, each knowing its place and its trace's id."""
    ok = _jaeger_span("0000000000000002", "execute_tool get_weather", tags=TOOL_SPAN)
    del ok["traceID"]  # the storage's span lists name the trace once, on the trace
    answer = {"data": [{"traceID": "cd" * 16, "spans": "x" * 400},
                       {"traceID": "ab" * 16, "spans": ["s" * 400, ok, dict(ok, spanID="0000000000000003")]}],
              "errors": [{"code": 500, "msg": "m" * 400}]}
    out = list(jaeger.spans(answer, "a.json"))
    rows = [r for r in out if isinstance(r, Rejected)]
    assert rows == [
        Rejected("bad_record", "a.json.data[0]: no Jaeger trace (no `spans` list); left out", "a.json.data[0]",
                 snippet=json.dumps(answer["data"][0], separators=(",", ":"))[:300]),
        Rejected("bad_record", "a.json.data[1].spans[0]: a span that is no object; left out", "a.json.data[1]",
                 snippet=json.dumps("s" * 400)[:300]),
        Rejected("bad_record", "a.json.errors[0]: the query service answered an error "
                 f"({json.dumps(answer['errors'][0], separators=(',', ':'))[:200]}); that trace is not in the file",
                 "a.json", record_id="errors[0]",
                 snippet=json.dumps(answer["errors"][0], separators=(",", ":"))[:300])]
    read = [s for s in out if not isinstance(s, Rejected)]
    assert [(f["trace_id"], f["span_id"], where) for f, _, _, where, _ in read] == [
        ("ab" * 16, "0000000000000002", "a.json.data[1].spans[1]"),
        ("ab" * 16, "0000000000000003", "a.json.data[1].spans[2]")]
    [(fields, _, _, where, _)] = [s for s in jaeger.spans({"spans": [ok]}, "t.json") if not isinstance(s, Rejected)]
    assert where == "t.json.spans[0]" and fields["trace_id"] is None


def test_times_durations_and_parents_as_jaeger_writes_them():
    """Jaeger writes 0 for a time it has none of; the end is the start plus a duration of zero or more; the
    parent is a CHILD_OF reference, else a FOLLOWS_FROM one, else the older `parentSpanID`."""
    base = _jaeger_span("0000000000000004", "x")
    start = dt.datetime(2026, 2, 2, 2, 40, 0, 4000, tzinfo=dt.timezone.utc)

    def times(**extra):
        fields = jaeger.span(dict(base, **extra), "w", {})[0]
        return fields["start"], fields["end"]

    assert times() == (start, start + dt.timedelta(microseconds=500))
    assert times(duration=0) == (start, start)
    assert times(duration=-1) == times(duration="500") == times(duration=None) == (start, None)
    assert times(startTime=0) == (None, None)
    assert times(startTime=1, duration=1)[0] == dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=dt.timezone.utc)
    follows = {"refType": "FOLLOWS_FROM", "traceID": "ab" * 16, "spanID": "0000000000000001"}
    other = {"refType": "CHILD_OF", "traceID": "ef" * 16, "spanID": "0000000000000009"}
    fields, attrs, *_ = jaeger.span(dict(base, references=[other, follows]), "w", {})
    assert fields["parent_id"] == "0000000000000001" and attrs["jaeger.references"] == [other]
    assert jaeger.span(dict(base, parentSpanID="0000000000000007"), "w", {})[0]["parent_id"] == "0000000000000007"
    assert jaeger.span(dict(base, parentSpanID=""), "w", {})[0]["parent_id"] is None


def test_typed_values_logs_processes_and_unknown_fields_are_kept():
    base = _jaeger_span("0000000000000005", "x")
    raw = dict(base, tags=["no tag", {"key": "ratio", "type": "float64", "value": "1.5"},
                            {"key": "big", "type": "float64", "value": "big"},
                            {"key": "cached", "type": "bool", "value": "False"}],
               logs=["no log", {"timestamp": 1_770_000_000_000_000, "fields": [
                   {"key": "event", "type": "int64", "value": 7}, {"key": "k", "type": "string", "value": "v"}]}],
               process={"serviceName": "svc", "tags": [], "tag": {"host@name": "h1"}}, shard=3)
    _, attrs, events, _, resource = jaeger.span(raw, "w", {})
    assert attrs == {"ratio": 1.5, "big": "big", "cached": False, "jaeger.fields": {"shard": 3}}
    assert events == [{"name": None, "time": dt.datetime(2026, 2, 2, 2, 40, tzinfo=dt.timezone.utc),
                       "attributes": {"k": "v"}}]
    assert resource == {"service.name": "svc", "host.name": "h1"}
    failed = _jaeger_span("0000000000000006", "x", tags=(("otel.status_code", "ERROR"),))
    assert jaeger.span(failed, "w", {})[0]["error"] == "the span failed"


def test_what_is_a_jaeger_span_or_trace():
    span = _jaeger_span("0000000000000001", "x")
    assert jaeger.is_span(span) and not jaeger.is_span({"spanID": "0000000000000001"})
    assert not jaeger.is_span({"spanID": 1, "operationName": "x"})
    assert jaeger.is_trace({"spans": [span]}) and jaeger.is_trace({"data": [{"spans": [span]}]})
    # an answer that found nothing says why in `errors`: Jaeger's; an empty `data` alone is anyone's
    assert jaeger.is_trace({"data": [], "errors": [{"code": 404}]})
    assert not jaeger.is_trace({"data": []}) and not jaeger.is_trace({"data": [{"spans": []}], "errors": []})
    assert not jaeger.is_trace([span]) and not jaeger.is_trace({"spans": [{"operationName": "x"}]})
