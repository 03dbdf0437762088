"""The great-expectations sample stays the size of its sample, not of the parts it was drawn from."""

import gc

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.stages import validate
from pipelines.infra.lake import Lake
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
    for i in range(20):
        sample._append("steps", pl.DataFrame({"domain": ["android"] * 1000,
                                              "step_id": [f"e{i}:{j:05d}" for j in range(1000)]}))
        assert sum(f.estimated_size() for f in sample.parts["steps"]) <= 50_000
    kept = sample.frames()["steps"]
    assert sample.sampled and kept.height > 1000


def _frames(n: int, rows: int):
    import polars as pl

    return [pl.DataFrame({"step_id": [f"ep{i:03d}:{j}" for j in range(rows)], "domain": ["android"] * rows})
            for i in range(n)]


def _under_rate(sample, frames) -> set[str]:
    import polars as pl

    rate = sample.rates["steps"]
    ids = pl.concat(frames)
    return set(ids.filter(pl.col("step_id").hash(sample.seed) < int(rate * 2.0 ** 64))["step_id"])


def test_the_gx_sample_is_uniform_over_the_groups_and_never_past_its_rows():
    # thinned as groups come: never more rows than the limit, and the first groups are not thinned more
    # often than the last (each row is kept by its id's hash under one rate)
    frames = _frames(50, 1000)
    sample = validate._GxSample(limit=5_000)
    for frame in frames:
        sample._append("steps", frame)
        assert sum(f.height for f in sample.parts["steps"]) <= 5_000
    kept = sample.frames()["steps"]
    assert 2_500 <= kept.height <= 5_000 and sample.sampled
    per_group = kept["step_id"].str.split(":").list.first().value_counts()["count"].to_list()
    assert len(per_group) == 50 and min(per_group) >= 0.5 * kept.height / 50
    assert set(kept["step_id"]) == _under_rate(sample, frames)


def test_gx_samples_drawn_apart_and_merged_are_the_rows_under_the_lowest_rate():
    frames = _frames(40, 1000)
    first, second = validate._GxSample(limit=8_000), validate._GxSample(limit=3_000)
    for frame in frames[:20]:
        first._append("steps", frame)
    for frame in frames[20:]:
        second._append("steps", frame)
    assert second.rates["steps"] < first.rates["steps"] < 1
    first.merge(second)
    assert first.rates["steps"] <= second.rates["steps"]
    assert set(first.frames()["steps"]["step_id"]) == _under_rate(first, frames)


def test_the_gx_frames_hold_the_columns_the_suites_name_and_no_other():
    from transforms.validate import gx

    episodes = pa.table({"episode_id": ["e1"], "domain": ["android"], "task": ["a long instruction " * 50],
                         "source_uri": ["in/run"], "num_steps": [3], "meta": ['{"k": 1}']})
    frame = gx.episode_frame(episodes)
    assert set(frame.columns) == {"episode_id", "domain", "source_uri", "num_steps"}
    suites = [{"name": "mine", "meta": {"table": "episodes", "domain": None},
               "expectations": [{"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "task"}}]}]
    assert set(gx.episode_frame(episodes, suites).columns) == {"episode_id", "domain", "task"}
