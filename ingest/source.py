"""`Source`: one input unit (a file or a directory) as a format reader sees it."""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field
from typing import Callable

import fsspec

# put_blob(data, media_type, source_uri) -> "sha256:<hex>"; injected by the runner so readers stay I/O-free
PutBlob = Callable[[bytes, str, str], str]

MAX_FILE_BYTES = 2 << 30  # a single raw file larger than this is refused, not read into memory


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

    def join(self, rel: str) -> str:
        return posixpath.join(self.path, rel) if rel else self.path

    def read_bytes(self, rel: str = "") -> bytes:
        """Read a file of the unit (the unit itself when rel is empty); feeds the unit's sha256."""
        path = self.join(rel)
        try:
            size = self.fs.size(path)
        except FileNotFoundError:
            raise SourceError("missing_file", f"{rel or path}: file not found", rel or None) from None
        if size is not None and size > MAX_FILE_BYTES:
            raise SourceError("file_too_large", f"{rel or path}: {size} bytes exceeds {MAX_FILE_BYTES}", rel)
        with self.fs.open(path, "rb") as f:
            data = f.read()
        self._digest.update(rel.encode() + b"\0" + data)
        return data

    def exists(self, rel: str) -> bool:
        return self.fs.exists(self.join(rel))

    def listdir(self, rel: str = "") -> list[str]:
        """Names (not paths) of the entries of a directory of the unit, sorted."""
        base = self.join(rel)
        if not self.fs.isdir(base):
            return []
        return sorted(posixpath.basename(p.rstrip("/")) for p in self.fs.ls(base, detail=False))

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
