"""`history.json` runs of an AndroidWorld fork's task runner (M3A agent; replies as M3A's JSONAction or as UI-TARS
calls), read with their UI element lists, points and the run's result.

Real runs kept here (Apache-2.0): LYXFOREVER/my_android_world @ 33227453903bc3adf394ee17dee26c75767a7e3a,
`data_history/<time>/history.json`: the first in samples/android/androidworld-history (read by the demo), the second
with the tests in tests/ingest/android/data/androidworld-history-lyxforever (PROVENANCE.md in each). Counted by hand:
- 2025_04_19_23_20_05 (UI-TARS replies): 12 steps, "Record an audio clip using Audio Recorder app and save it.":
  step 0 `open_app(app_name='Audio Recorder')`, steps 1-11 `click(start_box='(500,891)')`, the summary of every
  one `Action selected: {"action_type": "click", "x": 500, "y": 891}`; `result` false; no status action. The UI
  element list is the same (14 elements, "Get started" at [356, 723, 2085, 2211]) from step 1 to step 11: no tap
  changed the screen. As thousandths of the 1080x2400 screen (500, 891) is pixel (540, 2138.4), inside "Get
  started", which the model names from step 2 on; the runner's executor (`actuation.execute_adb_action`, reached
  through `env.execute_action` from `M3A.step_for_uitars`) multiplied the numbers by the screen size: (540000,
  2138400), off the screen.
- 2025_01_08_17_21_07 (M3A JSON, gpt-4o-mini): 20 steps, "In Simple Calendar Pro, create a calendar event in two
  weeks from today at 15h ...": open_app, click index 6 ("New Event", bounds [891, 1038, 2148, 2295] -> centre
  (964.5, 2221.5)), 13 scrolls (12 with `Action selected: {"action_type": "scroll"...`, step 14 whose summary
  call failed after the scroll ran), 2 input_text, 3 more clicks; no status action: the step limit; `result` false.
"""

import json
import random
from pathlib import Path

import orjson
import pytest

from ingest.android import androidworld_history
from ingest.png import encode_png
from ingest.record import Episode, Rejected
from ingest.source import SourceError
from tests.conftest import SAMPLES
from tests.ingest import golden

RUNS = SAMPLES / "android" / "androidworld-history" / "LYXFOREVER-my_android_world" / "data_history"
UI_TARS = RUNS / "2025_04_19_23_20_05" / "history.json"
M3A_JSON = (Path(__file__).with_name("data") / "androidworld-history-lyxforever" / "data_history" / "2025_01_08_17_21_07"
            / "history.json")
GOLDEN = Path(__file__).with_name("golden") / "androidworld-history-lyxforever-ui-tars.json"
ENV_KEYS = ("harness_result", "agent_claimed_done", "evaluator_consulted", "screen_size", "screen_size_from",
            "saved_at_local", "action_forms", "point_spaces")


def _read(path, blobs=None):
    return golden.read_records(androidworld_history, path, blobs)


def _raw(step) -> dict:
    return json.loads(step.action.raw)


def test_a_ui_tars_run_whose_taps_the_executor_sent_off_the_screen():
    blobs = {}
    (ep,) = _read(UI_TARS, blobs)
    assert [s.action.kind for s in ep.steps] == ["open_app"] + ["tap"] * 11
    assert ep.steps[0].action.text == "Audio Recorder"
    assert ep.task == "Record an audio clip using Audio Recorder app and save it."
    assert (ep.outcome, ep.reward, ep.terminated) == ("failure", 0.0, False)
    assert (ep.env["agent_claimed_done"], ep.env["evaluator_consulted"], ep.env["harness_result"]) == (
        False, False, False)
    for step in ep.steps[1:]:
        raw = _raw(step)
        assert raw["action"] == {"action_type": "click", "x": 500, "y": 891}
        # where the tap went: (x * 1080, y * 2400), kept at the screen's edge and flagged
        assert (step.action.x, step.action.y, step.action.element) == (1.0, 1.0, None)
        assert raw["point"]["observation_pixel"] == [540000.0, 2138400.0] and raw["point"]["outside_screen"]
        # where the model meant it: thousandths of the screen, on the "Get started" button
        assert raw["model_point"]["observation_pixel"] == [540.0, 2138.4]
        assert raw["model_point"]["element"] == {"index": 11, "text": "Get started",
                                                 "bounds": [[356, 2085], [723, 2211]]}
        assert "outside_screen" not in raw["model_point"]
    assert "Get started" in ep.steps[2].reasoning
    assert ep.steps[1].observation.ui_tree.count('"temp_id"') == 14
    assert ep.steps[0].observation.ui_tree.count('"temp_id"') == 33
    assert '[11] View "Get started" {clickable} @[356,2085][723,2211]' in ep.steps[1].observation.text
    assert all(s.observation.screenshot is None and (s.observation.width, s.observation.height) == (1080, 2400)
               for s in ep.steps)
    assert blobs == {} and ep.env["saved_at_local"] == "2025_04_19_23_20_05"
    assert ep.env["action_forms"] == ["ui_tars"] and "thousandths" in ep.env["point_spaces"]
    assert "ingest_warnings" not in ep.env


def test_an_m3a_json_run_at_the_step_limit_as_a_person_counts_it():
    (ep,) = _read(M3A_JSON)
    kinds = [s.action.kind for s in ep.steps]
    assert len(kinds) == 20 and kinds[:2] == ["open_app", "tap"]
    assert (kinds.count("tap"), kinds.count("scroll"), kinds.count("type")) == (4, 13, 2)
    assert (ep.outcome, ep.reward, ep.terminated, ep.env["agent_claimed_done"]) == ("failure", 0.0, False, False)
    tap = ep.steps[1]
    assert json.loads(tap.action.element) == {"index": 6, "content_description": "New Event",
                                              "bounds": [[891, 2148], [1038, 2295]]}
    assert _raw(tap)["point"] == {"x": 964.5, "y": 2221.5, "space": "screen", "width": 1080, "height": 2400,
                                  "from": "centre of element 6's bounds"}
    assert (tap.action.x, tap.action.y) == (964.5 / 1080, 2221.5 / 2400)
    assert _raw(ep.steps[14])["summary"].startswith("Some error occurred calling LLM")  # ran, then summary failed
    assert ep.steps[14].action.kind == "scroll"
    assert ep.env["action_forms"] == ["m3a_json"] and "point_spaces" not in ep.env
    assert len(ep.env["summaries"]) == 20


def test_the_ui_tars_run_matches_the_golden():
    golden.check(_read(UI_TARS), GOLDEN, env_keys=ENV_KEYS)


def test_detection_claims_the_runner_files_only(tmp_path):
    other = tmp_path / "other.json"
    other.write_text('[{"task": "x", "result": false, "action_prompt": "p"}]')
    indented = tmp_path / "indented" / "history.json"
    indented.parent.mkdir()
    indented.write_bytes(b"\n  " + M3A_JSON.read_bytes())  # a writer's indent before the list
    listed = [str(tmp_path / "notes.txt"), str(UI_TARS), str(M3A_JSON), str(other), str(indented)]
    head = lambda p: Path(p).read_bytes()[:4096]  # noqa: E731
    assert androidworld_history.units(listed, head) == [str(UI_TARS), str(M3A_JSON), str(indented)]


# Edge cases, hand-made in the files' shape


def _element(index, box, text=None, clickable=True):
    desc = f'UI element {index}: {{"index": {index}, '
    if text is not None:
        desc += f'"text": "{text}", '
    desc += f'"is_clickable": {clickable}, "is_long_clickable": False, "is_editable": False, "is_selected": False, ' \
            f'"is_checked": False}}'
    return {"ui_description": desc, "ui_bbox": box}


SCREEN = [_element(0, [0, 1080, 0, 2400], clickable=False), _element(1, [100, 300, 200, 400], 'Say "hi", now')]


def _record(reply, summary, elements=SCREEN, result=False, **extra):
    return {"task_goal": "Do it.", "result": result, "action_prompt": "You are an agent ...", "action_output": reply,
            "action_reason": "because", "summary_prompt": None, "summary": summary, "ui_description": elements,
            **extra}


def _write(tmp_path, records, folder="2025_01_01_00_00_00") -> Path:
    path = tmp_path / folder / "history.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(records))
    return path


def test_edge_cases_a_broken_step_is_quarantined_by_file_record_and_field(tmp_path):
    click = 'Reason: go\nAction: {"action_type": "click", "index": 1}'
    records = [_record(click, 'Action selected: {"action_type": "click", "index": 1}. ok'),
               _record(None, "x"),
               _record(click, "y", elements="not a list"),
               _record(click, "z", elements=[{"ui_description": "a button", "ui_bbox": [0, 1, 0, 1]}]),
               _record('Reason: r\nAction: {"action_type": "click", "index": 9}', "Action selected: ..."),
               "a string"]
    out = _read(_write(tmp_path, records))
    rows = [r for r in out if isinstance(r, Rejected)]
    assert [(r.rule, r.record_id) for r in rows] == [("bad_record", str(i)) for i in range(1, 6)]
    assert all(r.reason.startswith("2025_01_01_00_00_00/history.json: step record ") for r in rows)
    assert "`action_output`" in rows[0].reason and "`ui_description` is str" in rows[1].reason
    assert "`ui_description[0]` is not `UI element N" in rows[2].reason and "element 9" in rows[3].reason
    (ep,) = [r for r in out if isinstance(r, Episode)]
    assert [s.action.kind for s in ep.steps] == ["tap"]
    view = json.loads(ep.steps[0].observation.ui_tree)[1]
    assert view["text"] == 'Say "hi", now' and view["clickable"] is True  # a text holding quotes and a comma
    assert json.loads(ep.steps[0].action.element)["text"] == 'Say "hi", now'


def test_edge_cases_the_agents_claim_and_the_result_kept_apart(tmp_path):
    done = 'Reason: finished\nAction: {"action_type": "status", "goal_status": "complete"}'
    records = [_record('Reason: r\nAction: {"action_type": "click", "index": 7}', "The parameter index is out of "
                       "range. Remember the index must be in the UI element list!"),
               _record(done, "Agent thinks the request has been completed.")]
    (ep,) = _read(_write(tmp_path, records))
    assert [s.action.kind for s in ep.steps] == ["message", "done"]  # nothing ran for the first reply
    assert (ep.outcome, ep.reward, ep.terminated) == ("failure", 0.0, True)  # done, and the evaluator said no
    assert (ep.env["agent_claimed_done"], ep.env["evaluator_consulted"]) == (True, True)
    assert [w["rule"] for w in ep.env["ingest_warnings"]] == ["not_executed"]
    (ep,) = _read(_write(tmp_path, [_record(done, "Agent thinks the request has been completed.", result=True)],
                         "b"))
    assert (ep.outcome, ep.reward) == ("success", 1.0) and "saved_at_local" not in ep.env


def test_edge_cases_ui_tars_forms_the_runner_could_not_convert_and_unknown_fields(tmp_path):
    records = [_record("Thought: t\nAction: scroll(direction='left')", "Can not parse the output to a valid action."),
               _record("Thought: t\nAction: scroll(start_box='(500,500)', direction='down')",
                       'Action selected: {"action_type": "scroll", "direction": "down", "x": 500, "y": 500}. s',
                       step_time="12:00"),
               _record("Thought: t\nAction: long_press(start_box='(185,125)')", "Action selected: ...")]
    (ep,) = _read(_write(tmp_path, records))
    assert [s.action.kind for s in ep.steps] == ["message", "scroll", "long_press"]
    scroll = ep.steps[1]
    assert (scroll.action.x, scroll.action.direction) == (None, "down")  # the executor scrolls the whole screen
    assert _raw(scroll)["model_point"]["observation_pixel"] == [540.0, 1200.0]
    assert _raw(scroll)["fields"] == {"step_time": "12:00"}
    press = _raw(ep.steps[2])
    assert press["model_point"]["element"]["index"] == 1 and press["point"]["outside_screen"] is True
    assert {w["rule"] for w in ep.env["ingest_warnings"]} == {"not_executed", "unknown_field"}


def test_edge_cases_screenshots_beside_the_file_and_a_file_that_is_not_a_list(tmp_path):
    path = _write(tmp_path, [_record('Reason: r\nAction: {"action_type": "navigate_back"}', "Action selected: b")])
    (path.parent / "0_raw.png").write_bytes(encode_png(bytes(2 * 4 * 3), 2, 4, 3))
    (path.parent / "0_som.png").write_bytes(encode_png(bytes([9]) * (2 * 4 * 3), 2, 4, 3))
    blobs = {}
    (ep,) = _read(path, blobs)
    assert ep.steps[0].observation.screenshot in blobs and len(blobs) == 1
    listed = [str(path), str(path.parent / "0_raw.png"), str(path.parent / "0_som.png")]
    (members,) = androidworld_history.members([str(path)], listed, None).values()
    assert members[0] == str(path.parent / "0_raw.png") and members[1][0] == str(path.parent / "0_som.png")
    assert members[1][1] == "the step's screenshot with the agent's element marks drawn on it; the raw one is read"
    bad = _write(tmp_path, {"task_goal": "x"}, "c")
    with pytest.raises(SourceError) as e:
        _read(bad)
    assert e.value.rule == "bad_record" and "c/history.json" in str(e.value)


def test_the_real_runs_every_field_points_raw_and_env():
    """Every field of the two real runs (`golden.whole`): the executed and the intended points, the raw reply and
    summary, the harness's env, the element each action names."""
    golden.check_whole(_read(UI_TARS), GOLDEN.with_name("androidworld-history-lyxforever-ui-tars-whole.json"))
    golden.check_whole(_read(M3A_JSON), GOLDEN.with_name("androidworld-history-lyxforever-m3a-json-whole.json"))


def _box_element(index, box, **fields):
    """An element description with the given fields (values written as the runner's `str(dict)` of JSON)."""
    body = "".join(f', "{k}": {v if isinstance(v, bool) else json.dumps(v)}' for k, v in fields.items())
    return {"ui_description": f'UI element {index}: {{"index": {index}{body}}}', "ui_bbox": box}


def test_edge_cases_every_field_of_replies_elements_and_points(tmp_path):
    """Hand-made: replies each form of which the runner reads differently, elements at the edges of their
    description, and UI-TARS points on the edges of elements, where smaller and equal elements overlap."""
    root = _box_element(0, [0, 1000, 0, 1000], is_clickable=False)
    small = _box_element(1, [800, 900, 800, 900], text="small", is_clickable=True)
    medium = _box_element(2, [700, 1000, 700, 1000], text="", hint_text="hint", tooltip="tip", is_clickable=True)
    twin = _box_element(3, [100, 300, 200, 400], content_description="twin a")
    twin_b = _box_element(4, [100, 300, 200, 400], content_description="twin b")
    unbound = {"ui_description": 'UI element 5: {"index": 5, "text": "no box"}'}
    screen = [root, small, medium, twin, twin_b, unbound]
    nested = [root, medium, small]  # the larger listed first
    quoting = {"ui_description": 'UI element 0: {"index": 0, "text": "a, "is_checked": False", "is_clickable": True}',
               "ui_bbox": [0, 1000, 0, 1000]}  # a text holding the next key's form

    def tars(call):
        return _record(f"Thought: t\nAction: {call}", "Action selected: ...", elements=screen)

    records = [
        tars("click(start_box='(850,850)')"),  # inside small, which lies in medium: the smallest
        _record("Thought: t\nAction: click(start_box='(850,850)')", "Action selected: ...", elements=nested),
        _record("Thought: t\nAction: press_back()", "Action selected: ...", elements=[quoting]),
        _record("Thought: t\nAction: wave()", "Can not parse the output to a valid action.", elements=screen,
                step_time="12:00", seen_by="x"),
        tars("click(start_box='(100,250)')"), tars("click(start_box='(300,250)')"),  # x on the twins' edges
        tars("click(start_box='(200,200)')"), tars("click(start_box='(200,400)')"),  # y on their edges
        _record("Thought: t\nAction: click(start_box='(50,50)')", "Action selected: ...", elements=[small]),  # none
        _record("Thought: I will not press_back() now\nAction: press_home()", "Action selected: ...", elements=screen),
        _record("Thought: the Action: click(start_box='(1,1)') failed\nAction: press_back() then open_app("
                "app_name='Clock')", "Action selected: ...", elements=screen),
        _record('Reason: r\nAction: {"index": 1}', "Action selected: ...", elements=screen),  # no action type
        _record('Reason: r\nAction: {"action_type": "fly"}', "Action selected: ...", elements=screen),
        _record('Reason: r\nAction: {"action_type": "click", "index": 5}', "Action selected: ...",
                elements=screen, action_reason=""),  # an element without bounds
        _record('Reason: r\nAction: {"action_type": "navigate_back"}', "Action selected: ...", elements=[],
                task_goal="Another goal.", result=True),
    ]
    golden.check_whole(_read(_write(tmp_path, records)),
                       GOLDEN.with_name("androidworld-history-edge-replies-points-whole.json"))


def test_edge_cases_elements_the_runner_never_writes_are_quarantined_by_step(tmp_path):
    good = _box_element(0, [0, 100, 0, 100], is_clickable=True)
    back = 'Reason: r\nAction: {"action_type": "navigate_back"}'
    broken = [["a string"], [{"ui_description": 'UI element 1: {"index": 2}'}],
              [_box_element(0, [1, 2, 3])], [_box_element(0, ["a", 1, 2, 3])],
              [_box_element(0, [0, 1, 0, 1], is_clickable="yes")],
              [{"ui_description": 'UI element 0: {"index": 0, "text": "abc, "is_clickable": True}', "ui_bbox": None}],
              [{"ui_description": 'UI element 0: {"index": 0, "text": x", "is_clickable": True}', "ui_bbox": None}],
              [{"ui_description": 'UI element 0: {"index": 0, "text": ", "is_clickable": True}', "ui_bbox": None}],
              [{"ui_description": 'UI element 0: {"index": 0, "colour": "red", "shade": "a long description of '
                                  'the colour"}', "ui_bbox": None}],
              [{"ui_description": 'UI element 1: {"index": 2, "text": "a text long enough to be cut in the reason"}',
                "ui_bbox": None}],
              [{"ui_description": 'UI element 0: {"index": 0, "hint_text": , "tooltip": "x"}', "ui_bbox": None}]]
    records = [_record(back, "s", elements=[good])] + [_record(back, "s", elements=e) for e in broken] + [
        _record(42, "s"), 7]
    golden.check_whole(_read(_write(tmp_path, records)),
                       GOLDEN.with_name("androidworld-history-edge-broken-elements-whole.json"))


def test_edge_cases_a_run_with_no_usable_step_keeps_its_result_and_goal(tmp_path):
    (row,) = _read(_write(tmp_path, [7, "x"]))[2:]
    assert row.rule == "empty_episode" and json.loads(row.snippet) == {"outcome": "unknown", "reward": None,
                                                                       "agent": "m3a"}
    rows = _read(_write(tmp_path, [_record(None, "s", result=True), _record(None, "s", result=True,
                                                                            task_goal="Later.")], "b"))
    assert [r.rule for r in rows] == ["bad_record", "bad_record", "empty_episode"]
    assert rows[2].location == "b/history.json" and rows[2].reason.startswith("b/history.json: no usable step")
    assert json.loads(rows[2].snippet) == {"outcome": "success", "reward": 1.0, "task": "Do it.", "agent": "m3a"}


def test_edge_cases_conflicting_results_and_goals_and_no_bounds_anywhere(tmp_path):
    back = 'Reason: r\nAction: {"action_type": "navigate_back"}'
    flat = [_box_element(0, [0, 1000, 0, 0])]  # no height: no screen size
    records = [_record(back, "s", elements=flat, result=True), _record(back, "s", elements=flat, task_goal="Other."),
               {k: v for k, v in _record(back, "s", elements=flat, result=True).items() if k != "task_goal"}]
    (ep,) = _read(_write(tmp_path, records))
    assert (ep.outcome, ep.reward, ep.task) == ("unknown", None, "Do it.")
    assert [w["rule"] for w in ep.env["ingest_warnings"]] == ["conflicting_result", "conflicting_goal"]
    assert "screen_size" not in ep.env and "screen_size_from" not in ep.env and ep.steps[0].observation.width is None
    (ep,) = _read(_write(tmp_path, [{k: v for k, v in records[0].items() if k != "task_goal"}], "b"))
    assert ep.task is None and ep.outcome == "success"


def test_edge_cases_a_screenshot_past_the_budget_and_files_beside_that_are_no_steps(tmp_path):
    import fsspec

    from ingest.source import Budgets, Source

    path = _write(tmp_path, [_record('Reason: r\nAction: {"action_type": "navigate_back"}', "s"),
                             _record('Reason: r\nAction: {"action_type": "navigate_home"}', "s")])
    (path.parent / "00_notes.txt").write_text("not a screenshot")
    (path.parent / "0_raw.png").write_bytes(encode_png(random.Random(0).randbytes(64 * 64 * 3), 64, 64, 3))
    (path.parent / "1_raw.png").write_bytes(encode_png(bytes(2 * 4 * 3), 2, 4, 3))
    (path.parent / "1_som.png").write_bytes(encode_png(bytes([9]) * (2 * 4 * 3), 2, 4, 3))
    (path.parent / "7_raw.png").write_bytes(encode_png(bytes(2 * 4 * 3), 2, 4, 3))
    blobs = {}
    source = Source(fsspec.filesystem("file"), str(path), path.name,
                    lambda data, media, uri: blobs.setdefault(f"{media} {uri} {len(data)}", data) and
                    f"{media} {uri} {len(data)}", budgets=Budgets(file_bytes=path.stat().st_size + 200))
    out = list(androidworld_history.read(source))
    (row,) = [r for r in out if isinstance(r, Rejected)]
    assert (row.rule, row.location) == ("file_too_large", "0_raw.png")
    assert row.reason.endswith("; step 0 is kept without its screenshot")
    (ep,) = [r for r in out if isinstance(r, Episode)]
    raw_size = (path.parent / "1_raw.png").stat().st_size
    assert [s.observation.screenshot for s in ep.steps] == [None, f"image/png history.json {raw_size}"]
    assert ep.steps[1].observation.kind == "screen"
    assert androidworld_history.members([str(path)], [str(path)], None) == {}


def test_a_file_that_is_not_json_or_over_the_record_budget_is_refused_naming_it(tmp_path):
    import fsspec

    from ingest.source import Budgets, Source

    path = _write(tmp_path, [_record('Reason: r\nAction: {"action_type": "navigate_back"}', "s")])
    source = Source(fsspec.filesystem("file"), str(path), path.name, None,
                    budgets=Budgets(record_bytes=path.stat().st_size - 1))
    with pytest.raises(SourceError) as e:
        list(androidworld_history.read(source))
    assert e.value.rule == "budget_exceeded" and "2025_01_01_00_00_00/history.json" in str(e.value)
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(SourceError) as e:
        _read(path)
    assert e.value.rule == "parse_error" and e.value.reason.startswith("2025_01_01_00_00_00/history.json: invalid")
