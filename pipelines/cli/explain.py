"""Why a file is read by the format it is read by, or by none: every reader of a pipeline, in its order, asked
whether it claims the file (as planning asks: by the file's first bytes and the files beside it), then the
file read as a run reads it (the claiming reader, and when it gets no step the later readers that claim it).
A file no reader claims in its own folder is looked for in the folders above it (a screenshot beside a
trajectory, a file of a Harbor trial): a unit there may hold it, or take it as a member (a file its reader reads
beside the unit, or one of the run's it names as not read, with why); a file taken as a member is given to the
unit of the widest listing that takes it (a run over a folder above sees the whole run: an Agent TARS loop's
request goes with the run's last snapshot, not the loop's own). `pipelines formats explain PATH` prints this."""

from __future__ import annotations

import functools
import hashlib
import os
import posixpath

from ingest import registry
from ingest.text_encoding import decoded_head
from pipelines.infra.plan import HEAD_BYTES, Unit
from pipelines.infra.task import read_with_fallback


class _NoBlobs:
    """Blobs are hashed, not stored: explaining writes nothing."""

    @staticmethod
    def put(data: bytes, media_type: str, uri: str) -> str:
        return "sha256:" + hashlib.sha256(data).hexdigest()


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as f:  # a local path the user named on the command line, not a reader's input
            return decoded_head(f.read(HEAD_BYTES))  # as planning sees it
    except OSError:  # a file of a folder above that went away or cannot be read while we look
        return b""


def _looks_for(module) -> str:
    doc = (module.units.__doc__ or "").strip()
    return " ".join(doc.split()) if doc else "(its units() says nothing of what it looks for)"


_LEVELS_UP = 4  # a unit may hold a file from this many folders above its own (a trial's artifacts/app/input/x)
_MAX_LISTED = 5_000  # files listed under a folder above at most: explaining stays a short walk


def _listings(target: str):
    """The listings the formats are shown: the file's own folder, then everything under each folder above it
    (up to `_LEVELS_UP`, while a listing stays under `_MAX_LISTED` files)."""
    folder = os.path.dirname(target)
    yield sorted(os.path.join(folder, n) for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n)))
    for _ in range(_LEVELS_UP):
        if os.path.dirname(folder) == folder:
            return
        folder, files = os.path.dirname(folder), []
        for root, dirs, names in os.walk(folder):
            dirs.sort()
            files += [os.path.join(root, n) for n in names if os.path.isfile(os.path.join(root, n))]
            if len(files) > _MAX_LISTED:
                return
        yield sorted(files)


def _member_of(module, units: list[str], files: list[str], target: str, head) -> tuple[str, str | None] | None:
    """(unit, None) when a unit's reader reads `target` beside it; (unit, why) when it names `target` as a file
    of its run it does not read; None when no unit takes it as a member."""
    hook = getattr(module, "members", None)
    for unit, members in (hook(units, files, head) if hook is not None and units else {}).items():
        for member in members:
            path, why = (member, None) if isinstance(member, str) else member
            if path == target:
                return unit, why
    return None


def claims(path: str, formats: list[str]) -> list[tuple[str, str | None, str, tuple | None]]:
    """(format, the unit it claims holding `path` or None, what it looks for, the unit that takes `path` as a
    member and why it does not read it, or None) for every format, in order. The formats see the file with the
    other files of its folder, as planning shows them; when none claims it there, with the files under the
    folders above it."""
    target = os.path.abspath(path)
    head = functools.lru_cache(maxsize=_MAX_LISTED)(_head)  # every format asks for the same heads
    first = member_of = None
    for files in _listings(target):
        out = []
        for name in formats:
            module = registry.load(name)
            units = module.units(files, head)
            found = [u for u in units if u == target or target.startswith(u.rstrip("/") + "/")]
            member = _member_of(module, units, files, target, head)
            out.append((name, found[0] if found else member[0] if member else None, _looks_for(module), member))
        held = next(((unit, member) for _, unit, _, member in out if unit), None)
        if held is None and member_of is not None:
            return member_of
        if held is not None and held[0] != target:  # a folder unit or a unit taking it as a member
            if held[1] is None or target.startswith(held[0].rstrip("/") + "/"):
                return out  # inside a folder unit: as a run there plans it
            # a member: a wider listing, as a run over the folder above plans it, may give it to another unit (a
            # loop folder's own snapshot is no unit where the run's last snapshot is listed): the widest holds it
            member_of = out
            continue
        first = first or (out if held else None)  # claimed alone: unless a folder above holds it (a trial's file)
    return member_of or first or out


def _as_what(target: str, unit: str, member: tuple | None) -> str:
    """How a claiming reader holds the file: itself, inside a folder unit, or as a member of a unit."""
    if unit == target:
        return ""
    if member is not None and not target.startswith(unit.rstrip("/") + "/"):
        return f" as a member of {unit}" + (" (a file of its run it does not read)" if member[1] else
                                             " (a file its reader reads beside it)")
    return f" (the folder {unit})"


def explain(path: str, formats: list[str]) -> list[str]:
    """The lines `pipelines formats explain` prints for one file."""
    target = os.path.abspath(path)
    if not os.path.isfile(target):
        raise ValueError(f"{path}: not a file (explain names one input file)")
    lines = [f"{path} ({os.path.getsize(target):,} bytes), {len(formats)} readers, in the order they are tried:"]
    first = None
    for name, unit, looks_for, member in claims(target, formats):
        if unit and first is None:
            first = (name, unit, member)
            lines.append(f"  {name:20s} CLAIMS it" + _as_what(target, unit, member))
        elif unit:
            lines.append(f"  {name:20s} would claim it too (offered if {first[0]} gets no step from it)")
        else:
            lines.append(f"  {name:20s} no; it claims: {looks_for}")
    if first is None:
        lines.append("no reader claims it: a run lists it in ignored_inputs (\"no format reads it\")")
        return lines
    name, unit_path, member = first
    if member is not None and member[1] is not None:
        lines.append(f"not read: {name} takes it with {unit_path} but does not read it: {member[1]} (a run lists it "
                     "in ignored_inputs)")
        return lines
    if unit_path != target:
        how = f"read with {unit_path}" if member is not None else f"read as part of the folder {unit_path}"
        lines.append(f"{how}: run the pipeline on it to see what it gives")
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
