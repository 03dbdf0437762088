"""Qwen-AgentWorld chat rendering: the text a language world model reads (actions) and predicts (observations).

Layout of one sample (the reference's, see `agentworld_prompts/PROVENANCE.md`), every part as the domain's
system prompt defines it:

    system     the domain's world-model system prompt, `{tool_definitions}` filled from the trajectory's
               own tools (recorded definitions, else the calls it made: never an empty list)
    user       ### Turn 1 / **Task Instruction:** (os, whose prompt lists it, and android, whose benchmark rows
               give it) / **Current State:** <first observation> / **Action:** + the action in the domain's form
               (search: the first action followed by the `**Simulation Instruction:**`, where the trajectory
               recorded a query or a reference answer)
    assistant  the observation after action 1 in the domain's answer form:
               android, web, os (their prompts demand it): `<predicted_observation>`...`</predicted_observation>`
               terminal, swe, mcp, search: `**Environment Observation:**` + the observation
    user       ### Turn 2 / **Current State:** (android, web, os: the GUI domains show the screen in every turn,
               as the benchmark's rows do) / **Action:** ...
    ...
    user       ### Turn N / **Action:** ...              (the model's target is the next observation)

A record whose oldest turns were trimmed to fit a token budget still numbers its turns from 1, and says how
many earlier turns are not shown in one line before `### Turn 1`.

Action JSON (`action_json`): a schema-v1 action struct (a dict, as `pyarrow` `to_pylist` gives it) in the
shape the reference shows for the domain, nulls and `raw` dropped, pretty-printed with indent 2:

- terminal: a JSON array of keystroke commands, `[{"keystrokes": "ls -la\\n", "duration": 0.5}]`.
  `keystrokes` -> its text; `command`/`code` -> the command plus a trailing newline (so it executes);
  `wait` -> `""`; `done` -> `[]` (the reference's completion signal). `duration` is `duration_s`, left out
  when unknown (the reference's default is 1.0 s). Other kinds fall back to the generic form in a 1-list.
- mcp, search, swe: every action is a tool call `{"name": ..., "arguments": {...}}` (`tool_call`: a tool
  call as recorded, arguments parsed from their JSON string; a shell `command` is its tool, or `bash`, with
  `{"command"}`; `code` is `execute_code` with `{"code"}`; a `message` / `done` is a call named after the
  kind, with `{"text"}` when there is one), so one trajectory never mixes two shapes.
- os: Python code in a fenced `python` block, as the os prompt defines the action: the recorded code when
  the source recorded code (`action.code`), else pyautogui calls made from the structured action
  (`pyautogui_code`; coordinates in pixels of the screen the action acted on when its size is known, else
  normalized to [0, 1], as AgentNet records them).
- android: Android's JSONAction, as the benchmark's AndroidWorld rows give it (`{"action_type": "click",
  "index": 3}`, `input_text`, `navigate_back`...; a point in pixels of the screen the action acted on), when
  that form holds the whole action (`android_action`); else the generic form.
- web: in the benchmark's layouts, BrowserGym calls (`transforms.browsergym_code`, given as each turn's
  `action_text` by the export, fenced as text); else, or where no call says it, the generic form.
- any other case: the generic form: the struct's non-null fields in schema order
  (`kind`, `x`, `y`, `x2`, `y2`, `text`, `keys`, `element`, `direction`, `tool_name`, `arguments`, `code`,
  `duration_s`), the JSON-string fields `element`/`arguments` parsed to objects, normalized coordinates
  rounded to 4 decimals (a tenth of a pixel on a 1000-pixel screen).
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

import orjson

PROMPTS_DIR = Path(__file__).resolve().parent / "agentworld_prompts"
DOMAINS = ("android", "web", "os", "terminal", "swe", "mcp", "search")
OBSERVATION_MARKER = "**Environment Observation:**"
ANSWER_TAG = "predicted_observation"  # the block the GUI prompts demand and the reference's parser reads

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


def system_prompt_template(domain: str) -> str:
    """The domain's system prompt as the reference wrote it, placeholders unfilled."""
    return _template(domain)


def answer_in_block(domain: str) -> bool:
    """Whether the domain's system prompt demands the answer inside a `<predicted_observation>` block."""
    return domain in DOMAINS and f"<{ANSWER_TAG}>" in _template(domain)


def system_prompt(domain: str, tools: list[dict] | None = None, demonstrations: str = "") -> str:
    """The domain's system prompt with `{tool_definitions}` (the tools as a JSON array, indent 2; see
    `prompt_tools`) and `{demonstrations}` filled. Templates without those placeholders come back
    unchanged. Raises ValueError for an unknown domain."""
    text = _template(domain)
    tool_text = _dumps(tools) if tools else ""
    # Plain replacement: the templates hold literal JSON braces that str.format would choke on.
    return text.replace("{tool_definitions}", tool_text).replace("{demonstrations}", demonstrations)


def _dumps(value) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=2)`, exactly. orjson writes the same text for plain JSON
    values some 20x faster, except floats in (0, 1e-4) (`0.00005` or `1e-7` where the stdlib writes `5e-05`,
    `1e-07`) and non-finite ones (`null` where the stdlib writes `NaN`). A text without those forms (and
    whose nulls read back as the value's Nones) is the stdlib's; the rest is walked value by value (every
    action of every export and label request passes here). Anything orjson refuses (ints over 64 bits,
    non-string keys, lone surrogates, subclasses, dates) goes through the stdlib."""
    try:
        text = orjson.dumps(value, option=_ORJSON_OPTIONS).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, indent=2)
    suspect = _TINY_FLOAT_TEXT.search(text) or "null" in text and orjson.loads(text) != value
    if suspect and not _same_in_orjson(value):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return text


# how orjson writes a float below 1e-4: `1e-7`, `0.00005` (a string holding these is walked: rare, and right)
_TINY_FLOAT_TEXT = re.compile(r"\de-\d|0\.0000")
_ORJSON_OPTIONS = (orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME
                   | orjson.OPT_PASSTHROUGH_DATACLASS)


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


_GUI_FIELDS = ("x", "y", "x2", "y2", "text", "keys", "element", "direction", "duration_s")


def tool_call(action: dict) -> tuple[str, dict] | None:
    """(tool name, arguments) of an action in tool-call form; None for `message` / `done` (a turn that
    calls no tool). The one mapping of actions to tool calls: the AgentWorld tool domains and the ATIF
    export both use it."""
    kind = action.get("kind")
    if kind in ("message", "done"):
        return None
    if kind == "tool_call":
        raw = action.get("arguments")
        args = _parse_json_field(raw) if raw is not None else {}
        return action.get("tool_name") or "tool", args if isinstance(args, dict) else {"input": args}
    if kind == "command":
        return action.get("tool_name") or "bash", {"command": action.get("code")}
    if kind == "code":
        return action.get("tool_name") or "execute_code", {"code": action.get("code")}
    if kind == "keystrokes":
        return action.get("tool_name") or "keystrokes", {"keystrokes": action.get("text"),
                                                        "duration": action.get("duration_s")}
    args = {k: action[k] for k in _GUI_FIELDS if action.get(k) is not None}
    return action.get("tool_name") or kind or "action", args


def _tool_action(action: dict) -> dict:
    call = tool_call(action)
    if call is None:
        kind = action.get("kind") or "message"
        return {"name": kind, "arguments": {"text": action["text"]} if action.get("text") else {}}
    return {"name": call[0], "arguments": call[1]}


def screen_size(observation: dict | None) -> tuple[int, int] | None:
    """(width, height) in pixels of an observation's screen (a schema-v1 observation struct), when recorded."""
    width, height = (observation or {}).get("width"), (observation or {}).get("height")
    return (width, height) if width and height else None


# schema kinds -> Android's JSONAction `action_type`, the form of the benchmark's AndroidWorld rows
_JSON_ACTION = {"tap": "click", "double_click": "double_tap", "long_press": "long_press", "type": "input_text",
                "scroll": "scroll", "swipe": "swipe", "back": "navigate_back", "home": "navigate_home",
                "open_app": "open_app", "wait": "wait", "done": "status", "message": "answer"}


def android_action(action: dict, screen: tuple[int, int] | None = None) -> dict | None:
    """`action` as Android's JSONAction (`{"action_type": "click", "index": 3}` or pixel `x`, `y` on a `screen`
    of (width, height) pixels); None when that form cannot hold all of it (another kind, a point without the
    screen's size, a drag's end point): the generic form is used then."""
    kind = action.get("kind")
    if kind == "key" and [str(k).upper() for k in action.get("keys") or []] == ["ENTER"]:
        return {"action_type": "keyboard_enter"}
    if kind not in _JSON_ACTION or action.get("x2") is not None or action.get("code") is not None:
        return None
    out = {"action_type": _JSON_ACTION[kind]}
    element = _parse_json_field(action["element"]) if action.get("element") else None
    if isinstance(element, dict) and isinstance(element.get("index"), int):
        out["index"] = element["index"]
    elif action.get("x") is not None and action.get("y") is not None:
        if not screen:
            return None
        out["x"], out["y"] = round(action["x"] * screen[0]), round(action["y"] * screen[1])
    if action.get("direction"):
        out["direction"] = action["direction"]
    if kind in ("type", "message") and action.get("text") is not None:
        out["text"] = action["text"]
    elif kind == "open_app":
        out["app_name"] = action.get("text")
    elif kind == "done":
        out["goal_status"] = action.get("text") or "complete"
    return out


def action_object(domain: str, action: dict, screen: tuple[int, int] | None = None):
    """The JSON value (dict or list) that stands for `action` in an AgentWorld user turn of `domain`
    (os, whose action is code, is `os_code`); `screen`: the pixel size of the screen it acted on."""
    if domain == "terminal":
        return _terminal_action(action)
    if domain in _TOOL_DOMAINS:
        return _tool_action(action)
    if domain == "android" and (json_action := android_action(action, screen)) is not None:
        return json_action
    return generic_action(action)


def os_code(action: dict, screen: tuple[int, int] | None = None) -> str:
    """The os domain's action: the recorded code, else pyautogui calls made from the structured action (in
    pixels of `screen`, when its size is known)."""
    from transforms.os_code import pyautogui_code

    return action.get("code") or pyautogui_code(action, screen)


def action_json(domain: str, action: dict, screen: tuple[int, int] | None = None) -> str:
    return _dumps(action_object(domain, action, screen))


def action_turn(turn: int, action: dict, current_state: str | None = None, domain: str | None = None) -> str:
    """One user message: `### Turn N`, the `**Current State:**` block when given (turn 1, or the first kept
    turn after trimming), then `**Action:**` and the action as a fenced JSON block. `domain` picks the
    domain's action shape (generic form when None)."""
    return user_turn(turn, action_block(action, domain), current_state)


def action_block(action: dict, domain: str | None = None, screen: tuple[int, int] | None = None) -> str:
    """`**Action:**` and the action as a fenced block (JSON; Python code for os): the part of a user turn that
    depends on the action alone (exporters render it once per turn and reuse it). `screen`: the pixel size of
    the screen it acted on, when known (android points in pixels)."""
    if domain == "os":
        return "**Action:**\n```python\n" + os_code(action, screen) + "\n```"
    return "**Action:**\n```json\n" + action_json(domain or "", action, screen) + "\n```"


def source_action_block(text: str) -> str:
    """`**Action:**` and an action already in its source's own benchmark form, fenced as the benchmark's rows
    fence it: the phone tool's `<invoke name="phone">` call as xml, JSON (a benchmark row's JSONAction as the
    row wrote it) as json, DroidBot's event text and BrowserGym calls as text."""
    fence = "xml" if text.startswith("<invoke ") else "json" if text.startswith(("{", "[")) else "text"
    return f"**Action:**\n```{fence}\n" + text + "\n```"


def state_block(current_state: str | None) -> str:
    """The `**Current State:**` block of a user turn; empty when there is no state to show."""
    return "" if current_state is None else f"**Current State:**\n{current_state}\n\n"


# The GUI domains, whose released benchmark rows show the screen before the action in every turn (a GUI world
# model predicts the next screen from the current one), where the others show it in turn 1 only
STATE_EVERY_TURN = ("android", "web", "os")
# Where the benchmark's rows give the task instruction (turn 1): os, whose prompt lists it, and android,
# whose rows open with it though its prompt does not name it
_TASK_DOMAINS = ("android", "os")


def state_every_turn(domain: str | None) -> bool:
    return domain in STATE_EVERY_TURN


def task_block(domain: str | None, task: str | None) -> str:
    """The `**Task Instruction:**` block, for the domains whose benchmark rows give it (android, os); empty
    otherwise or when the source recorded no task."""
    if not task or domain not in _TASK_DOMAINS:
        return ""
    return f"**Task Instruction:**\n{task}\n\n"


def simulation_instruction(domain: str | None, query: str | None, answer: str | None) -> str:
    """The search domain's `**Simulation Instruction:**` block (its prompt's optional third input, after the
    tool call: the Target Query and the Reference Answer whose facts the simulated results must carry), to
    follow the first turn's action; from what the trajectory recorded: its task as the query, a reference
    answer its source recorded. Empty for other domains or when neither is."""
    if domain != "search" or not (query or answer):
        return ""
    lines = ([f"Target Query: {query}"] if query else []) + ([f"Reference Answer: {answer}"] if answer else [])
    return "\n\n**Simulation Instruction:**\n" + "\n".join(lines)


def reference_answer(env: dict) -> str | None:
    """The reference answer a source recorded for the trajectory's task: a benchmark row's (`reference_answer`,
    read from its Simulation Instruction), an Inspect sample's `target` (one string, or several, one a line)."""
    target = env.get("reference_answer")
    if target is None and isinstance(env.get("inspect"), dict):
        target = env["inspect"].get("target")
    if isinstance(target, list):
        target = "\n".join(str(t) for t in target if t is not None and str(t).strip())
    return target if isinstance(target, str) and target.strip() else None


def omitted_line(turns: int) -> str:
    """The line that opens a record whose `turns` oldest turns were trimmed (empty when none were)."""
    if turns <= 0:
        return ""
    return f"({turns} earlier turn{'s' if turns > 1 else ''} of this trajectory not shown)\n\n"


def user_turn(turn: int, block: str, current_state: str | None = None, *, task: str = "", omitted: int = 0) -> str:
    """`action_turn` from an already rendered `action_block`. On the first turn of a record: `task` (a
    `task_block`) before the state, and the `omitted_line` of `omitted` trimmed turns before the heading."""
    return omitted_line(omitted) + f"### Turn {turn}\n" + task + state_block(current_state) + block


# The instruction the released AgentWorldBench lines append to the evaluated turn's prompt (after its action):
# the text of the released rows (the dataset viewer's stored pages show its opening; the loader
# ruyue0001/trace2env, written against the real files, `src/trace2env/atif.py` BENCHMARK_SUFFIX, the whole of it)
EVALUATION_INSTRUCTION = (
    "\n\nPlease analyze the input above and predict the realistic output/response that the environment would produce."
    "\n\nRequirements:\n- Be precise and accurate in your prediction\n- Consider edge cases and error conditions"
    "\n- Maintain state consistency with previous interactions in this session\n- Match the expected output format"
    "\n\nFirst, think step by step to explain your reasoning. Then, provide the simulated environment observation "
    "wrapped strictly within the <predicted_observation></predicted_observation> tags.")

# A command that printed nothing (or a step with no observation) is shown as this line, the same in SFT
# targets and history, RL ground truth and labeler requests, so a model learns one way to say "silent".
EMPTY_OBSERVATION = "(no output)"


def observation_text(text: str | None) -> str:
    """The observation as the model sees and writes it: EMPTY_OBSERVATION when blank."""
    return text if text and text.strip() else EMPTY_OBSERVATION


def observation_turn(text: str | None, domain: str | None = None) -> str:
    """One assistant message: the observation in the domain's answer form (`answer_in_block`), else after the
    marker the reference's evaluation strips."""
    if domain is not None and answer_in_block(domain):
        return f"<{ANSWER_TAG}>\n{observation_text(text)}\n</{ANSWER_TAG}>"
    return f"{OBSERVATION_MARKER}\n{observation_text(text)}"


def prompt_tools(tools: list[dict] | None, actions: list[dict]) -> list[dict] | None:
    """The tool definitions a tool domain's prompt lists: the trajectory's recorded definitions (MCP
    `tools/list`, a trace's tool schemas) when it has them, else one entry per tool its actions call, with
    the argument names and JSON types seen in those calls (the source recorded no schema). None when there
    are neither."""
    if tools:
        return tools
    seen: dict[str, dict] = {}
    for action in actions:
        call = _tool_action(action or {})
        properties = seen.setdefault(call["name"], {})
        for name, value in (call["arguments"] or {}).items():
            properties.setdefault(name, {"type": _json_type(value)})
    if not seen:
        return None
    return [{"name": name, "description": "(no schema recorded: the arguments this trajectory's calls used)",
             "inputSchema": {"type": "object", "properties": properties}} for name, properties in seen.items()]


def _json_type(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string" if isinstance(value, str) else "null"


def transition_messages(domain: str, history: list[tuple[dict, str]], action: dict, first_state: str | None,
                        tools: list[dict] | None = None, *, task: str | None = None,
                        demonstrations: str = "", system: str | None = None,
                        action_blocks: list[str] | None = None, screen: tuple[int, int] | None = None) -> list[dict]:
    """[system, user, assistant, ..., user]: `history` is the earlier (action, next observation text) pairs in
    order, `action` the action whose next observation is the target, `first_state` the observation shown
    before the first listed action (None: no `**Current State:**` block), `tools` the prompt's tool
    definitions (`prompt_tools`), `task` the instruction (shown where the domain's prompt lists it).
    `system` (`system_prompt(domain, tools, demonstrations)`) and `action_blocks` (`action_block` of each
    history action, in order; more may follow): what a caller that sends several requests of one episode
    has rendered once for all of them. `screen`: the pixel size of the screen `action` acts on, when known."""
    if system is None:
        system = system_prompt(domain, tools, demonstrations)
    messages = [{"role": "system", "content": system}]
    opening = task_block(domain, task)
    state = first_state
    for turn, (past_action, observation) in enumerate(history, 1):
        block = action_blocks[turn - 1] if action_blocks is not None else action_block(past_action, domain)
        messages.append({"role": "user", "content": user_turn(turn, block, state, task=opening)})
        messages.append({"role": "assistant", "content": observation_turn(observation, domain)})
        state, opening = (observation_text(observation) if state_every_turn(domain) else None), ""
    messages.append({"role": "user", "content": user_turn(len(history) + 1, action_block(action, domain, screen), state,
                                                          task=opening)})
    return messages
