"""The AndroidWorld reader called directly (`androidworld.read`): each step's action, point and screen, the
episode's outcome and reward from `is_successful`, and the rows for what it cannot use. The result files the
pipeline tests ingest (`result_file`, `mcp_agent_result` of test_androidworld), plus hand-made episodes for
the edges."""

import datetime as dt
import gzip
import json
import pickle
import sys
import types

import fsspec
import numpy as np
import pytest

from ingest.android import androidworld
from ingest.png import encode_png
from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError
from tests.ingest.android.test_androidworld import H, W, aw, mcp_agent_result, result_file  # noqa: F401


def _blob(data: bytes, media: str, uri: str) -> str:
    return f"{uri}|{media}:{len(data)}:{hash(data) & 0xffff}"  # the unit the blob came from, too


def _read(path) -> list:
    return list(androidworld.read(Source(fsspec.filesystem("file"), str(path), f"in/{path.name}", _blob)))


def _pickled(tmp_path, value, name="T.pkl.gz"):
    path = tmp_path / name
    path.write_bytes(gzip.compress(pickle.dumps(value)))
    return path


def test_an_m3a_result_file_steps_outcome_and_failed_run(tmp_path, aw):  # noqa: F811
    records = _read(result_file(tmp_path / "SystemWifiTurnOff.pkl.gz", *aw))
    ep, row = records[0], records[1]
    assert isinstance(ep, Episode) and len(records) == 2
    assert (ep.key, ep.task, ep.agent, ep.outcome, ep.reward) == ("0:SystemWifiTurnOff:0", "Turn wifi off.",
                                                                   "m3a_gpt4v", "success", 1.0)
    assert (ep.domain, ep.platform, ep.terminated) == ("android", "android", True)
    assert ep.env == {"device": "android", "task_template": "SystemWifiTurnOff", "instance_id": 0, "seed": 42,
                      "screen_config": {"width": W, "height": H, "orientation": "portrait",
                                        "config_name": "default"},
                      "run_time_s": 31.5, "finish_local_time": "2024-06-01T10:00:00",
                      "summaries": ["Opened Network & internet", "Turned Wi-Fi off", None]}
    tap = ep.steps[0].action
    # element 0 spans pixels (0,2)-(4,4) on the 4x8 screenshot: centre (2, 3)
    assert (tap.kind, tap.x, tap.y) == ("tap", 0.5, 3 / 8)
    assert json.loads(tap.element) == {"index": 0, "class": "android.widget.TextView", "text": "Network & internet",
                                       "bounds": [[0, 2], [4, 4]]}
    assert tap.raw == 'Reason: open network settings\nAction: {"action_type": "click", "index": 0}'
    assert (ep.steps[1].action.x, ep.steps[1].action.y) == (0.25, 5 / 8)
    assert [s.reasoning for s in ep.steps] == ["open network settings", "toggle", "done"]
    assert (ep.steps[2].action.kind, ep.steps[2].action.text) == ("done", "complete")
    obs = ep.steps[0].observation
    assert (obs.kind, obs.width, obs.height) == ("screen", W, H)
    png = encode_png(np.full((H, W, 3), 0, dtype=np.uint8).tobytes(), W, H, 3)
    assert obs.screenshot == _blob(png, "image/png", "in/SystemWifiTurnOff.pkl.gz")
    assert obs.text.splitlines() == ['[0] TextView "Network & internet" {clickable} @[0,2][4,4]',
                                     '[1] TextView "Wi-Fi" {clickable} @[0,4][2,6]']
    views = json.loads(obs.ui_tree)
    assert views[1] == {"temp_id": 1, "parent": -1, "children": [], "class": "android.widget.TextView",
                        "text": "Wi-Fi", "content_description": None, "resource_id": None,
                        "package": "com.android.settings", "bounds": [[0, 4], [2, 6]], "visible": True,
                        "enabled": True, "clickable": True, "long_clickable": False, "editable": False,
                        "scrollable": False, "checkable": False, "checked": False, "selected": False,
                        "focused": False}
    assert all(s.timestamp is None for s in ep.steps)  # finish_dtime is local time of an unknown zone
    assert isinstance(row, Rejected) and (row.rule, row.record_id, row.location) == ("failed_episode", "1",
                                                                                     "SystemWifiTurnOff.pkl.gz")
    assert row.reason == ("SystemWifiTurnOff.pkl.gz: episode 1 (SimpleSmsSend #1): the run recorded no steps: "
                          "TimeoutError: adb did not answer")


def test_the_older_checkpointer_pair_of_episodes_and_completed_tasks(tmp_path, aw):  # noqa: F811
    path = result_file(tmp_path / "R.pkl.gz", *aw)
    episodes = pickle.loads(gzip.decompress(path.read_bytes()))
    (ep,) = _read(_pickled(tmp_path, (episodes[:1], ["SystemWifiTurnOff"]), "pair.pkl.gz"))
    assert [s.action.kind for s in ep.steps] == ["tap", "tap", "done"] and ep.key == "0:SystemWifiTurnOff:0"


@pytest.mark.parametrize("score, outcome, reward", [(1.0, "success", 1.0), (0.51, "success", 0.51),
                                                    (0.5, "failure", 0.5), (0.0, "failure", 0.0),
                                                    (float("nan"), "unknown", None), (None, "unknown", None),
                                                    ("0.75", "success", 0.75), ("yes", "unknown", None),
                                                    ([1], "unknown", None), (True, "success", 1.0)])
def test_the_outcome_and_reward_come_from_is_successful(score, outcome, reward, tmp_path):
    (ep,) = _read(_score_file(tmp_path, score))
    assert (ep.outcome, ep.reward) == (outcome, reward)
    assert not ep.terminated  # no status action: truncated


def _score_file(tmp_path, score):
    path = mcp_agent_result(tmp_path / "S.pkl.gz", 0.0, ["done"])
    episodes = pickle.loads(gzip.decompress(path.read_bytes()))
    episodes[0]["is_successful"] = score
    return _pickled(tmp_path, episodes, "S.pkl.gz")


def test_free_text_steps_are_messages_with_a_warning(tmp_path):
    outputs = ["open settings", None, "  ", "done"]
    records = _read(mcp_agent_result(tmp_path / "SystemWifiTurnOff.pkl.gz", 1.0, outputs))
    rows = [r for r in records if isinstance(r, Rejected)]
    assert [(r.rule, r.record_id, r.reason) for r in rows] == [
        ("bad_record", "0:1", "SystemWifiTurnOff.pkl.gz: episode 0 (SystemWifiTurnOff #0): step 1: no "
                              "action_output_json"),
        ("bad_record", "0:2", "SystemWifiTurnOff.pkl.gz: episode 0 (SystemWifiTurnOff #0): step 2: no "
                              "action_output_json")]
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.kind, s.action.text) for s in ep.steps] == [("message", "open settings"), ("message", "done")]
    assert json.loads(ep.steps[1].action.raw) == {"agent_output": "done", "tool_calls": 1, "step_number": 3}
    assert [(w["rule"], w["reason"]) for w in ep.env["ingest_warnings"]] == [
        ("free_text_steps", "steps without action_output_json: the agent's own text (agent_output) is kept as "
                            "message steps")]
    assert [r.location for r in rows] == ["SystemWifiTurnOff.pkl.gz"] * 2
    assert ep.env["finish_local_time"] == "2025-03-02T09:30:00" and "summaries" not in ep.env
    assert all(s.observation.kind == "screen" and s.observation.text is None for s in ep.steps)
    png = encode_png(np.full((H, W, 3), 3, dtype=np.uint8).tobytes(), W, H, 3)
    assert ep.steps[1].observation.screenshot == _blob(png, "image/png", "in/SystemWifiTurnOff.pkl.gz")


def test_the_first_text_of_a_step_is_its_message_and_raw_keeps_its_texts_and_numbers(tmp_path):
    data = {"response": ["from response"], "output": ["from output"], "action_output": [7], "score": [float("nan")],
            "step_number": [0], "flag": [True], "blob": [[1, 2]]}
    (ep,) = [r for r in _read(_pickled(tmp_path, [{"goal": "g", "episode_data": data}])) if isinstance(r, Episode)]
    assert ep.steps[0].action.text == "from response"
    assert json.loads(ep.steps[0].action.raw) == {"response": "from response", "output": "from output",
                                                  "action_output": 7, "step_number": 0, "flag": True}
    assert ep.key == "0:task:None" and ep.env == {"device": "android", "task_template": "task",
                                                  "ingest_warnings": ep.env["ingest_warnings"]}
    assert (ep.steps[0].observation.kind, ep.steps[0].observation.width) == ("none", None)


def test_a_bad_json_action_is_quarantined_not_read_as_free_text(tmp_path, aw):  # noqa: F811
    rep, act = aw
    data = {"action_output_json": [act.JSONAction(action_type=None), {"action_type": "wait"}],
            "action_output": ["said", None], "agent_output": ["said", None], "action_reason": [None, 3],
            "summary": [None, None]}
    records = _read(_pickled(tmp_path, [{"goal": "g", "task_template": "T", "instance_id": 5, "episode_data": data}]))
    assert [(r.rule, r.snippet) for r in records if isinstance(r, Rejected)] == [("bad_record", "said")]
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.steps[0].action.kind == "wait" and ep.steps[0].reasoning is None
    assert "ingest_warnings" not in ep.env and "summaries" not in ep.env


@pytest.mark.parametrize("act, size, point", [
    ({"action_type": "click", "x": 2, "y": 4}, (4, 8), (0.5, 0.5)),
    ({"action_type": "click", "x": 9, "y": -1}, (4, 8), (1.0, 0.0)),
    ({"action_type": "click", "x": 2, "y": None, "index": 1}, (4, 8), (0.25, 5 / 8)),
    ({"action_type": "click", "x": 2, "y": 4}, (None, 8), (None, None)),
    ({"action_type": "click", "x": 2, "y": 4}, (4, None), (None, None)),
    ({"action_type": "click", "index": 1}, (None, None), (None, None)),
    ({"action_type": "click", "index": 1}, (None, 8), (None, None)),
    ({"action_type": "click", "index": 1}, (4, None), (None, None)),
    ({"action_type": "click", "index": 2}, (4, 8), (None, None)),
    ({"action_type": "click", "index": -1}, (4, 8), (None, None)),
    ({"action_type": "click", "index": 0}, (4, 8), (None, None)),  # element 0 has no box
])
def test_a_point_is_the_actions_own_or_its_elements_centre_on_the_screen(act, size, point, tmp_path):
    elements = [{"text": "no box"}, {"text": "b", "bbox_pixels": {"x_min": 0.0, "y_min": 4.9, "x_max": 2.0,
                                                                  "y_max": 6.0}}]
    data = {"action_output_json": [act], "before_ui_elements": [elements]}
    config = {"width": size[0], "height": size[1]}
    (ep,) = _read(_pickled(tmp_path, [{"goal": "g", "screen_config": config, "episode_data": data}]))
    action = ep.steps[0].action
    assert (action.x, action.y) == point
    index = act.get("index")
    if index in (0, 1):
        assert json.loads(action.element)["index"] == index
    else:
        assert action.element is None
    assert json.loads(action.raw) == act  # no agent text: the action itself
    assert ep.steps[0].observation.kind == "screen" and (ep.steps[0].observation.width,
                                                         ep.steps[0].observation.height) == size


def test_element_lists_and_flags_of_the_t3a_agent(tmp_path):
    elements = [{"class_name": "Button", "resource_id": "a:id/ok", "resource_name": "b:id/x", "is_visible": False,
                 "is_enabled": None, "is_checked": 1, "bbox_pixels": {"x_min": 1.7, "y_min": 2.2, "x_max": 3.9,
                                                                      "y_max": 4.0}},
                {"resource_name": "b:id/only", "is_enabled": False, "content_description": "Close"}]
    data = {"before_element_list": [elements], "action_output_json": [{"action_type": "navigate_back"}],
            "before_screenshot": [np.zeros((2, 2), dtype=np.uint8)]}  # not an HxWxC image: no screenshot
    (ep,) = _read(_pickled(tmp_path, [{"goal": "g", "episode_data": data}]))
    view, other = json.loads(ep.steps[0].observation.ui_tree)
    assert view["resource_id"] == "a:id/ok" and view["bounds"] == [[1, 2], [3, 4]]
    assert (other["resource_id"], other["enabled"], other["content_description"]) == ("b:id/only", False, "Close")
    assert (other["bounds"], other["visible"], view["content_description"]) == (None, True, None)
    assert (view["visible"], view["enabled"], view["checked"], view["clickable"]) == (False, True, True, False)
    assert ep.steps[0].observation.screenshot is None and ep.steps[0].action.kind == "back"


def test_the_screenshot_keys_in_order(tmp_path):
    shots = {"raw_screenshot": [None], "before_screenshot": [np.full((1, 1, 3), 9, dtype=np.uint8)],
             "screenshot": [np.full((1, 1, 3), 5, dtype=np.uint8)]}
    data = {**shots, "action_output_json": [{"action_type": "wait"}]}
    (ep,) = _read(_pickled(tmp_path, [{"goal": "g", "episode_data": data}]))
    png = encode_png(bytes([9, 9, 9]), 1, 1, 3)
    assert ep.steps[0].observation.screenshot == _blob(png, "image/png", "in/T.pkl.gz")
    assert (ep.steps[0].observation.width, ep.steps[0].observation.height) == (1, 1)
    assert ep.steps[0].observation.text is None and ep.steps[0].observation.ui_tree is None
    rgba = {"screenshot": [np.zeros((1, 2, 4), dtype=np.uint8)], "action_output_json": [{"action_type": "wait"}]}
    (ep,) = _read(_pickled(tmp_path, [{"goal": "g", "episode_data": rgba}]))
    assert ep.steps[0].observation.screenshot == _blob(encode_png(bytes(8), 2, 1, 4), "image/png", "in/T.pkl.gz")
    listed = {"screenshot": [[[[0, 0, 0]]]], "action_output_json": [{"action_type": "wait"}]}  # not an array
    (ep,) = _read(_pickled(tmp_path, [{"goal": "g", "episode_data": listed}]))
    assert ep.steps[0].observation.screenshot is None and ep.steps[0].observation.kind == "none"
    floats = {"screenshot": [np.zeros((1, 1, 3))], "action_output_json": [{"action_type": "wait"}]}
    (ep,) = _read(_pickled(tmp_path, [{"goal": "g", "episode_data": floats}]))
    assert ep.steps[0].observation.screenshot is None


def test_episodes_that_are_not_dicts_or_have_no_step_are_rows(tmp_path):
    episodes = ["nope", {"goal": "g", "task_template": "T", "instance_id": 3, "episode_data": None,
                         "exception_info": "  \nValueError: x\n  "},
                {"goal": "g", "episode_data": {}, "agent_name": "a1", "episode_length": 4},
                {"goal": "g", "is_successful": 1, "episode_data": {"action_output": [None]}}]
    records = _read(_pickled(tmp_path, episodes, "F.pkl.gz"))
    assert [(r.rule, r.record_id) for r in records] == [("bad_record", "0"), ("failed_episode", "1"),
                                                       ("empty_episode", None), ("bad_record", "3:0"),
                                                       ("empty_episode", None)]
    assert records[0].reason == "F.pkl.gz: episode 0 is a str, not a dict"
    assert [r.location for r in records] == ["F.pkl.gz"] * 5
    assert json.loads(records[2].snippet) == {"outcome": "unknown", "reward": None, "task": "g", "agent": "a1",
                                              "steps_recorded": 4}
    assert records[1].reason == "F.pkl.gz: episode 1 (T #3): the run recorded no steps: ValueError: x"
    assert records[2].reason.startswith("F.pkl.gz: episode 2 (task #?): no step has an action or the agent's text")
    assert json.loads(records[4].snippet) == {"outcome": "success", "reward": 1.0, "task": "g"}
    assert records[3].snippet is None and records[3].reason.endswith("step 0: no action_output_json")


def test_a_run_without_exception_text_says_so(tmp_path):
    (row,) = _read(_pickled(tmp_path, [{"episode_data": float("nan")}], "N.pkl.gz"))
    assert row.reason == "N.pkl.gz: episode 0 (task #?): the run recorded no steps: no step data"


@pytest.mark.parametrize("value, found", [({"a": 1}, "dict"), ((1, 2, 3), "tuple"), (([1], 2, 3), "tuple"),
                                          (("x", []), "tuple")])
def test_a_file_that_is_not_a_list_of_episodes_is_one_row(value, found, tmp_path):
    (row,) = _read(_pickled(tmp_path, value, "X.pkl.gz"))
    assert (row.rule, row.location, row.reason) == ("bad_record", "X.pkl.gz",
                                                    f"X.pkl.gz: expected a list of episodes, found {found}")


class Memory:
    """An agent's own class, pickled by reference (its module registered below as a real agent's would be)."""

    def __init__(self, notes):
        self.notes = notes


def test_a_class_the_reader_does_not_list_is_kept_as_its_state_and_named_once(tmp_path, monkeypatch):
    module = types.ModuleType("some_agent.memory")
    Memory.__module__ = module.__name__
    module.Memory = Memory
    monkeypatch.setitem(sys.modules, "some_agent", types.ModuleType("some_agent"))
    monkeypatch.setitem(sys.modules, "some_agent.memory", module)
    data = {"action_output_json": [{"action_type": "wait"}] * 2, "summary": [Memory("a"), Memory("b")]}
    episodes = [{"goal": "g", "episode_data": data, "finish_dtime": dt.date(2024, 1, 2)}]
    (ep,) = _read(_pickled(tmp_path, episodes, "W.pkl.gz"))
    assert ep.env["finish_local_time"] == "2024-01-02"
    assert [w["reason"] for w in ep.env["ingest_warnings"]] == [
        "W.pkl.gz holds some_agent.memory.Memory, a class this reader does not list: kept as the record of its state"]
    assert [w["rule"] for w in ep.env["ingest_warnings"]] == ["unknown_pickle_class"]


def test_units_skip_browsergym_and_agentlab_pickles_and_experiment_folders():
    plain = gzip.compress(pickle.dumps([{"goal": "g"}]))
    gym = gzip.compress(b"\x80\x04browsergym.core.env")
    heads = {"/r/A.pkl.gz": plain, "/r/B.pkl.gz": gym, "/r/C.pkl.gz": gzip.compress(b"agentlab.x"),
             "/e/step_0.pkl.gz": plain, "/e/summary_info.json": b"{}", "/f/exp_args.pkl": b"", "/f/x.pkl.gz": plain,
             "/r/D.pkl.gz": b"\x1f\x8b\x08\x00broken"}
    assert androidworld.units(sorted(heads), heads.__getitem__) == ["/r/A.pkl.gz", "/r/D.pkl.gz"]


def test_units_look_for_framework_names_in_the_first_64_kib_of_the_content_only():
    """The content is read from the file's head, bounded: a name past 64 KiB of it is not looked for."""
    near = gzip.compress(b"\0" * 60_000 + b"browsergym.core")
    far = gzip.compress(b"\0" * 70_000 + b"browsergym.core")
    heads = {"/r/near.pkl.gz": near, "/r/far.pkl.gz": far}
    assert androidworld.units(sorted(heads), heads.__getitem__) == ["/r/far.pkl.gz"]


def test_an_action_outside_the_vocabulary_is_a_row_naming_androidworld(tmp_path):
    data = {"action_output_json": [{"action_type": "fly"}, {"action_type": "wait"}], "action_output": [5, 6],
            "action_reason": ["why"]}  # the lists need not be as long as each other
    records = _read(_pickled(tmp_path, [{"goal": "g", "episode_data": data}], "V.pkl.gz"))
    (row,) = [r for r in records if isinstance(r, Rejected)]
    assert (row.rule, row.location, row.record_id, row.snippet) == ("bad_record", "V.pkl.gz", "0:0", None)
    assert row.reason == "V.pkl.gz: episode 0 (task #?): step 0: action_type 'fly' is not an AndroidWorld action"
    (ep,) = [r for r in records if isinstance(r, Episode)]
    # the agent's text is no str: the action itself is the raw record
    assert json.loads(ep.steps[0].action.raw) == {"action_type": "wait"} and ep.steps[0].reasoning is None


def test_a_pickle_that_asks_to_run_code_is_refused_naming_the_file(tmp_path):
    import os

    class Exploit:
        def __reduce__(self):
            return (os.system, ("true",))

    path = tmp_path / "E.pkl.gz"
    path.write_bytes(gzip.compress(pickle.dumps([{"goal": Exploit()}])))
    with pytest.raises(SourceError) as e:
        _read(path)
    assert e.value.rule == "forbidden_pickle_class"
    assert str(e.value).startswith("E.pkl.gz: pickle needs ")
