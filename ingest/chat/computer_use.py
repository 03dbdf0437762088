"""Computer-use calls in chat logs as GUI actions: Anthropic's `computer` tool (`tool_use` input
`{action, coordinate, text, scroll_direction, scroll_amount, start_coordinate, duration}`) and OpenAI's
`computer_call` items (`action: {type: click/double_click/drag/keypress/move/scroll/type/wait/screenshot, x, y,
path, keys, scroll_x, scroll_y, text}`).

Clicks, drags, moves and scrolls keep their coordinates, normalized to [0, 1] by the screen size: the tool's
declared display size, else the size of the last screenshot seen before the call. Without either the pixel
coordinates stay in `element` (`{"x_px", "y_px"}`) and x / y are null (schema: coordinates are fractions). A
`screenshot` (or `cursor_position`) request changes nothing on the screen: it is a `wait` of 0 s, its raw form
saying what it was. A key combination (`ctrl+s`, `["CTRL", "S"]`) is a `hotkey`, one key a `key`.
"""

from __future__ import annotations

from ingest.record import Action, clamp01
from ingest.tools import dumps

COMPUTER_TOOLS = frozenset({"computer"})
# Anthropic `computer` tool actions -> action kinds (the drag and scroll are built apart)
_ANTHROPIC_CLICKS = {"left_click": "click", "middle_click": "click", "triple_click": "click",
                     "double_click": "double_click", "right_click": "right_click", "mouse_move": "move",
                     "left_mouse_down": "click", "left_mouse_up": "click"}
_OPENAI_CLICKS = {"click": "click", "double_click": "double_click", "move": "move"}
_NO_CHANGE = frozenset({"screenshot", "cursor_position"})


def _point(xy, size) -> tuple[float | None, float | None, dict]:
    """(x, y) as fractions of the screen, and the pixel point (for `element` when the size is unknown)."""
    if not (isinstance(xy, (list, tuple)) and len(xy) == 2 and all(isinstance(v, (int, float)) for v in xy)):
        return None, None, {}
    px = {"x_px": xy[0], "y_px": xy[1]}
    if not size or not size[0] or not size[1]:
        return None, None, px
    return clamp01(xy[0] / size[0]), clamp01(xy[1] / size[1]), px


def _keys(text) -> list[str]:
    if isinstance(text, list):
        return [str(k) for k in text]
    return [k for k in str(text or "").split("+") if k] or [str(text or "")]


def _key_action(keys: list[str], raw: str) -> Action:
    return Action(kind="hotkey" if len(keys) > 1 else "key", keys=keys, raw=raw)


def _pointed(kind: str, xy, size, raw: str, **extra) -> Action:
    x, y, px = _point(xy, size)
    return Action(kind=kind, x=x, y=y, element=dumps(px) if px and x is None else None, raw=raw, **extra)


def anthropic_action(spec: dict, size: tuple[int, int] | None, raw: str) -> Action:
    """The action of an Anthropic `computer` tool call's input."""
    name = spec.get("action")
    coordinate = spec.get("coordinate")
    if name in _ANTHROPIC_CLICKS:
        return _pointed(_ANTHROPIC_CLICKS[name], coordinate, size, raw)
    if name == "left_click_drag":
        x, y, start = _point(spec.get("start_coordinate"), size)
        x2, y2, end = _point(coordinate, size)
        px = {"start": start, "end": end} if (start or end) and x2 is None else None
        return Action(kind="drag", x=x, y=y, x2=x2, y2=y2, element=dumps(px) if px else None, raw=raw)
    if name == "type":
        return Action(kind="type", text=spec.get("text"), raw=raw)
    if name in ("key", "hold_key"):
        return _key_action(_keys(spec.get("text")), raw)
    if name == "scroll":
        amount = spec.get("scroll_amount")
        return _pointed("scroll", coordinate, size, raw, direction=spec.get("scroll_direction"),
                        text=str(amount) if amount is not None else None)
    if name == "wait":
        duration = spec.get("duration")
        return Action(kind="wait", duration_s=float(duration) if isinstance(duration, (int, float)) else None, raw=raw)
    if name in _NO_CHANGE:
        return Action(kind="wait", duration_s=0.0, raw=raw)
    return Action(kind="tool_call", tool_name="computer", arguments=dumps(spec), raw=raw)


def _scroll_direction(dx, dy) -> str | None:
    dx = dx if isinstance(dx, (int, float)) else 0
    dy = dy if isinstance(dy, (int, float)) else 0
    if abs(dy) >= abs(dx) and dy:
        return "down" if dy > 0 else "up"
    if dx:
        return "right" if dx > 0 else "left"
    return None


def openai_action(spec: dict, size: tuple[int, int] | None, raw: str) -> Action:
    """The action of an OpenAI `computer_call` item's `action`."""
    kind = spec.get("type")
    xy = [spec.get("x"), spec.get("y")]
    if kind == "click" and spec.get("button") == "right":
        return _pointed("right_click", xy, size, raw)
    if kind in _OPENAI_CLICKS:
        return _pointed(_OPENAI_CLICKS[kind], xy, size, raw)
    if kind == "drag":
        path = [[p.get("x"), p.get("y")] for p in spec.get("path") or [] if isinstance(p, dict)]
        x, y, start = _point(path[0] if path else None, size)
        x2, y2, end = _point(path[-1] if path else None, size)
        px = {"start": start, "end": end} if (start or end) and x is None else None
        return Action(kind="drag", x=x, y=y, x2=x2, y2=y2, element=dumps(px) if px else None, raw=raw)
    if kind == "keypress":
        return _key_action(_keys(spec.get("keys")), raw)
    if kind == "type":
        return Action(kind="type", text=spec.get("text"), raw=raw)
    if kind == "scroll":
        return _pointed("scroll", xy, size, raw, direction=_scroll_direction(spec.get("scroll_x"), spec.get("scroll_y")))
    if kind == "wait":
        return Action(kind="wait", raw=raw)
    if kind in _NO_CHANGE:
        return Action(kind="wait", duration_s=0.0, raw=raw)
    return Action(kind="tool_call", tool_name="computer", arguments=dumps(spec), raw=raw)


def domain_of(environment: str | None) -> tuple[str, str]:
    """(domain, platform) of a computer-use run from the environment its tool names (OpenAI's `environment`:
    browser / mac / windows / ubuntu / linux; `android`), `os` on an unknown desktop by default."""
    env = (environment or "").lower()
    if env == "browser":
        return "web", "browser"
    if env == "android":
        return "android", "android"
    if env in ("mac", "macos"):
        return "os", "macos"
    if env == "windows":
        return "os", "windows"
    return "os", "ubuntu" if env in ("ubuntu", "linux") else "linux"
