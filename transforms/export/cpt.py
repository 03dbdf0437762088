"""CPT records: whole trajectories as documents of environment dynamics (actions and the observations they
caused; no chain of thought, no task instruction).

- `text`: `{"text": ...}`: the turns in the AgentWorld layout, each `### Turn N` / (`**Current State:**`
  on the first turn) / `**Action:**` + the action in the domain's form, then the observation in the
  domain's answer form (`transforms.agentworld`); turns separated by a blank line (the layout of the
  reference's few-shot examples).
- `swift`: the same turns chat-framed for ms-swift: `messages` = system prompt, then user (action,
  `loss` false) and assistant (observation, `loss` true) pairs, so the observations carry the loss and the
  actions do not.

A document covers turns [0, end) of a line, where `pipelines.export` sets `end` after the last admissible
turn with a recorded observation. With a token budget a trajectory longer than the budget becomes several
documents of consecutive whole turns (each window numbers its turns from 1, says how many earlier turns it
does not show, and restarts with the `**Current State:**` block); a single turn larger than the budget is
dropped.
"""

from __future__ import annotations

from transforms.export.chat import TrajectoryRenderer

FORMATS = ("text", "swift")
FILE_TYPES = {"text": "parquet", "swift": "jsonl"}


def windows(renderer: TrajectoryRenderer, end: int, max_tokens: int | None, with_system: bool) -> tuple[list[tuple[int, int]], int]:
    """([(first, stop), ...] turn ranges, number of turns dropped for being over budget alone)."""
    if max_tokens is None:
        return ([(0, end)] if end > 0 else []), 0
    base = renderer.system_tokens if with_system else 0
    out, dropped, start, total = [], 0, 0, base
    for i in range(end):
        cost = renderer.turn_tokens(i, start)
        if total + cost <= max_tokens:
            total += cost
            continue
        if i > start:
            out.append((start, i))
        start, total = i, base + renderer.turn_tokens(i, i)
        if total > max_tokens:  # this turn alone does not fit: skip it, the next window starts after it
            dropped += 1
            start, total = i + 1, base
    if start < end:
        out.append((start, end))
    return out, dropped


def _turns(renderer: TrajectoryRenderer, first: int, stop: int):
    for i in range(first, stop):
        yield renderer.user(i, first, task=False), renderer.assistants[i]


def text_record(renderer: TrajectoryRenderer, first: int, stop: int) -> dict:
    text = "\n\n".join(f"{user}\n{assistant}" for user, assistant in _turns(renderer, first, stop))
    return {"text": text}


def swift_record(renderer: TrajectoryRenderer, first: int, stop: int) -> dict:
    messages = [{"role": "system", "content": renderer.system, "loss": False}]
    for user, assistant in _turns(renderer, first, stop):
        messages.append({"role": "user", "content": user, "loss": False})
        messages.append({"role": "assistant", "content": assistant, "loss": True})
    return {"messages": messages}


RENDER = {"text": text_record, "swift": swift_record}
