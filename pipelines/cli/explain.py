"""Why a file is read by the format it is read by, or by none: every reader of a pipeline, in its order, asked
whether it claims the file (as planning asks: by the file's first bytes and the files beside it), then the
file read as a run reads it (the claiming reader, and when it gets no step the later readers that claim it).
`pipelines formats explain PATH` prints this."""

from __future__ import annotations

import functools
import hashlib
import os
import posixpath

from ingest import registry
from pipelines.infra.plan import HEAD_BYTES, Unit
from pipelines.infra.task import read_with_fallback


class _NoBlobs:
    """Blobs are hashed, not stored: explaining writes nothing."""

    @staticmethod
    def put(data: bytes, media_type: str, uri: str) -> str:
        return "sha256:" + hashlib.sha256(data).hexdigest()


def _head(path: str) -> bytes:
    with open(path, "rb") as f:  # a local path the user named on the command line, not a reader's input
        return f.read(HEAD_BYTES)


def _looks_for(module) -> str:
    doc = (module.units.__doc__ or "").strip()
    return " ".join(doc.split()) if doc else "(its units() says nothing of what it looks for)"


def claims(path: str, formats: list[str]) -> list[tuple[str, str | None, str]]:
    """(format, the unit it claims holding `path` or None, what it looks for) for every format, in order.
    The formats see the file with the other files of its folder, as planning shows them."""
    folder = os.path.dirname(os.path.abspath(path))
    target = os.path.abspath(path)
    files = sorted(os.path.join(folder, n) for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n)))
    out = []
    head = functools.lru_cache(maxsize=4096)(_head)  # every format asks for the same heads
    for name in formats:
        module = registry.load(name)
        found = [u for u in module.units(files, head) if u == target or target.startswith(u.rstrip("/") + "/")]
        out.append((name, found[0] if found else None, _looks_for(module)))
    return out


def explain(path: str, formats: list[str]) -> list[str]:
    """The lines `pipelines formats explain` prints for one file."""
    target = os.path.abspath(path)
    if not os.path.isfile(target):
        raise ValueError(f"{path}: not a file (explain names one input file)")
    lines = [f"{path} ({os.path.getsize(target):,} bytes), {len(formats)} readers, in the order they are tried:"]
    first = None
    for name, unit, looks_for in claims(target, formats):
        if unit and first is None:
            first = (name, unit)
            lines.append(f"  {name:20s} CLAIMS it" + (f" (the folder {unit})" if unit != target else ""))
        elif unit:
            lines.append(f"  {name:20s} would claim it too (offered if {first[0]} gets no step from it)")
        else:
            lines.append(f"  {name:20s} no; it claims: {looks_for}")
    if first is None:
        lines.append("no reader claims it: a run lists it in ignored_inputs (\"no format reads it\")")
        return lines
    name, unit_path = first
    if unit_path != target:
        lines.append(f"read as part of the folder {unit_path}: run the pipeline on it to see what it gives")
        return lines
    unit = Unit(name, target, posixpath.basename(target), os.path.getsize(target), "", os.path.dirname(target),
                os.path.dirname(target))
    messages: list[str] = []
    used, _, episodes, rejected, unread = read_with_fallback(unit, _NoBlobs(), tuple(formats), messages)
    lines += messages
    if unread:
        lines.append(f"not read: {unread}")
    else:
        steps = sum(len(e.steps) for e in episodes)
        lines.append(f"read by {used}: {sum(1 for e in episodes if e.steps)} episodes, {steps} steps, "
                     f"{len(rejected)} rows quarantined")
    return lines
