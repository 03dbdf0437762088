"""What rendering a version takes, decided once under the read-only catalog before any part group renders
(`render_plan`, the export stage's plan for `pipelines.infra.stage_runner`): each episode's split and the
held-out episodes (over every episode: small per-episode data), the recipe's no-change steps, the
`--demonstrations` pool. The job every group shares travels to the executor's tasks (`RenderJob`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from catalog import Catalog, Version
from pipelines.infra.lake import Lake
from pipelines.infra.options import ExportOptions
from pipelines.infra.stage_runner import Plan, StageRun
from pipelines.stages.export.options import ExportError, recipe_of
from transforms.export import demonstrations, recipe as recipes, splits
from transforms.export.transitions import EPISODE_COLUMNS, episode_index

# Measured here (bench/memory.py, 2 cores): rendering reads ~15 MB/s of parts (the executor's cost model)
RENDER_BYTES_PER_S = 15 * (1 << 20)


def file_list(lake: Lake, parts: list[str]) -> str:
    """The parts as the list inside DuckDB's `read_parquet([...])`."""
    return ", ".join("'" + lake.uri(p).replace("'", "''") + "'" for p in parts)


def _first_urls(cat: Catalog, lake: Lake, parts: list[str]) -> dict[str, str]:
    if not parts:
        return {}
    rows = cat.con.execute(
        f"SELECT episode_id, arg_min(observation.url, step_index) FROM read_parquet([{file_list(lake, parts)}]) "
        "WHERE observation.url IS NOT NULL GROUP BY 1").fetchall()
    return dict(rows)


def _clusters(cat: Catalog, dataset: str) -> list[tuple[str, str]]:
    """(cluster_id, episode_id) of the dataset's dedup clusters (none until dedup has run)."""
    rows = cat.con.execute("SELECT cluster_id, episode_id FROM dedup_clusters WHERE dataset = ? "
                           "AND episode_id IS NOT NULL", [dataset]).fetchall()
    return [(c, e) for c, e in rows]


@dataclass
class RenderJob:
    """What every group's rendering shares: the options and the global decisions (splits, held-out)."""

    lake_url: str
    config: ExportOptions
    split_of: dict[str, str]  # episode_id -> split
    held_out: set[str]  # episode ids left out of every split
    branch_parts: list[str]  # read only with include_simulated
    no_change: frozenset = frozenset()  # step ids of dedup_no_change (the recipe's no-change filter)
    target_parts: list[str] = field(default_factory=list)  # `targets` parts, read only with --targets sampled
    # --demonstrations: N and the candidates per domain to draw from, or the texts a file gives per domain
    demo_count: int = 0
    demo_pool: dict[str, list] = field(default_factory=dict)
    demo_texts: dict[str, str] = field(default_factory=dict)


def render_plan(run: StageRun, cat: Catalog) -> Plan:
    """The plan of rendering `run.version` with `run.options` (checked): every part group one task, in group order,
    at most four ahead of the one written; the job they share (splits, held-out episodes, the recipe's
    no-change steps, the `--demonstrations` pool). The plan's state is the recipe."""
    config, lake, version = run.options, run.ctx.lake, run.version
    split_of, excluded = _splits(lake, cat, version, config)
    recipe = recipe_of(config)
    no_change = frozenset(r[0] for r in cat.con.execute(
        "SELECT step_id FROM dedup_no_change WHERE dataset = ?", [version.dataset]).fetchall()
    ) if recipe.drop_no_change else frozenset()
    job = RenderJob(lake.url, config, split_of, excluded,
                    version.parts.get("branches", []) if config.include_simulated else [], no_change,
                    version.parts.get("targets", []) if config.targets == "sampled" else [])
    _add_demonstrations(job, lake, version.parts.get("steps", []))
    return Plan(run.groups, job, run.groups, f"export {config.kind}/{config.format}", window=4, state=recipe)


def _env(row: dict) -> dict:
    try:
        env = orjson.loads(row["env"]) if row.get("env") else {}
    except orjson.JSONDecodeError:
        return {}
    return env if isinstance(env, dict) else {}


def read_episodes(lake: Lake, parts: list[str]) -> dict[str, dict]:
    """The episodes of `parts` by id (`transitions.episode_index`), with the columns the transition view needs."""
    if not parts:
        return {}
    tables = [pq.read_table(lake.absolute(p), columns=EPISODE_COLUMNS, filesystem=lake.fs) for p in parts]
    return episode_index(pa.concat_tables(tables, promote_options="default"))


def _splits(lake: Lake, cat: Catalog, version: Version, config: ExportOptions
            ) -> tuple[dict[str, str], set[str]]:
    """Each episode's split (`transforms.export.splits`: grouped by app, repository, site or task and by dedup
    cluster) and the episodes held out of every split, decided once over every episode of the version."""
    episodes = read_episodes(lake, version.parts.get("episodes", []))
    urls = _first_urls(cat, lake, version.parts.get("steps", []))
    groups = {e: splits.group_key(row["domain"], row["task"], _env(row), urls.get(e), e)
              for e, row in episodes.items()}
    split_of = splits.assign(groups, _clusters(cat, version.dataset), seed=config.seed, ratios=config.split_ratios)
    held_out = set(config.held_out)
    excluded = {e for e, row in episodes.items() if held_out and splits.is_held_out(held_out, e, row["task"], groups[e])}
    return split_of, excluded


def _add_demonstrations(job: RenderJob, lake: Lake, parts: list[str]) -> None:
    """`--demonstrations`: the file's texts, or the pool N are drawn from (`_demonstration_pool`)."""
    count, path = demonstrations.parse(job.config.demonstrations)
    if path is not None:
        try:
            job.demo_texts = demonstrations.from_file(path)
        except (ValueError, OSError) as e:
            raise ExportError(str(e)) from e
    elif count and (not job.config.domains or set(job.config.domains) & set(demonstrations.DOMAINS)):
        job.demo_count = count
        job.demo_pool = _demonstration_pool(lake, parts, job)


_DEMO_SQL = """
SELECT episode_id, step_id, domain, action, result FROM (
    SELECT episode_id, step_id, domain, origin, action,
           CASE WHEN lead(step_index) OVER w IS NULL THEN final_observation.text
                ELSE lead(observation.text) OVER w END AS result
    FROM read_parquet([{files}], union_by_name = true)
    WHERE domain IN ({domains})
    WINDOW w AS (PARTITION BY episode_id ORDER BY step_index))
WHERE length(trim(result)) > 0 AND length(result) <= {max_chars} AND coalesce(origin, 'real') = 'real'
"""


def _demonstration_pool(lake: Lake, parts: list[str], job: RenderJob) -> dict[str, list]:
    """Per domain with `{demonstrations}`, the candidate examples: the transitions of train-split trajectories
    whose result is short, the PER_TOOL first by seeded hash of each (domain, tool), read in batches."""
    import heapq

    import duckdb

    from catalog.object_store import attach

    if not parts:
        return {}
    heaps: dict[tuple[str, str], list] = {}
    con = duckdb.connect()
    attach(con, lake.url)
    try:
        domains = ", ".join(f"'{d}'" for d in demonstrations.DOMAINS)
        sql = _DEMO_SQL.format(files=file_list(lake, parts), domains=domains, max_chars=demonstrations.MAX_RESULT_CHARS)
        for batch in con.sql(sql).to_arrow_reader(10_000):
            for row in batch.to_pylist():
                episode = row["episode_id"]
                if job.split_of.get(episode, "train") != "train" or episode in job.held_out:
                    continue
                action = row["action"] or {}
                example = demonstrations.Example(episode, row["step_id"], demonstrations.tool_of(action), action,
                                                 row["result"])
                heap = heaps.setdefault((row["domain"], example.tool), [])
                # keep the PER_TOOL smallest ranks: a max-heap of negated ranks
                item = (-xxhash.xxh64_intdigest(f"{job.config.seed}\x1f{example.step_id}".encode()), example.step_id,
                        example)
                if len(heap) < demonstrations.PER_TOOL:
                    heapq.heappush(heap, item)
                elif item[:2] > heap[0][:2]:
                    heapq.heapreplace(heap, item)
    finally:
        con.close()
    pool: dict[str, list] = {}
    for (domain, _), heap in sorted(heaps.items()):
        pool.setdefault(domain, []).extend(example for _, _, example in sorted(heap, key=lambda i: i[1]))
    return pool
