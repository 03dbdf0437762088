"""What an export adds up to, for its manifest and trainer configs: why transitions or records are left out
(`SKIPPED`, `skipped_units`), and the totals the rendered groups' counts and the rows written sum into
(`Totals`, with the rows' token lengths in `RowLengths`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipelines.infra.options import ExportOptions
from pipelines.stages.export.options import token_counter
from transforms.export import recipe as recipes, trainer_configs
from transforms.export.budget import TokenCounter

# why a transition or record is not in the export (the manifest's `skipped` counts); `no_next_observation`:
# actions read whose next observation was not recorded (a transition needs one: a target is never invented).
# Counted only where they occur: `final_answer`, the agent's final answers whose recorded result only repeats
# them (no environment reply, `transforms.export.transitions`)
SKIPPED = ("held_out", "domain_not_selected", "non_real", "no_observation", "over_budget", "mix_dropped",
           "no_next_observation")


def skipped_units(kind: str) -> dict[str, str]:
    """What each `skipped` count counts, for this kind (the manifest's `skipped_units`; summaries group by it)."""
    units = dict.fromkeys(("held_out", "domain_not_selected", "non_real", "recipe_dropped", "no_sampled_target",
                           "over_budget"), "transitions")
    units.update(no_next_observation="actions", final_answer="actions", mix_dropped="records")
    if kind == "cpt":  # a CPT record is a document of whole turns, a trajectory without one is no record
        units.update(no_observation="trajectories", over_budget="turns", mix_dropped="documents")
    return units


class RowLengths:
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


@dataclass
class Totals:
    """What the rendered groups and the rows written add up to, for the manifest (each mixture copy of a row
    counts)."""

    skipped: dict[str, int]  # reason -> transitions or records left out (SKIPPED, and the groups' own)
    recipe: recipes.Counts | None  # the recipe's decisions, with a recipe
    lengths: RowLengths
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # split -> domain -> rows
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)  # split -> domain -> tokens
    transitions_in: int = 0
    actions_in: int = 0
    over_budget: dict[str, int] = field(default_factory=dict)  # domain -> transitions dropped for the budget
    # domain -> tokens of its system prompt, when over the budget
    prompt_over_budget: dict[str, int] = field(default_factory=dict)


def new_totals(config: ExportOptions, recipe: recipes.Recipe) -> Totals:
    """Nothing counted yet: every SKIPPED reason at 0, the recipe's counts only with a recipe."""
    return Totals(dict.fromkeys(SKIPPED, 0), recipes.Counts() if recipe.active else None,
                  RowLengths(token_counter(config.tokenizer)))
