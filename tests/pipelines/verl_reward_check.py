"""Run inside verl's own venv (`make setup-test` builds .venv/producers/verl-<v>): verl loads the reward function
named by a fragment `pipelines export rl` wrote and scores a batch through its reward manager, as its trainer
does. Usage: python verl_reward_check.py FRAGMENT CASES_JSON OUT_JSON

CASES_JSON: a list of {data_source, response, ground_truth, extra_info}. OUT_JSON gets, per case, the reward
manager's `reward_score` and `reward_extra_info`, plus the fragment's data settings as verl's config reads them.
"""

import asyncio
import json
import sys
from pathlib import Path

import numpy as np
import torch
from omegaconf import OmegaConf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

import verl
from verl import DataProto
from verl.trainer.ppo.reward import get_custom_reward_fn, load_reward_manager


def byte_tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level BPE with no merges: every text round-trips through encode/decode exactly."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator([], trainers.BpeTrainer(vocab_size=260, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                    special_tokens=["<pad>"]))
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>")


def main(fragment_path: str, cases_path: str, out_path: str) -> None:
    base = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml")
    config = OmegaConf.merge(base, OmegaConf.load(fragment_path))
    assert get_custom_reward_fn(config) is not None, "verl found no custom reward function in the fragment"
    tokenizer = byte_tokenizer()
    manager = load_reward_manager(config, tokenizer)
    results = []
    for case in json.loads(Path(cases_path).read_text()):
        prompt_ids = tokenizer.encode("### Turn 1", add_special_tokens=False)
        response_ids = tokenizer.encode(case["response"], add_special_tokens=False) or [tokenizer.pad_token_id]
        n_response = len(response_ids) if case["response"] else 0
        attention = [1] * len(prompt_ids) + [1] * n_response + [0] * (len(response_ids) - n_response)
        data = DataProto.from_dict(
            tensors={"prompts": torch.tensor([prompt_ids]), "responses": torch.tensor([response_ids]),
                     "attention_mask": torch.tensor([attention])},
            non_tensors={"data_source": np.array([case["data_source"]], dtype=object),
                         "reward_model": np.array([{"style": "rule", "ground_truth": case["ground_truth"]}], dtype=object),
                         "extra_info": np.array([case.get("extra_info") or {}], dtype=object)})
        loop = manager.loop
        result = loop.run_until_complete(manager.run_single(data)) if not loop.is_running() \
            else asyncio.run(manager.run_single(data))
        results.append({"reward_score": float(result["reward_score"]),
                        "reward_extra_info": {k: (v if isinstance(v, (int, float, str)) else str(v))
                                              for k, v in result["reward_extra_info"].items()}})
    data = {k: config.data[k] for k in ("max_prompt_length", "max_response_length", "filter_overlong_prompts")}
    Path(out_path).write_text(json.dumps({"verl": verl.__version__, "data": data, "results": results}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
