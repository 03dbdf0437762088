"""Langfuse traces and observations, as Langfuse exports them.

- **A trace's download** (the UI's "Download JSON", `trace-<id>.json`; also what its tRPC `traces.byIdWith
  ObservationsAndScores` gives): `{"trace": {id, name, timestamp, userId, sessionId, tags, input, output,
  metadata, scores: [...], ...}, "observations": [...]}`.
- **The public API**: `GET /api/public/traces/{id}` (a trace with its `observations` inlined, `htmlPath`,
  `scores`), the pages of `GET /api/public/traces` and `GET /api/public/observations` / `v2/observations`
  (`{"data": [...], "meta": {...}}`), and the tables' JSON / JSONL exports (observations or traces one per item
  or line). A trace whose `observations` are only ids holds no step: such a trace is not read.

An observation: `{id, traceId, type, name, startTime, endTime, parentObservationId, input, output, model
(providedModelName), modelParameters, usage / usageDetails, costDetails, level, statusMessage, metadata}`; Langfuse
keeps an OpenTelemetry span's attributes in `metadata.attributes`.

- `type` `GENERATION` (a model call): `input` is what it was sent, `output` what it answered, read by their
  structure: a chat-message list in any shape `ingest.chat` knows (OpenAI Chat Completions, Responses items,
  Anthropic, Gemini contents, LangChain, AutoGen; the GenAI conventions' `{role, parts: [{type...}]}`), a request
  or response object around one (`messages`, `contents`, `choices`, `candidates`, a Responses object's `output`,
  `{message}`, `{content: {role, parts}}`), one message, or text (a user's turn in, the model's answer out).
  When neither says anything, the OpenTelemetry attributes in `metadata.attributes` are read as `ingest.traces.otel`
  reads a span's (OpenInference, the GenAI conventions). The model: `model`, else `providedModelName`.
- `type` `TOOL` (a tool's execution): `name` (its tool, `execute_tool ` / `running tool: ` taken off; else
  `gen_ai.tool.name` / `tool.name` of the attributes), `input` the arguments, `output` the result, the call id from
  `gen_ai.tool.call.id`. A `SPAN` whose attributes mark it a tool, model or agent span is read as one.
- `type` `AGENT`: an agent (nested agents are sub-episodes, as `ingest.traces.spans` makes them).
- any other type (`SPAN`, `EVENT`, `CHAIN`, `RETRIEVER`, `EMBEDDING`, `EVALUATOR`, `GUARDRAIL`): not a step, kept
  in `env["trace"]["other_spans"]`.

A `level` of `ERROR` is the observation's failure (its `statusMessage`; a tool's result is then an error). One
episode per trace (`traceId`), assembled by `ingest.traces.spans`; `env["langfuse"]` keeps the trace's name, user,
session, tags, environment, release, its input and output and its scores (name, value, comment: evaluations of the
trace, not its outcome, which stays `unknown`), and per observation its usage and cost in
`env["trace"]["other_spans"]` / the step's raw. A trace with a `sessionId` is one turn of that session: the earlier
turns its first generation is given are context (`ingest.traces.threads`). Domain `mcp` (`search` when the tools
are mostly search tools), platform `linux`.

**Dataset runs** (experiments): a run with its items, run item pages and table exports, dataset items, scores,
and v4's experiment items, alone or saved in one file with the traces they ran: each run item is its trace's
episode, with the dataset item's input and expected output in `env["langfuse"]["dataset_run"]` and the outcome and
reward from the trace's scores (`ingest.traces.langfuse_runs`).

The Langfuse SDK itself is OpenTelemetry based: what it exports (OTLP with `langfuse.observation.*` attributes) is
read by `ingest.traces.otel`, each span as its observation here (`read_otel_observation`). How an observation's
`input` / `output` becomes messages: `ingest.traces.io_messages`.

Bad input: an observation without an `id` is a `bad_record` row naming the record and the field; a document that
is no Langfuse export is an `unknown_content` row; text that is not JSON a `parse_error` row; the rest is read.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.chat.messages import Context
from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.times import parse_time
from ingest.tools import dumps
from ingest.traces import genai
from ingest.traces import langfuse_runs as runs
from ingest.traces.documents import documents
from ingest.traces.io_messages import io_messages, tools_only_answer
from ingest.traces.spans import Span, file_records

FORMAT = "langfuse"
VERSION = "8"
INFO = FormatInfo(
    group=None, rank=287, domains=('mcp', 'search'), platform="linux",
    summary=("Langfuse traces and observations (a trace's JSON download, the public API's traces and observations, "
             "table exports): generations, tools and agents as steps; dataset runs and experiment items as "
             "episodes scored by their traces' scores"),
    producer=("Langfuse's trace download (traces of its framework integrations on Langfuse Cloud); the Langfuse Python "
              "SDK's OTLP export"),
    versions=("OpenAI Agents SDK, LangGraph (Python and JS), Google ADK, Koog, pydantic-ai, Claude Agent SDK, Agno, "
              "AutoGen, BeeAI, CrewAI, LlamaIndex, google-genai, Vertex AI, Vercel AI SDK and Microsoft Agent "
              "Framework traces of 2025-06 to 2025-12; langfuse 5.2.0 (run here)"),
    proof=("a Langfuse server cannot run here: seventeen real MIT-licensed downloads from Langfuse's own repository are "
           "goldens read against the raw files, and Langfuse's own ChatML adapter's parse of them (committed beside "
           "them) is the oracle for every tool call it finds; the public API's trace, observation pages and "
           "table exports hand-made after its models (`tests/ingest/traces/test_langfuse_read.py`); the SDK, "
           "OpenTelemetry based, records an agent's generations and tools and exports them as OTLP to a stand-in of "
           "Langfuse's endpoint on loopback, read by `otel` with the script as the oracle "
           "(`tests/ingest/traces/test_langfuse_producer.py`); dataset runs (a run saved with its dataset items, "
           "scores and two of the real traces, the run items table export, v4 experiment items) hand-made after the "
           "API's documented shapes, no public export being found (`tests/ingest/traces/test_langfuse_dataset_runs.py`); a "
           "second repository's real export (a LangChain tools agent's 18 runs, unlicensed) is a golden read from "
           "../shared (`test_langfuse_shared.py`)"),
)

OBSERVATION_TYPES = frozenset({"GENERATION", "SPAN", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EVALUATOR",
                               "EMBEDDING", "GUARDRAIL"})
_SNIFF = re.compile(rb'"parentObservationId"\s*:|"htmlPath"\s*:\s*"/project/|"observations"\s*:\s*\[\s*\{\s*"id"'
                    rb'|^\s*\{\s*"trace"\s*:\s*\{\s*"id"\s*:\s*"[^"]*"\s*,\s*"projectId"\s*:')
_TYPE = re.compile(rb'"type"\s*:\s*"(?:GENERATION|SPAN|EVENT|AGENT|TOOL|CHAIN|RETRIEVER|EVALUATOR|EMBEDDING'
                   rb'|GUARDRAIL)"')
# a dataset run: its items (each naming the dataset item and the trace it ran), or v4's experiment items
_RUN_SNIFF = re.compile(rb'"datasetRunItems"\s*:\s*\[|"(?:datasetItemId|experimentItemId)"\s*:\s*"')
_TOOL_PREFIXES = ("execute_tool ", "running tool: ", "tool.")
_TRACE_ENV = ("name", "userId", "sessionId", "tags", "environment", "release", "version", "htmlPath", "input",
              "output")
_OBS_KEPT = ("type", "level", "statusMessage", "usage", "usageDetails", "costDetails", "modelParameters",
             "completionStartTime")


def units(files: list[str], head) -> list[str]:
    """JSON files whose first bytes hold a Langfuse trace download (`{"trace": {"id", "projectId"...`), an API
    trace (`htmlPath: "/project/...`), observations (`parentObservationId`, or inlined `observations` beside an
    observation `type` of Langfuse's vocabulary), or a dataset run's items (`datasetRunItems`, or a
    `datasetItemId` / `experimentItemId` beside a `traceId`)."""
    found = []
    for path in files:
        if path.endswith((".json", ".jsonl", ".ndjson")):
            start = head(path)
            match = _SNIFF.search(start)
            if match and (match.group(0).lstrip().startswith(b"{") or b"htmlPath" in match.group(0)
                          or _TYPE.search(start)) or _RUN_SNIFF.search(start) and b'"traceId"' in start:
                found.append(path)
    return found


def _is_observation(obj) -> bool:
    return isinstance(obj, dict) and obj.get("type") in OBSERVATION_TYPES and \
        any(k in obj for k in ("traceId", "startTime", "parentObservationId"))


def _is_trace(obj) -> bool:
    return isinstance(obj, dict) and "type" not in obj and "id" in obj and (
        isinstance(obj.get("observations"), list) or "htmlPath" in obj or "projectId" in obj and "timestamp" in obj)


def _holds_records(doc: dict) -> bool:
    """Whether a document that is none of Langfuse's objects holds some under keys of its own (a run saved with its
    dataset items and traces)."""
    for value in doc.values():
        first = value[0] if isinstance(value, list) and value else value
        if isinstance(first, dict) and (runs.kind_of(first) or _is_trace(first) or _is_observation(first)
                                        or isinstance(first.get("trace"), dict)):
            return True
    return False


def _walk(doc, where: str, top: bool = True) -> Iterator[tuple[str, dict, dict | None]]:
    """("observation" | "trace" | a `langfuse_runs.KINDS` | "other", the object, its trace) for each object a
    document holds."""
    kind = runs.kind_of(doc)
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            yield from _walk(item, f"{where}[{i}]", False)
    elif kind is not None:
        yield kind, doc, None
    elif isinstance(doc, dict) and isinstance(doc.get("trace"), dict) and isinstance(doc.get("observations"), list):
        yield "trace", doc["trace"], None
        for i, obs in enumerate(doc["observations"]):
            yield ("observation" if _is_observation(obs) else "other"), obs, doc["trace"]
    elif isinstance(doc, dict) and isinstance(doc.get("data"), (list, dict)) and not _is_trace(doc):
        yield from _walk(doc["data"], f"{where}.data", False)
    elif _is_trace(doc):
        yield "trace", doc, None
        for obs in doc.get("observations") or []:
            if isinstance(obs, dict):
                yield ("observation" if _is_observation(obs) else "other"), obs, doc
    elif _is_observation(doc):
        yield "observation", doc, None
    elif top and isinstance(doc, dict) and _holds_records(doc):
        for key, value in doc.items():
            if isinstance(value, (list, dict)):
                yield from _walk(value, f"{where}.{key}", False)
    else:
        yield "other", doc, None


# an observation as a span ----------------------------------------------------------------------------------
def _attributes(obs: dict) -> dict:
    meta = genai.json_value(obs.get("metadata"))
    attrs = meta.get("attributes") if isinstance(meta, dict) else None
    return attrs if isinstance(attrs, dict) else {}


def _kind(obs: dict, attrs: dict) -> str | None:
    kind = obs.get("type")
    if kind == "GENERATION":
        return "model"
    if kind in ("TOOL", "AGENT"):
        return kind.lower()
    if kind != "SPAN":
        return None
    found = genai.span_kind(attrs)
    if found is None and ("gen_ai.tool.name" in attrs or "gen_ai.tool.call.id" in attrs):
        return "tool"  # Koog's tool spans name the tool and the call, not the operation
    return found


def _said(span: Span) -> int:
    return sum(1 for m in span.model.inputs if m.role != "system")


def _one_call_each(spans: list[Span]) -> None:
    """A generation nested in a generation is the same model call seen by a second instrumentation (Agno's
    `OpenAIChat.invoke` around the OpenAI SDK's `chat` span, the Vercel AI SDK's `generateText` around its
    `doGenerate`): the one that read as messages is kept as the model call, the other is no step."""
    by_id = {s.span_id: s for s in spans}
    for span in spans:
        parent = by_id.get(span.parent_id) if span.parent_id else None
        if span.kind != "model" or parent is None or parent.kind != "model":
            continue
        loser = span if _said(parent) >= _said(span) else parent
        loser.kind, loser.model = None, None


def _model(obs: dict) -> str | None:
    """The generation's model; else the one LangChain's callback put in its metadata (`ls_model_name`), as a
    download that kept the observation's own fields but not its `model` still holds it."""
    params = obs.get("modelParameters") if isinstance(obs.get("modelParameters"), dict) else {}
    metadata = obs.get("metadata") if isinstance(obs.get("metadata"), dict) else {}
    for value in (obs.get("model"), obs.get("providedModelName"), params.get("model"),
                  metadata.get("ls_model_name")):
        if isinstance(value, str) and value:
            return value
    return None


def _json_text(value: str) -> str:
    """The text a JSON string literal holds; the value as it is when it is no such literal."""
    try:
        decoded = orjson.loads(value)
    except orjson.JSONDecodeError:
        return value
    return decoded if isinstance(decoded, str) else value


def _tool(obs: dict, attrs: dict, error: str | None) -> genai.ToolUse:
    from_attrs = genai.tool_use(attrs, "", error)
    name = genai.name_of(obs.get("name")) or ""
    for prefix in _TOOL_PREFIXES:
        name = name.removeprefix(prefix)
    output = genai.json_value(obs.get("output"))
    if isinstance(output, str) and len(output) > 1 and output[0] == output[-1] == '"':
        output = _json_text(output)  # Microsoft Agent Framework records a text result as its JSON string
    output, _ = genai.mcp_result(output)  # an MCP tool's CallToolResult: its text
    if output in ({}, "", []):
        output = None  # the span recorded no result (Google ADK's): the next model call's input has it
    result = genai.text_of(output) if output is not None else error
    arguments = genai.json_value(obs.get("input"))
    return genai.ToolUse(name=from_attrs.name or name.strip() or None, call_id=from_attrs.call_id,
                         arguments=arguments if arguments is not None else from_attrs.arguments,
                         result=result if result is not None else from_attrs.result,
                         is_error=True if error else None)


def _span(obs: dict, trace_id: str, order: int, where: str, ctx: Context) -> Span:
    attrs = _attributes(obs)
    span = Span(trace_id=trace_id, span_id=str(obs["id"]), parent_id=genai.text_of(obs.get("parentObservationId")),
                name=genai.name_of(obs.get("name")) or str(obs.get("type")), start=parse_time(obs.get("startTime")),
                end=parse_time(obs.get("endTime")), order=order, where=where, attributes=attrs)
    _fill(span, obs, attrs, ctx)
    return span


def _fill(span: Span, obs: dict, attrs: dict, ctx: Context) -> None:
    """What an observation says about its span: its kind, model call, tool call or agent, and its failure."""
    if obs.get("level") == "ERROR":
        span.error = genai.text_of(obs.get("statusMessage")) or "ERROR"
    kept = {k: obs[k] for k in _OBS_KEPT if obs.get(k) not in (None, {}, "")}
    span.extra["langfuse"] = kept
    span.kind, where = _kind(obs, attrs), span.where
    if span.kind == "model":
        inputs = io_messages(obs.get("input"), "user", ctx, f"{where}.input")
        outputs = io_messages(obs.get("output"), "assistant", ctx, f"{where}.output")
        unread_output = not outputs and obs.get("output") not in (None, "", {}, [])
        if tools_only_answer(obs.get("input"), obs.get("output")):
            outputs = []  # no answer: the calls are the tool spans beside it
        for side, got in (("input", inputs), ("output", outputs)):
            if not got and obs.get(side) not in (None, "", {}, []):
                kept[f"unread_{side}"] = obs[side]  # no message in it: kept as written
        turn = genai.model_turn(attrs, [], where) if not (inputs or outputs) else None
        if unread_output and not (turn and turn.outputs):
            span.unread_output = obs["output"]  # the episode keeps it (`ingest.traces.spans`), never dropped
        span.model = genai.ModelTurn(inputs=inputs or (turn.inputs if turn else []),
                                     outputs=outputs or (turn.outputs if turn else []),
                                     model=_model(obs) or (turn.model if turn else None))
    elif span.kind == "tool":
        span.tool = _tool(obs, attrs, span.error)
    elif span.kind == "agent":
        span.agent = genai.agent_name(attrs, span.name)


OTEL_TYPE = "langfuse.observation.type"


def read_otel_observation(span: Span, attrs: dict, ctx: Context) -> None:
    """A span the Langfuse SDK exported (it is OpenTelemetry based: `langfuse.observation.type` generation / tool /
    agent / span..., `.input`, `.output`, `.model.name`, `.level`, `.status_message`), read as its observation."""
    prefix = "langfuse.observation."
    obs = {"type": str(attrs[OTEL_TYPE]).upper(), "name": span.name, "input": attrs.get(prefix + "input"),
           "output": attrs.get(prefix + "output"), "model": attrs.get(prefix + "model.name"),
           "level": attrs.get(prefix + "level"), "statusMessage": attrs.get(prefix + "status_message"),
           "usageDetails": genai.json_value(attrs.get(prefix + "usage_details"))}
    _fill(span, obs, {k: v for k, v in attrs.items() if not k.startswith(prefix)}, ctx)


def _decoded(value):
    """A trace's input or output as the value it stands for: the UI's download writes them as JSON text, some
    of it JSON text of JSON text."""
    for _ in range(2):
        if isinstance(value, str) and value[:1] == '"':
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                return value
        value = genai.json_value(value)
    return value


def _trace_env(trace: dict) -> dict:
    env = {k: _decoded(trace[k]) if k in ("input", "output") else trace[k] for k in _TRACE_ENV
           if trace.get(k) not in (None, [], "")}
    scores = [s for s in trace.get("scores") or [] if isinstance(s, dict)]
    if scores:
        env["scores"] = [{k: s.get(k) for k in ("name", "value", "stringValue", "comment", "source")
                          if s.get(k) is not None} for s in scores]
    return {"langfuse": env}


def _collect(source: Source, name: str, ctx: Context):
    """(trace id -> spans, trace id -> env, rows, the dataset-run records) of a file."""
    traces: dict[str, list[Span]] = {}
    envs: dict[str, dict] = {}
    rows: list[Rejected] = []
    seen: set[str] = set()
    links = runs.Links()
    for item in documents(source.read_bytes(), name, source.budgets):
        if isinstance(item, Rejected):
            rows.append(item)
            continue
        line, doc = item
        for what, obj, trace in _walk(doc, f"{name}:{line}"):
            where = f"{name}:{line}"
            if what in runs.KINDS:
                links.add(what, obj, where)
            elif what == "trace":
                envs.setdefault(str(obj.get("id")), _trace_env(obj))
            elif what == "other":
                rows.append(Rejected("unknown_content", f"{where}: not a Langfuse trace or observation; kept in this "
                                     "row", name, line=line, snippet=dumps(obj)[:300]))
            elif not isinstance(obj.get("id"), (str, int)):
                rows.append(Rejected("bad_record", f"{where}: an observation has no id; left out", name, line=line,
                                     record_id="id", snippet=dumps(obj)[:300]))
            elif str(obj["id"]) not in seen:  # the same observation in a trace and in its own list: once
                seen.add(str(obj["id"]))
                trace_id = str(obj.get("traceId") or (trace or {}).get("id") or "")
                spans = traces.setdefault(trace_id, [])
                try:
                    spans.append(_span(obj, trace_id, len(spans), f"{where} observation {obj['id']}", ctx))
                except (TypeError, ValueError, AttributeError, KeyError) as e:  # a shape no rule here foresaw
                    rows.append(Rejected("bad_record", f"{where}: observation {obj['id']} cannot be read "
                                         f"({type(e).__name__}: {e}); left out", name, line=line,
                                         record_id=str(obj["id"]), snippet=dumps(obj)[:300]))
    return traces, envs, rows, links


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    ctx = Context(lambda data, media_type: source.put_blob(data, media_type, source.uri))
    traces, envs, rows, links = _collect(source, name, ctx)
    yield from rows
    yield from ctx.problems
    told = len(ctx.problems)
    for spans in traces.values():
        _one_call_each(spans)
    found = runs.link(links, envs)
    threads = {trace_id: ("sessionId", str(env["langfuse"]["sessionId"])) for trace_id, env in envs.items()
               if isinstance(env.get("langfuse", {}).get("sessionId"), (str, int))}  # the conversation it is a turn of
    for record in file_records(FORMAT, source.uri, name, traces, envs, threads):
        yield runs.with_outcome(record, found)
    yield from runs.unread(links, found, set(traces), name, ctx)
    yield from ctx.problems[told:]  # those of the experiment items read alone
