import datetime as dt
import json

from ingest.ubuntu import asciicast
from tests.conftest import SAMPLES

CAST = SAMPLES / "ubuntu" / "asciicast" / "markers-input.cast"

# asciicast v3 (intervals between events, `term` header, `x` exit), written after the public v3 spec:
# a prompt, `ls` + Enter, output with a carriage-return overwrite, a resize, a clear, Ctrl-C, an arrow key.
V3 = "\n".join([
    '{"version": 3, "term": {"cols": 40, "rows": 5, "type": "xterm-256color"}, "timestamp": 1700000000, '
    '"title": "list files"}',
    '# comment lines are allowed in v3',
    '[0.5, "o", "$ "]',
    '[1.0, "i", "l"]', '[0.1, "o", "l"]', '[0.1, "i", "s"]', '[0.1, "o", "s"]',
    '[0.2, "i", "\\r"]', '[0.1, "o", "\\r\\nfile_a  file_b\\r\\n50%\\r100%\\r\\n$ "]',
    '[0.5, "r", "60x6"]',
    '[0.5, "i", "\\u0003"]', '[0.1, "o", "^C\\u001b[2J\\u001b[H$ "]',
    '[0.4, "i", "\\u001b[A"]', '[0.1, "o", "ls"]',
    '[1.0, "x", "0"]',
]) + "\n"


def test_v2_sample_keystrokes_up_to_enter_are_one_action(run, query):
    result = run("ingest-ubuntu", [CAST])
    assert result.status == "success" and result.episodes == 1 and result.steps == 1 and result.quarantined == 0
    step = query("SELECT * FROM steps")[0]
    action = step["action"]
    # input "a" at 0.3 s and "\r" at 0.9 s: one action ended by Enter
    assert action["kind"] == "keystrokes" and action["text"] == "a\r"
    assert json.loads(action["arguments"]) == {"keystrokes": "a\r", "duration": 1.1}
    assert action["raw"] == '[0.3, "i", "a"]\n[0.9, "i", "\\r"]'
    # what the person saw before typing, then the final screen as the last action's target
    assert step["observation"]["kind"] == "terminal" and step["observation"]["text"] == "start"
    assert (step["observation"]["width"], step["observation"]["height"]) == (80, 24)
    assert step["final_observation"]["text"] == "start\nmiddle\nmore\nend\ndone"
    assert step["timestamp"] is None  # the v2 header has no timestamp
    assert step["is_first"] and step["is_last"] and step["is_terminal"]
    ep = query("SELECT * FROM episodes")[0]
    assert ep["platform"] == "linux" and ep["domain"] == "terminal" and ep["source_format"] == "asciicast"
    assert json.loads(ep["env"])["markers"] == [{"label": "first", "time": 0.5}, {"label": "second", "time": 1.1}]


def test_v3_intervals_rendering_control_keys_and_exit(tmp_path, run, query):
    path = tmp_path / "session.cast"
    path.write_text(V3)
    result = run("ingest-ubuntu", [path])
    assert result.steps == 3 and result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["text"] for s in steps] == ["ls\r", "\x03", "\x1b[A"]
    # v3 times are intervals: the first key comes 0.5 + 1.0 s after the start
    start = dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=dt.timezone.utc)
    assert steps[0]["timestamp"] == start + dt.timedelta(seconds=1.5)
    assert steps[0]["timestamp"].tzinfo is not None
    assert steps[0]["observation"]["text"] == "$"
    # the carriage return overwrote "50%" with "100%"; the resize is seen by the next observation
    assert steps[1]["observation"]["text"] == "$ ls\nfile_a  file_b\n100%\n$"
    assert (steps[1]["observation"]["width"], steps[1]["observation"]["height"]) == (60, 6)
    assert steps[2]["observation"]["text"] == "$"  # the screen was cleared
    final = steps[2]["final_observation"]
    assert final["text"] == "$ ls" and final["exit_code"] == 0
    assert steps[2]["is_terminal"]
    ep = query("SELECT task, env FROM episodes")[0]
    assert ep["task"] == "list files" and json.loads(ep["env"])["term"] == "xterm-256color"


def test_truncated_cast_keeps_events_before_the_cut(tmp_path, run, query):
    path = tmp_path / "cut.cast"
    path.write_bytes(CAST.read_bytes()[:-12])  # the last event loses its end
    result = run("ingest-ubuntu", [path])
    assert result.status == "success" and result.steps == 1 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "truncated_event" and row["line"] == 10
    assert row["reason"].startswith("cut.cast line 10: last event is cut off")
    step = query("SELECT * FROM steps")[0]
    assert step["is_last"] and not step["is_terminal"]  # truncated: last but not terminal
    assert step["final_observation"]["text"] == "start\nmiddle\nmore\nend"


def test_bad_header_version_is_one_quarantine_row(tmp_path, run, query):
    path = tmp_path / "future.cast"
    path.write_text('{"version": 4, "width": 80, "height": 24}\n[0.1, "i", "a"]\n')
    result = run("ingest-ubuntu", [path])
    assert result.status == "success" and result.episodes == 0 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "bad_header"
    assert row["reason"] == "future.cast: asciicast version 4 is not supported (2 or 3)"


def test_non_utf8_line_is_quarantined_and_the_rest_ingested(tmp_path, run, query):
    lines = CAST.read_bytes().split(b"\n")
    lines[3] = b'[0.45, "o", "caf\xe9\\r\\n"]'  # Latin-1 byte in an output event
    path = tmp_path / "latin1.cast"
    path.write_bytes(b"\n".join(lines))
    result = run("ingest-ubuntu", [path])
    assert result.steps == 1 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "bad_encoding" and row["line"] == 4
    assert row["reason"] == "latin1.cast line 4: not valid UTF-8 at byte 16"


def test_recording_without_input_is_quarantined(tmp_path, run, query):
    path = tmp_path / "output-only.cast"
    path.write_text('{"version": 2, "width": 80, "height": 24}\n[0.1, "o", "hello\\r\\n"]\n')
    result = run("ingest-ubuntu", [path])
    assert result.episodes == 0 and result.quarantined == 1
    assert query("SELECT rule FROM quarantine")[0]["rule"] == "no_input"


def test_units_are_cast_files():
    assert asciicast.units(["/a/x.cast", "/a/y.json", "/a/z.cast.bak"], head=None) == ["/a/x.cast"]


# asciicast v2 as the spec writes a resize: `[time, "r", "COLSxROWS"]`. A shell on a tall screen, then the
# window made shorter and narrower, then taller again.
RESIZED = "\n".join([
    '{"version": 2, "width": 80, "height": 24}',
    '[0.1, "o", "$ "]',
    '[0.2, "i", "echo one\\r"]', '[0.3, "o", "echo one\\r\\none\\r\\n$ "]',
    '[0.5, "r", "100x10"]',
    '[0.6, "i", "seq 3 14\\r"]',
    '[0.7, "o", "seq 3 14\\r\\n' + "".join(f"{n}\\r\\n" for n in range(3, 15)) + '$ "]',
    '[0.8, "r", "6x5"]',
    '[0.9, "i", "ls\\r"]', '[1.0, "o", "ls\\r\\n"]',
    '[1.1, "r", "80x24"]',
    '[1.2, "i", "exit\\r"]',
]) + "\n"


def test_resize_keeps_the_screen(tmp_path, run, query):
    """A resize changes the screen's size, keeping what it shows (pyte's own resize blanked a screen whose
    text was near the top: it drops rows from the top whatever is on them)."""
    path = tmp_path / "resized.cast"
    path.write_text(RESIZED)
    result = run("ingest-ubuntu", [path])
    assert result.steps == 4 and result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    # 24 -> 10 rows with the cursor on row 2: the rows below it go, the text stays
    obs = steps[1]["observation"]
    assert obs["text"] == "$ echo one\none\n$" and (obs["width"], obs["height"]) == (100, 10)
    # 10 -> 5 rows with the cursor on the last row: the top rows scroll away; 100 -> 6 columns crop each row
    obs = steps[2]["observation"]
    assert obs["text"] == "11\n12\n13\n14\n$" and (obs["width"], obs["height"]) == (6, 5)
    # 5 -> 24 rows (after `ls`'s line feed scrolled the short screen): blank rows come at the bottom
    obs = steps[3]["observation"]
    assert obs["text"] == "12\n13\n14\n$ ls" and (obs["width"], obs["height"]) == (80, 24)


def test_bad_event_fields_are_quarantined_one_by_one(tmp_path, run, query):
    lines = RESIZED.split("\n")
    lines[4] = '[0.5, "r", "100 by 10"]'  # the resize is dropped, the screen keeps its size
    lines[2] = '["0.2", "i", "echo one\\r"]'
    lines[3] = '[0.3, "o", 7]'
    lines.insert(1, '[0.05, "o"]')
    path = tmp_path / "bad.cast"
    path.write_text("\n".join(lines))
    result = run("ingest-ubuntu", [path])
    assert result.episodes == 1 and result.steps == 3 and result.quarantined == 4
    rows = query("SELECT rule, line, reason FROM quarantine ORDER BY line")
    assert [(r["rule"], r["line"]) for r in rows] == [("bad_record", 2), ("bad_record", 4), ("bad_record", 5),
                                                      ("bad_record", 6)]
    assert [r["reason"] for r in rows] == [
        "bad.cast line 2: not an event: expected a [time, code, data] array, got an array of 2",
        "bad.cast line 4: not an event: field time: expected a number, got str",
        "bad.cast line 5: not an event: field data: expected a string for an 'o' event, got int",
        "bad.cast line 6: not an event: field data: resize '100 by 10' is not COLSxROWS with 1..1000 columns "
        "and 1..1000 rows",
    ]
    assert query("SELECT observation FROM steps ORDER BY step_index")[0]["observation"]["width"] == 80
