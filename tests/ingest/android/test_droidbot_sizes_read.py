"""The DroidBot reader's screen sizes, runs and Kea's numbered states, called directly: the size a state gets
(its own, turned after a rotation, or its root view's when it says none), where one output folder splits into
runs, and which recorded state each run ends on."""

import json

import fsspec
import pytest

from ingest.android import droidbot
from ingest.record import Episode
from ingest.source import Source
from tests.ingest.android.test_droidbot import APP, _event, _state

ROOT = {"parent": -1, "bounds": [[0, 0], [1080, 1920]]}


@pytest.mark.parametrize("state, size", [
    ({"views": [{"parent": 0, "bounds": [[0, 0], [5, 5]]}, "x", ROOT]}, (1080, 1920)),
    ({"views": [{"parent": -1, "bounds": [[0, 0], [1080.0, 1920.0]]}]}, (1080, 1920)),
    ({"views": [{"parent": -1, "bounds": [[0, 0], [1, 1]]}]}, (1, 1)),
    ({"views": [{"parent": 1, "bounds": [[0, 0], [5, 5]]}]}, None),
    ({"views": [{"parent": -1, "bounds": [[1, 0], [5, 5]]}]}, None),
    ({"views": [{"parent": -1, "bounds": [[0, 1], [5, 5]]}]}, None),
    ({"views": [{"parent": -1, "bounds": [[0, 0], [0, 5]]}]}, None),
    ({"views": [{"parent": -1, "bounds": [[0, 0], [5, 0]]}]}, None),
    ({"views": [{"parent": -1, "bounds": "x"}]}, None),
    ({"views": None}, None), ({}, None),
    ({"height": 1920, "views": [ROOT]}, None), ({"width": 1080, "views": [ROOT]}, None),
    ({"width": 1, "height": 1}, (1, 1)), ({"width": 0, "height": 5}, None), ({"width": 5, "height": 0}, None),
    ({"width": 1080, "height": 1920, "views": [{"bounds": [[0, 0], [1920, 1080]]}, {"bounds": None}, "x"]},
     (1920, 1080)),
    ({"width": 1080, "height": 1920, "views": [{"bounds": [[0, 0], [1080, 1920]]}]}, (1080, 1920)),
    ({"width": 1920, "height": 1080, "views": [{"bounds": [[0, 0], [1000, 1080]]}]}, (1920, 1080)),
    ({"width": 1080, "height": 1920, "views": [{"bounds": [[0, 0], [2000, 1080]]}]}, (1080, 1920)),
    ({"width": 1080, "height": 1920, "views": [{"bounds": [[0, 0], [10, 1081]]}]}, (1080, 1920)),
])
def test_the_screen_size_of_a_state(state, size):
    assert droidbot._screen_size(state, None) == size


@pytest.mark.parametrize("bounds, ok", [([[0, 0], [1, 1]], True), ([[0, 0.5], [1, 1]], True), ([[0, 0]], False),
                                        ([[0, 0], [1, 1], [2, 2]], False), ([[0], [1]], False),
                                        ([[0, 0, 0], [1, 1]], False), ([[0, "a"], [1, 1]], False), ("ab", False),
                                        # each part of each point is checked on its own
                                        ([["a", 0], [1, 1]], False), ([[0, 0], ["a", 1]], False),
                                        ([[0, 0], [1, "a"]], False), ([[0, 0], [1, 1, 1]], False),
                                        ([[0, 0], [1]], False), ([[0, 0], "ab"], False), (["ab", [1, 1]], False),
                                        ([[0, 0], None], False), ([None, [1, 1]], False), ([[0, 0], (1, 1)], False),
                                        ([(0, 0), [1, 1]], False), ([[0, 0], [1.5, 2]], True),
                                        ([[0, 0], [1, 2.5]], True), ([[0.5, 0], [1, 1]], True), (None, False)])
def test_bounds_are_two_points(bounds, ok):
    assert droidbot._is_bounds(bounds) is ok


def test_kea_falls_back_to_the_last_numbered_state():
    states = [{"_time": None, "_order": n} for n in (1, 2, 3)]
    assert droidbot._acted_on(states, None, 5) is states[2]
    assert droidbot._acted_on(states, None, 1) is states[1]


def _write(root, events, states):
    (root / "events").mkdir(parents=True)
    (root / "all_states").mkdir()
    for tag, event, start, stop, event_str in events:
        (root / "events" / f"event_{tag}.json").write_text(json.dumps(_event(tag, event, start, stop, event_str)))
    for n, state_str in enumerate(states, start=1):
        (root / "all_states" / f"state_{n}.json").write_text(json.dumps(_state("", state_str, ".A", f"label {n}")))
    return root


def _read(root) -> list[Episode]:
    records = list(droidbot.read(Source(fsspec.filesystem("file"), str(root), "in/run", lambda *a: "sha256:0")))
    return [r for r in records if isinstance(r, Episode)]


TOUCH = {"event_type": "touch", "x": 10, "y": 10}
KILL = {"event_type": "kill_app", "stop_intent": f"am force-stop {APP}"}
HOME = {"event_type": "key", "name": "HOME"}
START = {"event_type": "intent", "intent": f"am start {APP}/.Main"}


def test_each_kea_run_ends_on_the_state_recorded_after_its_own_last_event(tmp_path):
    events = [("2024-05-01_100000", TOUCH, "A", "B", "TouchEvent()"),
              ("2024-05-01_100001", TOUCH, "B", "C", "TouchEvent()"),
              ("2024-05-01_100002", KILL, "C", "A", "KillAppEvent()"),
              ("2024-05-01_100003", TOUCH, "A", "C", "TouchEvent()")]
    first, second = _read(_write(tmp_path, events, ["A", "B", "C", "C", "A", "C"]))
    assert "label 3" in first.final_observation.text  # the C recorded after the run's last event (state 2)
    assert "label 6" in second.final_observation.text
    assert ["label 1" in s.observation.text for s in first.steps] == [True, False]


def test_a_home_key_then_the_start_intent_at_the_end_starts_a_run(tmp_path):
    events = [("2024-05-01_100000", TOUCH, "A", "A", "TouchEvent()"),
              ("2024-05-01_100001", HOME, "A", "A", "KeyEvent(name=HOME)"),
              ("2024-05-01_100002", START, "A", "A", "IntentEvent()")]
    eps = _read(_write(tmp_path, events, ["A"]))
    assert [[s.action.kind for s in e.steps] for e in eps] == [["tap"], ["home", "open_app"]]
