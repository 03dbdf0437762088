"""What agents' own OSWorld runners (their `lib_run_single.py` variants) write into a result folder beside the
harness's `traj.jsonl`, `result.txt` and screenshots, and which of it the reader takes.

Files:
- `instruction.txt`: the task, as given to the agent (Agent S2.5 and S3's runners, OSWorld's VLAA-GUI loop): the
  episode's task where no line names one; where a line's `instruction` differs, the file's text is kept in
  `env["instruction_txt"]`.
- `time.txt`: the run's wall-clock seconds (`f"{end - start:.2f}"`, OS-Symphony's loop): `env["run_seconds"]`.
- `step_0.png` / `step_0_<time>.png`: the screen before the first action (`ingest.ubuntu.osworld_agents`);
  `initial_state.png`, named by the header line `{"instruction", "initial_state"}` of OSWorld's human-run loop.
- Listed in `ignored_inputs` with why (`unread_why`): `recording.mp4`, `runtime.log`, `traj.html`, `logs/`,
  Agent S3's Behavior Best-of-N `fact_captions.jsonl`, OS-Symphony's `traj_<n>.json` (each line again) and
  `step_<n>_draw.png` (the screenshot with the model's points drawn on it, not what the agent saw).

Line fields beyond the harness's own (`HARNESS_KEYS`): Agent S merges its agent's info into each line (S2.5:
`full_plan`, `executor_plan`, `plan_thoughts`, `plan_code`, `reflection`, `reflection_thoughts`; S3: `plan`,
`plan_code`, `exec_code`, `reflection`, `reflection_thoughts`, `code_agent_output`), OSWorld's OpenCUA / Kimi /
EvoCUA loops add `natural_language_action`, its GPT-5.4 loop `state_correct`, `model_usage` and `messages`,
Mobile-Agent v3 `step_status`, MCP-hybrid loops `action_type`, `parsed_action`, `exec_ok`, `exec_result`,
`tools_available`, CUA bridges `agent_info`. They are kept raw per step in `env["agent_fields"]` (`{"step",
"line", "fields"}`); a field none of these runners writes is kept the same way with a warning. Agent S's
`exec_code` is left out where it is the line's `action` itself (the runner executes it as the action), the
harness's `info` is kept where it says more than the `done` / `fail` flag its DONE / FAIL lines restate, and a
`messages` list that is the start of a later line's is kept there once (`{"first": n, "of_line": line}`). Agent S
logs no `response`: its plan (S3 `plan`, S2.5 `full_plan`) is the step's reasoning.
"""

from __future__ import annotations

import posixpath
import re

from ingest.record import Rejected, warn
from ingest.source import Source

HARNESS_KEYS = frozenset({"step_num", "action_timestamp", "action", "response", "reward", "done", "info",
                          "screenshot_file", "instruction", "initial_state", "Error"})
AGENT_KEYS = frozenset({
    "full_plan", "executor_plan", "plan_thoughts", "plan_code", "reflection", "reflection_thoughts",  # Agent S2.5
    "plan", "exec_code", "code_agent_output",  # Agent S3
    "natural_language_action",  # OSWorld's OpenCUA, Kimi and EvoCUA loops
    "state_correct", "model_usage", "messages",  # OSWorld's GPT-5.4 loop
    "step_status",  # Mobile-Agent v3
    "action_type", "parsed_action", "exec_ok", "exec_result", "tools_available",  # MCP-hybrid loops
    "agent_info",  # CUA bridge loops
})
_REASONING_KEYS = ("plan", "full_plan", "executor_plan")
_FLAG_INFO = ({}, {"done": True}, {"fail": True})
_READ = ("traj.jsonl", "result.txt", "instruction.txt", "time.txt", "messages.json")
_LINE_COPY = re.compile(r"traj_\d+\.json")
_WHY = {
    "recording.mp4": "the harness's screen recording of the run (the screenshots of its steps are read)",
    "runtime.log": "the runner's log of the run (its messages; the steps are read from traj.jsonl)",
    "traj.html": "an HTML page a runner writes of the run or of its crash (the steps are read from traj.jsonl)",
    "fact_captions.jsonl": "Agent S3's Behavior Best-of-N judge's captions of the screenshot pairs, written after "
                           "the run (a judge's notes, not steps of the run)",
}


def reads(rel: str) -> bool:
    """Whether the reader reads the file `rel` of a result folder."""
    if rel in _READ:
        return True
    return "/" not in rel and rel.endswith(".png") and not rel.endswith("_draw.png")


def unread_why(rel: str) -> str:
    """Why a result folder's file `rel` is not read (planning lists it in `ignored_inputs`)."""
    if rel in _WHY:
        return _WHY[rel]
    if _LINE_COPY.fullmatch(rel):
        return "a copy of one traj.jsonl line (OS-Symphony's runner writes each line twice); read from traj.jsonl"
    if rel.endswith("_draw.png"):
        return "the screenshot with the model's points drawn on it (OS-Symphony), not the screen the agent saw"
    if rel.startswith("logs/"):
        return "a runner's per-task log (its messages; the steps are read from traj.jsonl)"
    return "the reader reads traj.jsonl, result.txt, instruction.txt, time.txt, messages.json and the screenshots"


def agent_reasoning(record: dict) -> str | None:
    """Agent S's reply where the line logs no `response`."""
    return next((record[k] for k in _REASONING_KEYS if isinstance(record.get(k), str) and record[k]), None)


def line_fields(record: dict) -> dict:
    """What a line holds beyond the harness's fields (see the docstring)."""
    fields = {k: v for k, v in record.items() if k not in HARNESS_KEYS}
    if fields.get("exec_code") == record.get("action"):
        fields.pop("exec_code", None)
    if "info" in record and record["info"] not in _FLAG_INFO:
        fields["info"] = record["info"]
    return fields


def keep_fields(env: dict, kept: list[dict]) -> None:
    """Put the lines' own fields in `env["agent_fields"]`, with a warning naming those no known runner writes."""
    if not kept:
        return
    _messages_once(kept)
    env["agent_fields"] = kept
    unknown = sorted({k for entry in kept for k in entry["fields"] if k not in AGENT_KEYS and k != "info"})
    if unknown:
        warn(env, "osworld.unknown_field", f"traj.jsonl: {', '.join(unknown)} is not a field of OSWorld's harness "
             "or of a known agent's runner; kept raw in env.agent_fields")


def _messages_once(kept: list[dict]) -> None:
    """A loop that logs its whole conversation on every line (`messages`, screenshots inline) repeats each line's
    list at the start of the next: an earlier copy that is such a start is said as its length, not kept twice."""
    later = None
    for entry in reversed(kept):
        messages = entry["fields"].get("messages")
        if not isinstance(messages, list):
            continue
        if later is not None and messages and later[1][:len(messages)] == messages:
            entry["fields"]["messages"] = {"first": len(messages), "of_line": later[0]}
        else:
            later = (entry["line"], messages)


def _text(source: Source, name: str) -> str | None:
    if not source.exists(name):
        return None
    return source.read_bytes(name).decode("utf-8", "replace")


def runner_env(source: Source, task: str | None, env: dict) -> tuple[str | None, list[Rejected]]:
    """Read instruction.txt and time.txt into the task and `env`; returns the task and the rows for bad files."""
    rows = []
    said = _text(source, "instruction.txt")
    if said is not None and said.strip():
        if task is None:
            task = said
        elif said.strip() != task.strip():
            env["instruction_txt"] = said
    seconds = _text(source, "time.txt")
    if seconds is not None:
        try:
            env["run_seconds"] = float(seconds.strip())
        except ValueError:
            rows.append(Rejected("parse_error", f"time.txt: {seconds.strip()[:50]!r} is not a number of seconds",
                                 "time.txt"))
    return task, rows


def header_screenshot(records: list[dict]) -> str | None:
    """The initial screen a header line names (OSWorld's human-run loop: `{"instruction", "initial_state"}`)."""
    for record in records:
        name = record.get("initial_state")
        if "action" not in record and isinstance(name, str) and name == posixpath.basename(name) \
                and not name.startswith("."):
            return name
    return None


def written_as(source: Source, record: dict, referenced: set[str]) -> str | None:
    """The file a missing screenshot was written as: an OpenCUA loop (fxsc03/OSWorld-main-nex) names
    `step_<n>_<time>.png` in the line but writes `step_<n>.png`, which the next action of the same turn overwrites,
    so it is the screen after the turn's last line only (the caller asks for that line only). None where that is
    not the case."""
    name, turn = record.get("screenshot_file"), record.get("step_num")
    if not isinstance(name, str) or not isinstance(turn, int) or not name.startswith(f"step_{turn}_"):
        return None
    written = f"step_{turn}.png"
    if written in referenced or not source.exists(written):
        return None
    return written


def screens_before_action(records: list[dict]) -> bool:
    """Whether the lines name the screen *before* their action: OS-Symphony's loop saves `obs['screenshot']` as
    `step_<n>.png` (or `step_<n>_milestone.png`), then steps, and writes lines with the task (`instruction`) and
    no `action_timestamp`, which the harness's own lines always have."""
    lines = [r for r in records if "action" in r]
    return bool(lines) and all("instruction" in r and "action_timestamp" not in r for r in lines)


def shift_to_after(records: list[tuple[int, dict]], shots: list) -> tuple:
    """Screens before each action re-read as the reader's screens after each action: the first line's screen is
    the initial one, each line's next screen the following line's, and the last action's result is not recorded."""
    acting = [i for i, (_, r) in enumerate(records) if "action" in r]
    before = [shots[i] for i in acting]
    shifted = list(shots)
    for j, i in enumerate(acting):
        shifted[i] = before[j + 1] if j + 1 < len(before) else None
    return (before[0] if before else None), shifted
