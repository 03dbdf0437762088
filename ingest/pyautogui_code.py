"""pyautogui code strings (OSWorld, AgentNet) to typed `Action`s, by reading the syntax tree: code is never run.

Each `pyautogui.<fn>(...)` call with literal arguments becomes a `Call`; `to_action` turns the calls of one
step into one `Action`:

- one call: its typed action (click, double_click, right_click, move, drag, type, key, hotkey, scroll...);
  a lone `moveTo` (hover) is a `move` to its point;
- the common pairs `moveTo + scroll` (scroll at a point), `moveTo + dragTo` (drag from, to) and
  `write + press('enter')` (type a line) become one typed action;
- a pause (`time.sleep(s)`, `pyautogui.sleep(s)`) between other calls is no action of its own; code that is
  nothing but pauses (Agent S's and OpenAI's computer-use loops' waits, Claude's `wait` in OSWorld's loop) is a
  `wait` of their seconds;
- `keyDown` / `keyUp` calls (with single `press`es, pyautogui's own down and up) that nest as a chord, every key
  down then the same keys up in reverse order, as Claude's `key` action is written in OSWorld's loop, is the
  `hotkey` of those keys (`key` for one): exactly what `pyautogui.hotkey` does. Downs released in another order, a
  key held over a click or over several presses, a key left down: `code`;
- anything else (several calls, loops, variables) is a `code` action with the parsed calls in `arguments`.

Coordinates are divided by the screen size given (pass 1 x 1 for code that is already normalized, as
AgentNet's is) and clamped to [0, 1]. `raw` and `code` keep the source text verbatim.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import orjson

from ingest.record import Action, clamp01

_PAUSES = {("time", "sleep"), ("pyautogui", "sleep")}  # pyautogui.sleep is time.sleep
_KEY_CALL_ARGS = {"keyDown": {"key", "logScreenshot", "_pause"}, "keyUp": {"key", "logScreenshot", "_pause"},
                  "press": {"keys", "presses", "interval", "logScreenshot", "_pause"}}
_ENTER = {"enter", "return", "\n"}


class CodeError(ValueError):
    """The code is not Python a parser accepts."""


@dataclass
class Call:
    module: str  # "pyautogui", "computer", ...
    name: str
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)

    def arg(self, index: int, *names, default=None):
        for name in names:
            if name in self.kwargs:
                return self.kwargs[name]
        return self.args[index] if index is not None and index < len(self.args) else default


class _NotLiteral(Exception):
    pass


def _literal(node: ast.AST):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise _NotLiteral from None


def parse_calls(code: str) -> tuple[list[Call], bool]:
    """Module-level calls `mod.fn(literal args)` in order, pauses left out, and whether the code held nothing else.

    Raises CodeError when the code does not parse.
    """
    calls, only_calls = _all_calls(code)
    return [c for c in calls if not _is_pause(c)], only_calls


def _is_pause(call: Call) -> bool:
    return (call.module, call.name) in _PAUSES


def _all_calls(code: str) -> tuple[list[Call], bool]:
    """`parse_calls` with the pauses kept."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        raise CodeError(f"not valid Python: {e}") from None
    calls: list[Call] = []
    only_calls = True
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)):
            only_calls = False
            continue
        module, name = call.func.value.id, call.func.attr
        try:
            args = [_literal(a) for a in call.args]
            kwargs = {k.arg: _literal(k.value) for k in call.keywords if k.arg}
        except _NotLiteral:
            if (module, name) in _PAUSES:  # a pause of seconds not written out: still only a pause
                calls.append(Call(module, name))
                continue
            only_calls = False
            continue
        calls.append(Call(module, name, args, kwargs))
    return calls, only_calls


def _xy(call: Call, size: tuple[float, float], xi: int = 0) -> tuple[float | None, float | None]:
    x, y = call.arg(xi, "x"), call.arg(xi + 1, "y")
    if isinstance(x, (list, tuple)) and len(x) == 2:  # click((x, y))
        x, y = x
    if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
        return None, None
    return clamp01(x / size[0]), clamp01(y / size[1])


def _keys(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(k) for k in value] if isinstance(value, (list, tuple)) else []


def _one(call: Call, size, raw: str) -> Action | None:
    n = call.name
    if call.module == "computer":  # AgentNet's end-of-task and pause calls
        if n == "terminate":
            return Action(kind="done", text=call.arg(0, "status"), code=raw, raw=raw)
        if n == "wait":
            return Action(kind="wait", duration_s=call.arg(0, "seconds", "duration"), code=raw, raw=raw)
        return None
    if call.module != "pyautogui":
        return None
    if n in ("click", "leftClick", "doubleClick", "rightClick", "tripleClick", "middleClick"):
        x, y = _xy(call, size)
        clicks = call.arg(None, "clicks", default=1)
        button = call.arg(None, "button", default="left")
        kind = ("double_click" if n == "doubleClick" or clicks == 2 else
                "right_click" if n == "rightClick" or button == "right" else "click")
        extra = {k: v for k, v in {"clicks": 3 if n == "tripleClick" else clicks,
                                   "button": "middle" if n == "middleClick" else button}.items()
                 if v not in (1, "left")}
        return Action(kind=kind, x=x, y=y, arguments=orjson.dumps(extra).decode() if extra else None,
                      code=raw, raw=raw)
    if n == "moveTo":
        x, y = _xy(call, size)
        return Action(kind="move", x=x, y=y, duration_s=call.arg(2, "duration"), code=raw, raw=raw)
    if n in ("dragTo", "drag"):
        x2, y2 = _xy(call, size)
        return Action(kind="drag", x2=x2, y2=y2, duration_s=call.arg(2, "duration"), code=raw, raw=raw)
    if n in ("typewrite", "write"):
        text = call.arg(0, "message", "text")
        if isinstance(text, (list, tuple)):  # typewrite(['a', 'enter']) is a key sequence
            return Action(kind="key", keys=_keys(text), code=raw, raw=raw)
        return Action(kind="type", text=text, code=raw, raw=raw)
    if n == "press":
        return Action(kind="key", keys=_keys(call.arg(0, "keys", "key")), code=raw, raw=raw)
    if n == "hotkey":
        keys = _keys(call.kwargs["keys"]) if "keys" in call.kwargs else [str(a) for a in call.args]
        return Action(kind="hotkey", keys=keys, code=raw, raw=raw)
    if n in ("scroll", "vscroll", "hscroll"):
        amount = call.arg(0, "clicks", "amount")
        x, y = _xy(call, size, 1)
        horizontal = n == "hscroll"
        direction = None
        if isinstance(amount, (int, float)) and amount:
            direction = ("right" if amount > 0 else "left") if horizontal else ("up" if amount > 0 else "down")
        return Action(kind="scroll", x=x, y=y, direction=direction,
                      arguments=orjson.dumps({"amount": amount}).decode(), code=raw, raw=raw)
    return None


def _seconds(pause: Call) -> float | None:
    """The seconds one pause sleeps, where written out (`time.sleep` takes them by position only,
    `pyautogui.sleep` also as `seconds=`)."""
    if len(pause.args) + len(pause.kwargs) != 1 or (pause.kwargs and pause.module != "pyautogui"):
        return None
    seconds = pause.arg(0, "seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < float("inf"):
        return None  # a negative or endless sleep raises; True is no number of seconds anyone writes
    return float(seconds)


def _wait(pauses: list[Call], raw: str) -> Action | None:
    """Code that only pauses: a `wait` of the seconds it sleeps (None when one's seconds are not written out)."""
    seconds = [_seconds(c) for c in pauses]
    if None in seconds:
        return None
    return Action(kind="wait", duration_s=sum(seconds), code=raw, raw=raw)


def _key_events(calls: list[Call]) -> list[tuple[str, str]] | None:
    """The key downs and ups of `keyDown` / `keyUp` / single-key `press` calls, in order; None for any other call
    (or an argument pyautogui would refuse, a key pressed several times)."""
    events = []
    for call in calls:
        allowed = _KEY_CALL_ARGS.get(call.name) if call.module == "pyautogui" else None
        if allowed is None or set(call.kwargs) - allowed:
            return None
        if call.name == "press":
            keys = _keys(call.arg(0, "keys"))
            if len(keys) != 1 or call.arg(1, "presses", default=1) != 1:
                return None
            events += [("keyDown", keys[0]), ("keyUp", keys[0])]
            continue
        key = call.arg(0, "key")
        if not isinstance(key, str) or len(call.args) > 1:
            return None
        events.append((call.name, key))
    return events


def _chord(calls: list[Call], raw: str) -> Action | None:
    """Keys pressed down one after another and let up in reverse order: the `hotkey` of them (`key` for one)."""
    events = _key_events(calls)
    if not events or not any(c.name == "keyDown" for c in calls):
        return None
    half = len(events) // 2
    downs, ups = events[:half], events[half:]
    keys = [key for _, key in downs]
    same = [key.lower() if len(key) > 1 else key for key in keys]  # pyautogui lowercases a named key
    if (len(events) % 2 or any(e != "keyDown" for e, _ in downs) or any(e != "keyUp" for e, _ in ups)
            or len(set(same)) != len(same)
            or [key.lower() if len(key) > 1 else key for _, key in ups] != same[::-1]):
        return None
    return Action(kind="hotkey" if len(keys) > 1 else "key", keys=keys, code=raw, raw=raw)


def _summary(call: Call) -> dict:
    return {"call": f"{call.module}.{call.name}", "args": call.args, "kwargs": call.kwargs}


def to_action(code: str, size: tuple[float, float]) -> Action:
    """One step's code to one Action (see the module docstring). Raises CodeError on unparsable code."""
    every, only_calls = _all_calls(code)
    calls = [c for c in every if not _is_pause(c)]
    if only_calls and every and not calls and (wait := _wait(every, code)):
        return wait
    if only_calls and (chord := _chord(calls, code)):
        return chord
    if only_calls and len(calls) == 1:
        action = _one(calls[0], size, code)
        if action:
            return action
    if only_calls and len(calls) == 2 and calls[0].name == "moveTo" and calls[0].module == "pyautogui":
        second = _one(calls[1], size, code)
        x, y = _xy(calls[0], size)
        if second and second.kind == "scroll" and second.x is None:
            second.x, second.y = x, y
            return second
        if second and second.kind == "drag":
            second.x, second.y = x, y
            return second
    if only_calls and len(calls) == 2 and {c.module for c in calls} == {"pyautogui"}:
        first, second = _one(calls[0], size, code), _one(calls[1], size, code)
        if (first and second and first.kind == "type" and isinstance(first.text, str)
                and second.kind == "key" and [k.lower() for k in second.keys or []] in (["enter"], ["return"])):
            first.text += "\n"
            return first
    x = y = None
    if calls and calls[0].module == "pyautogui" and calls[0].name == "moveTo":
        x, y = _xy(calls[0], size)  # the code starts at this point: keep it
    return Action(kind="code", x=x, y=y, code=code, raw=code,
                  arguments=orjson.dumps([_summary(c) for c in calls], default=str).decode())
