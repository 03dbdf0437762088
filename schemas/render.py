"""Renderers: structured observations to the compact text a language world model reads and predicts.

The text must be stable (same input, same text), compact (no layout-only noise) and keep what an action can
refer to: each listed element shows the id an action's `element` names, and its pixel bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INTERACTIVE_FLAGS = ("clickable", "long_clickable", "editable", "scrollable", "checkable")
STATE_FLAGS = ("checked", "selected", "focused")


@dataclass
class ViewNode:
    """One node of an Android view hierarchy, whatever the source (DroidBot state, UI Automator dump)."""

    id: int
    cls: str
    text: str | None = None
    desc: str | None = None
    resource_id: str | None = None
    bounds: tuple[int, int, int, int] | None = None  # x1, y1, x2, y2 in pixels
    flags: frozenset[str] = frozenset()
    visible: bool = True
    enabled: bool = True
    children: list[int] = field(default_factory=list)


def _short_class(cls: str) -> str:
    return cls.rsplit(".", 1)[-1] if cls else "View"


def _informative(node: ViewNode) -> bool:
    return bool(node.text or node.desc or node.flags.intersection(INTERACTIVE_FLAGS))


def _node_line(node: ViewNode) -> str:
    parts = [f"[{node.id}] {_short_class(node.cls)}"]
    if node.text:
        parts.append(repr_text(node.text))
    if node.desc:
        parts.append(f"desc={repr_text(node.desc)}")
    if node.resource_id:
        parts.append(f"id={node.resource_id.split(':id/', 1)[-1]}")
    flags = [f for f in INTERACTIVE_FLAGS + STATE_FLAGS if f in node.flags]
    if not node.enabled:
        flags.append("disabled")
    if flags:
        parts.append("{" + ",".join(flags) + "}")
    if node.bounds:
        x1, y1, x2, y2 = node.bounds
        parts.append(f"@[{x1},{y1}][{x2},{y2}]")
    return " ".join(parts)


def repr_text(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return '"' + text.replace('"', '\\"') + '"'


def render_android_screen(nodes: dict[int, ViewNode], roots: list[int], header: str | None = None) -> str:
    """Visible nodes that carry text or can be acted on, indented under their nearest listed ancestor.

    Layout-only containers are left out; their informative descendants move up a level.
    """
    lines = [header] if header else []
    stack = [(root, 0) for root in reversed(roots)]
    seen: set[int] = set()
    while stack:
        node_id, depth = stack.pop()
        node = nodes.get(node_id)
        if node is None or node_id in seen or not node.visible:
            continue
        seen.add(node_id)  # guards against cycles in malformed parent/child links
        child_depth = depth
        if _informative(node):
            lines.append("  " * depth + _node_line(node))
            child_depth = depth + 1
        stack.extend((child, child_depth) for child in reversed(node.children))
    return "\n".join(lines)
