"""Terminal records as the shell screen the benchmark shows (its terminal rows: `**Current State:**` and every
observation are the terminal as it looks, prompt, echoed command and output).

Agent harnesses wrap the screen in their own text: Terminus sends `New Terminal Output:` before each
command's screen, and its first message is its own instructions ending in `Current terminal state:` and the
screen; other harnesses hand over a task text as the first state. `screen_text` keeps what follows the last
such header. A trajectory whose first state is not a screen (no shell prompt in it) starts at the first real
screen: the turns before it are left out (counted by the caller), and that screen is the first state. The
lake keeps everything: this is how the export shows it.
"""

from __future__ import annotations

import dataclasses
import re

from transforms.export.transitions import Trajectory

_HEADERS = ("New Terminal Output:", "Current Terminal Screen:", "Current terminal state:")
# a shell prompt at the start of a line: user@host:path# or $
_PROMPT = re.compile(r"^[\w.-]+@[\w.-]+:[^\n]*?[#$](?: |$)", re.M)


def screen_text(text: str | None) -> str | None:
    """The screen in a harness's message: what follows its last header, else the text as it is."""
    if not text:
        return text
    at = max((text.rfind(h + "\n"), h) for h in _HEADERS)
    if at[0] < 0:
        return text
    return text[at[0] + len(at[1]) + 1:].lstrip("\n").rstrip()


def is_screen(text: str | None) -> bool:
    return bool(text) and _PROMPT.search(text) is not None


def shell_screens(trajectory: Trajectory) -> tuple[Trajectory, int]:
    """(the trajectory with its states as shell screens, the number of its transitions left out before the
    first screen)."""
    turns = [t if t.observation is None else dataclasses.replace(t, observation=screen_text(t.observation))
             for t in trajectory.turns]
    first = screen_text(trajectory.first_state)
    if first is None or is_screen(first):
        return dataclasses.replace(trajectory, first_state=first, turns=turns), 0
    k = next((i for i, t in enumerate(turns) if is_screen(t.observation)), None)
    if k is None:  # no screen anywhere: the turns stay, without a state that is not one
        return dataclasses.replace(trajectory, first_state=None, turns=turns), 0
    opening = turns[k]
    dropped = sum(1 for t in range(trajectory.start, k + 1) if turns[t].observation is not None)
    return dataclasses.replace(trajectory, first_state=opening.observation,
                               first_state_step_id=opening.observation_step_id,
                               first_state_origin=opening.observation_origin, turns=turns[k + 1:],
                               start=max(0, trajectory.start - k - 1)), dropped
