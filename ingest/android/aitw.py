"""Android in the Wild (AITW) TFRecords: one tf.train.Example per step, grouped into episodes.

Features used (the release's names): `episode_id`, `step_id`, `episode_length`, `goal_info`,
`results/action_type`, `results/yx_touch`, `results/yx_lift`, `results/type_action`, `image/encoded` (raw
uint8 pixels, height x width x channels), `image/height`, `image/width`, `image/channels`,
`image/ui_annotations_positions` (flattened normalized (y, x, height, width) boxes),
`image/ui_annotations_text`, `image/ui_annotations_ui_types`, `current_activity`, `device_type`,
`android_api_level`.

Action types (AITW's ids): 4 dual point (a tap when touch and lift are within 0.04 of each other, the
dataset's own rule, else a swipe from touch to lift), 3 type, 5 back, 6 home, 7 enter, 10 task complete,
11 task impossible (both `done`; they end the episode as success / failure). Points are already normalized
and stored as (y, x): they are swapped into x, y here.

Records are grouped by `episode_id` and ordered by `step_id`; an episode with fewer steps than its
`episode_length` is kept but marked truncated. Screenshots are encoded to PNG into the blob store.
A record with a bad CRC, that does not parse, or that lacks the step features is quarantined with its
offset, and the rest of the file is read.

Which TFRecord files are AITW: those whose first record shows AITW feature names; when the head shows
neither AITW nor AndroidControl names (a large first feature), a file not named like `android_control*`.
"""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass
from typing import Iterator

import orjson

from ingest import tfrecord
from ingest.png import encode_png
from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01
from ingest.source import Source
from schemas.render import render_android_screen

FORMAT = "aitw"
VERSION = "1"

TAP_MAX_DISTANCE = 0.04
MARKERS = (b"results/action_type", b"results/yx_touch", b"goal_info", b"image/ui_annotations", b"episode_length")
OTHER_MARKERS = (b"screenshot_widths", b"accessibility_trees", b"step_instructions", b"screenshot_heights")
_STATUS = {10: ("task_complete", "success"), 11: ("task_impossible", "failure")}


def claims(path: str, head: bytes, markers: tuple, other: tuple, named: bool) -> bool:
    """Shared by the two TFRecord Android formats: a TFRecord whose head shows `markers`, or neither set of
    names and a file name that matches (`named`)."""
    start = tfrecord.sniff(head)
    if start is None:
        return False
    if any(m in start for m in markers):
        return True
    return not any(m in start for m in other) and named


def units(files: list[str], head) -> list[str]:
    """TFRecord files whose first record names AITW features (`results/action_type`, `goal_info`...), or a
    TFRecord with neither set of feature names whose file name does not say `android_control`."""
    return [p for p in files if claims(p, head(p), MARKERS, OTHER_MARKERS,
                                       "android_control" not in posixpath.basename(p))]


def _one(features: dict, name: str, default=None):
    values = features.get(name)
    return values[0] if values else default


def _text(value) -> str | None:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


@dataclass
class _Row:
    step_id: int
    step: Step
    action_type: int


def _observation(f: dict, source: Source) -> Observation:
    height, width = _one(f, "image/height"), _one(f, "image/width")
    channels = _one(f, "image/channels", 3)
    image = _one(f, "image/encoded")
    shot = None
    if image:
        if image[:8] == b"\x89PNG\r\n\x1a\n":
            shot = source.put_blob(image, "image/png", source.uri)
        elif image[:3] == b"\xff\xd8\xff":
            shot = source.put_blob(image, "image/jpeg", source.uri)
        else:  # the release's raw pixels
            shot = source.put_blob(encode_png(image, width, height, channels), "image/png", source.uri)
    boxes = f.get("image/ui_annotations_positions") or []
    texts = [_text(t) for t in f.get("image/ui_annotations_text") or []]
    types = [_text(t) for t in f.get("image/ui_annotations_ui_types") or []]
    views = []  # the canonical Android view list (see schemas.render), one root per annotation
    for i in range(len(boxes) // 4):
        y, x, h, w = boxes[4 * i:4 * i + 4]
        text = texts[i] if i < len(texts) else None
        ui_type = types[i] if i < len(types) else ""
        bounds = [[round(x * width), round(y * height)], [round((x + w) * width), round((y + h) * height)]] \
            if width and height else None
        # icons have no OCR text: their detected type is what a reader can refer to
        desc = ui_type.removeprefix("ICON_").lower() if ui_type.startswith("ICON_") and not text else None
        views.append({"temp_id": i, "parent": -1, "children": [], "class": ui_type, "text": text or None,
                      "content_description": desc, "resource_id": None, "bounds": bounds, "visible": True,
                      "ui_type": ui_type, "yxhw": [y, x, h, w]})
    activity = _text(_one(f, "current_activity"))
    return Observation(
        kind="screen",
        text=render_android_screen(views, f"Activity: {activity}" if activity else None),
        ui_tree=orjson.dumps(views).decode(),
        screenshot=shot,
        width=width,
        height=height,
    )


def _action(f: dict) -> tuple[Action, int]:
    """Raises ValueError for an action type AITW does not define."""
    action_type = _one(f, "results/action_type")
    touch, lift = f.get("results/yx_touch") or [], f.get("results/yx_lift") or []
    typed = _text(_one(f, "results/type_action")) or None
    raw = orjson.dumps({"results/action_type": action_type, "results/yx_touch": touch,
                        "results/yx_lift": lift, "results/type_action": typed or ""}).decode()
    if action_type == 4:
        if len(touch) != 2 or len(lift) != 2:
            raise ValueError("dual point action without results/yx_touch and results/yx_lift")
        (y, x), (y2, x2) = touch, lift
        if math.dist((y, x), (y2, x2)) <= TAP_MAX_DISTANCE:
            return Action(kind="tap", x=clamp01(x), y=clamp01(y), raw=raw), action_type
        dx, dy = x2 - x, y2 - y
        direction = ("right" if dx > 0 else "left") if abs(dx) >= abs(dy) else ("down" if dy > 0 else "up")
        return Action(kind="swipe", x=clamp01(x), y=clamp01(y), x2=clamp01(x2), y2=clamp01(y2),
                      direction=direction, raw=raw), action_type
    if action_type == 3:
        return Action(kind="type", text=typed, raw=raw), action_type
    if action_type == 5:
        return Action(kind="back", raw=raw), action_type
    if action_type == 6:
        return Action(kind="home", raw=raw), action_type
    if action_type == 7:
        return Action(kind="key", keys=["ENTER"], raw=raw), action_type
    if action_type in _STATUS:
        return Action(kind="done", text=_STATUS[action_type][0], raw=raw), action_type
    raise ValueError(f"results/action_type {action_type} is not an AITW action")


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    groups: dict[str, list[_Row]] = {}
    meta: dict[str, dict] = {}
    for offset, item in tfrecord.iter_records(source.read_bytes(), name):
        if isinstance(item, Rejected):
            yield item
            continue
        where = f"{name}: record at offset {offset}"
        try:
            f = tfrecord.parse_example(item)
            episode, step_id = _text(_one(f, "episode_id")), _one(f, "step_id")
            if episode is None or step_id is None:
                raise ValueError("no episode_id / step_id feature")
            action, action_type = _action(f)
            step = Step(observation=_observation(f, source), action=action)
        except ValueError as e:
            yield Rejected("bad_record", f"{where}: {e}", name, record_id=f"offset:{offset}")
            continue
        groups.setdefault(episode, []).append(_Row(step_id, step, action_type))
        meta.setdefault(episode, {
            "goal": _text(_one(f, "goal_info")),
            "episode_length": _one(f, "episode_length"),
            "device_type": _text(_one(f, "device_type")),
            "android_api_level": _one(f, "android_api_level"),
        })
    for episode, rows in groups.items():
        rows.sort(key=lambda r: r.step_id)
        info = meta[episode]
        last = rows[-1].action_type
        complete = info["episode_length"] in (None, len(rows)) and \
            [r.step_id for r in rows] == list(range(len(rows)))
        env = {"device": "android", "episode_id": episode, "step_ids": [r.step_id for r in rows],
               **{k: v for k, v in info.items() if k != "goal" and v is not None}}
        if not complete:
            env["truncated"] = "steps missing from this file"
        ended = complete and last in _STATUS
        yield Episode(
            key=episode,
            domain="android",
            platform="android",
            steps=[r.step for r in rows],
            task=info["goal"],
            outcome=_STATUS[last][1] if ended else "unknown",
            reward=(1.0 if last == 10 else 0.0) if ended else None,
            terminated=ended,
            env=env,
        )
