"""The OSWorld reader called directly (`osworld.read`) on result folders in lib_run_single's layout (those of
test_osworld.py, no real one is bundled) and hand-made variants: each step's action, screenshot, reward and
reasoning, the outcome, env, and the rows for bad lines, files and scores."""

import hashlib
import json

import fsspec
import pytest

from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError
from ingest.ubuntu import osworld
from tests.ingest.ubuntu.test_osworld import LINES, make_result, png

EXAMPLE = "94d95f96-9699-4208-98ba-3c3119edf9c2"


def _folder(tmp_path, **kw):
    return next(make_result(tmp_path, **kw).rglob("traj.jsonl")).parent


def _read(folder, uri=None, blobs=None):
    def put(data, media, uri):
        if blobs is not None:
            blobs.append((data, media, uri))
        return "sha256:" + hashlib.sha256(data).hexdigest()

    uri = uri or f"pyautogui/screenshot/some-model/os/{folder.name}"
    records = list(osworld.read(Source(fsspec.filesystem("file"), str(folder), uri, put)))
    eps = [r for r in records if isinstance(r, Episode)]
    assert len(eps) == 1
    return eps[0], [r for r in records if isinstance(r, Rejected)]


def test_a_result_folder(tmp_path):
    blobs = []
    ep, rows = _read(_folder(tmp_path), blobs=blobs)
    assert rows == []
    assert ep.key == "" and ep.domain == "os" and ep.platform == "ubuntu"
    assert ep.outcome == "success" and ep.reward == 1.0 and ep.terminated
    a = [s.action for s in ep.steps]
    assert [x.kind for x in a] == ["click", "type", "key", "drag", "hotkey", "scroll", "done"]
    assert (a[0].x, a[0].y, a[0].raw) == (0.5, 0.5, "pyautogui.click(960, 540)")
    assert (a[3].x, a[3].y, a[3].x2, a[3].y2) == (100 / 1920, 200 / 1080, 1.0, 1.0)
    assert (a[6].text, a[6].raw) == (None, "DONE")
    assert ep.steps[0].observation.kind == "none"
    shots = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    assert all((o.kind, o.width, o.height) == ("screen", 1920, 1080) for o in shots)
    assert [b[1] for b in blobs] == ["image/png"] * 7 and {b[2] for b in blobs} == {
        f"pyautogui/screenshot/some-model/os/{EXAMPLE}"}
    assert [o.screenshot for o in shots] == ["sha256:" + hashlib.sha256(b[0]).hexdigest() for b in blobs]
    assert [s.reasoning for s in ep.steps] == [LINES[0]["response"], LINES[1]["response"], None,
                                               *(line["response"] for line in LINES[3:])]
    assert [s.reward for s in ep.steps] == [0.0] * 7 and all(isinstance(s.reward, float) for s in ep.steps)
    assert all(s.timestamp is None for s in ep.steps)
    assert ep.env == {"os": "ubuntu", "example_id": EXAMPLE, "osworld_domain": "os", "screen_size": [1920, 1080],
                      "local_time_first": "20240401@101500", "local_time_last": "20240401@101600",
                      "action_space": "pyautogui", "observation_type": "screenshot"}
    assert ep.agent == "some-model"  # results/<action space>/<observation type>/<model>/<domain>/<example id>/


@pytest.mark.parametrize("score, outcome, reward", [("1", "success", 1.0), ("0.5", "failure", 0.5),
                                                     ("  0.0 \n", "failure", 0.0), (None, "unknown", None)])
def test_the_score(tmp_path, score, outcome, reward):
    ep, rows = _read(_folder(tmp_path, score=score))
    assert (ep.outcome, ep.reward, rows) == (outcome, reward, [])


def test_a_score_that_is_no_number_is_a_row(tmp_path):
    ep, rows = _read(_folder(tmp_path, score="n/a " + "x" * 60))
    assert [(r.rule, r.location, r.reason) for r in rows] == [
        ("parse_error", "result.txt", "result.txt: score " + repr(("n/a " + "x" * 60)[:50]) + " is not a number")]
    assert ep.outcome == "unknown" and ep.reward is None


def test_bad_and_error_lines(tmp_path):
    extra = ["this is not json", '["a", "list"]', json.dumps({"step_num": 9}), "   ",
             json.dumps({"Error": "Time limit " + "x" * 400})]
    ep, rows = _read(_folder(tmp_path, lines=LINES[:3], extra_lines=extra, score="0.0"))
    assert [(r.rule, r.line, r.location) for r in rows] == [
        ("parse_error", 4, "traj.jsonl"), ("bad_record", 5, "traj.jsonl"), ("bad_record", 6, "traj.jsonl"),
        ("run_error", 8, "traj.jsonl")]
    assert rows[0].reason.startswith("traj.jsonl line 4: invalid JSON: ") and rows[0].snippet == "this is not json"
    assert rows[1].reason == "traj.jsonl line 5: expected an object, got list" and rows[1].snippet == '["a", "list"]'
    assert rows[2].reason == "traj.jsonl line 6: no 'action'" and rows[2].snippet == '{"step_num": 9}'
    assert rows[3].reason == "traj.jsonl line 8: the run reported an error: " + ("Time limit " + "x" * 400)[:300]
    assert len(ep.steps) == 3 and not ep.terminated and ep.outcome == "failure"
    assert ep.final_observation.kind == "screen"


def test_an_error_line_with_an_action_is_a_step(tmp_path):
    lines = [LINES[0], {**LINES[6], "Error": "x"}]
    ep, rows = _read(_folder(tmp_path, lines=lines))
    assert rows == [] and len(ep.steps) == 2 and ep.terminated


@pytest.mark.parametrize("action, kind, text, raw", [
    ("WAIT", "wait", None, "WAIT"), (" FAIL ", "done", "FAIL", " FAIL "), ("DONE", "done", None, "DONE"),
    ({"action_type": "DONE"}, "done", None, '{"action_type":"DONE"}'),
    ({"command": "pyautogui.click(0, 0)", "action_type": "x"}, "click", None,
     '{"command":"pyautogui.click(0, 0)","action_type":"x"}'),
])
def test_special_and_object_actions(tmp_path, action, kind, text, raw):
    ep, rows = _read(_folder(tmp_path, lines=[{**LINES[0], "action": action}]))
    a = ep.steps[0].action
    assert rows == [] and (a.kind, a.text, a.raw) == (kind, text, raw)


@pytest.mark.parametrize("action, rule, reason", [
    (5, "bad_record", "traj.jsonl line 2: action is not code: 5"),
    ({"x": 1}, "bad_record", 'traj.jsonl line 2: action is not code: {"x":1}'),
    ("pyautogui.click(", "parse_error", "traj.jsonl line 2: action "),
])
def test_an_action_that_cannot_be_read_is_a_row_and_the_rest_kept(tmp_path, action, rule, reason):
    lines = [LINES[0], {**LINES[1], "action": action}, LINES[2]]
    ep, rows = _read(_folder(tmp_path, lines=lines))
    assert [(r.rule, r.line, r.location) for r in rows] == [(rule, 2, "traj.jsonl")]
    assert rows[0].reason.startswith(reason)
    assert [s.action.kind for s in ep.steps] == ["click", "key"]
    # the left-out line's screenshot is not seen by the next step: that one shows the screen after line 1
    folder = next(tmp_path.rglob("traj.jsonl")).parent
    after_1 = "sha256:" + hashlib.sha256((folder / LINES[0]["screenshot_file"]).read_bytes()).hexdigest()
    assert ep.steps[1].observation.screenshot == after_1


def test_screenshots_missing_or_named_wrong(tmp_path):
    lines = [LINES[0], {**LINES[1], "screenshot_file": {"path": "x.png"}},
             {**LINES[2], "screenshot_file": "../x.png"}, {**LINES[3], "screenshot_file": "a\\b.png"},
             {**LINES[4], "screenshot_file": ".hidden.png"}, {**LINES[5], "screenshot_file": ""},
             {**LINES[6], "screenshot_file": None}]
    folder = _folder(tmp_path, lines=lines, skip_png={"../x.png", "a\\b.png", ".hidden.png", ""})
    ep, rows = _read(folder)
    assert [(r.rule, r.line, r.location) for r in rows] == [
        ("bad_record", 2, "traj.jsonl"), ("bad_record", None, "../x.png"), ("bad_record", None, "a\\b.png"),
        ("bad_record", None, ".hidden.png")]
    assert rows[0].reason == ("traj.jsonl line 2: screenshot_file is a dict, not a file name; the step is kept "
                              "without it")
    assert rows[1].reason == "screenshot_file '../x.png' is not a plain file name"
    assert [s.observation.kind for s in ep.steps] == ["none", "screen"] + ["none"] * 5
    assert ep.final_observation is None and "screenshots_missing" not in ep.env


def test_missing_screenshots_are_listed(tmp_path):
    ep, rows = _read(_folder(tmp_path, skip_png={LINES[0]["screenshot_file"], LINES[6]["screenshot_file"]}))
    assert rows == [] and ep.env["screenshots_missing"] == [LINES[0]["screenshot_file"], LINES[6]["screenshot_file"]]
    assert ep.steps[1].observation.kind == "none" and ep.final_observation is None
    assert ep.env["screen_size"] == [1920, 1080]


def test_without_any_screenshot_coordinates_stay_in_raw(tmp_path):
    folder = _folder(tmp_path, skip_png={line["screenshot_file"] for line in LINES})
    ep, rows = _read(folder)
    assert rows == [] and "screen_size" not in ep.env and len(ep.env["screenshots_missing"]) == 7
    drag = ep.steps[3].action
    assert (drag.kind, drag.x, drag.y, drag.x2, drag.y2) == ("drag", None, None, None, None)
    assert ep.steps[0].action.raw == "pyautogui.click(960, 540)"


def test_a_screenshot_that_is_no_png_has_no_size(tmp_path):
    folder = _folder(tmp_path)
    (folder / LINES[0]["screenshot_file"]).write_bytes(b"not a png")
    (folder / LINES[1]["screenshot_file"]).write_bytes(png(1000, 0, b"x"))
    (folder / LINES[2]["screenshot_file"]).write_bytes(png(0, 500, b"x"))
    (folder / LINES[3]["screenshot_file"]).write_bytes(png(800, 600, b"x"))
    ep, _ = _read(folder)
    assert (ep.steps[1].observation.width, ep.steps[1].observation.height) == (None, None)
    assert ep.env["screen_size"] == [800, 600]  # the first screenshot with both sides
    assert (ep.steps[0].action.x, ep.steps[0].action.y) == (1.0, 0.9)  # 960 is off an 800-wide screen: its edge


def test_turns_timestamps_and_rewards(tmp_path):
    lines = [{**LINES[0], "step_num": None, "reward": True, "action_timestamp": 5},
             {**LINES[1], "step_num": None, "reward": "1", "response": 7},
             {**LINES[2], "step_num": 3, "reward": 1, "done": "yes"}]
    ep, _ = _read(_folder(tmp_path, lines=lines))
    assert [s.reward for s in ep.steps] == [1.0, None, 1.0]
    # without step_num each line is a turn of its own: its response is kept (a response that is no text is not)
    assert [s.reasoning for s in ep.steps] == [LINES[0]["response"], None, LINES[2]["response"]]
    lines = [{k: v for k, v in line.items() if k != "step_num"} for line in LINES[:3]]
    unnumbered, _ = _read(_folder(tmp_path / "c", lines=lines))
    assert [s.reasoning for s in unnumbered.steps] == [line["response"] for line in LINES[:3]]
    assert not ep.terminated
    assert (ep.env["local_time_first"], ep.env["local_time_last"]) == (LINES[1]["action_timestamp"],
                                                                       LINES[2]["action_timestamp"])
    lines = [{k: v for k, v in LINES[0].items() if k != "action_timestamp"}]
    ep, _ = _read(_folder(tmp_path / "b", lines=lines))
    assert "local_time_first" not in ep.env and "local_time_last" not in ep.env


def test_env_from_the_folder_path(tmp_path):
    folder = _folder(tmp_path)
    ep, _ = _read(folder, uri="abc/")
    assert ep.env["example_id"] == "abc" and "osworld_domain" not in ep.env
    ep, _ = _read(folder, uri="chrome/xyz")
    assert (ep.env["example_id"], ep.env["osworld_domain"]) == ("xyz", "chrome")


def test_an_empty_trajectory(tmp_path):
    ep, rows = _read(_folder(tmp_path, lines=[], score=None))
    assert ep.steps == [] and ep.final_observation is None and not ep.terminated and rows == []


def test_units():
    files = ["/r/a/traj.jsonl", "/r/a/x.png", "/r/b/c/traj.jsonl", "/r/d/traj.json", "/r/a/traj.jsonl"]
    assert osworld.units(files, head=None) == ["/r/a", "/r/b/c"]


def test_a_folder_without_traj_is_an_error(tmp_path):
    with pytest.raises(SourceError):
        _read(tmp_path)


def test_a_run_that_crashed_before_its_last_line_is_truncated(tmp_path):
    ep, rows = _read(_folder(tmp_path, lines=[LINES[0]], extra_lines=[json.dumps({"Error": "crash"}),
                                                                      json.dumps(LINES[6])]))
    assert [r.rule for r in rows] == ["run_error"] and [s.action.kind for s in ep.steps] == ["click", "done"]
    assert not ep.terminated


def test_snippets_and_reasons_keep_200_characters_with_bad_bytes_replaced(tmp_path):
    folder = _folder(tmp_path, lines=[LINES[0], {**LINES[1], "action": {"x": "y" * 300}}], score=None)
    pad = "\u00e9".encode() * 150  # byte 200 is the middle of an e-acute
    with open(folder / "traj.jsonl", "ab") as f:
        f.write(b"{" + pad + b"\n" + b'{"note": "' + pad + b'"}\n' + b'["' + pad + b'"]\n' + b'["x' + pad + b'"]\n'
                + b'{"n": "' + pad + b'"}\n')
    (folder / "result.txt").write_bytes(b"\xff")
    ep, rows = _read(folder)
    assert [(r.rule, r.line) for r in rows] == [("parse_error", 3), ("bad_record", 4), ("bad_record", 5),
                                                ("bad_record", 6), ("bad_record", 7), ("bad_record", 2),
                                                ("parse_error", None)]
    assert rows[0].snippet == "{" + "\u00e9" * 99 + "\ufffd"
    assert rows[1].snippet == '{"note": "' + "\u00e9" * 95
    assert rows[2].snippet == '["' + "\u00e9" * 99
    assert rows[3].snippet == '["x' + "\u00e9" * 98 + "\ufffd"  # a line that is no object, cut mid-character
    assert rows[4].snippet == '{"n": "' + "\u00e9" * 96 + "\ufffd"  # a line without an action, cut mid-character
    assert rows[5].reason == "traj.jsonl line 2: action is not code: " + json.dumps({"x": "y" * 300}, separators=(
        ",", ":"))[:200]
    assert rows[6].reason == "result.txt: score '\ufffd' is not a number"


def test_a_screenshot_name_with_a_folder_is_a_row(tmp_path):
    ep, rows = _read(_folder(tmp_path, lines=[LINES[0], {**LINES[1], "screenshot_file": "sub/x.png"}],
                             skip_png={"sub/x.png"}))
    assert [(r.rule, r.location) for r in rows] == [("bad_record", "sub/x.png")]
    assert "screenshots_missing" not in ep.env


def test_an_example_id_ending_in_x(tmp_path):
    ep, _ = _read(_folder(tmp_path), uri="chrome/abX/")
    assert ep.env["example_id"] == "abX"
