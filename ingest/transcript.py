"""One transcript core for every chat-shaped agent log: messages with tool calls and tool results -> an Episode.

mini-swe-agent, OpenHands, Inspect, Claude Code, Codex, MCP logs... all record a conversation: a system prompt,
the task as a user message, assistant turns that call tools, and the tools' results. A format module is a thin
adapter: it decodes its file (through `ingest.source.Source`), turns each record into a `Message`, and calls
this module once per episode. Everything a step is made of is decided here, once:

**How an adapter uses it.**

1. Build `Message`s in the order they happened. `role` is `system`, `user`, `assistant` or `tool`:
   - an assistant turn carries its `tool_calls` (`ToolCall(id, name, arguments, raw)`), its `text`, its
     `reasoning`, the `model` that wrote it and its `timestamp` (aware UTC, or None: never a guessed zone);
   - a tool result is `role="tool"` with `tool_call_id` (the call it answers; None when the format pairs
     results by order), its `text`, `is_error`, `exit_code`;
   - a user message that is not a tool result is `role="user"`.
   Anything of the record the adapter did not map goes to `raw` (kept, never dropped). Where the generic
   mapping is wrong for a format, the adapter may set `ToolCall.action` (e.g. a finish tool -> `done`),
   `ToolCall.result` (the call's result as an observation, where the source records it with the call, as a call
   log's line does: the same as a tool message right after the turn, without the message),
   `Message.action` (the action of an assistant turn without tool calls: it is then a step even when it wrote
   nothing) or `Message.observation` (e.g. a browser result with a screenshot) and the core uses them as they
   are. An environment loop's record (BrowserGym: each step a page seen, then the action chosen from it) is a
   transcript too: each page a `user` message with its `observation`, each action an assistant turn with its
   `action`, and the reward the environment gave for that action the turn's `reward`.
2. Describe the run outside its messages with `Run`: key, domain, platform, task (None: the first user
   message's text), agent (None: the first message model), outcome and reward (from the producer's own
   record: a report, a score, a finish), `terminated` (None: the episode ended when its last action is `done`),
   env, license.
3. Call `episode(messages, run)` for an `Episode` (possibly without steps), or `records(messages, run, where)`
   for what a reader yields: the warnings, then the checked episode, or when the transcript cannot be split
   into steps an `empty_episode` row that keeps the outcome and reward in its reason and snippet. An adapter
   whose episode is made of more than one transcript, or whose env says more than the core's (ATIF: its
   sidechains, subagents, restored records), calls `steps_of(messages)` for the steps alone: the steps, the
   final observation, the model of each step, the warnings, the unmapped messages and what messages carried
   beyond their steps (`extras`: the adapter keeps them, as `episode` keeps them in `env["message_extras"]`).
   A log of tool calls alone, with thousands of them, skips the messages: `call_steps` takes each call with its
   result (a call log's line; `column_steps` the same calls made as values, no object per step),
   `exchange_steps` calls and the results that answer them by id in the order they
   passed (an MCP session); both make what `steps_of` makes of the same transcript as messages, and
   `records(..., made=...)` / `episode(..., made=...)` take their steps.

**Steps** (RLDS, `schemas/v1.py`): one step per tool call, and one per assistant turn without tool calls (a
`message` action with its text). A tool call is mapped by `ingest.tools.tool_action`: a shell tool called with
a `command` string is a `command` action, any other call a `tool_call` (`tool_name`, `arguments`); `raw` is the
call as the source wrote it. Observation 0 is what came before the first action (the task message, kind
`text`); the observation of step t+1 is what came back after action t: the result of call t and any user
messages after it, joined by blank lines (kind `text` when kinds are mixed). A result is paired with its call
by id; a result without an id with the earliest call still waiting for one (pairing by order); a result whose
id no call has, or with no call waiting, is kept after the latest step. What came after the last action is `final_observation`. The
turn's `reasoning` goes on its first step; when a turn has tool calls, its text is reasoning too (the thought
written beside the calls). Steps get the turn's timestamp; a turn's `reward` goes on its last step (the
environment gives it once the turn's actions have run).

**env** gains `system_prompt` (the system messages' text), `models` (every model in order of first use, when
there is more than one) and `model_per_step` (then), `message_extras` (what a message carried that no step field
holds: the `raw` and `timestamp` of user, system and tool messages, the `raw` of an assistant turn with tool
calls or with the adapter's own action; one entry per such message, in order: `{"step", "role", "timestamp",
"raw"}`, the keys it has; `step` is the step whose observation holds the message (the step count:
the final observation), for a system message the step that came next, for an assistant turn its first step),
and `unmapped` (raw extras and time of messages the core could not place: a tool result before any action, an
empty assistant turn), each with one `unknown_content` row naming the message; nothing is dropped.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import orjson

from ingest.arrow import checked_episode, checked_env
from ingest.record import Action, Episode, Observation, Rejected, Step, StepColumns, episode_without_steps
from ingest.tools import dumps, tool_action, tool_observation

# User messages a coding-agent CLI writes itself ahead of the person's prompt (Codex: its environment, the
# AGENTS.md and user instructions it loaded): context the model is given, never the task. Harbor's Codex agent
# keeps them as ATIF `user` steps, so the ATIF reader needs them as much as the Codex reader.
INJECTED_USER_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>")

ROLES = ("system", "user", "assistant", "tool")
_UTC = dt.timezone.utc


@dataclass(slots=True)
class ToolCall:
    id: str | None
    name: str | None
    arguments: Any = None  # a dict, a JSON string (as chat APIs send it) or any value (kept as {"input": value})
    raw: Any = None  # the call as the source wrote it: becomes `action.raw` (a str is kept as it is)
    action: Action | None = None  # the adapter's own action, where the generic mapping is wrong for its format
    result: Observation | None = None  # its result, where the source records it with the call (no tool message)
    inferred: bool = False  # read back from what the run showed (an error naming the call), not recorded as a call


@dataclass(slots=True)  # many per transcript: no per-instance dict
class Message:
    role: str  # one of ROLES
    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None  # on a tool result: the call it answers
    tool_name: str | None = None  # on a tool result, when the source names the tool (else the call's name)
    reasoning: str | None = None
    model: str | None = None
    timestamp: dt.datetime | None = None
    is_error: bool | None = None
    exit_code: int | None = None
    observation: Observation | None = None  # the adapter's own observation for a result / user message
    action: Action | None = None  # an assistant turn without tool calls: the adapter's own action for its step
    raw: Any = None  # what the adapter did not map, verbatim
    where: str | None = None  # the record in the source (for warnings): "messages[3]", "events/event-00004-…"
    reward: float | None = None  # an assistant turn: the reward the environment gave for its action(s)


@dataclass
class Run:
    key: str = ""
    domain: str = "swe"
    platform: str = "linux"
    task: str | None = None  # None: the first user message's text
    agent: str | None = None  # None: the first model a message names
    outcome: str = "unknown"
    reward: float | None = None
    terminated: bool | None = None  # None: True when the last action is `done`
    env: dict = field(default_factory=dict)
    license: str | None = None


def merge(parts: list[Observation]) -> Observation:
    """Several things seen between two actions as one observation: texts joined by blank lines, kind `text`
    when the kinds differ (the other fields are the first part's)."""
    if not parts:
        return Observation()
    if len(parts) == 1:
        return parts[0]
    first = Observation(**vars(parts[0]))
    first.text = "\n\n".join(p.text for p in parts if p.text)
    first.kind = "text" if len({p.kind for p in parts}) > 1 else first.kind
    return first


def _raw(value) -> str | None:
    if value is None or isinstance(value, (str, bytes)):
        return value
    return dumps(value)


def _call_action(call: ToolCall) -> Action:
    if call.action is not None:
        return call.action
    return tool_action(call.name, call.arguments, _raw(call.raw if call.raw is not None else
                                                        {"id": call.id, "name": call.name, "arguments": call.arguments}))


def _result(msg: Message, tool_name: str | None) -> Observation:
    if msg.observation is not None:
        return msg.observation
    return tool_observation(msg.tool_name or tool_name, msg.text, is_error=msg.is_error, exit_code=msg.exit_code)


def _reasoning(msg: Message) -> str | None:
    text = msg.text if msg.tool_calls else None
    if not (msg.reasoning or text):  # most turns carry neither
        return None
    parts = [p for p in (msg.reasoning, text) if p and p.strip()]
    return "\n\n".join(parts) if parts else None


def _iso(when) -> Any:
    if type(when) is dt.datetime and when.tzinfo is _UTC:  # orjson writes a UTC time as isoformat does, 3x faster
        return orjson.dumps(when)[1:-1].decode()
    return when.isoformat() if isinstance(when, (dt.datetime, dt.date)) else when


_UNSEEN = Observation()  # a step's observation until `steps_of` merges what came before it


def _merged(held) -> Observation:
    """The observation of what `_Builder.after` holds for one step: nothing, one observation or a list."""
    if held is None:
        return Observation()
    return merge(held) if isinstance(held, list) else held


class _Builder:
    """The steps being built, in parallel lists by step index (a long transcript makes many steps: no object
    per step beyond the step itself). What came after step k is `after[k + 1]` (`after[0]`: what came before
    the first action): None, one observation, or a list of them."""

    def __init__(self):
        self.steps: list[Step] = []
        self.after: list = [None]
        self.tool_names: list[str | None] = []  # the tool each step called (None: a message step)
        self.open: list[bool] = []  # a tool call still waiting for its result
        self.first_open = 0  # no step before this one is open
        self.by_id: dict[str, int] = {}
        self.warnings: list[Rejected] = []
        self.unmapped: list[Any] = []
        self.extras: list[dict] = []  # env["message_extras"]
        self.models: list[str | None] = []
        self.system: list[str] = []  # the system messages' texts
        self.task: str | None = None  # the first user message's text

    def seen(self, obs: Observation, k: int) -> None:
        """`obs` came after step `k - 1` (`k` 0: before the first action)."""
        held = self.after[k]
        if held is None:
            self.after[k] = obs
        elif isinstance(held, list):
            held.append(obs)
        else:
            self.after[k] = [held, obs]

    def add(self, step: Step, tool_name: str | None, is_open: bool, model: str | None) -> None:
        self.steps.append(step)
        self.after.append(None)
        self.tool_names.append(tool_name)
        self.open.append(is_open)
        self.models.append(model)

    def carried(self, msg: Message, step: int, when: Any) -> None:
        """What `msg` carried that no step field holds (its raw, its time `when` unless a step took it), kept
        in `extras` with the step it belongs to."""
        raw = msg.raw
        if raw is None and when is None:
            return
        extra: dict[str, Any] = {"step": step, "role": msg.role}
        if when is not None:
            extra["timestamp"] = _iso(when)
        if raw is not None:
            extra["raw"] = raw
        self.extras.append(extra)

    def assistant(self, msg: Message) -> None:
        reasoning = _reasoning(msg) if msg.reasoning or (msg.text and msg.tool_calls) else None
        at = len(self.steps)
        if not msg.tool_calls:
            if msg.action is None and not (msg.text or reasoning):
                self.keep(msg, "an assistant turn with neither text nor tool calls")
                return
            if msg.action is not None:  # the adapter's action holds its own raw: the message's is kept beside
                self.carried(msg, at, None)
            action = msg.action or Action(kind="message", text=msg.text, raw=_raw(msg.raw))
            self.add(Step(_UNSEEN, action, msg.timestamp, msg.reward, reasoning), None, False, msg.model)
            return
        if msg.raw is not None:
            self.carried(msg, at, None)  # each call's raw is its action's; the turn's is kept
        steps, when, model = self.steps, msg.timestamp, msg.model
        for call in msg.tool_calls:  # `add` inlined: a long transcript makes a step per call
            if call.id is not None:
                self.by_id.setdefault(str(call.id), len(steps))
            steps.append(Step(_UNSEEN, call.action if call.action is not None else _call_action(call), when, None,
                              reasoning, call.inferred))
            self.after.append(call.result)  # what came after it: its result when the source gave it here
            self.tool_names.append(call.name)
            self.open.append(call.result is None)
            self.models.append(model)
            reasoning = None  # the turn's reasoning goes on its first step
        steps[-1].reward = msg.reward  # given once the turn's calls have run

    def _earliest_open(self) -> int | None:
        while self.first_open < len(self.open) and not self.open[self.first_open]:
            self.first_open += 1
        return self.first_open if self.first_open < len(self.open) else None

    def tool(self, msg: Message) -> None:
        call_id = msg.tool_call_id
        k = self.by_id.get(str(call_id)) if call_id is not None else self._earliest_open()
        if k is None:
            if not self.steps:
                self.keep(msg, "a tool result before any action", observe=True)
                return
            k = len(self.steps) - 1
        self.open[k] = False
        self.seen(msg.observation if msg.observation is not None else _result(msg, self.tool_names[k]), k + 1)
        if msg.raw is not None or msg.timestamp is not None:
            self.carried(msg, k + 1, msg.timestamp)

    def keep(self, msg: Message, why: str, observe: bool = False) -> None:
        """A message the core cannot place: kept raw in env (and as an observation when it has text)."""
        where = msg.where or f"a {msg.role} message"
        kept = {"where": where, "role": msg.role, "text": msg.text, "raw": msg.raw}
        if msg.timestamp is not None:
            kept["timestamp"] = _iso(msg.timestamp)
        self.unmapped.append(kept)
        self.warnings.append(Rejected("unknown_content", f"{where}: {why}; kept raw in env.unmapped", where))
        if observe and msg.text:
            self.seen(Observation(kind="text", text=msg.text), 0)


def _build(messages: Iterable[Message]) -> _Builder:
    b = _Builder()
    for msg in messages:
        if msg.role == "assistant":
            b.assistant(msg)
        elif msg.role == "tool":
            b.tool(msg)
        elif msg.role == "user":
            b.seen(msg.observation or Observation(kind="text", text=msg.text), len(b.steps))
            b.carried(msg, len(b.steps), msg.timestamp)
            if b.task is None:
                b.task = msg.text or None
        elif msg.role == "system":
            b.carried(msg, len(b.steps), msg.timestamp)
            if msg.text:
                b.system.append(msg.text)
        else:
            b.keep(msg, f"role {msg.role!r} is none of {', '.join(ROLES)}", observe=True)
    return b


@dataclass
class Steps:
    """What one transcript splits into (see `steps_of`)."""

    steps: list[Step] | StepColumns
    final_observation: Observation | None  # what came after the last action (None: nothing did)
    models: list[str | None]  # the model of each step's turn, by step index
    warnings: list[Rejected]  # `unknown_content` rows, one per message the core could not place
    unmapped: list[Any]  # those messages, raw (`env["unmapped"]` in `episode`)
    extras: list[dict]  # what placed messages carried beyond their step fields (`env["message_extras"]`)
    system: list[str] = field(default_factory=list)  # the system messages' texts
    task: str | None = None  # the first user message's text


def steps_of(messages: Iterable[Message]) -> Steps:
    """The steps of one transcript, with the observations the module docstring describes. `messages` is read
    once, in order: a generator keeps a long transcript from being held whole."""
    return _made(_build(messages))


def exchange_steps(events: Iterable[tuple[str | None, Action | Observation, dt.datetime | None]]) -> Steps:
    """`steps_of` a transcript of one-call turns and the results that answer them, alone (an MCP session's calls
    and responses, in the order they passed): each (id, Action, time) an assistant turn of one call
    (`ToolCall(id, action=...)`, the turn's `timestamp`), each (id, Observation, time) a tool result
    (`tool_call_id`, `observation`, `timestamp`); the same steps, made without the messages."""
    b = _Builder()
    steps, after, by_id = b.steps, b.after, b.by_id
    for call_id, made, when in events:
        if call_id is not None and type(call_id) is not str:  # ids are matched as text, as messages' ids are
            call_id = str(call_id)
        if type(made) is Action:
            if call_id is not None:
                by_id.setdefault(call_id, len(steps))
            steps.append(Step(_UNSEEN, made, when, None, None))
            after.append(None)
            b.tool_names.append(None)
            b.open.append(True)
            b.models.append(None)
            continue
        k = by_id.get(call_id) if call_id is not None else None
        if k is None:  # no call of that id: as the message would be placed
            b.tool(Message("tool", None, [], call_id, None, None, None, when, None, None, made))
            continue
        b.open[k] = False
        if after[k + 1] is None:  # `seen` inlined: most calls have one result
            after[k + 1] = made
        else:
            b.seen(made, k + 1)
        if when is not None:
            b.extras.append({"step": k + 1, "role": "tool", "timestamp": _iso(when)})
    return _made(b)


def _made(b: _Builder) -> Steps:
    for step, held in zip(b.steps, b.after):
        step.observation = held if held is not None and type(held) is not list else _merged(held)
    final = _merged(b.after[-1]) if b.steps and b.after[-1] is not None else None
    return Steps(b.steps, final, b.models, b.warnings, b.unmapped, b.extras, b.system, b.task)


def call_steps(calls: Iterable[tuple[Action, Observation, dt.datetime | None]]) -> Steps:
    """`steps_of` a transcript of (action, its result, time) calls alone, each turn one call with its result and
    nothing else (a call log's lines): what `steps_of` makes of those turns as messages (`ToolCall.action` and
    `ToolCall.result`, the turn's `timestamp`), made without them."""
    steps: list[Step] = []
    seen = None  # what came after the last step: its result
    for action, result, when in calls:
        steps.append(Step(Observation() if seen is None else seen, action, when, None, None))
        seen = result
    return Steps(steps, seen if steps else None, [None] * len(steps), [], [], [])


def column_steps(steps: StepColumns, final: Observation | None) -> Steps:
    """`call_steps` of calls a reader made as values (`ingest.record.StepColumns`, a call log's lines): each
    step's observation the result of the call before it, `final` the last call's."""
    return Steps(steps, final if len(steps) else None, [None] * len(steps), [], [], [])


def episode(messages: Iterable[Message], run: Run, made: Steps | None = None) -> tuple[Episode, list[Rejected]]:
    """The episode of one transcript (its steps may be empty), and the `unknown_content` warnings. `messages`
    is read once, as by `steps_of`; `made`: its steps made already (`call_steps`), messages then unread."""
    made = steps_of(messages) if made is None else made
    steps = made.steps
    env = dict(run.env)
    if made.system:
        env.setdefault("system_prompt", "\n\n".join(made.system))
    distinct = list(dict.fromkeys(m for m in made.models if m))
    if len(distinct) > 1:
        env["models"], env["model_per_step"] = distinct, made.models
    if made.extras:
        env["message_extras"] = made.extras
    if made.unmapped:
        env["unmapped"] = made.unmapped
    terminated = run.terminated if run.terminated is not None else bool(steps) and steps[-1].action.kind == "done"
    ep = Episode(key=run.key, domain=run.domain, platform=run.platform, steps=steps,
                 task=run.task if run.task is not None else made.task,
                 agent=run.agent or (distinct[0] if distinct else None), outcome=run.outcome, reward=run.reward,
                 terminated=terminated, final_observation=made.final_observation, env=env, license=run.license)
    return ep, made.warnings


def records(messages: Iterable[Message], run: Run, where: str,
            made: Steps | None = None) -> Iterator[Episode | Rejected]:
    """What a reader yields for one transcript: the warnings, then the episode (checked against the schema),
    or an `empty_episode` row when no step could be made; that row keeps the outcome and reward. `made` as
    for `episode`."""
    ep, warnings = episode(messages, run, made)
    yield from warnings
    env, dropped = checked_env(ep.env)
    for problem in dropped:
        yield Rejected("bad_record", f"{where}: env field {problem}; left out of the episode's env", where,
                       record_id=problem.split(":", 1)[0])
    written = env is ep.env  # `checked_env` wrote it whole as JSON (not only entry by entry)
    ep.env = env
    if not ep.steps:
        yield episode_without_steps(f"{where}: no actions in the transcript", where, ep.outcome, ep.reward,
                                    task=ep.task, agent=ep.agent, record_id=run.key or None)
        return
    yield checked_episode(ep, where, env_checked=written)
