"""TFRecord files and tf.train.Example records, read (and written) without TensorFlow.

Framing of one record: uint64 length (little endian), uint32 masked CRC32C of the length bytes, the payload,
uint32 masked CRC32C of the payload. Files may be GZIP-compressed as a whole (the AITW and AndroidControl
releases are); they are decompressed as a stream, one record at a time, so memory holds the compressed
file plus one record.

A payload whose CRC does not match is reported (rule `bad_crc`, with its offset) and the next record is
read: the length was intact, so the framing is. A bad length CRC, an absurd length or a cut-off record end
the file, since nothing after it can be framed.
"""

from __future__ import annotations

import gzip
import io
import struct
import zlib
from typing import Iterable, Iterator

from ingest import protowire as pw
from ingest.record import Rejected

try:
    from google_crc32c import value as _crc32c
except ImportError:  # pure-Python fallback: correct, about 100x slower
    _TABLE = []
    for _i in range(256):
        _c = _i
        for _ in range(8):
            _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
        _TABLE.append(_c)

    def _crc32c(data: bytes) -> int:
        crc = 0xFFFFFFFF
        for b in data:
            crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
        return crc ^ 0xFFFFFFFF

MAX_RECORD_BYTES = 1 << 30  # a larger length is a corrupt header, not a record
_GZIP_MAGIC = b"\x1f\x8b"


def masked_crc32c(data: bytes) -> int:
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def sniff(head: bytes) -> bytes | None:
    """The (decompressed) start of a TFRecord file, or None when `head` does not start one."""
    if head.startswith(_GZIP_MAGIC):
        try:
            head = zlib.decompressobj(wbits=31).decompress(head)
        except zlib.error:
            return None
    if len(head) < 12:
        return None
    length, crc = struct.unpack("<QI", head[:12])
    return head if masked_crc32c(head[:8]) == crc and length <= MAX_RECORD_BYTES else None


def iter_records(data: bytes, where: str) -> Iterator[tuple[int, bytes | Rejected]]:
    """(offset, payload) per record, or (offset, Rejected) for a record that cannot be used. Offsets count
    bytes of the uncompressed stream."""
    compressed = data.startswith(_GZIP_MAGIC)
    stream = gzip.GzipFile(fileobj=io.BytesIO(data)) if compressed else io.BytesIO(data)
    unit = " (uncompressed)" if compressed else ""
    offset = 0
    while True:
        try:
            header = stream.read(12)
        except (OSError, EOFError, zlib.error) as e:
            yield offset, Rejected("truncated_record", f"{where}: offset {offset}{unit}: unreadable gzip stream: {e}",
                                   where, record_id=f"offset:{offset}")
            return
        if not header:
            return
        if len(header) < 12:
            yield offset, Rejected("truncated_record", f"{where}: offset {offset}{unit}: file ends inside a record "
                                   "header", where, record_id=f"offset:{offset}")
            return
        length, length_crc = struct.unpack("<QI", header)
        if masked_crc32c(header[:8]) != length_crc or length > MAX_RECORD_BYTES:
            yield offset, Rejected("bad_crc", f"{where}: offset {offset}{unit}: record length fails its CRC; the rest "
                                   "of the file cannot be framed", where, record_id=f"offset:{offset}")
            return
        try:
            body = stream.read(length + 4)
        except (OSError, EOFError, zlib.error) as e:
            body = b""
            reason = f"unreadable gzip stream: {e}"
        else:
            reason = f"file ends inside a record of {length} bytes"
        if len(body) < length + 4:
            yield offset, Rejected("truncated_record", f"{where}: offset {offset}{unit}: {reason}", where,
                                   record_id=f"offset:{offset}")
            return
        payload = body[:length]
        if masked_crc32c(payload) != struct.unpack("<I", body[length:])[0]:
            yield offset, Rejected("bad_crc", f"{where}: offset {offset}{unit}: record data fails its CRC32C", where,
                                   record_id=f"offset:{offset}")
        else:
            yield offset, payload
        offset += 12 + length + 4


def parse_example(payload: bytes) -> dict[str, list]:
    """A serialized tf.train.Example as {feature name: list of bytes | int | float}. ValueError if malformed."""
    out: dict[str, list] = {}
    for number, _, features in pw.fields(payload):
        if number != 1 or not isinstance(features, bytes):
            continue
        for fnum, _, entry in pw.fields(features):
            if fnum != 1 or not isinstance(entry, bytes):
                continue
            key, feature = "", b""
            for enum_, _, v in pw.fields(entry):
                if enum_ == 1:
                    key = v.decode("utf-8")
                elif enum_ == 2:
                    feature = v
            out[key] = _feature_values(feature)
    return out


def _feature_values(feature: bytes) -> list:
    for kind, _, lst in pw.fields(feature):
        values: list = []
        for number, wire, v in pw.fields(lst):
            if number != 1:
                continue
            if kind == 1:  # BytesList
                values.append(v)
            elif kind == 2:  # FloatList: packed, or one fixed32 per value
                values.extend(pw.packed_floats(v) if wire == pw.LENGTH else [pw.float32(v)])
            elif kind == 3:  # Int64List: packed, or one varint per value
                values.extend(pw.signed64(x) for x in (pw.packed_varints(v) if wire == pw.LENGTH else [v]))
        return values
    return []


# writing: test fixtures, benchmark corpora, exports

def encode_example(features: dict[str, list]) -> bytes:
    """A tf.train.Example from {name: values}; the list's element type picks bytes (bytes/str), int64 or float
    (an empty list is an empty BytesList)."""
    entries = b""
    for name, values in features.items():
        if values and isinstance(values[0], float):
            body = pw.field_bytes(2, pw.field_bytes(1, struct.pack(f"<{len(values)}f", *values)))
        elif values and isinstance(values[0], int):
            body = pw.field_bytes(3, pw.field_bytes(1, b"".join(pw.varint(v) for v in values)))
        else:
            items = b"".join(pw.field_bytes(1, v.encode() if isinstance(v, str) else v) for v in values)
            body = pw.field_bytes(1, items)
        entries += pw.field_bytes(1, pw.field_bytes(1, name.encode()) + pw.field_bytes(2, body))
    return pw.field_bytes(1, entries)


def frame(payload: bytes) -> bytes:
    length = struct.pack("<Q", len(payload))
    return length + struct.pack("<I", masked_crc32c(length)) + payload + struct.pack("<I", masked_crc32c(payload))


def write_tfrecord(payloads: Iterable[bytes], compress: bool = False) -> bytes:
    data = b"".join(frame(p) for p in payloads)
    return gzip.compress(data, compresslevel=3, mtime=0) if compress else data
