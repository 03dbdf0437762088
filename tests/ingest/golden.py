"""Reviewed expected outputs of a reader ("goldens"): what it yields for one source file, as plain JSON a person
can read against the raw file. `check(records, path)` compares with the stored golden; with
`TRAJFORGE_UPDATE_GOLDEN=1` it rewrites it instead (then read the diff by hand before committing).

`texts="full"` keeps texts (cut at 300 characters); `texts="hash"` keeps a sha256 prefix and the first 48
characters only: for sources without a license, which are read where they lie and never copied here.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ingest.record import Episode, Observation, Rejected, Step


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
    got = fingerprint(records, texts, env_keys)
    if os.environ.get("TRAJFORGE_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False, default=str) + "\n")
    expected = json.loads(path.read_text())
    assert json.loads(json.dumps(got, default=str)) == expected, f"reader output differs from {path.name}"


def read_records(module, path: Path, blobs: dict | None = None) -> list:
    """What `module.read` yields for one file or folder (blobs put go to `blobs`, keyed by their ref)."""
    import fsspec

    from ingest.source import Source

    def put_blob(data: bytes, media_type: str, uri: str) -> str:
        ref = "sha256:" + hashlib.sha256(data).hexdigest()
        if blobs is not None:
            blobs[ref] = (media_type, data)
        return ref

    source = Source(fsspec.filesystem("file"), str(path), Path(path).name, put_blob)
    return list(module.read(source))
