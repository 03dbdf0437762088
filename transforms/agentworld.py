"""Qwen-AgentWorld chat rendering: the text a language world model reads (actions) and predicts (observations).

Layout of one sample (the reference's, see `agentworld_prompts/PROVENANCE.md`):

    system     the domain's world-model system prompt, placeholders filled
    user       ### Turn 1 / **Current State:** <first observation> / **Action:** + fenced JSON
    assistant  **Environment Observation:** <observation after action 1>
    user       ### Turn 2 / **Action:** + fenced JSON
    ...
    user       ### Turn N / **Action:** ...              (the model's target is the next observation)

Action JSON (`action_json`): a schema-v1 action struct (a dict, as `pyarrow` `to_pylist` gives it) in the
shape the reference shows for the domain, nulls and `raw` dropped, pretty-printed with indent 2:

- terminal: a JSON array of keystroke commands, `[{"keystrokes": "ls -la\\n", "duration": 0.5}]`.
  `keystrokes` -> its text; `command`/`code` -> the command plus a trailing newline (so it executes);
  `wait` -> `""`; `done` -> `[]` (the reference's completion signal). `duration` is `duration_s`, left out
  when unknown (the reference's default is 1.0 s). Other kinds fall back to the generic form in a 1-list.
- mcp, search, swe: a tool call `{"name": tool_name, "arguments": {...}}` (arguments parsed from their JSON
  string). Other kinds use the generic form.
- android, web, os (and any other case): the generic form: the struct's non-null fields in schema order
  (`kind`, `x`, `y`, `x2`, `y2`, `text`, `keys`, `element`, `direction`, `tool_name`, `arguments`, `code`,
  `duration_s`), the JSON-string fields `element`/`arguments` parsed to objects, normalized coordinates
  rounded to 4 decimals (a tenth of a pixel on a 1000-pixel screen).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import orjson

PROMPTS_DIR = Path(__file__).resolve().parent / "agentworld_prompts"
DOMAINS = ("android", "web", "os", "terminal", "swe", "mcp", "search")
OBSERVATION_MARKER = "**Environment Observation:**"

_TOOL_DOMAINS = ("mcp", "search", "swe")
_GENERIC_FIELDS = ("kind", "x", "y", "x2", "y2", "text", "keys", "element", "direction", "tool_name",
                   "arguments", "code", "duration_s")
_COORDINATES = ("x", "y", "x2", "y2")
_JSON_FIELDS = ("element", "arguments")


@lru_cache(maxsize=None)
def _template(domain: str) -> str:
    if domain not in DOMAINS:
        raise ValueError(f"no AgentWorld system prompt for domain {domain!r} (domains: {', '.join(DOMAINS)})")
    return (PROMPTS_DIR / domain / "system_prompt.txt").read_text(encoding="utf-8")


def system_prompt(domain: str, tools: list[dict] | None = None, demonstrations: str = "") -> str:
    """The domain's system prompt with `{tool_definitions}` (the tools as a JSON array, indent 2; empty when
    none) and `{demonstrations}` filled. Templates without those placeholders come back unchanged.
    Raises ValueError for an unknown domain."""
    text = _template(domain)
    tool_text = _dumps(tools) if tools else ""
    # Plain replacement: the templates hold literal JSON braces that str.format would choke on.
    return text.replace("{tool_definitions}", tool_text).replace("{demonstrations}", demonstrations)


def _dumps(value) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=2)`, exactly. orjson writes the same text for plain JSON
    values some 20x faster, except floats in (0, 1e-4) (`1e-5` where the stdlib writes `1e-05`) and
    non-finite ones: values holding those, and anything orjson refuses (ints over 64 bits, non-string
    keys, lone surrogates), go through the stdlib."""
    if _same_in_orjson(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONEncodeError:
            pass
    return json.dumps(value, ensure_ascii=False, indent=2)


def _same_in_orjson(value) -> bool:
    if isinstance(value, float):
        return value == 0 or 1e-4 <= abs(value) < math.inf
    if isinstance(value, dict):
        return all(_same_in_orjson(v) for v in value.values())
    if isinstance(value, list):
        return all(_same_in_orjson(v) for v in value)
    return value is None or type(value) in (str, int, bool)


def _parse_json_field(value: str):
    try:
        return json.loads(value)
    except (ValueError, TypeError):
        return value  # not JSON: keep the string as the source gave it


def generic_action(action: dict) -> dict:
    """The schema-v1 action's non-null fields (no `raw`), JSON strings parsed, coordinates rounded."""
    out = {}
    for name in _GENERIC_FIELDS:
        value = action.get(name)
        if value is None:
            continue
        if name in _COORDINATES:
            value = round(float(value), 4)
        elif name in _JSON_FIELDS:
            value = _parse_json_field(value)
        out[name] = value
    return out


def _terminal_action(action: dict) -> list:
    kind = action.get("kind")
    if kind == "done":
        return []
    if kind == "keystrokes":
        keys = action.get("text") or ""
    elif kind in ("command", "code"):
        keys = action.get("code") or action.get("text") or ""
        if not keys.endswith("\n"):
            keys += "\n"
    elif kind == "wait":
        keys = ""
    else:
        return [generic_action(action)]
    command = {"keystrokes": keys}
    if action.get("duration_s") is not None:
        command["duration"] = action["duration_s"]
    return [command]


def action_object(domain: str, action: dict):
    """The JSON value (dict or list) that stands for `action` in an AgentWorld user turn of `domain`."""
    if domain == "terminal":
        return _terminal_action(action)
    if domain in _TOOL_DOMAINS and action.get("kind") == "tool_call" and action.get("tool_name"):
        arguments = action.get("arguments")
        parsed = _parse_json_field(arguments) if arguments is not None else {}
        return {"name": action["tool_name"], "arguments": parsed}
    return generic_action(action)


def action_json(domain: str, action: dict) -> str:
    return _dumps(action_object(domain, action))


def action_turn(turn: int, action: dict, current_state: str | None = None, domain: str | None = None) -> str:
    """One user message: `### Turn N`, the `**Current State:**` block when given (turn 1, or the first kept
    turn after trimming), then `**Action:**` and the action as a fenced JSON block. `domain` picks the
    domain's action shape (generic form when None)."""
    return user_turn(turn, action_block(action, domain), current_state)


def action_block(action: dict, domain: str | None = None) -> str:
    """`**Action:**` and the action as a fenced JSON block: the part of a user turn that depends on the action
    alone (exporters render it once per turn and reuse it)."""
    return "**Action:**\n```json\n" + action_json(domain or "", action) + "\n```"


def state_block(current_state: str | None) -> str:
    """The `**Current State:**` block of a user turn; empty when there is no state to show."""
    return "" if current_state is None else f"**Current State:**\n{current_state}\n\n"


def user_turn(turn: int, block: str, current_state: str | None = None) -> str:
    """`action_turn` from an already rendered `action_block`."""
    return f"### Turn {turn}\n" + state_block(current_state) + block


# A command that printed nothing (or a step with no observation) is shown as this line, the same in SFT
# targets and history, RL ground truth and labeler requests, so a model learns one way to say "silent".
EMPTY_OBSERVATION = "(no output)"


def observation_text(text: str | None) -> str:
    """The observation as the model sees and writes it: EMPTY_OBSERVATION when blank."""
    return text if text and text.strip() else EMPTY_OBSERVATION


def observation_turn(text: str | None) -> str:
    """One assistant message: the observation after the marker the reference's evaluation strips."""
    return f"{OBSERVATION_MARKER}\n{observation_text(text)}"


def transition_messages(domain: str, history: list[tuple[dict, str]], action: dict, first_state: str | None,
                        tools: list[dict] | None = None, *, first_turn: int = 1,
                        demonstrations: str = "") -> list[dict]:
    """[system, user, assistant, ..., user]: `history` is the earlier (action, next observation text) pairs in
    order, `action` the action whose next observation is the target, `first_state` the observation shown
    before the first listed action (None: no `**Current State:**` block). `first_turn` numbers the first
    listed turn (> 1 when older turns were trimmed)."""
    messages = [{"role": "system", "content": system_prompt(domain, tools, demonstrations)}]
    turn = first_turn
    state = first_state
    for past_action, observation in history:
        messages.append({"role": "user", "content": action_turn(turn, past_action, state, domain)})
        messages.append({"role": "assistant", "content": observation_turn(observation)})
        turn, state = turn + 1, None
    messages.append({"role": "user", "content": action_turn(turn, action, state, domain)})
    return messages
