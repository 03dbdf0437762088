"""`pipelines dedup DATASET`: the dedup stage run on its own; its flags are the stage's options
(`pipelines.infra.options.DedupOptions`). Kept apart from `pipelines.stages.dedup` so the command line starts without
importing numpy and polars."""

from __future__ import annotations

import argparse
import sys

from pipelines.infra.options import DedupOptions, add_arguments, add_executor_arguments, from_args


def add_parser(sub, add_lake_args) -> None:
    p = sub.add_parser("dedup", help="scrub secrets, then remove exact and near-duplicate episodes "
                       "(a new dataset version; clusters in dedup_clusters)")
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    add_arguments(p, DedupOptions)
    add_executor_arguments(p)
    add_lake_args(p)


def cmd_dedup(args: argparse.Namespace) -> int:
    import dataclasses

    from pipelines.infra import datasets
    from pipelines.stages.dedup import STAGE
    from pipelines.infra.lake import Lake, lake_url
    from pipelines.infra.runs import open_catalog
    from pipelines.stages import run_alone

    lake = Lake(lake_url(args.lake))
    options = dataclasses.asdict(from_args(DedupOptions, args))
    dataset = args.dataset.partition("@")[0]
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    run_id, result = run_alone(STAGE, lake, args.catalog, args.dataset, options, log, counted="episodes",
                               executor=args.executor, ray_address=args.ray_address)
    with open_catalog(lake, args.catalog) as cat:
        current = datasets.resolve(cat, dataset).version
    print(f"dedup {args.dataset}: ok   run {run_id}\n  {result.summary}\n  dataset      {dataset} v{current}"
          + (" (new)" if result.version else " (unchanged)")
          + f'\n  clusters     pipelines sql "SELECT * FROM dedup_clusters WHERE run_id = \'{run_id}\'"')
    return 0
