"""The great-expectations sample stays the size of its sample, not of the parts it was drawn from."""

import gc

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines import validate
from pipelines.lake import Lake
from tests.conftest import SAMPLES


def _parts(lake, table):
    return sorted(Lake(lake).fs.glob(f"{lake}/datasets/android/parts/{table}/*.parquet"))


def test_the_gx_sample_holds_no_buffer_of_the_parts_it_was_drawn_from(run, lake, tmp_path):
    run("ingest-android", [SAMPLES / "android" / "droidbot-run"], stages=["ingest"])
    # a part of ~20 MB: the real steps 300 times, written and read back as a stage reads a part
    one = pq.read_table(_parts(lake, "steps")[0])
    pq.write_table(pa.concat_tables([one] * 300), tmp_path / "steps.parquet", compression="zstd")
    del one
    gc.collect()
    before = pa.total_allocated_bytes()
    steps = pq.read_table(tmp_path / "steps.parquet")
    episodes = pq.read_table(_parts(lake, "episodes")[0])
    read = pa.total_allocated_bytes() - before
    sample = validate._GxSample(limit=10_000)
    sample.add(episodes, steps)
    del steps, episodes
    gc.collect()
    # the observation texts and view trees the flattened columns were computed from are freed
    assert read > 10_000_000 and pa.total_allocated_bytes() - before < read / 20
    assert sample.frames()["steps"].height == 3600


def test_the_gx_sample_is_thinned_to_its_byte_budget(monkeypatch):
    import polars as pl

    sample = validate._GxSample(limit=1_000_000)
    monkeypatch.setattr(sample, "max_bytes", 50_000)
    frame = pl.DataFrame({"domain": ["android"] * 1000, "step_id": [f"e:{i:08d}" for i in range(1000)]})
    for _ in range(20):
        sample._append("steps", frame)
    kept = sample.frames()["steps"]
    assert sample.sampled and kept.estimated_size() <= 2 * 50_000 and kept.height > 1000
