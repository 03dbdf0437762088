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
