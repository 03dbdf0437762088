"""ms-swift: the export's `trainers/swift_args.json` through ms-swift's template encoding (the step its
dataset preprocessing runs per row: chat template, per-message `loss`, `max_length` with the emitted
truncation strategy). Prints JSON: rows in, rows encoded whole, rows whose label tokens are not exactly the
assistant messages with `loss` true (rows without flags: the ones the emitted `loss_scale` names). argv: export root, tokenizer.json, scratch folder."""

import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from chatml import load  # noqa: E402

root, tokenizer_json, scratch = sys.argv[1:4]
from swift.template import get_template  # noqa: E402

settings = json.load(open(os.path.join(root, "trainers", "swift_args.json")))
tok = load(tokenizer_json, os.path.join(scratch, "tok"))
# what ms-swift's model loader attaches to a processor; no model here, and the template is named below
import torch  # noqa: E402
from swift.model.model_meta import ModelInfo, ModelMeta  # noqa: E402

tok.model_info = ModelInfo(model_type="llama", model_dir=os.path.join(scratch, "tok"), torch_dtype=torch.float32,
                           max_model_len=1 << 20, quant_method=None, quant_bits=0, task_type="causal_lm")
tok.model_meta = ModelMeta(model_type=None, model_groups=[], template="chatml")
template = get_template(tok, template_type="chatml", max_length=settings["max_length"],
                        truncation_strategy="raise",  # the emitted length must hold every row: fail loudly
                        loss_scale=settings["loss_scale"])
template.set_mode("train")
rows = [json.loads(line) for f in sorted(glob.glob(os.path.join(root, "train", "*.jsonl")))
        for line in open(f, encoding="utf-8")]
bad, encoded = [], 0
for i, row in enumerate(rows):
    try:
        out = template.encode({"messages": row["messages"]})
    except Exception as e:  # MaxLengthError: the row would be lost
        bad.append({"row": i, "why": repr(e)[:200]})
        continue
    encoded += 1
    got = tok.decode([t for t in out["labels"] if t != -100], skip_special_tokens=False)
    assistants = [m for m in row["messages"] if m["role"] == "assistant"]
    if any("loss" in m for m in row["messages"]):  # the export's per-message flags
        want = [m["content"] for m in assistants if m.get("loss")]
    else:  # no flags (agentworld): the emitted loss_scale says which turns train
        want = [m["content"] for m in (assistants[-1:] if settings["loss_scale"] == "last_round" else assistants)]
    if got.replace("<|im_end|>", "").replace("\n", "") != "".join(want).replace("\n", ""):
        bad.append({"row": i, "why": "labels are not the loss-bearing messages", "got_tail": got[-80:]})
print(json.dumps({"rows_in": len(rows), "rows_out": encoded, "bad": bad[:5], "bad_count": len(bad)}))
