"""What other agents put in OSWorld's result folders beside the harness's own fields: OSWorld's `computer_13`
action dicts, responses logged as objects (a provider's reply with its model name), the model's own point in its
reply (UI-TARS `start_box='(x,y)'`, Qwen's `computer_use` tool call `"coordinate": [x, y]`) or in a logged
computer-use tool call (Anthropic's `computer` tool beside the pyautogui `command` it ran), a screenshot of the
screen before the first action (`step_0*.png`), and the agent named by the folder layout
`<action space>/<observation type>/<model>/<domain>/<example id>/`.

`computer_13` (OSWorld's `desktop_env/actions.py`): `{"action_type": "CLICK", "parameters": {"x", "y", "button",
"num_clicks"}}` and MOVE_TO, RIGHT_CLICK, DOUBLE_CLICK, DRAG_TO, MOUSE_DOWN / MOUSE_UP, SCROLL (`dx`, `dy`: the
wheel's clicks, positive up), TYPING (`text`), PRESS / KEY_DOWN / KEY_UP (`key`), HOTKEY (`keys`), WAIT, FAIL,
DONE (some agents put the parameters beside `action_type`). Its points are pixels of the screen the harness
executes them on, which is the screenshot's size: placed through `ingest.coords` (the source's numbers under
`point` in `raw`). The model's own point is kept in `raw` as `model_point`, not converted: its space is the
model's (UI-TARS answers in the resized image it was shown, Qwen3-VL in 0-1000 per axis), and the executed
code is what ran.
"""

from __future__ import annotations

import re

import orjson

from ingest.coords import Space, place
from ingest.png import png_size
from ingest.pyautogui_code import CodeError, parse_calls, to_action
from ingest.record import Action, Observation
from ingest.source import Source, SourceError

COMPUTER_13 = {"MOVE_TO", "CLICK", "MOUSE_DOWN", "MOUSE_UP", "RIGHT_CLICK", "DOUBLE_CLICK", "DRAG_TO", "SCROLL",
                "TYPING", "PRESS", "KEY_DOWN", "KEY_UP", "HOTKEY", "WAIT", "FAIL", "DONE"}
_OBSERVATION_TYPES = {"screenshot", "a11y_tree", "screenshot_a11y_tree", "som"}
_START_BOX = re.compile(r"start_box=['\"]?(?:<\|box_start\|>)?\(\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*\)")
_COORDINATE = re.compile(r'"coordinate"\s*:\s*\[\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*\]')
_REPLY_KEYS = ("response", "content", "text", "thought", "reasoning", "raw_response")
_INITIAL = re.compile(r"step_0(?:_[^/]*)?\.png")
_CLICK_CALLS = {"click", "leftClick", "doubleClick", "rightClick", "tripleClick", "middleClick"}


def _params(action: dict) -> dict:
    params = action.get("parameters")
    return params if isinstance(params, dict) else {k: v for k, v in action.items() if k != "action_type"}


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def computer_13(action: dict, size: tuple[int, int] | None, n: int) -> Action:
    """One `computer_13` action dict as a typed action, its point in the screenshot's pixels."""
    name, params = action["action_type"], _params(action)
    raw: dict = {"action": action}
    act = Action(kind="code", arguments=orjson.dumps(params).decode())
    x, y = _number(params.get("x")), _number(params.get("y"))
    if name in ("CLICK", "RIGHT_CLICK", "DOUBLE_CLICK", "MOVE_TO", "DRAG_TO"):
        clicks = params.get("num_clicks", 1)
        act.kind = {"RIGHT_CLICK": "right_click", "DOUBLE_CLICK": "double_click", "MOVE_TO": "move",
                    "DRAG_TO": "drag"}.get(name, "right_click" if params.get("button") == "right" else
                                           "double_click" if clicks == 2 else "click")
        if x is not None and y is not None and size:
            px, py, raw["point"] = place(x, y, Space("screen", size[0], size[1]),
                                         note=f"computer_13 {name} (line {n})")
            act.x, act.y = (None, None) if name == "DRAG_TO" else (px, py)
            if name == "DRAG_TO":  # from wherever the pointer was: the file says the end only
                act.x2, act.y2 = px, py
    elif name == "SCROLL":
        dx, dy = _number(params.get("dx")) or 0, _number(params.get("dy")) or 0
        act.kind = "scroll"
        act.direction = ("up" if dy > 0 else "down") if abs(dy) >= abs(dx) else ("right" if dx > 0 else "left")
    elif name == "TYPING":
        act.kind, act.text = "type", params.get("text") if isinstance(params.get("text"), str) else None
    elif name in ("PRESS", "KEY_DOWN", "KEY_UP"):
        act.kind, act.keys = "key", [str(params.get("key"))]
        act.text = name.lower() if name != "PRESS" else None
    elif name == "HOTKEY":
        keys = params.get("keys")
        act.kind, act.keys = "hotkey", [str(k) for k in keys] if isinstance(keys, list) else [str(keys)]
    elif name in ("WAIT", "DONE", "FAIL"):
        act.kind, act.arguments = ("wait" if name == "WAIT" else "done"), None
        act.text = "FAIL" if name == "FAIL" else None
    act.raw = orjson.dumps(raw if "point" in raw else action).decode()  # verbatim unless a point was placed
    return act


def outside_point(code: str, size: tuple[int, int]) -> dict | None:
    """The `ingest.coords` entry of the first point in pyautogui code that lies off the screen (the schema's x / y
    keep it at the edge; `raw` says so, for the validation rule `action.point_outside_screen`); None if none."""
    try:
        calls, _ = parse_calls(code)
    except CodeError:
        return None
    for call in calls:
        x, y = call.arg(0, "x"), call.arg(1, "y")
        if isinstance(x, (list, tuple)) and len(x) == 2:  # click((x, y))
            x, y = x
        if _number(x) is None or _number(y) is None:
            continue
        _, _, entry = place(float(x), float(y), Space("screen", size[0], size[1]), note=f"pyautogui.{call.name}")
        if entry.get("outside_screen"):
            return entry
    return None


def move_then_click(code: str, size) -> Action | None:
    """OpenAI's computer-use loops translate a click at a point into one line `moveTo(x, y)` then
    `click(button=...)` / `doubleClick()`: that click, at the point moved to (None for any other code)."""
    try:
        calls, only_calls = parse_calls(code)
    except CodeError:
        return None
    if not (only_calls and len(calls) == 2 and all(c.module == "pyautogui" for c in calls)
            and calls[0].name == "moveTo" and calls[1].name in _CLICK_CALLS and calls[1].arg(0, "x") is None):
        return None
    at, typed = to_action(_code_of(calls[0]), size), to_action(_code_of(calls[1]), size)
    if at.x is None or at.y is None:
        return None
    typed.x, typed.y, typed.code, typed.raw = at.x, at.y, code, code
    return typed


def _code_of(call) -> str:
    """One parsed call as code again (its arguments are literals)."""
    parts = [repr(a) for a in call.args] + [f"{k}={v!r}" for k, v in call.kwargs.items()]
    return f"pyautogui.{call.name}({', '.join(parts)})"


def tool_point(action) -> dict | None:
    """The point of a computer-use tool call logged as the action (Anthropic's `computer` tool: `{"name":
    "computer", "input": {"action": "left_click", "coordinate": [x, y]}, "command": <pyautogui code>}`), in the
    display the agent declared to the model (not converted: the command holds the screen's pixels)."""
    arguments = action.get("input") if isinstance(action, dict) else None
    point = arguments.get("coordinate") if isinstance(arguments, dict) else None
    if isinstance(point, list) and len(point) == 2 and all(_number(v) is not None for v in point):
        return {"x": float(point[0]), "y": float(point[1]), "from": "input.coordinate",
                "space": "the display declared to the model (not converted)"}
    return None


def model_point(response) -> dict | None:
    """The point the model wrote in its reply, in its own space (not converted)."""
    text = response if isinstance(response, str) else reply(response) if isinstance(response, dict) else None
    for pattern, said in ((_START_BOX, "start_box"), (_COORDINATE, "coordinate")):
        found = pattern.search(text or "")
        if found:
            return {"x": float(found.group(1)), "y": float(found.group(2)), "from": said,
                    "space": "the model's own (its reply's numbers, not converted)"}
    return None


def reply(response) -> str | None:
    """The agent's reply: the logged string, or the text of a logged reply object."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        for key in _REPLY_KEYS:
            if isinstance(response.get(key), str) and response[key] and response[key] != "...":
                return response[key]
        return orjson.dumps(response).decode() if response else None
    return None


def agent_of(parts: list[str], records: list[dict], env: dict) -> str | None:
    """The model: named by a logged reply object, else by the folder layout (a model name may hold a `/`)."""
    for record in records:
        response = record.get("response")
        if isinstance(response, dict) and isinstance(response.get("model"), str):
            return response["model"]
    for i in range(len(parts) - 3):
        if parts[i + 1] in _OBSERVATION_TYPES:
            env["action_space"], env["observation_type"] = parts[i], parts[i + 1]
            model = "/".join(parts[i + 2:-2])
            return model or None
    return None


def initial_screenshot(source: Source, referenced: set[str], named: str | None = None
                       ) -> tuple[Observation | None, str | None]:
    """The screen before the first action, where the agent's loop saved one (`step_0.png`, `step_0_<time>.png`, or
    the file `named` by a header line) that no line names as the screen after an action; and its file name."""
    names = source.listdir()
    for name in ([named] if named in names else []) + names:
        if (name == named or _INITIAL.fullmatch(name)) and name not in referenced:
            try:
                data = source.read_bytes(name)
            except SourceError:
                return None, None
            size = png_size(data)
            return Observation(kind="screen", screenshot=source.put_blob(data, "image/png", source.uri),
                               width=size[0] if size else None, height=size[1] if size else None), name
    return None, None
