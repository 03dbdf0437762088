"""Web actions as the benchmark writes them: BrowserGym calls (`transforms.browsergym_code`).

`--web-action browsergym` (the default of `export sft --format agentworld|bench`) writes each web action as the
BrowserGym call that says it (a BrowserGym run's recorded call; another source's action made into one from the
element id or pixel point it recorded), fenced as text as the benchmark's action space is; an action no call
says whole keeps the schema's JSON form. `json` writes every web action in the schema's JSON form.
"""

from __future__ import annotations

from typing import Callable

from transforms import agentworld
from transforms.browsergym_code import browsergym_call

MODES = ("browsergym", "json")
_BENCH_FORMATS = ("agentworld", "bench")  # the sft formats laid out as the benchmark's records


def mode(kind: str, fmt: str | None, chosen: str | None) -> str:
    """The web action form an export uses: the one chosen, else browsergym for the benchmark's layouts."""
    if chosen:
        return chosen
    return "browsergym" if kind == "sft" and fmt in _BENCH_FORMATS else "json"


def action_text(domain: str, source_format: str | None) -> Callable[[dict | None, dict], str | None] | None:
    """How a web episode's actions are shown (`transitions.trajectories`' `action_text`): the BrowserGym call
    on the screen the action acted on; None for other domains."""
    if domain != "web":
        return None
    recorded = source_format == "browsergym"

    def text(observation: dict | None, action: dict) -> str | None:
        return browsergym_call(action, agentworld.screen_size(observation), recorded)

    return text
