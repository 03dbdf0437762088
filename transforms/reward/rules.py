"""The rule part of the world-model reward: what the real next state makes checkable, per domain, in [0, 1].

1. The answer, read as the reference evaluation reads a model's output (`transforms.label.parse.read_answer`,
   its `parse_model_output`: reasoning removed, the last `<predicted_observation>` block, closed or not, else
   the bare text), then its marker removed as its `clean_response_marker` does; `(no output)` is the empty
   state, as in the exports. An output in which the reference finds no answer (empty, or nothing but
   reasoning) scores 0. Every other form the reference reads is scored on the answer it reads.
2. The prediction against the ground truth. Equal texts score 1 without further checks. Otherwise each
   anchor the domain has scores its agreement and the content score is their mean:
   - android, os: the first line (`Activity:` / `Window:`), and the element lines' identities
     (`[id] Class "text"`, the bounds left out) as an F1 of the two sets;
   - web: the `URL:` line, the `Title:` line, and element identities when the state lists any;
   - terminal: the output lines as an F1 of the two multisets, and the last line (the prompt the command
     leaves, where the exit status of a shell usually shows: `$` vs an error message);
   - swe, mcp, search: when the truth is a JSON document, the prediction must parse (one anchor) and agree on
     its top-level keys (Jaccard; arrays: the length); otherwise the output lines as for terminal.
   Lines are compared after masking volatile values (`transforms.canonicalize`: times, ids, hashes, PIDs,
   ports, temp paths), only where the raw lines differ (masking is the costly part).
3. The answer form the domain's system prompt demands (android, web, os: exactly one closed
   `<predicted_observation>` block; terminal, swe, mcp, search: the `**Environment Observation:**` marker
   and no tag), one weighted part of the score: `form_weight` x form + (1 - form_weight) x content. Its
   default weight is 0: the reference's evaluation reads every form alike (its judge scores format).
Thresholds and the weight are `RuleOptions`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from transforms.agentworld import ANSWER_TAG, EMPTY_OBSERVATION, OBSERVATION_MARKER, answer_in_block
from transforms.canonicalize import canonicalize_text
from transforms.label.parse import last_block, strip_marker, strip_reasoning

_ANSWER_TAGS = re.compile(f"<(/?){ANSWER_TAG}>", re.IGNORECASE)
# an element line: `[id] Class "text" ...`, indented by spaces (a line at a time: no match spans lines)
# matched on "\n" + text: a pattern that starts with a literal newline is searched for fast
_ELEMENT = re.compile(r'\n[ \t]*\[[^\]\n]*\] (\S+)(?: ("[^"\\\n]*(?:\\.[^"\\\n]*)*"))?')
_CACHED_CHARS = 4096  # lines up to this long keep their masked form (a GRPO group shares its ground truth)
_JSON_START = ("{", "[")


@dataclass(frozen=True)
class RuleOptions:
    max_chars: int = 200_000  # a prediction longer than this is not checked (scores 0): bounds the work
    f1_floor: float = 0.0  # an anchor F1 under this counts as 0 (e.g. 0.5: half the lines must agree)
    form_weight: float = 0.0  # the answer form's share of the score (0..1); the content has the rest


@dataclass
class RuleResult:
    score: float
    form_ok: bool  # the answer is in the domain's form (`answer_form`)
    anchors: dict[str, float] = field(default_factory=dict)
    failure: str | None = None  # why the form is not the domain's, or why there is no answer
    answered: bool = True  # the reference reads an answer in the output (False: empty, or reasoning only)


_IN_BLOCK = {domain: answer_in_block(domain) for domain in ("android", "web", "os", "terminal", "swe", "mcp", "search")}


def answer_form(domain: str, text: str) -> str | None:
    """Why `text` (reasoning removed) is not in the domain's answer form; None when it is."""
    tags = [m.group(1) for m in _ANSWER_TAGS.finditer(text)]  # "" for an opening tag, "/" for a closing one
    opens, closes = tags.count(""), tags.count("/")
    in_block = _IN_BLOCK.get(domain)
    if in_block is None:
        in_block = answer_in_block(domain)
    if in_block:
        if tags != ["", "/"]:
            return f"not one closed <{ANSWER_TAG}> block ({opens} open, {closes} closed)"
        return None
    if opens or closes:
        return f"a <{ANSWER_TAG}> tag where the {domain} prompt asks for the {OBSERVATION_MARKER} form"
    if not text.lstrip().startswith(OBSERVATION_MARKER):
        return f"the answer does not open with {OBSERVATION_MARKER}"
    return None


def _state(text: str) -> str:
    """A state as the judge compares it: the marker removed as the reference removes it, `(no output)` the
    empty state."""
    text = strip_marker(text)
    return "" if text == EMPTY_OBSERVATION else text


def rule_score(domain: str, solution: str | None, ground_truth: str | None,
               options: RuleOptions = RuleOptions()) -> RuleResult:
    """The rule score of a world model's raw output against the real next state (module docstring)."""
    if not 0.0 <= options.form_weight <= 1.0:
        raise ValueError(f"form_weight must be within 0..1, not {options.form_weight}")
    if not solution or len(solution) > options.max_chars:
        return RuleResult(0.0, False, failure="empty output" if not solution else "output over max_chars",
                          answered=bool(solution))
    cleaned = strip_reasoning(solution)
    problem = answer_form(domain, cleaned)
    answer = last_block(cleaned)
    if answer is None:
        answer = cleaned.strip() or None
    if answer is None:
        return RuleResult(0.0, False, failure="no answer once reasoning is removed", answered=False)
    predicted, truth = _state(answer), _state((ground_truth or "").strip())
    if predicted == truth:
        anchors = {"exact": 1.0}
    else:
        anchors = ANCHORS.get(domain, _lines_anchors)(predicted, truth)
        anchors = {k: (v if v >= options.f1_floor else 0.0) for k, v in anchors.items()}
    content = sum(anchors.values()) / len(anchors)
    form = 0.0 if problem else 1.0
    score = options.form_weight * form + (1.0 - options.form_weight) * content
    return RuleResult(score, problem is None, anchors, failure=problem)


@lru_cache(maxsize=65536)
def _masked_cached(text: str) -> str:
    return canonicalize_text(text)


def _masked(text: str) -> str:
    """`canonicalize_text`, remembered for short texts: the rollouts of one prompt share its ground truth."""
    return _masked_cached(text) if len(text) <= _CACHED_CHARS else canonicalize_text(text)


def _same(a: str, b: str) -> float:
    return 1.0 if a == b or _masked(a) == _masked(b) else 0.0


def _masked_f1(predicted: list[str], truth: list[str]) -> float:
    """F1 of two multisets of lines; lines that differ raw are compared again masked."""
    p, t = Counter(predicted), Counter(truth)
    common = p & t
    rest_p, rest_t = p - common, t - common
    if rest_p and rest_t:
        masked = Counter(_masked(x) for x in rest_p.elements()) & Counter(_masked(x) for x in rest_t.elements())
        common = common + masked
    if not p and not t:
        return 1.0
    n = sum(common.values())
    if not n:
        return 0.0
    precision, recall = n / sum(p.values()), n / sum(t.values())
    return 2 * precision * recall / (precision + recall)


@lru_cache(maxsize=1024)
def _truth_lines(text: str) -> tuple[str, ...]:
    return tuple(_lines(text))


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _lines_anchors(predicted: str, truth: str) -> dict[str, float]:
    p, t = _lines(predicted), _truth_lines(truth)
    return {"lines": _masked_f1(p, t), "last_line": _same(p[-1] if p else "", t[-1] if t else "")}


def _elements(text: str) -> list[str]:
    return [f"{cls} {label}" if label else cls for cls, label in _ELEMENT.findall("\n" + text)]


@lru_cache(maxsize=1024)
def _truth_elements(text: str) -> tuple[str, ...]:
    return tuple(_elements(text))


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0].strip()


def _screen_anchors(predicted: str, truth: str) -> dict[str, float]:
    return {"header": _same(_first_line(predicted), _first_line(truth)),
            "elements": _masked_f1(_elements(predicted), _truth_elements(truth))}


def _prefixed_line(text: str, prefix: str) -> str:
    for line in text.splitlines():
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    return ""


def _web_anchors(predicted: str, truth: str) -> dict[str, float]:
    anchors = {"url": _same(_prefixed_line(predicted, "URL:"), _prefixed_line(truth, "URL:")),
               "title": _same(_prefixed_line(predicted, "Title:"), _prefixed_line(truth, "Title:"))}
    elements = _truth_elements(truth)
    if elements:
        anchors["elements"] = _masked_f1(_elements(predicted), elements)
    return anchors


def _json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _tool_anchors(predicted: str, truth: str) -> dict[str, float]:
    expected = _json(truth) if truth.lstrip()[:1] in _JSON_START else None
    if expected is None:
        return _lines_anchors(predicted, truth)
    got = _json(predicted) if predicted.lstrip()[:1] in _JSON_START else None
    if got is None:
        return {"json": 0.0, "keys": 0.0}
    if isinstance(expected, dict) and isinstance(got, dict):
        keys_p, keys_t = set(got), set(expected)
        union = keys_p | keys_t
        return {"json": 1.0, "keys": len(keys_p & keys_t) / len(union) if union else 1.0}
    if isinstance(expected, list) and isinstance(got, list):
        return {"json": 1.0, "keys": 1.0 if len(got) == len(expected) else 0.0}
    return {"json": 1.0, "keys": 0.0}


ANCHORS = {"android": _screen_anchors, "os": _screen_anchors, "web": _web_anchors, "terminal": _lines_anchors,
           "swe": _tool_anchors, "mcp": _tool_anchors, "search": _tool_anchors}
