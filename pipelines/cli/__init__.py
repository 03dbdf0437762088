"""`pipelines`: run pipelines, list them, query the catalog.

Exit codes: 0 done; 1 a run failed (some tasks did not finish: rerun to resume); 2 bad usage, definition or
input; 3 `--strict` and records were quarantined.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from pipelines.infra import definition
from pipelines.cli import dedup as dedup_cli
from pipelines.cli import eval as eval_cli
from pipelines.cli import export as export_cli
from pipelines.cli import formats as formats_cli
from pipelines.cli import label as label_cli
from pipelines.cli import publish as publish_cli
from pipelines.cli import validate as validate_cli
from pipelines.cli import view as view_cli
from pipelines.infra.lake import Lake, lake_url
from pipelines.infra.options import add_executor_arguments
from pipelines.infra.runner import RunResult, run_ingest
from pipelines.infra.runs import open_catalog

DEFAULT_LAKE = os.environ.get("PIPELINES_LAKE", "lake")


def _add_lake_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lake", default=DEFAULT_LAKE, help="lake root: a path or fsspec URL (default ./lake, "
                   "or $PIPELINES_LAKE)")
    p.add_argument("--catalog", help="DuckDB catalog file (default <lake>/catalog.duckdb; needed for remote lakes)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pipelines", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--verbose", "-v", action="store_true", help="full tracebacks and every message")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="the defined pipelines")

    run = sub.add_parser("run", help="run a pipeline")
    run.add_argument("pipeline", help="pipeline name (see `pipelines list`) or the path of a .toml definition file")
    run.add_argument("--input", action="append", metavar="DIR_OR_GLOB",
                     help="input directory, file, glob or fsspec URL; repeatable (default: the bundled samples)")
    _add_lake_args(run)
    add_executor_arguments(run)
    run.add_argument("--replace", action="store_true", help="start the dataset over from these inputs (default: "
                     "add what the dataset does not hold yet as a new version sharing the old parts)")
    run.add_argument("--task-mb", type=float, help="input MB per task (default: the pipeline's task_mb)")
    run.add_argument("--strict", action="store_true", help="exit 3 when any record was quarantined or any input "
                     "file was not read")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress lines")

    sql = sub.add_parser("sql", help="run SQL on the catalog (views: episodes, steps, branches, quarantine, blobs; "
                         "tables: runs, datasets, versions, stage_stats)")
    sql.add_argument("query")
    _add_lake_args(sql)
    sql.add_argument("--format", choices=("table", "csv", "json"), default="table")

    migrate = sub.add_parser("migrate", help="bring a dataset written by an older schema to the current layout "
                             "(schema 1 -> 2: labeler branches move from steps to the branches table)")
    migrate.add_argument("dataset", help="NAME or NAME@VERSION")
    _add_lake_args(migrate)

    label_cli.add_parser(sub, _add_lake_args)
    dedup_cli.add_parser(sub, _add_lake_args)
    export_cli.add_parser(sub, _add_lake_args)
    validate_cli.add_parser(sub, _add_lake_args)
    view_cli.add_parser(sub, _add_lake_args)
    eval_cli.add_parser(sub, _add_lake_args)
    formats_cli.add_parser(sub, _add_lake_args)
    publish_cli.add_parser(sub, _add_lake_args)
    return parser


def _summary(r: RunResult, verbose: bool) -> str:
    mark = "ok" if r.status == "success" else "FAILED"
    lines = [f"{r.pipeline}: {mark}   run {r.run_id}   {r.seconds:.1f} s on {r.executor}",
             f"  inputs       {r.units_in:,} ({r.bytes_in / 1e6:,.1f} MB)"
             + (f", {r.units_known:,} already in the dataset" if r.units_known else "")
             + (f", {len(r.ignored)} files not read ({_ignored_summary(r.ignored)})" if r.ignored else ""),
             f"  tasks        {r.tasks_total:,} ({r.tasks_skipped:,} done by earlier runs, {r.tasks_failed:,} failed)",
             f"  episodes     {r.episodes:,}",
             f"  steps        {r.steps:,}",
             f"  quarantined  {r.quarantined:,}"]
    if r.status == "success":
        state = "new" if r.version_created else "unchanged: no new input"
        lines.append(f"  dataset      {r.dataset} v{r.version} ({state})")
    lines += [f"  {line}" for line in r.stage_summaries]
    lines.append(f"  lake         {r.lake}")
    shown = r.messages if verbose else r.messages[:10]
    if shown:
        lines.append("  messages:")
        lines += [f"    {m}" for m in shown]
        if len(r.messages) > len(shown):
            lines.append(f"    ... {len(r.messages) - len(shown)} more (--verbose, or the quarantine view)")
    if r.ignored and verbose:
        lines += ["  files not read:"] + [f"    {i}" for i in r.ignored]
    elif r.ignored:
        query = f"SELECT path, reason FROM ignored_inputs WHERE run_id = '{r.run_id}'"
        lines.append(f'  not read     pipelines sql "{query}" (or --verbose)')
    if r.status == "success":
        lines.append('  query        pipelines sql "SELECT domain, count(*) FROM steps GROUP BY 1"'
                     + ("" if r.lake == os.path.abspath(DEFAULT_LAKE) else f" --lake {r.lake}"))
    else:
        lines.append("  rerun the same command to resume: finished tasks are kept")
    return "\n".join(lines)


def _ignored_summary(ignored) -> str:
    from collections import Counter

    reasons = Counter(i.reason for i in ignored)
    return ", ".join(f"{reason}: {n}" for reason, n in reasons.most_common(3)) + (", ..." if len(reasons) > 3 else "")


def cmd_list(args) -> int:
    for name in definition.names():
        d = definition.load(name)
        print(f"{name:20s} -> dataset {d.dataset:10s} {d.description}")
    return 0


def cmd_run(args) -> int:
    defn = definition.load(args.pipeline)
    result = run_ingest(defn, lake_url(args.lake), args.input, ray_address=args.ray_address,
                        executor=args.executor, catalog=args.catalog, task_mb=args.task_mb,
                        progress=not args.quiet, replace=args.replace)
    print(_summary(result, args.verbose))
    if result.status != "success":
        return 1
    return 3 if args.strict and (result.quarantined or result.ignored) else 0


def cmd_sql(args) -> int:
    lake = Lake(lake_url(args.lake))
    with open_catalog(lake, args.catalog, read_only=True) as cat:
        rel = cat.sql(args.query)
        if rel is None:
            return 0
        if args.format == "table":
            rel.show(max_rows=200, max_width=10_000)
        else:
            import pyarrow.csv as pacsv
            table = rel.to_arrow_table()
            if args.format == "csv":
                pacsv.write_csv(table, sys.stdout.buffer)
            else:
                import orjson
                for row in table.to_pylist():
                    sys.stdout.buffer.write(orjson.dumps(row, default=str) + b"\n")
    return 0


def cmd_migrate(args) -> int:
    from pipelines.stages.migrate import migrate
    from pipelines.infra.runs import recorded_run

    lake = Lake(lake_url(args.lake))
    with recorded_run(lake, args.catalog, "migrate", args.dataset.partition("@")[0], {}, [args.dataset]) as run:
        version, moved, created = migrate(lake, args.catalog, args.dataset, run.run_id)
        run.fields.update(version=version, steps=moved)
    name = args.dataset.partition("@")[0]
    print(f"migrate {name}: {moved:,} branch steps moved to the branches table, v{version}" if created
          else f"migrate {name}: already at the current layout (v{version})")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handlers = {"list": cmd_list, "run": cmd_run, "sql": cmd_sql, "label": label_cli.cmd_label,
                "export": export_cli.cmd_export, "validate": validate_cli.cmd_validate,
                "dedup": dedup_cli.cmd_dedup, "migrate": cmd_migrate, "view": view_cli.cmd_view,
                "eval": eval_cli.cmd_eval, "formats": formats_cli.cmd_formats, "publish": publish_cli.cmd_publish}
    try:
        return handlers[args.command](args)
    except KeyboardInterrupt:
        print("interrupted: rerun the same command to resume", file=sys.stderr)
        return 130
    except Exception as e:
        if args.verbose:
            traceback.print_exc()
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2


def _one_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


if __name__ == "__main__":
    sys.exit(main())
