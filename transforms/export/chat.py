"""AgentWorld chat samples for transitions, fitted to a token budget: the piece SFT, RL and the chat-framed
CPT renderings share. Each trajectory's turn texts and token counts are computed once, then reused by all
of its transitions, and JSON-lines exports can take a sample's messages pre-encoded (`messages_json`), so
the history a trajectory's samples share is escaped once, not once per sample.

Every record numbers its turns from 1. A record whose oldest turns were trimmed starts with the
`agentworld.omitted_line`, then its first kept turn with the state before it (and the task where the
domain's prompt lists it); its messages are rendered for it and its tokens counted exactly, so trimming
never leaves a record over the budget or with a layout its prompt does not define.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import orjson

from transforms import agentworld
from transforms.export import screenshot_states
from transforms.export.budget import TokenCounter, first_kept_turn
from transforms.export.transitions import Trajectory, Transition


@dataclass
class Sample:
    transition: Transition
    # system, then user/assistant pairs, then the final user turn (the action); the dicts may be shared with
    # the trajectory's other samples: read them, never change them
    messages: list[dict]
    target: str  # the assistant message the model learns: the next observation in the domain's answer form
    first_turn: int  # 0-based index of the oldest history turn kept (> 0 when trimmed)
    tokens: int  # prompt + target, by the counter


class TrajectoryRenderer:
    """Renders the transitions of one trajectory; `sample(t)` is one SFT/RL sample."""

    def __init__(self, trajectory: Trajectory, counter: TokenCounter, demonstrations: str = ""):
        self.trajectory, self.counter = trajectory, counter
        domain = trajectory.domain
        turns = trajectory.turns
        self.system = agentworld.system_prompt(
            domain, agentworld.prompt_tools(trajectory.tools, [turn.action for turn in turns]), demonstrations)
        self.task = agentworld.task_block(domain, trajectory.task)
        # search's Simulation Instruction, after the trajectory's first action (its prompt's input order)
        self.instruction = agentworld.simulation_instruction(domain, trajectory.task,
                                                             agentworld.reference_answer(trajectory.env))
        # Every sample of the trajectory repeats its earlier turns: render each action once, here.
        self._blocks = [screenshot_states.block(turn, domain) for turn in turns]
        # history shows a screenshot-only state as the recipe's `screenshot_states` says (`Turn.shown`)
        self.assistants = [agentworld.observation_turn(turn.shown, domain) for turn in turns]
        # the state shown when a record starts at turn k: the observation before action k
        self.states = [trajectory.first_state] + [turn.shown for turn in turns]
        # GUI domains show the state before every action; the others before the record's first one only
        self.every_state = agentworld.state_every_turn(domain)
        # the untrimmed record's user messages, shared by every sample that keeps the whole history
        self.users = [agentworld.user_turn(i + 1, block + self.instruction if i == 0 else block,
                                           self.states[0] if i == 0 else self._turn_state(i),
                                           task=self.task if i == 0 else "") for i, block in enumerate(self._blocks)]
        self._system_message = {"role": "system", "content": self.system}
        self._history = []
        for user, assistant in zip(self.users, self.assistants):
            self._history += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        self._system_json, self._history_json = None, None  # messages_json's, built on first use
        bare = [agentworld.user_turn(i + 1, block, self._turn_state(i)) for i, block in enumerate(self._blocks)]
        self._user_tokens = [counter.message(u) for u in bare]
        self._assistant_tokens = [counter.message(a) for a in self.assistants]
        self._pair_tokens = [u + a for u, a in zip(self._user_tokens, self._assistant_tokens)]
        # what a record starting at turn k adds to its first user turn: omitted line, task, state
        self._opening_tokens = [counter.count(self._opening(k, task=True)) for k in range(len(self.states))]
        self.system_tokens = counter.message(self.system)

    def with_system(self, system: str) -> "TrajectoryRenderer":
        """The same renderer with another system prompt (a prompt-template variant): the turns are shared."""
        other = copy.copy(self)
        other.system = system
        other._system_message = {"role": "system", "content": system}
        other._system_json, other._history_json = None, None
        other.system_tokens = self.counter.message(system)
        return other

    def _turn_state(self, i: int) -> str | None:
        """The state a turn after a record's first shows: the screen before action i in the GUI domains."""
        return agentworld.observation_text(self.states[i]) if self.every_state and i > 0 else None

    def _opening(self, first: int, task: bool) -> str:
        """What a record's first turn adds to the turn's own text: the omitted line, the task and (where later
        turns show none) the state."""
        state = None if self.every_state and first > 0 else self.states[first]
        return (agentworld.omitted_line(first) + (self.task if task else "")
                + (agentworld.state_block(state) if state is not None else "")
                + (self.instruction if task and first == 0 else ""))

    def user(self, i: int, first: int, task: bool = True) -> str:
        """The user message of turn i in a record whose first turn is `first`: numbered from 1; the first one
        opens with the omitted-turns line, the task (unless `task` is False: CPT documents show none) and
        the state before it."""
        if first == 0 and task:
            return self.users[i]
        if i != first:
            return agentworld.user_turn(i - first + 1, self._blocks[i], self._turn_state(i))
        state = self._turn_state(i) if i > 0 and self.every_state else self.states[i]
        return agentworld.user_turn(1, self._blocks[i], state, task=self.task if task else "", omitted=first)

    def sample(self, t: int, max_tokens: int | None = None) -> Sample | None:
        """History turns [k, t) + action t -> observation t+1, with the oldest turns dropped until it fits.
        None when it cannot fit even without history."""
        pairs = self._pair_tokens[:t]
        fixed = self.system_tokens + self._user_tokens[t] + self._assistant_tokens[t]
        k = first_kept_turn(fixed, pairs, self._opening_tokens[: t + 1], max_tokens)
        if k == 0:
            messages = [self._system_message, *self._history[: 2 * t + 1]]
            tokens = fixed + sum(pairs) + self._opening_tokens[0]
            return Sample(Transition(self.trajectory, t), messages, self.assistants[t], 0, tokens)
        while k is not None and k <= t:
            # a trimmed record is rendered for itself (renumbered) and counted exactly
            messages = [self._system_message]
            for i in range(k, t):
                messages += [{"role": "user", "content": self.user(i, k)},
                             {"role": "assistant", "content": self.assistants[i]}]
            messages.append({"role": "user", "content": self.user(t, k)})
            tokens = sum(self.counter.message(m["content"]) for m in messages) + self._assistant_tokens[t]
            if max_tokens is None or tokens <= max_tokens:
                return Sample(Transition(self.trajectory, t), messages, self.assistants[t], k, tokens)
            k += 1
        return None

    def messages_json(self, sample: Sample) -> list[orjson.Fragment]:
        """`sample.messages` as the JSON orjson writes for them, for records that are written as JSON lines
        (a Parquet writer cannot take them). The untrimmed history is encoded once per trajectory."""
        if sample.first_turn:
            return [orjson.Fragment(orjson.dumps(m)) for m in sample.messages]
        if self._history_json is None:
            self._system_json = orjson.Fragment(orjson.dumps(self._system_message))
            self._history_json = [orjson.Fragment(orjson.dumps(m)) for m in self._history]
        return [self._system_json, *self._history_json[: 2 * sample.transition.t + 1]]

    @property
    def action_blocks(self) -> list[str]:
        """Each turn's rendered `**Action:**` block."""
        return self._blocks

    def turn_tokens(self, i: int, first: int, task: bool = False) -> int:
        """Tokens of turn i (action and observation messages) in a record whose first turn is `first`."""
        extra = 0
        if i == first:
            extra = self._opening_tokens[i] if task else self.counter.count(self._opening(i, task=False))
        return self._user_tokens[i] + self._assistant_tokens[i] + extra
