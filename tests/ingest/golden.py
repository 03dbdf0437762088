"""Goldens of what a person counts in a source: episodes, their steps' action kinds and rewards, the terminal
flag, outcome and reward, quarantine rows. Each golden file says in `read_from` what raw files it was read
against; `counted(query)` is the same view of an ingested lake, episodes in their first step's order."""

from __future__ import annotations

import json
from pathlib import Path


def counted(query) -> dict:
    episodes = []
    for ep in query("SELECT * FROM episodes"):
        steps = query(f"SELECT * FROM steps WHERE episode_id = '{ep['episode_id']}' ORDER BY step_index")
        episodes.append({"steps": len(steps), "kinds": [s["action"]["kind"] for s in steps],
                         "rewards": [s["reward"] for s in steps], "terminal": steps[-1]["is_terminal"],
                         "outcome": ep["outcome"], "reward": ep["reward"],
                         "_first": json.loads(ep["env"] or "{}").get("local_time_first") or ""})
    episodes.sort(key=lambda e: e.pop("_first"))
    rules = sorted(r["rule"] for r in query("SELECT rule FROM quarantine"))
    return {"episodes": episodes, "quarantine": rules}


def check(path: Path, query) -> None:
    golden = json.loads(path.read_text())
    assert counted(query) == {k: golden[k] for k in ("episodes", "quarantine")}
