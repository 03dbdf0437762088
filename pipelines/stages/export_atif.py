"""`pipelines export atif DATASET --out DIR`: one ATIF v1.4 `trajectory.json` per episode of a dataset
version, at `<out>/<episode_id>/trajectory.json` (the layout Harbor keeps per trial).

Mapping (each of our steps is one ATIF agent turn):
- the task, or observation 0 when there is one, is a `user` turn before the first agent turn;
- an action is the turn's tool call: `tool_call` -> its tool and arguments; `command` -> `bash`
  (or its own tool) with `{"command"}`; `code` -> `{"code"}`; `keystrokes` -> `{"keystrokes", "duration"}`;
  GUI actions -> a call named after the kind with their fields; `message` / `done` -> the turn's `message`
  without a tool call;
- the next observation (step t+1's observation, the final observation after the last step) is the turn's
  `observation.results[0]`, linked by `source_call_id`;
- `reasoning` -> `reasoning_content`, `timestamp` -> ISO-8601 UTC.
Exact records ride along in `extra["trajforge"]` (episode fields at the root; `action` and the next
`observation` per turn, and `action_inferred` when the action was read back rather than recorded) so
`ingest.atif` reads the files back to the same steps.

Branches (`schemas.branches`) are left out unless `include_simulated`: then the turn of each branch's parent
step lists them in `extra["trajforge"]["branches"]` (origin, lineage, the counterfactual action and the
predicted state). The ATIF steps stay what really happened, and `ingest.atif` reads the branches back into
`branches` with their origin. A real-only export of a labeled version is byte-identical to the one before.

Like every export: `<out>/manifest.json` (files, sha256s, counts, config) and catalog rows in `exports` and
`export_rows` (one row per file: the step ids it holds, branch steps included).
"""

from __future__ import annotations

import hashlib
import posixpath
from collections import defaultdict
from dataclasses import dataclass

import orjson
import pyarrow.compute as pc
import xxhash

from ingest.atif import EXTRA_KEY
from pipelines.infra import executor as executors
from pipelines.infra.datasets import group_sizes, group_stem, part_groups, read_branches_of, read_parts, resolve
from pipelines.stages.export import RENDER_BYTES_PER_S as BYTES_PER_S
from pipelines.stages.export import Lineage, record_export
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog
from transforms import agentworld

BRANCH_FIELDS = ("step_id", "branch_id", "parent_step_id", "origin", "strategy", "labeler", "request_key", "action",
                 "next_observation")

SCHEMA_VERSION = "ATIF-v1.4"


def _iso(ts) -> str | None:
    return ts.isoformat().replace("+00:00", "Z") if ts is not None else None


def _tool_call(action: dict, call_id: str) -> dict | None:
    call = agentworld.tool_call(action)
    return None if call is None else {"tool_call_id": call_id, "function_name": call[0], "arguments": call[1]}


def trajectory(episode: dict, steps: list[dict], branches: dict[str, list[dict]] | None = None) -> dict:
    """The ATIF document of one episode (`steps` sorted by step_index; `branches`: parent step id -> its
    rows of `branches`, listed on the parent's turn)."""
    turns: list[dict] = []

    def add(turn: dict):
        turns.append({"step_id": len(turns) + 1, **turn})

    first = steps[0]["observation"] if steps else None
    if first and first.get("kind") not in (None, "none"):
        add({"source": "user", "message": first.get("text") or "", "extra": {EXTRA_KEY: {"observation": first}}})
    elif episode.get("task"):
        add({"source": "user", "message": episode["task"], "extra": {EXTRA_KEY: {"observation": None}}})
    for i, step in enumerate(steps):
        action = step["action"] or {"kind": "wait"}
        nxt = steps[i + 1]["observation"] if i + 1 < len(steps) else step.get("final_observation")
        call_id = f"call_{i + 1}"
        call = _tool_call(action, call_id)
        turn = {"source": "agent", "timestamp": _iso(step.get("timestamp")),
                "message": (action.get("text") or "") if call is None else "",
                "reasoning_content": step.get("reasoning")}
        if episode.get("agent"):
            turn["model_name"] = episode["agent"]
        if call is not None:
            turn["tool_calls"] = [call]
        if nxt and nxt.get("kind") not in (None, "none"):
            turn["observation"] = {"results": [{"source_call_id": call_id if call else None,
                                                "content": nxt.get("text") or ""}]}
        turn["extra"] = {EXTRA_KEY: {"action": action, "observation": nxt}}
        if step.get("action_inferred"):  # read back by its reader, not recorded (schemas.v1)
            turn["extra"][EXTRA_KEY]["action_inferred"] = True
        if branches and branches.get(step["step_id"]):
            turn["extra"][EXTRA_KEY]["branches"] = [{k: b.get(k) for k in BRANCH_FIELDS}
                                                    for b in sorted(branches[step["step_id"]], key=lambda b: b["step_id"])]
        add({k: v for k, v in turn.items() if v is not None})
    env = orjson.loads(episode["env"]) if episode.get("env") else {}
    last = steps[-1] if steps else {}
    root_extra = {k: episode.get(k) for k in ("episode_id", "source_format", "source_uri", "domain", "platform",
                                               "task", "agent", "outcome", "reward")}
    root_extra.update(env=env, terminated=bool(last.get("is_terminal")))
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": episode["episode_id"],
        "agent": {"name": episode.get("source_format") or "unknown",
                  "version": episode.get("ingestor_version") or "unknown",
                  **({"model_name": episode["agent"]} if episode.get("agent") else {})},
        "steps": turns,
        "final_metrics": {"total_steps": len(turns)},
        "extra": {EXTRA_KEY: root_extra},
    }


@dataclass
class AtifJob:
    """What every group's files share."""

    lake_url: str
    out: str
    branch_parts: list[str]  # read only with include_simulated


def atif_group(group: dict[str, list[str]], job: AtifJob) -> list[tuple[dict, list[str]]]:
    """Write the trajectory.json of every episode of one part group (with the branches of those episodes):
    (file entry, step ids) per episode."""
    lake, out_lake = Lake(job.lake_url), Lake(job.out)
    episodes = read_parts(lake, group["episodes"], "episodes")
    branches: dict[str, list[dict]] = defaultdict(list)
    for row in read_branches_of(lake, job.branch_parts, episodes["episode_id"]).to_pylist():
        branches[row["parent_step_id"]].append(row)
    steps = read_parts(lake, group["steps"], "steps")
    steps = steps.take(pc.sort_indices(steps, [("episode_id", "ascending"), ("step_index", "ascending")]))
    by_episode: dict[str, list[dict]] = defaultdict(list)
    for batch in steps.to_batches():
        for row in batch.to_pylist():
            by_episode[row["episode_id"]].append(row)
    written = []
    for episode in episodes.to_pylist():
        episode_steps = by_episode.get(episode["episode_id"], [])
        doc = trajectory(episode, episode_steps, branches)
        rel = posixpath.join(episode["episode_id"], "trajectory.json")
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2, default=str)
        out_lake.write_bytes_atomic(out_lake.path(rel), data)
        step_ids = [s["step_id"] for s in episode_steps]
        branch_ids = sorted(b["step_id"] for s in episode_steps for b in branches.get(s["step_id"], []))
        written.append(({"path": rel, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                         "steps": len(step_ids), "branches": len(branch_ids)}, step_ids + branch_ids))
    return written


def export_atif(lake, catalog_path: str | None, dataset_ref: str, out: str, include_simulated: bool = False,
                executor: str = "auto", ray_address: str | None = None) -> dict:
    """Write one ATIF trajectory.json per episode of `dataset_ref` (NAME or NAME@VERSION) under `out`
    (a directory path or fsspec URL), its manifest, and its catalog lineage, one part group per task on the
    executor (memory follows the part size). Returns the manifest."""
    lake = lake if isinstance(lake, Lake) else Lake(lake)
    out_lake = Lake(out)
    with open_catalog(lake, catalog_path) as cat:
        version = resolve(cat, dataset_ref, lake)
        config = {"include_simulated": include_simulated}
        export_id = xxhash.xxh64_hexdigest(orjson.dumps(
            {"dataset": version.dataset, "version": version.version, "out": out, "kind": "atif", "config": config},
            option=orjson.OPT_SORT_KEYS))
        groups = part_groups(version) or [{t: version.parts.get(t, []) for t in ("episodes", "steps")}]
        job = AtifJob(lake.url, out, version.parts.get("branches", []) if include_simulated else [])
        chosen = executors.choose(executor, ray_address, group_sizes(lake, groups), BYTES_PER_S)
        files: list[dict] = []
        lineage = Lineage(export_id)
        try:
            for written in executors.run_ordered(atif_group, groups, job, executor=chosen, ray_address=ray_address,
                                                 name=group_stem):
                files += [entry for entry, _ in written]
                if written:
                    lineage.add_files([entry["path"] for entry, _ in written], [ids for _, ids in written])
        except BaseException:
            lineage.remove()
            raise
        files.sort(key=lambda f: f["path"])
        manifest = {"export_id": export_id, "kind": "atif", "format": SCHEMA_VERSION, "dataset": version.dataset,
                    "version": version.version, "config": config, "rows": len(files), "episodes": len(files),
                    "steps": sum(f["steps"] for f in files), "branches": sum(f["branches"] for f in files),
                    "shards": files}
        out_lake.write_bytes_atomic(out_lake.path("manifest.json"), orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
        record_export(lake, cat, "atif", SCHEMA_VERSION, version, out, manifest, lineage)
    return manifest
