"""Building small dataset versions straight from step rows, for export tests that need shapes the bundled
samples lack (many tasks, terminal actions, simulated branches)."""

from __future__ import annotations

import orjson
import pyarrow as pa

from catalog import Catalog
from pipelines.infra.datasets import write_part
from pipelines.infra.lake import Lake
from schemas import BRANCHES, EPISODES, STEPS


def step_row(episode_id: str, index: int, domain: str, obs_text: str | None, action: dict, *,
             final_text: str | None = None) -> dict:
    return {"episode_id": episode_id, "step_index": index, "step_id": f"{episode_id}:{index}",
            "domain": domain,
            "observation": {"kind": "terminal" if obs_text is not None else "none", "text": obs_text},
            "action": action,
            "final_observation": {"kind": "terminal", "text": final_text} if final_text is not None else None,
            "origin": "real", "is_first": index == 0, "is_last": False, "is_terminal": False}


def branch_row(parent_step_id: str, action: dict, predicted: str, *, kind: str = "terminal",
               origin: str = "simulated", suffix: str = "x", labeler: str = '{"model": "test"}') -> dict:
    """A `branches` row leaving from `parent_step_id` ("{episode}:{index}")."""
    episode_id, index = parent_step_id.rsplit(":", 1)
    return {"step_id": f"{parent_step_id}:sim-{suffix}", "branch_id": f"b-{suffix}", "parent_step_id": parent_step_id,
            "episode_id": episode_id, "step_index": int(index), "domain": None, "origin": origin, "action": action,
            "next_observation": {"kind": kind, "text": predicted}, "strategy": "test", "labeler": labeler,
            "request_key": None}


def episode_row(episode_id: str, domain: str, task: str | None, env: dict | None = None) -> dict:
    return {"episode_id": episode_id, "domain": domain, "platform": "linux", "source_format": "test",
            "task": task, "outcome": "unknown", "env": orjson.dumps(env or {}).decode()}


def commit_dataset(lake_url: str, dataset: str, episodes: list[dict], steps: list[dict],
                   branches: list[dict] | None = None) -> int:
    """Write the rows as a new version of `dataset` in the lake's catalog, adding a steps part (when `steps`
    is not empty), an episodes part and a branches part (when given) to the current version's parts.
    Returns the version."""
    lake = Lake(lake_url)
    with Catalog(lake.path("catalog.duckdb"), lake.url) as cat:
        current = cat.current_version(dataset)
        parts = {t: list(p) for t, p in (current.parts.items() if current else [])}
        if episodes:
            ep = pa.Table.from_pylist(episodes, schema=EPISODES)
            parts.setdefault("episodes", []).append(write_part(lake, dataset, "episodes", ep, "test"))
        if steps:
            st = pa.Table.from_pylist(steps, schema=STEPS)
            parts.setdefault("steps", []).append(write_part(lake, dataset, "steps", st, "test"))
        if branches:
            br = pa.Table.from_pylist(branches, schema=BRANCHES)
            parts.setdefault("branches", []).append(write_part(lake, dataset, "branches", br, "test"))
        version, _ = cat.commit_version(dataset, "test-run", parts, episodes=len(episodes), steps=len(steps),
                                        quarantined=0)
    return version
