"""Trainer settings written beside an export, computed from its records, so each trainer keeps every row
and puts the loss where the export does. Trainers' defaults silently drop or mis-train our shards: TRL's
`max_length=1024` truncates a long AgentWorld record's completion away (the row is then fully masked and
dropped), verl's `max_prompt_length=1024` filters long prompts out, LLaMA-Factory without `mask_history`
trains every earlier observation of a sharegpt row.

Lengths: each record's tokens by the export's counter (`transforms.export.budget`: exact content tokens of
the Qwen3.5 tokenizer unless `--tokenizer` names another, or the UTF-8 bound, which no byte-level BPE
exceeds), plus what a chat template adds per message. The emitted limit is the longest record (never a
percentile: a row over the limit is a row lost), times a margin for the template's tokens, rounded up to a
multiple of 64: `limit = ceil((max * 1.1 + 64) / 64) * 64`. p50/p99/max are recorded too. The limits hold
for the tokenizer they were counted with: every file names it (YAML in a comment; the JSON files are a
trainer's keyword arguments, which take no comment, so `trainers/README.md` names it for every file, as
does the manifest's `trainer_configs.tokenizer`).

Files (under `<out>/trainers/`), by what reads the export's format:

| export                | file                    | for                                                           |
|-----------------------|-------------------------|---------------------------------------------------------------|
| sft trl               | `trl_sft_config.json`   | TRL `SFTConfig(**json)`: `max_length`, `completion_only_loss`  |
| cpt text              | `trl_sft_config.json`   | TRL language modeling on `text` (`max_length`; the whole text  |
|                       |                         | trains: for the recipe's per-turn loss export `--format trl`)  |
| cpt trl               | `trl_sft_config.json`   | TRL on token ids with `completion_mask` (`completion_only_    |
|                       |                         | loss`): the observations that carry the loss, as ms-swift      |
| sft / cpt swift       | `swift_args.json`       | ms-swift `swift sft` arguments (`max_length`, `truncation_     |
|                       |                         | strategy`; per-message `loss` is read from the data)           |
| sft sharegpt          | `llamafactory_sft.yaml` | LLaMA-Factory training yaml (`mask_history: true`,             |
|                       |                         | `cutoff_len`), with the export's `dataset_info.json`           |
| sft agentworld        | `swift_args.json`       | ms-swift on the `messages` as they are, `loss_scale:           |
|                       |                         | last_round` (the target only; the earlier observations are     |
|                       |                         | history)                                                       |
|                       | `llamafactory_sft.yaml` | LLaMA-Factory (`mask_history: true`), with                     |
|                       | + `dataset_info.json`   | `trainers/dataset_info.json` reading `messages` as sharegpt     |
|                       |                         | role/content turns                                             |
| rl verl               | `../verl_reward.yaml`   | written by the RL export itself (`transforms.export.rl`): verl's |
|                       |                         | `data:` section (`max_prompt_length` and `max_response_length`  |
|                       |                         | by `limit` here, `filter_overlong_prompts`) and our reward       |

sft bench is read by the reference's evaluation, not a trainer: no file. TRL has no loss on the last turn of
`messages` alone (its `assistant_only_loss` trains every assistant turn, the history's observations too): for
TRL export `--format trl`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

ROUND_TO = 64
EXACT_MARGIN = 1.1  # chat-template tokens beyond the counter's per-message overhead
BOUND_MARGIN = 1.1  # the bound over-counts already: the same margin, for the template alone


@dataclass
class Lengths:
    """Token lengths of records, as a histogram of exact values (bounded by the number of distinct
    lengths), so percentiles are exact."""

    counts: dict[int, int] = field(default_factory=dict)

    def add(self, n: int) -> None:
        self.counts[n] = self.counts.get(n, 0) + 1

    def merge(self, other: "Lengths") -> None:
        for n, c in other.counts.items():
            self.counts[n] = self.counts.get(n, 0) + c

    def percentile(self, q: float) -> int:
        total = sum(self.counts.values())
        if not total:
            return 0
        rank = math.ceil(q / 100 * total)
        seen = 0
        for n in sorted(self.counts):
            seen += self.counts[n]
            if seen >= rank:
                return n
        return max(self.counts)

    def summary(self) -> dict:
        return {"records": sum(self.counts.values()), "p50": self.percentile(50), "p99": self.percentile(99),
                "max": max(self.counts, default=0)}


def limit(longest: int, exact: bool) -> int:
    """A length limit that holds a record of `longest` counted tokens (see the module docstring)."""
    margin = EXACT_MARGIN if exact else BOUND_MARGIN
    return max(ROUND_TO, math.ceil((longest * margin + ROUND_TO) / ROUND_TO) * ROUND_TO)


def _yaml(value, indent: int = 0) -> str:
    """A small YAML writer for the flat mappings and lists these files hold (strings JSON-quoted, which is
    valid YAML)."""
    import json

    pad = " " * indent
    lines = []
    for key, item in value.items():
        if isinstance(item, dict):
            lines.append(f"{pad}{key}:")
            lines.append(_yaml(item, indent + 2))
        elif isinstance(item, list):
            lines.append(f"{pad}{key}: [{', '.join(json.dumps(v) for v in item)}]")
        elif isinstance(item, bool):
            lines.append(f"{pad}{key}: {'true' if item else 'false'}")
        elif item is None:
            lines.append(f"{pad}{key}: null")
        elif isinstance(item, (int, float)):
            lines.append(f"{pad}{key}: {item}")
        else:
            lines.append(f"{pad}{key}: {json.dumps(item)}")
    return "\n".join(lines)


def _llamafactory_sft(dataset_names: list[str], length: int, dataset_dir: str) -> str:
    return _yaml({
        "stage": "sft", "do_train": True, "finetuning_type": "full", "dataset_dir": dataset_dir,
        "dataset": ",".join(n for n in dataset_names if n.endswith("_train")) or None,
        "eval_dataset": ",".join(n for n in dataset_names if not n.endswith("_train")) or None,
        "cutoff_len": length, "mask_history": True, "train_on_prompt": False,
        "template": "qwen"}) + "\n"


def _swift_args(length: int, shard_paths: dict[str, list[str]] | None, loss_scale: str = "default") -> dict:
    return {"max_length": length, "truncation_strategy": "raise", "loss_scale": loss_scale,
            "dataset": sorted(p for paths in (shard_paths or {}).values() for p in paths)}


def configs(kind: str, fmt: str, records: Lengths, exact: bool, *, dataset_names: list[str] | None = None,
            shard_paths: dict[str, list[str]] | None = None, prompts: Lengths | None = None,
            responses: Lengths | None = None, dataset: str = "dataset", tokenizer: str = "") -> dict[str, dict | str]:
    """relative path -> the file's content (a dict is written as JSON, a str as is) for one export.
    `records`: every row's tokens; `dataset_names`: the LLaMA-Factory datasets of `dataset_info.json`;
    `shard_paths`: split -> shard paths (verl's train/val files); `prompts` / `responses`: RL lengths;
    `dataset`: the dataset's name (agentworld's `trainers/dataset_info.json` names its datasets after it);
    `tokenizer`: what counted the lengths, named in every file (`trainers/README.md` for the JSON ones)."""
    from transforms.export.sft import dataset_info

    length = limit(records.summary()["max"], exact)
    out: dict[str, dict | str] = {}
    if (kind, fmt) == ("sft", "trl"):
        out["trainers/trl_sft_config.json"] = {
            "max_length": length, "completion_only_loss": True, "assistant_only_loss": False, "packing": False}
    elif (kind, fmt) == ("cpt", "trl"):  # token ids with the loss mask: TRL's collator reads completion_mask
        out["trainers/trl_sft_config.json"] = {
            "max_length": length, "completion_only_loss": True, "packing": False}
    elif (kind, fmt) == ("cpt", "text"):
        out["trainers/trl_sft_config.json"] = {
            "max_length": length, "dataset_text_field": "text", "completion_only_loss": False, "packing": False}
    elif fmt == "swift":
        out["trainers/swift_args.json"] = _swift_args(length, shard_paths)
    elif (kind, fmt) == ("sft", "sharegpt"):
        out["trainers/llamafactory_sft.yaml"] = _llamafactory_sft(dataset_names or [], length, "..")
    elif (kind, fmt) == ("sft", "agentworld"):
        out["trainers/swift_args.json"] = _swift_args(length, shard_paths, loss_scale="last_round")
        info = dataset_info(f"trajforge_{dataset}", sorted(shard_paths or {}), "agentworld", folder="../")
        out["trainers/dataset_info.json"] = info
        out["trainers/llamafactory_sft.yaml"] = _llamafactory_sft(sorted(info), length, ".")
    # rl verl: `verl_reward.yaml`, written by the RL export itself (data, lengths from these margins, reward)
    for rel, content in out.items():
        if rel.endswith(".yaml"):
            out[rel] = f"# lengths (cutoff_len) counted by {tokenizer}\n" + content
    if out:
        out["trainers/README.md"] = _readme(out, tokenizer, records, length)
    return out


def _readme(files: dict, tokenizer: str, records: Lengths, length: int) -> str:
    """What `trainers/` holds and the tokenizer every length in it was counted by."""
    summary = records.summary()
    lines = ["# Trainer settings for this export", "",
             f"Lengths counted by: {tokenizer}.", "",
             f"Rows: {summary['records']:,}; tokens per row p50 {summary['p50']:,}, p99 {summary['p99']:,}, "
             f"max {summary['max']:,}; the length limit set: {length:,}. A model whose tokenizer makes more tokens "
             "of the same rows needs the export made again with its tokenizer (`--tokenizer`).", ""]
    uses = {"trl_sft_config.json": "TRL: `SFTConfig(**json.load(f))`",
            "swift_args.json": "ms-swift: the `swift sft` arguments (`--max_length`, `--loss_scale`, ...)",
            "llamafactory_sft.yaml": "LLaMA-Factory: `llamafactory-cli train` (add `model_name_or_path`)",
            "dataset_info.json": "LLaMA-Factory's dataset list for the yaml beside it"}
    for rel in sorted(files):
        name = rel.rsplit("/", 1)[-1]
        lines.append(f"- `{name}`: {uses.get(name, name)}; lengths by {tokenizer}")
    return "\n".join(lines) + "\n"
