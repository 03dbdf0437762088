"""Ingest planning: find the input units each format claims, then pack them into size-balanced tasks.

The plan is deterministic for a given input (units sorted, packed in order), so a task's id, a hash of what
it reads, is the same on a rerun: that is what lets a rerun skip finished tasks.

A format whose reader reads files beside its unit (screenshots its document names, a sibling folder of the
run) declares them with a `members(units, files, head)` hook in its module, called once per range with the
units it found there: {unit: [path, ...]}. A member is claimed with its unit (its size and fingerprint count
in the unit's), so it is neither listed as unread nor taken by a later format. A member given as
`(path, reason)` is a file of the run its reader does not read: claimed (no other format takes it) and
listed in `ignored_inputs` with that reason; a folder unit names so the files of its own folder it leaves.
The hook decides from the listing and the cached heads (layout rules), never by reading whole documents, so
planning stays a walk of the listing.

After the formats claim their units, one more step (`pipelines.infra.harness_files.attach`) gives the units of the
formats that read harness outcomes (SWE-bench reports, exit statuses) the unclaimed report files that may
grade them: `Unit.reports`, covered by the unit's fingerprint.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import posixpath
from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import partial

import fsspec
from fsspec.implementations.local import LocalFileSystem

from ingest import registry
from ingest.source import printable_path, regular_file, utf8_name
from ingest.text_encoding import decoded_head
from ingest.unread import DIAGNOSE_BYTES, why_unread
from pipelines.infra import harness_files
from schemas import SCHEMA_VERSION

HEAD_BYTES = 4096
# Heads read while formats claim files, kept so that the next format asking for the same file does not read
# it again (seven formats look at every JSON file before DroidBot claims its runs); at most this many (64
# MiB): a million JSON files held every head (2.5 GB of planning at 10 GB of DroidBot runs). The formats claim
# a range of folders of at most this many files before the next range (`_chunks`), so each head is read once
# whatever the input's size (one range of 95k files read each head 7 times: planning 2x slower).
HEADS_KEPT = 16_384
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class Unit:
    format: str
    path: str  # file or directory, in the input's filesystem
    uri: str  # "<input root name>/<path inside the input>"
    size: int
    fingerprint: str  # size and modification time of what the unit reads
    input_spec: str  # the --input it came from: workers reopen its filesystem from it
    root: str = ""  # the folder of that input it was found under: its reader reads nothing outside it
    reports: tuple[str, ...] = ()  # harness files that may decide its outcome (`pipelines.infra.harness_files`)
    members: tuple[str, ...] = ()  # files beside it that its reader reads (a format's `members` hook)


@dataclass
class Task:
    task_id: str
    units: list[Unit]

    @property
    def size(self) -> int:
        return sum(u.size for u in self.units)


@dataclass(frozen=True)
class Ignored:
    """An input file the run does not read, and why: no format claims it, or it is skipped unopened."""

    path: str
    size: int | None
    reason: str  # "no format reads it" (after "empty file; " or "truncated at byte N (...); "), or "skipped: <why>"

    def __str__(self) -> str:
        return f"{self.path} ({self.reason})"


@dataclass
class Plan:
    tasks: list[Task]
    ignored: list[Ignored] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(t.size for t in self.tasks)

    @property
    def num_units(self) -> int:
        return sum(len(t.units) for t in self.tasks)


class InputError(Exception):
    pass


def _roots(input_spec: str) -> tuple[fsspec.AbstractFileSystem, list[str]]:
    fs, path = fsspec.core.url_to_fs(input_spec)
    if _GLOB_CHARS & set(path):
        roots = sorted(fs.glob(path))
        if not roots:
            raise InputError(f"input {input_spec!r}: the pattern matches nothing")
        return fs, roots
    if not fs.exists(path):
        raise InputError(f"input {input_spec!r}: no such file or directory")
    return fs, [path.rstrip("/") or "/"]


class _Listing:
    """Every regular file under a root, in path order, with its size and modification time, and which of them
    a format has claimed. Held as a list of paths and two arrays (~160 bytes a file, where a dict of fsspec
    info dicts took ~450): at a million files the listing is most of what planning holds."""

    def __init__(self, rows: list[tuple[str, int | None, object]]):
        rows.sort(key=lambda r: r[0])
        self.paths = [r[0] for r in rows]
        self.sizes = array("q", (-1 if r[1] is None else r[1] for r in rows))
        stamps = [r[2] for r in rows]
        # local modification times are floats, kept as doubles (the same text in a fingerprint); an object
        # store's may be datetimes or strings
        self.mtimes = array("d", stamps) if all(isinstance(t, float) for t in stamps) else stamps
        self.claimed = bytearray(len(self.paths))
        self.not_read: dict[int, str] = {}  # claimed files of a run its reader does not read: why

    def index(self, path: str) -> int | None:
        i = bisect.bisect_left(self.paths, path)
        return i if i < len(self.paths) and self.paths[i] == path else None

    def size(self, i: int) -> int | None:
        return None if self.sizes[i] < 0 else self.sizes[i]

    def claim(self, paths: list[str]) -> list[int]:
        """The indices of `paths` not claimed yet, now claimed."""
        found = [i for i in map(self.index, paths) if i is not None and not self.claimed[i]]
        for i in found:
            self.claimed[i] = 1
        return found

    def total_size(self, indices: list[int]) -> int:
        """The bytes of these files (a size the filesystem did not give counts 0)."""
        sizes = self.sizes
        return sum([s for s in map(sizes.__getitem__, indices) if s > 0])

    def claim_range(self, lo: int, hi: int) -> list[int]:
        """The indices in [lo, hi) not claimed yet, now claimed (a folder unit: its files are one range of the
        sorted listing, so none is looked up by its path)."""
        claimed = self.claimed
        found = [i for i in range(lo, hi) if not claimed[i]]
        for i in found:
            claimed[i] = 1
        return found

    def fingerprint(self, indices: list[int]) -> str:
        # one text hashed at once: the same digest as a line at a time, without a hash call per file
        paths, sizes, mtimes = self.paths, self.sizes, self.mtimes
        text = "".join([f"{paths[i]}\0{None if sizes[i] < 0 else sizes[i]}\0{mtimes[i]}\n" for i in indices])
        return hashlib.sha256(text.encode()).hexdigest()


def _files(fs, root: str, skipped: list[Ignored]) -> _Listing:
    """Every regular file under `root` (or `root` itself); what is not read (FIFOs, devices, links out of the
    input) goes to `skipped`."""
    if fs.isfile(root):
        return _Listing([_row(root, fs.info(root))])
    if isinstance(fs, LocalFileSystem):  # os.scandir: fsspec's per-file info costs ~25 us a file
        return _Listing(_local_files(root, skipped))
    return _Listing([_row(p, info) for p, info in fs.find(root, detail=True).items() if info.get("type") == "file"])


def _local_files(root: str, skipped: list[Ignored]) -> list[tuple[str, int, float]]:
    """(path, size, mtime) of every regular file under the local folder `root`, in `os.walk`'s order (a
    folder's files, then its subfolders', top down), by `os.scandir`: a plain file is known by its directory
    entry and its `lstat` (what `regular_file` would find, one call); a link, a special file or a name that is
    not UTF-8 goes through `regular_file`. A linked folder is neither listed nor walked (as `os.walk` does not)."""
    found = []
    folders = [root]
    while folders:
        try:
            with os.scandir(folders.pop()) as listing:
                entries = list(listing)
        except OSError:  # unreadable: os.walk passes it by too
            continue
        below = []
        for entry in entries:
            if _is_dir(entry, follow_symlinks=False):
                below.append(entry.path)
            elif entry.is_file(follow_symlinks=False) and utf8_name(entry.path):
                st = entry.stat(follow_symlinks=False)
                found.append((entry.path, st.st_size, st.st_mtime))
            elif not (entry.is_symlink() and _is_dir(entry)):
                st, reason = regular_file(root, entry.path)
                if reason:
                    skipped.append(Ignored(printable_path(entry.path), None, f"skipped: {reason}"))
                else:
                    found.append((entry.path, st.st_size, st.st_mtime))
        folders += reversed(below)
    return found


def _is_dir(entry: os.DirEntry, follow_symlinks: bool = True) -> bool:
    try:  # as os.walk asks: an entry whose type cannot be found is no folder
        return entry.is_dir(follow_symlinks=follow_symlinks)
    except OSError:
        return False


def _row(path: str, info: dict) -> tuple[str, int | None, object]:
    return path, info.get("size"), info.get("mtime") or info.get("LastModified")


def _local_head(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        return os.read(fd, HEAD_BYTES)
    finally:
        os.close(fd)


def _read_start(fs, path: str, size: int = DIAGNOSE_BYTES) -> bytes:
    with fs.open(path, "rb") as f:
        return f.read(size)


def find_units(input_specs: list[str], formats: list[str]) -> tuple[list[Unit], list[Ignored]]:
    """Units of every input, each file claimed by at most one format (the first in `formats` wins), in
    (uri, format) order."""
    modules = [(name, registry.load(name)) for name in formats]
    units: list[Unit] = []
    ignored: list[Ignored] = []
    for spec in input_specs:
        fs, roots = _roots(spec)
        for root in roots:
            files = _files(fs, root, ignored)
            root_is_file = fs.isfile(root)
            base = posixpath.dirname(root) if root_is_file else root
            # a file is asked for by several formats once its head is gone: a local one is read with two
            # system calls (the listing refused links and special files), not through fsspec's opener
            read_head = _local_head if isinstance(fs, LocalFileSystem) else partial(_read_start, fs, size=HEAD_BYTES)
            whole = [(0, len(files.paths))]
            head = _head_cache(read_head)
            claims = None if root_is_file else _claim(modules, files, _chunks(files.paths, 0, len(files.paths), root),
                                                      head)
            if claims is None:  # a unit reached past its chunk: the formats look at the whole listing
                files.claimed, files.not_read = bytearray(len(files.paths)), {}
                claims = _claim(modules, files, whole, head)
            takes = {name for name, module in modules if getattr(module, "TAKES_HARNESS_REPORTS", False)}
            reports = harness_files.attach(files.paths, files.claimed, [(n, p) for n, p, _, _ in claims], takes, head)
            root_name = posixpath.basename(root) or "input"
            report_paths: dict[tuple[int, ...], tuple[str, ...]] = {}  # one tuple per set of reports
            for (name, unit_path, claimed, beside), found in zip(claims, reports):
                rel = "" if root_is_file else posixpath.relpath(unit_path, base)
                uri = posixpath.normpath(posixpath.join(root_name, rel))
                if found not in report_paths:
                    report_paths[found] = tuple(files.paths[i] for i in found)
                units.append(Unit(name, unit_path, uri, files.total_size(claimed),
                                  files.fingerprint(claimed + list(found)), spec, base, report_paths[found],
                                  tuple(files.paths[i] for i in beside)))
            ignored.extend(Ignored(p, files.size(i), why_unread(p, files.size(i), partial(_read_start, fs, p)))
                           for i, p in enumerate(files.paths) if not files.claimed[i])
            ignored.extend(Ignored(files.paths[i], files.size(i), why) for i, why in sorted(files.not_read.items()))
    units.sort(key=lambda u: (u.uri, u.format))
    return units, ignored


def _head_cache(read_head):
    """`head(path)`: a file's first bytes (as UTF-8 when the file is JSON in another Unicode encoding:
    `ingest.text_encoding`), the last HEADS_KEPT of them kept (formats ask in path order)."""
    heads: OrderedDict[str, bytes] = OrderedDict()  # the oldest first

    def head(path: str) -> bytes:
        found = heads.get(path)
        if found is None:
            found = decoded_head(read_head(path))  # JSON in UTF-16 and the like is claimed by its text
            if len(heads) >= HEADS_KEPT:  # popitem, not del d[next(iter(d))]: a plain dict
                heads.popitem(last=False)  # scans the holes its deletions leave (quadratic)
            heads[path] = found
        return found

    return head


def _chunks(paths: list[str], lo: int, hi: int, folder: str) -> list[tuple[int, int]]:
    """Index ranges of sorted `paths[lo:hi]` (all under `folder`) for the formats to claim one at a time, each
    at most HEADS_KEPT files where the tree allows: whole subfolders of a folder that holds no file of its own,
    packed in order; a larger subfolder split the same way. Every format walks a range before the next one
    does, so its heads are read once, not once per format (seven formats read every JSON file's head: past
    HEADS_KEPT files each read it again). A folder holding files is never split, so what a format decides
    from a folder's own files and subfolders (a trial's `results.json` beside `sessions/`) it sees at once."""
    prefix = folder.rstrip("/") + "/"
    if hi - lo <= HEADS_KEPT or any("/" not in paths[i][len(prefix):] for i in range(lo, hi)):
        return [(lo, hi)]
    chunks: list[tuple[int, int]] = []
    start = i = lo
    while i < hi:
        child = prefix + paths[i][len(prefix):].split("/", 1)[0]
        end = bisect.bisect_left(paths, child + "0", i, hi)  # "0" sorts right after "/": past the subfolder
        if end - i > HEADS_KEPT:
            chunks += [(start, i)] if i > start else []
            chunks += _chunks(paths, i, end, child)
            start = end
        elif end - start > HEADS_KEPT:
            chunks.append((start, i))
            start = i
        i = end
    return chunks + ([(start, hi)] if hi > start else [])


def _claim(modules, files: _Listing, chunks: list[tuple[int, int]], head
           ) -> list[tuple[str, str, list[int], list[int]]] | None:
    """(format, unit path, indices of the files it claims, those of them that are its members) of each unit the
    formats find, range by range; None when a range gave a folder unit that holds files outside it (the formats
    must see the whole listing: a run whose subfolders fell in different ranges)."""
    found = []
    for lo, hi in chunks:
        for name, module in modules:
            ordered = _unclaimed(files, lo, hi)
            unit_paths = module.units(ordered, head)
            hook = getattr(module, "members", None)
            members = hook(unit_paths, ordered, head) if hook is not None and unit_paths else {}
            for unit_path in unit_paths:
                # a file unit, or a directory unit: everything under it not claimed yet
                if files.index(unit_path) is not None:
                    claimed = files.claim([unit_path])
                else:
                    inside = _under_range(files.paths, unit_path)
                    if inside[0] < inside[1] and (inside[0] < lo or inside[1] > hi):
                        return None
                    claimed = files.claim_range(*inside)
                beside = _claim_members(files, members[unit_path], name, unit_path, claimed) \
                    if unit_path in members else []
                found.append((name, unit_path, claimed + beside, beside))
    return found


def _unclaimed(files: _Listing, lo: int, hi: int) -> list[str]:
    """The paths in [lo, hi) no format has claimed: the range's slice while none is claimed (the formats before
    the one that takes the range), nothing once all are (those after it)."""
    if files.claimed.find(1, lo, hi) < 0:
        return files.paths[lo:hi]
    if files.claimed.find(0, lo, hi) < 0:
        return []
    return [files.paths[i] for i in range(lo, hi) if not files.claimed[i]]


def _claim_members(files: _Listing, members, name: str, unit_path: str, claimed: list[int]) -> list[int]:
    """Claims a unit's members (see the module docstring): the indices of those its reader reads; those it does
    not read are kept in `files.not_read` with their reason, and a folder unit's own file named so leaves
    `claimed` (its size and fingerprint count what the reader reads)."""
    read = files.claim([m for m in members if isinstance(m, str)])
    unread = [m for m in members if not isinstance(m, str)]
    own = set(claimed) if unread and files.index(unit_path) is None else set()
    left = set()
    for path, why in unread:
        i = files.index(path)
        if i is None or not (i in own or not files.claimed[i]):
            continue
        files.claimed[i] = 1
        files.not_read[i] = (f"part of the {name} run {printable_path(posixpath.basename(unit_path))}, which "
                             f"does not read it: {why}")
        left.add(i)
    if left & own:
        claimed[:] = [i for i in claimed if i not in left]
    return read


def _under_range(ordered: list[str], directory: str) -> tuple[int, int]:
    prefix = directory.rstrip("/") + "/"
    return (bisect.bisect_left(ordered, prefix), bisect.bisect_left(ordered, prefix[:-1] + chr(ord("/") + 1)))


def pack(units: list[Unit], task_bytes: int) -> list[Task]:
    """Greedy packing in uri order: a task closes once it holds `task_bytes`; small files share tasks."""
    tasks: list[Task] = []
    current: list[Unit] = []
    versions: dict[str, str] = {}  # format -> its reader's VERSION, looked up once

    def close():
        if not current:
            return
        h = hashlib.sha256(f"schema{SCHEMA_VERSION}".encode())
        for u in current:
            version = versions.get(u.format) or versions.setdefault(u.format, registry.load(u.format).VERSION)
            h.update(f"{u.format}/{version}\0{u.uri}\0{u.fingerprint}\n".encode())
        tasks.append(Task(h.hexdigest()[:24], list(current)))
        current.clear()

    held = 0  # bytes in `current`, kept as it grows (summed again per unit, a task of small units cost its square)
    for unit in sorted(units, key=lambda u: (u.uri, u.format)):
        current.append(unit)
        held += unit.size
        if held >= task_bytes:
            close()
            held = 0
    close()
    return tasks
