"""A trace's spans -> episodes, through `ingest.transcript`: the one assembly every trace format uses.

A decoder (`ingest.traces.otel`, `ingest.traces.openai_agents`, `ingest.traces.langsmith`) turns its records into
`Span`s whose `kind` says what each one is: `model` (a model call: its `ModelTurn`), `tool` (a tool's execution:
its `ToolUse`), `agent`, `handoff` (an agent handing the conversation to another), or None (any other span: kept in
env, not a step). A trace none of whose spans has a kind (a web service's own spans in the same export) is no
episode: `file_records` names those traces in one `no_agent_spans` row. Traces that are one conversation (each
model call a trace of its own) are joined first (`ingest.traces.stitch`).

BeeAI's ReAct agent, whose instrumentation writes every event of its loop as a span, is first read as one action
per iteration (`ingest.traces.beeai`).

**Episodes.** One per trace (key: the trace id). An agent span that a handoff span names as its target, or an agent
span nested under another agent span (an agent used as a tool) that has a step or an agent beneath it, is a
sub-episode of its own (key `<trace id>/agent:<span id>`): every span under it belongs to it, not to the trace's
episode. A model span with another
model span beneath it (a framework's record of the provider's call) is no step: the innermost one is. An agent
nested in an episode that has no step of its own (a workflow span an SDK opens around its agents) is that episode's
agent. The sub-episode's `env["parent"]` names the parent's `key` and `episode_id`, the agent span and the
`relation` (`subagent` or `handoff`); what a sub-episode's first model call is given before its last assistant turn
(the conversation an agent is handed) is context, not its actions: `env["trace"]["history_messages"]` counts it and
its first user message is the task. The parent's `env["subagents"]` lists each one with the number of steps the
parent had made when it began (`after_steps`). A trace that is one turn of a conversation keeps the same way what
its first model call is given up to its last assistant turn (the earlier turns) as context (`history_messages`,
`earlier_turns`: by which evidence), its task being the first user message after it; `ingest.traces.threads` is
the rule (a conversation id, else unambiguous structure; otherwise the turns stay steps with a warning).

**Messages, in the order they became known** (`_events`: in span start order where spans do not overlap). A model
span adds what it was sent that the episode has not seen yet (all of its
input for the first model span; for a later one, the input messages after the last assistant message of its input:
the tool results and user turns since the previous call, less those an earlier call's input already held in the
same places, `ingest.traces.resent`: a conversation re-sent, or the user's question a graph gives several calls)
and then what it answered (assistant turns, whose tool
calls stay open until a result comes). A tool span is the result of the open call it answers (by call id, else the
earliest open call of its name, else the earliest open call); a tool span that answers no open call is an action of
its own (a tool call the model spans did not record; its `arguments` null where the span recorded none, as an
instrumentation that does not capture content writes it, never an empty `{}`). A tool result a model span's input
repeats after a tool span gave it is not added twice: the span's record is the observation, and where the model
input says otherwise both are kept in `env["trace"]["tool_results_differ"]` (call id, tool, each text, where). The
transcript core then makes one step per tool call, with the result as the next observation, and one `message` step
per answer without tool calls; the model of each step is its model span's, the text beside tool calls its reasoning.
A handoff span answers the open call that made it (a `transfer_to_...` tool) or is a `handoff` tool call of its own.

`episodes.agent` is the first model a step names, else the first model a model span names (content not recorded),
else the first agent's name. **Times**: assistant turns take their model span's end (when the answer came), tool
results their span's end, tool calls of their own their span's start (UTC, or null where the decoder has none). A
model span's input is added at its start and its answer at its end, a tool call of its own at its span's start, so
where spans overlap (a tool run while the model still streams, concurrent calls) the steps go in the order their
actions became known and no step's time goes back; a tool span begun inside the model span whose answer holds its
call comes right after that answer. No time is moved, but for one case: such a tool span that the answer's call
no longer waits for (another span answered it) is a call of its own after the answer; its step takes the answer's
time and its raw says so (`timestamp_clamped`) beside the start its span recorded (`recorded_start`).
**Outcome** `unknown`; terminated when the episode ends on an answer without tool calls. Spans of no step kind are
kept in `env["trace"]["other_spans"]` (name, ids, attributes); span failures in `env["trace"]["errors"]`; each model
call's token counts, where its span wrote them, in `env["trace"]["model_usage"]` (span id, model, the attributes). A model
span whose output its decoder found no message in (`Span.unread_output`) makes no step: that output is kept as
written in `env["unread_outputs"]` (span name and id, `after_steps`: the steps made before it answered) with one
`unknown_content` warning for the episode.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator

from ingest.record import Action, Episode, Rejected, episode_id, warn
from ingest.search import episode_domain
from ingest.tools import arguments_dict, dumps
from ingest.traces import beeai
from ingest.traces.genai import ModelTurn, ToolUse, same_result, usage
from ingest.traces.resent import SentBefore
from ingest.traces.stitch import stitch
from ingest.traces.threads import earlier_turns, last_assistant, thread_of
from ingest.transcript import Message, Run, ToolCall, records

MAX_OTHER_SPANS = 500  # other spans kept in env per episode; past it they are counted
STEP_KINDS = frozenset({"model", "tool", "handoff"})


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: dt.datetime | None
    end: dt.datetime | None
    order: int  # its place in the file: ties of start time keep it
    where: str  # the record in the source, for warnings
    kind: str | None = None  # model | tool | agent | handoff | None
    model: ModelTurn | None = None
    tool: ToolUse | None = None
    agent: str | None = None  # an agent span's agent; a handoff's target
    handoff_from: str | None = None
    error: str | None = None  # the span's failure, when it failed
    attributes: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # what the decoder kept beside the attributes
    unread_output: Any = None  # a model span's output in which the decoder found no message, as written


@dataclass
class _Episode:
    key: str
    root: Span | None  # the agent span that opens a sub-episode; None for the trace's episode
    relation: str | None = None
    parent: "_Episode | None" = None
    spans: list[Span] = field(default_factory=list)


def _order(span: Span) -> tuple:
    start = span.start.timestamp() if span.start else float("-inf")
    return (start, span.order)


def _episode_roots(spans: list[Span], by_id: dict[str, Span]) -> dict[str, str]:
    """span id -> relation, for the agent spans that open a sub-episode: the target of a handoff, or an agent
    nested under another agent."""
    roots: dict[str, str] = {}
    handoffs = sorted((s for s in spans if s.kind == "handoff" and s.agent), key=_order)
    for span in sorted((s for s in spans if s.kind == "agent"), key=_order):
        target = next((h for h in handoffs if h.agent == span.agent and _order(h) <= _order(span)), None)
        if target is not None:
            handoffs.remove(target)
            roots[span.span_id] = "handoff"
            continue
        parent = by_id.get(span.parent_id) if span.parent_id else None
        seen: set[str] = set()
        while parent is not None and parent.kind != "agent" and parent.span_id not in seen:
            seen.add(parent.span_id)
            parent = by_id.get(parent.parent_id) if parent.parent_id else None
        if parent is not None and parent.kind == "agent":
            roots[span.span_id] = "subagent"
    _drop_wrappers(spans, by_id, roots)
    return roots


def _drop_wrappers(spans: list[Span], by_id: dict[str, Span], roots: dict[str, str]) -> None:
    """A nested agent whose enclosing episode has no step of its own is that episode's agent, not a sub-episode:
    the workflow span an SDK opens around its agents (OpenInference's `Agent workflow`) is no agent of its own.
    A nested agent with no step and no agent beneath it is no sub-episode either: a framework's step its exporter
    typed as an agent (Langfuse's LangChain handler types a tools agent's `RunnableAssign<agent_scratchpad>` and
    its output parser `AGENT`)."""
    for _ in range(len(roots)):
        steps = Counter(_owner(s, by_id, roots) for s in spans if s.kind in STEP_KINDS)
        ordered = sorted(roots, key=lambda i: _order(by_id[i]))
        wrapped = next((sid for sid in ordered if not steps.get(_outer(by_id[sid], by_id, roots))), None)
        if wrapped is None:
            outers = {_outer(by_id[sid], by_id, roots) for sid in roots}
            wrapped = next((sid for sid in ordered if roots[sid] == "subagent" and not steps.get(sid)
                            and sid not in outers), None)
        if wrapped is None:
            return
        del roots[wrapped]


def _outer(root: Span, by_id: dict[str, Span], roots: dict[str, str]) -> str | None:
    parent = by_id.get(root.parent_id) if root.parent_id else None
    return _owner(parent, by_id, roots) if parent is not None else None


def _owner(span: Span, by_id: dict[str, Span], roots: dict[str, str]) -> str | None:
    """The id of the sub-episode's agent span a span belongs to, or None (the trace's episode)."""
    current, seen = span, set()
    while current is not None and current.span_id not in seen:
        if current.span_id in roots:
            return current.span_id
        seen.add(current.span_id)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return None


def _demote_outer_models(spans: list[Span], by_id: dict[str, Span]) -> None:
    """A model span with a model span beneath it is a framework's record of the same call (OpenLit writes
    LangChain's `chat` span around the OpenAI client's): the innermost, the provider's call, is the step; the outer
    one is kept with the other spans."""
    outer: set[str] = set()
    for span in spans:
        if span.kind != "model":
            continue
        parent, seen = by_id.get(span.parent_id) if span.parent_id else None, set()
        while parent is not None and parent.span_id not in seen:
            seen.add(parent.span_id)
            if parent.kind == "model":
                outer.add(parent.span_id)
            parent = by_id.get(parent.parent_id) if parent.parent_id else None
    for span_id in outer:
        by_id[span_id].kind = None


def split_episodes(trace_id: str, spans: list[Span]) -> list[_Episode]:
    """The trace's episode first, then its sub-episodes in start order; each with its spans in start order."""
    by_id = {s.span_id: s for s in spans}
    _demote_outer_models(spans, by_id)
    roots = _episode_roots(spans, by_id)
    main = _Episode(key=trace_id, root=None)
    subs = {sid: _Episode(key=f"{trace_id}/agent:{sid}", root=by_id[sid], relation=rel) for sid, rel in roots.items()}
    for span in sorted(spans, key=_order):
        owner = _owner(span, by_id, roots)
        (subs[owner] if owner else main).spans.append(span)
    for sid, sub in subs.items():
        parent_span = by_id.get(sub.root.parent_id) if sub.relation == "subagent" else None
        if sub.relation == "handoff":  # the episode the handoff span sits in
            handoff = next((s for s in spans if s.kind == "handoff" and s.agent == sub.root.agent), None)
            parent_span = handoff
        owner = _owner(parent_span, by_id, roots) if parent_span is not None else None
        sub.parent = subs.get(owner, main) if owner != sid else main
    return [main] + sorted(subs.values(), key=lambda e: _order(e.root))


class _Transcript:
    """Messages of one episode, built span by span (see the module's docstring)."""

    def __init__(self, handed_off: bool = False):
        self.messages: list[Message] = []
        self.open: list[ToolCall] = []
        self.answered: set[str] = set()
        self.systems: set[str] = set()
        # an agent handed the conversation keeps the history it was given as context, not as its own actions
        self.models_seen = int(handed_off)
        self.history: list[Message] = []
        self.span_models: list[str] = []  # the models of the model spans, with or without recorded messages
        self.actions = 0  # tool calls and answers so far (the steps the transcript core will make)
        self.latest: dt.datetime | None = None  # the latest time a step took
        self.unread_outputs: list[dict] = []  # model spans' outputs no message could be read from, as written
        self.span_results: dict[str, tuple] = {}  # call id -> the result its tool span recorded, the tool
        self.differing: list[dict] = []  # results a later model input gives otherwise than the tool span did
        self.sent = SentBefore()  # the model inputs given so far, to know a message re-sent in a later one

    def add(self, msg: Message) -> None:
        if msg.role == "system":
            if not msg.text or msg.text in self.systems:
                return
            self.systems.add(msg.text)
        elif msg.role == "tool":
            call = self._close(msg.tool_call_id, msg.tool_name)
            if call is None and (msg.tool_call_id in self.answered or not self.open and self.actions):
                self._compare(msg)
                return  # a result a tool span already gave
            if call is not None and msg.tool_call_id is None:
                msg.tool_call_id = call.id
            if msg.tool_call_id is not None:
                self.answered.add(msg.tool_call_id)
        elif msg.role == "assistant":
            self.open.extend(msg.tool_calls)
            self.actions += len(msg.tool_calls) or 1
            if msg.timestamp is not None and (self.latest is None or msg.timestamp > self.latest):
                self.latest = msg.timestamp
        self.messages.append(msg)

    def _close(self, call_id: str | None, name: str | None, arguments=None) -> ToolCall | None:
        match = next((c for c in self.open if call_id is not None and c.id == call_id), None)
        if match is None and call_id is None:
            # by name and arguments (a tool span without the call's id: parallel calls' spans may start in any
            # order), else by name, else by order (as the transcript core pairs results)
            given = arguments_dict(arguments) if arguments is not None else None
            match = next((c for c in self.open if name and c.name == name and given is not None
                          and arguments_dict(c.arguments) == given), None) or \
                next((c for c in self.open if name and c.name == name), None) or next(iter(self.open), None)
        if match is not None:
            self.open.remove(match)
        return match

    def model(self, span: Span) -> None:
        self.model_inputs(span)
        self.model_outputs(span)

    def model_inputs(self, span: Span) -> None:
        """What the model call was sent (added when the call began)."""
        turn = span.model
        inputs = turn.inputs
        if self.models_seen:
            last = last_assistant(inputs)
            if not self.messages and last >= 0:
                self.history = [m for m in inputs[:last + 1] if m.role != "system"]
                for msg in inputs[:last + 1]:
                    if msg.role == "system":  # the agent's own instructions stay its system prompt
                        self.add(msg)
                # the results of the history's calls (the handoff's own among them) are history too
                self.answered.update(c.id for m in self.history for c in m.tool_calls if c.id is not None)
            # what an earlier call's input held in the same places is no new message (its system prompt aside)
            resent = self.sent.held(inputs)
            inputs = [m for i, m in enumerate(inputs) if i > last and (i >= resent or m.role == "system")]
        self.sent.add(turn.inputs)
        self.models_seen += 1
        if turn.model:
            self.span_models.append(turn.model)
        for msg in inputs:
            self.add(msg)

    def model_outputs(self, span: Span) -> None:
        """What the model call answered (added when the answer came: the span's end)."""
        turn = span.model
        if not turn.outputs and span.unread_output is not None:
            self.unread_outputs.append({"span": span.name, "span_id": span.span_id, "after_steps": self.actions,
                                        "output": span.unread_output})
        for msg in turn.outputs:
            msg.model = msg.model or turn.model
            msg.timestamp = msg.timestamp or span.end or span.start
            self.add(msg)

    def tool(self, span: Span) -> None:
        use = span.tool
        call = self._close(use.call_id, use.name, use.arguments) if use.call_id is None else \
            next((c for c in self.open if c.id == use.call_id), None)
        if call is None and use.call_id is not None:  # a model that gives its calls no id (Gemini): by name
            call = next((c for c in self.open if c.id is None and use.name and c.name == use.name), None)
            if call is not None:
                call.id = use.call_id
        if call is not None and use.call_id is not None:
            self.open.remove(call)
        raw = _span_summary(span)
        if call is None:
            when = self._not_before(span, raw)
            call = ToolCall(id=use.call_id or f"span:{span.span_id}", name=use.name, arguments=use.arguments,
                            raw=raw)
            if use.arguments is None:  # the span recorded no arguments (content capture off): unknown, not `{}`
                call.action = Action(kind="tool_call", tool_name=use.name, arguments=None, raw=dumps(raw))
            self._own_call(call, when, span)
        else:
            call.raw = {"call": call.raw, "span": raw}
            if _no_arguments(call.arguments) and not _no_arguments(use.arguments):
                call.arguments = use.arguments  # the model's record lost them (a stream's first chunk): the tool's
        if use.result is None and not use.is_error:  # the span kept no result: the next model call's input may
            self.open.append(call)
            return
        self.answered.add(call.id)
        self.span_results[call.id] = (use.result, use.name)
        self.messages.append(Message(role="tool", text=use.result, tool_call_id=call.id, tool_name=use.name,
                                     is_error=use.is_error, timestamp=span.end, where=span.where))

    def _compare(self, msg: Message) -> None:
        """A result a model call was given for a call whose tool span recorded one: the span's record is the
        observation; a model input that says otherwise (the framework changed it on the way) is kept beside it."""
        if msg.tool_call_id not in self.span_results:
            return
        recorded, name = self.span_results[msg.tool_call_id]
        if not same_result(recorded, msg.text):
            self.differing.append({"tool_call_id": msg.tool_call_id, "tool": msg.tool_name or name,
                                   "tool_span": recorded,
                                   "model_input": msg.text, "where": msg.where})

    def _own_call(self, call: ToolCall, when: dt.datetime | None, span: Span) -> None:
        self.messages.append(Message(role="assistant", tool_calls=[call], timestamp=when, where=span.where))
        self.actions += 1
        if when is not None:
            self.latest = when

    def _not_before(self, span: Span, raw: dict) -> dt.datetime | None:
        """A call of its own's time: its span's start; where a step already took a later time (a tool span begun
        inside the model span whose answer it was taken to follow, but whose call that answer no longer held open)
        the step takes that time and its raw says so, keeping the start the span recorded."""
        if span.start is None or self.latest is None or span.start >= self.latest:
            return span.start
        raw["recorded_start"] = span.start.isoformat()
        raw["timestamp_clamped"] = "to the previous step's time: the span began before that step's action was known"
        return self.latest

    def handoff(self, span: Span) -> None:
        text = f"handoff from {span.handoff_from} to {span.agent}"
        call = next((c for c in self.open if isinstance(c.name, str) and c.name.startswith("transfer_to")), None)
        if call is None:
            raw = _span_summary(span)
            when = self._not_before(span, raw)
            call = ToolCall(id=f"span:{span.span_id}", name="handoff", raw=raw,
                            arguments={"from_agent": span.handoff_from, "to_agent": span.agent})
            self._own_call(call, when, span)
        else:
            self.open.remove(call)
        self.answered.add(call.id)
        self.messages.append(Message(role="tool", text=text, tool_call_id=call.id, timestamp=span.end,
                                     where=span.where))


def _no_arguments(value) -> bool:
    return value in (None, "", "{}", {})


def _span_summary(span: Span) -> dict:
    out: dict[str, Any] = {"name": span.name, "span_id": span.span_id, "parent_id": span.parent_id}
    if span.attributes:
        out["attributes"] = span.attributes
    out.update(span.extra)
    if span.error:
        out["error"] = span.error
    return out


def _time(when: dt.datetime | None) -> float:
    return when.timestamp() if when else float("-inf")


def _start_key(span: Span) -> tuple:
    return (_time(span.start), 1, span.order, 0, ())


def _end_key(span: Span) -> tuple:
    """A model span's answer: at its end, before what starts at that same instant; a span with no later end (none
    recorded, or zero long) answers right after it began."""
    if span.end is None or (span.start is not None and span.end <= span.start):
        return (_time(span.start), 1, span.order, 1, ())
    return (_time(span.end), 0, span.order, 1, ())


def _calling_model(span: Span, models: list[Span]) -> Span | None:
    """The model span still answering when `span` (a tool span) began whose answer holds the call the tool
    runs (a streamed answer whose tool call ran before the stream ended), or None."""
    use, start = span.tool, _time(span.start)
    for model in models:
        if model.end is None or not _time(model.start) <= start < _time(model.end):
            continue
        calls = [c for msg in model.model.outputs for c in msg.tool_calls]
        if any((use.call_id is not None and c.id == use.call_id)
               or ((use.call_id is None or c.id is None) and use.name and c.name == use.name) for c in calls):
            return model
    return None


def _events(spans: list[Span]) -> list[tuple[tuple, str, Span]]:
    """The episode's spans as the events the transcript is built from, in the order they happened.

    Steps follow the time each action became known, so that spans that overlap (a tool run while the model
    span is still streaming, model and tool spans run concurrently) never make a step's time go back: a model
    span's input is added when the call began (`model_in`, its start) and its answer when it came (`model_out`,
    its end, the time its steps take); a tool call of its own is made when its span began (its start, its step's
    time), and so are handoffs and the other spans. A tool span that began inside a model span whose answer
    holds the call it runs comes right after that answer (the call is the model's; its step takes the answer's
    time). Spans that do not overlap keep their start order. No time is moved: each step takes a time its
    spans recorded (see `_Transcript._not_before` for the one step that cannot)."""
    models = [s for s in spans if s.kind == "model" and s.model is not None]
    events = []
    for span in spans:
        if span.kind == "model" and span.model is not None:
            events += [(_start_key(span), "model_in", span), (_end_key(span), "model_out", span)]
            continue
        caller = _calling_model(span, models) if span.kind == "tool" and span.tool is not None else None
        key = _start_key(span) if caller is None else \
            (*_end_key(caller)[:3], 2, (_time(span.start), span.order))
        events.append((key, "span", span))
    return sorted(events, key=lambda e: e[0])


def _apply(t: _Transcript, event: str, span: Span, facts: dict) -> None:
    if event == "model_in":
        t.model_inputs(span)
    elif event == "model_out":
        t.model_outputs(span)
        used = usage(span.attributes)
        if used:  # each model call's token counts, as its span wrote them
            facts.setdefault("model_usage", []).append({"span_id": span.span_id, "model": span.model.model, **used})
    elif span.kind == "tool" and span.tool is not None:
        t.tool(span)
    elif span.kind == "handoff":
        t.handoff(span)
    elif span.kind == "agent":
        facts.setdefault("agents", []).append(span.agent)
    elif len(facts["other_spans"]) < MAX_OTHER_SPANS:  # a span of no step kind (a model span naming no turn)
        facts["other_spans"].append(_span_summary(span))
    else:
        facts["other_spans_left_out"] = facts.get("other_spans_left_out", 0) + 1


def _earlier_turns(ep: _Episode, events: list, thread: tuple[str, str] | None) -> tuple[dict | None, str | None]:
    """Whether the trace's episode continues a conversation whose earlier turns its first model call is given
    (`ingest.traces.threads`): (the evidence, None), or (None, why they stay steps), or (None, None)."""
    first = next((span for _, event, span in events if event == "model_in"), None)
    if ep.root is not None or first is None:
        return None, None
    thread = thread or thread_of(span.attributes for span in ep.spans)
    uses = [span.tool for span in ep.spans if span.kind == "tool" and span.tool is not None]
    return earlier_turns(first.model.inputs, thread, uses)


def _transcript(ep: _Episode, subs: list[_Episode], thread: tuple[str, str] | None = None) -> tuple[_Transcript, dict]:
    """The episode's messages, and its trace facts for env (`linked`: its sub-episodes with the number of actions
    made before each began; `ambiguous_history`: why earlier turns stayed steps)."""
    events = _events(ep.spans)
    earlier, ambiguous = _earlier_turns(ep, events, thread)
    t = _Transcript(handed_off=ep.root is not None or earlier is not None)
    facts: dict[str, Any] = {"spans": len(ep.spans), "other_spans": [], "errors": []}
    pending = sorted((sub for sub in subs if sub.parent is ep), key=lambda sub: _order(sub.root))
    linked = []
    for key, event, span in events:
        while pending and _start_key(pending[0].root) <= key:
            linked.append((pending.pop(0), t.actions))
        if span.error and event != "model_out":
            facts["errors"].append({"span": span.name, "span_id": span.span_id, "error": span.error})
        _apply(t, event, span, facts)
    linked.extend((sub, t.actions) for sub in pending)
    facts["linked"] = linked
    facts["history_messages"] = len(t.history)
    facts["earlier_turns"] = earlier if t.history and earlier else None
    facts["ambiguous_history"] = ambiguous
    facts["tool_results_differ"] = t.differing
    return t, {k: v for k, v in facts.items() if v or k == "spans"}


def _ended_on_answer(t: _Transcript) -> bool:
    last = next((m for m in reversed(t.messages) if m.role in ("assistant", "tool")), None)
    return last is not None and last.role == "assistant" and not last.tool_calls


def is_agent_trace(spans: list[Span]) -> bool:
    """Whether any span of a trace is a model call, a tool call, an agent or a handoff (a trace of a web service
    has none: it is no agent's trajectory)."""
    return any(s.kind for s in spans)


def file_records(fmt: str, uri: str, name: str, traces: dict[str, list[Span]], envs: dict[str, dict],
                 threads: dict[str, tuple[str, str]] | None = None) -> Iterator[Episode | Rejected]:
    """The episodes of every trace of a file; the traces with no span of an agent (a service's own spans in the
    same export) are named in one `no_agent_spans` row instead. `threads`: trace id -> (where, the conversation
    id) the decoder found in a trace's own record (`ingest.traces.threads`)."""
    others = [trace_id for trace_id, spans in traces.items() if not is_agent_trace(spans)]
    if others:
        yield Rejected("no_agent_spans", f"{name}: {len(others)} of {len(traces)} traces hold no span of an agent "
                       "(no model call, tool call or agent: a service's own trace); not read", name,
                       snippet=", ".join(others[:20]))
    skipped = set(others)
    joined, held = stitch({trace_id: spans for trace_id, spans in traces.items() if trace_id not in skipped})
    for trace_id, spans in joined.items():
        env = dict(envs.get(trace_id) or {})
        if trace_id in held:
            env["stitched"] = held[trace_id]
        yield from trace_records(fmt, uri, name, trace_id, spans, env, thread=(threads or {}).get(trace_id))


def trace_records(fmt: str, uri: str, where: str, trace_id: str, spans: list[Span], env: dict,
                  domain: str = "mcp", platform: str = "linux",
                  thread: tuple[str, str] | None = None) -> Iterator[Episode | Rejected]:
    """The episodes of one trace (the trace's own, then its sub-episodes), each through `ingest.transcript`."""
    beeai.read_react_events(spans)
    episodes = split_episodes(trace_id, spans)
    subs = episodes[1:]
    for ep in episodes:
        t, facts = _transcript(ep, subs, thread)
        linked = facts.pop("linked", [])
        ambiguous = facts.pop("ambiguous_history", None)
        ep_env = {**env, "trace": {"trace_id": trace_id, **facts}}
        if ambiguous:
            warn(ep_env, "ambiguous_history", ambiguous)
        if linked:
            ep_env["subagents"] = [{"key": sub.key, "episode_id": episode_id(fmt, uri, sub.key),
                                    "agent": sub.root.agent, "span_id": sub.root.span_id,
                                    "relation": sub.relation, "after_steps": after} for sub, after in linked]
        agent = None
        if ep.root is not None:
            parent = ep.parent
            ep_env["parent"] = {"key": parent.key, "episode_id": episode_id(fmt, uri, parent.key),
                                "span_id": ep.root.span_id, "relation": ep.relation}
            agent = ep.root.agent
        names = [c.name for m in t.messages for c in m.tool_calls]
        task = next((m.text for m in t.history if m.role == "user" and m.text), None) if ep.root else None
        named = [m.model for m in t.messages if m.model] + t.span_models + [a for a in facts.get("agents", []) if a]
        run = Run(key=ep.key, domain=episode_domain(names, domain), platform=platform, task=task,
                  agent=named[0] if named else None, terminated=_ended_on_answer(t), env=ep_env)
        if agent:
            ep_env["agent_name"] = agent
        yield from _kept_unread(t, ep_env, f"{where} trace {ep.key}", where)
        yield from records(t.messages, run, f"{where} trace {ep.key}")


def _kept_unread(t: _Transcript, env: dict, name: str, where: str) -> Iterator[Rejected]:
    """Model spans' outputs with no message the decoder could read (no step comes of them) kept raw in
    `env["unread_outputs"]` (span, span id, the steps made before it, the output as written), with one warning."""
    if not t.unread_outputs:
        return
    env["unread_outputs"] = t.unread_outputs
    yield Rejected("unknown_content", f"{name}: {len(t.unread_outputs)} model call output(s) hold no message "
                   f"the reader reads (spans {', '.join(u['span_id'] for u in t.unread_outputs[:20])}); kept raw "
                   "in env.unread_outputs", where)
