"""`pipelines formats`: every format reader, from its own metadata (`INFO` in its module, read by
`ingest.registry`): its group (the `ingest-<group>` pipeline), claim rank, domains, platform, what its detection
looks for, and the producer versions the tests prove. `--markdown` prints the README's formats tables, which
`tests/test_formats_table.py` holds against the README. `pipelines formats explain PATH`: which reader claims a
file, and why every other one does not.
"""

from __future__ import annotations

from ingest import registry
from ingest.format_info import GROUPS

README_START = "<!-- formats: made by `pipelines formats --markdown` from each reader's INFO; do not edit -->"
README_END = "<!-- formats: end -->"


def add_parser(sub, add_lake_args) -> None:
    p = sub.add_parser("formats", help="the format readers, their groups, detection and proven producer versions; "
                       "`formats explain PATH` says which one reads a file and why the others do not",
                       description=__doc__)
    p.add_argument("--markdown", action="store_true", help="the README's formats tables")
    action = p.add_subparsers(dest="formats_command")
    explain = action.add_parser("explain", help="for every reader of a pipeline, in its order: does it claim "
                                "PATH, and why not; then what reading it gives")
    explain.add_argument("path", help="one input file")
    explain.add_argument("--pipeline", default="ingest-all",
                         help="whose formats, in whose order (default ingest-all: every registered format)")


def cmd_formats(args) -> int:
    if getattr(args, "formats_command", None) == "explain":
        from pipelines.infra import definition
        from pipelines.cli.explain import explain

        for line in explain(args.path, definition.load(args.pipeline).formats):
            print(line)
        return 0
    print(readme_tables() if args.markdown else _plain())
    return 0


def _plain() -> str:
    lines = []
    for name in registry.names():
        info = registry.info(name)
        pipeline = f"ingest-{info.group}" if info.group else "ingest-all"
        lines.append(f"{name:20s} {pipeline:15s} rank {info.rank:<4d} {'/'.join(info.domains):14s} "
                     f"{info.platform:8s} {info.versions or '-'}")
        lines.append(f"{'':20s} detects: {registry.detects(registry.load(name))}")
    return "\n".join(lines)


def _pipelines_table() -> list[str]:
    rows = ["| pipeline | dataset | formats |", "|---|---|---|"]
    for group in GROUPS:
        summaries = ", ".join(registry.info(n).summary for n in registry.group(group))
        rows.append(f"| `ingest-{group}` | `{group}` | {summaries} |")
    alone = ", ".join(registry.info(n).summary for n in registry.names() if registry.info(n).group is None)
    rows.append(f"| `ingest-all` | `all` | all of the above{' plus ' + alone if alone else ''}, mixed in one folder |")
    return rows


def _producers_table() -> list[str]:
    """One row per producer: formats proven by the same producer, versions and test share a row."""
    rows: list[tuple[list[str], tuple]] = []
    for name in registry.names():
        info = registry.info(name)
        if info.producer is None:
            continue
        key = (info.producer, info.versions, info.proof)
        same = next((r for r in rows if r[1] == key), None)
        if same:
            same[0].append(name)
        else:
            rows.append(([name], key))
    out = ["| format | producer | versions tested | how |", "|---|---|---|---|"]
    return out + [f"| {', '.join(f'`{n}`' for n in names)} | {producer} | {versions or '-'} | {proof} |"
                  for names, (producer, versions, proof) in rows]


def readme_tables() -> str:
    """The README's block between README_START and README_END."""
    return "\n".join([README_START, "", *_pipelines_table(), "",
                      "Formats whose producer the tests run or whose producer's own parser checks them:", "",
                      *_producers_table(), "", README_END])
