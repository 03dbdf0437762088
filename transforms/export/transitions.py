"""The canonical transition view every exporter renders from: trajectories of (action, next observation)
turns, with the step id and origin of every piece, built from a dataset version's `steps` and `episodes`
(and its `branches` when simulated content is admitted).

A *line* is one ordered path through an episode (`schemas.branches` defines them):

- the main line: the episode's `steps` in `step_index` order;
- one line per row of `branches`: the real steps before the branch's parent, then the branch step. Its
  transitions start at the branch (`Trajectory.start`), so the shared real prefix is not exported twice.

Turn t of a line is the action of its step t and the observation after it: the observation of step t+1, or
the step's own `final_observation` on the last step. The observation before the first action is
`first_state`. A transition is (history = turns[:t], action_t, observation_{t+1}); it exists only where
the next observation was recorded (text not null): a target is never invented.

A final answer is no transition either: an answer or a completion claim (`done`, `message`) whose
"observation" only repeats the answer (smolagents' `final_answer` tool returns its argument, recorded as the
step's result) is the agent's output handed back to its caller, not the environment's reply. Rendered, it
would be an action with nothing to act (a terminal `[]`: the reference's completion signal, whose reply is the
harness's confirmation prompt) and the agent's own words as the predicted observation. Such a turn has no
`observation` (`Turn.answer_echo`; the export counts it as `final_answer`), and history shows the text as
recorded. A completion whose environment did reply (a harness's confirmation) stays a transition.

Origins: a transition is `real` when every step it touches (first state, history, action, target) is real;
otherwise its origin is the most synthetic one it touches (`simulated` over `perturbed`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterator

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from schemas.branches import branch_line
from transforms import agentworld

STEP_COLUMNS = ["episode_id", "step_index", "step_id", "domain", "observation", "action", "final_observation",
                "origin"]
BRANCH_COLUMNS = ["step_id", "branch_id", "parent_step_id", "episode_id", "origin", "action", "next_observation",
                  "labeler"]
EPISODE_COLUMNS = ["episode_id", "domain", "platform", "source_format", "task", "outcome", "env"]
_ORIGIN_RANK = {"real": 0, "perturbed": 1, "simulated": 2}


# Web episodes read from HTTP captures (HAR, DevTools logs) hold HTTP exchanges, not page states: a web world
# model trained on them learns to answer with HTTP responses. They are selected under their own name, and only
# when `--domains` names it.
HTTP_CAPTURE_FORMATS = ("har", "cdp")
HTTP_WEB = "web-http"


def selection_domain(domain: str, source_format: str | None) -> str:
    """The name an export's `--domains` selects an episode by: its domain, or HTTP_WEB for HTTP captures."""
    return HTTP_WEB if domain == "web" and source_format in HTTP_CAPTURE_FORMATS else domain


def domain_selected(domain: str, source_format: str | None, domains: list[str] | None) -> bool:
    """Whether an export with `domains` (None: all) takes the episode: HTTP captures only when named."""
    name = selection_domain(domain, source_format)
    return name in domains if domains else name != HTTP_WEB


@dataclass(frozen=True)
class Turn:
    step_id: str  # the step whose action this is
    action: dict  # schema-v1 action struct
    origin: str  # origin of the acting step
    observation: str | None  # text of the observation after the action; None when not recorded
    observation_step_id: str  # the step that holds it (the next step, or this one for final_observation)
    observation_origin: str
    # the observation reports a failed action (`is_error`, or a non-zero exit code); the recipe's retry and
    # environment-failure filters read it
    observation_error: bool = False
    # (width, height) in pixels of the screen the action acted on, when the source recorded it: GUI actions
    # are rendered in pixels with it
    screen: tuple[int, int] | None = None
    # the action in its source's own benchmark form (DroidBot's event text on the state it acted on), when the
    # export renders android sources their own way and that form can say it; None: the domain's form
    action_text: str | None = None
    # the blob of the observation after the action when it is a screenshot with no text (a screenshot-only
    # state: no transition targets it); the recipe's `screenshot_states` decides how history shows it
    screenshot: str | None = None
    # what history shows for that state instead of EMPTY_OBSERVATION (`screenshot_states` placeholder)
    history_text: str | None = None
    # the earlier turns folded into this one (`screenshot_states` drop): their actions are rendered
    # before this turn's, and their screenshot-only states are left out
    folded: tuple[Turn, ...] = ()
    # a final answer whose recorded result only repeats it (no environment reply: no transition)
    answer_echo: bool = False

    @property
    def shown(self) -> str | None:
        """The observation as history shows it: its text, else the screenshot-only state's `history_text`."""
        return self.observation if self.observation is not None else self.history_text

    @property
    def step_ids(self) -> list[str]:
        """The steps whose actions this turn renders: the folded ones, then its own."""
        return [*(t.step_id for t in self.folded), self.step_id]


@dataclass
class Trajectory:
    episode_id: str
    line: str  # "main", or the step id of the branch (one labeler's answer for one counterfactual)
    domain: str
    task: str | None
    outcome: str
    source_format: str | None
    env: dict
    first_state: str | None
    first_state_step_id: str
    first_state_origin: str
    turns: list[Turn]
    start: int = 0  # transitions before this turn belong to the main line
    first_url: str | None = None
    first_screenshot: str | None = None  # the blob of the first state when it is a screenshot with no text

    @property
    def trajectory_id(self) -> str:
        return self.episode_id if self.line == "main" else self.line

    @property
    def tools(self) -> list[dict] | None:
        """Tool definitions for the system prompt: the episode's `env["tools"]` when it is a list."""
        tools = self.env.get("tools")
        return tools if isinstance(tools, list) and tools else None

    def prefix_origin(self, t: int) -> str:
        """The most synthetic origin among the first state and turns[:t] (actions and observations)."""
        return self._prefix_origins[t]

    @cached_property
    def _prefix_origins(self) -> list[str]:
        # prefix_origin(t) for every t at once: every transition of the line asks for its own prefix
        out = [self.first_state_origin]
        for turn in self.turns:
            out.append(max((out[-1], turn.origin, turn.observation_origin), key=_origin_rank))
        return out

    def transitions(self) -> Iterator["Transition"]:
        for t in range(self.start, len(self.turns)):
            if self.turns[t].observation is not None:
                yield Transition(self, t)


@dataclass(frozen=True)
class Transition:
    trajectory: Trajectory
    t: int  # 0-based index of the acting turn

    @property
    def history(self) -> list[Turn]:
        return self.trajectory.turns[: self.t]

    @property
    def turn(self) -> Turn:
        return self.trajectory.turns[self.t]

    @property
    def target(self) -> str:
        return agentworld.observation_text(self.turn.observation)

    @property
    def target_step_id(self) -> str:
        return self.turn.observation_step_id

    @property
    def origin(self) -> str:
        # the prefix through this turn: first state, history, this action and its target
        return self.trajectory.prefix_origin(self.t + 1)

    @property
    def step_ids(self) -> list[str]:
        """Every step the sample is made of, in order: first state, the acting steps, the target's step."""
        ids = [self.trajectory.first_state_step_id]
        for turn in self.trajectory.turns[: self.t + 1]:
            ids += turn.step_ids
        if ids[-1] != self.target_step_id:
            ids.append(self.target_step_id)
        return list(dict.fromkeys(ids))


def _origin_rank(origin: str) -> int:
    return _ORIGIN_RANK.get(origin, 2)  # unknown origins count as simulated


# (domain, source format) -> how that source's observations are shown, or None for their recorded text
StateText = Callable[[str, "str | None"], "Callable[[dict | None], str | None] | None"]
# (domain, source format) -> (observation acted on, action) -> the action in the source's form, or None
ActionText = Callable[[str, "str | None"], "Callable[[dict | None, dict], str | None] | None"]


def _text(observation: dict | None) -> str | None:
    if not observation or observation.get("kind") == "none":
        return None
    return observation.get("text")


# a tool's answer between screenshots shows no screen: the action after it acts on the last screen seen
_NOT_SCREENS = ("tool_result",)


def _screenshot_only(observation: dict | None, text: str | None) -> str | None:
    """The blob of a screenshot observation that has no text to show, else None."""
    if text is not None or not observation or observation.get("kind") == "none":
        return None
    return observation.get("screenshot") or None


def _failed(observation: dict | None) -> bool:
    if not observation:
        return False
    code = observation.get("exit_code")
    return bool(observation.get("is_error")) or (code is not None and code > 0)


# kinds of the agent's answer to its caller (`done`: a final answer or completion claim; `message`: a reply)
_ANSWER_KINDS = ("done", "message")


def _echoes_answer(action: dict, after: dict | None) -> bool:
    """Whether the observation after `action` is only the agent's answer handed back (see the module's doc)."""
    if action.get("kind") not in _ANSWER_KINDS or not after or after.get("text") is None:
        return False
    answer = (action.get("text") or "").strip()
    return bool(answer) and after["text"].strip() == answer


def _line(rows: list[dict], text: Callable[[dict | None], str | None] = _text,
          act: Callable[[dict | None, dict], str | None] | None = None
          ) -> tuple[str | None, str, str, list[Turn], str | None, str | None]:
    """(first_state, its step id, its origin, turns, first url, the first state's blob when it is screenshot-only)
    of steps in line order; `text`: an observation's text as the records show it; `act(observation, action)`: the
    action in its source's form."""
    turns, screen = [], None
    for i, row in enumerate(rows):
        if i + 1 < len(rows):
            nxt = rows[i + 1]
            after, obs_id, obs_origin = nxt["observation"], nxt["step_id"], nxt["origin"] or "real"
        else:
            after, obs_id, obs_origin = row["final_observation"], row["step_id"], row["origin"] or "real"
        shown = text(after)
        echo = _echoes_answer(row["action"] or {}, after)
        # (a screen of unknown size keeps the generic form)
        seen = row["observation"] or {}
        screen = agentworld.screen_size(seen) or (screen if seen.get("kind") in _NOT_SCREENS else None)
        turns.append(Turn(row["step_id"], row["action"] or {}, row["origin"] or "real", None if echo else shown,
                          obs_id, obs_origin, _failed(after), screen,
                          act(row["observation"], row["action"] or {}) if act else None,
                          _screenshot_only(after, shown), history_text=shown if echo else None, answer_echo=echo))
    first = rows[0]
    url = next((r["observation"]["url"] for r in rows if r["observation"] and r["observation"].get("url")), None)
    first_text = text(first["observation"])
    return (first_text, first["step_id"], first["origin"] or "real", turns, url,
            _screenshot_only(first["observation"], first_text))


def _repeats_task(state: str, task: str | None) -> bool:
    """A chat log's first observation is the person's request (the transcript core makes the first user message
    both the task and what the agent saw first): it is no state of the environment, and the benchmark's rows
    show none in turn 1 where they show no task (mcp, search, swe) and give the task apart where they do."""
    return bool(task) and state.strip() == task.strip()


def _episode_lines(main: list[dict], branches: list[dict]) -> Iterator[tuple[str, int, list[dict]]]:
    """(line name, start turn, rows) for the main line and each branch of one episode."""
    if main:
        yield "main", 0, main
    for branch in sorted(branches, key=lambda b: b["step_id"]):
        rows = branch_line(main, branch)
        if rows is not None:  # a parent outside this version (validate quarantines such branches)
            yield branch["step_id"], len(rows) - 1, rows


def trajectories(steps: pa.Table, episodes: dict[str, dict], branches: dict[str, list[dict]] | None = None,
                 state_text: StateText | None = None, action_text: ActionText | None = None
                 ) -> Iterator[Trajectory]:
    """Trajectories of the steps in `steps` (all of an episode's steps must be in the table), ordered by
    episode id then line. `episodes` maps episode_id -> episode row (EPISODE_COLUMNS); `branches` maps
    episode_id -> its rows of `branches` (BRANCH_COLUMNS): each is a line of its own. `state_text(domain,
    source_format)`: how that source's observations are shown (None: their text); `action_text(domain,
    source_format)`: how its actions are (None: the domain's form)."""
    steps = steps.select(STEP_COLUMNS)
    steps = steps.take(pc.sort_indices(steps, [("episode_id", "ascending"), ("step_index", "ascending")]))
    rows = steps.to_pylist()
    branches = branches or {}
    i = 0
    while i < len(rows):
        j = i
        episode_id = rows[i]["episode_id"]
        while j < len(rows) and rows[j]["episode_id"] == episode_id:
            j += 1
        episode = episodes.get(episode_id, {})
        env = orjson.loads(episode["env"]) if episode.get("env") else {}
        domain = episode.get("domain") or rows[i]["domain"]
        text = (state_text(domain, episode.get("source_format")) if state_text else None) or _text
        act = action_text(domain, episode.get("source_format")) if action_text else None
        for line, start, line_rows in _episode_lines(rows[i:j], branches.get(episode_id, [])):
            first_state, first_id, first_origin, turns, url, first_shot = _line(line_rows, text, act)
            if first_state is not None and _repeats_task(first_state, episode.get("task")):
                first_state = None
            yield Trajectory(
                episode_id=episode_id, line=line, domain=domain,
                task=episode.get("task"), outcome=episode.get("outcome") or "unknown",
                source_format=episode.get("source_format"), env=env if isinstance(env, dict) else {},
                first_state=first_state, first_state_step_id=first_id, first_state_origin=first_origin,
                turns=turns, start=start, first_url=url, first_screenshot=first_shot)
        i = j


def branches_by_episode(branches: pa.Table) -> dict[str, list[dict]]:
    """episode_id -> its branch rows (BRANCH_COLUMNS)."""
    out: dict[str, list[dict]] = {}
    for row in branches.select(BRANCH_COLUMNS).to_pylist():
        out.setdefault(row["episode_id"], []).append(row)
    return out


def episode_index(episodes: pa.Table) -> dict[str, dict]:
    return {row["episode_id"]: row for row in episodes.select(EPISODE_COLUMNS).to_pylist()}
