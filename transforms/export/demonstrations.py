"""`{demonstrations}` of the system prompts that have it (mcp, swe): example tool calls and their results the
world model matches formats against ("If demonstrations show the format for this tool -> match that format
exactly").

`export --demonstrations N` draws N example transitions (one tool call, the result it got) for each
trajectory from other trajectories of the same domain in the dataset: never from the trajectory itself, only
from the train split (a record never shows another split's observations), the tools the trajectory calls
first, then others, chosen by a seeded hash (the same for the same dataset and `--seed`).
`--demonstrations FILE` writes a JSON object's text for its domain (`{"mcp": "...", "swe": "..."}`) as given.

The block is laid out as the reference prompts' own few-shot examples (the terminal and search prompts):
`# Few-shot Examples`, then `## Example k` / `### Turn 1` / `**Action:**` with the action in the domain's form
/ `**Environment Observation:**` and the result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import xxhash

from transforms import agentworld

# the domains whose system prompt has the placeholder
DOMAINS = tuple(d for d in agentworld.DOMAINS if "{demonstrations}" in agentworld.system_prompt_template(d))
# a result longer than this is no example: a demonstration shows a format, the prompt stays short
MAX_RESULT_CHARS = 2000
# candidates kept per (domain, tool) in the pool: enough to draw from without the trajectory's own
PER_TOOL = 8


@dataclass(frozen=True)
class Example:
    episode_id: str
    step_id: str
    tool: str
    action: dict  # schema-v1 action struct
    result: str


def parse(value: str | None) -> tuple[int | None, Path | None]:
    """(count, None) for `N`, (None, path) for a FILE; (None, None) when not asked. ValueError when neither."""
    if value is None or value == "":
        return None, None
    if value.isdigit():
        return int(value), None
    path = Path(value)
    if not path.is_file():
        raise ValueError(f"--demonstrations {value!r} is neither a count nor a file")
    return None, path


def from_file(path: Path) -> dict[str, str]:
    """The demonstrations text per domain a file gives: a JSON object of domain -> text."""
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{path}: demonstrations must be a JSON object of domain -> text")
    unknown = sorted(set(value) - set(DOMAINS))
    if unknown:
        raise ValueError(f"{path}: no demonstrations in the prompts of {', '.join(unknown)} "
                         f"(only {', '.join(DOMAINS)})")
    return value


def tool_of(action: dict) -> str:
    call = agentworld.tool_call(action)
    return call[0] if call else action.get("kind") or "message"


def _rank(seed: str, *keys: str) -> int:
    return xxhash.xxh64_intdigest("\x1f".join((seed, *keys)).encode())


def choose(pool: list[Example], episode_id: str, tools: list[str], n: int, seed: str) -> list[Example]:
    """n examples for a trajectory (`episode_id`, calling `tools` in order of first use) from its domain's
    `pool`: none of its own; one per tool in turn, its own tools first, then the others by seeded hash."""
    by_tool: dict[str, list[Example]] = {}
    for example in pool:
        if example.episode_id != episode_id:
            by_tool.setdefault(example.tool, []).append(example)
    for examples in by_tool.values():
        examples.sort(key=lambda e: (_rank(seed, episode_id, e.step_id), e.step_id))
    order = [t for t in dict.fromkeys(tools) if t in by_tool]
    order += sorted((t for t in by_tool if t not in order), key=lambda t: (_rank(seed, episode_id, t), t))
    chosen: list[Example] = []
    depth = 0
    while len(chosen) < n and any(len(by_tool[t]) > depth for t in order):
        chosen += [by_tool[t][depth] for t in order if len(by_tool[t]) > depth][: n - len(chosen)]
        depth += 1
    return chosen


def render(domain: str, examples: list[Example]) -> str:
    """The `{demonstrations}` text of `examples` (empty for none)."""
    if not examples:
        return ""
    parts = ["\n---\n\n# Few-shot Examples\n\nBelow are examples of tool calls from other sessions and their "
             "real responses:\n"]
    for k, example in enumerate(examples, 1):
        parts.append(f"\n## Example {k}\n### Turn 1\n{agentworld.action_block(example.action, domain)}\n"
                     f"{agentworld.OBSERVATION_MARKER}\n{example.result}\n")
    return "".join(parts)
