"""Planning's listing: what a unit records of the files it claims. The fingerprint is what a rerun compares
to skip finished tasks, so its text must stay the same across releases (a changed text re-ingests every
input of an existing lake)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from pipelines.infra import definition, plan

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _expected_fingerprint(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in sorted(files, key=str):
        st = os.stat(f)
        h.update(f"{f}\0{st.st_size}\0{st.st_mtime}\n".encode())
    return h.hexdigest()


def test_a_directory_unit_records_the_size_and_fingerprint_of_every_file_under_it(tmp_path):
    run = tmp_path / "in" / "droidbot-run"
    shutil.copytree(SAMPLES / "android" / "droidbot-run", run)
    (tmp_path / "in" / "notes.bin").write_bytes(b"\x00\x01 not a trace")
    units, ignored = plan.find_units([str(tmp_path / "in")], ["droidbot"])
    files = [p for p in run.rglob("*") if p.is_file()]
    (unit,) = units
    assert (unit.format, unit.path, unit.uri) == ("droidbot", str(run), "in/droidbot-run")
    assert unit.size == sum(p.stat().st_size for p in files)
    assert unit.fingerprint == _expected_fingerprint(files)
    assert [(i.path, i.size) for i in ignored] == [(str(tmp_path / "in" / "notes.bin"), 14)]
    assert ignored[0].reason.endswith("no format reads it")


def test_a_file_given_as_the_input_is_its_own_unit(tmp_path):
    cast = tmp_path / "demo.cast"
    shutil.copy(next((SAMPLES / "ubuntu").rglob("*.cast")), cast)
    (unit,), ignored = plan.find_units([str(cast)], ["asciicast"])
    assert (unit.path, unit.uri, unit.size, unit.root) == (str(cast), "demo.cast", cast.stat().st_size,
                                                           str(tmp_path))
    assert unit.fingerprint == _expected_fingerprint([cast]) and ignored == []


def test_a_file_claimed_by_an_earlier_format_is_not_claimed_again(tmp_path):
    shutil.copytree(SAMPLES / "android" / "droidbot-run", tmp_path / "run")
    once, _ = plan.find_units([str(tmp_path)], ["droidbot"])
    twice, _ = plan.find_units([str(tmp_path)], ["droidbot", "droidbot"])
    assert twice == once


def _head_reads(monkeypatch) -> dict[str, int]:
    reads: dict[str, int] = {}
    read = plan._local_head

    def counted(path: str) -> bytes:
        reads[path] = reads.get(path, 0) + 1
        return read(path)

    monkeypatch.setattr(plan, "_local_head", counted)
    return reads


def test_past_the_kept_heads_each_file_is_read_once_folder_range_by_folder_range(tmp_path, monkeypatch):
    # 30 folders of 5 JSON files, 12 heads kept: the formats claim two folders at a time, each format in turn,
    # so every head is read once (seven formats read every JSON file's head: one range for all read each 7x)
    for i in range(30):
        for j in range(5):
            (tmp_path / "in" / f"x{i:02d}").mkdir(parents=True, exist_ok=True)
            (tmp_path / "in" / f"x{i:02d}" / f"{j}.json").write_text('{"k": %d}' % j)
    reads = _head_reads(monkeypatch)
    monkeypatch.setattr(plan, "HEADS_KEPT", 12)
    units, ignored = plan.find_units([str(tmp_path / "in")], definition.load("ingest-all").formats)
    assert units == [] and len(ignored) == 150
    assert len(reads) == 150 and max(reads.values()) == 1


def test_claims_by_folder_range_are_the_claims_of_the_whole_listing(tmp_path, monkeypatch):
    """Three inputs: samples of every format twice; a Terminal-Bench trial whose `results.json` is beside
    `sessions/` (a folder's file and subfolder: never in different ranges); a DroidBot run without a file of
    its own (its `events/` and `states/` fall in different ranges: the run is found in one of them, so the
    formats look at that input's whole listing again)."""
    mixed, trials, split_run = tmp_path / "mixed", tmp_path / "trials", tmp_path / "split"
    for copy in ("a", "b"):
        shutil.copytree(SAMPLES, mixed / copy)
    trial = trials / "c" / "trial"
    (trial / "sessions").mkdir(parents=True)
    (trial / "results.json").write_text('{"id": "t", "is_resolved": true}')
    for i in range(8):  # more files than the heads kept below: the trial would be split if it could be
        shutil.copy(next((SAMPLES / "ubuntu").rglob("*.cast")), trial / "sessions" / f"agent-{i}.cast")
    for sub in ("events", "states"):
        shutil.copytree(SAMPLES / "android" / "droidbot-run" / sub, split_run / "run" / sub)
    inputs, formats = [str(mixed), str(trials), str(split_run)], definition.load("ingest-all").formats
    whole = plan.find_units(inputs, formats)
    assert plan.HEADS_KEPT > sum(1 for p in tmp_path.rglob("*") if p.is_file())  # one range: the whole listing
    assert {(u.format, u.uri) for u in whole[0]} >= {("terminal_bench", "trials/c/trial"), ("droidbot", "split/run")}
    monkeypatch.setattr(plan, "HEADS_KEPT", 6)
    assert plan.find_units(inputs, formats) == whole


def test_a_units_members_are_claimed_with_it_and_its_unread_run_files_listed_with_their_reason(tmp_path,
                                                                                                monkeypatch):
    """A format's `members` hook: the files beside a unit its reader reads count in the unit's size and
    fingerprint and no later format claims them; a file of the run it does not read is claimed too (no other
    reader takes it) and listed in `ignored_inputs` with the reason the format gives."""
    from types import SimpleNamespace

    run = tmp_path / "in" / "run"
    (run / "shots").mkdir(parents=True)
    history, shot, todo = run / "history.json", run / "shots" / "1.png", run / "todo.md"
    for path, data in ((history, b"{}"), (shot, b"\x89PNG picture"), (todo, b"- [ ] a"),
                       (tmp_path / "in" / "other.json", b"[]")):
        path.write_bytes(data)
    reader = SimpleNamespace(
        units=lambda files, head: [p for p in files if p.endswith("history.json")],
        members=lambda found, files, head: {p: [str(shot), (str(todo), "the agent's todo list")] for p in found})
    greedy = SimpleNamespace(units=lambda files, head: list(files))  # claims whatever is left
    monkeypatch.setattr(plan.registry, "load", {"reader": reader, "greedy": greedy}.__getitem__)
    units, ignored = plan.find_units([str(tmp_path / "in")], ["reader", "greedy"])
    assert [(u.format, u.uri, u.members) for u in units] == [("greedy", "in/other.json", ()),
                                                             ("reader", "in/run/history.json", (str(shot),))]
    unit = units[1]
    assert unit.size == history.stat().st_size + shot.stat().st_size
    assert unit.fingerprint == _expected_fingerprint([history, shot])
    assert [(i.path, i.reason) for i in ignored] == [
        (str(todo), "part of the reader run history.json, which does not read it: the agent's todo list")]


def _walked(root: str) -> tuple[list[tuple[str, int, float]], list[str]]:
    """What planning listed before it walked with `os.scandir` itself: `os.walk` and `regular_file` per name."""
    from ingest.source import regular_file

    found, skipped = [], []
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            st, reason = regular_file(root, path)
            (skipped.append(f"{path}: {reason}") if reason else found.append((path, st.st_size, st.st_mtime)))
    return sorted(found), skipped


def test_the_walker_lists_and_skips_what_os_walk_with_the_file_rule_did(tmp_path):
    root = tmp_path / "in"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "run.json").write_text("{}")
    (root / "top.txt").write_text("x")
    outside = tmp_path / "secret.txt"
    outside.write_text("hunter2")
    (root / "a" / "link-in.json").symlink_to(root / "top.txt")  # a link inside the input: read
    (root / "a" / "link-out.json").symlink_to(outside)  # out of the input: skipped
    (root / "a" / "broken").symlink_to(tmp_path / "gone")  # skipped
    (root / "a" / "linked-folder").symlink_to(root / "a" / "b")  # neither listed nor walked
    (root / "z").mkdir()
    os.mkfifo(root / "z" / "pipe")  # skipped: would block its reader
    open(os.path.join(os.fsencode(root / "z"), b"caf\xe9.json"), "w").close()  # a name not UTF-8: skipped

    skipped: list[plan.Ignored] = []
    listing = plan._files(plan.LocalFileSystem(), str(root), skipped)
    found, expected_skips = _walked(str(root))
    assert list(zip(listing.paths, listing.sizes, listing.mtimes)) == found
    assert [p for p, _, _ in found] == sorted([str(root / "a" / "b" / "run.json"), str(root / "a" / "link-in.json"),
                                               str(root / "top.txt")])
    assert [f"{s.path}: {s.reason[len('skipped: '):]}" for s in skipped] == \
        [plan.printable_path(s) for s in expected_skips]
    assert len(skipped) == 4  # link out, broken link, FIFO, the name that is not UTF-8
