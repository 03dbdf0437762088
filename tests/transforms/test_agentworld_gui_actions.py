"""GUI actions in the benchmark's forms. Android: the AndroidWorld rows' JSONAction, an element index where the
action names one, else a point in pixels of the screen it acted on; the generic form where that form cannot
hold the whole action. os: pyautogui calls with points in pixels where the screen's size is known."""

import json

import pytest

from transforms import agentworld

SCREEN = (1080, 2400)


@pytest.mark.parametrize("action, screen, expected", [
    ({"kind": "tap", "x": 0.5, "y": 0.25}, SCREEN, {"action_type": "click", "x": 540, "y": 600}),
    ({"kind": "tap", "x": 0.5, "y": 0.25, "element": '{"index": 7, "text": "OK"}'}, None,
     {"action_type": "click", "index": 7}),
    ({"kind": "long_press", "x": 0.1, "y": 0.1}, SCREEN, {"action_type": "long_press", "x": 108, "y": 240}),
    ({"kind": "type", "text": "October 28", "element": '{"index": 1}'}, SCREEN,
     {"action_type": "input_text", "index": 1, "text": "October 28"}),
    ({"kind": "scroll", "direction": "down"}, SCREEN, {"action_type": "scroll", "direction": "down"}),
    ({"kind": "back"}, None, {"action_type": "navigate_back"}),
    ({"kind": "home"}, None, {"action_type": "navigate_home"}),
    ({"kind": "key", "keys": ["ENTER"]}, None, {"action_type": "keyboard_enter"}),
    ({"kind": "open_app", "text": "Files"}, None, {"action_type": "open_app", "app_name": "Files"}),
    ({"kind": "message", "text": "3"}, None, {"action_type": "answer", "text": "3"}),
    ({"kind": "done", "text": "complete"}, None, {"action_type": "status", "goal_status": "complete"}),
], ids=["tap-pixels", "tap-index", "long-press", "type-index", "scroll", "back", "home", "enter", "open-app",
        "answer", "status"])
def test_the_jsonaction_form(action, screen, expected):
    assert agentworld.android_action(action, screen) == expected
    block = agentworld.action_block(action, "android", screen)
    assert json.loads(block.split("```json\n", 1)[1].rsplit("\n```", 1)[0]) == expected


@pytest.mark.parametrize("action, screen", [
    ({"kind": "tap", "x": 0.5, "y": 0.25}, None),  # a point, and no screen size to make it pixels
    ({"kind": "swipe", "x": 0.5, "y": 0.8, "x2": 0.5, "y2": 0.2}, SCREEN),  # JSONAction has no end point
    ({"kind": "command", "code": "am force-stop com.example"}, SCREEN),
    ({"kind": "open_app", "text": "x", "code": "am start x/.Main"}, SCREEN),  # the command would be lost
], ids=["point-without-screen", "swipe-with-end", "command", "open-app-with-command"])
def test_the_generic_form_where_jsonaction_cannot_hold_the_action(action, screen):
    assert agentworld.android_action(action, screen) is None
    assert agentworld.action_object("android", action, screen) == agentworld.generic_action(action)


def test_the_screen_an_action_acted_on_reaches_the_export():
    """A step's observation size (the screen before the action) turns its tap into pixels in the record; a
    step whose source gave no size keeps the generic form."""
    import pyarrow as pa

    from tests.transforms.export.lakes import episode_row, step_row
    from transforms.export.budget import TokenCounter
    from transforms.export.chat import TrajectoryRenderer
    from transforms.export.transitions import episode_index, trajectories

    rows = [step_row("e", 0, "android", "screen A", {"kind": "tap", "x": 0.25, "y": 0.5}),
            step_row("e", 1, "android", "screen B", {"kind": "tap", "x": 0.5, "y": 0.5}, final_text="screen C")]
    rows[0]["observation"].update(width=1080, height=2400)
    rows[1]["observation"].update(width=None, height=None)
    [trajectory] = trajectories(pa.Table.from_pylist(rows), episode_index(pa.Table.from_pylist([episode_row(
        "e", "android", None)])))
    assert [t.screen for t in trajectory.turns] == [(1080, 2400), None]
    first, second = TrajectoryRenderer(trajectory, TokenCounter()).action_blocks
    assert '"action_type": "click",\n  "x": 270,\n  "y": 1200' in first
    assert '"kind": "tap",\n  "x": 0.5' in second


@pytest.mark.parametrize("action, screen, code", [
    ({"kind": "click", "x": 0.5, "y": 0.25}, (1920, 1080), "pyautogui.click(x=960, y=270)"),
    ({"kind": "right_click", "x": 0.9553, "y": 0.5117}, (1366, 768), "pyautogui.click(x=1305, y=393, button='right')"),
    ({"kind": "drag", "x": 0.1, "y": 0.1, "x2": 0.2, "y2": 0.3}, (1000, 500),
     "pyautogui.moveTo(x=100, y=50)\npyautogui.dragTo(x=200, y=150)"),
    ({"kind": "click", "x": 0.5, "y": 0.25}, None, "pyautogui.click(x=0.5, y=0.25)"),  # no size: fractions
    ({"kind": "click", "x": 0.5, "y": 0.25, "code": "pyautogui.click(x=0.5, y=0.25)"}, (1920, 1080),
     "pyautogui.click(x=0.5, y=0.25)"),  # recorded code is shown as recorded
    ({"kind": "done", "text": "FAIL"}, (1920, 1080), "FAIL"),  # OSWorld's FAIL, read as a done that says so
    ({"kind": "done"}, (1920, 1080), "DONE"),
], ids=["click", "right-click", "drag", "no-screen", "recorded-code", "fail", "done"])
def test_os_points_in_pixels_of_the_screen(action, screen, code):
    """The os prompt's actions are `pyautogui.click(x: int, y: int)`: pixels where the screen's size is known."""
    assert agentworld.action_block(action, "os", screen) == f"**Action:**\n```python\n{code}\n```"
