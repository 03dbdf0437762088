"""The dedup stage's parts without a run around them: each episode's document, the map over part groups
(signature files), the reduce (exact groups, then near clusters among their representatives, who represents
whom) and the quarantine rows it writes. The stage end to end: test_dedup.py, test_dedup_threshold.py."""

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.infra import datasets

from pipelines.stages import dedup
from pipelines.stages.dedup import (INDEX_COLUMNS, SIDECAR, MapJob, _quarantine_rows, _with, duplicates_of, episode_texts,
                             map_signatures, sketch_group)
from pipelines.infra.lake import Lake
from pipelines.infra.options import DedupOptions
from schemas import STEPS, v1
from tests.transforms.dedup.near_pairs import jaccard, pair_texts
from tests.transforms.export.lakes import episode_row, step_row
from transforms.canonicalize import step_text_column
from transforms.dedup import minhash

ACTION = {"kind": "keystrokes", "text": "cat notes"}


def test_an_episodes_document_is_its_steps_texts_in_step_order():
    rows = [step_row("b", 1, "terminal", "second", ACTION), step_row("a", 0, "terminal", "only", ACTION),
            step_row("b", 0, "terminal", "first", ACTION)]
    steps = pa.Table.from_pylist(rows, schema=STEPS)
    text = dict(zip(steps["step_id"].to_pylist(), step_text_column(steps["action"], steps["observation"]).to_pylist()))
    assert text["b:0"].endswith("first") and text["b:1"].endswith("second")
    texts = episode_texts(steps, ["b", "missing", "a"]).to_pylist()
    assert texts == [f"{text['b:0']}\n{text['b:1']}", "", text["a:0"]]


def test_loose_texts_are_sketched_as_one_batch_locally():
    params = minhash.MinHashParams(threshold=0.8)
    texts = pa.chunked_array([["a b c d e f", "x y z"], ["a b c d e f"]])
    sk = map_signatures(texts, params)
    whole = minhash.sketch(pa.array(["a b c d e f", "x y z", "a b c d e f"]), params)
    assert (sk.keys == whole.keys).all() and (sk.offsets == whole.offsets).all()
    assert map_signatures(pa.array([], pa.string()), params, executor="ray").keys.shape == (0, params.bands)


def _lake(tmp_path, episodes: dict[str, tuple[str, dict]], url: str | None = None,
          groups: list[list[str]] | None = None, options: DedupOptions | None = None) -> tuple[Lake, list]:
    """{episode id: (text, episode fields)} written as part groups (one per episode, or the episode ids of each
    of `groups`) -> the lake (at `url`, else a local one) and the sketched groups."""
    lake = Lake(url or str(tmp_path / "lake"))
    written = []
    for ids in groups or [[eid] for eid in episodes]:
        tables = {"episodes": pa.Table.from_pylist([{**episode_row(eid, "terminal", None), "num_steps": 1,
                                                     "source_uri": f"in/{eid}", **episodes[eid][1]} for eid in ids],
                                                   schema=v1.EPISODES),
                  "steps": pa.Table.from_pylist([step_row(eid, 0, "terminal", episodes[eid][0], ACTION) for eid in ids],
                                                schema=STEPS)}
        written.append({t: [p] for t, p in datasets.write_group(lake, "term", tables, "test").items()})
    job = MapJob(lake.url, "term", options or DedupOptions(threshold=0.8, scrub=False))
    return lake, [sketch_group(group, job) for group in written]


def _similarity(a: str, b: str) -> float:
    """The exact Jaccard of two one-step episodes' documents (as dedup reads them), by plain Python."""
    docs = episode_texts(pa.Table.from_pylist([step_row("x", 0, "terminal", a, ACTION),
                                               step_row("y", 0, "terminal", b, ACTION)], schema=STEPS), ["x", "y"])
    return jaccard(*docs.to_pylist())


def _reduce(lake, sketched, threshold):
    index = pa.concat_tables([s.index for s in sketched])
    return duplicates_of(index, [s.sidecar for s in sketched], lake, threshold)


def test_the_reduce_groups_exact_copies_then_clusters_near_ones_and_keeps_the_best_member(tmp_path):
    (near_a, near_b), (other, _) = pair_texts()["above"], pair_texts()["far"]
    t0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    lake, sketched = _lake(tmp_path, {
        "e1": (near_a, {}), "e2": (near_a, {"outcome": "success"}),  # an exact pair: the success represents it
        "e3": (near_b, {"started_at": t0}),  # near e1/e2's text
        "e4": (other, {}),
    })
    assert [s.sidecar.endswith(".parquet") for s in sketched] == [True] * 4
    dups = _reduce(lake, sketched, 0.8)
    sim = _similarity(near_a, near_b)
    rows = dups.clusters.to_pylist()
    assert [(r["cluster_id"], r["episode_id"], r["representative"], r["kind"]) for r in rows] == [
        ("exact:e2", "e1", "e2", "exact"), ("exact:e2", "e2", "e2", "exact"),
        ("near:e2", "e2", "e2", "near"), ("near:e2", "e3", "e2", "near")]
    assert [r["similarity"] for r in rows][:3] == [1.0, 1.0, 1.0] and rows[3]["similarity"] == pytest.approx(sim)
    assert dups.dropped == {"e1": ("e2", "exact", 1.0), "e3": ("e2", "near", pytest.approx(sim))}
    assert dups.candidates >= 1
    # above the pair's Jaccard only the exact copy goes
    assert _reduce(lake, sketched, sim + 1e-9).dropped == {"e1": ("e2", "exact", 1.0)}
    assert _reduce(lake, sketched, sim).dropped["e3"][0] == "e2"  # at the threshold: a near duplicate


def test_among_near_duplicates_the_longer_then_earlier_episode_represents(tmp_path):
    a, b = pair_texts()["above"]
    t0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    lake, sketched = _lake(tmp_path, {"e1": (a, {"started_at": t0 + dt.timedelta(hours=1)}),
                                      "e2": (b, {"started_at": t0})})
    assert _reduce(lake, sketched, 0.8).dropped == {"e1": ("e2", "near", pytest.approx(_similarity(a, b)))}


def test_nothing_alike_nothing_dropped_and_the_clusters_keep_their_columns(tmp_path):
    texts = pair_texts()
    lake, sketched = _lake(tmp_path, {"e1": (texts["far"][0], {}), "e2": (texts["below"][0], {})})
    dups = _reduce(lake, sketched, 0.8)
    assert dups.dropped == {} and dups.clusters.num_rows == 0
    assert dups.clusters.schema == pa.schema([("cluster_id", pa.string()), ("episode_id", pa.string()),
                                              ("representative", pa.string()), ("similarity", pa.float64()),
                                              ("kind", pa.string())])
    empty = duplicates_of(v1.EPISODES.empty_table().select(INDEX_COLUMNS), [], lake, 0.8)
    assert empty.dropped == {} and empty.clusters.num_rows == 0 and empty.candidates == 0


def test_signature_files_that_do_not_line_up_with_the_episodes_are_refused(tmp_path):
    texts = pair_texts()
    lake, sketched = _lake(tmp_path, {"e1": (texts["far"][0], {}), "e2": (texts["below"][0], {})})
    index = pa.concat_tables([s.index for s in reversed(sketched)])
    with pytest.raises(ValueError, match=r"^dedup: signature files do not line up with the episodes \(remove the "
                                         r"dataset's dedup/ folder to compute them again\)$"):
        duplicates_of(index, [s.sidecar for s in sketched], lake, 0.8)


def test_a_signature_file_holds_each_episodes_key_bands_and_shingle_set(tmp_path):
    a, _ = pair_texts()["above"]
    lake, (sketch,) = _lake(tmp_path, {"e1": (a, {})})
    table = pq.read_table(lake.absolute(sketch.sidecar), filesystem=lake.fs)
    assert table.schema == SIDECAR and table["episode_id"].to_pylist() == ["e1"]
    params = minhash.MinHashParams(threshold=0.8)
    expected = minhash.sketch(episode_texts(pa.Table.from_pylist([step_row("e1", 0, "terminal", a, ACTION)],
                                                                 schema=STEPS), ["e1"]), params)
    assert table["bands"].to_pylist() == [expected.keys[0].tolist()]
    assert table["shingles"].to_pylist() == [expected.shingles.tolist()]
    assert table["n_shingles"].to_pylist() == [len(expected.shingles)]
    assert sketch.index.column_names == INDEX_COLUMNS and sketch.audit == [] and sketch.no_change.num_rows == 0


def test_quarantine_rows_say_whom_each_dropped_episode_or_branch_duplicates():
    index = pa.table({"episode_id": ["a", "b", "c"], "source_uri": ["in/a", "in/b", "in/c"]})
    gone = pa.table({"step_id": ["c:0:sim-2", "c:0:sim-1"], "episode_id": ["c", "c"]})
    rows = _quarantine_rows(index, {"c": ("a", "near", 0.81234), "b": ("a", "exact", 1.0)}, "run-3", gone)
    assert rows.schema == v1.QUARANTINE
    common = {"stage": "dedup", "location": None, "line": None, "snippet": None, "snippet_blob": None,
              "_run_id": "run-3"}
    assert rows.to_pylist() == [
        {**common, "rule": "branch_of_duplicate", "record_id": "c:0:sim-1", "source_uri": "in/c",
         "reason": "branch of episode c, removed as a duplicate of a"},
        {**common, "rule": "branch_of_duplicate", "record_id": "c:0:sim-2", "source_uri": "in/c",
         "reason": "branch of episode c, removed as a duplicate of a"},
        {**common, "rule": "exact_duplicate", "record_id": "b", "source_uri": "in/b",
         "reason": "duplicate of episode a (identical canonical actions and observations)"},
        {**common, "rule": "near_duplicate", "record_id": "c", "source_uri": "in/c",
         "reason": "duplicate of episode a (Jaccard 0.812)"}]


def test_recorded_rows_carry_the_run_and_dataset():
    table = _with(pa.table({"x": [1, 2]}), {"run_id": "r", "dataset": "d"})
    assert table.to_pylist() == [{"x": 1, "run_id": "r", "dataset": "d"}, {"x": 2, "run_id": "r", "dataset": "d"}]
    assert table.schema.field("run_id").type == pa.string()
    empty = _with(pa.table({"x": pa.array([], pa.int64())}), {"run_id": "r"})
    assert empty.column_names == ["x", "run_id"] and empty.schema.field("run_id").type == pa.string()


def test_the_reduce_reads_a_lake_on_any_filesystem(tmp_path):
    """The signature files are read through the lake's own filesystem (an object store, here fsspec's memory
    one), not as local paths."""
    (a, b), (other, _) = pair_texts()["above"], pair_texts()["far"]
    lake, sketched = _lake(tmp_path, {"e1": (a, {}), "e2": (a, {}), "e3": (b, {}), "e4": (other, {})},
                           url=f"memory://dedup-{tmp_path.name}")
    assert not lake.is_local
    dups = _reduce(lake, sketched, 0.8)
    assert set(dups.dropped) == {"e1", "e3"} or set(dups.dropped) == {"e2", "e3"}
    assert {kind for _, kind, _ in dups.dropped.values()} == {"exact", "near"}


def test_texts_sketched_in_batches_on_ray_are_the_batches_in_order(monkeypatch):
    """Off the local executor the texts go out in batches of `batch_docs` (one Ray task each): the sketches
    come back concatenated in order, the same as one batch. Ray's part is stood in for by running each task
    here, as `run_all` would, checking what it is asked."""
    calls = []

    def run_all(fn, items, *shared, executor, ray_address, what):
        calls.append(([len(i) for i in items], executor, ray_address, what))
        return [fn(item, *shared) for item in items]

    monkeypatch.setattr(dedup.executors, "run_all", run_all)
    params = minhash.MinHashParams(threshold=0.8)
    texts = pa.chunked_array([["a b c d e f", "x y z"], ["a b c d e f", "p q r s", "t u v w x"]])
    sk = map_signatures(texts, params, batch_docs=2, executor="ray", ray_address="ray://head:10001")
    whole = minhash.sketch(texts.combine_chunks(), params)
    assert (sk.keys == whole.keys).all() and (sk.offsets == whole.offsets).all()
    assert (sk.shingles == whole.shingles).all()
    assert calls == [([2, 2, 1], "ray", "ray://head:10001", "signature batch")]


def test_groups_of_several_episodes_are_read_back_row_by_row(tmp_path):
    """The shingles of a candidate are found in its own group's signature file, whatever the groups' sizes."""
    (a, b), texts = pair_texts()["above"], pair_texts()
    episodes = {"x1": (texts["far"][0], {}), "x2": (texts["far"][1], {}), "x3": (texts["below"][0], {}),
                "e1": (a, {}), "y1": (texts["below"][1], {}), "e2": (b, {})}
    lake, sketched = _lake(tmp_path, episodes, groups=[["x1", "x2", "x3", "e1"], ["y1"], ["e2"]])
    assert [s.index.num_rows for s in sketched] == [4, 1, 1]
    dups = _reduce(lake, sketched, 0.8)
    assert list(dups.dropped) in (["e1"], ["e2"]) and dups.dropped[list(dups.dropped)[0]][1] == "near"
    assert list(dups.dropped.values())[0][2] == pytest.approx(_similarity(a, b))


def test_a_group_sketched_before_is_read_from_its_signature_file(tmp_path):
    a, _ = pair_texts()["above"]
    lake, (first,) = _lake(tmp_path, {"e1": (a, {})})
    parts = first.sidecar.split("/")
    assert parts[:3] == ["datasets", "term", "dedup"] and len(parts) == 5 and parts[4].endswith(".parquet")
    job = MapJob(lake.url, "term", DedupOptions(threshold=0.8, scrub=False))
    again = sketch_group(first.group, job)
    assert (again.group, again.sidecar, again.audit, again.no_change) == (first.group, first.sidecar, [], None)
    assert again.index.to_pylist() == first.index.to_pylist() and again.index.column_names == INDEX_COLUMNS
    other = sketch_group(first.group, MapJob(lake.url, "term", DedupOptions(threshold=0.8, scrub=False, ngram=3)))
    assert other.sidecar.split("/")[3] != parts[3] and other.no_change is not None  # other options: computed
    # a signature file that is not this group's (another row count) is computed again
    pq.write_table(pq.read_table(lake.absolute(first.sidecar)).slice(0, 0), lake.absolute(first.sidecar))
    redone = sketch_group(first.group, job)
    assert redone.no_change is not None and pq.read_metadata(lake.absolute(first.sidecar)).num_rows == 1


def test_a_group_with_a_secret_is_scrubbed_into_a_new_group_before_it_is_sketched(tmp_path):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # shaped like a real token
    options = DedupOptions(threshold=0.8, scrub=True)
    lake, (sketch,) = _lake(tmp_path, {"e1": (f"export TOKEN={token} and more words here", {})}, options=options)
    assert sketch.audit and {a["table_name"] for a in sketch.audit} == {"steps"}
    steps = datasets.read_parts(lake, sketch.group["steps"], "steps")
    assert token not in str(steps.to_pylist())
    assert pq.read_table(lake.absolute(sketch.sidecar))["episode_id"].to_pylist() == ["e1"]
    assert sketch.sidecar == lake.relative(MapJob(lake.url, "term", options).sidecar(lake, sketch.group))
