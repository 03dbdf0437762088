"""The verl config fragment of an RL export as YAML reads it: the keys verl takes its data files, lengths and
reward function from (verl itself loading it: tests/pipelines/test_reward.py), lengths rounded up to whole
steps, paths of any characters, and the notes a user reads before training."""

import yaml

from transforms.export.rl import LENGTH_STEP, round_up, verl_fragment


def test_lengths_are_rounded_up_to_whole_steps_of_at_least_one():
    assert LENGTH_STEP == 128
    assert [round_up(n) for n in (0, 1, 127, 128, 129, 256, 257)] == [128, 128, 128, 128, 256, 256, 384]
    assert [round_up(n, 100) for n in (0, 100, 101)] == [100, 100, 200]


def test_the_fragment_names_the_data_lengths_and_reward_under_both_keys_verl_reads():
    reward = '/opt/my "rewards"/reward.py'
    text = verl_fragment(reward, ["/out/train-00000.parquet", "/out/train 1.parquet"], ["/out/validation.parquet"],
                         max_prompt_tokens=1000, max_response_tokens=128, tokenizer="o200k_base")
    function = {"path": reward, "name": "compute_score"}
    assert yaml.safe_load(text) == {
        "data": {"train_files": ["/out/train-00000.parquet", "/out/train 1.parquet"],
                 "val_files": ["/out/validation.parquet"], "max_prompt_length": 1024, "max_response_length": 128,
                 "prompt_key": "prompt", "filter_overlong_prompts": True, "truncation": "error"},
        "reward": {"custom_reward_function": {**function, "reward_kwargs": {}}},
        "custom_reward_function": function}
    assert [line for line in text.splitlines() if line.startswith("#")] == [
        "# verl config fragment written by `pipelines export rl` (lengths counted by o200k_base).",
        "# max_response_length fits the longest ground truth: raise it for a model that reasons first.",
        "# The judge of the reward's rubric part is set by TRAJFORGE_JUDGE_ENDPOINT / TRAJFORGE_JUDGE_MODEL",
        "# (or reward_kwargs below); without one the reward is the rule part alone."]
    assert yaml.safe_load(verl_fragment(reward, [], [], 0, 0, "x"))["data"] == {
        "train_files": [], "val_files": [], "max_prompt_length": 128, "max_response_length": 128,
        "prompt_key": "prompt", "filter_overlong_prompts": True, "truncation": "error"}
