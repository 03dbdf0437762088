"""`pipelines migrate DATASET`: bring a dataset written before schema 2 to the current layout.

Schema 1 kept the labeler's simulated steps in `steps`, beside the real ones. Schema 2 keeps them in
`branches` (see `schemas.branches`). The migration reads each `steps` part that still holds a non-real row,
writes its real rows as a new `steps` part and its other rows as `branches` rows, and commits a new version;
parts without branches are shared as they are. Running it again changes nothing.
"""

from __future__ import annotations

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipelines.infra import datasets
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog
from schemas import BRANCHES

STAGE = "migrate"


def _strategy(raw: str | None) -> str | None:
    try:
        value = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None
    return value.get("counterfactual") if isinstance(value, dict) else None


def branch_rows(simulated: pa.Table) -> pa.Table:
    """Schema-1 simulated steps as `branches` rows (the predicted state was their `final_observation`)."""
    rows = []
    for step in simulated.to_pylist():
        action = step.get("action") or {}
        rows.append({
            "step_id": step["step_id"], "branch_id": step.get("branch_id"),
            "parent_step_id": step.get("parent_step_id"), "episode_id": step["episode_id"],
            "step_index": step["step_index"], "domain": step.get("domain"), "origin": step.get("origin"),
            "action": action or None, "next_observation": step.get("final_observation"),
            "strategy": _strategy(action.get("raw")), "labeler": step.get("labeler"), "request_key": None,
            "_run_id": step.get("_run_id")})
    return pa.Table.from_pylist(rows, schema=BRANCHES)


def migrate(lake: Lake, catalog_path: str | None, dataset_ref: str, run_id: str) -> tuple[int, int, bool]:
    """Returns (version, branches moved, version created)."""
    with open_catalog(lake, catalog_path, read_only=True) as cat:
        version = datasets.resolve(cat, dataset_ref)
    legacy = set(datasets.legacy_branch_parts(lake, version))
    if not legacy:
        return version.version, 0, False
    steps_parts, branch_parts, moved = [], list(version.parts.get("branches", [])), 0
    for rel in version.parts.get("steps", []):
        if rel not in legacy:
            steps_parts.append(rel)
            continue
        table = pq.read_table(lake.absolute(rel), filesystem=lake.fs)
        is_real = pc.fill_null(pc.equal(table["origin"], "real"), False)
        real, simulated = table.filter(is_real), table.filter(pc.invert(is_real))
        if real.num_rows:
            steps_parts.append(datasets.write_part(lake, version.dataset, "steps", real, STAGE))
        if simulated.num_rows:
            branch_parts.append(datasets.write_part(lake, version.dataset, "branches", branch_rows(simulated), STAGE))
            moved += simulated.num_rows
    with open_catalog(lake, catalog_path) as cat:
        number, created = datasets.commit(lake, cat, version, run_id,
                                          {"steps": steps_parts, "branches": branch_parts},
                                          note=f"migrate to schema 2: {moved} branch steps moved out of steps")
    return number, moved, created


def migrate_stage(ctx) -> "StageResult":
    """`stages = [..., "migrate"]` (no options); also `pipelines migrate DATASET`."""
    from pipelines.stages import StageResult

    number, moved, created = migrate(ctx.lake, ctx.catalog_path, ctx.dataset, ctx.run_id)
    return StageResult(records_in=moved, records_out=moved, version=number if created else None,
                       summary=f"{moved:,} branch steps moved out of steps" if created else "already schema 2")
