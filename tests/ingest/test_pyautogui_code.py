"""Pauses and key chords in agents' pyautogui code, read as typed actions without running it.

The code strings are the writers' own:
- Agent S3 (gui-agents 0.3.2, its own venv, `make parts`): its grounding agent's `wait`, `hold_and_press`,
  `hotkey`, `done` and `fail` return the code OSWorld's harness runs; the test calls them there.
- Claude's computer-use loop in OSWorld (`mm_agents/anthropic/main.py`, `parse_actions_from_tool_call`; read at
  limenlp/OS_Blind @ 240e58937a313c9d33695184631b461d63310799): `key` with text "ctrl+a" writes
  `pyautogui.keyDown('<key>')\\n` for each key, then `pyautogui.keyUp('<key>')\\n` for each in reverse; `wait` writes
  `pyautogui.sleep(0.5)\\n`, `screenshot` `pyautogui.sleep(0.1)\\n`; `hold_key` the downs alone; a click with
  `text` (modifiers) the downs, the click, the ups; `call_user` the word `CALL_USER`.
- OpenAI's computer-use loop in OSWorld (`mm_agents/openai_cua_agent.py`,
  `_convert_cua_action_to_pyautogui_action`; read at ljxpython/OSWorldUse @
  f6cee715783b2b2c6f38d460a6dbab90495d238a): `wait` writes `f"import time\\ntime.sleep({seconds})"` with
  `seconds = max(0.1, ms / 1000)` (1000 ms unless given), `screenshot`
  `"import time\\ntime.sleep(0.1)  # Screenshot requested, no direct action needed"`.
- A real GPT-4o run (samples/ubuntu/osworld/karakuri-ai-OSWorld-JP): a click followed by `time.sleep(2)`.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from ingest.pyautogui_code import parse_calls, to_action
from tests.conftest import SAMPLES
from tests.ingest.producers import PRODUCERS
from tests.parts import require

AGENT_S = PRODUCERS / "gui-agents-0.3.2"
SCREEN = (1920, 1080)
KARAKURI = (SAMPLES / "ubuntu" / "osworld" / "karakuri-ai-OSWorld-JP" / "traces" / "20250204-1" / "pyautogui"
            / "screenshot_a11y_tree" / "gpt-4o" / "libreoffice_calc" / "163789f0-c895-4a50-8207-17cbdd56ec38"
            / "traj.jsonl")

# the grounding agent's actions that call no model: an instance without engines writes their code
_AGENT_S_SCRIPT = """
import json
from gui_agents.s3.agents.grounding import OSWorldACI
aci = OSWorldACI.__new__(OSWorldACI)
aci.platform = "linux"
print(json.dumps({
    "wait": aci.wait(1.333),
    "hold_ctrl_press_c": aci.hold_and_press(["ctrl"], ["c"]),
    "hold_ctrl_shift_press_t": aci.hold_and_press(["ctrl", "shift"], ["t"]),
    "hold_shift_press_a_b": aci.hold_and_press(["shift"], ["a", "b"]),
    "hotkey": aci.hotkey(["ctrl", "c"]),
    "done": aci.done(),
}))
"""


@pytest.fixture(scope="module")
def agent_s_code():
    require("gui-agents 0.3.2 in " + str(AGENT_S), (AGENT_S / ".installed").exists())
    done = subprocess.run([str(AGENT_S / "bin" / "python"), "-c", _AGENT_S_SCRIPT], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_agent_s_wait_is_a_wait_of_its_seconds(agent_s_code):
    code = agent_s_code["wait"]
    assert code == "import time; time.sleep(1.333)"
    action = to_action(code, SCREEN)
    assert (action.kind, action.duration_s, action.code, action.raw) == ("wait", 1.333, code, code)


def test_agent_s_holding_one_key_over_one_press_is_that_hotkey(agent_s_code):
    """keyDown('ctrl'); press(['c']); keyUp('ctrl') sends ctrl down, c down, c up, ctrl up: hotkey('ctrl', 'c')."""
    code = agent_s_code["hold_ctrl_press_c"]
    action = to_action(code, SCREEN)
    assert (action.kind, action.keys, action.raw) == ("hotkey", ["ctrl", "c"], code)
    assert to_action(agent_s_code["hotkey"], SCREEN).keys == ["ctrl", "c"]  # the same chord written as a hotkey


@pytest.mark.parametrize("name, calls", [
    ("hold_ctrl_shift_press_t", ["keyDown", "keyDown", "press", "keyUp", "keyUp"]),
    ("hold_shift_press_a_b", ["keyDown", "press", "keyUp"]),
])
def test_agent_s_holds_that_are_no_chord_stay_code(agent_s_code, name, calls):
    """Held keys let up in the order they went down (not nested), or a key held over two presses: no hotkey says
    that exactly, so the code is kept as written, its calls parsed."""
    code = agent_s_code[name]
    action = to_action(code, SCREEN)
    assert (action.kind, action.code, action.raw) == ("code", code, code)
    assert [c["call"] for c in json.loads(action.arguments)] == [f"pyautogui.{c}" for c in calls]


@pytest.mark.parametrize("code, kind, keys", [
    ("pyautogui.keyDown('ctrl')\npyautogui.keyDown('a')\npyautogui.keyUp('a')\npyautogui.keyUp('ctrl')\n",
     "hotkey", ["ctrl", "a"]),
    ("pyautogui.keyDown('ctrl')\npyautogui.keyDown('shift')\npyautogui.keyDown('t')\npyautogui.keyUp('t')\n"
     "pyautogui.keyUp('shift')\npyautogui.keyUp('ctrl')\n", "hotkey", ["ctrl", "shift", "t"]),
    ("pyautogui.keyDown('return')\npyautogui.keyUp('return')\n", "key", ["return"]),  # key "Return"
    ("pyautogui.keyDown('esc')\npyautogui.keyUp('esc')\n", "key", ["esc"]),  # key "Escape", converted
])
def test_claude_key_actions_are_one_key_or_hotkey(code, kind, keys):
    action = to_action(code, SCREEN)
    assert (action.kind, action.keys, action.code, action.raw) == (kind, keys, code, code)


@pytest.mark.parametrize("code, seconds", [
    ("pyautogui.sleep(0.5)\n", 0.5),  # Claude's `wait`
    ("pyautogui.sleep(0.1)\n", 0.1),  # Claude's `screenshot`: the loop only waits for the next screen
    ("import time\ntime.sleep(1.0)", 1.0),  # OpenAI's `wait` of 1000 ms
    ("import time\ntime.sleep(0.1)  # Screenshot requested, no direct action needed", 0.1),
])
def test_computer_use_waits_are_waits(code, seconds):
    action = to_action(code, SCREEN)
    assert (action.kind, action.duration_s, action.raw) == ("wait", seconds, code)


@pytest.mark.parametrize("code", [
    "pyautogui.keyDown('shift')\n",  # Claude's hold_key: a key left down
    "pyautogui.keyDown('shift')\npyautogui.click(960, 540)\npyautogui.keyUp('shift')\n",  # a shift-click
    "pyautogui.keyDown('shift')\npyautogui.scroll(-5, 960, 540)\npyautogui.keyUp('shift')\n",
])
def test_claude_keys_held_over_other_calls_stay_code(code):
    action = to_action(code, SCREEN)
    assert (action.kind, action.code, action.raw) == ("code", code, code)


def test_a_pause_after_a_click_in_a_real_run_is_no_action_of_its_own():
    code = json.loads(KARAKURI.read_text(encoding="utf-8").splitlines()[0])["action"]
    assert code.endswith("pyautogui.click(35, 405)  # Coordinates for the LibreOffice Calc icon\ntime.sleep(2)")
    action = to_action(code, SCREEN)
    assert (action.kind, action.x, action.y, action.duration_s) == ("click", 35 / 1920, 405 / 1080, None)
    assert [c.name for c in parse_calls(code)[0]] == ["click"]  # parse_calls leaves pauses out, as before


@pytest.mark.parametrize("code, seconds", [
    ("import time\ntime.sleep(1)\ntime.sleep(2)", 3.0),  # two pauses: their sum
    ("pyautogui.sleep(seconds=2)", 2.0),
])
def test_code_of_pauses_only_waits_their_total(code, seconds):
    action = to_action(code, SCREEN)
    assert (action.kind, action.duration_s) == ("wait", seconds)


@pytest.mark.parametrize("code", [
    "time.sleep(delay)",  # seconds not written out: never evaluated
    "time.sleep(-1)",  # time.sleep refuses it
    "time.sleep(seconds=1)",  # time.sleep takes its seconds by position only
    "pyautogui.keyDown('ctrl')\npyautogui.keyDown('a')\npyautogui.keyUp('ctrl')\npyautogui.keyUp('a')",  # crossed
    "pyautogui.keyDown('a')\npyautogui.keyDown('a')\npyautogui.keyUp('a')\npyautogui.keyUp('a')",  # one key twice
    "pyautogui.keyDown('ctrl')\npyautogui.press('c', presses=2)\npyautogui.keyUp('ctrl')",  # c pressed twice
    "pyautogui.keyDown('ctrl')\npyautogui.press('c')",  # ctrl left down
    "pyautogui.keyUp('ctrl')\npyautogui.keyDown('ctrl')",
    "pyautogui.keyDown(key)\npyautogui.keyUp(key)",  # names, not literals
    "pyautogui.press('a')\npyautogui.press('b')",  # two presses, no key held
])
def test_what_is_no_exact_wait_or_chord_stays_code(code):
    action = to_action(code, SCREEN)
    assert (action.kind, action.raw) == ("code", code)


def test_a_named_key_let_up_in_another_case_is_the_same_key():
    """pyautogui lowercases a named key (more than one letter) in keyDown and keyUp; a letter keeps its case."""
    code = "pyautogui.keyDown('Ctrl')\npyautogui.keyDown('A')\npyautogui.keyUp('A')\npyautogui.keyUp('ctrl')"
    assert to_action(code, SCREEN).keys == ["Ctrl", "A"]
    assert to_action(code.replace("keyUp('A')", "keyUp('a')"), SCREEN).kind == "code"
