"""Reads from the lake for the view: blobs by content hash, and the GX Data Docs of a version.

A request never names a path. A blob is asked for by its sha256 (validated hex), its lake-relative `uri`
comes from the `blobs` view and must be a plain path under `blobs/`, and the bytes must hash to what was
asked for. A report file is asked for by dataset, version and a path inside that version's report folder,
with `..`, empty and backslash segments refused.
"""

from __future__ import annotations

import hashlib
import posixpath
import re

from pipelines.infra.lake import Lake

_REF = re.compile(r"(?:sha256:)?([0-9a-f]{64})")
MAX_BLOB_BYTES = 64 << 20
# Served inline with their own type; anything else (SVG and HTML included) only as a download.
INLINE_TYPES = {"image/png", "image/jpeg", "image/webp", "image/gif"}
TEXT_TYPES = {"text/plain", "application/json"}  # shown as plain text
REPORT_TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript",
                ".json": "application/json", ".png": "image/png", ".svg": "image/svg+xml",
                ".ico": "image/x-icon", ".woff": "font/woff", ".woff2": "font/woff2"}


def parse_ref(ref: str) -> str | None:
    """The hex digest of 'sha256:<hex>' or '<hex>' (64 lowercase hex digits), else None."""
    m = _REF.fullmatch(ref or "")
    return m.group(1) if m else None


def safe_blob_uri(uri: str | None) -> bool:
    """A lake-relative path under blobs/ with no way out of it."""
    if not uri or uri.startswith("/") or "\\" in uri or "\x00" in uri or "://" in uri:
        return False
    segments = uri.split("/")
    return segments[0] == "blobs" and len(segments) > 1 and posixpath.normpath(uri) == uri \
        and not any(s in ("", ".", "..") for s in segments)


def read_blob(lake: Lake, uri: str, sha: str) -> bytes | None:
    """The blob's bytes when they hash to `sha`; None when the file is missing or differs."""
    try:
        data = lake.fs.cat_file(lake.path(uri))
    except (FileNotFoundError, IsADirectoryError):
        return None
    return data if hashlib.sha256(data).hexdigest() == sha else None


def served_type(media_type: str | None) -> tuple[str, bool]:
    """(Content-Type, inline) for a blob of this media type."""
    if media_type in INLINE_TYPES:
        return media_type, True
    if media_type in TEXT_TYPES:
        return "text/plain; charset=utf-8", True
    return "application/octet-stream", False


def report_dir(lake: Lake, dataset: str, version: int) -> str:
    return lake.path("datasets", dataset, "validation", f"v{version}")


def report_file(lake: Lake, dataset: str, version: int, rel: str) -> str | None:
    """Path of a file inside a version's report folder, or None when `rel` could leave it."""
    if dataset in ("", ".", "..") or "/" in dataset or "\\" in dataset:
        return None
    segments = (rel or "index.html").split("/")
    if any(s in ("", ".", "..") or "\\" in s or "\x00" in s for s in segments):
        return None
    return posixpath.join(report_dir(lake, dataset, version), *segments)


def report_exists(lake: Lake, dataset: str, version: int) -> bool:
    path = report_file(lake, dataset, version, "index.html")
    return bool(path) and lake.fs.exists(path)


def read_report(lake: Lake, path: str) -> tuple[bytes, str] | None:
    try:
        data = lake.fs.cat_file(path)
    except (FileNotFoundError, IsADirectoryError):
        return None
    return data, REPORT_TYPES.get(posixpath.splitext(path)[1].lower(), "application/octet-stream")
