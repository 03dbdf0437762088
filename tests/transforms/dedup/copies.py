"""Altered copies of the bundled DroidBot run, for dedup tests: one where only volatile values changed,
one where a few steps changed."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

from tests.conftest import SAMPLES

DROIDBOT_RUN = SAMPLES / "android" / "droidbot-run"
_MD5 = re.compile(r"\b[0-9a-f]{32}\b")


def _other_md5(match: re.Match) -> str:
    return hashlib.md5(match.group(0).encode() + b"rerun").hexdigest()


def _retime(text: str) -> str:
    # the rerun happened on another day, 13 h later: same order, other timestamps
    return text.replace("2021-12-06_2044", "2023-01-15_0944").replace("2021-12-06_2045", "2023-01-15_0945") \
        .replace("2021-12-06", "2023-01-15").replace("20211206", "20230115")


def volatile_copy(dst: Path) -> Path:
    """The run as a rerun would record it: other timestamps (file names and tags), other state and view
    hashes; the same events on the same screens."""
    for src in sorted(DROIDBOT_RUN.rglob("*")):
        if src.is_dir() or src.name == "PROVENANCE.md":
            continue
        target = dst / _retime(str(src.relative_to(DROIDBOT_RUN)))
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix in (".json", ".js", ".txt"):
            target.write_text(_MD5.sub(_other_md5, _retime(src.read_text())))
        else:
            shutil.copyfile(src, target)
    return dst


def edited_copy(dst: Path) -> Path:
    """The run with two of its twelve events changed: the first BACK key became HOME, and the app was
    started through another activity."""
    shutil.copytree(DROIDBOT_RUN, dst)
    back = dst / "events" / "event_2021-12-06_204500.json"
    event = json.loads(back.read_text())
    event["event"]["name"] = "HOME"
    back.write_text(json.dumps(event))
    start = dst / "events" / "event_2021-12-06_204452.json"
    event = json.loads(start.read_text())
    event["event"]["intent"] = event["event"]["intent"].replace("AppStarterActivity", "MainActivity")
    start.write_text(json.dumps(event))
    return dst
