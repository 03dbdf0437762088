"""`Source`: one input unit (a file or a directory) as a format reader sees it."""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
from dataclasses import dataclass, field
from typing import Callable

import fsspec
from fsspec.implementations.local import LocalFileSystem

# put_blob(data, media_type, source_uri) -> "sha256:<hex>"; injected by the runner so readers stay I/O-free
PutBlob = Callable[[bytes, str, str], str]

MAX_FILE_BYTES = 2 << 30  # a single raw file larger than this is refused, not read into memory


def _too_large(path: str, size: int) -> "SourceError":
    return SourceError("file_too_large", f"{path}: {size} bytes exceeds the {MAX_FILE_BYTES} byte limit", path)


def _read_local(path: str, rel: str) -> bytes:
    # os.open/os.read rather than open(): no buffered file object, ~5 us less a file (a run reads ~100 a MB)
    # O_NONBLOCK: opening a FIFO must not wait forever for a writer; anything but a regular file is refused
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SourceError("not_a_regular_file", f"{rel or path}: not a regular file (FIFO, device or socket)",
                              rel or path)
        size = st.st_size
        if size > MAX_FILE_BYTES:
            raise _too_large(rel or path, size)
        data = os.read(fd, size + 1)
        if len(data) == size:  # the usual case: one read returns the whole file
            return data
        chunks = [data]  # a short read, or a file that changed since fstat: read on to the end
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class SourceError(Exception):
    """A problem with the input itself (missing file, too large...); becomes a quarantine row."""

    def __init__(self, rule: str, reason: str, location: str | None = None):
        super().__init__(reason)
        self.rule, self.reason, self.location = rule, reason, location


@dataclass
class Source:
    fs: fsspec.AbstractFileSystem
    path: str  # the unit: a file, or a directory for directory formats
    uri: str  # stable identity: "<input root name>/<path inside the input>"
    put_blob: PutBlob
    _digest: "hashlib._Hash" = field(default_factory=hashlib.sha256, repr=False)
    _listings: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)

    def join(self, rel: str) -> str:
        return posixpath.join(self.path, rel) if rel else self.path

    def read_bytes(self, rel: str = "") -> bytes:
        """Read a file of the unit (the unit itself when rel is empty); feeds the unit's sha256."""
        path = self.join(rel)
        try:
            if isinstance(self.fs, LocalFileSystem):  # skips fsspec's per-call overhead on the hot path
                data = _read_local(path, rel)
            else:
                size = self.fs.size(path)
                if size is not None and size > MAX_FILE_BYTES:
                    raise _too_large(rel or path, size)
                with self.fs.open(path, "rb") as f:
                    data = f.read()
        except FileNotFoundError:
            raise SourceError("missing_file", f"{rel or path}: file not found", rel or None) from None
        self._digest.update(rel.encode() + b"\0")
        self._digest.update(data)  # not concatenated: that would copy every file once more
        return data

    def exists(self, rel: str) -> bool:
        parent, name = posixpath.split(rel)
        return name in self._listing(parent)

    def listdir(self, rel: str = "") -> list[str]:
        """Names (not paths) of the entries of a directory of the unit, sorted."""
        return sorted(self._listing(rel))

    def _listing(self, rel: str) -> frozenset[str]:
        if rel not in self._listings:
            base = self.join(rel)
            try:
                if isinstance(self.fs, LocalFileSystem):
                    names = os.listdir(base) if os.path.isdir(base) else []
                else:
                    names = self.fs.ls(base, detail=False) if self.fs.isdir(base) else []
            except FileNotFoundError:
                names = []
            self._listings[rel] = frozenset(posixpath.basename(p.rstrip("/")) for p in names)
        return self._listings[rel]

    def sha256(self) -> str:
        """Digest of every file read so far, with their names: the unit's content identity."""
        return self._digest.hexdigest()


def parse_json(data: bytes, where: str):
    """orjson.loads with an error that names the file and the position."""
    import orjson

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise SourceError("parse_error", f"{where}: invalid JSON: {e}", where) from None
