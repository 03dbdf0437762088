"""Desktop accessibility trees (Windows UIA, macOS AX, Linux AT-SPI) to the compact text a world model reads.

Recorders write these trees in their own shapes; `a11y_nodes` maps each to `A11yNode`s and `render_a11y`
prints the visible nodes that carry a name, a value or an interactive role, one per line, indented under
their nearest listed ancestor, with a pre-order id and pixel bounds, e.g.

    [3] Button "Night light" @[1262,369][1350,433]

Shapes understood (keys are matched as recorded):
- UIA (AgentNet on Windows): `Name`, `ControlType`, `BoundingRectangle` {left,top,right,bottom}, `Value`,
  `AutomationId`, `Children`.
- AX (macOS recorders): `AXRole`/`role`, `AXTitle`/`title`, `AXValue`/`value`, `AXDescription`/`description`,
  `AXFrame`/`frame`/`bbox` {x,y,w,h} or [x,y,w,h], or `position` + `size`, `AXChildren`/`children`.
- AT-SPI as XML (OSWorld on Ubuntu): element tag = role, `name`, `cp:screencoord="(x, y)"`,
  `cp:size="(w, h)"`, `st:visible`/`st:showing` states; namespaces are ignored.
"""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from schemas.render import repr_text

# Roles worth listing even without a name: a model's action can target them.
_INTERACTIVE = re.compile(
    r"button|checkbox|check.box|radio|combo|edit|text.?field|textfield|entry|menu.?item|link|slider|"
    r"tab|list.?item|spin|switch|toggle|scroll.?bar|hyperlink|password", re.I)
_MAX_DEPTH = 200  # recorded trees are shallow; a deeper one is malformed (or cyclic)


@dataclass
class A11yNode:
    role: str
    name: str | None = None
    value: str | None = None
    desc: str | None = None
    bounds: tuple[int, int, int, int] | None = None  # x1, y1, x2, y2 in pixels
    visible: bool = True
    enabled: bool = True
    children: list["A11yNode"] = field(default_factory=list)


@functools.lru_cache(maxsize=1024)  # a tree names a few roles, each on many nodes
def _short_role(role: str) -> str:
    """"AXButton" and "ButtonControl" both read "Button"."""
    if role.startswith("AX") and len(role) > 2:
        role = role[2:]
    if role.endswith("Control") and len(role) > 7:
        role = role[:-7]
    return role or "Node"


def _text(value) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def _first(d: dict, *keys):
    for key in keys:
        value = d.get(key)
        if value is not None and value != "":  # JSON values: what `not in (None, "")` tests, one lookup
            return value
    return None


def _rect(d: dict) -> tuple[int, int, int, int] | None:
    r = d.get("BoundingRectangle")
    if isinstance(r, dict) and {"left", "top", "right", "bottom"} <= r.keys():
        return int(r["left"]), int(r["top"]), int(r["right"]), int(r["bottom"])
    frame = _first(d, "AXFrame", "frame", "bbox")
    if isinstance(frame, dict) and {"x", "y"} <= frame.keys():
        w, h = frame.get("w", frame.get("width", 0)), frame.get("h", frame.get("height", 0))
        return int(frame["x"]), int(frame["y"]), int(frame["x"] + w), int(frame["y"] + h)
    if isinstance(frame, (list, tuple)) and len(frame) == 4:
        x, y, w, h = (float(v) for v in frame)
        return int(x), int(y), int(x + w), int(y + h)
    pos, size = _first(d, "AXPosition", "position"), _first(d, "AXSize", "size")
    if isinstance(pos, (list, tuple)) and isinstance(size, (list, tuple)) and len(pos) == len(size) == 2:
        return int(pos[0]), int(pos[1]), int(pos[0] + size[0]), int(pos[1] + size[1])
    if isinstance(pos, dict) and isinstance(size, dict):
        x, y = pos.get("x", 0), pos.get("y", 0)
        return int(x), int(y), int(x + size.get("w", size.get("width", 0))), int(y + size.get("h", size.get("height", 0)))
    return None


def _from_dict(d: dict, depth: int = 0) -> A11yNode:
    if depth > _MAX_DEPTH:
        raise ValueError(f"accessibility tree deeper than {_MAX_DEPTH} levels")
    children = _first(d, "Children", "AXChildren", "children") or []
    return A11yNode(
        role=str(_first(d, "ControlType", "AXRole", "role", "Role") or ""),
        name=_text(_first(d, "Name", "AXTitle", "title", "name")),
        value=_text(_first(d, "Value", "AXValue", "value")),
        desc=_text(_first(d, "AXDescription", "description", "HelpText")),
        bounds=_rect(d),
        visible=not d.get("IsOffscreen", False) and d.get("visible", True) is not False,
        enabled=d.get("IsEnabled", d.get("AXEnabled", d.get("enabled", True))) is not False,
        children=[_from_dict(c, depth + 1) for c in children if isinstance(c, dict)],
    )


_PAIR = re.compile(r"\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)")


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1].rsplit(":", 1)[-1]


def _from_atspi(elem: ET.Element, depth: int = 0) -> A11yNode:
    if depth > _MAX_DEPTH:
        raise ValueError(f"accessibility tree deeper than {_MAX_DEPTH} levels")
    attrs = {_local(k): v for k, v in elem.attrib.items()}
    bounds = None
    pos, size = _PAIR.match(attrs.get("screencoord", "")), _PAIR.match(attrs.get("size", ""))
    if pos and size:
        x, y, w, h = int(pos[1]), int(pos[2]), int(size[1]), int(size[2])
        bounds = (x, y, x + w, y + h)
    return A11yNode(
        role=_local(elem.tag),
        name=_text(attrs.get("name")),
        value=_text(elem.text),
        desc=_text(attrs.get("description")),
        bounds=bounds,
        visible=attrs.get("showing", attrs.get("visible", "true")) != "false",
        enabled=attrs.get("enabled", "true") != "false",
        children=[_from_atspi(c, depth + 1) for c in elem],
    )


def a11y_nodes(tree) -> list[A11yNode]:
    """Root nodes of a recorded tree: a dict (UIA / AX), a list of them, or AT-SPI XML (str or bytes).

    Raises ValueError (or xml.etree.ElementTree.ParseError) when the tree is not one of these shapes.
    """
    if isinstance(tree, (str, bytes)):
        root = ET.fromstring(tree)
        return [_from_atspi(c) for c in root] if _local(root.tag) in ("desktop-frame", "desktop") else [_from_atspi(root)]
    if isinstance(tree, dict):
        return [_from_dict(tree)]
    if isinstance(tree, list):
        return [_from_dict(t) for t in tree if isinstance(t, dict)]
    raise ValueError(f"accessibility tree is a {type(tree).__name__}, expected an object, a list or XML")


def _informative(node: A11yNode) -> bool:
    return bool(node.name or node.value or node.desc or _interactive(node.role))


@functools.lru_cache(maxsize=1024)
def _interactive(role: str) -> bool:
    return _INTERACTIVE.search(role) is not None


def _line(node_id: int, node: A11yNode) -> str:
    parts = [f"[{node_id}] {_short_role(node.role)}"]
    if node.name:
        parts.append(repr_text(node.name))
    if node.value and node.value != node.name:
        parts.append(f"value={repr_text(node.value)}")
    if node.desc and node.desc not in (node.name, node.value):
        parts.append(f"desc={repr_text(node.desc)}")
    if not node.enabled:
        parts.append("{disabled}")
    if node.bounds:
        x1, y1, x2, y2 = node.bounds
        parts.append(f"@[{x1},{y1}][{x2},{y2}]")
    return " ".join(parts)


def render_a11y(tree, header: str | None = None) -> str:
    """Compact text of a recorded accessibility tree (see the module docstring for the shapes).

    Ids are pre-order over all nodes, so the same tree always gives the same ids. Nodes without a name, a
    value or an interactive role are left out; their listed descendants move up a level. Zero-size and
    invisible nodes are left out with their sub-trees.
    """
    lines = [header] if header else []
    counter = 0
    stack = [(node, 0) for node in reversed(a11y_nodes(tree))]
    while stack:
        node, depth = stack.pop()
        node_id, counter = counter, counter + 1
        if not node.visible or (node.bounds and (node.bounds[2] <= node.bounds[0] or node.bounds[3] <= node.bounds[1])):
            continue
        child_depth = depth
        if _informative(node):
            lines.append("  " * depth + _line(node_id, node))
            child_depth = depth + 1
        stack.extend((child, child_depth) for child in reversed(node.children))
    return "\n".join(lines)
