"""mini-swe-agent trajectories, written at test time by mini-swe-agent itself at a 1.x release and the current
2.x (the trajectory format changed between them), and read back by mini-swe-agent's own code as the oracle;
and real public runs: a 1.15.0 one bundled (samples/swe/minisweagent-gemini3pro) and a 2.2.7 tool-call one read
from ../shared/samples when laid there."""

import json
import shutil
from pathlib import Path

import pytest
from fsspec.implementations.local import LocalFileSystem

from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.swe import minisweagent
from tests.conftest import SAMPLES, episode_and_steps
from tests.ingest.golden import check as golden_check
from tests.ingest.swe.producer_runs import mini_swe_agent_run

VERSIONS = ("1.17.5", "2.4.6")  # the Makefile's MINI_SWE_AGENT_VERSIONS


def read_file(path) -> list:
    src = Source(fs=LocalFileSystem(), path=str(path), uri=f"input/{path.name}", put_blob=lambda *a: "sha256:0")
    return list(minisweagent.read(src))


@pytest.fixture(scope="session", params=VERSIONS)
def mini_run(request, tmp_path_factory):
    """(version, output folder, {trajectory path: what mini-swe-agent's own code reads}), once per session."""
    out, oracle = mini_swe_agent_run(request.param, tmp_path_factory)
    return request.param, out, oracle


def test_what_mini_writes_ingests_as_its_own_loader_reads_it(mini_run):
    version, out, oracle = mini_run
    assert {p.split("/")[-1] for p in oracle} >= {"submitted.traj.json", "limited.traj.json"}
    for path, seen in oracle.items():
        assert seen["version"] == version
        records = read_file(out / path.split("/")[-2] / path.split("/")[-1])
        assert not [r for r in records if isinstance(r, Rejected)], path
        (ep,) = records
        assert len(ep.steps) == seen["steps"], path  # one step per model turn, as the inspector pages them
        # each turn's command as the agent's own parser (1.x) or its recorded actions (2.x) have it
        assert [[s.action.code] if s.action.kind == "command" else [] for s in ep.steps] == seen["commands"], path
        assert [s.observation.exit_code for s in ep.steps[1:] if s.observation.exit_code is not None] + (
            [ep.final_observation.exit_code] if ep.final_observation and ep.final_observation.exit_code is not None
            else []) == seen["returncodes"], path
        assert ep.env["exit_status"] == seen["exit_status"] and ep.env["submission"] == seen["submission"]
        assert ep.terminated == (seen["exit_status"] == "Submitted") and ep.outcome == "unknown"
        if seen["exit_status"] == "Submitted":
            assert ep.final_observation.text == seen["submission"] == "3\n"  # the submission followed the submit


def test_a_session_reads_as_a_person_would_follow_it(mini_run):
    """The submitted session: list (exit 0), a failing cat (exit 1), a format error, the submit command."""
    version, out, _ = mini_run
    (ep,) = read_file(out / "submitted" / "submitted.traj.json")
    assert ep.task.startswith("Please solve this issue: Count the .txt files") and ep.agent == "gpt-4o-mini"
    assert [s.action.kind for s in ep.steps] == ["command", "command", "message", "command"]
    first, cat, bad, submit = ep.steps
    assert first.observation.kind == "text" and first.observation.text == ep.task
    assert first.reasoning.startswith("THOUGHT: list them") and first.action.tool_name == "bash"
    assert cat.observation.kind == "terminal" and cat.observation.exit_code == 0 and "3" in cat.observation.text
    assert bad.observation.exit_code == 1 and "No such file" in bad.observation.text
    assert "two at once" in bad.action.text and bad.reasoning is None
    assert json.loads(first.action.raw)["usage"]["total_tokens"] == 30  # litellm's usage for the turn, kept
    assert "EXACTLY ONE action" in submit.observation.text and submit.observation.exit_code is None
    # each turn's own time, in order; 2.x keeps none for the rejected reply (only the response's whole second)
    timed = [s.timestamp for s in ep.steps if s.timestamp is not None]
    assert timed == sorted(timed) and all(t.utcoffset().total_seconds() == 0 for t in timed)
    assert len(timed) == (3 if version >= "2" else 4) and (bad.timestamp is None) == (version >= "2")
    assert ep.env["mini_version"] == version and ep.env["instance_id"] == "submitted"
    assert ep.env["trajectory_format"] == ("mini-swe-agent-1.1" if version >= "2" else "mini-swe-agent-1")


def test_a_step_limit_truncates_the_episode(mini_run):
    _, out, _ = mini_run
    (ep,) = read_file(out / "limited" / "limited.traj.json")
    assert ep.env["exit_status"] == "LimitsExceeded" and not ep.terminated and len(ep.steps) == 1


def test_tool_calls_pair_with_their_results_by_id(tmp_path_factory):
    """2.x only: mini-swe-agent 1.x has no tool-calling models."""
    version = max(VERSIONS)
    out, oracle = mini_swe_agent_run(version, tmp_path_factory)
    (ep,) = read_file(out / "toolcall" / "toolcall.traj.json")
    assert [s.action.code for s in ep.steps] == [c[0] for c in oracle[str(out / "toolcall" / "toolcall.traj.json")]["commands"]]
    assert json.loads(ep.steps[0].action.raw)["id"] == "call_1"
    assert ep.steps[1].observation.text.startswith("<returncode>0</returncode>") and ep.steps[1].observation.exit_code == 0
    assert ep.terminated and ep.final_observation.text == "3\n"


@pytest.mark.parametrize("resolved, outcome", [(True, "success"), (False, "failure")])
def test_the_harness_report_beside_the_trajectory_is_the_outcome(mini_run, run, query, tmp_path, resolved, outcome):
    """The SWE-bench harness writes `report.json` per instance; here hand-written in its shape beside a real
    trajectory. The instance folder is then the unit and nothing in it is left unread."""
    _, out, _ = mini_run
    folder = tmp_path / "run" / "submitted"
    shutil.copytree(out / "submitted", folder)
    (folder / "report.json").write_text(json.dumps({"submitted": {"patch_exists": True, "resolved": resolved}}))
    result = run("ingest-swe", [tmp_path / "run"], stages=["ingest"])
    assert result.episodes == 1 and result.quarantined == 0
    (ep,) = query("SELECT * FROM episodes")
    assert ep["source_format"] == "minisweagent" and ep["outcome"] == outcome and ep["reward"] == float(resolved)
    assert json.loads(ep["env"])["report"]["resolved"] is resolved


def test_units_claim_trajectories_by_their_format_and_the_instance_folder_with_its_report():
    heads = {"/r/a/a.traj.json": b'{"info": {"mini_version": "2.4.6"}, "messages": [], "trajectory_format": "mini-swe-agent-1.1"}',
             "/r/a/report.json": b'{"a": {"resolved": true}}',
             "/r/b.traj.json": b'{"info": {"exit_status": "Submitted", "mini_version": "1.17.5"}, "messages": []}',
             "/r/c.json": b'{"trajectory": [], "history": []}', "/r/d.traj": b'{"environment": "x"}',
             "/r/e.json": b'{\n  "info": {\n    "model_stats": {\n      "instance_cost": 0.0'}
    assert minisweagent.units(sorted(heads), heads.get) == ["/r/a", "/r/b.traj.json", "/r/e.json"]


def test_an_unreadable_file_is_one_quarantine_row(tmp_path):
    bad = tmp_path / "x.traj.json"
    bad.write_text('{"info": {}, "messages": 3}')
    with pytest.raises(Exception, match="messages"):
        read_file(bad)


def test_golden_gemini_3_pro_on_swe_bench_verified(run, query):
    """samples/swe/minisweagent-gemini3pro (mini-swe-agent 1.15.0, read against the raw file by a person):
    36 messages = system, the task, then 17 assistant turns each followed by one user message. Each turn has
    one ```bash block: ls -R django/contrib/sitemaps first, the `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT
    && git add -A && git diff --cached` last, whose output (the diff) is the last message. The 5th turn edits
    line 171 with sed; the 15th runs the sitemaps tests."""
    result = run("ingest-swe", [SAMPLES / "swe" / "minisweagent-gemini3pro"], stages=["ingest"])
    assert result.episodes == 1 and result.steps == 17 and result.quarantined == 0
    ep, steps = episode_and_steps(query, "django__django-16255.traj.json")
    assert ep["source_format"] == "minisweagent" and ep["agent"] == "google/gemini-3-pro-preview"
    assert ep["task"].startswith("<pr_description>\nConsider the following PR description:\nSitemaps without items")
    env = json.loads(ep["env"])
    # the harness's verdict is the run's logs/django__django-16255/report.json (test_harness_outcomes.py)
    assert ep["outcome"] == "success" and ep["reward"] == 1.0 and env["report"]["resolved"] is True
    assert env["exit_status"] == "Submitted" and env["mini_version"] == "1.15.0"
    assert env["model_stats"] == {"instance_cost": 0.08934840000000001, "api_calls": 17}
    assert env["submission"].startswith("diff --git a/django/contrib/sitemaps/__init__.py")
    assert {s["action"]["kind"] for s in steps} == {"command"}
    assert steps[0]["action"]["code"] == "ls -R django/contrib/sitemaps"
    assert steps[4]["action"]["code"] == "sed -i '171s/except TypeError:/except (TypeError, ValueError):/' " \
        "django/contrib/sitemaps/__init__.py"
    assert steps[14]["action"]["code"] == "python3 tests/runtests.py sitemaps_tests"
    assert steps[16]["action"]["code"] == "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"
    # observation 1 is the listing the first command printed, with its return code
    assert steps[1]["observation"]["text"].startswith("<returncode>0</returncode>\n<output>\ndjango/contrib/sitemaps:")
    assert steps[1]["observation"]["exit_code"] == 0 and steps[1]["observation"]["kind"] == "terminal"
    # OpenRouter's reasoning of the turn, then the THOUGHT; the time is the response's `created`
    assert steps[0]["reasoning"].startswith("**Diagnosing the Sitemap Issue**")
    assert "THOUGHT: I need to locate the file" in steps[0]["reasoning"]
    assert steps[0]["timestamp"].isoformat() == "2025-11-18T23:52:40+00:00"
    assert steps[16]["is_terminal"] and steps[16]["final_observation"]["text"].startswith("diff --git")


DEEPSEEK = Path(__file__).parent / "data" / "minisweagent-deepseek-2.2.7"  # MIT: bundled with its license
GOLDEN = Path(__file__).parent / "golden"


def test_golden_real_2x_toolcall_run_stopped_by_a_provider_error():
    """mini-swe-agent 2.2.7 on SWE-bench instance pvlib__pvlib-python-1606 with deepseek/deepseek-reasoner
    through tool calls: SWE-agent/mini-swe-agent pull request 816 (a fork's evaluation artifacts, MIT like the
    project), `output/deepseek_reasoner_dev/pvlib__pvlib-python-1606/pvlib__pvlib-python-1606.traj.json` at
    commit ec0e8e849fea5b1619deb1753007201000904672 (blob efc19a6b2598087e689b4211304fc303deab423b, 63,526
    bytes), bundled in data/minisweagent-deepseek-2.2.7/ with the license and its PROVENANCE.md. A person counts 11
    messages: system, the task, 4 assistant turns with one `bash` tool call each (`ls -la /testbed`,
    `ls -la /testbed/pvlib/`, a grep for `_golden_sect_DataFrame`, `sed -n '302,400p'` of tools.py), each
    answered by a `tool` message with return code 0, then an `exit` message: the 5th API call failed with
    litellm's InternalServerError (SSL EOF). `model_stats` says 5 calls; no submission: 4 steps, truncated,
    outcome unknown."""
    path = DEEPSEEK / "pvlib__pvlib-python-1606.traj.json"
    records = read_file(path)
    golden_check(records, GOLDEN / "minisweagent-2.2.7-deepseek-toolcall.json",
                 env_keys=("mini_version", "exit_status", "model_stats", "trajectory_format", "instance_id"))
    (ep,) = records
    assert ep.agent == "deepseek/deepseek-reasoner" and ep.task.startswith("<pr_description>\nConsider the following")
    assert [s.action.code for s in ep.steps] == ["ls -la /testbed", "ls -la /testbed/pvlib/",
                                                 'grep -n "_golden_sect_DataFrame" /testbed/pvlib/tools.py',
                                                 "sed -n '302,400p' /testbed/pvlib/tools.py"]
    assert {s.action.tool_name for s in ep.steps} == {"bash"}
    assert [s.observation.exit_code for s in ep.steps[1:]] + [ep.final_observation.exit_code] == [0, 0, 0, 0]
    assert ep.final_observation.text.startswith("<returncode>0</returncode>\n<output>\ndef _golden_sect_DataFrame")
    # deepseek-reasoner's reasoning_content is the turn's reasoning; the message content itself is empty
    assert ep.steps[0].reasoning.startswith("I'll start by exploring the current directory")
    assert ep.terminated is False and ep.outcome == "unknown" and ep.reward is None
    assert ep.env["exit_status"] == "InternalServerError" and ep.env["submission"] == ""
    assert ep.env["model_stats"] == {"instance_cost": 0.001055488, "api_calls": 5}
    assert ep.env["exit"]["exception_str"].startswith("litellm.InternalServerError")
    assert ep.env["trajectory_format"] == "mini-swe-agent-1.1" and ep.env["mini_version"] == "2.2.7"
