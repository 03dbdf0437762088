"""cua-agent's computer-use loop in the loop: `ComputerAgent` 0.9.1 (its own venv, `make parts`) runs on an X
virtual display (Debian's Xvfb) with a Tk window on it, against the scripted model server speaking Anthropic
Messages (its `computer` tool loop) and OpenAI Responses (`computer_call` items of `computer-use-preview`), and
writes its trajectory folder (`TrajectorySaverCallback`). Its computer is cua-agent's
`CustomComputerHandler` over xdotool (clicks, typing, keys) and ImageMagick's screenshots of the root window
(tests/ingest/desktop/cua_producer.py).

The screen is 1440x900: for Anthropic, cua caps the display it declares to the model at 1024x768, so the model
sees 1024x640 and the loop scales each point it gets by 1440/1024 and 900/640 before it clicks (OpenAI's tool is
told the whole screen): the three coordinate spaces of
a computer-use run (declared display, the screen the executor clicks, the screenshot) with the declared one
differing. The script is the oracle for every action and the model's numbers; the window's own event log says
where each click and key really landed, so a point read in the wrong space fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import orjson
import pytest

from ingest.desktop import cua_trajectory
from tests.ingest import golden
from tests.ingest.desktop import xdisplay
from tests.ingest.producers import PRODUCERS
from tests.parts import require
from tests.scripted_model_server import COMPUTER_CALL, ScriptedModelServer, answer, call

VERSION = "0.9.1"
VENV = PRODUCERS / f"cua-agent-{VERSION}"
PRODUCER = Path(__file__).with_name("cua_producer.py")
SCREEN = (1440, 900)
DECLARED = (1024, 640)  # cua's cap for Anthropic (1024x768) kept to the screen's 16:10
TASK = "Type hello world in the field and press Save"
# the points, in the display declared to each vendor's model: the entry (screen 40..440 x 40..80) and the Save
# button (40..160 x 120..170) of tests/ingest/desktop/tk_window.py
RUNS = {
    "anthropic": {"model": "anthropic/claude-sonnet-4-5-20250929", "declared": DECLARED,
                  "entry": (169, 42), "save": (71, 103), "platform": "linux"},
    "openai": {"model": "openai/computer-use-preview", "declared": SCREEN, "entry": (240, 60), "save": (100, 145),
               "platform": "ubuntu"},
}


def _script(vendor: str) -> list:
    run = RUNS[vendor]
    if vendor == "anthropic":
        return [call("computer", action="screenshot"),
                call("computer", action="left_click", coordinate=list(run["entry"])),
                call("computer", action="type", text="hello world"),
                call("computer", action="key", text="ctrl+e"),
                call("computer", action="left_click", coordinate=list(run["save"])),
                answer("Saved the form.")]
    return [call(COMPUTER_CALL, type="screenshot"),
            call(COMPUTER_CALL, type="click", button="left", x=run["entry"][0], y=run["entry"][1]),
            call(COMPUTER_CALL, type="type", text="hello world"),
            call(COMPUTER_CALL, type="keypress", keys=["ctrl", "e"]),
            call(COMPUTER_CALL, type="click", button="left", x=run["save"][0], y=run["save"][1]),
            answer("Saved the form.")]


def _model_point(vendor: str, raw: dict) -> tuple:
    call_ = raw["model_call"]
    return tuple(call_["coordinate"]) if vendor == "anthropic" else (call_["x"], call_["y"])


def _executed(point: tuple[int, int], declared: tuple[int, int]) -> tuple[int, int]:
    """Where the loop clicks a point of the declared display: scaled per axis to the screenshot, rounded."""
    return (round(point[0] * SCREEN[0] / declared[0]), round(point[1] * SCREEN[1] / declared[1]))


@pytest.fixture(scope="module", params=list(RUNS))
def cua_run(request, tmp_path_factory):
    """(vendor, the trajectory folder, the window's events, the requests the model server answered)."""
    vendor = request.param
    require(f"cua-agent {VERSION} in {VENV}", (VENV / ".installed").exists())
    require("Xvfb, xdotool, ImageMagick and python3-tk (Debian packages)", xdisplay.available())
    out = tmp_path_factory.mktemp("cua")
    log = out / "window.jsonl"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "CUA_TELEMETRY_ENABLED": "false",
           "CUA_TELEMETRY": "off", "PYTHONWARNINGS": "ignore"}
    with xdisplay.virtual_display(*SCREEN, log) as display, ScriptedModelServer(_script(vendor)) as server:
        base = server.url if vendor == "anthropic" else server.url + "/v1"
        done = subprocess.run([str(VENV / "bin" / "python"), str(PRODUCER), display, RUNS[vendor]["model"], base,
                               str(out / "trajectories"), TASK],
                              capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr[-4000:]
        (folder,) = json.loads(done.stdout.strip().splitlines()[-1])["trajectories"]
        return vendor, Path(folder), xdisplay.events(log), list(server.agent_requests())


def _episode(folder: Path, blobs: dict | None = None):
    (episode,) = golden.read_records(cua_trajectory, folder, blobs)
    return episode


def test_every_action_and_point_is_the_scripts_at_the_pixel_the_loop_clicked(cua_run):
    vendor, folder, _, _ = cua_run
    run = RUNS[vendor]
    episode = _episode(folder)
    kinds = [s.action.kind for s in episode.steps]
    assert kinds == ["wait", "click", "type", "hotkey", "click", "message"]
    assert (episode.task, episode.domain, episode.platform, episode.terminated) == (TASK, "os", run["platform"], True)
    clicks = [s.action for s in episode.steps if s.action.kind == "click"]
    for action, model_point in zip(clicks, (run["entry"], run["save"])):
        raw = orjson.loads(action.raw)
        pixel = _executed(model_point, run["declared"])
        assert (raw["point"]["x"], raw["point"]["y"]) == pixel
        assert raw["point"]["space"] == "screenshot" and (raw["point"]["width"], raw["point"]["height"]) == SCREEN
        assert (action.x, action.y) == pytest.approx((pixel[0] / SCREEN[0], pixel[1] / SCREEN[1]))
        # the model's own numbers and the display it was told of, kept beside the executed point
        assert _model_point(vendor, raw) == model_point
        assert raw["declared_display"] == {"width": run["declared"][0], "height": run["declared"][1]}
        if run["declared"] != SCREEN:  # read over the screenshot, the model's numbers would miss, by x and y apart
            assert abs(model_point[0] - pixel[0]) > 15 and abs(model_point[1] - pixel[1]) > 15
    assert episode.steps[2].action.text == "hello world"
    assert [k.lower() for k in episode.steps[3].action.keys] == ["ctrl", "e"]
    assert episode.steps[5].action.text == "Saved the form."
    assert episode.env["declared_display"] == {"width": run["declared"][0], "height": run["declared"][1]}


def test_the_clicks_and_keys_landed_where_the_episode_says(cua_run):
    vendor, folder, events, _ = cua_run
    run = RUNS[vendor]
    episode = _episode(folder)
    presses = [(e["x"], e["y"]) for e in events if e["event"] == "press"]
    expected = [tuple(orjson.loads(s.action.raw)["point"][k] for k in ("x", "y"))
                for s in episode.steps if s.action.kind == "click"]
    assert presses == expected == [_executed(run["entry"], run["declared"]), _executed(run["save"], run["declared"])]
    assert [e["text"] for e in events if e["event"] == "save"] == ["hello world"]


def test_each_call_observes_its_own_screenshot_without_a_text_state(cua_run):
    _, folder, _, _ = cua_run
    blobs: dict = {}
    episode = _episode(folder, blobs)
    observed = [s.observation for s in episode.steps[1:]]
    assert all(o.kind == "screen" and o.text is None and o.screenshot for o in observed)
    assert all((o.width, o.height) == SCREEN for o in observed)
    assert {o.screenshot for o in observed} <= set(blobs)
    assert all(blobs[o.screenshot][1].startswith(b"\x89PNG") for o in observed)
    # the crosshair copies cua draws on clicked screenshots are counted, never observations
    assert episode.env["screenshots"] == 5 and episode.env["screenshots_with_crosshair"] == 2
    assert episode.env["observation_text"].startswith("none")


def test_the_model_was_told_the_declared_display(cua_run):
    vendor, _, _, requests = cua_run
    assert len(requests) == len(_script(vendor))
    tools = [t for t in requests[0].body["tools"] if t.get("name") == "computer" or t["type"] == "computer_use_preview"]
    sizes = [(t.get("display_width_px") or t["display_width"], t.get("display_height_px") or t["display_height"])
             for t in tools]
    assert sizes == [RUNS[vendor]["declared"]]


def test_detection_needs_the_metadata_and_its_turn_folders(tmp_path):
    run = tmp_path / "2025-01-01_claude_000000_abcd"
    (run / "turn_000").mkdir(parents=True)
    (run / "metadata.json").write_text('{"trajectory_id": "x", "status": "completed", "kwargs": {}}')
    (run / "turn_000" / "0000_api_start.json").write_text("{}")
    files = [str(p) for p in sorted(tmp_path.rglob("*")) if p.is_file()]
    head = lambda p: Path(p).read_bytes()[:4096]  # noqa: E731
    assert cua_trajectory.units(files, head) == [str(run)]
    lone = [str(run / "metadata.json")]
    assert cua_trajectory.units(lone, head) == []
