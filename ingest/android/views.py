"""Android view hierarchies from their two common encodings to `ViewNode`s and rendered text."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from schemas.render import ViewNode

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_FLAG_KEYS = ("clickable", "long_clickable", "editable", "scrollable", "checkable", "checked", "selected",
              "focused")


def nodes_from_droidbot(views: list[dict]) -> tuple[dict[int, ViewNode], list[int]]:
    """DroidBot's flat `views` list (temp_id, parent, children, bounds [[x1,y1],[x2,y2]], flags)."""
    nodes: dict[int, ViewNode] = {}
    roots: list[int] = []
    for index, v in enumerate(views):
        node_id = v.get("temp_id", index)
        b = v.get("bounds")
        bounds = (b[0][0], b[0][1], b[1][0], b[1][1]) if b else None
        nodes[node_id] = ViewNode(
            id=node_id,
            cls=v.get("class") or "",
            text=v.get("text"),
            desc=v.get("content_description"),
            resource_id=v.get("resource_id"),
            bounds=bounds,
            flags=frozenset(k for k in _FLAG_KEYS if v.get(k)),
            visible=v.get("visible", True),
            enabled=v.get("enabled", True),
            children=list(v.get("children") or ()),
        )
        if v.get("parent", -1) == -1:
            roots.append(node_id)
    return nodes, roots


def nodes_from_uiautomator(xml_text: str | bytes) -> tuple[dict[int, ViewNode], list[int], tuple[int, int] | None]:
    """A `uiautomator dump` XML; nodes get pre-order ids. Returns nodes, roots and the screen size.

    Raises xml.etree.ElementTree.ParseError on malformed XML.
    """
    root = ET.fromstring(xml_text)
    if root.tag != "hierarchy":
        raise ValueError(f"root element is <{root.tag}>, expected <hierarchy>")
    nodes: dict[int, ViewNode] = {}
    roots: list[int] = []

    def visit(elem: ET.Element) -> int:
        node_id = len(nodes)
        a = elem.attrib
        m = _BOUNDS.match(a.get("bounds", ""))
        node = ViewNode(
            id=node_id,
            cls=a.get("class", ""),
            text=a.get("text") or None,
            desc=a.get("content-desc") or None,
            resource_id=a.get("resource-id") or None,
            bounds=tuple(int(g) for g in m.groups()) if m else None,
            flags=frozenset(k for k in _FLAG_KEYS if a.get(k.replace("_", "-")) == "true"),
            enabled=a.get("enabled", "true") == "true",
        )
        nodes[node_id] = node
        node.children = [visit(child) for child in elem if child.tag == "node"]
        return node_id

    for child in root:
        if child.tag == "node":
            roots.append(visit(child))
    size = None
    if roots and nodes[roots[0]].bounds:
        x1, y1, x2, y2 = nodes[roots[0]].bounds
        size = (x2 - x1, y2 - y1)
    return nodes, roots, size
