"""Named moments of a run, for the tests that kill a run there and check that the next run repairs it.

`reached(name)` does nothing unless $TRAJFORGE_PAUSE_AT names that phase: then it says so on stderr
(`paused at <name>`) and waits to be killed. Phases: `planning` (tasks planned, none started), `mid-task` (a
task has written a part, not yet its completion marker), `committing` (every task done, the version not yet
committed), `stage:<name>` (before a stage after ingest, e.g. `stage:validate`). A paused run closes the
catalog connection it keeps (`runs.release_catalog`), so the catalog can be read while it waits.
"""

from __future__ import annotations

import os
import sys
import time

PAUSE_AT = "TRAJFORGE_PAUSE_AT"


def reached(name: str) -> None:
    if os.environ.get(PAUSE_AT) != name:
        return
    from pipelines.infra.runs import release_catalog

    release_catalog()
    print(f"paused at {name}", file=sys.stderr, flush=True)
    while True:
        time.sleep(60)
