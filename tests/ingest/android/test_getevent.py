import json
from collections import Counter

from ingest.android import getevent
from tests.conftest import SAMPLES

LOG = SAMPLES / "android" / "getevent" / "getevent_user_input.txt"

# `getevent -lp` header (axis ranges of a 1080x2400 panel) followed by `getevent -lt` events: a swipe up,
# a long press at the same place, BACK, a line cut in the middle, and a touch never lifted.
LP_LOG = """\
add device 1: /dev/input/event3
  name:     "sec_touchscreen"
  events:
    ABS (0003): ABS_MT_SLOT           : value 0, min 0, max 9, fuzz 0, flat 0, resolution 0
                ABS_MT_POSITION_X     : value 0, min 0, max 1079, fuzz 0, flat 0, resolution 0
                ABS_MT_POSITION_Y     : value 0, min 0, max 2399, fuzz 0, flat 0, resolution 0
add device 2: /dev/input/event1
  name:     "gpio-keys"
[     100.000000] /dev/input/event3: EV_ABS       ABS_MT_TRACKING_ID   00000011
[     100.000000] /dev/input/event3: EV_ABS       ABS_MT_POSITION_X    0000021c
[     100.000000] /dev/input/event3: EV_ABS       ABS_MT_POSITION_Y    00000708
[     100.000000] /dev/input/event3: EV_SYN       SYN_REPORT           00000000
[     100.050000] /dev/input/event3: EV_ABS       ABS_MT_POSITION_Y    000004b0
[     100.050000] /dev/input/event3: EV_SYN       SYN_REPORT           00000000
[     100.100000] /dev/input/event3: EV_ABS       ABS_MT_POSITION_Y    00000258
[     100.100000] /dev/input/event3: EV_SYN       SYN_REPORT           00000000
[     100.150000] /dev/input/event3: EV_ABS       ABS_MT_TRACKING_ID   ffffffff
[     100.150000] /dev/input/event3: EV_SYN       SYN_REPORT           00000000
[     101.000000] /dev/input/event3: EV_ABS       ABS_MT_TRACKING_ID   00000012
[     101.000000] /dev/input/event3: EV_SYN       SYN_REPORT           00000000
[     101.900000] /dev/input/event3: EV_ABS       ABS_MT_TRACKING_ID   ffffffff
[     101.900000] /dev/input/event3: EV_SYN       SYN_REPORT           00000000
[     102.000000] /dev/input/event1: EV_KEY       KEY_BACK             DOWN
[     102.000000] /dev/input/event1: EV_SYN       SYN_REPORT           00000000
[     102.080000] /dev/input/event1: EV_KEY       KEY_BACK             UP
[     102.080000] /dev/input/event1: EV_SYN       SYN_REPORT           00000000
[     102.5
[     103.000000] /dev/input/event3: EV_ABS       ABS_MT_TRACKING_ID   00000013
[     103.000000] /dev/input/event3: EV_SYN       SYN_REPORT           00000000
"""


def test_sample_log_gives_taps_and_volume_keys_in_time_order(run, query):
    result = run("ingest-android", [LOG])
    assert result.status == "success" and result.episodes == 1 and result.steps == 48 and result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert Counter(s["action"]["kind"] for s in steps) == {"tap": 28, "key": 20}
    first = steps[0]["action"]
    # 000042d7 / 00007b2b on the virtio 0..32767 axes, held 50109.254832 -> 50109.340921
    assert first["x"] == 0x42D7 / 32768 and first["y"] == 0x7B2B / 32768
    assert first["duration_s"] == 0.086089
    assert first["raw"].splitlines()[0].startswith("[   50109.254832] /dev/input/event2: EV_ABS       ABS_MT_TRACKING_ID")
    # the third touch reports no position: it is where the finger last was (0000414d, 00005ae3)
    third = steps[2]["action"]
    assert third["x"] == 0x414D / 32768 and third["y"] == 0x5AE3 / 32768
    keys = [s["action"] for s in steps if s["action"]["kind"] == "key"]
    assert [k["keys"][0] for k in keys] == ["KEY_VOLUMEUP"] * 8 + ["KEY_VOLUMEDOWN"] * 12
    assert max(k["duration_s"] for k in keys) == 1.668705  # held 50252.738670 -> 50254.407375
    assert all(s["timestamp"] is None and s["observation"]["kind"] == "none" for s in steps)

    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    touch = env["input_devices"]["/dev/input/event2"]
    assert touch["name"] == "virtio_input_multi_touch_1" and touch["x_range"] == [0, 32767]
    assert touch["axis_source"].startswith("assumed")
    assert env["step_uptime_s"][0] == 50109.254832 and env["step_offset_s"][-1] == round(50458.265559 - 50109.254832, 6)  # last touch down


def test_axis_ranges_from_the_lp_header_scale_gestures_and_bad_lines_are_quarantined(run, query, tmp_path):
    log = tmp_path / "capture.log"
    log.write_text(LP_LOG)
    result = run("ingest-android", [log])
    assert result.steps == 3 and result.quarantined == 2  # 3 gestures + 1 bad line + 1 unfinished touch
    swipe, hold, back = [s["action"] for s in query("SELECT action FROM steps ORDER BY step_index")]
    assert swipe["kind"] == "swipe" and swipe["direction"] == "up"
    assert swipe["x"] == 540 / 1080 and swipe["y"] == 1800 / 2400 and swipe["y2"] == 600 / 2400
    assert swipe["duration_s"] == 0.15 and len(swipe["raw"].splitlines()) == 10
    assert hold["kind"] == "long_press" and hold["x"] == 540 / 1080 and hold["y"] == 600 / 2400
    assert back["kind"] == "back" and back["duration_s"] == 0.08
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    dev = env["input_devices"]["/dev/input/event3"]
    assert dev["x_range"] == [0, 1079] and dev["y_range"] == [0, 2399] and dev["axis_source"] == "getevent -lp"
    rows = {r["rule"]: r for r in query("SELECT * FROM quarantine")}
    assert rows["parse_error"]["line"] == 27 and rows["parse_error"]["location"] == "capture.log"
    assert rows["incomplete_gesture"]["reason"] == "capture.log: line 28: touch on /dev/input/event3 still down when the log ends"


def test_units_sniff_event_lines():
    heads = {"/a/log.txt": b"add device 1: /dev/input/event0\n", "/a/b.txt": b"[  1.0] /dev/input/event2: EV_SYN",
             "/a/notes.txt": b"- Header block: `add device N: /dev/input/eventK` then `[ 1.0] /dev/input/event2: EV_SYN`"}
    assert getevent.units(sorted(heads), heads.__getitem__) == ["/a/b.txt", "/a/log.txt"]


_SAMPLE = LOG.read_text()


def test_garbage_lines_are_quarantined_by_line_and_the_log_is_kept(run, query, tmp_path):
    lines = _SAMPLE.splitlines(keepends=True)
    log = tmp_path / "damaged.txt"
    log.write_bytes("".join(lines[:100]).encode() + b"9f3a 00c1 ffee 0b1d beef\n" + b"\xff\xfe binary\n"
                    + b"[ 1.0] /dev/input/event2: " + b"x" * (2 << 20) + b"\n" + "".join(lines[100:]).encode())
    result = run("ingest-android", [log], stages=["ingest"])
    assert result.status == "success" and result.steps == 48 and result.quarantined == 3
    rows = query("SELECT * FROM quarantine ORDER BY line")
    assert [(r["rule"], r["line"], r["record_id"]) for r in rows] == [
        ("parse_error", 101, "line 101"), ("parse_error", 102, "line 102"), ("budget_exceeded", 103, "line 103")]
    assert rows[0]["reason"] == "damaged.txt: line 101: not a getevent event line"
    assert rows[1]["reason"] == "damaged.txt: line 102: not valid UTF-8 (byte 0)"
    assert "line_bytes budget of 1 MiB" in rows[2]["reason"] and "TRAJFORGE_BUDGET_LINE_BYTES" in rows[2]["reason"]


def test_a_bad_value_inside_a_touch_quarantines_that_gesture_only(run, query, tmp_path):
    log = tmp_path / "flipped.txt"
    log.write_text(_SAMPLE.replace("ABS_MT_POSITION_X    0000", "ABS_MT_POSITION_X    zz00", 1))
    result = run("ingest-android", [log], stages=["ingest"])
    assert result.status == "success" and result.steps == 47 and result.quarantined == 2
    bad_line, gesture = query("SELECT * FROM quarantine ORDER BY rule DESC")
    assert bad_line["rule"] == "parse_error" and "not an event type, code and value" in bad_line["reason"]
    assert gesture["rule"] == "bad_record" and gesture["record_id"] == f"gesture at line {gesture['line']}"
    assert f"holds line(s) {bad_line['line']} that did not parse" in gesture["reason"]
