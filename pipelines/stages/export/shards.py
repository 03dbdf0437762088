"""Write many, the shards: rendered records into row- and byte-capped shards per split (and per domain for the
bench layout), each record as many times as its domain's mixture weight says (`write_shards`), and the
lineage of every shard row, the step ids it was made from (`Lineage`).

Mixture weights (`mix`, domain -> weight): a record of a domain with weight w is written floor(w) times,
plus once more when xxh64(record id) / 2^64 < frac(w); 0 leaves the domain out. Unlisted domains weigh 1."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from catalog.catalog import EXPORT_ROWS
from pipelines.infra.lake import Lake
from pipelines.infra.options import ExportOptions
from pipelines.infra.parquet_shard import ROW_GROUP_BYTES, ParquetShard
from pipelines.stages.export.options import KINDS
from pipelines.stages.export.totals import Totals

if TYPE_CHECKING:  # for the annotation only
    from pipelines.stages.export.render import RenderedRecord
    from transforms.export.recipe import DroppedTrajectory

@dataclass
class Shard:
    """One complete shard, as the manifest lists it."""

    path: str  # relative to the export root
    split: str
    domain: str | None
    rows: int
    bytes: int
    sha256: str


class ShardWriter:
    """Writes the records of one split (and domain, for per-domain layouts) into shards, starting a new
    shard whenever the row or byte cap (counted in JSON-line bytes) is reached. JSONL lines stream into a
    temporary file as they come; Parquet records go into it in row groups (`pipelines.infra.parquet_shard`). A shard
    gets its final name only when complete, so readers never see a partial one."""

    def __init__(self, out: Lake, name: Callable[[int], str], file_type: str, split: str, domain: str | None,
                 max_rows: int, max_bytes: int, on_shard: Callable[[Shard, list[list[str]], list], None]):
        self.out, self.name, self.file_type, self.split, self.domain = out, name, file_type, split, domain
        self.max_rows, self.max_bytes, self.on_shard = max_rows, max_bytes, on_shard
        self.shard: ParquetShard | None = None  # Parquet only
        self.step_ids: list[list[str]] = []
        self.infos: list[dict | None] = []  # each row's recipe decisions (None without a recipe)
        self.size = 0
        self.count = 0
        self.file = None  # JSONL: the current shard, published whole on flush (Lake.open_atomic)
        self.sha256 = hashlib.sha256()

    @property
    def pending_bytes(self) -> int:
        """JSON-line bytes of the records held for the next row group (Parquet)."""
        return self.shard.pending_bytes if self.shard is not None else 0

    def add(self, record: dict | bytes, step_ids: list[str], info: dict | None = None) -> None:
        """A record, or its JSON line already serialized (JSONL shards)."""
        line = record if isinstance(record, bytes) else orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        if self.file_type == "jsonl":
            if self.file is None:
                self.file = self.out.open_atomic(self.out.path(self.name(self.count)))
            self.file.write(line)
            self.sha256.update(line)
        else:
            if self.shard is None:
                self.shard = ParquetShard(self.out.open_atomic(self.out.path(self.name(self.count))))
            self.shard.add([record], len(line))
        self.step_ids.append(step_ids)
        self.infos.append(info)
        self.size += len(line)
        if len(self.step_ids) >= self.max_rows or self.size >= self.max_bytes:
            self.flush()
        elif self.pending_bytes >= ROW_GROUP_BYTES:
            self.write_row_group()

    def write_row_group(self, final: bool = False) -> None:
        """The Parquet records held, written as a row group; records whose types the shard cannot take end it
        (published without them) and start the next one."""
        moved = self.shard.write_pending(final)
        if moved is None:
            return
        n = len(moved.records)
        ids, infos = self.step_ids[-n:], self.infos[-n:]
        del self.step_ids[-n:], self.infos[-n:]
        self.size -= moved.nbytes
        self.flush()
        self.shard = ParquetShard(self.out.open_atomic(self.out.path(self.name(self.count))))
        self.shard.add(moved.records, moved.nbytes)
        self.step_ids, self.infos, self.size = ids, infos, moved.nbytes

    def flush(self) -> None:
        if not self.step_ids:
            return
        if self.file_type == "parquet":
            self.write_row_group(final=True)
            self.shard.write_pending(final=True)  # after a move: the next shard's first records (always taken)
        rel = self.name(self.count)
        if self.file_type == "jsonl":
            self.file.commit()
            size, digest = self.size, self.sha256.hexdigest()
        else:
            size, digest = self.shard.close()
        self.on_shard(Shard(rel, self.split, self.domain, len(self.step_ids), size, digest), self.step_ids,
                      self.infos)
        self.count += 1
        self.step_ids, self.infos, self.size, self.file, self.sha256 = [], [], 0, None, hashlib.sha256()
        self.shard = None

    def discard(self) -> None:
        """Drop the shard in progress (the export failed): remove its temporary file."""
        if self.file is not None:
            self.file.discard()
            self.file = None
        if self.shard is not None:
            self.shard.discard()
            self.shard = None


def bound_buffered(writers, max_bytes: int) -> None:
    """Parquet records wait in memory for their row group, one group per split (and domain): their sum is kept
    to one row group's size; past it, the split holding the most writes its row group early."""
    buffered = [w for w in writers if w.pending_bytes]
    if sum(w.pending_bytes for w in buffered) >= max_bytes:
        max(buffered, key=lambda w: w.pending_bytes).write_row_group()


class Lineage:
    """Every output row's step ids, written to a local Parquet file as shards complete, so an export holds one
    shard's worth, not the dataset's; `record_export` puts the file in the lake, where the catalog's
    `export_rows` view reads it. The lines a trajectory filter dropped are rows too (no shard, no row; their
    episode, line and filter), written in row groups of DROPPED_ROWS as they arrive."""

    SCHEMA = EXPORT_ROWS
    INFO = ("prompt_variant", "masked_step_ids", "dropped_step_ids")
    # dropped lines held before they are written: a row group of them, or of their turns' step ids; the same
    # count of step ids bounds the turns held for a run-level row (`add_unnamed`)
    DROPPED_ROWS, DROPPED_STEP_IDS = 4096, 65536

    def __init__(self, export_id: str):
        self.export_id = export_id
        self.dir = tempfile.mkdtemp(prefix="trajforge-lineage-")
        self.path = os.path.join(self.dir, "rows.parquet")
        self.writer = pq.ParquetWriter(self.path, self.SCHEMA, compression="zstd")
        self.unnamed: list[str] = []  # dropped turns no written record names (`add_unnamed`)
        self.dropped: list[DroppedTrajectory] = []  # dropped lines not yet written (`add_dropped_trajectories`)
        self.dropped_step_ids = 0  # their turns

    def _write(self, n: int, columns: dict) -> None:
        """n rows of `columns`; the columns not given are null."""
        self.writer.write_table(pa.table({"export_id": [self.export_id] * n, **columns,
                                          **{f.name: pa.nulls(n, f.type) for f in self.SCHEMA
                                             if f.name not in columns and f.name != "export_id"}},
                                         schema=self.SCHEMA))

    def add(self, shard: str, step_ids: list[list[str]], infos: list[dict | None] | None = None) -> None:
        """The rows of one shard, in order, with each row's recipe decisions (`infos`)."""
        infos = infos or [None] * len(step_ids)
        columns = {key: [(info or {}).get(key) for info in infos] for key in self.INFO}
        self._write(len(step_ids), {"shard": [shard] * len(step_ids), "row": range(len(step_ids)),
                                    "step_ids": step_ids, **columns})

    def add_files(self, paths: list[str], step_ids: list[list[str]]) -> None:
        """Files of one record each (ATIF), many at once: one row group, not one per file."""
        self._write(len(paths), {"shard": paths, "row": [0] * len(paths), "step_ids": step_ids})

    def add_unnamed(self, dropped_step_ids: list[str]) -> None:
        """Turns the recipe dropped that no written record names (their line made no record, or its records
        were left out by the mixture): named by run-level rows (no shard, no row, no step ids), one written as
        a row group each time DROPPED_STEP_IDS of them are held and the last by `close`, so every dropped
        turn is named once in the export's lineage and the turns held stay bounded."""
        self.unnamed.extend(dropped_step_ids)
        if len(self.unnamed) >= self.DROPPED_STEP_IDS:
            self._write_unnamed()

    def _write_unnamed(self) -> None:
        if self.unnamed:
            self._write(1, {"step_ids": [[]], "masked_step_ids": [[]], "dropped_step_ids": [self.unnamed]})
        self.unnamed = []

    def add_dropped_trajectories(self, dropped: list[DroppedTrajectory]) -> None:
        """Lines a trajectory filter dropped: a row each (no shard, no row, no step ids), with its episode, line
        and filter (`dropped_by`), its own turns in `dropped_step_ids`, so each is named once."""
        self.dropped += dropped
        self.dropped_step_ids += sum(len(d.step_ids) for d in dropped)
        if len(self.dropped) >= self.DROPPED_ROWS or self.dropped_step_ids >= self.DROPPED_STEP_IDS:
            self._write_dropped()

    def _write_dropped(self) -> None:
        if self.dropped:
            d = self.dropped
            self._write(len(d), {"step_ids": [[]] * len(d), "masked_step_ids": [[]] * len(d),
                                 "dropped_step_ids": [x.step_ids for x in d], "episode_id": [x.episode_id for x in d],
                                 "line": [x.line for x in d], "dropped_by": [x.dropped_by for x in d]})
        self.dropped, self.dropped_step_ids = [], 0

    def close(self) -> None:
        if self.writer is not None:
            self._write_dropped()
            self._write_unnamed()
            self.writer.close()
            self.writer = None

    def remove(self) -> None:
        self.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _copies(weight: float, record_id: str) -> int:
    """How many times a record of a domain with mixture weight `weight` is written (the module's docstring)."""
    whole = int(weight)
    frac = weight - whole
    return whole + (1 if frac > 0 and xxhash.xxh64_intdigest(record_id.encode()) / 2**64 < frac else 0)


def write_shards(out_lake: Lake, config: ExportOptions, stream: Iterator[RenderedRecord], lineage: Lineage,
                 totals: Totals) -> list[Shard]:
    """Write the rendered records of `stream` into shards in their order (each as many times as its domain's
    mixture weight says), adding them up in `totals` and their step ids in `lineage`. Returns the shards in
    path order. On failure the shards in progress and the lineage file are removed."""
    file_type = KINDS[config.kind].FILE_TYPES[config.format]
    shards: list[Shard] = []

    def on_shard(shard: Shard, step_ids: list[list[str]], infos: list) -> None:
        shards.append(shard)
        lineage.add(shard.path, step_ids, infos if totals.recipe is not None else None)

    writers: dict[tuple[str, str | None], ShardWriter] = {}

    def writer(split: str, domain: str) -> ShardWriter:
        per_domain = config.format == "bench"
        key = (split, domain if per_domain else None)
        if key not in writers:
            if per_domain:
                name = lambda i, s=split, d=domain: f"{s}/{d}-{i:05d}_{s}.jsonl"
            else:
                name = lambda i, s=split: f"{s}/{config.kind}-{config.format}-{i:05d}.{file_type}"
            writers[key] = ShardWriter(out_lake, name, file_type, split, key[1], config.shard_rows,
                                       int(config.shard_mb * (1 << 20)), on_shard)
        return writers[key]

    def emit(split: str, domain: str, record_id: str, record: dict, step_ids: list[str], n_tokens: int,
             info: dict | None = None) -> None:
        copies = _copies(config.mix.get(domain, 1.0), record_id)
        if copies == 0:
            totals.skipped["mix_dropped"] += 1
        named = info.get("dropped_step_ids") if info else None
        if named and copies == 0:  # the record is not written: the run-level row names its dropped turns
            lineage.add_unnamed(named)
        elif named and copies > 1:  # the first copy names them, the others are the same record again
            copy = {**info, "dropped_step_ids": []}
        if config.kind == "rl":  # the record's index within its split, as verl numbers rows
            record["extra_info"]["index"] = sum(totals.counts.get(split, {}).values())
        for n in range(copies):
            writer(split, domain).add(record, step_ids, info if n == 0 or not named else copy)
            bound_buffered(writers.values(), ROW_GROUP_BYTES)
            totals.lengths.add(config.kind, record, n_tokens, domain)
            totals.counts.setdefault(split, {}).setdefault(domain, 0)
            totals.counts[split][domain] += 1
            totals.tokens.setdefault(split, {}).setdefault(domain, 0)
            totals.tokens[split][domain] += n_tokens

    try:
        for record in stream:
            emit(*record)
        for w in writers.values():
            w.flush()
    except BaseException:
        for w in writers.values():
            w.discard()
        lineage.remove()
        raise
    return sorted(shards, key=lambda s: s.path)
