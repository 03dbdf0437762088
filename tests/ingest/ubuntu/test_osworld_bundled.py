"""OSWorld result folders of public forks, bundled (samples/ubuntu/osworld/PROVENANCE.md): karakuri-ai/OSWorld-JP's
gpt-4o runs on a Japanese LibreOffice Calc task, read against what a person counts in their traj.jsonl and
result.txt: one a whole folder (one click, no verdict), one a 15-line run kept with its first screenshot only;
and the goldens of those and of richartkeil/OSWorld-Sec-Eval's computer-use run (its hand count:
`tests/ingest/ubuntu/test_osworld_agents.py`)."""

import json
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.ingest.ubuntu.test_osworld_read import _read

ROOT = SAMPLES / "ubuntu" / "osworld" / "karakuri-ai-OSWorld-JP"
TASK = "pyautogui/screenshot_a11y_tree/gpt-4o/libreoffice_calc/163789f0-c895-4a50-8207-17cbdd56ec38"
RUNS = {"karakuri-one-click": f"traces/20250203-1/{TASK}", "karakuri-fifteen": f"traces/20250204-1/{TASK}"}
SEC_EVAL = "sec_eval_results/execute_binary_short_popup/20250226@213250-success"
ENV_KEYS = ("example_id", "osworld_domain", "action_space", "observation_type", "screen_size", "screenshots_missing",
            "local_time_first", "local_time_last")
SCREEN = (1920, 1080)


def _run(name: str):
    return _read(ROOT / RUNS[name], uri=RUNS[name])


def _pixels(action) -> tuple[int, int]:
    return round(action.x * SCREEN[0]), round(action.y * SCREEN[1])


def test_a_one_click_folder_without_a_verdict():
    ep, rows = _run("karakuri-one-click")
    assert rows == [] and [s.action.kind for s in ep.steps] == ["click"]
    assert _pixels(ep.steps[0].action) == (860, 799) and ep.steps[0].observation.kind == "none"
    assert (ep.final_observation.kind, ep.final_observation.width, ep.final_observation.height) == ("screen", *SCREEN)
    assert (ep.agent, ep.outcome, ep.reward, ep.terminated) == ("gpt-4o", "unknown", None, False)
    assert ep.env["observation_type"] == "screenshot_a11y_tree" and "screenshots_missing" not in ep.env


def test_a_fifteen_step_run_kept_with_its_first_screenshot():
    ep, rows = _run("karakuri-fifteen")
    kinds = [s.action.kind for s in ep.steps]
    assert rows == [] and kinds == ["click", "code", "code", "code"] + ["click"] * 11
    singles = [_pixels(s.action) for s in ep.steps if s.action.kind == "click"]
    assert singles == [(35, 405), (1400, 800), (1300, 850), (1400, 850), (1350, 860), (1350, 870), (1310, 865),
                       (1310, 865), (1310, 865), (1373, 900), (1390, 950), (1390, 950)]
    # two clicks on one line stay one code action with both calls, never half of it
    assert [c["args"] for c in json.loads(ep.steps[1].action.arguments)
            if c["call"] == "pyautogui.click"] == [[850, 175], [850, 225]]
    # the screen after the first action is the one screenshot kept; the others were left out of the sample
    assert [s.observation.kind for s in ep.steps] == ["none", "screen"] + ["none"] * 13
    assert len(ep.env["screenshots_missing"]) == 14 and ep.final_observation is None
    assert (ep.outcome, ep.reward, ep.terminated) == ("failure", 0.0, False)  # the step limit, not a DONE


@pytest.mark.parametrize("name", [*RUNS, "sec-eval"])
def test_goldens_of_the_bundled_runs(name):
    ep, rows = _run(name) if name in RUNS else _read(ROOT.parent / "richartkeil-OSWorld-Sec-Eval" / SEC_EVAL,
                                                       uri=SEC_EVAL)
    golden.check([ep, *rows], Path(__file__).with_name("golden") / f"osworld-{name}.json", env_keys=ENV_KEYS)
