"""`python -m tests.view.serve --lake PATH [--port N] ...`: the `pipelines view` command through its own
parser hooks (`add_parser`, `cmd_view`), the way `pipelines.cli` mounts it."""

import argparse
import sys

from pipelines.cli import view as view_cli
from pipelines.cli import _add_lake_args

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="pipelines")
    view_cli.add_parser(parser.add_subparsers(dest="command", required=True), _add_lake_args)
    sys.exit(view_cli.cmd_view(parser.parse_args(["view", *sys.argv[1:]])))
