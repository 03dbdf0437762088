"""An episode's license when its reader found none in the data: the nearest license statement beside the input.

From the unit's folder up to the input root, each folder is looked at once for
- a `PROVENANCE.md` (the layout of this project's `samples/`): the bullet that names the unit (its path from
  that folder, or its file name, in backticks), else the `## ` section holding that bullet, else the file's
  `License:` line; the first SPDX identifier found there is the license. A statement that names none ("same
  as this repository") says nothing: the search goes on upward;
- a `LICENSE`, `LICENSE.md`, `LICENSE.txt` or `COPYING` file: its text recognized (MIT, Apache-2.0, BSD,
  GPL, ...), else `other` (a license exists, but not one this module names).
Nothing found: None, and `pipelines publish` names the source as unlicensed. Each folder costs five `lstat`s
(on an object store five HEAD requests), once per ingest task (`FolderCache`); a local folder whose directory
is small (`_LISTED_BYTES`: a few hundred names) is listed instead, one read where five probes cost ~2.5x as much
(a unit's own folder, one a unit, is most of them), and only the names its listing holds are looked at: a
folder of a million files is not scanned. A folder unit its reader listed already costs none: its listing names
its files.
"""

from __future__ import annotations

import posixpath
import re

from fsspec.implementations.local import LocalFileSystem

from ingest.source import Source, regular_file

PROVENANCE = "PROVENANCE.md"
LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING")
# SPDX identifiers as people write them in prose; longest first so "BSD-3-Clause" wins over a shorter match
SPDX = ("Apache-2.0", "BSD-3-Clause", "BSD-2-Clause", "CC-BY-SA-4.0", "CC-BY-NC-4.0", "CC-BY-4.0", "CC0-1.0",
        "AGPL-3.0", "LGPL-3.0", "LGPL-2.1", "GPL-3.0", "GPL-2.0", "MPL-2.0", "ODC-By-1.0", "Unlicense", "ISC",
        "MIT")
# as SPDX spells them: "mit" in prose is a word, not a license
_SPDX_RE = re.compile(r"(?<![\w-])(" + "|".join(re.escape(s) for s in SPDX) + r")(?![\w-])")
_LICENSE_LINE = re.compile(r"^\s*(?:-\s*)?(?:\*\*)?License:?(?:\*\*)?:?\s*(.+)$", re.IGNORECASE | re.MULTILINE)
# the opening words of license texts, in the order they are tried
_TEXTS = (("Apache-2.0", ("apache license", "version 2.0")), ("MIT", ("permission is hereby granted, free of charge",)),
          ("BSD-3-Clause", ("redistribution and use", "neither the name")),
          ("BSD-2-Clause", ("redistribution and use",)), ("AGPL-3.0", ("gnu affero general public license",)),
          ("LGPL-3.0", ("gnu lesser general public license",)), ("GPL-3.0", ("gnu general public license",
                                                                              "version 3")),
          ("GPL-2.0", ("gnu general public license", "version 2")), ("MPL-2.0", ("mozilla public license",)),
          ("ISC", ("permission to use, copy, modify, and/or distribute",)),
          ("Unlicense", ("this is free and unencumbered software",)))
_MAX_BYTES = 1 << 20  # a license statement is small; anything bigger is not read
_LISTED_BYTES = 1 << 14  # a local folder whose directory file is at most this big is listed, not probed by name


def spdx_in(text: str) -> str | None:
    """The first SPDX identifier named in `text` (spelled as SPDX spells it)."""
    match = _SPDX_RE.search(text)
    if match is None:
        return None
    return match.group(1)


def spdx_of_text(text: str) -> str:
    """The license a LICENSE file's text is, by its wording; `other` when none is recognized."""
    head = " ".join(text[:4000].lower().split())
    for spdx, words in _TEXTS:
        if all(w in head for w in words):
            return spdx
    return spdx_in(text[:400]) or "other"


def _bullet(lines: list[str], at: int) -> str:
    """The Markdown list item holding line `at` (from its `- ` line to the next item, heading or blank)."""
    start = at
    while start > 0 and not lines[start].lstrip().startswith("- ") and lines[start - 1].strip() \
            and not lines[start - 1].startswith("#"):
        start -= 1
    end = at + 1
    while end < len(lines) and lines[end].strip() and not lines[end].lstrip().startswith(("- ", "#")):
        end += 1
    return "\n".join(lines[start:end])


def _section_heading(lines: list[str], at: int) -> str:
    for i in range(at, -1, -1):
        if lines[i].startswith("## "):
            return lines[i]
    return ""


def from_provenance(text: str, rel: str) -> str | None:
    """The license a PROVENANCE.md states for the unit at `rel` (its path from the file's folder)."""
    lines = text.splitlines()
    names = [f"`{rel}`", f"`{posixpath.basename(rel)}`"] if rel else []
    for i, line in enumerate(lines):
        if any(n in line for n in names):
            found = spdx_in(_bullet(lines, i)) or spdx_in(_section_heading(lines, i))
            if found:
                return found
    for match in _LICENSE_LINE.finditer(text):
        found = spdx_in(match.group(1))
        if found:
            return found
    return None


class FolderCache:
    """What each folder holds (its PROVENANCE.md text, its LICENSE file's license), read once per task."""

    def __init__(self):
        self.provenance: dict[str, str | None] = {}
        self.license_file: dict[str, str | None] = {}


def _read_small(source: Source, path: str) -> str | None:
    """The file's text; None when it is absent, not a regular file, or too big for a license statement."""
    try:
        if isinstance(source.fs, LocalFileSystem):
            st, refused = regular_file(source.root, path)
            size = None if refused is not None or st is None else st.st_size
        else:  # an object store: one HEAD a name (once per folder and task)
            size = source.size(path)
    except (OSError, ValueError):
        return None
    if size is None or size > _MAX_BYTES:
        return None
    return source.read_path(path).decode("utf-8", "replace")


def _folder(source: Source, folder: str, cache: FolderCache,
            names: frozenset[str] | None = None) -> tuple[str | None, str | None]:
    """`names`: the folder's entries when its unit's reader listed it already; a name not among them is not
    looked for (what the listing leaves out, `_read_small` refuses too): a run's own folder costs no `lstat`."""
    if folder not in cache.provenance:
        if names is None:
            names = _small_listing(source, folder)
        wanted = (PROVENANCE, *LICENSE_FILES) if names is None else [n for n in (PROVENANCE, *LICENSE_FILES)
                                                                     if n in names]
        cache.provenance[folder] = _read_small(source, posixpath.join(folder, PROVENANCE)) \
            if PROVENANCE in wanted else None
        found = None
        for name in LICENSE_FILES:
            if name not in wanted:
                continue
            text = _read_small(source, posixpath.join(folder, name))
            if text is not None:
                found = spdx_of_text(text)
                break
        cache.license_file[folder] = found
    return cache.provenance[folder], cache.license_file[folder]


def _small_listing(source: Source, folder: str) -> frozenset[str] | None:
    """Which of the statement files' names a small local folder holds (its listing's names compared without
    case, as a filesystem that ignores case finds them by name), or None: a large folder, an object store."""
    if not isinstance(source.fs, LocalFileSystem):
        return None
    try:
        if source.size(folder) > _LISTED_BYTES:
            return None
        held = {name.lower() for name in source.names_in(folder)}
    except (OSError, ValueError):
        return None
    return frozenset(name for name in (PROVENANCE, *LICENSE_FILES) if name.lower() in held)


def license_of(source: Source, cache: FolderCache) -> str | None:
    """The license stated beside `source`'s unit (see the module docstring), None when none is."""
    if source.root is None:
        return None  # no input root to stop at
    root = posixpath.normpath(source.root)
    # a folder unit its reader listed (a nonempty listing: a file unit lists nothing) names its own files
    own = source.listed() or None
    folder = posixpath.normpath(source.path if own or source.is_dir() else posixpath.dirname(source.path))
    names = own
    while folder == root or folder.startswith(root.rstrip("/") + "/"):
        provenance, license_file = _folder(source, folder, cache, names)
        names = None  # the folders above: looked at by name
        if provenance is not None:
            rel = posixpath.relpath(source.path, folder)
            found = from_provenance(provenance, "" if rel == "." else rel)
            if found:
                return found
        if license_file:
            return license_file
        if folder == root:
            break
        folder = posixpath.dirname(folder)
    return None
