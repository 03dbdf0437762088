"""The asciicast reader called directly (`asciicast.read`), record by record: every step's time, action and
observation, the episode's outcome (exit code, terminal or cut off), what is quarantined and why. The same
casts the pipeline tests ingest (test_asciicast, test_asciicast_clock), read without a lake, so that each
mapping is checked where the reader makes it."""

import datetime as dt
import json

import fsspec
import pytest

from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError
from ingest.ubuntu import asciicast
from tests.ingest.ubuntu.test_asciicast import RESIZED, V3
from tests.ingest.ubuntu.test_asciicast_clock import EVENTS, START, STEPS, _cast

T0 = dt.datetime.fromtimestamp(START, dt.timezone.utc)


def _read(tmp_path, text: str | bytes, name: str = "s.cast") -> list:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return list(asciicast.read(Source(fsspec.filesystem("file"), str(path), name, lambda *a: "sha256:")))


def _episode(records: list) -> Episode:
    (episode,) = [r for r in records if isinstance(r, Episode)]
    return episode


def _cast_of(version: int, events: list, header: dict | None = None) -> str:
    head = {"version": version, **({"term": {"cols": 20, "rows": 4}} if version == 3 else {"width": 20, "height": 4})}
    return "\n".join([json.dumps({**head, **(header or {})}), *map(json.dumps, events)]) + "\n"


@pytest.mark.parametrize("version", [2, 3])
def test_every_step_time_and_duration_follow_the_events_of_every_kind(version, tmp_path):
    """v3 intervals add up over output, resize, marker and exit events alike; v2 times are absolute."""
    ep = _episode(_read(tmp_path, _cast(version)))
    assert [s.timestamp for s in ep.steps] == [T0 + dt.timedelta(seconds=first) for first, _ in STEPS]
    assert all(s.timestamp.utcoffset() == dt.timedelta(0) for s in ep.steps)
    ends = [first for first, _ in STEPS[1:]] + [EVENTS[-1][0]]
    want = [end - last for (_, last), end in zip(STEPS, ends)]
    assert [s.action.duration_s for s in ep.steps] == want
    assert [json.loads(s.action.arguments) for s in ep.steps] == [
        {"keystrokes": s.action.text, "duration": d} for s, d in zip(ep.steps, want)]
    assert [(s.action.kind, s.action.text) for s in ep.steps] == [
        ("keystrokes", "ls\r"), ("keystrokes", "pwd\r"), ("keystrokes", "\x03"), ("keystrokes", "ex\r")]
    assert not any(s.action_inferred for s in ep.steps)
    # the marker and the exit are facts of the episode, at their own times
    assert ep.env["markers"] == [{"time": 6.0, "label": "half way"}]
    assert ep.env["exit_code"] == 0 and ep.final_observation.exit_code == 0
    assert ep.terminated and ep.task == "clock" and ep.domain == "terminal" and ep.platform == "linux"
    assert ep.env["asciicast_version"] == version and (ep.env["cols"], ep.env["rows"]) == (40, 5)


def test_v3_session_steps_screens_and_outcome(tmp_path):
    records = _read(tmp_path, V3)
    assert not [r for r in records if isinstance(r, Rejected)]
    ep = _episode(records)
    assert [s.action.text for s in ep.steps] == ["ls\r", "\x03", "\x1b[A"]
    assert [s.timestamp for s in ep.steps] == [T0 + dt.timedelta(seconds=t) for t in (1.5, 3.1, 3.6)]
    # the last key of each action to the next action's first key, the last one to the exit event
    assert [s.action.duration_s for s in ep.steps] == [1.1, 0.5, 1.1]
    assert [s.observation.text for s in ep.steps] == ["$", "$ ls\nfile_a  file_b\n100%\n$", "$"]
    assert [(s.observation.width, s.observation.height) for s in ep.steps] == [(40, 5), (60, 6), (60, 6)]
    assert all(s.observation.kind == "terminal" and s.observation.exit_code is None for s in ep.steps)
    # each action's source lines, verbatim: the three input events of `ls` + Enter
    assert ep.steps[0].action.raw == '[1.0, "i", "l"]\n[0.1, "i", "s"]\n[0.2, "i", "\\r"]'
    assert ep.steps[2].action.raw == '[0.4, "i", "\\u001b[A"]'
    final = ep.final_observation
    assert (final.text, final.exit_code, final.width, final.height) == ("$ ls", 0, 60, 6)
    assert ep.env == {"asciicast_version": 3, "cols": 40, "rows": 5, "term": "xterm-256color",
                      "title": "list files", "exit_code": 0}
    assert ep.key == "" and ep.terminated is True


def test_keys_of_one_event_split_into_actions_at_each_control_key(tmp_path):
    """A paste of `a\\tb\\x7fc\\x1bOA` is four actions: text up to Tab, up to Backspace, up to the SS3 arrow."""
    ep = _episode(_read(tmp_path, _cast_of(2, [[0.5, "i", "a\tb\x7fc\x1bOAd"], [0.75, "i", "e"], [2.0, "o", "x"]])))
    assert [s.action.text for s in ep.steps] == ["a\t", "b\x7f", "c\x1bOA", "de"]
    # keys of one event share its time; the trailing `de` runs on to the next event's
    assert [s.timestamp for s in ep.steps] == [None] * 4  # no timestamp in the header
    assert [s.action.duration_s for s in ep.steps] == [0.0, 0.0, 0.0, 1.25]
    assert ep.steps[3].action.raw == '[0.5, "i", "a\\tb\\u007fc\\u001bOAd"]\n[0.75, "i", "e"]'
    assert ep.env.get("exit_code") is None and ep.final_observation.exit_code is None


def test_an_action_whose_next_one_starts_earlier_lasts_zero(tmp_path):
    """v2 times are absolute: a second action written before the first one's time gets no negative duration."""
    ep = _episode(_read(tmp_path, _cast_of(2, [[1.0, "i", "\r"], [0.5, "i", "\r"]], {"timestamp": 1.5})))
    assert [s.action.duration_s for s in ep.steps] == [0.0, 0.0]
    at = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    assert [s.timestamp for s in ep.steps] == [at + dt.timedelta(seconds=2.5), at + dt.timedelta(seconds=2.0)]


@pytest.mark.parametrize("timestamp, start", [
    (1700000000.25, dt.datetime(2023, 11, 14, 22, 13, 20, 250000, tzinfo=dt.timezone.utc)),
    ("1700000000", None), (None, None), (True, dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.timezone.utc))])
def test_a_step_time_is_the_header_start_plus_the_event_time(timestamp, start, tmp_path):
    ep = _episode(_read(tmp_path, _cast_of(3, [[0.5, "o", "$ "], [0.25, "i", "\r"]], {"timestamp": timestamp})))
    assert ep.steps[0].timestamp == (start + dt.timedelta(seconds=0.75) if start else None)


@pytest.mark.parametrize("data, code", [("0", 0), (" 3 ", 3), ("-1", -1), ("130\n", 130), ("999999999", 999999999),
                                        ("1234567890", None), ("x", None), ("", None), ("1.5", None)])
def test_the_exit_event_is_the_outcome_when_it_is_an_int32(data, code, tmp_path):
    records = _read(tmp_path, _cast_of(3, [[0.1, "i", "\r"], [0.1, "x", data]]))
    ep = _episode(records)
    assert ep.final_observation.exit_code == code
    assert ep.env.get("exit_code") == code
    assert ep.steps[0].action.duration_s == 0.1  # the exit event still moves the clock on


def test_an_exit_event_without_a_string_is_read_as_its_text(tmp_path):
    ep = _episode(_read(tmp_path, _cast_of(3, [[0.1, "i", "\r"], [0.1, "x", 2]])))
    assert ep.final_observation.exit_code == 2


def test_markers_keep_their_time_and_label(tmp_path):
    ep = _episode(_read(tmp_path, _cast_of(3, [[0.1, "m", "a"], [0.2, "i", "\r"], [1 / 3, "m", ""]])))
    assert ep.env["markers"] == [{"time": 0.1, "label": "a"}, {"time": 0.633333, "label": ""}]
    assert ep.steps[0].action.duration_s == 0.333333


def test_no_marker_and_no_exit_leave_env_to_the_header(tmp_path):
    ep = _episode(_read(tmp_path, _cast_of(2, [[0.1, "i", "\r"]], {"title": "", "command": "bash -l",
                                                                     "env": {"SHELL": "/bin/zsh", "TERM": "vt100"}})))
    assert ep.env == {"asciicast_version": 2, "cols": 20, "rows": 4, "term": "vt100", "shell": "/bin/zsh",
                      "command": "bash -l"}
    assert ep.task == ""


def test_the_v3_term_type_wins_over_the_env_term(tmp_path):
    text = _cast_of(3, [[0.1, "i", "\r"]])
    text = text.replace('"rows": 4}', '"rows": 4, "type": "xterm"}, "env": {"TERM": "vt100"}', 1)
    assert _episode(_read(tmp_path, text)).env["term"] == "xterm"


def test_unknown_events_are_kept_raw_with_a_warning_and_move_the_clock(tmp_path):
    ep = _episode(_read(tmp_path, _cast_of(3, [[0.5, "z", "custom"], [0.25, "q", 7], [0.25, "i", "\r"]])))
    assert ep.env["unknown_events"] == [[0.5, "z", "custom"], [0.75, "q", "7"]]
    thirds = _episode(_read(tmp_path, _cast_of(3, [[1 / 3, "z", "a"], [0.25, "i", "\r"]]), "t.cast"))
    assert thirds.env["unknown_events"] == [[0.333333, "z", "a"]]
    assert [w["rule"] for w in ep.env["ingest_warnings"]] == ["asciicast.unknown_event"]
    assert ep.env["ingest_warnings"][0]["reason"] == "2 event(s) of code 'q', 'z' kept raw in env.unknown_events"
    assert ep.steps[0].timestamp is None and ep.steps[0].action.duration_s == 0.0


def test_at_most_a_hundred_unknown_events_are_kept(tmp_path):
    ep = _episode(_read(tmp_path, _cast_of(2, [[0.1, "i", "\r"]] + [[1 + n, "z", str(n)] for n in range(101)])))
    assert len(ep.env["unknown_events"]) == 100 and ep.env["unknown_events"][-1] == [100.0, "z", "99"]
    assert ep.env["ingest_warnings"][0]["reason"].startswith("101 event(s) of code 'z'")


def test_truncated_file_is_last_but_not_terminal(tmp_path):
    text = _cast_of(2, [[0.1, "i", "\r"], [0.2, "o", "done"]])[:-6]
    records = _read(tmp_path, text, "cut.cast")
    (rejected,) = [r for r in records if isinstance(r, Rejected)]
    assert (rejected.rule, rejected.line, rejected.location) == ("truncated_event", 3, "cut.cast")
    assert rejected.reason.startswith("cut.cast line 3: last event is cut off (truncated file): not JSON")
    assert rejected.snippet == '[0.2, "o", "d'
    assert _episode(records).terminated is False


def test_long_bad_lines_keep_a_snippet_of_200_characters(tmp_path):
    long = "x" * 300
    text = _cast_of(2, [[0.1, "i", "\r"]]) + f'[0.2, "o", 5, "{long}"]\n' + f'[0.3, "o", "caf\xe9{long}"]\n'
    data = text.encode().replace("\xe9".encode(), b"\xe9") + f'[0.4, "o", "{long}'.encode()
    records = _read(tmp_path, data, "long.cast")
    rows = [r for r in records if isinstance(r, Rejected)]
    assert [r.rule for r in rows] == ["bad_record", "bad_encoding", "truncated_event"]
    assert [len(r.snippet) for r in rows] == [200, 200, 200]
    assert rows[1].snippet.startswith('[0.3, "o", "caf\ufffdxx')


def test_a_bad_last_line_with_its_newline_is_a_bad_record_not_a_cut(tmp_path):
    records = _read(tmp_path, _cast_of(2, [[0.1, "i", "\r"]]) + '[0.2, "o"]\n', "b.cast")
    (rejected,) = [r for r in records if isinstance(r, Rejected)]
    assert (rejected.rule, rejected.line) == ("bad_record", 3)
    assert _episode(records).terminated


def test_a_line_that_is_not_json_is_a_parse_error_naming_the_line(tmp_path):
    records = _read(tmp_path, _cast_of(2, [[0.1, "i", "\r"]]).replace("\n", "\n{oops\n", 1), "p.cast")
    (rejected,) = [r for r in records if isinstance(r, Rejected)]
    assert (rejected.rule, rejected.line, rejected.snippet) == ("parse_error", 2, "{oops")
    assert rejected.reason.startswith("p.cast line 2: not an event: not JSON: ")


@pytest.mark.parametrize("event, problem", [
    ({"t": 1}, "expected a [time, code, data] array, got dict"),
    ([1, "o", "a", "b"], "expected a [time, code, data] array, got an array of 4"),
    ([True, "o", "a"], "field time: expected a number, got bool"),
    ([None, "o", "a"], "field time: expected a number, got NoneType"),
    ([-0.5, "o", "a"], "field time: -0.5 is negative"),
    ([0.5, "", "a"], "field code: expected a one-letter string, got ''"),
    ([0.5, 1, "a"], "field code: expected a one-letter string, got 1"),
    ([0.5, "i", None], "field data: expected a string for an 'i' event, got NoneType"),
    ([0.5, "r", 80], "field data: expected a string for an 'r' event, got int"),
    ([0.5, "o", 7], "field data: expected a string for an 'o' event, got int"),
    ([0.5, "r", "0x10"], "field data: resize '0x10' is not COLSxROWS with 1..1000 columns and 1..1000 rows"),
    ([0.5, "r", "10x0"], "field data: resize '10x0' is not COLSxROWS with 1..1000 columns and 1..1000 rows"),
    ([0.5, "r", "8" * 45], "field data: resize '" + "8" * 40 + "' is not COLSxROWS with 1..1000 columns and "
                           "1..1000 rows"),
    ([0.5, "r", "10x1001"], "field data: resize '10x1001' is not COLSxROWS with 1..1000 columns and 1..1000 rows"),
    ([0.5, "r", "1001x10"], "field data: resize '1001x10' is not COLSxROWS with 1..1000 columns and 1..1000 rows"),
])
def test_each_bad_event_field_is_named(event, problem, tmp_path):
    records = _read(tmp_path, _cast_of(2, [[0.1, "i", "\r"], event, [0.2, "o", "ok"]]), "e.cast")
    (rejected,) = [r for r in records if isinstance(r, Rejected)]
    assert (rejected.rule, rejected.line, rejected.location) == ("bad_record", 3, "e.cast")
    assert rejected.reason == f"e.cast line 3: not an event: {problem}"
    assert rejected.snippet == json.dumps(event)
    assert _episode(records).terminated is True
    assert _episode(records).final_observation.text == "ok"


def test_a_zero_time_and_edge_sizes_are_events(tmp_path):
    records = _read(tmp_path, _cast_of(2, [[0, "r", "1000x1000"], [0, "i", "\r"], [0, "r", " 1x1 "], [0, "i", "\r"]]))
    assert not [r for r in records if isinstance(r, Rejected)]
    ep = _episode(records)
    assert [(s.observation.width, s.observation.height) for s in ep.steps] == [(1000, 1000), (1, 1)]


def test_a_latin1_line_is_quarantined_with_its_byte_and_the_rest_read(tmp_path):
    data = _cast_of(2, [[0.1, "o", "x"], [0.2, "i", "\r"]]).encode().replace(b'"x"', b'"caf\xe9"')
    records = _read(tmp_path, data, "l.cast")
    (rejected,) = [r for r in records if isinstance(r, Rejected)]
    assert (rejected.rule, rejected.line, rejected.reason) == ("bad_encoding", 2, "l.cast line 2: not valid UTF-8 "
                                                                                  "at byte 15")
    assert rejected.snippet == '[0.1, "o", "caf\ufffd"]' and rejected.location == "l.cast"
    assert len(_episode(records).steps) == 1


def test_blank_lines_and_v3_comments_are_skipped_but_v2_hash_lines_are_not(tmp_path):
    body = '\n[0.1, "i", "a"]\n  \n# note\n[0.1, "i", "\\r"]\n'
    records = _read(tmp_path, json.dumps({"version": 3, "term": {"cols": 9, "rows": 3}}) + body
                    + '  # an indented comment\n')
    assert not [r for r in records if isinstance(r, Rejected)]
    ep = _episode(records)
    assert [s.action.text for s in ep.steps] == ["a\r"] and ep.steps[0].action.duration_s == 0.0
    records = _read(tmp_path, json.dumps({"version": 2, "width": 9, "height": 3}) + body, "v2.cast")
    assert [(r.rule, r.line) for r in records if isinstance(r, Rejected)] == [("parse_error", 4)]


def test_a_header_after_blank_lines_is_read(tmp_path):
    ep = _episode(_read(tmp_path, "\n \n" + _cast_of(2, [[0.25, "i", "\r"]])))
    assert ep.steps[0].action.text == "\r"
    assert ep.steps[0].action.raw == '[0.25, "i", "\\r"]'


@pytest.mark.parametrize("text, reason", [
    ("", "h.cast: no header object on the first line"),
    ("[1, 2]\n", "h.cast: no header object on the first line"),
    ('{"version": 2, "width": 80\n', "h.cast line 1: header is not JSON: "),
    ('{"width": 80, "height": 24}\n', "h.cast: asciicast version None is not supported (2 or 3)"),
    ('{"version": "2", "width": 80, "height": 24}\n', "h.cast: asciicast version '2' is not supported (2 or 3)"),
    ('{"version": 3, "width": 80, "height": 24}\n', "h.cast: v3 header has no 'term' object"),
    ('{"version": 3, "term": {"width": 80, "height": 24}}\n',
     "h.cast: terminal size NonexNone is missing or out of range"),
    ('{"version": 2, "width": 0, "height": 24}\n', "h.cast: terminal size 0x24 is missing or out of range"),
    ('{"version": 3, "term": {"cols": 80, "rows": 0}}\n', "h.cast: terminal size 80x0 is missing or out of range"),
    ('{"version": 2, "width": 80, "height": 1001}\n', "h.cast: terminal size 80x1001 is missing or out of range"),
    ('{"version": 2, "width": 1001, "height": 24}\n', "h.cast: terminal size 1001x24 is missing or out of range"),
    ('{"version": 2, "width": 80.0, "height": 24}\n', "h.cast: terminal size 80.0x24 is missing or out of range"),
])
def test_a_bad_header_fails_the_file_naming_what_is_wrong(text, reason, tmp_path):
    with pytest.raises(SourceError) as e:
        _read(tmp_path, text, "h.cast")
    assert (e.value.rule, e.value.location) == ("bad_header", "h.cast")
    assert str(e.value).startswith(reason)


@pytest.mark.parametrize("header, size", [('"width": 1000, "height": 1000', (1000, 1000)),
                                          ('"width": 1, "height": 1', (1, 1))])
def test_the_largest_and_smallest_screens_are_taken(header, size, tmp_path):
    ep = _episode(_read(tmp_path, '{"version": 2, %s}\n[0.1, "i", "\\r"]\n' % header))
    assert (ep.steps[0].observation.width, ep.steps[0].observation.height) == size
    assert (ep.env["cols"], ep.env["rows"]) == size


def test_a_recording_without_input_or_prompt_is_rejected_as_no_input(tmp_path):
    records = _read(tmp_path, _cast_of(2, [[0.1, "o", "hello\r\n"]]), "o.cast")
    (rejected,) = records
    assert (rejected.rule, rejected.location) == ("no_input", "o.cast")
    assert rejected.reason == ("o.cast: the recording has no input events, no command echoed after a shell "
                               "prompt and no command in its header, so no actions")


def test_input_without_keys_is_no_action_and_no_echo_is_read(tmp_path):
    """An input event with empty data holds no key: no action, and the echo is not read either (the
    recording has input)."""
    records = _read(tmp_path, _cast_of(2, [[0.1, "o", "$ "], [1.0, "o", "ls"], [1.1, "o", "\r\n$ "],
                                           [1.2, "i", ""]]), "n.cast")
    assert [r.rule for r in records] == ["no_input"]


def test_commands_read_back_from_the_echo_with_times_and_exit_codes(tmp_path):
    """No input events: one inferred `command` step per command echoed after a prompt; the prompt's status
    is the previous command's exit code, on the observation after it."""
    events = [[0.1, "o", "[0] $ "], [1.0, "o", "t"], [1.1, "o", "r"], [1.2, "o", "u"], [1.3, "o", "e"],
              [1.4, "o", "\r\n"], [2.0, "o", "[0] $ "], [3.0, "o", "f"], [3.1, "o", "a"], [3.2, "o", "l"],
              [3.3, "o", "s"], [3.4, "o", "e"], [3.5, "o", "\r\n"], [4.0, "o", "[1] $ "], [4.5, "m", "here"],
              [5.0, "x", "1"]]
    ep = _episode(_read(tmp_path, _cast_of(2, events, {"timestamp": START, "width": 30})))
    assert [(s.action.kind, s.action.code) for s in ep.steps] == [("command", "true"), ("command", "false")]
    assert all(s.action_inferred for s in ep.steps)
    assert [s.timestamp for s in ep.steps] == [T0 + dt.timedelta(seconds=t) for t in (1.0, 3.0)]
    # from Enter (the echoed line end) to the next command's first key, the last one to the end
    assert [s.action.duration_s for s in ep.steps] == [1.6, 1.5]
    assert [s.observation.text for s in ep.steps] == ["[0] $", "[0] $ true\n[0] $"]
    assert [s.observation.exit_code for s in ep.steps] == [None, 0]
    assert ep.final_observation.exit_code == 1 and ep.final_observation.text == "[0] $ true\n[0] $ false\n[1] $"
    raw = json.loads(ep.steps[1].action.raw)
    assert raw == {"inferred_from": "echo", "prompt": "[0] $ ", "row": "[0] $ false", "lines": [9, 14]}
    assert ep.env["actions_from_echo"] == {"prompts": ["[0] $"], "exit_codes_from_prompt": True}
    assert ep.env["markers"] == [{"time": 4.5, "label": "here"}] and ep.env["exit_code"] == 1


def test_the_last_prompt_status_is_the_outcome_when_no_exit_event_says_it(tmp_path):
    events = [[0.1, "o", "[0] $ "], [1.0, "o", "f"], [1.1, "o", "\r\n"], [2.0, "o", "[3] $ "]]
    ep = _episode(_read(tmp_path, _cast_of(2, events, {"width": 30})))
    assert [s.action.code for s in ep.steps] == ["f"]
    assert ep.steps[0].action.duration_s == 0.9
    assert ep.final_observation.exit_code == 3 and "exit_code" not in ep.env


def test_an_exit_event_wins_over_the_last_prompt_status(tmp_path):
    events = [[0.1, "o", "[0] $ "], [1.0, "o", "f"], [1.1, "o", "\r\n"], [2.0, "o", "[3] $ "], [2.5, "x", "4"]]
    ep = _episode(_read(tmp_path, _cast_of(2, events, {"width": 30})))
    assert ep.final_observation.exit_code == 4 and ep.env["exit_code"] == 4
    assert ep.steps[0].action.duration_s == 1.4


def test_keys_that_do_not_end_an_action(tmp_path):
    """Only control keys end an action: a space or a capital letter starting an input event does not."""
    ep = _episode(_read(tmp_path, _cast_of(2, [[0.1, "i", "ls"], [0.2, "i", " -l"], [0.3, "i", "X"],
                                               [0.4, "i", "Y\r"], [0.5, "i", "\x1f"]])))
    assert [s.action.text for s in ep.steps] == ["ls -lXY\r", "\x1f"]


def test_a_header_alone_is_no_input(tmp_path):
    for version in (2, 3):
        (rejected,) = _read(tmp_path, _cast_of(version, []), "h.cast")
        assert rejected.rule == "no_input"


def _echo(*commands: tuple[str, int], end: str = "", extra: list | None = None, step: float = 1 / 3) -> str:
    """A v2 recording without input: per command, the prompt with the last status, the command echoed key by
    key, Enter; `step` seconds between events."""
    events, t, status = [], 0.0, 0
    for command, code in commands:
        for data in [f"[{status}] $ ", *command, "\r\n"]:
            t += step
            events.append([t, "o", data])
        status = code
    if end:
        t += step
        events.append([t, "o", end.format(status=status)])
    return _cast_of(2, events + (extra or []), {"width": 30, "height": 10})


def test_each_echoed_command_shows_the_status_of_the_one_before(tmp_path):
    ep = _episode(_read(tmp_path, _echo(("a", 2), ("b", 1), ("c", 3), end="[{status}] $ ")))
    assert [s.action.code for s in ep.steps] == ["a", "b", "c"]
    assert [s.observation.exit_code for s in ep.steps] == [None, 2, 1]
    assert ep.final_observation.exit_code == 3
    # Enter at 1 s, the next first key at 5/3 s: 2/3 s, rounded to microseconds
    assert [s.action.duration_s for s in ep.steps] == [0.666667, 0.666667, 0.333333]
    assert "markers" not in ep.env and "exit_code" not in ep.env


def test_a_last_command_without_a_prompt_after_it_has_no_status(tmp_path):
    ep = _episode(_read(tmp_path, _echo(("a", 1), ("exit", 0), end="exit\r\n")))
    assert [s.action.code for s in ep.steps] == ["a", "exit"]
    assert [s.observation.exit_code for s in ep.steps] == [None, 1]
    assert ep.final_observation.exit_code is None


def test_echoed_commands_keep_markers_and_an_exit_that_is_no_number(tmp_path):
    extra = [[9 + 1 / 3, "m", "later"], [10, "x", "killed"]]
    ep = _episode(_read(tmp_path, _echo(("a", 1), end="[{status}] $ ", extra=extra)))
    assert ep.env["markers"] == [{"time": 9.333333, "label": "later"}]
    assert "exit_code" not in ep.env and ep.final_observation.exit_code == 1  # the prompt's status


def test_a_wider_screen_gets_tab_stops_every_eight_columns(tmp_path):
    """Tabs after the screen grew from 16 to 40 columns stop at 8, 16, 24 and 32, as on a screen that size."""
    events = [[0.1, "r", "40x5"], [0.2, "o", "a\tb\tc\td\te\tf"], [0.3, "i", "\r"]]
    text = _cast_of(2, events).replace('"width": 20', '"width": 16')
    ep = _episode(_read(tmp_path, text))
    assert ep.steps[0].observation.text == "a       b       c       d       e      f"
