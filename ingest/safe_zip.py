"""Reading zip and gzip data from untrusted input without letting it escape or explode.

An archive is refused as a whole, before any member is read, when a member name is absolute or climbs out
(`../`), when a member is a symbolic link, when it holds too many members, when the declared sizes exceed
the limits, or when a member's compression ratio is that of a zip bomb. Reads are bounded again while
decompressing, so an archive whose headers lie about sizes is stopped too.

Refusals raise `SourceError` with one of these rules:
- `unsafe_archive_path`: absolute path, `..` component, drive letter, NUL byte or symlink member;
- `archive_too_large`: too many members, a member or the total over the size limits, or a zip-bomb ratio;
- `bad_archive`: not a zip / gzip, corrupt, or encrypted.
"""

from __future__ import annotations

import io
import stat
import zipfile
import zlib
from dataclasses import dataclass

from ingest.source import SourceError


@dataclass(frozen=True)
class Limits:
    max_members: int = 10_000
    max_member_bytes: int = 512 << 20  # uncompressed
    max_total_bytes: int = 2 << 30  # uncompressed, all members together
    max_ratio: float = 200.0  # uncompressed / compressed, for members large enough to matter
    ratio_min_bytes: int = 1 << 20  # tiny members (JSON, text) compress far better than 200:1 legitimately


DEFAULT_LIMITS = Limits()
_CHUNK = 1 << 20


def unsafe_member_name(name: str) -> bool:
    """True for names that would land outside an extraction folder: absolute, `..`, drive letters, NUL."""
    normal = name.replace("\\", "/")
    if not normal or "\0" in normal or normal.startswith("/") or (len(normal) > 1 and normal[1] == ":"):
        return True
    return any(part == ".." for part in normal.split("/"))


class SafeZip:
    """A zip archive held in memory, checked on open; `read(name)` decompresses one member with bounds."""

    def __init__(self, data: bytes, where: str, limits: Limits = DEFAULT_LIMITS):
        self.where, self.limits = where, limits
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError) as e:
            raise SourceError("bad_archive", f"{where}: not a readable zip archive ({e})") from None
        infos = self._zip.infolist()
        if len(infos) > limits.max_members:
            raise SourceError("archive_too_large",
                              f"{where}: {len(infos)} members exceeds the limit of {limits.max_members}")
        total = 0
        for info in infos:
            self._check_member(info)
            total += info.file_size
        if total > limits.max_total_bytes:
            raise SourceError("archive_too_large", f"{where}: members declare {total} bytes uncompressed, "
                              f"over the limit of {limits.max_total_bytes}")
        self._infos = {info.filename: info for info in infos if not info.is_dir()}
        self._read_total = 0

    def _check_member(self, info: zipfile.ZipInfo) -> None:
        where, limits = self.where, self.limits
        if unsafe_member_name(info.filename):
            raise SourceError("unsafe_archive_path",
                              f"{where}: member {info.filename!r} has an absolute or parent-relative path",
                              info.filename)
        if stat.S_ISLNK(info.external_attr >> 16):
            raise SourceError("unsafe_archive_path", f"{where}: member {info.filename!r} is a symbolic link",
                              info.filename)
        if info.flag_bits & 0x1:
            raise SourceError("bad_archive", f"{where}: member {info.filename!r} is encrypted", info.filename)
        if info.file_size > limits.max_member_bytes:
            raise SourceError("archive_too_large", f"{where}: member {info.filename!r} declares "
                              f"{info.file_size} bytes, over the limit of {limits.max_member_bytes}", info.filename)
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size >= limits.ratio_min_bytes and ratio > limits.max_ratio:
            raise SourceError("archive_too_large", f"{where}: member {info.filename!r} expands {ratio:.0f}:1 "
                              f"({info.compress_size} -> {info.file_size} bytes), a zip bomb", info.filename)

    def names(self) -> list[str]:
        """File members (no directories), in archive order."""
        return list(self._infos)

    def has(self, name: str) -> bool:
        return name in self._infos

    def read(self, name: str) -> bytes:
        """The member's bytes; never more than its declared size nor the limits, whatever the headers say."""
        info = self._infos.get(name)
        if info is None:
            raise SourceError("missing_file", f"{self.where}: no member {name!r}", name)
        cap = min(info.file_size, self.limits.max_member_bytes)
        out = bytearray()
        try:
            with self._zip.open(info) as member:
                while chunk := member.read(_CHUNK):
                    out += chunk
                    if len(out) > cap or self._read_total + len(out) > self.limits.max_total_bytes:
                        raise SourceError("archive_too_large",
                                          f"{self.where}: member {name!r} expands past its declared size "
                                          f"or the archive limit", name)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
            raise SourceError("bad_archive", f"{self.where}: member {name!r} is corrupt ({e})", name) from None
        self._read_total += len(out)
        return bytes(out)


def gunzip(data: bytes, where: str, max_bytes: int = DEFAULT_LIMITS.max_member_bytes,
           max_ratio: float = DEFAULT_LIMITS.max_ratio) -> bytes:
    """Decompress gzip data, refusing output over `max_bytes` or a bomb-like ratio past 1 MiB."""
    decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    try:
        out += decomp.decompress(data, max_bytes + 1)
        while decomp.unconsumed_tail and len(out) <= max_bytes:
            out += decomp.decompress(decomp.unconsumed_tail, max_bytes + 1 - len(out))
    except zlib.error as e:
        raise SourceError("bad_archive", f"{where}: not valid gzip data ({e})", where) from None
    if len(out) > max_bytes:
        raise SourceError("archive_too_large", f"{where}: expands past {max_bytes} bytes", where)
    if len(out) >= DEFAULT_LIMITS.ratio_min_bytes and len(out) / max(len(data), 1) > max_ratio:
        raise SourceError("archive_too_large",
                          f"{where}: expands {len(out) / max(len(data), 1):.0f}:1 ({len(data)} -> {len(out)} "
                          f"bytes), a gzip bomb", where)
    if not decomp.eof:
        raise SourceError("bad_archive", f"{where}: gzip data is truncated", where)
    return bytes(out)
