"""The lake's layout on any fsspec filesystem, and atomic writes into it.

    <lake>/catalog.duckdb                      the catalog (driver only)
    <lake>/blobs/<aa>/<sha256>.<ext>           content-addressed binaries, written once
    <lake>/datasets/<name>/parts/<table>/<task>.parquet
    <lake>/datasets/<name>/tasks/<task>.json   completion markers: a task is done when its marker exists
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import uuid
from dataclasses import dataclass, field

import fsspec
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

MEDIA_EXT = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "application/json": "json",
             "text/plain": "txt", "application/octet-stream": "bin"}


def lake_url(value: str) -> str:
    """A lake or output location from the command line: a local path made absolute, a URL as given."""
    return value if "://" in value else os.path.abspath(value)


@dataclass
class Lake:
    url: str

    def __post_init__(self):
        self.fs, self.root = fsspec.core.url_to_fs(self.url)
        self.root = self.root.rstrip("/")
        self.is_local = "file" in (self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,))

    def path(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts)

    def marker_path(self, dataset: str, task_id: str) -> str:
        return self.path("datasets", dataset, "tasks", f"{task_id}.json")

    def part_path(self, dataset: str, table: str, name: str) -> str:
        return self.path("datasets", dataset, "parts", table, f"{name}.parquet")

    def relative(self, path: str) -> str:
        return posixpath.relpath(path, self.root)

    def absolute(self, rel: str) -> str:
        return self.path(rel)

    def write_bytes_atomic(self, path: str, data: bytes) -> None:
        """Write to a temporary name, then rename: readers never see a partial file."""
        self.fs.makedirs(posixpath.dirname(path), exist_ok=True)
        tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
        with self.fs.open(tmp, "wb") as f:
            f.write(data)
        self.fs.mv(tmp, path)

    @staticmethod
    def parquet_bytes(table: pa.Table) -> bytes:
        buf = io.BytesIO()
        pq.write_table(table, buf, compression="zstd")
        return buf.getvalue()

    def write_parquet(self, path: str, table: pa.Table) -> None:
        self.write_bytes_atomic(path, self.parquet_bytes(table))

    def read_marker(self, dataset: str, task_id: str) -> dict | None:
        path = self.marker_path(dataset, task_id)
        try:
            with self.fs.open(path, "rb") as f:
                return orjson.loads(f.read())
        except FileNotFoundError:
            return None


@dataclass
class BlobStore:
    """Content-addressed blob writes for one task; remembers the rows for the task's `blobs` table."""

    lake: Lake
    run_id: str
    rows: dict[str, dict] = field(default_factory=dict)

    def put(self, data: bytes, media_type: str, source_uri: str) -> str:
        sha = hashlib.sha256(data).hexdigest()
        if sha not in self.rows:
            rel = posixpath.join("blobs", sha[:2], f"{sha}.{MEDIA_EXT.get(media_type, 'bin')}")
            path = self.lake.path(rel)
            if not self.lake.fs.exists(path):
                self.lake.write_bytes_atomic(path, data)
            self.rows[sha] = {"sha256": sha, "size_bytes": len(data), "media_type": media_type, "uri": rel,
                              "source_uri": source_uri, "_run_id": self.run_id}
        return f"sha256:{sha}"
