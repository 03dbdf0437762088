"""The BrowserGym / AgentLab reader called directly (`browsergym.read`): the real AgentLab experiment
(samples/browser/browsergym-agentlab) step by step, and hand-made experiment folders (StepInfos as plain pickled
dicts, which the safe loader reads as AgentLab's records) for what it does not hold: rewards and flags without a
summary, splits, bad fields, side files, tasks, tabs and the action vocabulary."""

import gzip
import json
import pickle
import shutil
import struct
import zlib

import fsspec
import numpy as np
import pytest

from ingest.browser import browsergym as bg
from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError
from tests.conftest import SAMPLES

EXP = SAMPLES / "browser" / "browsergym-agentlab"
TASK = "Compare the payment difference of the last 4 cancelled orders and completed orders"


def _blob(data: bytes, media: str, uri: str) -> str:
    return f"sha256:{uri}|{media}|{len(data)}"


def _read(path) -> list:
    return list(bg.read(Source(fsspec.filesystem("file"), str(path), "in/exp", _blob)))


def _episodes(records) -> list[Episode]:
    return [r for r in records if isinstance(r, Episode)]


def _rejected(records) -> list[Rejected]:
    return [r for r in records if isinstance(r, Rejected)]


def _png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))


def _info(action=None, url="https://x/", title="X", **more) -> dict:
    info = {"obs": {"open_pages_urls": [url], "open_pages_titles": [title], "axtree_txt": f"tree of {url}",
                    "active_page_index": 0}, "action": action}
    for key, value in more.items():
        if key.startswith("obs_"):
            info["obs"][key[4:]] = value
        else:
            info[key] = value
    return info


def _exp(tmp_path, infos, summary=None, **files) -> str:
    exp = tmp_path / "exp"
    if exp.exists():
        shutil.rmtree(exp)
    exp.mkdir()
    for n, info in enumerate(infos):
        if info is not None:
            data = info if isinstance(info, bytes) else gzip.compress(pickle.dumps(info))
            (exp / f"step_{n}.pkl.gz").write_bytes(data)
    if summary is not None:
        (exp / "summary_info.json").write_text(summary if isinstance(summary, str) else json.dumps(summary))
    for name, data in files.items():
        name = name.replace("__", ".")
        (exp / name).write_bytes(data if isinstance(data, bytes) else pickle.dumps(data))
    return str(exp)


def test_the_real_experiment_is_one_episode_of_five_steps():
    records = _read(EXP)
    (ep,) = records
    assert [s.action.kind for s in ep.steps] == ["click", "click", "back", "click", "click"]
    first = ep.steps[0]
    assert first.action.code == 'click("156")' and json.loads(first.action.element) == {"bid": "156"}
    assert first.action.raw.startswith("To compare the payment difference")
    assert first.reasoning.startswith("To compare the payment difference") and "```" not in first.reasoning
    obs = first.observation
    assert obs.title == "Dashboard / Magento Admin" and (obs.width, obs.height) == (1282, 713)
    assert obs.screenshot == f"sha256:in/exp|image/png|{(EXP / 'screenshot_step_0.png').stat().st_size}"
    assert ep.steps[1].observation.screenshot is None and ep.steps[1].observation.width == 1282
    assert ep.steps[2].observation.is_error and "Error: TimeoutError: Locator.click" in ep.steps[2].observation.text
    assert str(first.timestamp) == "2024-11-06 12:50:19.858716+00:00"
    assert [s.reward for s in ep.steps] == [0.0] * 5
    assert ep.final_observation.title == "Orders / Operations / Sales / Magento Admin"
    assert ep.task == TASK and ep.agent == "gpt-4o" and ep.outcome == "unknown" and ep.reward == 0.0
    assert ep.terminated is False and ep.key == "" and (ep.domain, ep.platform) == ("web", "browser")
    env = dict(ep.env)
    assert env.pop("error") == ("Exception uncaught by agent or environment in task webarena.196. RateLimitError:")
    assert env == {"task_name": "webarena.196", "task_seed": env["task_seed"], "max_steps": env["max_steps"],
                   "exp_id": env["exp_id"], "exp_name": env["exp_name"], "truncated": False,
                   "browsergym_version": "0.10.2", "viewport": [1282, 713],
                   "agent_name": "DemoAgentArgs"}
    assert "webarena.196" in env["exp_name"]


def test_rewards_belong_to_the_step_before_and_the_last_info_without_action_is_the_final_observation(tmp_path):
    infos = [_info("goto('https://a/')", profiling={"env_stop": 1_700_000_000.5}),
             _info("click('b1')", reward=0.5, url="https://a/", agent_info={"think": "thinking"}),
             _info(None, reward=np.float64(1.0), url="https://done/", terminated=True)]
    (ep,) = _read(_exp(tmp_path, infos))
    assert [s.reward for s in ep.steps] == [0.5, 1.0]
    assert str(ep.steps[0].timestamp) == "2023-11-14 22:13:20.500000+00:00" and ep.steps[1].timestamp is None
    assert ep.steps[1].reasoning == "thinking" and ep.steps[0].reasoning is None
    assert ep.final_observation.url == "https://done/" and ep.final_observation.text == (
        "URL: https://done/\nTitle: X\ntree of https://done/")
    # no summary: the last StepInfo's flags and the sum of the rewards
    assert (ep.outcome, ep.reward, ep.terminated) == ("success", 1.5, True)
    assert ep.env == {"truncated": False}


def test_the_reasoning_is_agentlabs_think_else_the_text_beside_the_code(tmp_path):
    """A think of blanks says nothing: the text the agent wrote beside its action's code is the reasoning."""
    beside = "I open the page\n```python\nclick('b1')\n```"
    infos = [_info(beside, agent_info={"think": "thinking"}), _info(beside, agent_info={"think": " \n "}),
             _info(beside), _info("click('b1')", agent_info={"think": ""}), _info(None)]
    (ep,) = _read(_exp(tmp_path, infos))
    assert [s.reasoning for s in ep.steps] == ["thinking", "I open the page", "I open the page", None]


@pytest.mark.parametrize("summary, last, expected", [
    ({"terminated": True, "cum_reward": 0}, {}, ("failure", 0.0, True)),
    ({"terminated": True, "cum_reward": -1}, {}, ("failure", -1.0, True)),
    ({"terminated": False, "cum_reward": 1.0, "truncated": True}, {"terminated": True}, ("unknown", 1.0, False)),
    ({"cum_reward": 2}, {"terminated": np.bool_(True)}, ("success", 2.0, True)),
    (None, {"terminated": True, "truncated": True}, ("failure", 0.0, True)),
    (None, {}, ("unknown", 0.0, False)),
])
def test_the_run_result_from_the_summary_else_the_step_infos(tmp_path, summary, last, expected):
    infos = [_info("noop()"), _info(None, **last)]
    (ep,) = _read(_exp(tmp_path, infos, summary))
    assert (ep.outcome, ep.reward, ep.terminated) == expected
    assert ep.env["truncated"] == bool((summary or {}).get("truncated", last.get("truncated")))


def test_a_reward_of_a_lost_step_info_leaves_the_sum_unknown(tmp_path):
    infos = [_info("noop()"), b"\x1f\x8b broken", _info("noop()", reward=1), _info(None, reward=1, terminated=True)]
    records = _read(_exp(tmp_path, infos))
    first, later = _episodes(records)
    assert later.reward is None and later.outcome == "failure"  # terminated, reward unknown: not success
    assert first.steps[0].reward is None


def test_a_missing_step_file_splits_the_episode_into_segments(tmp_path):
    infos = [_info("click('a')"), _info("click('b')"), None, _info("click('c')", reward=0.25), _info(None, reward=1)]
    records = _read(_exp(tmp_path, infos, {"terminated": True, "cum_reward": 1.0}))
    (row,) = _rejected(records)
    assert (row.rule, row.location, row.record_id) == ("missing_file", "step_2.pkl.gz", "step 2")
    assert row.reason == "step_2.pkl.gz: missing from the step files 0..4; the episode is split there"
    first, later = _episodes(records)
    assert (first.key, later.key) == ("", "segment-3")
    assert first.env["segment"] == {"index": 0, "count": 2, "first_step_file": "step_0.pkl.gz",
                                    "last_step_file": "step_1.pkl.gz"}
    assert later.env["segment"] == {"index": 1, "count": 2, "first_step_file": "step_3.pkl.gz",
                                    "last_step_file": "step_3.pkl.gz"}
    assert (first.outcome, first.reward, first.terminated, first.final_observation) == ("unknown", None, False, None)
    assert (later.outcome, later.reward, later.terminated) == ("success", 1.0, True)
    assert first.steps[1].reward is None and later.steps[0].reward == 1.0
    assert later.final_observation.url == "https://x/"


def test_a_last_segment_cut_before_the_end_is_not_terminal(tmp_path):
    infos = [_info("click('a')"), _info("click('b')"), None, _info(None)]
    records = _read(_exp(tmp_path, infos, {"terminated": True, "cum_reward": 1.0}))
    (ep,) = _episodes(records)
    assert ep.outcome == "success" and ep.terminated is False  # step 3 is only an observation: nothing read of it
    infos = [_info("click('a')"), _info("click('b')")]
    (ep,) = _read(_exp(tmp_path, infos, {"terminated": True, "cum_reward": 1.0}))
    assert ep.terminated is True and ep.final_observation is None  # ends on the last StepInfo's own action


def test_an_info_without_action_before_the_end_splits_there(tmp_path):
    infos = [_info("click('a')"), _info(None, url="https://mid/"), _info("click('c')"), _info(None)]
    records = _read(_exp(tmp_path, infos))
    (row,) = _rejected(records)
    assert (row.rule, row.record_id, row.location) == ("bad_record", "step 1", "step_1.pkl.gz")
    assert row.reason == ("step_1.pkl.gz: the agent chose no action, yet step files follow; the episode is split "
                          "there")
    first, later = _episodes(records)
    assert first.final_observation.url == "https://mid/" and len(first.steps) == 1 and later.key == "segment-2"
    # a first StepInfo without action: no segment starts there
    records = _read(_exp(tmp_path, [_info(None), _info("click('a')"), _info(None)]))
    assert [r.record_id for r in _rejected(records)] == ["step 0"]
    assert [e.key for e in _episodes(records)] == [""] and len(_episodes(records)[0].steps) == 1


def test_a_step_the_schema_refuses_splits_the_episode(tmp_path):
    infos = [_info("click('a')"), _info("click('b')", obs_axtree_txt="bad \udc80"), _info("click('c')"), _info(None)]
    records = _read(_exp(tmp_path, infos))
    (row,) = _rejected(records)
    assert (row.rule, row.record_id, row.location) == ("bad_record", "step 1", "step_1.pkl.gz")
    assert row.reason.startswith("step_1.pkl.gz: field observation.text: a string holding a lone surrogate")
    assert row.reason.endswith("; the episode is split there")
    first, later = _episodes(records)
    assert len(first.steps) == 1 and first.final_observation is None and later.key == "segment-2"


@pytest.mark.parametrize("bad, field", [
    (_info("fill('a1', 'x \udc80')"), "action.code"),
    (_info("click('b')", agent_info={"think": "hm \udc80"}), "reasoning"),
])
def test_an_action_or_reasoning_the_schema_refuses_splits_the_episode(tmp_path, bad, field):
    records = _read(_exp(tmp_path, [_info("click('a')"), bad, _info("click('c')"), _info(None)]))
    (row,) = _rejected(records)
    assert row.record_id == "step 1" and row.reason.startswith(f"step_1.pkl.gz: field {field}: a string holding")
    first, later = _episodes(records)
    assert len(first.steps) == 1 and later.key == "segment-2" and len(later.steps) == 1


@pytest.mark.parametrize("info, field", [
    ([1, 2], "(the record): list, expected a StepInfo"),
    ({"obs": None}, "obs: NoneType, expected a dict"),
    ({"obs": "page"}, "obs: str, expected a dict"),
    (_info(7), "action: int, expected str"),
    (_info("noop()", reward="1"), "reward: str, expected int or float"),
    (_info("noop()", reward=True), "reward: bool, expected int or float"),
    (_info("noop()", agent_info=["x"]), "agent_info: list, expected dict"),
    (_info("noop()", profiling="p"), "profiling: str, expected dict"),
    (_info("noop()", agent_info={"think": 3}), "agent_info.think: int, expected str"),
    (_info("noop()", profiling={"env_stop": "t"}), "profiling.env_stop: str, expected int or float"),
    (_info("noop()", obs_open_pages_urls="u"), "obs.open_pages_urls: str, expected list or tuple"),
    (_info("noop()", obs_open_pages_titles=["a", None]), "obs.open_pages_titles[1]: NoneType, expected str"),
    (_info("noop()", obs_open_pages_urls=["a", "b", 3]), "obs.open_pages_urls[2]: int, expected str"),
    (_info("noop()", obs_last_action_error=1), "obs.last_action_error: int, expected str"),
    (_info("noop()", obs_axtree_txt=b"x"), "obs.axtree_txt: bytes, expected str"),
    (_info("noop()", obs_pruned_html=2.0), "obs.pruned_html: float, expected str"),
])
def test_a_field_of_the_wrong_type_is_named(tmp_path, info, field):
    records = _read(_exp(tmp_path, [_info("click('a')"), info, _info(None)]))
    (row,) = _rejected(records)
    assert (row.rule, row.record_id, row.location) == ("bad_record", "step 1", "step_1.pkl.gz")
    assert row.reason == f"step_1.pkl.gz: field {field}; the episode is split there"


def test_numpy_values_and_tuples_are_plain_values(tmp_path):
    info = _info("noop()", reward=np.int64(1), profiling={"env_stop": np.float64(1e9)},
                 obs_open_pages_urls=("https://a/", "https://b/"), obs_open_pages_titles=("A", "B"),
                 obs_active_page_index=np.array([1]))
    (ep,) = _read(_exp(tmp_path, [info, _info(None, reward=np.int64(2))]))
    assert ep.steps[0].observation.url == "https://b/" and ep.steps[0].reward == 2.0
    assert str(ep.steps[0].timestamp) == "2001-09-09 01:46:40+00:00" and ep.reward == 3.0


def test_an_unreadable_step_file_is_quarantined_with_its_reason(tmp_path):
    records = _read(_exp(tmp_path, [_info("click('a')"), gzip.compress(b"\x80\x04 junk"), _info(None)]))
    (row,) = _rejected(records)
    assert row.rule == "parse_error" and row.record_id == "step 1" and row.location == "step_1.pkl.gz"
    assert row.reason.startswith("step_1.pkl.gz: not a readable pickle") and row.reason.endswith(
        "; the episode is split there")


def test_trailing_data_is_said_and_the_step_kept(tmp_path):
    data = gzip.compress(pickle.dumps(_info("click('a')"))) + gzip.compress(b"more")
    records = _read(_exp(tmp_path, [data, _info(None)]))
    (row,) = _rejected(records)
    assert (row.rule, row.record_id, row.location) == ("trailing_data", "step 0", "step_0.pkl.gz")
    assert row.reason.startswith("step_0.pkl.gz: ") and "after the end of the pickle" in row.reason
    assert len(_episodes(records)[0].steps) == 1


def test_a_run_none_of_whose_steps_can_be_read(tmp_path):
    records = _read(_exp(tmp_path, [gzip.compress(b"junk"), gzip.compress(b"junk")],
                         {"terminated": True, "cum_reward": 1, "truncated": False}))
    row = records[-1]
    assert row.rule == "empty_episode" and row.location == "summary_info.json"
    assert json.loads(row.snippet) == {"outcome": "success", "reward": 1.0, "terminated": True, "truncated": False,
                                       "steps_recorded": 2}
    assert row.reason.startswith("in/exp: no step of the run could be read")
    # steps that are read but hold no action make no episode either
    records = _read(_exp(tmp_path, [_info(None)]))
    assert [r.rule for r in records] == ["empty_episode"] and json.loads(records[0].snippet)["steps_recorded"] == 1


def test_a_folder_without_step_files_is_one_error(tmp_path):
    with pytest.raises(SourceError) as e:
        _read(_exp(tmp_path, [], {"n_steps": 0}))
    assert (e.value.rule, e.value.reason) == ("empty_episode", "in/exp: no step_<n>.pkl.gz files")


@pytest.mark.parametrize("summary, rows", [
    ("{broken", [("parse_error", None)]),
    ("[1]", [("bad_record", None)]),
    ({"terminated": "yes", "truncated": 1, "cum_reward": True, "err_msg": 5},
     [("bad_record", "terminated"), ("bad_record", "truncated"), ("bad_record", "cum_reward"),
      ("bad_record", "err_msg")]),
])
def test_a_bad_summary_is_said_and_the_episode_kept_without_it(tmp_path, summary, rows):
    records = _read(_exp(tmp_path, [_info("noop()"), _info(None, terminated=True, reward=1)], summary))
    assert [(r.rule, r.record_id) for r in _rejected(records)] == rows
    assert all(r.location == "summary_info.json" for r in _rejected(records))
    (ep,) = _episodes(records)
    assert (ep.outcome, ep.reward) == ("success", 1.0)  # from the StepInfos


def test_bad_summary_reasons(tmp_path):
    def reasons(summary):
        return [r.reason for r in _rejected(_read(_exp(tmp_path, [_info("noop()"), _info(None)], summary)))]

    assert reasons("[1]") == ["summary_info.json: not a JSON object; the episode is kept without its summary"]
    assert reasons({"terminated": "yes", "cum_reward": "1", "err_msg": 5}) == [
        "summary_info.json: field terminated is str, expected bool; ignored",
        "summary_info.json: field cum_reward is str, expected int; ignored",
        "summary_info.json: field err_msg is int, expected str; ignored"]
    (reason,) = reasons("{broken")
    assert reason.startswith("summary_info.json: invalid JSON: ") and reason.endswith(
        "; the episode is kept without its summary")


def test_side_files_that_cannot_be_read_are_said_and_the_episode_kept(tmp_path):
    records = _read(_exp(tmp_path, [_info("noop()", obs_goal="from the obs"), _info(None)],
                         exp_args__pkl=b"\x80\x04 junk", goal_object__pkl__gz=gzip.compress(b"\x80\x04 junk")))
    rows = _rejected(records)
    assert [(r.rule, r.location) for r in rows] == [("parse_error", "exp_args.pkl"),
                                                    ("parse_error", "goal_object.pkl.gz")]
    assert rows[0].reason.startswith("exp_args.pkl: not a readable pickle")
    assert rows[1].reason.endswith("; the task is taken from the first observation")
    (ep,) = _episodes(records)
    assert ep.task == "from the obs" and ep.agent is None


def test_exp_args_give_the_agent_and_the_task_fields(tmp_path):
    exp_args = {"agent_args": {"agent_name": "GenericAgent", "chat_model_args": {"model_name": "gpt-x"}},
                "env_args": {"task_name": "miniwob.click", "task_seed": np.int64(7), "max_steps": 1 << 70},
                "exp_id": "id-1", "exp_name": "exp"}
    (ep,) = _read(_exp(tmp_path, [_info("noop()"), _info(None)], {"err_msg": "  \n", "truncated": True},
                       exp_args__pkl=exp_args))
    assert ep.agent == "gpt-x"
    assert ep.env == {"task_name": "miniwob.click", "task_seed": 7, "exp_id": "id-1", "exp_name": "exp",
                      "truncated": True, "agent_name": "GenericAgent"}  # a seed too large for JSON is left out


@pytest.mark.parametrize("agent_args, agent", [
    ({"model_name": "m1", "chat_model_args": {"model_name": "m2"}, "agent_name": "a"}, "m1"),
    ({"chat_model_args": {"model_name": "m2"}, "agent_name": "a"}, "m2"),
    ({"chat_model_args": "m2", "agent_name": "a"}, "a"),
    ({"model_name": 3}, None),
    ({"model_name": True, "agent_name": "a"}, None),
])
def test_the_agent_name(tmp_path, agent_args, agent):
    (ep,) = _read(_exp(tmp_path, [_info("noop()"), _info(None)], exp_args__pkl={"agent_args": agent_args}))
    assert ep.agent == agent


def test_exp_args_of_another_shape_are_ignored(tmp_path):
    (ep,) = _read(_exp(tmp_path, [_info("noop()"), _info(None)], exp_args__pkl=["not", "a", "dict"]))
    assert ep.agent is None and ep.env == {"truncated": False}
    (ep,) = _read(_exp(tmp_path, [_info("noop()"), _info(None)],
                       exp_args__pkl={"agent_args": "x", "env_args": ["y"], "exp_id": {"no": "scalar"}}))
    assert ep.env == {"truncated": False}


@pytest.mark.parametrize("goal, obs, task", [
    ([{"type": "text", "text": "one"}, {"type": "image_url", "text": "no"}, {"type": "text", "text": "two"}], {},
     "one\ntwo"),
    ([{"type": "text", "text": ""}, "x"], {"goal": "fallback"}, "fallback"),
    (None, {"goal_object": ({"type": "text", "text": "from obs"},)}, "from obs"),
    (None, {"chat_messages": [{"role": "assistant", "message": "hi"}, {"role": "user", "message": "do it"},
                              {"role": "user", "message": "later"}], "goal": "g"}, "do it"),
    (None, {"chat_messages": [{"role": "assistant", "message": "hi"}], "goal": "g"}, "g"),
    (None, {"chat_messages": "junk", "goal": "g"}, "g"),
    (None, {"chat_messages": [{"role": "user", "message": 5}], "goal": "g"}, None),
    (None, {"goal": ["not text"]}, None),
    ("plain goal", {"goal": "g"}, "g"),
])
def test_the_task(tmp_path, goal, obs, task):
    files = {"goal_object__pkl__gz": gzip.compress(pickle.dumps(goal))} if goal is not None else {}
    first = _info("noop()")
    first["obs"].update(obs)
    (ep,) = _read(_exp(tmp_path, [first, _info(None)], **files))
    assert ep.task == task


def test_the_task_comes_from_the_first_step_info_read(tmp_path):
    (first, later) = _episodes(_read(_exp(tmp_path, [b"junk", _info("noop()", obs_goal="second"), None,
                                                     _info("noop()", obs_goal="fourth"), _info(None)])))
    assert first.task == later.task == "second"


def test_package_versions(tmp_path):
    files = {"package_versions__txt": b"numpy==1.0\nBrowserGym-Core == 0.11.0 \nbrowsergym==0.9\nagentlab==0.4.2\n"}
    (ep,) = _read(_exp(tmp_path, [_info("noop()"), _info(None)], **files))
    assert ep.env["browsergym_version"] == "0.11.0" and ep.env["agentlab_version"] == "0.4.2"
    (ep,) = _read(_exp(tmp_path, [_info("noop()"), _info(None)], package_versions__txt=b"browsergym==0.9\n\xff"))
    assert ep.env["browsergym_version"] == "0.9" and "agentlab_version" not in ep.env


def test_the_error_is_its_first_two_lines(tmp_path):
    (ep,) = _read(_exp(tmp_path, [_info("noop()"), _info(None)], {"err_msg": "\n  first\nsecond\nthird\n"}))
    assert ep.env["error"] == "first second"


def test_screenshots_give_the_viewport_of_every_step(tmp_path):
    infos = [_info("click('a')"), _info("click('b')"), _info(None)]
    (ep,) = _read(_exp(tmp_path, infos, screenshot_step_1__png=_png(800, 600), screenshot_step_2__png=b"not png",
                       screenshot_step_5__png=_png(1, 1)))
    obs = [s.observation for s in ep.steps] + [ep.final_observation]
    assert [o.screenshot for o in obs] == [None, "sha256:in/exp|image/png|33", "sha256:in/exp|image/png|7"]
    assert [(o.width, o.height) for o in obs] == [(800, 600)] * 3
    assert ep.env["viewport"] == [800, 600]


def test_a_screenshot_of_a_lost_step_is_not_read(tmp_path):
    stored = []

    def blob(data, media, uri):
        stored.append(data)
        return "ref"

    path = _exp(tmp_path, [_info("click('a')"), b"junk", _info(None)], screenshot_step_1__png=_png(2, 2))
    list(bg.read(Source(fsspec.filesystem("file"), path, "in/exp", blob)))
    assert stored == []


def test_the_observation_of_several_tabs():
    obs = {"open_pages_urls": ["https://a/", "https://b/"], "open_pages_titles": ["A", "B"],
           "active_page_index": np.int64(1), "last_action_error": "", "axtree_txt": "", "pruned_html": "<p>"}
    o = bg.observation_from(obs, "ref", (10, 20))
    assert o.text == "URL: https://b/\nTitle: B\nTabs: [0] A | [1]* B" and o.kind == "web"
    assert (o.url, o.title, o.is_error, o.screenshot, o.width, o.height) == ("https://b/", "B", False, "ref", 10, 20)
    assert json.loads(o.ui_tree) == {"pruned_html": "<p>"}
    o = bg.observation_from({"open_pages_urls": ["https://a/"], "active_page_index": 3, "last_action_error": "E"},
                            None, None)
    assert o.text == "URL: \nTitle: \nError: E" and o.url is None and o.is_error and o.ui_tree is None
    assert (o.width, o.height) == (None, None)
    assert bg._active_index({"active_page_index": []}) == 0
    assert bg._active_index({"active_page_index": [2]}) == 2
    assert bg._active_index({"active_page_index": "1"}) == 0
    assert bg._active_index({}) == 0


def test_units_claim_experiment_folders():
    heads = {"/a/step_0.pkl.gz": b"\x1f\x8b", "/b/summary_info.json": b'{"n_steps": 1}',
             "/c/step_0.pkl.gz": b"", "/c/goal_object.pkl.gz": b"", "/d/summary_info.json": b"{}",
             "/e/step_x.pkl.gz": b"\x1f\x8b", "/f/exp_args.pkl": b"", "/g/step_10.pkl.gz": b"x",
             "/g/summary_info.json": b"{}", "/h/exp_args.pkl": b'"n_steps"'}
    assert bg.units(sorted(heads), heads.__getitem__) == ["/a", "/b", "/c", "/g"]


def test_code_blocks_and_reasoning():
    assert bg.extract_code("think\n```python\nclick('a')\n```\nmore") == ("click('a')", "think\n\nmore")
    assert bg.extract_code("```py click('a')``` ```fill('b', 'x')```") == ("click('a')\nfill('b', 'x')", None)
    assert bg.extract_code("  click('a')  ") == ("click('a')", None)


@pytest.mark.parametrize("code, error", [
    ("x" * 70_000, "70000 characters of code: longer than any action call"),
    ("click(", "not Python call syntax: "),
    ("x = 1", "not a plain function call: x = 1"),
    ("obj.click('a')", "not a plain function call: obj.click('a')"),
    ("click(a)", "non-literal argument in click(a)"),
    ("click(x=a)", "non-literal argument in click(x=a)"),
    ("", "no action call"),
    ("f(" + "[" * 300 + "]" * 300 + ")", "not Python call syntax: too many nested parentheses"),
])
def test_what_is_no_action_call(code, error):
    with pytest.raises(ValueError) as e:
        bg.parse_calls(code)
    assert str(e.value).startswith(error)


def test_code_the_parser_cannot_take_is_no_call_and_says_why():
    # a chain too long for the parser's recursion (RecursionError) or for its stack of unary operators (MemoryError)
    for code, why in (("1" + "+1" * 30000, "RecursionError"), ("f(" + "-" * 60000 + "1)", "MemoryError")):
        with pytest.raises(ValueError) as e:
            bg.parse_calls(code)
        assert str(e.value) == f"not Python call syntax: {why}"
        assert bg.action_from_text(code, None)[0].kind == "code"


def test_what_is_no_call_is_quoted_up_to_80_characters():
    long = "x = " + "1 + " * 40 + "1"
    with pytest.raises(ValueError) as e:
        bg.parse_calls(long)
    assert str(e.value) == f"not a plain function call: {long[:80]}"
    call = "click(" + ", ".join(["a"] * 40) + ")"
    with pytest.raises(ValueError) as e:
        bg.parse_calls(call)
    assert str(e.value) == f"non-literal argument in {call[:80]}"


def test_calls_with_literal_arguments():
    assert bg.parse_calls("click('a', button='right')\nnoop(wait_ms=5)\nf(**{'a': 1})") == [
        ("click", ["a"], {"button": "right"}), ("noop", [], {"wait_ms": 5}), ("f", [], {})]
    at_limit = "noop();" * 9361 + "noop()   "  # 65_536 characters: parsed
    assert len(at_limit) == 65_536 and len(bg.parse_calls(at_limit)) == 9362
    with pytest.raises(ValueError):
        bg.parse_calls(at_limit + " ")


def _act(text, size=(1000, 500)):
    return bg.action_from_text(text, size)[0]


@pytest.mark.parametrize("text, expected", [
    ("click('a1')", {"kind": "click", "element": '{"bid":"a1"}'}),
    ("click('a1', 'right')", {"kind": "right_click"}),
    ("click(bid='a1', button='right')", {"kind": "right_click", "element": '{"bid":"a1"}'}),
    ("dblclick('a1', 'right')", {"kind": "double_click"}),
    ("fill('a1', 'v')", {"kind": "type", "text": "v"}),
    ("fill('a1')", {"kind": "type", "text": ""}),
    ("clear('a1')", {"kind": "type", "text": ""}),
    ("fill('a1', value='w')", {"kind": "type", "text": "w"}),
    ("select_option('a1', 'opt')", {"kind": "click", "text": "opt", "element": '{"bid":"a1"}'}),
    ("select_option('a1', ['x', 'y'])", {"kind": "click", "text": '["x","y"]'}),
    ("select_option(bid='a1', options='o')", {"kind": "click", "text": "o"}),
    ("press('a1', 'Enter')", {"kind": "key", "keys": ["Enter"], "element": '{"bid":"a1"}'}),
    ("press('a1', '+')", {"kind": "key", "keys": ["+"]}),
    ("press('a1', key_comb='Shift+Tab')", {"kind": "hotkey", "keys": ["Shift", "Tab"]}),
    ("press('a1')", {"kind": "key", "keys": [""]}),
    ("keyboard_press('Control+c')", {"kind": "hotkey", "keys": ["Control", "c"], "element": None}),
    ("keyboard_press(key='Escape')", {"kind": "key", "keys": ["Escape"]}),
    ("keyboard_press()", {"kind": "key", "keys": [""]}),
    ("keyboard_type('hi')", {"kind": "type", "text": "hi"}),
    ("keyboard_insert_text(text='yo')", {"kind": "type", "text": "yo"}),
    ("drag_and_drop('a1', 'b2')", {"kind": "drag", "element": '{"bid":"a1","target_bid":"b2"}'}),
    ("drag_and_drop('a1', to_bid='b3')", {"kind": "drag", "element": '{"bid":"a1","target_bid":"b3"}'}),
    ("scroll(0, -10)", {"kind": "scroll", "direction": "up"}),
    ("scroll(5, 5)", {"kind": "scroll", "direction": "down"}),
    ("scroll(6, 5)", {"kind": "scroll", "direction": "right"}),
    ("scroll(-6, 5)", {"kind": "scroll", "direction": "left"}),
    ("scroll(delta_x=None, delta_y=None)", {"kind": "scroll", "direction": "up"}),
    ("scroll(delta_y=3)", {"kind": "scroll", "direction": "down"}),
    ("scroll(delta_x=5)", {"kind": "scroll", "direction": "right"}),
    ("scroll()", {"kind": "scroll", "direction": "up"}),
    ("scroll(0, 1)", {"kind": "scroll", "direction": "down"}),
    ("scroll(1, 0)", {"kind": "scroll", "direction": "right"}),
    ("mouse_click(500, 250, 'right')", {"kind": "right_click", "x": 0.5}),
    ("mouse_click(500, 250)", {"kind": "click", "x": 0.5, "y": 0.5}),
    ("mouse_click(x=2000, y=-5, button='right')", {"kind": "right_click", "x": 1.0, "y": 0.0}),
    ("mouse_click(500, '250')", {"kind": "click", "x": None, "y": None}),
    ("mouse_click('500', 250)", {"kind": "click", "x": None}),
    ("mouse_dblclick(100, 100, 'right')", {"kind": "double_click", "x": 0.1, "y": 0.2}),
    ("hover('h1')", {"kind": "move", "element": '{"bid":"h1"}'}),
    ("mouse_move(x=250, y=125)", {"kind": "move", "x": 0.25, "y": 0.25}),
    ("mouse_drag_and_drop(100, 50, 900, 450)", {"kind": "drag", "x": 0.1, "y": 0.1, "x2": 0.9, "y2": 0.9}),
    ("mouse_drag_and_drop(from_x=0, from_y=0, to_x=1000, to_y=500)", {"x": 0.0, "x2": 1.0, "y2": 1.0}),
    ("goto(url='https://x/')", {"kind": "navigate", "text": "https://x/"}),
    ("go_back()", {"kind": "back"}),
    ("send_msg_to_user(text='answer')", {"kind": "message", "text": "answer"}),
    ("report_infeasible('cannot')", {"kind": "done", "text": "cannot"}),
    ("report_infeasible(reason='no')", {"kind": "done", "text": "no"}),
    ("noop()", {"kind": "wait", "duration_s": 1.0}),
    ("noop(250)", {"kind": "wait", "duration_s": 0.25}),
    ("noop(wait_ms='x')", {"kind": "wait", "duration_s": None}),
    ("focus('f1')", {"kind": "code", "element": '{"bid":"f1"}'}),
    ("tab_focus(2)", {"kind": "code", "element": None}),
    ("new_tab()", {"kind": "code", "element": None}),
    ("send_msg_to_user(42)", {"kind": "message", "text": "42"}),
    ("goto(['a'])", {"kind": "navigate", "text": '["a"]'}),
])
def test_actions_in_the_shared_vocabulary(text, expected):
    action = _act(text)
    for name, value in expected.items():
        assert getattr(action, name) == value, name
    assert action.code == text and action.raw == text
    (_, args, kwargs), = bg.parse_calls(text)
    assert json.loads(action.arguments) == {"args": args, "kwargs": kwargs}  # the call as written


def test_arguments_of_one_call_and_of_several():
    action = _act("fill('a1', value='v')")
    assert json.loads(action.arguments) == {"args": ["a1"], "kwargs": {"value": "v"}}
    assert json.loads(_act("click('a1')").arguments) == {"args": ["a1"], "kwargs": {}}
    action = _act("click('a')\nfill('b', 'x')")
    assert action.kind == "click" and json.loads(action.arguments) == [
        {"name": "click", "args": ["a"], "kwargs": {}}, {"name": "fill", "args": ["b", "x"], "kwargs": {}}]
    action, reasoning = bg.action_from_text("I click.\n```click('a')```", None)
    assert reasoning == "I click." and action.code == "click('a')" and action.raw == "I click.\n```click('a')```"


def test_points_need_a_screen_size():
    assert (_act("mouse_click(500, 250)", None).x, _act("mouse_click(500, 250)", None).y) == (None, None)
    assert _act("mouse_move(500, 250)", None).x is None


def test_output_that_is_no_call_stays_code_verbatim():
    action, reasoning = bg.action_from_text("Thinking.\n```python\nclick(bid)\n```", None)
    assert (action.kind, action.code, action.raw) == ("code", "click(bid)", "Thinking.\n```python\nclick(bid)\n```")
    assert reasoning == "Thinking." and action.arguments is None
    action, _ = bg.action_from_text("click('a', {1: 2})", None)  # arguments JSON cannot hold
    assert action.kind == "code"
    action, _ = bg.action_from_text("scroll('a', 1)", None)
    assert action.kind == "code"
    action, _ = bg.action_from_text("press('a1', None)", None)
    assert action.kind == "key" and action.keys == ["None"]


class NewAgentInfo:
    """A class no reader lists (as a newer AgentLab would pickle): it loads as the record of its state."""

    def __init__(self, think: str):
        self.think = think


def test_classes_no_reader_lists_are_said_once_naming_the_first_file_holding_them(tmp_path):
    name = f"{__name__}.NewAgentInfo"
    infos = [_info("noop()", extra=NewAgentInfo("a")), _info("noop()", extra=NewAgentInfo("b")), _info(None)]
    ep = _episode(_read(_exp(tmp_path, infos, exp_args__pkl={"agent_args": {"x": NewAgentInfo("c")}})))
    assert ep.env["ingest_warnings"] == [{"rule": "unknown_pickle_class", "reason": f"step_0.pkl.gz holds {name}, "
                                          "a class this reader does not list: kept as the record of its state"}]
    for files, where in (({"exp_args__pkl": {"agent_args": NewAgentInfo("c")}}, "exp_args.pkl"),
                         ({"goal_object__pkl__gz": gzip.compress(pickle.dumps([NewAgentInfo("g")]))},
                          "goal_object.pkl.gz")):
        ep = _episode(_read(_exp(tmp_path, [_info("noop()"), _info(None)], **files)))
        assert [w["reason"].split(" holds ")[0] for w in ep.env["ingest_warnings"]] == [where]
        assert ep.env["ingest_warnings"][0]["reason"].startswith(f"{where} holds {name}, ")


def _episode(records) -> Episode:
    (ep,) = _episodes(records)
    return ep


def test_the_units_pickle_budgets_apply_to_steps_and_side_files(tmp_path):
    from ingest.source import Budgets

    path = _exp(tmp_path, [_info("noop()", extra=list(range(3000))), _info("noop()"), _info(None)],
                exp_args__pkl={"big": list(range(3000))})
    records = list(bg.read(Source(fsspec.filesystem("file"), path, "in/exp", _blob,
                                  budgets=Budgets(pickle_items=1000))))
    assert [(r.rule, r.location) for r in _rejected(records)] == [("budget_exceeded", "step_0.pkl.gz"),
                                                                  ("budget_exceeded", "exp_args.pkl")]


@pytest.mark.parametrize("stop, when", [(0, None), (-5, None), (1, "1970-01-01 00:00:01+00:00"),
                                        (253402300799.5, "9999-12-31 23:59:59.500000+00:00"),
                                        (253402300800, None)])
def test_env_stop_times_within_the_calendar(tmp_path, stop, when):
    ep = _episode(_read(_exp(tmp_path, [_info("noop()", profiling={"env_stop": stop}), _info(None)])))
    assert (str(ep.steps[0].timestamp) if ep.steps[0].timestamp else None) == when


@pytest.mark.parametrize("seed, kept", [(-(1 << 63), True), (-(1 << 63) - 1, False), ((1 << 63) - 1, True),
                                        (1 << 63, False), (-5, True)])
def test_env_integers_json_can_hold(tmp_path, seed, kept):
    ep = _episode(_read(_exp(tmp_path, [_info("noop()"), _info(None)],
                             exp_args__pkl={"env_args": {"task_seed": seed}})))
    assert ep.env.get("task_seed") == (seed if kept else None)


def test_an_integer_past_int64_is_left_out_by_the_reader_before_the_schema_sees_it(tmp_path):
    """The reader keeps to what an env column holds itself: the episode comes alone, with no row of the schema's
    check behind it."""
    records = _read(_exp(tmp_path, [_info("noop()"), _info(None)],
                         exp_args__pkl={"env_args": {"task_seed": -(1 << 63) - 1}}))
    assert len(records) == 1 and "task_seed" not in records[0].env


def test_a_screenshot_that_cannot_be_read_is_said_and_the_next_still_read(tmp_path):
    from ingest.source import Budgets

    big = _png(8, 8) + b"\0" * 20_000
    path = _exp(tmp_path, [_info("click('a')"), _info("mouse_click(400, 300)"), _info(None)],
                screenshot_step_0__png=big, screenshot_step_1__png=_png(800, 600))
    records = list(bg.read(Source(fsspec.filesystem("file"), path, "in/exp", _blob,
                                  budgets=Budgets(file_bytes=10_000))))
    (row,) = _rejected(records)
    assert (row.rule, row.location) == ("file_too_large", "screenshot_step_0.png")
    assert row.reason.endswith("; step 0 is kept without its screenshot")
    ep = _episode(records)
    assert ep.steps[0].observation.screenshot is None and ep.steps[1].observation.screenshot is not None
    # the viewport the screenshots give places a mouse click
    assert (ep.steps[1].action.x, ep.steps[1].action.y) == (0.5, 0.5)


def test_goal_texts_that_are_not_strings_are_left_out(tmp_path):
    goal = [{"type": "text", "text": "one"}, {"type": "text", "text": 5}, {"type": "text", "text": "two"}]
    goal_file = gzip.compress(pickle.dumps(goal))
    (ep,) = _read(_exp(tmp_path, [_info("noop()"), _info(None)], goal_object__pkl__gz=goal_file))
    assert ep.task == "one\ntwo"


def test_an_active_page_past_the_tabs_has_no_url():
    o = bg.observation_from({"open_pages_urls": ["https://a/"], "open_pages_titles": ["A"], "active_page_index": 1},
                            None, None)
    assert (o.url, o.title, o.text) == (None, None, "URL: \nTitle: ")


def test_a_missing_step_just_before_the_last_is_said(tmp_path):
    records = _read(_exp(tmp_path, [_info("click('a')"), _info("click('b')"), None, _info(None)]))
    assert [(r.rule, r.record_id) for r in _rejected(records)] == [("missing_file", "step 2")]


def test_a_bad_step_does_not_stop_the_reading_of_the_next(tmp_path):
    records = _read(_exp(tmp_path, [_info("click('a')"), _info(7), _info("click('c')"), _info(None)]))
    first, later = _episodes(records)
    assert (len(first.steps), later.key, len(later.steps)) == (1, "segment-2", 1)


def test_a_run_ended_by_the_summary_but_cut_after_its_last_observation_is_not_terminal(tmp_path):
    # step 1 has no action (the final observation of step 0); step 2 exists but cannot be read
    records = _read(_exp(tmp_path, [_info("click('a')"), _info(None), b"junk"], {"terminated": True,
                                                                                "cum_reward": 1}))
    ep = _episode(records)
    assert ep.final_observation is not None and (ep.outcome, ep.terminated) == ("success", False)


def test_a_task_the_schema_refuses_quarantines_the_episode_naming_the_unit(tmp_path):
    goal = gzip.compress(pickle.dumps([{"type": "text", "text": "bad \udc80"}]))
    (row,) = _read(_exp(tmp_path, [_info("noop()"), _info(None)], goal_object__pkl__gz=goal))
    assert (row.rule, row.location) == ("schema_mismatch", "in/exp")
    assert row.reason.startswith("in/exp: the episode: field task: a string holding a lone surrogate")
