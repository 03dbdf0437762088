"""Web actions as BrowserGym calls, the action form of the benchmark's web domain (its prompt's action space:
`click('a51')`, `fill('b12', 'text')`, `goto('https://...')`, `mouse_click(x, y)` in pixels, `keyboard_type`,
`scroll(dx, dy)`, `send_msg_to_user`...; `browsergym/core/action/functions.py` defines them and its
`highlevel_action_parser` reads them).

- A BrowserGym source's action is its recorded call (`code` on a structured action: the call the agent made,
  read by the BrowserGym reader), as recorded; output the reader could not read as a call stays JSON.
- Other sources' actions are made from the structured action: an element the source names by a BrowserGym id
  (`bid`), a browser-use highlight index or a WebVoyager set-of-marks label is the call's `bid`; else a point
  in pixels of the screen the action acted on (recorded in pixels, or a fraction of a screen whose size is
  recorded) makes the coordinate call; typing without an element is `keyboard_type`, a key without one
  `keyboard_press`.
- A Playwright API call that opens or closes a tab is `new_tab()` / `tab_close()`.
- An action none of these calls can say whole (another Playwright API call, a click on a CSS selector with no point,
  a scroll whose distance was not recorded) is None: the export writes it in the schema's JSON form.
"""

from __future__ import annotations

import json

# the element fields that name an element as BrowserGym's `bid` does: BrowserGym's own id, browser-use's
# highlight index, WebVoyager's set-of-marks label
# the element id each source records: BrowserGym's bid, browser-use's index, a Set-of-Mark label, WebArena's
# accessibility-tree node id (its `click [id]` names the node as a bid does)
_ID_FIELDS = ("bid", "highlight_index", "index", "label", "id")
# schema key names -> the names Playwright's keyboard (BrowserGym's `keyboard_press`) takes
_KEY_NAMES = {"ctrl": "Control", "control": "Control", "cmd": "Meta", "meta": "Meta", "command": "Meta",
              "alt": "Alt", "option": "Alt", "shift": "Shift", "enter": "Enter", "return": "Enter", "tab": "Tab",
              "esc": "Escape", "escape": "Escape", "backspace": "Backspace", "delete": "Delete", "space": " ",
              "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
              "pageup": "PageUp", "pagedown": "PageDown", "home": "Home", "end": "End"}


def _element(action: dict) -> dict:
    raw = action.get("element")
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def element_id(action: dict) -> str | None:
    """The id the source gave the action's element, as BrowserGym's string `bid`; None when it gave none."""
    element = _element(action)
    for name in _ID_FIELDS:
        value = element.get(name)
        if isinstance(value, str) and value.strip() or isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _pixels(action: dict, screen: tuple[int, int] | None) -> tuple[int, int] | None:
    """The action's point in pixels: a fraction of a screen of known size, or the pixels a source recorded
    beside the element (browser-use's `pixel_point`)."""
    if action.get("x") is not None and action.get("y") is not None and screen:
        return round(action["x"] * screen[0]), round(action["y"] * screen[1])
    point = _element(action).get("pixel_point")
    if isinstance(point, dict):
        xs = [v for k, v in sorted(point.items()) if k.endswith("_x") and isinstance(v, (int, float))]
        ys = [v for k, v in sorted(point.items()) if k.endswith("_y") and isinstance(v, (int, float))]
        if xs and ys:
            return round(xs[0]), round(ys[0])
    return None


def _call(name: str, *args) -> str:
    return f"{name}({', '.join(repr(a) for a in args)})"


def _key(keys) -> str | None:
    names = [_KEY_NAMES.get(str(k).lower(), str(k)) for k in keys or [] if str(k)]
    return "+".join(names) or None


def _scroll(action: dict, screen: tuple[int, int] | None) -> str | None:
    """`scroll(dx, dy)` in pixels: the wheel deltas a source recorded, or pages of a known screen height."""
    direction = action.get("direction")
    args = action.get("arguments")
    try:
        recorded = json.loads(args) if args else {}
    except (TypeError, ValueError):
        recorded = {}
    if isinstance(recorded, dict) and isinstance(recorded.get("deltaY"), (int, float)):
        return _call("scroll", recorded.get("deltaX") or 0, recorded["deltaY"])
    sign = {"down": (0, 1), "up": (0, -1), "right": (1, 0), "left": (-1, 0)}.get(direction or "")
    if sign is None or not screen:
        return None
    try:
        pages = float(action.get("text")) if action.get("text") is not None else 1.0
    except ValueError:
        return None
    size = screen[0] if sign[0] else screen[1]
    return _call("scroll", round(sign[0] * pages * size), round(sign[1] * pages * size))


def browsergym_call(action: dict, screen: tuple[int, int] | None = None, recorded: bool = False) -> str | None:
    """`action` (a schema-v1 action struct) as a BrowserGym call; `screen`: the (width, height) in pixels of the
    screen it acted on, when known; `recorded`: the source is BrowserGym, whose `code` is the call itself.
    None when no call of BrowserGym's action space says the whole action."""
    kind = action.get("kind")
    if recorded and action.get("code") and kind != "code":
        return action["code"]  # the BrowserGym call the source recorded (a `code` action: output no call parsed)
    bid, text = element_id(action), action.get("text")
    if kind in ("click", "right_click", "double_click", "move"):
        return _pointer(kind, bid, _pixels(action, screen))
    if kind == "type" and text is not None:
        return _call("fill", bid, text) if bid else _call("keyboard_type", text)
    if kind in ("key", "hotkey") and _key(action.get("keys")):
        return _call("keyboard_press", _key(action.get("keys")))
    if kind == "scroll":
        return _scroll(action, screen)
    if kind == "navigate" and text:
        return _call("goto", text)
    if kind in ("back", "forward"):
        return f"go_{kind}()"
    if kind == "wait":
        return _call("noop", round(action["duration_s"] * 1000)) if action.get("duration_s") else "noop()"
    if kind in ("message", "done") and text:
        return _call("send_msg_to_user", text)
    if kind == "code":
        return _TAB_CALLS.get((action.get("code") or "").split("(", 1)[0])
    return None


# Playwright API calls (a trace's `code` actions) that open or close a tab: BrowserGym's tab actions
_TAB_CALLS = {"browserContext.newPage": "new_tab()", "page.close": "tab_close()"}


def _pointer(kind: str, bid: str | None, point: tuple[int, int] | None) -> str | None:
    if kind == "move":
        return _call("hover", bid) if bid else (_call("mouse_move", *point) if point else None)
    if bid and kind != "double_click":  # the action space has no dblclick on an element
        return _call("click", bid, "right") if kind == "right_click" else _call("click", bid)
    if point is None:
        return None
    name = "mouse_dblclick" if kind == "double_click" else "mouse_click"
    return _call(name, *point, "right") if kind == "right_click" else _call(name, *point)
