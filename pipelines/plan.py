"""Ingest planning: find the input units each format claims, then pack them into size-balanced tasks.

The plan is deterministic for a given input (units sorted, packed in order), so a task's id, a hash of what
it reads, is the same on a rerun: that is what lets a rerun skip finished tasks.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import posixpath
from dataclasses import dataclass, field
from functools import partial

import fsspec
from fsspec.implementations.local import LocalFileSystem

from ingest import registry
from ingest.source import regular_file
from ingest.unread import DIAGNOSE_BYTES, why_unread
from schemas import SCHEMA_VERSION

HEAD_BYTES = 4096
# Heads read while formats claim files, kept so that the next format asking for the same file does not read
# it again (seven formats look at every JSON file before DroidBot claims its runs); at most this many (256
# MiB): a million JSON files held every head (2.5 GB of planning at 10 GB of DroidBot runs). Past the bound
# the oldest are read again when asked for: planning such a root costs ~1.35x its CPU, memory stays flat.
HEADS_KEPT = 65_536
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


def _files(fs, root: str, skipped: list[Ignored]) -> dict[str, dict]:
    """Every regular file under `root` (or `root` itself) with its size and modification time, in path order;
    what is not read (FIFOs, devices, links out of the input) goes to `skipped`."""
    if fs.isfile(root):
        return {root: fs.info(root)}
    if isinstance(fs, LocalFileSystem):  # os.scandir: fsspec's per-file info costs ~25 us a file
        found = {}
        for dirpath, _, names in os.walk(root):  # os.walk does not descend into linked directories
            for name in names:
                path = posixpath.join(dirpath, name)
                st, reason = regular_file(root, path)
                if reason:
                    skipped.append(Ignored(path, None, f"skipped: {reason}"))
                else:
                    found[path] = {"name": path, "size": st.st_size, "mtime": st.st_mtime}
        return dict(sorted(found.items()))
    return {p: info for p, info in sorted(fs.find(root, detail=True).items()) if info.get("type") == "file"}


def _local_head(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        return os.read(fd, HEAD_BYTES)
    finally:
        os.close(fd)


def _read_start(fs, path: str, size: int = DIAGNOSE_BYTES) -> bytes:
    with fs.open(path, "rb") as f:
        return f.read(size)


def _under(ordered: list[str], directory: str) -> list[str]:
    """The paths of sorted `ordered` inside `directory`, by binary search."""
    prefix = directory.rstrip("/") + "/"
    start = bisect.bisect_left(ordered, prefix)
    end = bisect.bisect_left(ordered, prefix[:-1] + chr(ord("/") + 1))
    return ordered[start:end]


def _fingerprint(infos: list[dict]) -> str:
    h = hashlib.sha256()
    for info in infos:
        h.update(f"{info['name']}\0{info.get('size')}\0{info.get('mtime') or info.get('LastModified')}\n".encode())
    return h.hexdigest()


def find_units(input_specs: list[str], formats: list[str]) -> tuple[list[Unit], list[Ignored]]:
    """Units of every input, each file claimed by at most one format (the first in `formats` wins)."""
    modules = [(name, registry.load(name)) for name in formats]
    units: list[Unit] = []
    ignored: list[Ignored] = []
    for spec in input_specs:
        fs, roots = _roots(spec)
        for root in roots:
            files = _files(fs, root, ignored)
            root_is_file = fs.isfile(root)
            base = posixpath.dirname(root) if root_is_file else root
            root_name = posixpath.basename(root) or "input"
            heads: dict[str, bytes] = {}  # insertion order: the oldest first
            # a file is asked for by several formats once its head is gone: a local one is read with two
            # system calls (the listing refused links and special files), not through fsspec's opener
            read_head = _local_head if isinstance(fs, LocalFileSystem) else partial(_read_start, fs, size=HEAD_BYTES)

            def head(path: str) -> bytes:
                found = heads.get(path)
                if found is None:
                    found = read_head(path)
                    if len(heads) >= HEADS_KEPT:
                        del heads[next(iter(heads))]
                    heads[path] = found
                return found

            remaining = dict(files)
            for name, module in modules:
                ordered = sorted(remaining)
                for unit_path in module.units(ordered, head):
                    if unit_path in remaining:  # a file unit
                        claimed = [unit_path]
                    else:  # a directory unit: everything under it not claimed yet
                        claimed = [p for p in _under(ordered, unit_path) if p in remaining]
                    infos = [remaining.pop(p) for p in claimed]
                    rel = "" if root_is_file else posixpath.relpath(unit_path, base)
                    uri = posixpath.normpath(posixpath.join(root_name, rel))
                    units.append(Unit(name, unit_path, uri, sum(i.get("size") or 0 for i in infos),
                                      _fingerprint(infos), spec, base))
            ignored.extend(Ignored(p, remaining[p].get("size"), why_unread(p, remaining[p].get("size"), partial(
                _read_start, fs, p))) for p in sorted(remaining))
    return units, ignored


def pack(units: list[Unit], task_bytes: int) -> list[Task]:
    """Greedy packing in uri order: a task closes once it holds `task_bytes`; small files share tasks."""
    tasks: list[Task] = []
    current: list[Unit] = []

    def close():
        if not current:
            return
        h = hashlib.sha256(f"schema{SCHEMA_VERSION}".encode())
        for u in current:
            version = registry.load(u.format).VERSION
            h.update(f"{u.format}/{version}\0{u.uri}\0{u.fingerprint}\n".encode())
        tasks.append(Task(h.hexdigest()[:24], list(current)))
        current.clear()

    for unit in sorted(units, key=lambda u: (u.uri, u.format)):
        current.append(unit)
        if sum(u.size for u in current) >= task_bytes:
            close()
    close()
    return tasks
