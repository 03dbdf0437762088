"""Edge cases of OpenCode's stores the CLI runs do not write (hand-made in the shapes of OpenCode's
`Session.Info`, `MessageV2` and its Drizzle tables): an assistant message spanning several model calls, a tool
that failed, one still running, reasoning, a subagent's session, part types kept raw (one unknown, with a
warning); a database whose writes are still in its WAL (a WAL cut mid-frame, a stale frame of an older WAL
generation); the claim of a database among files OpenCode does not write."""

from __future__ import annotations

import json
import shutil
import sqlite3

from ingest.record import Episode, Rejected
from ingest.swe import opencode
from pipelines.infra import definition
from pipelines.infra.plan import find_units
from tests.ingest.golden import read_records

SESSION = {"id": "ses_a", "projectID": "p", "directory": "/w", "title": "t", "version": "1.1.0",
           "time": {"created": 1_700_000_000_000, "updated": 1_700_000_009_000}}


def _user(mid, text):
    return {"id": mid, "sessionID": "ses_a", "role": "user", "time": {"created": 1_700_000_000_000}}, [
        {"id": f"prt_{mid}", "type": "text", "text": text}]


def _assistant(mid, parts, **extra):
    info = {"id": mid, "sessionID": "ses_a", "role": "assistant", "modelID": "m1", "providerID": "prov",
            "time": {"created": 1_700_000_001_000}, "tokens": {"input": 5, "output": 2, "cache": {"read": 1}},
            "cost": 0.5, **extra}
    return info, [{"id": f"prt_{mid}_{i:02d}", **p} for i, p in enumerate(parts)]


def _tool(call, status, **state):
    return {"type": "tool", "callID": call, "tool": "bash", "state": {"status": status, "input": {"command": call},
                                                                        **state}}


def _storage(tmp_path, session, messages):
    root = tmp_path / "storage"
    (root / "session" / "p").mkdir(parents=True)
    (root / "session" / "p" / f"{session['id']}.json").write_text(json.dumps(session))
    for info, parts in messages:
        (root / "message" / session["id"]).mkdir(parents=True, exist_ok=True)
        (root / "message" / session["id"] / f"{info['id']}.json").write_text(json.dumps(info))
        (root / "part" / info["id"]).mkdir(parents=True, exist_ok=True)
        for part in parts:
            (root / "part" / info["id"] / f"{part['id']}.json").write_text(json.dumps(part))
    return root


def test_steps_of_one_message_errors_running_calls_and_kept_parts(tmp_path):
    messages = [_user("msg_1", "Do it"),
                _assistant("msg_2", [{"type": "step-start"}, {"type": "reasoning", "text": "think"},
                                     _tool("ls", "completed", output="a\n", metadata={"exit": 0}),
                                     {"type": "step-finish"}, {"type": "step-start"},
                                     _tool("false", "error", error="boom"), {"type": "patch", "files": ["a"]},
                                     {"type": "step-finish"}, {"type": "step-start"},
                                     _tool("sleep 9", "running"), {"type": "hologram", "x": 1}],
                           error={"name": "MessageAbortedError"})]
    records = read_records(opencode, _storage(tmp_path, SESSION, messages))
    warnings = [r for r in records if isinstance(r, Rejected)]
    assert [w.rule for w in warnings] == ["unknown_content"] and "hologram" in warnings[0].reason
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [s.action.code for s in ep.steps] == ["ls", "false", "sleep 9"]
    assert ep.steps[0].reasoning == "think" and ep.task == "Do it" and ep.agent == "m1"
    assert ep.steps[1].observation.exit_code == 0 and ep.steps[1].observation.text == "a\n"
    assert ep.steps[2].observation.is_error and ep.steps[2].observation.text == "boom"
    assert ep.final_observation is None and not ep.terminated  # the last call never finished
    extras = ep.env["opencode"]
    assert [p["type"] for p in extras["parts"]] == ["patch", "hologram"]
    assert extras["errors"] == [{"message": "msg_2", "error": {"name": "MessageAbortedError"}}]
    assert extras["tokens"] == {"input": 5, "output": 2, "cache_read": 1} and extras["cost"] == 0.5


def test_a_subagent_session_names_its_parent(tmp_path):
    child = {**SESSION, "id": "ses_b", "parentID": "ses_a"}
    messages = [_user("msg_1", "Count"), _assistant("msg_2", [{"type": "text", "text": "2"}])]
    (ep,) = [r for r in read_records(opencode, _storage(tmp_path, child, messages)) if isinstance(r, Episode)]
    assert ep.env["opencode"]["parentID"] == "ses_a" and ep.key == "ses_b" and ep.terminated
    assert ep.steps[0].action.kind == "message" and ep.steps[0].action.text == "2"


def test_message_fields_the_reader_does_not_map_are_kept_and_an_undefined_one_warned_of(tmp_path):
    user, parts = _user("msg_1", "Count")
    user.update(agent="build", model={"providerID": "prov", "modelID": "m1"}, summary={"title": "Count", "diffs": []})
    answer = _assistant("msg_2", [{"type": "text", "text": "2"}], mode="build", agent="build", finish="stop",
                        path={"cwd": "/w", "root": "/w"}, parentID="msg_1", mood="cheerful")
    records = read_records(opencode, _storage(tmp_path, SESSION, [(user, parts), answer]))
    warnings = [r for r in records if isinstance(r, Rejected)]
    assert [w.rule for w in warnings] == ["unknown_content"] and "mood" in warnings[0].reason
    assert "msg_2" in warnings[0].reason
    (ep,) = [r for r in records if isinstance(r, Episode)]
    kept = ep.env["opencode"]["message_fields"]
    assert kept[0] == {"id": "msg_1", "role": "user", "time": {"created": 1_700_000_000_000}, "agent": "build",
                       "model": {"providerID": "prov", "modelID": "m1"}, "summary": {"title": "Count", "diffs": []}}
    assert kept[1] == {"id": "msg_2", "role": "assistant", "time": {"created": 1_700_000_001_000}, "mode": "build",
                       "agent": "build", "finish": "stop", "path": {"cwd": "/w", "root": "/w"}, "parentID": "msg_1",
                       "mood": "cheerful"}
    assert ep.env["opencode"]["tokens"] == {"input": 5, "output": 2, "cache_read": 1}  # mapped: not kept twice


def test_a_session_whose_last_turn_is_reasoning_alone_is_not_terminated(tmp_path):
    messages = [_user("msg_1", "Count"),
                _assistant("msg_2", [{"type": "step-start"}, {"type": "reasoning", "text": "Counting..."},
                                     {"type": "step-finish"}])]
    (ep,) = [r for r in read_records(opencode, _storage(tmp_path, SESSION, messages)) if isinstance(r, Episode)]
    assert ep.steps[-1].reasoning == "Counting..." and ep.steps[-1].action.text is None and not ep.terminated


def _database(folder, live: bool = True):
    """An OpenCode-shaped database in WAL mode whose rows are still in its WAL (the connection kept open, as
    OpenCode leaves it), copied to `folder`."""
    work = folder.parent / "live"
    work.mkdir()
    db = sqlite3.connect(work / "opencode.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.executescript("""
        CREATE TABLE session (id text PRIMARY KEY, project_id text, parent_id text, slug text, directory text,
                              title text, version text, time_created integer, time_updated integer);
        CREATE TABLE message (id text PRIMARY KEY, session_id text, time_created integer, time_updated integer,
                              data text);
        CREATE TABLE part (id text PRIMARY KEY, message_id text, session_id text, time_created integer,
                           time_updated integer, data text);""")
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the schema in the database file, the rows in the WAL
    db.execute("INSERT INTO session VALUES ('ses_a', 'p', NULL, 's', '/w', 't', '1.18.0', 1, 2)")
    for mid, (info, parts) in (("msg_1", _user("msg_1", "Hi")),
                               ("msg_2", _assistant("msg_2", [_tool("ls", "completed", output="x")]))):
        db.execute("INSERT INTO message VALUES (?, 'ses_a', 1, 1, ?)", (mid, json.dumps(info)))
        for p in parts:
            db.execute("INSERT INTO part VALUES (?, ?, 'ses_a', 1, 1, ?)", (p["id"], mid, json.dumps(p)))
    db.commit()
    folder.mkdir(exist_ok=True)
    for name in ("opencode.db", "opencode.db-wal"):
        shutil.copy(work / name, folder / name)
    db.close()
    return folder / "opencode.db"


def test_a_database_read_with_the_writes_left_in_its_wal(tmp_path):
    path = _database(tmp_path / "data")
    (tmp_path / "alone").mkdir()
    shutil.copy(path, tmp_path / "alone" / "opencode.db")  # the database file alone holds no session yet
    assert [r for r in read_records(opencode, tmp_path / "alone") if isinstance(r, Episode)] == []
    (ep,) = [r for r in read_records(opencode, tmp_path / "data") if isinstance(r, Episode)]
    assert [s.action.code for s in ep.steps] == ["ls"] and ep.final_observation.text == "x"
    # cut mid-frame: the frames of the last commit are incomplete, so nothing of it is applied
    wal = path.with_name("opencode.db-wal")
    wal.write_bytes(wal.read_bytes()[:-100])
    records = read_records(opencode, tmp_path / "data")
    assert not [r for r in records if isinstance(r, Episode)]  # the rows were one commit: none of it applies


def test_a_stale_wal_generation_is_not_applied(tmp_path):
    path = _database(tmp_path / "data")
    wal = bytearray(path.with_name("opencode.db-wal").read_bytes())
    wal[16:24] = b"\x00" * 8  # the header's salts no longer match any frame's: a WAL of another generation
    path.with_name("opencode.db-wal").write_bytes(bytes(wal))
    assert [r for r in read_records(opencode, tmp_path / "data") if isinstance(r, Episode)] == []


def test_a_database_among_other_files_is_claimed_alone_and_a_data_folder_whole():
    head = {p: b"SQLite format 3\x00" for p in ("/in/mixed/opencode.db", "/in/data/opencode.db")}
    files = ["/in/data/log/1.log", "/in/data/opencode.db", "/in/data/opencode.db-shm", "/in/data/opencode.db-wal",
             "/in/data/storage/migration", "/in/mixed/notes.md", "/in/mixed/opencode.db"]
    assert opencode.units(files, lambda p: head.get(p, b"")) == ["/in/data", "/in/mixed/opencode.db"]


def test_a_database_claimed_alone_is_planned_with_its_wal_and_its_index_said_unread(tmp_path):
    path = _database(tmp_path / "mixed")
    (tmp_path / "mixed" / "opencode.db-shm").write_bytes(b"\0" * 64)
    (tmp_path / "mixed" / "notes.md").write_text("a folder OpenCode did not make")
    units, ignored = find_units([str(tmp_path / "mixed")], definition.load("ingest-all").formats)
    assert [(u.format, u.uri, u.members) for u in units] == [
        ("opencode", "mixed/opencode.db", (str(path) + "-wal",))]
    assert {i.path.rsplit("/", 1)[1]: i.reason for i in ignored} == {
        "notes.md": "no format reads it",
        "opencode.db-shm": "part of the opencode run opencode.db, which does not read it: SQLite's shared-memory "
                           "index of the database's write-ahead log, which holds no data of its own"}
    (ep,) = [r for r in read_records(opencode, path) if isinstance(r, Episode)]  # the writes are in the WAL
    assert [s.action.code for s in ep.steps] == ["ls"]


def test_a_database_without_opencode_tables_is_rejected_naming_it(tmp_path):
    (tmp_path / "data").mkdir()
    db = sqlite3.connect(tmp_path / "data" / "opencode.db")
    db.execute("CREATE TABLE session (id text, time_created integer)")
    db.execute("INSERT INTO session VALUES ('ses_x', 1)")
    db.commit()
    db.close()
    (rejected,) = read_records(opencode, tmp_path / "data")  # no `message` table: this session is unreadable
    assert rejected.rule == "parse_error" and "ses_x" in rejected.reason and "opencode.db" in rejected.reason
    (tmp_path / "data" / "opencode.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
    (rejected,) = read_records(opencode, tmp_path / "data")
    assert rejected.rule == "parse_error" and "opencode.db" in rejected.reason
