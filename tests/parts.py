"""The one guard for parts a test needs that are not plain Python imports of the project: producers,
servers, browsers, tokenizers, other Python environments.

`require(what, available, install=...)` skips the test when the part is missing on a developer's machine,
and fails it under CI, where `.ci/run` sets `CI=true` and `make test` installs every part. Use it instead of
`pytest.importorskip` or `skipif`, which would hide a missing part in CI.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest


def in_ci() -> bool:
    """True under `.ci/run` (it exports CI=true), where every part must be installed."""
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def require(what: str, available: bool, install: str = "make setup-test installs it") -> None:
    """Skip (or, under CI, fail) a test whose part `what` is missing; `install` says how to get it."""
    if available:
        return
    message = f"{what} is missing: {install}"
    if in_ci():
        pytest.fail(f"part missing under CI: {message}")
    pytest.skip(message)


def require_module(name: str, install: str = "make setup-test installs it"):
    """Import and return module `name`, or skip (fail under CI) when it is not installed."""
    require(f"the Python module {name}", importlib.util.find_spec(name.split(".")[0]) is not None, install)
    return importlib.import_module(name)


SHARED = Path(__file__).resolve().parents[2] / "shared"  # ../shared beside the checkout (CI lays a copy there)


def require_shared_sample(path: Path) -> Path:
    """A sample under ../shared/samples (unlicensed, so never bundled): skip when ../shared itself is absent
    (a checkout without it), or when this sample has not been laid in ../shared yet (the project's samples
    are added to shared/ by its maintainers from the PROVENANCE.md the tests' folders name); the reason says
    which. Everything else a test needs fails under CI when it is missing."""
    path = Path(path)
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: {path.name} lies there, never in the repository (no license)")
    if not path.exists():
        pytest.skip(f"{path} is not in {SHARED} yet (an unlicensed real sample, added to shared/ by its "
                    "maintainers; its provenance is in the test's docstring)")
    return path
