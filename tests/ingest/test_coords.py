"""The coordinate model on a run with three mismatched spaces: a computer-use model told of a 1024x768 display
(4:3), an executor clicking a 1440x900 logical screen (16:10), and 2880x1800 Retina screenshots. The model's
`[198, 740]` was executed at `(278, 867)`: the point must land on the same pixel of the screenshot from either
pair of numbers, and not where dividing the model's numbers by the screenshot's size puts it."""

import pytest

from ingest.coords import Space, convert, place

DECLARED = Space("declared_display", 1024, 768)
LOGICAL = Space("logical_screen", 1440, 900)
SHOT = Space("screenshot", 2880, 1800)


def test_the_models_point_is_executed_where_the_executor_clicked():
    x, y = convert(198, 740, DECLARED, LOGICAL)
    assert (round(x), round(y)) == (278, 867)


def test_the_models_and_the_executors_numbers_land_on_the_same_screenshot_pixel():
    mx, my, model = place(198, 740, DECLARED, SHOT)
    ex, ey, executed = place(278, 867, LOGICAL, SHOT)
    assert model["observation_pixel"] == [556.88, 1734.38]
    assert executed["observation_pixel"] == [556.0, 1734.0]
    # the executor rounded to whole logical pixels: within one logical pixel (two screenshot pixels)
    assert abs(mx - ex) * 2880 <= 2 and abs(my - ey) * 1800 <= 2
    assert model["space"] == "declared_display" and (model["x"], model["y"]) == (198, 740)
    assert (model["width"], model["height"]) == (1024, 768)


def test_dividing_by_the_screenshot_size_is_the_error_this_model_prevents():
    x, y, _ = place(198, 740, DECLARED, SHOT)
    wrong_x, wrong_y = 198 / 2880, 740 / 1800
    # wrong in both axes, and by a different factor in each (4:3 against 16:10, and the Retina scale)
    assert x / wrong_x == pytest.approx(2880 / 1024) and y / wrong_y == pytest.approx(1800 / 768)
    assert round(x * 2880) == 557 and round(wrong_x * 2880) == 198


def test_a_point_off_its_screen_is_kept_at_the_edge_and_said():
    x, y, point = place(1500, -3, LOGICAL, SHOT)
    assert (x, y) == (1.0, 0.0)
    assert point["outside_screen"] is True and (point["x"], point["y"]) == (1500, -3)
    assert "outside_screen" not in place(1440, 900, LOGICAL)[2]  # the far corner is still on the screen


def test_a_space_without_a_size_is_refused():
    with pytest.raises(ValueError, match="size is unknown"):
        place(10, 10, Space("declared_display", 0, 768))


def test_the_raw_entry_names_the_observation_space_and_where_the_point_came_from():
    _, _, point = place(198, 740, DECLARED, SHOT, note="computer.left_click")
    assert point["observation_space"] == {"name": "screenshot", "width": 2880, "height": 1800}
    assert point["from"] == "computer.left_click"
    # the observation is the point's own space: no pixel to convert, nothing to name twice
    assert "observation_space" not in place(198, 740, DECLARED, DECLARED)[2]
    assert "from" not in place(198, 740, DECLARED)[2]


@pytest.mark.parametrize(("x", "y", "outside"), [
    (720, 450, False), (0, 0, False), (0, 450, False), (720, 0, False), (1440, 900, False),
    (-1, 450, True), (1500, 450, True), (720, -1, True), (720, 950, True)])
def test_a_point_is_outside_its_screen_when_either_axis_is(x, y, outside):
    fx, fy, point = place(x, y, LOGICAL)
    assert point.get("outside_screen", False) is outside
    assert (fx, fy) == (min(max(x / 1440, 0.0), 1.0), min(max(y / 900, 0.0), 1.0))


@pytest.mark.parametrize("space", [Space("screen", 1440, 0), Space("screen", 0, 900), Space("screen", -1440, 900),
                                   Space("screen", 1440, -900), Space("screen", None, 900)])
def test_a_space_with_a_missing_zero_or_negative_side_is_refused(space):
    assert not space.usable()
    with pytest.raises(ValueError, match="size is unknown"):
        place(10, 10, space)
    with pytest.raises(ValueError, match="a space without a size"):
        convert(10, 10, LOGICAL, space)
    with pytest.raises(ValueError, match="a space without a size"):
        convert(10, 10, space, LOGICAL)


def test_a_space_of_fractions_one_unit_wide_is_a_space():
    # a source that gives points as fractions of the screen declares a 1 x 1 space
    x, y, point = place(0.25, 0.5, Space("normalized", 1, 1), SHOT)
    assert (x, y) == (0.25, 0.5) and point["observation_pixel"] == [720.0, 900.0]
