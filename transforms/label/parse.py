"""World-model output to a predicted observation, the way the reference evaluation reads it.

- everything up to the last `</think>` is reasoning and is dropped;
- when a `<predicted_observation>` block is present, the last one is the answer (an unclosed last block runs
  to the end of the text);
- a leading `**Environment Observation:**` marker is stripped.

An empty output, an output that is empty once parsed, or one cut by the token limit (finish reason `length`)
is a failure: it is recorded, never stored as a state.
"""

from __future__ import annotations

from dataclasses import dataclass

from transforms.agentworld import OBSERVATION_MARKER

THINK_END = "</think>"
OPEN_TAG, CLOSE_TAG = "<predicted_observation>", "</predicted_observation>"


@dataclass
class Parsed:
    observation: str | None  # the predicted observation text; None on failure
    failure: str | None = None  # one line saying why there is no observation


def parse_output(text: str | None, finish_reason: str | None = "stop") -> Parsed:
    if finish_reason == "length":
        return Parsed(None, "truncated: the output hit max_tokens (finish_reason length)")
    if not text or not text.strip():
        return Parsed(None, "empty output")
    think_end = text.rfind(THINK_END)
    if think_end >= 0:
        text = text[think_end + len(THINK_END):]
    start = text.rfind(OPEN_TAG)
    if start >= 0:
        body = text[start + len(OPEN_TAG):]
        end = body.find(CLOSE_TAG)
        text = body if end < 0 else body[:end]
    text = text.strip()
    if text.startswith(OBSERVATION_MARKER):
        text = text[len(OBSERVATION_MARKER):].strip()
    if not text:
        return Parsed(None, "empty once parsed (nothing after </think> / in <predicted_observation>)")
    return Parsed(text)
