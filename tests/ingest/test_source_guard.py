"""One guarded way to open input (`ingest.source.Source`): a reader that lists a folder itself, or follows a
name written inside a file, reads nothing the walker refused — a link out of the input, a FIFO, a device —
and nothing outside the input root."""

import os
import shutil

import pytest

from ingest.source import Source, SourceError
from tests.conftest import SAMPLES

# folder-shaped samples whose readers list folders or follow names from inside their files
FOLDER_SAMPLES = {
    "android/droidbot-run": "ingest-android",
    "android/uiautomator-dump": "ingest-android",
    "browser/browsergym-agentlab": "ingest-browser",
    "macos/agentnet-darwin": "ingest-macos",
    "atif/harbor-claude-code": "ingest-swe",
}


def _plant(root, outside):
    """Beside the first file of every folder of the copy: a link to a copy of that file outside the input,
    and a FIFO, both named the way the folder names its files (what a reader listing it would pick up)."""
    planted = []
    for dirpath, _, names in os.walk(root):
        names = sorted(n for n in names if not n.startswith("."))
        if not names:
            continue
        stem, dot, ext = names[0].rpartition(".")
        stem, ext = (stem, f".{ext}") if dot else (names[0], "")
        target = outside / f"{len(planted)}-{names[0]}"
        shutil.copy(os.path.join(dirpath, names[0]), target)
        link, fifo = os.path.join(dirpath, f"{stem}9991{ext}"), os.path.join(dirpath, f"{stem}9992{ext}")
        os.symlink(target, link)
        os.mkfifo(fifo)
        planted += [link, fifo]
    return planted


def _content(query):
    rows = query("SELECT step_id, observation.text AS text, observation.screenshot AS shot, action.raw AS raw "
                 "FROM steps")
    return sorted((r["step_id"], r["text"], r["shot"], r["raw"]) for r in rows)


@pytest.mark.parametrize("sample", sorted(FOLDER_SAMPLES))
def test_links_out_of_the_input_and_fifos_inside_folders_are_never_read(sample, tmp_path, run, query, lake):
    # the same input name twice: ids hash the path inside the input
    clean_input, dirty_input, outside = tmp_path / "a" / "input", tmp_path / "b" / "input", tmp_path / "outside"
    outside.mkdir()
    shutil.copytree(SAMPLES / sample, clean_input / "in")
    shutil.copytree(SAMPLES / sample, dirty_input / "in")
    planted = _plant(dirty_input, outside)
    assert planted

    clean = run(FOLDER_SAMPLES[sample], inputs=[clean_input], stages=["ingest"])
    expected = _content(query)
    shutil.rmtree(lake)
    dirty = run(FOLDER_SAMPLES[sample], inputs=[dirty_input], stages=["ingest"])  # a FIFO read would hang here

    assert dirty.episodes == clean.episodes and _content(query) == expected
    ignored = {r["path"]: r["reason"] for r in query("SELECT path, reason FROM ignored_inputs")}
    for path in planted:
        reason = ignored[path]
        assert ("outside the input" in reason) if os.path.islink(path) else ("FIFO" in reason), (path, reason)


@pytest.mark.parametrize("sample", sorted(FOLDER_SAMPLES))
def test_a_file_whose_name_is_not_utf8_is_skipped_and_named_the_rest_is_read(sample, tmp_path, run, query, lake):
    # a name's bytes that are no UTF-8 reach Python as surrogates, which no text column takes: the whole run
    # used to fail on them (DuckDB's cast error) instead of going on without that file
    clean_input, dirty_input = tmp_path / "a" / "input", tmp_path / "b" / "input"
    shutil.copytree(SAMPLES / sample, clean_input / "in")
    shutil.copytree(SAMPLES / sample, dirty_input / "in")
    planted = []
    for dirpath, _, names in os.walk(dirty_input):
        if names:  # a copy of the folder's first file, its name led by the byte 0xff
            first = sorted(names)[0]
            bad = os.path.join(os.fsencode(dirpath), b"\xff" + os.fsencode(first))
            shutil.copy(os.path.join(dirpath, first), bad)
            planted.append(os.path.join(dirpath, "\\xff" + first))

    clean = run(FOLDER_SAMPLES[sample], inputs=[clean_input], stages=["ingest"])
    expected = _content(query)
    shutil.rmtree(lake)
    dirty = run(FOLDER_SAMPLES[sample], inputs=[dirty_input], stages=["ingest"])

    assert dirty.status == "success" and dirty.episodes == clean.episodes and _content(query) == expected
    ignored = {r["path"]: r["reason"] for r in query("SELECT path, reason FROM ignored_inputs")}
    assert {p: ignored.get(p) for p in planted} == {p: "skipped: its name is not UTF-8 text" for p in planted}


def test_a_name_inside_a_file_cannot_lead_out_of_the_input(tmp_path):
    (tmp_path / "secret.txt").write_text("secret")
    unit = tmp_path / "input" / "run"
    unit.mkdir(parents=True)
    (unit / "inside.txt").write_text("ok")
    os.symlink(tmp_path / "secret.txt", unit / "link.txt")
    import fsspec

    source = Source(fs=fsspec.filesystem("file"), path=str(unit), uri="input/run", put_blob=lambda *a: "",
                    root=str(tmp_path / "input"))
    assert source.read_bytes("inside.txt") == b"ok"
    assert source.listdir() == ["inside.txt"]  # the link out is not listed
    for rel in ("link.txt", "../../secret.txt"):
        with pytest.raises(SourceError) as err:
            source.read_bytes(rel)
        assert err.value.rule == "outside_input" and "outside the input" in err.value.reason
    with pytest.raises(SourceError) as err:
        source.read_path(str(tmp_path / "secret.txt"))
    assert err.value.rule == "outside_input"
    assert source.read_path(str(unit / "inside.txt")) == b"ok"


def test_a_name_is_joined_to_the_unit_as_its_normalized_path_whatever_its_parts(tmp_path):
    # plain names take a shortcut past normpath: every form of path must still name the file normpath names
    import posixpath

    import fsspec

    fs = fsspec.filesystem("file")
    rels = ["a", "a/b", "a.json", ".a", "a..b", "...", ".a/b", "./a", "../a", "a/..", "a/.", "a/./b", "a//b", "a/",
            ".", "..", "/abs/a", "a/../../b"]
    for unit in ("/in/run", "/in/run/", "/in//run", "/in/./run", "/in/x/../run", "/", "in/run"):
        source = Source(fs=fs, path=unit, uri="run", put_blob=lambda *a: "", root="/in")
        for rel in rels:
            assert source.join(rel) == posixpath.normpath(posixpath.join(unit, rel)), (unit, rel)
        assert source.join("") == unit
    # and the file read through such a path is the file itself
    run = tmp_path / "input" / "run"
    (run / "events").mkdir(parents=True)
    (run / "events" / "e.json").write_text("{}")
    source = Source(fs=fs, path=str(run) + "/", uri="input/run", put_blob=lambda *a: "", root=str(tmp_path / "input"))
    assert source.read_bytes("events/e.json") == source.read_bytes("./events/../events/e.json") == b"{}"
    assert source.size(str(run / "events" / "e.json")) == 2 and source.is_dir("events") and not source.is_dir("x")


def test_a_stream_is_guarded_like_a_read_and_feeds_the_same_digest(tmp_path):
    import fsspec

    from ingest.source import Budgets

    (tmp_path / "secret.txt").write_text("secret")
    unit = tmp_path / "input" / "run"
    unit.mkdir(parents=True)
    (unit / "inside.txt").write_bytes(b"0123456789" * 1000)
    os.symlink(tmp_path / "secret.txt", unit / "link.txt")
    os.mkfifo(unit / "fifo.txt")

    def source(budgets=Budgets()):
        return Source(fs=fsspec.filesystem("file"), path=str(unit), uri="input/run", put_blob=lambda *a: "",
                      root=str(tmp_path / "input"), budgets=budgets)

    read, streamed = source(), source()
    read.read_bytes("inside.txt")
    with streamed.open_stream("inside.txt") as stream:
        assert stream.read(10) == b"0123456789"  # the rest is left unread: closing reads it into the digest
    assert streamed.sha256() == read.sha256()
    for rel, rule in (("link.txt", "outside_input"), ("fifo.txt", "not_a_regular_file"),
                      ("missing.txt", "missing_file")):
        for open_file in (source().open_stream, source().read_bytes):
            with pytest.raises(SourceError) as err:
                open_file(rel)
            assert err.value.rule == rule and err.value.reason.startswith(f"{rel}: "), rel
    beside = source()  # a file read by its path beside the unit is not the unit's content: no digest
    assert beside.read_path(str(unit / "inside.txt")) == b"0123456789" * 1000
    assert beside.sha256() == source().sha256()
    with pytest.raises(SourceError) as err:
        source(Budgets(file_bytes=1000)).open_stream("inside.txt")
    assert err.value.rule == "file_too_large" and "TRAJFORGE_BUDGET_FILE_BYTES" in err.value.reason


def test_a_folder_linked_out_of_the_input_is_neither_listed_nor_read(tmp_path):
    import fsspec

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    shared = tmp_path / "input" / "shared"
    shared.mkdir(parents=True)
    (shared / "in.txt").write_text("in")
    unit = tmp_path / "input" / "run"
    unit.mkdir()
    (unit / "inside.txt").write_text("ok")
    os.symlink(outside, unit / "linked")  # a folder link out of the input
    os.symlink(shared, unit / "near")  # a folder link that stays inside it
    source = Source(fs=fsspec.filesystem("file"), path=str(unit), uri="input/run", put_blob=lambda *a: "",
                    root=str(tmp_path / "input"))
    assert source.listdir() == ["inside.txt", "near"]
    assert source.listdir("linked") == [] and not source.exists("linked/secret.txt")
    assert source.listdir("near") == ["in.txt"] and source.read_bytes("near/in.txt") == b"in"
    with pytest.raises(SourceError) as err:
        source.read_bytes("linked/secret.txt")
    assert err.value.rule == "outside_input" and str(outside / "secret.txt") in err.value.reason


def test_a_listed_file_swapped_after_the_listing_for_a_link_out_or_a_fifo_is_not_read(tmp_path):
    """Files a listing found plain are read without their own lstat (the folder was checked once): what
    replaces one after the listing is still refused when it is opened, and a FIFO does not block the read."""
    import fsspec

    (tmp_path / "secret.txt").write_text("secret")
    unit = tmp_path / "input" / "run"
    unit.mkdir(parents=True)
    for name in ("a.txt", "b.txt", "c.txt"):
        (unit / name).write_text("ok")
    source = Source(fs=fsspec.filesystem("file"), path=str(unit), uri="input/run", put_blob=lambda *a: "",
                    root=str(tmp_path / "input"))
    assert source.listdir() == ["a.txt", "b.txt", "c.txt"]
    (unit / "a.txt").unlink()
    os.symlink(tmp_path / "secret.txt", unit / "a.txt")
    (unit / "b.txt").unlink()
    os.mkfifo(unit / "b.txt")
    for rel in ("a.txt", "b.txt"):
        with pytest.raises(SourceError) as err:
            source.read_bytes(rel)
        assert err.value.rule == "not_a_regular_file" and err.value.reason.startswith(f"{rel}: "), rel
    assert source.read_bytes("c.txt") == b"ok"


def test_a_stream_hands_out_at_most_what_is_asked_and_all_of_it_once(tmp_path):
    """A streaming parser asks for pieces: it gets no more than it asked for (a file is never read whole into
    one piece), nothing for a read of 0, the rest for a read of no size, and a file shorter than the sniff whole."""
    import fsspec

    content = "".join(f"line {i:05d}\n" for i in range(1000)).encode()
    (tmp_path / "run.txt").write_bytes(content)
    (tmp_path / "short.json").write_bytes(b'{"a": 1}')

    def stream(name):
        return Source(fs=fsspec.filesystem("file"), path=str(tmp_path / name), uri=name,
                      put_blob=lambda *a: "").open_stream()

    with stream("run.txt") as s:
        assert s.read(0) == b"" and s.read(1) == b"l"
        pieces = list(iter(lambda: s.read(100), b""))
    assert all(0 < len(p) <= 100 for p in pieces) and b"l" + b"".join(pieces) == content
    with stream("run.txt") as s:
        assert s.read(7) == content[:7] and s.read(-1) == content[7:] and s.read(5) == b""
    with stream("run.txt") as s:
        assert s.read() == content
    with stream("short.json") as s:
        assert s.read() == b'{"a": 1}'


def test_a_stream_of_a_file_that_grew_past_the_budget_stops_naming_the_file_and_its_size():
    import io

    from ingest.source import Stream

    content = bytes(range(32, 127)) * 100  # 9500 bytes of text

    def read_all(limit):
        with Stream(io.BytesIO(content), "logs/run.har", limit) as s:
            return b"".join(iter(lambda: s.read(1000), b""))

    assert read_all(len(content)) == content  # exactly at the budget: read
    with pytest.raises(SourceError) as err:
        read_all(len(content) - 1)
    assert err.value.rule == "file_too_large"
    assert err.value.reason.startswith("logs/run.har: the file has 9500 bytes: over the file_bytes budget of ")


def test_a_file_of_another_filesystem_is_read_and_streamed_with_the_same_decoding_and_budget():
    """Inputs on fsspec's other filesystems (object stores, memory) are read without the local fast path: JSON in
    UTF-16 is decoded there too, a file over the budget and a missing file are rows naming the file."""
    import fsspec

    from ingest.source import Budgets

    fs = fsspec.filesystem("memory")
    text = '{"messages": [{"role": "user", "content": "Köln ☔"}]}'
    raw = ("\ufeff" + text).encode("utf-16-le")
    fs.pipe({"/unit/chat.json": raw, "/unit/big.json": b"[" + b"1," * 600 + b"1]", "/unit/cut.json": raw[:-1]})

    def source(budgets=Budgets()):
        return Source(fs=fs, path="/unit", uri="memory://unit", put_blob=lambda *a: "", budgets=budgets)

    read, streamed = source(), source()
    assert read.read_bytes("chat.json") == text.encode()
    with streamed.open_stream("chat.json") as stream:
        assert stream.read() == text.encode()
    assert read.decoded["chat.json"].encoding == streamed.decoded["chat.json"].encoding == "UTF-16LE"
    assert read.sha256() == streamed.sha256()
    read.read_bytes("cut.json")
    assert read.decoded["cut.json"].problem.startswith("cut.json: UTF-16LE text ends inside a character")
    for open_file in (lambda s, rel: s.read_bytes(rel), lambda s, rel: s.open_stream(rel)):
        assert open_file(source(Budgets(file_bytes=1203)), "big.json")  # exactly at the budget
        with pytest.raises(SourceError) as err:
            open_file(source(Budgets(file_bytes=1202)), "big.json")
        assert err.value.rule == "file_too_large"
        assert err.value.reason.startswith("big.json: the file has 1203 bytes: over the file_bytes budget of ")
        with pytest.raises(SourceError) as err:
            open_file(source(), "gone.json")
        assert (err.value.rule, err.value.reason, err.value.location) == (
            "missing_file", "gone.json: file not found", "gone.json")


def test_a_file_whose_size_the_filesystem_does_not_tell_is_read_to_its_end():
    """procfs (like a file still being written) gives a size that is not the file's: the read goes on to the end."""
    import fsspec

    status = f"/proc/{os.getpid()}/status"
    assert os.stat(status).st_size == 0
    source = Source(fs=fsspec.filesystem("file"), path=status, uri="status", put_blob=lambda *a: "", root="/proc")
    data = source.read_bytes()
    assert data.startswith(b"Name:\t") and f"\nPid:\t{os.getpid()}\n".encode() in data and data.endswith(b"\n")
