"""`pipelines migrate DATASET`: bring a dataset written before schema 2 to the current layout.

Schema 1 kept the labeler's simulated steps in `steps`, beside the real ones. Schema 2 keeps them in
`branches` (see `schemas.branches`). The migration reads each `steps` part that still holds a non-real row,
writes its real rows as a new `steps` part and its other rows as `branches` rows (one part per task, through
`pipelines.infra.stage_runner`), and commits a new version; parts without branches are shared as they are.
Running it again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipelines.infra import datasets
from pipelines.infra.lake import Lake
from pipelines.infra.stage_runner import Outcome, PartsStage, Plan, StageRun, run_parts
from schemas import BRANCHES

STAGE = "migrate"
# not measured: a split is one read and two writes of a part, taken as validate's read rate (20 MB/s)
BYTES_PER_S = 20 * (1 << 20)


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


@dataclass
class MigrateJob:
    """What every part's split shares."""

    lake_url: str
    dataset: str


def split_part(rel: str, job: MigrateJob) -> tuple[str | None, str | None, int]:
    """One schema-1 `steps` part as (its real rows' new `steps` part, its other rows' `branches` part, rows
    moved); None for a side without rows."""
    lake = Lake(job.lake_url)
    table = pq.read_table(lake.absolute(rel), filesystem=lake.fs)
    is_real = pc.fill_null(pc.equal(table["origin"], "real"), False)
    real, simulated = table.filter(is_real), table.filter(pc.invert(is_real))
    steps = datasets.write_part(lake, job.dataset, "steps", real, STAGE) if real.num_rows else None
    branches = (datasets.write_part(lake, job.dataset, "branches", branch_rows(simulated), STAGE)
                if simulated.num_rows else None)
    return steps, branches, simulated.num_rows


def _plan(run: StageRun, cat) -> Plan:
    """The `steps` parts that still hold a non-real row (Parquet footers tell); none: nothing to do."""
    legacy = set(datasets.legacy_branch_parts(run.ctx.lake, run.version))
    parts = [rel for rel in run.version.parts.get("steps", []) if rel in legacy]
    return Plan(parts, MigrateJob(run.ctx.lake.url, run.dataset), [{"steps": [rel]} for rel in parts],
                f"migrate {run.dataset}", name=str, what="steps part")


def _reduce(run: StageRun, results: list[tuple[str | None, str | None, int]]) -> Outcome:
    """The split parts in the places of the parts they came from; the moved branches after the old ones."""
    if not results:
        return Outcome(state=0)
    split = dict(zip(run.plan.items, results))
    steps_parts, branch_parts = [], list(run.version.parts.get("branches", []))
    for rel in run.version.parts.get("steps", []):
        steps, branches, _ = split.get(rel, (rel, None, 0))
        steps_parts += [steps] if steps else []
        branch_parts += [branches] if branches else []
    moved = sum(n for _, _, n in results)
    return Outcome({"steps": steps_parts, "branches": branch_parts}, state=moved,
                   note=f"migrate to schema 2: {moved} branch steps moved out of steps")


def _finish(run: StageRun, outcome: Outcome, number: int, created: bool) -> tuple[int, int, bool]:
    return number, outcome.state, created


MIGRATE = PartsStage("migrate", split_part, BYTES_PER_S, _plan, _reduce, _finish, reads_legacy=True)


def migrate(lake: Lake, catalog_path: str | None, dataset_ref: str, run_id: str) -> tuple[int, int, bool]:
    """`pipelines migrate DATASET`, in this process: (version, branches moved, version created)."""
    from pipelines.stages import StageContext

    return run_parts(StageContext(lake, catalog_path, dataset_ref, run_id, log=lambda line: None,
                                  executor="local"), MIGRATE)


def migrate_stage(ctx) -> "StageResult":
    """`stages = [..., "migrate"]` (no options), on the run's executor."""
    from pipelines.stages import StageResult

    number, moved, created = run_parts(ctx, MIGRATE)
    return StageResult(records_in=moved, records_out=moved, version=number if created else None,
                       summary=f"{moved:,} branch steps moved out of steps" if created else "already schema 2")
