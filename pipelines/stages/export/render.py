"""Render once: the stream of rendered records every consumer reads. A version's part groups are rendered one
per task on the executor (`render_group`: the group's steps read through DuckDB ordered by episode, so
memory stays bounded by the largest episode, the transition view built, each trajectory's records made by
`records`), and come back in group order as `RenderedRecord`s: split, domain, record id, the record or its
JSON line, step ids, tokens, recipe info, through the stage runner (`RENDER`: the export's plan and its
per-group work). The shards, lineage, manifest and trainer configs of `export`, eval's requests and the
sampler's prompts (`rendered_records`) consume that stream; none renders to a file to read it back."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Callable, Iterator, NamedTuple

import orjson
import pyarrow as pa

from catalog import Version
from pipelines.infra import datasets
from pipelines.infra.lake import Lake
from pipelines.infra.options import ExportOptions
from pipelines.infra.stage_runner import PartsStage, mapped, planned
from pipelines.stages import StageContext
from pipelines.stages.export.options import KINDS, checked, recipe_of, token_counter
from pipelines.stages.export.plan import RENDER_BYTES_PER_S, RenderJob, file_list, read_episodes, render_plan
from pipelines.stages.export.records import RecipeContext, cpt_records, sampled_targets, turn_records
from pipelines.stages.export.totals import SKIPPED, Totals
from transforms.export import android_state, demonstrations, recipe as recipes, web_action
from transforms.export.chat import TrajectoryRenderer
from transforms.export.shell_screen import shell_screens
from transforms.export.transitions import BRANCH_COLUMNS, branches_by_episode, domain_selected, trajectories

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
        sql = _STEPS_SQL.format(files=file_list(lake, parts), tree=tree, final_tree=final_tree)
        return con.sql(sql).to_arrow_table()
    finally:
        con.close()


class RenderedRecord(NamedTuple):
    """One rendered record with what its consumers need beside it (a tuple: millions of them cross from the
    render tasks, and unpack where they are read)."""

    split: str  # train | validation | test
    domain: str
    record_id: str
    record: dict | bytes  # the record, or its JSON line where the export writes JSON lines
    step_ids: list[str]  # the steps it was made from (the lineage)
    tokens: int
    info: dict | None  # the recipe's decisions for it, with a recipe


@dataclass
class Rendered:
    """One part group's rendering: its records and what it counted (skipped, read, over the budget)."""

    records: list[RenderedRecord]  # in episode order
    skipped: dict[str, int]
    transitions_in: int = 0
    over_budget: dict[str, int] = field(default_factory=dict)  # domain -> transitions dropped for the budget
    prompt_over_budget: dict[str, int] = field(default_factory=dict)  # domain -> its system prompt's tokens
    recipe: recipes.Counts | None = None  # the recipe's decisions, with a recipe
    actions_in: int = 0  # actions (turns) of the lines read: transitions_in + no_next_observation + final_answer
    unnamed_dropped: list[str] = field(default_factory=list)  # recipe-dropped turns of lines with no record
    # the lines the recipe's trajectory filters dropped, for the lineage (`Lineage.add_dropped_trajectories`)
    dropped_trajectories: list[recipes.DroppedTrajectory] = field(default_factory=list)


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
    # rows: without the collector's repeated scans of them (as in ingest tasks, `pipelines.infra.task`) the CPT
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
    counter = token_counter(config.tokenizer)
    episodes = read_episodes(lake, group["episodes"])
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
        out.records.append(RenderedRecord(split, domain, record_id, record, step_ids, n_tokens, info))

    recipe = recipe_of(config)
    context = None
    if recipe.active:
        context = RecipeContext(recipe, skipped, job.no_change)
        out.recipe = context.counts
        out.unnamed_dropped = context.unnamed
        out.dropped_trajectories = context.dropped_trajectories
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
        answers = sum(1 for turn in trajectory.turns[trajectory.start:] if turn.answer_echo)
        if answers:
            skipped["final_answer"] = skipped.get("final_answer", 0) + answers
        skipped["no_next_observation"] += len(trajectory.turns) - trajectory.start - n_transitions - answers
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
            cpt_records(trajectory, renderer, config, counter, split, emit, skipped, context)
        else:
            turn_records(trajectory, renderer, config, split, emit, skipped, context, targets)
        if context is not None:
            context.line_done()
        if skipped["over_budget"] > before:
            out.over_budget[trajectory.domain] = (out.over_budget.get(trajectory.domain, 0)
                                                  + skipped["over_budget"] - before)
    return out


def _checked_config(options: dict) -> ExportOptions:
    return checked(options["config"])


# The render as the stage runner plans and maps it (`planned`, `mapped`): the export stage adds its writing to
# it, `rendered_records` reads its records
RENDER = PartsStage("export", render_group, RENDER_BYTES_PER_S, render_plan, options=_checked_config)


def rendered_records(lake: Lake, catalog_path: str | None, dataset_ref: str, config: ExportOptions,
                     log: Callable[[str], None] | None = None, executor: str = "auto",
                     ray_address: str | None = None) -> tuple[Version, Iterator[dict]]:
    """The version's records as `export` renders them with `config`, as a stream of dicts with `_split` and
    `_domain` added (what eval and the sampler read), nothing written: the export's plan, its groups rendered
    one per task on the executor in group order. Returns (version, the stream)."""
    run = planned(StageContext(lake, catalog_path, dataset_ref, "", {"config": config}, log, executor, ray_address),
                  RENDER)

    def records() -> Iterator[dict]:
        for rendered in mapped(run, RENDER):
            for record in rendered.records:
                body = record.record
                yield {**(orjson.loads(body) if isinstance(body, (bytes, str)) else body),
                       "_split": record.split, "_domain": record.domain}

    return run.version, records()


def add_rendered(totals: Totals, rendered: Rendered) -> None:
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
