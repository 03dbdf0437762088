"""Run inside the swebench venv, never imported by the tests.

`grade RUNDIR RUN_ID MODEL GRADES_JSON`: the SWE-bench evaluation harness's own grading and report writers
grade a run's instances as its `run_evaluation` does after the tests ran in their containers (no docker here:
the test logs are written by this script). GRADES_JSON maps each instance id to what its log shows:
`resolved` (the FAIL_TO_PASS test passes), `unresolved` (it fails), `empty` (the prediction has no patch),
`no_report` (the harness never wrote its report: an evaluation error), `no_prediction` (in the dataset,
not predicted). For each graded instance the log is `logs/run_evaluation/<run_id>/<model>/<instance>/
test_output.txt`, graded by `grading.get_eval_report` and written as `report.json` the way `run_evaluation`
writes it; then `reporting.make_run_report` (run in RUNDIR, as the harness runs in its working folder)
writes the run report `<model with / as __>.<run_id>.json`. Prints {"run_report": its path, "report": its
content} as the last line.
"""

import json
import os
import sys
from pathlib import Path

from swebench.harness.constants import (END_TEST_OUTPUT, LOG_REPORT, LOG_TEST_OUTPUT, RUN_EVALUATION_LOG_DIR,
                                        START_TEST_OUTPUT)
from swebench.harness.grading import get_eval_report
from swebench.harness.reporting import make_run_report
from swebench.types import TestSpec

FAIL_TO_PASS, PASS_TO_PASS = "test_fixed (tests.IssueTests)", "test_kept (tests.IssueTests)"


def _spec(instance_id: str) -> TestSpec:
    return TestSpec(instance_id=instance_id, image="unused", eval_script_list=[], repo="django/django",
                    version="4.2", FAIL_TO_PASS=[FAIL_TO_PASS], PASS_TO_PASS=[PASS_TO_PASS],
                    log_parser="parse_log_django", eval_type="pass_and_fail")


def _grade(instance_id: str, prediction: dict, how: str) -> None:
    log_dir = RUN_EVALUATION_LOG_DIR / prediction["run_id"] / prediction["model_name_or_path"].replace(
        "/", "__") / instance_id
    log_dir.mkdir(parents=True, exist_ok=True)
    fixed = "ok" if how == "resolved" else "FAIL"
    (log_dir / LOG_TEST_OUTPUT).write_text(f"{START_TEST_OUTPUT}\n{FAIL_TO_PASS} ... {fixed}\n"
                                           f"{PASS_TO_PASS} ... ok\n{END_TEST_OUTPUT}\n")
    if how == "no_report":
        return
    report = get_eval_report(_spec(instance_id), prediction, str(log_dir / LOG_TEST_OUTPUT),
                             include_tests_status=True)
    (log_dir / LOG_REPORT).write_text(json.dumps(report, indent=4))  # as run_evaluation.run_instance writes it


def grade(rundir: Path, run_id: str, model: str, grades: dict) -> dict:
    os.chdir(rundir)
    predictions = {}
    for instance_id, how in grades.items():
        if how == "no_prediction":
            continue
        predictions[instance_id] = {"instance_id": instance_id, "model_name_or_path": model, "run_id": run_id,
                                    "model_patch": "" if how == "empty" else "diff --git a/x b/x\n"}
        if how != "empty":
            _grade(instance_id, predictions[instance_id], how)
    dataset = [{"instance_id": i, "image": "unused"} for i in grades]
    path = make_run_report(predictions, dataset, run_id)
    return {"run_report": str(rundir / path), "report": json.loads((rundir / path).read_text())}


if __name__ == "__main__":
    if sys.argv[1] == "grade":
        print(json.dumps(grade(Path(sys.argv[2]).resolve(), sys.argv[3], sys.argv[4], json.loads(sys.argv[5]))))
    else:
        raise SystemExit(f"unknown command {sys.argv[1]!r}")
