"""Computer-use eval attempts scored by their harness (`ingest.browser.cua_eval_attempt`).

Real attempts (no license, so read where they lie, never copied here): ogutdgn/CUArena @
d81601b3162d35a3c791c64e82a5bcd8d162ace7, `apps/figma/cua-eval/runs/<ts>/anthropic/task_NN/attempt_1/`, expected
under ../shared/samples/browser/cuarena-cua-eval/ with the same `runs/...` paths. Claude (`claude-sonnet-4-5`,
Anthropic's `computer_20250124` tool) on a Playwright Chromium viewport of 1280x800 at device scale 1, the same
1280x800 declared to the model, so every point is its own pixel of the 1280x800 screenshots. Counted by hand in
the files (`trajectory.json`, `score.json`, `outcome.json`):
- `20260510_201730/.../task_02/attempt_1` ("sunset gradient"): 38 computer actions in 38 turns, then the final
  reply: 1 screenshot, 21 left_clicks (the first [509, 763], the toolbar's Frame tool), 6 left_click_drags (the
  first from [400, 200] to [700, 600]), 10 `key` (5 "r", 5 "Escape"); the agent said it was done; the verifier
  scored 0.386 (base 0.6 x efficiency 0.6433, colour rubric 0 of 0.4), under the 0.7 threshold: a failure.
- `20260512_202539/.../task_10/attempt_1` ("nested squares"): 51 computer actions in 51 turns, then the final
  reply: 28 left_clicks and 3 triple_clicks (clicks), 1 right_click [71, 143], 6
  drags with `"text": "shift"`, 3 `type` of hex colours, 6 `key` and 3 `ctrl+...` hotkeys, 1 screenshot; the
  verifier scored 1.0 (all four rubrics full): a success.
One screenshot per turn (`screenshots/turn_NN.png`) after it ran, the observation of the next turn."""

from __future__ import annotations

import json
from pathlib import Path

from ingest.browser import cua_eval_attempt
from tests.ingest import golden
from tests.ingest.ubuntu.test_osworld import png
from tests.parts import SHARED, require_shared_sample

RUNS = SHARED / "samples" / "browser" / "cuarena-cua-eval" / "runs"
SUNSET = RUNS / "20260510_201730" / "anthropic" / "task_02" / "attempt_1"
SQUARES = RUNS / "20260512_202539" / "anthropic" / "task_10" / "attempt_1"



def _pixel(action) -> tuple[float, float]:
    return round(action.x * 1280, 1), round(action.y * 800, 1)


def test_the_sunset_attempt_a_failure_the_agent_called_done():
    ep, rows = golden.read_one(cua_eval_attempt, require_shared_sample(SUNSET))
    assert rows == [] and len(ep.steps) == 39 and ep.agent == "claude-sonnet-4-5"
    kinds = [s.action.kind for s in ep.steps]
    assert (kinds.count("click"), kinds.count("drag"), kinds.count("key"), kinds.count("wait")) == (21, 6, 10, 1)
    assert kinds[0] == "wait" and kinds[-1] == "message"
    assert _pixel(ep.steps[1].action) == (509.0, 763.0)
    drag = ep.steps[2].action
    assert (_pixel(drag), (drag.x2 * 1280, drag.y2 * 800)) == ((400.0, 200.0), (700.0, 600.0))
    assert json.loads(drag.raw)["start_point"]["x"] == 400
    assert (ep.outcome, ep.reward, ep.terminated) == ("failure", 0.386, True)
    assert ep.env["agent_claim"]["stop_reason"] == "done" and ep.env["pass_threshold"] == 0.7
    assert [r["score"] for r in ep.env["verifier"]["rubrics"]] == [0.2, 0.3, 0.0, 0.1]
    screens = [s.observation for s in ep.steps[1:]]
    assert all(o.kind == "screen" and (o.width, o.height) == (1280, 800) for o in screens)


def test_the_nested_squares_attempt_a_success():
    ep, rows = golden.read_one(cua_eval_attempt, require_shared_sample(SQUARES))
    assert rows == [] and len(ep.steps) == 52
    kinds = [s.action.kind for s in ep.steps]
    assert (kinds.count("click"), kinds.count("right_click"), kinds.count("drag")) == (31, 1, 6)
    assert (kinds.count("type"), kinds.count("key"), kinds.count("hotkey"), kinds.count("wait")) == (3, 6, 3, 1)
    assert [s.action.text for s in ep.steps if s.action.kind == "type"] == ["1370E6", "E64413", "1370E6"]
    assert _pixel(ep.steps[0].action) == (619.0, 761.0) and _pixel(ep.steps[40].action) == (71.0, 143.0)
    assert json.loads(ep.steps[2].action.raw)["input"]["text"] == "shift"  # the modifier asked for, kept raw
    assert (ep.outcome, ep.reward, ep.terminated) == ("success", 1.0, True)
    assert ep.steps[-1].action.kind == "message" and ep.final_observation is None


# hand-made attempts in the writer's layout (runner.py, agents/anthropic.py) for the cases the real ones lack


def _attempt(folder: Path, lines: list, meta: dict | None = None, outcome: dict | None = None,
             score: dict | None = None, shots=(), size=(2560, 1600)) -> Path:
    (folder / "screenshots").mkdir(parents=True)
    (folder / "trajectory.jsonl").write_text("".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    for name, doc in (("meta.json", meta), ("outcome.json", outcome), ("score.json", score)):
        if doc is not None:
            (folder / name).write_text(json.dumps(doc))
    for name in shots:
        (folder / "screenshots" / name).write_bytes(png(*size, name.encode()))
    return folder


START = {"turn": -1, "phase": "start", "elapsed_s": 0.0, "task_prompt": "Draw a square.", "system_prompt": None,
         "model": "claude-sonnet-4-5", "screenshot": "screenshots/initial.png"}
META = {"provider": "anthropic", "model": "claude-sonnet-4-5", "block_keyboard": True, "pass_threshold": 0.7,
        "mock_url": "http://localhost:5173",
        "endpoint": {"tool": {"type": "computer_20250124", "display_width_px": 1280, "display_height_px": 800}},
        "viewport": {"width": 1280, "height": 800, "device_scale_factor": 2}}


def _turn(n: int, text: str, actions: list) -> dict:
    return {"turn": n, "phase": "step", "elapsed_s": 3.0 * (n + 1), "text": text, "actions": actions,
            "screenshot": f"screenshots/turn_{n:02d}.png"}


def test_a_retina_viewport_blocked_keys_and_the_per_turn_texts(tmp_path):
    folder = _attempt(tmp_path / "attempt_1", [
        START,
        _turn(0, "I'll pick the rectangle tool.", [{"action": "left_click", "coordinate": [619, 761]},
                                                   {"action": "key", "text": "r"}]),
        _turn(1, "Now drag.", [{"action": "left_click_drag", "start_coordinate": [400, 250],
                                "coordinate": [700, 550]}, {"action": "zoom", "region": [0, 0, 10, 10]}]),
        {"turn": 2, "phase": "final", "text": "Done: a square.", "actions": [], "screenshot": None},
    ], META, {"stop_reason": "done", "finished": True, "score": {"final": 0.9, "passed": True, "threshold": 0.7}},
        {"final_score": 0.9, "rubrics": [{"name": "shape", "score": 0.9, "max_score": 1.0}]},
        shots=("initial.png", "turn_00.png", "turn_01.png"))
    ep, rows = golden.read_one(cua_eval_attempt, folder)
    assert rows == [] and ep.task == "Draw a square." and [s.action.kind for s in ep.steps] == [
        "click", "key", "drag", "tool_call", "message"]
    click = json.loads(ep.steps[0].action.raw)["point"]
    # the declared 1280x800 display onto the 2560x1600 screenshot of a device-scale-2 viewport: twice the numbers
    assert click["observation_pixel"] == [1238.0, 1522.0] and (ep.steps[0].action.x, ep.steps[0].action.y) == (
        619 / 1280, 761 / 800)
    assert ep.steps[0].observation.url == "http://localhost:5173" and ep.steps[0].observation.width == 2560
    assert ep.steps[1].observation.kind == "none" and ep.steps[2].observation.kind == "screen"
    assert [json.loads(s.action.raw).get("executed") for s in ep.steps[:4]] == [None, False, None, False]
    assert [s.reasoning for s in ep.steps[:3]] == ["I'll pick the rectangle tool.", None, "Now drag."]
    assert (ep.outcome, ep.reward, ep.terminated, ep.env["screenshots"]) == ("success", 0.9, True, 3)


def test_a_run_at_its_step_cap_is_not_terminal_and_keeps_its_last_screen(tmp_path):
    folder = _attempt(tmp_path / "a", [START, _turn(0, "Click.", [{"action": "left_click", "coordinate": [10, 10]}]),
                                       "{not json", _turn(1, "Again.", [{"action": "wait", "duration": 1}])],
                      {**META, "block_keyboard": False}, score={"final_score": 0.2},
                      shots=("turn_00.png", "turn_01.png"), size=(1280, 800))
    ep, rows = golden.read_one(cua_eval_attempt, folder)
    assert [(r.rule, r.line) for r in rows] == [("parse_error", 3)]
    assert ep.steps[0].observation.kind == "none"  # no initial.png: the screen before the first turn is unknown
    # no outcome.json: passed is the runner's own rule, final_score >= meta's pass_threshold
    assert (ep.outcome, ep.reward, ep.terminated) == ("failure", 0.2, False)
    assert ep.final_observation.kind == "screen" and ep.env["agent_claim"] == {}


def test_a_score_at_the_outcomes_own_threshold_passes(tmp_path):
    # outcome.json's threshold (0.5) wins over meta's (0.7), and a score equal to it passes (final >= threshold)
    folder = _attempt(tmp_path / "a", [START, _turn(0, "Click.", [{"action": "left_click", "coordinate": [10, 10]}])],
                      META, {"stop_reason": "done", "finished": True, "score": {"final": 0.5, "threshold": 0.5}},
                      {"final_score": 0.5}, shots=("turn_00.png",), size=(2560, 1600))
    ep, _ = golden.read_one(cua_eval_attempt, folder)
    assert (ep.outcome, ep.reward, ep.env["pass_threshold"]) == ("success", 0.5, 0.5)


def test_it_claims_an_attempt_only_beside_a_verdict_and_names_the_files_it_leaves():
    files = sorted(["r/a1/trajectory.jsonl", "r/a1/score.json", "r/a1/log.json", "r/a1/screenshots/turn_00.png",
                    "r/a2/trajectory.jsonl", "r/a3/trajectory.json", "r/a3/outcome.json"])
    heads = {"r/a1/trajectory.jsonl": json.dumps(START).encode(), "r/a2/trajectory.jsonl": json.dumps(START).encode(),
             "r/a3/trajectory.json": b'{\n  "provider": "anthropic",\n  "model": "m",\n  "turns": 3'}
    found = cua_eval_attempt.units(files, lambda p: heads.get(p, b""))
    assert found == ["r/a1", "r/a3"]
    unread = cua_eval_attempt.members(found, files, lambda p: b"")
    assert [p for p, _ in unread["r/a1"]] == ["r/a1/log.json"] and unread["r/a3"] == []
