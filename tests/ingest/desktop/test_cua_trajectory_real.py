"""Real cua-agent trajectory folders (samples/desktop/cua-trajectory/PROVENANCE.md): a shopping agent of trycua/cua's
pull request #412, cua-agent 0.4.0's Anthropic loop (claude-opus-4) on a Linux desktop, read against what a person
counts in its files. Its loop declared a 1024x768 display (its fallback) while the screen and every screenshot are
1512x857, and executed the model's numbers as given: the crosshair cua drew on the clicked screenshot is centred
on them, and the click landed on Firefox's address bar, so the points are the screenshot's pixels, never the
declared display's.

A second run of the same pull request, too large to bundle (its metadata.json holds every screenshot in base64:
5.9 MB in all), is read where it lies: trycua/cua @ b16ceadd597928ced41ed82206242971ef425fb7 (refs/pull/412/head),
`shopping_trajectories/2025-09-14_claude-opus-4-20_064925_5723/`, expected under
../shared/samples/desktop/cua-trajectory/trycua-cua/ with the same path below it. Counted by hand: a screenshot
request, a click at (443, 154) (the search box; the crosshair's centre), `ctrl+a`, `type` "teddy bears",
`Return`, then the final message; five screenshots of 1512x857; status completed, 11 turns. No excerpt of it can
stand in for it: its metadata.json alone (3.1 MB) holds the status, the turn count and the task. A whole run that
ended, small enough to bundle (600 KB, 8c8a6fe5 of the same pull request), carries the ended-run checks everywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

from ingest.desktop import cua_trajectory
from ingest.record import Rejected
from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.parts import SHARED, require_shared_sample

RUNS = SAMPLES / "desktop" / "cua-trajectory" / "trycua-cua" / "shopping_trajectories"
BUNDLED = RUNS / "2025-09-14_claude-opus-4-20_011013_b66b"
ENDED = RUNS / "2025-09-14_claude-opus-4-20_023740_3f76"
COMPLETED = (SHARED / "samples" / "desktop" / "cua-trajectory" / "trycua-cua" / "shopping_trajectories"
             / "2025-09-14_claude-opus-4-20_064925_5723")
SCREEN = (1512, 857)
ENV_KEYS = ("trajectory_id", "status", "agent_loop", "model", "screenshots", "screenshots_with_crosshair",
            "declared_display", "total_turns", "observation_text")



def _pixels(action) -> tuple[int, int]:
    return round(action.x * SCREEN[0]), round(action.y * SCREEN[1])


def test_a_run_stopped_while_running_reads_as_a_person_counts_it():
    ep, rows = golden.read_one(cua_trajectory, BUNDLED)
    assert rows == []
    assert [s.action.kind for s in ep.steps] == ["wait", "click", "hotkey", "type", "click"]
    assert ep.task.strip().startswith('URGENT: Search for "tents under 100" on Google Shopping')  # a string task
    clicks = [s.action for s in ep.steps if s.action.kind == "click"]
    assert [_pixels(a) for a in clicks] == [(645, 96), (619, 137)]  # Firefox's address bar; the suggestion
    assert (ep.steps[2].action.keys, ep.steps[3].action.text) == (["ctrl", "a"], "shopping.google.com")
    # the screenshot request's screen is the one each later action acted on; the last click's result was never saved
    assert [(s.observation.kind, s.observation.width, s.observation.height) for s in ep.steps[1:]] == [
        ("screen", *SCREEN)] * 4
    assert ep.steps[0].observation.kind == "text" and ep.final_observation is None
    assert (ep.agent, ep.outcome, ep.terminated) == ("claude-opus-4-20250514", "unknown", False)
    assert ep.env["screenshots"] == 4 and ep.env["screenshots_with_crosshair"] == 1


def test_the_models_numbers_are_kept_as_the_screenshots_pixels_they_were_executed_at():
    ep, _ = golden.read_one(cua_trajectory, BUNDLED)
    raw = json.loads(ep.steps[1].action.raw)
    assert raw["model_call"] == {"action": "left_click", "coordinate": [645, 96]}
    assert raw["declared_display"] == {"width": 1024, "height": 768}
    assert raw["point"] == {"x": 645, "y": 96, "space": "screenshot", "width": 1512, "height": 857,
                            "from": "executed by the loop"}
    assert raw["model_numbers"] == cua_trajectory.AS_GIVEN
    assert "model_numbers" not in json.loads(ep.steps[2].action.raw)  # a key press has no point


def test_golden_of_the_bundled_run():
    ep, rows = golden.read_one(cua_trajectory, BUNDLED)
    golden.check([ep, *rows], Path(__file__).with_name("golden") / "cua-trycua-shopping-running.json",
                 env_keys=ENV_KEYS)


def test_a_bundled_run_that_ended_reads_its_final_message_on_the_screen_it_read():
    """The whole 3-turn run of 8c8a6fe5 (PROVENANCE.md): a screenshot request, then the final message listing the
    products it saw; its one screenshot is the declared 1024x768 display."""
    ep, rows = golden.read_one(cua_trajectory, ENDED)
    assert rows == []
    assert [s.action.kind for s in ep.steps] == ["wait", "message"]
    assert ep.task.strip().startswith("EXTRACT ALL PRODUCTS VISIBLE NOW.")
    final = ep.steps[1]
    assert final.action.text.startswith("I can see Google Shopping results for tents under $100.")
    assert final.action.text.count("PRODUCT: ") == 5 and "Wakeman Outdoors" in final.action.text
    assert [(s.observation.kind, s.observation.width, s.observation.height) for s in ep.steps] == [
        ("text", None, None), ("screen", 1024, 768)]
    assert (ep.terminated, ep.outcome, ep.env["status"], ep.env["total_turns"], ep.env["screenshots"]) == (
        True, "unknown", "completed", 3, 1)
    assert ep.env["declared_display"] == {"width": 1024, "height": 768}
    golden.check([ep, *rows], Path(__file__).with_name("golden") / "cua-trycua-shopping-ended.json",
                 env_keys=ENV_KEYS)


def test_a_completed_run_too_large_to_bundle():
    path = require_shared_sample(COMPLETED)
    ep, rows = golden.read_one(cua_trajectory, path)
    assert rows == []
    assert [s.action.kind for s in ep.steps] == ["wait", "click", "hotkey", "type", "key", "message"]
    assert _pixels(ep.steps[1].action) == (443, 154)
    assert (ep.steps[3].action.text, ep.steps[4].action.keys) == ("teddy bears", ["Return"])
    assert [s.observation.kind for s in ep.steps] == ["text"] + ["screen"] * 5
    assert (ep.terminated, ep.outcome, ep.env["total_turns"], ep.env["screenshots"]) == (True, "unknown", 11, 5)
    golden.check([ep, *rows], Path(__file__).with_name("golden") / "cua-trycua-shopping-completed.json",
                 env_keys=ENV_KEYS)


def test_a_run_whose_one_request_got_no_answer_is_a_row_that_keeps_its_task():
    """trycua/cua @ 4ac1a04be3ae565c9da96b7d2d291c56480df8aa, `shopping_trajectories/2025-09-13_claude-3-5-sonne_
    222520_2d0e/` (tests/ingest/desktop/data/cua-trycua/PROVENANCE.md): its metadata and one `api_start`."""
    run = (Path(__file__).with_name("data") / "cua-trycua" / "shopping_trajectories"
           / "2025-09-13_claude-3-5-sonne_222520_2d0e")
    records = golden.read_records(cua_trajectory, run)
    assert [type(r) for r in records] == [Rejected] and records[0].rule == "empty_episode"
    assert json.loads(records[0].snippet)["task"].startswith('\nURGENT: Search for "camping gear under 50 dollars"')
