"""AgentWorld chat samples for transitions, fitted to a token budget: the piece SFT, RL and the chat-framed
CPT renderings share. Each trajectory's turn texts and token counts are computed once, then reused by all
of its transitions, and JSON-lines exports can take a sample's messages pre-encoded (`messages_json`), so
the history a trajectory's samples share is escaped once, not once per sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from transforms import agentworld
from transforms.export.budget import TokenCounter, first_kept_turn
from transforms.export.transitions import Trajectory, Transition


@dataclass
class Sample:
    transition: Transition
    # system, then user/assistant pairs, then the final user turn (the action); the dicts are shared with the
    # trajectory's other samples: read them, never change them
    messages: list[dict]
    target: str  # the assistant message the model learns: marker + next observation
    first_turn: int  # 0-based index of the oldest history turn kept (> 0 when trimmed)
    tokens: int  # prompt + target, by the counter


class TrajectoryRenderer:
    """Renders the transitions of one trajectory; `sample(t)` is one SFT/RL sample."""

    def __init__(self, trajectory: Trajectory, counter: TokenCounter):
        self.trajectory, self.counter = trajectory, counter
        domain = trajectory.domain
        self.system = agentworld.system_prompt(domain, trajectory.tools)
        turns = trajectory.turns
        # Every sample of the trajectory repeats its earlier turns: render each action once, here.
        self._blocks = [agentworld.action_block(turn.action, domain) for turn in turns]
        self.users = [agentworld.user_turn(i + 1, block) for i, block in enumerate(self._blocks)]
        self.assistants = [agentworld.observation_turn(turn.observation) for turn in turns]
        # the state shown when the kept history starts at turn k: the observation before action k
        self.states = [trajectory.first_state] + [turn.observation for turn in turns]
        self._users_with_state: dict[int, str] = {}
        # the message dicts every sample shares: system, then user/assistant per turn (user turn i at 2i)
        self._system_message = {"role": "system", "content": self.system}
        self._history = []
        for user, assistant in zip(self.users, self.assistants):
            self._history += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        self._system_json, self._history_json = None, None  # messages_json's, built on first use
        self._user_tokens = [counter.message(u) for u in self.users]
        self._assistant_tokens = [counter.message(a) for a in self.assistants]
        self._pair_tokens = [u + a for u, a in zip(self._user_tokens, self._assistant_tokens)]
        self._state_tokens = [counter.count(agentworld.state_block(s)) if s is not None else 0 for s in self.states]
        self._system_tokens = counter.message(self.system)

    def user(self, i: int, with_state: bool) -> str:
        """The user message of turn i, with the `**Current State:**` block when it opens the kept history."""
        if not with_state or self.states[i] is None:
            return self.users[i]
        text = self._users_with_state.get(i)
        if text is None:
            text = self._users_with_state[i] = agentworld.user_turn(i + 1, self._blocks[i], self.states[i])
        return text

    def sample(self, t: int, max_tokens: int | None = None) -> Sample | None:
        """History turns [k, t) + action t -> observation t+1, with the oldest turns dropped until it fits.
        None when it cannot fit even without history."""
        pairs = self._pair_tokens[:t]
        fixed = self._system_tokens + self._user_tokens[t] + self._assistant_tokens[t]
        k = first_kept_turn(fixed, pairs, self._state_tokens[: t + 1], max_tokens)
        if k is None:
            return None
        # the oldest kept turn shows its state; the rest are the shared messages up to the final user turn t
        messages = [self._system_message, {"role": "user", "content": self.user(k, with_state=True)},
                    *self._history[2 * k + 1: 2 * t + 1]]
        tokens = fixed + sum(pairs[k:]) + self._state_tokens[k]
        return Sample(Transition(self.trajectory, t), messages, self.assistants[t], k, tokens)

    def messages_json(self, sample: Sample) -> list[orjson.Fragment]:
        """`sample.messages` as the JSON orjson writes for them, for records that are written as JSON lines
        (a Parquet writer cannot take them). The shared messages are encoded once per trajectory."""
        if self._history_json is None:
            self._system_json = orjson.Fragment(orjson.dumps(self._system_message))
            self._history_json = [orjson.Fragment(orjson.dumps(m)) for m in self._history]
        k, t = sample.first_turn, sample.transition.t
        return [self._system_json, orjson.Fragment(orjson.dumps(sample.messages[1])),
                *self._history_json[2 * k + 1: 2 * t + 1]]

    def turn_tokens(self, i: int, with_state: bool) -> int:
        return self._user_tokens[i] + self._assistant_tokens[i] + (self._state_tokens[i] if with_state else 0)
