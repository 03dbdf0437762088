"""One ingest task: read its units with their formats, write Parquet parts and then a completion marker.

The same function runs in-process for tiny inputs and as a Ray task otherwise (one code path, two
placements). It never touches the catalog: it returns a small summary the driver records.
"""

from __future__ import annotations

import gc
import posixpath
import time
import traceback
from dataclasses import dataclass

import fsspec
import orjson
import pyarrow as pa

from ingest import licenses, registry
from ingest.arrow import SchemaMismatch, TableBuilder
from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError
from pipelines.infra import phases
from pipelines.infra.lake import BlobStore, Lake
from pipelines.infra.plan import Task, Unit
from schemas import v1
from transforms.scrub import scrub_tables


@dataclass
class TaskContext:
    lake_url: str
    dataset: str
    run_id: str
    formats: tuple[str, ...] = ()  # the pipeline's formats in order: a unit its reader got nothing from goes on


def _collect(module, source: Source) -> tuple[list[Episode], list[Rejected]]:
    """What a reader yields for one unit; a reader's failure is one row, never the task's."""
    episodes: list[Episode] = []
    rejected: list[Rejected] = []
    try:
        for item in module.read(source):
            (rejected if isinstance(item, Rejected) else episodes).append(item)
    except SourceError as e:
        rejected.append(Rejected(e.rule, e.reason, e.location))
    except Exception as e:  # a reader bug or an input it did not foresee: keep the unit, keep going
        rejected.append(Rejected("reader_error", f"{type(e).__name__}: {e}", snippet=traceback.format_exc(limit=3)))
    return episodes, rejected + _said_encodings(source, episodes)


def _said_encodings(source: Source, episodes: list[Episode]) -> list[Rejected]:
    """The files of the unit that were JSON in another Unicode encoding than UTF-8 (`ingest.text_encoding`), named
    in each episode's `env["source_encodings"]`; an `encoding_error` row for each whose bytes were not all text."""
    if not source.decoded:
        return []
    said = [d.as_env(rel or posixpath.basename(source.uri)) for rel, d in sorted(source.decoded.items())]
    for ep in episodes:
        ep.env["source_encodings"] = said
    return [Rejected("encoding_error", d.problem, rel or source.uri) for rel, d in sorted(source.decoded.items())
            if d.problem]


def gave_up(name: str, episodes: list[Episode], rejected: list[Rejected]) -> str:
    """Why a reader that claimed a unit got no episode with a step from it, in one line."""
    if not episodes and not rejected:
        return f"{name} claimed it and found no episode in it"
    rules = sorted({r.rule for r in rejected})
    first = rejected[0].reason if rejected else f"{len(episodes)} episode(s) without a step"
    return f"{name} claimed it and got no step ({', '.join(rules) or 'empty'}: {first[:200]})"


def _unit_source(unit: Unit, blobs: BlobStore, shared: dict) -> Source:
    # the input's filesystem made once per task (`shared`), not once per unit: `url_to_fs` parses the spec and
    # looks up fsspec's instance cache each call (~30 us; 1 % of a DroidBot ingest of small runs)
    key = ("filesystem", unit.input_spec)
    fs = shared.get(key)
    if fs is None:
        fs = shared[key] = fsspec.core.url_to_fs(unit.input_spec)[0]
    return Source(fs=fs, path=unit.path, uri=unit.uri, put_blob=blobs.put, root=unit.root or None,
                  reports=unit.reports, shared=shared)


def _later_claims(unit: Unit, formats: tuple[str, ...], source: Source) -> list[str]:
    """The formats after the unit's own (in the pipeline's order) that claim its file by its first bytes: a
    file a reader got nothing from is offered to them in turn."""
    if unit.format not in formats or source.is_dir():
        return []
    head = None

    def read_head(_path: str) -> bytes:
        nonlocal head
        if head is None:
            with source.open_stream() as stream:
                head = stream.read(4096)
        return head

    later = formats[formats.index(unit.format) + 1:]
    return [name for name in later if registry.load(name).units([unit.path], read_head) == [unit.path]]


def _said_why(rejected: list[Rejected]) -> bool:
    """A reader that got no step said why in its own terms (a damaged record, a log without payloads): its rows
    stand. Rows of episodes without steps alone say nothing of why (a claim on the wrong file looks the same)."""
    return any(r.rule not in ("empty_episode", "unknown_content") for r in rejected)


def read_with_fallback(unit: Unit, blobs: BlobStore, formats: tuple[str, ...], messages: list[str],
                       shared: dict | None = None):
    """(format that read it, source, episodes, rejections, unread reason or None) of one unit: its own
    reader's, or, when that got no episode with a step, the first later reader's that does. Unread (an
    `ignored_inputs` row): no reader got a step and the claiming one said no more than that (`_said_why`);
    the reason names each reader that claimed the file and why it gave up. `shared`: what the task's units
    decode once between them (a run report's grades)."""
    shared = {} if shared is None else shared
    source = _unit_source(unit, blobs, shared)
    episodes, rejected = _collect(registry.load(unit.format), source)
    if any(ep.steps for ep in episodes):
        return unit.format, source, episodes, rejected, None
    reasons = [gave_up(unit.format, episodes, rejected)]
    for name in _later_claims(unit, formats, source):
        other = _unit_source(unit, blobs, shared)
        found, problems = _collect(registry.load(name), other)
        if any(ep.steps for ep in found):
            messages.append(f"{unit.uri}: {reasons[0]}; read as {name}")
            return name, other, found, problems, None
        reasons.append(gave_up(name, found, problems))
    unread = None if _said_why(rejected) else "; ".join(reasons) + "; no format reads it"
    return unit.format, source, episodes, rejected, unread


def _read_unit(unit: Unit, builder: TableBuilder, blobs: BlobStore, messages: list[str],
               folders: licenses.FolderCache, shared: dict, formats: tuple[str, ...] = ()) -> tuple[dict, list[dict]]:
    """(counts, the unit and its members as unread inputs: none when a reader read it)."""
    counts = {"episodes": 0, "steps": 0, "quarantined": 0}

    def reject(rej: Rejected):
        builder.add_rejected(rej, source_uri=unit.uri)
        counts["quarantined"] += 1
        messages.append(f"{unit.uri}: [{rej.rule}] {rej.reason}")

    name, source, episodes, rejected, unread = read_with_fallback(unit, blobs, formats, messages, shared)
    module = registry.load(name)
    for rej in rejected:
        reject(rej)
    digest = source.sha256()
    # the license stated beside the input, for the episodes whose data named none (`ingest.licenses`)
    stated = licenses.license_of(source, folders) if any(ep.license is None for ep in episodes) else None
    for ep in episodes:
        if ep.license is None and stated is not None:
            ep.license = stated
        if not ep.steps:
            reject(Rejected("empty_episode", f"episode {ep.key or '(only)'} has no steps", ep.key or None))
            continue
        try:
            builder.add_episode(ep, source_format=name, source_uri=unit.uri, source_sha256=digest,
                                ingestor_version=module.VERSION)
        except SchemaMismatch as e:  # a value its column cannot take: this episode only, never the task
            reject(e.rejected)
            continue
        counts["episodes"] += 1
        counts["steps"] += len(ep.steps)
    # a unit no reader got a step from, whose reader said no more than that, is an unread input
    # (`ignored_inputs`, with each reader's reason), beside its empty episodes' rows (they keep the outcome); the
    # files beside it that its reader would have read are said with it
    if not unread:
        return counts, []
    return counts, [{"path": unit.path, "size": unit.size, "reason": unread}] + [
        {"path": path, "size": None, "reason": f"read with {unit.path}, which no format read"} for path in unit.members]


def run_ingest_task(task: Task, ctx: TaskContext) -> dict:
    """Ingest the task's units; returns its marker (parts written, counts, one-line messages)."""
    # Parsing and table building make millions of small objects and no cycles: without the collector's
    # repeated scans of them the task runs several times faster (DESIGN: 4.9x for parsing alone).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _ingest(task, ctx)
    finally:
        if gc_was_enabled:
            gc.enable()


def _ingest(task: Task, ctx: TaskContext) -> dict:
    started = time.perf_counter()
    lake = Lake(ctx.lake_url)
    builder = TableBuilder(ctx.run_id)
    blobs = BlobStore(lake, ctx.run_id)
    messages: list[str] = []
    totals = {"units": len(task.units), "bytes": task.size, "episodes": 0, "steps": 0, "quarantined": 0}
    unread: list[dict] = []
    folders = licenses.FolderCache()
    shared: dict = {}  # what the task's units decode once between them (a run report's grades)
    for unit in task.units:
        counts, not_read = _read_unit(unit, builder, blobs, messages, folders, shared, tuple(ctx.formats))
        for key, value in counts.items():
            totals[key] += value
        unread += not_read

    # secrets never reach the lake: scrubbed before anything is written, what kind where in the marker's audit
    tables, audit = scrub_tables(builder.tables())
    tables["blobs"] = pa.Table.from_pylist(list(blobs.rows.values()), schema=v1.BLOBS)
    parts = {}
    for name, table in tables.items():
        if table.num_rows:
            path = lake.part_path(ctx.dataset, name, task.task_id)
            lake.write_parquet(path, table)
            parts[name] = lake.relative(path)
            phases.reached("mid-task")
    marker = {"task_id": task.task_id, "run_id": ctx.run_id, "parts": parts, "counts": totals,
              "unread": unread, "messages": messages[:200], "scrubbed": audit, "seconds": round(time.perf_counter() - started, 3)}
    lake.write_bytes_atomic(lake.marker_path(ctx.dataset, task.task_id), orjson.dumps(marker))
    return marker
