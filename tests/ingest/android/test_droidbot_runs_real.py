"""A real DroidBot output folder holding seven runs (../shared/samples/android/droidbot-droidxp-diskusage: DroidBot
of June 2020 exploring DiskUsage on an Android 4.4 emulator, committed by the droidxp/benchmark project; no
license, so read there and never copied here; its PROVENANCE.md says what a person counted). It taught two
things the hand-made inputs had not: that DroidBot began each run with a HOME key then the app's start intent
(no `kill_app` yet), seven runs over two days in one `events/` folder, and that its states then said no
`width` / `height` (the root view's bounds are the screen)."""

import hashlib
import json
from pathlib import Path

from ingest.android import droidbot
from ingest.record import Episode
from tests import goldens
from tests.conftest import REPO
from tests.ingest import golden
from tests.parts import require_shared_sample

RUNS = REPO.parent / "shared" / "samples" / "android" / "droidbot-droidxp-diskusage"
GOLDEN = Path(__file__).with_name("golden") / "droidbot-droidxp-diskusage.json"


def _fingerprint(episodes: list[Episode]) -> list[dict]:
    """What a person checks against the raw files, per run: each event's tag and kind, where it touched (a
    fraction of the screen), the view's text, and which saved state's screenshot the step shows."""
    shots: dict[str, str] = {}  # identical screenshots are named by the earliest state file
    for p in sorted(RUNS.glob("states/screen_*.jpg")):
        shots.setdefault("sha256:" + hashlib.sha256(p.read_bytes()).hexdigest(), p.stem[7:])

    def step(s) -> list:
        a = s.action
        view = json.loads(a.element).get("text") if a.element else None
        point = [round(a.x, 4), round(a.y, 4)] if a.x is not None else None
        return [json.loads(a.raw)["tag"][11:], a.kind, point, view, shots.get(s.observation.screenshot),
                [s.observation.width, s.observation.height] if s.observation.width else None]

    return [{"key": ep.key, "run": ep.env.get("run"), "first": ep.env["local_time_first"],
             "last": ep.env["local_time_last"], "steps": [step(s) for s in ep.steps],
             "final": shots.get(ep.final_observation.screenshot) if ep.final_observation else None}
            for ep in episodes]


def test_seven_runs_in_one_events_folder_are_seven_episodes():
    """74 events: each run opens with HOME then `am start` of DiskUsage; the runs begin at 22:51:47 (June 2),
    12:08:38, 13:01:48, 14:25:38, 14:27:24, 15:30:16 and 19:14:40 (June 3) and hold 13, 4, 14, 13, 5, 13 and 12
    events. Taps are fractions of the 480x800 screen: "Browser" [[384,706],[480,802]] is at (0.9, 0.9425)."""
    records = golden.read_records(droidbot, require_shared_sample(RUNS))
    episodes = [r for r in records if isinstance(r, Episode)]
    assert len(episodes) == len(records) == 7
    got = _fingerprint(episodes)
    goldens.check_json(GOLDEN, got, indent=1)
    assert [len(r["steps"]) for r in got] == [13, 4, 14, 13, 5, 13, 12]
    assert [r["first"] for r in got] == ["2020-06-02_225147", "2020-06-03_120838", "2020-06-03_130148",
                                         "2020-06-03_142538", "2020-06-03_142724", "2020-06-03_153016",
                                         "2020-06-03_191440"]
    assert all([s[1] for s in r["steps"][:2]] == ["home", "open_app"] for r in got)
    assert got[0]["steps"][3][1:4] == ["tap", [0.9, 0.9425], "Browser"]
    # the launcher screen e18ca8a0... is saved once per run: each run's start shows its own recording
    assert [r["steps"][2][4] for r in got] == ["2020-06-02_225150", "2020-06-03_120841", "2020-06-03_130151",
                                              "2020-06-03_142541", "2020-06-03_142727", "2020-06-03_153019",
                                              "2020-06-03_191444"]


def test_a_home_key_starts_a_run_only_when_the_start_intent_follows(tmp_path):
    """Hand-made in the 2020 layout: a HOME pressed mid-run (then a touch) stays in its run; HOME then
    `am start` begins the next one, as does `kill_app`."""
    (tmp_path / "events").mkdir()
    start = {"event_type": "intent", "intent": "am start app/.Main"}
    events = [{"event_type": "key", "name": "HOME"}, start, {"event_type": "key", "name": "HOME"},
              {"event_type": "touch", "x": 10, "y": 10}, {"event_type": "key", "name": "HOME"}, start,
              {"event_type": "kill_app", "stop_intent": "am force-stop app"}, start]
    for k, event in enumerate(events):
        tag = f"2020-06-03_1200{k:02d}"
        (tmp_path / "events" / f"event_{tag}.json").write_text(json.dumps(
            {"tag": tag, "event": event, "start_state": "S", "stop_state": "S", "event_str": ""}))
    episodes = golden.read_records(droidbot, tmp_path)
    assert [[s.action.kind for s in ep.steps] for ep in episodes] == [
        ["home", "open_app", "home", "tap"], ["home", "open_app"], ["command", "open_app"]]
    assert [ep.key for ep in episodes] == ["", "run-1", "run-2"]
