"""Terminus 2's JSON reply (`{"analysis", "plan", "commands": [{"keystrokes", "duration"}], "task_complete"}`),
decoded as Harbor's own parser (`TerminusJSONPlainParser` of `harbor.agents.terminus_2`) reads it, so that a
trajectory that kept the model's raw reply (Terminus 2's `raw_content` mode: the reply is the step's message, no
tool call is written) gives the actions Terminus 2 executed:

- the reply is the first balanced `{...}` of the text (text before or after it is tolerated, as Harbor does);
  it must decode to an object with `analysis`, `plan` and `commands`, and `commands` must be an array;
- `task_complete` is true when it is `true` (or a string `true` / `1` / `yes`, any case; another value by its
  truth); absent, false;
- each command must be an object whose `keystrokes` is a string; its `duration` is a number, else 1.0 (Harbor's
  default); a malformed command voids the reply's commands, unless the reply claims the task complete (then the
  reply is that claim alone, as Harbor runs it).

A reply that does not decode gets Harbor's two repairs, in its order, and is read as repaired when one decodes:
the closing braces it lacks added (when it did not decode as JSON), else the first brace-nested (two levels)
object of the text that decodes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Iterator

REQUIRED = ("analysis", "plan", "commands")
DEFAULT_DURATION = 1.0  # Harbor's wait after a command that names none
_TRUE_WORDS = ("true", "1", "yes")
# a text that tries to be Terminus 2's reply: it names a command's keystrokes, or both analysis and plan, as JSON keys
_KEYSTROKES_KEY = re.compile(r'"keystrokes"\s*:')
# an object nested at most two levels, Harbor's search for JSON inside mixed text
_NESTED_OBJECT = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}", re.S)
_ANALYSIS_KEY, _PLAN_KEY = re.compile(r'"analysis"\s*:'), re.compile(r'"plan"\s*:')


@dataclass
class Reply:
    analysis: object
    plan: object
    commands: list[tuple[str, float]]  # (keystrokes, duration in seconds), in the order they were sent
    task_complete: bool


def looks_like_reply(text: str) -> bool:
    """Whether a text that did not decode was meant as a reply (worth a warning), not an ordinary message."""
    return "{" in text and (_KEYSTROKES_KEY.search(text) is not None or (
        _ANALYSIS_KEY.search(text) is not None and _PLAN_KEY.search(text) is not None))


def _object_span(text: str) -> str | None:
    """The first balanced `{...}` of the text, strings and escapes skipped (Harbor's scan)."""
    start, depth, in_string, escaped = -1, 0, False, False
    for i, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif char == "{":
            start = i if depth == 0 else start
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return None


def _complete(value) -> bool:
    if isinstance(value, str):
        return value.lower() in _TRUE_WORDS
    return bool(value)


def _commands(values: list) -> tuple[list[tuple[str, float]], str | None]:
    out = []
    for n, command in enumerate(values, 1):
        if not isinstance(command, dict):
            return [], f"command {n} is not an object"
        keys = command.get("keystrokes")
        if not isinstance(keys, str):
            return [], f"command {n} has no 'keystrokes' string"
        wait = command.get("duration")
        out.append((keys, float(wait) if isinstance(wait, (int, float)) else DEFAULT_DURATION))
    return out, None


def decode(text: str) -> tuple[Reply | None, str | None]:
    """The reply a text holds (repaired as Harbor repairs it), or None and why it is not one."""
    reply, why = _decode(text)
    if reply is not None:
        return reply, None
    for repaired in _repairs(text, why):
        again, _ = _decode(repaired)
        if again is not None:
            return again, None
    return None, why


def _repairs(text: str, why: str) -> Iterator[str]:
    """Harbor's auto-fixes of a reply that does not decode, in its order."""
    missing = text.count("{") - text.count("}")
    if missing > 0 and why.startswith(("no JSON object", "its JSON does not decode")):
        yield text + "}" * missing
    for candidate in _NESTED_OBJECT.findall(text):
        try:
            json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        yield candidate
        return


def _decode(text: str) -> tuple[Reply | None, str | None]:
    span = _object_span(text)
    if span is None:
        return None, "no JSON object in it"
    try:
        data = json.loads(span)  # Harbor's decoder: NaN and Infinity are numbers to it
    except (ValueError, RecursionError) as e:  # RecursionError: nesting deeper than Python recurses
        return None, f"its JSON does not decode ({e})"
    if not isinstance(data, dict):
        return None, "its JSON is not an object"
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        return None, f"it lacks {', '.join(missing)}"
    if not isinstance(data["commands"], list):
        return None, "its 'commands' is not an array"
    complete = _complete(data.get("task_complete", False))
    commands, error = _commands(data["commands"])
    if error and not complete:
        return None, error
    return Reply(data["analysis"], data["plan"], commands, complete), None
