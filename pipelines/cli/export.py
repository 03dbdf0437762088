"""`pipelines export KIND DATASET --out PATH ...`: write training shards from a dataset version.

KIND is one of `EXPORTERS`: cpt, sft and rl render the transition view (`pipelines.export`); other
exporters (interchange formats) register themselves here with their own handler.
"""

from __future__ import annotations

import importlib.util
from typing import Callable

from pipelines.lake import Lake, lake_url

# kind -> handler(args, lake, catalog_path) -> exit code; `kinds` extend this dict
EXPORTERS: dict[str, Callable] = {}


def _read_ids(paths: list[str] | None) -> list[str]:
    ids = []
    for path in paths or []:
        with open(path, encoding="utf-8") as f:
            ids += [line.strip() for line in f if line.strip() and not line.startswith("#")]
    return ids


def export_training(args, lake: Lake, catalog_path: str | None) -> int:
    from pipelines.export import ExportConfig, budget_warnings, export, parse_mix

    ratios = tuple(float(x) for x in args.split_ratios.split(",")) if args.split_ratios else None
    config = ExportConfig(
        kind=args.kind, format=args.format, domains=args.domains, mix=parse_mix(args.mix),
        include_simulated=args.include_simulated, max_tokens=args.max_tokens, tokenizer=args.tokenizer,
        shard_rows=args.shard_rows, shard_bytes=int(args.shard_mb * (1 << 20)), seed=args.seed,
        held_out=_read_ids(args.held_out), **({"ratios": ratios} if ratios else {}))
    manifest = export(lake, catalog_path, args.dataset, lake_url(args.out), config, log=lambda line: None)
    print(f"export {manifest['export_id']}: {config.kind}/{config.format} of {manifest['dataset']} "
          f"v{manifest['version']}: {manifest['rows']:,} rows, {manifest['tokens_total']:,} tokens "
          f"({manifest['tokenizer']}), {len(manifest['shards'])} shard(s)")
    for split, domains in manifest["counts"].items():
        print(f"  {split:10s} " + ", ".join(f"{d} {n:,}" for d, n in domains.items()))
    dropped = {k: v for k, v in manifest["skipped"].items() if v}
    if dropped:
        print("  skipped    " + ", ".join(f"{k} {v:,}" for k, v in dropped.items()))
    for line in budget_warnings(manifest):
        print(f"  {line}")
    print(f"  out        {lake_url(args.out)} (manifest.json)")
    return 0


def export_interchange_atif(args, lake: Lake, catalog_path: str | None) -> int:
    from pipelines.export_atif import export_atif

    manifest = export_atif(lake, catalog_path, args.dataset, lake_url(args.out), args.include_simulated)
    print(f"export atif: {manifest['episodes']:,} trajectory.json file(s) from {manifest['dataset']} "
          f"v{manifest['version']}, {manifest['branches']:,} branches, in {lake_url(args.out)} (manifest.json)")
    return 0


for _kind in ("cpt", "sft", "rl"):
    EXPORTERS[_kind] = export_training
if importlib.util.find_spec("pipelines.export_atif") is not None:
    EXPORTERS["atif"] = export_interchange_atif


def add_parser(sub, add_lake_args) -> None:
    p = sub.add_parser("export", help="write CPT / SFT / RL training shards from a dataset", description=__doc__)
    p.add_argument("kind", choices=sorted(EXPORTERS), help="what to export")
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    p.add_argument("--out", required=True, help="output folder (path or fsspec URL)")
    p.add_argument("--format", help="cpt: text (default) | swift; sft: agentworld (default) | trl | swift | "
                   "sharegpt | bench; rl: verl (default)")
    p.add_argument("--domains", nargs="+", metavar="DOMAIN", help="export only these domains")
    p.add_argument("--mix", metavar="DOMAIN=WEIGHT,...", help="per-domain weights: 2 writes each record twice, "
                   "0.5 keeps half (chosen by record id), 0 leaves the domain out; unlisted domains weigh 1")
    p.add_argument("--include-simulated", action="store_true", help="admit simulated/perturbed steps (marked "
                   "in each record's `origin`); by default only real steps are exported")
    p.add_argument("--max-tokens", type=int, metavar="N", help="context budget per record; history is "
                   "trimmed from the oldest turn, never the target")
    p.add_argument("--tokenizer", metavar="PATH", help="local tokenizer.json for exact token counts "
                   "(default: estimate ceil(chars / 4))")
    p.add_argument("--held-out", action="append", metavar="FILE", help="file of ids (episode ids, tasks, "
                   "apps/repos/sites) to leave out of every split, one per line; repeatable")
    p.add_argument("--split-ratios", metavar="TRAIN,VAL,TEST", help="default 0.9,0.05,0.05")
    p.add_argument("--seed", default="", help="salt for the split assignment (default none)")
    p.add_argument("--shard-rows", type=int, default=100_000, help="rows per shard at most (default 100000)")
    p.add_argument("--shard-mb", type=float, default=256, help="MB of records per shard at most (default 256)")
    add_lake_args(p)


def cmd_export(args) -> int:
    from pipelines.runs import catalog_path

    lake = Lake(lake_url(args.lake))
    return EXPORTERS[args.kind](args, lake, catalog_path(lake, args.catalog))
