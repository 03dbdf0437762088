"""RL records in verl's Parquet layout, exactly one turn per trajectory (expanding a trajectory into many RL
samples made training collapse in the reference's experience).

Which turn: among the trajectory's eligible transitions (recorded real next observation, or any origin
with --include-simulated; fits the token budget), the one at position xxh64(trajectory id) mod n. The
choice is deterministic, spreads over early and late turns across a corpus, and does not depend on the
other trajectories in the export.

Record: `data_source` = "trajforge/<domain>", `prompt` = the AgentWorld messages (system .. final user
action), `ability` = "world_model/<domain>", `reward_model` = {"style": "rule", "ground_truth": the next
observation's text, without the `**Environment Observation:**` marker}, `extra_info` = {split, index,
episode_id, line, turn_idx (1-based), step_ids, target_step_id, origin, current_prompt (the final user turn:
what the reward's judge shows as the current turn, `pipelines.stages.reward`; verl passes the reward function only
`extra_info`, not the prompt), judge_context (the record's earlier turns as the judge prompt's Context section,
written as the reference evaluation writes it for the AgentWorldBench record of the same transition: each
user turn, then its observation as the benchmark's responses hold it, `**Environment Observation:**` form;
"" for a first turn)}.
"""

from __future__ import annotations

import xxhash

from transforms import agentworld
from transforms.export.chat import Sample
from transforms.reward.judge import judge_context

FORMATS = ("verl",)
FILE_TYPES = {"verl": "parquet"}


def choose(trajectory_id: str, candidates: list) -> int:
    """Index into `candidates` of the one turn a trajectory contributes."""
    return xxhash.xxh64_intdigest(trajectory_id.encode()) % len(candidates)


def verl_record(sample: Sample, split: str, index: int) -> dict:
    transition = sample.transition
    trajectory = transition.trajectory
    return {
        "data_source": f"trajforge/{trajectory.domain}",
        "prompt": sample.messages,
        "ability": f"world_model/{trajectory.domain}",
        "reward_model": {"style": "rule", "ground_truth": transition.target},
        "extra_info": {"split": split, "index": index, "episode_id": trajectory.episode_id,
                       "line": trajectory.line, "turn_idx": transition.t + 1, "step_ids": transition.step_ids,
                       "target_step_id": transition.target_step_id, "origin": transition.origin,
                       "current_prompt": sample.messages[-1]["content"], "judge_context": context(sample)},
    }


def context(sample: Sample) -> str:
    """The judge's Context section for `sample`: its kept history turns (the user turns of its prompt), each
    with the observation that followed it in the benchmark's response form (`transforms.export.sft`'s bench
    records hold the same pairs)."""
    turns = sample.transition.trajectory.turns
    users = [m["content"] for m in sample.messages if m["role"] == "user"][:-1]
    return judge_context([(user, agentworld.observation_turn(turns[i].shown))
                          for user, i in zip(users, range(sample.first_turn, sample.transition.t))])


FRAGMENT_NAME = "verl_reward.yaml"
LENGTH_STEP = 128  # lengths in the fragment are rounded up to a multiple of this


def round_up(n: int, step: int = LENGTH_STEP) -> int:
    return max(step, -(-n // step) * step)


def verl_fragment(reward_path: str, train_files: list[str], val_files: list[str], max_prompt_tokens: int,
                  max_response_tokens: int, tokenizer: str) -> str:
    """The verl config fragment written beside the shards (YAML; merge it over verl's trainer config, or
    pass its keys as `key=value` overrides): the data files, the prompt and response lengths the shards
    need (their longest prompt and answer, with the trainer configs' margin, rounded up), overlong prompts
    filtered (none is, at these lengths: `truncation: error` says so loudly if one were), and our reward
    function, under `reward.custom_reward_function` (verl >= 0.8) and the top-level
    `custom_reward_function` (older verl)."""
    def strings(values: list[str]) -> str:
        return "[" + ", ".join(_quoted(v) for v in values) + "]"

    reward = f"  path: {_quoted(reward_path)}\n  name: compute_score\n"
    return (
        "# verl config fragment written by `pipelines export rl` (lengths counted by "
        f"{tokenizer}).\n"
        "# max_response_length fits the longest ground truth: raise it for a model that reasons first.\n"
        "# The judge of the reward's rubric part is set by TRAJFORGE_JUDGE_ENDPOINT / TRAJFORGE_JUDGE_MODEL\n"
        "# (or reward_kwargs below); without one the reward is the rule part alone.\n"
        "data:\n"
        f"  train_files: {strings(train_files)}\n"
        f"  val_files: {strings(val_files)}\n"
        f"  max_prompt_length: {round_up(max_prompt_tokens)}\n"
        f"  max_response_length: {round_up(max_response_tokens)}\n"
        "  prompt_key: prompt\n"
        "  filter_overlong_prompts: true\n"
        "  truncation: error\n"
        "reward:\n"
        "  custom_reward_function:\n"
        + "".join("  " + line + "\n" for line in reward.splitlines())
        + "    reward_kwargs: {}\n"
        "custom_reward_function:\n" + reward
    )


def _quoted(value: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax is valid YAML)."""
    import json

    return json.dumps(value)
