"""The JSONAction vocabulary AndroidWorld and AndroidControl share, mapped once (`ingest.android.json_action`)."""

import pytest

from ingest.android.json_action import json_action


@pytest.mark.parametrize("act, kind, fields", [
    ({"action_type": "click"}, "tap", {"x": 0.5, "y": 0.25}),
    ({"action_type": "double_tap"}, "double_click", {"x": 0.5}),
    ({"action_type": "long_press"}, "long_press", {"y": 0.25}),
    ({"action_type": "scroll", "direction": "down"}, "scroll", {"direction": "down"}),
    ({"action_type": "input_text", "text": "wifi"}, "type", {"text": "wifi"}),
    ({"action_type": "keyboard_enter"}, "key", {"keys": ["ENTER"]}),
    ({"action_type": "open_app", "app_name": "Settings"}, "open_app", {"text": "Settings"}),
    ({"action_type": "answer", "text": "42"}, "message", {"text": "42"}),
    ({"action_type": "status", "goal_status": "complete"}, "done", {"text": "complete"}),
    ({"action_type": "navigate_back"}, "back", {}),
    ({"action_type": "navigate_home"}, "home", {}),
    ({"action_type": "wait"}, "wait", {}),
])
def test_vocabulary(act, kind, fields):
    action = json_action(act, "RAW", 0.5, 0.25)
    assert action.kind == kind and action.raw == "RAW"
    for name, value in fields.items():
        assert getattr(action, name) == value


def test_unknown_action_names_the_source():
    with pytest.raises(ValueError, match="action_type 'fly' is not an AndroidControl action"):
        json_action({"action_type": "fly"}, "{}", source_name="AndroidControl")


@pytest.mark.parametrize("kind, want", [("click", "tap"), ("double_tap", "double_click"), ("long_press", "long_press"),
                                        ("scroll", "scroll"), ("swipe", "swipe"), ("input_text", "type")])
def test_an_action_on_the_screen_keeps_its_point_and_element(kind, want):
    act = {"action_type": kind, "direction": "up", "text": "hi"}
    action = json_action(act, "RAW", 0.125, 0.75, '{"index": 3}')
    assert (action.kind, action.x, action.y, action.element) == (want, 0.125, 0.75, '{"index": 3}')
    assert action.direction == ("up" if kind in ("scroll", "swipe") else None)
    assert action.text == ("hi" if kind == "input_text" else None)


def test_an_unknown_action_without_a_source_name_names_the_vocabulary():
    with pytest.raises(ValueError) as e:
        json_action({"action_type": None}, "{}")
    assert str(e.value) == "action_type None is not an Android JSON action"
