"""Android states as the benchmark shows them: each source's screen in the rendering AgentWorldBench uses for
that kind of source (`schemas.render_android`), made from the observation's view hierarchy (`ui_tree`).

`--android-state per-source` (the default of `export sft --format agentworld|bench`) renders them so, and
writes a DroidBot run's actions as DroidBot's event text on the state they acted on (and the benchmark's
own rows read back, the phone tool's `<invoke name="phone">` calls among them, as they wrote them); `ours`
keeps the text the readers wrote (`schemas.render`) and JSONAction. A source without a style, or an observation without a view
hierarchy, keeps its text.
"""

from __future__ import annotations

import re
from typing import Callable

import orjson

from schemas import render_android

MODES = ("per-source", "ours")
_PER_SOURCE_FORMATS = ("agentworld", "bench")  # the sft formats laid out as the benchmark's records


def mode(kind: str, fmt: str | None, chosen: str | None) -> str:
    """The android state mode an export uses: the one chosen, else per-source for the benchmark's layouts."""
    if chosen:
        return chosen
    return "per-source" if kind == "sft" and fmt in _PER_SOURCE_FORMATS else "ours"


def state_text(domain: str, source_format: str | None) -> Callable[[dict | None], str | None] | None:
    """How an episode's observations are shown (`transitions.trajectories`' `state_text`); None: as recorded."""
    style = render_android.style_of(source_format) if domain == "android" else None
    if style is None:
        return None
    render = render_android.RENDER[style]
    rendered: dict[str, str | None] = {}  # runs revisit screens: each hierarchy is rendered once per episode

    def text(observation: dict | None) -> str | None:
        if not observation or observation.get("kind") == "none":
            return None
        tree = observation.get("ui_tree")
        if not tree:
            return observation.get("text")
        if tree not in rendered:
            try:
                views = orjson.loads(tree)
            except orjson.JSONDecodeError:
                views = None
            rendered[tree] = render(views) if isinstance(views, list) else None
        out = rendered[tree]
        return observation.get("text") if out is None else out

    return text


def action_text(domain: str, source_format: str | None) -> Callable[[dict | None, dict], str | None] | None:
    """How an episode's actions are shown in their source's own benchmark form (`transitions.trajectories`'
    `action_text`): DroidBot's event text on the state the action acted on, for DroidBot sources; the phone
    tool's call, DroidBot's text or JSONAction as the benchmark's own rows wrote them, for those rows read
    back; None: the domain's form (JSONAction)."""
    if domain == "android" and source_format == "agentworldbench":
        return _recorded_form
    if domain != "android" or render_android.style_of(source_format) != "droidbot":
        return None
    parsed: dict[str, list | None] = {}  # each hierarchy parsed once per episode

    def text(observation: dict | None, action: dict) -> str | None:
        tree = (observation or {}).get("ui_tree")
        if not tree:
            return render_android.droidbot_event(action, None)
        if tree not in parsed:
            try:
                views = orjson.loads(tree)
            except orjson.JSONDecodeError:
                views = None
            parsed[tree] = views if isinstance(views, list) else None
        return render_android.droidbot_event(action, parsed[tree])

    return text


# DroidBot's event verbs, as the benchmark's DroidBot rows write them
_DROIDBOT_EVENT = re.compile(r"^(touch|long_touch|set_text|scroll|key|intent|kill_app)\b")
_FENCED = re.compile(r"\*\*Action:\*\*\s*\n```[\w-]*\n(.*?)\n```", re.DOTALL)


def _recorded_form(observation: dict | None, action: dict) -> str | None:
    """A benchmark row's action as the row wrote it (its prompt is the action's `raw`): the phone tool's call,
    DroidBot's event text or JSONAction, byte for byte; None for anything else (the domain's form)."""
    found = _FENCED.search(action.get("raw") or "")
    body = found.group(1).strip() if found else ""
    if body.startswith(("<invoke ", '{"action_type"')) or _DROIDBOT_EVENT.match(body):
        return body
    return None
