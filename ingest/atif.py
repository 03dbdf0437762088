"""ATIF `trajectory.json` (Agent Trajectory Interchange Format, `schema_version` "ATIF-v1.x"): the
trajectory format of the Harbor / Terminal-Bench 2 harness. One JSON object per file.

Units: a Harbor trial folder (a folder whose `result.json` is a trial result: `trial_name`, `task_name`...,
next to `agent/trajectory.json` and `verifier/reward.txt`) is one unit; any other JSON file that declares an
ATIF `schema_version` is a unit of its own. Of a trial folder's other files, the verifier's output
(`verifier/test-stdout.txt`: why the tests passed or failed) is kept whole in the main episode's
`env["verifier_output"]`; the rest (Harbor's `trial.log` and `config.json`, the agent's own logs and recordings
in `agent/`, `artifacts/` collected from the environment, the verifier's other files, the Claude Code sessions
Harbor made the trajectory from) are listed in the run's `ignored_inputs`, each with why it is not read.

ATIF steps are turns: `source` "system" (the system prompt -> `env["system_prompt"]` when it opens the line;
a system turn after a user or agent turn is an event -> `env["system_events"]`, never the prompt), "user" (a
message: the first one is the task, or the `Task Description:` block of Terminus 2's prompt template, but
never the context a coding-agent CLI writes as a user message (Codex's `<environment_context>`, `# AGENTS.md
instructions`); every user message is observation text for the next action) or "agent" (`message`,
`reasoning_content`, `model_name`, `tool_calls[]` of `{tool_call_id, function_name, arguments}`, and
`observation.results[]` of `{source_call_id, content}`). A `message` or `content` may be a list of content
parts (ATIF v1.6): their text parts are joined.

Each line of turns is read as a transcript (`ingest.transcript`: an agent turn is an assistant message, its
results tool messages, user turns user messages), so steps, observations, reasoning and models per step follow
the core's rules; what is ATIF's own is said here. Our steps are actions: each tool call of an agent turn is
one step (a shell tool, any case: `bash`, Claude Code's `Bash`, with a `command` becomes a `command` action,
see `ingest.tools`); an agent turn without tool calls is a `message` action, even an empty one. The
observation of step t+1 is the result whose `source_call_id` names call t of the same turn (results without
one, or naming no call of the turn, belong to the turn's last action), plus any user messages before the next
action. Observation 0 is the user messages before the first action. The reasoning of a turn's first step is its
`reasoning_content`, then the `message` it wrote beside its tool calls (Terminus 2's "Analysis: ... Plan: ..."),
blank parts left out.
Terminus 2's `bash_command` (`{keystrokes, duration}`) is a `keystrokes` action, its result a terminal screen.
An episode is terminated when its last agent turn calls a finishing tool (`FINISH_TOOLS`: OpenHands' `finish`,
Terminus 2's `mark_task_complete`); in a Harbor trial the trial result decides (below).
Terminus 2's raw-content mode keeps the model's reply as an agent turn's message and writes no tool call: an
agent turn without tool calls whose message is such a reply (JSON, or XML where `agent.extra.parser` says so,
decoded as Terminus 2's own parser reads it: `ingest.terminus_reply`) is read as the turn Terminus 2 writes for
it without raw content: a `bash_command` call per command it sent (`keystrokes`, `duration`),
`mark_task_complete` when it claims the task complete, and `Analysis: ...` / `Plan: ...` as the message (the
step's reasoning); each action's raw is the reply and the part of it that action is (`{"message", "command"}`,
`{"message", "task_complete"}`), and `env["terminus_replies"]` lists the turns so read. A reply with neither
command nor claim stays a message action (as without raw content). A message meant as a reply that Terminus 2's
parser refuses stays a message, with an `atif.undecoded_reply` warning naming the turn.

ATIF v1.5-v1.8 (what Harbor's Terminus 2, OpenHands and other agents write):
- Copied context (`is_copied_context`: turns copied from an earlier trajectory, e.g. after summarization):
  history, not actions. `env["copied_context"]` counts them; the copied task prompt still gives the task and
  the copied user messages after the last copied agent turn are what the first action saw (the handoff).
- A system turn that replaces the context (Terminus 2's summarization notice, `extra.context_management`
  boundary "replace", or one carrying subagent links) starts the next action's observation afresh.
- `subagent_trajectory_ref` links (on tool results or system turns) -> `env["subagents"]`: each with `step`
  (the step it follows), the ref's `trajectory_id` / `trajectory_path` / `session_id` / `extra`, and the
  linked episode's `episode_id` when it is read here. A subagent's episode has `env["parent"]`: `episode_id`,
  `key`, `session_id` of the delegating episode and `relation` (`subagent`, or `continuation` for a
  linear-history `trajectory.cont-N.json` named by `continued_trajectory_ref`). In a trial folder the files
  are matched by name; a subagent file read alone names its parent by `agent.extra.parent_session_id`.
- Embedded `subagent_trajectories` (v1.7): each is an episode of its own, key `subagent:<trajectory_id>`
  (nested ones down to `MAX_SUBAGENT_DEPTH`), linked both ways as above.
- Fields Harbor's models do not define (root or step) are kept raw in `env["atif_unknown_fields"]` with a
  warning in `env["ingest_warnings"]` (validate reports it as `ingest.kept_unknown`).

Harbor trials:
- Reward and outcome: the trial result's `verifier_result.rewards` (its `reward`, or its only value), else
  `verifier/reward.txt`, else `verifier/reward.json`; reward 1 (or more) is `success`, below is `failure`;
  no reward is `unknown`. Several named rewards without a `reward` stay in `env["harbor"]["rewards"]`.
- Terminated: the agent ended by itself, unless `exception_info` names an agent-side error (a timeout, a
  crash); verifier errors (`Verifier...`, `Reward...`) come after the agent finished.
- `env["harbor"]`: trial and task names, dataset, agent info, several rewards, the exception;
  `env["outcome_file"]`: the file whose reward decided the outcome (`<trial uri>/result.json`, or
  `verifier/reward.txt` / `verifier/reward.json` in it), on the episode that carries the trial's outcome.
- A trial folder with a result but no `agent/trajectory.json` is read from the Claude Code sessions the agent
  left in `agent/sessions/projects/*/*.jsonl` (`ingest.swe.claude_code`; the main line gets the trial's outcome,
  reward and `env["harbor"]`); without those either, it gives one `missing_trajectory` quarantine row that
  names the trial, its task and its exception (the agent wrote no ATIF trajectory). A trajectory without an
  agent step gives an `empty_episode` row that keeps the trial's outcome and reward (in its reason and
  snippet) and its task (in the snippet). Other ATIF files in `agent/` are read as episodes of their own
  (key: their path).

Sidechains (Claude Code subagents, `extra.is_sidechain` true on a turn): they are not the main line (older
Harbor put them all before the task, newer interleaves them by time). Their turns leave the main episode
and become episodes of their own, one per `extra.agent_id` (key `sidechain:<agent id>`; turns without an
id share the key `sidechain`), with the subagent's prompt as the task and `env["sidechain"]` (`of`: the
main episode's key, `agent_id`, `turns`); the main episode's `env["sidechains"]` counts their turns and lists
their keys. Outcome and reward belong to the main line only.

Timestamps: UTC when zoned, else null. Parallel tool calls keep their recorded order: older Harbor writes
each call of one model response as its own turn, in the order the results came back, stamped with the
time the call was issued, so the times can go back. Inside a run of consecutive tool-call turns, a time
earlier than one already seen in the run but not earlier than the last step before the run is such a
parallel call: its step timestamp is null and the recorded time is kept in `env["parallel_call_times"]`
(step index -> ISO string). Any other time that goes back stays (validation reports it).

Models: `episodes.agent` is the header's `agent.model_name` (else the one model all steps name, else the
agent's `name`). When a step names a model (`model_name`) other than that, `env["models"]` maps each model
named to its step indices.

Round trip: files written by `pipelines export atif` carry our exact records in `extra["trajforge"]` (root:
episode fields; step: `action` and the next `observation`, and with `--include-simulated` the step's
`branches`), and those win over the mapping above, so ingest -> export -> ingest gives the same steps, and
the same branches with their origin (ids follow the new episode id; a branch with a malformed record is
quarantined alone). Domain `terminal` (or `search` for search tools) unless the root extra says otherwise;
platform `linux`.

Bad input: a malformed turn, tool call, result or restored record gives one `bad_record` quarantine row
naming the file, the record and the field (`steps[3].tool_calls[0].function_name`), and is left out; the
rest of the file is read.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Iterator

from ingest import terminus_reply
from ingest.format_info import FormatInfo
from ingest.members import holds, unread_in
from ingest.record import (Action, Branch, Episode, Observation, Rejected, Step, episode_id, episode_without_steps,
                           warn)
from ingest.search import episode_domain
from ingest.source import Source, SourceError, parse_json
from ingest.times import parse_time
from ingest.tools import SHELL_TOOLS, dumps, tool_action, tool_observation
from ingest.transcript import INJECTED_USER_CONTEXT, Message, ToolCall, steps_of

FORMAT = "atif"
VERSION = "6"
INFO = FormatInfo(
    group="swe", rank=10, domains=('terminal', 'swe', 'mcp'), platform="linux",
    summary=("ATIF `trajectory.json` v1.0-v1.8 (Harbor trials; copied context as history, subagent and continuation "
             "trajectories linked to their parent in `env.parent`; checked against Harbor's own models at 0.1.24 and "
             "0.26.0)"),
    producer="Harbor's ATIF pydantic models",
    versions="harbor 0.1.24 (first ATIF-v1.5), 0.26.0 (ATIF-v1.8)",
    proof=("each version's `Trajectory` model validates the real trajectories it knows and every file `export atif` "
           "writes, and reads the same actions we do (`tests/ingest/test_atif_harbor_models.py`); 0.26.0's Codex "
           "agent converts real Codex rollouts to `trajectory.json` at test time, which we read as Harbor's model "
           "does and as the Codex reader reads the rollout (`tests/ingest/test_atif_harbor_codex_producer.py`); "
           "Harbor 0.1.31's own terminus-2 / openhands goldens are bundled samples; Terminus 2's raw-content replies "
           "give the actions its own JSON and XML reply parsers read in them"),
)

EXTRA_KEY = "trajforge"  # where our export keeps exact records inside ATIF `extra` objects
TRAJECTORY = "agent/trajectory.json"  # where a Harbor trial keeps the agent's ATIF trajectory
VERIFIER_STDOUT = "verifier/test-stdout.txt"  # what the trial's tests printed: why they passed or failed
_SESSIONS = "agent/sessions/projects"  # the Claude Code sessions Harbor's claude-code agent leaves

_NUM, _STR, _INT, _BOOL = (int, float), (str,), (int,), (bool,)
# field -> accepted types of the records our export restores (anything else would break the Arrow columns)
_ACTION_TYPES = {"kind": _STR, "x": _NUM, "y": _NUM, "x2": _NUM, "y2": _NUM, "text": _STR, "keys": (list,),
                 "element": _STR, "direction": _STR, "tool_name": _STR, "arguments": _STR, "code": _STR,
                 "duration_s": _NUM, "raw": _STR}
_OBSERVATION_TYPES = {"kind": _STR, "text": _STR, "ui_tree": _STR, "url": _STR, "title": _STR, "screenshot": _STR,
                      "exit_code": _INT, "is_error": _BOOL, "width": _INT, "height": _INT}
_ROOT_TYPES = {"task": _STR, "agent": _STR, "outcome": _STR, "reward": _NUM, "terminated": _BOOL, "domain": _STR,
               "platform": _STR, "env": (dict,)}
_VERIFIER_ERRORS = ("Verifier", "Reward")  # exception types raised after the agent finished
# tools whose call ends the agent's run: OpenHands' `finish`, Terminus 2's `mark_task_complete` (Harbor writes
# its `task_complete` as that call)
FINISH_TOOLS = frozenset({"finish", "mark_task_complete"})
# the fields of an ATIF step (Harbor's `Step` model, v1.0-v1.8); any other is kept raw with a warning
_STEP_FIELDS = frozenset({"step_id", "timestamp", "source", "model_name", "reasoning_effort", "message",
                          "reasoning_content", "tool_calls", "observation", "metrics", "is_copied_context",
                          "llm_call_count", "extra"})
_ROOT_FIELDS = frozenset({"schema_version", "session_id", "trajectory_id", "agent", "steps", "notes",
                          "final_metrics", "continued_trajectory_ref", "extra", "subagent_trajectories"})
_REF_FIELDS = ("trajectory_id", "trajectory_path", "session_id", "extra")
MAX_SUBAGENT_DEPTH = 8  # embedded subagents of subagents...: deeper ones are not read (a bound on recursion)
# Terminus 2's prompt template: "Task Description:\n{instruction}\n\nCurrent terminal state:\n..."
_TASK_DESCRIPTION = re.compile(r"^Task Description:[ \t]*\n(.*?)\n\s*\nCurrent terminal state:", re.S | re.M)
_UNSET = object()
_REPLY_RAW = "\0raw"  # the raw a decoded Terminus 2 reply gives its actions (a key no ATIF file can hold)


class Malformed(ValueError):
    """A record of the file that cannot be used; `where` names the record and the field."""

    def __init__(self, where: str, what: str):
        super().__init__(what)
        self.where, self.what = where, what


# units ---------------------------------------------------------------------------------------------------
def _is_trial_result(head: bytes) -> bool:
    """Harbor's trial result (TrialResult), not its job result (which counts trials)."""
    return b'"trial_name"' in head and b'"task_name"' in head and b'"n_total_trials"' not in head


def _is_atif(head: bytes) -> bool:
    return b'"ATIF-v' in head and b'"schema_version"' in head


def units(files: list[str], head) -> list[str]:
    """Harbor trial folders (a trial `result.json`), then JSON files whose first bytes declare an ATIF schema
    version and lie in no trial folder."""
    trials = {posixpath.dirname(p) for p in files
              if posixpath.basename(p) == "result.json" and _is_trial_result(head(p))}

    def in_trial(path: str) -> bool:
        if not trials:  # most inputs hold no trial folder: no walk up every path's parents
            return False
        parent = posixpath.dirname(path)
        while parent and parent not in ("/", "."):
            if parent in trials:
                return True
            parent = posixpath.dirname(parent)
        return False

    return sorted(trials) + [p for p in files if p.endswith(".json") and _is_atif(head(p)) and not in_trial(p)]


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The files of each trial folder the reader does not read, with why (planning lists them in
    `ignored_inputs`); a JSON file unit has none."""
    out = {}
    for unit in found:
        if holds(files, f"{unit}/result.json"):
            traced = holds(files, f"{unit}/{TRAJECTORY}")
            out[unit] = unread_in(unit, files, lambda rel, u=unit, t=traced: _trial_reads(u, rel, t, head),
                                  lambda rel, t=traced: _unread_why(rel, t))
    return out


def _trial_reads(unit: str, rel: str, traced: bool, head) -> bool:
    """Whether the reader reads the trial file `rel` (`traced`: the trial has its ATIF trajectory)."""
    if rel in ("result.json", "verifier/reward.txt", "verifier/reward.json", VERIFIER_STDOUT, TRAJECTORY):
        return True
    if rel.startswith("agent/") and rel.count("/") == 1 and rel.endswith(".json"):
        return _is_atif(head(f"{unit}/{rel}"))  # a subagent or continuation trajectory beside the main one
    return not traced and rel.startswith(_SESSIONS + "/") and rel.count("/") == 4 and rel.endswith(".jsonl")


def _unread_why(rel: str, traced: bool) -> str:
    top = rel.split("/", 1)[0]
    if rel == "trial.log":
        return "Harbor's log of running the trial (the harness's messages, not the agent's steps)"
    if rel == "config.json":
        return "the trial's configuration (the task, agent and environment Harbor was given; its names and agent " \
               "are read from result.json)"
    if top == "artifacts":
        return "a file Harbor collected from the task's environment after the run, not a step of the agent"
    if rel.startswith(_SESSIONS + "/") and traced:
        return f"a Claude Code session the agent left: Harbor made {TRAJECTORY} from it, which is read (reading " \
               "both would count the run twice)"
    if top == "agent" and rel.count("/") == 1 and rel.endswith(".json"):
        return "a JSON file of the agent's that declares no ATIF schema version"
    if top == "agent":
        return f"the agent's own log or recording (its steps are read from {TRAJECTORY})"
    if top == "verifier":
        return f"verifier output beside the reward and {VERIFIER_STDOUT}, which are read"
    return "a file of the trial that is none of Harbor's trajectory, result or verifier files"


# small readers of ATIF values ----------------------------------------------------------------------------
def _ours(obj) -> dict:
    extra = obj.get("extra") if isinstance(obj, dict) else None
    mine = extra.get(EXTRA_KEY) if isinstance(extra, dict) else None
    return mine if isinstance(mine, dict) else {}


def _text(value) -> str | None:
    """A message or a result's content: a string, or (ATIF v1.6) a list of content parts whose text parts
    are joined; anything else is kept as JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) and "type" in p for p in value):
        return "\n\n".join(p["text"] for p in value if p.get("type") == "text" and isinstance(p.get("text"), str))
    return dumps(value)


def _id(value) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _checked(value, types: dict, where: str) -> dict:
    """The fields of a restored record, type-checked: a wrong type raises `Malformed` naming the field."""
    if not isinstance(value, dict):
        raise Malformed(where, "is not an object")
    out = {}
    for key, ok in types.items():
        if key not in value:
            continue
        v = out[key] = value[key]
        if v is None:
            continue
        if isinstance(v, bool) and bool not in ok or not isinstance(v, ok) or (
                key == "keys" and not all(isinstance(k, str) for k in v)):
            raise Malformed(f"{where}.{key}", f"has a {type(v).__name__}, expected {'/'.join(t.__name__ for t in ok)}")
    return out


def _restored_observation(value, where: str) -> Observation | None:
    return None if value is None else Observation(**_checked(value, _OBSERVATION_TYPES, where))


def _restored_action(value, where: str) -> Action:
    fields = _checked(value, _ACTION_TYPES, where)
    if not isinstance(fields.get("kind"), str):
        raise Malformed(f"{where}.kind", "is missing")
    return Action(**fields)


def _shell(name: str | None) -> str | None:
    """The shell tool's name as `ingest.tools` knows it (`Bash` -> `bash`), else the name itself."""
    return name.lower() if name and name.lower() in SHELL_TOOLS else name


def _call_action(name: str, arguments, raw: str) -> Action:
    keys = arguments.get("keystrokes") if isinstance(arguments, dict) else None
    if isinstance(keys, str):  # Terminus 2's `bash_command`: keys sent to its tmux pane, then a wait
        wait = arguments.get("duration")
        return Action(kind="keystrokes", text=keys, tool_name=name, arguments=dumps(arguments), raw=raw,
                      duration_s=float(wait) if isinstance(wait, (int, float)) and not isinstance(wait, bool)
                      else None)
    action = tool_action(_shell(name), arguments, raw)
    action.tool_name = name  # the tool's own spelling
    return action


# one line of turns (the main line, or one sidechain) -> transcript messages -> steps (`ingest.transcript`) ----
@dataclass
class _Line:
    pending: list[Message] = field(default_factory=list)  # what the next action will see: the latest action's
    # results and the user messages since, held back until that action comes (a replaced context drops them)
    count: int = 0  # the steps its agent turns make so far (one per call, or one message)
    inferred: set[int] = field(default_factory=set)  # steps whose restored action our export marked inferred
    steps: list[Step] = field(default_factory=list)  # made by the core once every turn is read
    final: Observation | None = None
    branches: list[Branch] = field(default_factory=list)
    task: str | None = None
    system_prompt: str | None = None
    models: dict[str, list[int]] = field(default_factory=dict)
    parallel_times: dict[str, str] = field(default_factory=dict)
    copied: list = field(default_factory=list)  # step ids of the copied-context turns (history, not actions)
    system_events: list[dict] = field(default_factory=list)  # system turns after the line began
    subagents: list[dict] = field(default_factory=list)  # subagent_trajectory_ref links, with the step they follow
    unknown: dict[str, dict] = field(default_factory=dict)  # fields ATIF does not define, kept raw by turn
    replies: list[str] = field(default_factory=list)  # where a Terminus 2 raw reply was decoded into its actions
    undecoded: list[str] = field(default_factory=list)  # raw replies that did not decode (kept as messages), why
    finished: bool = False  # the last agent turn called a finishing tool
    began: bool = False  # a user or agent turn of the line's own has been read
    parser: str | None = None  # the reply parser Terminus 2 ran (`agent.extra.parser`: json, xml), if it says


def _terminus_turn(line: _Line, turn: dict, where: str) -> tuple[dict, list[dict]]:
    """An agent turn without tool calls whose message is Terminus 2's raw reply (`raw_content` mode) as the turn
    Terminus 2 writes for that reply without it (Harbor's tool-call mode): a `bash_command` call per command
    (`keystrokes`, `duration`), `mark_task_complete` when it claims the task complete, and the message
    `Analysis: ...` / `Plan: ...` (the step's reasoning). Each action's raw is the reply and which part of it
    the action is. A message that tries to be a reply but does not decode stays a message, with a warning."""
    text = _text(turn.get("message"))
    if not isinstance(text, str) or not terminus_reply.may_be_reply(text):
        return turn, []
    reply, why = terminus_reply.decode(text, line.parser)
    if reply is None:
        if terminus_reply.looks_like_reply(text, line.parser):
            line.undecoded.append(f"{where}.message: {why}")
        return turn, []
    line.replies.append(where)
    calls = [{"function_name": "bash_command", "arguments": {"keystrokes": keys, "duration": wait},
              _REPLY_RAW: dumps({"message": text, "command": n})} for n, (keys, wait) in enumerate(reply.commands)]
    if reply.task_complete:
        calls.append({"function_name": "mark_task_complete", "arguments": {},
                      _REPLY_RAW: dumps({"message": text, "task_complete": True})})
    said = [f"{label}: {value if isinstance(value, str) else dumps(value)}"
            for label, value in (("Analysis", reply.analysis), ("Plan", reply.plan)) if value]
    return {**turn, "message": "\n".join(said), _REPLY_RAW: dumps({"message": text})}, calls


def _calls(turn: dict, where: str) -> list[dict]:
    calls = turn.get("tool_calls")
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise Malformed(f"{where}.tool_calls", f"is a {type(calls).__name__}, not an array")
    for j, call in enumerate(calls):
        if not isinstance(call, dict):
            raise Malformed(f"{where}.tool_calls[{j}]", "is not an object")
        if not isinstance(call.get("function_name"), str):
            raise Malformed(f"{where}.tool_calls[{j}].function_name", "is missing or not a string")
    return calls


def _results(turn: dict, where: str) -> list[dict]:
    obs = turn.get("observation")
    if obs is None:
        return []
    if not isinstance(obs, dict):
        raise Malformed(f"{where}.observation", "is not an object")
    results = obs.get("results")
    if results is None:
        return []
    if not isinstance(results, list):
        raise Malformed(f"{where}.observation.results", "is not an array")
    for k, r in enumerate(results):
        if not isinstance(r, dict):
            raise Malformed(f"{where}.observation.results[{k}]", "is not an object")
    return results


def _links(turn: dict, step: int) -> list[dict]:
    """The turn's `subagent_trajectory_ref` links (ATIF v1.5+), each with the index of the step it follows."""
    obs = turn.get("observation")
    results = obs.get("results") if isinstance(obs, dict) else None
    return _result_links(results, step) if isinstance(results, list) else []


def _result_links(results: list, step: int) -> list[dict]:
    """The `subagent_trajectory_ref` links of some results, each with the index of the step they follow."""
    found = []
    for r in results:
        refs = r.get("subagent_trajectory_ref") if isinstance(r, dict) else None
        for ref in refs if isinstance(refs, list) else []:
            if isinstance(ref, dict):
                found.append({"step": step, **{k: ref[k] for k in _REF_FIELDS if ref.get(k) is not None}})
    return found


def _replaces_context(turn: dict) -> bool:
    """A system turn after which the agent starts from a new context: Terminus 2's summarization notice
    (`extra.context_management.boundary` "replace" since Harbor 0.16; before, known by the subagent links it
    carries, the three summarization subagents)."""
    extra = turn.get("extra")
    managed = extra.get("context_management") if isinstance(extra, dict) else None
    return (isinstance(managed, dict) and managed.get("boundary") == "replace") or bool(_links(turn, 0))


def _copied(line: _Line, turn: dict, i: int) -> None:
    """A turn copied from an earlier trajectory for context (ATIF v1.5 `is_copied_context`: a continuation
    after summarization, a subagent's inherited history): history, never an action of this line. Its system
    prompt and first user message still say what the task is; the user messages after the last copied agent
    turn are what the line's first action saw (a continuation's handoff)."""
    line.copied.append(turn.get("step_id", i + 1))
    message = _text(turn.get("message")) or ""
    if turn["source"] == "system" and line.system_prompt is None:
        line.system_prompt = message
    elif turn["source"] == "user":
        line.task = _first_task(line.task, message)
        if message:
            line.pending.append(Message("user", message))
    elif turn["source"] == "agent":
        line.pending = []  # what came before it was the copied history's, answered there


def _line(turns: list[tuple[int, dict]], name: str, exact: bool, parser: str | None = None) -> Iterator[Rejected]:
    """Steps of one line of turns; yields the Rejected rows, returns the `_Line`. `exact`: our own export,
    whose timestamps are ours already (no parallel-call repair); `parser`: Terminus 2's reply parser."""
    line = _Line(parser=parser)
    rows: list[Rejected] = []
    made = steps_of(_messages(line, turns, name, exact, rows))  # the core reads the turns' messages as they come
    yield from rows
    yield from made.warnings  # none by construction: a message the core could not place is never dropped unsaid
    line.steps, line.final = made.steps, made.final_observation
    for n in line.inferred:
        line.steps[n].action_inferred = True
    for n, model in enumerate(made.models):
        if model:
            line.models.setdefault(model, []).append(n)
    return line


def _messages(line: _Line, turns: list[tuple[int, dict]], name: str, exact: bool,
              rows: list[Rejected]) -> Iterator[Message]:
    """The transcript of one line of turns, read into `line` on the way; a malformed turn adds its row to
    `rows` and is left out."""
    clock = _ParallelClock(line, exact)
    for i, turn in turns:
        where = f"steps[{i}]"
        mine = _ours(turn)
        if not _STEP_FIELDS.issuperset(turn):  # a set test in C: nearly every turn has only ATIF's fields
            line.unknown[where] = {k: turn[k] for k in turn if k not in _STEP_FIELDS}
        if turn.get("is_copied_context") is True:
            _copied(line, turn, i)
            continue
        try:
            if _context_turn(line, turn, i, mine, clock):
                continue
            calls = _calls(turn, where)
            if not calls and turn["source"] == "agent" and "action" not in mine:
                turn, calls = _terminus_turn(line, turn, where)
            results = _results(turn, where)
            restored_action = None
            if isinstance(mine.get("action"), dict) and len(calls) <= 1:
                restored_action = _restored_action(mine["action"], f"{where}.extra.{EXTRA_KEY}.action")
            restored_next = _UNSET
            if "observation" in mine:
                restored_next = _restored_observation(mine["observation"], f"{where}.extra.{EXTRA_KEY}.observation")
        except Malformed as e:
            rows.append(Rejected("bad_record", f"{name}: {e.where} {e.what}; the turn is left out", e.where,
                                 snippet=dumps(turn)[:2000]))
            continue
        yield from _agent_turn(line, turn, i, calls, results, restored_action, restored_next,
                               clock.stamp(turn, calls))
        if mine.get("action_inferred") is True:
            line.inferred.update(range(line.count - max(1, len(calls)), line.count))
        line.finished = any(call["function_name"] in FINISH_TOOLS for call in calls)
        if mine.get("branches"):  # only our export writes them
            rows += _line_branches(line, mine, i, name)
    yield from line.pending


class _ParallelClock:
    """The parallel-call repair of agent turn times (see the module docstring): a call turn stamped before the
    latest time of the run of call turns it belongs to, yet not before the run began, is one of several calls
    made at once and logged late; its time is kept in `line.parallel_times`, not on the step."""

    def __init__(self, line: _Line, exact: bool):
        self.line, self.exact = line, exact
        self.run_max = self.baseline = self.latest = None
        self.in_run = False

    def end_run(self) -> None:
        self.in_run = False

    def stamp(self, turn: dict, calls: list[dict]):
        stamp = parse_time(turn.get("timestamp"))
        if calls and not self.exact and stamp is not None:
            if not self.in_run:
                self.in_run, self.baseline, self.run_max = True, self.latest, self.latest
            if self.run_max is not None and stamp < self.run_max and (self.baseline is None or stamp >= self.baseline):
                for j in range(len(calls)):
                    self.line.parallel_times[str(self.line.count + j)] = turn["timestamp"]
                stamp = None
            else:
                self.run_max = stamp if self.run_max is None else max(self.run_max, stamp)
        elif not calls:
            self.in_run = False
        if stamp is not None:
            self.latest = stamp if self.latest is None else max(self.latest, stamp)
        return stamp


def _context_turn(line: _Line, turn: dict, i: int, mine: dict, clock: _ParallelClock) -> bool:
    """A system or user turn, read into the line (prompt, events, the task, pending observations); False for an
    agent turn. Raises Malformed."""
    where = f"steps[{i}]"
    if turn["source"] == "system":
        # the system prompt opens a line; a system turn after that is an event (a context-summary handoff, an
        # environment notice), kept apart so it never replaces the prompt
        if line.system_prompt is None and not line.began:
            line.system_prompt = _text(turn.get("message")) or ""
        else:
            line.system_events.append({"step": line.count, "step_id": turn.get("step_id", i + 1),
                                       "message": _text(turn.get("message")), "extra": turn.get("extra")})
            if _replaces_context(turn):
                line.pending = []  # the context was compacted: what came before is gone for the agent
        line.subagents += _links(turn, line.count)
        return True
    line.began = True
    if turn["source"] != "user":
        return False
    clock.end_run()
    message = _text(turn.get("message")) or ""
    line.task = _first_task(line.task, message)
    if "observation" in mine:  # our export: an observation, or (null) the task alone
        restored = _restored_observation(mine["observation"], f"{where}.extra.{EXTRA_KEY}.observation")
        if restored is not None:
            line.pending.append(Message("user", observation=restored))
    elif message:
        line.pending.append(Message("user", message))
    return True


def _agent_turn(line: _Line, turn: dict, i: int, calls: list[dict], results: list[dict],
                restored_action: Action | None, restored_next, stamp) -> list[Message]:
    """What the line's transcript says up to an agent turn: the messages held back, then the turn as an
    assistant message (one step per tool call, or one message step) and its results as tool messages, each
    naming the call it answers: a result goes to the call of this turn its `source_call_id` names; one that
    names no call of the turn (or none) goes to the turn's last call, never dropped, and two that name one call
    are both kept, in order. The last call's results are held back in `line.pending`; our export's restored
    next observation replaces them (`restored_next`; `_UNSET` where there is none)."""
    call_ids = {_id(c.get("tool_call_id")) for c in calls}
    by_call: dict[str, list] = {}
    loose = []
    for r in results:
        source = _id(r.get("source_call_id"))
        (by_call.setdefault(source, []) if source and source in call_ids else loose).append(r)
    message = _text(turn.get("message"))
    failed = isinstance(turn.get("extra"), dict) and turn["extra"].get("tool_result_is_error") is True
    said = Message("assistant", message, reasoning=turn.get("reasoning_content")
                   if isinstance(turn.get("reasoning_content"), str) else None,
                   model=turn.get("model_name") if isinstance(turn.get("model_name"), str) else None,
                   timestamp=stamp)
    if not calls:
        said.action = restored_action if restored_action is not None else Action(
            kind="message", text=message or "", raw=turn.get(_REPLY_RAW) or dumps({"message": message or ""}))
    messages = [*line.pending, said]
    n = max(len(calls), 1)
    for j, call in enumerate(calls or [None]):
        last = j == n - 1
        if last:
            out, messages = messages, []  # the last call's results: held back until the next action
        found = by_call.get(_id(call.get("tool_call_id")), []) if call else []
        if last and loose:
            found = found + loose
        if found:
            line.subagents += _result_links(found, line.count + j)
        # the key the core pairs a result with its call by (turn, call); a message step's results name a key no
        # call has, which the core keeps after the latest step: that message step
        key = f"{i}.{j}"
        if call is not None:  # the action and its results' observations are this reader's own
            action = restored_action if restored_action is not None else _call_action(
                call["function_name"], call.get("arguments"), call.get(_REPLY_RAW) or dumps(call))
            said.tool_calls.append(ToolCall(key, None, action=action))
        else:
            action = said.action
        if last and restored_next is not _UNSET:
            found = [] if restored_next is None else [restored_next]
        else:
            tool = _shell(action.tool_name)
            kind = "terminal" if action.kind == "keystrokes" else None  # a pane's screen after the keys
            error = True if failed and len(calls) == 1 else None
            found = [tool_observation(tool, _text(r.get("content")), kind=kind, is_error=error) for r in found]
        messages += [Message("tool", tool_call_id=key, observation=seen) for seen in found]
    line.count += n
    line.pending = messages
    return out


def _line_branches(line: _Line, mine: dict, i: int, name: str) -> Iterator[Rejected]:
    """The branches our export keeps on an agent turn (`extra.<EXTRA_KEY>.branches`), hung from its last step."""
    where = f"steps[{i}]"
    records = mine.get("branches") or []
    if not isinstance(records, list):
        yield Rejected("bad_record", f"{name}: {where}.extra.{EXTRA_KEY}.branches is not an array; no branch is "
                       "read from it", f"{where}.extra.{EXTRA_KEY}.branches", snippet=dumps(records)[:2000])
        records = []
    for k, record in enumerate(records):
        branch = _branch(record, line.count - 1)
        if branch is None:
            yield Rejected("bad_record", f"{name}: steps[{i}] branch {k}: needs an object with 'origin', an "
                           "'action' object with a 'kind' and a 'next_observation' object",
                           f"steps[{i}].extra.{EXTRA_KEY}.branches[{k}]", snippet=dumps(record)[:2000])
        else:
            line.branches.append(branch)


def _branch(record, step: int) -> Branch | None:
    """A branch our export listed on a turn, or None when its record is malformed."""
    if not isinstance(record, dict) or not isinstance(record.get("origin"), str):
        return None
    try:
        action = _restored_action(record.get("action"), "action")
        state = _restored_observation(record.get("next_observation"), "next_observation")
    except Malformed:
        return None
    if state is None:
        return None
    text = lambda key: record[key] if isinstance(record.get(key), str) else None  # noqa: E731
    return Branch(step=step, origin=record["origin"], action=action, next_observation=state,
                  strategy=text("strategy"), labeler=text("labeler"), request_key=text("request_key"))


# documents -> episodes -------------------------------------------------------------------------------------
def _sidechain_key(turn: dict) -> str | None:
    """`sidechain[:<agent id>]` for a Claude Code subagent's turn, None for the main line."""
    extra = turn.get("extra")
    if not isinstance(extra, dict) or extra.get("is_sidechain") is not True:
        return None
    agent_id = _id(extra.get("agent_id"))
    return f"sidechain:{agent_id}" if agent_id else "sidechain"


def _first_task(task: str | None, message: str) -> str | None:
    """The line's task once a user message is read: the first one, unless a coding-agent CLI wrote it as
    context (Codex's `<environment_context>`, `# AGENTS.md instructions`...: Harbor's Codex agent records
    them as user steps before the prompt, so the first user message of every trial would be the same)."""
    if task is not None or message.lstrip().startswith(INJECTED_USER_CONTEXT):
        return task
    return message


def _task(message: str | None) -> str | None:
    """The task of a first user message: the `Task Description:` block of Terminus 2's prompt template
    (its instruction, without the template around it), else the whole message."""
    m = _TASK_DESCRIPTION.search(message or "")
    return m.group(1).strip() if m else message


def _parent_by_session(agent_info: dict) -> dict | None:
    """The parent of a subagent trajectory read on its own: Terminus 2 writes the delegating run's session in
    `agent.extra.parent_session_id` (its episode has that `env.session_id`)."""
    extra = agent_info.get("extra") if isinstance(agent_info.get("extra"), dict) else {}
    session = extra.get("parent_session_id")
    return {"session_id": session, "relation": "subagent"} if isinstance(session, str) else None


def _line_env(line: _Line, doc: dict, name: str) -> dict:
    """What an episode's `env` says of its line beyond the header: copied context, later system turns,
    subagent links, and the fields ATIF does not define (kept raw, with a warning)."""
    env: dict = {}
    if line.copied:
        env["copied_context"] = {"turns": len(line.copied), "step_ids": line.copied}
    if line.system_events:
        env["system_events"] = line.system_events
    if line.subagents:
        env["subagents"] = line.subagents
    if line.replies:
        env["terminus_replies"] = line.replies
    for undecoded in line.undecoded:
        warn(env, "atif.undecoded_reply", f"{name}: {undecoded}: Terminus 2's reply kept as a message, its "
             "commands not read")
    unknown = dict(line.unknown)
    if root_unknown := {k: doc[k] for k in doc if k not in _ROOT_FIELDS}:
        unknown["root"] = root_unknown
    if unknown:
        env["atif_unknown_fields"] = unknown
        for where, fields in unknown.items():
            warn(env, "atif.unknown_field", f"{name}: {where}: {', '.join(sorted(fields))} is not an ATIF field; "
                 "kept raw in env.atif_unknown_fields")
    return env


def _read_doc(doc, name: str, key: str = "", trial: dict | None = None, parent: dict | None = None,
              uri: str = "", depth: int = 0) -> Iterator[Episode | Rejected]:
    """The episodes of one ATIF document: the main line (key `key`), its sidechains and its embedded subagent
    trajectories (v1.7). `parent`: the link to the episode that delegated to this one (`env["parent"]`);
    `uri`: the unit's uri (for the ids the links name)."""
    root = _root_of(doc, name)
    exact = bool(root)
    agent_info = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
    main, sides = yield from _lines_of(doc, name, exact)
    extra = agent_info.get("extra") if isinstance(agent_info.get("extra"), dict) else {}
    line = yield from _line(main, name, exact, extra.get("parser") if extra.get("parser") in ("json", "xml") else None)
    prefix = f"{key}:" if key else ""
    embedded = doc.get("subagent_trajectories")
    embedded = embedded if isinstance(embedded, list) and depth < MAX_SUBAGENT_DEPTH else []
    ids = {_id(sub.get("trajectory_id")) or str(n): prefix + f"subagent:{_id(sub.get('trajectory_id')) or n}"
           for n, sub in enumerate(embedded) if isinstance(sub, dict)}
    for link in line.subagents:  # a link names the episode it leads to
        target = ids.get(_id(link.get("trajectory_id")))
        if target is not None:
            link["episode_id"] = episode_id(FORMAT, uri, target)
    header_model = agent_info.get("model_name") if isinstance(agent_info.get("model_name"), str) else None
    session = {"session_id": doc.get("session_id"), "agent": agent_info or None}
    if not line.steps:  # the task too: a trial whose agent stopped before its first turn still says what it was
        yield episode_without_steps(
            f"{name}: no agent steps" + (" on the main line" if sides else ""), name,
            trial["outcome"] if trial else "unknown", trial["reward"] if trial else None, task=_task(line.task),
            agent=header_model, session_id=session["session_id"], harbor=trial["env"] if trial else None,
            verifier_output=trial["verifier_output"] if trial else None)
    else:
        agent = header_model or _line_agent(line, agent_info)
        env = {"system_prompt": line.system_prompt, **session, "final_metrics": doc.get("final_metrics"),
               "notes": doc.get("notes")}
        if set(line.models) - {agent}:
            env["models"] = line.models
        if line.parallel_times:
            env["parallel_call_times"] = line.parallel_times
        if sides:
            env["sidechains"] = {"turns": sum(len(t) for t in sides.values()),
                                 "episodes": [prefix + s for s in sorted(sides)]}
        env |= _line_env(line, doc, name)
        parent = parent or _parent_by_session(agent_info)
        if parent is not None:
            env["parent"] = parent
        yield _main_episode(line, root, env, key, trial, agent)
    for side, turns in sorted(sides.items()):
        yield from _sidechain_episode(side, turns, name, exact, key, session, trial, header_model)
    link = {"episode_id": episode_id(FORMAT, uri, key), "key": key, "session_id": doc.get("session_id"),
            "relation": "subagent"}
    for n, sub in enumerate(embedded):
        where = f"{name} subagent_trajectories[{n}]"
        if not isinstance(sub, dict):
            yield Rejected("bad_record", f"{where} is not an object; left out", where, snippet=dumps(sub)[:2000])
            continue
        try:
            yield from _read_doc(sub, where, ids[_id(sub.get("trajectory_id")) or str(n)], parent=link, uri=uri,
                                 depth=depth + 1)
        except SourceError as e:
            yield Rejected(e.rule, e.reason, e.location or where)


def _root_of(doc, name: str) -> dict:
    """The document's own fields our export wrote (`extra.<EXTRA_KEY>`; empty for others' files), checked.
    Raises SourceError when the document is no ATIF trajectory."""
    if not isinstance(doc, dict) or not str(doc.get("schema_version", "")).startswith("ATIF-"):
        raise SourceError("bad_record", f"{name}: no ATIF schema_version", name)
    if not isinstance(doc.get("steps"), list):
        raise SourceError("bad_record", f"{name}: 'steps' must be an array", f"{name}: steps")
    root = _ours(doc)
    try:
        return _checked(root, _ROOT_TYPES, f"extra.{EXTRA_KEY}") | {k: root[k] for k in root if k not in _ROOT_TYPES}
    except Malformed as e:
        raise SourceError("bad_record", f"{name}: {e.where} {e.what}", e.where) from None


def _lines_of(doc: dict, name: str, exact: bool) -> Iterator[Rejected]:
    """Yields a row for each turn of no known source; returns (the main line's turns, the sidechains' turns by
    key), each turn with its index."""
    main: list[tuple[int, dict]] = []
    sides: dict[str, list[tuple[int, dict]]] = {}
    for i, turn in enumerate(doc["steps"]):
        if not isinstance(turn, dict) or turn.get("source") not in ("system", "user", "agent"):
            yield Rejected("bad_record", f"{name}: steps[{i}].source is not system, user or agent; the turn is "
                           "left out", f"steps[{i}].source", snippet=dumps(turn)[:2000])
            continue
        side = None if exact else _sidechain_key(turn)
        (sides.setdefault(side, []) if side else main).append((i, turn))
    return main, sides


def _line_agent(line: _Line, agent_info: dict) -> str | None:
    """The agent of a line whose header names no model: its one model, else the header's agent name."""
    if len(line.models) == 1:
        return next(iter(line.models))
    return agent_info.get("name") if isinstance(agent_info.get("name"), str) else None


def _main_episode(line: _Line, root: dict, env: dict, key: str, trial: dict | None, agent: str | None) -> Episode:
    """The main line's episode; the trial's verdict, and our export's own fields, win over what the line says."""
    outcome, reward, terminated = "unknown", None, line.finished
    if trial is not None:
        env["harbor"] = trial["env"]
        if trial["outcome_file"]:
            env["outcome_file"] = trial["outcome_file"]
        env["verifier_output"] = trial["verifier_output"]
        outcome, reward, terminated = trial["outcome"], trial["reward"], trial["terminated"]
    if isinstance(root.get("env"), dict):
        env = {**root["env"]}
    tools = [s.action.tool_name for s in line.steps]
    return Episode(
        key=key,
        domain=root.get("domain") or episode_domain(tools, "terminal"),
        platform=root.get("platform", "linux"),
        steps=line.steps,
        task=root["task"] if "task" in root else _task(line.task),
        agent=root["agent"] if "agent" in root else agent,
        outcome=root.get("outcome") or outcome,
        reward=root["reward"] if "reward" in root else reward,
        terminated=bool(root.get("terminated", terminated)),
        final_observation=line.final,
        env={k: v for k, v in env.items() if v is not None},
        branches=line.branches,
    )


def _sidechain_episode(side: str, turns: list[tuple[int, dict]], name: str, exact: bool, key: str, session: dict,
                       trial: dict | None, header_model: str | None) -> Iterator[Episode | Rejected]:
    """A sidechain's episode (a subagent logged inside the main document), or an `empty_episode` row."""
    prefix = f"{key}:" if key else ""
    sub = yield from _line(turns, f"{name} ({side})", exact)
    if not sub.steps:
        yield Rejected("empty_episode", f"{name}: {side} has no agent steps", f"{name}: {side}")
        return
    models = list(sub.models)
    env = {**session, "sidechain": {"of": key, "agent_id": side.partition(":")[2] or None, "turns": len(turns)}}
    if len(models) > 1:
        env["models"] = sub.models
    if sub.parallel_times:
        env["parallel_call_times"] = sub.parallel_times
    if trial is not None:
        env["harbor"] = {k: v for k, v in trial["env"].items() if k in ("trial_name", "task_name", "source")}
    yield Episode(key=prefix + side, domain=episode_domain([s.action.tool_name for s in sub.steps], "terminal"),
                  platform="linux", steps=sub.steps, task=sub.task,
                  agent=models[0] if len(models) == 1 else header_model,
                  final_observation=sub.final,
                  env={k: v for k, v in env.items() if v is not None})


# Harbor trials ------------------------------------------------------------------------------------------------
def _reward_of(rewards) -> float | None:
    if not isinstance(rewards, dict):
        return None
    if "reward" in rewards:
        value = rewards["reward"]
    else:
        value = next(iter(rewards.values())) if len(rewards) == 1 else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _trial(source: Source) -> tuple[dict, list[Rejected]]:
    """Reward, outcome, terminated and `env["harbor"]` of a trial folder, from its result and verifier files."""
    problems: list[Rejected] = []
    try:
        result = parse_json(source.read_bytes("result.json"), "result.json")
    except SourceError as e:
        result = None
        problems.append(Rejected(e.rule, f"{e.reason}; the trial's reward is read from verifier/ only", "result.json"))
    result = result if isinstance(result, dict) else {}
    verifier = result.get("verifier_result") if isinstance(result.get("verifier_result"), dict) else {}
    rewards = verifier.get("rewards") if isinstance(verifier.get("rewards"), dict) else None
    reward = _reward_of(rewards)
    decided = "result.json" if rewards is not None else None
    if reward is None and rewards is None and source.exists("verifier/reward.txt"):
        text = source.read_bytes("verifier/reward.txt").decode("utf-8", "replace").strip()
        try:
            reward, decided = float(text), "verifier/reward.txt"
        except ValueError:
            problems.append(Rejected("parse_error", f"verifier/reward.txt: reward {text[:50]!r} is not a number",
                                     "verifier/reward.txt", snippet=text[:200]))
    if reward is None and rewards is None and source.exists("verifier/reward.json"):
        try:
            rewards = parse_json(source.read_bytes("verifier/reward.json"), "verifier/reward.json")
            reward, decided = _reward_of(rewards), "verifier/reward.json"
        except SourceError as e:
            problems.append(Rejected(e.rule, e.reason, "verifier/reward.json"))
    exception = result.get("exception_info") if isinstance(result.get("exception_info"), dict) else None
    kind = str(exception.get("exception_type") or "") if exception else ""
    env = {k: result.get(k) for k in ("trial_name", "task_name", "source", "agent_info", "started_at", "finished_at")}
    if isinstance(rewards, dict) and set(rewards) != {"reward"}:
        env["rewards"] = rewards
    if exception:
        env["exception"] = {"type": kind or None, "message": str(exception.get("exception_message") or "")[:500]}
    stdout = source.read_bytes(VERIFIER_STDOUT).decode("utf-8", "replace") if source.exists(VERIFIER_STDOUT) else None
    return {"env": {k: v for k, v in env.items() if v is not None}, "reward": reward,
            "verifier_output": None if stdout is None else {"file": posixpath.join(source.uri, VERIFIER_STDOUT),
                                                            "text": stdout},
            "outcome_file": posixpath.join(source.uri, decided) if reward is not None and decided else None,
            "outcome": "unknown" if reward is None else "success" if reward >= 1.0 else "failure",
            "terminated": not exception or kind.startswith(_VERIFIER_ERRORS)}, problems


def _file_links(doc, key: str, uri: str) -> dict[str, dict]:
    """The trajectory files a document points to in its own folder (Terminus 2 writes its summarization
    subagents as `trajectory.summarization-N-*.json` and names them in `subagent_trajectory_ref`; linear-history
    continuations as `trajectory.cont-N.json` in `continued_trajectory_ref`), each with the link back."""
    if not isinstance(doc, dict):
        return {}
    back = {"episode_id": episode_id(FORMAT, uri, key), "key": key, "session_id": doc.get("session_id")}
    found = {}
    if isinstance(doc.get("continued_trajectory_ref"), str):
        found[posixpath.basename(doc["continued_trajectory_ref"])] = {**back, "relation": "continuation"}
    for turn in doc.get("steps") if isinstance(doc.get("steps"), list) else []:
        for link in _links(turn, 0) if isinstance(turn, dict) else []:
            if isinstance(link.get("trajectory_path"), str):
                found[posixpath.basename(link["trajectory_path"])] = {**back, "relation": "subagent"}
    return found


def _read_trial(source: Source) -> Iterator[Episode | Rejected]:
    trial, problems = _trial(source)
    yield from problems
    names = [f"agent/{n}" for n in source.listdir("agent") if n.endswith(".json")]
    if TRAJECTORY not in names and _sessions(source):
        yield from _read_sessions(source, trial)
    elif TRAJECTORY not in names:
        harbor = trial["env"]
        what = f"Harbor trial {harbor.get('trial_name') or posixpath.basename(source.path)}"
        if harbor.get("task_name"):
            what += f" (task {harbor['task_name']})"
        error = harbor.get("exception")
        yield Rejected("missing_trajectory", f"{what}: result.json but no {TRAJECTORY}: the agent wrote no ATIF "
                       "trajectory" + (f"; the trial failed with {error['type']}: {error['message'][:200]}"
                                       if error else ""), TRAJECTORY)
    links: dict[str, dict] = {}  # file name -> the link to the episode that names it
    for path in sorted(names, key=lambda p: (p != TRAJECTORY, p)):
        data = source.read_bytes(path)
        if path != TRAJECTORY and not _is_atif(data[:4096]):
            continue
        key = "" if path == TRAJECTORY else path
        try:
            doc = parse_json(data, path, source.budgets)
            links.update(_file_links(doc, key, source.uri))
            yield from _read_doc(doc, path, key, trial if path == TRAJECTORY else None,
                                 parent=links.get(posixpath.basename(path)), uri=source.uri)
        except SourceError as e:
            yield Rejected(e.rule, e.reason, e.location or path)


def _sessions(source: Source) -> list[str]:
    """The Claude Code session files a trial's agent left (`agent/sessions/projects/<project>/<id>.jsonl`)."""
    base = _SESSIONS
    return [f"{base}/{p}/{n}" for p in source.listdir(base) for n in source.listdir(f"{base}/{p}")
            if n.endswith(".jsonl")]


def _read_sessions(source: Source, trial: dict) -> Iterator[Episode | Rejected]:
    from ingest.swe import claude_code

    for rel in _sessions(source):
        for record in claude_code.transcript_records(source.read_bytes(rel), rel, source.budgets):
            if isinstance(record, Episode):
                record.key = f"{rel}:{record.key}" if record.key else rel
                record.env["harbor"] = trial["env"]
                if "sidechains" in record.env:
                    record.env["sidechains"] = [f"{rel}:{k}" for k in record.env["sidechains"]]
                if "sidechain" not in record.env:  # the trial's outcome is the main line's
                    record.outcome, record.reward, record.terminated = trial["outcome"], trial["reward"], \
                        trial["terminated"]
                    if trial["outcome_file"]:
                        record.env["outcome_file"] = trial["outcome_file"]
                    if trial["verifier_output"]:
                        record.env["verifier_output"] = trial["verifier_output"]
            yield record


def read(source: Source) -> Iterator[Episode | Rejected]:
    if source.exists("result.json"):  # a Harbor trial folder (a file unit lists nothing)
        yield from _read_trial(source)
        return
    name = posixpath.basename(source.path)
    yield from _read_doc(parse_json(source.read_bytes(), name, source.budgets), name, uri=source.uri)

