"""Run inside a Harbor environment (`.venv/producers/harbor-<version>/bin/python`), not the project's: reads
ATIF files with Harbor's own pydantic `Trajectory` model and prints, as one JSON object, for each path either
the error Harbor raises or what Harbor's model reads in it (per step: source, copied-context mark, tool names),
so a test can compare our reading with the producer's. Imports nothing of this project.

Usage: python atif_oracle.py FILE...
"""

import json
import sys

from harbor.models.trajectories import Trajectory


def _steps(trajectory) -> list[dict]:
    return [{"source": s.source, "copied": bool(getattr(s, "is_copied_context", None)),
             "tools": [c.function_name for c in s.tool_calls or []]} for s in trajectory.steps]


def _read(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    try:
        trajectory = Trajectory.model_validate(doc)
    except Exception as e:  # pydantic's ValidationError, or a validator's ValueError
        return {"error": " ".join(line.strip() for line in str(e).splitlines()[:3])[:400]}
    subs = getattr(trajectory, "subagent_trajectories", None) or []
    return {"schema_version": trajectory.schema_version, "steps": _steps(trajectory),
            "subagents": [_steps(s) for s in subs]}


if __name__ == "__main__":
    print(json.dumps({path: _read(path) for path in sys.argv[1:]}))
