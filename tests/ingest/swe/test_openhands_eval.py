"""OpenHands' SWE-bench evaluation outputs: `output.jsonl` names each episode's instance, so the harness's word
applies. The run folder is laid out as OpenHands' own scripts leave it (All-Hands-AI/OpenHands @ 156d068:
`run_infer.py` writes `EvalOutput` lines, `eval_infer.sh` moves the harness's run report to `<run>/report.json`
and its instance logs to `<run>/eval_outputs/<instance>/`, `update_output_with_eval.py` writes each line's
`report`); the events of each history are those of the bundled real OpenHands event streams
(`samples/swe/openhands-events`), the run report in `make_run_report`'s shape. No OpenHands run can be made here
(it runs each instance in a Docker sandbox), and no real public `output.jsonl` was found."""

from __future__ import annotations

import json

from tests.conftest import SAMPLES

EVENTS = json.loads((SAMPLES / "swe" / "openhands-events" / "basic_interactions.json").read_text())
RUN = "CodeActAgent/gpt-4o-2024-11-20_maxiter_100_N_v0.31.0"


def _line(instance: str, **extra) -> str:
    """An `EvalOutput.model_dump_json()` line (its fields in the model's order)."""
    return json.dumps({"instance_id": instance, "test_result": {"git_patch": f"diff --git a/{instance}.py"},
                       "instruction": f"<uploaded_files>\n/workspace/{instance}\n</uploaded_files>\nFix it.",
                       "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": "gpt-4o-2024-11-20"},
                                    "max_iterations": 100, "dataset": "princeton-nlp/SWE-bench_Verified"},
                       "history": EVENTS, "metrics": {"accumulated_cost": 0.5}, "error": None, **extra})


def _run_folder(tmp_path):
    run = tmp_path / "outputs" / RUN
    run.mkdir(parents=True)
    lines = [_line("astropy__astropy-12907"), _line("django__django-11099"),
             _line("sympy__sympy-20590", report={"empty_generation": False, "resolved": True,
                                                  "failed_apply_patch": False, "error_eval": False,
                                                  "test_timeout": False}),
             _line("pytest-dev__pytest-5262")]
    (run / "output.jsonl").write_text("\n".join(lines) + "\n")
    (run / "metadata.json").write_text(json.dumps({"agent_class": "CodeActAgent"}))
    (run / "report.json").write_text(json.dumps({  # the harness's run report, moved and renamed
        "total_instances": 500, "submitted_instances": 3, "completed_instances": 3, "resolved_instances": 1,
        "unresolved_instances": 2, "empty_patch_instances": 0, "error_instances": 0,
        "completed_ids": ["astropy__astropy-12907", "django__django-11099"],
        "resolved_ids": ["astropy__astropy-12907"], "unresolved_ids": ["django__django-11099"],
        "empty_patch_ids": [], "error_ids": [], "incomplete_ids": [], "schema_version": 2}, indent=4))
    instance = run / "eval_outputs" / "django__django-11099"
    instance.mkdir(parents=True)
    (instance / "report.json").write_text(json.dumps({"django__django-11099": {
        "patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True, "resolved": False,
        "tests_status": {"FAIL_TO_PASS": {"success": [], "failure": ["test_validators"]}}}}, indent=4))
    return run


def test_the_harness_reports_and_the_lines_own_grade_decide_each_instance(run, query, tmp_path):
    folder = _run_folder(tmp_path)
    result = run("ingest-swe", [tmp_path / "outputs"], stages=["ingest"])
    assert result.episodes == 4 and result.quarantined == 0
    # the reports were given to the episodes; metadata.json (the run's settings) is not a session
    assert [i.path.rsplit("/", 1)[-1] for i in result.ignored] == ["metadata.json"]
    got = {}
    for row in query("SELECT source_format, outcome, reward, task, agent, env FROM episodes"):
        env = json.loads(row["env"])
        assert row["source_format"] == "openhands" and row["agent"] == "gpt-4o-2024-11-20"
        assert row["task"].endswith("Fix it.") and env["git_patch"].startswith("diff --git")
        got[env["instance_id"]] = (row["outcome"], row["reward"], env.get("outcome_file"), env.get("harness_status"))
    root = f"outputs/{RUN}"
    assert got == {
        "astropy__astropy-12907": ("success", 1.0, f"{root.split('/')[0]}/{RUN}/report.json", "resolved"),
        # the instance report wins over the run report it was made from
        "django__django-11099": ("failure", 0.0, f"outputs/{RUN}/eval_outputs/django__django-11099/report.json",
                                 "unresolved"),
        # graded by no harness file here: the report OpenHands wrote into the line
        "sympy__sympy-20590": ("success", 1.0, f"outputs/{RUN}/output.jsonl", "resolved"),
        "pytest-dev__pytest-5262": ("unknown", None, None, None),
    }
    assert folder.exists()


def test_each_line_reads_its_history_as_the_event_stream_reader_does(run, query, tmp_path):
    """The line's `history` is the events of a session export: the same steps as the real stream they came
    from (4 messages between the user and the agent)."""
    _run_folder(tmp_path)
    run("ingest-swe", [tmp_path / "outputs" / RUN / "output.jsonl",
                       SAMPLES / "swe" / "openhands-events" / "basic_interactions.json"], stages=["ingest"])
    rows = query("SELECT e.source_uri AS u, count(s.step_index) AS n, list(s.action.text ORDER BY s.step_index) "
                 "AS kinds FROM episodes e JOIN steps s USING (episode_id) GROUP BY e.episode_id, e.source_uri")
    (stream,) = [(r["n"], r["kinds"]) for r in rows if r["u"].endswith("basic_interactions.json")]
    lines = [(r["n"], r["kinds"]) for r in rows if r["u"].endswith("output.jsonl")]
    assert stream[0] == 3 and lines == [stream] * 4


def test_old_history_pairs_and_a_line_without_an_instance(tmp_path):
    """Old runs kept `history` as `[action, observation]` pairs; a line without `instance_id` is a row naming
    the line, and the rest of the file is read."""
    from ingest.record import Episode, Rejected
    from ingest.swe import openhands
    from tests.ingest.golden import read_records

    pairs = [[EVENTS[0], {}], [EVENTS[1], {}]]
    path = tmp_path / "output.jsonl"
    path.write_text(_line("a__a-1", history=pairs) + "\n" + json.dumps({"test_result": {}}) + "\n")
    records = read_records(openhands, path)
    (ep,) = [r for r in records if isinstance(r, Episode)]
    (bad,) = [r for r in records if isinstance(r, Rejected)]
    assert len(ep.steps) == 1 and ep.steps[0].action.text == EVENTS[1]["args"]["content"]
    assert "output.jsonl:2" in bad.reason and "instance_id" in bad.reason
    assert openhands.units([str(path)], lambda p: path.read_bytes()[:4096]) == [str(path)]
    graded = tmp_path / "output.swebench_eval.jsonl"  # eval_infer.py's grading: patch and grade, no history
    graded.write_text(json.dumps({"instance_id": "a__a-1", "test_result": {"report": {"resolved": True}}}) + "\n")
    assert openhands.units([str(graded)], lambda p: graded.read_bytes()) == []
