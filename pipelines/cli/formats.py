"""`pipelines formats explain PATH`: which reader claims a file, and why every other one does not."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    p = sub.add_parser("formats", help="the format readers: `formats explain PATH` says which one reads a file "
                       "and why the others do not")
    action = p.add_subparsers(dest="formats_command", required=True)
    explain = action.add_parser("explain", help="for every reader of a pipeline, in its order: does it claim "
                                "PATH, and why not; then what reading it gives")
    explain.add_argument("path", help="one input file")
    explain.add_argument("--pipeline", default="ingest-all",
                         help="whose formats, in whose order (default ingest-all: every registered format)")


def cmd_formats(args: argparse.Namespace) -> int:
    from pipelines import definition
    from pipelines.explain import explain

    formats = definition.load(args.pipeline).formats
    for line in explain(args.path, formats):
        print(line)
    return 0
