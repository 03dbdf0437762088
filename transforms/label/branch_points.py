"""Branch points: the steps of a real trajectory where a counterfactual action replaces the real one.

A branch at step t keeps the real history (steps 0..t-1 and their next observations) and the observation of
step t (the state the agent acted in), and swaps in another action. Step t therefore needs an observation
with text. Modes:

- `every`: every such step;
- `random`: K of them per episode, drawn with a generator seeded by (seed, episode id), so the same seed
  picks the same steps whatever the order episodes arrive in;
- `changed`: only steps whose real action changed the state (the next observation's text differs from the
  current one; the last step compares with the final observation, and is skipped when there is none).
"""

from __future__ import annotations

import hashlib
import random

MODES = ("every", "random", "changed")


def _text(observation: dict | None) -> str | None:
    return (observation or {}).get("text") or None


def next_observation(steps: list[dict], t: int) -> dict | None:
    """The observation after step t's action: step t+1's, or the final observation on the last step."""
    return steps[t + 1]["observation"] if t + 1 < len(steps) else steps[t].get("final_observation")


def candidates(steps: list[dict]) -> list[int]:
    """Indexes of steps (ordered by step_index) whose observation has text and whose history is complete
    (every earlier step has an action: observation-only records, such as a lone UI dump, have none)."""
    out = []
    for t, step in enumerate(steps):
        if _text(step["observation"]):
            out.append(t)
        if step.get("action") is None:
            break
    return out


def state_changed(steps: list[dict], t: int) -> bool:
    after = _text(next_observation(steps, t))
    return after is not None and after != _text(steps[t]["observation"])


def episode_rng(seed: int, episode_id: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}\x1f{episode_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def choose(episode_id: str, steps: list[dict], mode: str = "random", k: int = 2, seed: int = 0) -> list[int]:
    """Branch step indexes (ascending) for one episode's real steps, ordered by step_index.
    Raises ValueError for an unknown mode or a negative k."""
    if mode not in MODES:
        raise ValueError(f"unknown branch point mode {mode!r} (modes: {', '.join(MODES)})")
    if k < 0:
        raise ValueError(f"per-episode count must be >= 0, got {k}")
    points = candidates(steps)
    if mode == "changed":
        return [t for t in points if state_changed(steps, t)]
    if mode == "random" and len(points) > k:
        return sorted(episode_rng(seed, episode_id).sample(points, k))
    return points
