"""AgentWorld chat samples for transitions, fitted to a token budget: the piece SFT, RL and the chat-framed
CPT renderings share. Each trajectory's turn texts and token counts are computed once, then reused by all
of its transitions.
"""

from __future__ import annotations

from dataclasses import dataclass

from transforms import agentworld
from transforms.export.budget import TokenCounter, first_kept_turn
from transforms.export.transitions import Trajectory, Transition


@dataclass
class Sample:
    transition: Transition
    messages: list[dict]  # system, then user/assistant pairs, then the final user turn (the action)
    target: str  # the assistant message the model learns: marker + next observation
    first_turn: int  # 0-based index of the oldest history turn kept (> 0 when trimmed)
    tokens: int  # prompt + target, by the counter


def _state_block(state: str | None) -> str:
    return "" if state is None else f"**Current State:**\n{state}\n\n"


class TrajectoryRenderer:
    """Renders the transitions of one trajectory; `sample(t)` is one SFT/RL sample."""

    def __init__(self, trajectory: Trajectory, counter: TokenCounter):
        self.trajectory, self.counter = trajectory, counter
        domain = trajectory.domain
        self.system = agentworld.system_prompt(domain, trajectory.tools)
        turns = trajectory.turns
        self.users = [agentworld.action_turn(i + 1, turn.action, None, domain) for i, turn in enumerate(turns)]
        self.assistants = [agentworld.observation_turn(turn.observation) for turn in turns]
        # the state shown when the kept history starts at turn k: the observation before action k
        self.states = [trajectory.first_state] + [turn.observation for turn in turns]
        self._user_tokens = [counter.message(u) for u in self.users]
        self._assistant_tokens = [counter.message(a) for a in self.assistants]
        self._state_tokens = [counter.count(_state_block(s)) if s is not None else 0 for s in self.states]
        self._system_tokens = counter.message(self.system)

    def user(self, i: int, with_state: bool) -> str:
        turn = self.trajectory.turns[i]
        state = self.states[i] if with_state else None
        return agentworld.action_turn(i + 1, turn.action, state, self.trajectory.domain)

    def sample(self, t: int, max_tokens: int | None = None) -> Sample | None:
        """History turns [k, t) + action t -> observation t+1, with the oldest turns dropped until it fits.
        None when it cannot fit even without history."""
        pairs = [self._user_tokens[i] + self._assistant_tokens[i] for i in range(t)]
        fixed = self._system_tokens + self._user_tokens[t] + self._assistant_tokens[t]
        k = first_kept_turn(fixed, pairs, self._state_tokens[: t + 1], max_tokens)
        if k is None:
            return None
        messages = [{"role": "system", "content": self.system}]
        for i in range(k, t):
            messages.append({"role": "user", "content": self.user(i, with_state=i == k)})
            messages.append({"role": "assistant", "content": self.assistants[i]})
        messages.append({"role": "user", "content": self.user(t, with_state=k == t)})
        tokens = fixed + sum(pairs[k:]) + self._state_tokens[k]
        return Sample(Transition(self.trajectory, t), messages, self.assistants[t], k, tokens)

    def turn_tokens(self, i: int, with_state: bool) -> int:
        return self._user_tokens[i] + self._assistant_tokens[i] + (self._state_tokens[i] if with_state else 0)
