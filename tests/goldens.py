"""Golden files: reviewed expected outputs checked in beside the tests. A golden never writes itself: a missing
or different golden fails the test with the command that (re)writes it, and that command is run by a person
who then reads the diff before committing.

    TRAJFORGE_REGEN_GOLDENS=1 .venv/bin/pytest 'tests/pipelines/test_export.py::test_...'
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest

from tests.parts import in_ci

REGEN = "TRAJFORGE_REGEN_GOLDENS"
REPO = Path(__file__).resolve().parents[1]


def regen_command() -> str:
    """The command that rewrites the goldens of the test running now."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    node = current.rsplit(" (", 1)[0] if current else "tests/..."
    return f"{REGEN}=1 .venv/bin/pytest '{node}'"


def check(path: Path, text: str) -> None:
    """Fail unless the golden file `path` holds exactly `text`. With TRAJFORGE_REGEN_GOLDENS=1 (never under CI)
    the file is written instead, for review."""
    path = Path(path)
    where = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    if os.environ.get(REGEN) == "1":
        if in_ci():
            pytest.fail(f"{REGEN} is set under CI: goldens are written by a person, then reviewed")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"golden file {where} is missing: write it with `{regen_command()}`, read it against the "
                    "input, then commit it")
    want = path.read_text(encoding="utf-8")
    if text != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True), f"{where} (golden)",
                                            "this run", n=2))
        shown = diff if len(diff) < 6000 else diff[:6000] + "\n... (diff cut)\n"
        pytest.fail(f"output differs from golden file {where}:\n{shown}\nIf the change is intended, rewrite it "
                    f"with `{regen_command()}` and review the diff.")


def check_json(path: Path, value, **dumps) -> None:
    """`check` of `value` as JSON (json.dumps with `dumps`, ensure_ascii off, then a newline)."""
    check(path, json.dumps(value, ensure_ascii=False, **dumps) + "\n")


def check_jsonl(path: Path, records: list) -> None:
    """`check` of `records` as JSON lines (keys sorted)."""
    check(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records))
