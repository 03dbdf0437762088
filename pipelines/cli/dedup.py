"""`pipelines dedup DATASET`: the dedup stage run on its own. Kept apart from `pipelines.dedup` so the command
line starts without importing numpy and polars."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub, add_lake_args) -> None:
    p = sub.add_parser("dedup", help="scrub secrets, then remove exact and near-duplicate episodes "
                       "(a new dataset version; clusters in dedup_clusters)")
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    p.add_argument("--threshold", type=float,
                   help="Jaccard of shingle sets for near-duplicates (default: the stage's, 0.8)")
    p.add_argument("--no-scrub", action="store_true", help="do not scrub secrets")
    p.add_argument("--executor", choices=("auto", "local", "ray"), default="auto",
                   help="where signatures are computed (default: Ray above 200,000 episodes)")
    p.add_argument("--ray-address", help="join this Ray cluster")
    add_lake_args(p)


def cmd_dedup(args: argparse.Namespace) -> int:
    from pipelines import datasets
    from pipelines.lake import lake_url
    from pipelines.dedup import STAGE
    from pipelines.lake import Lake
    from pipelines.runs import open_catalog
    from pipelines.stages import run_alone

    lake = Lake(lake_url(args.lake))
    options = {"scrub": not args.no_scrub, "executor": args.executor, "ray_address": args.ray_address}
    if args.threshold is not None:
        options["threshold"] = args.threshold
    dataset = args.dataset.partition("@")[0]
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    run_id, result = run_alone(STAGE, lake, args.catalog, args.dataset, options, log, counted="episodes")
    with open_catalog(lake, args.catalog) as cat:
        current = datasets.resolve(cat, dataset).version
    print(f"dedup {args.dataset}: ok   run {run_id}\n  {result.summary}\n  dataset      {dataset} v{current}"
          + (" (new)" if result.version else " (unchanged)")
          + f'\n  clusters     pipelines sql "SELECT * FROM dedup_clusters WHERE run_id = \'{run_id}\'"')
    return 0
