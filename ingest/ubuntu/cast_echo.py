"""Commands read back from a terminal recording without input events.

asciinema records no keyboard input unless asked (`asciinema rec --stdin` in 2.x, `--capture-input` in 3.x),
so most recordings hold output events only. A person still reads every command in them: the shell echoes
what is typed after its prompt, and Enter's line feed leaves that row. This module finds those rows.

The output is replayed through the terminal emulator event by event. While the cursor stays on one row, the
text left of the cursor at the end of each output event is kept (the row's chain); the line feed that leaves
the row ends it. A row is a command line when one text of its chain is the shell's prompt and the row, as
the line feed leaves it, reads prompt + command:

- the prompt is the earliest text of the chain that ends like a prompt (`$`, `#`, `%`, `>`, `❯`, `»`, `λ`,
  then a space) or starts with a zsh theme's arrow (`➜`, `❯`);
- else the text after which the row waited longest for its next output (the person about to type), taken only
  when more output came on the row after it (the echo) and the same prompt, digits aside, starts at least
  two rows of the recording (a prompt recurs; output that paused on a row does not, as a rule).

A zsh theme's prompt (an arrow, then the folder and the repository's state, `➜  app git:(main) ✗ `) can reach
the terminal in two output events, the arrow and folder first: the repository segment (`git:(...)`, `hg:(...)`,
with its `✗` / `✔` marks) after such a prompt is prompt too, never the start of the command. A row whose prompt is
known only by recurring must hold a letter or digit after it: a colour demo's rows of glyphs are no commands.

The command is the row's text after the prompt, as the screen shows it when Enter's line feed leaves the
row, so a key erased with Backspace or an edit in the middle of the line is read as the shell showed it. A
prompt followed by nothing (Enter on an empty line) is no command; a row after the continuation prompt `> `
(a loop typed over several rows) is part of the command before it. Exit status: a prompt that shows the last
command's status as a number in brackets or parentheses (`[1] $`, `(130)`, from `$?` or zsh's `%?`) gives the
exit code of the observation after the command, when every prompt of the recording shows such a number, none
over 255, and the numbers are not a counter (a history number goes up by one on every prompt).

Not read: a command typed into a full-screen program (vim, less: no line feed leaves a prompt row), a zsh
right prompt (it stays at the row's end, read as part of the command), a command wrapped past the row's end.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_PROMPT_END = re.compile(r"(?:[$#%>❯»λ]\s+$)|(?:^\s*[➜❯])")
_THEME_START = re.compile(r"^\s*[➜❯]")
# oh-my-zsh themes (robbyrussell and its kin) end the prompt with the repository's state: `git:(main) ✗ `
_VCS_SEGMENT = re.compile(r"\s*(?:git|hg|svn|bzr):\([^()\s]*\)(?:\s*[✗✔✓±⚡*])*\s+")
_WORDY = re.compile(r"[^\W_]")  # a letter or digit
_STATUS = re.compile(r"[\[(](\d{1,3})[\])]")
_DIGITS = re.compile(r"\d+")
_CONTINUATION = ">"  # bash's and zsh's PS2


@dataclass
class _Snap:
    t: float
    text: str  # the row's text left of the cursor after the event
    event: int  # index of the event in the cast's events
    line: int  # its line in the file


@dataclass
class CommandLine:
    """One prompt row: the prompt, the command read after it ("" for an empty line), where it was seen."""

    prompt: str
    command: str
    prompt_event: int  # the event after which the prompt stood: the observation before the command
    started: float  # the first output after the prompt (the first key's echo), seconds since the start
    entered: float  # the event holding Enter's line feed
    lines: list[int]  # the file lines of the events from the first echo to Enter
    typed: bool  # output came on the row after the prompt (the echo), not in one event with it
    by_pattern: bool  # the prompt was known by its look, not by its recurrence


def _left_text(screen) -> str:
    row = screen.buffer[screen.cursor.y]
    return "".join(row[x].data for x in range(min(screen.cursor.x, screen.columns)))


def _row_text(screen, y: int) -> str:
    row = screen.buffer[y]
    return "".join(row[x].data for x in range(screen.columns)).rstrip()


def _prompt_key(prompt: str) -> str:
    return _DIGITS.sub("0", prompt.strip())


def _command_line(chain: list[_Snap], row: str, t: float, line: int) -> CommandLine | None:
    """The command line a chain of texts and the row's final text make, or None when no prompt is in it."""
    i = next((k for k, s in enumerate(chain) if s.text.strip() and _PROMPT_END.search(s.text)), None)
    by_pattern = i is not None
    if i is None:
        waits = [((chain[k + 1].t if k + 1 < len(chain) else t) - s.t, -k) for k, s in enumerate(chain)
                 if s.text.strip()]
        if not waits:
            return None
        i = -max(waits)[1]  # the longest wait; of equal ones, the earliest
    prompt = chain[i].text
    if not row.startswith(prompt.rstrip()):
        return None
    command = row[len(prompt):] if row.startswith(prompt) else row[len(prompt.rstrip()):]
    if by_pattern and _THEME_START.search(prompt):
        segment = _VCS_SEGMENT.match(command)
        if segment:  # the theme's VCS part came in a later output event than the arrow: it is prompt too
            prompt, command = row[:len(row) - len(command) + segment.end()], command[segment.end():]
    elif not by_pattern and command.strip() and not _WORDY.search(command):
        return None  # a prompt known only by recurring is followed by words, not by the glyphs of a demo
    rest = chain[i + 1:]
    return CommandLine(prompt=prompt, command=command.strip(), prompt_event=chain[i].event,
                       started=rest[0].t if rest else t, entered=t, lines=[s.line for s in rest] + [line],
                       typed=bool(rest), by_pattern=by_pattern)


def find_command_lines(events: list[tuple[float, str, str, int]], replay) -> tuple[list[CommandLine], str | None]:
    """The prompt rows of a recording's output, in order, and the prompt left standing at its end (or None).

    `events` are the cast's `(seconds, code, data, line)`; `replay` a fresh `asciicast.TerminalReplay` of the
    recording's size, fed here (output and resizes).
    """
    screen, stream = replay.screen, replay.stream
    found: list[CommandLine] = []
    chain: list[_Snap] = []
    row = None
    for index, (t, code, data, line) in enumerate(events):
        if code == "r":
            replay.feed(code, data)
            chain, row = [], None
            continue
        if code != "o":
            continue
        pieces = data.split("\n")
        for k, piece in enumerate(pieces):
            if piece:
                stream.feed(piece)
            if k < len(pieces) - 1:  # a line feed: the row it leaves may be a command line
                if chain and screen.cursor.y == row:
                    got = _command_line(chain, _row_text(screen, row), t, line)
                    if got is not None:
                        found.append(got)
                chain, row = [], None
                stream.feed("\n")
        if screen.cursor.y != row:
            chain, row = [], screen.cursor.y
        chain.append(_Snap(t, _left_text(screen), index, line))
    standing = _command_line(chain, _row_text(screen, row), events[-1][0], events[-1][3]) if chain else None
    return _accepted(found, standing)


def _accepted(found: list[CommandLine], standing: CommandLine | None) -> tuple[list[CommandLine], str | None]:
    """The rows whose prompt is known by its look, or recurs (digits aside) on two or more typed rows."""
    seen = Counter(_prompt_key(c.prompt) for c in found + ([standing] if standing else []) if c.typed
                   or c.by_pattern)
    ok = lambda c: c.by_pattern or (c.typed and seen[_prompt_key(c.prompt)] >= 2)  # noqa: E731
    last = standing.prompt if standing is not None and ok(standing) else None
    return _joined([c for c in found if ok(c)]), last


def _joined(lines: list[CommandLine]) -> list[CommandLine]:
    """A continuation row (the shell's `> ` prompt after an unfinished command: a loop typed over several
    rows) joins the command before it: one command, its lines joined by newlines."""
    out: list[CommandLine] = []
    for c in lines:
        prev = out[-1] if out else None
        if c.prompt.strip() == _CONTINUATION and prev is not None and prev.command:
            prev.command += "\n" + c.command
            prev.entered, prev.lines = c.entered, prev.lines + c.lines
        else:
            out.append(c)
    return out


def exit_statuses(prompts: list[str]) -> list[int] | None:
    """The status each prompt shows, when every prompt shows one (see the module docstring), else None."""
    found = [_STATUS.search(p) for p in prompts]
    if not prompts or not all(found):
        return None
    values = [int(m[1]) for m in found]
    if any(v > 255 for v in values):
        return None
    if len(values) >= 3 and all(b - a == 1 for a, b in zip(values, values[1:])):
        return None  # a counter (history number), not a status
    return values
