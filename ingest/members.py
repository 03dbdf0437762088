"""Helpers for a format's `members(units, files, head)` hook (`pipelines.plan`): the files beside a unit its
reader reads, found in planning's sorted listing by bisection, so a hook costs a lookup per unit, not a scan."""

from __future__ import annotations

import bisect


def with_prefix(files: list[str], prefix: str) -> list[str]:
    """The paths of sorted `files` that start with `prefix` (a folder's files: `prefix` ends with "/")."""
    start = bisect.bisect_left(files, prefix)
    end = bisect.bisect_left(files, prefix + "\U0010ffff", start)
    return files[start:end]


def holds(files: list[str], path: str) -> bool:
    """Whether sorted `files` holds `path`."""
    at = bisect.bisect_left(files, path)
    return at < len(files) and files[at] == path
