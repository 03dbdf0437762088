"""OpenTelemetry traces of agent apps, as JSON: OTLP/JSON and the OpenTelemetry Python SDK's span JSON.

- **OTLP/JSON** (the protocol's JSON encoding, as the OTLP file exporters and the Collector's `file` exporter write
  it: one `{"resourceSpans": [...]}` document, or one per line): `resourceSpans[].resource.attributes`,
  `scopeSpans[].scope`, `spans[]` of `{traceId, spanId, parentSpanId, name, kind, startTimeUnixNano,
  endTimeUnixNano, attributes: [{key, value: {stringValue | intValue | doubleValue | boolValue | arrayValue |
  kvlistValue | bytesValue}}], events: [{timeUnixNano, name, attributes}], status: {code, message}}` (the protobuf
  JSON mapping's snake_case names are read too; `intValue` is a string there). A document's `resourceLogs`
  records (`eventName`, `body`, the trace and span id: the GenAI conventions' event-based messages as log records)
  are events of the span each names; records that name no span of the same document are one `unknown_content`
  row. The telemetry `oteltest` (the
  OpenTelemetry Python contrib's test runner) saves from an OTLP receiver is read the same way: `{"metric_requests":
  [...], "trace_requests": [{"pbreq": {"resourceSpans": [...]}, "headers", "test_elapsed_ms"}]}`, each request
  one OTLP/JSON document (ids in base64, as the protobuf JSON mapping writes bytes); its metrics and logs hold no
  step and are not read.
  Grafana Tempo's trace API answers the same document with `batches` for `resourceSpans` (and, before OTLP 0.15,
  `instrumentationLibrarySpans` for `scopeSpans`): read alike.
- **Span documents as OpenSearch stores them** (Data Prepper's `otel-v1-apm-span` index, what its trace analytics
  and a search of that index give back): one span a document, `{traceId, spanId, parentSpanId, name, kind,
  startTime, endTime (ISO), durationInNanos, status: {code, message}, attributes: {...}, events: [{name, time,
  attributes}], instrumentationScope, resource: {attributes}, serviceName, traceGroup}`, alone, in an array or as
  the `hits.hits[]._source` of a search response.
- **Jaeger's JSON** (Jaeger UI's "Download JSON", its query API's `{"data": [trace...]}`, one trace, spans with
  their `process`): `operationName`, `references`, typed `tags`, `logs`, `processID` into `processes`, times in
  microseconds, normalised to the same span fields by `ingest.traces.jaeger`.
- **The Python SDK's span JSON** (`ReadableSpan.to_json()`, what its `ConsoleSpanExporter` prints, indented, one
  span after another): `{name, context: {trace_id, span_id}, kind, parent_id, start_time, end_time, status:
  {status_code, description}, attributes: {...}, events: [{name, timestamp, attributes}], links, resource:
  {attributes}}`; also a `{"spans": [...]}` dump or a JSON array of them, and spans a span model dumped with
  the `SpanContext`s as objects (any-agent's `AgentTrace`: integer ids, `parent` instead of `parent_id`, integer
  nanosecond times). A span written twice (an app whose processor prints each span when it starts, `end_time`
  null, and again when it ends, as Microsoft Agent Framework's samples do) is read once, as its ended record.

What the spans mean is read by `ingest.traces.genai` (the GenAI semantic conventions, OpenInference, OpenLLMetry;
the Langfuse SDK's own `langfuse.observation.*` attributes as `ingest.traces.langfuse` reads an observation, the
LangSmith SDK's `langsmith.span.kind` spans as `ingest.traces.langsmith` reads a run, promptflow's tracer's
`span_type` LLM / Tool spans as `ingest.traces.promptflow` reads them; a TOOL span named `handoff to <agent>`, as OpenInference's Agents SDK instrumentation writes one, is a handoff) and
assembled by `ingest.traces.spans`: one episode per trace, nested agents and handoffs as sub-episodes linked to
their parent. The resource attributes (`service.name`...) of a trace's spans go to `env["otel"]["resources"]`.
A trace that names its conversation (`gen_ai.conversation.id`, OpenInference's `session.id`...) is one turn of it:
the earlier turns its first model call is given are context (`env["trace"]["history_messages"]`), its task the
user message after them; without an id only where the structure is unambiguous (`ingest.traces.threads`).
Domain `mcp` (an agent's tool calls; `search` when they are mostly search tools), platform `linux`.

Traces with no span of an agent (a web service's own spans in the same export) are not episodes: one
`no_agent_spans` row names how many and their ids. Bad input: a span without its trace or span id is a
`bad_record` row naming the record and the field; a document
that is no trace document is an `unknown_content` row (kept in its snippet); text that is not JSON is a
`parse_error` row; the rest of the file is read.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.times import parse_time
from ingest.tools import dumps
from ingest.chat.messages import Context
from ingest.traces import genai, jaeger, langfuse, langsmith, promptflow
from ingest.traces.documents import documents
from ingest.traces.spans import Span, file_records

FORMAT = "otel"
VERSION = "14"
INFO = FormatInfo(
    group=None, rank=285, domains=('mcp', 'search'), platform="linux",
    summary=("OpenTelemetry traces (OTLP/JSON, also as oteltest saves it; the Python SDK's span JSON; OpenSearch's "
             "span documents; Jaeger's JSON) with the GenAI semantic conventions, "
             "OpenInference attributes or promptflow's tracer's: a trace is an episode, a tool span an action, nested agents sub-episodes"),
    producer="OpenTelemetry Python SDK with OpenInference's and OpenTelemetry's own instrumentations",
    versions=("opentelemetry-sdk 1.45.2; openinference-instrumentation-openai 0.1.66, "
              "openinference-instrumentation-openai-agents 2.6.0 (openai-agents 0.24.0), "
              "opentelemetry-instrumentation-openai-v2 2.4b0 (latest GenAI conventions), "
              "OpenLLMetry's opentelemetry-instrumentation-openai 0.62.4, "
              "openinference-instrumentation-smolagents 0.1.43 (smolagents 1.26.0)"),
    proof=("an instrumented `openai` client calls a tool through a scripted model server (OpenInference LLM spans with "
           "and without the app's TOOL spans; GenAI `chat` spans with `gen_ai.*.messages`, `invoke_agent` and "
           "`execute_tool` spans; OpenLLMetry's model spans with no span around the loop, one trace a call, read as "
           "one conversation), and an OpenAI Agents SDK run (one tool; a handoff) is traced by OpenInference; the "
           "SDK's console JSON and its OTLP/JSON encoding are read back and every tool call, result and model the "
           "script fixed is in the episode, as the Agents SDK's own export reads "
           "(`tests/ingest/traces/test_otel_producer.py`, `test_openai_agents_producer.py`); a smolagents "
           "ToolCallingAgent's and CodeAgent's runs traced by OpenInference hold every scripted call and its result "
           "(`tests/ingest/chat/test_smolagents_producer.py`); the conventions' older "
           "event-based messages, OpenLLMetry and nested agents, hand-made (`tests/ingest/traces/test_otel_read.py`); "
           "four real Apache-2.0 any-agent `AgentTrace` dumps (OpenAI Agents, LangChain, LlamaIndex, smolagents), "
           "three of agent-factory's own o3 runs (two `AgentTrace`s, a span-per-line export) and two Apache-2.0 "
           "spans of a LangChain agent on Bedrock as OpenSearch's trace index stored them (OpenInference, "
           "OpenLLMetry) are goldens read against the raw files; a real kagent Go ADK run saved as one OTLP/JSON document "
           "(agentevals, Apache-2.0) is read against the truth file its recorders wrote from the spans: prompt, "
           "calls, results, answer, agent, model calls and tokens (`tests/ingest/traces/test_otel_kagent.py`); "
           "a real Microsoft Agent Framework console export "
           "(each span printed twice) and one LangChain chain traced by OpenLLMetry, OpenLit and LangSmith's OTel "
           "exporter as oteltest saved it are read from ../shared (`tests/ingest/traces/test_otel_real.py`); Jaeger's "
           "JSON: a real kagent (Google ADK, OpenLLMetry) Helm agent's trace saved from Jaeger's query API "
           "(agentevals, Apache-2.0) and two GenAI traces of Jaeger UI's fixtures (a Download-JSON answer; a "
           "generated triage agent with tools and a nested agent, which also reads as the same spans written as "
           "OTLP) are goldens read against the raw files, and Jaeger's own converter output (its query service's "
           "answer for an OTLP input decodes to that input's spans; typed tags, logs, references, warnings) is the "
           "oracle "
           "(`tests/ingest/traces/test_jaeger_read.py`; Jaeger's query service is a Go program no package "
           "registry here ships, so none runs in the tests); the kagent run cut after its tools keeps each result "
           "from ADK's own tool spans (`test_otel_adk_tool_spans.py`); langchain-core 1.8.0 traced through "
           "LangSmith's OTel exporter (langsmith 0.15.1) reads as its run trees: a structured answer a message, a "
           "retriever tool's own retriever no step (`test_langsmith_otel_langchain.py`)"),
)

_EXTENSIONS = (".json", ".jsonl", ".ndjson", ".log", ".txt")
_OTLP = re.compile(rb'"resource_?[sS]pans"\s*:\s*\[|"batches"\s*:\s*\[\s*\{\s*"resource"\s*:')
# oteltest's saved telemetry opens with its metric or trace requests, each an OTLP request under `pbreq`
_OTELTEST = re.compile(rb'"(?:metric|trace|log)_requests"\s*:\s*\[\s*\{\s*"pbreq"\s*:')
_OTELTEST_KEYS = ("trace_requests", "metric_requests", "log_requests")
# a span document of OpenSearch's trace index: the fields Data Prepper writes beside a span's ids (OTLP/JSON names
# the scope `scope`, inside `scopeSpans`; the document names it `instrumentationScope`, at its top)
_SPAN_DOCUMENT = re.compile(rb'"(?:traceGroup|durationInNanos|instrumentationScope)"\s*:')
_SPAN_IDS = re.compile(rb'"traceId"\s*:\s*"[^"]+"')
# the SDK writes ids as "0x..." text; a span model that dumps the SDK's `SpanContext` (any-agent) as integers
_CONSOLE = re.compile(rb'"context"\s*:\s*\{[^{}]{0,200}?"trace_id"\s*:\s*(?:"|\d{6})')
_ERROR_CODES = (2, "2", "STATUS_CODE_ERROR", "ERROR")
HANDOFF_TOOL = "handoff to "
_HEX_ID = re.compile(r"(?:[0-9a-fA-F]{16}|[0-9a-fA-F]{32})\Z")


def units(files: list[str], head) -> list[str]:
    """JSON files whose first bytes hold OTLP/JSON `resourceSpans`, spans as the OpenTelemetry SDK writes them
    (`"context": {"trace_id": ...`), oteltest's requests (`"trace_requests": [{"pbreq": ...`), or OpenSearch's span
    documents (a `traceId` beside Data Prepper's `traceGroup`, `durationInNanos` or `instrumentationScope`), or
    Jaeger's JSON (`operationName` beside a `spanID` and its `references`, `processID` or `process`)."""
    found = []
    for path in files:
        if path.endswith(_EXTENSIONS):
            start = head(path)
            if _OTLP.search(start) or _CONSOLE.search(start) or _OTELTEST.search(start) or \
                    (_SPAN_DOCUMENT.search(start) and _SPAN_IDS.search(start)) or jaeger.claims(start):
                found.append(path)
    return found


def _get(obj: dict, camel: str, snake: str):
    return obj.get(camel, obj.get(snake))


def any_value(value):
    """An OTLP `AnyValue` as a plain value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "string_value", "boolValue", "bool_value", "doubleValue", "double_value",
                "bytesValue", "bytes_value"):
        if key in value:
            return value[key]
    if "intValue" in value or "int_value" in value:
        raw = _get(value, "intValue", "int_value")
        try:
            return int(raw)
        except (TypeError, ValueError):
            return raw
    array = _get(value, "arrayValue", "array_value")
    if isinstance(array, dict):
        return [any_value(v) for v in array.get("values") or []]
    kvlist = _get(value, "kvlistValue", "kvlist_value")
    if isinstance(kvlist, dict):
        return attributes(kvlist.get("values"))
    return None


def attributes(items) -> dict:
    if isinstance(items, dict):  # the SDK's JSON: already a map
        return items
    if not isinstance(items, list):
        return {}
    return {kv["key"]: any_value(kv.get("value")) for kv in items
            if isinstance(kv, dict) and isinstance(kv.get("key"), str)}


def span_id(value) -> str | None:
    """An id as lowercase hex: OTLP/JSON writes hex, the protobuf JSON mapping base64 and the SDK's JSON `0x`-hex;
    the same trace keeps one key whichever way it was written."""
    if not isinstance(value, str) or not value:
        return None
    text = value.removeprefix("0x")
    if _HEX_ID.match(text):
        return text.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) in (8, 16) else value


def _nanos(value) -> dt.datetime | None:
    try:
        ns = int(value)
    except (TypeError, ValueError):
        return None
    try:
        return dt.datetime.fromtimestamp(ns / 1e9, dt.timezone.utc) if ns > 0 else None
    except (OverflowError, OSError, ValueError):  # a time past what a datetime holds: no time, not a crash
        return None


def _error(status) -> str | None:
    if not isinstance(status, dict):
        return None
    code = status.get("code", status.get("status_code"))
    if code not in _ERROR_CODES:
        return None
    return genai.text_of(status.get("message") or status.get("description")) or "the span failed"


def make_span(fields: dict, attrs: dict, events: list[dict], order: int, where: str, ctx: Context) -> Span:
    """A `Span` from decoded fields, with what its attributes say it is (a Langfuse SDK observation's by its
    `langfuse.observation.*` attributes, as `ingest.traces.langfuse` reads them)."""
    span = Span(trace_id=span_id(fields["trace_id"]), span_id=span_id(fields["span_id"]),
                parent_id=span_id(fields.get("parent_id")),
                name=genai.name_of(fields.get("name")) or "", start=fields.get("start"), end=fields.get("end"),
                order=order,
                where=where, error=fields.get("error"), attributes=attrs)
    if events:
        span.extra["events"] = events
    if isinstance(attrs.get(langfuse.OTEL_TYPE), str):
        langfuse.read_otel_observation(span, attrs, ctx)
        return span
    if isinstance(attrs.get(langsmith.OTEL_KIND), str):
        langsmith.read_otel_span(span, attrs, where)
        return span
    if promptflow.writes(attrs):
        promptflow.read_otel_span(span, attrs, where)
        return span
    span.kind = genai.span_kind(attrs)
    if span.kind == "model":
        span.model = genai.model_turn(attrs, events, where)
        span.unread_output = None if span.model.outputs else genai.unread_output(attrs)
    elif span.kind == "tool" and span.name.startswith(HANDOFF_TOOL):
        # OpenInference's Agents SDK processor writes a handoff as a TOOL span `handoff to <agent>`
        span.kind, span.agent = "handoff", span.name[len(HANDOFF_TOOL):]
        span.handoff_from = genai.text_of(attrs.get("input.value"))
    elif span.kind == "tool":
        span.tool = genai.tool_use(attrs, span.name, span.error)
    elif span.kind == "agent":
        span.agent = genai.agent_name(attrs, span.name)
    return span


def _resource_spans(doc: dict):
    """A document's `resourceSpans`, or Grafana Tempo's `batches` (its trace API's name for them, whose items hold a
    `resource` and their `scopeSpans` or `instrumentationLibrarySpans`); None when it holds neither."""
    found = _get(doc, "resourceSpans", "resource_spans")
    batches = doc.get("batches")
    if found is None and isinstance(batches, list) and batches and all(
            isinstance(b, dict) and "resource" in b and ("scopeSpans" in b or "instrumentationLibrarySpans" in b)
            for b in batches):
        return batches
    return found


def _span_logs(doc: dict) -> dict[tuple, list[dict]]:
    """The document's `resourceLogs` records as events of the span each names (trace and span id): the GenAI
    conventions' event-based messages are log records now (`eventName` `gen_ai.user.message`, `gen_ai.choice`...,
    the message in `body`), read as the span events they were before."""
    found: dict[tuple, list[dict]] = {}
    resource_logs = _get(doc, "resourceLogs", "resource_logs")
    for rl in resource_logs if isinstance(resource_logs, list) else []:
        scopes = _get(rl, "scopeLogs", "scope_logs") if isinstance(rl, dict) else None
        for sl in scopes if isinstance(scopes, list) else []:
            records = _get(sl, "logRecords", "log_records") if isinstance(sl, dict) else None
            for record in records if isinstance(records, list) else []:
                if not isinstance(record, dict):
                    continue
                attrs = attributes(record.get("attributes"))
                event = {"name": _get(record, "eventName", "event_name") or attrs.get("event.name"),
                         "time": _nanos(_get(record, "timeUnixNano", "time_unix_nano")
                                        or _get(record, "observedTimeUnixNano", "observed_time_unix_nano")),
                         "attributes": {**attrs, "body": any_value(record.get("body"))}, "log_record": True}
                key = (span_id(_get(record, "traceId", "trace_id")), span_id(_get(record, "spanId", "span_id")))
                found.setdefault(key, []).append(event)
    return found


def _otlp_spans(doc: dict, where: str) -> Iterator[tuple[dict, dict, list, str, dict] | Rejected]:
    """(fields, attributes, events, where, resource) of every span of an OTLP/JSON document, its log records
    among the events of the span each names; records naming no span of the document are one row."""
    logs = _span_logs(doc)
    yield from _spans_of(doc, where, logs)
    if logs:
        left = [e for events in logs.values() for e in events]
        yield Rejected("unknown_content", f"{where}.resourceLogs: {len(left)} log record(s) name no span of the "
                       "document; kept in this row", where, record_id="resourceLogs",
                       snippet=dumps([{"trace_id": t, "span_id": s, "events": [e["name"] for e in events]}
                                      for (t, s), events in logs.items()])[:300])


def _spans_of(doc: dict, where: str, logs: dict) -> Iterator[tuple[dict, dict, list, str, dict] | Rejected]:
    resource_spans = _resource_spans(doc)
    if not isinstance(resource_spans, list):
        yield Rejected("bad_record", f"{where}.resourceSpans: not a list; the document is left out", where,
                       record_id="resourceSpans", snippet=dumps(doc)[:300])
        return
    for r, rs in enumerate(resource_spans):
        if not isinstance(rs, dict):
            continue
        resource = attributes(rs["resource"].get("attributes")) if isinstance(rs.get("resource"), dict) else {}
        scopes = _get(rs, "scopeSpans", "scope_spans") or \
            _get(rs, "instrumentationLibrarySpans", "instrumentation_library_spans")
        for s, ss in enumerate(scopes if isinstance(scopes, list) else []):
            spans = ss.get("spans") if isinstance(ss, dict) else None
            for i, raw in enumerate(spans if isinstance(spans, list) else []):
                here = f"{where}.resourceSpans[{r}].scopeSpans[{s}].spans[{i}]"
                if not isinstance(raw, dict):
                    yield Rejected("bad_record", f"{here}: a span that is no object; left out", where,
                                   snippet=dumps(raw)[:300])
                    continue
                events = raw.get("events") if isinstance(raw.get("events"), list) else []
                events = [{"name": e.get("name"), "time": _nanos(_get(e, "timeUnixNano", "time_unix_nano")),
                           "attributes": attributes(e.get("attributes"))} for e in events if isinstance(e, dict)]
                ids = (span_id(_get(raw, "traceId", "trace_id")), span_id(_get(raw, "spanId", "span_id")))
                events += logs.pop(ids, [])
                fields = {"trace_id": _get(raw, "traceId", "trace_id"), "span_id": _get(raw, "spanId", "span_id"),
                          "parent_id": _get(raw, "parentSpanId", "parent_span_id"), "name": raw.get("name"),
                          "start": _nanos(_get(raw, "startTimeUnixNano", "start_time_unix_nano")),
                          "end": _nanos(_get(raw, "endTimeUnixNano", "end_time_unix_nano")),
                          "error": _error(raw.get("status"))}
                yield fields, attributes(raw.get("attributes")), events, here, resource


def _int_id(value, digits: int):
    """An id the way the SDK's JSON writes it: any-agent's span model dumps `SpanContext`'s integers, made hex. A
    128-bit trace id is past what orjson reads as an integer: it comes as a float, the same for every span of the
    trace (which is what grouping needs), its hex then not the trace's own."""
    if isinstance(value, float) and value.is_integer() and value > 0:
        value = int(value)
    return f"{value:0{digits}x}" if isinstance(value, int) and not isinstance(value, bool) and value > 0 else value


def _sdk_time(value) -> dt.datetime | None:
    """The SDK's ISO time, or the integer nanoseconds a span model dumps."""
    return _nanos(value) if isinstance(value, int) and value > 10 ** 15 else parse_time(value)


def _sdk_span(raw: dict, where: str) -> tuple[dict, dict, list, str, dict]:
    context = raw["context"] if isinstance(raw.get("context"), dict) else {}
    parent = raw.get("parent_id")
    if parent is None and isinstance(raw.get("parent"), dict):  # the parent's `SpanContext` (any-agent)
        parent = raw["parent"].get("span_id")
    events = raw.get("events") if isinstance(raw.get("events"), list) else []
    events = [{"name": e.get("name"), "time": parse_time(e.get("timestamp")),
               "attributes": e.get("attributes") if isinstance(e.get("attributes"), dict) else {}}
              for e in events if isinstance(e, dict)]
    fields = {"trace_id": _int_id(context.get("trace_id"), 32), "span_id": _int_id(context.get("span_id"), 16),
              "parent_id": _int_id(parent, 16), "name": raw.get("name"), "start": _sdk_time(raw.get("start_time")),
              "end": _sdk_time(raw.get("end_time")), "error": _error(raw.get("status"))}
    resource = raw["resource"].get("attributes") if isinstance(raw.get("resource"), dict) else None
    resource = resource if isinstance(resource, dict) else None
    attrs = raw.get("attributes") if isinstance(raw.get("attributes"), dict) else {}
    return fields, attrs, events, where, resource or {}


def _oteltest_spans(doc: dict, where: str) -> Iterator[tuple[dict, dict, list, str, dict] | Rejected]:
    """The spans of oteltest's saved trace requests (its metric and log requests hold no span)."""
    requests = doc.get("trace_requests")
    for i, request in enumerate(requests if isinstance(requests, list) else []):
        here = f"{where}.trace_requests[{i}].pbreq"
        pbreq = request.get("pbreq") if isinstance(request, dict) else None
        if isinstance(pbreq, dict):
            yield from _otlp_spans(pbreq, here)
        else:
            yield Rejected("bad_record", f"{here}: no OTLP request object; left out", where,
                           record_id="pbreq", snippet=dumps(request)[:300])


def _span_document(raw: dict, where: str) -> tuple[dict, dict, list, str, dict]:
    """A span as one document (OpenSearch's trace index): OTLP's field names, times as ISO text."""
    events = raw.get("events") if isinstance(raw.get("events"), list) else []
    events = [{"name": e.get("name"), "time": parse_time(e.get("time")), "attributes": attributes(e.get("attributes"))}
              for e in events if isinstance(e, dict)]
    fields = {"trace_id": raw.get("traceId"), "span_id": raw.get("spanId"), "parent_id": raw.get("parentSpanId"),
              "name": raw.get("name"), "start": parse_time(raw.get("startTime")), "end": parse_time(raw.get("endTime")),
              "error": _error(raw.get("status"))}
    resource = attributes(raw["resource"].get("attributes")) if isinstance(raw.get("resource"), dict) else {}
    return fields, attributes(raw.get("attributes")), events, where, resource


def _is_span_document(doc) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("traceId"), str) and isinstance(doc.get("spanId"), str) \
        and ("startTime" in doc or "durationInNanos" in doc)


def _doc_spans(doc, where: str) -> Iterator[tuple[dict, dict, list, str, dict] | Rejected]:
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            yield from _doc_spans(item, f"{where}[{i}]")
    elif isinstance(doc, dict) and _resource_spans(doc) is not None:
        yield from _otlp_spans(doc, where)
    elif isinstance(doc, dict) and any(isinstance(doc.get(k), list) for k in _OTELTEST_KEYS):
        yield from _oteltest_spans(doc, where)
    elif _is_span_document(doc):
        yield _span_document(doc, where)
    elif jaeger.is_trace(doc):
        yield from jaeger.spans(doc, where)
    elif jaeger.is_span(doc):  # a span with its own `process` (a span list, a storage document)
        yield jaeger.span(doc, where, {})
    elif isinstance(doc, dict) and isinstance(doc.get("hits"), dict) and isinstance(doc["hits"].get("hits"), list):
        for i, hit in enumerate(doc["hits"]["hits"]):  # an OpenSearch search response: each hit's document
            source = hit.get("_source") if isinstance(hit, dict) else None
            yield from _doc_spans(source, f"{where}.hits.hits[{i}]._source")
    elif isinstance(doc, dict) and isinstance(doc.get("spans"), list):
        for i, item in enumerate(doc["spans"]):
            yield from _doc_spans(item, f"{where}.spans[{i}]")
    elif isinstance(doc, dict) and isinstance(doc.get("context"), dict):
        yield _sdk_span(doc, where)
    else:
        yield Rejected("unknown_content", f"{where}: neither OTLP/JSON nor an OpenTelemetry span; kept in this row",
                       where, snippet=dumps(doc)[:300])


def _add(spans: list[Span], span: Span, seen: dict[tuple[str, str], int]) -> None:
    """A span once per trace: a span written again (a processor that prints each span when it starts and when it
    ends, two exporters on one file) is kept as its last ended record, at the place of its first."""
    key = (span.trace_id, span.span_id)
    if key not in seen:
        seen[key] = len(spans)
        spans.append(span)
    elif span.end is not None or spans[seen[key]].end is None:
        span.order = spans[seen[key]].order
        spans[seen[key]] = span


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    ctx = Context(lambda data, media_type: source.put_blob(data, media_type, source.uri))
    traces: dict[str, list[Span]] = {}
    resources: dict[str, list[dict]] = {}
    seen: dict[tuple[str, str], int] = {}
    order = 0
    for item in documents(source.read_bytes(), name, source.budgets):
        if isinstance(item, Rejected):
            yield item
            continue
        line, doc = item
        for found in _doc_spans(doc, f"{name}:{line}"):
            if isinstance(found, Rejected):
                yield found
                continue
            fields, attrs, events, where, resource = found
            missing = next((k for k in ("trace_id", "span_id") if not isinstance(fields.get(k), str)), None)
            if missing:
                yield Rejected("bad_record", f"{where}: the span has no {missing}; left out", name, line=line,
                               record_id=missing)
                continue
            try:
                span = make_span(fields, attrs, events, order, where, ctx)
            except (TypeError, ValueError, AttributeError, KeyError) as e:  # a shape no reader rule foresaw
                yield Rejected("bad_record", f"{where}: the span cannot be read ({type(e).__name__}: {e}); left out",
                               name, line=line, snippet=dumps(attrs)[:300])
                continue
            _add(traces.setdefault(span.trace_id, []), span, seen)
            if resource and resource not in resources.setdefault(span.trace_id, []):
                resources[span.trace_id].append(resource)
            order += 1
    yield from ctx.problems
    envs = {trace_id: {"otel": {"resources": found}} for trace_id, found in resources.items() if found}
    for spans in traces.values():
        langsmith.settle_otel_trace(spans)
    yield from file_records(FORMAT, source.uri, name, traces, envs)
