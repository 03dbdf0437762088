"""DOM snapshots as recorded in Playwright traces (`frame-snapshot` events) to a resolved tree and to text.

A snapshot node is a text string, an element `["TAG", {attrs}, *children]`, or a reference
`[[back, index]]` to a node of an earlier snapshot of the same frame: `back` snapshots before this one,
`index` in that snapshot's post-order list of text and element nodes (references themselves not counted).
Unchanged subtrees are stored once that way, so a snapshot is only readable with its predecessors.
"""

from __future__ import annotations

import re

_SKIPPED = {"HEAD", "SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "META", "LINK", "BASE", "path", "defs", "use"}
_INLINE = {"SPAN", "B", "I", "EM", "STRONG", "CODE", "SMALL", "SUB", "SUP", "MARK", "ABBR", "KBD", "Q", "S", "U",
           "TIME", "FONT", "CITE", "DFN", "VAR", "SAMP", "BDI", "BDO", "WBR"}
_ROLES = {"button", "link", "checkbox", "radio", "tab", "menuitem", "textbox", "combobox", "switch", "option",
          "searchbox", "slider"}
_CONTROLS = {"A": "link", "BUTTON": "button", "TEXTAREA": "textbox", "SELECT": "combobox", "SUMMARY": "button"}
_MAX_DEPTH = 400  # deeper trees are cut rather than recursing without bound
_SPACE = re.compile(r"\s+")


def _post_order(html) -> list:
    nodes: list = []
    stack = [(html, False)]
    while stack:
        node, expanded = stack.pop()
        if isinstance(node, str):
            nodes.append(node)
        elif isinstance(node, list) and node and isinstance(node[0], str):
            if expanded:
                nodes.append(node)
            else:
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node[2:]))
    return nodes


class FrameSnapshots:
    """The snapshots of one frame, in recording order, with references resolved on demand."""

    def __init__(self):
        self.html: list = []
        self._nodes: dict[int, list] = {}

    def add(self, html) -> int:
        self.html.append(html)
        return len(self.html) - 1

    def _nodes_of(self, index: int) -> list:
        if index not in self._nodes:
            self._nodes[index] = _post_order(self.html[index])
        return self._nodes[index]

    def resolve(self, index: int):
        """Snapshot `index` as a plain tree (strings and `[TAG, attrs, *children]`); dangling references drop."""

        def visit(node, at: int, depth: int):
            if isinstance(node, str):
                return node
            if not isinstance(node, list) or not node or depth > _MAX_DEPTH:
                return None
            if isinstance(node[0], str):
                attrs = node[1] if len(node) > 1 and isinstance(node[1], dict) else {}
                children = (visit(child, at, depth + 1) for child in node[2:])
                return [node[0], attrs, *(c for c in children if c is not None)]
            ref = node[0]
            if isinstance(ref, list) and len(ref) == 2 and all(isinstance(v, int) for v in ref):
                target = at - ref[0]
                if 0 <= target <= at:
                    nodes = self._nodes_of(target)
                    if 0 <= ref[1] < len(nodes):
                        return visit(nodes[ref[1]], target, depth + 1)
            return None

        return visit(self.html[index], index, 0)


def _collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _inner_text(node, depth: int = 0) -> str:
    if isinstance(node, str):
        return node
    if not isinstance(node, list) or node[0] in _SKIPPED or depth > _MAX_DEPTH:
        return ""
    attrs = node[1]
    if node[0] == "IMG":
        return attrs.get("alt") or ""
    return " ".join(_inner_text(child, depth + 1) for child in node[2:])


def _quote(text: str, limit: int = 200) -> str:
    text = _collapse(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return '"' + text.replace('"', '\\"') + '"'


def title_of(tree) -> str | None:
    """The document's <TITLE> text."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list) and node and isinstance(node[0], str):
            if node[0] == "TITLE":
                return _collapse(_inner_text(["T", {}, *node[2:]])) or None
            stack.extend(reversed(node[2:]))
    return None


def render(tree) -> str:
    """Visible text and controls in document order, one per line: `link "Docs" -> /docs`, `button "Go"`,
    `textbox "q" value="..."`, `heading1 "..."`, `img "alt"`, and runs of plain text."""
    lines: list[str] = []
    buffer: list[str] = []

    def flush():
        text = _collapse(" ".join(buffer))
        buffer.clear()
        if text:
            lines.append(_quote(text, 500))

    def visit(node, depth: int):
        if isinstance(node, str):
            buffer.append(node)
            return
        if not isinstance(node, list) or depth > _MAX_DEPTH:
            return
        tag, attrs = node[0], node[1]
        if tag in _SKIPPED or "hidden" in attrs or attrs.get("aria-hidden") == "true":
            return
        role = attrs.get("role")
        if tag == "INPUT":
            flush()
            kind = attrs.get("type", "text")
            if kind == "hidden":
                return
            value = attrs.get("__playwright_value_", attrs.get("value"))
            label = attrs.get("aria-label") or attrs.get("placeholder") or attrs.get("name") or ""
            parts = [f"input[{kind}]", _quote(label)]
            if value:
                parts.append(f"value={_quote(value)}")
            if "__playwright_checked_" in attrs or "checked" in attrs:
                parts.append("{checked}")
            lines.append(" ".join(parts))
            return
        control = _CONTROLS.get(tag) or (role if role in _ROLES else None)
        if control:
            flush()
            label = _inner_text(node) or attrs.get("aria-label") or attrs.get("title") or ""
            line = f"{control} {_quote(label)}"
            if tag == "A" and attrs.get("href"):
                line += f" -> {attrs['href']}"
            lines.append(line)
            return
        if tag in ("H1", "H2", "H3", "H4", "H5", "H6"):
            flush()
            lines.append(f"heading{tag[1]} {_quote(_inner_text(node))}")
            return
        if tag == "IMG":
            if attrs.get("alt"):
                flush()
                lines.append(f"img {_quote(attrs['alt'])}")
            return
        block = tag not in _INLINE
        if block:
            flush()
        for child in node[2:]:
            visit(child, depth + 1)
        if block:
            flush()

    visit(tree, 0)
    flush()
    return "\n".join(lines)
