"""Search-agent tool calls, whatever container they arrive in (MCP sessions, ATIF, AgentWorldBench...).

Search agents call `web_search` (`{"query": str}` or `{"queries": [str]}`) and `web_extractor` (`{"url": str}`).
A search result observation is a list of blocks

    [1] https://example.com/page
    Title: Page Title
    Snippet: Brief description...
    Date: Jan 1, 2024

which `parse_results` turns into `[{"index", "url", "title", "snippet", "date"}]`; readers store that list in
the observation's `ui_tree` as `{"results": [...]}` (the text stays verbatim: it is what a world model
predicts). A `Date: N/A` becomes `date: null`.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

import orjson

SEARCH_TOOLS = frozenset({"web_search", "web_extractor", "search", "google_search", "bing_search"})

_BLOCK_HEAD = re.compile(r"^\[(\d+)\]\s+(\S+)\s*$", re.MULTILINE)
_FIELD = re.compile(r"^(Title|Snippet|Date):\s?(.*)$")


def is_search_tool(name: str | None) -> bool:
    if type(name) is str:  # a log names a few tools many times: each name is split once
        return _is_search_name(name)
    return bool(name) and name.rsplit("/", 1)[-1].rsplit(".", 1)[-1] in SEARCH_TOOLS


@functools.lru_cache(maxsize=4096)
def _is_search_name(name: str) -> bool:
    return bool(name) and name.rsplit("/", 1)[-1].rsplit(".", 1)[-1] in SEARCH_TOOLS


def episode_domain(tool_names, default: str) -> str:
    """`search` when the agent's tool calls are mostly search tools, else `default`."""
    names = [n for n in tool_names if n]
    try:  # each distinct name asked once: a long log calls a few tools many times
        searches = sum(count for name, count in Counter(names).items() if is_search_tool(name))
    except TypeError:  # a name that is no key (a malformed log's object)
        searches = sum(is_search_tool(n) for n in names)
    if names and searches * 2 >= len(names):
        return "search"
    return default


def parse_results(text: str | None) -> list[dict] | None:
    """The `[n] url / Title / Snippet / Date` blocks of a search result text; None when it has none.

    Field lines may wrap: a line that starts no new field continues the previous one.
    """
    if not text:
        return None
    heads = list(_BLOCK_HEAD.finditer(text))
    if not heads:
        return None
    results = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        item = {"index": int(head.group(1)), "url": head.group(2), "title": None, "snippet": None, "date": None}
        current = None
        for line in text[head.end():end].strip("\n").splitlines():
            m = _FIELD.match(line)
            if m:
                current = m.group(1).lower()
                item[current] = m.group(2).strip()
            elif current and line.strip() and not line.startswith("```"):
                item[current] = f"{item[current]} {line.strip()}".strip()
        if item["date"] in ("N/A", ""):
            item["date"] = None
        if item["title"] is None and item["snippet"] is None:
            continue  # a bare "[1] word" line in prose, not a result block
        results.append(item)
    return results or None


def results_tree(tool_name: str | None, text: str | None) -> str | None:
    """`{"results": [...]}` as a JSON string for a search tool's result text, else None."""
    if not is_search_tool(tool_name):
        return None
    results = parse_results(text)
    return orjson.dumps({"results": results}).decode() if results else None
