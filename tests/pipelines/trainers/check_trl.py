"""TRL: the export's `trainers/trl_sft_config.json` through TRL's own SFTConfig and SFTTrainer dataset
preparation (tokenization, truncation), on a one-layer model. Prints JSON: rows in and out, rows whose
loss tokens are not exactly the completion, and (for contrast) rows TRL's default max_length loses.
argv: export root, tokenizer.json, scratch folder."""

import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from chatml import load  # noqa: E402

root, tokenizer_json, scratch = sys.argv[1:4]
import datasets  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402
from trl import SFTConfig, SFTTrainer  # noqa: E402

tok = load(tokenizer_json, os.path.join(scratch, "tok"))
settings = json.load(open(os.path.join(root, "trainers", "trl_sft_config.json")))
files = sorted(glob.glob(os.path.join(root, "train", "*.parquet")))
data = datasets.load_dataset("parquet", data_files=files, split="train")
model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1 << 20))


def prepared(**overrides):
    # this machine has no GPU: CPU and fp32 (not part of the emitted settings)
    args = SFTConfig(output_dir=os.path.join(scratch, "out"), report_to=[], use_cpu=True, bf16=False,
                     **{**settings, **overrides})
    trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tok)
    return trainer.train_dataset


out = prepared()
bad = []
for i, (row, prep) in enumerate(zip(data, out)):
    ids, mask = prep["input_ids"], prep.get("completion_mask")
    if "completion" in row:
        target = row["completion"][0]["content"] + "<|im_end|>\n"
        got = tok.decode([t for t, m in zip(ids, mask) if m], skip_special_tokens=False)
        if got != target:
            bad.append({"row": i, "why": "loss tokens are not the completion", "got_tail": got[-80:]})
    else:  # language modeling on `text`: the whole text, untruncated
        full = tok(row["text"])["input_ids"]
        if len(ids) < len(full):
            bad.append({"row": i, "why": f"truncated {len(full)} -> {len(ids)}"})
default = prepared(max_length=1024)
lost = sum(1 for p in default if "completion_mask" in p and not any(p["completion_mask"]))
truncated = sum(1 for p, q in zip(default, out) if len(p["input_ids"]) < len(q["input_ids"]))
print(json.dumps({"rows_in": len(data), "rows_out": len(out), "bad": bad, "default_lost": lost,
                  "default_truncated": truncated}))
