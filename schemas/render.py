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


_LISTED = INTERACTIVE_FLAGS + ("text", "content_description")  # a view with one of these set gets a line
_LINE_FLAGS = INTERACTIVE_FLAGS + STATE_FLAGS  # in the order a line lists them, "disabled" last


def _quoted(text: str) -> str:
    """`repr_text(text)`, its checks inline for the common text (one printable line, no quote, not cut): a
    screen has a line per listed view, and most texts need no change."""
    if text.isprintable() and len(text) <= 200 and "  " not in text and '"' not in text:
        return '"' + text + '"'
    return repr_text(text)


def _view_line(node_id, view: dict) -> str:
    get = view.get
    cls = get("class") or "View"
    line = f"[{node_id}] {cls[cls.rfind('.') + 1:]}"  # the class's last dotted part
    text, desc, rid = get("text"), get("content_description"), get("resource_id")
    if text:
        line += " " + _quoted(text)
    if desc:
        line += " desc=" + _quoted(desc)
    if rid:
        line += " id=" + rid.split(":id/", 1)[-1]
    flags = list(filter(get, _LINE_FLAGS))  # the flags the view has set, in C: no loop per flag here
    if not get("enabled", True):
        flags.append("disabled")
    if flags:
        line += " {" + ",".join(flags) + "}"
    bounds = get("bounds")
    if bounds:
        (x1, y1), (x2, y2) = bounds
        line += f" @[{x1},{y1}][{x2},{y2}]"
    return line


def _roots(views: list[dict]) -> tuple[list[tuple], dict | None]:
    """(the walk's stack: the root views' (id, depth 0), the first on top; the id -> view dict, or None when
    every view's id is its list position, as DroidBot numbers them: then the list is the look-up)."""
    stack: list[tuple] = []
    positional = True
    for i, view in enumerate(views):
        node_id = view.get("temp_id", i)
        if node_id != i:
            positional = False
        if view.get("parent", -1) == -1:
            stack.append((node_id, 0))
    stack.reverse()
    return stack, None if positional else {view.get("temp_id", i): view for i, view in enumerate(views)}


def render_android_screen(views: list[dict], header: str | None = None) -> str:
    """An Android view hierarchy as text: visible views that carry text or can be acted on, indented under
    their nearest listed ancestor; layout-only containers are left out (their descendants move up a level).

    `views` is the flat list every Android reader stores in `observation.ui_tree` (DroidBot's shape):
    `temp_id`, `parent` (-1 for a root), `children`, `bounds` [[x1, y1], [x2, y2]] in pixels, `class`, `text`,
    `content_description`, `resource_id`, and boolean flags (`clickable`, `visible`, `enabled`, ...).
    """
    stack, by_id = _roots(views)
    n = len(views)
    lines = [header] if header else []
    seen: set = set()
    # bound once: the loop below runs for every view of every screen
    pop, push, mark, add_line, listed = stack.pop, stack.append, seen.add, lines.append, _LISTED
    while stack:
        node_id, depth = pop()
        if by_id is None:
            try:
                view = views[node_id] if 0 <= node_id < n else None
            except TypeError:  # not an int: look it up as the dict would (1.0 finds view 1, "x" finds none)
                view = dict(enumerate(views)).get(node_id)
        else:
            view = by_id.get(node_id)
        if view is None or node_id in seen:
            continue
        get = view.get
        if get("visible") is False:
            continue
        mark(node_id)  # guards against cycles in malformed parent/child links
        # one flat test: most views are layout-only and skip the line formatting entirely
        if any(map(get, listed)):
            add_line("  " * depth + _view_line(node_id, view))
            depth += 1
        children = get("children")
        if children:
            if len(children) == 1:  # the common case, and layout chains are long: no list to build
                push((children[0], depth))
            else:
                stack.extend([(child, depth) for child in reversed(children)])
    return "\n".join(lines)
