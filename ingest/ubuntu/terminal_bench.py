"""Terminal-Bench trial directories: one trial (one task attempt by one agent) is one episode.

A trial directory holds `results.json` (the harness's trial result: `task_id`, `instruction`, `is_resolved`,
`failure_mode`, `trial_started_at`...), `commands.txt` (one line per `send_keys` call to the agent's tmux
session: the Python repr of a keystroke list such as `['ls -la', 'Enter']`, or of a single string),
`sessions/agent.cast` (asciicast v2 of that session) and `panes/` (`pre-agent.txt`, `post-agent.txt`,
`post-test.txt`: the pane's text at those moments).

Steps: one per `commands.txt` line, a `keystrokes` action in the world-model terminal form
(`{"keystrokes": "ls -la\\n", "duration": null}`: tmux key names such as `Enter`, `C-c`, `Up` become the
characters the terminal receives; the harness does not log how long the agent waited, so duration is null).
Lines are parsed with `ast.literal_eval`, never evaluated. The observation before a command is the screen of
`agent.cast`, rendered by a terminal emulator, just before the command's text is echoed; without a cast (or
when the echo is not found) step 0 uses `panes/pre-agent.txt` and later steps have no observation. The final
observation is `panes/post-agent.txt` (else the cast's last screen).

Outcome: `is_resolved` true -> success (reward 1), false -> failure (reward 0), null -> unknown. An agent
that was cut off (timeout, context length, crash: see `_CUT_OFF`) leaves a truncated episode; otherwise the
last step is terminal.
"""

from __future__ import annotations

import ast
import bisect
import datetime as dt
import posixpath
import re
from typing import Iterator

import orjson

from ingest.record import Action, Episode, Observation, Rejected, Step
from ingest.source import Source, SourceError, parse_json
from ingest.times import parse_time
from ingest.ubuntu.asciicast import TerminalReplay, parse_cast

FORMAT = "terminal_bench"
VERSION = "1"

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
_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][0-9A-Za-z]|.)|[\x00-\x08\x0e-\x1f]")


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


def _needle(text: str) -> str | None:
    """The part of a command the terminal echoes back: its first non-empty line, up to 40 characters."""
    for line in text.split("\n"):
        line = "".join(ch for ch in line if ch >= " " and ch != "\x7f").strip()
        if len(line) >= 2:
            return line[:40]
    return None


def _cast_observations(cast, texts: list[str]) -> tuple[list[Observation | None], list[float | None], Observation]:
    """For each command, the screen just before its echo appears in the cast (None when not found)."""
    outputs = [(t, data) for t, code, data, _ in cast.events if code == "o"]
    plain, offsets = [], []
    total = 0
    for _, data in outputs:
        offsets.append(total)
        chunk = _ANSI.sub("", data)
        plain.append(chunk)
        total += len(chunk)
    flat = "".join(plain)
    echo_at: list[int | None] = []
    cursor = 0
    for text in texts:
        needle = _needle(text)
        k = flat.find(needle, cursor) if needle else -1
        if k < 0:
            echo_at.append(None)
            continue
        echo_at.append(bisect.bisect_right(offsets, k) - 1)  # index of the output event holding the echo
        cursor = k + len(needle)
    replay = TerminalReplay(cast.cols, cast.rows)
    wanted = sorted({e for e in echo_at if e is not None})
    screens: dict[int, Observation] = {}
    events = [(t, code, data) for t, code, data, _ in cast.events if code in ("o", "r")]
    out_index = -1
    for t, code, data in events:
        if code == "o":
            out_index += 1
            if wanted and out_index == wanted[0]:
                screens[out_index] = replay.observation()
                wanted.pop(0)
        replay.feed(code, data)
    obs = [screens.get(e) if e is not None else None for e in echo_at]
    times = [outputs[e][0] if e is not None else None for e in echo_at]
    return obs, times, replay.observation()


def _pane(source: Source, name: str) -> Observation | None:
    rel = f"panes/{name}"
    if not source.exists(rel):
        return None
    text = source.read_bytes(rel).decode("utf-8", "replace").rstrip()
    return Observation(kind="terminal", text=text)


def read(source: Source) -> Iterator[Episode | Rejected]:
    results = parse_json(source.read_bytes("results.json"), "results.json")
    if not isinstance(results, dict) or not results.get("task_id"):
        raise SourceError("bad_record", "results.json: no 'task_id' (not a Terminal-Bench trial result)",
                          "results.json")
    if not source.exists("commands.txt"):
        raise SourceError("missing_file", "commands.txt: file not found (the agent's keystrokes)", "commands.txt")
    raw = source.read_bytes("commands.txt")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SourceError("bad_encoding", f"commands.txt: not valid UTF-8 at byte {e.start}", "commands.txt") from None
    commands, rejected = parse_commands(text, "commands.txt")
    yield from rejected
    texts = [keystrokes(keys) for _, _, keys in commands]

    cast = None
    if source.exists("sessions/agent.cast"):
        try:
            cast = parse_cast(source.read_bytes("sessions/agent.cast"), "sessions/agent.cast")
            yield from cast.rejected
        except SourceError as e:
            yield Rejected(e.rule, e.reason, e.location)
    if cast is not None:
        observations, times, cast_final = _cast_observations(cast, texts)
    else:
        observations, times, cast_final = [None] * len(texts), [None] * len(texts), None
    pre = _pane(source, "pre-agent.txt")
    if observations and observations[0] is None and pre is not None:
        observations[0] = pre

    steps = []
    for (n, line, keys), typed, obs, t in zip(commands, texts, observations, times):
        action = Action(kind="keystrokes", text=typed, keys=keys, raw=line,
                        arguments=orjson.dumps({"keystrokes": typed, "duration": None}).decode())
        stamp = cast.start + dt.timedelta(seconds=t) if cast is not None and cast.start and t is not None else None
        steps.append(Step(observation=obs or Observation(kind="none"), action=action, timestamp=stamp))

    resolved = results.get("is_resolved")
    failure = str(results.get("failure_mode") or "unset").lower()
    env = {"task_id": results["task_id"], "trial_name": results.get("trial_name"), "failure_mode": failure}
    for key in ("trial_started_at", "trial_ended_at", "agent_started_at", "agent_ended_at"):
        if (t := parse_time(results.get(key))) is not None:
            env[key] = t.isoformat()
    for key in ("total_input_tokens", "total_output_tokens"):
        if results.get(key) is not None:
            env[key] = results[key]
    if parser := results.get("parser_results"):
        env["tests"] = parser
    if (post_test := _pane(source, "post-test.txt")) is not None:
        env["post_test_pane"] = post_test.text
    yield Episode(
        key="",
        domain="terminal",
        platform="linux",  # trials run in Linux containers; the image is the task's own
        steps=steps,
        task=results.get("instruction") or results.get("task_prompt"),
        outcome="success" if resolved is True else "failure" if resolved is False else "unknown",
        reward=1.0 if resolved is True else 0.0 if resolved is False else None,
        terminated=failure not in _CUT_OFF,
        final_observation=_pane(source, "post-agent.txt") or cast_final,
        env=env,
    )
