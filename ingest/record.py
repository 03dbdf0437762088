"""What a format reader yields: `Episode` (with its `Step`s) or `Rejected` (a record it could not use).

A reader never builds Arrow, never writes files and never knows about Ray or the catalog: it turns one
`Source` into records; `ingest.arrow` turns records into schema-v1 tables.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from schemas.v1 import ENV_WARNINGS


# JSON-text fields (`ui_tree`, `element`, `arguments`, `raw`) take a str, or the UTF-8 bytes orjson.dumps
# returns: Arrow stores bytes as they are, skipping a decode and a re-encode of large trees.
JSONText = str | bytes


@dataclass
class Observation:
    kind: str = "none"
    text: str | None = None
    ui_tree: JSONText | None = None
    url: str | None = None
    title: str | None = None
    screenshot: str | None = None  # blob ref "sha256:<hex>"
    exit_code: int | None = None
    is_error: bool | None = None
    width: int | None = None
    height: int | None = None


@dataclass
class Action:
    kind: str
    x: float | None = None  # normalized to [0, 1]
    y: float | None = None
    x2: float | None = None
    y2: float | None = None
    text: str | None = None
    keys: list[str] | None = None
    element: JSONText | None = None  # id / selector / bounds of the target
    direction: str | None = None
    tool_name: str | None = None
    arguments: JSONText | None = None
    code: str | None = None
    duration_s: float | None = None
    raw: JSONText | None = None  # the source's own action, verbatim


@dataclass
class Step:
    observation: Observation
    action: Action
    timestamp: dt.datetime | None = None  # timezone-aware UTC, or None when the source has none
    reward: float | None = None
    reasoning: str | None = None
    action_inferred: bool = False  # read back from what the environment showed, not recorded (schemas.v1)


class StepColumns:
    """An episode's steps as plain values, for readers of long logs (`Episode.steps` then holds it instead of
    a list of `Step`): per step a tuple of an `Observation`'s values in its field order (kind, text, ui_tree,
    url, title, screenshot, exit_code, is_error, width, height), trailing Nones left out, one of an `Action`'s
    (kind, x, y, x2, y2, text, keys, element, direction, tool_name, arguments, code, duration_s, raw) or None,
    and a time; reward, reasoning and `action_inferred` where set. `ingest.arrow.TableBuilder` turns the values
    into columns and checks them as it checks `Step`s (`ingest.value_steps`); a step object is made only where
    one is asked for (iterating, indexing: tests, other consumers). Worth it for episodes of ~60 steps and more
    (a log's sessions): each episode's columns cost ~65 us to build, a step ~1.3 us less than as objects."""

    __slots__ = ("observations", "actions", "timestamps", "rare")

    def __init__(self):
        self.observations: list[tuple] = []
        self.actions: list[tuple | None] = []
        self.timestamps: list[dt.datetime | None] = []
        self.rare: dict[int, tuple] = {}  # step index -> (reward, reasoning, action_inferred): few steps have one

    def add(self, observation: tuple, action: tuple | None, timestamp: dt.datetime | None = None,
            reward: float | None = None, reasoning: str | None = None, inferred: bool = False) -> None:
        self.observations.append(observation)
        self.actions.append(action)
        self.timestamps.append(timestamp)
        if reward is not None or reasoning is not None or inferred:
            self.rare[len(self.timestamps) - 1] = (reward, reasoning, inferred)

    def add_step(self, step: Step) -> None:
        """A step made as objects (an unusual record of a log read as values)."""
        a = step.action
        self.add(field_values(step.observation), field_values(a) if a is not None else None, step.timestamp,
                 step.reward, step.reasoning, step.action_inferred)

    def __len__(self) -> int:
        return len(self.timestamps)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        a = self.actions[i]
        i = range(len(self))[i]
        reward, reasoning, inferred = self.rare.get(i, (None, None, False))
        return Step(Observation(*self.observations[i]), Action(*a) if a is not None else None, self.timestamps[i],
                    reward, reasoning, inferred)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def field_values(record: Observation | Action) -> tuple:
    """An observation's or an action's values in its field order, as `StepColumns` takes them."""
    return tuple(vars(record).values())


@dataclass
class Branch:
    """A counterfactual recorded beside a real step (an export of ours carries them): the step it leaves
    from, the other action, and the state a world model predicted. Becomes a row of `branches`."""

    step: int  # index of the parent step in the episode's steps
    origin: str  # simulated | perturbed
    action: Action
    next_observation: Observation
    strategy: str | None = None
    labeler: str | None = None
    request_key: str | None = None


@dataclass
class Episode:
    key: str  # identity of the episode inside its source (e.g. "" for one-episode files, a line number)
    domain: str
    platform: str
    steps: list[Step] | StepColumns
    task: str | None = None
    agent: str | None = None
    outcome: str = "unknown"
    reward: float | None = None
    terminated: bool = False  # True when the episode truly ended (the last step is terminal)
    final_observation: Observation | None = None
    env: dict[str, Any] = field(default_factory=dict)
    license: str | None = None
    branches: list[Branch] = field(default_factory=list)


@dataclass
class Rejected:
    """A record (or a whole file) a reader could not use; it lands in the quarantine."""

    rule: str  # stable id, e.g. "parse_error", "missing_file", "bad_crc", "forbidden_pickle_class"
    reason: str  # one line a person can act on
    location: str | None = None  # file inside the source, record key...
    line: int | None = None
    snippet: str | None = None
    record_id: str | None = None


MAX_WARNINGS = 100  # per episode; past this they are counted in env["ingest_warnings_left_out"]


def warn(env: dict[str, Any], rule: str, reason: str) -> None:
    """Say in an episode's `env` that something unfamiliar was kept raw (`schemas.v1.ENV_WARNINGS`); the same
    warning twice is kept once."""
    found = env.setdefault(ENV_WARNINGS, [])
    entry = {"rule": rule, "reason": reason}
    if entry in found:
        return
    if len(found) < MAX_WARNINGS:
        found.append(entry)
    else:
        env[ENV_WARNINGS + "_left_out"] = env.get(ENV_WARNINGS + "_left_out", 0) + 1


def episode_without_steps(reason: str, location: str | None, outcome: str, reward: float | None,
                          **facts: Any) -> Rejected:
    """The row an episode leaves when it cannot be split into steps (rule `empty_episode`, the one every reader
    uses): its outcome and reward said in the reason and kept as JSON in the snippet (with `facts`: task,
    agent, terminated...), so the run's result is never lost with its steps. `record_id` in `facts` names the
    episode's key."""
    record_id = facts.pop("record_id", None)
    record = {"outcome": outcome, "reward": reward, **{k: v for k, v in facts.items() if v is not None}}
    return Rejected("empty_episode", f"{reason}; the episode's outcome ({outcome}, reward {reward}) is "
                    "kept in this row", location, record_id=record_id, snippet=json.dumps(record, default=str))


def episode_id(source_format: str, source_uri: str, key: str) -> str:
    """Deterministic id: the same input ingested again gets the same id."""
    return hashlib.sha256(f"{source_format}\x1f{source_uri}\x1f{key}".encode()).hexdigest()[:32]


def utc(ts: dt.datetime | None) -> dt.datetime | None:
    """A naive datetime is taken as UTC; an aware one is converted."""
    if ts is None:
        return None
    return ts.replace(tzinfo=dt.timezone.utc) if ts.tzinfo is None else ts.astimezone(dt.timezone.utc)


def clamp01(value: float) -> float:
    return 0.0 if value < 0 else 1.0 if value > 1 else value
