"""Parquet export shards written in row groups as they fill (`pipelines.infra.parquet_shard`): the rows read back are
the records given, in order, whatever row group they went in; a column null in the first records takes the type
later ones give it; records whose types the shard cannot take start the next shard; a shard of one row group is
the file `pq.write_table` makes of its records."""

import hashlib
import io

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.stages.export import shards as shard_writing
from pipelines.infra.lake import Lake


def _writer(tmp_path, shards, max_rows=1000):
    out = Lake(str(tmp_path / "out"))

    def on_shard(shard, step_ids, infos):
        shards.append((shard, step_ids))

    return out, shard_writing.ShardWriter(out, lambda i: f"train/part-{i:05d}.parquet", "parquet", "train", None,
                                          max_rows, 1 << 30, on_shard)


def test_rows_stream_into_row_groups_and_read_back_as_given(tmp_path, monkeypatch):
    monkeypatch.setattr(shard_writing, "ROW_GROUP_BYTES", 200)
    shards = []
    out, w = _writer(tmp_path, shards)
    records = [{"text": f"document {i} " + "x" * 40, "line": None if i < 7 else i,
                "extra": {"index": i, "note": None if i < 7 else "n"}} for i in range(30)]
    for i, r in enumerate(records):
        w.add(dict(r), [f"s{i}"])
        # once every column's type is known, never a shard's records held: at most a row group's
        assert i < 8 or w.pending_bytes < 200
    w.flush()
    assert len(shards) == 1
    shard, step_ids = shards[0]
    path = tmp_path / "out" / shard.path
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups > 3
    table = pq.read_table(path)
    assert table.to_pylist() == records  # the null column of the first rows typed by the later ones
    assert table.schema.field("line").type == pa.int64()
    assert step_ids == [[f"s{i}"] for i in range(30)]
    data = path.read_bytes()
    assert shard.bytes == len(data) and shard.sha256 == hashlib.sha256(data).hexdigest()
    assert not list((tmp_path / "out").rglob("*.tmp-*"))


def test_records_of_another_type_start_the_next_shard_and_keep_their_order(tmp_path, monkeypatch):
    monkeypatch.setattr(shard_writing, "ROW_GROUP_BYTES", 1)  # a row group a record
    shards = []
    out, w = _writer(tmp_path, shards)
    records = [{"value": i} for i in range(10)] + [{"value": f"text {i}"} for i in range(10)]
    for i, r in enumerate(records):
        w.add(dict(r), [f"s{i}"])
    w.flush()
    assert len(shards) == 2
    read = [row for shard, _ in shards for row in pq.read_table(tmp_path / "out" / shard.path).to_pylist()]
    assert read == records
    assert [ids for _, step_ids in shards for ids in step_ids] == [[f"s{i}"] for i in range(20)]
    assert sum(s.rows for s, _ in shards) == 20


def test_a_shard_of_one_row_group_is_the_file_write_table_makes(tmp_path):
    shards = []
    out, w = _writer(tmp_path, shards)
    records = [{"prompt": [{"role": "user", "content": f"q{i}"}], "extra_info": {"index": i, "line": None}}
               for i in range(5)]
    for i, r in enumerate(records):
        w.add(dict(r), [f"s{i}"])
    w.flush()
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records), buf, compression="zstd")
    assert (tmp_path / "out" / shards[0][0].path).read_bytes() == buf.getvalue()
