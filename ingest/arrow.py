"""Readers' records to schema-v1 Arrow tables. Computes the derived step fields (ids, first/last/terminal)
so no reader has to."""

from __future__ import annotations

import orjson
import pyarrow as pa

from ingest.record import Episode, Rejected, episode_id, utc
from schemas import v1
from schemas.branches import branch_key


class TableBuilder:
    """Accumulates the rows of one task; `tables()` returns the Arrow tables."""

    def __init__(self, run_id: str, stage: str = "ingest"):
        self.run_id, self.stage = run_id, stage
        self.episodes: list[dict] = []
        self.steps: dict[str, list] = {name: [] for name in v1.STEPS.names}
        self.quarantine: list[dict] = []
        self.branches: list[dict] = []

    def add_episode(self, ep: Episode, *, source_format: str, source_uri: str, source_sha256: str,
                    ingestor_version: str) -> str:
        eid = episode_id(source_format, source_uri, ep.key)
        n = len(ep.steps)
        timestamps = [utc(s.timestamp) for s in ep.steps]
        known = [t for t in timestamps if t is not None]
        self.episodes.append({
            "episode_id": eid, "domain": ep.domain, "platform": ep.platform, "source_format": source_format,
            "task": ep.task, "agent": ep.agent, "num_steps": n, "outcome": ep.outcome, "reward": ep.reward,
            "started_at": min(known) if known else None, "ended_at": max(known) if known else None,
            "env": orjson.dumps(ep.env, option=orjson.OPT_SORT_KEYS).decode(), "license": ep.license,
            "source_uri": source_uri, "source_sha256": source_sha256, "ingest_run_id": self.run_id,
            "ingestor_version": f"{source_format}/{ingestor_version}", "_run_id": self.run_id,
        })
        cols = self.steps
        for i, step in enumerate(ep.steps):
            last = i == n - 1
            cols["episode_id"].append(eid)
            cols["step_index"].append(i)
            cols["step_id"].append(f"{eid}:{i}")
            cols["domain"].append(ep.domain)
            cols["observation"].append(vars(step.observation))
            cols["action"].append(vars(step.action) if step.action is not None else None)
            cols["final_observation"].append(vars(ep.final_observation) if last and ep.final_observation else None)
            cols["timestamp"].append(timestamps[i])
            cols["reward"].append(step.reward)
            cols["is_first"].append(i == 0)
            cols["is_last"].append(last)
            cols["is_terminal"].append(last and ep.terminated)
            cols["reasoning"].append(step.reasoning)
            cols["origin"].append("real")
            cols["parent_step_id"].append(None)
            cols["branch_id"].append(None)
            cols["labeler"].append(None)
            cols["_run_id"].append(self.run_id)
        for branch in ep.branches:
            parent = f"{eid}:{branch.step}"
            action = vars(branch.action)
            key = branch_key(parent, action)
            self.branches.append({
                "step_id": f"{parent}:sim-{(branch.request_key or key)[:16]}", "branch_id": key,
                "parent_step_id": parent, "episode_id": eid, "step_index": branch.step, "domain": ep.domain,
                "origin": branch.origin, "action": action, "next_observation": vars(branch.next_observation),
                "strategy": branch.strategy, "labeler": branch.labeler, "request_key": branch.request_key,
                "_run_id": self.run_id})
        return eid

    def add_rejected(self, rej: Rejected, *, source_uri: str) -> None:
        self.quarantine.append({
            "stage": self.stage, "rule": rej.rule, "reason": rej.reason, "source_uri": source_uri,
            "location": rej.location, "line": rej.line, "record_id": rej.record_id,
            "snippet": rej.snippet[:2000] if rej.snippet else None, "snippet_blob": None, "_run_id": self.run_id,
        })

    @property
    def num_steps(self) -> int:
        return len(self.steps["episode_id"])

    def tables(self) -> dict[str, pa.Table]:
        return {
            "episodes": pa.Table.from_pylist(self.episodes, schema=v1.EPISODES),
            "steps": pa.Table.from_pydict(self.steps, schema=v1.STEPS),
            "branches": pa.Table.from_pylist(self.branches, schema=v1.BRANCHES),
            "quarantine": pa.Table.from_pylist(self.quarantine, schema=v1.QUARANTINE),
        }
