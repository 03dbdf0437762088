"""OpenCode sessions, in each of the three shapes OpenCode keeps or gives them (`packages/opencode/src/session/`:
`Session.Info`, `MessageV2.Info` and `MessageV2.Part`, the same records in all three). An adapter onto
`ingest.transcript`; one session is one episode.

- **JSON storage** (up to 1.1.x): `~/.local/share/opencode/storage/` with `session/<project>/ses_*.json` (the
  session), `message/<session>/msg_*.json` (its messages) and `part/<message>/prt_*.json` (each message's parts);
  the `storage` folder is one unit, every session in it an episode (`project/`, `session_diff/`, `todo/` and
  the `migration` marker are the CLI's bookkeeping, not read).
- **SQLite** (1.2 on): `~/.local/share/opencode/opencode.db`, tables `session`, `message` and `part` (`data`:
  the record's JSON less its ids). The database runs in WAL mode and OpenCode leaves its writes in
  `opencode.db-wal` beside it: the reader replays the WAL's committed frames onto the database's pages in
  memory (never a file of its own) and reads the result with Python's sqlite3. The data folder holding the
  database is one unit (the `-wal` and `-shm` files, OpenCode's `log/`, `snapshot/`, `tool-output/`, `bin/`
  and `repos/` are its own: not sessions, not read); a `storage/` folder there is read for the sessions the
  database does not hold (1.2 migrates them once, and skipped that on some upgrades). A database among files
  OpenCode does not write is its own unit, read with the `-wal` beside it.
- **Export** (`opencode export <session>`): one JSON document `{"info": <session>, "messages": [{"info":
  <message>, "parts": [...]}]}`.

Messages are `user` (the prompt's `text` parts; `synthetic` ones are context OpenCode added) or `assistant`
(`modelID`, `providerID`, `time`, `tokens`, `cost`, `finish`, `error`). An assistant message may span several
model calls, each opened by a `step-start` part and closed by a `step-finish` (its tokens and cost): each call
is one turn here. Its parts: `text`, `reasoning`, and `tool` (`callID`, `tool`, `state`: `status` pending /
running / completed / error, `input`, `output` or `error`, `metadata` with the shell's `exit`, `time`), a
call and, once it finished, its result. `patch`, `file`, `snapshot`, `agent`, `subtask`, `compaction` and
`retry` parts are kept raw in `env["opencode"]["parts"]`; a part of any other type also with an
`unknown_content` warning. `bash` is a `command` action with its exit code.

Env `opencode`: the session's `id`, `title`, `directory`, `version`, `parentID` (a subagent's session names its
parent's), the rest of its record raw in `session`, the providers, summed `tokens` and `cost`, the assistant
errors, and `message_fields`: each message's fields beyond those (`time`, a user message's `agent`, `model`,
`summary`, `system`, `tools`; an assistant's `parentID`, `mode`, `agent`, `path`, `finish`, `summary`, `variant`...),
raw, in message order, with the message's `id` and `role` (a field OpenCode does not define: an `unknown_content`
warning). OpenCode grades nothing: outcome
`unknown`; terminated when the last turn answers (text, no call; a last turn of reasoning alone was stopped before
its answer, as Gemini CLI and Qwen Code sessions are read). Domain `swe`, platform `linux` (not recorded).
"""

from __future__ import annotations

import bisect
import posixpath
import re
import sqlite3
import struct
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError, parse_json
from ingest.times import parse_time
from ingest.tools import dumps
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "opencode"
VERSION = "4"
INFO = FormatInfo(
    group="swe", rank=302, domains=('swe',), platform="linux",
    summary="OpenCode sessions (JSON storage, the SQLite database, `opencode export`)",
    producer="OpenCode sessions (`~/.local/share/opencode/storage/` up to 1.1, `opencode.db` from 1.2, exports)",
    versions="1.1.65 (JSON storage), 1.18.33 (SQLite)",
    proof=("each release from the npm registry (`opencode-ai`, its platform binary inside) in its own prefix runs "
           "`opencode run` with a custom OpenAI-compatible provider in its config at the scripted model server (Chat "
           "Completions), HOME and XDG folders temporary: it lists and reads files, writes one, runs a command "
           "that fails and starts a subagent (`task`: a session of its own, an episode naming its parent); the "
           "script is the oracle for every call, its arguments, the result the agent recorded, the model and the "
           "final answer, and `opencode export` of the same session a second "
           "(`tests/ingest/swe/test_opencode_cli.py`); two real 1.18.18 exports of a public repository read where "
           "they lie in ../shared and a real MIT 1.2.5 export (`samples/swe/opencode`: victoryforphil/dark-factory, "
           "a skill and a subagent) (goldens, `tests/ingest/swe/test_opencode_real.py`); edge cases hand-made: "
           "several model calls in one message, "
           "failed and unfinished calls, subagent sessions, a WAL cut mid-frame or of an older generation "
           "(`tests/ingest/swe/test_opencode.py`)"),
)

_SQLITE = b"SQLite format 3\x00"
_DB_NAME = re.compile(r"^opencode[\w.-]*\.db$")
_SESSION_FILE = re.compile(r"^ses_[\w-]+\.json$")
_EXPORT = re.compile(rb'^\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_')
_DATA_FOLDERS = ("storage", "log", "snapshot", "tool-output", "bin", "repos", "worktree")  # OpenCode's, beside the db
_MAPPED_COLUMNS = ("id", "project_id", "parent_id", "slug", "directory", "title", "version", "time_created",
                   "time_updated")
_SESSION_KEYS = ("id", "title", "directory", "version", "parentID", "slug", "projectID")
_KEPT_PARTS = ("patch", "file", "snapshot", "agent", "subtask", "compaction", "retry")
# `MessageV2.User` / `MessageV2.Assistant` fields of 1.1 and 1.18 (`packages/opencode/src/session/message-v2.ts`)
_USER_FIELDS = frozenset({"id", "sessionID", "role", "time", "format", "summary", "agent", "model", "system", "tools",
                          "variant"})
_ASSISTANT_FIELDS = frozenset({"id", "sessionID", "role", "time", "error", "parentID", "modelID", "providerID", "mode",
                               "agent", "path", "summary", "cost", "tokens", "structured", "variant", "finish"})
_MAPPED_FIELDS = ("id", "sessionID", "role", "modelID", "providerID", "cost", "tokens", "error")  # read into env


def units(files: list[str], head) -> list[str]:
    """OpenCode's data folder (`opencode*.db`, a SQLite database, with what OpenCode keeps beside it: the
    database's `-wal` and `-shm` files, `storage/`, `log/`, `snapshot/`...), a `storage` folder holding
    `session/<project>/ses_*.json` session records, and `opencode export` documents (`{"info": {"id": "ses_...`).
    A database among files OpenCode does not write is claimed alone."""
    found: dict[str, None] = {}
    ordered = sorted(files)
    for path in files:
        folder, name = posixpath.split(path)
        if _DB_NAME.match(name) and head(path).startswith(_SQLITE):
            owned = all(_opencode_file(f) for f in files_under(ordered, folder))
            found[folder if owned else path] = None
    for path in files:
        folder, name = posixpath.split(path)
        parts = folder.split("/")
        if any(path.startswith(unit + "/") or path == unit for unit in found):
            continue
        if len(parts) >= 3 and parts[-2] == "session" and parts[-3] == "storage" and _SESSION_FILE.match(name):
            storage = "/".join(parts[:-2])
            if storage not in found and b'"id"' in head(path) and b'"ses_' in head(path):
                found[storage] = None
        elif name.endswith(".json") and _EXPORT.match(head(path)):
            found[path] = None
    return list(found)


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """A database claimed alone is read with its write-ahead log beside it (`<db>-wal`); its shared-memory index
    (`<db>-shm`, SQLite's, no data of its own) is a file of it that is not read."""
    return {path: [path + "-wal", (path + "-shm", "SQLite's shared-memory index of the database's write-ahead "
                                                  "log, which holds no data of its own")]
            for path in found if path.endswith(".db")}


def files_under(ordered: list[str], folder: str) -> list[str]:
    """The paths (relative to `folder`) of the files under `folder`, from the sorted listing `ordered`."""
    prefix = folder + "/"
    start = bisect.bisect_left(ordered, prefix)
    end = bisect.bisect_left(ordered, folder + chr(ord("/") + 1))
    return [f[len(prefix):] for f in ordered[start:end]]


def _opencode_file(rel: str) -> bool:
    """Whether a file of a folder holding an OpenCode database is one OpenCode keeps there."""
    top = rel.split("/", 1)[0]
    return bool(_DB_NAME.match(top.removesuffix("-wal").removesuffix("-shm"))) or (
        "/" in rel and top in _DATA_FOLDERS) or top in ("auth.json", "mcp-auth.json")


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    try:
        if source.is_dir():
            databases = [n for n in source.listdir() if _DB_NAME.match(n)]
            sessions = _data_folder_sessions(source, databases) if databases else _storage_sessions(source)
        elif name.endswith(".db"):
            sessions = _database_sessions(source, "..")
        else:
            sessions = _export_sessions(source)
        for item in sessions:
            if isinstance(item, Rejected):
                yield item
            else:
                yield from _episode(*item)
    except SourceError as e:
        yield e.as_rejected()


# --- the three stores, each as (session, [(message, parts)], where) ----------------------------------------------

def _data_folder_sessions(source: Source, databases: list[str]) -> Iterator[tuple | Rejected]:
    """Every database's sessions, then those of `storage/` that no database holds (OpenCode 1.2 migrates the
    JSON sessions into the database once; a data folder it skipped keeps them only there)."""
    seen = set()
    for db in databases:
        for item in _database_sessions(source, "", db):
            if not isinstance(item, Rejected):
                seen.add(item[0].get("id"))
            yield item
    if "storage" in source.listdir():
        yield from (item for item in _storage_sessions(source, "storage/")
                    if isinstance(item, Rejected) or item[0].get("id") not in seen)


def _storage_sessions(source: Source, prefix: str = "") -> Iterator[tuple | Rejected]:
    for project in source.listdir(f"{prefix}session"):
        for file in source.listdir(f"{prefix}session/{project}"):
            if not _SESSION_FILE.match(file):
                continue
            where = f"storage/session/{project}/{file}"
            try:
                session = parse_json(source.read_bytes(f"{prefix}session/{project}/{file}"), where, source.budgets)
                messages = []
                for msg_file in source.listdir(f"{prefix}message/{session.get('id')}"):
                    info = parse_json(source.read_bytes(f"{prefix}message/{session['id']}/{msg_file}"), msg_file,
                                      source.budgets)
                    parts = [parse_json(source.read_bytes(f"{prefix}part/{info.get('id')}/{p}"), p, source.budgets)
                             for p in source.listdir(f"{prefix}part/{info.get('id')}") if p.endswith(".json")]
                    messages.append((info, parts))
            except SourceError as e:
                yield e.as_rejected()
                continue
            except AttributeError:
                yield Rejected("bad_record", f"{where}: a session, message or part that is not a JSON object", where)
                continue
            messages.sort(key=lambda m: str(m[0].get("id")) if isinstance(m[0], dict) else "")
            yield session, [(info, sorted(parts, key=lambda p: str(p.get("id")))) for info, parts in messages], where


def _export_sessions(source: Source) -> Iterator[tuple | Rejected]:
    name = posixpath.basename(source.path)
    doc = parse_json(source.read_bytes(), name, source.budgets)
    if not isinstance(doc.get("info"), dict) or not isinstance(doc.get("messages"), list):
        yield Rejected("bad_record", f"{name}: an OpenCode export without `info` and a `messages` list", name)
        return
    messages = [(m.get("info"), m.get("parts") if isinstance(m.get("parts"), list) else [])
                for m in doc["messages"] if isinstance(m, dict) and isinstance(m.get("info"), dict)]
    yield doc["info"], messages, name


def _database_sessions(source: Source, folder: str, name: str = "") -> Iterator[tuple | Rejected]:
    """The sessions of database `name` in `folder` of the unit ("": the unit is the data folder; "..": the
    unit is the database file itself, `name` empty)."""
    name = name or posixpath.basename(source.path)
    image = source.read_bytes(name if folder == "" else "")
    if name + "-wal" in source.listdir(folder):
        image = _replay_wal(image, source.read_bytes(posixpath.join(folder, name + "-wal")), name)
    db = sqlite3.connect(":memory:")
    try:
        db.deserialize(image[:18] + b"\x01\x01" + image[20:])  # the pages in memory: no WAL mode there
        columns = [c[1] for c in db.execute("PRAGMA table_info(session)")]
        rows = db.execute("SELECT * FROM session ORDER BY time_created, id").fetchall()
    except sqlite3.Error as e:
        db.close()
        raise SourceError("parse_error", f"{name}: not an OpenCode database OpenCode's tables can be read from "
                          f"({e})", name) from None
    try:
        for row in rows:
            try:
                yield _session_row(db, dict(zip(columns, row)), name)
            except sqlite3.Error as e:  # this session's messages or parts cannot be read: the others can
                yield Rejected("parse_error", f"{name}: session {row[0]}: its messages or parts cannot be read "
                               f"({e})", name, record_id=str(row[0]))
    finally:
        db.close()


def _session_row(db: sqlite3.Connection, row: dict, name: str) -> tuple:
    """A `session` row in the shape of `Session.Info`, and its messages with their parts."""
    session = {"id": row.get("id"), "projectID": row.get("project_id"), "parentID": row.get("parent_id"),
               "slug": row.get("slug"), "directory": row.get("directory"), "title": row.get("title"),
               "version": row.get("version"), "time": {"created": row.get("time_created"),
                                                       "updated": row.get("time_updated")}}
    session.update({k: v for k, v in row.items() if k not in _MAPPED_COLUMNS and v is not None})
    messages = []
    for msg_id, data in db.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY id", (row["id"],)):
        info = _json_column(data, f"{name}: message {msg_id}")
        parts = [{**_json_column(pdata, f"{name}: part {pid}"), "id": pid} for pid, pdata in db.execute(
            "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (msg_id,))]
        messages.append(({**info, "id": msg_id}, parts))
    return {k: v for k, v in session.items() if v is not None}, messages, f"{name}: session {row['id']}"


def _json_column(data, where: str) -> dict:
    try:
        value = parse_json(data.encode() if isinstance(data, str) else data, where)
    except SourceError:
        return {"unparsed": data}
    return value if isinstance(value, dict) else {"unparsed": data}


def _replay_wal(image: bytes, wal: bytes, name: str) -> bytes:
    """The database as its WAL's committed frames leave it: each frame (24-byte header: page number, the
    database's size in pages after a commit frame, the WAL's two salts) carries one page; frames of an older
    WAL generation (other salts) and those after the last commit are not applied."""
    if len(wal) < 32 or struct.unpack(">I", wal[:4])[0] not in (0x377F0682, 0x377F0683):
        return image
    page_size = struct.unpack(">I", wal[8:12])[0] or 65536
    salts = wal[16:24]
    pages: dict[int, bytes] = {}
    pending: dict[int, bytes] = {}
    size = len(image) // page_size
    offset = 32
    while offset + 24 + page_size <= len(wal):
        number, commit = struct.unpack(">II", wal[offset:offset + 8])
        if wal[offset + 8:offset + 16] != salts:
            break
        pending[number] = wal[offset + 24:offset + 24 + page_size]
        if commit:
            pages.update(pending)
            pending.clear()
            size = commit
        offset += 24 + page_size
    out = bytearray(image[:size * page_size].ljust(size * page_size, b"\x00"))
    for number, page in pages.items():
        if number <= size:
            out[(number - 1) * page_size:number * page_size] = page
    return bytes(out)


# --- one session -> one episode ------------------------------------------------------------------------------

def _episode(session: dict, messages: list, where: str) -> Iterator[Episode | Rejected]:
    out: list[Message] = []
    extras: dict = {"parts": [], "errors": [], "providers": [], "tokens": {}, "cost": 0.0, "task": None,
                    "message_fields": []}
    problems: list[Rejected] = []
    for info, parts in messages:
        if not isinstance(info, dict):
            continue
        mwhere = f"{where}: message {info.get('id')}"
        parts = [p for p in parts if isinstance(p, dict)]
        _keep_fields(info, mwhere, extras, problems)
        if info.get("role") == "assistant":
            _assistant(out, info, parts, mwhere, extras, problems)
        else:
            _user(out, info, parts, mwhere, extras, problems)
    yield from problems
    env = {k: session[k] for k in _SESSION_KEYS if session.get(k) not in (None, "")}
    rest = {k: v for k, v in session.items() if k not in _SESSION_KEYS and v not in (None, "")}
    if rest:
        env["session"] = rest  # the rest of the session record (time, summary, permission, model...), raw
    env.update({k: v for k, v in extras.items() if v and k != "task"})
    last = next((m for m in reversed(out) if m.role in ("assistant", "tool")), None)
    yield from records(out, Run(key=str(session.get("id") or ""), domain="swe", platform="linux", task=extras["task"],
                                terminated=_answered(last),
                                env={"opencode": env}), where)


def _answered(last: Message | None) -> bool:
    """Whether the session ends on the model's answer: a last turn with text and no call (one of reasoning alone
    was cut off before it answered)."""
    return last is not None and last.role == "assistant" and not last.tool_calls and bool(last.text)


def _user(out: list[Message], info: dict, parts: list[dict], where: str, extras: dict, problems: list) -> None:
    texts = []
    for part in parts:
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
            if extras["task"] is None and not part.get("synthetic"):
                extras["task"] = part["text"].strip()
        else:
            _keep(part, where, extras, problems)
    if texts:
        out.append(Message("user", text="\n".join(texts), timestamp=parse_time((info.get("time") or {}).get("created")),
                           where=where))


def _assistant(out: list[Message], info: dict, parts: list[dict], where: str, extras: dict, problems: list) -> None:
    """One turn per model call (`step-start` opens one), then the results of its tool calls."""
    model = info.get("modelID") if isinstance(info.get("modelID"), str) else None
    stamp = parse_time((info.get("time") or {}).get("created"))
    if info.get("providerID") and info["providerID"] not in extras["providers"]:
        extras["providers"].append(info["providerID"])
    if info.get("error"):
        extras["errors"].append({"message": info.get("id"), "error": info["error"]})
    _add_usage(extras, info)
    turns: list[list[dict]] = [[]]
    for part in parts:
        if part.get("type") == "step-start" and turns[-1]:
            turns.append([])
        turns[-1].append(part)
    for turn in turns:
        texts = [p["text"] for p in turn if p.get("type") == "text" and isinstance(p.get("text"), str)]
        thoughts = [p["text"] for p in turn if p.get("type") == "reasoning" and isinstance(p.get("text"), str)]
        tools = [p for p in turn if p.get("type") == "tool"]
        for p in turn:
            if p.get("type") not in ("text", "reasoning", "tool", "step-start", "step-finish"):
                _keep(p, where, extras, problems)
        if not (texts or thoughts or tools):
            continue
        out.append(Message("assistant", text="\n".join(texts) or None, reasoning="\n\n".join(thoughts) or None,
                           model=model, timestamp=stamp, where=where,
                           tool_calls=[ToolCall(p.get("callID"), p.get("tool"), (p.get("state") or {}).get("input"),
                                                raw=p) for p in tools]))
        out.extend(r for r in (_result(p, where) for p in tools) if r is not None)


def _result(part: dict, where: str) -> Message | None:
    """A finished call's result (`completed`: its output; `error`: its error); none while pending or running."""
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    status = state.get("status")
    if status not in ("completed", "error"):
        return None
    text = state.get("output") if status == "completed" else state.get("error")
    metadata = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
    exit_code = metadata.get("exit") if isinstance(metadata.get("exit"), int) else None
    return Message("tool", text=text if isinstance(text, str) or text is None else dumps(text),
                   tool_call_id=part.get("callID"), is_error=status == "error" or None, exit_code=exit_code,
                   timestamp=parse_time((state.get("time") or {}).get("end")), where=where)


def _add_usage(extras: dict, info: dict) -> None:
    tokens = info.get("tokens") if isinstance(info.get("tokens"), dict) else {}
    flat = {k: v for k, v in tokens.items() if k != "cache"}
    flat.update({f"cache_{k}": v for k, v in (tokens.get("cache") or {}).items()})
    for key, value in flat.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            extras["tokens"][key] = extras["tokens"].get(key, 0) + value
    if isinstance(info.get("cost"), (int, float)) and not isinstance(info.get("cost"), bool):
        extras["cost"] += info["cost"]


def _keep_fields(info: dict, where: str, extras: dict, problems: list) -> None:
    """What a message record says beyond what the reader maps (a user message's `agent`, `model`, `summary`; an
    assistant's `path`, `mode`, `finish`, `time`...): kept raw, one entry per message in order; a field none of
    OpenCode's releases define is warned of."""
    rest = {k: v for k, v in info.items() if k not in _MAPPED_FIELDS}
    if rest:
        extras["message_fields"].append({"id": info.get("id"), "role": info.get("role"), **rest})
    defined = _ASSISTANT_FIELDS if info.get("role") == "assistant" else _USER_FIELDS
    unknown = sorted(k for k in info if k not in defined)
    if unknown:
        problems.append(Rejected("unknown_content", f"{where}: field(s) {', '.join(unknown)} of a {info.get('role')} "
                                 "message are none OpenCode is known to write; kept raw in env.opencode.message_fields",
                                 where, record_id=info.get("id")))


def _keep(part: dict, where: str, extras: dict, problems: list) -> None:
    """A part the transcript has no place for: kept raw; a type OpenCode is not known to write is warned of."""
    extras["parts"].append(part)
    if part.get("type") not in _KEPT_PARTS:
        problems.append(Rejected("unknown_content", f"{where}: part type {part.get('type')!r} is none OpenCode is "
                                 "known to write; kept raw in env.opencode.parts", where, record_id=part.get("id")))
