import json

from ingest.android import droidbot
from tests.conftest import SAMPLES
from tests.ingest import golden

GOLDEN = __import__("pathlib").Path(__file__).with_name("golden")

RUN = SAMPLES / "android" / "droidbot-run"


def test_droidbot_run_becomes_one_episode_with_events_as_steps(run, query):
    result = run("ingest-android", [RUN])
    assert result.status == "success" and result.episodes == 1 and result.steps == 12
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["kind"] for s in steps[:4]] == ["command", "open_app", "back", "tap"]
    assert steps[0]["action"]["code"] == "am force-stop com.tencent.qqmusic"
    assert steps[1]["action"]["text"] == "com.tencent.qqmusic"
    # the touch on the ImageView [0,171][1080,2148] lands at its centre, normalized by the 1080x2280 screen
    tap = steps[3]["action"]
    assert tap["x"] == 0.5 and abs(tap["y"] - (171 + 2148) / 2 / 2280) < 1e-9
    assert json.loads(tap["element"])["temp_id"] == 5
    assert json.loads(tap["raw"])["tag"] == "2021-12-06_204505"
    # observation before the tap is state 548af0... (state_2021-12-06_204505.json), rendered to text
    obs = steps[3]["observation"]
    assert obs["kind"] == "screen" and obs["width"] == 1080 and obs["height"] == 2280
    assert "AppStarterActivity" in obs["text"] and '"跳过"' in obs["text"]
    assert len(json.loads(obs["ui_tree"])) == 15
    # states whose snapshot was not copied stay empty rather than guessed
    assert steps[4]["observation"]["kind"] == "none"
    assert [s["is_first"] for s in steps].count(True) == 1 and steps[0]["is_first"]
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]  # exploration budget ran out: truncated
    assert all(s["timestamp"] is None for s in steps)  # tags are local time of unknown zone
    assert all(s["origin"] == "real" for s in steps)


def test_droidbot_screenshots_go_to_the_blob_store(run, query, lake):
    run("ingest-android", [RUN])
    first = query("SELECT observation.screenshot AS shot FROM steps WHERE step_index = 0")[0]["shot"]
    assert first.startswith("sha256:")
    blob = query(f"SELECT * FROM blobs WHERE sha256 = '{first[7:]}'")[0]
    assert blob["media_type"] == "image/jpeg" and blob["size_bytes"] == 97050
    assert (RUN / "states" / "screen_2021-12-06_204452.jpg").read_bytes() == (
        __import__("pathlib").Path(lake) / blob["uri"]).read_bytes()


def test_droidbot_episode_env_comes_from_utg(run, query):
    run("ingest-android", [RUN])
    ep = query("SELECT * FROM episodes")[0]
    env = json.loads(ep["env"])
    assert env["device_model_number"] == "Android SDK built for x86" and env["device_sdk_version"] == 30
    assert ep["domain"] == "android" and ep["platform"] == "android" and ep["source_format"] == "droidbot"
    assert ep["num_steps"] == 12 and ep["outcome"] == "unknown" and ep["started_at"] is None


def test_truncated_event_is_quarantined_and_the_rest_ingested(run, query, sample_copy):
    bad = sample_copy("android/droidbot-run")
    event = bad / "events" / "event_2021-12-06_204513.json"
    event.write_bytes(event.read_bytes()[:200])
    result = run("ingest-android", [bad])
    assert result.status == "success" and result.steps == 11 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "parse_error" and row["stage"] == "ingest"
    assert row["location"] == "events/event_2021-12-06_204513.json"
    assert "events/event_2021-12-06_204513.json: invalid JSON" in row["reason"]
    assert any("event_2021-12-06_204513.json" in m for m in result.messages)


def test_units_are_run_directories():
    files = [f"/x/run/events/event_{i}.json" for i in range(3)] + ["/x/run/utg.js", "/x/other.txt"]
    assert droidbot.units(files, head=None) == ["/x/run"]


# --- Kea's layout, several runs in one folder, events without a type -----------------------------------------
# Hand-made from Kea's writers (a real Kea folder: test_droidbot_kea_real.py): `InputEvent.to_dict` / EventLog.save2dir
# for events/event_<tag>.json, `Device.save_to_all_states_dir` for all_states/state_<N>.json (DeviceState.to_dict)
# and screen_<N>.png, N counting events from 1; each run starts with KillAppEvent then the app's start intent
# (input_policy.start), and rotations keep InputEvent's `event_type` None.

APP = "com.example.notes"
W, H = 1080, 2400


def _png(shade: int) -> bytes:
    from ingest.png import encode_png

    return encode_png(bytes([shade]) * (4 * 4 * 3), 4, 4, 3)


def _state(tag: str, state_str: str, activity: str, label: str) -> dict:
    view = {"temp_id": 0, "parent": -1, "children": [], "class": "android.widget.Button", "text": label,
            "resource_id": f"{APP}:id/button", "bounds": [[0, 200], [1080, 400]], "enabled": True,
            "visible": True, "clickable": True}
    return {"tag": tag, "state_str": state_str, "state_str_content_free": "c" + state_str,
            "foreground_activity": f"{APP}/{activity}", "activity_stack": [f"{APP}/{activity}"],
            "background_services": [], "width": W, "height": H, "views": [view]}


def _event(tag: str, event: dict, start: str, stop: str, event_str: str) -> dict:
    return {"tag": tag, "event": event, "start_state": start, "stop_state": stop, "event_str": event_str}


def kea_output(root):
    """Two runs five minutes apart; the main screen (state_str MAIN) is recorded in both, with another look."""
    kill = {"event_type": "kill_app", "log_lines": None, "stop_intent": f"am force-stop {APP}"}
    start = {"event_type": "intent", "log_lines": None, "intent": f"am start {APP}/.MainActivity"}
    touch = {"event_type": "touch", "log_lines": None, "x": None, "y": None,
             "view": _state("", "", "", "Add note")["views"][0]}
    rotate = {"event_type": None, "log_lines": None}
    runs = [  # (event tag, state tag, event, start state, stop state, event_str, label on screen)
        ("2024-05-01_100000", "2024-05-01_095959", kill, "HOME", "HOME", "KillAppEvent()", "Launcher"),
        ("2024-05-01_100003", "2024-05-01_100002", start, "HOME", "MAIN", f"IntentEvent(intent=am start {APP})",
         "Launcher"),
        ("2024-05-01_100007", "2024-05-01_100006", touch, "MAIN", "EDIT", "TouchEvent(state=MAIN, view=v1)",
         "Add note (run 1)"),
        ("2024-05-01_100011", "2024-05-01_100010", rotate, "EDIT", "EDIT", "RotateDeviceToLandscapeEvent()",
         "Editor"),
        ("2024-05-01_100500", "2024-05-01_100459", kill, "EDIT", "HOME", "KillAppEvent()", "Editor"),
        ("2024-05-01_100503", "2024-05-01_100502", start, "HOME", "MAIN", f"IntentEvent(intent=am start {APP})",
         "Launcher"),
        ("2024-05-01_100508", "2024-05-01_100507", touch, "MAIN", "EDIT", "TouchEvent(state=MAIN, view=v1)",
         "Add note (run 2)"),
    ]
    (root / "events").mkdir(parents=True)
    (root / "all_states").mkdir()
    for n, (tag, state_tag, event, start_state, stop, event_str, label) in enumerate(runs, start=1):
        (root / "events" / f"event_{tag}.json").write_text(json.dumps(_event(tag, event, start_state, stop,
                                                                            event_str), indent=2))
        activity = {"HOME": ".Launcher", "MAIN": ".MainActivity", "EDIT": ".EditActivity"}[start_state]
        (root / "all_states" / f"state_{n}.json").write_text(json.dumps(_state(state_tag, start_state, activity,
                                                                              label), indent=2))
        (root / "all_states" / f"screen_{n}.png").write_bytes(_png(n))
    return root


def test_kea_output_with_two_runs_is_two_episodes_matched_to_their_own_screens(run, query, tmp_path):
    result = run("ingest-android", [kea_output(tmp_path / "kea-out")])
    assert result.status == "success" and result.episodes == 2 and result.steps == 7 and result.quarantined == 0
    golden.check_counted(GOLDEN / "kea-two-runs.json", query)
    eps = query("SELECT * FROM episodes ORDER BY num_steps DESC")
    assert [e["num_steps"] for e in eps] == [4, 3]
    first, second = (json.loads(e["env"]) for e in eps)
    assert (first["local_time_first"], first["local_time_last"]) == ("2024-05-01_100000", "2024-05-01_100011")
    assert (second["local_time_first"], second["run"]) == ("2024-05-01_100500", {"index": 1, "count": 2})
    steps = {e["num_steps"]: query(f"SELECT * FROM steps WHERE episode_id = '{e['episode_id']}' "
                                   "ORDER BY step_index") for e in eps}
    run1, run2 = steps[4], steps[3]
    assert [s["action"]["kind"] for s in run1] == ["command", "open_app", "tap", "command"]
    assert [s["action"]["kind"] for s in run2] == ["command", "open_app", "tap"]
    # the tap on the MAIN screen sees that run's screen (state_3 / state_7), not the last one recorded as MAIN
    assert '"Add note (run 1)"' in run1[2]["observation"]["text"]
    assert '"Add note (run 2)"' in run2[2]["observation"]["text"]
    blob = lambda n: "sha256:" + __import__("hashlib").sha256(_png(n)).hexdigest()  # noqa: E731
    assert run1[2]["observation"]["screenshot"] == blob(3) and run2[2]["observation"]["screenshot"] == blob(7)
    # the tap has its coordinates: the centre of the button, on Kea's screen size
    tap = run1[2]["action"]
    assert tap["x"] == 0.5 and tap["y"] == 300 / H
    assert run1[2]["observation"]["width"] == W
    # the rotation's event_type is null: its kind is read from event_str
    rotation = run1[3]["action"]
    assert rotation["code"] == "rotate_device_right" and rotation["text"] == "landscape"
    assert json.loads(rotation["raw"])["event_str"] == "RotateDeviceToLandscapeEvent()"
    assert "ingest_warnings" not in first


def test_an_event_kind_no_reader_knows_is_kept_with_a_warning(run, query, tmp_path):
    root = kea_output(tmp_path / "kea-out")
    event = root / "events" / "event_2024-05-01_100011.json"
    record = json.loads(event.read_text())
    record["event"], record["event_str"] = {"event_type": None}, "ShakeDeviceEvent(strength=3)"
    event.write_text(json.dumps(record))
    result = run("ingest-android", [root], stages=["ingest", "validate"])
    assert result.steps == 7 and result.quarantined == 0
    step = query("SELECT action FROM steps WHERE action.code LIKE 'Shake%'")[0]["action"]
    assert step["kind"] == "command" and step["code"] == "ShakeDeviceEvent(strength=3)"
    found = query("SELECT rule, severity, example_reason FROM validation_findings")
    assert [(f["rule"], f["severity"]) for f in found] == [("ingest.kept_unknown", "warning")]
    assert "ShakeDeviceEvent" in found[0]["example_reason"]
