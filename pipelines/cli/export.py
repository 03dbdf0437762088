"""`pipelines export KIND DATASET --out PATH ...`: write training shards from a dataset version.

KIND is one of `EXPORTERS`: cpt, sft and rl render the transition view (`pipelines.stages.export`); other
exporters (interchange formats) register themselves here with their own handler.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from typing import Callable

from pipelines.infra.lake import Lake, lake_url
from pipelines.infra.options import ExportOptions, add_arguments, add_executor_arguments, from_args

# kind -> handler(args, lake, catalog_path) -> exit code; `kinds` extend this dict
EXPORTERS: dict[str, Callable] = {}


def _read_ids(paths: list[str] | None) -> list[str]:
    ids = []
    for path in paths or []:
        with open(path, encoding="utf-8") as f:
            ids += [line.strip() for line in f if line.strip() and not line.startswith("#")]
    return ids


def _progress_only(line: str) -> None:
    """Progress lines (indented) to stderr; the summary below says the rest once."""
    if line.startswith("  "):
        print(line, file=sys.stderr, flush=True)


def export_training(args, lake: Lake, catalog_path: str | None) -> int:
    from pipelines.stages.export import budget_warnings, checked, export

    options = from_args(ExportOptions, args, skip=("out",))
    config = checked(dataclasses.replace(options, held_out=options.held_out + _read_ids(args.held_out_file)))
    manifest = export(lake, catalog_path, args.dataset, lake_url(args.out), config, log=_progress_only,
                      executor=args.executor, ray_address=args.ray_address)
    print(f"export {manifest['export_id']}: {config.kind}/{config.format} of {manifest['dataset']} "
          f"v{manifest['version']}: {manifest['rows']:,} rows, {manifest['tokens_total']:,} tokens "
          f"({manifest['tokenizer']}), {len(manifest['shards'])} shard(s)")
    for split, domains in manifest["counts"].items():
        print(f"  {split:10s} " + ", ".join(f"{d} {n:,}" for d, n in domains.items()))
    print(f"  read       {manifest['actions_in']:,} actions, {manifest['transitions_in']:,} of them with a "
          "recorded next observation (transitions)")
    by_unit: dict[str, list[str]] = {}
    for key, n in manifest["skipped"].items():
        if n:
            by_unit.setdefault(manifest["skipped_units"].get(key, "records"), []).append(f"{key} {n:,}")
    for unit, counts in by_unit.items():  # one unit a line: transitions, actions, trajectories... never mixed
        print(f"  skipped    {unit}: " + ", ".join(counts))
    for line in budget_warnings(manifest):
        print(f"  {line}")
    print(f"  out        {lake_url(args.out)} (manifest.json)")
    return 0


def export_interchange_atif(args, lake: Lake, catalog_path: str | None) -> int:
    from pipelines.stages.export_atif import export_atif

    manifest = export_atif(lake, catalog_path, args.dataset, lake_url(args.out), bool(args.include_simulated),
                           executor=args.executor, ray_address=args.ray_address)
    print(f"export atif: {manifest['episodes']:,} trajectory.json file(s) from {manifest['dataset']} "
          f"v{manifest['version']}, {manifest['branches']:,} branches, in {lake_url(args.out)} (manifest.json)")
    return 0


for _kind in ("cpt", "sft", "rl"):
    EXPORTERS[_kind] = export_training
if importlib.util.find_spec("pipelines.stages.export_atif") is not None:
    EXPORTERS["atif"] = export_interchange_atif


def add_parser(sub, add_lake_args) -> None:
    p = sub.add_parser("export", help="write CPT / SFT / RL training shards from a dataset", description=__doc__)
    p.add_argument("kind", choices=sorted(EXPORTERS), help="what to export")
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    p.add_argument("--out", required=True, help="output folder (path or fsspec URL)")
    # the stage's options, one flag each (atif reads --include-simulated only)
    add_arguments(p, ExportOptions, skip=("kind", "out"))
    p.add_argument("--held-out-file", action="append", metavar="FILE", help="file of ids to leave out of "
                   "every split, one per line (# comments); repeatable, added to --held-out")
    add_executor_arguments(p)
    add_lake_args(p)


def cmd_export(args) -> int:
    from pipelines.infra.runs import catalog_path

    lake = Lake(lake_url(args.lake))
    return EXPORTERS[args.kind](args, lake, catalog_path(lake, args.catalog))
