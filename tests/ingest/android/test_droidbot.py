import json

from ingest.android import droidbot
from tests.conftest import SAMPLES

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
