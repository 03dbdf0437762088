"""PNG without an imaging library: raw pixels to PNG with zlib only (screenshots stored as pixel arrays,
AITW's `image/encoded`, AndroidWorld's numpy screenshots, go to the blob store as PNG files any viewer opens),
and a PNG's size read from its header."""

from __future__ import annotations

import struct
import zlib

_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> gray, gray+alpha, RGB, RGBA
_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's IHDR chunk, or None when the bytes are not a PNG."""
    if len(data) >= 24 and data[:8] == _SIGNATURE and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    return None


def encode_png(pixels: bytes, width: int, height: int, channels: int, level: int = 3) -> bytes:
    """8-bit pixels in row-major (height, width, channels) order. ValueError when the sizes disagree."""
    if channels not in _COLOR_TYPE:
        raise ValueError(f"{channels} channels: only 1-4 can be stored as PNG")
    stride = width * channels
    if width <= 0 or height <= 0 or len(pixels) != stride * height:
        raise ValueError(f"{len(pixels)} bytes are not {height}x{width}x{channels} pixels")
    rows = b"".join(b"\x00" + pixels[r * stride:(r + 1) * stride] for r in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPE[channels], 0, 0, 0)
    return _SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, level)) + chunk(b"IEND", b"")
