"""The DroidBot reader called directly (`droidbot.read`): each event's action (kind, text, code, the point it
touched on the screen), the screen it acted on, the runs of one output folder and what is quarantined. The
real run (samples/android/droidbot-run) and Kea's layout (`kea_output` of test_droidbot) as the pipeline tests
ingest them, and hand-made events for the kinds the sample does not hold."""

import hashlib
import json
import shutil

import fsspec
import pytest

from ingest.android import droidbot
from ingest.record import Episode, Rejected
from ingest.source import Budgets, Source
from tests.conftest import SAMPLES
from tests.ingest.android.test_droidbot import APP, H, W, _png, _state, kea_output

RUN = SAMPLES / "android" / "droidbot-run"


def _blob(data: bytes, media: str, uri: str) -> str:
    return f"{uri}|{media}:{hashlib.sha256(data).hexdigest()[:12]}"  # the unit the blob came from, too


def _read(path, budgets: Budgets | None = None) -> list:
    return list(droidbot.read(Source(fsspec.filesystem("file"), str(path), "in/run", _blob,
                                     **({"budgets": budgets} if budgets else {}))))


def _episodes(records) -> list[Episode]:
    return [r for r in records if isinstance(r, Episode)]


def test_the_real_run_is_one_episode_of_its_twelve_events(tmp_path):
    records = _read(RUN)
    assert not [r for r in records if isinstance(r, Rejected)]
    (ep,) = _episodes(records)
    steps = ep.steps
    assert [s.action.kind for s in steps] == ["command", "open_app", "back"] + ["tap"] * 4 + ["back"] + ["tap"] * 4
    assert steps[0].action.code == "am force-stop com.tencent.qqmusic"
    assert (steps[1].action.text, steps[1].action.code) == (
        "com.tencent.qqmusic", "am start com.tencent.qqmusic/com.tencent.qqmusic.activity.AppStarterActivity")
    # the touch on the ImageView [0,171][1080,2148] lands at its centre, normalized by the 1080x2280 screen
    tap = steps[3].action
    assert (tap.x, tap.y) == (0.5, (171 + 2148) / 2 / 2280)
    assert json.loads(tap.element) == {"temp_id": 5, "class": "android.widget.ImageView", "resource_id": None,
                                       "text": None, "content_description": None, "bounds": [[0, 171], [1080, 2148]],
                                       "view_str": "7ca778feba2fbc68a4ee248e9f10a7e6"}
    assert json.loads(tap.raw) == json.loads((RUN / "events" / "event_2021-12-06_204505.json").read_text())
    assert tap.direction is None and tap.text is None
    # the screen each event acted on: its start state, rendered, with its own screenshot
    obs = steps[3].observation
    assert (obs.kind, obs.width, obs.height) == ("screen", 1080, 2280)
    assert obs.text.startswith("Activity: com.tencent.qqmusic/.activity.AppStarterActivity")
    assert '"跳过"' in obs.text and len(json.loads(obs.ui_tree)) == 15
    shot = (RUN / "states" / "screen_2021-12-06_204452.jpg").read_bytes()
    assert steps[0].observation.screenshot == _blob(shot, "image/jpeg", "in/run")
    assert steps[2].observation.screenshot is not None and steps[3].observation.screenshot is None
    # states whose snapshot was not copied stay empty rather than guessed
    assert steps[4].observation.kind == "none" and steps[4].observation.text is None
    assert all(s.timestamp is None for s in steps)  # tags are local time of an unknown zone
    assert ep.terminated is False and ep.key == "" and ep.task is None
    assert (ep.domain, ep.platform) == ("android", "android")
    assert ep.env == {"device": "android", "device_model_number": "Android SDK built for x86",
                      "device_sdk_version": 30, "app_package": "com.tencent.qqmusic",
                      "app_main_activity": "com.tencent.qqmusic.activity.AppStarterActivity",
                      "app_sha256": ep.env["app_sha256"], "local_time_first": "2021-12-06_204449",
                      "local_time_last": "2021-12-06_204540", "screen_size": [1080, 2280]}
    assert len(ep.env["app_sha256"]) == 64
    # the last event's stop state was not copied: no final screen
    assert ep.final_observation is None


def test_the_final_screen_is_the_last_events_stop_state(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    last = run / "events" / "event_2021-12-06_204540.json"
    record = json.loads(last.read_text())
    record["stop_state"] = "548af0338782a0a419f95f42b1485549"
    last.write_text(json.dumps(record))
    (ep,) = _episodes(_read(run))
    assert ep.final_observation is ep.steps[3].observation  # the same state, rendered once


def test_kea_runs_are_episodes_each_matched_to_its_own_screens(tmp_path):
    first, second = _episodes(_read(kea_output(tmp_path / "kea-out")))
    assert (first.key, second.key) == ("", "run-1")
    assert [s.action.kind for s in first.steps] == ["command", "open_app", "tap", "command"]
    assert [s.action.kind for s in second.steps] == ["command", "open_app", "tap"]
    assert (first.env["local_time_first"], first.env["local_time_last"]) == ("2024-05-01_100000", "2024-05-01_100011")
    assert first.env["run"] == {"index": 0, "count": 2} and second.env["run"] == {"index": 1, "count": 2}
    assert second.env["local_time_first"] == "2024-05-01_100500" and first.env["screen_size"] == [W, H]
    # the MAIN screen recurs: each tap sees the one recorded nearest its own time, with that screenshot
    assert '"Add note (run 1)"' in first.steps[2].observation.text
    assert '"Add note (run 2)"' in second.steps[2].observation.text
    assert first.steps[2].observation.screenshot == _blob(_png(3), "image/png", "in/run")
    assert second.steps[2].observation.screenshot == _blob(_png(7), "image/png", "in/run")
    assert (first.steps[2].action.x, first.steps[2].action.y) == (0.5, 300 / H)
    rotation = first.steps[3].action
    assert (rotation.kind, rotation.code, rotation.text) == ("command", "rotate_device_right", "landscape")
    assert "ingest_warnings" not in first.env
    # each run's last event stopped on EDIT: the editor as recorded nearest that event's time (state_4, state_5)
    assert '"Editor"' in first.final_observation.text and '"Editor"' in second.final_observation.text
    assert first.final_observation.screenshot == _blob(_png(4), "image/png", "in/run")
    assert second.final_observation.screenshot == _blob(_png(5), "image/png", "in/run")


def test_an_unknown_event_kind_is_a_command_with_a_warning(tmp_path):
    root = kea_output(tmp_path / "kea-out")
    event = root / "events" / "event_2024-05-01_100011.json"
    record = json.loads(event.read_text())
    record["event"], record["event_str"] = {"event_type": None}, "ShakeDeviceEvent(strength=3)"
    event.write_text(json.dumps(record))
    first = _episodes(_read(root))[0]
    assert (first.steps[3].action.kind, first.steps[3].action.code) == ("command", "ShakeDeviceEvent(strength=3)")
    (warning,) = first.env["ingest_warnings"]
    assert warning["rule"] == "unknown_event"
    assert warning["reason"] == ("event 2024-05-01_100011: kind 'ShakeDeviceEvent' (ShakeDeviceEvent(strength=3)) "
                                 "kept as a command with its raw record")


def _run_of(tmp_path, events: list[dict], state: dict | None = None) -> list:
    """A DroidBot folder: one state (tag 2024-01-01_120000, hash S) and the events, tagged a second apart."""
    root = tmp_path / "run"
    (root / "events").mkdir(parents=True)
    (root / "states").mkdir()
    state = state or {**_state("2024-01-01_120000", "S", ".Main", "OK")}
    (root / "states" / "state_2024-01-01_120000.json").write_text(json.dumps(state))
    for n, event in enumerate(events):
        tag = f"2024-01-01_12000{n}"
        (root / "events" / f"event_{tag}.json").write_text(json.dumps(
            {"tag": tag, "event": event, "start_state": "S", "stop_state": "S", "event_str": "E()"}))
    return _read(root)


@pytest.mark.parametrize("event, want", [
    ({"event_type": "key", "name": "home"}, {"kind": "home"}),
    ({"event_type": "key", "name": "BACK"}, {"kind": "back"}),
    ({"event_type": "key", "name": "VOLUME_UP"}, {"kind": "key", "keys": ["VOLUME_UP"]}),
    ({"event_type": "key"}, {"kind": "key", "keys": [""]}),
    ({"event_type": "intent", "intent": "am broadcast -a X"}, {"kind": "command", "code": "am broadcast -a X"}),
    ({"event_type": "intent"}, {"kind": "command", "code": ""}),
    ({"event_type": "kill_app", "stop_intent": "am force-stop a.b"}, {"kind": "command", "code": "am force-stop a.b"}),
    ({"event_type": "intent", "intent": "am start -n a.b/.Main"}, {"kind": "open_app", "text": "a.b",
                                                                   "code": "am start -n a.b/.Main"}),
    ({"event_type": "touch", "x": 540, "y": 600}, {"kind": "tap", "x": 0.5, "y": 0.25}),
    ({"event_type": "touch", "x": 2160, "y": -5}, {"kind": "tap", "x": 1.0, "y": 0.0}),
    ({"event_type": "touch", "x": 540, "y": None}, {"kind": "tap", "x": None, "y": None}),
    ({"event_type": "long_touch", "x": 108, "y": 240}, {"kind": "long_press", "x": 0.1, "y": 0.1}),
    ({"event_type": "set_text", "text": "hello", "view": {"bounds": [[0, 0], [216, 480]], "temp_id": 3}},
     {"kind": "type", "text": "hello", "x": 0.1, "y": 0.1}),
    ({"event_type": "scroll", "direction": "DOWN", "view": {"bounds": [[0, 0], [1080, 2400]]}},
     {"kind": "scroll", "direction": "down", "x": 0.5, "y": 0.5}),
    ({"event_type": "scroll", "view": {"bounds": None}}, {"kind": "scroll", "direction": None, "x": None}),
    ({"event_type": "swipe", "start_x": 0, "start_y": 2400, "end_x": 1080, "end_y": 1200},
     {"kind": "swipe", "x": 0.0, "y": 1.0, "x2": 1.0, "y2": 0.5}),
    ({"event_type": "swipe", "start_x": 540, "start_y": 0, "end_x": None, "end_y": 1200,
      "view": {"temp_id": 2, "text": "list"}},
     {"kind": "swipe", "x": 0.5, "y": 0.0, "x2": None, "y2": None,
      "element": b'{"temp_id":2,"class":null,"resource_id":null,"text":"list","content_description":null,'
                 b'"bounds":null,"view_str":null}'}),
    ({"event_type": "exit"}, {"kind": "done"}),
    ({"event_type": "rotate_device_neutral"}, {"kind": "command", "code": "rotate_device_neutral", "text": "portrait"}),
    ({"event_type": "fresh_reinstall_app"}, {"kind": "command", "code": "fresh_reinstall_app", "text": None}),
])
def test_each_event_kind_maps_to_its_action(event, want, tmp_path):
    (ep,) = _episodes(_run_of(tmp_path, [event]))
    action = ep.steps[0].action
    assert {k: getattr(action, k) for k in want} == want
    assert json.loads(action.raw)["event"] == event
    assert ep.env.get("ingest_warnings") is None


def test_an_element_is_the_views_identity(tmp_path):
    view = {"temp_id": 3, "class": "Button", "resource_id": "a:id/b", "text": "OK", "content_description": "ok",
            "bounds": [[0, 0], [10, 10]], "view_str": "v", "parent": 1, "children": [4]}
    (ep,) = _episodes(_run_of(tmp_path, [{"event_type": "touch", "view": view}]))
    assert json.loads(ep.steps[0].action.element) == {k: view[k] for k in (
        "temp_id", "class", "resource_id", "text", "content_description", "bounds", "view_str")}


@pytest.mark.parametrize("size", [{"width": 0}, {"width": 1080}, {"height": 2400}])
def test_without_a_screen_size_a_touch_has_no_point(size, tmp_path):
    state = {"tag": "2024-01-01_120000", "state_str": "S", "views": [], "foreground_activity": "a/.B", **size}
    (ep,) = _episodes(_run_of(tmp_path, [{"event_type": "touch", "x": 5, "y": 5}], state))
    assert (ep.steps[0].action.x, ep.steps[0].action.y) == (None, None)
    assert "screen_size" not in ep.env
    assert ep.steps[0].observation.text == "Activity: a/.B" and ep.steps[0].observation.ui_tree == b"[]"


def test_event_kinds_named_by_event_str(tmp_path):
    root = tmp_path / "run"
    (root / "events").mkdir(parents=True)
    strs = ["  KeyEvent(name=BACK)", "RotateDeviceToPortraitEvent()", "ExitEvent()", "not a call", None]
    for n, event_str in enumerate(strs):
        tag = f"2024-01-01_12000{n}"
        (root / "events" / f"event_{tag}.json").write_text(json.dumps(
            {"tag": tag, "event": {"event_type": None, "name": "BACK"}, "event_str": event_str}))
    (ep,) = _episodes(_read(root))
    assert [s.action.kind for s in ep.steps] == ["back", "command", "done", "command", "command"]
    assert [s.action.code for s in ep.steps[3:]] == ["not a call", None]
    assert [json.loads(s.action.raw)["event_str"] for s in ep.steps[3:]] == ["not a call", None]
    assert [w["reason"] for w in ep.env["ingest_warnings"]] == [
        "event 2024-01-01_120003: kind None (not a call) kept as a command with its raw record",
        "event 2024-01-01_120004: kind None (None) kept as a command with its raw record"]
    assert all(s.observation.kind == "none" for s in ep.steps) and ep.final_observation is None
    assert "screen_size" not in ep.env and "run" not in ep.env


def test_a_tag_from_the_file_name_when_the_record_has_none(tmp_path):
    root = tmp_path / "run"
    (root / "events").mkdir(parents=True)
    (root / "events" / "event_2024-01-01_120005.json").write_text(json.dumps({"event": {"event_type": "exit"}}))
    for name in ("a.json", "notes.json", "event_x.txt"):  # not event files: not read (a.json sorts first)
        (root / "events" / name).write_text("{broken")
    (root / "states").mkdir()
    (root / "states" / "a.json").write_text("{broken")
    (root / "states" / "state_x.txt").write_text("{broken")
    records = _read(root)
    assert not [r for r in records if isinstance(r, Rejected)]
    (ep,) = _episodes(records)
    assert ep.env["local_time_first"] == "2024-01-01_120005" and len(ep.steps) == 1


def test_a_state_nearest_in_time_wins_and_ties_go_to_the_earlier(tmp_path):
    root = tmp_path / "run"
    (root / "events").mkdir(parents=True)
    (root / "states").mkdir()
    for tag, label in (("2024-01-01_115950", "early"), ("2024-01-01_120010", "late"), ("bad-tag", "untimed")):
        (root / "states" / f"state_{tag}.json").write_text(json.dumps({**_state(tag, "S", ".M", label)}))
    for tag in ("2024-01-01_120000", "2024-01-01_120001", "2024-01-01_115959"):
        (root / "events" / f"event_{tag}.json").write_text(json.dumps(
            {"tag": tag, "event": {"event_type": "exit"}, "start_state": "S", "stop_state": "S"}))
    (ep,) = _episodes(_read(root))
    # 115959: 9 s from early; 120000: 10 s from each, the earlier wins; 120001: 9 s from late
    assert ['"early"' in s.observation.text for s in ep.steps] == [True, True, False]
    assert '"late"' in ep.steps[2].observation.text


def test_a_state_without_a_time_is_taken_when_none_has_one(tmp_path):
    root = tmp_path / "run"
    (root / "events").mkdir(parents=True)
    (root / "states").mkdir()
    for name, label in (("state_a.json", "first"), ("state_b.json", "second")):
        (root / "states" / name).write_text(json.dumps({**_state("", "S", ".M", label), "tag": None}))
    (root / "events" / "event_2024-01-01_120000.json").write_text(json.dumps(
        {"tag": "2024-01-01_120000", "event": {"event_type": "exit"}, "start_state": "S"}))
    (root / "events" / "event_2024-13-01_120000.json").write_text(json.dumps(
        {"tag": "2024-13-01_120000", "event": {"event_type": "exit"}, "start_state": "S"}))
    (ep,) = _episodes(_read(root))
    assert ['"first"' in s.observation.text for s in ep.steps] == [True, True]


def test_bad_files_are_quarantined_one_by_one_and_the_rest_read(tmp_path):
    root = tmp_path / "run"
    shutil.copytree(RUN, root)
    (root / "events" / "event_2021-12-06_204513.json").write_bytes(b'{"tag": "x", "event"')
    (root / "events" / "event_2021-12-06_204518.json").write_text('{"tag": "2021-12-06_204518", "event": 3}')
    (root / "events" / "event_2021-12-06_204522.json").write_text("[1]")
    (root / "states" / "state_2021-12-06_204456.json").write_text("[]")
    (root / "states" / "state_2021-12-06_204505.json").write_text("{")
    (root / "utg.js").write_text("var utg = {broken")
    records = _read(root)
    rows = [(r.rule, r.location, r.reason) for r in records if isinstance(r, Rejected)]
    assert rows[:2] == [
        ("bad_record", "states/state_2021-12-06_204456.json", "states/state_2021-12-06_204456.json: not a JSON object"),
        ("parse_error", "states/state_2021-12-06_204505.json", rows[1][2])]
    assert rows[1][2].startswith("states/state_2021-12-06_204505.json")
    assert rows[2][:2] == ("parse_error", "events/event_2021-12-06_204513.json")
    assert rows[2][2].startswith("events/event_2021-12-06_204513.json: invalid JSON")
    assert rows[3:] == [
        ("bad_record", "events/event_2021-12-06_204518.json", "events/event_2021-12-06_204518.json: no 'event' object"),
        ("bad_record", "events/event_2021-12-06_204522.json", "events/event_2021-12-06_204522.json: no 'event' object")]
    (ep,) = _episodes(records)
    assert len(ep.steps) == 9 and ep.steps[2].observation.kind == "none"  # its state was unreadable
    assert "device_model_number" not in ep.env  # utg.js unreadable: no run facts


def test_a_utg_without_an_assignment_gives_no_run_facts(tmp_path):
    root = tmp_path / "run"
    shutil.copytree(RUN, root)
    (root / "utg.js").write_text('{"device_sdk_version": 30}')
    assert "device_sdk_version" not in _episodes(_read(root))[0].env
    (root / "utg.js").unlink()
    assert _episodes(_read(root))[0].env["local_time_first"] == "2021-12-06_204449"


def test_a_folder_without_usable_events_is_one_empty_episode_row(tmp_path):
    root = tmp_path / "run"
    (root / "events").mkdir(parents=True)
    (root / "events" / "event_2024-01-01_120000.json").write_text("{}")
    records = list(droidbot.read(Source(fsspec.filesystem("file"), str(root), "in/run", _blob)))
    assert [(r.rule, r.location) for r in records] == [("bad_record", "events/event_2024-01-01_120000.json"),
                                                       ("empty_episode", "events")]
    assert records[1].reason == "in/run: no usable events"


def test_a_run_starts_at_each_kill_after_the_first_event(tmp_path):
    kill = {"event_type": "kill_app", "stop_intent": "am force-stop " + APP}
    eps = _episodes(_run_of(tmp_path, [kill, kill, {"event_type": "exit"}, kill]))
    assert [len(e.steps) for e in eps] == [1, 2, 1] and [e.key for e in eps] == ["", "run-1", "run-2"]
    assert [e.env["run"] for e in eps] == [{"index": k, "count": 3} for k in range(3)]


# (state tags, event tag, the state that is nearest): tags read field by field, whatever their digits
NEAREST = [
    (["2024-10-01_120000", "2024-10-05_120000"], "2024-10-05_120001", 1),  # two-digit months and days
    (["2024-10-10_120000", "2024-10-20_120000"], "2024-10-20_120001", 1),
    (["2024-10-20_050000", "2024-10-20_160000"], "2024-10-20_120000", 1),  # 4 h after 12:00, not 7 h before
    (["1999-01-01_000000", "2004-01-01_000000"], "2001-01-01_000000", 0),  # years of two centuries
    (["2024-01-01_000000", "2024-01-01_000059"], "2024-01-01_000031", 1),  # seconds
    (["2024-01-01_000000", "2024-01-01_005900"], "2024-01-01_003100", 1),  # minutes
]


@pytest.mark.parametrize("tags, event, nearest", NEAREST)
def test_each_event_sees_the_state_recorded_nearest_its_time(tags, event, nearest, tmp_path):
    root = tmp_path / "run"
    (root / "events").mkdir(parents=True)
    (root / "states").mkdir()
    for n, tag in enumerate(tags):
        state = _state(tag, "S", ".M", f"label {n}")
        if n == 1:
            del state["tag"]  # the file name's tag then
        (root / "states" / f"state_{tag}.json").write_text(json.dumps(state))
    (root / "events" / f"event_{event}.json").write_text(json.dumps(
        {"tag": event, "event": {"event_type": "exit"}, "start_state": "S"}))
    (ep,) = _episodes(_read(root))
    assert f'"label {nearest}"' in ep.steps[0].observation.text


def test_a_file_over_the_record_budget_is_a_row_naming_the_budget(tmp_path):
    root = tmp_path / "run"
    shutil.copytree(RUN, root)
    records = _read(root, Budgets(record_bytes=1600))
    rows = [(r.rule, r.location, r.reason.split(" has ")[0]) for r in records if isinstance(r, Rejected)]
    assert rows == [("budget_exceeded", f"states/state_2021-12-06_{t}.json",
                     f"states/state_2021-12-06_{t}.json: the document (one record)") for t in ("204452", "204456",
                                                                                              "204505")] + [
        ("budget_exceeded", "events/event_2021-12-06_204537.json",
         "events/event_2021-12-06_204537.json: the document (one record)")]
    assert len(_episodes(records)[0].steps) == 11


def test_units_want_event_files_in_an_events_folder():
    files = ["/a/events/notes.txt", "/b/event_1.json", "/c/events/event_2.txt", "/d/events/event_3.json"]
    assert droidbot.units(files, head=None) == ["/d"]
