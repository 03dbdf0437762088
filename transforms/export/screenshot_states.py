"""How an export's history shows screenshot-only states (the recipe option `screenshot_states`).

A GUI run that records only screenshots (cua-agent's computer-use loops, OSWorld's screenshot observation type)
has states with a blob and no text. No record ever targets such a state (a target is never invented, see
`transitions`), but the records after it show it in their history: as `agentworld.EMPTY_OBSERVATION` by
default, which teaches a text world model that the screen answered nothing. The modes:

- `no-output` (the default; unset is the same and leaves the manifest as before): `(no output)`.
- `placeholder`: `(screenshot only: sha256:<hex>)`, naming the blob, in history and as a current state; CPT
  documents show it too, without loss (nothing there for a model to predict).
- `drop`: the screenshot-only states are left out and the action chain kept: the actions taken from one text
  state to the next are one turn, their blocks listed in order in its `**Action:**` fence, so every observation
  a record shows is text. The folded turns' steps stay in each record's lineage.

A screenshot-only state after the last action has nothing to fold into and stays as it is (no record targets
it); a state with neither text nor screenshot (nothing recorded) is not screenshot-only and is left alone.
"""

from __future__ import annotations

import copy
import dataclasses

from transforms import agentworld
from transforms.export.transitions import Trajectory, Turn

MODES = ("no-output", "placeholder", "drop")
DEFAULT = "no-output"


def placeholder(blob: str) -> str:
    """The text history shows for a screenshot-only state in `placeholder` mode."""
    return f"(screenshot only: {blob})"


def block(turn: Turn, domain: str | None) -> str:
    """The turn's rendered `**Action:**` block: its own action, after those of the turns folded into it."""
    own = (agentworld.source_action_block(turn.action_text) if turn.action_text
           else agentworld.action_block(turn.action, domain, turn.screen))
    if not turn.folded:
        return own
    fence_end = own.find("\n", own.find("\n") + 1) + 1  # `**Action:**` and the fence's opening line
    actions = [_inner(block(t, domain)) for t in turn.folded] + [_inner(own)]
    return own[:fence_end] + "\n".join(actions) + "\n```"


def _inner(rendered: str) -> str:
    """A block's action, without its heading and fence (`recipe.action_text`, here to keep imports one way)."""
    first = rendered.find("\n", rendered.find("\n") + 1)
    last = rendered.rfind("\n")
    return rendered[first + 1:last] if 0 <= first < last else ""


def apply(trajectory: Trajectory, mode: str | None) -> tuple[Trajectory, int]:
    """(the trajectory as `mode` shows its screenshot-only states, how many states it changed)."""
    if mode in (None, DEFAULT):
        return trajectory, 0
    if mode == "placeholder":
        return _placeholders(trajectory)
    if mode == "drop":
        return _fold(trajectory)
    raise ValueError(f"unknown screenshot_states mode {mode!r} (modes: {', '.join(MODES)})")


def _placeholders(trajectory: Trajectory) -> tuple[Trajectory, int]:
    changed = 0
    turns = []
    for turn in trajectory.turns:
        if turn.observation is None and turn.screenshot:
            turn = dataclasses.replace(turn, history_text=placeholder(turn.screenshot))
            changed += 1
        turns.append(turn)
    out = copy.copy(trajectory)
    out.turns = turns
    if trajectory.first_state is None and trajectory.first_screenshot:  # a state, never a target
        out.first_state = placeholder(trajectory.first_screenshot)
        changed += 1
    return out, changed


def _fold(trajectory: Trajectory) -> tuple[Trajectory, int]:
    """Each turn whose next state is screenshot-only joins the turn after it; `start` (the first turn a branch
    line owns) moves to the turn that holds the old one."""
    turns, pending, start = [], [], 0
    for i, turn in enumerate(trajectory.turns):
        if i == trajectory.start:
            start = len(turns)
        if turn.observation is None and turn.screenshot and i + 1 < len(trajectory.turns):
            pending.append(turn)
            continue
        turns.append(dataclasses.replace(turn, folded=tuple(pending)) if pending else turn)
        pending = []
    folded = len(trajectory.turns) - len(turns)
    if not folded:
        return trajectory, 0
    out = copy.copy(trajectory)
    out.turns, out.start = turns, start
    return out, folded
