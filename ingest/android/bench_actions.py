"""The android actions AgentWorldBench prompts carry, in the three forms of its sources, to schema actions:

- AndroidWorld's JSONAction (`{"action_type": "click", "index": 3}`) through `json_action`;
- a phone tool call, `<invoke name="phone">` with `<parameter name="action">click</parameter>` and the other
  parameters (`index`, `text`, `direction`...), read as the JSONAction it names (`type` -> `input_text`,
  `back` / `home` -> `navigate_back` / `navigate_home`);
- DroidBot's event text (`touch <button id=3 bound_box=...>Sign in</button>`, `long_touch`, `set_text <input
  ...>old</input> new text`, `scroll up <scrollbar ...>`, `key BACK`, `intent am start ...`, `kill_app`).

The target element (index, DroidBot's attributes) is the action's `element`; no point is given (the prompts
name elements, and give no screen size to make pixels fractions of). `arguments` keeps the parsed action,
`raw` the prompt. None for a form none of these reads: the caller keeps its generic reading."""

from __future__ import annotations

import re

import orjson

from ingest.android.json_action import json_action
from ingest.record import Action

_INVOKE = re.compile(r"<invoke\s+name=\"([^\"]+)\"\s*>(.*?)</invoke>", re.DOTALL)
_PARAM = re.compile(r"<parameter\s+name=\"([^\"]+)\"\s*>(.*?)</parameter>", re.DOTALL)
_PHONE_ALIASES = {"type": "input_text", "input": "input_text", "back": "navigate_back", "home": "navigate_home",
                  "tap": "click", "enter": "keyboard_enter"}
_DROIDBOT = re.compile(r"^(touch|long_touch|set_text|scroll|key|intent|kill_app)\b\s*(.*)$", re.DOTALL)
_ELEMENT = re.compile(r"<(\w+)([^>]*)>(.*?)</\1>", re.DOTALL)
_ATTR = re.compile(r"(\w+)=('([^']*)'|\"([^\"]*)\"|(\S+))")


def bench_android_action(body: str, value, raw: str) -> Action | None:
    """`body`: the action text of the prompt (inside its fence); `value`: it decoded as JSON, or None."""
    if isinstance(value, dict) and isinstance(value.get("action_type"), str):
        return _json(value, raw)
    invoke = _INVOKE.search(body)
    if invoke:
        params = {k: _scalar(v.strip()) for k, v in _PARAM.findall(invoke.group(2))}
        name = params.pop("action", None)
        if isinstance(name, str):
            return _json({"action_type": _PHONE_ALIASES.get(name, name), **params}, raw,
                         {"tool": invoke.group(1), "action": name, **params})
        return None
    return _droidbot(body.strip(), raw)


def _scalar(text: str):
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _json(act: dict, raw: str, arguments: dict | None = None) -> Action | None:
    element = orjson.dumps({"index": act["index"]}).decode() if isinstance(act.get("index"), int) else None
    try:
        action = json_action(act, raw, element=element, source_name="AgentWorldBench android")
    except ValueError:
        return None
    action.arguments = orjson.dumps(arguments or act).decode()
    return action


def _droidbot(body: str, raw: str) -> Action | None:
    match = _DROIDBOT.match(body)
    if not match:
        return None
    verb, rest = match.group(1), match.group(2).strip()
    direction = None
    if verb == "scroll":
        direction, _, rest = rest.partition(" ")
        rest = rest.strip()
    element, trailing = _droidbot_element(rest)
    arguments = orjson.dumps({"event": verb, "target": rest} if rest else {"event": verb}).decode()
    if verb in ("touch", "long_touch"):
        return Action(kind="tap" if verb == "touch" else "long_press", element=element, arguments=arguments, raw=raw)
    if verb == "set_text":
        return Action(kind="type", text=trailing, element=element, arguments=arguments, raw=raw)
    if verb == "scroll":
        return Action(kind="scroll", direction=direction.lower() or None, element=element, arguments=arguments,
                      raw=raw)
    if verb == "key":
        return Action(kind="back" if rest.upper() == "BACK" else "key", keys=[rest] if rest else None,
                      arguments=arguments, raw=raw)
    return Action(kind="command", code=body, arguments=arguments, raw=raw)  # intent, kill_app: device commands


def _droidbot_element(text: str) -> tuple[str | None, str | None]:
    """(the target element as JSON: tag, attributes, text; the text after it) from DroidBot's event text."""
    match = _ELEMENT.search(text)
    if not match:
        return None, text or None
    element = {"tag": match.group(1)}
    for attr in _ATTR.finditer(match.group(2)):
        element[attr.group(1)] = next(v for v in attr.groups()[2:] if v is not None)
    if match.group(3).strip():
        element["text"] = match.group(3).strip()
    return orjson.dumps(element).decode(), text[match.end():].strip() or None
