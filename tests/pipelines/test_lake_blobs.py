"""Blobs on a local lake: written whole under their content's name, once."""

import hashlib
import os

from pipelines.infra.lake import BlobStore, Lake


def test_a_local_write_appears_whole_and_leaves_no_temporary_file(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    assert lake.is_local
    target = lake.path("blobs", "ab", "one.bin")
    lake.write_bytes_atomic(target, b"first")
    lake.write_bytes_atomic(target, b"second")  # a rewrite replaces the file
    assert open(target, "rb").read() == b"second"
    assert os.listdir(os.path.dirname(target)) == ["one.bin"]


def test_a_blob_is_named_by_its_content_written_once_and_kept_when_already_there(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    store = BlobStore(lake, "run-1")
    data = b"\x89PNG" + bytes(range(256))
    sha = hashlib.sha256(data).hexdigest()
    assert store.put(data, "image/png", "in/a.har") == f"sha256:{sha}"
    assert store.put(data, "image/png", "in/b.har") == f"sha256:{sha}"
    path = lake.path("blobs", sha[:2], f"{sha}.png")
    assert open(path, "rb").read() == data
    assert list(store.rows) == [sha] and store.rows[sha]["source_uri"] == "in/a.har"
    assert store.rows[sha]["uri"] == f"blobs/{sha[:2]}/{sha}.png" and store.rows[sha]["size_bytes"] == len(data)

    os.utime(path, (1, 1))  # a later run's store finds the file an earlier run wrote and leaves it as it is
    assert BlobStore(lake, "run-2").put(data, "image/png", "in/c.har") == f"sha256:{sha}"
    assert os.stat(path).st_mtime == 1
