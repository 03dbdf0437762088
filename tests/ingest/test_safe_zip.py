"""ingest.safe_zip: gzip inflated as a stream within its budgets, every member read, trailing bytes said; zip
refusals name the budget they hit."""

import gzip
import io
import os
import time
import zipfile

import pytest

from ingest.safe_zip import Limits, SafeZip, gunzip
from ingest.source import Budgets, SourceError


def _refusal(call) -> SourceError:
    with pytest.raises(SourceError) as e:
        call()
    return e.value


def test_a_gzip_bomb_is_refused_after_a_few_mib_not_after_the_cap():
    member = gzip.compress(b"\0" * (64 << 20), 9)
    bomb = member * 160  # 10 GiB of zeros in 10 MiB
    started = time.perf_counter()
    err = _refusal(lambda: gunzip(bomb, "x.gz"))
    assert time.perf_counter() - started < 2  # refused on the ratio after ~1 MiB, never inflating the cap
    assert err.rule == "archive_too_large" and "a gzip bomb" in err.reason
    assert "compression_ratio budget of 200" in err.reason and "TRAJFORGE_BUDGET_COMPRESSION_RATIO" in err.reason


def test_without_a_ratio_the_absolute_cap_is_checked_while_inflating():
    bomb = gzip.compress(b"\0" * (16 << 20), 9)
    err = _refusal(lambda: gunzip(bomb, "x.gz", max_ratio=float("inf"), budgets=Budgets(decompressed_bytes=1 << 20)))
    assert err.rule == "archive_too_large" and "decompressed_bytes budget of 1 MiB" in err.reason


def test_every_member_is_read_zero_padding_is_ignored_and_other_trailing_bytes_are_said():
    two = gzip.compress(b"first ") + gzip.compress(b"second")
    assert gunzip(two, "x.gz") == b"first second"
    assert gunzip(two + b"\0" * 512, "x.gz") == b"first second"
    err = _refusal(lambda: gunzip(two + b"junk", "x.gz"))
    assert err.rule == "bad_archive" and err.reason == "x.gz: 4 bytes of trailing data after the gzip data (offset 52)"
    notes: list[str] = []
    assert gunzip(two + b"junk", "x.gz", notes=notes) == b"first second"
    assert notes == ["x.gz: 4 bytes of trailing data after the gzip data (offset 52); ignored"]


def test_truncated_and_empty_gzip_data_are_bad_archives():
    data = gzip.compress(b"hello world" * 1000)
    assert _refusal(lambda: gunzip(data[: len(data) // 2], "x.gz")).reason == "x.gz: gzip data is truncated"
    assert _refusal(lambda: gunzip(b"", "x.gz")).rule == "bad_archive"
    assert _refusal(lambda: gunzip(b"not gzip at all", "x.gz")).rule == "bad_archive"
    payload = [os.urandom(300_000) for _ in range(8)]  # larger than one inflate piece, in several members
    assert gunzip(b"".join(gzip.compress(p) for p in payload), "x.gz") == b"".join(payload)


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def test_zip_refusals_name_the_budget_and_how_to_raise_it():
    err = _refusal(lambda: SafeZip(_zip({"a.trace": b"\0" * (4 << 20)}), "t.zip"))
    assert err.rule == "archive_too_large" and "compression_ratio budget of 200" in err.reason
    err = _refusal(lambda: SafeZip(_zip({f"{i}.txt": b"x" for i in range(5)}), "t.zip", Limits(max_members=4)))
    assert "archive_members budget of 4" in err.reason and "TRAJFORGE_BUDGET_ARCHIVE_MEMBERS" in err.reason
    err = _refusal(lambda: SafeZip(_zip({"../evil": b"x", "a.trace": b"{}"}), "t.zip"))
    assert err.rule == "unsafe_archive_path"


def test_a_member_whose_header_lies_about_its_size_is_stopped_while_inflating():
    blob = bytearray(_zip({"a.trace": b"\0" * (8 << 20)}))
    small = (1024).to_bytes(4, "little")
    local, central = blob.find(b"PK\x03\x04"), blob.find(b"PK\x01\x02")
    blob[local + 22:local + 26] = small
    blob[central + 24:central + 28] = small
    archive = SafeZip(bytes(blob), "t.zip")  # the headers pass the checks on open
    err = _refusal(lambda: archive.read("a.trace"))
    assert err.rule in ("archive_too_large", "bad_archive")


def _zstd_zip(name: str, data: bytes, declared: int | None = None) -> bytes:
    """A one-member zip with method 93 (Zstandard), as Inspect AI's `.eval` logs are written; `declared` overrides
    the uncompressed size in both headers."""
    import struct
    import zlib

    import pyarrow as pa

    body = pa.Codec("zstd").compress(data, asbytes=True)
    size, crc, raw = declared if declared is not None else len(data), zlib.crc32(data), name.encode()
    local = struct.pack("<4s5H3I2H", b"PK\x03\x04", 63, 0, 93, 0, 0, crc, len(body), size, len(raw), 0) + raw
    central = struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 63, 63, 0, 93, 0, 0, crc, len(body), size, len(raw),
                          0, 0, 0, 0, 0, 0) + raw
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(body), 0)
    return local + body + central + end


def test_zstd_members_are_read_within_their_declared_size():
    data = b'{"version": 2, "samples": []}' * 100
    assert SafeZip(_zstd_zip("header.json", data), "log.eval").read("header.json") == data
    err = _refusal(lambda: SafeZip(_zstd_zip("header.json", data, declared=100), "log.eval").read("header.json"))
    assert err.rule == "bad_archive" and "declared size of 100 bytes" in err.reason
    err = _refusal(lambda: SafeZip(_zstd_zip("a.json", b"\0" * (4 << 20)), "log.eval"))
    assert "compression_ratio" in err.reason  # a zstd bomb is refused on open like a deflate one
