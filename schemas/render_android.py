"""Android screens in the renderings AgentWorldBench's android rows use, one per kind of source.

The benchmark keeps each source's own state text (tests/transforms/export/golden/bench_layout/android.json):

- `indexed`: one line per element, `[ 0] | android.widget.ImageView | res="pkg:id/x" | bounds=[42,149][147,275]
  | clickable` (its AndroidWorld rows, whose JSONAction names an element by this index);
- `phone_state`: the phone tool's `**Current Phone State:**` block (App, Keyboard, Focused Element) and its
  `Current Clickable UI elements:` as `N. className: resourceId, text - bounds(l,t,r,b)` lines;
- `droidbot`: DroidBot's text representation of a state (`device_state.py`, `get_text_representation`):
  `<button id=3 text='desc' bound_box=108,1133,972,1266>Sign in</button>` per view, the elements its
  `touch <button id=3 ...>` events name.

Each renders the canonical view list every Android reader stores in `observation.ui_tree` (see
`schemas.render.render_android_screen`), never the observation's text.
"""

from __future__ import annotations

import orjson

from schemas.render import INTERACTIVE_FLAGS, STATE_FLAGS

STYLES = ("indexed", "phone_state", "droidbot")

# source format -> style. DroidBot runs (and Kea's, read by the same reader) -> DroidBot's own state text.
# AndroidWorld (both readers), AndroidControl and AITW -> `indexed`: their actions are (or map onto)
# AndroidWorld's JSONAction, whose `index` is the element's position in the UI element list; the indexed
# lines number elements by that same position (`temp_id`), so an action's index names the line it acts on.
# A UI Automator dump is one whole window with its package on every node and no action of its own: the phone
# tool's block, whose first line is the foreground app, fits it best.
STYLE_OF_FORMAT = {"droidbot": "droidbot", "androidworld": "indexed", "androidworld_json": "indexed",
                   "androidcontrol": "indexed", "aitw": "indexed", "uiautomator": "phone_state"}

# DroidBot leaves the system bars' backgrounds out of its state text
_SYSTEM_BARS = ("android:id/navigationBarBackground", "android:id/statusBarBackground")


def _quoted(text: str) -> str:
    return '"' + str(text).replace('"', '\\"') + '"'


def _indexed_line(index, view: dict) -> str:
    get = view.get
    attrs = [f"{name}={_quoted(get(key))}" for name, key in (("text", "text"), ("hint", "hint"),
                                                                ("desc", "content_description"),
                                                                ("res", "resource_id")) if get(key)]
    parts = [f"[{index:>2}]" if isinstance(index, int) else f"[{index}]", get("class") or "View"]
    if attrs:
        parts.append(" ".join(attrs))
    if get("bounds"):
        (x1, y1), (x2, y2) = get("bounds")
        parts.append(f"bounds=[{x1},{y1}][{x2},{y2}]")
    parts.extend(flag for flag in INTERACTIVE_FLAGS + STATE_FLAGS if get(flag))  # each its own field
    return " | ".join(parts)


def render_indexed(views: list[dict]) -> str:
    """Visible elements that show text or can be acted on, one line each, numbered by their index in the list
    (`temp_id`): the number an AndroidWorld action names. Others keep their number and get no line."""
    lines = []
    for i, view in enumerate(views):
        if view.get("visible") is False:
            continue
        if any(view.get(key) for key in ("text", "content_description") + INTERACTIVE_FLAGS):
            lines.append(_indexed_line(view.get("temp_id", i), view))
    return "\n".join(lines)


def _foreground_package(views: list[dict]) -> str | None:
    """The app on screen: the first visible view's package that is not the system UI or a keyboard."""
    packages = [v.get("package") for v in views if v.get("visible") is not False and v.get("package")]
    app = next((p for p in packages if p != "com.android.systemui" and "inputmethod" not in p), None)
    return app or (packages[0] if packages else None)


_ACTIONABLE = ("clickable", "long_clickable", "editable", "checkable")


def render_phone_state(views: list[dict]) -> str:
    """The phone tool's state block. The app's label is not in a view hierarchy: the App line names its
    package alone; the keyboard shows when a visible view belongs to an input method."""
    visible = [v for v in views if v.get("visible") is not False]
    keyboard = any("inputmethod" in (v.get("package") or "") for v in visible)
    focused = next((v for v in visible if v.get("focused")), None)
    focused_text = (focused.get("text") or focused.get("content_description") or "") if focused else ""
    lines = ["**Current Phone State:**", f"• **App:** {_foreground_package(views) or 'unknown'}",
             f"• **Keyboard:** {'Visible' if keyboard else 'Hidden'}", f"• **Focused Element:** '{focused_text}'",
             "", "Current Clickable UI elements:"]
    n = 0
    for view in visible:
        if not any(view.get(flag) for flag in _ACTIONABLE):
            continue
        n += 1
        cls = view.get("class") or "View"
        label = view.get("text") or view.get("content_description") or ""
        line = f"{n}. {cls[cls.rfind('.') + 1:]}: {view.get('resource_id') or ''}, {label}"
        if view.get("bounds"):
            (x1, y1), (x2, y2) = view["bounds"]
            line += f" - bounds({x1},{y1},{x2},{y2})"
        lines.append(line)
    return "\n".join(lines)


def _inherited(views: list[dict], by_id: dict, view: dict, flag: str) -> bool:
    """The flag on the view or one of its ancestors (DroidBot counts a child of a clickable view clickable)."""
    seen = set()
    while view is not None and id(view) not in seen:
        if view.get(flag):
            return True
        seen.add(id(view))
        view = by_id.get(view.get("parent", -1))
    return False


def _droidbot_tag(views: list[dict], by_id: dict, view: dict) -> str:
    if view.get("editable"):
        return "input"
    if _inherited(views, by_id, view, "checkable"):
        return "checkbox"
    if _inherited(views, by_id, view, "clickable"):
        return "button"
    return "scrollbar" if view.get("scrollable") else "p"


def render_droidbot(views: list[dict]) -> str:
    """DroidBot's state text: each visible view with text, a description or a scroll bar (system bars left
    out), numbered in order, as `<tag id=N text='description' attr=selected bound_box=l,t,r,b>text</tag>`;
    the tag says what the view does (input, checkbox, button, scrollbar, else p)."""
    return "\n".join(droidbot_elements(views).values())


def droidbot_elements(views: list[dict]) -> dict:
    """The views DroidBot's state text lists: view id (`temp_id`) -> its element text, in order."""
    by_id = {view.get("temp_id", i): view for i, view in enumerate(views)}
    lines: dict = {}
    for i, view in enumerate(views):
        if view.get("visible") is False or view.get("resource_id") in _SYSTEM_BARS:
            continue
        desc, text = view.get("content_description") or "", view.get("text") or ""
        if not desc and not text and not view.get("scrollable"):
            continue
        tag = _droidbot_tag(views, by_id, view)
        line = f"<{tag} id={len(lines)}"
        if desc and tag != "scrollbar":
            line += f" text='{desc}'"
        if view.get("checked") or view.get("selected"):
            line += " attr=selected"
        if view.get("bounds"):
            (x1, y1), (x2, y2) = view["bounds"]
            line += f" bound_box={x1},{y1},{x2},{y2}"
        lines[view.get("temp_id", i)] = line + f">{'' if tag == 'scrollbar' else text}</{tag}>"
    return lines


# schema kinds -> DroidBot's event verbs, on an element of the state text
_DROIDBOT_VERBS = {"tap": "touch", "long_press": "long_touch", "type": "set_text", "scroll": "scroll"}


def droidbot_event(action: dict, views: list[dict] | None) -> str | None:
    """`action` as DroidBot's event text on the state it acted on (`touch <button id=3 bound_box=...>Sign
    in</button>`, `set_text <input ...>...</input> text`, `scroll down <scrollbar ...>`, `key BACK`, `intent am
    start ...`); None when that form cannot say it (a view the state text does not list, another kind)."""
    kind = action.get("kind")
    if kind in ("back", "home"):  # DroidBot's key events, read as these kinds
        return f"key {kind.upper()}"
    if kind == "key" and len(action.get("keys") or []) == 1:
        return f"key {action['keys'][0]}"
    if kind == "open_app" and str(action.get("code") or "").startswith("am start"):
        return f"intent {action['code']}"
    if kind not in _DROIDBOT_VERBS or not views or not action.get("element"):
        return None
    try:
        element = orjson.loads(action["element"])
    except orjson.JSONDecodeError:
        return None
    target = droidbot_elements(views).get(element.get("temp_id")) if isinstance(element, dict) else None
    if target is None:
        return None
    if kind == "scroll":
        return f"scroll {action['direction']} {target}" if action.get("direction") else None
    if kind == "type":
        return f"set_text {target} {action.get('text') or ''}".rstrip()
    return f"{_DROIDBOT_VERBS[kind]} {target}"


RENDER = {"indexed": render_indexed, "phone_state": render_phone_state, "droidbot": render_droidbot}


def style_of(source_format: str | None) -> str | None:
    """The benchmark's rendering for a source format; None: the source has no view hierarchy to render (its
    text is shown as recorded)."""
    return STYLE_OF_FORMAT.get(source_format or "")
