"""UI Automator dumps to the flat Android view list every Android reader stores (DroidBot's shape, see
`schemas.render.render_android_screen`)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_FLAGS = ("checkable", "checked", "clickable", "enabled", "focusable", "focused", "scrollable", "long_clickable",
          "selected")


def views_from_uiautomator(xml_text: str | bytes) -> tuple[list[dict], tuple[int, int] | None]:
    """A `uiautomator dump` XML as (views in pre-order, screen size from the root bounds).

    Raises xml.etree.ElementTree.ParseError on malformed XML, ValueError when the root is not <hierarchy>.
    """
    root = ET.fromstring(xml_text)
    if root.tag != "hierarchy":
        raise ValueError(f"root element is <{root.tag}>, expected <hierarchy>")
    views: list[dict] = []

    def visit(elem: ET.Element, parent: int) -> int:
        a = elem.attrib
        m = _BOUNDS.match(a.get("bounds", ""))
        view = {"temp_id": len(views), "parent": parent, "children": [], "class": a.get("class", ""),
                "package": a.get("package") or None, "text": a.get("text") or None,
                "content_description": a.get("content-desc") or None,
                "resource_id": a.get("resource-id") or None, "is_password": a.get("password") == "true",
                "bounds": [[int(m[1]), int(m[2])], [int(m[3]), int(m[4])]] if m else None, "visible": True}
        view.update({flag: a.get(flag.replace("_", "-")) == "true" for flag in _FLAGS})
        views.append(view)
        view["children"] = [visit(child, view["temp_id"]) for child in elem if child.tag == "node"]
        return view["temp_id"]

    for child in root:
        if child.tag == "node":
            visit(child, -1)
    size = None
    if views and views[0]["bounds"]:
        (x1, y1), (x2, y2) = views[0]["bounds"]
        size = (x2 - x1, y2 - y1)
    return views, size
