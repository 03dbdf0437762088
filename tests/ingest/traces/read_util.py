"""Reading a trace file with a trace reader, as the ingest runner does (through `Source`)."""

from __future__ import annotations

from pathlib import Path

from fsspec.implementations.local import LocalFileSystem

from ingest.record import Episode, Rejected
from ingest.source import Source


def read(module, path: Path) -> tuple[list[Episode], list[Rejected]]:
    records = list(module.read(Source(fs=LocalFileSystem(), path=str(path), uri=f"in/{path.name}",
                                      put_blob=lambda *a: "sha256:0")))
    return [r for r in records if isinstance(r, Episode)], [r for r in records if isinstance(r, Rejected)]


def claims(module, path: Path) -> bool:
    head = path.read_bytes()[:4096]
    return module.units([str(path)], lambda _: head) == [str(path)]


def calls(ep: Episode) -> list[tuple[str, dict | None]]:
    """(tool, arguments) of each tool call; None where the source recorded no arguments."""
    import json

    return [(s.action.tool_name, None if s.action.arguments is None else json.loads(s.action.arguments))
            for s in ep.steps if s.action.kind == "tool_call"]


def results(ep: Episode) -> list[str]:
    """What came back after each tool call: the next step's observation, or the final one."""
    out = []
    for i, step in enumerate(ep.steps):
        if step.action.kind == "tool_call":
            after = ep.steps[i + 1].observation if i + 1 < len(ep.steps) else ep.final_observation
            out.append(after.text if after else None)
    return out
