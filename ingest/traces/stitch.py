"""Traces that are one conversation: an app that opens no span of its own around its agent loop leaves each model
call a trace of its own (OpenLLMetry's and OpenTelemetry's OpenAI instrumentations do so), each call sent the whole
conversation so far. A trace made only of model calls whose first call's input begins with everything an earlier
such trace's last call was sent and answered (the same roles, texts and tool-call ids, in order) continues that
trace's conversation: their spans are read as one episode, under the first trace's id, and the episode's
`env["stitched"]` lists every trace id it holds. Traces with tool, agent or handoff spans, and a
conversation that was rewritten between calls, stay episodes of their own."""

from __future__ import annotations

from ingest.transcript import Message

# the spans are `ingest.traces.spans.Span`s (not imported: that module imports this one)


def _signature(messages: list[Message]) -> list[tuple]:
    return [(m.role, m.text or None, tuple(c.id for c in m.tool_calls), m.tool_call_id) for m in messages]


def _models_only(spans: list) -> list | None:
    """The model spans of a trace made only of model calls (and spans of no kind), in start order; else None."""
    if any(s.kind not in (None, "model") for s in spans):
        return None
    models = [s for s in spans if s.kind == "model" and s.model is not None]
    return sorted(models, key=lambda s: (s.start.timestamp() if s.start else float("-inf"), s.order)) or None


def stitch(traces: dict[str, list]) -> tuple[dict[str, list], dict[str, list[str]]]:
    """(the traces with continued conversations joined, trace id -> the ids it holds, for joined ones)."""
    joined: dict[str, list] = {}
    held: dict[str, list[str]] = {}
    open_chains: list[tuple[str, list[tuple]]] = []  # (first trace id, what its last call was sent and answered)
    for trace_id, spans in traces.items():
        models = _models_only(spans)
        if models is None:
            joined[trace_id] = spans
            continue
        start = _signature(models[0].model.inputs)
        chain = next((c for c in open_chains if c[1] and start[:len(c[1])] == c[1]), None)
        last = models[-1].model
        done = _signature(last.inputs + last.outputs)
        if chain is None:
            joined[trace_id] = list(spans)
            open_chains.append((trace_id, done))
            continue
        open_chains[open_chains.index(chain)] = (chain[0], done)
        joined[chain[0]].extend(spans)
        held.setdefault(chain[0], [chain[0]]).append(trace_id)
    return joined, held
