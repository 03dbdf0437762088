"""asciicast v2 and v3 terminal recordings (`*.cast`, asciinema). One file is one episode.

Line 1 is a header object (v2: `width`, `height`; v3: `term.cols`, `term.rows`; both: optional `timestamp`,
Unix seconds). Every other line is an event `[time, code, data]`: v2 times are seconds since the start, v3
times are intervals since the previous event. Codes: `o` output, `i` input, `r` resize (`"COLSxROWS"`),
`m` marker, and in v3 `x` exit status. v3 lines starting with `#` are comments.

Steps: an action is the input typed up to and including Enter or another control key (Ctrl-C, Tab, an
arrow...), as one `keystrokes` action; its observation is the screen a person saw just before the first key,
rendered by a terminal emulator (pyte), so cursor moves, carriage returns and clears give the real screen,
not escape codes. The screen at the end of the recording is the final observation. `duration_s` is the time
from the action's last key to the next action (or the end): how long the output was left to come.

Step timestamps are `header.timestamp + event time` in UTC, or null when the header has no timestamp.
The episode is terminal when the file is complete; a cut-off last line (a truncated copy) makes it last but
not terminal. A recording without input events has no actions: it is quarantined (`no_input`).
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from dataclasses import dataclass, field
from typing import Iterator

import orjson
import pyte

from ingest.record import Action, Episode, Observation, Rejected, Step
from ingest.source import Source, SourceError

FORMAT = "asciicast"
VERSION = "1"

MAX_COLS, MAX_ROWS = 1000, 1000  # a header asking for more is refused: pyte allocates the whole screen
# One key press as the terminal receives it: an escape sequence (CSI / SS3 / Alt+key), a control char, or text.
_KEY = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1bO.|\x1b.?|[\x00-\x1f\x7f]|[^\x00-\x1f\x7f\x1b]+", re.S)


@dataclass
class Cast:
    version: int
    cols: int
    rows: int
    header: dict
    events: list[tuple[float, str, str, int]] = field(default_factory=list)  # (seconds, code, data, line)
    lines: dict[int, str] = field(default_factory=dict)  # line number -> verbatim text, input events only
    complete: bool = True
    rejected: list[Rejected] = field(default_factory=list)

    @property
    def start(self) -> dt.datetime | None:
        ts = self.header.get("timestamp")
        return dt.datetime.fromtimestamp(ts, dt.timezone.utc) if isinstance(ts, (int, float)) else None


def units(files: list[str], head) -> list[str]:
    """Every `*.cast` file (a bad one is still claimed, so that it lands in the quarantine)."""
    return [p for p in files if p.endswith(".cast")]


def _size(header: dict, where: str) -> tuple[int, int]:
    version = header.get("version")
    term = header.get("term") if version == 3 else header
    if not isinstance(term, dict):
        raise SourceError("bad_header", f"{where}: v3 header has no 'term' object", where)
    cols, rows = (term.get("cols"), term.get("rows")) if version == 3 else (term.get("width"), term.get("height"))
    if not (isinstance(cols, int) and isinstance(rows, int) and 0 < cols <= MAX_COLS and 0 < rows <= MAX_ROWS):
        raise SourceError("bad_header", f"{where}: terminal size {cols!r}x{rows!r} is missing or out of range", where)
    return cols, rows


def parse_cast(data: bytes, where: str) -> Cast:
    """Header and events of a cast file, times made absolute (seconds since the start).

    A bad header raises SourceError (the file is unusable); a bad event line becomes a `Rejected` in
    `cast.rejected` and is skipped. A cut-off last line sets `complete` False.
    """
    raw_lines = data.split(b"\n")
    ends_with_newline = data.endswith(b"\n")
    if ends_with_newline:
        raw_lines.pop()
    number, header = 0, None
    for number, raw in enumerate(raw_lines, 1):
        if raw.strip():
            try:
                header = orjson.loads(raw)
            except orjson.JSONDecodeError as e:
                raise SourceError("bad_header", f"{where} line {number}: header is not JSON: {e}", where) from None
            break
    if not isinstance(header, dict):
        raise SourceError("bad_header", f"{where}: no header object on the first line", where)
    version = header.get("version")
    if version not in (2, 3):
        raise SourceError("bad_header", f"{where}: asciicast version {version!r} is not supported (2 or 3)", where)
    cols, rows = _size(header, where)
    cast = Cast(version, cols, rows, header)
    clock = 0.0
    for n, raw in enumerate(raw_lines[number:], number + 1):
        if not raw.strip() or (version == 3 and raw.lstrip().startswith(b"#")):
            continue
        last = n == len(raw_lines)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            cast.rejected.append(Rejected("bad_encoding", f"{where} line {n}: not valid UTF-8 at byte {e.start}",
                                          where, line=n, snippet=raw[:200].decode("utf-8", "replace")))
            continue
        try:
            event = orjson.loads(text)
            t, code, payload = event
            if not isinstance(t, (int, float)) or not isinstance(code, str):
                raise ValueError("expected [time, code, data]")
        except (orjson.JSONDecodeError, ValueError, TypeError) as e:
            if last and not ends_with_newline:
                cast.complete = False
                reason = f"{where} line {n}: last event is cut off (truncated file): {e}"
                cast.rejected.append(Rejected("truncated_event", reason, where, line=n, snippet=text[:200]))
            else:
                cast.rejected.append(Rejected("parse_error", f"{where} line {n}: not an event: {e}", where,
                                              line=n, snippet=text[:200]))
            continue
        clock = clock + t if version == 3 else float(t)
        cast.events.append((clock, code, payload if isinstance(payload, str) else str(payload), n))
        if code == "i":
            cast.lines[n] = text
    return cast


def _screen_text(screen: pyte.Screen) -> str:
    """The screen's text, trailing blanks dropped. Reads only the cells pyte has written (its `display`
    renders every cell of every row through wcwidth: most of the replay's time on a typical session)."""
    lines = []
    for y in range(screen.lines):
        row = screen.buffer[y]
        if not row:
            lines.append("")
            continue
        width = min(max(row) + 1, screen.columns)
        lines.append("".join(row[x].data for x in range(width)).rstrip())
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


class TerminalReplay:
    """Feeds output events to a pyte screen; `observation()` is the screen as a person saw it then.

    Output is buffered and fed in one call when a screen is needed: the emulator's cost is per call as much
    as per byte, and recordings hold many tiny events (one per echoed key).
    """

    def __init__(self, cols: int, rows: int):
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.Stream(self.screen)
        self._pending: list[str] = []

    def _flush(self) -> None:
        if self._pending:
            self.stream.feed("".join(self._pending))
            self._pending.clear()

    def feed(self, code: str, data: str) -> None:
        if code == "o":
            self._pending.append(data)
        elif code == "r":
            m = re.fullmatch(r"\s*(\d+)x(\d+)\s*", data)
            if m and 0 < int(m[1]) <= MAX_COLS and 0 < int(m[2]) <= MAX_ROWS:
                self._flush()
                self.screen.resize(lines=int(m[2]), columns=int(m[1]))

    def observation(self, exit_code: int | None = None) -> Observation:
        self._flush()
        return Observation(kind="terminal", text=_screen_text(self.screen), exit_code=exit_code,
                           width=self.screen.columns, height=self.screen.lines)


def _ends_action(key: str) -> bool:
    return key[0] in "\x1b\x7f" or ord(key[0]) < 0x20


@dataclass
class _Pending:
    observation: Observation
    started: float
    keys: str = ""
    last_key: float = 0.0
    lines: dict[int, str] = field(default_factory=dict)  # the input events' lines, verbatim


def _timestamp(cast: Cast, seconds: float) -> dt.datetime | None:
    start = cast.start
    return start + dt.timedelta(seconds=seconds) if start else None


def steps_from_cast(cast: Cast) -> tuple[list[Step], Observation, dict]:
    """Replays the cast: (steps, final observation, facts for `env`: markers, exit code)."""
    replay = TerminalReplay(cast.cols, cast.rows)
    done: list[_Pending] = []
    pending: _Pending | None = None
    markers, exit_code = [], None
    for t, code, data, line in cast.events:
        if code == "i":
            for key in _KEY.findall(data):
                if pending is None:
                    pending = _Pending(replay.observation(), t)
                pending.lines[line] = cast.lines[line]
                pending.keys += key
                pending.last_key = t
                if _ends_action(key):
                    done.append(pending)
                    pending = None
        elif code == "m":
            markers.append({"time": round(t, 6), "label": data})
        elif code == "x":
            exit_code = int(data) if data.strip().lstrip("-").isdigit() else None
        else:
            replay.feed(code, data)
    if pending is not None:
        done.append(pending)
    end = cast.events[-1][0] if cast.events else 0.0
    steps = []
    for i, p in enumerate(done):
        following = done[i + 1].started if i + 1 < len(done) else end
        duration = round(max(following - p.last_key, 0.0), 6)
        action = Action(kind="keystrokes", text=p.keys, duration_s=duration, raw="\n".join(p.lines.values()),
                        arguments=orjson.dumps({"keystrokes": p.keys, "duration": duration}).decode())
        steps.append(Step(observation=p.observation, action=action, timestamp=_timestamp(cast, p.started)))
    facts = {"markers": markers} if markers else {}
    if exit_code is not None:
        facts["exit_code"] = exit_code
    return steps, replay.observation(exit_code), facts


def header_env(cast: Cast) -> dict:
    h = cast.header
    env = {"asciicast_version": cast.version, "cols": cast.cols, "rows": cast.rows}
    term_env = h.get("env") if isinstance(h.get("env"), dict) else {}
    term = h.get("term") if isinstance(h.get("term"), dict) else {}
    for key, value in (("term", term.get("type") or term_env.get("TERM")), ("shell", term_env.get("SHELL")),
                       ("command", h.get("command")), ("title", h.get("title"))):
        if value:
            env[key] = value
    return env


def read(source: Source) -> Iterator[Episode | Rejected]:
    where = posixpath.basename(source.path)
    cast = parse_cast(source.read_bytes(), where)
    yield from cast.rejected
    steps, final, facts = steps_from_cast(cast)
    if not steps:
        yield Rejected("no_input", f"{where}: the recording has no input events, so no actions "
                       "(record with input capture, e.g. `asciinema rec --stdin`)", where)
        return
    yield Episode(
        key="",
        domain="terminal",
        platform="linux",  # a cast does not say which OS it was recorded on
        steps=steps,
        task=cast.header.get("title"),
        final_observation=final,
        env={**header_env(cast), **facts},
        terminated=cast.complete,
    )
