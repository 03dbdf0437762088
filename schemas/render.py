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
    by_id = {v.get("temp_id", i): v for i, v in enumerate(views)}
    lines = [header] if header else []
    stack = [(v.get("temp_id", i), 0) for i, v in reversed(list(enumerate(views))) if v.get("parent", -1) == -1]
    seen: set = set()
    while stack:
        node_id, depth = stack.pop()
        view = by_id.get(node_id)
        if view is None or node_id in seen or not view.get("visible", True):
            continue
        seen.add(node_id)  # guards against cycles in malformed parent/child links
        child_depth = depth
        flags = [f for f in INTERACTIVE_FLAGS if view.get(f)]
        if flags or view.get("text") or view.get("content_description"):
            lines.append("  " * depth + _view_line(node_id, view, flags))
            child_depth = depth + 1
        stack.extend((child, child_depth) for child in reversed(view.get("children") or ()))
    return "\n".join(lines)
