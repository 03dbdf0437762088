"""`pipelines validate DATASET[@VERSION]`: run the validate stage on demand (see `pipelines.stages.validate`); its
flags are the stage's options (`pipelines.infra.options.ValidateOptions`).

Exit codes: 0 done (findings are reported, not failures); 3 `--strict` and an episode was quarantined.
"""

from __future__ import annotations

import sys

from pipelines.infra.options import ValidateOptions, add_arguments, add_executor_arguments, from_args


def add_parser(sub, add_lake_args) -> None:
    p = sub.add_parser("validate", help="check a dataset version, quarantine broken episodes, run GX suites",
                       description=__doc__)
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    add_arguments(p, ValidateOptions)
    add_executor_arguments(p)
    p.add_argument("--strict", action="store_true", help="exit 3 when any episode was quarantined")
    add_lake_args(p)


def cmd_validate(args) -> int:
    import dataclasses

    from pipelines.infra.lake import Lake, lake_url
    from pipelines.stages import run_alone

    options = {k: v for k, v in dataclasses.asdict(from_args(ValidateOptions, args)).items() if v is not None}
    name = args.dataset.partition("@")[0]
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    _run_id, result = run_alone("validate", Lake(lake_url(args.lake)), args.catalog, args.dataset, options, log,
                               executor=args.executor, ray_address=args.ray_address)
    where = f"v{result.version} (new)" if result.version else "unchanged"
    print(f"validate {args.dataset}: {result.summary}\n  dataset {name} {where}\n"
          f'  query   pipelines sql "SELECT rule, count(*) FROM quarantine GROUP BY 1"')
    return 3 if args.strict and result.quarantined else 0
