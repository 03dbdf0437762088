"""OpenAI Agents SDK trace exports (`openai-agents`, `agents/tracing`): the `trace` and `trace.span` objects its
`Trace.export()` / `Span.export()` return, as a trace processor writes them to a file: one object per line, the
`{"data": [...]}` batches its `BackendSpanExporter` posts (one per line), or one JSON document holding either; also
a file an app saved itself: `{"traces": [...]}` of trace objects with their spans inside them (`"spans": [...]`).

- `trace`: `{object: "trace", id, workflow_name, group_id, metadata}` -> `env["openai_agents"]`.
- `trace.span`: `{object: "trace.span", id, trace_id, parent_id, started_at, ended_at, span_data, error}` with
  `span_data.type`:
  `agent` (`name`, `handoffs`, `tools`, `output_type`): an agent's run;
  `generation` (`input` / `output`: Chat Completions messages, `model`, `model_config`, `usage`): a model call
  (the Chat Completions model writes it: its messages give the task, the reasoning and the model of each step);
  `response` (`response_id`, `usage`: the Responses model's call; its content is not exported, only the ids are
  kept in `env["openai_agents"]["response_ids"]`);
  `function` (`name`, `input`: the arguments JSON, `output`, `mcp_data`): a tool's execution, an action with its
  output as the observation (an `error` on the span makes it an error result);
  `handoff` (`from_agent`, `to_agent`): the target agent's run is a sub-episode;
  `custom` (the SDK's task and turn spans among them), `guardrail`, `mcp_tools`, `transcription`, `speech`...:
  not steps, kept in `env["trace"]["other_spans"]`.

The spans are assembled by `ingest.traces.spans`: one episode per trace, an agent run inside another (an agent
used as a tool) or after a handoff a sub-episode linked to its parent; a trace with a `group_id` (the SDK's link
between the traces of one conversation) is one turn of it, the earlier turns its first model call is given context
(`ingest.traces.threads`). Domain `mcp` (`search` when the tools are
mostly search tools), platform `linux`. A trace whose spans are only agents and responses (a Responses model's run
without tools: what the model was sent and answered stays on OpenAI's side) has no step: one `no_model_content`
row says so.

Bad input: a span without `trace_id` or `id` is a `bad_record` row naming the record and the field; an object
that is neither a trace nor a span is an `unknown_content` row; text that is not JSON is a `parse_error` row; the
rest of the file is read.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.times import parse_time
from ingest.tools import dumps
from ingest.traces.documents import documents
from ingest.traces.genai import ModelTurn, ToolUse, chat_messages, name_of, text_of
from ingest.traces.spans import Span, file_records

FORMAT = "openai_agents"
VERSION = "7"
INFO = FormatInfo(
    group=None, rank=284, domains=('mcp', 'search'), platform="linux",
    summary=("OpenAI Agents SDK trace exports (`trace` / `trace.span` objects: agent, generation, response, "
             "function and handoff spans; handoffs and agents as tools as sub-episodes)"),
    producer="openai-agents (its `BackendSpanExporter` and a file-writing trace processor)",
    versions="0.24.0",
    proof=("an agent with one function tool runs against a scripted model server (Chat Completions and Responses "
           "models, and a handoff); the exporter's payloads and `Span.export()` lines are read back and every tool "
           "call, result and model the script fixed is in the episode (`tests/ingest/traces/test_openai_agents_"
           "producer.py`)"),
)

_SNIFF = re.compile(rb'"object"\s*:\s*"trace(?:\.span)?"')


def units(files: list[str], head) -> list[str]:
    """JSON files whose first bytes hold an Agents SDK `"object": "trace"` or `"trace.span"` record with its
    `span_data` or `workflow_name`."""
    found = []
    for path in files:
        if path.endswith((".json", ".jsonl", ".ndjson")):
            start = head(path)
            if _SNIFF.search(start) and (b'"span_data"' in start or b'"workflow_name"' in start):
                found.append(path)
    return found


def _span(raw: dict, order: int, where: str) -> Span:
    data = raw.get("span_data") if isinstance(raw.get("span_data"), dict) else {}
    kind = data.get("type")
    error = raw.get("error")
    error_text = None if error is None else (error.get("message") if isinstance(error, dict) and
                                             isinstance(error.get("message"), str) else dumps(error))
    span = Span(trace_id=raw["trace_id"], span_id=raw["id"], parent_id=text_of(raw.get("parent_id")) or None,
                name=name_of(data.get("name")) or str(kind or ""), start=parse_time(raw.get("started_at")),
                end=parse_time(raw.get("ended_at")), order=order, where=where, error=error_text,
                extra={"span_data": data, **({"metadata": raw["metadata"]} if raw.get("metadata") else {})})
    if kind == "generation":
        span.kind = "model"
        span.model = ModelTurn(inputs=chat_messages(data.get("input"), f"{where}.span_data.input"),
                               outputs=chat_messages(data.get("output"), f"{where}.span_data.output"),
                               model=name_of(data.get("model")))
    elif kind == "function":
        span.kind = "tool"
        result = data.get("output")
        span.tool = ToolUse(name=name_of(data.get("name")), arguments=data.get("input"),
                            result=text_of(result if result is not None else error_text),
                            is_error=True if error is not None else None)
    elif kind == "agent":
        span.kind, span.agent = "agent", name_of(data.get("name"))
    elif kind == "handoff":
        span.kind, span.agent = "handoff", name_of(data.get("to_agent"))
        span.handoff_from = name_of(data.get("from_agent"))
    return span


def _objects(doc, where: str) -> Iterator[tuple[dict, str]]:
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            yield from _objects(item, f"{where}[{i}]")
    elif isinstance(doc, dict) and "object" not in doc and isinstance(doc.get("data", doc.get("traces")), list):
        key = "data" if isinstance(doc.get("data"), list) else "traces"  # a page; a file of traces an app saved
        for i, item in enumerate(doc[key]):
            yield from _objects(item, f"{where}.{key}[{i}]")
    elif isinstance(doc, dict) and doc.get("object") == "trace" and isinstance(doc.get("spans"), list):
        # a trace saved with its spans inside it (`trace.export()` with the spans of a processor beside it)
        yield {k: v for k, v in doc.items() if k != "spans"}, where
        for i, item in enumerate(doc["spans"]):
            yield from _objects(item, f"{where}.spans[{i}]")
    else:
        yield doc, where


class _Traces:
    """What the file's objects add up to, per trace id in order of first appearance."""

    def __init__(self, name: str):
        self.name = name
        self.spans: dict[str, list[Span]] = {}
        self.info: dict[str, dict] = {}
        self.order = 0

    def add(self, obj, where: str, line: int) -> Iterator[Rejected]:
        kind = obj.get("object") if isinstance(obj, dict) else None
        if kind == "trace" and isinstance(obj.get("id"), str):
            self.spans.setdefault(obj["id"], [])
            self.info.setdefault(obj["id"], {}).update({k: v for k, v in obj.items() if k != "object" and v})
            return
        if kind != "trace.span":
            yield Rejected("unknown_content", f"{where}: neither an Agents SDK trace nor a span; kept in this row",
                           self.name, line=line, snippet=dumps(obj)[:300])
            return
        missing = next((k for k in ("trace_id", "id") if not isinstance(obj.get(k), str)), None)
        if missing:
            yield Rejected("bad_record", f"{where}: the span has no {missing}; left out", self.name, line=line,
                           record_id=missing)
            return
        try:
            span = _span(obj, self.order, where)
        except (TypeError, ValueError, AttributeError, KeyError) as e:  # a shape no reader rule foresaw
            yield Rejected("bad_record", f"{where}: the span cannot be read ({type(e).__name__}: {e}); left out",
                           self.name, line=line, snippet=dumps(obj)[:300])
            return
        self.order += 1
        self.spans.setdefault(span.trace_id, []).append(span)
        if span.extra["span_data"].get("type") == "response" and span.extra["span_data"].get("response_id"):
            ids = self.info.setdefault(span.trace_id, {}).setdefault("response_ids", [])
            ids.append(span.extra["span_data"]["response_id"])


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    traces = _Traces(name)
    for item in documents(source.read_bytes(), name, source.budgets):
        if isinstance(item, Rejected):
            yield item
            continue
        line, doc = item
        for obj, where in _objects(doc, f"{name}:{line}"):
            yield from traces.add(obj, where, line)
    envs = {trace_id: {"openai_agents": info} for trace_id, info in traces.info.items() if info}
    for trace_id, spans in list(traces.spans.items()):
        kinds = {s.extra["span_data"].get("type") for s in spans}
        if "response" in kinds and not kinds & {"generation", "function", "handoff"}:
            del traces.spans[trace_id]
            yield Rejected("no_model_content", f"{name}: trace {trace_id}: its {len(spans)} spans are agents and "
                           "responses that name only a `response_id` (the SDK's export leaves what the model was "
                           "sent and answered on OpenAI's side): no step to read", name, snippet=trace_id)
    # the SDK's `group_id` links the traces of one conversation: a trace with one is a turn of it
    threads = {trace_id: ("group_id", str(info["group_id"])) for trace_id, info in traces.info.items()
               if isinstance(info.get("group_id"), (str, int)) and str(info["group_id"]).strip()}
    yield from file_records(FORMAT, source.uri, name, traces.spans, envs, threads)
