"""The `dedup` stage and `pipelines dedup DATASET`: scrub secrets, find exact and near-duplicate episodes,
record them, then remove them in a new dataset version.

Order of work, so every removal can be reviewed before it happens:
1. Secrets in steps and episodes are scrubbed in place; what kind was found where goes to `scrub_audit`.
2. Exact duplicates (same canonical actions and observations, step for step) are grouped.
3. Among the exact groups' representatives, near-duplicates (MinHash + LSH over the canonical episode
   text, candidates verified on the exact Jaccard of their shingle sets) are clustered. Shingles,
   signatures and band keys are computed per batch of episodes, in-process for small inputs and as plain
   Ray tasks for large ones (same function).
4. Clusters go to `dedup_clusters` (and no-change steps to `dedup_no_change`) BEFORE anything is removed.
5. The new version drops every non-representative; each dropped episode gets a quarantine row (stage
   `dedup`, rule `exact_duplicate` / `near_duplicate`, reason naming the episode it duplicates).
Only the real line (`steps`) decides what is a duplicate; branches are scrubbed like steps and go with their
episode: a branch of a dropped episode is dropped too (rule `branch_of_duplicate`, naming the episode).

Options: `pipelines.options.DedupOptions` (`[stage_options.dedup]` keys and the command's flags).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from pipelines import datasets
from pipelines.options import DedupOptions, dedup_options
from pipelines.ray_setup import init_ray
from pipelines.stages import StageContext, StageResult
from schemas import v1
from transforms.canonicalize import step_text_column
from transforms.dedup import exact, minhash
from transforms.dedup.representative import rank, representatives
from transforms.scrub import scrub_tables

STAGE = "dedup"
# Below this many episodes, starting Ray (~2.5 s) costs more than the signatures: compute in-process.
LOCAL_MAX_EPISODES = 200_000



def map_signatures(texts: pa.Array, params: minhash.MinHashParams, options: DedupOptions, log=print,
                   keep_signatures: bool = False) -> minhash.Sketches:
    """Shingles, band keys (and signatures when asked) of all texts, batch by batch: in this process, or one
    Ray task per batch."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    batches = [texts.slice(lo, options.batch_docs) for lo in range(0, len(texts), options.batch_docs)]
    executor = options.executor
    if executor == "auto":
        executor = "ray" if options.ray_address or len(texts) > LOCAL_MAX_EPISODES else "local"
    if executor == "local" and batches:
        return minhash.sketch(texts, params, keep_signatures)  # works in bounded chunks itself
    if executor == "local":
        results = []
    else:
        import ray

        started_here = init_ray(options.ray_address)
        remote = ray.remote(num_cpus=1, max_retries=1)(minhash.sketch)
        log(f"dedup: {len(batches)} signature tasks on Ray")
        # a pickled slice carries its whole parent buffer: copy each batch out so a task ships only its own
        try:
            results = ray.get([remote.remote(pa.concat_arrays([batch]), params, keep_signatures) for batch in batches])
        finally:
            if started_here:
                ray.shutdown()
    if not results:
        return minhash.Sketches(np.zeros((0, params.bands), np.uint64), np.zeros(0, np.uint32),
                                np.zeros(1, np.int64), np.zeros((0, params.num_perm), np.uint32))
    return minhash.Sketches.concat(results)


def episode_texts(steps: pa.Table, episode_ids: list[str]) -> pa.Array:
    """The canonical near-duplicate document of each episode in `episode_ids` (in that order): its steps'
    canonical texts joined in step order."""
    text = step_text_column(steps.column("action"), steps.column("observation"))
    per_step = pl.from_arrow(pa.table({"episode_id": steps.column("episode_id"),
                                       "step_index": steps.column("step_index"), "text": text}))
    docs = (per_step.sort(["episode_id", "step_index"])
            .group_by("episode_id", maintain_order=True).agg(pl.col("text").str.join("\n")))
    order = pl.DataFrame({"episode_id": episode_ids}, schema={"episode_id": pl.String})
    joined = order.join(docs, on="episode_id", how="left", maintain_order="left")
    return joined.get_column("text").fill_null("").to_arrow()


@dataclass
class Duplicates:
    clusters: pa.Table  # cluster_id, episode_id, representative, similarity, kind
    dropped: dict[str, tuple[str, str, float]]  # episode_id -> (representative, kind, similarity)
    candidates: int = 0


def find_duplicates(episodes: pa.Table, steps: pa.Table, options: DedupOptions, log=print) -> Duplicates:
    """Exact groups, then near-duplicate clusters among their representatives. Pure computation."""
    ids = episodes.column("episode_id").to_pylist()
    texts = episode_texts(steps, ids)
    return duplicates_of(episodes, exact.episode_keys(steps), dict(zip(ids, texts.to_pylist())), options, log)


def duplicates_of(episodes: pa.Table, keys: dict[str, str], texts: dict[str, str], options: DedupOptions,
                  log=print) -> Duplicates:
    """`find_duplicates` from each episode's exact key and canonical text (what the per-group map makes):
    the global reduce."""
    ids = episodes.column("episode_id").to_pylist()
    ranks = rank(episodes)
    row_of = {eid: i for i, eid in enumerate(ids)}
    rows: list[tuple] = []
    dropped: dict[str, tuple[str, str, float]] = {}

    labels = np.arange(len(ids))
    for group in exact.exact_groups(keys):
        members = [row_of[e] for e in group if e in row_of]
        labels[members] = min(members)
    reps = representatives(labels, ranks) if len(ids) else labels
    for label in np.unique(labels[labels != np.arange(len(ids))]):
        members = np.flatnonzero(labels == label)
        rep = ids[reps[members[0]]]
        for m in members:
            rows.append((f"exact:{rep}", ids[m], rep, 1.0, "exact"))
            if ids[m] != rep:
                dropped[ids[m]] = (rep, "exact", 1.0)

    survivors = np.flatnonzero(reps == np.arange(len(ids)))
    candidates = 0
    if len(survivors) > 1:
        params = minhash.MinHashParams(num_perm=options.num_perm, ngram=options.ngram, threshold=options.threshold)
        survivor_texts = pa.array([texts.get(ids[i]) or "" for i in survivors], pa.large_string())
        sketches = map_signatures(survivor_texts, params, options, log)
        near = minhash.cluster_sketches(sketches, options.threshold)
        candidates = near.candidates
        near_reps = representatives(near.labels, ranks[survivors])
        grouped = np.flatnonzero(np.bincount(near.labels, minlength=len(survivors))[near.labels] > 1)
        sims = minhash.jaccard(sketches.shingles, sketches.offsets, grouped, near_reps[grouped])
        for local, sim in zip(grouped, sims):
            eid, rep = ids[survivors[local]], ids[survivors[near_reps[local]]]
            rows.append((f"near:{rep}", eid, rep, float(sim), "near"))
            if eid != rep:
                dropped[eid] = (rep, "near", float(sim))
    names = ["cluster_id", "episode_id", "representative", "similarity", "kind"]
    clusters = pa.table(dict(zip(names, map(list, zip(*rows))))) if rows else pa.table(
        {n: pa.array([], pa.float64() if n == "similarity" else pa.string()) for n in names})
    return Duplicates(clusters.sort_by([("cluster_id", "ascending"), ("episode_id", "ascending")]), dropped,
                      candidates)


def _quarantine_rows(episodes: pa.Table, dropped: dict, run_id: str, branches: pa.Table) -> pa.Table:
    uris = dict(zip(episodes.column("episode_id").to_pylist(), episodes.column("source_uri").to_pylist()))
    rows = []
    gone = branches.filter(pc.is_in(branches.column("episode_id"), pa.array(list(dropped), pa.string())))
    for branch in sorted(gone.select(["step_id", "episode_id"]).to_pylist(), key=lambda b: b["step_id"]):
        rep = dropped[branch["episode_id"]][0]
        rows.append({"stage": STAGE, "rule": "branch_of_duplicate",
                     "reason": f"branch of episode {branch['episode_id']}, removed as a duplicate of {rep}",
                     "source_uri": uris.get(branch["episode_id"]), "location": None, "line": None,
                     "record_id": branch["step_id"], "snippet": None, "snippet_blob": None, "_run_id": run_id})
    for eid, (rep, kind, sim) in sorted(dropped.items()):
        how = "identical canonical actions and observations" if kind == "exact" else f"Jaccard {sim:.3f}"
        rows.append({"stage": STAGE, "rule": f"{kind}_duplicate", "reason": f"duplicate of episode {rep} ({how})",
                     "source_uri": uris.get(eid), "location": None, "line": None, "record_id": eid,
                     "snippet": None, "snippet_blob": None, "_run_id": run_id})
    return pa.Table.from_pylist(rows, schema=v1.QUARANTINE)


def _insert(con, table: str, data: pa.Table) -> None:
    if data.num_rows:
        con.register("_rows", data)
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")
        con.unregister("_rows")


def dedup_stage(ctx: StageContext) -> StageResult:
    """Scrub, identify and record duplicates, then commit a version without them (none when nothing
    changed). Works one part group (whole episodes with their steps) at a time: the map scrubs the group
    (rewriting it when a secret was found) and keeps each episode's exact key and canonical text; the
    reduce finds the duplicates; a second pass rewrites only the groups that lose an episode. What stays in
    memory is a key and a text per episode (no view trees, no screenshots), not the dataset."""
    from pipelines.runs import open_catalog

    options = dedup_options(ctx.options)
    lake, started = ctx.lake, time.perf_counter()
    with open_catalog(lake, ctx.catalog_path, read_only=True) as cat:
        version = datasets.resolve(cat, ctx.dataset, lake)
    name = version.dataset
    groups = datasets.part_groups(version) or [{t: version.parts.get(t, []) for t in ("episodes", "steps")}]
    branches = datasets.read_table(lake, version, "branches")
    audit: list[dict] = []
    if options.scrub and branches.num_rows:
        scrubbed, found = scrub_tables({"branches": branches})
        branches, audit = scrubbed["branches"], audit + found
    keys: dict[str, str] = {}
    texts: dict[str, str] = {}
    rank_rows, no_change, scrubbed_groups = [], [], []
    for group in groups:
        episodes = datasets.read_parts(lake, group["episodes"], "episodes")
        steps = datasets.read_parts(lake, group["steps"], "steps")
        if options.scrub:
            scrubbed, found = scrub_tables({"steps": steps, "episodes": episodes})
            if found:  # the group's secrets are gone from the new version's parts
                steps, episodes, audit = scrubbed["steps"], scrubbed["episodes"], audit + found
                group = datasets.write_group(lake, name, {"episodes": episodes, "steps": steps}, STAGE)
                group = {t: [p] for t, p in group.items()}
        scrubbed_groups.append(group)
        ids = episodes.column("episode_id").to_pylist()
        keys.update(exact.episode_keys(steps))
        texts.update(zip(ids, episode_texts(steps, ids).to_pylist()))
        no_change.append(exact.no_change_steps(steps))
        rank_rows.append(episodes.select(["episode_id", "outcome", "num_steps", "started_at", "source_uri"]))
    episodes_index = pa.concat_tables(rank_rows) if rank_rows else v1.EPISODES.empty_table().select(
        ["episode_id", "outcome", "num_steps", "started_at", "source_uri"])
    dups = duplicates_of(episodes_index, keys, texts, options, ctx.log)
    del texts
    no_change_steps = pa.concat_tables(no_change) if no_change else exact.no_change_steps(v1.STEPS.empty_table())

    meta = {"run_id": ctx.run_id, "dataset": name}
    with open_catalog(lake, ctx.catalog_path) as cat:
        _insert(cat.con, "dedup_clusters", _with(dups.clusters, meta))
        _insert(cat.con, "dedup_no_change", _with(no_change_steps, meta))
        if audit:
            _insert(cat.con, "scrub_audit", _with(pa.Table.from_pylist(audit), meta))

    dropped_ids = pa.array(sorted(dups.dropped), pa.string())
    parts: dict[str, list[str]] = {"episodes": [], "steps": []}
    for group in scrubbed_groups:  # the second pass: only groups that lose an episode are written again
        episodes = datasets.read_parts(lake, group["episodes"], "episodes", ["episode_id"])
        if not pc.any(pc.is_in(episodes["episode_id"], dropped_ids)).as_py():
            parts["episodes"] += group["episodes"]
            parts["steps"] += group["steps"]
            continue
        episodes = datasets.read_parts(lake, group["episodes"], "episodes")
        steps = datasets.read_parts(lake, group["steps"], "steps")
        kept = datasets.write_group(lake, name, {
            "episodes": episodes.filter(pc.invert(pc.is_in(episodes["episode_id"], dropped_ids))),
            "steps": steps.filter(pc.invert(pc.is_in(steps["episode_id"], dropped_ids)))}, STAGE)
        parts["episodes"].append(kept["episodes"])
        parts["steps"].append(kept["steps"])
    kept_branches = branches.filter(pc.invert(pc.is_in(branches.column("episode_id"), dropped_ids)))
    replaced: dict[str, list[str]] = {}
    if parts["episodes"] != version.parts.get("episodes", []) or parts["steps"] != version.parts.get("steps", []):
        replaced.update(parts)
    if kept_branches.num_rows != branches.num_rows or any(a["table_name"] == "branches" for a in audit):
        replaced["branches"] = [datasets.write_part(lake, name, "branches", kept_branches, STAGE)]
    if dups.dropped:
        part = datasets.write_part(lake, name, "quarantine",
                                   _quarantine_rows(episodes_index, dups.dropped, ctx.run_id, branches), STAGE)
        replaced["quarantine"] = [*version.parts.get("quarantine", []), part]
    new_version = None
    if replaced:
        with open_catalog(lake, ctx.catalog_path) as cat:
            number, created = datasets.commit(lake, cat, version, ctx.run_id, replaced,
                                              note=f"dedup of v{version.version}: {len(dups.dropped)} duplicates "
                                                   f"removed, {sum(a['count'] for a in audit)} secrets scrubbed")
        new_version = number if created else None
    n_episodes = episodes_index.num_rows
    n_exact = sum(1 for _, kind, _ in dups.dropped.values() if kind == "exact")
    summary = (f"{n_episodes:,} episodes: {n_exact:,} exact and {len(dups.dropped) - n_exact:,} near "
               f"duplicates removed, {n_episodes - len(dups.dropped):,} kept; "
               f"{sum(a['count'] for a in audit):,} secrets scrubbed in {len({a['record_id'] for a in audit}):,} "
               f"records; {branches.num_rows - kept_branches.num_rows:,} branches went with their episodes; "
               f"{no_change_steps.num_rows:,} no-change steps; {time.perf_counter() - started:.1f} s")
    return StageResult(records_in=n_episodes, records_out=n_episodes - len(dups.dropped),
                       quarantined=len(dups.dropped) + branches.num_rows - kept_branches.num_rows,
                       version=new_version, summary=summary)


def _with(table: pa.Table, columns: dict) -> pa.Table:
    for name, value in columns.items():
        table = table.append_column(name, pa.array([value] * table.num_rows, pa.string()))
    return table
