"""The Android tap-target rule's text fast path gives the findings of parsing every view hierarchy: taps on a
real DroidBot screen (the bundled run's first state), by view id, by bounds and by bare point, each checked
against the exact per-hierarchy check."""

import json

import orjson
import polars as pl
import pytest

from ingest.arrow import TableBuilder
from ingest.record import Action, Episode, Observation, Step
from tests.conftest import SAMPLES
from transforms.validate.consistency import _tap_reason, check_android_taps

STATE = json.loads((SAMPLES / "android" / "droidbot-run" / "states" / "state_2021-12-06_204452.json").read_text())
VIEWS = STATE["views"]  # 29 views; view 0 is the full screen [[0,0],[1080,2280]]
BUTTON = VIEWS[-1]


def _element(view, **changes):
    keep = ("temp_id", "class", "resource_id", "text", "content_description", "bounds", "view_str")
    return orjson.dumps({**{k: view.get(k) for k in keep}, **changes}).decode()


def _steps(taps, views=VIEWS, width=1080):
    """One android episode with one tap per (element JSON, x, y) on the same screen."""
    tree = orjson.dumps(views).decode()
    steps = [Step(Observation(kind="screen", text="screen", ui_tree=tree, width=width, height=2280),
                  Action(kind="tap", x=x, y=y, element=element)) for element, x, y in taps]
    builder = TableBuilder("run-t")
    builder.add_episode(Episode(key="", domain="android", platform="android", steps=steps),
                        source_format="test", source_uri="test/ep", source_sha256="0" * 64, ingestor_version="1")
    return pl.from_arrow(builder.tables()["steps"])


def _found(steps):
    return [(int(r["step_id"].split(":")[1]), r["reason"]) for r in check_android_taps(steps).iter_rows(named=True)]


def _exact(steps):
    """Parse every hierarchy: the reference the fast path must agree with."""
    out = []
    for i, row in enumerate(steps.iter_rows(named=True)):
        obs, act = row["observation"], row["action"]
        element = orjson.loads(act["element"]) if act["element"] else {}
        reason = _tap_reason(orjson.loads(obs["ui_tree"]), element, act["x"], act["y"], obs["width"], obs["height"])
        if reason:
            out.append((i, reason))
    return out


MISSING = "0" * 32
CASES = [
    ((_element(BUTTON), 0.5, 0.5), None),  # by view id, present
    ((_element(BUTTON, view_str=MISSING), 0.5, 0.5), f"target view {MISSING} is not in the view hierarchy"),
    ((_element(BUTTON, view_str=None), None, None), None),  # by bounds, present
    ((_element(BUTTON, view_str=None, bounds=[[0, 0], [9, 9]]), None, None), "target bounds [0, 0, 9, 9] match no node"),
    ((_element(BUTTON, view_str=None, bounds="[0,0][9,9]"), None, None), "target bounds [0, 0, 9, 9] match no node"),
    ((_element(BUTTON, view_str=None, bounds=BUTTON["bounds"][0] + BUTTON["bounds"][1]), None, None), None),
    ((None, 0.25, 0.75), None),  # bare point inside the full-screen root
]


@pytest.mark.parametrize("tap,reason", CASES)
def test_each_tap_kind_gives_the_exact_finding(tap, reason):
    steps = _steps([tap])
    assert _found(steps) == ([(0, reason)] if reason else []) == _exact(steps)


def test_a_view_id_written_inside_a_text_is_not_a_node():
    """The id appears in the hierarchy only as text a view shows (quotes escaped): still missing."""
    views = [dict(v) for v in VIEWS]
    views[3]["text"] = f'{{"view_str":"{MISSING}"}},"view_str":"{MISSING}"'
    steps = _steps([(_element(BUTTON, view_str=MISSING), 0.5, 0.5)], views)
    assert _found(steps) == [(0, f"target view {MISSING} is not in the view hierarchy")] == _exact(steps)


def test_points_outside_the_first_node_are_judged_on_every_node():
    small_first = [{**VIEWS[0], "bounds": [[0, 0], [10, 10]]}, *VIEWS[1:]]
    inside_later = _steps([(None, 0.5, 0.5)], small_first)  # the first node misses it, view 1 has it
    assert _found(inside_later) == [] == _exact(inside_later)
    off_screen = _steps([(None, 1.0, 0.5), (None, 0.1, 0.5)], width=5000)  # x = 5000 px on a 1080 px screen
    assert _found(off_screen) == [(0, "point (5000, 1140) is inside no node")] == _exact(off_screen)


def test_steps_sharing_a_hierarchy_each_get_their_finding():
    taps = [(_element(BUTTON, view_str=MISSING), 0.5, 0.5), (_element(BUTTON), 0.5, 0.5),
            (_element(BUTTON, view_str="f" * 32), 0.5, 0.5)]
    steps = _steps(taps)
    assert [i for i, _ in _found(steps)] == [0, 2] and _found(steps) == _exact(steps)
