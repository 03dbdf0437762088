"""Reviewed expected outputs of a reader ("goldens"): what it yields for one source file, as plain JSON a person
can read against the raw file. `check(records, path)` compares with the stored golden (`tests/goldens.py`:
`TRAJFORGE_REGEN_GOLDENS=1` rewrites it for review). `check_counted(path, query)` compares what a person counts
in an ingested lake (episodes, their steps' action kinds and rewards, terminal flag, outcome, reward,
quarantine rows) with a golden that says in `read_from` which raw files it was read against.

`texts="full"` keeps texts (cut at 300 characters); `texts="hash"` keeps a sha256 prefix and the first 48
characters only: for sources without a license, which are read where they lie and never copied here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import os
from pathlib import Path

from ingest.record import Episode, Observation, Rejected, Step
from pipelines.infra.plan import HEAD_BYTES
from tests import goldens


def _text(value, texts: str):
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if texts == "full":
        return value if len(value) <= 300 else value[:300] + f"... ({len(value)} chars)"
    return {"sha256": hashlib.sha256(value.encode()).hexdigest()[:16], "start": value[:48], "chars": len(value)}


def _observation(obs: Observation | None, texts: str):
    if obs is None:
        return None
    out = {"kind": obs.kind, "text": _text(obs.text, texts)}
    out.update({k: v for k, v in (("is_error", obs.is_error), ("exit_code", obs.exit_code)) if v is not None})
    return out


def _step(step: Step, texts: str) -> dict:
    a = step.action
    action = {"kind": a.kind}
    for name in ("tool_name", "arguments", "code", "text"):
        value = getattr(a, name)
        if value is not None:
            action[name] = _text(value, texts) if name != "tool_name" else value
    return {"observation": _observation(step.observation, texts), "action": action,
            "timestamp": step.timestamp.isoformat() if step.timestamp else None,
            "reasoning": _text(step.reasoning, texts)}


def fingerprint(records, texts: str = "full", env_keys: tuple[str, ...] = ()) -> list[dict]:
    out = []
    for r in records:
        if isinstance(r, Rejected):
            out.append({"rejected": r.rule, "location": r.location})
            continue
        assert isinstance(r, Episode)
        out.append({"key": r.key, "domain": r.domain, "task": _text(r.task, texts), "agent": r.agent,
                    "outcome": r.outcome, "reward": r.reward, "terminated": r.terminated,
                    "steps": [_step(s, texts) for s in r.steps],
                    "final_observation": _observation(r.final_observation, texts),
                    "env": {k: r.env.get(k) for k in env_keys if k in r.env}})
    return out


def check(records, path: Path, texts: str = "full", env_keys: tuple[str, ...] = ()) -> None:
    """The reader's output against the golden (`tests/goldens.py`: a missing golden fails with the command that
    writes it for review)."""
    goldens.check_json(path, json.loads(json.dumps(fingerprint(records, texts, env_keys), default=str)), indent=1)


def read_records(module, path: Path, blobs: dict | None = None, root: Path | None = None) -> list:
    """What `module.read` yields for one file or folder (blobs put go to `blobs`, keyed by their ref). `root`: the
    input folder it lies in, as the ingest worker opens a unit (its reader may read files beside it there; its uri
    is then its path from the root's parent)."""
    import fsspec

    from ingest.source import Source

    def put_blob(data: bytes, media_type: str, uri: str) -> str:
        ref = "sha256:" + hashlib.sha256(data).hexdigest()
        if blobs is not None:
            blobs[ref] = (media_type, data)
        return ref

    uri = str(Path(path).relative_to(Path(root).parent)) if root else Path(path).name
    source = Source(fsspec.filesystem("file"), str(path), uri, put_blob, root=str(root) if root else None)
    return list(module.read(source))


def head(path) -> bytes:
    """A file's first bytes as planning hands them to a reader's `units` (`HEAD_BYTES`)."""
    with open(path, "rb") as f:
        return f.read(HEAD_BYTES)


def read_split(module, path: Path, blobs: dict | None = None) -> tuple[list[Episode], list[Rejected]]:
    """What `module.read` yields for one file or folder (`read_records`): its episodes and its quarantine rows."""
    records = read_records(module, path, blobs)
    return [r for r in records if isinstance(r, Episode)], [r for r in records if isinstance(r, Rejected)]


def read_one(module, path: Path) -> tuple[Episode, list[Rejected]]:
    """The one episode a reader makes of one run (it fails unless there is exactly one) and the quarantine rows."""
    episodes, rows = read_split(module, path)
    assert len(episodes) == 1, f"{path}: {len(episodes)} episodes, not one"
    return episodes[0], rows


def counted(query) -> dict:
    episodes = []
    for ep in query("SELECT * FROM episodes"):
        steps = query(f"SELECT * FROM steps WHERE episode_id = '{ep['episode_id']}' ORDER BY step_index")
        episodes.append({"steps": len(steps), "kinds": [s["action"]["kind"] for s in steps],
                         "rewards": [s["reward"] for s in steps], "terminal": steps[-1]["is_terminal"],
                         "outcome": ep["outcome"], "reward": ep["reward"],
                         "_first": json.loads(ep["env"] or "{}").get("local_time_first") or ""})
    episodes.sort(key=lambda e: e.pop("_first"))
    rules = sorted(r["rule"] for r in query("SELECT rule FROM quarantine"))
    return {"episodes": episodes, "quarantine": rules}


def check_counted(path: Path, query) -> None:
    """A lake's episodes as a person counts them (`counted`) against the golden file's `episodes` and
    `quarantine`; the golden also says in `read_from` which raw files it was read against."""
    golden = json.loads(path.read_text())
    assert counted(query) == {k: golden[k] for k in ("episodes", "quarantine")}


def _whole_value(value):
    """A field as the whole dump keeps it: JSON texts (raw, element) parsed, long texts and long lists written as
    JSON (a UI tree) as a digest."""
    if isinstance(value, (bytes, str)) and value[:1] in ("{", "[", b"{", b"[") and not (
            value[:1] in ("[", b"[") and len(value) > 300):  # a long list (a UI tree) as a digest
        try:
            return _whole_value(json.loads(value))
        except ValueError:
            pass
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str) and len(value) > 300:
        return _text(value, "hash")
    if dataclasses.is_dataclass(value):
        return {f.name: _whole_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _whole_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_whole_value(v) for v in value]
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def whole(records) -> list[dict]:
    """Every field of every record a reader yields (quarantine rows with their reason), for a file whose every
    detail a test fixes: actions' raw and points, warnings' texts, env, rows' reasons."""
    return [{"type": type(r).__name__, **_whole_value(r)} for r in records]


def check_whole(records, path: Path) -> None:
    """`whole` of the records against the golden `path` (`tests/goldens.py`)."""
    goldens.check_json(path, json.loads(json.dumps(whole(records), default=str)), indent=1)
