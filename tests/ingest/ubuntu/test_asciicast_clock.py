"""Every step's clock in an asciicast: v3 times are intervals since the previous event of ANY kind (output,
input, resize, marker, exit), v2 times are absolute. The same session written both ways gives the same
timestamps and durations for every step, each equal to the time written down here."""

import datetime as dt
import json

import pytest

START = 1_700_000_000
# (seconds since the start, code, data): the session once, in absolute time. Between the inputs sit a resize,
# a marker and output, each after its own pause, so a clock that skips any kind of event drifts.
EVENTS = [
    (0.25, "o", "$ "),
    (1.0, "i", "l"), (1.125, "o", "l"), (1.25, "i", "s"), (1.5, "i", "\r"),
    (2.0, "o", "\r\nfile_a\r\n$ "),
    (3.5, "r", "60x6"),  # a resize, 1.5 s later
    (4.0, "i", "p"), (4.25, "i", "w"), (4.75, "i", "d"), (5.0, "i", "\r"),
    (6.0, "m", "half way"),  # a marker, 1 s later
    (7.25, "o", "\r\n/root\r\n$ "),
    (8.0, "r", "80x24"),
    (9.5, "i", "\u0003"),
    (10.0, "o", "^C\r\n$ "),
    (11.0, "i", "e"), (11.5, "i", "x"), (12.0, "i", "\r"),
    (14.0, "x", "0"),  # the exit, 2 s after the last key
]
# (first key time, last key time) per step: keys up to Enter or a control key are one action
STEPS = [(1.0, 1.5), (4.0, 5.0), (9.5, 9.5), (11.0, 12.0)]


def _cast(version: int) -> str:
    header = {"version": version, "timestamp": START, "title": "clock"}
    header.update({"term": {"cols": 40, "rows": 5}} if version == 3 else {"width": 40, "height": 5})
    lines, previous = [json.dumps(header)], 0.0
    for t, code, data in EVENTS:
        lines.append(json.dumps([t - previous if version == 3 else t, code, data]))
        previous = t
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("version", [2, 3])
def test_every_step_has_the_time_of_its_first_key_and_lasts_until_the_next(version, tmp_path, run, query):
    path = tmp_path / f"clock-v{version}.cast"
    path.write_text(_cast(version))
    result = run("ingest-ubuntu", [path])
    assert result.status == "success" and result.steps == len(STEPS) and result.quarantined == 0
    steps = query("SELECT step_index, timestamp, action FROM steps ORDER BY step_index")
    start = dt.datetime.fromtimestamp(START, dt.timezone.utc)
    assert [s["timestamp"] for s in steps] == [start + dt.timedelta(seconds=first) for first, _ in STEPS]
    # an action lasts from its last key until the next action's first key (the exit, for the last one)
    ends = [first for first, _ in STEPS[1:]] + [EVENTS[-1][0]]
    want = [end - last for (_, last), end in zip(STEPS, ends)]
    assert [json.loads(s["action"]["arguments"])["duration"] for s in steps] == want
    assert [s["action"]["duration_s"] for s in steps] == want
    assert [s["action"]["text"] for s in steps] == ["ls\r", "pwd\r", "\x03", "ex\r"]
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert env["markers"] == [{"label": "half way", "time": 6.0}]
    assert env["exit_code"] == 0
