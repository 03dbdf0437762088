import gzip
import json
import os
import pickle
import pathlib
import shutil
import sys
import types

import pytest

from ingest.browser import browsergym
from ingest.safe_pickle import restricted_loads
from ingest.source import SourceError
from tests.conftest import SAMPLES

EXP = SAMPLES / "browser" / "browsergym-agentlab"
TASK = "Compare the payment difference of the last 4 cancelled orders and completed orders"
DASHBOARD = "http://ec2-18-223-217-129.us-east-2.compute.amazonaws.com:7780/admin/admin/dashboard/"


def test_experiment_folder_is_one_episode_with_agent_actions(run, query):
    result = run("ingest-browser", [EXP])
    assert result.status == "success" and result.episodes == 1 and result.steps == 5
    assert result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    first = steps[0]["action"]
    assert first["kind"] == "click" and json.loads(first["element"]) == {"bid": "156"}
    assert first["code"] == 'click("156")' and json.loads(first["arguments"]) == {"args": ["156"], "kwargs": {}}
    assert first["raw"].startswith("To compare the payment difference") and first["raw"].endswith('```click("156")```')
    assert steps[0]["reasoning"].startswith("To compare the payment difference")
    assert "```" not in steps[0]["reasoning"]
    assert [s["action"]["kind"] for s in steps] == ["click", "click", "back", "click", "click"]
    obs = steps[0]["observation"]
    assert obs["kind"] == "web" and obs["url"] == DASHBOARD and obs["title"] == "Dashboard / Magento Admin"
    assert obs["text"].startswith(f"URL: {DASHBOARD}\nTitle: Dashboard / Magento Admin\nRootWebArea")
    assert "[156] link '\\ue60b SALES'" in obs["text"]
    assert obs["width"] == 1282 and obs["height"] == 713 and obs["screenshot"].startswith("sha256:")
    assert json.loads(obs["ui_tree"])["pruned_html"].startswith('<head bid="1">')
    # the click on "Orders" timed out: the next observation carries the error
    assert steps[2]["observation"]["is_error"] and "Error: TimeoutError: Locator.click" in steps[2]["observation"]["text"]
    assert steps[1]["observation"]["screenshot"] is None  # screenshot_step_1.png is not bundled
    final = steps[-1]["final_observation"]
    assert final["title"] == "Orders / Operations / Sales / Magento Admin" and final["is_error"]
    assert str(steps[0]["timestamp"]) == "2024-11-06 12:50:19.858716+00:00"
    assert steps[1]["reward"] == 0.0
    # the agent crashed on a rate limit: the episode is cut, not ended
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]
    ep = query("SELECT * FROM episodes")[0]
    assert ep["task"] == TASK and ep["agent"] == "gpt-4o" and ep["outcome"] == "unknown"
    assert ep["reward"] == 0.0 and ep["source_format"] == "browsergym"
    env = json.loads(ep["env"])
    assert env["task_name"] == "webarena.196" and env["browsergym_version"] == "0.10.2"
    assert "RateLimitError" in env["error"]


class _RunsShell:
    def __reduce__(self):
        return os.system, ("touch /tmp/trajforge-pwned",)


def test_malicious_step_pickle_is_refused_and_never_runs(run, query, sample_copy, tmp_path):
    exp = sample_copy("browser/browsergym-agentlab")
    (exp / "step_3.pkl.gz").write_bytes(gzip.compress(pickle.dumps(_RunsShell())))
    marker = "/tmp/trajforge-pwned"
    if os.path.exists(marker):
        os.remove(marker)
    result = run("ingest-browser", [exp])
    assert not os.path.exists(marker)
    # the refused step is quarantined alone: steps 0-2 end cut, step 4 (with step 5 as final) stands apart
    assert result.status == "success" and result.episodes == 2 and result.steps == 4 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "forbidden_pickle_class" and row["location"] == "step_3.pkl.gz"
    assert row["record_id"] == "step 3"
    assert row["reason"] == (f"step_3.pkl.gz: pickle needs {os.system.__module__}.system, which is not allowed; "
                             "nothing was loaded; the episode is split there")


def test_browsergym_allowlist_maps_its_classes_to_plain_data(monkeypatch):
    """BrowserGym's classes load through ingest.safe_pickle as dicts of their state, paths as strings,
    numpy arrays as plain arrays; anything else is refused, corrupt data is a parse error."""
    import numpy as np

    for name in ("browsergym", "browsergym.experiments", "browsergym.experiments.loop"):  # no BrowserGym here
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    loop = sys.modules["browsergym.experiments.loop"]
    StepInfo = type("StepInfo", (), {"__module__": loop.__name__})
    loop.StepInfo = StepInfo
    info = StepInfo()
    info.__dict__.update(step=3, reward=np.float32(0.5), obs={"active_page_index": np.array([1], dtype=np.int64)},
                         exp_dir=pathlib.PosixPath("results/exp"))
    loaded = restricted_loads(pickle.dumps(info), browsergym.ALLOWED, "step_3.pkl.gz")
    assert loaded.pickled_class == "browsergym.experiments.loop.StepInfo" and loaded["step"] == 3
    assert loaded["reward"] == 0.5 and loaded["exp_dir"] == "results/exp"
    assert browsergym._active_index(loaded["obs"]) == 1
    with pytest.raises(SourceError) as err:
        restricted_loads(pickle.dumps(shutil.rmtree), browsergym.ALLOWED, "exp_args.pkl")
    assert err.value.rule == "forbidden_pickle_class" and "shutil.rmtree" in err.value.reason
    with pytest.raises(SourceError) as err:
        restricted_loads(b"\x80\x04garbage", browsergym.ALLOWED, "step_0.pkl.gz")
    assert err.value.rule == "parse_error" and err.value.reason.startswith("step_0.pkl.gz: not a readable pickle")


@pytest.mark.parametrize("text, kind, fields", [
    ("fill('a12', 'hello world')", "type", {"text": "hello world", "element": '{"bid":"a12"}'}),
    ("goto('https://example.com')", "navigate", {"text": "https://example.com"}),
    ("I will scroll.\n```scroll(0, 200)```", "scroll", {"direction": "down"}),
    ("press('a3', 'Control+a')", "hotkey", {"keys": ["Control", "a"]}),
    ("send_msg_to_user('done: 42')", "message", {"text": "done: 42"}),
    ("mouse_click(640, 360)", "click", {"x": 0.5, "y": 0.5}),
    ("hover('a7')", "move", {"element": '{"bid":"a7"}'}),
    ("mouse_move(320, 180)", "move", {"x": 0.25, "y": 0.25}),
    ("__import__('os').system('id')", "code", {"code": "__import__('os').system('id')"}),
])
def test_browsergym_action_syntax_is_parsed_never_evaluated(text, kind, fields):
    action, _ = browsergym.action_from_text(text, (1280, 720))
    assert action.kind == kind and action.raw == text
    for name, value in fields.items():
        assert getattr(action, name) == value


def test_units_are_experiment_folders_with_gzip_step_files():
    heads = {"/in/exp/step_0.pkl.gz": b"\x1f\x8b\x08", "/in/exp/summary_info.json": b'{"n_steps": 5}',
             "/in/fake/step_0.pkl.gz": b"plain text", "/in/other/summary_info.json": b'{"x": 1}'}
    assert browsergym.units(sorted(heads), heads.__getitem__) == ["/in/exp"]


# --- record isolation and budgets ------------------------------------------------------------------------

def _edit_step(exp: pathlib.Path, n: int, edit) -> None:
    """Load step n through the safe loader, edit its state, write it back pickled with stand-in classes."""
    from tests.fuzz.variants import step_edit

    path = exp / f"step_{n}.pkl.gz"
    path.write_bytes(step_edit(edit)(path.read_bytes()))


def test_a_corrupt_step_file_splits_the_episode_and_keeps_every_other_step(run, query, sample_copy):
    exp = sample_copy("browser/browsergym-agentlab")
    data = (exp / "step_2.pkl.gz").read_bytes()
    (exp / "step_2.pkl.gz").write_bytes(data[: len(data) // 2])
    result = run("ingest-browser", [exp], stages=["ingest"])
    assert result.status == "success" and result.episodes == 2 and result.steps == 4 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert (row["rule"], row["location"], row["record_id"]) == ("bad_archive", "step_2.pkl.gz", "step 2")
    assert row["reason"] == "step_2.pkl.gz: gzip data is truncated; the episode is split there"
    episodes = query("SELECT * FROM episodes ORDER BY num_steps DESC")
    first, later = episodes
    # steps 0-1 end cut (their next observation is lost); steps 3-4 (and 5 as final) are an episode of their own
    assert first["num_steps"] == 2 and first["outcome"] == "unknown" and first["task"] == TASK
    assert json.loads(first["env"])["segment"] == {"index": 0, "count": 2, "first_step_file": "step_0.pkl.gz",
                                                   "last_step_file": "step_1.pkl.gz"}
    assert json.loads(later["env"])["segment"]["first_step_file"] == "step_3.pkl.gz"
    assert later["num_steps"] == 2 and later["task"] == TASK and later["reward"] == 0.0
    cut = query(f"SELECT * FROM steps WHERE episode_id = '{first['episode_id']}' ORDER BY step_index")
    assert cut[-1]["is_last"] and not cut[-1]["is_terminal"] and cut[-1]["final_observation"] is None
    assert cut[-1]["reward"] is None  # recorded in the lost StepInfo
    tail = query(f"SELECT * FROM steps WHERE episode_id = '{later['episode_id']}' ORDER BY step_index")
    assert tail[0]["is_first"] and tail[-1]["final_observation"]["title"].startswith("Orders")


@pytest.mark.parametrize("edit, field", [
    (lambda s: s.update(action=5), "field action: int, expected str"),
    (lambda s: s["obs"].update(open_pages_urls=7), "field obs.open_pages_urls: int, expected list or tuple"),
    (lambda s: s["obs"].update(open_pages_titles=["ok", 3]), "field obs.open_pages_titles[1]: int, expected str"),
    (lambda s: s["agent_info"].update(think=["x"]), "field agent_info.think: list, expected str"),
    (lambda s: s["obs"].update(axtree_txt="tree \udc80"), "field observation.text: a string holding a lone surrogate"),
])
def test_a_wrong_typed_field_quarantines_its_step_by_name(run, query, sample_copy, edit, field):
    exp = sample_copy("browser/browsergym-agentlab")
    _edit_step(exp, 3, edit)
    result = run("ingest-browser", [exp], stages=["ingest"])
    assert result.status == "success" and result.steps == 4 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "bad_record" and row["record_id"] == "step 3"
    assert row["reason"].startswith(f"step_3.pkl.gz: {field}")


def test_pickle_budgets_refuse_a_dag_bomb_and_an_allocation_bomb_in_one_step(run, query, sample_copy):
    from tests.fuzz.variants import _Reduce, dag

    exp = sample_copy("browser/browsergym-agentlab")
    _edit_step(exp, 1, lambda s: s["obs"].update(extra=dag(80)))
    _edit_step(exp, 3, lambda s: s["obs"].update(extra=_Reduce(bytearray, 5 << 30)))
    result = run("ingest-browser", [exp], stages=["ingest"])
    assert result.status == "success" and result.steps == 3 and result.quarantined == 2
    rows = {r["record_id"]: r for r in query("SELECT * FROM quarantine")}
    assert rows["step 1"]["rule"] == "budget_exceeded" and "pickle_items" in rows["step 1"]["reason"]
    assert "TRAJFORGE_BUDGET_PICKLE_ITEMS" in rows["step 1"]["reason"]
    assert rows["step 3"]["rule"] == "budget_exceeded" and "pickle_array_bytes" in rows["step 3"]["reason"]


def test_a_missing_step_file_and_a_broken_summary_are_said_and_the_rest_kept(run, query, sample_copy):
    exp = sample_copy("browser/browsergym-agentlab")
    (exp / "step_4.pkl.gz").unlink()
    (exp / "summary_info.json").write_text('{"n_steps": 5, "cum_reward": "lots"')
    result = run("ingest-browser", [exp], stages=["ingest"])
    assert result.status == "success" and result.episodes == 1 and result.steps == 4
    rows = {r["location"]: r for r in query("SELECT * FROM quarantine")}
    assert rows["step_4.pkl.gz"]["rule"] == "missing_file" and rows["step_4.pkl.gz"]["record_id"] == "step 4"
    assert rows["summary_info.json"]["rule"] == "parse_error"
    assert rows["summary_info.json"]["reason"].endswith("the episode is kept without its summary")


def test_a_trailing_gzip_member_is_said_and_the_step_kept(run, query, sample_copy):
    exp = sample_copy("browser/browsergym-agentlab")
    path = exp / "step_2.pkl.gz"
    path.write_bytes(path.read_bytes() + gzip.compress(b"a second pickle"))
    result = run("ingest-browser", [exp], stages=["ingest"])
    assert result.status == "success" and result.episodes == 1 and result.steps == 5 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "trailing_data" and row["record_id"] == "step 2"
    assert row["reason"].startswith("step_2.pkl.gz: 15 bytes after the end of the pickle")


def test_a_damaged_experiment_folder_is_still_claimed():
    heads = {"/in/exp/step_0.pkl.gz": b"", "/in/exp/exp_args.pkl": b"\x80\x04",
             "/in/lone/step_0.pkl.gz": b""}
    assert browsergym.units(sorted(heads), heads.__getitem__) == ["/in/exp"]


def test_actions_whose_arguments_do_not_fit_stay_code_actions():
    action, _ = browsergym.action_from_text("press('a1', 5)", None)
    assert action.kind == "key" and action.keys == ["5"]
    action, _ = browsergym.action_from_text("scroll('up', 'down')", None)
    assert action.kind == "code" and action.code == "scroll('up', 'down')"
    action, _ = browsergym.action_from_text("fill('a1', {'x': 1})", None)
    assert action.kind == "type" and action.text == '{"x":1}'
    long_code = "click('a')\n" * 10_000
    action, _ = browsergym.action_from_text(long_code, None)
    assert action.kind == "code" and action.code == long_code.strip()


# --- classes a release adds, runs that cannot be split ------------------------------------------------------

def test_a_class_no_reader_lists_keeps_its_step_and_is_said_as_a_warning(run, query, sample_copy, monkeypatch):
    """A step holding a class from a newer AgentLab (here a tool-use agent's info) is read like any other: its
    state is a dict, the step stands, and the episode says which class it met (validate: a warning)."""
    name = "agentlab.agents.tool_use_agent.tool_use_agent"
    for part in ("agentlab", "agentlab.agents", "agentlab.agents.tool_use_agent", name):
        monkeypatch.setitem(sys.modules, part, types.ModuleType(part))
    ToolUseInfo = type("ToolUseInfo", (), {"__module__": name})
    sys.modules[name].ToolUseInfo = ToolUseInfo

    def new_agent_info(state):
        info = ToolUseInfo()
        info.__dict__.update(think="Open the orders page.", tool_calls=[{"name": "click", "args": ["156"]}])
        state["agent_info"] = info

    exp = sample_copy("browser/browsergym-agentlab")
    _edit_step(exp, 2, new_agent_info)
    result = run("ingest-browser", [exp], stages=["ingest", "validate"])
    assert result.status == "success" and result.episodes == 1 and result.steps == 5 and result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert steps[2]["reasoning"] == "Open the orders page."
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert env["ingest_warnings"] == [{"rule": "unknown_pickle_class", "reason": f"step_2.pkl.gz holds {name}."
                                       "ToolUseInfo, a class this reader does not list: kept as the record of "
                                       "its state"}]
    found = query("SELECT rule, severity, findings, example_reason FROM validation_findings")
    assert [(f["rule"], f["severity"], f["findings"]) for f in found] == [("ingest.kept_unknown", "warning", 1)]
    assert f"{name}.ToolUseInfo" in found[0]["example_reason"]


def test_a_run_none_of_whose_steps_can_be_read_keeps_its_outcome_and_reward_in_a_row(run, query, sample_copy):
    exp = sample_copy("browser/browsergym-agentlab")
    summary = json.loads((exp / "summary_info.json").read_text())
    (exp / "summary_info.json").write_text(json.dumps({**summary, "terminated": True, "cum_reward": 1.0}))
    for n in range(6):
        (exp / f"step_{n}.pkl.gz").write_bytes(gzip.compress(b"\x80\x04 not a pickle"))
    result = run("ingest-browser", [exp], stages=["ingest"])
    assert result.episodes == 0 and result.steps == 0
    rows = {r["rule"]: r for r in query("SELECT * FROM quarantine")}
    row = rows["empty_episode"]
    assert json.loads(row["snippet"]) == {"outcome": "success", "reward": 1.0, "terminated": True,
                                          "truncated": False, "steps_recorded": 6}
    assert "outcome (success, reward 1.0)" in row["reason"]


def test_without_a_summary_the_outcome_comes_from_the_step_infos(run, query, sample_copy):
    """AgentLab writes summary_info.json last: a run killed before it still says how it ended in its last
    StepInfo (terminated, reward), which is what AgentLab itself sums into cum_reward."""
    exp = sample_copy("browser/browsergym-agentlab")
    (exp / "summary_info.json").unlink()
    _edit_step(exp, 5, lambda state: state.update(terminated=True, reward=1.0))
    result = run("ingest-browser", [exp], stages=["ingest"])
    assert result.episodes == 1 and result.steps == 5
    ep = query("SELECT outcome, reward FROM episodes")[0]
    assert (ep["outcome"], ep["reward"]) == ("success", 1.0)
    steps = query("SELECT reward, is_terminal FROM steps ORDER BY step_index")
    assert steps[-1]["reward"] == 1.0 and steps[-1]["is_terminal"]


def test_the_files_of_an_experiment_folder_the_reader_leaves_are_listed_with_why(tmp_path):
    """The bundled AgentLab experiment with what AgentLab also writes there (its log, Set-of-Mark screenshots):
    those are listed in `ignored_inputs` as files of the run the reader does not read; the license statement
    (read for the episodes' license) is not."""
    from pipelines.infra import definition
    from pipelines.infra.plan import find_units

    folder = tmp_path / "exp"
    shutil.copytree(SAMPLES / "browser" / "browsergym-agentlab", folder)
    (folder / "experiment.log").write_text("INFO - Running experiment\n")
    shutil.copy(folder / "screenshot_step_0.png", folder / "screenshot_som_step_0.png")
    units, ignored = find_units([str(tmp_path)], definition.load("ingest-all").formats)
    assert [(u.format, u.uri) for u in units] == [("browsergym", f"{tmp_path.name}/exp")]
    why = ("part of the browsergym run exp, which does not read it: the reader reads the step pickles, their "
           "screenshots and the experiment's summary, arguments, goal and package versions")
    assert {i.path.rsplit("/", 1)[1]: i.reason for i in ignored} == {"experiment.log": why,
                                                                     "screenshot_som_step_0.png": why}
