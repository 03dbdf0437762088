"""Agent S3 in the loop: the `agent_s` command of gui-agents 0.3.2 (its own venv, `make parts`) runs on an X
virtual display (Debian's Xvfb) with the Tk window on it, its worker and grounding models at the scripted model
server (Chat Completions), and writes its session logs (`logs/normal-*.log`, `debug-*.log`, `sdebug-*.log`) in
the folder it runs in. The task is typed at its prompt.

The worker's plans are scripted (one grounded action each: click the field, type, click Save, done); the
grounding model answers each element description with a point in thousandths (`--grounding_width 1000
--grounding_height 1000`), which Agent S scales to the 1440x900 screen before pyautogui clicks. The script is
the oracle for every step's action, element and text; the window's event log for where the clicks landed (the
log itself keeps no points).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from ingest.desktop import agent_s_log
from pipelines.infra import definition
from pipelines.infra.plan import find_units
from tests.ingest import golden
from tests.ingest.desktop import xdisplay
from tests.ingest.producers import PRODUCERS
from tests.parts import require
from tests.scripted_model_server import ScriptedModelServer, Turn

VERSION = "0.3.2"
VENV = PRODUCERS / f"gui-agents-{VERSION}"
SCREEN = (1440, 900)
TASK = "Type hello world in the field and press Save"
FIELD = "The empty text field at the top left of the form window"
SAVE = "The Save button below the entry"
PLANS = [
    f'Click the field.\n(Grounded Action)\n```python\nagent.click("{FIELD}", 1, "left")\n```',
    'Type the words.\n(Grounded Action)\n```python\nagent.type(text="hello world")\n```',
    'Go to the end of the line.\n(Grounded Action)\n```python\nagent.hotkey(["ctrl", "e"])\n```',
    f'Save it.\n(Grounded Action)\n```python\nagent.click("{SAVE}", 1, "left")\n```',
    'The form is saved.\n(Grounded Action)\n```python\nagent.done()\n```',
]
GROUND = {SAVE: (69, 161), FIELD: (167, 67)}  # thousandths of the screen
REFLECTION = "The previous action went as planned."


def _side(protocol: str, body: dict) -> str:
    """The worker, its reflection agent and the grounding model, told apart by model and system prompt."""
    messages = body.get("messages") or []
    if body.get("model") == "ground-model":
        asked = json.dumps(messages)
        x, y = next(point for description, point in GROUND.items() if description in asked)
        return f"({x}, {y})"
    system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
    if "reflect on the trajectory" in system:
        return REFLECTION
    return PLANS[min(sum(1 for m in messages if m.get("role") == "assistant"), len(PLANS) - 1)]


@pytest.fixture(scope="module")
def agent_s_run(tmp_path_factory):
    """(the logs folder, the window's events, the requests the model server answered)."""
    require(f"gui-agents {VERSION} in {VENV}", (VENV / ".installed").exists())
    require("Xvfb, xdotool, ImageMagick, scrot and python3-tk (Debian packages)",
            xdisplay.available() and shutil.which("scrot") is not None)
    out = tmp_path_factory.mktemp("agent-s")
    (out / ".Xauthority").touch()  # python-xlib wants the file, Xvfb asks for no credentials
    log = out / "window.jsonl"
    with xdisplay.virtual_display(*SCREEN, log) as display, ScriptedModelServer([Turn(text="-")], side=_side) as server:
        env = {**os.environ, "DISPLAY": display, "XDG_SESSION_TYPE": "x11", "XAUTHORITY": str(out / ".Xauthority"),
               "HOME": str(out), "PYTHONWARNINGS": "ignore"}
        done = subprocess.run(
            [str(VENV / "bin" / "agent_s"), "--provider", "openai", "--model", "worker-model", "--model_url",
             server.url + "/v1", "--model_api_key", "scripted", "--ground_provider", "openai", "--ground_url",
             server.url + "/v1", "--ground_api_key", "scripted", "--ground_model", "ground-model",
             "--grounding_width", "1000", "--grounding_height", "1000"],
            input=f"{TASK}\nn\n", capture_output=True, text=True, timeout=300, env=env, cwd=str(out))
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return out / "logs", xdisplay.events(log), list(server.requests)


def _scaled(point: tuple[int, int]) -> tuple[int, int]:
    """Where Agent S clicks a grounding answer: thousandths scaled to the screen, rounded."""
    return round(point[0] * SCREEN[0] / 1000), round(point[1] * SCREEN[1] / 1000)


def test_every_plan_is_a_step_with_the_scripts_action_and_element(agent_s_run):
    logs, _, _ = agent_s_run
    files = [str(p) for p in logs.iterdir()]
    assert agent_s_log.units(files, lambda p: Path(p).read_bytes()[:4096]) == [str(logs)]
    (episode,) = golden.read_records(agent_s_log, logs)
    assert [s.action.kind for s in episode.steps] == ["click", "type", "hotkey", "click", "done"]
    elements = [json.loads(s.action.element)["description"] if s.action.element else None for s in episode.steps]
    assert elements == [FIELD, None, None, SAVE, None]
    assert episode.steps[1].action.text == "hello world"
    assert episode.steps[2].action.keys == ["ctrl", "e"]
    assert [orjson.loads(s.action.raw)["plan"] for s in episode.steps] == PLANS
    # the reflection before a plan is its reasoning with the plan's own thought
    assert episode.steps[0].reasoning == "Click the field."
    assert episode.steps[3].reasoning == f"Reflection: {REFLECTION}\n\nSave it."
    assert episode.terminated and episode.env["agent_claim"] == "done" and episode.outcome == "unknown"
    assert all(s.observation.kind == "none" for s in episode.steps)
    assert sorted(episode.env["companion_logs"]) == sorted(n.name for n in logs.iterdir() if not n.name.startswith("normal"))


def test_the_grounded_clicks_landed_where_the_grounding_model_pointed(agent_s_run):
    _, events, requests = agent_s_run
    presses = [(e["x"], e["y"]) for e in events if e["event"] == "press"]
    assert presses == [_scaled(GROUND[FIELD]), _scaled(GROUND[SAVE])]
    assert [e["text"] for e in events if e["event"] == "save"] == ["hello world"]
    grounding = [r for r in requests if r.body.get("model") == "ground-model"]
    assert grounding and all("Output only the coordinate" in json.dumps(r.body) for r in grounding)


def test_the_logs_folder_is_one_unit_with_nothing_left_unread(agent_s_run):
    logs, _, _ = agent_s_run
    units, ignored = find_units([str(logs)], definition.load("ingest-all").formats)
    assert [u.format for u in units] == ["agent_s_log"]
    assert ignored == []  # the session's debug and sdebug logs go with it
