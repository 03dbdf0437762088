"""Protocol Buffers wire format, read and written without generated code or the protobuf runtime.

Enough for the few messages ingest meets (tf.train.Example, Android accessibility forests): fields come
out as (number, wire type, value) with the value an int (varint, fixed32/64 as raw unsigned) or bytes
(length-delimited: a string, a nested message or a packed array). `ValueError` on a truncated buffer.
"""

from __future__ import annotations

import struct
from typing import Iterator

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


def read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def fields(buf: bytes | memoryview) -> Iterator[tuple[int, int, int | bytes]]:
    """The fields of one message, in wire order."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == VARINT:
            value, pos = read_varint(buf, pos)
        elif wire == LENGTH:
            size, pos = read_varint(buf, pos)
            if pos + size > end:
                raise ValueError(f"field {number}: {size} bytes announced, {end - pos} left")
            value, pos = bytes(buf[pos:pos + size]), pos + size
        elif wire == FIXED32:
            if pos + 4 > end:
                raise ValueError("truncated fixed32")
            value, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        elif wire == FIXED64:
            if pos + 8 > end:
                raise ValueError("truncated fixed64")
            value, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        else:
            raise ValueError(f"field {number}: unsupported wire type {wire}")
        yield number, wire, value


def signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def signed32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def packed_varints(data: bytes) -> list[int]:
    out, pos = [], 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        out.append(value)
    return out


def packed_floats(data: bytes) -> list[float]:
    if len(data) % 4:
        raise ValueError("packed float array length is not a multiple of 4")
    return list(struct.unpack(f"<{len(data) // 4}f", data))


def float32(raw: int) -> float:
    return struct.unpack("<f", raw.to_bytes(4, "little"))[0]


# writing: used to build test fixtures and benchmark corpora

def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative ints are 10-byte two's complement, as protobuf writes int64
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(number: int, data: bytes) -> bytes:
    return varint(number << 3 | LENGTH) + varint(len(data)) + data


def field_varint(number: int, value: int) -> bytes:
    return varint(number << 3 | VARINT) + varint(value)
