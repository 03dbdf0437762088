"""Android accessibility forests (android_env's `AndroidAccessibilityForest` protobuf, as AndroidControl
stores them) to the canonical Android view list (see `schemas.render.render_android_screen`).

Decoded from the wire format with the proto's field numbers; no generated code. Windows are listed in
order; each window's tree becomes roots (nodes no other node names as a child) with their descendants.
"""

from __future__ import annotations

from ingest import protowire as pw

# AndroidAccessibilityNodeInfo boolean fields -> the canonical view flags
_FLAGS = {12: "checkable", 13: "checked", 14: "clickable", 15: "editable", 16: "enabled", 17: "focusable",
          18: "focused", 19: "long_clickable", 20: "is_password", 21: "scrollable", 22: "selected",
          23: "visible"}
_STRINGS = {3: "class", 4: "content_description", 5: "hint_text", 6: "package", 7: "text", 10: "resource_id"}


def _rect(data: bytes) -> list[list[int]]:
    r = {n: pw.signed32(v) for n, _, v in pw.fields(data) if isinstance(v, int)}
    return [[r.get(1, 0), r.get(2, 0)], [r.get(3, 0), r.get(4, 0)]]


def _node(data: bytes) -> tuple[int, dict, list[int]]:
    unique_id, child_ids = 0, []
    view: dict = {"visible": False, "enabled": False}  # proto3: an absent bool is false
    for number, wire, value in pw.fields(data):
        if number == 1:
            unique_id = pw.signed32(value)
        elif number == 2:
            view["bounds"] = _rect(value)
        elif number in _STRINGS:
            view[_STRINGS[number]] = value.decode("utf-8", "replace") or None
        elif number in _FLAGS:
            view[_FLAGS[number]] = bool(value)
        elif number == 25:
            child_ids.extend(pw.signed32(v) for v in (pw.packed_varints(value) if wire == pw.LENGTH else [value]))
    return unique_id, view, child_ids


def views_from_forest(data: bytes) -> list[dict]:
    """Serialized forest -> views (temp_id, parent, children, bounds, class, text, flags, window_id...).
    ValueError on a malformed buffer."""
    views: list[dict] = []
    for number, _, window in pw.fields(data):
        if number != 1:
            continue
        window_id, nodes = None, []
        for wnum, _, value in pw.fields(window):
            if wnum == 3:
                window_id = pw.signed32(value)
            elif wnum == 11:
                nodes = [_node(n) for tnum, _, n in pw.fields(value) if tnum == 1]
        base = len(views)
        index = {uid: base + i for i, (uid, _, _) in enumerate(nodes)}
        children_of = {base + i: [index[c] for c in kids if c in index] for i, (_, _, kids) in enumerate(nodes)}
        parent_of = {child: parent for parent, kids in children_of.items() for child in kids}
        for i, (_, view, _) in enumerate(nodes):
            temp_id = base + i
            view.update(temp_id=temp_id, parent=parent_of.get(temp_id, -1), children=children_of[temp_id],
                        window_id=window_id)
            views.append(view)
    return views
