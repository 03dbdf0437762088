"""The fast terminal replay (`_Screen`, `_Stream`) leaves exactly the screen state pyte's own classes leave
(pyte's screen with the reader's alternate screen, `AlternateScreen`, which pyte lacks).

Both paths replay the same cast: the real sample, the v3 cast of test_asciicast and generated casts whose
output mixes plain text with the escape sequences the fast paths take (SGR, cursor moves, erases, modes, OSC
titles) and the ones they hand to pyte (charsets, wide and combining characters, stray controls, private
CSI, sequences cut across events and across observations). Compared at every input event: every cell with
its attributes, cursor, modes, margins, charsets and title; and the steps the reader makes from the cast.
"""

import random

import pyte
import pytest

from ingest.ubuntu import asciicast
from tests.conftest import SAMPLES
from tests.ingest.ubuntu.test_asciicast import RESIZED, V3

SAMPLE = SAMPLES / "ubuntu" / "asciicast" / "markers-input.cast"

_FRAGMENTS = [
    # plain text, long lines that wrap, line ends of every kind
    "ls -la", "file_a  file_b", "x" * 37, "word " * 19, "\r\n", "\r\n", "\r\n", "\n", "\r", "\b\b", "\t", "\x07",
    "\x0b", "\x0c",
    # SGR and other CSI with numeric parameters
    "\x1b[m", "\x1b[0m", "\x1b[1;31m", "\x1b[38;5;208m", "\x1b[48;2;10;20;30m", "\x1b[;m", "\x1b[7m",
    "\x1b[3A", "\x1b[2B", "\x1b[10C", "\x1b[4D", "\x1b[H", "\x1b[3;7H", "\x1b[99;99H", "\x1b[G", "\x1b[12G",
    "\x1b[5d", "\x1b[K", "\x1b[1K", "\x1b[2K", "\x1b[J", "\x1b[1J", "\x1b[2J", "\x1b[2P", "\x1b[3@", "\x1b[2X",
    "\x1b[2L", "\x1b[M", "\x1b[4h", "\x1b[4l", "\x1b[20h", "\x1b[20l", "\x1b[3;6r", "\x1b[r", "\x1b[0c",
    "\x1b[12345m", "\x1b[3g", "\x1b[z",
    # private modes: set/reset (fast path) and others (pyte's parser)
    "\x1b[?25l", "\x1b[?25h", "\x1b[?7l", "\x1b[?7h", "\x1b[?1049h", "\x1b[?1049l", "\x1b[?6h", "\x1b[?6l",
    "\x1b[?1;2c", "\x1b[?3h",
    # OSC strings
    "\x1b]0;user@host: ~\x07", "\x1b]2;title\x1b\\", "\x1b]1;icon\x9c", "\x1b]7;file://host/tmp\x07",
    "\x1b]R", "\x1b]0;\x1bxweird\x07",
    # non-CSI escapes, charsets, shifts
    "\x1b7", "\x1b8", "\x1bM", "\x1bD", "\x1bE", "\x1bH", "\x1b#8", "\x1b(0lqqk\x1b(B", "\x0e", "\x0f", "\x1b%G",
    # characters pyte's own draw takes: wide, combining, unprintable, C1, DEL, CSI/OSC as one C1 byte
    "日本語", "e\u0301", "\u2500\u2502", "caf\u00e9", "\U0001f600", "a\x01b", "\x85", "\x7f", "\x9b1m", "\x9d0;t\x07",
    # sequences cut in the middle (the next event, or the next observation, completes them)
    "\x1b", "\x1b[", "\x1b[3", "1m", "\x1b]0;ti", "tle\x07", "\x1b[?", "\x1b[1;",
]


class _PyteStream(pyte.Stream):
    """The reference: pyte's own `Stream.feed` loop (text runs to `draw`, every other character through the
    parser), where a sequence the screen cannot apply is dropped, as the reader does, instead of raised."""

    def feed(self, data: str) -> None:
        ground, offset = self._taking_plain_text, 0
        while offset < len(data):
            m = self._text_pattern.match(data, offset) if ground else None
            if m:
                self.listener.draw(m.group())
                offset = m.end()
                continue
            try:
                ground = self._send_to_parser(data[offset])
            except Exception:
                ground = True
            offset += 1
        self._taking_plain_text = ground


def _state(screen: pyte.Screen, stream: pyte.Stream) -> tuple:
    present = sorted(screen.buffer)  # which rows exist matters: pyte's delete_lines (and resize) moves only those
    cells = tuple(tuple(screen.buffer[y][x] for x in range(screen.columns)) for y in range(screen.lines))
    return (present, cells, screen.cursor.x, screen.cursor.y, screen.cursor.attrs, screen.cursor.hidden, sorted(screen.mode),
            screen.margins, screen.charset, screen.g0_charset, screen.g1_charset, screen.title, screen.icon_name,
            stream._taking_plain_text, screen.columns, screen.lines)


def _replay_states(cast: asciicast.Cast, fast: bool) -> list[tuple]:
    """The full screen state before every input event and at the end, replaying through the reader's
    TerminalReplay with its fast classes or with pyte's own (plus the alternate screen)."""
    replay = asciicast.TerminalReplay(cast.cols, cast.rows)
    if not fast:
        replay.screen = asciicast.AlternateScreen(cast.cols, cast.rows)
        replay.stream = _PyteStream(replay.screen)
    states = []
    for _, code, data, _ in cast.events:
        if code == "i":
            replay.observation()
            states.append(_state(replay.screen, replay.stream))
        else:
            replay.feed(code, data)
    replay.observation()
    states.append(_state(replay.screen, replay.stream))
    return states


def _generated_cast(seed: int) -> asciicast.Cast:
    rng = random.Random(seed)
    cols, rows = rng.choice([(20, 6), (40, 10), (80, 24)])
    cast = asciicast.Cast(2, cols, rows, {"version": 2, "width": cols, "height": rows})
    t = 0.0
    for n in range(400):
        t += 0.01
        roll = rng.random()
        if roll < 0.15:
            cast.events.append((t, "i", rng.choice(["l", "s", "\r", "\x03", "\x1b[A"]), n))
            cast.lines[n] = "[...]"
        elif roll < 0.17:
            cast.events.append((t, "r", rng.choice(["30x8", "80x24", "12x4"]), n))
        else:
            cast.events.append((t, "o", "".join(rng.choice(_FRAGMENTS) for _ in range(rng.randrange(1, 8))), n))
    return cast


def _both_paths(cast: asciicast.Cast) -> None:
    fast, reference = _replay_states(cast, fast=True), _replay_states(cast, fast=False)
    assert len(fast) == len(reference)
    for i, (a, b) in enumerate(zip(fast, reference)):
        assert a == b, f"screen state differs at observation {i}"


def test_real_sample_same_state_on_both_paths():
    cast = asciicast.parse_cast(SAMPLE.read_bytes(), SAMPLE.name)
    _both_paths(cast)
    steps, final, _ = asciicast.steps_from_cast(cast)
    assert steps[0].observation.text == "start" and final.text == "start\nmiddle\nmore\nend\ndone"


def test_v3_cast_same_state_on_both_paths():
    _both_paths(asciicast.parse_cast(V3.encode(), "v3.cast"))


def test_resized_cast_same_state_on_both_paths():
    _both_paths(asciicast.parse_cast(RESIZED.encode(), "resized.cast"))


@pytest.mark.parametrize("screen_class", [asciicast._Screen, pyte.Screen])
def test_resize_keeps_rows_moves_the_cursor_and_crops(screen_class):
    """The reader's resize on either screen class: rows below the cursor go first, then the top scrolls
    away; columns are cropped; the cursor keeps its cell; margins reset; growing adds blank cells."""
    screen = screen_class(10, 6)
    pyte.Stream(screen).feed("top\r\nabcdefghij\r\nline3\x1b[2;5r\x1b[3;6H")  # margins set, cursor row 2 col 5
    asciicast.resize_screen(screen, 4, 2)
    assert (screen.columns, screen.lines, screen.margins) == (4, 2, None)
    assert [screen.display[y].rstrip() for y in range(2)] == ["abcd", "line"]
    assert (screen.cursor.x, screen.cursor.y) == (4, 1)  # column 5 held at the new edge, row 2 -> 1
    asciicast.resize_screen(screen, 12, 4)
    assert [screen.display[y].rstrip() for y in range(4)] == ["abcd", "line", "", ""]
    assert 8 in screen.tabstops
    pyte.Stream(screen).feed("XY\r\nnext")
    assert [screen.display[y].rstrip() for y in range(4)] == ["abcd", "lineXY", "next", ""]


@pytest.mark.parametrize("seed", range(12))
def test_generated_escape_heavy_cast_same_state_on_both_paths(seed):
    _both_paths(_generated_cast(seed))


def test_generated_cast_same_steps_on_both_paths(monkeypatch):
    """End to end: the reader's steps (observation texts included) do not depend on the fast classes."""
    casts = [_generated_cast(seed) for seed in range(100, 104)]
    fast = [asciicast.steps_from_cast(c) for c in casts]
    monkeypatch.setattr(asciicast, "_Screen", asciicast.AlternateScreen)
    monkeypatch.setattr(asciicast, "_Stream", _PyteStream)
    reference = [asciicast.steps_from_cast(c) for c in casts]
    assert fast == reference
    assert sum(len(steps) for steps, _, _ in fast) > 100  # the generated casts do make many steps


def test_the_fast_paths_are_taken_on_ordinary_output():
    """A shell session's output goes through the fast screen draw and the token matcher, not only pyte."""
    replay = asciicast.TerminalReplay(40, 5)
    replay.feed("o", "\x1b]0;user@host\x07\x1b[32muser@host\x1b[0m:~$ ls\r\n\x1b[1;34mdir\x1b[0m  file\r\n$ ")
    parsed = []
    replay.stream._send_to_parser = lambda char: parsed.append(char)  # pyte's per-character parser
    observation = replay.observation()
    assert parsed == []
    assert observation.text == "user@host:~$ ls\ndir  file\n$"
    assert replay.screen.title == "user@host"
    assert replay.screen.buffer[1][0].fg == "blue" and replay.screen.buffer[1][0].bold


_LONG_OUTPUT_EXTRAS = ["\x1b[3A", "\x1b[H", "\x1b[2J", "\x1b[20h", "\x1b[20l", "\x1b[?7l", "\x1b[?7h", "\x1b[2;4r",
                       "\x1b[r", "\x1b[4h", "\x1b[4l", "\x1b(0", "\x1b(B", "\x1b[?5h", "\x1b[?5l", "\t", "日本"]


def _long_output_cast(seed: int) -> asciicast.Cast:
    """Shell sessions whose commands print far more lines than the screen holds (coloured lines, lines that
    wrap, progress redrawn with CR, bare LFs), now and then a cursor move, clear, mode, margin or resize."""
    rng = random.Random(seed)
    cols, rows = rng.choice([(12, 4), (20, 6), (40, 10)])
    cast = asciicast.Cast(2, cols, rows, {"version": 2, "width": cols, "height": rows})
    t, n = 0.0, 0
    for _ in range(25):
        n += 1
        cast.events.append((t, "i", "\r", n))
        cast.lines[n] = "[...]"
        out = []
        for _ in range(rng.randrange(1, 6 * rows)):
            roll = rng.random()
            if roll < 0.05:
                out.append(rng.choice(_LONG_OUTPUT_EXTRAS))
            elif roll < 0.15:
                out.append("".join(f"\r{p}%" for p in range(0, 101, 25)) + "\r\n")
            else:
                words = " ".join(rng.choice(["ok", "error", "build", "x" * cols]) for _ in range(rng.randrange(0, 5)))
                out.append(f"\x1b[{rng.choice(['31', '1;33', '', '38;5;208', '0'])}m{words}\x1b[0m"
                           + rng.choice(["\r\n", "\r\n", "\n", ""]))
        chunks = rng.randrange(1, 4)  # one event or several, cut anywhere
        text = "".join(out)
        cuts = sorted(rng.randrange(len(text) + 1) for _ in range(chunks - 1))
        for a, b in zip([0] + cuts, cuts + [len(text)]):
            n += 1
            cast.events.append((t, "o", text[a:b], n))
        if rng.random() < 0.1:
            n += 1
            cast.events.append((t, "r", rng.choice(["30x8", "12x4", "40x10"]), n))
        t += 1.0
    return cast


@pytest.mark.parametrize("seed", range(8))
def test_long_outputs_scrolled_off_give_the_same_state_on_both_paths(seed):
    """Output that scrolls off before the next observation is not drawn (`_Screen.draw_simple`), yet every
    cell, the cursor and the modes are those of pyte drawing it all."""
    _both_paths(_long_output_cast(seed))


def test_long_output_only_writes_the_rows_that_stay():
    replay = asciicast.TerminalReplay(20, 3)
    written = []
    write = replay.screen._write
    replay.screen._write = lambda row, writes: (written.append(writes), write(row, writes))
    replay.feed("o", "".join(f"\x1b[32mline {i}\x1b[0m\r\n" for i in range(1000)) + "$ ")
    assert replay.observation().text == "line 998\nline 999\n$"
    assert len(written) == 3  # of 1001 lines, only the three on the screen at the end


def _cast_of_output(cols: int, rows: int, *outputs: str) -> asciicast.Cast:
    cast = asciicast.Cast(2, cols, rows, {"version": 2, "width": cols, "height": rows})
    for n, data in enumerate(outputs):
        cast.events.append((n * 0.1, "o", data, n + 1))
        cast.events.append((n * 0.1, "i", "\r", n + 1))
        cast.lines[n + 1] = "[...]"
    return cast


def test_colour_parameters_past_the_cap_are_capped_as_pyte_caps_them():
    """24-bit colour components are formatted as hex: a component over 9999 is read as 9999 on both paths."""
    _both_paths(_cast_of_output(20, 4, "\x1b[38;2;10000;0;12345mred\x1b[0m ok", "\x1b[48;2;99999;1;2mx"))
    # with auto-wrap off the fast draw is not taken: the same sequences through the token path
    _both_paths(_cast_of_output(20, 4, "\x1b[?7l\x1b[38;2;10000;0;12345mred\x1b[0m ok", "\x1b[48;2;99999;1;2mx"))


def test_a_characters_width_is_learnt_right_the_first_time(monkeypatch):
    """`_single_width` learns each character's width once: with nothing learnt yet, a wide or combining
    character is not single-width, a Latin-1 one is, and the fast path draws them as pyte does."""
    monkeypatch.setattr(asciicast, "_NARROW", set())
    monkeypatch.setattr(asciicast, "_NOT_NARROW", set())
    assert asciicast._single_width("é") and asciicast._single_width("éü")
    assert not asciicast._single_width("日") and not asciicast._single_width("ü日")
    assert asciicast._single_width("üé") and not asciicast._single_width("e\u0301")
    assert (asciicast._NARROW, asciicast._NOT_NARROW) == ({"é", "ü", "e"}, {"日", "\u0301"})
    monkeypatch.setattr(asciicast, "_NARROW", set())
    monkeypatch.setattr(asciicast, "_NOT_NARROW", set())
    _both_paths(_cast_of_output(10, 3, "caf\u00e9 日本語 \u00fc", "x\u0301yz\u00e9"))
