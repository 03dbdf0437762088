"""verl: the `data:` section of the export's `verl_reward.yaml` through verl's own RLHFDataset (its
overlong-prompt filter and `truncation: error`). Prints JSON: rows in the shards, rows the dataset keeps,
rows whose prompt failed to load, and (for contrast) rows verl's default max_prompt_length keeps.
argv: export root, tokenizer.json, scratch folder."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from chatml import load  # noqa: E402

root, tokenizer_json, scratch = sys.argv[1:4]
import pyarrow.parquet as pq  # noqa: E402
import yaml  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset  # noqa: E402

tok = load(tokenizer_json, os.path.join(scratch, "tok"))
section = yaml.safe_load(open(os.path.join(root, "verl_reward.yaml")))["data"]
files = [os.path.normpath(os.path.join(root, f)) for f in section["train_files"]]
rows = sum(pq.read_metadata(f).num_rows for f in files)
config = OmegaConf.create({**section, "cache_dir": os.path.join(scratch, "cache"), "filter_overlong_prompts_workers": 1})
dataset = RLHFDataset(files, tok, config)
errors = []
for i in range(len(dataset)):
    try:
        item = dataset[i]
        if "input_ids" in item and len(item["input_ids"]) > section["max_prompt_length"]:
            errors.append({"row": i, "why": "longer than max_prompt_length"})
    except Exception as e:  # truncation: error raises on a prompt over the limit
        errors.append({"row": i, "why": repr(e)[:200]})
default = RLHFDataset(files, tok, OmegaConf.create({**config, "max_prompt_length": 1024}))
print(json.dumps({"rows_in": rows, "rows_out": len(dataset), "bad": errors, "default_kept": len(default)}))
