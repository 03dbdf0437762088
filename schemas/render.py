"""Renderers: structured observations to the compact text a language world model reads and predicts.

The text must be stable (same input, same text), compact (no layout-only noise) and keep what an action can
refer to: each listed element shows the id an action's `element` names, and its pixel bounds.
"""

from __future__ import annotations

INTERACTIVE_FLAGS = ("clickable", "long_clickable", "editable", "scrollable", "checkable")
STATE_FLAGS = ("checked", "selected", "focused")


def repr_text(text: str, limit: int = 200) -> str:
    if not text.isprintable() or "  " in text:  # fast path: most UI strings are already one clean line
        text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return '"' + text.replace('"', '\\"') + '"'


def _view_line(node_id, view: dict, flags: list[str]) -> str:
    cls = view.get("class") or "View"
    parts = [f"[{node_id}] {cls.rsplit('.', 1)[-1]}"]
    text, desc, rid = view.get("text"), view.get("content_description"), view.get("resource_id")
    if text:
        parts.append(repr_text(text))
    if desc:
        parts.append("desc=" + repr_text(desc))
    if rid:
        parts.append("id=" + rid.split(":id/", 1)[-1])
    flags += [f for f in STATE_FLAGS if view.get(f)]
    if not view.get("enabled", True):
        flags.append("disabled")
    if flags:
        parts.append("{" + ",".join(flags) + "}")
    bounds = view.get("bounds")
    if bounds:
        (x1, y1), (x2, y2) = bounds
        parts.append(f"@[{x1},{y1}][{x2},{y2}]")
    return " ".join(parts)


def render_android_screen(views: list[dict], header: str | None = None) -> str:
    """An Android view hierarchy as text: visible views that carry text or can be acted on, indented under
    their nearest listed ancestor; layout-only containers are left out (their descendants move up a level).

    `views` is the flat list every Android reader stores in `observation.ui_tree` (DroidBot's shape):
    `temp_id`, `parent` (-1 for a root), `children`, `bounds` [[x1, y1], [x2, y2]] in pixels, `class`, `text`,
    `content_description`, `resource_id`, and boolean flags (`clickable`, `visible`, `enabled`, ...).
    """
    by_id: dict = {}
    stack: list[tuple] = []
    for i, view in enumerate(views):
        node_id = view.get("temp_id", i)
        by_id[node_id] = view
        if view.get("parent", -1) == -1:
            stack.append((node_id, 0))
    stack.reverse()
    lines = [header] if header else []
    seen: set = set()
    while stack:
        node_id, depth = stack.pop()
        view = by_id.get(node_id)
        if view is None or node_id in seen or view.get("visible") is False:
            continue
        seen.add(node_id)  # guards against cycles in malformed parent/child links
        get = view.get
        # one flat test: most views are layout-only and skip the line formatting entirely
        if get("clickable") or get("long_clickable") or get("editable") or get("scrollable") or \
                get("checkable") or get("text") or get("content_description"):
            lines.append("  " * depth + _view_line(node_id, view, [f for f in INTERACTIVE_FLAGS if get(f)]))
            depth += 1
        children = get("children")
        if children:
            stack.extend((child, depth) for child in reversed(children))
    return "\n".join(lines)
