"""The rule part of the world-model reward: what the real next state makes checkable, per domain, in [0, 1].

1. Answer form, as the domain's system prompt demands it (reasoning removed first, like the eval parser):
   android, web, os: exactly one `<predicted_observation>` block, closed; terminal, swe, mcp, search: the
   answer opens with `**Environment Observation:**` and holds no `<predicted_observation>` tag. A wrong
   form, or an output the eval parser (`transforms.label.parse.parse_output`) finds unusable, scores 0.
2. The prediction (parsed exactly like `pipelines eval` and the labeler parse it) against the ground truth
   (`(no output)` is the empty state, as in the exports). Equal texts score 1 without further checks.
   Otherwise each anchor the domain has scores its agreement and the rule score is their mean:
   - android, os: the first line (`Activity:` / `Window:`), and the element lines' identities
     (`[id] Class "text"`, the bounds left out) as an F1 of the two sets;
   - web: the `URL:` line, the `Title:` line, and element identities when the state lists any;
   - terminal: the output lines as an F1 of the two multisets, and the last line (the prompt the command
     leaves, where the exit status of a shell usually shows: `$` vs an error message);
   - swe, mcp, search: when the truth is a JSON document, the prediction must parse (one anchor) and agree on
     its top-level keys (Jaccard; arrays: the length); otherwise the output lines as for terminal.
   Lines are compared after masking volatile values (`transforms.canonicalize`: times, ids, hashes, PIDs,
   ports, temp paths), only where the raw lines differ (masking is the costly part).
Thresholds are `RuleOptions`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

from transforms.agentworld import ANSWER_TAG, EMPTY_OBSERVATION, OBSERVATION_MARKER, answer_in_block
from transforms.canonicalize import canonicalize_text
from transforms.label.parse import parse_output, strip_reasoning

_OPEN, _CLOSE = f"<{ANSWER_TAG}>", f"</{ANSWER_TAG}>"
_ELEMENT = re.compile(r'^\s*\[[^\]]*\] (\S+)(?: ("(?:[^"\\]|\\.)*"))?', re.MULTILINE)
_JSON_START = ("{", "[")


@dataclass(frozen=True)
class RuleOptions:
    max_chars: int = 200_000  # a prediction longer than this is not checked (scores 0): bounds the work
    f1_floor: float = 0.0  # an anchor F1 under this counts as 0 (e.g. 0.5: half the lines must agree)


@dataclass
class RuleResult:
    score: float
    form_ok: bool
    anchors: dict[str, float] = field(default_factory=dict)
    failure: str | None = None


def answer_form(domain: str, text: str) -> str | None:
    """Why `text` (reasoning removed) is not in the domain's answer form; None when it is."""
    lowered = text.lower()
    opens, closes = lowered.count(_OPEN), lowered.count(_CLOSE)
    if answer_in_block(domain):
        if opens != 1 or closes != 1 or lowered.find(_CLOSE) < lowered.find(_OPEN):
            return f"not one closed <{ANSWER_TAG}> block ({opens} open, {closes} closed)"
        return None
    if opens or closes:
        return f"a <{ANSWER_TAG}> tag where the {domain} prompt asks for the {OBSERVATION_MARKER} form"
    if not text.lstrip().startswith(OBSERVATION_MARKER):
        return f"the answer does not open with {OBSERVATION_MARKER}"
    return None


def _truth(ground_truth: str | None) -> str:
    text = (ground_truth or "").strip()
    if text.startswith(OBSERVATION_MARKER):
        text = text[len(OBSERVATION_MARKER):].strip()
    return "" if text == EMPTY_OBSERVATION else text


def rule_score(domain: str, solution: str | None, ground_truth: str | None,
               options: RuleOptions = RuleOptions()) -> RuleResult:
    """The rule score of a world model's raw output against the real next state (module docstring)."""
    if not solution or len(solution) > options.max_chars:
        return RuleResult(0.0, False, failure="empty output" if not solution else "output over max_chars")
    problem = answer_form(domain, strip_reasoning(solution))
    if problem:
        return RuleResult(0.0, False, failure=problem)
    parsed = parse_output(solution)
    if parsed.observation is None:
        return RuleResult(0.0, False, failure=parsed.failure)
    predicted, truth = parsed.observation, _truth(ground_truth)
    if predicted == truth:
        return RuleResult(1.0, True, {"exact": 1.0})
    anchors = ANCHORS.get(domain, _lines_anchors)(predicted, truth)
    anchors = {k: (v if v >= options.f1_floor else 0.0) for k, v in anchors.items()}
    return RuleResult(sum(anchors.values()) / len(anchors), True, anchors)


def _same(a: str, b: str) -> float:
    return 1.0 if a == b or canonicalize_text(a) == canonicalize_text(b) else 0.0


def _masked_f1(predicted: list[str], truth: list[str]) -> float:
    """F1 of two multisets of lines; lines that differ raw are compared again masked."""
    p, t = Counter(predicted), Counter(truth)
    common = p & t
    rest_p, rest_t = p - common, t - common
    if rest_p and rest_t:
        masked = Counter(canonicalize_text(x) for x in rest_p.elements()) & \
                 Counter(canonicalize_text(x) for x in rest_t.elements())
        common = common + masked
    if not p and not t:
        return 1.0
    n = sum(common.values())
    if not n:
        return 0.0
    precision, recall = n / sum(p.values()), n / sum(t.values())
    return 2 * precision * recall / (precision + recall)


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _lines_anchors(predicted: str, truth: str) -> dict[str, float]:
    p, t = _lines(predicted), _lines(truth)
    return {"lines": _masked_f1(p, t), "last_line": _same(p[-1] if p else "", t[-1] if t else "")}


def _elements(text: str) -> list[str]:
    return [m.group(1) + (" " + m.group(2) if m.group(2) else "") for m in _ELEMENT.finditer(text)]


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0].strip()


def _screen_anchors(predicted: str, truth: str) -> dict[str, float]:
    return {"header": _same(_first_line(predicted), _first_line(truth)),
            "elements": _masked_f1(_elements(predicted), _elements(truth))}


def _prefixed_line(text: str, prefix: str) -> str:
    for line in text.splitlines():
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    return ""


def _web_anchors(predicted: str, truth: str) -> dict[str, float]:
    anchors = {"url": _same(_prefixed_line(predicted, "URL:"), _prefixed_line(truth, "URL:")),
               "title": _same(_prefixed_line(predicted, "Title:"), _prefixed_line(truth, "Title:"))}
    elements = _elements(truth)
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
