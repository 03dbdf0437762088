"""OSWorld result directories. No real one is bundled, so the fixture follows lib_run_single's layout:
`traj.jsonl` (one line per executed action; `screenshot_file` is the screen after it), the PNGs, `result.txt`."""

import json
import struct
import zlib

import pytest

from ingest.pyautogui_code import to_action


def png(width: int, height: int, tag: bytes) -> bytes:
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"tEXt", b"step\0" + tag) + chunk(b"IEND", b"")


LINES = [
    {"step_num": 1, "action_timestamp": "20240401@101500", "action": "pyautogui.click(960, 540)",
     "response": "I will open the Activities menu.", "reward": 0, "done": False, "info": {},
     "screenshot_file": "step_1_20240401@101500.png"},
    {"step_num": 2, "action_timestamp": "20240401@101512", "action": "pyautogui.typewrite('gedit')",
     "response": "Type the app name, then press Enter.", "reward": 0, "done": False, "info": {},
     "screenshot_file": "step_2_20240401@101512.png"},
    {"step_num": 2, "action_timestamp": "20240401@101514", "action": "pyautogui.press('enter')",
     "response": "Type the app name, then press Enter.", "reward": 0, "done": False, "info": {},
     "screenshot_file": "step_2_20240401@101514.png"},
    {"step_num": 3, "action_timestamp": "20240401@101530",
     "action": "import pyautogui\npyautogui.moveTo(100, 200)\npyautogui.dragTo(1920, 1080, duration=0.5)",
     "response": "Drag the window.", "reward": 0, "done": False, "info": {},
     "screenshot_file": "step_3_20240401@101530.png"},
    {"step_num": 4, "action_timestamp": "20240401@101540", "action": "pyautogui.hotkey('ctrl', 's')",
     "response": "Save.", "reward": 0, "done": False, "info": {}, "screenshot_file": "step_4_20240401@101540.png"},
    {"step_num": 5, "action_timestamp": "20240401@101550", "action": "pyautogui.scroll(-5, x=480, y=270)",
     "response": "Scroll down.", "reward": 0, "done": False, "info": {}, "screenshot_file": "step_5_20240401@101550.png"},
    {"step_num": 6, "action_timestamp": "20240401@101600", "action": "DONE", "response": "Done.",
     "reward": 0, "done": True, "info": {"done": True}, "screenshot_file": "step_6_20240401@101600.png"},
]


def make_result(root, lines=LINES, extra_lines=(), score="1.0", skip_png=()):
    d = root / "pyautogui" / "screenshot" / "some-model" / "os" / "94d95f96-9699-4208-98ba-3c3119edf9c2"
    d.mkdir(parents=True)
    text = "\n".join(json.dumps(l) for l in lines) + "\n" + "".join(l + "\n" for l in extra_lines)
    (d / "traj.jsonl").write_text(text)
    for l in lines:
        if isinstance(l["screenshot_file"], str) and l["screenshot_file"] not in skip_png:
            (d / l["screenshot_file"]).write_bytes(png(1920, 1080, l["screenshot_file"].encode()))
    if score is not None:
        (d / "result.txt").write_text(score + "\n")
    return root / "pyautogui"


def test_result_dir_becomes_one_episode_with_typed_actions(tmp_path, run, query):
    result = run("ingest-ubuntu", [make_result(tmp_path)])
    assert result.status == "success" and result.episodes == 1 and result.steps == 7 and result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    a = [s["action"] for s in steps]
    assert (a[0]["kind"], a[0]["x"], a[0]["y"]) == ("click", 0.5, 0.5)  # 960,540 on a 1920x1080 screen
    assert a[0]["raw"] == "pyautogui.click(960, 540)"
    assert (a[1]["kind"], a[1]["text"]) == ("type", "gedit")
    assert (a[2]["kind"], a[2]["keys"]) == ("key", ["enter"])
    assert a[3]["kind"] == "drag" and (a[3]["x"], a[3]["y"]) == (100 / 1920, 200 / 1080)
    assert (a[3]["x2"], a[3]["y2"], a[3]["duration_s"]) == (1.0, 1.0, 0.5)
    assert (a[4]["kind"], a[4]["keys"]) == ("hotkey", ["ctrl", "s"])
    assert (a[5]["kind"], a[5]["direction"], a[5]["x"], a[5]["y"]) == ("scroll", "down", 0.25, 0.25)
    assert a[6]["kind"] == "done"
    for act in a:
        assert all(v is None or 0.0 <= v <= 1.0 for v in (act["x"], act["y"], act["x2"], act["y2"]))
    # the screenshot after action t is the observation before action t+1; none exists before the first
    assert steps[0]["observation"]["kind"] == "none"
    obs1 = steps[1]["observation"]
    assert obs1["kind"] == "screen" and obs1["screenshot"].startswith("sha256:")
    assert (obs1["width"], obs1["height"]) == (1920, 1080)
    blob = query(f"SELECT media_type FROM blobs WHERE sha256 = '{obs1['screenshot'][7:]}'")[0]
    assert blob["media_type"] == "image/png"
    assert steps[-1]["final_observation"]["screenshot"].startswith("sha256:")
    # the agent's response once per turn (turn 2 holds two actions)
    assert [s["reasoning"] is not None for s in steps] == [True, True, False, True, True, True, True]
    assert all(s["timestamp"] is None for s in steps)  # host local time, zone unknown
    assert steps[-1]["is_terminal"] and [s["is_first"] for s in steps].count(True) == 1
    ep = query("SELECT * FROM episodes")[0]
    assert (ep["platform"], ep["domain"], ep["outcome"], ep["reward"]) == ("ubuntu", "os", "success", 1.0)
    env = json.loads(ep["env"])
    assert env["local_time_first"] == "20240401@101500" and env["osworld_domain"] == "os"
    assert env["example_id"] == "94d95f96-9699-4208-98ba-3c3119edf9c2"


def test_the_harness_files_the_reader_leaves_are_listed_as_its_run_s_unread_files(tmp_path, run, query):
    root = make_result(tmp_path)
    folder = next(root.rglob("traj.jsonl")).parent
    (folder / "recording.mp4").write_bytes(b"\0\0\0\x18ftypmp42")
    (folder / "runtime.log").write_text("[INFO] step 1\n")
    (folder / "instruction.txt").write_text("Rename the file")  # read: the task
    (folder / "step_1_draw.png").write_bytes(png(8, 8, b"drawn"))  # OS-Symphony's drawing of the model's points
    (folder / "notes.md").write_text("an agent's own notes")
    result = run("ingest-ubuntu", [root], stages=["ingest"])
    assert result.status == "success" and result.episodes == 1
    part = f"part of the osworld run {folder.name}, which does not read it: "
    assert {r["path"].rsplit("/", 1)[1]: r["reason"][len(part):] for r in query(
        "SELECT path, reason FROM ignored_inputs")} == {
        "recording.mp4": "the harness's screen recording of the run (the screenshots of its steps are read)",
        "runtime.log": "the runner's log of the run (its messages; the steps are read from traj.jsonl)",
        "step_1_draw.png": "the screenshot with the model's points drawn on it (OS-Symphony), not the screen the "
                           "agent saw",
        "notes.md": "the reader reads traj.jsonl, result.txt, instruction.txt, time.txt, messages.json and the "
                    "screenshots"}


def test_garbage_and_error_lines_are_quarantined_episode_still_ingested(tmp_path, run, query):
    lines = LINES[:3]
    extra = ["this is not json", '["a", "list"]', json.dumps({"Error": "Time limit exceeded in os/94d95f96"})]
    result = run("ingest-ubuntu", [make_result(tmp_path, lines=lines, extra_lines=extra, score="0.0")])
    assert result.episodes == 1 and result.steps == 3 and result.quarantined == 3
    rows = query("SELECT rule, line, reason FROM quarantine ORDER BY line")
    assert [(r["rule"], r["line"]) for r in rows] == [("parse_error", 4), ("bad_record", 5), ("run_error", 6)]
    assert rows[2]["reason"] == "traj.jsonl line 6: the run reported an error: Time limit exceeded in os/94d95f96"
    steps = query("SELECT is_last, is_terminal FROM steps ORDER BY step_index")
    assert steps[-1] == {"is_last": True, "is_terminal": False}  # crashed: truncated
    assert query("SELECT outcome FROM episodes")[0]["outcome"] == "failure"


def test_missing_screenshot_is_no_observation_and_validate_keeps_the_episode(tmp_path, run, query):
    """A screenshot the folder does not hold is a fact of the recording: the step's observation is `none`, the
    file is listed in env, no quarantine row says otherwise, and validate keeps the episode."""
    result = run("ingest-ubuntu", [make_result(tmp_path, skip_png={"step_1_20240401@101500.png"})])
    assert (result.episodes, result.steps, result.quarantined) == (1, 7, 0)
    assert query("SELECT count(*) n FROM quarantine")[0]["n"] == 0  # neither ingest nor validate
    obs = query("SELECT observation FROM steps WHERE step_index = 1")[0]["observation"]
    assert obs["kind"] == "none" and obs["screenshot"] is None
    assert query("SELECT observation FROM steps WHERE step_index = 2")[0]["observation"]["kind"] == "screen"
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert env["screenshots_missing"] == ["step_1_20240401@101500.png"] and env["screen_size"] == [1920, 1080]


def test_result_folder_without_any_png_keeps_every_action(tmp_path, run, query):
    """The issue's case: a result folder copied without its PNGs (15 actions). Ingest keeps all 15 steps and
    validate keeps the episode; without a screenshot the screen size is unknown, so x/y are null and the
    pixel coordinates stay in `raw`."""
    lines = [{"step_num": i + 1, "action_timestamp": f"20240401@1016{i:02d}",
              "action": f"pyautogui.click({100 + i}, {200 + i})", "response": f"click {i}", "reward": 0,
              "done": False, "info": {}, "screenshot_file": f"step_{i + 1}_20240401@1016{i:02d}.png"}
             for i in range(14)]
    lines.append({"step_num": 15, "action_timestamp": "20240401@101614", "action": "DONE", "response": "done",
                  "reward": 0, "done": True, "info": {"done": True}, "screenshot_file": "step_15_20240401@101614.png"})
    folder = make_result(tmp_path, lines=lines, score="0.0", skip_png={l["screenshot_file"] for l in lines})
    result = run("ingest-ubuntu", [folder])
    assert (result.status, result.episodes, result.steps, result.quarantined) == ("success", 1, 15, 0)
    steps = query("SELECT observation, action, final_observation, is_terminal FROM steps ORDER BY step_index")
    assert len(steps) == 15 and {s["observation"]["kind"] for s in steps} == {"none"}
    assert steps[0]["action"]["kind"] == "click" and steps[0]["action"]["x"] is None
    assert steps[0]["action"]["raw"] == "pyautogui.click(100, 200)" and steps[-1]["is_terminal"]
    assert steps[-1]["final_observation"] is None  # no last screenshot either
    ep = query("SELECT outcome, reward, env FROM episodes")[0]
    assert (ep["outcome"], ep["reward"]) == ("failure", 0.0)
    assert len(json.loads(ep["env"])["screenshots_missing"]) == 15
    assert query("SELECT count(*) n FROM quarantine")[0]["n"] == 0


def test_a_screenshot_file_that_is_not_a_name_is_quarantined_and_the_step_kept(tmp_path, run, query):
    lines = [LINES[0], dict(LINES[1], screenshot_file={"path": "x.png"}), LINES[2]]
    result = run("ingest-ubuntu", [make_result(tmp_path, lines=lines)], stages=["ingest"])
    assert (result.steps, result.quarantined) == (3, 1)
    row = query("SELECT rule, line, reason FROM quarantine")[0]
    assert (row["rule"], row["line"]) == ("bad_record", 2) and "screenshot_file is a dict" in row["reason"]
    assert query("SELECT observation FROM steps WHERE step_index = 2")[0]["observation"]["kind"] == "none"


@pytest.mark.parametrize("code, kind, fields", [
    ("pyautogui.doubleClick(x=192, y=108)", "double_click", {"x": 0.1, "y": 0.1}),
    ("pyautogui.click(1920, 0, button='right')", "right_click", {"x": 1.0, "y": 0.0}),
    ("pyautogui.rightClick(3000, 540)", "right_click", {"x": 1.0}),  # off-screen clamps to the edge
    ("pyautogui.write('hi')", "type", {"text": "hi"}),
    ("pyautogui.press(['tab', 'tab'])", "key", {"keys": ["tab", "tab"]}),
    ("pyautogui.hscroll(3)", "scroll", {"direction": "right"}),
    ("pyautogui.moveTo(960, 270, duration=0.2)", "move", {"x": 0.5, "y": 0.25, "duration_s": 0.2}),  # a hover
    ("pyautogui.moveTo(960, 270)\npyautogui.click()", "code", {"x": 0.5, "y": 0.25}),
    ("import time\npyautogui.click(0, 0)\ntime.sleep(0.5)", "click", {"x": 0.0, "y": 0.0}),
    ("for i in range(3):\n    pyautogui.press('down')", "code", {}),
    ("pyautogui.click(x, y)", "code", {}),  # names, not literals: never evaluated
])
def test_pyautogui_calls_to_typed_actions(code, kind, fields):
    action = to_action(code, (1920, 1080))
    assert action.kind == kind and action.raw == code
    for key, value in fields.items():
        assert getattr(action, key) == value
