"""OSWorld result folders built as agents' own runners write them, beside the harness's traj.jsonl, result.txt
and screenshots: the task from `instruction.txt` (or a header line), the run's seconds from `time.txt`, Agent S's
plan as the reasoning, each line's own fields kept raw in `env.agent_fields` (a field no known runner writes with
a warning), an error line with its exception, and the files of the folder the reader does not read, each named
with why.

The writers (each folder below is built line for line as the quoted code writes it):
- simular-ai/Agent-S @ 5caa76cb19c6a6b947a524f74995c45848c2efbc, `osworld_setup/s3/lib_run_single.py`
  (`osworld_setup/s2_5/lib_run_single.py` alike, without `ensure_ascii=False`):
      with open(os.path.join(example_result_dir, f"step_0.png"), "wb") as _f: _f.write(obs["screenshot"])
      with open(os.path.join(example_result_dir, "instruction.txt"), "w", encoding="utf-8") as f: f.write(instruction)
      response.update({"step_num": step_idx + 1, "action_timestamp": action_timestamp, "action": action,
                       "reward": reward, "done": done, "info": info,
                       "screenshot_file": f"step_{step_idx + 1}_{action_timestamp}.png"})
      f.write(json.dumps(response, ensure_ascii=False))
  where `response` is the worker's `executor_info` (`gui_agents/s3/agents/worker.py`: `plan`, `plan_code`,
  `exec_code`, `reflection`, `reflection_thoughts`, `code_agent_output`; `gui_agents/s2_5/agents/worker.py`:
  `full_plan`, `executor_plan`, `plan_thoughts`, `plan_code`, `reflection`, `reflection_thoughts`), `runtime.log`
  from `setup_logger`, and S3's Behavior Best-of-N `osworld_setup/s3/bbon/generate_facts.py` writes
  `fact_captions.jsonl` into the same folder after the run.
- ljxpython/OSWorldUse @ 0142938e760491783a44d432778b338eba54e138, `lib_run_single.py` (a fork carrying OSWorld's
  runner variants):
  `run_single_example_human`: `f.write(json.dumps({"instruction": instruction, "initial_state": "initial_state.png"}))`
  beside `initial_state.png` and `result.txt`;
  `run_single_example_os_symphony`: lines `{"instruction", "step_num", "action", "response", "done", "info",
  "screenshot_file": img_name}`, each again in `traj_{step_idx+1}.json`, `step_{n}_draw.png`, and
  `f.write(f"{end_time-start_time:.2f}\\n")` to `time.txt`;
  `run_single_example_gpt54`: `"response": response.get("response", ""), "state_correct": ..., "model_usage": ...,
  "messages": ...` beside the harness's fields;
  `run_single_example_mobileagent_v3`: `"step_status": step_status` (no screenshot written when it is False);
  its `mm_agents/openai_cua_agent.py` @ f6cee715783b2b2c6f38d460a6dbab90495d238a gives each action as
  `{"action_space": "pyautogui", "action": result_code, "pending_checks": item.pending_safety_checks,
  "call_id": item.call_id}` (the runner deletes a non-empty `pending_checks`) and `"messages": self.cua_messages`,
  the whole conversation so far, on every line.
- fxsc03/OSWorld-main-nex @ cfe2c9ba11f8294749f51d06b2c77553759cdc1e, `lib_run_single.py`:
  `run_single_example_opencua` writes `f"step_{step_idx + 1}.png"` but logs
  `"screenshot_file": f"step_{step_idx + 1}_{action_timestamp}.png"`; `run_single_example_hybrid` executes
  `"MCP:<tool_name>:<json_params>"` actions through the VM's MCP server and logs
  `info = {"mcp_tool": tool_name, "mcp_result": exe_result_str}`.
"""

import hashlib
import json

import pytest

from ingest.pyautogui_code import to_action
from ingest.ubuntu import osworld
from ingest.ubuntu.osworld_agents import move_then_click
from schemas.v1 import ENV_WARNINGS
from tests.ingest.ubuntu.test_osworld import png
from tests.ingest.ubuntu.test_osworld_read import _read

EXAMPLE = "3ef2b351-8a84-4ff2-8724-d86eae9b842e"
TASK = "Could you help me save this document as a PDF on the Desktop?"
S3_CLICK = "import pyautogui; import pyautogui; pyautogui.click(960, 540, clicks=1, button='left'); "


def _folder(tmp_path, lines, pngs=(), files=None, ascii_only=True):
    folder = tmp_path / "pyautogui" / "screenshot" / "agent-s3" / "libreoffice_writer" / EXAMPLE
    folder.mkdir(parents=True)
    (folder / "traj.jsonl").write_text("".join(json.dumps(line, ensure_ascii=ascii_only) + "\n" for line in lines),
                                       encoding="utf-8")
    for name in pngs:
        (folder / name).write_bytes(png(1920, 1080, name.encode()))
    for name, data in (files or {}).items():
        (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return folder


def _s3_line(n, stamp, action, plan, plan_code, exec_code, done=False, info=None):
    executor_info = {"plan": plan, "plan_code": plan_code, "exec_code": exec_code, "reflection": None,
                     "reflection_thoughts": None, "code_agent_output": None}
    if n > 1:
        executor_info["reflection"] = "The previous action opened the File menu as intended."
    executor_info.update({"step_num": n, "action_timestamp": stamp, "action": action, "reward": 0, "done": done,
                          "info": info or {}, "screenshot_file": f"step_{n}_{stamp}.png"})
    return executor_info


def _uri(folder):
    return "/".join(folder.parts[-5:])


def test_an_agent_s3_folder_gives_its_task_plans_and_initial_screen(tmp_path):
    lines = [
        _s3_line(1, "20251020@101500", S3_CLICK, "(Grounded Action)\n```python\nagent.click(\"File menu\", 1, "
                 "\"left\")\n```", "agent.click(\"File menu\", 1, \"left\")", S3_CLICK),
        _s3_line(2, "20251020@101510", "import time; time.sleep(1.333)", "Wait for the dialog.",
                 "agent.wait(1.333)", "import time; time.sleep(1.333)"),
        _s3_line(3, "20251020@101520", "DONE", "The PDF is saved.", "agent.done()", "DONE", done=True,
                 info={"done": True}),
    ]
    folder = _folder(tmp_path, lines, ["step_0.png"] + [line["screenshot_file"] for line in lines],
                     {"instruction.txt": TASK, "result.txt": "1.0\n", "runtime.log": "PLAN:\n ...\n",
                      "fact_captions.jsonl": json.dumps({"fact_answer": "A menu opened.", "screenshot_num": 1})},
                     ascii_only=False)
    ep, rows = _read(folder, uri=_uri(folder))
    assert rows == [] and ep.task == TASK and (ep.outcome, ep.reward, ep.terminated) == ("success", 1.0, True)
    assert [s.action.kind for s in ep.steps] == ["click", "wait", "done"] and ep.steps[1].action.duration_s == 1.333
    assert ep.steps[0].observation.kind == "screen" and ep.env["initial_screenshot"] == "step_0.png"
    assert [s.reasoning for s in ep.steps] == [lines[0]["plan"], "Wait for the dialog.", "The PDF is saved."]
    # exec_code is the action the runner executed: not kept twice; the flag info of DONE restates `done`
    assert ep.env["agent_fields"][0] == {"step": 0, "line": 1, "fields": {
        "plan": lines[0]["plan"], "plan_code": "agent.click(\"File menu\", 1, \"left\")", "reflection": None,
        "reflection_thoughts": None, "code_agent_output": None}}
    assert ep.env["agent_fields"][2]["fields"]["reflection"] == "The previous action opened the File menu as intended."
    assert ENV_WARNINGS not in ep.env and "instruction_txt" not in ep.env


def test_an_agent_s2_5_line_gives_its_full_plan_as_the_reasoning(tmp_path):
    info = {"full_plan": "<thoughts>look</thoughts>Click Save.", "executor_plan": "Click Save.",
            "plan_thoughts": "look", "plan_code": "agent.click(\"Save\", 1, \"left\")", "reflection": None,
            "reflection_thoughts": None}
    line = {**info, "step_num": 1, "action_timestamp": "20250601@090000", "action": S3_CLICK, "reward": 0,
            "done": False, "info": {}, "screenshot_file": "step_1_20250601@090000.png"}
    folder = _folder(tmp_path, [line], ["step_0.png", line["screenshot_file"]],
                     {"instruction.txt": TASK, "recording.mp4": b"\0\0\0\x18ftypmp42"})
    ep, rows = _read(folder)
    assert rows == [] and ep.task == TASK and ep.steps[0].reasoning == info["full_plan"]
    assert ep.env["agent_fields"] == [{"step": 0, "line": 1, "fields": info}] and ENV_WARNINGS not in ep.env


def test_a_line_instruction_wins_and_a_differing_instruction_txt_is_kept(tmp_path):
    """OS-Symphony's lines name the task; its folder also holds time.txt and each line again as traj_<n>.json."""
    line = {"instruction": TASK, "step_num": 1, "action": "pyautogui.press('enter')",
            "response": {"plan": "press enter"}, "done": False, "info": {}, "screenshot_file": "step_1.png"}
    folder = _folder(tmp_path, [line], ["step_1.png", "step_1_draw.png"],
                     {"instruction.txt": "Save as PDF", "time.txt": "412.37\n", "traj_1.json": json.dumps(line)})
    ep, rows = _read(folder)
    assert rows == [] and ep.task == TASK and ep.env["instruction_txt"] == "Save as PDF"
    assert ep.env["run_seconds"] == 412.37


def test_a_time_txt_that_is_no_number_is_a_row(tmp_path):
    folder = _folder(tmp_path, [], files={"time.txt": "soon\n"})
    _, rows = _read(folder)
    assert [(r.rule, r.location) for r in rows] == [("parse_error", "time.txt")]


def test_a_human_run_header_gives_the_task_and_the_initial_screen(tmp_path):
    folder = _folder(tmp_path, [{"instruction": TASK, "initial_state": "initial_state.png"}], ["initial_state.png"],
                     {"result.txt": "0.0\n"})
    ep, rows = _read(folder)
    assert rows == [] and ep.task == TASK and ep.steps == [] and (ep.outcome, ep.reward) == ("failure", 0.0)
    assert ep.env["initial_screenshot"] == "initial_state.png"


def test_known_runner_fields_are_kept_and_an_unknown_one_is_warned(tmp_path):
    gpt54 = {"step_num": 1, "action_timestamp": "20260301@120000", "response": "Clicking OK.", "state_correct": True,
             "model_usage": {"input_tokens": 1200}, "messages": [], "action": "pyautogui.click(10, 10)",
             "reward": 0, "done": False, "info": {"controller_result": {"returncode": 0}},
             "screenshot_file": "step_1_20260301@120000.png"}
    mobile = {"step_num": 2, "step_status": False, "action_timestamp": "20260301@120010",
              "action": "pyautogui.press('esc')", "reward": None, "done": True,
              "screenshot_file": "step_2_20260301@120010.png", "confidence": 0.4}
    folder = _folder(tmp_path, [gpt54, mobile], [gpt54["screenshot_file"]])  # step_status False: no screenshot
    ep, rows = _read(folder)
    assert rows == [] and ep.steps[0].reasoning == "Clicking OK."
    assert ep.env["agent_fields"] == [
        {"step": 0, "line": 1, "fields": {"state_correct": True, "model_usage": {"input_tokens": 1200},
                                          "messages": [], "info": {"controller_result": {"returncode": 0}}}},
        {"step": 1, "line": 2, "fields": {"step_status": False, "confidence": 0.4}}]
    assert ep.env[ENV_WARNINGS] == [{"rule": "osworld.unknown_field", "reason": (
        "traj.jsonl: confidence is not a field of OSWorld's harness or of a known agent's runner; kept raw in "
        "env.agent_fields")}]
    assert ep.env["screenshots_missing"] == ["step_2_20260301@120010.png"]


def test_an_error_line_with_its_exception_is_a_run_error(tmp_path):
    """A runner's crash line (an Android harness's run script, written as OSWorld's): `{"Error": f"Exception in
    {domain}/{example_id}", "Exception": str(e), "Traceback": error_traceback}`."""
    line = {"step_num": 1, "action_timestamp": "20250101@100000", "action": "pyautogui.click(1, 1)", "reward": 0,
            "done": False, "info": {}, "screenshot_file": "step_1_20250101@100000.png"}
    crash = {"Error": "Exception in os/x", "Exception": "VM unreachable", "Traceback": "Traceback ..."}
    ep, rows = _read(_folder(tmp_path, [line, crash], [line["screenshot_file"]]))
    assert [(r.rule, r.line) for r in rows] == [("run_error", 2)] and "VM unreachable" in rows[0].reason
    assert len(ep.steps) == 1 and not ep.terminated


def test_members_name_each_runner_file_with_why():
    root = f"r/{EXAMPLE}"
    names = ["fact_captions.jsonl", "instruction.txt", "logs/task-0.log", "recording.mp4", "result.txt",
             "runtime.log", "step_0.png", "step_1.png", "step_1_draw.png", "time.txt", "traj.html", "traj.jsonl",
             "traj_1.json"]
    files = sorted(f"{root}/{n}" for n in names)
    unread = {path.rsplit(f"{root}/", 1)[1]: why for path, why in osworld.members([root], files, None)[root]}
    assert sorted(unread) == ["fact_captions.jsonl", "logs/task-0.log", "recording.mp4", "runtime.log",
                              "step_1_draw.png", "traj.html", "traj_1.json"]
    assert unread["traj_1.json"].startswith("a copy of one traj.jsonl line")
    assert unread["fact_captions.jsonl"].startswith("Agent S3's Behavior Best-of-N judge's captions")


def test_instruction_txt_is_utf_8_and_a_blank_one_gives_no_task(tmp_path):
    ep, _ = _read(_folder(tmp_path / "a", [], files={"instruction.txt": "Übersetze den Text".encode()}))
    blank, _ = _read(_folder(tmp_path / "b", [], files={"instruction.txt": "\n"}))
    assert (ep.task, blank.task) == ("Übersetze den Text", None)


def test_os_symphony_screens_before_each_action_are_read_as_the_screens_the_actions_were_taken_on(tmp_path):
    """`img_name = f"step_{step_idx + 1}.png"` is written from `obs['screenshot']` before `env.step(action)`."""
    lines = [{"instruction": TASK, "step_num": n, "action": action, "response": {}, "done": n == 3, "info": {},
              "screenshot_file": name} for n, action, name in [
        (1, "pyautogui.click(192, 108)", "step_1.png"), (2, "pyautogui.press('enter')", "step_2_milestone.png"),
        (3, "DONE", "step_3.png")]]
    ep, rows = _read(_folder(tmp_path, lines, ["step_1.png", "step_2_milestone.png", "step_3.png",
                                               "step_1_draw.png"]))
    seen = [s.observation.screenshot for s in ep.steps]
    assert rows == [] and seen == [_blob("step_1.png"), _blob("step_2_milestone.png"), _blob("step_3.png")]
    assert ep.final_observation is None and "initial_screenshot" not in ep.env
    assert ep.env["screenshot_file_is"].startswith("before the action")


def test_a_screenshot_written_under_another_name_is_read_for_the_turns_last_line(tmp_path):
    clicks = [("pyautogui.click(10, 10)", "20250101@100000"), ("pyautogui.click(20, 20)", "20250101@100001")]
    lines = [{"step_num": 1, "action": a, "natural_language_action": "Open the menu", "action_timestamp": stamp,
              "response": "open the menu", "reward": 0, "done": False, "info": {},
              "screenshot_file": f"step_1_{stamp}.png"} for a, stamp in clicks]
    ep, rows = _read(_folder(tmp_path, lines, ["step_0.png", "step_1.png"]))
    assert rows == [] and ep.final_observation.screenshot == _blob("step_1.png")
    assert ep.steps[1].observation.kind == "none"  # the first click's screen was overwritten by the second's
    assert ep.env["screenshots_written_as"] == {"step_1_20250101@100001.png": "step_1.png"}
    assert ep.env["screenshots_missing"] == ["step_1_20250101@100000.png"]


def test_an_mcp_tool_call_line_is_a_tool_call(tmp_path):
    line = {"step_num": 1, "action": 'MCP:calc_set_cell:{"cell": "A1", "value": 3}', "action_type": "mcp",
            "parsed_action": {}, "exec_ok": True, "exec_result": {"ok": True, "result": "is_error=False"},
            "tools_available": True, "natural_language_action": None, "action_timestamp": "20250101@100000",
            "response": "Set A1.", "reward": 0.0, "done": False,
            "info": {"mcp_tool": "calc_set_cell", "mcp_result": "is_error=False"}, "screenshot_file": "step_1.png"}
    bad = {**line, "step_num": 2, "action": "MCP:calc_get:not json", "screenshot_file": "step_2.png"}
    ep, rows = _read(_folder(tmp_path, [line, bad], ["step_0.png", "step_1.png", "step_2.png"]))
    a = [s.action for s in ep.steps]
    assert rows == [] and [(x.kind, x.tool_name, json.loads(x.arguments)) for x in a] == [
        ("tool_call", "calc_set_cell", {"cell": "A1", "value": 3}), ("tool_call", "calc_get", {})]
    assert a[1].raw == "MCP:calc_get:not json" and ENV_WARNINGS not in ep.env
    assert ep.env["agent_fields"][0]["fields"]["info"] == line["info"]


def _blob(name):
    return "sha256:" + hashlib.sha256(png(1920, 1080, name.encode())).hexdigest()


def test_an_openai_computer_use_line_runs_its_pyautogui_code_and_its_conversation_is_kept_once(tmp_path):
    first = [{"role": "user", "content": [{"type": "input_text", "text": TASK}]}]
    second = first + [{"type": "computer_call", "call_id": "c1"}, {"type": "computer_call_output", "call_id": "c1"}]
    lines = [{"step_num": n, "action_timestamp": f"20260301@12000{n}", "response": "", "state_correct": True,
              "model_usage": {"model_time": 2.5, "prompt_tokens": 900, "completion_tokens": 40},
              "messages": messages, "action": {"action_space": "pyautogui", "action": code, "pending_checks": [],
                                               "call_id": f"c{n}"},
              "reward": 0, "done": False, "info": {}, "screenshot_file": f"step_{n}_20260301@12000{n}.png"}
             for n, code, messages in [
                 (1, "import pyautogui\npyautogui.moveTo(960, 270)\npyautogui.click(button='left')", first),
                 (2, "import pyautogui\npyautogui.typewrite('report.pdf')", second)]]
    ep, rows = _read(_folder(tmp_path, lines, [line["screenshot_file"] for line in lines]))
    a = [s.action for s in ep.steps]
    assert rows == [] and [x.kind for x in a] == ["click", "type"] and a[1].text == "report.pdf"
    assert (a[0].x, a[0].y) == (0.5, 0.25) and json.loads(a[0].raw)["call_id"] == "c1"
    fields = [e["fields"] for e in ep.env["agent_fields"]]
    assert fields[0]["messages"] == {"first": 1, "of_line": 2} and fields[1]["messages"] == second


@pytest.mark.parametrize("code, kind, point", [
    ("import pyautogui\npyautogui.moveTo(960, 270)\npyautogui.doubleClick()", "double_click", (0.5, 0.25)),
    ("import pyautogui\npyautogui.moveTo(480, 540)\npyautogui.click(button='right')", "right_click", (0.25, 0.5)),
    ("import pyautogui\npyautogui.moveTo(1, 1)\npyautogui.click(960, 540)", "code", (1 / 1920, 1 / 1080)),
])
def test_a_move_then_a_click_without_a_point_in_one_line_clicks_where_it_moved(code, kind, point):
    action = move_then_click(code, (1920, 1080)) or to_action(code, (1920, 1080))
    assert (action.kind, (action.x, action.y), action.raw) == (kind, point, code)


def test_every_unread_file_of_a_result_folder_is_listed_with_its_own_reason():
    root = f"r/{EXAMPLE}"
    names = ["traj.jsonl", "step_1.png", "step_1_draw.png", "traj_1.json", "logs/task-0.log", "logs/shot.png",
             "notes.md"]
    unread = {path.rsplit(f"{root}/", 1)[1]: why for path, why in osworld.members(
        [root], sorted(f"{root}/{n}" for n in names), None)[root]}
    assert unread == {
        "step_1_draw.png": "the screenshot with the model's points drawn on it (OS-Symphony), not the screen the "
                           "agent saw",
        "traj_1.json": "a copy of one traj.jsonl line (OS-Symphony's runner writes each line twice); read from "
                       "traj.jsonl",
        "logs/task-0.log": "a runner's per-task log (its messages; the steps are read from traj.jsonl)",
        # a screenshot in a subfolder is none of the folder's screens
        "logs/shot.png": "a runner's per-task log (its messages; the steps are read from traj.jsonl)",
        "notes.md": "the reader reads traj.jsonl, result.txt, instruction.txt, time.txt, messages.json and the screenshots"}


def test_an_instruction_txt_that_is_not_utf_8_still_gives_the_task(tmp_path):
    ep, rows = _read(_folder(tmp_path, [], files={"instruction.txt": "Übersetze den Text".encode("latin-1")}))
    assert rows == [] and ep.task == "\ufffdbersetze den Text"


def test_a_time_txt_that_is_no_number_is_quoted_in_its_row_cut_at_50_characters(tmp_path):
    _, rows = _read(_folder(tmp_path, [], files={"time.txt": "Traceback (most recent call last): " + "x" * 80}))
    assert [r.reason for r in rows] == [
        f"time.txt: {('Traceback (most recent call last): ' + 'x' * 80)[:50]!r} is not a number of seconds"]


@pytest.mark.parametrize("named", ["..", "../initial_state.png", "._initial_state.png"])
def test_a_header_naming_no_plain_file_of_the_folder_gives_no_initial_screen(tmp_path, named):
    """A path out of the folder, or a hidden file (`._<name>`: the resource fork a copy from macOS leaves)."""
    folder = _folder(tmp_path, [{"instruction": TASK, "initial_state": named}],
                     ["initial_state.png"] + (["._initial_state.png"] if named.startswith("._") else []))
    ep, _ = _read(folder)
    assert ep.task == TASK and "initial_screenshot" not in ep.env


def test_only_a_line_that_does_not_act_is_a_header_naming_the_initial_screen(tmp_path):
    line = {"step_num": 1, "action": "pyautogui.click(10, 10)", "action_timestamp": "20250101@100000",
            "reward": 0, "done": False, "info": {}, "screenshot_file": "step_1.png", "initial_state": "shot.png"}
    ep, _ = _read(_folder(tmp_path, [line], ["step_1.png", "shot.png"]))
    assert "initial_screenshot" not in ep.env and ep.steps[0].observation.kind == "none"


def test_unknown_fields_are_all_named_in_one_warning(tmp_path):
    line = {"step_num": 1, "action": "pyautogui.click(10, 10)", "action_timestamp": "20250101@100000",
            "reward": 0, "done": False, "info": {}, "screenshot_file": "step_1.png", "confidence": 0.4,
            "budget": 3}
    ep, _ = _read(_folder(tmp_path, [line], ["step_1.png"]))
    assert [w["reason"] for w in ep.env[ENV_WARNINGS]] == [
        "traj.jsonl: budget, confidence is not a field of OSWorld's harness or of a known agent's runner; kept raw in "
        "env.agent_fields"]


def test_a_conversation_repeated_across_lines_is_kept_once_even_when_the_last_line_logs_none(tmp_path):
    first = [{"role": "user", "content": TASK}]
    second = first + [{"role": "assistant", "content": "click"}]
    lines = [{"step_num": n, "action": f"pyautogui.click({n}, {n})", "action_timestamp": f"20250101@10000{n}",
              "reward": 0, "done": False, "info": {}, "screenshot_file": f"step_{n}.png", **extra}
             for n, extra in ((1, {"messages": first}), (2, {"messages": second}), (3, {"state_correct": True}))]
    ep, _ = _read(_folder(tmp_path, lines, [f"step_{n}.png" for n in (1, 2, 3)]))
    assert [e["fields"] for e in ep.env["agent_fields"]] == [
        {"messages": {"first": 1, "of_line": 2}}, {"messages": second}, {"state_correct": True}]


@pytest.mark.parametrize("extra", [{"instruction": TASK, "action_timestamp": "20250101@100000"}, {}],
                         ids=["task-and-harness-time", "neither"])
def test_lines_that_are_not_os_symphonys_name_the_screen_after_their_action(tmp_path, extra):
    lines = [{"step_num": n, "action": f"pyautogui.click({n}, {n})", "reward": 0, "done": False, "info": {},
              "screenshot_file": f"step_{n}.png", **extra} for n in (1, 2)]
    ep, _ = _read(_folder(tmp_path, lines, ["step_1.png", "step_2.png"]))
    assert [s.observation.kind for s in ep.steps] == ["none", "screen"]
    assert ep.steps[1].observation.screenshot == _blob("step_1.png")
    assert ep.final_observation.screenshot == _blob("step_2.png") and "screenshot_file_is" not in ep.env


def test_a_missing_screenshot_is_read_from_step_n_png_only_where_the_opencua_loop_wrote_it(tmp_path):
    """The loop names `step_<n>_<time>.png` and writes `step_<n>.png`: another missing name is not replaced by it,
    and a `step_<n>.png` it did not write leaves the screen missing."""
    other = {"step_num": 1, "action": "pyautogui.click(10, 10)", "action_timestamp": "20250101@100000",
             "reward": 0, "done": False, "info": {}, "screenshot_file": "screen_1.png"}
    ep, _ = _read(_folder(tmp_path / "a", [other], ["step_1.png"]))
    assert ep.final_observation is None and ep.env["screenshots_missing"] == ["screen_1.png"]
    assert "screenshots_written_as" not in ep.env
    opencua = {**other, "screenshot_file": "step_1_20250101@100000.png"}
    ep, _ = _read(_folder(tmp_path / "b", [opencua], ["step_0.png"]))
    assert ep.final_observation is None and "screenshots_written_as" not in ep.env
    assert ep.env["screenshots_missing"] == ["step_1_20250101@100000.png"]
