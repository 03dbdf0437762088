"""The lake's layout on any fsspec filesystem, and atomic writes into it.

    <lake>/catalog.duckdb                      the catalog (driver only)
    <lake>/blobs/<aa>/<sha256>.<ext>           content-addressed binaries, written once
    <lake>/datasets/<name>/parts/<table>/<task>.parquet
    <lake>/datasets/<name>/tasks/<task>.json   completion markers: a task is done when its marker exists

Writes never leave a partial file where a reader looks. On a filesystem (local or any with a rename) a file is
written under a temporary name and renamed. On an object store (`s3://`, `gs://`, ...: `catalog.object_store`)
a rename is a copy and a delete, so each file is one upload of the whole object instead: S3 publishes an
object whole when its PUT (or multipart upload) completes, never half, and never under another name. Parts
are named by their task or their content and only become part of a dataset when a catalog version lists
them (write, then publish by manifest), so an upload that a crash cut short is never read.
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import tempfile
import uuid
from dataclasses import dataclass, field

import fsspec
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from catalog.object_store import OBJECT_STORES

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
        protocols = self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,)
        self.is_local = "file" in protocols
        self.is_object_store = bool(OBJECT_STORES.intersection(protocols))

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

    def uri(self, rel: str) -> str:
        """A lake-relative path as DuckDB and other tools name it: a local path, or a URL with the protocol
        (`s3://bucket/lake/...`)."""
        path = self.path(rel)
        return path if self.is_local else self.fs.unstrip_protocol(path)

    def write_bytes_atomic(self, path: str, data: bytes) -> None:
        """Readers never see a partial file: a temporary name then a rename, or on an object store one upload
        of the whole object."""
        if self.is_object_store:
            self.fs.pipe_file(path, data)
            return
        tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
        if self.is_local:  # the same steps in plain system calls: fsspec's cost a call is a blob's whole cost
            os.makedirs(posixpath.dirname(path), exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            return
        self.fs.makedirs(posixpath.dirname(path), exist_ok=True)
        with self.fs.open(tmp, "wb") as f:
            f.write(data)
        self.fs.mv(tmp, path)

    def exists(self, path: str) -> bool:
        return os.path.lexists(path) if self.is_local else self.fs.exists(path)

    def put_file_atomic(self, local_path: str, path: str) -> None:
        """A local file copied to `path` whole (`write_bytes_atomic`'s rule), streamed, not read into memory."""
        if self.is_object_store:
            self.fs.put_file(local_path, path)
            return
        self.fs.makedirs(posixpath.dirname(path), exist_ok=True)
        tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
        self.fs.put_file(local_path, tmp)
        self.fs.mv(tmp, path)

    def remove_stale_temps(self, dataset: str) -> int:
        """Delete the temporary files a killed run left under a dataset's folder (only while holding the
        lake's lock: no live writer has one open). Returns how many. Readers never saw them: no version
        names a temporary file."""
        root = self.path("datasets", dataset)
        if self.is_object_store or not self.fs.exists(root):
            return 0
        stale = [p for p in self.fs.find(root) if ".tmp-" in posixpath.basename(p)]
        for path in stale:
            self.fs.rm(path)
        return len(stale)

    def open_atomic(self, path: str) -> "AtomicFile":
        """A file to stream into that appears at `path` whole on `commit()`, or never (`discard()`)."""
        return AtomicFile(self, path)

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


class AtomicFile:
    """Streamed writes published whole: into a temporary file beside `path` renamed on commit, or on an object
    store into a local temporary file uploaded in one piece on commit (nothing exists under the lake until
    then, and a discarded or crashed write leaves nothing there)."""

    def __init__(self, lake: Lake, path: str):
        self.lake, self.path = lake, path
        if lake.is_object_store:
            self.tmp = None
            self.file = tempfile.NamedTemporaryFile(prefix="trajforge-upload-", delete=False)
        else:
            lake.fs.makedirs(posixpath.dirname(path), exist_ok=True)
            self.tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
            self.file = lake.fs.open(self.tmp, "wb")

    def write(self, data: bytes) -> int:
        return self.file.write(data)

    def commit(self) -> None:
        self.file.close()
        if self.tmp is None:
            try:
                self.lake.fs.put_file(self.file.name, self.path)
            finally:
                os.unlink(self.file.name)
        else:
            self.lake.fs.mv(self.tmp, self.path)

    def discard(self) -> None:
        self.file.close()
        if self.tmp is None:
            os.unlink(self.file.name)
        else:
            self.lake.fs.rm(self.tmp)


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
            if not self.lake.exists(path):
                self.lake.write_bytes_atomic(path, data)
            self.rows[sha] = {"sha256": sha, "size_bytes": len(data), "media_type": media_type, "uri": rel,
                              "source_uri": source_uri, "_run_id": self.run_id}
        return f"sha256:{sha}"
