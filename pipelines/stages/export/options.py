"""An export's options: `ExportOptions` checked against the kinds and formats, the data recipe they ask for,
the options as the manifest records them, and the token counter they name."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import asdict

from pipelines.infra.options import ExportOptions
from transforms.export import cpt, demonstrations, recipe as recipes, rl, sft
from transforms.export.budget import TokenCounter

KINDS = {"cpt": cpt, "sft": sft, "rl": rl}
DEFAULT_FORMAT = {"cpt": "text", "sft": "agentworld", "rl": "verl"}


class ExportError(ValueError):
    pass


def checked(options: ExportOptions) -> ExportOptions:
    """The options with the kind's default format filled in; ExportError when they cannot export."""
    if options.kind not in KINDS:
        raise ExportError(f"unknown export kind {options.kind!r} (kinds: {', '.join(KINDS)})")
    options = dataclasses.replace(options, format=options.format or DEFAULT_FORMAT[options.kind])
    if options.format not in KINDS[options.kind].FORMATS:
        raise ExportError(f"{options.kind} has no format {options.format!r} "
                          f"(formats: {', '.join(KINDS[options.kind].FORMATS)})")
    if (options.kind, options.format) == ("cpt", "trl") and (options.tokenizer or "") in ("bound", "estimate"):
        raise ExportError("cpt --format trl writes token ids: --tokenizer must name a tokenizer, not the bound")
    ratios = options.split_ratios
    if abs(sum(ratios) - 1) > 1e-9 or min(ratios) < 0:
        raise ExportError(f"split ratios {ratios} must be >= 0 and sum to 1")
    if options.shard_rows < 1 or options.shard_mb <= 0:
        raise ExportError("shard limits must be positive")
    if options.targets == "sampled" and (options.kind != "sft" or options.format == "bench"):
        raise ExportError("--targets sampled applies to sft exports other than --format bench (an evaluation "
                          "compares with the real next state)")
    negative = [d for d, w in options.mix.items() if w < 0]
    if negative:
        raise ExportError(f"mix weights must be >= 0 ({', '.join(negative)})")
    try:
        recipe_of(options)
        demonstrations.parse(options.demonstrations)
    except ValueError as e:
        raise ExportError(str(e)) from e
    return options


# ExportOptions' recipe fields: recorded only when set, so an export without a recipe is unchanged
RECIPE_OPTIONS = ("recipe", "min_turns", "drop_undeclared_tools", "drop_environment_failures",
                  "drop_empty_actions", "skip_retry_cycles", "drop_no_change", "loss_mask", "keep_rates",
                  "prompt_variants", "prompt_variants_dir", "screenshot_states")


def recipe_of(options: ExportOptions) -> recipes.Recipe:
    """The recipe the options ask for: each step as set, else the named recipe's default, else off."""
    return recipes.resolve({name: getattr(options, name) for name in RECIPE_OPTIONS}, seed=options.seed)


def recorded(options: ExportOptions) -> dict:
    """The options as the manifest records them (held-out ids summarized by count and digest)."""
    d = asdict(options)
    ids = sorted(set(options.held_out))
    d["held_out"] = {"count": len(ids), "sha256": hashlib.sha256("\n".join(ids).encode()).hexdigest()}
    d["split_ratios"] = list(options.split_ratios)
    d.pop("out")
    for name in RECIPE_OPTIONS:
        if d[name] is None:
            del d[name]
    if d["targets"] == "real":  # recorded only when sampled, so an export of real targets is unchanged
        del d["targets"]
    for name in ("android_state", "web_action", "demonstrations"):  # recorded only when chosen (the default follows the format)
        if d[name] is None:
            del d[name]
    return d


@functools.lru_cache(maxsize=4)
def token_counter(tokenizer: str | None) -> TokenCounter:
    """The counter of `--tokenizer`, one per process: a named tokenizer loads once for every group and file."""
    return TokenCounter(tokenizer)
