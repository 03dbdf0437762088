"""`Source`: one input unit (a file or a directory) as a format reader sees it, with the `Budgets` its
decoders may spend.

Budgets: every decoder of untrusted input is bounded (`Budgets`, one instance per unit as `source.budgets`):
raw file size, gzip / zip output (absolute and ratio, checked while streaming), pickles (their size plus what
they ask to allocate, array sizes, memo fan-out, nesting depth, classes no reader lists), JSON depth, line length
and one record's size (`record_bytes`: a record over it is not decoded). A budget hit
raises `BudgetExceeded` (a `SourceError`, rule `budget_exceeded` unless the decoder keeps an older rule such
as `archive_too_large` or `file_too_large`), whose reason names the budget, its value and how to raise it:
the environment variable `TRAJFORGE_BUDGET_<NAME>` (sizes take KiB / MiB / GiB), read once per process, or
`Budgets.from_options({...})` where a caller builds the `Source`. `field_bytes` bounds one text value of a step
(checked by `ingest.arrow`); `text_lines` reads a line-oriented log within `line_bytes`; `parse_json` reports
nesting past orjson's fixed 1024 levels as the `json_depth` budget (it cannot be raised) and, given the budgets,
a document over `record_bytes` as that budget; `Source.open_stream` reads a file piece by piece (a streaming
parser then never holds the whole file).

Encodings: every read (`read_bytes`, `read_path`, `open_stream`) hands a JSON / JSON-lines file saved as UTF-16,
UTF-32 or UTF-8 with a byte-order mark to its reader as UTF-8 (`ingest.text_encoding`), the digest staying that of
the bytes as stored; `Source.decoded` says which files were decoded and how.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import os
import posixpath
import re
import stat
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping

import fsspec
from fsspec.implementations.local import LocalFileSystem

from ingest.text_encoding import CHUNK, SNIFF_BYTES, Decoded, Decoder, pieces_of, sniff, to_utf8

# put_blob(data, media_type, source_uri) -> "sha256:<hex>"; injected by the runner so readers stay I/O-free
PutBlob = Callable[[bytes, str, str], str]

ENV_PREFIX = "TRAJFORGE_BUDGET_"
JSON_MAX_DEPTH = 1024  # orjson's own nesting limit: fixed by the parser, so it cannot be raised


@dataclass(frozen=True)
class Budgets:
    """What decoding one input unit may cost. Defaults keep the decoders and the table build of any single
    input under ~2 GB (measured with tests/fuzz: a text value costs ~8x its size by the time its Parquet
    part is written, hence `field_bytes`; a whole-file format still holds its file, up to `file_bytes`)."""

    file_bytes: int = 2 << 30  # one raw file read into memory
    decompressed_bytes: int = 512 << 20  # one gzip stream (all its members) or one zip member, decompressed
    archive_bytes: int = 2 << 30  # all members of one zip archive together, decompressed
    archive_members: int = 10_000  # members of one zip archive
    compression_ratio: float = 200.0  # decompressed / compressed past 1 MiB (not pickles: screenshots compress more)
    pickle_bytes: int = 256 << 20  # a pickle (decompressed) plus the arrays and bytearrays it asks to allocate
    pickle_array_bytes: int = 256 << 20  # one array or bytearray a pickle asks to allocate
    pickle_items: int = 20_000_000  # references in the loaded value, a shared one counted at every use
    pickle_depth: int = 500  # nesting depth of the loaded value
    pickle_classes: int = 10_000  # distinct classes one pickle names that its reader does not list
    line_bytes: int = 1 << 20  # one line of a line-oriented text log
    field_bytes: int = 64 << 20  # one text value of a step (observation text, ui_tree, action raw...)
    # one record before it is decoded: a HAR entry, a JSONL line of a format that reads lines as records, a
    # whole-document format's document (its one record); decoding and the table build cost up to ~10x it
    record_bytes: int = 256 << 20

    @classmethod
    def from_options(cls, options: Mapping[str, object], base: "Budgets | None" = None) -> "Budgets":
        """`base` (the process defaults) with `options` ({name: int, float or "64MiB"}) applied; ValueError
        names an unknown budget or a bad value."""
        names = {f.name: f.type for f in dataclasses.fields(cls)}
        changes = {}
        for name, value in options.items():
            if name not in names:
                raise ValueError(f"unknown budget {name!r} (known: {', '.join(names)})")
            changes[name] = _parse_amount(name, value, float if name == "compression_ratio" else int)
        return dataclasses.replace(base or default_budgets(), **changes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Budgets":
        options = {f.name: environ[ENV_PREFIX + f.name.upper()] for f in dataclasses.fields(cls)
                   if ENV_PREFIX + f.name.upper() in environ}
        return cls.from_options(options, cls()) if options else cls()


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20, "mb": 1000 ** 2, "mib": 1 << 20,
          "g": 1 << 30, "gb": 1000 ** 3, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40}
_AMOUNT = re.compile(r"^\s*([0-9][0-9_]*(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def _parse_amount(name: str, value: object, kind: type) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = value
    else:
        m = _AMOUNT.match(str(value))
        if not m or m.group(2).lower() not in _UNITS:
            raise ValueError(f"budget {name}: {value!r} is not a number (sizes may end in KiB, MiB, GiB)")
        number = float(m.group(1).replace("_", "")) * _UNITS[m.group(2).lower()]
    if number <= 0:
        raise ValueError(f"budget {name}: {value!r} must be positive")
    return kind(number)


_DEFAULT: list[Budgets] = []


def default_budgets() -> Budgets:
    """The process's budgets: `Budgets()` with any `TRAJFORGE_BUDGET_<NAME>` variables applied (read once)."""
    if not _DEFAULT:
        _DEFAULT.append(Budgets.from_env())
    return _DEFAULT[0]


def human_bytes(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}" if n % size == 0 else f"{n / size:.1f} {unit}"
    return f"{n:g} bytes"


class SourceError(Exception):
    """A problem with the input itself (missing file, too large...); becomes a quarantine row."""

    def __init__(self, rule: str, reason: str, location: str | None = None):
        super().__init__(reason)
        self.rule, self.reason, self.location = rule, reason, location

    def as_rejected(self, record_id: str | None = None):
        """The quarantine row for a reader that goes on after it (`ingest.record.Rejected`)."""
        from ingest.record import Rejected

        return Rejected(self.rule, self.reason, self.location, record_id=record_id)


class BudgetExceeded(SourceError):
    """A decoder reached one of the `Budgets`; the reason names it, its value and how to raise it."""

    def __init__(self, budget: str, limit: float, where: str, what: str, rule: str = "budget_exceeded",
                 location: str | None = None):
        shown = f"{limit:g}" if budget in ("compression_ratio", "pickle_items", "pickle_depth", "pickle_classes",
                                                      "archive_members") \
            else human_bytes(limit)
        super().__init__(rule, f"{where}: {what}: over the {budget} budget of {shown} (raise it with "
                         f"{ENV_PREFIX}{budget.upper()}=<larger>)", location if location is not None else where)
        self.budget, self.limit, self.what = budget, limit, what


MAX_FILE_BYTES = Budgets.file_bytes  # the default of `Budgets.file_bytes`
DECODE_WHOLE_BYTES = 1 << 20  # a larger local file is sniffed first, and decoded as it is read when it must be


def _too_large(path: str, size: int, limit: int) -> SourceError:
    return BudgetExceeded("file_bytes", limit, path, f"the file has {size} bytes", rule="file_too_large")


def regular_file(root: str | None, path: str) -> tuple[os.stat_result | None, str | None]:
    """`path`'s stat if it is a regular file an input may hold, else why not: the one rule the walker
    (`pipelines.infra.plan`) and every read through `Source` apply. A FIFO would block its reader forever and a
    link to /dev/zero never ends, so only regular files count; a link may point only inside `root`. A name that
    is not UTF-8 (bytes Python keeps as surrogates) cannot be written into the lake's text columns: skipped."""
    if not utf8_name(path):
        return None, "its name is not UTF-8 text"
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        if (outside := _outside(root, path)) is not None:
            return None, f"a link to {outside}, outside the input"
        try:
            st = os.stat(path)
        except OSError:
            return None, "a broken link"
    if not stat.S_ISREG(st.st_mode):
        return None, _file_kind(st)
    return st, None


def utf8_name(path: str) -> bool:
    if path.isascii():  # most names: no encoded copy to make (the walker asks this of every file)
        return True
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_path(path: str) -> str:
    """`path` as text that can be stored: the bytes of a name that is not UTF-8 written as \\xNN escapes."""
    return path if utf8_name(path) else path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _outside(root: str | None, path: str) -> str | None:
    """Where `path` really leads when that is outside `root` (links resolved), else None."""
    if not root:
        return None
    target, real_root = os.path.realpath(path), os.path.realpath(root)
    return None if os.path.commonpath([real_root, target]) == real_root else target


class _RealPaths:
    """Where the files of one input really are, for `_read_local`: the root and each folder resolved once
    (a unit reads many files of few folders; resolving every path again cost ~13 lstat calls a file)."""

    def __init__(self, root: str | None):
        self.root = os.path.realpath(root) if root else None
        self._given = root.rstrip("/") if root else None
        self._dirs: dict[str, str] = {self._given: self.root} if root and self._given else {}

    def outside(self, path: str, st: os.stat_result) -> str | None:
        """Where `path` (whose lstat is `st`) leads when that is outside the root, else None."""
        if self.root is None:
            return None
        if stat.S_ISLNK(st.st_mode):
            return self.target_outside(os.path.realpath(path))
        folder, name = os.path.split(path)
        return self.target_outside(os.path.join(self.folder(folder), name))

    def folder(self, path: str) -> str:
        """`path` (a folder) resolved, once per folder: below the root, from its parent's resolution when its
        own name is no link (one lstat, not one a component of the whole path)."""
        found = self._dirs.get(path)
        if found is None:
            parent, name = os.path.split(path)
            if (self._given and parent.startswith(self._given) and name not in ("", ".", "..")
                    and not os.path.islink(path)):
                found = os.path.join(self.folder(parent), name)
            else:
                found = os.path.realpath(path)
            self._dirs[path] = found
        return found

    def target_outside(self, target: str) -> str | None:
        """`target` (a resolved path) when it is outside the root, else None."""
        if self.root is None:
            return None
        inside = target == self.root or target.startswith(self.root.rstrip("/") + "/")
        return None if inside else target


def _file_kind(st: os.stat_result) -> str:
    return ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
            else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file")


def _open_local(path: str, rel: str, limit: int, real: _RealPaths) -> tuple[int, int]:
    """(open fd, size) of a regular file inside the input within `limit` bytes; SourceError otherwise."""
    # refused here, not only by the walker: a reader that lists a folder or follows a name inside a file
    # must not reach what the walker refused (anything outside the input, a FIFO, a device)
    name = rel or path
    st = os.lstat(path)
    link = stat.S_ISLNK(st.st_mode)
    if (outside := real.outside(path, st)) is not None:
        raise SourceError("outside_input", f"{name}: leads to {outside}, outside the input; not read", name)
    if link:
        try:
            st = os.stat(path)
        except OSError:
            raise SourceError("not_a_regular_file", f"{name}: a broken link; not read", name) from None
    if not stat.S_ISREG(st.st_mode):  # never opened: a device may act on open, a FIFO wait for a writer
        raise SourceError("not_a_regular_file", f"{name}: {_file_kind(st)}; not read", name)
    return _opened(path, name, limit, follow=link)


def _open_listed(path: str, rel: str, limit: int) -> tuple[int, int]:
    """(open fd, size) of a file its folder's listing found a plain regular file (no link) in a folder inside
    the input: the folder's checks hold for it, so no lstat and no path resolving; what can change since the
    listing is refused at open (O_NOFOLLOW: now a link; fstat: now not a regular file; O_NONBLOCK: a FIFO
    does not wait), as `_open_local` refuses it after its lstat."""
    return _opened(path, rel or path, limit, follow=False)


def _opened(path: str, name: str, limit: int, follow: bool) -> tuple[int, int]:
    """(open fd, size) of a file checked as plain (or a link checked to lead to one: `follow`), refused if it
    changed since the check."""
    # os.open/os.read rather than open(): no buffered file object, ~5 us less a file (a run reads ~100 a MB).
    # O_NONBLOCK: a FIFO swapped in after the check must not wait for a writer; O_NOFOLLOW: a file checked as
    # plain is not swapped for a link before it is opened
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW))
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise SourceError("not_a_regular_file", f"{name}: became a link while read; not read", name) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SourceError("not_a_regular_file", f"{name}: {_file_kind(st)}; not read", name)
        if st.st_size > limit:
            raise _too_large(name, st.st_size, limit)
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def _read_local(path: str, rel: str, limit: int, real: _RealPaths, listed: bool = False,
                feed: Callable[[bytes], object] | None = None, where: str = "") -> tuple[bytes, Decoded | None]:
    """(the file's bytes, None), or for JSON in another Unicode encoding (`ingest.text_encoding`) the UTF-8 of its
    text and how it was decoded (a problem named by `where`); `feed` gets the bytes as stored (the unit's
    digest)."""
    fd, size = _open_listed(path, rel, limit) if listed else _open_local(path, rel, limit, real)
    try:
        if size > DECODE_WHOLE_BYTES:  # decoded as it is read: the raw file is never held whole beside its text
            found = sniff(os.pread(fd, SNIFF_BYTES, 0))
            if found is not None:
                return to_utf8(_fed(iter(lambda: os.read(fd, CHUNK), b""), feed), found, where or rel or path)
        data = _whole(fd, size)
    finally:
        os.close(fd)
    if feed is not None:
        feed(data)
    return _decoded(data, where or rel or path)


def _small_listed(path: str, rel: str, limit: int) -> bytes | None:
    """The bytes as stored of a file a listing found plain (`_open_listed`), or None when it has more than
    DECODE_WHOLE_BYTES (`_read_local` sniffs its start before reading it)."""
    fd, size = _open_listed(path, rel, limit)
    try:
        return None if size > DECODE_WHOLE_BYTES else _whole(fd, size)
    finally:
        os.close(fd)


def _whole(fd: int, size: int) -> bytes:
    data = os.read(fd, size + 1)
    if len(data) != size:  # a short read, or a file that changed since fstat: read on to the end
        chunks = [data]
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        data = b"".join(chunks)
    return data


def _decoded(data: bytes, where: str) -> tuple[bytes, Decoded | None]:
    found = sniff(data[:SNIFF_BYTES])
    return (data, None) if found is None else to_utf8(pieces_of(data), found, where)


def _fed(pieces: Iterator[bytes], feed: Callable[[bytes], object] | None) -> Iterator[bytes]:
    for piece in pieces:
        if feed is not None:
            feed(piece)
        yield piece


def _plain_relative(rel: str) -> bool:
    """Whether `rel` is a relative path of plain names (no empty, `.` or `..` part, no trailing slash): joined
    to a normalized folder, it is normalized as it stands."""
    return (not rel.startswith(("/", "./")) and not rel.endswith(("/", "/.")) and rel != "." and ".." not in rel
            and "//" not in rel and "/./" not in rel)


class Stream:
    """A file of a unit read piece by piece (`read(n)`, for a streaming parser), within the `file_bytes`
    budget as it reads. With `digest`, every byte feeds the unit's sha256; `close` reads what the parser left
    unread into it, so the digest is the same as `read_bytes` would give. JSON in another Unicode encoding than
    UTF-8 is read as the UTF-8 of its text (`ingest.text_encoding`), as `read_bytes` reads it; `on_decoded` is
    told how once the file is read to its end."""

    def __init__(self, raw, where: str, limit: int, digest=None, on_decoded=None):
        self._raw, self._where, self._limit, self._digest, self._done = raw, where, limit, digest, 0
        self._on_decoded = on_decoded
        self._held = b""  # bytes read to sniff the encoding, or decoded, not handed out yet
        self._decoder: Decoder | None = None
        self._sniffed = self._ended = False

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:  # the rest, in pieces: one read of the budget's size would allocate it
            return b"".join(iter(lambda: self.read(1 << 20), b""))
        if n == 0:
            return b""
        if not self._sniffed:
            self._sniff()
        if self._decoder is not None:
            while len(self._held) < n and not self._ended:
                raw = self._raw_read(max(n, 1 << 16))
                self._ended = not raw
                self._held += self._decoder.feed(raw, final=self._ended)
                if self._ended and self._on_decoded is not None:
                    self._on_decoded(self._decoder.result())
        elif not self._held:
            return self._raw_read(n)
        data, self._held = self._held[:n], self._held[n:]
        return data

    def _sniff(self) -> None:
        self._sniffed = True
        self._held = self._raw_read(SNIFF_BYTES)
        while 0 < len(self._held) < SNIFF_BYTES and (more := self._raw_read(SNIFF_BYTES - len(self._held))):
            self._held += more  # a short read: the sniff needs its bytes
        found = sniff(self._held)
        if found is not None:
            self._decoder = Decoder(found, self._where)
            self._held = self._decoder.feed(self._held[found.bom:])
            if self._on_decoded is not None:  # said now: a parser may stop before the end
                self._on_decoded(self._decoder.result())

    def _raw_read(self, n: int) -> bytes:
        data = self._raw.read(n)
        self._done += len(data)
        if self._done > self._limit:  # the file grew since it was sized
            raise _too_large(self._where, self._done, self._limit)
        if self._digest is not None:
            self._digest.update(data)
        return data

    def close(self) -> None:
        try:
            if self._digest is not None:
                while self._raw_read(1 << 20):
                    pass
        finally:
            self._raw.close()

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class Source:
    """One input unit, and the only way a reader opens input: every file it reads (the unit, a file it finds
    by listing a folder, a file named inside another) goes through `read_bytes`, `read_path` or `listdir`,
    which stay inside `root` (the input the unit came from), refuse what the walker refuses (links out of the
    input, FIFOs, devices: `regular_file`) and apply the size budget. `tests/test_layout.py` fails if a module
    under ingest/ opens a path another way."""

    fs: fsspec.AbstractFileSystem
    path: str  # the unit: a file, or a directory for directory formats
    uri: str  # stable identity: "<input root name>/<path inside the input>"
    put_blob: PutBlob
    budgets: Budgets = field(default_factory=default_budgets)
    root: str | None = None  # the input root (local inputs): nothing outside it is read; None: the unit's path
    # harness files planning found for the unit (`ingest.harness_reports`: SWE-bench reports, exit statuses),
    # read with `read_path`; `shared` holds what several units of one task decode once (a run report's ids)
    reports: tuple[str, ...] = ()
    shared: dict = field(default_factory=dict, repr=False)
    _digest: "hashlib._Hash" = field(default_factory=hashlib.sha256, repr=False)
    _listings: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _real: _RealPaths | None = field(default=None, repr=False)
    # paths of the files listings found plain regular files (no link) in folders inside the input: read
    # without their own checks (`_open_listed`)
    _plain: set[str] = field(default_factory=set, repr=False)
    _normalized: str | None = field(default=None, repr=False)  # `path` normalized, once `join` needs it
    # the files read (by their path in the unit, "" the unit itself) that were JSON in another Unicode encoding
    # than UTF-8, and how each was decoded (`ingest.text_encoding`)
    decoded: dict[str, Decoded] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.root is None and isinstance(self.fs, LocalFileSystem):
            self.root = self.path if os.path.isdir(self.path) else posixpath.dirname(self.path)

    def join(self, rel: str) -> str:
        if not rel:
            return self.path
        if _plain_relative(rel):  # a name or a path of names (every file a run folder's reader reads): what
            base = self._normalized  # normpath would give, without splitting and joining both paths again
            if base is None:
                base = self._normalized = posixpath.normpath(self.path)
            if base.startswith("/"):
                return base + "/" + rel if base != "/" else "/" + rel
        return posixpath.normpath(posixpath.join(self.path, rel))

    def read_bytes(self, rel: str = "") -> bytes:
        """Read a file of the unit (the unit itself when rel is empty); feeds the unit's sha256."""
        return self._read(self.join(rel), rel)

    def read_path(self, path: str) -> bytes:
        """Read a file beside the unit by its path in the input's filesystem (e.g. a folder of screenshots
        next to a JSONL file): the same guards as `read_bytes`, and it must lie inside the input root. It is
        not the unit's own content, so it does not feed the unit's sha256."""
        return self._read(posixpath.normpath(path), posixpath.relpath(path, posixpath.dirname(self.path)),
                          digest=False)

    def open_stream(self, rel: str = "") -> Stream:
        """A file of the unit (the unit itself when rel is empty) to read piece by piece, with the guards of
        `read_bytes`; it feeds the unit's sha256. Use it as a context manager."""
        path = self.join(rel)
        try:
            if isinstance(self.fs, LocalFileSystem):
                fd, _ = _open_local(path, rel, self.budgets.file_bytes, self._real_paths())
                raw = os.fdopen(fd, "rb", buffering=0)
            else:
                size = self.fs.size(path)
                if size is not None and size > self.budgets.file_bytes:
                    raise _too_large(rel or path, size, self.budgets.file_bytes)
                raw = self.fs.open(path, "rb")
        except FileNotFoundError:
            raise SourceError("missing_file", f"{rel or path}: file not found", rel or None) from None
        self._digest.update(rel.encode() + b"\0")
        return Stream(raw, rel or path, self.budgets.file_bytes, self._digest,
                      on_decoded=lambda decoded: self.decoded.__setitem__(rel, decoded))

    def _real_paths(self) -> _RealPaths:
        if self._real is None:  # one per input root for the units of a task (`shared`): resolved once
            key = ("real paths", self.root)
            if key not in self.shared:
                self.shared[key] = _RealPaths(self.root)
            self._real = self.shared[key]
        return self._real

    def size(self, path: str) -> int | None:
        """Size of a file beside or inside the unit (None when the filesystem does not say)."""
        if isinstance(self.fs, LocalFileSystem):  # what fsspec's `info` stats, without its per-call overhead
            return os.stat(path).st_size
        return self.fs.size(path)

    def _read(self, path: str, rel: str, digest: bool = True) -> bytes:
        # the digest is of the name and the bytes as stored, once the file is open (a file not found or too large
        # adds nothing); a reader gets JSON in another Unicode encoding as UTF-8
        try:
            # most reads (a run folder's files): a small file a listing found plain, read and fed to the digest
            # in fewer steps than below (no feeder closure, no real-paths look-up, three calls less)
            small = _small_listed(path, rel, self.budgets.file_bytes) if digest and path in self._plain else None
            if small is not None:
                self._digest_name(rel)
                self._digest.update(small)
                data, decoded = _decoded(small, rel or self.uri)
            elif isinstance(self.fs, LocalFileSystem):  # skips fsspec's per-call overhead on the hot path
                feed = self._feeder(rel) if digest else None
                data, decoded = _read_local(path, rel, self.budgets.file_bytes, self._real_paths(),
                                            path in self._plain, feed, rel or self.uri)
            else:
                feed = self._feeder(rel) if digest else None
                size = self.fs.size(path)
                if size is not None and size > self.budgets.file_bytes:
                    raise _too_large(rel or path, size, self.budgets.file_bytes)
                with self.fs.open(path, "rb") as f:
                    data = f.read()
                if feed is not None:
                    feed(data)
                data, decoded = _decoded(data, rel or self.uri)
        except FileNotFoundError:
            raise SourceError("missing_file", f"{rel or path}: file not found", rel or None) from None
        if decoded is not None:
            self.decoded[rel] = decoded
        return data

    def _feeder(self, rel: str) -> Callable[[bytes], None]:
        """What feeds a file's bytes to the unit's digest, its name first (the bytes are not concatenated to it:
        that would copy every file once more)."""
        named = False

        def feed(data: bytes) -> None:
            nonlocal named
            if not named:
                self._digest_name(rel)
                named = True
            self._digest.update(data)

        return feed

    def _digest_name(self, rel: str) -> None:
        """A file's name in the unit's digest, before its bytes (so that renaming a file changes it)."""
        self._digest.update(rel.encode() + b"\0")

    def is_dir(self, rel: str = "") -> bool:
        """Whether `rel` (the unit itself when empty) is a directory of the unit."""
        if isinstance(self.fs, LocalFileSystem):  # what fsspec's `isdir` asks, without its per-call overhead
            return os.path.isdir(self.join(rel))
        return self.fs.isdir(self.join(rel))

    def exists(self, rel: str) -> bool:
        parent, name = posixpath.split(rel)
        return name in self._listing(parent)

    def listed(self, rel: str = "") -> frozenset[str] | None:
        """The names `listdir(rel)` gave (what the walker refuses left out), when a reader listed that folder
        already; None when none did (nothing is listed here)."""
        return self._listings.get(rel)

    def names_in(self, folder: str) -> frozenset[str]:
        """The names `listdir` gives for a folder beside or above the unit, by its path in the input's
        filesystem (a folder outside the input lists nothing)."""
        if isinstance(self.fs, LocalFileSystem):
            try:
                return frozenset(self._local_entries(folder))
            except FileNotFoundError:
                return frozenset()
        return self._listing(posixpath.relpath(folder, self.path))

    def listdir(self, rel: str = "") -> list[str]:
        """Names (not paths) of the entries of a directory of the unit, sorted; what the walker refuses
        (links out of the input, FIFOs, devices, broken links) is not listed."""
        return sorted(self._listing(rel))

    def _listing(self, rel: str) -> frozenset[str]:
        if rel not in self._listings:
            base = self.join(rel)
            if isinstance(self.fs, LocalFileSystem):
                try:
                    names = frozenset(self._local_entries(base))  # names already: no paths to cut
                except FileNotFoundError:
                    names = frozenset()
            else:
                try:
                    paths = self.fs.ls(base, detail=False) if self.fs.isdir(base) else []
                except FileNotFoundError:
                    paths = []
                names = frozenset(posixpath.basename(p.rstrip("/")) for p in paths)
            self._listings[rel] = names
        return self._listings[rel]

    def _local_entries(self, base: str) -> list[str]:
        # the folder resolved once for the listing and the reads of its files (`_RealPaths`): resolving the
        # root and the folder again for each listing cost ~12 lstat calls a unit
        real = self._real_paths()
        if not os.path.isdir(base) or real.target_outside(real.folder(base)) is not None:
            return []
        names = []
        prefix = base.rstrip("/") + "/"
        with os.scandir(base) as entries:
            for entry in entries:
                if entry.is_symlink():
                    if real.target_outside(os.path.realpath(entry.path)) is not None:
                        continue
                    if entry.is_dir() or (entry.is_file() and regular_file(self.root, entry.path)[1] is None):
                        names.append(entry.name)
                elif utf8_name(entry.name):  # the directory entry's type says what it is: no stat a name
                    if entry.is_file(follow_symlinks=False):
                        names.append(entry.name)
                        self._plain.add(prefix + entry.name)
                    elif entry.is_dir(follow_symlinks=False):
                        names.append(entry.name)
        return names

    def sha256(self) -> str:
        """Digest of every file read so far, with their names: the unit's content identity."""
        return self._digest.hexdigest()


def parse_json(data: bytes, where: str, budgets: Budgets | None = None):
    """orjson.loads with an error that names the file and the position: `parse_error`, or `budget_exceeded`
    (json_depth) for a document nested deeper than the parser's fixed limit of 1024 levels. With `budgets`,
    the document is one record: over `record_bytes` it is not parsed (`budget_exceeded`, record_bytes)."""
    import orjson

    if budgets is not None and len(data) > budgets.record_bytes:
        raise BudgetExceeded("record_bytes", budgets.record_bytes, where,
                             f"the document (one record) has {len(data)} bytes")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        if "depth limit" in str(e):
            raise SourceError("budget_exceeded", f"{where}: JSON nested deeper than the json_depth budget of "
                              f"{JSON_MAX_DEPTH} levels ({e}; the parser's fixed limit, it cannot be raised)",
                              where) from None
        raise SourceError("parse_error", f"{where}: invalid JSON: {e}", where) from None


def json_lines(data: bytes, name: str, budgets: Budgets) -> Iterator[tuple[int, str | None, object]]:
    """(line number, its text, its JSON value or the `Rejected` row for a line that is not JSON or over a
    budget) of each non-blank line of a JSONL file: the rest of the file is read past a bad line."""
    from ingest.record import Rejected

    for no, line, problem in text_lines(data, name, budgets):
        if problem:
            yield no, line, Rejected("parse_error", problem, name, line=no)
            continue
        if not line.strip():
            continue
        try:
            value = parse_json(line.encode(), f"{name}:{no}")
        except SourceError as e:
            value = Rejected(e.rule, e.reason, name, line=no, snippet=line[:300])
        yield no, line, value


def json_list(source: "Source", key: str) -> tuple[object, list | None, "Rejected | None"]:
    """(the unit's JSON document, its list under `key`, None), or (document or None, None, the row that says why
    not: the parse error, or `key` not a list). For readers of one document that holds one list of records."""
    from ingest.record import Rejected

    name = source.uri
    try:
        doc = parse_json(source.read_bytes(), name, source.budgets)
    except SourceError as e:
        return None, None, Rejected(e.rule, e.reason, name)
    items = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(items, list):
        return doc, None, Rejected("bad_record", f"{name}: `{key}` is not a list", name)
    return doc, items, None


def text_lines(data: bytes, where: str, budgets: Budgets) -> "Iterator[tuple[int, str | None, str | None]]":
    """(line number, line, problem) for each line of a text log, decoded as UTF-8 line by line.

    A line longer than `budgets.line_bytes` comes back as (n, None, reason naming the line_bytes budget) and
    is not decoded; a line that is not valid UTF-8 as (n, the line with U+FFFD replacements, reason): the
    reader quarantines that line and goes on with the next.
    """
    limit = budgets.line_bytes
    start, n, size = 0, 0, len(data)
    while start < size:
        end = data.find(b"\n", start)
        end = size if end < 0 else end
        n += 1
        length, raw = end - start, data[start:end] if end - start <= limit else None
        start = end + 1
        if raw is None:
            yield n, None, BudgetExceeded("line_bytes", limit, where, f"line {n} has {length} bytes").reason
            continue
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            yield n, raw.decode("utf-8"), None
        except UnicodeDecodeError as e:
            yield n, raw.decode("utf-8", "replace"), f"{where}: line {n}: not valid UTF-8 (byte {e.start})"
