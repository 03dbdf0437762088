"""LangSmith runs (`langsmith` SDK, LangChain / LangGraph tracing): the run records its SDK posts to the ingest API
(`{"post": [...], "patch": [...]}` batches of `/runs/batch`, one per line) and the runs its API and UI export (a run
per line, a JSON array, a `{"runs": [...]}` document, run trees nested in `child_runs`).

A run: `{id, trace_id, parent_run_id, dotted_order, name, run_type, start_time, end_time, inputs, outputs, error,
extra, tags, events}`; a `patch` completes the `post` of the same id (its `outputs`, `end_time`, `error`). A run
saved without its `parent_run_id` (the API's runs written out as post / patch lines) has the parent its
`dotted_order` names: the segment before its own.
Times: zoned ISO times as they are; LangSmith's API writes them without a zone, in UTC, which its `dotted_order`
(`20240914T223155647000Z<id>`) says: a time without a zone is UTC in a run that has a dotted order, else null. Runs
are taken in `dotted_order` order (the order they started).

- `run_type` `llm`: a model call. `inputs.messages` (OpenAI Chat Completions messages, as `wrap_openai` records its
  call's keyword arguments; or LangChain messages, serialized `{lc, id: [..., "HumanMessage"], kwargs}` or
  `{type: human, data}`, also a list of such lists), `outputs.choices[].message` (OpenAI) or
  `outputs.generations[][].message` (LangChain); the model from `outputs.model`, else
  `extra.invocation_params.model`, else `extra.metadata.ls_model_name`.
- `run_type` `tool`: a tool's execution: `name`, `inputs` (the arguments), `outputs.output` (else the outputs) or
  `error` (an error result); an output that is a LangChain `ToolMessage` (a tool invoked with the model's call)
  gives its `content`, the `tool_call_id` it answers and its `status` (`error`: an error result).
- `run_type` `retriever`: the environment answering a query (a vector store's, a search API's): a `search` action of
  its own with its `inputs` (`{"query": ...}`) as the arguments and `outputs.documents` as the observation, written
  as the search readers' result blocks (`[n] <source>`, `Title:`, `Snippet:` the page content; `ingest.search`
  parses them into `ui_tree`); the run (its name, documents and metadata as written) is the action's raw. A retriever
  run beneath a `tool` run is that tool's own work (`create_retriever_tool`): the tool run is the step, not it.
- Structured output (LangChain's `with_structured_output`): a model call whose schema is given to it as the one tool
  it must call is the model's answer, not a tool the environment runs: no tool run answers it. Read so, by evidence:
  `ls_structured_output_format` in the run's `extra.options` / `extra.metadata` / `extra.invocation_params` (LangChain
  since late 2024; its `schema.title` names the call), or `extra.invocation_params.tool_choice` forcing one named
  function beside a `parser` run of the same parent that reads the call (`PydanticToolsParser`,
  `JsonOutputKeyToolsParser`: how LangChain builds it before). That call becomes the turn's text (its arguments as
  JSON: a `message` step), its schema, call and evidence kept in the step's raw (`structured_output`). A forced tool
  choice without either is a tool call as written.
- any other run type (`chain`, `prompt`, `parser`, `embedding`): not a step, kept in `env["trace"]["other_spans"]`.

The same runs sent as OpenTelemetry spans (the SDK's OTel exporter, `LANGSMITH_OTEL_ENABLED`): `langsmith.span.kind`
is the run type, `gen_ai.prompt` / `gen_ai.completion` the inputs / outputs as JSON text, the run's metadata one
`langsmith.metadata.<key>` attribute a key; `ingest.traces.otel` reads those spans with `read_otel_span` (`llm`,
`tool` and `retriever` as above), then each trace's with `settle_otel_trace`, with the same helpers as run trees: a
retriever span beneath a tool span is the tool's work; structured output by
`langsmith.metadata.ls_structured_output_format`, else a tool choice forcing one function
(`langsmith.metadata.tool_choice`, which langchain-core 1.x copies from the invocation parameters, with
`gen_ai.tool.definitions` the tools offered; or the `tool_choice` of a wrapped client's `gen_ai.prompt`) beside a
`parser` span of the same parent. The exporter keeps no `extra.options`, where LangChain writes
`ls_structured_output_format`, nor the invocation parameters of langchain-core 0.3: there a structured answer
without a forced choice in the metadata stays a tool call.

One episode per trace (`trace_id`, else the root of the run's `parent_run_id` chain), assembled by
`ingest.traces.spans`: a trace whose root run's metadata names its thread (`thread_id`, `session_id`,
`conversation_id`) is one turn of it, so what its first model call is given up to its last assistant turn (the
thread's earlier turns) is context (`env.trace.history_messages`), not its steps (`ingest.traces.threads`: without
an id, only where the structure is unambiguous);
`env["langsmith"]` keeps the project (`session_name`) and the root run's name. Domain `mcp`
(`search` when the tools are mostly search tools: retrievals are), platform `linux`.

Bad input: a run without an `id` is a `bad_record` row naming the record and the field; an object that is no run is
an `unknown_content` row; text that is not JSON is a `parse_error` row; the rest of the file is read.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.times import parse_time
from ingest.tools import dumps
from ingest.traces.documents import documents
from ingest.traces.genai import ModelTurn, ToolUse, chat_messages, json_value, name_of, text_of
from ingest.traces.spans import Span, file_records
from ingest.traces.threads import metadata_thread

FORMAT = "langsmith"
VERSION = "7"
INFO = FormatInfo(
    group=None, rank=286, domains=('mcp', 'search'), platform="linux",
    summary="LangSmith runs (the SDK's ingest batches, exported runs and run trees): llm, tool and retriever runs as "
            "steps; structured output as the model's answer",
    producer="LangSmith SDK (`wrap_openai` and `@traceable`) and LangChain's tracer (langchain-core) posting to a "
             "stand-in of its ingest API",
    versions="langsmith 0.15.1; langchain-core 0.3.86, 1.8.0",
    proof=("an `openai` client wrapped by `wrap_openai` calls a `@traceable` tool through a scripted model server that "
           "also takes the SDK's `/runs/batch` posts; every tool call, result and model the script fixed is in the "
           "episode (`tests/ingest/traces/test_langsmith.py`); langchain-core's tracer on a scripted retrieval agent "
           "(`with_structured_output` plan, retriever runs, a retriever tool) is read as the script fixed it "
           "(`test_langsmith_langchain.py`); exported runs with patches, LangChain messages, naive API times, forced "
           "tool choices and retrievals, hand-made; a real chat-langchain trace the SDK's maintainers saved from the "
           "API as post / patch lines (MIT, 81 runs, no parent ids: 8 model calls, 9 retrievals) is a golden read "
           "against the raw file (`test_langsmith_real.py`)"),
)

_RUN = re.compile(rb'"run_type"\s*:\s*"(?:llm|chain|tool|retriever|prompt|parser|embedding)"')
_TREE = re.compile(rb'"(?:dotted_order|parent_run_id|trace_id|child_runs)"\s*:')
# a run whose long inputs push `run_type` past the head: LangChain's tracer fields open it (`serialized`, the
# `events` list that starts with the run's `start` event)
_TRACER_RUN = re.compile(rb'^\s*[\[{].{0,400}?"serialized"\s*:.{0,2000}?"events"\s*:\s*\[\s*\{\s*"name"\s*:\s*"start"',
                         re.DOTALL)
_LC_ROLES = {"HumanMessage": "user", "AIMessage": "assistant", "SystemMessage": "system", "ToolMessage": "tool",
             "HumanMessageChunk": "user", "AIMessageChunk": "assistant"}
_DOTTED = re.compile(r"(\d{8}T\d{6})(\d{6})Z")


def units(files: list[str], head) -> list[str]:
    """JSON files whose first bytes hold a LangSmith run: a `run_type` of its vocabulary beside a `dotted_order`,
    `parent_run_id`, `trace_id` or `child_runs`; or, where a run's inputs are too long for that, a first record
    that opens with the tracer's `serialized` and its `events` beginning with `start` (runs the API lists, saved
    one per line)."""
    found = []
    for path in files:
        if path.endswith((".json", ".jsonl", ".ndjson")):
            start = head(path)
            if _RUN.search(start) and _TREE.search(start) or _TRACER_RUN.search(start):
                found.append(path)
    return found


def _lc_message(msg):
    """A LangChain message as a Chat Completions one: serialized (`{lc, id, kwargs}`) or `{type, data}`."""
    if not isinstance(msg, dict):
        return msg
    if isinstance(msg.get("kwargs"), dict) and isinstance(msg.get("id"), list) and msg["id"]:
        data, role = msg["kwargs"], _LC_ROLES.get(str(msg["id"][-1]), str(msg["id"][-1]))
    elif isinstance(msg.get("data"), dict) and isinstance(msg.get("type"), str):
        data, role = msg["data"], msg["type"]
    else:
        return msg
    out = {"role": role, "content": data.get("content"), "tool_call_id": data.get("tool_call_id")}
    calls = data.get("tool_calls")
    if isinstance(calls, list):  # LangChain's {name, args, id}
        out["tool_calls"] = [{"id": c.get("id"), "function": {"name": c.get("name"), "arguments": c.get("args")}}
                             for c in calls if isinstance(c, dict)]
    return out


def _messages(value, where: str):
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        value = [m for batch in value for m in batch]  # LangChain: one list per prompt of the batch
    if isinstance(value, list):
        value = [_lc_message(m) for m in value]
    return chat_messages(value, where)


def _outputs(outputs, where: str):
    if not isinstance(outputs, dict):
        return []
    if isinstance(outputs.get("choices"), list):
        return _messages([c.get("message") for c in outputs["choices"] if isinstance(c, dict)], where)
    generations = outputs.get("generations")
    if isinstance(generations, list):
        flat = [g for batch in generations for g in (batch if isinstance(batch, list) else [batch])]
        return _messages([g.get("message") for g in flat if isinstance(g, dict) and g.get("message")], where)
    return []


def _model(run: dict) -> str | None:
    extra = run.get("extra") if isinstance(run.get("extra"), dict) else {}
    outputs = run.get("outputs") if isinstance(run.get("outputs"), dict) else {}
    params, metadata = extra.get("invocation_params"), extra.get("metadata")
    for value in (outputs.get("model"), params.get("model") if isinstance(params, dict) else None,
                  metadata.get("ls_model_name") if isinstance(metadata, dict) else None):
        if isinstance(value, str) and value:
            return value
    return None


_SEARCH_ACTION = "search"  # a retrieval, named as the search readers name a search tool call
_SOURCE_KEYS = ("source", "url", "link", "loc")


def _document(doc) -> tuple[str | None, str | None, str | None]:
    """(source, title, content) of a LangChain `Document`: `{page_content, metadata}` or serialized `{lc, kwargs}`."""
    if isinstance(doc, dict) and isinstance(doc.get("kwargs"), dict) and "lc" in doc:
        doc = doc["kwargs"]
    if not isinstance(doc, dict):
        return None, None, text_of(doc)
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    source = next((v.strip() for k in _SOURCE_KEYS if isinstance(v := meta.get(k), str) and v.strip()
                   and not any(c.isspace() for c in v.strip())), None)
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    content = doc.get("page_content")
    return source, title, content if isinstance(content, str) else text_of(content)


def _documents_text(outputs) -> str | None:
    """A retriever's documents as the search readers' result blocks (`[n] <source>`, `Title:`, `Snippet:`), one per
    document in its order; outputs of another shape as written (JSON)."""
    docs = outputs.get("documents") if isinstance(outputs, dict) else None
    if not isinstance(docs, list):
        return text_of(outputs) if outputs not in (None, {}) else None
    blocks = []
    for i, doc in enumerate(docs, 1):
        source, title, content = _document(doc)
        lines = [f"[{i}] {source or '(no source)'}"]
        if title is not None:
            lines.append(f"Title: {' '.join(title.split())}")
        lines.append(f"Snippet: {content or ''}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _retrieval(span: Span, inputs, outputs, error: str | None) -> None:
    """A retriever run: a `search` action with its query, its documents the observation (see the docstring)."""
    span.kind = "tool"
    result = _documents_text(outputs)
    span.tool = ToolUse(name=_SEARCH_ACTION, call_id=f"retriever:{span.span_id}",
                        arguments=inputs if isinstance(inputs, dict) else {"query": inputs},
                        result=result if result is not None else error, is_error=True if error else None)


def _tool_message(value) -> dict | None:
    """A LangChain `ToolMessage` as a tool returns it when invoked with the model's call: `{content, type: tool,
    tool_call_id, status}`, `{type: tool, data}` or serialized `{lc, id: [..., ToolMessage], kwargs}`; else None."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("kwargs"), dict) and isinstance(value.get("id"), list) and value["id"] \
            and value["id"][-1] == "ToolMessage":
        data = value["kwargs"]
    elif value.get("type") == "tool":
        data = value["data"] if isinstance(value.get("data"), dict) else value
    else:
        return None
    return data if "tool_call_id" in data and "content" in data else None


def _tool_use(name: str | None, inputs, outputs, error: str | None) -> ToolUse:
    """A tool run: `outputs.output` (else the outputs) or its error; a `ToolMessage` output gives its content, the
    call it answers and whether it failed (`status: error`)."""
    result = outputs.get("output") if isinstance(outputs, dict) and set(outputs) == {"output"} else outputs
    message = _tool_message(result)
    if message is None:
        return ToolUse(name=name, arguments=inputs, result=text_of(result if result is not None else error),
                       is_error=True if error else None)
    content = message["content"]
    return ToolUse(name=name, call_id=text_of(message["tool_call_id"]), arguments=inputs,
                   result=text_of(content if content is not None else error),
                   is_error=True if error or message.get("status") == "error" else None)


def _forced_tool(params) -> str | None:
    """The function a `tool_choice` forces: OpenAI's `{type: function, function: {name}}`, Anthropic's
    `{type: tool, name}`, a bare name (not `auto` / `none`), or `any` / `required` where `tools` offers one
    function only (how LangChain's `with_structured_output` binds its schema)."""
    choice = params.get("tool_choice") if isinstance(params, dict) else None
    if isinstance(choice, dict):
        named = choice.get("function") if isinstance(choice.get("function"), dict) else choice
        return name_of(named.get("name"))
    if choice in ("any", "required"):
        tools = params.get("tools")
        if isinstance(tools, list) and len(tools) == 1 and isinstance(tools[0], dict):
            named = tools[0].get("function") if isinstance(tools[0].get("function"), dict) else tools[0]
            return name_of(named.get("name"))
        return None
    if isinstance(choice, str) and choice not in ("auto", "none"):
        return choice
    return None


def _structured(run: dict, parsed: set[str]) -> dict | None:
    """Evidence that a model run's tool call is its structured answer (see the docstring): `{schema, evidence}`
    (`schema` None: every call of the turn), or None."""
    extra = run.get("extra") if isinstance(run.get("extra"), dict) else {}
    formats = {f"extra.{key}.ls_structured_output_format": extra[key].get("ls_structured_output_format")
               for key in ("options", "metadata", "invocation_params") if isinstance(extra.get(key), dict)}
    return structured_evidence(formats, _forced_tool(extra.get("invocation_params")), _parent_of(run) in parsed,
                               "invocation_params.tool_choice")


def structured_evidence(formats: dict, forced: str | None, parsed: bool, forced_from: str) -> dict | None:
    """`{schema, evidence}` where a model call answered in a schema: LangChain's `ls_structured_output_format` (a
    value or its JSON, in the first of `formats` (where -> value) that holds one), else a tool choice forcing one
    function (`forced`, read from `forced_from`) beside a parser run of the same parent; else None."""
    for where, fmt in formats.items():
        fmt = json_value(fmt)
        if isinstance(fmt, dict):
            schema = fmt.get("schema") if isinstance(fmt.get("schema"), dict) else {}
            return {"schema": name_of(schema.get("title") or schema.get("name")), "evidence": where}
    if forced and parsed:
        return {"schema": forced,
                "evidence": f"{forced_from} forces it and a parser run of the same parent reads the call"}
    return None


def beneath_tool(parent: str | None, kinds: dict[str, str | None], parents: dict[str, str | None]) -> bool:
    """Whether a run (its `parent`) is beneath a `tool` run: `kinds` and `parents` map each run id to its run type
    and its parent (a retriever beneath a tool is the tool's own work)."""
    seen: set[str] = set()
    while parent is not None and parent in kinds and parent not in seen:
        seen.add(parent)
        if kinds[parent] == "tool":
            return True
        parent = parents.get(parent)
    return False


def _as_answer(messages: list, found: dict) -> list:
    """The structured answer's call as the turn's text (its arguments as JSON), the call kept in the raw."""
    for msg in messages:
        calls = [c for c in msg.tool_calls if found["schema"] is None or c.name == found["schema"]]
        if msg.role != "assistant" or len(calls) != 1:
            continue
        [call] = calls
        msg.tool_calls = [c for c in msg.tool_calls if c is not call]
        answer = call.arguments if isinstance(call.arguments, str) else dumps(call.arguments)
        msg.text = "\n\n".join(t for t in (msg.text, answer) if t)
        kept = {"schema": call.name, "evidence": found["evidence"], "call": call.raw}
        msg.raw = {**(msg.raw or {}), "structured_output": kept}
    return messages


def _time(value, dotted: str | None) -> dt.datetime | None:
    """A run's time: zoned as written; without a zone, UTC when the run has a `dotted_order` (LangSmith's API writes
    its times in UTC without saying so, and the `Z` of the dotted order does); else null."""
    parsed = parse_time(value)
    if parsed is not None or not isinstance(value, str) or not dotted or not _DOTTED.search(dotted):
        return parsed
    try:
        return dt.datetime.fromisoformat(value.strip()).replace(tzinfo=dt.timezone.utc)
    except ValueError:
        return None


def _span(run: dict, trace_id: str, order: int, where: str, context: "_Context") -> Span:
    kind, error = run.get("run_type"), run.get("error")
    dotted = run.get("dotted_order") if isinstance(run.get("dotted_order"), str) else None
    kept = {k: v for k, v in run.items() if k not in ("child_runs",)}
    span = Span(trace_id=trace_id, span_id=str(run["id"]), parent_id=_parent_of(run),
                name=name_of(run.get("name")) or str(kind or ""), start=_time(run.get("start_time"), dotted),
                end=_time(run.get("end_time"), dotted), order=order, where=where,
                error=text_of(error) if error else None, extra={"run": kept})
    if kind == "llm":
        span.kind = "model"
        inputs = run.get("inputs") if isinstance(run.get("inputs"), dict) else {}
        outputs = _outputs(run.get("outputs"), f"{where}.outputs")
        found = _structured(run, context.parsed)
        span.model = ModelTurn(inputs=_messages(inputs.get("messages"), f"{where}.inputs.messages"),
                               outputs=_as_answer(outputs, found) if found else outputs, model=_model(run))
    elif kind == "retriever" and not context.in_tool(run):
        _retrieval(span, run.get("inputs"), run.get("outputs"), span.error)
    elif kind == "tool":
        span.kind = "tool"
        span.tool = _tool_use(name_of(run.get("name")), run.get("inputs"), run.get("outputs"), span.error)
    return span


OTEL_KIND = "langsmith.span.kind"


def read_otel_span(span: Span, attrs: dict, where: str) -> None:
    """A LangSmith run sent as an OpenTelemetry span: its run type in `langsmith.span.kind`, its inputs and outputs
    as JSON in `gen_ai.prompt` / `gen_ai.completion` (a `chain`, `prompt` or `parser` run is no step; a `retriever`
    run is a search action)."""
    kind = attrs.get(OTEL_KIND)
    inputs, outputs = json_value(attrs.get("gen_ai.prompt")), json_value(attrs.get("gen_ai.completion"))
    if kind == "llm":
        span.kind = "model"
        messages = inputs.get("messages") if isinstance(inputs, dict) else None
        model = next((m for m in (attrs.get("gen_ai.response.model"), attrs.get("gen_ai.request.model"))
                      if isinstance(m, str) and m), None)
        span.model = ModelTurn(inputs=_messages(messages, f"{where}.gen_ai.prompt.messages"),
                               outputs=_outputs(outputs, f"{where}.gen_ai.completion"), model=model)
    elif kind == "retriever":
        _retrieval(span, inputs, outputs, span.error)
    elif kind == "tool":
        span.kind = "tool"
        span.tool = _tool_use(span.name or None, inputs, outputs, span.error)


OTEL_METADATA = "langsmith.metadata"  # the run's `extra.metadata`, one attribute a key (JSON text for a structure)


def settle_otel_trace(spans: list[Span]) -> None:
    """What the LangSmith spans of one trace are beside each other, as for run trees: a retriever beneath a tool span
    is the tool's own work (no step); a model call whose forced tool call is its structured answer becomes a
    message (`_otel_structured`: the parser span of the same parent is the evidence a span alone cannot give)."""
    ours = [s for s in spans if isinstance(s.attributes.get(OTEL_KIND), str)]
    kinds = {s.span_id: s.attributes[OTEL_KIND] for s in ours}
    parents = {s.span_id: s.parent_id for s in ours}
    parsed = {s.parent_id for s in ours if kinds[s.span_id] == "parser" and s.parent_id}
    for span in ours:
        kind = kinds[span.span_id]
        if kind == "retriever" and span.kind == "tool" and beneath_tool(span.parent_id, kinds, parents):
            span.kind, span.tool = None, None
        elif kind == "llm" and span.model is not None:
            found = _otel_structured(span.attributes, span.parent_id in parsed)
            if found:
                span.model.outputs = _as_answer(span.model.outputs, found)


def _otel_structured(attrs: dict, parsed: bool) -> dict | None:
    """`structured_evidence` from what the OTel exporter keeps of a run: its metadata (`langsmith.metadata.*`:
    langchain-core 1.x adds the call's invocation parameters there, `tool_choice` among them; the tools offered are
    `gen_ai.tool.definitions`) and its inputs
    (`gen_ai.prompt`: a wrapped OpenAI client's call arguments); `extra.options`, where LangChain puts
    `ls_structured_output_format`, is not exported."""
    fmt = f"{OTEL_METADATA}.ls_structured_output_format"
    offered = json_value(attrs.get("gen_ai.tool.definitions"))
    choices = ((f"{OTEL_METADATA}.tool_choice",
                {"tool_choice": json_value(attrs.get(f"{OTEL_METADATA}.tool_choice")), "tools": offered}),
               (f"{OTEL_METADATA}.invocation_params.tool_choice",
                json_value(attrs.get(f"{OTEL_METADATA}.invocation_params"))),
               ("gen_ai.prompt.tool_choice", json_value(attrs.get("gen_ai.prompt"))))
    forced, where = next(((f, w) for w, params in choices if (f := _forced_tool(params))), (None, ""))
    return structured_evidence({fmt: attrs.get(fmt)}, forced, parsed, where)


def _runs(doc, where: str) -> Iterator[tuple[dict, str]]:
    """Every run of a document (trees flattened), with where it sits; patches after their posts."""
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            yield from _runs(item, f"{where}[{i}]")
    elif isinstance(doc, dict) and "run_type" not in doc and any(isinstance(doc.get(k), list)
                                                                   for k in ("post", "patch", "runs")):
        for key in ("runs", "post", "patch"):
            for i, item in enumerate(doc.get(key) or []):
                yield from _runs(item, f"{where}.{key}[{i}]")
    else:
        yield doc, where
        for i, child in enumerate(doc.get("child_runs") or [] if isinstance(doc, dict) else []):
            yield from _runs(child, f"{where}.child_runs[{i}]")


def _collect(data: bytes, name: str, budgets) -> tuple[dict[str, dict], dict[str, str], list[Rejected]]:
    """(run id -> the run with its patches applied, run id -> where it was first seen, rows)."""
    runs, where_of, rows = {}, {}, []
    for item in documents(data, name, budgets):
        if isinstance(item, Rejected):
            rows.append(item)
            continue
        line, doc = item
        for run, where in _runs(doc, f"{name}:{line}"):
            if not isinstance(run, dict) or not ("run_type" in run or run.get("id") in runs):
                rows.append(Rejected("unknown_content", f"{where}: not a LangSmith run; kept in this row", name,
                                     line=line, snippet=dumps(run)[:300]))
            elif not isinstance(run.get("id"), (str, int)):
                rows.append(Rejected("bad_record", f"{where}: the run has no id; left out", name, line=line,
                                     record_id="id"))
            else:
                key = str(run["id"])
                runs.setdefault(key, {}).update({k: v for k, v in run.items() if v is not None})
                where_of.setdefault(key, where)
    return runs, where_of, rows


def _parent_of(run: dict) -> str | None:
    """A run's parent: its `parent_run_id`, else the run its `dotted_order` names before its own (each segment
    is a start time and a run id; the API's runs saved without their parent still carry it)."""
    if run.get("parent_run_id"):
        return text_of(run["parent_run_id"])
    dotted = run.get("dotted_order")
    segments = dotted.split(".") if isinstance(dotted, str) else []
    found = _DOTTED.match(segments[-2]) if len(segments) > 1 else None
    return segments[-2][found.end():] or None if found else None


def _trace_of(run_id: str, runs: dict[str, dict]) -> str:
    run, seen = runs[run_id], {run_id}
    if run.get("trace_id"):
        return str(run["trace_id"])
    while run.get("parent_run_id") and str(run["parent_run_id"]) in runs and str(run["parent_run_id"]) not in seen:
        seen.add(str(run["parent_run_id"]))
        run = runs[str(run["parent_run_id"])]
    return str(run.get("trace_id") or run["id"])


class _Context:
    """What reading one run needs of the others: the parents that hold a parser run (structured output's evidence)
    and each run's parent (a retriever beneath a tool run is the tool's work)."""

    def __init__(self, runs: dict[str, dict]):
        self.runs = runs
        self.parsed = {p for run in runs.values() if run.get("run_type") == "parser" and (p := _parent_of(run))}
        self.kinds: dict[str, str | None] | None = None  # run id -> run type, when a retriever asks
        self.parents: dict[str, str | None] = {}

    def in_tool(self, run: dict) -> bool:
        if self.kinds is None:
            self.kinds = {rid: r.get("run_type") for rid, r in self.runs.items()}
            self.parents = {rid: _parent_of(r) for rid, r in self.runs.items()}
        return beneath_tool(_parent_of(run), self.kinds, self.parents)


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    runs, where_of, rows = _collect(source.read_bytes(), name, source.budgets)
    yield from rows
    traces: dict[str, list[Span]] = {}
    envs: dict[str, dict] = {}
    threads: dict[str, tuple[str, str]] = {}
    context = _Context(runs)
    for order, (run_id, run) in enumerate(sorted(runs.items(), key=lambda kv: str(kv[1].get("dotted_order", "")))):
        trace_id = _trace_of(run_id, runs)
        try:
            span = _span(run, trace_id, order, where_of[run_id], context)
        except (TypeError, ValueError, AttributeError, KeyError) as e:  # a shape no reader rule foresaw
            yield Rejected("bad_record", f"{where_of[run_id]}: the run cannot be read ({type(e).__name__}: {e}); left "
                           "out", name, snippet=dumps(run)[:300])
            continue
        traces.setdefault(trace_id, []).append(span)
        if _parent_of(run) is None:
            envs[trace_id] = {"langsmith": {k: run.get(k) for k in ("session_name", "name") if run.get(k)}}
            found = metadata_thread((run.get("extra") or {}).get("metadata") if isinstance(run.get("extra"), dict)
                                    else None)
            if found:  # the thread the trace is one turn of: the turns its model calls are given before it are context
                threads[trace_id] = found
    yield from file_records(FORMAT, source.uri, name, traces, envs, threads)
