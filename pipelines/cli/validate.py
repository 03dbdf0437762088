"""`pipelines validate DATASET[@VERSION]`: run the validate stage on demand (see `pipelines.validate`).

Exit codes: 0 done (findings are reported, not failures); 3 `--strict` and an episode was quarantined.
"""

from __future__ import annotations

import sys


def _mapping(values: list[str] | None, what: str) -> dict[str, str]:
    out = {}
    for value in values or []:
        key, sep, mode = value.partition("=")
        if not sep:
            raise ValueError(f"--{what} expects KEY=VALUE, got {value!r}")
        out[key] = mode
    return out


def add_parser(sub, add_lake_args) -> None:
    p = sub.add_parser("validate", help="check a dataset version, quarantine broken episodes, run GX suites",
                       description=__doc__)
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    p.add_argument("--contract", action="append", metavar="FORMAT=MODE",
                   help="schema contract per source format: evolve, freeze or discard_row "
                        "(FORMAT 'default' for the others; default evolve); repeatable")
    p.add_argument("--severity", action="append", metavar="RULE=LEVEL",
                   help="override a rule's severity (error or warning); repeatable")
    p.add_argument("--no-gx", action="store_true", help="hot-path rules only, no great-expectations suites")
    p.add_argument("--sample-rows", type=int, help="GX validates a sample above this many rows")
    p.add_argument("--strict", action="store_true", help="exit 3 when any episode was quarantined")
    add_lake_args(p)


def cmd_validate(args) -> int:
    from pipelines.lake import lake_url
    from pipelines.lake import Lake
    from pipelines.stages import run_alone

    options = {"contract": _mapping(args.contract, "contract"), "severity": _mapping(args.severity, "severity"),
               "gx": not args.no_gx}
    if args.sample_rows:
        options["sample_rows"] = args.sample_rows
    name = args.dataset.partition("@")[0]
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    _run_id, result = run_alone("validate", Lake(lake_url(args.lake)), args.catalog, args.dataset, options, log)
    where = f"v{result.version} (new)" if result.version else "unchanged"
    print(f"validate {args.dataset}: {result.summary}\n  dataset {name} {where}\n"
          f'  query   pipelines sql "SELECT rule, count(*) FROM quarantine GROUP BY 1"')
    return 3 if args.strict and result.quarantined else 0
