"""Outcomes from the harness around the agent (`ingest.harness_reports`, `pipelines.infra.harness_files`): the
SWE-bench harness's instance and run reports and mini-swe-agent's exit statuses, wherever the run keeps them.

The producers write them at test time: the SWE-bench harness 5.0.2's own grading and report writers
(`producers/swebench_harness.py`: `grading.get_eval_report` on a test log, `reporting.make_run_report`) grade
real trajectories, and the run report they write is the oracle; mini-swe-agent's batch progress manager writes
its `exit_statuses_*.yaml`. Real runs: the mini-swe-agent 1.15.0 Gemini 3 Pro run with its `logs/<instance>/
report.json` (samples/swe/minisweagent-gemini3pro, and an unresolved instance of it in
data/minisweagent-gemini3pro-unresolved) and a 2.2.7 deepseek-chat run graded in a run report above its output
folder (data/minisweagent-deepseek-chat-2.2.7); their PROVENANCE.md say what they hold (MIT, licenses beside)."""

import json
import shutil
from pathlib import Path

import pytest

from pipelines.infra.plan import find_units
from tests.conftest import SAMPLES
from tests.goldens import check_json
from tests.ingest.swe.producer_runs import last_json_line, mini_swe_agent_run, producer_python, run_script

GOLDEN = Path(__file__).parent / "golden"
SWEBENCH = "5.0.2"  # the Makefile's SWEBENCH_VERSION
DATA = Path(__file__).parent / "data"
GEMINI = SAMPLES / "swe" / "minisweagent-gemini3pro"
GEMINI_UNRESOLVED = DATA / "minisweagent-gemini3pro-unresolved"
DEEPSEEK_CHAT = DATA / "minisweagent-deepseek-chat-2.2.7"
SWEAGENT = SAMPLES / "swe" / "sweagent-v1" / "6e44b9__sweagenttestrepo-1c2844.traj"  # SWE-agent__test-repo-i1
MODEL, RUN_ID = "openrouter/google/gemini-3-pro-preview", "trajforge-eval"
RUN_REPORT = "openrouter__google__gemini-3-pro-preview.trajforge-eval.json"
# what each instance's test log shows (the harness grades it); the run report it then writes is the oracle
GRADES = {"django__django-16255": "resolved", "django__django-10999": "unresolved",
          "SWE-agent__test-repo-i1": "resolved", "submitted": "no_report", "limited": "empty"}


def _episodes(query) -> dict:
    """{instance id: (outcome, reward, env)} of the lake's episodes."""
    out = {}
    for ep in query("SELECT outcome, reward, env FROM episodes"):
        env = json.loads(ep["env"])
        out[env["instance_id"]] = (ep["outcome"], ep["reward"], env)
    return out


def _graded_run(tmp_path, tmp_path_factory) -> tuple[Path, dict]:
    """A run folder as people keep one: the agents' trajectories under `trajs/` (real mini-swe-agent and
    SWE-agent runs, and the two mini-swe-agent 2.4.6 writes here), graded by the SWE-bench harness in the run
    folder (its `logs/run_evaluation/...` and its run report). Returns the folder and the harness's run report."""
    out, _ = mini_swe_agent_run("2.4.6", tmp_path_factory)
    run = tmp_path / "run"
    shutil.copytree(GEMINI / "trajs", run / "trajs")
    shutil.copytree(GEMINI_UNRESOLVED / "trajs", run / "trajs", dirs_exist_ok=True)
    # SWE-agent saves `<output>/<instance>/<instance>.traj`; the sample's file is named otherwise upstream
    (run / "trajs" / "SWE-agent__test-repo-i1").mkdir()
    shutil.copy(SWEAGENT, run / "trajs" / "SWE-agent__test-repo-i1" / "SWE-agent__test-repo-i1.traj")
    for name in ("submitted", "limited"):
        shutil.copytree(out / name, run / "trajs" / name)
    python = producer_python("swebench", SWEBENCH)
    graded = last_json_line(run_script(python, "swebench_harness.py", ["grade", str(run), RUN_ID, MODEL,
                                                                       json.dumps(GRADES)], tmp_path / "home"))
    assert Path(graded["run_report"]) == run / RUN_REPORT
    return run, graded["report"]


def _expected(report: dict, instance: str) -> tuple[str, float | None, str]:
    """(outcome, reward, status) the run report gives an instance."""
    for key, outcome, reward, status in (("resolved_ids", "success", 1.0, "resolved"),
                                         ("unresolved_ids", "failure", 0.0, "unresolved"),
                                         ("empty_patch_ids", "failure", 0.0, "empty_patch"),
                                         ("error_ids", "unknown", None, "error")):
        if instance in report[key]:
            return outcome, reward, status
    raise AssertionError(f"{instance} is in no list of the run report")


@pytest.mark.parametrize("instance_reports", [True, False], ids=["with-logs", "run-report-only"])
def test_the_harness_own_reports_decide_each_instance(run, query, tmp_path, tmp_path_factory, instance_reports):
    """Each trajectory's outcome is the one the harness's run report gives its instance; an instance report
    under `logs/run_evaluation/<run_id>/<model>/<instance>/` decides where there is one, the run report
    otherwise; no report file is listed as unread."""
    folder, report = _graded_run(tmp_path, tmp_path_factory)
    if not instance_reports:
        shutil.rmtree(folder / "logs")
    result = run("ingest-swe", [folder], stages=["ingest"])
    assert result.episodes == 5 and result.quarantined == 0
    episodes = _episodes(query)
    assert set(episodes) == set(GRADES)
    for instance, (outcome, reward, env) in episodes.items():
        want_outcome, want_reward, status = _expected(report, instance)
        assert (outcome, reward, env["harness_status"]) == (want_outcome, want_reward, status), instance
        report_json = f"run/logs/run_evaluation/{RUN_ID}/{MODEL.replace('/', '__')}/{instance}/report.json"
        decided_by_instance_report = instance_reports and (folder.parent / report_json).exists()
        assert env["outcome_file"] == (report_json if decided_by_instance_report else f"run/{RUN_REPORT}")
        assert ("report" in env) == decided_by_instance_report  # the instance report's entry, tests and all
    assert episodes["django__django-16255"][2].get("report", {"resolved": True})["resolved"] is True
    unread = [i.path for i in result.ignored]
    # the harness's test logs alone are left unread: one per instance with a prediction and a patch
    assert [p.rsplit("/", 1)[-1] for p in unread] == (["test_output.txt"] * 4 if instance_reports else []), unread


def test_real_1_15_run_with_its_instance_reports_under_logs(run, query):
    """The Gemini 3 Pro run keeps `trajs/<instance>/<instance>.traj.json` and the harness's
    `logs/<instance>/report.json` (the entry alone, its folder naming the instance): django__django-16255
    says `"resolved": true`, django__django-10999 `"resolved": false` (a person read both)."""
    result = run("ingest-swe", [GEMINI, GEMINI_UNRESOLVED], stages=["ingest"])
    assert result.episodes == 2 and result.quarantined == 0
    assert [i.path.rsplit("/", 1)[-1] for i in result.ignored] == ["PROVENANCE.md", "LICENSE", "PROVENANCE.md"]
    check_json(GOLDEN / "harness-outcomes-gemini3pro-1.15.0.json", _golden(query), indent=1, sort_keys=True)
    episodes = _episodes(query)
    assert episodes["django__django-16255"][:2] == ("success", 1.0)
    assert episodes["django__django-10999"][:2] == ("failure", 0.0)
    assert episodes["django__django-10999"][2]["outcome_file"] == \
        "minisweagent-gemini3pro-unresolved/logs/django__django-10999/report.json"


def test_real_2_2_run_graded_in_a_run_report_above_its_output_folder(run, query):
    """mini-swe-agent 2.2.7 (deepseek-chat) wrote `output/deepseek_chat_dev/<instance>/<instance>.traj.json`
    and its exit statuses there; the harness ran in the repository root and wrote
    `deepseek__deepseek-chat.deepseek_chat_dev.json` there, beside the report of a rerun
    (`...deepseek_chat_dev_rerun.json`). A person reads sqlfluff__sqlfluff-2419 in the first report's
    `resolved_ids` and pylint-dev__astroid-1978 in its `unresolved_ids`."""
    result = run("ingest-swe", [DEEPSEEK_CHAT], stages=["ingest"])
    assert result.episodes == 2 and result.quarantined == 0
    assert [i.path.rsplit("/", 1)[-1] for i in result.ignored] == ["LICENSE", "PROVENANCE.md"]
    check_json(GOLDEN / "harness-outcomes-deepseek-chat-2.2.7.json", _golden(query), indent=1, sort_keys=True)
    episodes = _episodes(query)
    assert episodes["sqlfluff__sqlfluff-2419"][:2] == ("success", 1.0)
    assert episodes["pylint-dev__astroid-1978"][:2] == ("failure", 0.0)
    assert {e[2]["outcome_file"] for e in episodes.values()} == \
        {"minisweagent-deepseek-chat-2.2.7/deepseek__deepseek-chat.deepseek_chat_dev.json"}


def _golden(query) -> dict:
    """What a person checks against the report files: per trajectory, its outcome, reward, steps, terminal
    flag and the file that decided."""
    rows = query("SELECT e.source_uri, e.outcome, e.reward, e.env, count(s.step_index) AS steps, "
                 "bool_or(s.is_terminal) AS terminal FROM episodes e JOIN steps s USING (episode_id) "
                 "GROUP BY ALL ORDER BY e.source_uri")
    return {r["source_uri"]: {"outcome": r["outcome"], "reward": r["reward"], "steps": r["steps"],
                              "terminal": r["terminal"],
                              **{k: json.loads(r["env"]).get(k) for k in ("outcome_file", "harness_status",
                                                                          "exit_status", "exit_status_file")}}
            for r in rows}


def test_exit_statuses_give_the_status_a_trajectory_lacks(run, query, tmp_path, tmp_path_factory):
    """mini-swe-agent's batch progress manager writes `exit_statuses_<time>.yaml` in the output folder; it
    gives the exit status of a trajectory that has none of its own (here one with its status cut out: an
    edge case) and never overrides one that has. The file is not listed as unread."""
    out, _ = mini_swe_agent_run("2.4.6", tmp_path_factory)
    folder = tmp_path / "out"
    for name in ("submitted", "limited"):
        shutil.copytree(out / name, folder / name)
    python = producer_python("mini-swe-agent", "2.4.6")
    written = last_json_line(run_script(python, "mini_swe_agent.py", [
        "exit-statuses", str(folder), json.dumps({"submitted": "Submitted", "limited": "LimitsExceeded"})],
        tmp_path / "home"))["path"]
    limited = folder / "limited" / "limited.traj.json"
    doc = json.loads(limited.read_text())
    del doc["info"]["exit_status"]
    for message in doc["messages"]:
        (message.get("extra") or {}).pop("exit_status", None)
    limited.write_text(json.dumps(doc))
    result = run("ingest-swe", [folder], stages=["ingest"])
    assert result.episodes == 2 and result.ignored == []
    episodes = _episodes(query)
    assert episodes["limited"][2]["exit_status"] == "LimitsExceeded"
    assert episodes["limited"][2]["exit_status_file"] == f"out/{Path(written).name}"
    assert episodes["submitted"][2]["exit_status"] == "Submitted" and "exit_status_file" not in episodes["submitted"][2]
    assert {e[0] for e in episodes.values()} == {"unknown"}  # an exit status is not a grade


def _real_trajectory(folder: Path, instance: str = "django__django-16255") -> Path:
    """The real 1.15.0 trajectory of the Gemini run, copied as `<folder>/<instance>/<instance>.traj.json`."""
    target = folder / instance / f"{instance}.traj.json"
    target.parent.mkdir(parents=True)
    shutil.copy(next(GEMINI.glob(f"trajs/{instance}/*.traj.json"), None) or
                GEMINI_UNRESOLVED / "trajs" / instance / f"{instance}.traj.json", target)
    return target


def _run_report(path: Path, **lists) -> None:
    path.write_text(json.dumps({"total_instances": 1, "submitted_instances": 1, **lists, "schema_version": 2},
                               indent=4))


def test_of_two_run_reports_the_one_named_for_the_output_folder_decides(run, query, tmp_path):
    """The harness ran twice in one folder (a run and its rerun, as in the deepseek-chat repository) and graded
    the same instance differently: each output folder's trajectory takes the report named for its run id."""
    root = tmp_path / "runs"
    _real_trajectory(root / "output" / "first")
    _real_trajectory(root / "output" / "first_rerun")
    _run_report(root / "model.first.json", resolved_ids=["django__django-16255"], unresolved_ids=[])
    _run_report(root / "model.first_rerun.json", resolved_ids=[], unresolved_ids=["django__django-16255"])
    run("ingest-swe", [root], stages=["ingest"])
    got = {r["source_uri"].split("/")[2]: (r["outcome"], json.loads(r["env"])["outcome_file"])
           for r in query("SELECT source_uri, outcome, env FROM episodes")}
    assert got == {"first": ("success", "runs/model.first.json"),
                   "first_rerun": ("failure", "runs/model.first_rerun.json")}


def test_a_report_of_another_run_or_instance_decides_nothing(run, query, tmp_path):
    """A report in a sibling run's folder, or an instance report whose folder names another instance, is not
    the trajectory's: the outcome stays unknown and those files are listed as unread."""
    root = tmp_path / "runs"
    _real_trajectory(root / "a" / "trajs")
    (root / "b" / "logs" / "django__django-16255").mkdir(parents=True)
    (root / "b" / "logs" / "django__django-16255" / "report.json").write_text('{"resolved": true}')
    (root / "a" / "logs" / "django__django-1").mkdir(parents=True)
    (root / "a" / "logs" / "django__django-1" / "report.json").write_text('{"django__django-1": {"resolved": true}}')
    result = run("ingest-swe", [root], stages=["ingest"])
    (ep,) = query("SELECT outcome, env FROM episodes")
    assert ep["outcome"] == "unknown" and "outcome_file" not in json.loads(ep["env"])
    assert sorted(i.path.split("/runs/")[1] for i in result.ignored) == [
        "a/logs/django__django-1/report.json", "b/logs/django__django-16255/report.json"]


@pytest.mark.parametrize("text, rule", [
    ('{\n    "total_instances": 1,\n    "resolved_ids": "django__django-16255"\n}', "bad_record"),
    ('{\n    "total_instances": 1,\n    "resolved_ids": ["django__django-16255"', "parse_error")])
def test_a_broken_run_report_is_a_quarantine_row_naming_it(run, query, tmp_path, text, rule):
    root = tmp_path / "run"
    _real_trajectory(root / "trajs")
    (root / "model.eval.json").write_text(text)
    result = run("ingest-swe", [root], stages=["ingest"])
    assert result.episodes == 1 and result.ignored == []
    (row,) = query("SELECT rule, reason FROM quarantine")
    assert row["rule"] == rule and "run/model.eval.json" in row["reason"]
    assert query("SELECT outcome FROM episodes")[0]["outcome"] == "unknown"


def test_a_report_added_later_changes_the_units_it_grades(run, query, tmp_path):
    """A run ingested before the harness graded it: adding the run report changes the units it grades, which
    an incremental ingest lists as changed (as any changed input); `--replace` then reads them with it."""
    root = tmp_path / "run"
    _real_trajectory(root / "trajs")
    assert run("ingest-swe", [root], stages=["ingest"]).episodes == 1
    assert query("SELECT outcome FROM episodes")[0]["outcome"] == "unknown"
    _run_report(root / "model.eval.json", resolved_ids=["django__django-16255"])
    again = run("ingest-swe", [root], stages=["ingest"])
    assert again.units_in == 0 and [i.reason.split(" (")[0] for i in again.ignored] == [
        "skipped: changed since v1 ingested it"]
    replaced = run("ingest-swe", [root], stages=["ingest"], replace=True)
    assert replaced.episodes == 1 and replaced.ignored == []
    assert query("SELECT outcome FROM episodes")[0]["outcome"] == "success"


def test_planning_gives_a_run_report_to_the_units_under_its_folder_only(tmp_path):
    """The units of a format that takes harness files get the run report above them, once each; others not."""
    root = tmp_path / "run"
    first = _real_trajectory(root / "trajs")
    _real_trajectory(root / "trajs", "django__django-10999")
    _run_report(root / "model.eval.json", resolved_ids=["django__django-16255"])
    units, ignored = find_units([str(root)], ["minisweagent"])
    assert [u.reports for u in units] == [(str(root / "model.eval.json"),)] * 2 and ignored == []
    assert units[0].reports[0] is units[1].reports[0]  # one string for the run, not one per unit
    assert str(first) in {u.path for u in units}


def test_a_run_report_is_decoded_once_per_task_not_once_per_trajectory(run, query, tmp_path, monkeypatch):
    """Thirty trajectories in one task, graded by one run report: it is decoded once, and each trajectory gets
    its own instance's grade from it."""
    from ingest import harness_reports

    root = tmp_path / "run"
    ids = [f"django__django-{n}" for n in range(30)]
    doc = json.loads(next(GEMINI.glob("trajs/*/*.traj.json")).read_bytes())
    for instance in ids:  # the real trajectory as if run on 30 instances (1.x names its instance inside)
        (root / "trajs" / instance).mkdir(parents=True)
        (root / "trajs" / instance / f"{instance}.traj.json").write_text(json.dumps({**doc, "instance_id": instance}))
    _run_report(root / "model.eval.json", resolved_ids=ids[::3], unresolved_ids=[i for i in ids if i not in ids[::3]])
    decoded = []
    real = harness_reports._run_report_index
    monkeypatch.setattr(harness_reports, "_run_report_index", lambda *a: decoded.append(a[1]) or real(*a))
    result = run("ingest-swe", [root], stages=["ingest"], executor="local")
    assert result.episodes == 30 and result.tasks_total == 1
    assert decoded == [str(root / "model.eval.json")]
    got = {json.loads(r["env"])["instance_id"]: r["outcome"] for r in query("SELECT env, outcome FROM episodes")}
    assert got == {i: "success" if i in ids[::3] else "failure" for i in ids}
