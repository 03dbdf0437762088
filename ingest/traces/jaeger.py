"""Jaeger's JSON traces -> the span fields `ingest.traces.otel` assembles: what Jaeger UI's "Download JSON" saves
and its query service's HTTP API (`/api/traces/<id>`, `/api/traces?service=...`) answers.

The shapes (Jaeger's `uimodel`): a response `{"data": [trace, ...], "total", "limit", "offset", "errors"}`; one
trace `{traceID, spans: [...], processes: {"p1": {serviceName, tags}}, warnings}`; a span `{traceID, spanID,
operationName, references: [{refType: CHILD_OF | FOLLOWS_FROM, traceID, spanID}], startTime, duration (both in
microseconds), tags: [{key, type, value}], logs: [{timestamp, fields: [{key, type, value}]}], processID, warnings}`.
A span may carry its `process` itself instead of a `processID` (the anonymizer's span lists, the span documents
of Jaeger's Elasticsearch/OpenSearch storage, which may also hold tags as a `tag` map with `@` for `.`).

What it becomes: the tags are the span's attributes with their types (`int64` as an integer, also when Jaeger
wrote a large one as text; `float64`; `bool`, also as text; `binary` as its base64 text); the process's
`serviceName` and tags are the resource attributes (`service.name`); the parent is the first `CHILD_OF`
reference in the same trace (else a `FOLLOWS_FROM` one, else the older `parentSpanID`); times are microseconds
since the epoch, the end the start plus the duration; a log is an event whose name is its `event` field (where
Jaeger puts an OpenTelemetry event's name) and whose attributes are its other fields. A span fails where its
`otel.status_code` tag is `ERROR` (with `otel.status_description`) or its `error` tag is true. What has no place
in a span is kept in its attributes: references beyond the parent (`jaeger.references`), span and trace warnings
(`jaeger.warnings`, `jaeger.trace_warnings`) and fields this reader does not know (`jaeger.fields`); a span's
`flags` (its sampling bit) and a storage document's `startTimeMillis` (the start again) are not kept.
An error the query service answered (`errors[]`) is a `bad_record` row naming it.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Iterator

from ingest.record import Rejected
from ingest.tools import dumps

# a span as Jaeger writes it: its operation name beside its span id and its references, process id or process
OPERATION = re.compile(rb'"operationName"\s*:\s*"')
SPAN_ID = re.compile(rb'"spanID"\s*:\s*"')
SPAN_LINKS = re.compile(rb'"(?:references"\s*:\s*\[|processID"\s*:|process"\s*:\s*\{)')
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_KNOWN = frozenset({"traceID", "spanID", "operationName", "references", "startTime", "duration", "tags", "logs",
                    "processID", "process", "warnings", "flags", "parentSpanID", "startTimeMillis", "tag"})
_ERROR_STATUS = "ERROR"


def claims(start: bytes) -> bool:
    """The first bytes hold a Jaeger span: `operationName` beside a `spanID` and its `references` or process."""
    return bool(OPERATION.search(start) and SPAN_ID.search(start) and SPAN_LINKS.search(start))


def is_span(doc) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("spanID"), str) and "operationName" in doc


def is_trace(doc) -> bool:
    """A trace (`spans` of Jaeger spans) or a query answer (`data` of traces)."""
    if not isinstance(doc, dict):
        return False
    if isinstance(doc.get("data"), list):
        return any(is_trace(t) for t in doc["data"]) or (not doc["data"] and "errors" in doc)
    spans = doc.get("spans")
    return isinstance(spans, list) and any(is_span(s) for s in spans)


def _micros(value) -> dt.datetime | None:
    try:
        micros = int(value)
    except (TypeError, ValueError):
        return None
    try:
        return _EPOCH + dt.timedelta(microseconds=micros) if micros > 0 else None
    except OverflowError:  # a time past what a datetime holds: no time, not a crash
        return None


def _typed(kv: dict):
    """A tag's or log field's value by its declared type."""
    value, kind = kv.get("value"), kv.get("type")
    if kind == "int64" and isinstance(value, str):
        try:
            return int(value)  # past JavaScript's integers Jaeger writes the number as text
        except ValueError:
            return value
    if kind == "float64" and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    if kind == "bool" and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def tags(items) -> dict:
    """`[{key, type, value}]` as a map."""
    if not isinstance(items, list):
        return {}
    return {kv["key"]: _typed(kv) for kv in items if isinstance(kv, dict) and isinstance(kv.get("key"), str)}


def _span_tags(raw: dict) -> dict:
    attrs = tags(raw.get("tags"))
    if isinstance(raw.get("tag"), dict):  # Elasticsearch storage's tags as fields: `.` written as `@`
        attrs.update({k.replace("@", "."): v for k, v in raw["tag"].items()})
    return attrs


def _parent(raw: dict, trace_id) -> tuple[str | None, list]:
    """The parent's span id and the references that are not it."""
    refs = [r for r in raw.get("references") or [] if isinstance(r, dict)]
    same = [r for r in refs if r.get("traceID") in (None, trace_id)]
    parent = next((r for r in same if r.get("refType") == "CHILD_OF"), None) or \
        next((r for r in same if r.get("refType") == "FOLLOWS_FROM"), None)
    if parent is None:
        return raw.get("parentSpanID") or None, refs
    return parent.get("spanID"), [r for r in refs if r is not parent]


def _events(logs) -> list[dict]:
    events = []
    for log in logs if isinstance(logs, list) else []:
        if not isinstance(log, dict):
            continue
        fields = tags(log.get("fields"))
        name = fields.pop("event", None)
        events.append({"name": name if isinstance(name, str) else None, "time": _micros(log.get("timestamp")),
                       "attributes": fields})
    return events


def _error(attrs: dict) -> str | None:
    if attrs.get("otel.status_code") == _ERROR_STATUS:
        return str(attrs.get("otel.status_description") or "") or "the span failed"
    return "the span failed" if attrs.get("error") is True else None


def _resource(process) -> dict:
    if not isinstance(process, dict):
        return {}
    resource = tags(process.get("tags"))
    if isinstance(process.get("tag"), dict):
        resource.update({k.replace("@", "."): v for k, v in process["tag"].items()})
    if isinstance(process.get("serviceName"), str):
        resource = {"service.name": process["serviceName"], **resource}
    return resource


def span(raw: dict, where: str, processes: dict, trace_id=None) -> tuple[dict, dict, list, str, dict]:
    """(fields, attributes, events, where, resource) of one Jaeger span, as `ingest.traces.otel` takes them."""
    trace_id = raw.get("traceID") or trace_id
    attrs = _span_tags(raw)
    parent, other_refs = _parent(raw, trace_id)
    if other_refs:
        attrs["jaeger.references"] = other_refs
    if raw.get("warnings"):
        attrs["jaeger.warnings"] = raw["warnings"]
    unknown = {k: v for k, v in raw.items() if k not in _KNOWN}
    if unknown:
        attrs["jaeger.fields"] = unknown
    start = _micros(raw.get("startTime"))
    duration = raw.get("duration")
    end = start + dt.timedelta(microseconds=duration) \
        if start is not None and isinstance(duration, int) and duration >= 0 else None
    process = raw.get("process") if isinstance(raw.get("process"), dict) else processes.get(raw.get("processID"))
    fields = {"trace_id": trace_id, "span_id": raw.get("spanID"), "parent_id": parent,
              "name": raw.get("operationName"), "start": start, "end": end, "error": _error(attrs)}
    return fields, attrs, _events(raw.get("logs")), where, _resource(process)


def _trace_spans(trace, where: str) -> Iterator[tuple[dict, dict, list, str, dict] | Rejected]:
    if not isinstance(trace, dict) or not isinstance(trace.get("spans"), list):
        yield Rejected("bad_record", f"{where}: no Jaeger trace (no `spans` list); left out", where,
                       snippet=dumps(trace)[:300])
        return
    processes = trace["processes"] if isinstance(trace.get("processes"), dict) else {}
    for i, raw in enumerate(trace["spans"]):
        here = f"{where}.spans[{i}]"
        if not isinstance(raw, dict):
            yield Rejected("bad_record", f"{here}: a span that is no object; left out", where,
                           snippet=dumps(raw)[:300])
            continue
        found = span(raw, here, processes, trace.get("traceID"))
        if i == 0 and trace.get("warnings"):  # the query's own warnings (clock skew adjusted...): kept once
            found[1]["jaeger.trace_warnings"] = trace["warnings"]
        yield found


def spans(doc: dict, where: str) -> Iterator[tuple[dict, dict, list, str, dict] | Rejected]:
    """Every span of a Jaeger trace or query answer; the answer's errors as rows."""
    if not isinstance(doc.get("data"), list):
        yield from _trace_spans(doc, where)
        return
    for i, trace in enumerate(doc["data"]):
        yield from _trace_spans(trace, f"{where}.data[{i}]")
    for i, error in enumerate(doc.get("errors") or []):
        yield Rejected("bad_record", f"{where}.errors[{i}]: the query service answered an error "
                       f"({dumps(error)[:200]}); that trace is not in the file", where, record_id=f"errors[{i}]",
                       snippet=dumps(error)[:300])
