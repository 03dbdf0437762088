"""A Parquet export shard written as it fills, in row groups, so an export holds one row group's records, not a
shard's: built whole in memory, a Parquet shard held every record until it was full (with the default shard
size, until the end of most exports), and the peak of `export cpt` and `export rl` grew with the dataset
(1.35x and 1.29x from 400 MB to 1 GB of input) while JSONL shards, streamed line by line, stayed flat.

The columns are the first record's keys (as `pa.Table.from_pylist` names them) and their types are inferred
from the first row group written; a shard of one row group is the same file `pq.write_table` makes of its
records. A row group whose every value of a column is null (or an empty list) says nothing of that column's
type: it waits for the next one. A later row group's types are cast to the shard's (a null column to its
type); one that cannot be (a number where the shard has text) is not written: the caller ends the shard
before those records and starts the next with them (`Moved`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_BYTES = 8 << 20  # JSON-line bytes of the records of one row group


@dataclass
class Moved:
    """Records a shard could not take (their types differ from its own), with their JSON-line bytes."""

    records: list[dict]
    nbytes: int


class _HashedSink:
    """Where the Parquet writer writes: the shard's atomic file, its bytes counted and hashed as they pass."""

    def __init__(self, file):
        self.file, self.sha256, self.size, self.closed = file, hashlib.sha256(), 0, False

    def write(self, data) -> int:
        self.file.write(data)
        self.sha256.update(data)
        self.size += len(data)
        return len(data)

    def tell(self) -> int:
        return self.size

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        pass

    def close(self) -> None:  # the atomic file is committed or discarded by its owner
        self.closed = True


def _untyped(t: pa.DataType) -> bool:
    """Whether `t` holds a null type anywhere (a column or a nested field of only nulls or empty lists)."""
    if pa.types.is_null(t):
        return True
    return any(_untyped(t.field(i).type) for i in range(t.num_fields))


class ParquetShard:
    """One shard in progress: `add` records, `write_pending` a row group, `close` -> (bytes, sha256)."""

    def __init__(self, file):
        self.file = file  # a Lake.open_atomic file
        self.sink = _HashedSink(file)
        self.writer: pq.ParquetWriter | None = None
        self.names: list[str] | None = None
        self.pending: list[dict] = []
        self.pending_bytes = 0

    def add(self, records: list[dict], nbytes: int) -> None:
        if self.names is None and records:
            self.names = list(records[0].keys())
        self.pending += records
        self.pending_bytes += nbytes

    def write_pending(self, final: bool = False) -> Moved | None:
        """Write the pending records as one row group (unless their types are not all known yet and more may
        come: not `final`); the records when their types cannot be cast to the shard's."""
        if not self.pending:
            return None
        table = pa.Table.from_arrays([[r.get(n) for r in self.pending] for n in self.names], self.names)
        if self.writer is None:
            if not final and _untyped(pa.struct(list(table.schema))):
                return None
            self.writer = pq.ParquetWriter(self.sink, table.schema, compression="zstd")
        elif table.schema != self.writer.schema:
            try:
                table = table.cast(self.writer.schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError, ValueError):
                moved = Moved(self.pending, self.pending_bytes)
                self.pending, self.pending_bytes = [], 0
                return moved
        self.writer.write_table(table)
        self.pending, self.pending_bytes = [], 0
        return None

    def close(self) -> tuple[int, str]:
        """Publish the shard (its pending records written first by the caller); (bytes, sha256 hex)."""
        self.writer.close()
        self.file.commit()
        return self.sink.size, self.sink.sha256.hexdigest()

    def discard(self) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:  # what it wrote is thrown away with the file
                pass
        self.file.discard()
