"""One trajectory's records: the SFT / RL records of its transitions (`turn_records`) or the CPT documents of
its admissible prefix (`cpt_records`), each handed to `emit` with its step ids, split, domain, token count and
recipe decisions; the recipe's per-group state (`RecipeContext`) and `--targets sampled`'s targets. Pure: what
the records become (shards, eval requests, sampler prompts) is the caller's."""

from __future__ import annotations

import dataclasses

import pyarrow as pa

from pipelines.infra.options import ExportOptions
from transforms.export import cpt, recipe as recipes, rl, sft
from transforms.export.budget import TokenCounter
from transforms.export.chat import TrajectoryRenderer
from transforms.export.transitions import Trajectory

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


class RecipeContext:
    """One part group's recipe state: its counts, the prompt variants, and the current trajectory's
    filtered turns (`recipes.Applied`), from which each record's decisions are read."""

    def __init__(self, recipe: recipes.Recipe, skipped: dict[str, int], no_change: frozenset):
        self.recipe, self.no_change, self.skipped = recipe, no_change, skipped
        self.counts = recipes.Counts()
        self.skipped.setdefault("recipe_dropped", 0)  # transitions the recipe's filters removed
        self.variants = recipes.load_variants(recipe.variants_dir) if recipe.prompt_variants else None
        self.applied: recipes.Applied | None = None
        self.named = False  # whether a record of the current line names its dropped turns
        self.unnamed: list[str] = []  # the dropped turns of the group's lines that have no record
        self.dropped_trajectories: list[recipes.DroppedTrajectory] = []  # the lines a trajectory filter dropped
        self.rendered_prompts: dict = {}  # `recipes.Prompted`'s, for the whole group

    def apply(self, trajectory: Trajectory, n_transitions: int) -> Trajectory | None:
        trajectory = recipes.show_screenshots(trajectory, self.recipe, self.counts)
        self.applied = recipes.apply(trajectory, self.recipe, self.counts, self.no_change,
                                     self.dropped_trajectories)
        self.named = False
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

    def dropped(self, lasts: list[int]) -> list[list[str]]:
        """The dropped turns each record of the line names, given each record's last kept turn
        (`recipes.Applied.dropped_by_records`): every one once."""
        self.named = self.named or bool(lasts)
        return self.applied.dropped_by_records(lasts)

    def line_done(self) -> None:
        """After the line's records: its dropped turns, when no record names them, go to the export's
        run-level lineage row (`Lineage.add_unnamed`)."""
        if not self.named:
            self.unnamed += [step_id for _, step_id in self.applied.own_dropped()]

    def info(self, variant: str | None, dropped: list[str], masked: list[str] = ()) -> dict:
        """A record's decisions (for `export_rows`): its variant, masked turns, the dropped turns it names."""
        if variant is not None:
            self.counts.variants[variant] = self.counts.variants.get(variant, 0) + 1
        return {"prompt_variant": variant, "masked_step_ids": list(masked), "dropped_step_ids": dropped}


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


def turn_records(trajectory: Trajectory, renderer: TrajectoryRenderer, config: ExportOptions, split: str,
                 emit, skipped: dict, context: RecipeContext | None = None,
                 targets: dict[str, tuple[str, str]] | None = None) -> None:
    """SFT / RL: each kept transition's record (RL: the one `rl.choose` picks of the trajectory) to `emit`;
    what is left out counted in `skipped`."""
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
            info = context.info(variant, context.dropped([chosen.transition.t])[0])
            if variant is not None:
                record["extra_info"]["prompt_variant"] = variant
        emit(split, trajectory.domain, trajectory.trajectory_id, record, chosen.transition.step_ids, chosen.tokens,
             info)
        return

    def admissible(turn) -> bool:
        return turn.observation is not None and (config.include_simulated or (
            turn.origin == "real" and turn.observation_origin == "real"))

    render = sft.RENDER[config.format]
    dropped = context.dropped([s.transition.t for s, _, _ in samples]) if context is not None else []
    for n, (sample, sample_renderer, variant) in enumerate(samples):
        record = render(sample, sample_renderer, admissible)
        step_ids = sample.transition.step_ids
        if targets is not None:  # marked: a sampled target is a model's output, whatever the history's origin
            record["origin"] = "sampled" if record["origin"] == "real" else record["origin"]
            record["target_origin"] = "sampled"
            step_ids = [*step_ids, sampled_ids[sample.transition.turn.step_id]]
        info = None
        if context is not None:
            info = context.info(variant, dropped[n])
            if variant is not None:
                record["prompt_variant"] = variant
        emit(split, trajectory.domain, sample.transition.turn.step_id, record, step_ids, sample.tokens, info)


def cpt_records(trajectory: Trajectory, renderer: TrajectoryRenderer, config: ExportOptions,
               counter: TokenCounter, split: str, emit, skipped: dict, context: RecipeContext | None = None) -> None:
    """CPT: the documents (token-budget windows of whole turns) of the trajectory's admissible prefix to `emit`."""
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
    named = context.dropped([stop - 1 for _, stop in windows]) if context is not None else []
    for n, (first, stop) in enumerate(windows):
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
            info = context.info(variant, named[n], masked)
            if variant is not None:
                record["prompt_variant"] = variant
        if config.format == "text":
            n_tokens = counter.count(record["text"])
        elif config.format == "trl":
            n_tokens = len(record["input_ids"])
        else:
            n_tokens = sum(counter.message(m["content"]) for m in record["messages"])
        emit(split, trajectory.domain, record_id, record, step_ids, n_tokens, info)
