"""JSON and JSON lines saved in a Unicode encoding other than plain UTF-8, read as their UTF-8 form.

Windows PowerShell's `>` and `Out-File` write UTF-16 with a byte-order mark, some editors and exporters UTF-8 with
one, a few tools UTF-32: the same JSON, in bytes no UTF-8 reader parses. `ingest.source.Source` decodes such a
file once, where every read passes (`read_bytes`, `read_path`, `open_stream`), and planning decodes the head a
format claims a file by (`decoded_head`), so each JSON reader reads the file as it reads its UTF-8 form.

What is decoded: a file whose first bytes are a byte-order mark (UTF-8, UTF-16 LE / BE, UTF-32 LE / BE), or, with
no mark, whose NULs among its first four bytes say UTF-16 or UTF-32 (RFC 4627, section 3: JSON text opens with two
ASCII characters, so `{\\0"\\0` is UTF-16LE); and in either case only when the decoded text opens (past white space)
with `{` or `[`: a JSON document or JSON lines. Any other file (a screenshot, a pickle, UTF-16 prose) is handed on
as its bytes, unchanged.

What is kept: the file's digest is of its bytes as stored; the reader's `raw` fields hold the decoded text, which
is the same text; `Source.decoded` says per file which encoding it was in, and `noted` writes that into each
episode's `env["source_encodings"]`. A byte sequence that is no character of the encoding (a UTF-16 file cut
after an odd number of bytes ends inside one) becomes U+FFFD and one `encoding_error` row naming the file and
the byte: the rest of the file is read.

Memory: a file is decoded piece by piece (`CHUNK` bytes), so the decoding holds the UTF-8 text it builds and one
piece of the raw bytes, never a whole second copy beside the raw file where the file is read from its start
(`Source` sniffs a large local file before reading it).
"""

from __future__ import annotations

import codecs
import io
import re
import threading
from dataclasses import dataclass
from typing import Iterable

SNIFF_BYTES = 64  # the mark, the NUL pattern and the first character past a little white space
CHUNK = 1 << 20  # raw bytes decoded at a time

# longest mark first: UTF-32LE's mark starts with UTF-16LE's
_MARKS = ((b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32BE"), (b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32LE"),
          (b"\xef\xbb\xbf", "utf-8", "UTF-8"), (b"\xfe\xff", "utf-16-be", "UTF-16BE"),
          (b"\xff\xfe", "utf-16-le", "UTF-16LE"))
# RFC 4627 section 3: which of the first four bytes are NUL, for two ASCII characters in each encoding
_NUL_PATTERNS = {(True, True, True, False): ("utf-32-be", "UTF-32BE"),
                 (False, True, True, True): ("utf-32-le", "UTF-32LE"),
                 (True, False, True, False): ("utf-16-be", "UTF-16BE"),
                 (False, True, False, True): ("utf-16-le", "UTF-16LE")}
_FIRST_BYTES = frozenset(b"\x00\xef\xfe\xff")  # what a mark or a big-endian pattern opens with
_ERRORS = "trajforge.text_encoding.mark"
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # none in JSON text outside its strings' escapes


@dataclass(frozen=True)
class Encoding:
    codec: str  # Python's codec name
    name: str  # as a person names it: UTF-16LE
    bom: int  # bytes of the byte-order mark the file opens with (0: none)


@dataclass(frozen=True)
class Decoded:
    """How a file was decoded: its encoding, whether it opened with a byte-order mark, and what in it was not
    text of that encoding (None when it all was)."""

    encoding: str
    byte_order_mark: bool
    problem: str | None = None

    def as_env(self, file: str) -> dict:
        return {"file": file, "encoding": self.encoding, "byte_order_mark": self.byte_order_mark}


def sniff(start: bytes) -> Encoding | None:
    """The encoding of a JSON / JSON-lines file other than plain UTF-8, by its first bytes (`SNIFF_BYTES` are
    enough); None for plain UTF-8 and for anything that is not JSON text once decoded."""
    if len(start) < 2 or (start[0] not in _FIRST_BYTES and start[1] != 0):
        return None  # nearly every file: its first byte opens no mark and its second is no NUL
    start = start[:SNIFF_BYTES]  # a bad character further on is the reading's to say, not a reason to refuse
    found = next((Encoding(codec, name, len(mark)) for mark, codec, name in _MARKS if start.startswith(mark)), None)
    if found is None and len(start) >= 4:
        codec_name = _NUL_PATTERNS.get(tuple(b == 0 for b in start[:4]))
        found = Encoding(*codec_name, 0) if codec_name else None
    if found is None:
        return None
    # binary data may open like JSON (a TFRecord's first length, 123, is UTF-32LE `{`): it rarely decodes cleanly,
    # and never without control characters
    try:
        text = codecs.getincrementaldecoder(found.codec)().decode(start[found.bom:]).lstrip(" \t\r\n")
    except UnicodeDecodeError:
        return None
    return found if text[:1] in ("{", "[") and not _CONTROL.search(text) else None


def decoded_head(head: bytes) -> bytes:
    """A file's first bytes as the UTF-8 of their text when the file is JSON in another encoding (`sniff`), else
    as they are: what a format's claim looks at. A character cut by the head's end is left out."""
    found = sniff(head[:SNIFF_BYTES])
    if found is None:
        return head
    if found.codec == "utf-8":
        return head[found.bom:]
    return codecs.getincrementaldecoder(found.codec)("ignore").decode(head[found.bom:]).encode("utf-8")


_marks = threading.local()  # the places the running decoder could not decode (one decoding per thread at a time)


def _mark(error: UnicodeDecodeError):
    _marks.found.append((error.start, error.reason))
    return "\ufffd", error.end


codecs.register_error(_ERRORS, _mark)


class Decoder:
    """A file's raw bytes, fed piece by piece after its mark, -> the UTF-8 of its text; `result()` says how it
    went once the last piece is fed (`final`)."""

    def __init__(self, found: Encoding, where: str):
        self.found, self.where = found, where
        self._decoder = codecs.getincrementaldecoder(found.codec)(_ERRORS)
        self._fed = found.bom  # raw bytes of the file seen so far, the mark with them
        self._first_bad: tuple[int, str] | None = None  # (byte in the file, why) of the first that was not text
        self._bad = 0  # how many places were not text (counted, not listed: a file may hold millions)

    def feed(self, raw: bytes, final: bool = False) -> bytes:
        if self.found.codec == "utf-8":  # the mark alone told it: past the mark the bytes are what a reader reads
            return raw
        waiting = len(self._decoder.getstate()[0])  # bytes of a character the last piece cut, decoded with this one
        _marks.found = []
        text = self._decoder.decode(raw, final)
        if _marks.found:
            at, why = _marks.found[0]
            self._first_bad = self._first_bad or (self._fed - waiting + at, why)
            self._bad += len(_marks.found)
        self._fed += len(raw)
        return text.encode("utf-8")

    def result(self) -> Decoded:
        return Decoded(self.found.name, self.found.bom > 0, self._problem())

    def _problem(self) -> str | None:
        if self._first_bad is None:
            return None
        at, why = self._first_bad
        more = f" and {self._bad - 1} more place(s)" if self._bad > 1 else ""
        if why == "truncated data" and self._bad == 1:
            return (f"{self.where}: {self.found.name} text ends inside a character (byte {at} of {self._fed}): the "
                    "file is cut short; the cut character is read as U+FFFD")
        return f"{self.where}: not {self.found.name} text at byte {at} ({why}){more}: read as U+FFFD"


def to_utf8(pieces: Iterable[bytes], found: Encoding, where: str) -> tuple[bytes, Decoded]:
    """The UTF-8 of a file's text from its raw pieces (the first holding the mark, if any, at its start)."""
    decoder = Decoder(found, where)
    out = io.BytesIO()  # its value is handed over without a copy when it is taken whole
    first = True
    for piece in pieces:
        out.write(decoder.feed(piece[found.bom:] if first else piece))
        first = False
    out.write(decoder.feed(b"", final=True))
    return out.getvalue(), decoder.result()


def pieces_of(data: bytes) -> Iterable[memoryview]:
    """`data` in `CHUNK`-byte views (no copies)."""
    view = memoryview(data)
    return (view[i:i + CHUNK] for i in range(0, len(data), CHUNK)) if data else iter([view])
