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

A resize event changes the emulated screen's size the way a terminal does (`resize_screen`): what is on
the screen stays, the top rows scroll away only when the cursor's row would fall off the bottom.

Step timestamps are `header.timestamp + event time` in UTC, or null when the header has no timestamp.
The episode is terminal when the file is complete; a cut-off last line (a truncated copy) makes it last but
not terminal. A recording without input events (asciinema's default) gets one `command` step per command
echoed after a shell prompt, read back by `ingest.ubuntu.cast_echo` and marked `action_inferred`; its
observation is the screen with the prompt, and the exit code a prompt shows goes on the observation after the
command. One with neither input nor a prompt row whose header names the `command` asciinema ran (`asciinema rec
-c htop`) is one `command` step, that command, from the blank screen it started on to the screen at the end;
one with no such header either is quarantined (`no_input`). An event
line that is not `[time, code, data]` with the right types (a number, a string, a string for `o`/`i`/`r`,
`COLSxROWS` for `r`) is quarantined alone, its reason naming the file, the line and the field.
"""

from __future__ import annotations

import copy
import datetime as dt
import posixpath
import re
from dataclasses import dataclass, field
from typing import Iterator

import orjson
import pyte
from pyte import modes as mo
from pyte.charsets import LAT1_MAP as _LATIN1
from pyte.screens import StaticDefaultDict
from wcwidth import wcwidth

from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Observation, Rejected, Step, warn
from ingest.source import Source, SourceError
from ingest.ubuntu import cast_echo

FORMAT = "asciicast"
VERSION = "4"
INFO = FormatInfo(
    group="ubuntu", rank=180, domains=('terminal',), platform="linux",
    summary=("asciicast v2/v3 (screens rendered by a terminal emulator, with the alternate screen of full-screen "
             "programs, keystrokes up to Enter as actions; without input events, asciinema's default, each command "
             "echoed after a prompt, marked `action_inferred`, or the one command the header names)"),
    producer="asciinema",
    versions="2.4.0 (with and without `--stdin`)",
    proof=("records a bash session at test time; the commands read back from the echo once the input events are "
           "removed equal the recorded keystrokes, also on real Terminal-Bench and Harbor casts "
           "(`tests/ingest/ubuntu/`); asciinema 3 is on neither PyPI nor Debian: two real MIT-licensed v3 recordings "
           "beside the test (goldens) and a hand-made case"),
)

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


_SIZE = re.compile(r"\s*(\d{1,7})x(\d{1,7})\s*")


def parse_size(data) -> tuple[int, int] | None:
    """(cols, rows) of a resize event's `COLSxROWS`, or None when it is not one or is out of range."""
    m = _SIZE.fullmatch(data) if isinstance(data, str) else None
    if m is None:
        return None
    cols, rows = int(m[1]), int(m[2])
    return (cols, rows) if 0 < cols <= MAX_COLS and 0 < rows <= MAX_ROWS else None


def _event_problem(event) -> str | None:
    """What is wrong with a decoded event line, naming the field; None for a usable `[time, code, data]`."""
    if not isinstance(event, list) or len(event) != 3:
        got = f"an array of {len(event)}" if isinstance(event, list) else type(event).__name__
        return f"expected a [time, code, data] array, got {got}"
    t, code, data = event
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        return f"field time: expected a number, got {type(t).__name__}"
    if t < 0:
        return f"field time: {t} is negative"
    if not isinstance(code, str) or not code:
        return f"field code: expected a one-letter string, got {code!r}"
    if code in ("o", "i", "r") and not isinstance(data, str):
        return f"field data: expected a string for an {code!r} event, got {type(data).__name__}"
    if code == "r" and parse_size(data) is None:
        return (f"field data: resize {data[:40]!r} is not COLSxROWS with 1..{MAX_COLS} columns and "
                f"1..{MAX_ROWS} rows")
    return None


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
            problem = None
        except orjson.JSONDecodeError as e:
            event, problem = None, f"not JSON: {e}"
        if problem is None:
            problem = _event_problem(event)
        if problem is not None:
            if last and not ends_with_newline:
                cast.complete = False
                reason = f"{where} line {n}: last event is cut off (truncated file): {problem}"
                cast.rejected.append(Rejected("truncated_event", reason, where, line=n, snippet=text[:200]))
            else:
                rule = "parse_error" if event is None else "bad_record"
                cast.rejected.append(Rejected(rule, f"{where} line {n}: not an event: {problem}", where,
                                              line=n, snippet=text[:200]))
            continue
        t, code, payload = event
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
        lines.append("".join([cell[0] for cell in map(row.__getitem__, range(width))]).rstrip())  # cell[0]: data
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


_ALTERNATE_SCREEN = {1049, 1047, 47}  # DECSET private modes that switch to the alternate screen


class AlternateScreen(pyte.Screen):
    """pyte's screen plus the alternate screen (private modes 1049, 1047, 47), which pyte does not have: a full-
    screen program (an editor, a pager, a TUI) draws on a blank screen of its own, and on exit the terminal
    shows the shell's screen and cursor again as they were. Without it the program's last frame would be left
    under the shell's next lines, which is not what the person saw."""

    def __init__(self, columns: int, lines: int):
        self._main = None  # (rows, cursor) of the main screen while the alternate screen is shown
        super().__init__(columns, lines)

    def reset(self) -> None:
        self._main = None  # a full reset (RIS) leaves the alternate screen
        super().reset()

    def set_mode(self, *modes: int, **kwargs) -> None:
        super().set_mode(*modes, **kwargs)
        if kwargs.get("private") and self._main is None and _ALTERNATE_SCREEN & set(modes):
            main = self.buffer
            self._main = (main, copy.copy(self.cursor))
            self.buffer = type(main)(main.default_factory)
            self.dirty.update(range(self.lines))

    def reset_mode(self, *modes: int, **kwargs) -> None:
        super().reset_mode(*modes, **kwargs)
        if kwargs.get("private") and self._main is not None and _ALTERNATE_SCREEN & set(modes):
            (self.buffer, self.cursor), self._main = self._main, None
            self.dirty.update(range(self.lines))


class _Screen(AlternateScreen):
    """pyte's screen with a faster `draw` for runs of single-width characters with auto-wrap on and insert
    mode off (nearly all terminal output): it writes each line's slice in one `dict.update` with cells taken
    from a per-attributes cache, where pyte's own `draw` builds a new cell per character. The cells, cursor
    and wraps are the ones pyte's `draw` makes; any other run (wide, combining or unprintable characters,
    insert mode, no auto-wrap, a cursor past the edge) goes to pyte's `draw` itself.
    """

    def __init__(self, columns: int, lines: int):
        super().__init__(columns, lines)
        self._cells: dict = {}  # cursor attributes -> {character: cell}
        self._blank: dict[bool, pyte.screens.Char] = {}
        self._sgr_results: dict = {}  # (attributes, SGR parameters, DECSCNM) -> attributes
        # a new row as pyte makes it, without pyte's per-row generic-alias call
        self.buffer.default_factory = lambda: StaticDefaultDict(self.default_char)

    @property
    def default_char(self):
        """pyte's blank cell (reverse in DECSCNM), made once per mode instead of once per new row."""
        reverse = mo.DECSCNM in self.mode
        blank = self._blank.get(reverse)
        if blank is None:
            blank = self._blank[reverse] = super().default_char
        return blank

    def select_graphic_rendition(self, *attrs: int) -> None:
        """pyte's SGR, remembered: its result depends only on the cursor's attributes, the parameters and the
        blank cell (DECSCNM), and shell output repeats the same few colour changes on every line."""
        self.cursor.attrs = self._sgr(self.cursor.attrs, attrs)

    def _sgr(self, attrs, params: tuple):
        key = (attrs, params, mo.DECSCNM in self.mode)
        result = self._sgr_results.get(key)
        if result is None:
            if len(self._sgr_results) > 4096:  # bounded: 24-bit colours could make endless keys
                self._sgr_results.clear()
            cursor = self.cursor
            kept, cursor.attrs = cursor.attrs, attrs
            super().select_graphic_rendition(*params)
            result, cursor.attrs = cursor.attrs, kept
            self._sgr_results[key] = result
        return result

    def takes_simple_runs(self) -> bool:
        """`draw_simple` applies: no scroll margins, auto-wrap on, insert mode off, ASCII drawn as itself, the
        cursor not past the right or bottom edge (a resize can leave it there)."""
        return (self.cursor.x <= self.columns and self.cursor.y < self.lines and self.margins is None and mo.DECAWM in self.mode and mo.IRM not in self.mode
                and (self.g1_charset if self.charset else self.g0_charset) == _LATIN1)

    def draw_simple(self, run: str) -> None:
        """The screen after `run` (printable ASCII, SGR, CR and LF only; see `takes_simple_runs`), as pyte
        leaves it after drawing, wrapping, scrolling and colouring token by token; but rows pushed off the
        top before the run ends are never written. The run is laid out first as writes per line the cursor
        visits (virtual rows, counting wraps); then only the last `lines` of them are written, each over the
        screen row it lands on (a row the run moved down into, or a blank one scrolled in), and the rows
        above the cursor's start move up by the number of scrolls, as pyte's `index` moves them.
        """
        columns, lines = self.columns, self.lines
        cursor = self.cursor
        x, attrs = cursor.x, cursor.attrs
        lnm = mo.LNM in self.mode
        sgr = self._sgr
        writes: list = []
        rows = [writes]  # per line the cursor visits, from its row on: (column, text, attributes)
        for text, params, control in _SIMPLE_TOKEN.findall(run):
            if text:
                i, n = 0, len(text)
                while i < n:
                    if x == columns:  # a full line wraps before the next character, as in pyte
                        x, writes = 0, []
                        rows.append(writes)
                    k = min(n - i, columns - x)
                    writes.append((x, text[i:i + k] if k < n else text, attrs))
                    x += k
                    i += k
            elif control == "\r":
                x = 0
            elif control == "\n":
                writes = []
                rows.append(writes)
                if lnm:
                    x = 0
            else:  # as the stream: each parameter an int (empty is 0) capped at 9999
                attrs = sgr(attrs, tuple([min(int(p or 0), 9999) for p in params.split(";")]))
        buffer, y0, moves = self.buffer, cursor.y, len(rows) - 1
        scroll = max(0, y0 + moves - (lines - 1))
        if scroll == 0:
            for i, row_writes in enumerate(rows):
                if row_writes:
                    self._write(buffer[y0 + i], row_writes)
        else:
            screen = {}
            for y in range(lines):
                v = y + scroll  # virtual row: screen row before the run, or y0 + the line of the run
                row = buffer[v] if v < lines else None
                if v >= y0 and rows[v - y0]:
                    if row is None:
                        row = buffer.default_factory()
                    self._write(row, rows[v - y0])
                if row is not None:
                    screen[y] = row
            # Which rows are in the buffer matters (pyte's `delete_lines` moves only rows that are): after a
            # scroll every row is but the bottom one, unless the run wrote to it. Rows past the bottom stay,
            # as pyte keeps them (`resize_screen` drops them).
            for y in range(lines - 1):
                buffer[y] = screen[y] if y in screen else buffer.default_factory()
            if lines - 1 in screen:
                buffer[lines - 1] = screen[lines - 1]
            else:
                buffer.pop(lines - 1, None)
        cursor.x, cursor.y, cursor.attrs = x, y0 + moves - scroll, attrs
        self.dirty.update(range(lines))

    def _write(self, row, writes: list) -> None:
        cells_by_attrs = self._cells
        for x, text, attrs in writes:
            cells = cells_by_attrs.get(attrs)
            if cells is None:
                cells = cells_by_attrs[attrs] = _Cells(attrs)
            row.update(zip(range(x, x + len(text)), map(cells.__getitem__, text)))

    def index(self) -> None:
        """pyte's `index`; a scroll of the whole screen moves the rows in one slice, not one by one."""
        lines = self.lines
        if self.margins is not None or self.cursor.y != lines - 1:
            return super().index()
        buffer = self.buffer
        self.dirty.update(range(lines))
        buffer.update(zip(range(lines - 1), [buffer[y] for y in range(1, lines)]))
        buffer.pop(lines - 1, None)

    def draw(self, data: str) -> None:
        text = data.translate(self.g1_charset if self.charset else self.g0_charset)
        cursor, columns = self.cursor, self.columns
        if (not _single_width(text) or cursor.x > columns or mo.IRM in self.mode
                or mo.DECAWM not in self.mode):
            return super().draw(data)
        cells = self._cells.get(cursor.attrs)
        if cells is None:
            cells = self._cells[cursor.attrs] = _Cells(cursor.attrs)
        cell = cells.__getitem__
        i, n = 0, len(text)
        while i < n:
            if cursor.x == columns:  # a full line wraps before the next character, as in pyte
                self.dirty.add(cursor.y)
                self.carriage_return()
                self.linefeed()
            x = cursor.x
            k = min(n - i, columns - x)
            self.buffer[cursor.y].update(zip(range(x, x + k), map(cell, text[i:i + k])))
            cursor.x = x + k
            i += k
        self.dirty.add(cursor.y)


class _Cells(dict):
    """Character -> cell with one set of attributes (cells are immutable tuples, so they can be shared)."""

    def __init__(self, attrs):
        self.attrs = attrs

    def __missing__(self, char: str):
        cell = self[char] = self.attrs._replace(data=char)
        return cell


_NARROW: set[str] = set()  # characters wcwidth gives one cell, learnt as they come
_NOT_NARROW: set[str] = set()


def _single_width(text: str) -> bool:
    """Every character takes exactly one cell (pyte's `draw` writes it and moves one column right)."""
    if text.isascii():
        return text.isprintable()
    chars = set(text)
    if chars <= _NARROW:
        return True
    if chars & _NOT_NARROW:
        return False
    for char in chars - _NARROW:
        (_NARROW if wcwidth(char) == 1 else _NOT_NARROW).add(char)
    return chars <= _NARROW


# In the parser's ground state, one of: a run of plain text (pyte's own pattern, so `draw` gets the same runs),
# C0 controls with a basic action (bell, backspace, tab, line feeds, carriage return), a complete CSI sequence
# (numeric parameters; private only for set/reset mode) or a complete OSC string with a one-digit code.
_TOKEN = re.compile(
    "(" + pyte.Stream._text_pattern.pattern + ")"
    r"|([\x07-\x0d]+)"
    r"|\x1b\[(\?(?=[0-9;]*[hl]))?([0-9;]*)([@-~])"
    r"|\x1b\]([0-9])([^\x07\x1b\x9c]*)(?:\x07|\x1b\\|\x9c)")


# A run `_Screen.draw_simple` takes whole (printable ASCII, SGR, CR, LF: most of a shell's output), and its tokens.
_SIMPLE = re.compile(r"(?:[\x20-\x7e]+|\x1b\[[0-9;]*m|[\r\n])+")
_SIMPLE_TOKEN = re.compile(r"([\x20-\x7e]+)|\x1b\[([0-9;]*)m|([\r\n])")


class _Stream(pyte.Stream):
    """pyte's stream, with the common complete sequences taken in one regex match each.

    pyte parses every control and escape character through a generator, one `send` per character. In the
    parser's ground state this stream matches a whole token (see `_TOKEN`) and makes the very calls on the
    screen that pyte's parser makes for those characters; anything else goes through pyte's parser.

    A sequence the screen cannot apply (pyte raises on some, e.g. a private CSI with more parameters than its
    handler takes) is dropped and the parser reset, as a terminal ignores what it does not understand: one odd
    sequence must not cost the whole recording.
    """

    def attach(self, screen) -> None:
        super().attach(screen)
        self._basic = {char: getattr(screen, name) for char, name in self.basic.items()}
        self._csi = {char: getattr(screen, name) for char, name in self.csi.items()}

    def feed(self, data: str) -> None:
        screen = self.listener
        draw, debug, basic, csi = screen.draw, screen.debug, self._basic, self._csi
        match, send = _TOKEN.match, self._send_to_parser
        ground = self._taking_plain_text
        simple, takes_simple, draw_simple = _SIMPLE.match, screen.takes_simple_runs, screen.draw_simple
        offset, length, not_simple_before = 0, len(data), 0
        while offset < length:
            if ground and offset >= not_simple_before:
                m = simple(data, offset)
                if m is not None and takes_simple():
                    draw_simple(m.group())
                    offset = m.end()
                    continue
                # not a simple run, or the screen cannot take one: tokens until the run's end (no rescans)
                not_simple_before = m.end() if m is not None else offset + 1
            m = match(data, offset) if ground else None
            if m is None:
                try:
                    ground = send(data[offset])
                except Exception:  # pyte has reset its parser
                    ground = True
                offset += 1
                continue
            offset = m.end()
            text, controls, private, params, final, osc, param = m.groups()
            try:
                if text is not None:
                    draw(text)
                elif controls is not None:
                    for char in controls:
                        basic[char]()
                elif final is not None:
                    # as pyte: each parameter an int (empty is 0) capped at 9999
                    args = [min(int(p or 0), 9999) for p in params.split(";")]
                    if private:
                        csi.get(final, debug)(*args, private=True)
                    else:
                        csi.get(final, debug)(*args)
                else:
                    param = param[1:]  # pyte drops the character after the code (the ';')
                    if osc in "01":
                        screen.set_icon_name(param)
                    if osc in "02":
                        screen.set_title(param)
            except Exception:
                self._initialize_parser()  # as pyte does when a screen call raises
                ground = True
        self._taking_plain_text = ground


def resize_screen(screen: pyte.Screen, columns: int, lines: int) -> None:
    """Resize the screen as terminals do (xterm, tmux, libvterm), keeping what it shows.

    pyte's own `Screen.resize` drops rows from the *top* when the screen gets shorter, whatever is on them:
    a shell prompt near the top of a tall screen vanished, and the cursor kept a row that no longer held its
    line (a resize event blanked the rendered screen). Here, with fewer rows, the rows below the cursor go
    first; only when the cursor's row would fall off do the top rows scroll away, leaving it on the last
    row. Fewer columns crop each row at the right edge; more rows or columns add blank ones (with default
    tab stops). The cursor keeps its cell (moved up by the scroll, held within the width), the scrolling
    margins are reset, as pyte does. It only uses pyte's screen attributes, so the fast replay (`_Screen`)
    and pyte's own screen end in the same state.
    """
    old_lines, old_columns = screen.lines, screen.columns
    if (columns, lines) == (old_columns, old_lines):
        return
    cursor, buffer = screen.cursor, screen.buffer
    shift = max(0, cursor.y - (lines - 1))
    kept = {y - shift: buffer[y] for y in range(shift, min(old_lines, lines + shift)) if y in buffer}
    buffer.clear()
    buffer.update(kept)
    if columns < old_columns:
        for row in kept.values():
            for x in [x for x in row if x >= columns]:
                del row[x]
    else:
        screen.tabstops.update(x for x in range(8, columns, 8) if x >= old_columns)
    screen.lines, screen.columns = lines, columns
    cursor.y -= shift
    cursor.x = min(cursor.x, columns)  # x == columns: the pending wrap pyte keeps after the last column
    screen.set_margins()
    screen.dirty.update(range(lines))


class TerminalReplay:
    """Feeds output events to a pyte screen; `observation()` is the screen as a person saw it then.

    Output is buffered and fed in one call when a screen is needed: the emulator's cost is per call as much
    as per byte, and recordings hold many tiny events (one per echoed key). The screen and stream are pyte's
    with faster paths for common output (`_Screen`, `_Stream`) that leave the same screen state.
    """

    def __init__(self, cols: int, rows: int):
        self.screen = _Screen(cols, rows)
        self.stream = _Stream(self.screen)
        self._pending: list[str] = []

    def _flush(self) -> None:
        if self._pending:
            self.stream.feed("".join(self._pending))
            self._pending.clear()

    def feed(self, code: str, data: str) -> None:
        if code == "o":
            self._pending.append(data)
        elif code == "r":
            size = parse_size(data)
            if size is not None:
                self._flush()
                resize_screen(self.screen, *size)

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
            exit_code = int(data) if re.fullmatch(r"\s*-?[0-9]{1,9}\s*", data) else None  # int32 in the table
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


def steps_from_echo(cast: Cast) -> tuple[list[Step], Observation, dict]:
    """A recording without input events: one `command` step per command read back from the echo after a
    prompt (`ingest.ubuntu.cast_echo`), marked `action_inferred`. Returns what `steps_from_cast` returns."""
    lines, standing = cast_echo.find_command_lines(cast.events, TerminalReplay(cast.cols, cast.rows))
    statuses = cast_echo.exit_statuses([c.prompt for c in lines] + ([standing] if standing is not None else []))
    commands = [i for i, c in enumerate(lines) if c.command]
    # the exit code of command i is the status the next prompt shows: it goes on the observation after it
    after = {i: statuses[i + 1] for i in commands if statuses and i + 1 < len(statuses)}
    replay = TerminalReplay(cast.cols, cast.rows)
    wanted = {lines[i].prompt_event: i for i in commands}
    seen: dict[int, Observation] = {}
    markers, exit_code = [], None
    for index, (t, code, data, line) in enumerate(cast.events):
        if code == "m":
            markers.append({"time": round(t, 6), "label": data})
        elif code == "x":
            exit_code = int(data) if re.fullmatch(r"\s*-?[0-9]{1,9}\s*", data) else None
        else:
            replay.feed(code, data)
        if index in wanted:
            seen[wanted[index]] = replay.observation()
    end = cast.events[-1][0] if cast.events else 0.0
    steps = []
    for n, i in enumerate(commands):
        c = lines[i]
        following = lines[commands[n + 1]].started if n + 1 < len(commands) else end
        observation = seen[i]
        if n > 0 and commands[n - 1] in after:
            observation.exit_code = after[commands[n - 1]]
        # no source action exists: raw says where the command was read (the prompt row and its event lines)
        raw = orjson.dumps({"inferred_from": "echo", "prompt": c.prompt, "row": c.prompt + c.command,
                            "lines": [c.lines[0], c.lines[-1]]}).decode()
        steps.append(Step(observation=observation, timestamp=_timestamp(cast, c.started), action_inferred=True,
                          action=Action(kind="command", code=c.command, raw=raw,
                                        duration_s=round(max(following - c.entered, 0.0), 6))))
    final = replay.observation(exit_code)
    if final.exit_code is None and commands and commands[-1] in after:
        final.exit_code = after[commands[-1]]
    facts = {"markers": markers} if markers else {}
    if exit_code is not None:
        facts["exit_code"] = exit_code
    if steps:
        facts["actions_from_echo"] = {"prompts": sorted({lines[i].prompt.strip() for i in commands}),
                                      "exit_codes_from_prompt": statuses is not None}
    return steps, final, facts


def steps_from_header_command(cast: Cast) -> list[Step]:
    """A recording without input or prompts of a command asciinema ran itself (`rec -c CMD`, the header's
    `command`): one `command` step from the blank screen it started on, lasting to the end. None when the header
    names no command."""
    command = cast.header.get("command")
    if not isinstance(command, str) or not command.strip():
        return []
    end = cast.events[-1][0] if cast.events else 0.0
    raw = orjson.dumps({"from_header": "command", "command": command}).decode()
    return [Step(observation=TerminalReplay(cast.cols, cast.rows).observation(), timestamp=_timestamp(cast, 0.0),
                 action=Action(kind="command", code=command, raw=raw, duration_s=round(max(end, 0.0), 6)))]


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
    if not steps and not any(code == "i" for _, code, _, _ in cast.events):
        echoed = steps_from_echo(cast)
        if echoed[0]:
            steps, final, facts = echoed
        elif steps := steps_from_header_command(cast):
            facts["action_from_header"] = "command"  # the screens and the exit are those steps_from_cast read
    if not steps:
        yield Rejected("no_input", f"{where}: the recording has no input events, no command echoed after a "
                       "shell prompt and no command in its header, so no actions", where)
        return
    env = {**header_env(cast), **facts}
    _keep_unknown_events(cast, env)
    yield Episode(
        key="",
        domain="terminal",
        platform="linux",  # a cast does not say which OS it was recorded on
        steps=steps,
        task=cast.header.get("title"),
        final_observation=final,
        env=env,
        terminated=cast.complete,
    )


KNOWN_CODES = frozenset("oirmx")
MAX_UNKNOWN_EVENTS = 100  # kept raw per recording; past this they are only counted


def _keep_unknown_events(cast: Cast, env: dict) -> None:
    """Events of a code the format does not define (asciinema 3 writes any `Other(code, data)` it is given):
    kept raw in `env["unknown_events"]` ([time, code, data], the first `MAX_UNKNOWN_EVENTS`) with a warning."""
    unknown = [[round(t, 6), code, data] for t, code, data, _ in cast.events if code not in KNOWN_CODES]
    if unknown:
        env["unknown_events"] = unknown[:MAX_UNKNOWN_EVENTS]
        codes = sorted({code for _, code, _ in unknown})
        warn(env, "asciicast.unknown_event", f"{len(unknown)} event(s) of code {', '.join(map(repr, codes))} "
             "kept raw in env.unknown_events")
