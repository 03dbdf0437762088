"""Terminus 2's reply, decoded as Harbor's own parsers (`harbor.agents.terminus_2`) read it, so that a trajectory
that kept the model's raw reply (Terminus 2's `raw_content` mode: the reply is the step's message, no tool call
is written) gives the actions Terminus 2 executed. The trajectory's `agent.extra.parser` says which parser ran:
`json` (the default) or `xml`; where it is not said, a reply with a `<response>` tag is read as XML.

The JSON reply (`{"analysis", "plan", "commands": [{"keystrokes", "duration"}], "task_complete"}`,
`TerminusJSONPlainParser`):

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

The XML reply (`<response><analysis>..</analysis><plan>..</plan><commands><keystrokes duration="0.1">..
</keystrokes>..</commands><task_complete>true</task_complete></response>`, `TerminusXMLPlainParser`): the text
after the first `<response>` up to `</response>` (or the end); each section the first `<tag>...</tag>` in it
(stripped); the commands every `<keystrokes ...>...</keystrokes>` of the commands section, their text verbatim
(entities are not decoded: Harbor sends them as written), `duration` the attribute's number, else 1.0; complete
when it holds `<task_complete>true</task_complete>` (any case, spaces around). A reply without `<response>`, or
without a commands section that does not claim completion, is not one.
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
_XML_COMPLETE = re.compile(r"<task_complete>\s*true\s*</task_complete>", re.I)
_XML_KEYSTROKES = re.compile(r"<keystrokes([^>]*)>(.*?)</keystrokes>", re.S)
_XML_DURATION = re.compile(r"""duration\s*=\s*["']([^"']*)["']""")
_ANALYSIS_KEY, _PLAN_KEY = re.compile(r'"analysis"\s*:'), re.compile(r'"plan"\s*:')


@dataclass
class Reply:
    analysis: object
    plan: object
    commands: list[tuple[str, float]]  # (keystrokes, duration in seconds), in the order they were sent
    task_complete: bool


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


def decode(text: str, parser: str | None = None) -> tuple[Reply | None, str | None]:
    """The reply a text holds as the named parser (`json`, `xml`; None: by the text) reads it, or None and why
    it is not one."""
    if parser == "xml" or (parser is None and "<response>" in text):
        return decode_xml(text)
    return decode_json(text)


def may_be_reply(text: str) -> bool:
    """A cheap first test (substrings, no scan): whether the text can be a reply, or one meant that is refused
    (a coding agent's message holding code is seldom either)."""
    return "<response>" in text or ("{" in text and ('"commands"' in text or '"keystrokes"' in text
                                                     or '"analysis"' in text))


def looks_like_reply(text: str, parser: str | None = None) -> bool:
    """Whether a text that did not decode was meant as a reply (worth a warning), not an ordinary message."""
    if parser == "xml" or (parser is None and "<response>" in text):
        return "<response>" in text or "<keystrokes" in text
    return "{" in text and (_KEYSTROKES_KEY.search(text) is not None or (
        _ANALYSIS_KEY.search(text) is not None and _PLAN_KEY.search(text) is not None))


def decode_xml(text: str) -> tuple[Reply | None, str | None]:
    """An XML reply as `TerminusXMLPlainParser` reads it, or None and why it is not one."""
    start = text.find("<response>")
    if start == -1:
        return None, "no <response> tag in it"
    end = text.find("</response>", start)
    content = text[start + len("<response>"):end if end != -1 else len(text)].strip()
    complete = _XML_COMPLETE.search(content) is not None
    sections = {name: _xml_section(content, name) for name in REQUIRED}
    if not sections["commands"]:
        if sections["commands"] is None and not complete:
            return None, "it has no <commands> section"
        return Reply(sections["analysis"] or "", sections["plan"] or "", [], complete), None
    commands = []
    for attributes, keys in _XML_KEYSTROKES.findall(sections["commands"]):
        wait = _XML_DURATION.search(attributes)
        try:
            duration = float(wait.group(1)) if wait else DEFAULT_DURATION
        except ValueError:
            duration = DEFAULT_DURATION
        commands.append((keys, duration))
    return Reply(sections["analysis"] or "", sections["plan"] or "", commands, complete), None


def _xml_section(content: str, name: str) -> str | None:
    """A section's text (stripped), "" for an empty or self-closing one, None when there is none."""
    found = re.search(f"<{name}>(.*?)</{name}>", content, re.S)
    if found:
        return found.group(1).strip()
    return "" if re.search(f"<{name}\\s*/>", content) or f"<{name}></{name}>" in content else None


def decode_json(text: str) -> tuple[Reply | None, str | None]:
    """A JSON reply (repaired as Harbor repairs it), or None and why it is not one."""
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
