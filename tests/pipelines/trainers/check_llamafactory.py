"""LLaMA-Factory: the export's `trainers/llamafactory_sft.yaml` through LLaMA-Factory's own argument
parser and dataset loader (its `dataset_info.json`, the sharegpt converter, the supervised processor with
`mask_history` and `cutoff_len`). Prints JSON: rows in the shards, rows the loader keeps, rows whose label
tokens are not exactly the target, and (for contrast) label tokens without `mask_history`.
argv: export root, tokenizer.json, scratch folder."""

import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from chatml import tokenizer_dir  # noqa: E402

root, tokenizer_json, scratch = sys.argv[1:4]
import types  # noqa: E402

import yaml  # noqa: E402

# Stand-in: no torchaudio build loads beside the CPU torch wheel (the Makefile removes it); LLaMA-Factory
# imports it at load time for audio inputs, which sharegpt text rows never reach.
import peft  # noqa: E402,F401  (transformers and peft look for torchaudio first: they find none)

sys.modules.setdefault("torchaudio", types.ModuleType("torchaudio"))
from llamafactory.data import get_dataset, get_template_and_fix_tokenizer  # noqa: E402
from llamafactory.hparams import get_train_args  # noqa: E402
from llamafactory.model import load_tokenizer  # noqa: E402

settings = yaml.safe_load(open(os.path.join(root, "trainers", "llamafactory_sft.yaml")))
settings["dataset_dir"] = os.path.normpath(os.path.join(root, "trainers", settings["dataset_dir"]))
settings.pop("eval_dataset", None)
folder = tokenizer_dir(tokenizer_json, os.path.join(scratch, "tok"))


def loaded(**overrides):
    args = {**settings, "model_name_or_path": folder, "output_dir": os.path.join(scratch, "out"),
            "overwrite_output_dir": True, "report_to": "none", "overwrite_cache": True,
            "preprocessing_num_workers": None, **overrides}
    model_args, data_args, training_args, *_ = get_train_args(args)
    module = load_tokenizer(model_args)
    template = get_template_and_fix_tokenizer(module["tokenizer"], data_args)
    data = get_dataset(template, model_args, data_args, training_args, stage="sft", **module)
    return module["tokenizer"], data["train_dataset"]


rows = [json.loads(line) for f in sorted(glob.glob(os.path.join(root, "train", "*.jsonl")))
        for line in open(f, encoding="utf-8")]
tok, dataset = loaded()
bad = []
for i, (row, item) in enumerate(zip(rows, dataset)):
    target = row["conversations"][-1]["value"] if "conversations" in row else row["messages"][-1]["content"]
    got = tok.decode([t for t in item["labels"] if t != -100], skip_special_tokens=False)
    if got.replace("<|im_end|>", "").strip() != target.strip():
        bad.append({"row": i, "why": "labels are not the target", "got_tail": got[-80:]})
_, unmasked = loaded(mask_history=False)
label_tokens = lambda d: sum(sum(1 for t in item["labels"] if t != -100) for item in d)
print(json.dumps({"rows_in": len(rows), "rows_out": len(dataset), "bad": bad,
                  "label_tokens": label_tokens(dataset), "label_tokens_without_mask_history": label_tokens(unmasked)}))
