"""Terminal-Bench trial directories: one trial (one task attempt by one agent) is one episode: the *agent's*.

A trial directory holds `results.json` (the harness's trial result: `task_id`, `instruction`, `is_resolved`,
`failure_mode`, `parser_results`, `trial_started_at`, `test_started_at`...), `commands.txt` (one line per
`send_keys` call the harness made to a tmux session, as the Python repr of a key list such as
`['ls -la', 'Enter']`, or of one string), `sessions/agent.cast` (asciicast v2 of the agent's tmux session,
recorded with `asciinema rec --stdin`: `o` output and `i` input events), `sessions/agent.log` (the same
session's raw output, from tmux `pipe-pane`), `sessions/tests.cast` / `tests.log` (the test run, in a
session of its own) and `panes/` (`pre-agent.txt`: the screen before the agent; `post-agent.txt`: the
session's whole scrollback after it; `post-test.txt`: the test session's screen).

**Who typed what.** `commands.txt` mixes the harness's keystrokes with the agent's. Lines are parsed with
`ast.literal_eval`, never evaluated, and sorted into phases (`_phases`): `record` (the `asciinema rec` that
starts the recording and the `clear` after it), `install` (`/installed-agent/` setup and install scripts),
`launch` (the lines after those: the command that starts an installed agent), `tests` (the last
`/tests/run-tests.sh` line, with the `asciinema rec` of `tests.cast` and its `clear` just before it, to
the end) and `stop` (the trailing `C-d`s that end the recordings). Every other line is an `agent` line: the
agent's own keystrokes. The harness's lines are kept in `env.harness_commands` (line, phase, keys), never
as steps; `env.agent_kind` says which kind of agent ran (`tmux` or `installed`).

**Two kinds of agents.**

- An agent that drives the tmux session (Terminus and the like): its keystrokes are the `agent` lines. One
  step per line, a `keystrokes` action in the world-model terminal form (`{"keystrokes": "ls -la\\n",
  "duration": null}`: tmux key names such as `Enter`, `C-c`, `Up` become the characters the terminal
  receives; the harness does not log waits, so duration is null). Its observation is the screen of
  `agent.cast`, rendered by a terminal emulator, just before the line's keys reach the terminal: the `i`
  event holding them (found in order in the input stream), or in a cast without input events the output
  event that echoes the command. Without a cast, step 0 sees `panes/pre-agent.txt` and later steps have
  no observation.
- An installed agent (mini-swe-agent, Claude Code, Codex...): the harness installs it and types one
  `launch` command; the agent then runs its commands in subprocesses of its own, so its actions are not
  keystrokes and appear only in what it prints. The agent phase of `agent.cast` (from the launch line's
  input event to the harness's next keystroke) is rendered into a transcript (`_Transcript`: the text as
  the terminal scrolled it, with the time each line was written; `agent.log` when there is no cast) and
  read by a parser for that agent's output. mini-swe-agent (`_mini_swe_agent`): one step per
  `mini-swe-agent (step N, $cost):` turn: a `command` action (the ```` ```bash ```` block; a turn without
  exactly one block is a `message`), `reasoning` the THOUGHT before it, the time the reply was printed;
  observation 0 is the task message the agent read (kind `text`), observation t+1 the `User:` message with
  the command's `<returncode>` and `<output>` (kind `tool_result`, `exit_code` from the return code).
  Rich, which mini-swe-agent prints through, breaks lines at the terminal width; those breaks are undone
  (`_unwrap`) so a command reads as it ran. The `raw` of an action holds the turn as printed (step number,
  cost so far, lines). `agent` is the agent's name; `env` adds `agent_command` (the launch line), `model`
  (its `-m`/`--model`), `agent_version`, `cost_usd` and `system_prompt`. An installed agent whose output
  no parser knows is quarantined (`agent_output_unknown`): its launch command is not the agent's run, and
  one step would hide the whole run.

**Final observation.** What followed the agent's last action: an installed agent's last `User:` message
when it printed one; else the agent session's screen when the harness next typed (the `C-d` that ends the
recording), rendered from `agent.cast`; else `panes/post-agent.txt`. It is never attached to a harness
keystroke, since those are not steps.

**Tests, kept apart.** The test run is the harness's, after the agent: it is not a step and not the final
observation. `env.tests` holds `parser_results` (test name -> passed/failed), `env.test_screen` the test
session's screen (`panes/post-test.txt`, else the end of `tests.cast`), `env.test_started_at` /
`test_ended_at` the times from `results.json`.

**Outcome.** `is_resolved` true -> success (reward 1), false -> failure (reward 0), null -> unknown. An agent
that was cut off (timeout, context length, crash: see `_CUT_OFF`), or an installed agent that did not
submit (mini-swe-agent's `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`), leaves a truncated episode; otherwise
the last step is terminal.

Bad input: an unparseable `commands.txt` line, a bad cast event, a field of `results.json` of the wrong type
(then left out) or a gap in mini-swe-agent's step numbers is a quarantine row naming the file, the line
where there is one, and the field; the rest of the trial is still read.
"""

from __future__ import annotations

import ast
import bisect
import datetime as dt
import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Iterator

import orjson
from wcwidth import wcswidth

from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Observation, Rejected, Step
from ingest.source import Source, SourceError, parse_json
from ingest.times import parse_time
from ingest.ubuntu.asciicast import Cast, TerminalReplay, parse_cast

FORMAT = "terminal_bench"
VERSION = "2"
INFO = FormatInfo(
    group="ubuntu", rank=160, domains=('terminal',), platform="linux",
    summary="Terminal-Bench trials",
)

_CUT_OFF = {"agent_timeout", "unknown_agent_error", "context_length_exceeded", "output_length_exceeded",
            "fatal_llm_parse_error", "agent_installation_failed"}
# tmux `send-keys` key names -> the bytes the terminal receives
_TMUX_KEYS = {
    "Enter": "\n", "C-m": "\n", "KPEnter": "\n", "Tab": "\t", "BTab": "\x1b[Z", "Escape": "\x1b", "Space": " ",
    "BSpace": "\x7f", "Up": "\x1b[A", "Down": "\x1b[B", "Right": "\x1b[C", "Left": "\x1b[D", "Home": "\x1b[H",
    "End": "\x1b[F", "PageUp": "\x1b[5~", "PPage": "\x1b[5~", "PageDown": "\x1b[6~", "NPage": "\x1b[6~",
    "DC": "\x1b[3~", "Delete": "\x1b[3~", "IC": "\x1b[2~",
}
_CTRL = re.compile(r"^(?:C-|\^)([A-Za-z@\[\\\]^_])$")
_META = re.compile(r"^M-(.)$")
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][0-9A-Za-z]|.)|[\x00-\x08\x0e-\x1f]")
# What the harness appends to a blocking command before its Enter (terminal_bench TmuxSession).
_BLOCKING_SUFFIX = "; tmux wait -S done"
# Terminal-Bench's tmux session is 160x40 (`tmux new-session -x 160 -y 40`): the width when no cast says it.
_DEFAULT_COLS = 160
_RESULT_TIMES = ("trial_started_at", "trial_ended_at", "agent_started_at", "agent_ended_at", "test_started_at",
                 "test_ended_at")


def units(files: list[str], head) -> list[str]:
    """A trial is a directory with `results.json` next to `commands.txt` or `sessions/`."""
    by_dir: dict[str, set[str]] = {}
    for path in files:
        parent, name = posixpath.split(path)
        by_dir.setdefault(parent, set()).add(name)
        if posixpath.basename(parent) == "sessions":
            by_dir.setdefault(posixpath.dirname(parent), set()).add("sessions/")
    return sorted(d for d, names in by_dir.items()
                  if "results.json" in names and ("commands.txt" in names or "sessions/" in names))


def keystrokes(keys: list[str]) -> str:
    """tmux send-keys arguments -> the characters typed: key names are translated, other words are literal."""
    out = []
    for key in keys:
        if key in _TMUX_KEYS:
            out.append(_TMUX_KEYS[key])
        elif m := _CTRL.match(key):
            out.append(chr(ord(m[1].upper()) & 0x1F))
        elif m := _META.match(key):
            out.append("\x1b" + m[1])
        else:
            out.append(key)
    return "".join(out)


def parse_commands(text: str, where: str) -> tuple[list[tuple[int, str, list[str]]], list[Rejected]]:
    """(line number, verbatim line, keys) for each line of commands.txt; bad lines become Rejected."""
    commands, rejected = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = ast.literal_eval(line)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
            rejected.append(Rejected("parse_error", f"{where} line {n}: not a Python literal: {e}", where,
                                     line=n, snippet=line[:200]))
            continue
        keys = [value] if isinstance(value, str) else value
        if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
            rejected.append(Rejected("bad_record", f"{where} line {n}: expected a list of strings, got "
                                     f"{type(value).__name__}", where, line=n, snippet=line[:200]))
            continue
        commands.append((n, line, keys))
    return commands, rejected


# phases -----------------------------------------------------------------------------------------------------
def _is_recording(typed: str) -> bool:
    return typed.lstrip().startswith("asciinema rec")


def _is_clear(typed: str) -> bool:
    return typed.strip() == "clear"


def _phases(texts: list[str]) -> list[str]:
    """The phase of each commands.txt line (see the module docstring): record, install, launch, tests, stop
    are the harness's; agent lines are the agent's keystrokes."""
    n = len(texts)
    phases = ["agent"] * n
    # the test run: from the last run-tests line back over the `asciinema rec` of tests.cast and its `clear`
    tests_at = n
    for i in range(n - 1, -1, -1):
        if "/tests/run-tests.sh" in texts[i]:
            tests_at = i
            for j in (i - 1, i - 2):
                if j >= 0 and _is_recording(texts[j]):
                    tests_at = j
            break
    for i in range(tests_at, n):
        phases[i] = "tests"
    if tests_at == n and n and texts[-1] == "\x04":  # no test run recorded: the last C-d ends the recording
        phases[-1] = "stop"
        tests_at = n - 1
    for i in range(tests_at, n):  # C-d after the test command: the harness ending its recordings
        if phases[i] == "tests" and texts[i] == "\x04" and all(t == "\x04" for t in texts[i:]):
            phases[i] = "stop"
    # the recording's start: `asciinema rec` and the `clear` right after it
    if tests_at and _is_recording(texts[0]):
        phases[0] = "record"
        if tests_at > 1 and _is_clear(texts[1]):
            phases[1] = "record"
    installs = [i for i in range(tests_at) if "/installed-agent/" in texts[i]]
    if installs:
        for i in installs:
            phases[i] = "install"
        for i in range(installs[-1] + 1, tests_at):
            phases[i] = "launch"
    return phases


# the cast ---------------------------------------------------------------------------------------------------
def _needle(text: str) -> str | None:
    """The part of a command the terminal echoes back: its first non-empty line, up to 40 characters."""
    for line in text.split("\n"):
        line = "".join(ch for ch in line if ch >= " " and ch != "\x7f").strip()
        if len(line) >= 2:
            return line[:40]
    return None


def _input_events(cast: Cast, texts: list[str]) -> list[int | None]:
    """For each command, the index in `cast.events` of the input event its keys start in (None when not
    found). Input events hold what the terminal received, in order; Enter arrives as CR."""
    inputs = [(k, data) for k, (_, code, data, _) in enumerate(cast.events) if code == "i"]
    offsets, total, parts = [], 0, []
    for _, data in inputs:
        offsets.append(total)
        parts.append(data)
        total += len(data)
    stream = "".join(parts).replace("\r", "\n")
    found: list[int | None] = []
    cursor = 0
    for typed in texts:
        if not typed:
            found.append(None)
            continue
        head = typed.split("\n", 1)[0][:40] or typed[:1]
        k = stream.find(head, cursor)
        if k < 0:
            found.append(None)
            continue
        found.append(inputs[bisect.bisect_right(offsets, k) - 1][0])
        if stream.startswith(typed, k):
            cursor = k + len(typed)
        elif typed.endswith("\n") and stream.startswith(typed[:-1] + _BLOCKING_SUFFIX + "\n", k):
            cursor = k + len(typed) + len(_BLOCKING_SUFFIX)
        else:
            cursor = k + len(head)
    return found


def _echo_events(cast: Cast, texts: list[str]) -> list[int | None]:
    """For a cast without input events: the index in `cast.events` of the output event that echoes each
    command (None when not found)."""
    outputs = [(k, data) for k, (_, code, data, _) in enumerate(cast.events) if code == "o"]
    plain, offsets = [], []
    total = 0
    for _, data in outputs:
        offsets.append(total)
        chunk = _ANSI.sub("", data)
        plain.append(chunk)
        total += len(chunk)
    flat = "".join(plain)
    found: list[int | None] = []
    cursor = 0
    for text in texts:
        needle = _needle(text)
        k = flat.find(needle, cursor) if needle else -1
        if k < 0:
            found.append(None)
            continue
        found.append(outputs[bisect.bisect_right(offsets, k) - 1][0])
        cursor = k + len(needle)
    return found


def _screens_before(cast: Cast, wanted: set[int]) -> tuple[dict[int, Observation], Observation]:
    """The rendered screen just before each wanted event index, and the screen at the end of the cast."""
    replay = TerminalReplay(cast.cols, cast.rows)
    screens: dict[int, Observation] = {}
    for k, (_, code, data, _) in enumerate(cast.events):
        if k in wanted:
            screens[k] = replay.observation()
        replay.feed(code, data)
    return screens, replay.observation()


def _stamp(cast: Cast | None, seconds: float | None) -> dt.datetime | None:
    if cast is None or cast.start is None or seconds is None:
        return None
    return cast.start + dt.timedelta(seconds=seconds)


# transcripts of installed agents ------------------------------------------------------------------------------
_TOKEN = re.compile(r"\x1b\[([0-?]*)[ -/]*([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()#%][0-9A-Za-z@]"
                    r"|\x1b[^\[\]]|\x1b|([\x00-\x1f\x7f])|([^\x00-\x1f\x7f\x1b]+)")


@dataclass
class _Line:
    text: str
    time: float | None  # seconds since the cast's start when it was last written (None from a log)
    record: int | None  # the cast line (event) that last wrote it


class _Transcript:
    """The text an output stream leaves in a terminal's scrollback, one entry per line and no width limit:
    text overwrites from the cursor; CR, LF, BS, TAB, cursor up/down/left/right/column and erase-in-line
    move or erase as in a terminal; other sequences (colours, modes, titles) are dropped. Spinners and
    progress bars redrawn in place leave their last state, as on the screen. Full-screen programs that
    address the screen absolutely are not rendered faithfully: this is for line-oriented agent output."""

    def __init__(self):
        self.lines: list[_Line] = [_Line("", None, None)]
        self.row = self.col = 0

    def feed(self, data: str, marks: list[tuple[int, float | None, int | None]]) -> None:
        """`marks`: (offset in data, time, cast line) where each event's data starts, in order."""
        offsets = [m[0] for m in marks]
        for m in _TOKEN.finditer(data):
            params, final, control, text = m.groups()
            k = bisect.bisect_right(offsets, m.start()) - 1
            _, time, record = marks[k] if k >= 0 else (0, None, None)
            if text is not None:
                self._write(text, time, record)
            elif control is not None:
                if control == "\r":
                    self.col = 0
                elif control in "\n\x0b\x0c":
                    self._down(1)
                elif control == "\b":
                    self.col = max(0, self.col - 1)
                elif control == "\t":
                    self.col = (self.col // 8 + 1) * 8
            elif final is not None:
                n = int(params.split(";")[0]) if params[:1].isdigit() else 0
                if final == "A":
                    self.row = max(0, self.row - max(n, 1))
                elif final in "BE":
                    self._down(max(n, 1))
                    if final == "E":
                        self.col = 0
                elif final == "F":
                    self.row, self.col = max(0, self.row - max(n, 1)), 0
                elif final == "C":
                    self.col += max(n, 1)
                elif final == "D":
                    self.col = max(0, self.col - max(n, 1))
                elif final == "G":
                    self.col = max(n, 1) - 1
                elif final == "K":
                    line = self.lines[self.row]
                    if n == 0:
                        line.text = line.text[:self.col]
                    elif n == 1:
                        line.text = " " * min(self.col + 1, len(line.text)) + line.text[self.col + 1:]
                    elif n == 2:
                        line.text = ""
                    line.time, line.record = time, record

    def _down(self, n: int) -> None:
        self.row += n
        while len(self.lines) <= self.row:
            self.lines.append(_Line("", None, None))

    def _write(self, text: str, time, record) -> None:
        line = self.lines[self.row]
        old = line.text
        if len(old) < self.col:
            old += " " * (self.col - len(old))
        line.text = old[:self.col] + text + old[self.col + len(text):]
        line.time, line.record = time, record
        self.col += len(text)


def _transcript_from_cast(cast: Cast, start: int, end: int) -> list[_Line]:
    """The transcript of the output events in `cast.events[start:end]` (fed as one stream, so a sequence
    cut across events is whole)."""
    parts, marks, total = [], [], 0
    for t, code, data, line in cast.events[start:end]:
        if code == "o":
            marks.append((total, t, line))
            parts.append(data)
            total += len(data)
    out = _Transcript()
    out.feed("".join(parts), marks)
    return out.lines


def _transcript_from_log(data: bytes) -> list[_Line]:
    out = _Transcript()
    out.feed(data.decode("utf-8", "replace"), [])
    return out.lines


def _cells(text: str) -> int:
    width = wcswidth(text)
    return width if width >= 0 else len(text)


def _unwrap(lines: list[str], width: int) -> list[str]:
    """Undo the line breaks Rich made at the terminal width. Rich breaks before a word that does not fit,
    keeping the spaces before it at the end of the line unless they overflow the width (then it crops
    them), and folds a word longer than the width. So a line was broken, not ended, when the next line's
    first word would not have fit after it and the line ends in a space or fills the width exactly; a full
    line that ends in a word lost its cropped space, unless it is one folded word."""
    out: list[str] = []
    for line in lines:
        if out:
            prev = out[-1]
            used = _cells(prev)
            word = line.split(" ", 1)[0]
            if line and not line[0].isspace() and prev and used + _cells(word) > width and (
                    prev.endswith(" ") or used == width):
                joiner = " " if used == width and not prev.endswith(" ") and " " in prev.strip() else ""
                out[-1] = prev + joiner + line
                continue
        out.append(line)
    return out


def _text(lines: list[_Line], width: int) -> str:
    """A message's lines as one text, as printed but for Rich's breaks; blank lines at its edges dropped."""
    texts = _unwrap([ln.text for ln in lines], width)
    while texts and not texts[0].strip():
        texts.pop(0)
    while texts and not texts[-1].strip():
        texts.pop()
    return "\n".join(texts)


@dataclass
class AgentRun:
    """What an installed agent's transcript parser found."""

    name: str
    steps: list[Step]  # timestamps unset: `times` has when each reply was printed
    times: list[float | None]
    final: Observation | None  # what the agent read after its last action, when it printed that
    submitted: bool
    env: dict
    rejected: list[Rejected]


_MINI_BANNER = re.compile(r"This is mini-swe-agent version (\S+?)\.?\s*$")
_MINI_STEP = re.compile(r"^mini-swe-agent \(step (\d+), \$(\d+(?:\.\d+)?)\):\s*$")
_MINI_BASH = re.compile(r"```bash\s*\n(.*?)\n```", re.S)
_MINI_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
_RETURNCODE = re.compile(r"<returncode>(-?\d{1,9})</returncode>")  # an int32 column: longer is no exit code


def _mini_swe_agent(lines: list[_Line], width: int, where: str) -> AgentRun | None:
    """mini-swe-agent's console output (see the module docstring), or None when it is not in the transcript."""
    start = next((i for i, ln in enumerate(lines) if _MINI_BANNER.search(ln.text)), None)
    if start is None:
        return None
    version = _MINI_BANNER.search(lines[start].text).group(1)
    # Blocks (kind, header line, content lines), split at System:, User:, step headers, rules and the closing
    # line. The rule mini-swe-agent prints after each message spans the console: the first one (after the
    # task, before any command output) gives the width Rich wrapped at, and a line of dashes in a command's
    # output is a rule only if it is as wide.
    blocks: list[tuple[str, _Line, list[_Line]]] = []
    rule_width = None
    for ln in lines[start + 1:]:
        text = ln.text.strip()
        is_rule = (len(text) >= 20 and set(text) == {"\u2500"}
                   and (rule_width is None or len(text) >= rule_width - 1))
        if text in ("System:", "User:"):
            blocks.append((text[:-1].lower(), ln, []))
        elif _MINI_STEP.match(text):
            blocks.append(("step", ln, []))
        elif is_rule or text.startswith("Saved trajectory to "):
            rule_width = rule_width or (len(text) if is_rule else None)
            blocks.append(("end", ln, []))
        elif blocks:
            blocks[-1][2].append(ln)
    width = rule_width or width
    system = next((_text(c, width) for kind, _, c in blocks if kind == "system"), None)
    task = None
    turns: list[tuple[_Line, list[_Line], str | None]] = []  # (header, response lines, the User: reply after it)
    for kind, header, content in blocks:
        if kind == "step":
            turns.append((header, content, None))
        elif kind == "user":
            message = _text(content, width)
            if turns:
                h, c, _ = turns[-1]
                turns[-1] = (h, c, message)
            elif task is None:
                task = message
    steps, times, rejected = [], [], []
    observation = Observation(kind="text", text=task) if task is not None else Observation(kind="none")
    expected, cost, submitted = 1, None, False
    for header, content, reply in turns:
        m = _MINI_STEP.match(header.text.strip())
        number, cost = int(m[1]), float(m[2])
        if number != expected:
            rejected.append(Rejected("bad_record", f"{where} line {header.record}: field step: mini-swe-agent "
                                     f"step {number} where step {expected} was due (a turn is missing or "
                                     "repeated)", where, line=header.record, snippet=header.text[:200]))
        expected = number + 1
        response = _text(content, width)
        blocks_found = _MINI_BASH.findall(response)
        raw = orjson.dumps({"step": number, "cost": cost, "printed": [ln.text for ln in content]}).decode()
        if len(blocks_found) == 1:
            code = blocks_found[0].strip()
            action = Action(kind="command", code=code, raw=raw)
            thought = response[:response.find("```bash")].strip()
            submitted = code.split("\n", 1)[0].strip() == f"echo {_MINI_SUBMIT}"
        else:  # mini-swe-agent answers a reply without exactly one bash block with a format error
            action = Action(kind="message", text=response, raw=raw)
            thought, submitted = None, False
        if thought and thought.startswith("THOUGHT:"):
            thought = thought[len("THOUGHT:"):].strip()
        first = next((ln for ln in content if ln.text.strip()), header)
        steps.append(Step(observation=observation, action=action, reasoning=thought or None))
        times.append(first.time)
        if reply:
            rc = _RETURNCODE.search(reply)
            observation = Observation(kind="tool_result", text=reply, exit_code=int(rc[1]) if rc else None)
        else:  # nothing printed after the turn (the submission, or the run ended)
            observation = Observation(kind="none")
    env = {"agent_version": version}
    if cost is not None:
        env["cost_usd"] = cost
    if system:
        env["system_prompt"] = system
    final = observation if steps and observation.kind != "none" else None
    return AgentRun("mini-swe-agent", steps, times, final, submitted, env, rejected)


_TRANSCRIPT_PARSERS = (_mini_swe_agent,)


def _model(command: str) -> str | None:
    """The model named on an agent's command line (`-m` / `--model`), when it is there."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for i, word in enumerate(words):
        if word in ("-m", "--model") and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("--model="):
            return word.split("=", 1)[1]
    return None


# reading ----------------------------------------------------------------------------------------------------
def _pane(source: Source, name: str) -> Observation | None:
    rel = f"panes/{name}"
    if not source.exists(rel):
        return None
    text = source.read_bytes(rel).decode("utf-8", "replace").rstrip()
    return Observation(kind="terminal", text=text)


def _read_cast(source: Source, rel: str) -> tuple[Cast | None, list[Rejected]]:
    if not source.exists(rel):
        return None, []
    try:
        cast = parse_cast(source.read_bytes(rel), rel)
    except SourceError as e:
        return None, [Rejected(e.rule, e.reason, e.location)]
    return cast, cast.rejected


def _results(source: Source) -> tuple[dict, list[Rejected]]:
    results = parse_json(source.read_bytes("results.json"), "results.json")
    if not isinstance(results, dict) or not results.get("task_id"):
        raise SourceError("bad_record", "results.json: no 'task_id' (not a Terminal-Bench trial result)",
                          "results.json")
    rejected = []

    def bad(field: str, expected: str) -> None:
        value = results.pop(field)
        rejected.append(Rejected("bad_record", f"results.json: field {field}: expected {expected}, got "
                                 f"{type(value).__name__}", "results.json", snippet=repr(value)[:200]))

    if results.get("is_resolved") is not None and not isinstance(results["is_resolved"], bool):
        bad("is_resolved", "true, false or null")
    for key in ("instruction", "task_prompt", "failure_mode", "trial_name"):
        if results.get(key) is not None and not isinstance(results[key], str):
            bad(key, "a string")
    if results.get("parser_results") is not None and not isinstance(results["parser_results"], dict):
        bad("parser_results", "an object of test name -> status")
    for key in _RESULT_TIMES:
        if results.get(key) is not None and parse_time(results[key]) is None:
            bad(key, "an ISO-8601 time with a zone")
    return results, rejected


def read(source: Source) -> Iterator[Episode | Rejected]:
    results, rejected = _results(source)
    yield from rejected
    if not source.exists("commands.txt"):
        raise SourceError("missing_file", "commands.txt: file not found (the keystrokes sent to the session)",
                          "commands.txt")
    raw = source.read_bytes("commands.txt")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SourceError("bad_encoding", f"commands.txt: not valid UTF-8 at byte {e.start}", "commands.txt") from None
    commands, rejected = parse_commands(text, "commands.txt")
    yield from rejected
    texts = [keystrokes(keys) for _, _, keys in commands]
    phases = _phases(texts)
    cast, rejected = _read_cast(source, "sessions/agent.cast")
    yield from rejected

    failure = str(results.get("failure_mode") or "unset").lower()
    env: dict = {"task_id": results["task_id"], "trial_name": results.get("trial_name"), "failure_mode": failure}
    installed = any(p in ("install", "launch") for p in phases)
    env["agent_kind"] = "installed" if installed else "tmux"
    env["harness_commands"] = [{"line": n, "phase": phase, "keys": keys}
                               for (n, _, keys), phase in zip(commands, phases) if phase != "agent"]

    if installed:
        run = _installed_agent(source, results, commands, texts, phases, cast, env)
    else:
        run = _tmux_agent(source, commands, texts, phases, cast)
    if isinstance(run, Rejected):
        yield run
        return
    agent, steps, final, submitted, extra, rejected = run
    yield from rejected
    env.update(extra)
    if not steps:
        if installed:
            where = "sessions/agent.cast" if cast is not None else "sessions/agent.log"
            reason = f"{where}: {agent} printed no turn (failure_mode {failure})"
        else:
            where = "commands.txt"
            reason = (f"commands.txt: the agent sent no keystrokes of its own (failure_mode {failure}); the "
                      "harness's are in the trial but are not the agent's steps")
        yield Rejected("empty_episode", reason, where)
        return

    for key in _RESULT_TIMES:
        if (t := parse_time(results.get(key))) is not None:
            env[key] = t.isoformat()
    for key in ("total_input_tokens", "total_output_tokens"):
        if results.get(key) is not None:
            env[key] = results[key]
    if parser := results.get("parser_results"):
        env["tests"] = parser
    test_screen = _pane(source, "post-test.txt")
    if test_screen is None:
        tests_cast, rejected = _read_cast(source, "sessions/tests.cast")
        yield from rejected
        if tests_cast is not None:
            test_screen = _screens_before(tests_cast, set())[1]
    if test_screen is not None:
        env["test_screen"] = test_screen.text

    resolved = results.get("is_resolved")
    yield Episode(
        key="",
        domain="terminal",
        platform="linux",  # trials run in Linux containers; the image is the task's own
        steps=steps,
        task=results.get("instruction") or results.get("task_prompt"),
        agent=agent,
        outcome="success" if resolved is True else "failure" if resolved is False else "unknown",
        reward=1.0 if resolved is True else 0.0 if resolved is False else None,
        terminated=failure not in _CUT_OFF and submitted,
        final_observation=final,
        env={k: v for k, v in env.items() if v is not None},
    )


def _phase_end(found: list[int | None], phases: list[str], after: int, cast: Cast) -> int:
    """The event index where the agent's phase ends: the first harness keystroke found after `after`."""
    later = [k for k, phase in zip(found, phases) if phase != "agent" and phase != "launch"
             and k is not None and k > after]
    return min(later) if later else len(cast.events)


def _tmux_agent(source: Source, commands, texts, phases, cast: Cast | None):
    """Steps of an agent that typed into the session: one per `agent` line of commands.txt."""
    mine = [i for i, phase in enumerate(phases) if phase == "agent"]
    observations: list[Observation | None] = [None] * len(mine)
    times: list[float | None] = [None] * len(mine)
    final = None
    if cast is not None:
        has_input = any(code == "i" for _, code, _, _ in cast.events)
        found = _input_events(cast, texts) if has_input else _echo_events(cast, texts)
        agent_events = [found[i] for i in mine]
        known = [k for k in agent_events if k is not None]
        end = len(cast.events)
        if has_input and known:
            end = _phase_end(found, phases, max(known), cast)
        screens, last = _screens_before(cast, set(known) | {end})
        observations = [screens.get(k) if k is not None else None for k in agent_events]
        times = [cast.events[k][0] if k is not None else None for k in agent_events]
        final = screens.get(end, last)
    pre = _pane(source, "pre-agent.txt")
    if observations and observations[0] is None and pre is not None:
        observations[0] = pre
    steps = []
    for i, obs, t in zip(mine, observations, times):
        _, line, keys = commands[i]
        typed = texts[i]
        action = Action(kind="keystrokes", text=typed, keys=keys, raw=line,
                        arguments=orjson.dumps({"keystrokes": typed, "duration": None}).decode())
        steps.append(Step(observation=obs or Observation(kind="none"), action=action, timestamp=_stamp(cast, t)))
    final = final or _pane(source, "post-agent.txt")
    return None, steps, final, True, {}, []


def _installed_agent(source: Source, results: dict, commands, texts, phases, cast: Cast | None, env: dict):
    """Steps of an installed agent, read from what it printed in the session."""
    launches = [i for i, phase in enumerate(phases) if phase == "launch"]
    launch = texts[launches[0]].rstrip("\n") if launches else None
    if launch:
        env["agent_command"] = launch
        env["model"] = _model(launch)
    width = cast.cols if cast is not None else _DEFAULT_COLS
    final_screen = None
    if cast is not None:
        found = _input_events(cast, texts)
        start = next((found[i] for i in launches if found[i] is not None), None)
        end = _phase_end(found, phases, start, cast) if start is not None else len(cast.events)
        lines = _transcript_from_cast(cast, start or 0, end)
        screens, last = _screens_before(cast, {end})
        final_screen = screens.get(end, last)
        where = "sessions/agent.cast"
    elif source.exists("sessions/agent.log"):
        lines = _transcript_from_log(source.read_bytes("sessions/agent.log"))
        where = "sessions/agent.log"
    else:
        return Rejected("missing_file", "sessions/agent.cast: file not found, nor sessions/agent.log: an "
                        "installed agent's actions are only in what it printed", "sessions/agent.cast")
    for parse in _TRANSCRIPT_PARSERS:
        run = parse(lines, width, where)
        if run is not None:
            break
    else:
        shown = (launch or "")[:80]
        return Rejected("agent_output_unknown", f"{where}: the installed agent started by commands.txt line "
                        f"{commands[launches[0]][0] if launches else '?'} ({shown!r}) runs its commands itself, "
                        "and its output is not a format this reader parses (known: mini-swe-agent)", where)
    for step, t in zip(run.steps, run.times):
        step.timestamp = _stamp(cast, t)
    final = run.final or final_screen or _pane(source, "post-agent.txt")
    return run.name, run.steps, final, run.submitted, run.env, run.rejected
