"""`pipelines export {cpt,sft,rl} DATASET --out PATH`: render a dataset version into training shards.

Reads the version's `steps` through DuckDB ordered by episode (out-of-core, so memory stays bounded by the
largest episode, and episodes whose steps sit in several parts, like labeler branches, come out whole),
builds the canonical transition view (`transforms.export.transitions`), assigns grouped splits, renders
records with the chosen format, and writes:

    <out>/<split>/<kind>-<format>-<NNNNN>.<parquet|jsonl>   shards, capped by rows and bytes, numbered per split
    <out>/<split>/<domain>-<NNNNN>_<split>.jsonl            (sft --format bench: per domain, as the reference)
    <out>/dataset_info.json                                 (sft --format sharegpt: LLaMA-Factory)
    <out>/manifest.json                                     counts per split/domain, tokens, shard sha256s,
                                                            dataset version, the export config

and in the catalog: `exports` (one row per export, with its manifest) and `export_rows` (export_id, shard,
row, step_ids): every shard row mapped to the steps it was made from. The export id is a hash of the dataset
version and the config, so exporting the same thing again rewrites the same files and rows.

Origins: by default only the main line is read (`steps`; the `branches` table is never opened), so a
real-only export of a labeled version is byte-identical to the export before labeling; `include_simulated`
adds one line per branch (`schemas.branches`), and every record carries its `origin`.

Mixture weights (`mix`, domain -> weight): a record of a domain with weight w is written floor(w) times,
plus once more when xxh64(record id) / 2^64 < frac(w); 0 leaves the domain out. Unlisted domains weigh 1.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import hashlib
import os
import posixpath
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterator

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from catalog import Catalog, Version
from catalog.catalog import EXPORT_ROWS
from pipelines import datasets
from pipelines import executor as executors
from pipelines.datasets import resolve
from pipelines.lake import Lake
from pipelines.options import ExportOptions, from_mapping
from pipelines.parquet_shard import ROW_GROUP_BYTES, ParquetShard
from pipelines.runs import open_catalog
from pipelines.stages import StageContext, StageResult
from schemas import SCHEMA_VERSION
from transforms.export import android_state, cpt, demonstrations, recipe as recipes, rl, sft, splits, trainer_configs, \
    web_action
from transforms.export.budget import TokenCounter
from transforms.export.chat import TrajectoryRenderer
from transforms.export.shell_screen import shell_screens
from transforms.export.transitions import (BRANCH_COLUMNS, EPISODE_COLUMNS, Trajectory, branches_by_episode,
                                           domain_selected, episode_index, trajectories)

KINDS = {"cpt": cpt, "sft": sft, "rl": rl}
# Measured here (bench/memory.py, 2 cores): rendering reads ~15 MB/s of parts (the executor's cost model)
RENDER_BYTES_PER_S = 15 * (1 << 20)
DEFAULT_FORMAT = {"cpt": "text", "sft": "agentworld", "rl": "verl"}


# What the view needs from a step; screenshots stay unread, and `ui_tree` too unless android states are
# rendered per source (then only android steps' are read).
_TREE_SQL = ", ui_tree := CASE WHEN domain = 'android' THEN {obs}.ui_tree END"
_STEPS_SQL = """
SELECT episode_id, step_index, step_id, domain,
       struct_pack(kind := observation.kind, text := observation.text, url := observation.url,
                   is_error := observation.is_error, exit_code := observation.exit_code,
                   width := observation.width, height := observation.height,
                   screenshot := observation.screenshot{tree}) AS observation,
       action,
       struct_pack(kind := final_observation.kind, text := final_observation.text,
                   is_error := final_observation.is_error, exit_code := final_observation.exit_code,
                   screenshot := final_observation.screenshot{final_tree})
           AS final_observation,
       origin
FROM read_parquet([{files}], union_by_name = true)
ORDER BY episode_id, step_index
"""


class ExportError(ValueError):
    pass


def checked(options: ExportOptions) -> ExportOptions:
    """The options with the kind's default format filled in; ExportError when they cannot export."""
    if options.kind not in KINDS:
        raise ExportError(f"unknown export kind {options.kind!r} (kinds: {', '.join(KINDS)})")
    options = dataclasses.replace(options, format=options.format or DEFAULT_FORMAT[options.kind])
    if options.format not in KINDS[options.kind].FORMATS:
        raise ExportError(f"{options.kind} has no format {options.format!r} "
                          f"(formats: {', '.join(KINDS[options.kind].FORMATS)})")
    if (options.kind, options.format) == ("cpt", "trl") and (options.tokenizer or "") in ("bound", "estimate"):
        raise ExportError("cpt --format trl writes token ids: --tokenizer must name a tokenizer, not the bound")
    ratios = options.split_ratios
    if abs(sum(ratios) - 1) > 1e-9 or min(ratios) < 0:
        raise ExportError(f"split ratios {ratios} must be >= 0 and sum to 1")
    if options.shard_rows < 1 or options.shard_mb <= 0:
        raise ExportError("shard limits must be positive")
    if options.targets == "sampled" and (options.kind != "sft" or options.format == "bench"):
        raise ExportError("--targets sampled applies to sft exports other than --format bench (an evaluation "
                          "compares with the real next state)")
    negative = [d for d, w in options.mix.items() if w < 0]
    if negative:
        raise ExportError(f"mix weights must be >= 0 ({', '.join(negative)})")
    try:
        recipe_of(options)
        demonstrations.parse(options.demonstrations)
    except ValueError as e:
        raise ExportError(str(e)) from e
    return options


# ExportOptions' recipe fields: recorded only when set, so an export without a recipe is unchanged
RECIPE_OPTIONS = ("recipe", "min_turns", "drop_undeclared_tools", "drop_environment_failures",
                  "drop_empty_actions", "skip_retry_cycles", "drop_no_change", "loss_mask", "keep_rates",
                  "prompt_variants", "prompt_variants_dir", "screenshot_states")


def recipe_of(options: ExportOptions) -> recipes.Recipe:
    """The recipe the options ask for: each step as set, else the named recipe's default, else off."""
    return recipes.resolve({name: getattr(options, name) for name in RECIPE_OPTIONS}, seed=options.seed)


def export_options(table: dict) -> ExportOptions:
    """A definition's `[stage_options.export]` table, checked."""
    return checked(from_mapping(ExportOptions, table, "stage_options.export"))


def recorded(options: ExportOptions) -> dict:
    """The options as the manifest records them (held-out ids summarized by count and digest)."""
    d = asdict(options)
    ids = sorted(set(options.held_out))
    d["held_out"] = {"count": len(ids), "sha256": hashlib.sha256("\n".join(ids).encode()).hexdigest()}
    d["split_ratios"] = list(options.split_ratios)
    d.pop("out")
    for name in RECIPE_OPTIONS:
        if d[name] is None:
            del d[name]
    if d["targets"] == "real":  # recorded only when sampled, so an export of real targets is unchanged
        del d["targets"]
    for name in ("android_state", "web_action", "demonstrations"):  # recorded only when chosen (the default follows the format)
        if d[name] is None:
            del d[name]
    return d


# writing ----------------------------------------------------------------------------------------------
@dataclass
class _Shard:
    path: str  # relative to the export root
    split: str
    domain: str | None
    rows: int
    bytes: int
    sha256: str


class _ShardWriter:
    """Writes the records of one split (and domain, for per-domain layouts) into shards, starting a new
    shard whenever the row or byte cap (counted in JSON-line bytes) is reached. JSONL lines stream into a
    temporary file as they come; Parquet records go into it in row groups (`pipelines.parquet_shard`). A shard
    gets its final name only when complete, so readers never see a partial one."""

    def __init__(self, out: Lake, name: Callable[[int], str], file_type: str, split: str, domain: str | None,
                 max_rows: int, max_bytes: int, on_shard: Callable[[_Shard, list[list[str]], list], None]):
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
        self.on_shard(_Shard(rel, self.split, self.domain, len(self.step_ids), size, digest), self.step_ids,
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


def _bound_buffered(writers, max_bytes: int) -> None:
    """Parquet records wait in memory for their row group, one group per split (and domain): their sum is kept
    to one row group's size; past it, the split holding the most writes its row group early."""
    buffered = [w for w in writers if w.pending_bytes]
    if sum(w.pending_bytes for w in buffered) >= max_bytes:
        max(buffered, key=lambda w: w.pending_bytes).write_row_group()


class Lineage:
    """Every output row's step ids, written to a local Parquet file as shards complete, so an export holds one
    shard's worth, not the dataset's; `record_export` puts the file in the lake, where the catalog's
    `export_rows` view reads it."""

    SCHEMA = EXPORT_ROWS
    INFO = ("prompt_variant", "masked_step_ids", "dropped_step_ids")

    def __init__(self, export_id: str):
        self.export_id = export_id
        self.dir = tempfile.mkdtemp(prefix="trajforge-lineage-")
        self.path = os.path.join(self.dir, "rows.parquet")
        self.writer = pq.ParquetWriter(self.path, self.SCHEMA, compression="zstd")

    def add(self, shard: str, step_ids: list[list[str]], infos: list[dict | None] | None = None) -> None:
        """The rows of one shard, in order, with each row's recipe decisions (`infos`)."""
        infos = infos or [None] * len(step_ids)
        columns = {key: [(info or {}).get(key) for info in infos] for key in self.INFO}
        self.writer.write_table(pa.table({"export_id": [self.export_id] * len(step_ids),
                                          "shard": [shard] * len(step_ids), "row": range(len(step_ids)),
                                          "step_ids": step_ids, **columns}, schema=self.SCHEMA))

    def add_files(self, paths: list[str], step_ids: list[list[str]]) -> None:
        """Files of one record each (ATIF), many at once: one row group, not one per file."""
        nulls = {key: [None] * len(paths) for key in self.INFO}
        self.writer.write_table(pa.table({"export_id": [self.export_id] * len(paths), "shard": paths,
                                          "row": [0] * len(paths), "step_ids": step_ids, **nulls},
                                         schema=self.SCHEMA))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def remove(self) -> None:
        self.close()
        shutil.rmtree(self.dir, ignore_errors=True)


# reading ----------------------------------------------------------------------------------------------
def _file_list(lake: Lake, parts: list[str]) -> str:
    """The parts as the list inside DuckDB's `read_parquet([...])`."""
    return ", ".join("'" + lake.uri(p).replace("'", "''") + "'" for p in parts)


def _source_actions(android: bool, web: bool):
    """`transitions.trajectories`' `action_text`: DroidBot's event text for DroidBot runs (`android`), BrowserGym
    calls for web episodes (`web`); None when neither."""
    if not (android or web):
        return None

    def action_text(domain: str, source_format: str | None):
        if domain == "web":
            return web_action.action_text(domain, source_format) if web else None
        return android_state.action_text(domain, source_format) if android else None

    return action_text


def _group_steps(lake: Lake, parts: list[str], trees: bool = False) -> pa.Table:
    """A group's steps with the columns the transition view needs (screenshots unread, their blob refs kept for
    `screenshot_states`; android view trees read with `trees`)."""
    import duckdb

    from catalog.object_store import attach

    if not parts:
        return pa.table({})
    con = duckdb.connect()
    attach(con, lake.url)
    try:
        tree, final_tree = ((_TREE_SQL.format(obs="observation"), _TREE_SQL.format(obs="final_observation"))
                            if trees else ("", ""))
        sql = _STEPS_SQL.format(files=_file_list(lake, parts), tree=tree, final_tree=final_tree)
        return con.sql(sql).to_arrow_table()
    finally:
        con.close()


def _first_urls(cat: Catalog, lake: Lake, parts: list[str]) -> dict[str, str]:
    if not parts:
        return {}
    rows = cat.con.execute(
        f"SELECT episode_id, arg_min(observation.url, step_index) FROM read_parquet([{_file_list(lake, parts)}]) "
        "WHERE observation.url IS NOT NULL GROUP BY 1").fetchall()
    return dict(rows)


def _clusters(cat: Catalog, dataset: str) -> list[tuple[str, str]]:
    """(cluster_id, episode_id) of the dataset's dedup clusters (none until dedup has run)."""
    rows = cat.con.execute("SELECT cluster_id, episode_id FROM dedup_clusters WHERE dataset = ? "
                           "AND episode_id IS NOT NULL", [dataset]).fetchall()
    return [(c, e) for c, e in rows]


# the export -------------------------------------------------------------------------------------------
def _copies(weight: float, record_id: str) -> int:
    whole = int(weight)
    frac = weight - whole
    return whole + (1 if frac > 0 and xxhash.xxh64_intdigest(record_id.encode()) / 2**64 < frac else 0)


def _admissible_end(trajectory: Trajectory, include_simulated: bool) -> int:
    """CPT: turns [0, end) of the line: the admissible prefix, cut after its last recorded observation."""
    end = len(trajectory.turns)
    if not include_simulated:
        if trajectory.first_state_origin != "real":
            return 0
        for i, turn in enumerate(trajectory.turns):
            if turn.origin != "real" or turn.observation_origin != "real":
                end = i
                break
    while end > 0 and trajectory.turns[end - 1].observation is None:
        end -= 1
    return end


# why a transition or record is not in the export (the manifest's `skipped` counts); `no_next_observation`:
# actions read whose next observation was not recorded (a transition needs one: a target is never invented)
SKIPPED = ("held_out", "domain_not_selected", "non_real", "no_observation", "over_budget", "mix_dropped",
           "no_next_observation")


def skipped_units(kind: str) -> dict[str, str]:
    """What each `skipped` count counts, for this kind (the manifest's `skipped_units`; summaries group by it)."""
    units = dict.fromkeys(("held_out", "domain_not_selected", "non_real", "recipe_dropped", "no_sampled_target",
                           "over_budget"), "transitions")
    units.update(no_next_observation="actions", mix_dropped="records")
    if kind == "cpt":  # a CPT record is a document of whole turns, a trajectory without one is no record
        units.update(no_observation="trajectories", over_budget="turns", mix_dropped="documents")
    return units


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


@dataclass
class Rendered:
    # (split, domain, record_id, record or its JSON line, step_ids, tokens, recipe info), in episode order
    records: list[tuple]
    skipped: dict[str, int]
    transitions_in: int = 0
    over_budget: dict[str, int] = field(default_factory=dict)  # domain -> transitions dropped for the budget
    prompt_over_budget: dict[str, int] = field(default_factory=dict)  # domain -> its system prompt's tokens
    recipe: recipes.Counts | None = None  # the recipe's decisions, with a recipe
    actions_in: int = 0  # actions (turns) of the lines read: transitions_in + no_next_observation


@functools.lru_cache(maxsize=4)
def _counter(tokenizer: str | None) -> TokenCounter:
    return TokenCounter(tokenizer)


def _demonstrations(trajectory, job: RenderJob) -> str:
    """The trajectory's `{demonstrations}`: the file's text for its domain, or N drawn from the pool."""
    if job.demo_texts:
        return job.demo_texts.get(trajectory.domain, "")
    pool = job.demo_pool.get(trajectory.domain)
    if not job.demo_count or not pool:
        return ""
    tools = [demonstrations.tool_of(turn.action) for turn in trajectory.turns]
    chosen = demonstrations.choose(pool, trajectory.episode_id, tools, job.demo_count, job.config.seed)
    return demonstrations.render(trajectory.domain, chosen)


def render_group(group: dict[str, list[str]], job: RenderJob) -> Rendered:
    """The records of one part group's trajectories (pure: the driver writes them into shards). RL records
    get their per-split index from the driver."""
    # Rendering makes millions of small objects and no cycles, while the group's steps stay alive as Python
    # rows: without the collector's repeated scans of them (as in ingest tasks, `pipelines.task`) the CPT
    # export of a 200 MB group took ~14 % less CPU with the recipe, ~6 % less without (bench/export.py)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _render_group(group, job)
    finally:
        if gc_was_enabled:
            gc.enable()


def _render_group(group: dict[str, list[str]], job: RenderJob) -> Rendered:
    lake, config = Lake(job.lake_url), job.config
    counter = _counter(config.tokenizer)
    episodes = _read_episodes(lake, group["episodes"])
    branches = branches_by_episode(datasets.read_branches_of(lake, job.branch_parts, pa.array(list(episodes),
                                                                                              pa.string()),
                                                             BRANCH_COLUMNS))
    out = Rendered([], dict.fromkeys(SKIPPED, 0))
    skipped = out.skipped

    # JSON lines are serialized here, where the work is parallel (records hold pre-serialized fragments,
    # which do not pickle); RL records stay dicts: the driver numbers them within their split
    serialize = KINDS[config.kind].FILE_TYPES[config.format] == "jsonl" and config.kind != "rl"

    def emit(split: str, domain: str, record_id: str, record: dict, step_ids: list[str], n_tokens: int,
             info: dict | None = None) -> None:
        if serialize:
            record = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        out.records.append((split, domain, record_id, record, step_ids, n_tokens, info))

    recipe = recipe_of(config)
    context = _RecipeContext(recipe, out, job.no_change) if recipe.active else None
    targets = None
    if config.targets == "sampled":
        targets = sampled_targets(datasets.read_of_episodes(lake, "targets", job.target_parts,
                                                            pa.array(list(episodes), pa.string()),
                                                            ["step_id", "parent_step_id", "target", "score"]))
        skipped.setdefault("no_sampled_target", 0)

    per_source = android_state.mode(config.kind, config.format, config.android_state) == "per-source"
    steps = _group_steps(lake, group["steps"], trees=per_source)
    state_text = android_state.state_text if per_source else None
    action_text = _source_actions(per_source, web_action.mode(config.kind, config.format, config.web_action)
                                  == "browsergym")
    for trajectory in trajectories(steps, episodes, branches, state_text, action_text) if steps.num_rows else ():
        n_transitions = sum(1 for _ in trajectory.transitions())
        out.transitions_in += n_transitions
        out.actions_in += len(trajectory.turns) - trajectory.start
        skipped["no_next_observation"] += len(trajectory.turns) - trajectory.start - n_transitions
        if not domain_selected(trajectory.domain, trajectory.source_format, config.domains):
            skipped["domain_not_selected"] += n_transitions
            continue
        if trajectory.episode_id in job.held_out:
            skipped["held_out"] += n_transitions
            continue
        split = job.split_of.get(trajectory.episode_id, "train")
        if context is not None:
            trajectory = context.apply(trajectory, n_transitions)
            if trajectory is None:
                continue
        if trajectory.domain == "terminal":
            trajectory, before_screen = shell_screens(trajectory)
            if before_screen:
                skipped["before_first_screen"] = skipped.get("before_first_screen", 0) + before_screen
        renderer = TrajectoryRenderer(trajectory, counter, _demonstrations(trajectory, job))
        if config.max_tokens and renderer.system_tokens >= config.max_tokens:
            out.prompt_over_budget[trajectory.domain] = max(renderer.system_tokens,
                                                            out.prompt_over_budget.get(trajectory.domain, 0))
        before = skipped["over_budget"]
        if config.kind == "cpt":
            _export_cpt(trajectory, renderer, config, counter, split, emit, skipped, context)
        else:
            _export_turns(trajectory, renderer, config, split, emit, skipped, context, targets)
        if skipped["over_budget"] > before:
            out.over_budget[trajectory.domain] = (out.over_budget.get(trajectory.domain, 0)
                                                  + skipped["over_budget"] - before)
    return out


@dataclass
class RenderPlan:
    """What rendering a version takes, decided once under the catalog: the version, the job every part group
    shares (options, splits, held-out episodes, the recipe's no-change steps), the groups and where they run."""

    version: Version
    job: RenderJob
    recipe: recipes.Recipe
    part_groups: list[dict[str, list[str]]]
    chosen: str  # the executor: local | ray


def plan_render(lake: Lake, cat: Catalog, dataset_ref: str, config: ExportOptions, executor: str = "auto",
                ray_address: str | None = None) -> RenderPlan:
    version = resolve(cat, dataset_ref, lake)
    split_of, excluded = _splits(lake, cat, version, config)
    recipe = recipe_of(config)
    no_change = frozenset(r[0] for r in cat.con.execute(
        "SELECT step_id FROM dedup_no_change WHERE dataset = ?", [version.dataset]).fetchall()
    ) if recipe.drop_no_change else frozenset()
    job = RenderJob(lake.url, config, split_of, excluded,
                    version.parts.get("branches", []) if config.include_simulated else [], no_change,
                    version.parts.get("targets", []) if config.targets == "sampled" else [])
    _add_demonstrations(job, lake, version.parts.get("steps", []))
    part_groups = datasets.part_groups(version) or [{"episodes": version.parts.get("episodes", []),
                                                     "steps": version.parts.get("steps", [])}]
    chosen = executors.choose(executor, ray_address, datasets.group_sizes(lake, part_groups), RENDER_BYTES_PER_S)
    return RenderPlan(version, job, recipe, part_groups, chosen)


def render_stream(plan: RenderPlan, totals: _Totals, ray_address: str | None = None,
                  log: Callable[[str], None] | None = None,
                  resources: executors.Resources = executors.ONE_CPU) -> Iterator[tuple]:
    """Every record of the plan, rendered once, one part group per task on the executor, in group order:
    (split, domain, record_id, record or its JSON line, step_ids, tokens, recipe info). Each group's counts go
    into `totals` as it arrives. Its consumers: the shards, lineage, manifest and trainer configs of `export`,
    eval's samples and the sampler's queries (`rendered_records`); none renders to a file to read it back."""
    config = plan.job.config
    for rendered in executors.run_ordered(render_group, plan.part_groups, plan.job, executor=plan.chosen,
                                          ray_address=ray_address, name=datasets.group_stem, log=log,
                                          label=f"export {config.kind}/{config.format}", resources=resources):
        _add_rendered(totals, rendered)
        yield from rendered.records


def _new_totals(config: ExportOptions, recipe: recipes.Recipe) -> _Totals:
    return _Totals(dict.fromkeys(SKIPPED, 0), recipes.Counts() if recipe.active else None,
                   _RowLengths(_counter(config.tokenizer)))


def rendered_records(lake: Lake, catalog_path: str | None, dataset_ref: str, config: ExportOptions,
                     log: Callable[[str], None] | None = None, executor: str = "auto",
                     ray_address: str | None = None) -> tuple[Version, Iterator[dict]]:
    """The version's records as `export` renders them with `config`, as a stream of dicts with `_split` and
    `_domain` added (what eval and the sampler read), nothing written. Returns (version, the stream)."""
    config = checked(config)
    with open_catalog(lake, catalog_path) as cat:
        plan = plan_render(lake, cat, dataset_ref, config, executor, ray_address)

    def records() -> Iterator[dict]:
        for split, domain, _id, record, *_ in render_stream(plan, _new_totals(config, plan.recipe), ray_address,
                                                             log):
            yield {**(orjson.loads(record) if isinstance(record, (bytes, str)) else record),
                   "_split": split, "_domain": domain}

    return plan.version, records()


def export(lake: Lake, catalog_path: str | None, dataset_ref: str, out: str, config: ExportOptions,
           log: Callable[[str], None] = print, executor: str = "auto", ray_address: str | None = None,
           resources: executors.Resources = executors.ONE_CPU) -> dict:
    """Write the export and record it in the catalog. Returns the manifest. Splits are decided once over
    every episode (small global data); records are rendered one part group per task on the executor (each
    asking Ray for `resources`) and written into shards in group order, so memory follows the part size."""
    config = checked(config)
    out_lake = Lake(out)
    with open_catalog(lake, catalog_path) as cat:
        plan = plan_render(lake, cat, dataset_ref, config, executor, ray_address)
        version = plan.version
        export_id = xxhash.xxh64_hexdigest(orjson.dumps(
            {"dataset": version.dataset, "version": version.version, "out": out, "config": recorded(config)},
            option=orjson.OPT_SORT_KEYS))
        _remove_previous(out_lake)

        lineage = Lineage(export_id)
        try:  # a failure anywhere before the export is recorded leaves no lineage file in the temp folder
            totals = _new_totals(config, plan.recipe)
            shards = _write_shards(out_lake, config, render_stream(plan, totals, ray_address, log, resources),
                                   lineage, totals)
            extra_files, trainers = _write_extra_files(out_lake, config, version.dataset, shards, totals.lengths)
            manifest = _manifest(export_id, plan.job, plan.recipe, version, shards, totals, extra_files, trainers)
            out_lake.write_bytes_atomic(out_lake.path("manifest.json"),
                                        orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
            record_export(lake, cat, config.kind, config.format, version, out, manifest, lineage)
        except BaseException:
            lineage.remove()
            raise
    log(f"export {config.kind}/{config.format}: {manifest['rows']:,} rows in {len(shards)} shard(s) from "
        f"{len(plan.part_groups)} part group(s) on {plan.chosen} -> {out}")
    for line in budget_warnings(manifest):
        log(line)
    return manifest


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
        sql = _DEMO_SQL.format(files=_file_list(lake, parts), domains=domains, max_chars=demonstrations.MAX_RESULT_CHARS)
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


def _splits(lake: Lake, cat: Catalog, version: Version, config: ExportOptions
            ) -> tuple[dict[str, str], set[str]]:
    """Each episode's split (`transforms.export.splits`: grouped by app, repository, site or task and by dedup
    cluster) and the episodes held out of every split, decided once over every episode of the version."""
    episodes = _read_episodes(lake, version.parts.get("episodes", []))
    urls = _first_urls(cat, lake, version.parts.get("steps", []))
    groups = {e: splits.group_key(row["domain"], row["task"], _env(row), urls.get(e), e)
              for e, row in episodes.items()}
    split_of = splits.assign(groups, _clusters(cat, version.dataset), seed=config.seed, ratios=config.split_ratios)
    held_out = set(config.held_out)
    excluded = {e for e, row in episodes.items() if held_out and splits.is_held_out(held_out, e, row["task"], groups[e])}
    return split_of, excluded


@dataclass
class _Totals:
    """What the rendered groups and the rows written add up to, for the manifest (each mixture copy of a row
    counts)."""

    skipped: dict[str, int]  # reason -> transitions or records left out (SKIPPED, and the groups' own)
    recipe: recipes.Counts | None  # the recipe's decisions, with a recipe
    lengths: _RowLengths
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # split -> domain -> rows
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)  # split -> domain -> tokens
    transitions_in: int = 0
    actions_in: int = 0
    over_budget: dict[str, int] = field(default_factory=dict)  # domain -> transitions dropped for the budget
    # domain -> tokens of its system prompt, when over the budget
    prompt_over_budget: dict[str, int] = field(default_factory=dict)


def _add_rendered(totals: _Totals, rendered: Rendered) -> None:
    """A group's counts (not its records) into the export's."""
    for key, n in rendered.skipped.items():
        totals.skipped[key] = totals.skipped.get(key, 0) + n
    if rendered.recipe is not None:
        totals.recipe.add(rendered.recipe)
    totals.transitions_in += rendered.transitions_in
    totals.actions_in += rendered.actions_in
    for domain, n in rendered.over_budget.items():
        totals.over_budget[domain] = totals.over_budget.get(domain, 0) + n
    for domain, n in rendered.prompt_over_budget.items():
        totals.prompt_over_budget[domain] = max(n, totals.prompt_over_budget.get(domain, 0))


def _write_shards(out_lake: Lake, config: ExportOptions, stream: Iterator[tuple], lineage: Lineage,
                  totals: _Totals) -> list[_Shard]:
    """Write the rendered records of `stream` into shards in their order (each as many times as its domain's
    mixture weight says), adding them up in `totals` and their step ids in `lineage`. Returns the shards in
    path order. On failure the shards in progress and the lineage file are removed."""
    file_type = KINDS[config.kind].FILE_TYPES[config.format]
    shards: list[_Shard] = []

    def on_shard(shard: _Shard, step_ids: list[list[str]], infos: list) -> None:
        shards.append(shard)
        lineage.add(shard.path, step_ids, infos if totals.recipe is not None else None)

    writers: dict[tuple[str, str | None], _ShardWriter] = {}

    def writer(split: str, domain: str) -> _ShardWriter:
        per_domain = config.format == "bench"
        key = (split, domain if per_domain else None)
        if key not in writers:
            if per_domain:
                name = lambda i, s=split, d=domain: f"{s}/{d}-{i:05d}_{s}.jsonl"
            else:
                name = lambda i, s=split: f"{s}/{config.kind}-{config.format}-{i:05d}.{file_type}"
            writers[key] = _ShardWriter(out_lake, name, file_type, split, key[1], config.shard_rows,
                                        int(config.shard_mb * (1 << 20)), on_shard)
        return writers[key]

    def emit(split: str, domain: str, record_id: str, record: dict, step_ids: list[str], n_tokens: int,
             info: dict | None = None) -> None:
        copies = _copies(config.mix.get(domain, 1.0), record_id)
        if copies == 0:
            totals.skipped["mix_dropped"] += 1
        if config.kind == "rl":  # the record's index within its split, as verl numbers rows
            record["extra_info"]["index"] = sum(totals.counts.get(split, {}).values())
        for _ in range(copies):
            writer(split, domain).add(record, step_ids, info)
            _bound_buffered(writers.values(), ROW_GROUP_BYTES)
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


def _write_extra_files(out_lake: Lake, config: ExportOptions, dataset: str, shards: list[_Shard],
                       lengths: _RowLengths) -> tuple[list[str], dict]:
    """The files beside the shards: LLaMA-Factory's `dataset_info.json` (sharegpt), the verl fragment (RL)
    and the trainer configs. Returns their names and the manifest's `trainer_configs`."""
    extra_files = []
    if config.format == "sharegpt":
        info = sft.dataset_info(f"trajforge_{dataset}", sorted({s.split for s in shards}))
        out_lake.write_bytes_atomic(out_lake.path("dataset_info.json"), orjson.dumps(info, option=orjson.OPT_INDENT_2))
        extra_files.append("dataset_info.json")
    if config.kind == "rl":
        extra_files.append(_write_verl_fragment(out_lake, shards, lengths, config))
    trainers = _write_trainer_configs(out_lake, config, shards, lengths, extra_files, dataset)
    return extra_files, trainers


def _manifest(export_id: str, job: RenderJob, recipe: recipes.Recipe, version: Version, shards: list[_Shard],
              totals: _Totals, extra_files: list[str], trainers: dict) -> dict:
    """The export's manifest (`manifest.json`, and its row in the catalog's `exports`)."""
    config, lengths = job.config, totals.lengths
    manifest = {
        "export_id": export_id, "kind": config.kind, "format": config.format,
        "file_type": KINDS[config.kind].FILE_TYPES[config.format],
        "dataset": version.dataset, "version": version.version, "schema_version": SCHEMA_VERSION,
        "config": recorded(config), "tokenizer": _counter(config.tokenizer).name,
        "rows": sum(s.rows for s in shards),
        "counts": {s: dict(sorted(d.items())) for s, d in sorted(totals.counts.items())},
        "tokens": {s: dict(sorted(d.items())) for s, d in sorted(totals.tokens.items())},
        "tokens_total": sum(sum(d.values()) for d in totals.tokens.values()),
        "actions_in": totals.actions_in, "transitions_in": totals.transitions_in, "skipped": totals.skipped,
        "skipped_units": {k: u for k, u in skipped_units(config.kind).items() if k in totals.skipped},
        "over_budget_by_domain": dict(sorted(totals.over_budget.items())),
        "system_prompt_over_budget": dict(sorted(totals.prompt_over_budget.items())),
        "shards": [asdict(s) for s in shards], "extra_files": extra_files,
    }
    if config.kind == "rl":  # what the verl fragment's lengths come from
        manifest["verl"] = {"fragment": rl.FRAGMENT_NAME, "max_prompt_tokens": lengths.prompts.summary()["max"],
                            "max_response_tokens": lengths.responses.summary()["max"]}
    manifest["trainer_configs"] = trainers
    unhonoured = _unhonoured_masks(config, recipe, totals)
    if unhonoured:
        trainers["loss_mask_not_honoured"] = unhonoured
    if totals.recipe is not None:
        manifest["recipe"] = {"name": recipe.name, "steps": recipes.steps(recipe),
                              "no_change_steps_known": len(job.no_change), **totals.recipe.manifest()}
    return manifest


def _write_verl_fragment(out: Lake, shards: list, lengths: "_RowLengths", config: ExportOptions) -> str:
    """`verl_reward.yaml` beside the shards (`transforms.export.rl.verl_fragment`), the one verl file of an RL
    export: data, lengths (`trainer_configs.limit` of the longest prompt and answer) and our reward; returns
    its name."""
    from pipelines import reward

    exact = _counter(config.tokenizer).exact
    files = {split: [out.path(s.path) for s in shards if s.split == split] for split in ("train", "validation")}
    text = rl.verl_fragment(os.path.abspath(reward.__file__), files["train"], files["validation"],
                            trainer_configs.limit(lengths.prompts.summary()["max"], exact),
                            trainer_configs.limit(lengths.responses.summary()["max"], exact),
                            _counter(config.tokenizer).name)
    out.write_bytes_atomic(out.path(rl.FRAGMENT_NAME), text.encode())
    return rl.FRAGMENT_NAME


class _RowLengths:
    """Token lengths of the rows written (each copy counts), for the trainer configs; RL rows also by
    prompt and response."""

    def __init__(self, counter: TokenCounter):
        self.counter = counter
        self.rows, self.prompts, self.responses = (trainer_configs.Lengths() for _ in range(3))

    def add(self, kind: str, record: dict | bytes, n_tokens: int, domain: str) -> None:
        from transforms.agentworld import observation_turn

        self.rows.add(n_tokens)
        if kind == "rl":  # the answer as the model writes it: the ground truth in the domain's answer form
            self.prompts.add(sum(self.counter.message(m["content"]) for m in record["prompt"]))
            self.responses.add(self.counter.message(observation_turn(record["reward_model"]["ground_truth"], domain)))


def _write_trainer_configs(out: Lake, config: ExportOptions, shards: list[_Shard], lengths: _RowLengths,
                           extra_files: list[str], dataset: str) -> dict:
    """The trainer settings for this export (`transforms.export.trainer_configs`), written beside it;
    returns the manifest's `trainer_configs`: each file and the lengths it was computed from."""
    by_split: dict[str, list[str]] = {}
    for shard in shards:
        by_split.setdefault(shard.split, []).append(shard.path)
    counter = _counter(config.tokenizer)
    files = trainer_configs.configs(config.kind, config.format, lengths.rows, counter.exact,
                                    dataset_names=_sharegpt_names(out) if config.format == "sharegpt" else None,
                                    shard_paths=by_split, prompts=lengths.prompts, responses=lengths.responses,
                                    dataset=dataset, tokenizer=counter.name)
    for rel, content in files.items():
        data = orjson.dumps(content, option=orjson.OPT_INDENT_2) if isinstance(content, dict) else content.encode()
        out.write_bytes_atomic(out.path(rel), data)
        extra_files.append(rel)
    summary = {"rows": lengths.rows.summary(), "exact": counter.exact}
    if config.kind == "rl":
        summary.update(prompts=lengths.prompts.summary(), responses=lengths.responses.summary())
    return {"files": sorted(files), "tokens": summary, "tokenizer": counter.name}


def _sharegpt_names(out: Lake) -> list[str]:
    path = out.path("dataset_info.json")
    with out.fs.open(path, "rb") as f:
        return sorted(orjson.loads(f.read()))


def budget_warnings(manifest: dict) -> list[str]:
    """One line per domain that lost records to the token budget; loud when its system prompt alone does
    not fit (every record of the domain is lost)."""
    budget = manifest["config"].get("max_tokens")
    lines = []
    for domain, tokens in manifest.get("system_prompt_over_budget", {}).items():
        lines.append(f"WARNING {domain}: its system prompt alone is {tokens:,} tokens, over --max-tokens {budget:,}: "
                     f"no {domain} record can fit ({manifest['over_budget_by_domain'].get(domain, 0):,} dropped)")
    for domain, n in manifest.get("over_budget_by_domain", {}).items():
        if domain not in manifest.get("system_prompt_over_budget", {}):
            lines.append(f"note {domain}: {n:,} transitions do not fit --max-tokens {budget:,} even without history")
    for trainer, why in manifest.get("trainer_configs", {}).get("loss_mask_not_honoured", {}).items():
        lines.append(f"WARNING {trainer}: {why}")
    return lines


def _unhonoured_masks(config: ExportOptions, recipe: recipes.Recipe, totals: "_Totals") -> dict[str, str]:
    """Trainer -> why it trains turns the recipe masked, for the trainer files this export writes."""
    masked = sum(totals.recipe.turns_masked.values()) if totals.recipe is not None and recipe.loss_mask else 0
    if not masked or (config.kind, config.format) != ("cpt", "text"):
        return {}
    return {"TRL (trainers/trl_sft_config.json)": (
        f"{masked:,} masked turns (turn_loss, turn_spans) are trained: TRL reads no per-turn mask from `text`; "
        "export --format trl (token ids with the mask) or --format swift for the mask")}


class _RecipeContext:
    """One part group's recipe state: its counts, the prompt variants, and the current trajectory's
    filtered turns (`recipes.Applied`), from which each record's decisions are read."""

    def __init__(self, recipe: recipes.Recipe, out: Rendered, no_change: frozenset):
        self.recipe, self.no_change, self.skipped = recipe, no_change, out.skipped
        out.recipe = self.counts = recipes.Counts()
        self.skipped.setdefault("recipe_dropped", 0)  # transitions the recipe's filters removed
        self.variants = recipes.load_variants(recipe.variants_dir) if recipe.prompt_variants else None
        self.applied: recipes.Applied | None = None
        self.rendered_prompts: dict = {}  # `recipes.Prompted`'s, for the whole group

    def apply(self, trajectory: Trajectory, n_transitions: int) -> Trajectory | None:
        trajectory = recipes.show_screenshots(trajectory, self.recipe, self.counts)
        self.applied = recipes.apply(trajectory, self.recipe, self.counts, self.no_change)
        if self.applied is None:
            self.skipped["recipe_dropped"] += n_transitions
            return None
        # a dropped turn takes its transition with it (one of the line's own, with an observation)
        turns = trajectory.turns
        self.skipped["recipe_dropped"] += sum(1 for i, _ in self.applied.dropped
                                              if i >= trajectory.start and turns[i].observation is not None)
        return self.applied.trajectory

    def prompted(self, renderer: TrajectoryRenderer, kind: str) -> recipes.Prompted | None:
        if self.variants is None:
            return None
        return recipes.Prompted(renderer, self.variants, kind, self.recipe.seed, self.rendered_prompts)

    def info(self, variant: str | None, first: int, last: int, masked: list[str] = ()) -> dict:
        """A record's decisions (for `export_rows`): its variant, masked turns, dropped turns in its span."""
        if variant is not None:
            self.counts.variants[variant] = self.counts.variants.get(variant, 0) + 1
        return {"prompt_variant": variant, "masked_step_ids": list(masked),
                "dropped_step_ids": self.applied.dropped_within(first, last)}


def sampled_targets(rows: pa.Table) -> dict[str, tuple[str, str]]:
    """Acting step id -> (target id, target text): of several targets of one transition (sampled by other
    models or judges), the best scored, the smallest id among equals."""
    chosen: dict[str, dict] = {}
    for row in rows.to_pylist():
        held = chosen.get(row["parent_step_id"])
        if held is None or (-(row["score"] or 0), row["step_id"]) < (-(held["score"] or 0), held["step_id"]):
            chosen[row["parent_step_id"]] = row
    return {parent: (row["step_id"], row["target"]) for parent, row in chosen.items()}


def _with_sampled_target(sample, targets: dict[str, tuple[str, str]], counter: TokenCounter):
    """The sample with its transition's sampled target (its tokens recounted), and the target's id; None when
    the transition has none."""
    found = targets.get(sample.transition.turn.step_id)
    if found is None:
        return None
    target_id, text = found
    tokens = sample.tokens - counter.message(sample.target) + counter.message(text)
    return dataclasses.replace(sample, target=text, tokens=tokens), target_id


def _export_turns(trajectory: Trajectory, renderer: TrajectoryRenderer, config: ExportOptions, split: str,
                  emit, skipped: dict, context: _RecipeContext | None = None,
                  targets: dict[str, tuple[str, str]] | None = None) -> None:
    if context is not None:
        recipes.count_kept(context.applied, context.counts)
    prompted = context.prompted(renderer, config.kind) if context else None
    samples = []  # (sample, its renderer, its prompt variant)
    sampled_ids: dict[str, str] = {}  # acting step id -> the id of its sampled target
    for transition in trajectory.transitions():
        if transition.origin != "real" and not config.include_simulated:
            skipped["non_real"] += 1
            continue
        variant, chosen_renderer = prompted.for_record(transition.turn.step_id) if prompted else (None, renderer)
        sample = chosen_renderer.sample(transition.t, config.max_tokens)
        if sample is None:
            skipped["over_budget"] += 1
            continue
        if targets is not None:  # a sampled target, or no record: never the real one in its place
            found = _with_sampled_target(sample, targets, renderer.counter)
            if found is None:
                skipped["no_sampled_target"] += 1
                continue
            sample, target_id = found
            if config.max_tokens and sample.tokens > config.max_tokens:
                skipped["over_budget"] += 1
                continue
            sampled_ids[sample.transition.turn.step_id] = target_id
        samples.append((sample, chosen_renderer, variant))
    if config.kind == "rl":
        if not samples:
            return
        chosen, _, variant = samples[rl.choose(trajectory.trajectory_id, [s for s, _, _ in samples])]
        record = rl.verl_record(chosen, split, 0)  # the index within the split: set by the writing driver
        info = None
        if context is not None:
            info = context.info(variant, chosen.first_turn, chosen.transition.t)
            if variant is not None:
                record["extra_info"]["prompt_variant"] = variant
        emit(split, trajectory.domain, trajectory.trajectory_id, record, chosen.transition.step_ids, chosen.tokens,
             info)
        return

    def admissible(turn) -> bool:
        return turn.observation is not None and (config.include_simulated or (
            turn.origin == "real" and turn.observation_origin == "real"))

    render = sft.RENDER[config.format]
    for sample, sample_renderer, variant in samples:
        record = render(sample, sample_renderer, admissible)
        step_ids = sample.transition.step_ids
        if targets is not None:  # marked: a sampled target is a model's output, whatever the history's origin
            record["origin"] = "sampled" if record["origin"] == "real" else record["origin"]
            record["target_origin"] = "sampled"
            step_ids = [*step_ids, sampled_ids[sample.transition.turn.step_id]]
        info = None
        if context is not None:
            info = context.info(variant, sample.first_turn, sample.transition.t)
            if variant is not None:
                record["prompt_variant"] = variant
        emit(split, trajectory.domain, sample.transition.turn.step_id, record, step_ids, sample.tokens, info)


def _export_cpt(trajectory: Trajectory, renderer: TrajectoryRenderer, config: ExportOptions,
                counter: TokenCounter, split: str, emit, skipped: dict, context: _RecipeContext | None = None) -> None:
    end = _admissible_end(trajectory, config.include_simulated)
    loss, variant = None, None
    if context is not None:
        if context.recipe.loss_mask:
            recipes.mask_turns(context.applied, renderer.action_blocks, context.recipe, context.counts, end)
            loss = context.applied.loss
        else:
            recipes.count_kept(context.applied, context.counts)
        if context.recipe.screenshot_states == "placeholder":  # a placeholder is nothing for a model to predict
            loss = [(True if loss is None else loss[i]) and t.history_text is None
                    for i, t in enumerate(trajectory.turns)]
        prompted = context.prompted(renderer, "cpt")
        if prompted is not None and config.format == "swift":  # the text form shows no system prompt
            variant, renderer = prompted.for_record(trajectory.trajectory_id)
    if end == 0:
        skipped["no_observation"] += 1
        return
    windows, dropped = cpt.windows(renderer, end, config.max_tokens, with_system=config.format == "swift")
    skipped["over_budget"] += dropped
    for first, stop in windows:
        record = cpt.RENDER[config.format](renderer, first, stop, loss)
        turns = trajectory.turns[first:stop]
        origins = {trajectory.first_state_origin} if first == 0 else set()
        origins |= {t.origin for t in turns} | {t.observation_origin for t in turns}
        origin = "simulated" if "simulated" in origins else "perturbed" if "perturbed" in origins else "real"
        step_ids = list(dict.fromkeys(
            ([trajectory.first_state_step_id] if first == 0 else [turns[0].step_id])
            + [i for t in turns for i in t.step_ids] + [turns[-1].observation_step_id]))
        record_id = f"{trajectory.trajectory_id}#{first}"
        record.update({"id": record_id, "domain": trajectory.domain, "origin": origin})
        info = None
        if context is not None:
            masked = [t.step_id for i, t in enumerate(turns, start=first) if not loss[i]] if loss else []
            info = context.info(variant, first, stop - 1, masked)
            if variant is not None:
                record["prompt_variant"] = variant
        if config.format == "text":
            n_tokens = counter.count(record["text"])
        elif config.format == "trl":
            n_tokens = len(record["input_ids"])
        else:
            n_tokens = sum(counter.message(m["content"]) for m in record["messages"])
        emit(split, trajectory.domain, record_id, record, step_ids, n_tokens, info)


def _env(row: dict) -> dict:
    try:
        env = orjson.loads(row["env"]) if row.get("env") else {}
    except orjson.JSONDecodeError:
        return {}
    return env if isinstance(env, dict) else {}


def _read_episodes(lake: Lake, parts: list[str]) -> dict[str, dict]:
    if not parts:
        return {}
    tables = [pq.read_table(lake.absolute(p), columns=EPISODE_COLUMNS, filesystem=lake.fs) for p in parts]
    return episode_index(pa.concat_tables(tables, promote_options="default"))


def _remove_previous(out: Lake) -> None:
    """Delete the files a previous export into the same folder listed in its manifest (nothing else)."""
    path = out.path("manifest.json")
    if not out.fs.exists(path):
        return
    with out.fs.open(path, "rb") as f:
        old = orjson.loads(f.read())
    for rel in [s["path"] for s in old.get("shards", [])] + old.get("extra_files", []) + ["manifest.json"]:
        target = out.path(rel)
        if out.fs.exists(target):
            out.fs.rm(target)


def record_export(lake: Lake, cat: Catalog, kind: str, format: str, version, out: str, manifest: dict,
                  lineage: Lineage) -> None:
    """The export's row in `exports` and its lineage file in the lake (the catalog's `export_rows`),
    replacing an earlier export with the same id; the local lineage file is removed."""
    from catalog.catalog import export_rows_path, now

    lineage.close()
    try:
        rel = export_rows_path(lineage.export_id)
        lake.put_file_atomic(lineage.path, lake.path(rel))
        cat.add_export({"export_id": lineage.export_id, "kind": kind, "format": format, "dataset": version.dataset,
                        "version": version.version, "out": out, "created_at": now(), "rows": manifest["rows"],
                        "manifest": orjson.dumps(manifest).decode()}, rel)
    finally:
        lineage.remove()


# the pipeline stage -----------------------------------------------------------------------------------
def export_stage(ctx: StageContext) -> StageResult:
    """`stages = [..., "export"]` with `[stage_options.export]` (`pipelines.options.ExportOptions`)."""
    config = export_options(ctx.options)
    out = config.out or f"exports/{ctx.dataset.partition('@')[0]}/{config.kind}-{config.format}"
    if "://" not in out and not posixpath.isabs(out):
        out = ctx.lake.path(out) if ctx.lake.is_local else f"{ctx.lake.url.rstrip('/')}/{out}"
    manifest = export(ctx.lake, ctx.catalog_path, ctx.dataset, out, config, ctx.log, ctx.executor, ctx.ray_address,
                      ctx.resources)
    return StageResult(records_in=manifest["transitions_in"], records_out=manifest["rows"],
                       summary=f"{manifest['rows']:,} {config.kind}/{config.format} rows -> {out}")
