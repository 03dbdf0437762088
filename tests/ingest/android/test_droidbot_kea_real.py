"""A real Kea output folder (../shared/samples/android/kea-llm-myexpenses: a Kea fork's LLM-guided run on the
MyExpenses app, from an MIT-licensed repository; read there, not bundled, as its 16 screenshots make 3.8 MB;
its PROVENANCE.md says what a person counted), with a golden read by hand against the raw events and states; and,
hand-made in the layout that run shows, the two things it taught: Kea's `all_states/state_<N>.json` carry the
number of events sent (`tag`: 0, 1, 3, ...), not a time, and after `RotateDeviceToLandscapeEvent` the screen is
landscape while every state still says `width` 1080, `height` 1920."""

import hashlib
import json
from pathlib import Path

from ingest.android import droidbot
from ingest.png import encode_png
from ingest.record import Episode
from tests import goldens
from tests.conftest import REPO
from tests.ingest import golden
from schemas.render import render_android_screen
from tests.parts import require_shared_sample

KEA_RUN = REPO.parent / "shared" / "samples" / "android" / "kea-llm-myexpenses" / "output"
GOLDEN = Path(__file__).with_name("golden") / "kea-llm-myexpenses.json"


def _fingerprint(ep: Episode) -> dict:
    """What a person checks against the raw files: each event's kind, where it touched (a fraction of the
    screen it acted on), the view's text, and which state file's screenshot and size the step shows."""
    shots: dict[str, str] = {}  # screen_1 and screen_2 are the same bytes: the lower number names them
    for p in sorted(KEA_RUN.glob("all_states/*.png"), key=lambda p: int(p.stem[7:])):
        shots.setdefault("sha256:" + hashlib.sha256(p.read_bytes()).hexdigest(), p.stem)

    def seen(obs):
        return None if obs is None else [shots.get(obs.screenshot), obs.width, obs.height]

    return {"steps": [{"kind": s.action.kind, "x": round(s.action.x, 4) if s.action.x is not None else None,
                       "y": round(s.action.y, 4) if s.action.y is not None else None,
                       "direction": s.action.direction, "code": s.action.code, "text": s.action.text,
                       "view_text": json.loads(s.action.element).get("text") if s.action.element else None,
                       "screen": seen(s.observation)} for s in ep.steps],
            "final": seen(ep.final_observation), "terminated": ep.terminated, "outcome": ep.outcome,
            "env": {k: ep.env.get(k) for k in ("app_package", "device_sdk_version", "local_time_first",
                                               "local_time_last", "screen_size")}}


def test_real_kea_run_matches_the_golden():
    """15 events in one run: kill, start, 4 onboarding actions, a rotation to landscape, 8 actions in
    landscape (taps normalized by 1920x1080), each step showing the state file recorded for it."""
    (ep,) = golden.read_records(droidbot, require_shared_sample(KEA_RUN))
    got = _fingerprint(ep)
    goldens.check_json(GOLDEN, got, indent=1)
    # the OK button [[1185,669],[1353,795]] of the landscape dialog, centre (1269, 732) on 1920x1080
    assert (got["steps"][10]["view_text"], got["steps"][10]["x"], got["steps"][10]["y"]) == ("OK", 0.6609, 0.6778)
    # the main screen (state 9193b626...) is recorded three times: each event sees its own recording
    assert [got["steps"][i]["screen"][0] for i in (7, 8, 12)] == ["screen_9", "screen_10", "screen_14"]


# --- hand-made in the real run's layout -------------------------------------------------------------------------
W, H = 1080, 1920


def _shot(width: int, height: int, shade: int) -> bytes:
    return encode_png(bytes([shade]) * (width * height * 3), width, height, 3)


def test_kea_states_numbered_in_order_and_a_rotation(tmp_path):
    """States named by number with integer tags (no time): each event gets the next recording of its screen,
    and after the rotation a tap's centre is a fraction of the landscape screen its screenshot shows."""
    root = tmp_path / "output"
    (root / "events").mkdir(parents=True)
    (root / "all_states").mkdir()
    button = {"temp_id": 1, "parent": -1, "class": "android.widget.Button", "text": "OK",
              "bounds": [[1185, 669], [1353, 795]]}
    states = [("MAIN", 0, (9, 16)), ("MAIN", 1, (9, 16)), ("MAIN", 2, (16, 9)), ("MAIN", 3, (16, 9))]
    for n, (state_str, tag, size) in enumerate(states, start=1):
        (root / "all_states" / f"state_{n}.json").write_text(json.dumps({
            "tag": tag, "state_str": state_str, "foreground_activity": "app/.Main", "width": W, "height": H,
            "views": [button]}))
        (root / "all_states" / f"screen_{n}.png").write_bytes(_shot(*size, shade=n))
    events = [{"event_type": "key", "name": "MENU"}, {"event_type": None},
              {"event_type": "touch", "view": button}]
    strs = ["KeyEvent(name=MENU)", "RotateDeviceToLandscapeEvent()", "TouchEvent(view=OK)"]
    for k, (event, text) in enumerate(zip(events, strs)):
        tag = f"2025-05-13_20570{k}"
        (root / "events" / f"event_{tag}.json").write_text(json.dumps({
            "tag": tag, "event": event, "start_state": "MAIN", "stop_state": "MAIN", "event_str": text}))
    (ep,) = golden.read_records(droidbot, root)
    blob = {n: "sha256:" + hashlib.sha256(_shot(*s, shade=n)).hexdigest() for n, (_, _, s) in enumerate(states, 1)}
    assert [s.observation.screenshot for s in ep.steps] == [blob[1], blob[2], blob[3]]
    assert ep.final_observation.screenshot == blob[4]
    tap = ep.steps[2]
    assert (tap.action.x, tap.action.y) == (1269 / 1920, 732 / 1080)
    assert (tap.observation.width, tap.observation.height) == (1920, 1080)
    assert (ep.steps[0].observation.width, ep.steps[0].observation.height) == (1080, 1920)


def test_a_screen_saved_again_with_another_screenshot_is_rendered_once(monkeypatch):
    """Kea saves a state file (and a screenshot) at every event: 15 of the run's states are used, 14 different
    (view tree, activity, screenshot) screens, but only 11 different view trees and activities, and a screen's
    text is made of those alone. Each is rendered once, and every step's text is what rendering it gives."""
    calls = []

    def counted(views, header=None):
        calls.append(header)
        return render_android_screen(views, header)

    monkeypatch.setattr(droidbot, "render_android_screen", counted)
    (ep,) = golden.read_records(droidbot, require_shared_sample(KEA_RUN))
    observations = [s.observation for s in ep.steps] + [ep.final_observation]
    screens = {(o.ui_tree, o.text.split("\n", 1)[0]) for o in observations}
    assert len(calls) == len(screens) == 11
    assert len({(o.ui_tree, o.text.split("\n", 1)[0], o.screenshot) for o in observations}) == 14
    for o in observations:
        activity = o.text.split("\n", 1)[0]
        assert o.text == render_android_screen(json.loads(o.ui_tree), activity)
