"""Counterfactual actions: what else the agent could have done at a branch point, per domain.

Each strategy is a named function `(Context) -> action dict | None` (None: it does not apply here, e.g. no
other actionable element on the screen). Actions are schema-v1 action dicts (every field of `ACTION`, as
`pyarrow` `to_pylist` gives them), valid in the domain's action space (`valid_action`). `raw` records the
strategy and the step it replaces, so a simulated step says how its action was made.

- GUI (android, web, os): `other_element` taps/clicks another actionable element of the current view tree
  (DroidBot `views` list), accessibility tree (ARIA / AT-SPI / UI Automation nodes with bounds and an
  actionable role or clickable flag) or BrowserGym pruned HTML (clicked by `bid`);
  `back`, `home` (android), `escape` (os) key navigation; `scroll` the screen (the other way when the real
  action scrolled).
- terminal (and swe command steps): `other_command` another command from the same episode;
  `typo_command` the program name with two letters swapped (command not found); `failing_command` the
  command run from a directory that does not exist (fails before it runs).
- mcp, search, swe tool steps: `extra_tool_call` a call to another tool the episode used, with arguments it
  used; `changed_arguments` the same tool with arguments from another call, or perturbed; `erroring_call`
  a controlled failure: the same tool without its arguments (or, when it takes none, a tool that does not
  exist).
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from typing import Callable, Iterator

import orjson

from schemas.v1 import ACTION, ACTION_KINDS

ACTION_FIELDS = tuple(f.name for f in ACTION)
GUI_DOMAINS = ("android", "web", "os")
TOOL_DOMAINS = ("mcp", "search", "swe")
COMMAND_KINDS = ("command", "keystrokes", "code")
# Accessibility roles a pointer action can target: ARIA, AT-SPI and Windows UI Automation names, lower case
# without spaces, underscores or a "control" suffix (UIA "ButtonControl" -> "button").
ACTIONABLE_ROLES = frozenset({
    "button", "pushbutton", "togglebutton", "splitbutton", "link", "hyperlink", "menuitem", "checkbox",
    "radio", "radiobutton", "tab", "pagetab", "tabitem", "textbox", "entry", "edit", "combobox", "option",
    "switch", "listitem", "treeitem", "searchbox", "slider", "spinbutton", "spinner",
})
# BrowserGym's pruned HTML: interactive tags carry a `bid` the agent's click(bid) names.
_BID_TAG = re.compile(r'<(a|button|input|select|textarea|option)\b([^>]*?)\bbid="([^"]+)"([^>]*)>([^<]{0,80})',
                      re.IGNORECASE)
_DROIDBOT_KEYS = ("temp_id", "class", "resource_id", "text", "content_description", "bounds", "view_str")
_OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}


@dataclass
class Counterfactual:
    strategy: str
    action: dict


@dataclass
class Context:
    """What a strategy sees: the episode's real steps (ordered), the branch step index, a seeded generator."""

    domain: str
    steps: list[dict]
    t: int
    rng: random.Random

    @property
    def action(self) -> dict:
        return self.steps[self.t]["action"] or {}  # observation-only step: any action is an alternative

    @property
    def observation(self) -> dict:
        return self.steps[self.t]["observation"]


def make_action(kind: str, **fields) -> dict:
    return {name: fields.get(name) for name in ACTION_FIELDS} | {"kind": kind}


# GUI -----------------------------------------------------------------------------------------------------
def _box(bounds, width, height) -> tuple[float, float, float, float] | None:
    """(x1, y1, x2, y2) normalized to [0, 1] from [[x1,y1],[x2,y2]], [x1,y1,x2,y2] or {x,y,width,height}."""
    try:
        if isinstance(bounds, dict):
            x1, y1 = bounds.get("x", bounds.get("left")), bounds.get("y", bounds.get("top"))
            x2 = bounds["right"] if "right" in bounds else x1 + bounds["width"]
            y2 = bounds["bottom"] if "bottom" in bounds else y1 + bounds["height"]
        elif len(bounds) == 2:
            (x1, y1), (x2, y2) = bounds
        else:
            x1, y1, x2, y2 = bounds
        x1, y1, x2, y2 = (float(v) for v in (x1, y1, x2, y2))
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    if max(x1, y1, x2, y2) > 1.0:  # pixels
        if not width or not height:
            return None
        x1, x2, y1, y2 = x1 / width, x2 / width, y1 / height, y2 / height
    if not (0 <= x1 < x2 <= 1 and 0 <= y1 < y2 <= 1):
        return None  # off screen or empty
    return x1, y1, x2, y2


def _field(node: dict, *names):
    for name in names:
        if node.get(name) is not None:
            return node[name]
    return None


def _role(node: dict) -> str:
    role = str(_field(node, "role", "ControlType", "control_type") or "").lower().replace(" ", "").replace("_", "")
    return role[:-7] if role.endswith("control") else role


def _a11y_nodes(tree) -> Iterator[dict]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            yield node
            children = _field(node, "children", "Children") or ()
            stack.extend(reversed([c for c in children if isinstance(c, (dict, list))]))


def _html_elements(html: str) -> list[tuple[dict, None]]:
    found = []
    for tag, _, bid, _, text in _BID_TAG.findall(html):
        element = {"bid": bid, "tag": tag.lower()}
        if text.strip():
            element["text"] = " ".join(text.split())
        found.append((element, None))
    return found


def actionable_elements(observation: dict) -> list[tuple[dict, tuple[float, float, float, float] | None]]:
    """(element, normalized box) for each visible, enabled element an action can target, in tree order: views
    of a DroidBot tree, accessibility nodes (ARIA / AT-SPI / UI Automation) with bounds, and the bid-tagged
    interactive elements of BrowserGym's pruned HTML (box None: they are clicked by bid)."""
    try:
        tree = orjson.loads(observation.get("ui_tree") or "null")
    except orjson.JSONDecodeError:
        return []
    if isinstance(tree, dict) and isinstance(tree.get("pruned_html"), str):
        return _html_elements(tree["pruned_html"])
    width, height = observation.get("width"), observation.get("height")
    found = []
    for node in _a11y_nodes(tree):
        if _field(node, "visible", "IsOffscreen") is False or _field(node, "enabled", "IsEnabled") is False:
            continue
        if "temp_id" in node:  # DroidBot view
            if not any(node.get(k) for k in ("clickable", "long_clickable", "checkable", "editable")):
                continue
            element = {k: node.get(k) for k in _DROIDBOT_KEYS if k in node}
        else:
            role = _role(node)
            if not (node.get("clickable") or role in ACTIONABLE_ROLES):
                continue
            element = {"role": role, "name": _field(node, "name", "Name", "title"),
                       "id": _field(node, "id", "AutomationId")}
            element = {k: v for k, v in element.items() if v not in (None, "")}
        bounds = _field(node, "bounds", "bbox", "rect", "BoundingRectangle")
        box = _box(bounds, width, height)
        if box:
            found.append((element | ({"bounds": bounds} if "temp_id" not in node else {}), box))
    return found


def _same_target(element: dict, box, action: dict) -> bool:
    real = orjson.loads(action["element"]) if action.get("element") else {}
    for key in ("temp_id", "bid", "bounds"):
        if real.get(key) is not None and real.get(key) == element.get(key):
            return True
    if real.get("title") and real.get("title") == element.get("name"):  # UI Automation targets
        return True
    x, y = action.get("x"), action.get("y")
    return box is not None and x is not None and y is not None and box[0] <= x <= box[2] and box[1] <= y <= box[3]


def other_element(ctx: Context) -> dict | None:
    options = [(e, b) for e, b in actionable_elements(ctx.observation) if not _same_target(e, b, ctx.action)]
    if not options:
        return None
    element, box = ctx.rng.choice(options)
    kind = "tap" if ctx.domain == "android" else "click"
    if box is None:
        return make_action(kind, element=orjson.dumps(element).decode())
    x1, y1, x2, y2 = box
    return make_action(kind, x=round((x1 + x2) / 2, 6), y=round((y1 + y2) / 2, 6),
                       element=orjson.dumps(element).decode())


def back(ctx: Context) -> dict | None:
    return None if ctx.domain == "os" or ctx.action.get("kind") == "back" else make_action("back")


def home(ctx: Context) -> dict | None:
    return make_action("home") if ctx.domain == "android" and ctx.action.get("kind") != "home" else None


def escape(ctx: Context) -> dict | None:
    return make_action("key", keys=["Escape"]) if ctx.domain == "os" else None


def scroll(ctx: Context) -> dict | None:
    real = ctx.action
    direction = _OPPOSITE.get(real.get("direction") or "", "up") if real.get("kind") == "scroll" else "down"
    return make_action("scroll", x=0.5, y=0.5, direction=direction)


# terminal ------------------------------------------------------------------------------------------------
def _command(action: dict) -> str | None:
    if action.get("kind") not in COMMAND_KINDS:
        return None
    text = action.get("code") if action.get("kind") in ("command", "code") else action.get("text")
    return text if text and text.strip() else None


def _with_command(action: dict, command: str) -> dict:
    """The real action with its command replaced (also inside a shell tool call's `command` argument)."""
    new = make_action(action["kind"], **{k: action.get(k) for k in ACTION_FIELDS if k not in ("kind", "raw")})
    new["text" if action["kind"] == "keystrokes" else "code"] = command
    try:
        arguments = orjson.loads(action.get("arguments") or "null")
    except orjson.JSONDecodeError:
        arguments = None
    if isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
        new["arguments"] = orjson.dumps({**arguments, "command": command}).decode()
    else:
        new["arguments"] = None  # it described the real command (e.g. a keystroke batch): no longer true
    return new


def other_command(ctx: Context) -> dict | None:
    current = _command(ctx.action)
    if current is None:
        return None
    others = sorted({c for s in ctx.steps if (c := _command(s["action"])) and c.strip() != current.strip()})
    return _with_command(ctx.action, ctx.rng.choice(others)) if others else None


def typo_command(ctx: Context) -> dict | None:
    current = _command(ctx.action)
    if current is None:
        return None
    lead = len(current) - len(current.lstrip())
    program = current.lstrip().split(maxsplit=1)[0]
    if len(program) < 2:
        return None
    i = next((i for i in range(len(program) - 1) if program[i] != program[i + 1]), None)
    typo = program + program[-1] if i is None else program[:i] + program[i + 1] + program[i] + program[i + 2:]
    return _with_command(ctx.action, current[:lead] + typo + current[lead + len(program):])


def failing_command(ctx: Context) -> dict | None:
    current = _command(ctx.action)
    if current is None:
        return None
    missing = "/nonexistent-" + hashlib.sha256(current.encode()).hexdigest()[:8]
    trailing = "\n" if current.endswith("\n") else ""
    return _with_command(ctx.action, f"cd {missing} && {current.strip()}{trailing}")


# tools ---------------------------------------------------------------------------------------------------
def _tool_calls(steps: list[dict]) -> list[tuple[str, str]]:
    """(tool name, arguments JSON) of every tool call in the episode, first occurrence order, no repeats."""
    seen: dict[tuple[str, str], None] = {}
    for s in steps:
        a = s["action"]
        if a.get("kind") == "tool_call" and a.get("tool_name"):
            seen.setdefault((a["tool_name"], a.get("arguments") or "{}"), None)
    return list(seen)


def _tool_call(name: str, arguments) -> dict:
    text = arguments if isinstance(arguments, str) else orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode()
    return make_action("tool_call", tool_name=name, arguments=text)


def extra_tool_call(ctx: Context) -> dict | None:
    current = ctx.action.get("tool_name")
    calls = [c for c in _tool_calls(ctx.steps) if c[0] != current]
    return _tool_call(*ctx.rng.choice(calls)) if calls else None


def _perturb(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        words = value.split()
        return " ".join(words[:-1]) if len(words) > 1 else value + "_2"
    if isinstance(value, list):
        return value[:-1] if value else value
    return value


def changed_arguments(ctx: Context) -> dict | None:
    a = ctx.action
    if a.get("kind") != "tool_call" or not a.get("tool_name"):
        return None
    current = a.get("arguments") or "{}"
    others = [args for name, args in _tool_calls(ctx.steps) if name == a["tool_name"] and args != current]
    if others:
        return _tool_call(a["tool_name"], ctx.rng.choice(others))
    try:
        arguments = orjson.loads(current)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(arguments, dict) or not arguments:
        return None
    key = ctx.rng.choice(sorted(arguments))
    changed = {**arguments, key: _perturb(arguments[key])}
    return _tool_call(a["tool_name"], changed) if changed != arguments else None


def erroring_call(ctx: Context) -> dict | None:
    a = ctx.action
    if a.get("kind") != "tool_call" or not a.get("tool_name"):
        return None
    if (a.get("arguments") or "{}").strip() not in ("{}", ""):
        return _tool_call(a["tool_name"], {})  # required arguments missing
    return _tool_call(a["tool_name"] + "_undefined", {})


STRATEGIES: dict[str, Callable[[Context], dict | None]] = {
    "other_element": other_element, "back": back, "home": home, "escape": escape, "scroll": scroll,
    "other_command": other_command, "typo_command": typo_command, "failing_command": failing_command,
    "extra_tool_call": extra_tool_call, "changed_arguments": changed_arguments, "erroring_call": erroring_call,
}
_GUI = ("other_element", "back", "home", "escape", "scroll")
_TERMINAL = ("other_command", "typo_command", "failing_command")
_TOOLS = ("extra_tool_call", "changed_arguments", "erroring_call")
DOMAIN_STRATEGIES: dict[str, tuple[str, ...]] = {
    "android": _GUI, "web": _GUI, "os": _GUI, "terminal": _TERMINAL,
    "mcp": _TOOLS, "search": _TOOLS, "swe": _TOOLS + _TERMINAL,
}
# What each domain's actions may be (the GUI domains' pointer, key and navigation kinds; commands; tools).
DOMAIN_KINDS: dict[str, frozenset[str]] = {
    "android": frozenset({"tap", "long_press", "swipe", "scroll", "type", "key", "back", "home", "open_app",
                          "command", "wait", "done"}),
    "web": frozenset({"click", "double_click", "right_click", "drag", "scroll", "type", "key", "hotkey",
                      "navigate", "back", "wait", "done"}),
    "os": frozenset({"click", "double_click", "right_click", "drag", "scroll", "type", "key", "hotkey",
                     "command", "code", "wait", "done"}),
    "terminal": frozenset({"command", "keystrokes", "code", "wait", "done"}),
    "mcp": frozenset({"tool_call", "message", "done"}),
    "search": frozenset({"tool_call", "message", "done"}),
    "swe": frozenset({"tool_call", "command", "keystrokes", "code", "message", "done"}),
}


def valid_action(domain: str, action: dict) -> bool:
    """Kind allowed in the domain, coordinates in [0, 1], the fields each kind needs present."""
    kind = action.get("kind")
    if kind not in ACTION_KINDS or kind not in DOMAIN_KINDS.get(domain, ACTION_KINDS) or set(action) != set(ACTION_FIELDS):
        return False
    if any(v is not None and not 0 <= v <= 1 for v in (action.get(c) for c in ("x", "y", "x2", "y2"))):
        return False
    if kind in ("tap", "click") and (action.get("x") is None or action.get("y") is None) and not action.get("element"):
        return False  # a pointer action needs a point, or an element to click by id (BrowserGym bid)
    if kind == "scroll" and action.get("direction") not in _OPPOSITE:
        return False
    if kind == "tool_call":
        try:
            return bool(action.get("tool_name")) and isinstance(orjson.loads(action.get("arguments") or ""), dict)
        except orjson.JSONDecodeError:
            return False
    if kind in ("command", "code"):
        return bool(action.get("code"))
    if kind == "keystrokes":
        return bool(action.get("text"))
    return True


def _comparable(action: dict) -> bytes:
    return orjson.dumps({k: action.get(k) for k in ACTION_FIELDS if k != "raw"}, option=orjson.OPT_SORT_KEYS)


def counterfactuals(domain: str, steps: list[dict], t: int, *, strategies: list[str] | None = None,
                    seed: int = 0, episode_id: str = "") -> list[Counterfactual]:
    """The counterfactual actions for branch step t of one episode (real steps ordered by step_index), one
    per applicable strategy of the domain (restricted to `strategies` when given), without repeats and
    never the real action itself. Deterministic given the seed. Raises ValueError for an unknown strategy."""
    unknown = sorted(set(strategies or ()) - set(STRATEGIES))
    if unknown:
        raise ValueError(f"unknown strategies {', '.join(unknown)} (known: {', '.join(STRATEGIES)})")
    names = [s for s in DOMAIN_STRATEGIES.get(domain, ()) if strategies is None or s in strategies]
    seen = {_comparable(steps[t]["action"] or {})}
    out = []
    for name in names:
        digest = hashlib.sha256(f"{seed}\x1f{episode_id}\x1f{t}\x1f{name}".encode()).digest()
        action = STRATEGIES[name](Context(domain, steps, t, random.Random(int.from_bytes(digest[:8], "big"))))
        if action is None or _comparable(action) in seen or not valid_action(domain, action):
            continue
        seen.add(_comparable(action))
        action["raw"] = orjson.dumps({"counterfactual": name, "replaces": steps[t].get("step_id")}).decode()
        out.append(Counterfactual(name, action))
    return out
