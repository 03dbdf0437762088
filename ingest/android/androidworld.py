"""AndroidWorld result files (`<task>.pkl.gz`, one per task, written by its checkpointer): a gzipped pickle
of a list of episode dicts (an older format pickles `(episodes, completed_tasks)`).

Loaded only through `ingest.safe_pickle`: the agent's classes become dicts of their state, numpy screenshots
plain arrays; a class this reader does not list loads the same way and is named in `env.ingest_warnings`;
code a pickle asks to run refuses the file with `forbidden_pickle_class`.

Episode keys used: `goal`, `task_template`, `instance_id`, `is_successful` (a score, NaN when the run
failed), `episode_data` (dict of per-step lists; NaN when the run raised), `agent_name`, `screen_config`,
`seed`, `run_time`, `finish_dtime` (local time of an unknown zone: kept in `env` as text, never as a UTC
time), `exception_info`. Step keys (M3A / T3A agents): `raw_screenshot` or `before_screenshot` (HxWxC
uint8 arrays -> PNG blobs), `before_ui_elements` or `before_element_list` (UIElement lists -> the canonical
view list, ids = the element indexes actions use), `action_output_json` (JSONAction), `action_output`
(the agent's own text, kept as `raw`), `action_reason` (-> `reasoning`), `summary` (-> `env.summaries`).

JSONAction -> action: click (x, y, or the centre of element `index`) -> tap, double_tap -> double_click,
long_press, scroll, swipe, input_text -> type, navigate_home -> home, navigate_back -> back,
keyboard_enter -> key ENTER, open_app, wait, answer -> message, status -> done (goal_status).
Agents other than M3A / T3A (e.g. one driving the device through MCP) record no `action_output_json`, only
their own text per step (`agent_output`, else `action_output`, `response`, `output`): each such step is a
`message` step with that text, `raw` holding the step's texts and numbers (a warning in `env.ingest_warnings`
says so). A step with neither is quarantined; an episode left with no step keeps its outcome and reward in an
`empty_episode` row (`ingest.record.episode_without_steps`). An episode that raised (no step data) is quarantined with its exception.
Outcome: success when `is_successful` > 0.5, failure otherwise, unknown when NaN; terminal when the agent
ended it with a status action.
"""

from __future__ import annotations

import math
import posixpath
import zlib
from typing import Iterator

import orjson

from ingest.android.json_action import json_action
from ingest.format_info import FormatInfo
from ingest.png import encode_png
from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01, episode_without_steps, warn
from ingest.safe_pickle import load_gzip, records
from ingest.source import Source
from schemas.render import render_android_screen

FORMAT = "androidworld"
VERSION = "1"
INFO = FormatInfo(
    group="android", rank=230, domains=('android',), platform="android",
    summary="AndroidWorld `*.pkl.gz` results",
)

ALLOWED = records(
    "android_world.env.representation_utils.UIElement",
    "android_world.env.representation_utils.BoundingBox",
    "android_world.env.json_action.JSONAction",
)


def units(files: list[str], head) -> list[str]:
    """Gzipped pickles, except those of BrowserGym / AgentLab experiment folders (their step files name their
    own classes; the folder holds summary_info.json or exp_args.pkl)."""
    experiments = {posixpath.dirname(p) for p in files
                   if posixpath.basename(p) in ("summary_info.json", "exp_args.pkl")}
    return [p for p in files if p.endswith(".pkl.gz") and head(p).startswith(b"\x1f\x8b")
            and posixpath.dirname(p) not in experiments
            and not any(name in _gunzip_head(head(p)) for name in (b"browsergym", b"agentlab"))]


def _gunzip_head(data: bytes) -> bytes:
    """The start of a gzip stream's content, from its first bytes only (no full read, bounded output)."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, 1 << 16)
    except zlib.error:
        return b""


def _nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def element_views(elements) -> list[dict]:
    """AndroidWorld UIElement records (dicts of their fields) as the canonical view list; a view's `temp_id`
    is the element's index, the one the agent's actions name."""
    views = []
    for i, e in enumerate(elements or []):
        box = e.get("bbox_pixels") or {}
        bounds = [[int(box["x_min"]), int(box["y_min"])], [int(box["x_max"]), int(box["y_max"])]] \
            if box.get("x_min") is not None else None
        views.append({
            "temp_id": i, "parent": -1, "children": [], "class": e.get("class_name"), "text": e.get("text"),
            "content_description": e.get("content_description"), "resource_id": e.get("resource_id") or
            e.get("resource_name"), "package": e.get("package_name"), "bounds": bounds,
            "visible": e.get("is_visible") is not False, "enabled": e.get("is_enabled") is not False,
            **{flag: bool(e.get(f"is_{flag}")) for flag in ("clickable", "long_clickable", "editable",
                                                           "scrollable", "checkable", "checked", "selected",
                                                           "focused")},
        })
    return views


def _observation(shot, elements, size, source: Source) -> Observation:
    ref, width, height = None, size[0], size[1]
    if shot is not None and getattr(shot, "ndim", 0) == 3 and str(shot.dtype) == "uint8":
        height, width, channels = shot.shape
        ref = source.put_blob(encode_png(shot.tobytes(), width, height, channels), "image/png", source.uri)
    views = element_views(elements)
    return Observation(kind="screen" if views or ref else "none", text=render_android_screen(views) if views else None,
                       ui_tree=orjson.dumps(views).decode() if views else None, screenshot=ref,
                       width=width, height=height)


def _action(act, views: list[dict], size, raw: str | None) -> Action:
    """Raises ValueError when the step has no usable action."""
    if not isinstance(act, dict) or not act.get("action_type"):
        raise ValueError("no action_output_json")
    element = None
    index = act.get("index")
    if isinstance(index, int) and 0 <= index < len(views):
        element = orjson.dumps({"index": index, **{k: views[index][k] for k in ("class", "text", "bounds")}}).decode()
    x = y = None
    if act.get("x") is not None and act.get("y") is not None and size[0] and size[1]:
        x, y = clamp01(act["x"] / size[0]), clamp01(act["y"] / size[1])
    elif element and views[index]["bounds"] and size[0] and size[1]:
        (x1, y1), (x2, y2) = views[index]["bounds"]
        x, y = clamp01((x1 + x2) / 2 / size[0]), clamp01((y1 + y2) / 2 / size[1])
    return json_action(act, raw or orjson.dumps(dict(act)).decode(), x, y, element, "AndroidWorld")


def _at(data: dict, key: str, i: int):
    values = data.get(key)
    return values[i] if isinstance(values, list) and i < len(values) else None


# where agents other than M3A / T3A put what they said at a step (no action_output_json): the first text found
_FREE_TEXT = ("agent_output", "action_output", "response", "output")


def _free_text_action(data: dict, t: int) -> Action | None:
    """A message step from what an agent without JSONActions recorded at step t (an MCP-driven agent's free
    text in `agent_output`...); `raw` keeps every text and number of the step. None when it said nothing."""
    text = next((v for key in _FREE_TEXT if isinstance(v := _at(data, key, t), str) and v.strip()), None)
    if text is None:
        return None
    raw = {key: value for key in data if isinstance(value := _at(data, key, t), (str, int, float, bool))
           and not _nan(value)}
    return Action(kind="message", text=text, raw=orjson.dumps(raw).decode())


def _score(ep: dict) -> float | None:
    score = ep.get("is_successful")
    try:
        score = None if score is None else float(score)
    except (TypeError, ValueError):
        return None
    return None if score is None or math.isnan(score) else score


def _outcome(score: float | None) -> str:
    return "unknown" if score is None else "success" if score > 0.5 else "failure"


def _steps(data: dict, size, label: str, name: str, i: int, source: Source):
    """(steps, summaries, ended by a status action, said in free text, rows for unusable steps)."""
    n = max((len(v) for v in data.values() if isinstance(v, list)), default=0)
    steps, summaries, rows, status_end, free_text = [], [], [], False, False
    for t in range(n):
        shot = next((v for key in ("raw_screenshot", "before_screenshot", "screenshot")
                     if (v := _at(data, key, t)) is not None), None)
        elements = _at(data, "before_ui_elements", t) or _at(data, "before_element_list", t)
        obs = _observation(shot, elements, size, source)
        views = orjson.loads(obs.ui_tree) if obs.ui_tree else []
        output = _at(data, "action_output", t)
        act = _at(data, "action_output_json", t)
        try:
            action = _action(act, views, (obs.width, obs.height), output if isinstance(output, str) else None)
        except ValueError as e:
            action = _free_text_action(data, t) if act is None else None
            if action is None:
                rows.append(Rejected("bad_record", f"{label}: step {t}: {e}", name, record_id=f"{i}:{t}",
                                     snippet=output if isinstance(output, str) else None))
                continue
            free_text = True
        reason = _at(data, "action_reason", t)
        steps.append(Step(observation=obs, action=action, reasoning=reason if isinstance(reason, str) else None))
        summaries.append(_at(data, "summary", t))
        status_end = action.kind == "done"
    return steps, summaries, status_end, free_text, rows


def _episode(i: int, ep: dict, name: str, source: Source) -> Iterator[Episode | Rejected]:
    task = ep.get("task_template") or "task"
    label = f"{name}: episode {i} ({task} #{ep.get('instance_id', '?')})"
    data = ep.get("episode_data")
    score = _score(ep)
    if not isinstance(data, dict):
        reason = (ep.get("exception_info") or "no step data").strip().splitlines()[-1]
        yield Rejected("failed_episode", f"{label}: the run recorded no steps: {reason}", name, record_id=str(i))
        return
    config = ep.get("screen_config") or {}
    size = (config.get("width"), config.get("height"))
    steps, summaries, status_end, free_text, rows = _steps(data, size, label, name, i, source)
    yield from rows
    if not steps:
        yield episode_without_steps(f"{label}: no step has an action or the agent's text", name, _outcome(score),
                                    score, task=ep.get("goal"), agent=ep.get("agent_name"),
                                    steps_recorded=ep.get("episode_length"))
        return
    finished = ep.get("finish_dtime")
    env = {"device": "android", "task_template": task, "instance_id": ep.get("instance_id"), "seed": ep.get("seed"),
           "screen_config": dict(config) if config else None, "run_time_s": ep.get("run_time"),
           "finish_local_time": finished.isoformat() if hasattr(finished, "isoformat") else None,
           "summaries": summaries if any(s is not None for s in summaries) else None}
    env = {k: v for k, v in env.items() if v is not None}
    if free_text:
        warn(env, "free_text_steps", "steps without action_output_json: the agent's own text (agent_output) is "
             "kept as message steps")
    yield Episode(
        key=f"{i}:{task}:{ep.get('instance_id')}",
        domain="android",
        platform="android",
        steps=steps,
        task=ep.get("goal"),
        agent=ep.get("agent_name"),
        outcome=_outcome(score),
        reward=score,
        terminated=status_end,  # otherwise the step budget ran out or the agent stopped unsaid: truncated
        env=env,
    )


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    unknown: list[str] = []
    loaded = load_gzip(source.read_bytes(), name, ALLOWED, unknown=unknown)  # SourceError: the file is quarantined
    if isinstance(loaded, tuple) and len(loaded) == 2 and isinstance(loaded[0], list):
        loaded = loaded[0]  # the older checkpointer's (episodes, completed_tasks)
    if not isinstance(loaded, list):
        yield Rejected("bad_record", f"{name}: expected a list of episodes, found {type(loaded).__name__}", name)
        return
    for i, ep in enumerate(loaded):
        if not isinstance(ep, dict):
            yield Rejected("bad_record", f"{name}: episode {i} is a {type(ep).__name__}, not a dict", name,
                           record_id=str(i))
            continue
        for item in _episode(i, ep, name, source):
            if isinstance(item, Episode):
                for cls in dict.fromkeys(unknown):
                    warn(item.env, "unknown_pickle_class", f"{name} holds {cls}, a class this reader does not list: "
                         "kept as the record of its state")
            yield item
