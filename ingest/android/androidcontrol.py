"""AndroidControl TFRecords: one tf.train.Example per episode.

Features (the release's names): `episode_id` (int), `goal`, `screenshots` (PNG bytes, one per observation),
`screenshot_widths`, `screenshot_heights`, `accessibility_trees` (serialized android_env
`AndroidAccessibilityForest`, one per observation), `actions` (JSON strings), `step_instructions`.

There is one fewer action than screenshots: step t is (screenshot t, action t) and the last screenshot is the
last step's `final_observation`. Actions are in pixels of their step's screenshot and are normalized here;
their JSON is Android's JSONAction vocabulary (`ingest.android.json_action`: click -> tap, long_press, scroll
(direction), open_app (app_name), input_text -> type, navigate_back -> back, navigate_home -> home, wait), plus
the README's `type` (click at x, y, input the text, press enter: a `type` at that point with keys ENTER).
`raw` is the action's JSON string as stored. The low-level
`step_instructions` go to the episode's `env` (they describe steps, they are not the agent's reasoning).

The demonstrations carry no success flag and no end-of-task action: outcome unknown, not terminal.
A record that cannot be used (bad CRC, parse error, counts that disagree, unknown action) is quarantined
with its offset; the rest of the file is read.

Which TFRecord files are AndroidControl: see `ingest.android.aitw.claims` (feature names in the head, else a
file named `android_control*`).
"""

from __future__ import annotations

import posixpath
from typing import Iterator

import orjson

from ingest import tfrecord
from ingest.android.a11y import views_from_forest
from ingest.android.json_action import json_action
from ingest.android.aitw import MARKERS as AITW_MARKERS, OTHER_MARKERS, claims
from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01
from ingest.source import Source
from schemas.render import render_android_screen

FORMAT = "androidcontrol"
VERSION = "2"

def units(files: list[str], head) -> list[str]:
    """TFRecord files whose first record names AndroidControl features (`screenshot_widths`,
    `accessibility_trees`...), or a TFRecord with neither set of feature names named `android_control...`."""
    return [p for p in files if claims(p, head(p), OTHER_MARKERS, AITW_MARKERS,
                                       "android_control" in posixpath.basename(p))]


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def _observation(png: bytes, width: int, height: int, tree: bytes | None, source: Source) -> Observation:
    views = views_from_forest(tree) if tree else []
    packages = [v["package"] for v in views if v.get("package")]
    return Observation(
        kind="screen",
        text=render_android_screen(views, f"Package: {packages[0]}" if packages else None) if views else None,
        ui_tree=orjson.dumps(views).decode() if views else None,
        screenshot=source.put_blob(png, "image/png", source.uri) if png else None,
        width=width,
        height=height,
    )


def _action(raw: str, width: int, height: int) -> Action:
    """Raises ValueError for JSON that is not a known AndroidControl action."""
    a = orjson.loads(raw)
    if not isinstance(a, dict):
        raise ValueError(f"action is not a JSON object: {raw[:80]}")
    x = y = None
    if a.get("action_type") in ("click", "long_press", "type"):  # a point in pixels of that step's screen
        x, y = clamp01(a["x"] / width), clamp01(a["y"] / height)
    if a.get("action_type") == "type":  # the README's `type`: click the point, input the text, press enter
        return Action(kind="type", text=a.get("text"), x=x, y=y, keys=["ENTER"], raw=raw)
    return json_action(a, raw, x, y, source_name="AndroidControl")


def _episode(f: dict, source: Source) -> Episode:
    shots, widths, heights = f.get("screenshots") or [], f.get("screenshot_widths") or [], \
        f.get("screenshot_heights") or []
    trees, actions = f.get("accessibility_trees") or [], [_text(a) for a in f.get("actions") or []]
    if not f.get("episode_id"):
        raise ValueError("no episode_id feature")
    if len(actions) != len(shots) - 1 or len(widths) != len(shots) or len(heights) != len(shots):
        raise ValueError(f"{len(shots)} screenshots, {len(widths)}x{len(heights)} sizes and {len(actions)} actions "
                         "(expected one fewer action than screenshots)")
    if not actions:
        raise ValueError("no actions")
    parsed = []
    for i, raw in enumerate(actions):
        try:
            parsed.append(_action(raw, widths[i], heights[i]))
        except (ValueError, KeyError, orjson.JSONDecodeError) as e:
            raise ValueError(f"action {i}: {e}") from None
    observations = [_observation(shots[i], widths[i], heights[i], trees[i] if i < len(trees) else None, source)
                    for i in range(len(shots))]
    episode_id = f["episode_id"][0]
    return Episode(
        key=str(episode_id),
        domain="android",
        platform="android",
        steps=[Step(observation=observations[i], action=parsed[i]) for i in range(len(parsed))],
        task=_text(f["goal"][0]) if f.get("goal") else None,
        final_observation=observations[-1],
        env={"device": "android", "episode_id": episode_id,
             "step_instructions": [_text(s) for s in f.get("step_instructions") or []]},
        terminated=False,
    )


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    for offset, item in tfrecord.iter_records(source.read_bytes(), name):
        if isinstance(item, Rejected):
            yield item
            continue
        try:
            yield _episode(tfrecord.parse_example(item), source)
        except ValueError as e:
            yield Rejected("bad_record", f"{name}: record at offset {offset}: {e}", name, record_id=f"offset:{offset}")
