"""Write many, the files beside the shards: the manifest (counts per split and domain, tokens, shard sha256s,
the dataset version and the export config), LLaMA-Factory's `dataset_info.json` (sft --format sharegpt), the
verl fragment (RL) and the trainer configs, all from the shards written and the totals the stream added up;
the warnings the manifest calls for, and the removal of a previous export's files."""

from __future__ import annotations

import os
from dataclasses import asdict

import orjson

from catalog import Version
from pipelines.infra.lake import Lake
from pipelines.infra.options import ExportOptions
from pipelines.stages.export.options import KINDS, recorded, token_counter
from pipelines.stages.export.plan import RenderJob
from pipelines.stages.export.shards import Shard
from pipelines.stages.export.totals import RowLengths, Totals, skipped_units
from schemas import SCHEMA_VERSION
from transforms.export import recipe as recipes, rl, sft, trainer_configs

def remove_previous(out: Lake) -> None:
    """Delete the files a previous export into the same folder listed in its manifest (nothing else)."""
    path = out.path("manifest.json")
    if not out.fs.exists(path):
        return
    with out.fs.open(path, "rb") as f:
        old = orjson.loads(f.read())
    for rel in [s["path"] for s in old.get("shards", [])] + old.get("extra_files", []) + ["manifest.json"]:
        target = out.path(rel)
        if out.fs.exists(target):
            out.fs.rm(target)


def write_extra_files(out_lake: Lake, config: ExportOptions, dataset: str, shards: list[Shard],
                      lengths: RowLengths) -> tuple[list[str], dict]:
    """The files beside the shards: LLaMA-Factory's `dataset_info.json` (sharegpt), the verl fragment (RL)
    and the trainer configs. Returns their names and the manifest's `trainer_configs`."""
    extra_files = []
    if config.format == "sharegpt":
        info = sft.dataset_info(f"trajforge_{dataset}", sorted({s.split for s in shards}))
        out_lake.write_bytes_atomic(out_lake.path("dataset_info.json"), orjson.dumps(info, option=orjson.OPT_INDENT_2))
        extra_files.append("dataset_info.json")
    if config.kind == "rl":
        extra_files.append(_write_verl_fragment(out_lake, shards, lengths, config))
    trainers = write_trainer_configs(out_lake, config, shards, lengths, extra_files, dataset)
    return extra_files, trainers


def manifest_of(export_id: str, job: RenderJob, recipe: recipes.Recipe, version: Version, shards: list[Shard],
                totals: Totals, extra_files: list[str], trainers: dict) -> dict:
    """The export's manifest (`manifest.json`, and its row in the catalog's `exports`)."""
    config, lengths = job.config, totals.lengths
    manifest = {
        "export_id": export_id, "kind": config.kind, "format": config.format,
        "file_type": KINDS[config.kind].FILE_TYPES[config.format],
        "dataset": version.dataset, "version": version.version, "schema_version": SCHEMA_VERSION,
        "config": recorded(config), "tokenizer": token_counter(config.tokenizer).name,
        "rows": sum(s.rows for s in shards),
        "counts": {s: dict(sorted(d.items())) for s, d in sorted(totals.counts.items())},
        "tokens": {s: dict(sorted(d.items())) for s, d in sorted(totals.tokens.items())},
        "tokens_total": sum(sum(d.values()) for d in totals.tokens.values()),
        "actions_in": totals.actions_in, "transitions_in": totals.transitions_in, "skipped": totals.skipped,
        "skipped_units": {k: u for k, u in skipped_units(config.kind).items() if k in totals.skipped},
        "over_budget_by_domain": dict(sorted(totals.over_budget.items())),
        "system_prompt_over_budget": dict(sorted(totals.prompt_over_budget.items())),
        "shards": [asdict(s) for s in shards], "extra_files": extra_files,
    }
    if config.kind == "rl":  # what the verl fragment's lengths come from
        manifest["verl"] = {"fragment": rl.FRAGMENT_NAME, "max_prompt_tokens": lengths.prompts.summary()["max"],
                            "max_response_tokens": lengths.responses.summary()["max"]}
    manifest["trainer_configs"] = trainers
    unhonoured = _unhonoured_masks(config, recipe, totals)
    if unhonoured:
        trainers["loss_mask_not_honoured"] = unhonoured
    if totals.recipe is not None:
        manifest["recipe"] = {"name": recipe.name, "steps": recipes.steps(recipe),
                              "no_change_steps_known": len(job.no_change), **totals.recipe.manifest()}
    return manifest


def _write_verl_fragment(out: Lake, shards: list, lengths: RowLengths, config: ExportOptions) -> str:
    """`verl_reward.yaml` beside the shards (`transforms.export.rl.verl_fragment`), the one verl file of an RL
    export: data, lengths (`trainer_configs.limit` of the longest prompt and answer) and our reward; returns
    its name."""
    from pipelines.stages import reward

    exact = token_counter(config.tokenizer).exact
    files = {split: [out.path(s.path) for s in shards if s.split == split] for split in ("train", "validation")}
    text = rl.verl_fragment(os.path.abspath(reward.__file__), files["train"], files["validation"],
                            trainer_configs.limit(lengths.prompts.summary()["max"], exact),
                            trainer_configs.limit(lengths.responses.summary()["max"], exact),
                            token_counter(config.tokenizer).name)
    out.write_bytes_atomic(out.path(rl.FRAGMENT_NAME), text.encode())
    return rl.FRAGMENT_NAME


def write_trainer_configs(out: Lake, config: ExportOptions, shards: list[Shard], lengths: RowLengths,
                          extra_files: list[str], dataset: str) -> dict:
    """The trainer settings for this export (`transforms.export.trainer_configs`), written beside it;
    returns the manifest's `trainer_configs`: each file and the lengths it was computed from."""
    by_split: dict[str, list[str]] = {}
    for shard in shards:
        by_split.setdefault(shard.split, []).append(shard.path)
    counter = token_counter(config.tokenizer)
    files = trainer_configs.configs(config.kind, config.format, lengths.rows, counter.exact,
                                    dataset_names=_sharegpt_names(out) if config.format == "sharegpt" else None,
                                    shard_paths=by_split, prompts=lengths.prompts, responses=lengths.responses,
                                    dataset=dataset, tokenizer=counter.name)
    for rel, content in files.items():
        data = orjson.dumps(content, option=orjson.OPT_INDENT_2) if isinstance(content, dict) else content.encode()
        out.write_bytes_atomic(out.path(rel), data)
        extra_files.append(rel)
    summary = {"rows": lengths.rows.summary(), "exact": counter.exact}
    if config.kind == "rl":
        summary.update(prompts=lengths.prompts.summary(), responses=lengths.responses.summary())
    return {"files": sorted(files), "tokens": summary, "tokenizer": counter.name}


def _sharegpt_names(out: Lake) -> list[str]:
    """The dataset names of the `dataset_info.json` just written (sharegpt), which LLaMA-Factory's config lists."""
    path = out.path("dataset_info.json")
    with out.fs.open(path, "rb") as f:
        return sorted(orjson.loads(f.read()))


def budget_warnings(manifest: dict) -> list[str]:
    """One line per domain that lost records to the token budget; loud when its system prompt alone does
    not fit (every record of the domain is lost)."""
    budget = manifest["config"].get("max_tokens")
    lines = []
    for domain, tokens in manifest.get("system_prompt_over_budget", {}).items():
        lines.append(f"WARNING {domain}: its system prompt alone is {tokens:,} tokens, over --max-tokens {budget:,}: "
                     f"no {domain} record can fit ({manifest['over_budget_by_domain'].get(domain, 0):,} dropped)")
    for domain, n in manifest.get("over_budget_by_domain", {}).items():
        if domain not in manifest.get("system_prompt_over_budget", {}):
            lines.append(f"note {domain}: {n:,} transitions do not fit --max-tokens {budget:,} even without history")
    for trainer, why in manifest.get("trainer_configs", {}).get("loss_mask_not_honoured", {}).items():
        lines.append(f"WARNING {trainer}: {why}")
    return lines


def _unhonoured_masks(config: ExportOptions, recipe: recipes.Recipe, totals: Totals) -> dict[str, str]:
    """Trainer -> why it trains turns the recipe masked, for the trainer files this export writes."""
    masked = sum(totals.recipe.turns_masked.values()) if totals.recipe is not None and recipe.loss_mask else 0
    if not masked or (config.kind, config.format) != ("cpt", "text"):
        return {}
    return {"TRL (trainers/trl_sft_config.json)": (
        f"{masked:,} masked turns (turn_loss, turn_spans) are trained: TRL reads no per-turn mask from `text`; "
        "export --format trl (token ids with the mask) or --format swift for the mask")}
