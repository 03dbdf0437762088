"""CPT records: whole trajectories as documents of environment dynamics (actions and the observations they
caused; no chain of thought, no task instruction).

- `text`: `{"text": ...}`: the turns in the AgentWorld layout, each `### Turn N` / (`**Current State:**`
  on the first turn) / `**Action:**` + the action in the domain's form, then the observation in the
  domain's answer form (`transforms.agentworld`); turns separated by a blank line (the layout of the
  reference's few-shot examples).
- `swift`: the same turns chat-framed for ms-swift: `messages` = system prompt, then user (action,
  `loss` false) and assistant (observation, `loss` true) pairs, so the observations carry the loss and the
  actions do not.
- `trl`: the `text` document as token ids for TRL (`input_ids`, and `completion_mask`: 1 on the tokens of each
  observation that carries the loss, 0 on the actions and on the observations the recipe masked), so TRL
  trains exactly the turns ms-swift does. Tokenized with the export's tokenizer (`--tokenizer`; not
  `bound`), segment by segment (action, observation), so a mask boundary is a token boundary: the model must
  use the same tokenizer.

A document covers turns [0, end) of a line, where `pipelines.stages.export.records` sets `end` after the last admissible
turn with a recorded observation. With a token budget a trajectory longer than the budget becomes several
documents of consecutive whole turns (each window numbers its turns from 1, says how many earlier turns it
does not show, and restarts with the `**Current State:**` block); a single turn larger than the budget is
dropped.
"""

from __future__ import annotations

from transforms.export.chat import TrajectoryRenderer

FORMATS = ("text", "swift", "trl")
FILE_TYPES = {"text": "parquet", "swift": "jsonl", "trl": "parquet"}


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


def text_record(renderer: TrajectoryRenderer, first: int, stop: int, loss: list[bool] | None = None) -> dict:
    """`loss` (the recipe's turn-level masking, one flag per turn of the trajectory): adds `turn_loss`, one
    flag per turn of the document, and `turn_spans`, the [start, end) character offsets in `text` of each
    turn's observation (the part a turn's loss covers); a masked turn stays in `text`."""
    parts, spans, at = [], [], 0
    for user, assistant in _turns(renderer, first, stop):
        if parts:
            at += 2  # the blank line between turns
        at += len(user) + 1
        spans.append([at, at + len(assistant)])
        at += len(assistant)
        parts.append(f"{user}\n{assistant}")
    record = {"text": "\n\n".join(parts)}
    if loss is not None:
        record["turn_loss"] = loss[first:stop]
        record["turn_spans"] = spans
    return record


def swift_record(renderer: TrajectoryRenderer, first: int, stop: int, loss: list[bool] | None = None) -> dict:
    """`loss`: as in `text_record`; a masked turn's observation has `loss` false."""
    messages = [{"role": "system", "content": renderer.system, "loss": False}]
    for i, (user, assistant) in enumerate(_turns(renderer, first, stop), start=first):
        messages.append({"role": "user", "content": user, "loss": False})
        messages.append({"role": "assistant", "content": assistant, "loss": True if loss is None else loss[i]})
    return {"messages": messages}


def trl_record(renderer: TrajectoryRenderer, first: int, stop: int, loss: list[bool] | None = None) -> dict:
    """`loss`: as in `text_record`. The ids decode to `text_record`'s text; without `loss` every observation
    carries it (as in `swift`)."""
    ids: list[int] = []
    mask: list[int] = []

    def add(text: str, carries: int) -> None:
        tokens = renderer.counter.encode(text) if text else []
        ids.extend(tokens)
        mask.extend([carries] * len(tokens))

    for n, (i, (user, assistant)) in enumerate(zip(range(first, stop), _turns(renderer, first, stop))):
        add(("\n\n" if n else "") + user + "\n", 0)
        add(assistant, 1 if loss is None or loss[i] else 0)
    return {"input_ids": ids, "completion_mask": mask}


RENDER = {"text": text_record, "swift": swift_record, "trl": trl_record}
