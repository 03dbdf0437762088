"""World-model output to a predicted observation, read the way the reference evaluation reads it
(Qwen-AgentWorld `eval/lwm_eval_utils/output_parser.py`: `parse_model_output`, then `clean_response_marker`).

1. Reasoning is removed (tags matched case-insensitively, positions taken in the original text):
   - each `<think>` is paired with the first unpaired `</think>` after it; the pair and what lies between go;
   - a `</think>` left unpaired removes everything from the start of the text to its end;
   - a `<think>` left unpaired removes up to the first `<predicted_observation>` after it, or to the end;
   the removed ranges are merged (so nested blocks go whole) and the rest is joined.
2. If a `<predicted_observation>` tag remains, the answer is the text after the last one, up to the first
   `</predicted_observation>` after it (to the end when unclosed), stripped — possibly empty. Otherwise the
   answer is the whole remaining text, stripped.
3. The `**Environment Observation:**` marker: a leading one is cut once; otherwise every occurrence is removed.
4. An answer that is exactly `(no output)` (how training data shows a silent command) is stored as "".

Failures (recorded, never stored as a state):
- the reference's `No output`: an empty output, or one with no `<predicted_observation>` tag that is blank
  once reasoning is removed. (An empty *block* is an empty observation, as in the reference — a silent command.)
- an output cut by the token limit (finish reason `length`): the project's own rule, the text is incomplete;
- an answer that still holds reasoning or tags (`<think>`, `</think>`, `<predicted_observation>`,
  `</predicted_observation>`), e.g. tags rebuilt by the removal: it is not a clean state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from transforms.agentworld import EMPTY_OBSERVATION, OBSERVATION_MARKER

TAG = "predicted_observation"
_THINK = re.compile(r"<(/?)think>", re.IGNORECASE)
_OPEN = re.compile(f"<{TAG}>", re.IGNORECASE)
_CLOSE = re.compile(f"</{TAG}>", re.IGNORECASE)
_LEFTOVER = re.compile(f"</?think>|</?{TAG}>", re.IGNORECASE)


@dataclass
class Parsed:
    observation: str | None  # the predicted observation text ("" is a silent command); None on failure
    failure: str | None = None  # one line saying why there is no observation


def _think_ranges(text: str, answer: re.Pattern = _OPEN) -> list[tuple[int, int]]:
    """Spans of `text` that are reasoning (see step 1), unmerged; an unclosed `<think>` stops at the first
    `answer` tag after it."""
    tags = [(m.start(), m.end(), m.group(1) == "/") for m in _THINK.finditer(text)]
    paired: set[int] = set()
    spans = []
    for i, (start, _, closing) in enumerate(tags):
        if closing or i in paired:
            continue
        j = next((j for j in range(i + 1, len(tags)) if tags[j][2] and j not in paired), None)
        if j is not None:
            paired.update((i, j))
            spans.append((start, tags[j][1]))
    for i, (start, end, closing) in enumerate(tags):
        if i in paired:
            continue
        if closing:
            spans.append((0, end))
        else:  # an unclosed <think> stops at the answer tag, so an answer after it survives
            found = answer.search(text, start)
            spans.append((start, found.start() if found else len(text)))
    return spans


def _tag_pattern(tag: str) -> re.Pattern:
    return _OPEN if tag == TAG else re.compile(f"<{re.escape(tag)}>", re.IGNORECASE)


def strip_reasoning(text: str, answer_tag: str = TAG) -> str:
    """`text` without its reasoning (step 1); an unclosed `<think>` stops at the first `<answer_tag>` (the
    judge's answer is `final_evaluation`, as the reference passes its response tag)."""
    spans = sorted(_think_ranges(text, _tag_pattern(answer_tag)))
    if not spans:
        return text
    kept, pos = [], 0
    for start, end in spans:  # overlapping or touching spans behave as one
        if start > pos:
            kept.append(text[pos:start])
        pos = max(pos, end)
    kept.append(text[pos:])
    return "".join(kept).strip()


def strip_marker(text: str) -> str:
    if text.startswith(OBSERVATION_MARKER):
        return text[len(OBSERVATION_MARKER):].strip()
    return text.replace(OBSERVATION_MARKER, "").strip()


def leftover_tags(text: str) -> list[str]:
    """The reasoning / answer tags still in a parsed state (a state holding any is unusable)."""
    return sorted({m.group(0).lower() for m in _LEFTOVER.finditer(text or "")})


def last_block(text: str, tag: str = TAG) -> str | None:
    """The text after the last `<tag>` up to the first `</tag>` after it (to the end when unclosed),
    stripped; None when `text` has no `<tag>` (the reference's `_extract_tagged_content`)."""
    opens = list(_tag_pattern(tag).finditer(text))
    if not opens:
        return None
    body = text[opens[-1].end():]
    close = (_CLOSE if tag == TAG else re.compile(f"</{re.escape(tag)}>", re.IGNORECASE)).search(body)
    return (body[:close.start()] if close else body).strip()


def read_answer(text: str | None) -> str | None:
    """The answer the reference's `parse_model_output` reads in `text`: reasoning removed, the last block's
    content (possibly ""), else the remaining text stripped; None where it finds none (its "No output")."""
    if not text:
        return None
    cleaned = strip_reasoning(text)
    block = last_block(cleaned)
    if block is not None:
        return block
    return cleaned.strip() or None


def reference_answer(text: str | None) -> str:
    """The prediction exactly as the reference evaluation hands it to its judge (`parse_model_output`):
    reasoning removed, the last block's content, else the remaining text; "No output" when nothing is
    left. The marker is not removed here (the judge prompt's rendering does that)."""
    answer = read_answer(text)
    return "No output" if answer is None else answer


def parse_output(text: str | None, finish_reason: str | None = "stop") -> Parsed:
    if finish_reason == "length":
        return Parsed(None, "truncated: the output hit max_tokens (finish_reason length)")
    if not text:
        return Parsed(None, "empty output")
    return parse_stripped(strip_reasoning(text))


def parse_stripped(cleaned: str) -> Parsed:
    """Steps 2-4 on an output whose reasoning `strip_reasoning` already removed (`parse_output` without a
    finish reason: for callers that looked at the stripped text themselves)."""
    answer = last_block(cleaned)
    if answer is None:
        if not cleaned.strip():
            return Parsed(None, "empty once reasoning is removed (no <predicted_observation> block)")
        answer = cleaned.strip()
    answer = strip_marker(answer)
    tags = leftover_tags(answer)
    if tags:
        return Parsed(None, f"reasoning or tags left in the parsed state: {' '.join(tags)}")
    # the model learned silent commands as EMPTY_OBSERVATION: stored like a real silent step, as ""
    return Parsed("" if answer == EMPTY_OBSERVATION else answer)
