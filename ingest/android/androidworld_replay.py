"""The replay form of an AndroidWorld agent episode, read by `androidworld_json` beside the harness's results:
one JSON object with `goal`, `observations` (each `{"ui_elements": [...]}`, an element `{text, content_desc,
class, bbox_pixels: [x_min, y_min, x_max, y_max]}`), `actions` (AndroidWorld JSONActions: `action_type`,
`index`, `text`, `app_name`, `goal_status`...) and `interaction_trace`, as gyaanantia/android_world_agents'
`src/utils.py:load_episode` loads it and `replay_episode.py` replays it: action i was taken on observation i
(its `index` names an element of that list), so `observations` holds one more screen than `actions`, the
last one the screen after the last action. The file keeps no screenshot and no verdict: the outcome is
unknown (a `status` action is the agent's claim, not the evaluator's).

A screen's pixel size is the extent of every element's bounds (the full-screen root view gives it); an
element-indexed action's point is the centre of that element's bounds in those pixels (`ingest.coords`).
Observations that do not pair one-to-one with the actions (more or fewer than `actions` + 1) are all kept:
steps without a screen observe nothing, screens after the final one stay in `env`, and `env` says so.
"""

from __future__ import annotations

from typing import Iterator

import orjson

from ingest.android.androidworld import element_views
from ingest.android.json_action import json_action
from ingest.coords import Space, place
from ingest.record import Action, Episode, Observation, Rejected, Step, episode_without_steps, warn
from ingest.source import SourceError
from schemas.render import render_android_screen

HEAD_KEYS = (b'"goal"', b'"observations"', b'"ui_elements"', b'"bbox_pixels"')
_KNOWN = frozenset(("goal", "observations", "actions", "interaction_trace"))


def claims(start: bytes) -> bool:
    """A JSON object whose first bytes hold `goal`, `observations` and an element list with `bbox_pixels`
    lists, and no `step_records` (the harness's result form)."""
    return start.startswith(b"{") and all(k in start for k in HEAD_KEYS) and b'"step_records"' not in start


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_uielement(e: dict) -> dict:
    """The replay form's element as the AndroidWorld UIElement fields `element_views` reads."""
    box = e.get("bbox_pixels")
    bbox = dict(zip(("x_min", "y_min", "x_max", "y_max"), box)) \
        if isinstance(box, list) and len(box) == 4 and all(_number(v) for v in box) else None
    return {"text": e.get("text"), "content_description": e.get("content_desc"), "class_name": e.get("class"),
            "bbox_pixels": bbox}


def _views(observation) -> list[dict]:
    elements = observation.get("ui_elements") if isinstance(observation, dict) else None
    return element_views([_as_uielement(e) for e in elements or [] if isinstance(e, dict)])


def _screen(all_views: list[list[dict]]) -> Space | None:
    corners = [v["bounds"][1] for views in all_views for v in views if v["bounds"]]
    return Space("screen", max(c[0] for c in corners), max(c[1] for c in corners)) if corners else None


def _observation(views: list[dict], screen: Space | None) -> Observation:
    return Observation(kind="screen" if views else "none", text=render_android_screen(views) if views else None,
                       ui_tree=orjson.dumps(views).decode() if views else None,
                       width=int(screen.width) if screen else None, height=int(screen.height) if screen else None)


def _action(act, views: list[dict], screen: Space | None) -> Action:
    """Raises ValueError for an action that is not a JSONAction."""
    if not isinstance(act, dict) or not isinstance(act.get("action_type"), str):
        raise ValueError("not an object with an `action_type`")
    return indexed_action(act, {"action": act}, views, screen)


def indexed_action(act: dict, raw: dict, views: list[dict], screen: Space | None) -> Action:
    """A JSONAction whose `index` names an element of `views`: the element, and the centre of its bounds placed on
    the screen (the source's numbers in `raw["point"]`). Raises ValueError for a type outside the vocabulary."""
    element, x, y = None, None, None
    index = act.get("index")
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(views):
        view = views[index]
        element = orjson.dumps({"index": index, **{k: view[k] for k in ("class", "text", "bounds")}}).decode()
        if view["bounds"] and screen is not None:
            (x1, y1), (x2, y2) = view["bounds"]
            x, y, raw["point"] = place((x1 + x2) / 2, (y1 + y2) / 2, screen,
                                       note=f"centre of element {index}'s bounds")
    return json_action(act, orjson.dumps(raw).decode(), x, y, element, "AndroidWorld")


def _env(doc: dict, observations: list, actions: list, screen: Space | None) -> dict:
    env: dict = {"device": "android", "form": "replay episode (goal, observations, actions)",
                 "screen_size": [screen.width, screen.height] if screen else None,
                 "screen_size_from": "element bounds extent" if screen else None,
                 "screenshots": "none in the file"}
    if doc.get("interaction_trace"):
        env["interaction_trace"] = doc["interaction_trace"]
    if len(observations) != len(actions) + 1:
        env["observations_vs_actions"] = {"observations": len(observations), "actions": len(actions)}
        warn(env, "step_count_mismatch", f"{len(observations)} observations for {len(actions)} actions (one more "
             "is the replay form's pairing): every one is kept")
    extra = {k: v for k, v in doc.items() if k not in _KNOWN}
    if extra:
        env["episode_fields"] = extra
        warn(env, "unknown_field", f"top-level fields this reader does not know, kept in env.episode_fields: "
             f"{', '.join(sorted(extra))}")
    return {k: v for k, v in env.items() if v is not None}


def read_replay(doc: dict, name: str) -> Iterator[Episode | Rejected]:
    observations, actions = doc.get("observations"), doc.get("actions")
    if not isinstance(observations, list) or not isinstance(actions, list):
        raise SourceError("bad_record", f"{name}: expected `observations` and `actions` lists")
    all_views = [_views(o) for o in observations]
    screen = _screen(all_views)
    env = _env(doc, observations, actions, screen)
    steps = []
    for i, act in enumerate(actions):
        views = all_views[i] if i < len(all_views) else []
        try:
            action = _action(act, views, screen)
        except ValueError as e:  # this action only; the others are read
            yield Rejected("bad_record", f"{name}: actions[{i}]: {e}", name, record_id=str(i))
            continue
        steps.append(Step(observation=_observation(views, screen), action=action))
    after = all_views[len(actions):]
    if len(after) > 1:  # screens past the final one: kept as their rendered text
        env["observations_after_final"] = [render_android_screen(v) if v else None for v in after[1:]]
    task = doc.get("goal") if isinstance(doc.get("goal"), str) else None
    if not steps:
        yield episode_without_steps(f"{name}: no readable action", name, "unknown", None, task=task)
        return
    yield Episode(key="", domain="android", platform="android", steps=steps, task=task, outcome="unknown",
                  reward=None, terminated=steps[-1].action.kind == "done",
                  final_observation=_observation(after[0], screen) if after else None, env=env)
