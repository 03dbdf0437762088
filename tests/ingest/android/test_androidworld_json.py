"""Per-episode JSON results of an AndroidWorld evaluation harness running LLM agents (T3A / SeeAct prompts,
actions as JSONAction inside the model's reply, UI element lists, three verdicts).

Real files (no license, so read where they lie under ../shared/samples/android/androidworld-json-gyaanantia,
never copied here): gyaanantia/android_world_agents @ 89d35cf9292234904d313fcd4bf989f78ea3d6b1,
- results/results_seeact/ContactsAddContact_base_gpt-4o-mini_48e64bf7.json: gpt-4o-mini, 7 steps, the
  evaluator's success. Counted by hand in the file: open_app Phone; click index 1 "Create new contact"
  (bounds [[328,1432],[752,1548]] -> centre (540, 1490) of the 1080x2400 screen); input_text "Adam" index 7,
  "Gonzalez" index 8, "+14460177118" index 10; click index 2 "Save" (centre (838.5, 211)); status complete.
- results/results_seeact/MarkorMoveNote_base_gpt-4o-mini_7d0e5332.json: 30 steps, stopped at max_steps 30
  without a status action (`episode_terminated_early`), the evaluator's failure: 25 clicks, 2 back, 1 home,
  1 open_app, 1 wait.
- results/SystemBrightnessMaxVerify_base_gpt-4-turbo-2024-04-09_1301226f.json: gpt-4-turbo, 13 steps: open_app
  Settings; scroll down x3; click index 1 "Search settings" (bounds [[200,203],[553,274]] -> centre (376.5,
  238.5)); input_text "brightness" index 1 (the EditText [[126,149],[1080,275]] -> (603, 212)); scroll down x2 and
  up x2 on element 3; navigate_back; scroll down; status `infeasible`: the agent gave up, while the evaluator
  (`task_actually_successful`) found the brightness at its maximum: a success. The harness also wrote
  `agent_claimed_done` true (any status action ends its loop).
- results/MarkorDeleteNewestNote_base_gpt-4-turbo-2024-04-09_c775d8e4.json: the harness stopped writing it at
  byte 254508 (inside the step records): quarantined, naming the file and the place.
- results/demo.json: the repository's replay form of an episode (goal, observations, actions), 7 steps, no
  verdict (counted by hand beside its test below).
No screenshot is in these files (`<screenshot_excluded>` placeholders): 0 screenshot blobs.
"""

import json
from pathlib import Path

import orjson
import pytest

from ingest.android import androidworld_json
from ingest.record import Episode, Rejected
from ingest.source import SourceError
from tests import goldens
from tests.ingest import golden
from tests.parts import SHARED, require_shared_sample

ROOT = SHARED / "samples" / "android" / "androidworld-json-gyaanantia"
SUCCESS = "results/results_seeact/ContactsAddContact_base_gpt-4o-mini_48e64bf7.json"
FAILURE = "results/results_seeact/MarkorMoveNote_base_gpt-4o-mini_7d0e5332.json"
GAVE_UP = "results/SystemBrightnessMaxVerify_base_gpt-4-turbo-2024-04-09_1301226f.json"
TRUNCATED = "results/MarkorDeleteNewestNote_base_gpt-4-turbo-2024-04-09_c775d8e4.json"
GOLDEN = Path(__file__).with_name("golden") / "androidworld-json-gyaanantia.json"
ENV_KEYS = ("task_name", "prompt_variant", "max_steps", "steps_taken", "agent_claimed_done", "harness_success",
            "episode_terminated_early", "screen_size", "screen_size_from")


def _read(rel: str, blobs: dict | None = None):
    return golden.read_records(androidworld_json, require_shared_sample(ROOT / rel), blobs)


def _pixel(step):
    return round(step.action.x * step.observation.width, 1), round(step.action.y * step.observation.height, 1)


def test_a_seven_step_success_as_a_person_counts_it():
    blobs = {}
    (ep,) = _read(SUCCESS, blobs)
    assert [s.action.kind for s in ep.steps] == ["open_app", "tap", "type", "type", "type", "tap", "done"]
    assert (ep.outcome, ep.reward, ep.terminated, ep.agent) == ("success", 1.0, True, "gpt-4o-mini")
    assert ep.task == "Create a new contact for Adam Gonzalez. Their number is +14460177118."
    assert [_pixel(ep.steps[i]) for i in (1, 5)] == [(540.0, 1490.0), (838.5, 211.0)]
    assert [s.action.text for s in ep.steps[2:5]] == ["Adam", "Gonzalez", "+14460177118"]
    assert json.loads(ep.steps[1].action.element) == {"index": 1, "class": "android.widget.TextView",
                                                      "text": "Create new contact", "bounds": [[328, 1432], [752, 1548]]}
    point = json.loads(ep.steps[1].action.raw)["point"]
    assert point == {"x": 540.0, "y": 1490.0, "space": "screen", "width": 1080, "height": 2400,
                     "from": "centre of element 1's bounds"}
    assert all(s.observation.kind == "screen" and s.observation.screenshot is None for s in ep.steps)
    assert blobs == {}  # the harness left every screenshot out of the file
    assert "Create new contact" in ep.steps[1].observation.text
    assert ep.env["agent_claimed_done"] is True and ep.env["screen_size"] == [1080, 2400]


def test_a_thirty_step_failure_at_the_step_limit():
    (ep,) = _read(FAILURE)
    kinds = [s.action.kind for s in ep.steps]
    assert len(kinds) == 30 and kinds.count("tap") == 25 and kinds.count("back") == 2
    assert (kinds.count("home"), kinds.count("open_app"), kinds.count("wait")) == (1, 1, 1)
    assert (ep.outcome, ep.reward, ep.terminated) == ("failure", 0.0, False)
    assert ep.env["episode_terminated_early"] is True and ep.env["agent_claimed_done"] is False
    assert _pixel(ep.steps[2]) == (540.0, 479.0)  # "Folder FitnessPlans"


def test_an_agent_that_gave_up_on_a_task_the_evaluator_passed_keeps_both():
    (ep,) = _read(GAVE_UP)
    assert [s.action.kind for s in ep.steps] == ["open_app"] + ["scroll"] * 3 + ["tap", "type"] + ["scroll"] * 4 + [
        "back", "scroll", "done"]
    assert [s.action.direction for s in ep.steps[6:10]] == ["down", "down", "up", "up"]
    assert [_pixel(ep.steps[i]) for i in (4, 5)] == [(376.5, 238.5), (603.0, 212.0)]
    assert ep.steps[5].action.text == "brightness"
    assert ep.steps[-1].action.text == "infeasible"  # the agent's own claim, kept on its last step
    assert (ep.outcome, ep.reward, ep.terminated) == ("success", 1.0, True)  # the evaluator's verdict
    assert (ep.env["agent_claimed_done"], ep.env["harness_success"]) == (True, True)


def test_a_file_the_harness_stopped_writing_is_quarantined_by_name():
    with pytest.raises(SourceError) as e:
        _read(TRUNCATED)
    assert e.value.rule == "parse_error" and "c775d8e4.json" in str(e.value) and "char 254508" in str(e.value)


def test_the_real_results_match_the_golden():
    got = {rel: golden.fingerprint(_read(rel), texts="hash", env_keys=ENV_KEYS) for rel in (SUCCESS, FAILURE)}
    goldens.check_json(GOLDEN, json.loads(json.dumps(got, default=str)), indent=1)


# Edge cases, hand-made in the files' shape


def _element(text, box):
    x1, y1, x2, y2 = box
    return {"text": text, "content_description": None, "class_name": "android.widget.Button",
            "bbox_pixels": {"x_min": x1, "y_min": y1, "x_max": x2, "y_max": y2}, "is_clickable": True,
            "is_visible": True, "is_enabled": True, "package_name": "com.example"}


def _record(n, reply, elements, shot="<large_array: (1600, 720, 3) uint8>"):
    return {"step_num": n, "state": {"pixels": "<screenshot_excluded>", "ui_elements": elements},
            "action": reply, "agent_data": {"before_screenshot": "<screenshot_excluded>", "after_screenshot": shot,
                                            "before_element_list": elements, "summary": f"step {n}"},
            "timestamp": 1752901271.5 + n}


def _write(tmp_path, doc) -> Path:
    path = tmp_path / "Task_base_model_trial1.json"
    path.write_bytes(orjson.dumps(doc))
    return path


def _doc(records, **verdicts):
    return {"task_name": "Task", "goal": "Do it.", "model_name": "m", "prompt_variant": "base", "max_steps": 30,
            "success": False, "steps_taken": len(records), "evaluation_time": 1.0,
            "prompts": ["You are an agent who can operate an Android phone ..."], "step_records": records,
            "final_state": {"ui_elements": []}, **verdicts}


def test_edge_cases_undecoded_and_out_of_range_actions_and_a_bad_record(tmp_path):
    screen = [_element("OK", (0, 0, 720, 1600)), _element("Go", (100, 200, 300, 400))]
    records = [_record(1, 'Reason: go\nAction: {"action_type": "click", "index": 1}', screen),
               _record(2, 'Reason: again\nAction: {"action_type": "click", "index":  N}', screen),
               _record(3, 'Action: {"action_type": "long_press", "index": 9}', screen),
               "not a record",
               _record(4, 'Action: {"action_type": "status", "goal_status": "complete"}', screen, None)]
    path = _write(tmp_path, _doc(records, agent_claimed_done=True, extra_stat={"k": 1}))
    assert androidworld_json.units([str(path)], lambda p: Path(p).read_bytes()[:4096]) == [str(path)]
    *rows, ep = golden.read_records(androidworld_json, path)
    assert [(r.rule, r.record_id) for r in rows] == [("bad_record", "3")]
    assert [s.action.kind for s in ep.steps] == ["tap", "message", "long_press", "done"]
    assert (ep.steps[0].action.x, ep.steps[0].action.y) == (200 / 720, 300 / 1600)
    assert ep.steps[0].reasoning == "go" and ep.steps[1].action.text.endswith('"index":  N}')
    assert ep.steps[2].action.x is None and ep.steps[2].action.element is None  # no element 9 on that screen
    # no evaluator's verdict and `success` false (the agent's claim and the verdict together): unknown
    assert (ep.outcome, ep.reward, ep.terminated) == ("unknown", None, True)
    assert {w["rule"] for w in ep.env["ingest_warnings"]} == {"undecoded_action", "unknown_field"}
    assert ep.env["harness_fields"] == {"extra_stat": {"k": 1}} and ep.env["screen_size"] == [720, 1600]


def test_detection_needs_the_harness_keys_not_one_generic_key(tmp_path):
    generic = tmp_path / "result.json"
    generic.write_text(json.dumps({"task_name": "t", "goal": "g", "success": True, "steps": []}))
    assert androidworld_json.units([str(generic)], lambda p: Path(p).read_bytes()[:4096]) == []



def test_a_step_record_of_the_wrong_shape_is_quarantined_alone(tmp_path):
    screen = [_element("OK", (0, 0, 720, 1600))]
    broken = _record(2, 'Action: {"action_type": "click", "index": 0}', [{"bbox_pixels": {"x_min": "left"}}])
    broken["agent_data"] = ["not", "a", "dict"]
    records = [_record(1, 'Action: {"action_type": "wait"}', screen), broken,
               _record(3, 'Action: {"action_type": "status", "goal_status": "infeasible"}', screen)]
    *rows, ep = golden.read_records(androidworld_json, _write(tmp_path, _doc(records, task_actually_successful=False)))
    assert [(r.rule, r.record_id) for r in rows] == [("bad_record", "1")] and "step record 1" in rows[0].reason
    assert [s.action.kind for s in ep.steps] == ["wait", "done"] and (ep.outcome, ep.reward) == ("failure", 0.0)


def test_replay_screenshots_beside_a_result_are_listed_as_its_run_s_unread_files(tmp_path, run, query):
    """The harness's `replay_screenshots/<result>/` PNGs (a later replay, not what the agent saw) are claimed with
    their result, so no other reader takes them, and `ignored_inputs` says why they are not read; a replay folder
    no result here names stays an input no format reads."""
    screen = [_element("OK", (0, 0, 720, 1600))]
    path = _write(tmp_path, _doc([_record(1, 'Action: {"action_type": "status", "goal_status": "complete"}',
                                          screen)], task_actually_successful=True))
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 32
    for name in ("pre_step_001.png", "post_step_001.png"):
        (tmp_path / "replay_screenshots" / path.stem).mkdir(parents=True, exist_ok=True)
        (tmp_path / "replay_screenshots" / path.stem / name).write_bytes(png)
    (tmp_path / "replay_screenshots" / "Other_trial1").mkdir()
    (tmp_path / "replay_screenshots" / "Other_trial1" / "pre_step_001.png").write_bytes(png)
    result = run("ingest-all", [tmp_path], stages=["ingest"])
    assert result.status == "success", result.messages
    assert query("SELECT source_format FROM episodes") == [{"source_format": "androidworld_json"}]
    ignored = {r["path"].split("replay_screenshots/")[1]: r["reason"]
               for r in query("SELECT path, reason FROM ignored_inputs")}
    replay = (f"part of the androidworld_json run {path.name}, which does not read it: a screenshot of a later "
              "replay of the episode, not what the agent saw")
    assert ignored == {f"{path.stem}/pre_step_001.png": replay, f"{path.stem}/post_step_001.png": replay,
                       "Other_trial1/pre_step_001.png": "no format reads it"}


# The same repository's replay form of an episode (`goal`, `observations`, `actions`, `interaction_trace`, as its
# `src/utils.py:load_episode` loads it): results/demo.json @ 89d35cf, counted by hand in the file: 8
# observations for 7 actions; open_app Contacts; click index 0 "Create contact" (bbox [870,1938,1017,2085] ->
# centre (943.5, 2011.5) of the 1080x2400 screen, the extent of the elements' bounds); input_text "Willow" index 7
# ([137,858,933,1007] -> (535, 932.5)), "Muller" index 8 (-> (535, 1117.5)), "+12735883822" index 10
# ([137,1455,933,1517] -> (535, 1486)); click index 2 "Save" ([723,148,954,274] -> (838.5, 211)); status complete.
# No verdict in the file: the outcome is unknown.
DEMO = "results/demo.json"


def test_the_replay_form_demo_episode_as_a_person_counts_it():
    path = require_shared_sample(ROOT / DEMO)
    assert androidworld_json.units([str(path)], lambda p: Path(p).read_bytes()[:4096]) == [str(path)]
    (ep,) = golden.read_records(androidworld_json, path)
    assert ep.task == "Create a new contact for Willow Muller. Their number is +12735883822."
    assert [s.action.kind for s in ep.steps] == ["open_app", "tap", "type", "type", "type", "tap", "done"]
    assert [s.action.text for s in ep.steps] == ["Contacts", None, "Willow", "Muller", "+12735883822", None,
                                                 "complete"]
    assert [_pixel(s) for s in ep.steps[1:6]] == [(943.5, 2011.5), (535.0, 932.5), (535.0, 1117.5), (535.0, 1486.0),
                                                  (838.5, 211.0)]
    assert (ep.outcome, ep.reward, ep.terminated) == ("unknown", None, True)
    assert ep.env["screen_size"] == [1080, 2400] and "observations_vs_actions" not in ep.env
    assert 'desc="Create contact" @[870,1938][1017,2085]' in ep.steps[1].observation.text
    assert ep.final_observation.kind == "screen"


def _replay_element(text, box, desc=None, cls="android.widget.Button"):
    return {"text": text, "content_desc": desc, "class": cls, "bbox_pixels": list(box)}


def _replay_doc(observations, actions, **extra):
    return {"goal": "Turn on Wi-Fi", "observations": [{"ui_elements": els} for els in observations],
            "actions": actions, "interaction_trace": "", **extra}


def _write_replay(tmp_path, doc) -> Path:
    path = tmp_path / "demo.json"
    path.write_text(json.dumps(doc, indent=2))
    assert androidworld_json.units([str(path)], lambda p: Path(p).read_bytes()[:4096]) == [str(path)]
    return path


def test_a_hand_made_replay_form_episode(tmp_path):
    root = _replay_element(None, (0, 0, 720, 1600), cls="android.widget.FrameLayout")
    wifi = _replay_element("Wi-Fi", (100, 200, 300, 260))
    doc = _replay_doc([[root, wifi], [root, wifi], [root]],
                      [{"action_type": "click", "index": 1}, {"action_type": "status", "goal_status": "complete"}])
    (ep,) = golden.read_records(androidworld_json, _write_replay(tmp_path, doc))
    assert ep.task == "Turn on Wi-Fi" and [s.action.kind for s in ep.steps] == ["tap", "done"]
    assert _pixel(ep.steps[0]) == (200.0, 230.0) and (ep.steps[0].observation.width, ep.env["screen_size"]) == \
        (720, [720, 1600])
    assert orjson.loads(ep.steps[0].action.raw)["point"]["x"] == 200.0  # the source's pixel kept raw
    assert json.loads(ep.steps[0].action.element)["text"] == "Wi-Fi" and '"Wi-Fi"' in ep.steps[0].observation.text
    assert (ep.outcome, ep.reward, ep.terminated) == ("unknown", None, True)
    assert ep.final_observation.kind == "screen" and "ingest_warnings" not in ep.env
    assert "observations_after_final" not in ep.env  # the one screen after the last action is the final one


@pytest.mark.parametrize("screens", [2, 5])
def test_replay_observations_not_one_more_than_actions_are_all_kept_and_said(tmp_path, screens):
    screen = [_replay_element("OK", (0, 0, 720, 1600))]
    actions = [{"action_type": "wait"}, {"action_type": "click", "index": 0}, {"action_type": "navigate_back"}]
    doc = _replay_doc([screen] * screens, actions, recorder={"v": 2})
    (ep,) = golden.read_records(androidworld_json, _write_replay(tmp_path, doc))
    assert [s.action.kind for s in ep.steps] == ["wait", "tap", "back"]
    assert ep.env["observations_vs_actions"] == {"observations": screens, "actions": 3}
    assert ep.env["episode_fields"] == {"recorder": {"v": 2}}
    rules = {w["rule"] for w in ep.env["ingest_warnings"]}
    assert rules == {"step_count_mismatch", "unknown_field"}
    if screens == 2:  # the third step observed no screen; no final screen
        assert [s.observation.kind for s in ep.steps] == ["screen", "screen", "none"]
        assert ep.final_observation is None
    else:  # the fourth screen is the final one, the fifth stays in env
        assert ep.final_observation.kind == "screen" and len(ep.env["observations_after_final"]) == 1


def test_a_replay_action_without_an_action_type_is_quarantined_alone(tmp_path):
    screen = [_replay_element("OK", (0, 0, 720, 1600))]
    doc = _replay_doc([screen] * 3, [{"action": "click"}, {"action_type": "status", "goal_status": "infeasible"}])
    *rows, ep = golden.read_records(androidworld_json, _write_replay(tmp_path, doc))
    assert [(r.rule, r.record_id) for r in rows] == [("bad_record", "0")] and "actions[0]" in rows[0].reason
    assert [s.action.kind for s in ep.steps] == ["done"]


def test_a_goal_and_observations_without_element_bounds_are_not_claimed(tmp_path):
    other = tmp_path / "episode.json"
    other.write_text(json.dumps({"goal": "g", "observations": ["a screen"], "actions": []}))
    assert androidworld_json.units([str(other)], lambda p: Path(p).read_bytes()[:4096]) == []


def test_replay_form_edge_cases_every_field(tmp_path):
    """Hand-made replay episodes read to their every field (`golden.whole`): elements without usable bounds,
    indexes at the ends of the list, an observation that is no object, an action type outside AndroidWorld's,
    screens past the final one, a goal that is no text, the run's own trace."""
    root = _replay_element(None, (0, 0, 720, 1600), cls="android.widget.FrameLayout")
    wifi = _replay_element("Wi-Fi", (100, 200, 300, 260), desc="Wi-Fi switch")
    unbound = _replay_element("no box", (1, 2, 3))
    flagged = _replay_element("flags", (True, 2, 3, "4"))
    screen = [root, wifi, unbound, flagged]
    doc = _replay_doc([screen, screen, screen, screen, [], screen, [], screen],
                      [{"action_type": "click", "index": 0}, {"action_type": "click", "index": 3},
                       {"action_type": "click", "index": 4}, {"action_type": "fly", "index": 1},
                       {"action_type": "long_press", "index": 2}], interaction_trace="tap tap", device="emulator",
                      recorder={"v": 1})
    doc["goal"], doc["observations"][4] = 5, "a screen"
    path = _write_replay(tmp_path, doc)
    golden.check_whole(golden.read_records(androidworld_json, path),
                       GOLDEN.with_name("androidworld-replay-edge-whole.json"))
    doc = _replay_doc([[root, wifi], [root]], [{"action_type": "fly"}, 7])
    golden.check_whole(golden.read_records(androidworld_json, _write_replay(tmp_path, doc)),
                       GOLDEN.with_name("androidworld-replay-edge-no-action-whole.json"))
    doc = _replay_doc([[unbound], [unbound]], [{"action_type": "click", "index": 0}])  # no bounds: no screen size
    (ep,) = golden.read_records(androidworld_json, _write_replay(tmp_path, doc))
    assert json.loads(ep.steps[0].action.element)["text"] == "no box" and ep.steps[0].action.x is None
    assert (ep.steps[0].observation.width, ep.steps[0].observation.height) == (None, None)
    assert (ep.final_observation.width, ep.final_observation.height) == (None, None)
    assert "screen_size" not in ep.env and "screen_size_from" not in ep.env


def test_replay_form_without_action_list_is_refused_naming_the_file(tmp_path):
    path = _write_replay(tmp_path, _replay_doc([[_replay_element("OK", (0, 0, 720, 1600))]], {"0": "click"}))
    with pytest.raises(SourceError) as e:
        golden.read_records(androidworld_json, path)
    assert e.value.rule == "bad_record" and e.value.reason == "demo.json: expected `observations` and `actions` lists"
    from ingest.android.androidworld_replay import claims

    head = path.read_bytes()
    assert claims(head) and not claims(head[:1] + b'"step_records": [], ' + head[1:])
