"""Computer-use tool loops logged one file per step (`ingest.desktop.computer_use_steps`).

Real runs (no license, so read where they lie, never copied here): martasumyk/ai_practice @
353251dc80981dfa5c28429724caa200a04b97e2, `02-Agents/01-Computer-Use-Agents/anthropic_cu/logs/
anthropic_trajectories/task_001/` and `task_002/` (their `task_NNN.mov` recordings left out), expected under
../shared/samples/macos/computer-use-steps-martasumyk/ as `task_001/` and `task_002/`. Claude (the loop's
`claude-sonnet-4-20250514`) on a MacBook: 2880x1800 screenshots of a 1440x900 screen, a 1024x768 display declared
to the model. Counted by hand in the files:
- task_001, "Open Safari and search for apple.com website": 12 steps: screenshot; left_click [198, 740] ("clicked
  at (278,867)": Safari in the Dock); wait; left_click [512, 74] -> (720,86) (the address bar); type "apple.com";
  four `key` "Return" the loop could not run ("Unknown action: key"); screenshot; left_click [760, 74] ->
  (1068,86) (the "Go" button); wait. 12 screenshots; no final answer written (outcome unknown).
- task_002, "Open System Preferences app": 20 steps (the loop's limit): 6 left_clicks on the Dock's row
  (y 738 -> 864), a double_click [400, 300] -> (562,351), 2 right_clicks and a middle_click the loop could not
  run, 8 `key` calls (7 "Super_L", one "alt+F2") it could not run either, 2 screenshots; 20 screenshots.
The loop's scaling is the oracle for the points: `int(model * 1440 / 1024)`, `int(model * 900 / 768)` is every
executed pixel, and the point in the Retina screenshot is twice it (up to the loop's rounding)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from ingest.desktop import computer_use_steps
from tests.ingest import golden
from tests.ingest.ubuntu.test_osworld import png
from tests.parts import SHARED, require_shared_sample

ROOT = SHARED / "samples" / "macos" / "computer-use-steps-martasumyk"
ENV_KEYS = ("declared_display", "logical_screen", "screenshots", "steps_not_written")



def _shot_pixel(action) -> tuple[float, float]:
    return round(action.x * 2880, 1), round(action.y * 1800, 1)


def test_the_safari_run_as_a_person_counts_it():
    ep, rows = golden.read_one(computer_use_steps, require_shared_sample(ROOT / "task_001"))
    assert rows == [] and ep.task == "Open Safari and search for apple.com website"
    assert [s.action.kind for s in ep.steps] == ["wait", "click", "wait", "click", "type"] + ["key"] * 4 + [
        "wait", "click", "wait"]
    clicks = [json.loads(s.action.raw)["point"] for s in ep.steps if s.action.kind == "click"]
    assert [(p["x"], p["y"], p["executed"]["x"], p["executed"]["y"]) for p in clicks] == [
        (198, 740, 278, 867), (512, 74, 720, 86), (760, 74, 1068, 86)]
    # the Dock's Safari at (557, 1734) of the 2880x1800 screenshot: twice the executed (278, 867), never the
    # model's numbers over the screenshot's size (198/2880, 740/1800)
    assert _shot_pixel(ep.steps[1].action) == (556.9, 1734.4)
    assert [json.loads(s.action.raw).get("executed") for s in ep.steps[5:9]] == [False] * 4
    assert ep.env["logical_screen"] == [1440.0, 900.0] and ep.env["screenshots"] == 12
    assert ep.steps[0].observation.kind == "none" and {s.observation.width for s in ep.steps[1:]} == {2880}
    assert (ep.outcome, ep.terminated, ep.final_observation.height) == ("unknown", False, 1800)
    golden.check([ep, *rows], Path(__file__).with_name("golden") / "computer-use-steps-safari.json",
                 texts="hash", env_keys=ENV_KEYS)


def test_the_system_preferences_run_with_the_calls_the_loop_could_not_run():
    ep, rows = golden.read_one(computer_use_steps, require_shared_sample(ROOT / "task_002"))
    assert rows == [] and ep.task == "Open System Preferences app" and len(ep.steps) == 20
    kinds = [s.action.kind for s in ep.steps]
    assert kinds.count("key") + kinds.count("hotkey") == 8 and kinds.count("double_click") == 1
    assert kinds.count("click") == 7 and kinds.count("right_click") == 2 and kinds.count("wait") == 2  # 6 + middle
    not_run = [i for i, s in enumerate(ep.steps) if json.loads(s.action.raw).get("executed") is False]
    assert not_run == [3, 4, 5, 8, 9, 10, 13, 14, 15, 17, 18]
    double = json.loads(ep.steps[16].action.raw)["point"]
    assert (double["executed"]["x"], double["executed"]["y"]) == (562, 351) and _shot_pixel(
        ep.steps[16].action) == (1125.0, 703.1)
    assert ep.env["screenshots"] == 20 and ep.env["logical_screen"] == [1440.0, 900.0]


def _step(folder: Path, n: int, blocks: list, output: dict | None, size=(2880, 1800)) -> None:
    (folder / f"step_{n:02d}.json").write_bytes(orjson.dumps({"response": blocks, "tool_output": output}))
    (folder / f"step_{n:02d}.png").write_bytes(png(*size, str(n).encode()))


def _call(action: dict, name: str = "computer") -> dict:
    return {"id": "toolu_1", "input": action, "name": name, "type": "tool_use"}


def test_mismatched_spaces_a_gap_bash_output_two_calls_and_a_broken_step(tmp_path):
    run = tmp_path / "task_009"
    run.mkdir()
    (run / "task_009.txt").write_text("Do it")
    _step(run, 1, [{"type": "text", "text": "Click it."}, _call({"action": "left_click", "coordinate": [512, 384]})],
          {"status": "clicked at (640,400)", "screenshot": "elsewhere/step_01.png"}, size=(2560, 1600))
    _step(run, 3, [{"type": "text", "text": "Save, then list."}, _call({"action": "key", "text": "ctrl+s"}),
                   _call({"command": "ls"}, "bash")],
          {"stdout": "a.txt\n", "stderr": "", "screenshot": "x.png"}, size=(2560, 1600))
    (run / "step_04.json").write_text('{"response": [')
    (run / "task_009.mov").write_bytes(b"\0")
    ep, rows = golden.read_one(computer_use_steps, run)
    assert [(r.rule, r.location) for r in rows] == [("parse_error", "step_04.json")]
    assert [s.action.kind for s in ep.steps] == ["click", "hotkey", "command"]
    # [512, 384] in the declared 1024x768 display, executed at (640, 400): a 1280x800 logical screen, the 2560x1600
    # screenshot's half, and the point is the screenshot's middle
    assert ep.env["logical_screen"] == [1280.0, 800.0]
    assert json.loads(ep.steps[0].action.raw)["point"]["observation_pixel"] == [1280.0, 800.0]
    assert (ep.steps[0].action.x, ep.steps[0].action.y, ep.steps[0].reasoning) == (0.5, 0.5, "Click it.")
    assert ep.env["steps_not_written"] == [2] and ep.final_observation.text == "a.txt\n"
    # one reply's text is the reasoning of its first call, not repeated on the calls after it
    assert [s.reasoning for s in ep.steps[1:]] == ["Save, then list.", None]
    assert "tool_output" not in json.loads(ep.steps[1].action.raw)  # the loop kept only the last call's result
    assert json.loads(ep.steps[2].action.raw)["tool_output"]["stdout"] == "a.txt\n"
    folder = str(run)
    files = sorted(str(p) for p in run.iterdir())
    assert computer_use_steps.units(files, lambda p: open(p, "rb").read(4096)) == [folder]
    unread = computer_use_steps.members([folder], files, None)[folder]
    assert [(Path(p).name, why.split(" (")[0]) for p, why in unread] == [
        ("task_009.mov", "the loop's screen recording of the run")]


def test_executed_pixels_that_are_not_the_loops_scaling_are_kept_raw_with_a_warning(tmp_path):
    run = tmp_path / "task_001"
    run.mkdir()
    (run / "task_001.txt").write_text("Do it")
    _step(run, 1, [_call({"action": "left_click", "coordinate": [100, 100]})],
          {"status": "clicked at (5,7)", "screenshot": "s.png"}, size=(1000, 1000))
    ep, rows = golden.read_one(computer_use_steps, run)
    assert rows == [] and "logical_screen" not in ep.env and "steps_not_written" not in ep.env
    assert [w["rule"] for w in ep.env["ingest_warnings"]] == ["computer_use_steps.executed_points"]
    point = json.loads(ep.steps[0].action.raw)["point"]
    assert (point["x"], point["executed"]) == (100, {"x": 5, "y": 7, "space": "logical_screen (size unknown)"})
    assert (ep.steps[0].action.x, ep.steps[0].action.y) == (100 / 1024, 100 / 768)


def test_a_folder_without_the_loops_task_file_or_opening_is_not_claimed(tmp_path):
    (tmp_path / "step_01.json").write_text('{"response": []}')
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "task_001.txt").write_text("t")
    (tmp_path / "other" / "step_01.json").write_text('{"steps": []}')
    files = sorted(str(p) for p in tmp_path.rglob("*") if p.is_file())
    assert computer_use_steps.units(files, lambda p: open(p, "rb").read(4096)) == []
