"""Android's JSONAction vocabulary, which AndroidWorld's agents emit and AndroidControl's episodes store, to
schema actions: click -> tap, double_tap -> double_click, long_press, scroll, swipe, input_text -> type,
keyboard_enter -> key ENTER, open_app, answer -> message, status -> done (goal_status), navigate_home ->
home, navigate_back -> back, wait. Where the point comes from (pixels, an element's bounds) is the reader's
business: it passes the normalized point and the target element."""

from __future__ import annotations

from ingest.record import Action

_SIMPLE = {"navigate_home": "home", "navigate_back": "back", "wait": "wait"}
_POINTED = {"click": "tap", "double_tap": "double_click", "long_press": "long_press"}


def json_action(act: dict, raw: str, x: float | None = None, y: float | None = None, element: str | None = None,
                source_name: str = "Android JSON") -> Action:
    """`act`: the action object (`action_type` plus its fields); `raw` kept verbatim. Raises ValueError for
    an `action_type` outside the vocabulary, naming `source_name`."""
    kind = act.get("action_type")
    if kind in _POINTED:
        return Action(kind=_POINTED[kind], x=x, y=y, element=element, raw=raw)
    if kind in ("scroll", "swipe"):
        return Action(kind=kind, x=x, y=y, direction=act.get("direction"), element=element, raw=raw)
    if kind == "input_text":
        return Action(kind="type", text=act.get("text"), x=x, y=y, element=element, raw=raw)
    if kind == "keyboard_enter":
        return Action(kind="key", keys=["ENTER"], raw=raw)
    if kind == "open_app":
        return Action(kind="open_app", text=act.get("app_name"), raw=raw)
    if kind == "answer":
        return Action(kind="message", text=act.get("text"), raw=raw)
    if kind == "status":
        return Action(kind="done", text=act.get("goal_status"), raw=raw)
    if kind in _SIMPLE:
        return Action(kind=_SIMPLE[kind], raw=raw)
    raise ValueError(f"action_type {kind!r} is not an {source_name} action")
