"""Helpers for a format's `members(units, files, head)` hook (`pipelines.infra.plan`): the files beside a unit its
reader reads, found in planning's sorted listing by bisection, so a hook costs a lookup per unit, not a scan."""

from __future__ import annotations

import bisect
import posixpath
from typing import Callable

# license statements (`ingest.licenses` reads them beside any unit for its episodes' license): never named as
# a run's unread files
_LICENSE_FILES = ("PROVENANCE.md", "LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING")


def with_prefix(files: list[str], prefix: str) -> list[str]:
    """The paths of sorted `files` that start with `prefix` (a folder's files: `prefix` ends with "/")."""
    start = bisect.bisect_left(files, prefix)
    end = bisect.bisect_left(files, prefix + "\U0010ffff", start)
    return files[start:end]


def holds(files: list[str], path: str) -> bool:
    """Whether sorted `files` holds `path`."""
    at = bisect.bisect_left(files, path)
    return at < len(files) and files[at] == path


def unread_in(folder: str, files: list[str], reads: Callable[[str], bool], why) -> list[tuple[str, str]]:
    """(path, reason) of the files of a folder unit its reader does not read: those under `folder` whose path
    inside it `reads` refuses (a license statement excepted); `why` is the reason, or a function of that path."""
    out = []
    for path in with_prefix(files, folder + "/"):
        rel = path[len(folder) + 1:]
        if not reads(rel) and posixpath.basename(rel) not in _LICENSE_FILES:
            out.append((path, why(rel) if callable(why) else why))
    return out
