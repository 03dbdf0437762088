import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

TRAJ = SAMPLES / "macos" / "agentnet-darwin"  # trimmed to the 2 steps whose screenshots are bundled
FULL = Path(__file__).parent / "data" / "agentnet-full"  # the untrimmed 11-step trajectory, no images
NAME = "s_7f27a11115e596eb.json"


@pytest.fixture
def full_trajectory(tmp_path) -> Path:
    """The 11-step trajectory beside the 2 screenshots that exist: 9 are missing, as in the source repo."""
    d = tmp_path / "agentnet-full"
    shutil.copytree(TRAJ / "images", d / "images")
    shutil.copy(FULL / NAME, d / NAME)
    return d


def test_bundled_sample_is_clean(run, query):
    result = run("ingest-macos", [TRAJ])
    assert result.status == "success" and result.episodes == 1 and result.steps == 2 and result.quarantined == 0
    assert query("SELECT * FROM quarantine") == []
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["kind"] for s in steps] == ["click", "type"]
    assert all(s["observation"]["screenshot"] for s in steps)
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]  # trimmed before terminate: truncated
    assert query("SELECT outcome FROM episodes")[0]["outcome"] == "unknown"


def test_darwin_trajectory_ingests_with_normalized_actions(run, query, full_trajectory):
    result = run("ingest-macos", [full_trajectory], stages=["ingest"])
    assert result.status == "success" and result.episodes == 1 and result.steps == 11
    steps = query("SELECT * FROM steps ORDER BY step_index")
    first = steps[0]["action"]
    assert (first["kind"], first["x"], first["y"]) == ("click", 0.3395, 0.6307)
    assert first["raw"] == "pyautogui.click(x=0.3395, y=0.6307)"
    assert json.loads(first["element"])[0]["metadata"]["bboxes"][0]["abs_bbox"] == [281.25, 453.34, 794.05, 59.76]
    # write + press(enter) is one typed line; moveTo + scroll is a scroll at that point
    assert (steps[1]["action"]["kind"], steps[1]["action"]["text"]) == ("type", "SPOTIFY\n")
    assert steps[1]["action"]["raw"] == "pyautogui.write(message='SPOTIFY')\npyautogui.press(keys=['enter'])"
    scroll = steps[6]["action"]
    assert (scroll["kind"], scroll["direction"], scroll["x"], scroll["y"]) == ("scroll", "down", 0.4496, 0.7349)
    assert json.loads(scroll["arguments"]) == {"amount": -54}
    for s in steps:
        a = s["action"]
        assert all(v is None or 0.0 <= v <= 1.0 for v in (a["x"], a["y"], a["x2"], a["y2"]))
    assert steps[0]["reasoning"].startswith("Observation: The computer is currently displaying Google Chrome")
    assert "\nThought: To achieve the goal" in steps[0]["reasoning"]
    # the screen before each action: 2 of the 11 images were copied
    assert [s["observation"]["screenshot"] is not None for s in steps].count(True) == 2
    assert (steps[0]["observation"]["width"], steps[0]["observation"]["height"]) == (1024, 640)
    last = steps[-1]
    assert (last["action"]["kind"], last["action"]["text"]) == ("done", "success")
    assert last["is_last"] and last["is_terminal"] and all(s["timestamp"] is None for s in steps)
    ep = query("SELECT * FROM episodes")[0]
    assert (ep["platform"], ep["domain"], ep["source_format"], ep["outcome"]) == ("macos", "os", "agentnet", "success")
    assert ep["task"] == "Look for the last song of the latest Vampire Weekend album in Spotify and play this song"
    env = json.loads(ep["env"])
    assert env["step_nums"] == [0, 1, 3, 4, 5, 6, 7, 8, 10, 12, 13]  # gaps kept, step_index is contiguous
    assert env["system"] == "Darwin" and env["screen_size"] == [1024, 640]


def test_missing_screenshots_are_one_quarantine_row(run, query, full_trajectory):
    run("ingest-macos", [full_trajectory])
    rows = query("SELECT * FROM quarantine ORDER BY stage")
    # the reader reports the files once; validation then quarantines the episode with holes in it
    assert [(r["stage"], r["rule"]) for r in rows][:2] == [("ingest", "missing_file"), ("validate", "observation.empty")]
    assert rows[0]["reason"].startswith(f"{NAME}: 9 of 11 screenshots not found in images/ (s_7f27a11115e596eb_3.png")


@pytest.mark.parametrize("system, platform", [("Windows", "windows"), ("Linux", "ubuntu")])
def test_platform_comes_from_the_recording(tmp_path, run, query, system, platform):
    d = tmp_path / "macos-folder"
    shutil.copytree(TRAJ, d)
    traj = json.loads((d / NAME).read_text())
    traj["meta_info"]["system"] = system
    (d / NAME).write_text(json.dumps(traj))
    run("ingest-macos", [d])
    assert query("SELECT platform FROM episodes")[0]["platform"] == platform


def test_unknown_platform_and_bad_code_are_quarantined(tmp_path, run, query):
    d = tmp_path / "t"
    d.mkdir()
    traj = json.loads((FULL / NAME).read_text())
    no_meta = {k: v for k, v in traj.items() if k != "meta_info"}
    (d / "no_meta.json").write_text(json.dumps(no_meta))
    traj["steps"][2]["action"] = "pyautogui.click(x=0.1, y="
    (d / "bad_code.json").write_text(json.dumps(traj))
    result = run("ingest-macos", [d], stages=["ingest"])
    assert result.episodes == 1 and result.steps == 10
    rows = {r["rule"]: r["reason"] for r in query("SELECT rule, reason FROM quarantine")}
    assert rows["unknown_platform"].startswith("no_meta.json: meta_info.system is None")
    assert rows["parse_error"].startswith("bad_code.json step_num 3: not valid Python")


@pytest.mark.parametrize("edit, record, field", [
    (lambda t: t["steps"][3].update(step_num="four"), "steps[3]", "step_num: str, expected int"),
    (lambda t: t["steps"][3].update(inner_monologue="thinking"), "steps[3]", "inner_monologue: str, expected dict"),
    (lambda t: t["steps"].__setitem__(3, ["not", "a", "step"]), "steps[3]", "(the step): list, expected an object"),
])
def test_a_wrong_typed_step_is_left_out_with_its_field_and_the_rest_kept(tmp_path, run, query, edit, record, field):
    d = tmp_path / "t"
    d.mkdir()
    traj = json.loads((FULL / NAME).read_text())
    edit(traj)
    (d / NAME).write_text(json.dumps(traj))
    result = run("ingest-macos", [d], stages=["ingest"])
    assert result.status == "success" and result.episodes == 1 and result.steps == 10
    row = query("SELECT * FROM quarantine WHERE rule = 'bad_record'")[0]
    assert row["record_id"] == record and row["reason"] == f"{NAME} {record}: field {field}; the step is left out"
    assert 4 not in json.loads(query("SELECT env FROM episodes")[0]["env"])["step_nums"]  # the gap shows


def test_a_screen_size_out_of_range_keeps_the_steps_without_it(tmp_path, run, query):
    d = tmp_path / "t"
    shutil.copytree(TRAJ, d)
    traj = json.loads((d / NAME).read_text())
    traj["meta_info"]["screen_resolution"]["width"] = 1 << 40
    (d / NAME).write_text(json.dumps(traj))
    result = run("ingest-macos", [d], stages=["ingest"])
    assert result.status == "success" and result.steps == 2 and result.quarantined == 1
    assert query("SELECT record_id FROM quarantine")[0]["record_id"] == "meta_info.screen_resolution"
    assert {s["w"] for s in query("SELECT observation.width AS w FROM steps")} == {None}
