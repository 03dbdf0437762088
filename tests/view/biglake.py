"""A synthetic lake of 100,000 episodes for the view's paging and speed test, built column by column with
pyarrow (a few seconds): one part per table, committed as one version of dataset `big`, plus catalog rows
for runs, stage stats, dedup clusters and an export whose rows name the steps."""

from __future__ import annotations

import datetime as dt
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from catalog import Catalog
from catalog.catalog import export_rows_path
from schemas import TABLES

DATASET = "big"
EPISODES = 100_000
DOMAINS = ["android", "web", "os", "terminal", "swe", "mcp", "search"]
PLATFORMS = {"android": "android", "web": "browser", "os": "macos", "terminal": "linux", "swe": "linux",
             "mcp": "linux", "search": "linux"}
FORMATS = {"android": "droidbot", "web": "har", "os": "agentnet", "terminal": "asciicast", "swe": "sweagent",
           "mcp": "mcp_jsonrpc", "search": "agentworldbench"}
RULES = [f"rule_{i}" for i in range(10)]


def _table(name: str, n: int, columns: dict) -> pa.Table:
    """A table of `TABLES[name]`'s schema with these columns (arrays or, for structs, dicts of arrays);
    every other column null."""
    schema = TABLES[name]
    return pa.Table.from_arrays([_column(f.type, n, columns.get(f.name)) for f in schema], schema=schema)


def _column(arrow_type, n: int, value) -> pa.Array:
    if value is None:
        return pa.nulls(n, arrow_type)
    if pa.types.is_struct(arrow_type):
        return pa.StructArray.from_arrays([_column(f.type, n, value.get(f.name)) for f in arrow_type],
                                          fields=list(arrow_type))
    return value.cast(arrow_type) if isinstance(value, pa.Array) else pa.array(value, arrow_type)


def _write(lake: str, table_name: str, table: pa.Table) -> str:
    rel = f"datasets/{DATASET}/parts/{table_name}/synthetic.parquet"
    path = f"{lake}/{rel}"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(table, path, compression="zstd")
    return rel


def build_big_lake(lake: str) -> dict:
    """Write the lake; returns facts the test asks for (an episode with branches and export rows)."""
    rng = np.random.default_rng(7)
    n = EPISODES
    ids = [f"{i:032x}" for i in range(n)]
    domain_of = [DOMAINS[i % len(DOMAINS)] for i in range(n)]
    num_steps = (1 + np.arange(n) % 7).astype(np.int32)
    start = np.datetime64("2025-01-01T00:00:00") + rng.integers(0, 300 * 86400, n).astype("timedelta64[s]")
    episodes = _table("episodes", n, {
        "episode_id": ids, "domain": domain_of, "platform": [PLATFORMS[d] for d in domain_of],
        "source_format": [FORMATS[d] for d in domain_of],
        "task": [f"Task {i}: open the settings and turn on wifi {i % 97}" for i in range(n)],
        "num_steps": num_steps, "outcome": [("success", "failure", "unknown")[i % 3] for i in range(n)],
        "reward": rng.random(n), "started_at": pa.array(start.astype("datetime64[us]")),
        "ended_at": pa.array((start + (num_steps * 5).astype("timedelta64[s]")).astype("datetime64[us]")),
        "env": ["{}"] * n, "source_uri": [f"input/run-{i}" for i in range(n)]})

    episode_of = np.repeat(np.arange(n), num_steps)
    index = (np.arange(len(episode_of)) - np.repeat(np.cumsum(num_steps) - num_steps, num_steps)).astype(np.int32)
    m = len(episode_of)
    step_eids = [ids[e] for e in episode_of]
    step_ids = [f"{e}:{i}" for e, i in zip(step_eids, index.tolist())]
    steps = _table("steps", m, {
        "episode_id": step_eids, "step_index": index, "step_id": step_ids,
        "domain": [domain_of[e] for e in episode_of],
        "observation": {"kind": pa.array(["screen"] * m),
                        "text": pa.array([f"[0] FrameLayout\n[1] Button \"Wi-Fi\" step {i}" for i in index.tolist()]),
                        "width": pa.array(np.full(m, 1080, np.int32)), "height": pa.array(np.full(m, 2280, np.int32))},
        "action": {"kind": pa.array(["tap"] * m), "x": pa.array(rng.random(m)), "y": pa.array(rng.random(m))},
        "is_first": pa.array(index == 0), "is_last": pa.array(index == num_steps[episode_of] - 1),
        "origin": pa.array(["real"] * m)})

    b = 2_000
    branches = _table("branches", b, {
        "step_id": [f"{ids[i]}:0:sim-x" for i in range(b)], "branch_id": [f"b{i}" for i in range(b)],
        "parent_step_id": [f"{ids[i]}:0" for i in range(b)], "episode_id": ids[:b],
        "step_index": pa.array(np.zeros(b, np.int32)), "domain": domain_of[:b], "origin": ["simulated"] * b,
        "action": {"kind": pa.array(["back"] * b)},
        "next_observation": {"kind": pa.array(["screen"] * b), "text": pa.array(["[0] predicted"] * b)},
        "labeler": ['{"model": "synthetic"}'] * b})

    q = 20_000
    quarantine = _table("quarantine", q, {
        "stage": [("ingest", "validate", "dedup")[i % 3] for i in range(q)], "rule": [RULES[i % 10] for i in range(q)],
        "reason": [f"record {i} broke rule {i % 10}" for i in range(q)],
        "source_uri": [f"input/run-{i}" for i in range(q)],
        "line": pa.array(np.arange(q, dtype=np.int64)), "record_id": [ids[(i * 7) % n] for i in range(q)],
        "snippet": ["{\"raw\": \"" + "x" * 400 + "\"}"] * q})
    blobs = _table("blobs", 1_000, {"sha256": [f"{i:064x}" for i in range(1_000)],
                                    "media_type": ["image/png"] * 1_000,
                                    "uri": [f"blobs/{i:064x}"[:8] + f"/{i:064x}.png" for i in range(1_000)]})

    parts = {t: [_write(lake, t, data)] for t, data in
             [("episodes", episodes), ("steps", steps), ("branches", branches), ("quarantine", quarantine),
              ("blobs", blobs)]}
    with Catalog(f"{lake}/catalog.duckdb", lake) as cat:
        for r in range(30):
            run_id = f"20250101T0000{r:02d}Z-synth"
            cat.start_run(run_id, "ingest-synthetic", DATASET, {}, ["input"])
            cat.add_stage_stats(run_id, "ingest", n, m, q, 12.5)
            cat.finish_run(run_id, "success", episodes=n, steps=m, quarantined=q)
        cat.commit_version(DATASET, run_id, parts, episodes=n, steps=m, quarantined=q, note="synthetic")
        clusters = pa.table({"run_id": ["dedup-synth"] * 10_000, "dataset": [DATASET] * 10_000,
                             "cluster_id": [f"near:{ids[(i // 4) * 4]}" for i in range(10_000)],
                             "episode_id": ids[:10_000], "representative": [ids[(i // 4) * 4] for i in range(10_000)],
                             "similarity": [1.0 if i % 4 == 0 else 0.9 for i in range(10_000)],
                             "kind": ["near"] * 10_000})
        rows = 200_000
        export_rows = pa.table({"export_id": ["exp-synth"] * rows, "shard": ["train-00000.parquet"] * rows,
                                "row": pa.array(np.arange(rows, dtype=np.int64)),
                                "step_ids": [step_ids[max(i - 2, 0):i + 1] for i in range(rows)]})
        cat.con.register("_clusters", clusters)
        cat.con.execute("INSERT INTO dedup_clusters SELECT * FROM _clusters")
        lineage = export_rows_path("exp-synth")
        os.makedirs(os.path.dirname(f"{lake}/{lineage}"), exist_ok=True)
        pq.write_table(export_rows.append_column("prompt_variant", pa.nulls(rows, pa.string()))
                       .append_column("masked_step_ids", pa.nulls(rows, pa.list_(pa.string())))
                       .append_column("dropped_step_ids", pa.nulls(rows, pa.list_(pa.string()))), f"{lake}/{lineage}")
        cat.add_export({"export_id": "exp-synth", "kind": "sft", "format": "agentworld", "dataset": DATASET,
                        "version": 1, "out": "/tmp/out", "created_at": dt.datetime.now(dt.timezone.utc),
                        "rows": rows}, lineage)
    return {"episode": ids[6], "episodes": n, "steps": m}  # 7 steps, a branch, export rows, in a cluster
