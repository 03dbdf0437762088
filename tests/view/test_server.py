"""The view's server without a browser: what it refuses, the headers it sends, that it never keeps a writer
out of the catalog, and that it reads a lake kept in an object store (fsspec) as well as a local one."""

from __future__ import annotations

import hashlib
import shutil
import time
import uuid

import duckdb
import fsspec
import pytest

from catalog import Catalog
from pipelines.infra.lake import Lake
from pipelines.view.app import create_app
from pipelines.view.db import Source
from tests.view.conftest import _catalog_rows
from tests.view.server import get, thread_server

OUTSIDE = ["/blob/../../etc/passwd", "/blob/..%2F..%2Fetc%2Fpasswd", "/blob/%2e%2e/%2e%2e/etc/passwd",
           "/blob/sha256:zzz", "/blob/sha256:" + "0" * 64, "/blob/sha256:" + "A" * 64, "/blob/etc/passwd",
           "/blob/sha256:..%2F..%2F..%2Fetc%2Fpasswd", "/blob/%2Fetc%2Fpasswd",
           "/reports/android/v1/../../../../../etc/passwd", "/reports/android/v1/..%2F..%2F..%2F..%2Fcatalog.duckdb",
           "/reports/..%2F..%2F/v1/index.html", "/static/../../../../etc/passwd", "/static/..%2F..%2Fapp.py"]


def test_nothing_outside_the_lake_is_served(view_url):
    for path in OUTSIDE:
        status, body, _ = get(view_url, path)
        assert 400 <= status < 500, f"{path}: {status}"
        assert b"root:" not in body and b"DUCK" not in body and b"import" not in body, path


def test_a_blob_is_served_by_its_hash_with_its_bytes_checked(view_url, view_lake):
    ref = _catalog_rows(view_lake.path, "SELECT observation.screenshot AS s FROM steps "
                                        f"WHERE episode_id = '{view_lake.tap_episode}'")[0]["s"]
    status, body, headers = get(view_url, f"/blob/{ref}")
    assert status == 200 and headers["content-type"] == "image/jpeg"
    assert f"sha256:{hashlib.sha256(body).hexdigest()}" == ref
    assert "sandbox" in headers["content-security-policy"] and headers["x-content-type-options"] == "nosniff"


def test_pages_forbid_scripts_and_answer_loopback_host_names_only(view_url):
    status, _, headers = get(view_url, "/episodes")
    assert status == 200
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp  # no script source at all
    assert get(view_url, "/episodes", {"Host": "attacker.example"})[0] == 400  # DNS rebinding
    assert get(view_url, "/episodes", {"Host": "localhost"})[0] == 200


def test_the_catalog_is_never_held_between_requests_and_a_writer_gets_it(view_url, view_lake):
    assert get(view_url, "/episodes")[0] == 200
    writer = duckdb.connect(f"{view_lake.path}/catalog.duckdb")  # another process writes: possible at once
    try:
        started = time.monotonic()
        status, body, _ = get(view_url, "/episodes")
        assert status == 503 and b"being written" in body and b'http-equiv="refresh"' in body
        assert time.monotonic() - started >= 1.5  # it waited for the writer before saying so
    finally:
        writer.close()
    assert get(view_url, "/episodes")[0] == 200


@pytest.fixture
def memory_lake(tmp_path, view_lake):
    """The test lake copied into fsspec's in-memory filesystem (an object store for this process), with a
    catalog whose views point there."""
    fs = fsspec.filesystem("memory")
    root = f"/view-{uuid.uuid4().hex[:8]}"
    fs.put(f"{view_lake.path}/datasets", f"{root}/datasets", recursive=True)
    fs.put(f"{view_lake.path}/blobs", f"{root}/blobs", recursive=True)
    fs.put(f"{view_lake.path}/export_rows", f"{root}/export_rows", recursive=True)
    catalog = str(tmp_path / "catalog.duckdb")
    shutil.copyfile(f"{view_lake.path}/catalog.duckdb", catalog)
    url = f"memory://{root.lstrip('/')}"
    with Catalog(catalog, url) as cat:
        if "memory" not in cat.con.list_filesystems():  # DuckDB may already know it from an earlier connection
            cat.con.register_filesystem(fs)
        cat.refresh_views()
        cat.refresh_export_rows()
    yield url, catalog
    fs.rm(root, recursive=True)


def test_a_lake_in_an_object_store_is_read_through_fsspec(memory_lake, view_lake):
    url, catalog = memory_lake
    ref = _catalog_rows(view_lake.path, "SELECT observation.screenshot AS s FROM steps "
                                        f"WHERE episode_id = '{view_lake.tap_episode}'")[0]["s"]
    with thread_server(create_app(Source(Lake(url), catalog))) as base:
        status, body, _ = get(base, f"/episodes/all/{view_lake.droidbot}")
        assert status == 200 and body.count(b'class="step"') == 12
        assert b'class="alt branch"' in body
        status, body, _ = get(base, f"/blob/{ref}")
        assert status == 200 and f"sha256:{hashlib.sha256(body).hexdigest()}" == ref
        duplicates = get(base, "/duplicates")[1]
        assert duplicates.count(b'class="member"') == duplicates.count(b'class="member representative"') == 2
        assert duplicates.count(b'<pre class="text">') == 4  # members read from the parts in the store
        assert get(base, "/reports/android/v1/index.html")[0] == 200
