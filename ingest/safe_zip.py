"""Reading zip and gzip data from untrusted input without letting it escape or explode.

An archive is refused as a whole, before any member is read, when a member name is absolute or climbs out
(`../`), when a member is a symbolic link, when it holds too many members, when the declared sizes exceed
the limits, or when a member's compression ratio is that of a zip bomb. Reads are bounded again while
decompressing, so an archive whose headers lie about sizes is stopped too.

Zstandard members (zip method 93, what Inspect AI's `.eval` logs use since Python's zipfile cannot read them
before 3.14) are decompressed by pyarrow's zstd codec into a buffer of exactly the declared size: a member that
expands further fails, and its CRC-32 is checked.

gzip data is inflated as a stream, at most 1 MiB at a time, with the absolute cap and the ratio checked after
every piece: a bomb is refused after about `ratio_min_bytes` of output, never after inflating the whole cap.
Every member of a multi-member gzip file is read (as `zcat` does); zero padding after the last member is
ignored; other trailing bytes are refused, or reported through `notes` when the caller passes a list.

The caps are `ingest.source.Budgets` (`decompressed_bytes`, `archive_bytes`, `archive_members`,
`compression_ratio`); each refusal names the budget it hit and how to raise it. Refusals raise `SourceError`
with one of these rules:
- `unsafe_archive_path`: absolute path, `..` component, drive letter, NUL byte or symlink member;
- `archive_too_large`: too many members, a member or the total over the size limits, or a zip-bomb ratio;
- `bad_archive`: not a zip / gzip, corrupt, truncated, encrypted, or followed by trailing bytes.
"""

from __future__ import annotations

import io
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass

from ingest.source import BudgetExceeded, Budgets, SourceError, default_budgets


@dataclass(frozen=True)
class Limits:
    max_members: int = 10_000
    max_member_bytes: int = 512 << 20  # uncompressed
    max_total_bytes: int = 2 << 30  # uncompressed, all members together
    max_ratio: float = 200.0  # uncompressed / compressed, for members large enough to matter
    ratio_min_bytes: int = 1 << 20  # tiny members (JSON, text) compress far better than 200:1 legitimately

    @classmethod
    def from_budgets(cls, budgets: Budgets) -> "Limits":
        return cls(max_members=budgets.archive_members, max_member_bytes=budgets.decompressed_bytes,
                   max_total_bytes=budgets.archive_bytes, max_ratio=budgets.compression_ratio)


DEFAULT_LIMITS = Limits()
_CHUNK = 1 << 20  # output per inflate call
_FEED = 1 << 18  # input per inflate call: the unconsumed tail zlib copies stays this small
_GZIP_MAGIC = b"\x1f\x8b"
ZIP_ZSTANDARD = 93  # the zip compression method id of Zstandard (APPNOTE 4.4.5)


def unsafe_member_name(name: str) -> bool:
    """True for names that would land outside an extraction folder: absolute, `..`, drive letters, NUL."""
    normal = name.replace("\\", "/")
    if not normal or "\0" in normal or normal.startswith("/") or (len(normal) > 1 and normal[1] == ":"):
        return True
    return any(part == ".." for part in normal.split("/"))


class SafeZip:
    """A zip archive held in memory, checked on open; `read(name)` decompresses one member with bounds."""

    def __init__(self, data: bytes, where: str, limits: Limits | None = None):
        limits = limits or Limits.from_budgets(default_budgets())
        self.where, self.limits, self._data = where, limits, data
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError) as e:
            raise SourceError("bad_archive", f"{where}: not a readable zip archive ({e})") from None
        infos = self._zip.infolist()
        if len(infos) > limits.max_members:
            raise BudgetExceeded("archive_members", limits.max_members, where, f"{len(infos)} members",
                                 rule="archive_too_large")
        total = 0
        for info in infos:
            self._check_member(info)
            total += info.file_size
        if total > limits.max_total_bytes:
            raise BudgetExceeded("archive_bytes", limits.max_total_bytes, where,
                                 f"members declare {total} bytes uncompressed", rule="archive_too_large")
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
            raise BudgetExceeded("decompressed_bytes", limits.max_member_bytes, where,
                                 f"member {info.filename!r} declares {info.file_size} bytes",
                                 rule="archive_too_large", location=info.filename)
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size >= limits.ratio_min_bytes and ratio > limits.max_ratio:
            raise BudgetExceeded("compression_ratio", limits.max_ratio, where,
                                 f"member {info.filename!r} expands {ratio:.0f}:1 ({info.compress_size} -> "
                                 f"{info.file_size} bytes), a zip bomb", rule="archive_too_large",
                                 location=info.filename)

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
        if info.compress_type == ZIP_ZSTANDARD:
            return self._read_zstd(info)
        cap = min(info.file_size, self.limits.max_member_bytes)
        out = bytearray()
        try:
            with self._zip.open(info) as member:
                while chunk := member.read(_CHUNK):
                    out += chunk
                    if len(out) > cap:
                        if cap < self.limits.max_member_bytes:
                            raise SourceError("archive_too_large", f"{self.where}: member {name!r} expands past "
                                              f"its declared size of {info.file_size} bytes", name)
                        raise BudgetExceeded("decompressed_bytes", cap, self.where, f"member {name!r} expands "
                                             "further", rule="archive_too_large", location=name)
                    if self._read_total + len(out) > self.limits.max_total_bytes:
                        raise BudgetExceeded("archive_bytes", self.limits.max_total_bytes, self.where,
                                             f"members read so far and {name!r} expand further",
                                             rule="archive_too_large", location=name)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
            raise SourceError("bad_archive", f"{self.where}: member {name!r} is corrupt ({e})", name) from None
        self._read_total += len(out)
        return bytes(out)

    def _read_zstd(self, info: zipfile.ZipInfo) -> bytes:
        """A Zstandard member: its raw bytes after the local header, decompressed into its declared size."""
        import pyarrow as pa

        name, start = info.filename, info.header_offset
        header = self._data[start:start + 30]
        if len(header) < 30 or header[:4] != b"PK\x03\x04":
            raise SourceError("bad_archive", f"{self.where}: member {name!r} has no local header", name)
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        begin = start + 30 + name_len + extra_len
        raw = self._data[begin:begin + info.compress_size]
        if self._read_total + info.file_size > self.limits.max_total_bytes:
            raise BudgetExceeded("archive_bytes", self.limits.max_total_bytes, self.where,
                                 f"members read so far and {name!r} expand further", rule="archive_too_large",
                                 location=name)
        try:
            out = pa.Codec("zstd").decompress(raw, decompressed_size=info.file_size).to_pybytes()
        except (OSError, ValueError, pa.ArrowException) as e:
            raise SourceError("bad_archive", f"{self.where}: member {name!r} is corrupt or expands past its "
                              f"declared size of {info.file_size} bytes ({e})", name) from None
        if zlib.crc32(out) != info.CRC:
            raise SourceError("bad_archive", f"{self.where}: member {name!r} fails its CRC-32 check", name)
        self._read_total += len(out)
        return out


def gunzip(data: bytes, where: str, max_bytes: int | None = None, max_ratio: float | None = None, *,
           budgets: Budgets | None = None, notes: list[str] | None = None,
           cap_name: str = "decompressed_bytes") -> bytes:
    """Decompress gzip data (every member), refusing output over `max_bytes` (default: the
    `decompressed_bytes` budget; `cap_name` is the budget a refusal names) or, past 1 MiB of output, a ratio
    over `max_ratio` (default: the `compression_ratio` budget; `float("inf")` turns it off); both are checked
    while inflating.

    Raises SourceError: `archive_too_large` (a budget, named), `bad_archive` (not gzip, corrupt, truncated,
    or trailing bytes that are neither zero padding nor another member, unless `notes` is a list: then one
    line saying so is appended to it and the members read are returned).
    """
    budgets = budgets or default_budgets()
    max_bytes = budgets.decompressed_bytes if max_bytes is None else max_bytes
    max_ratio = budgets.compression_ratio if max_ratio is None else max_ratio
    view = memoryview(data)
    out: list[bytes] = []
    produced = 0
    pos = 0  # start of the current member in `data`
    members = 0
    while True:
        decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
        members += 1
        fed = pos
        try:
            while not decomp.eof and fed < len(data):
                piece = view[fed:fed + _FEED]
                fed += len(piece)
                while True:
                    chunk = decomp.decompress(piece, _CHUNK)
                    piece = decomp.unconsumed_tail
                    produced += len(chunk)
                    out.append(chunk)
                    if produced > max_bytes:
                        raise BudgetExceeded(cap_name, max_bytes, where, "the gzip data expands further",
                                             rule="archive_too_large")
                    consumed = fed - len(piece) - len(decomp.unused_data)
                    if produced >= DEFAULT_LIMITS.ratio_min_bytes and produced > max_ratio * max(consumed, 1):
                        raise BudgetExceeded("compression_ratio", max_ratio, where,
                                             f"the gzip data expands {produced / max(consumed, 1):.0f}:1 "
                                             f"({consumed} -> {produced} bytes so far), a gzip bomb",
                                             rule="archive_too_large")
                    if decomp.eof or (not piece and len(chunk) < _CHUNK):
                        break
        except zlib.error as e:
            raise SourceError("bad_archive", f"{where}: not valid gzip data ({e})", where) from None
        if not decomp.eof:
            raise SourceError("bad_archive", f"{where}: gzip data is truncated"
                              + (f" (member {members})" if members > 1 else ""), where)
        pos = fed - len(decomp.unused_data)
        rest = view[pos:]
        if not rest or not bytes(rest).strip(b"\0"):  # the end, or zero padding as gzip itself allows
            break
        if bytes(rest[:2]) != _GZIP_MAGIC:
            message = f"{where}: {len(rest)} bytes of trailing data after the gzip data (offset {pos})"
            if notes is None:
                raise SourceError("bad_archive", message, where)
            notes.append(message + "; ignored")
            break
    return b"".join(out)
