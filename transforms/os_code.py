"""The os domain's action form when the source recorded no code: a schema action as the pyautogui calls that
perform it (the os prompt defines the action as a Python code block of such calls). The reverse of
`ingest.pyautogui_code`, for the kinds it reads.

Coordinates are pixels (integers, as the os prompt's `pyautogui.click(x: int, y: int)` and the benchmark's rows
have them) where the pixel size of the screen the action acted on is known, else normalized to [0, 1] (4
decimals), as AgentNet's recorded code writes them. `done` and `wait` are OSWorld's `DONE` (`FAIL` where the
done says FAIL) and `WAIT`. A scroll whose amount was not recorded scrolls one click. A kind pyautogui cannot
express (open_app, navigate...) is a comment holding the action's JSON, so nothing is dropped silently.
"""

from __future__ import annotations

import orjson

_BUTTON_KINDS = {"click": "", "double_click": ", clicks=2", "right_click": ", button='right'"}


def _num(value) -> str:
    return f"{round(float(value), 4):g}"


def _at(action: dict, x: str = "x", y: str = "y", screen: tuple[int, int] | None = None) -> str:
    if action.get(x) is None or action.get(y) is None:
        return ""
    if screen:
        return f"x={round(float(action[x]) * screen[0])}, y={round(float(action[y]) * screen[1])}"
    return f"x={_num(action[x])}, y={_num(action[y])}"


def _scroll_amount(action: dict) -> int:
    """pyautogui clicks: positive scrolls up (or right), by the recorded distance when there is one."""
    try:
        moved = orjson.loads(action.get("arguments") or "{}")
    except orjson.JSONDecodeError:
        moved = {}
    horizontal = action.get("direction") in ("left", "right")
    amount = moved.get("dx" if horizontal else "dy") if isinstance(moved, dict) else None
    clicks = max(1, round(abs(amount))) if isinstance(amount, (int, float)) and amount else 1
    return clicks if action.get("direction") in ("up", "right") else -clicks


def pyautogui_code(action: dict, screen: tuple[int, int] | None = None) -> str:
    """`screen`: (width, height) in pixels of the screen the action acted on, when known."""
    kind = action.get("kind")
    at = _at(action, screen=screen)
    if kind in _BUTTON_KINDS:
        return f"pyautogui.click({at}{_BUTTON_KINDS[kind]})" if at else \
            f"pyautogui.click({_BUTTON_KINDS[kind].lstrip(', ')})"
    if kind == "move" and at:
        return f"pyautogui.moveTo({at})"
    if kind == "drag" and at and _at(action, "x2", "y2", screen):
        return f"pyautogui.moveTo({at})\npyautogui.dragTo({_at(action, 'x2', 'y2', screen)})"
    if kind == "scroll":
        name = "hscroll" if action.get("direction") in ("left", "right") else "scroll"
        return f"pyautogui.{name}({_scroll_amount(action)}{', ' + at if at else ''})"
    if kind == "type" and action.get("text") is not None:
        return f"pyautogui.write({action['text']!r})"
    if kind == "key" and action.get("keys"):
        return "\n".join(f"pyautogui.press({k!r})" for k in action["keys"])
    if kind == "key" and action.get("text"):
        return f"pyautogui.press({action['text']!r})"
    if kind == "hotkey" and action.get("keys"):
        return f"pyautogui.hotkey({', '.join(repr(k) for k in action['keys'])})"
    if kind == "done":  # OSWorld's FAIL (the task is infeasible) is read as a `done` that says so
        return "FAIL" if action.get("text") == "FAIL" else "DONE"
    if kind == "wait":
        return "WAIT"
    fields = {k: v for k, v in action.items() if v is not None and k != "raw"}
    return "# " + orjson.dumps(fields, option=orjson.OPT_SORT_KEYS).decode()
