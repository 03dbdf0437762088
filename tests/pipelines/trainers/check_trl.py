"""TRL: the export's `trainers/trl_sft_config.json` through TRL's own SFTConfig and SFTTrainer dataset
preparation (tokenization, truncation), on a one-layer model. Prints JSON: rows in and out, rows whose
loss tokens are not exactly the completion (token-id rows: not exactly the masked-in tokens; those also train
three steps and report the losses and the tokens that carry loss), and (for contrast) rows TRL's default
max_length loses.
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


def trainer_of(**overrides):
    # this machine has no GPU: CPU and fp32 (not part of the emitted settings); a few steps when training
    args = SFTConfig(output_dir=os.path.join(scratch, "out"), report_to=[], use_cpu=True, bf16=False,
                     max_steps=3, per_device_train_batch_size=1, logging_steps=1, save_strategy="no",
                     **{**settings, **overrides})
    return SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tok)


def prepared(**overrides):
    return trainer_of(**overrides).train_dataset


trainer = trainer_of()
out = trainer.train_dataset
bad, loss_tokens = [], 0
for i, (row, prep) in enumerate(zip(data, out)):
    ids, mask = prep["input_ids"], prep.get("completion_mask")
    if "completion" in row:
        target = row["completion"][0]["content"] + "<|im_end|>\n"
        got = tok.decode([t for t, m in zip(ids, mask) if m], skip_special_tokens=False)
        # a template that opens every answer with an empty think block (Qwen3's) trains it as part of the answer
        got = got.removeprefix("<think>\n\n</think>\n\n")
        if got != target:
            bad.append({"row": i, "why": "loss tokens are not the completion", "got_tail": got[-80:]})
    elif "input_ids" in row:  # token ids with the loss mask (cpt trl): kept whole, the loss where the mask is
        if list(prep["input_ids"]) != list(row["input_ids"]):
            bad.append({"row": i, "why": f"ids changed {len(row['input_ids'])} -> {len(prep['input_ids'])}"})
        labels = trainer.data_collator([prep])["labels"][0]
        carried = [t for t, label in zip(prep["input_ids"], labels.tolist()) if label != -100]
        if carried != [t for t, m in zip(row["input_ids"], row["completion_mask"]) if m]:
            bad.append({"row": i, "why": "loss tokens are not the masked-in tokens"})
        loss_tokens += len(carried)
    else:  # language modeling on `text`: the whole text, untruncated
        full = tok(row["text"])["input_ids"]
        if len(ids) < len(full):
            bad.append({"row": i, "why": f"truncated {len(full)} -> {len(ids)}"})
default = prepared(max_length=1024)
lost = sum(1 for p in default if "completion_mask" in p and not any(p["completion_mask"]))
truncated = sum(1 for p, q in zip(default, out) if len(p["input_ids"]) < len(q["input_ids"]))
losses = []
if "input_ids" in data.column_names:  # train a few steps on the masked rows: the loss is a number
    # on the shortest rows: a whole row of 20k tokens through eager attention on the CPU needs gigabytes, and which
    # rows a shuffled sampler picks changes with every sample the corpus gains
    shortest = sorted(range(len(out)), key=lambda i: len(out[i]["input_ids"]))[:trainer.args.max_steps]
    trainer.train_dataset = out.select(shortest)
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
print(json.dumps({"rows_in": len(data), "rows_out": len(out), "bad": bad, "default_lost": lost,
                  "default_truncated": truncated, "loss_tokens": loss_tokens, "losses": losses}))
