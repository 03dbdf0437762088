"""The `dedup` stage and `pipelines dedup DATASET`: scrub secrets, find exact and near-duplicate episodes,
record them, then remove them in a new dataset version.

Order of work, so every removal can be reviewed before it happens:
1. Secrets in steps and episodes are scrubbed in place; what kind was found where goes to `scrub_audit`.
2. Exact duplicates (same canonical actions and observations, step for step) are grouped.
3. Among the exact groups' representatives, near-duplicates (MinHash + LSH over the canonical episode
   text, candidates verified on the exact Jaccard of their shingle sets) are clustered.
Steps 1-3 split as NeMo Curator's identify-then-remove: a map per part group on the executor (in-process,
or Ray tasks: `pipelines.infra.executor`) scrubs and writes each episode's exact key, band keys and shingle set to
the group's signature file (`<lake>/datasets/<name>/dedup/<params digest>/<group>.parquet`, reused by later
runs: after an incremental ingest only new groups are read, and they are compared with every old one); the
reduce, once, groups keys and bands and reads shingles back for candidate pairs only.
4. Clusters go to `dedup_clusters` (and no-change steps to `dedup_no_change`) BEFORE anything is removed.
5. The new version drops every non-representative; each dropped episode gets a quarantine row (stage
   `dedup`, rule `exact_duplicate` / `near_duplicate`, reason naming the episode it duplicates).
Only the real line (`steps`) decides what is a duplicate; branches are scrubbed like steps and go with their
episode: a branch of a dropped episode is dropped too (rule `branch_of_duplicate`, naming the episode).

Options: `pipelines.infra.options.DedupOptions` (`[stage_options.dedup]` keys and the command's flags).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import xxhash

from pipelines.infra import datasets
from pipelines.infra import executor as executors
from pipelines.infra.lake import Lake
from pipelines.infra.options import DedupOptions, dedup_options
from pipelines.infra.stage_runner import Outcome, PartsStage, Plan, StageRun, run_parts
from pipelines.stages import StageContext, StageResult
from schemas import v1
from transforms.canonicalize import step_text_column
from transforms.dedup import exact, minhash
from transforms.dedup.representative import rank, representatives
from transforms.scrub import scrub_tables

STAGE = "dedup"
# Measured here (bench/memory.py, 2 cores): the map (scrub, keys, signatures) reads ~25 MB/s of parts
MAP_BYTES_PER_S = 25 * (1 << 20)
SIGNATURES_VERSION = 1  # bump when canonical texts or signatures change: older sidecars are then ignored
INDEX_COLUMNS = ["episode_id", "outcome", "num_steps", "started_at", "source_uri"]
SIDECAR = pa.schema([("episode_id", pa.string()), ("exact_key", pa.string()), ("n_shingles", pa.int64()),
                     ("bands", pa.list_(pa.uint64())), ("shingles", pa.list_(pa.uint32()))])


def map_signatures(texts: pa.Array, params: minhash.MinHashParams, batch_docs: int = 20_000,
                   executor: str = "local", ray_address: str | None = None) -> minhash.Sketches:
    """Shingles and band keys of loose texts, a batch of `batch_docs` per task (bench/dedup.py's contender:
    the stage itself sketches a part group per task)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if executor == "local" or not len(texts):
        return minhash.sketch(texts, params)  # works in bounded chunks itself
    # a pickled slice carries its whole parent buffer: copy each batch out so a task ships only its own
    batches = [pa.concat_arrays([texts.slice(lo, batch_docs)]) for lo in range(0, len(texts), batch_docs)]
    return minhash.Sketches.concat(executors.run_all(minhash.sketch, batches, params, executor=executor,
                                                     ray_address=ray_address, what="signature batch"))


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


# the map: one part group per task -------------------------------------------------------------------------
@dataclass
class MapJob:
    """What every group's map shares."""

    lake_url: str
    dataset: str
    options: DedupOptions

    @property
    def params(self) -> minhash.MinHashParams:
        return minhash.MinHashParams(num_perm=self.options.num_perm, ngram=self.options.ngram,
                                     threshold=self.options.threshold)

    def sidecar(self, lake: Lake, group: dict[str, list[str]]) -> str:
        """Where a group's signatures live: named by the group and by what they depend on, so a later dedup
        (after an incremental ingest) reads them instead of computing them again."""
        p = self.params
        digest = xxhash.xxh64_hexdigest(f"{p.num_perm}/{p.ngram}/{p.bands}/{p.rows}/{p.seed}/"
                                        f"{self.options.scrub}/{SIGNATURES_VERSION}".encode())
        return lake.path("datasets", self.dataset, "dedup", digest, f"{datasets.group_stem(group)}.parquet")


@dataclass
class GroupSketch:
    group: dict[str, list[str]]  # the group's parts after scrubbing
    sidecar: str  # lake-relative: episode_id, exact_key, n_shingles, bands, shingles
    index: pa.Table  # INDEX_COLUMNS: what ranks a duplicate's members
    audit: list[dict]  # secrets scrubbed
    no_change: pa.Table | None  # None when the signatures were already there (recorded by that run)


def sketch_group(group: dict[str, list[str]], job: MapJob) -> GroupSketch:
    """Scrub a group (rewriting it only when a secret was found), then keep each episode's exact key and
    MinHash sketch in the group's signature file. A group whose signature file exists is not read again."""
    lake = Lake(job.lake_url)
    sidecar = job.sidecar(lake, group)
    if lake.fs.exists(sidecar):
        index = datasets.read_parts(lake, group["episodes"], "episodes", INDEX_COLUMNS)
        if _rows(lake, sidecar) == index.num_rows:  # else unreadable or not this group's: computed again
            return GroupSketch(group, lake.relative(sidecar), index, [], None)
    episodes = datasets.read_parts(lake, group["episodes"], "episodes")
    steps = datasets.read_parts(lake, group["steps"], "steps")
    audit: list[dict] = []
    if job.options.scrub:
        scrubbed, audit = scrub_tables({"steps": steps, "episodes": episodes})
        if audit:  # the group's secrets are gone from the new version's parts
            steps, episodes = scrubbed["steps"], scrubbed["episodes"]
            group = {t: [p] for t, p in datasets.write_group(lake, job.dataset, {"episodes": episodes,
                                                                                 "steps": steps}, STAGE).items()}
            sidecar = job.sidecar(lake, group)
    ids = episodes.column("episode_id").to_pylist()
    keys = exact.episode_keys(steps)
    sk = minhash.sketch(episode_texts(steps, ids), job.params)
    lens = np.diff(sk.offsets)
    table = pa.table({
        "episode_id": pa.array(ids, pa.string()),
        "exact_key": pa.array([keys.get(e) for e in ids], pa.string()),
        "n_shingles": pa.array(lens, pa.int64()),
        "bands": pa.ListArray.from_arrays(pa.array(np.arange(len(ids) + 1) * sk.keys.shape[1], pa.int32()),
                                          pa.array(np.ascontiguousarray(sk.keys).reshape(-1), pa.uint64())),
        "shingles": pa.LargeListArray.from_arrays(pa.array(sk.offsets - sk.offsets[0], pa.int64()),
                                                  pa.array(sk.shingles, pa.uint32())).cast(pa.list_(pa.uint32())),
    }, schema=SIDECAR)
    lake.write_parquet(sidecar, table)
    return GroupSketch(group, lake.relative(sidecar), episodes.select(INDEX_COLUMNS), audit,
                       exact.no_change_steps(steps))


def _rows(lake: Lake, path: str) -> int | None:
    """Rows of a Parquet file by its footer; None when it cannot be read as Parquet."""
    try:
        return pq.read_metadata(path, filesystem=lake.fs).num_rows
    except (OSError, pa.ArrowInvalid):
        return None


def _drop_from_group(group: dict[str, list[str]], dropped: pa.Array, job: MapJob) -> dict[str, list[str]]:
    """The group without the dropped episodes, written as a new group, with its signature file filtered to
    match (so the next dedup need not compute it)."""
    lake = Lake(job.lake_url)
    keep = lambda t: t.filter(pc.invert(pc.is_in(t["episode_id"], dropped)))  # noqa: E731
    episodes = datasets.read_parts(lake, group["episodes"], "episodes")
    steps = datasets.read_parts(lake, group["steps"], "steps")
    kept = {t: [p] for t, p in datasets.write_group(lake, job.dataset, {"episodes": keep(episodes),
                                                                        "steps": keep(steps)}, STAGE).items()}
    old, new = job.sidecar(lake, group), job.sidecar(lake, kept)
    if lake.fs.exists(old) and not lake.fs.exists(new):
        lake.write_parquet(new, keep(pq.read_table(old, filesystem=lake.fs)))
    return kept


# the reduce: once, over every episode's key and band keys ------------------------------------------------
@dataclass
class Duplicates:
    clusters: pa.Table  # cluster_id, episode_id, representative, similarity, kind
    dropped: dict[str, tuple[str, str, float]]  # episode_id -> (representative, kind, similarity)
    candidates: int = 0


def duplicates_of(index: pa.Table, sidecars: list[str], lake: Lake, threshold: float) -> Duplicates:
    """Exact groups, then near-duplicate clusters among their representatives: candidates from the band
    keys of every episode, verified on the exact Jaccard of the shingle sets of the candidates only (read
    from their groups' signature files). `index` rows (INDEX_COLUMNS) line up with the sidecars' rows."""
    light = [pq.read_table(lake.absolute(s), columns=["episode_id", "exact_key", "n_shingles", "bands"],
                           filesystem=lake.fs) for s in sidecars]
    sizes = [t.num_rows for t in light]
    light = pa.concat_tables(light) if light else SIDECAR.empty_table().drop_columns(["shingles"])
    ids = index.column("episode_id").to_pylist()
    if light.column("episode_id").to_pylist() != ids:
        raise ValueError("dedup: signature files do not line up with the episodes (remove the dataset's "
                         "dedup/ folder to compute them again)")
    ranks = rank(index)
    rows: list[tuple] = []
    dropped: dict[str, tuple[str, str, float]] = {}

    labels = np.arange(len(ids))
    keys = {e: k for e, k in zip(ids, light.column("exact_key").to_pylist()) if k is not None}
    row_of = {eid: i for i, eid in enumerate(ids)}
    for group in exact.exact_groups(keys):
        members = [row_of[e] for e in group]
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
        bands = light.column("bands").combine_chunks()
        width = len(bands[0]) if len(bands) else 0
        band_keys = np.asfortranarray(bands.flatten().to_numpy().reshape(-1, width)[survivors])
        empty = light.column("n_shingles").to_numpy()[survivors] == 0
        del bands, light
        u, v = minhash.candidate_pairs(band_keys, empty)
        del band_keys
        candidates = len(u)
        docs = np.unique(np.concatenate([u, v]))  # survivor positions whose shingles are needed
        values, offsets = _shingles_of(lake, sidecars, sizes, survivors[docs])
        slot = np.searchsorted(docs, np.concatenate([u, v]))
        su, sv = slot[:len(u)], slot[len(u):]
        sim = minhash.jaccard(values, offsets, su, sv)
        ok = sim >= threshold
        near = minhash.connected_components(len(survivors), u[ok], v[ok])
        near_reps = representatives(near, ranks[survivors])
        grouped = np.flatnonzero(np.bincount(near, minlength=len(survivors))[near] > 1)
        sims = minhash.jaccard(values, offsets, np.searchsorted(docs, grouped),
                               np.searchsorted(docs, near_reps[grouped]))
        for local, s in zip(grouped, sims):
            eid, rep = ids[survivors[local]], ids[survivors[near_reps[local]]]
            rows.append((f"near:{rep}", eid, rep, float(s), "near"))
            if eid != rep:
                dropped[eid] = (rep, "near", float(s))
    names = ["cluster_id", "episode_id", "representative", "similarity", "kind"]
    clusters = pa.table(dict(zip(names, map(list, zip(*rows))))) if rows else pa.table(
        {n: pa.array([], pa.float64() if n == "similarity" else pa.string()) for n in names})
    return Duplicates(clusters.sort_by([("cluster_id", "ascending"), ("episode_id", "ascending")]), dropped,
                      candidates)


def _shingles_of(lake: Lake, sidecars: list[str], sizes: list[int], rows: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The shingle sets of the given global rows (sorted), read one signature file (of `sizes` rows) at a
    time: (values, offsets) in `rows` order."""
    values, lens, start = [], [], 0
    for path, n in zip(sidecars, sizes):
        mine = rows[(rows >= start) & (rows < start + n)] - start
        if len(mine):
            column = pq.read_table(lake.absolute(path), columns=["shingles"], filesystem=lake.fs)["shingles"]
            taken = column.take(pa.array(mine)).combine_chunks()
            values.append(taken.flatten().to_numpy())
            lens.append(np.diff(taken.offsets.to_numpy()))
        start += n
    lens = np.concatenate(lens) if lens else np.zeros(0, np.int64)
    offsets = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    return (np.concatenate(values) if values else np.zeros(0, np.uint32)).astype(np.uint32, copy=False), offsets


def _branches_without(lake: Lake, dataset: str, parts: list[str], dropped: pa.Array, scrub: bool
                      ) -> tuple[list[str], pa.Table, list[dict]]:
    """The branches parts scrubbed and without the dropped episodes' branches, one part at a time (a part
    is written again only when it changed): (parts, (step_id, episode_id) of the branches gone, audit)."""
    out, gone, audit = [], [], []
    for rel in parts:
        branches = pq.read_table(lake.absolute(rel), filesystem=lake.fs)
        found = []
        if scrub and branches.num_rows:
            scrubbed, found = scrub_tables({"branches": branches})
            branches = scrubbed["branches"]
        leaving = pc.is_in(branches.column("episode_id"), dropped)
        gone.append(branches.filter(leaving).select(["step_id", "episode_id"]))
        if found or pc.any(leaving).as_py():
            out.append(datasets.write_part(lake, dataset, "branches", branches.filter(pc.invert(leaving)), STAGE))
            audit += found
        else:
            out.append(rel)
    empty = pa.table({"step_id": pa.array([], pa.string()), "episode_id": pa.array([], pa.string())})
    return out, pa.concat_tables(gone) if gone else empty, audit


def _quarantine_rows(episodes: pa.Table, dropped: dict, run_id: str, gone: pa.Table) -> pa.Table:
    uris = dict(zip(episodes.column("episode_id").to_pylist(), episodes.column("source_uri").to_pylist()))
    rows = []
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
    changed). The map runs per part group on the executor (scrub, exact keys, signatures into the group's
    signature file; groups whose file exists are not read again); the reduce runs once over every
    episode's key and band keys; a second pass on the executor rewrites only the groups that lose an
    episode. No text, shingle set or screenshot of the whole dataset is ever in one process."""
    return run_parts(ctx, DEDUP)


def _plan(run: StageRun, cat) -> Plan:
    """Every group is mapped: one whose signature file exists only has its episodes' index read."""
    return Plan(run.groups, MapJob(run.ctx.lake.url, run.dataset, run.options), run.groups,
                f"dedup {run.dataset} signatures")


def _opening(run: StageRun, sketched: list[GroupSketch]) -> str:
    reused = sum(s.no_change is None for s in sketched)
    return (f"{len(run.groups)} part groups on {run.executor}"
            + (f", {reused} with signatures from an earlier run" if reused else ""))


@dataclass
class _Removal:
    """What one dedup run found and removes, for its summary."""

    sketched: list[GroupSketch]
    index: pa.Table  # INDEX_COLUMNS of every episode
    dups: Duplicates
    audit: list[dict]  # secrets scrubbed, branches' included
    no_change_steps: pa.Table
    gone_branches: pa.Table | None = None  # (step_id, episode_id) of the branches that went with their episode


def _reduce(run: StageRun, sketched: list[GroupSketch]) -> Outcome:
    """Duplicates over every episode, recorded before anything is removed; then the groups that lose an
    episode rewritten on the executor, the branches without the dropped episodes', and their quarantine rows."""
    lake, name, version = run.ctx.lake, run.dataset, run.version
    removal = _identified(run, sketched)
    dups = removal.dups
    dropped_ids = pa.array(sorted(dups.dropped), pa.string())
    branch_parts, removal.gone_branches, branch_audit = _branches_without(
        lake, name, version.parts.get("branches", []), dropped_ids, run.options.scrub)
    removal.audit += branch_audit
    meta = {"run_id": run.ctx.run_id, "dataset": name}
    with run.catalog() as cat:  # recorded before the version that removes them
        _insert(cat.con, "dedup_clusters", _with(dups.clusters, meta))
        _insert(cat.con, "dedup_no_change", _with(removal.no_change_steps, meta))
        if removal.audit:
            _insert(cat.con, "scrub_audit", _with(pa.Table.from_pylist(removal.audit), meta))
    new_groups = _without_dropped(run, sketched, dropped_ids)
    parts = {t: [p for g in new_groups for p in g[t]] for t in ("episodes", "steps")}
    replaced: dict[str, list[str]] = {}
    if parts["episodes"] != version.parts.get("episodes", []) or parts["steps"] != version.parts.get("steps", []):
        replaced.update(parts)
    if branch_parts != version.parts.get("branches", []):
        replaced["branches"] = branch_parts
    if dups.dropped:
        part = datasets.write_part(lake, name, "quarantine",
                                   _quarantine_rows(removal.index, dups.dropped, run.ctx.run_id,
                                                    removal.gone_branches), STAGE)
        replaced["quarantine"] = [*version.parts.get("quarantine", []), part]
    return Outcome(replaced, note=f"dedup of v{version.version}: {len(dups.dropped)} duplicates removed, "
                                  f"{sum(a['count'] for a in removal.audit)} secrets scrubbed", state=removal)


def _identified(run: StageRun, sketched: list[GroupSketch]) -> _Removal:
    """The reduce's first half: exact and near duplicates from the groups' signature files."""
    audit = [a for s in sketched for a in s.audit]
    index = pa.concat_tables([s.index for s in sketched]) if sketched else v1.EPISODES.empty_table().select(
        INDEX_COLUMNS)
    dups = duplicates_of(index, [s.sidecar for s in sketched], run.ctx.lake, run.options.threshold)
    no_change = [s.no_change for s in sketched if s.no_change is not None]
    no_change_steps = pa.concat_tables(no_change) if no_change else exact.no_change_steps(v1.STEPS.empty_table())
    return _Removal(sketched, index, dups, audit, no_change_steps)


def _without_dropped(run: StageRun, sketched: list[GroupSketch], dropped_ids: pa.Array) -> list[dict[str, list[str]]]:
    """Every group in order, those that lose an episode written again (on the run's executor)."""
    losing = [i for i, s in enumerate(sketched)
              if pc.any(pc.is_in(s.index["episode_id"], dropped_ids)).as_py()]
    rewritten = run.map(_drop_from_group, [sketched[i].group for i in losing], dropped_ids, run.plan.job)
    new_groups = [s.group for s in sketched]
    for i, group in zip(losing, rewritten):
        new_groups[i] = group
    return new_groups


def _finish(run: StageRun, outcome: Outcome, number: int, created: bool) -> StageResult:
    removal: _Removal = outcome.state
    dups, audit, groups = removal.dups, removal.audit, run.groups
    reused = sum(s.no_change is None for s in removal.sketched)
    n_episodes = removal.index.num_rows
    n_exact = sum(1 for _, kind, _ in dups.dropped.values() if kind == "exact")
    summary = (f"{n_episodes:,} episodes: {n_exact:,} exact and {len(dups.dropped) - n_exact:,} near "
               f"duplicates removed, {n_episodes - len(dups.dropped):,} kept; "
               f"{sum(a['count'] for a in audit):,} secrets scrubbed in {len({a['record_id'] for a in audit}):,} "
               f"records; {removal.gone_branches.num_rows:,} branches went with their episodes; "
               f"{removal.no_change_steps.num_rows:,} no-change steps; {len(groups) - reused} of {len(groups)} "
               f"part groups read; {time.perf_counter() - run.started:.1f} s")
    return StageResult(records_in=n_episodes, records_out=n_episodes - len(dups.dropped),
                       quarantined=len(dups.dropped) + removal.gone_branches.num_rows,
                       version=number if created else None, summary=summary)


def _with(table: pa.Table, columns: dict) -> pa.Table:
    for name, value in columns.items():
        table = table.append_column(name, pa.array([value] * table.num_rows, pa.string()))
    return table


DEDUP = PartsStage("dedup", sketch_group, MAP_BYTES_PER_S, _plan, _reduce, _finish, options=dedup_options,
                   opening=_opening)
