"""ATIF v1.5-v1.7 as Harbor's agents write it: copied context, context-summary handoffs, subagent trajectories
(files named by `subagent_trajectory_ref`, linear-history continuations, embedded `subagent_trajectories`),
the message beside tool calls, finishing tools, unknown fields.

Real inputs: Harbor 0.1.31's own golden trajectories (samples/atif/harbor-0.1.31-goldens, written by its
Terminus 2 and OpenHands writers) and two real Terminus 2 trials from refreshdotdev/harbor-trajectories
(../shared/samples/atif/harbor-terminus-2, unlicensed: read there, never copied). A trial folder around the
goldens (`result.json`) and the v1.7 and unknown-field documents are hand-made edge cases.
"""

import json
import shutil
from pathlib import Path

import fsspec
import pytest

from tests import goldens
from tests.ingest import golden
from tests.parts import require_shared_sample

from ingest import atif
from ingest.source import Source
from tests.conftest import REPO, SAMPLES

GOLDENS = SAMPLES / "atif" / "harbor-0.1.31-goldens"
T2 = GOLDENS / "terminus_2"
TASK = 'Create a file called hello.txt with "Hello, world!" as the content.'
SHARED_TRIALS = REPO.parent / "shared" / "samples" / "atif" / "harbor-terminus-2"
GOLDEN = Path(__file__).parent / "golden" / "atif-harbor-trials.json"


def _trial(tmp_path, files: dict[str, Path], name="hello-world__Ab12Cd3") -> Path:
    """A Harbor trial folder around real trajectory files (`agent/<name>` -> file), with a hand-made
    `result.json` (TrialResult fields: the verifier's reward 1, no exception)."""
    trial = tmp_path / "in" / name
    (trial / "agent").mkdir(parents=True)
    for target, source in files.items():
        shutil.copy(source, trial / "agent" / target)
    (trial / "result.json").write_text(json.dumps({
        "id": "r-1", "task_name": "hello-world", "trial_name": name, "trial_uri": f"file:///jobs/{name}",
        "source": None, "agent_info": {"name": "terminus-2", "version": "2.0.0"},
        "verifier_result": {"rewards": {"reward": 1.0}}, "exception_info": None}))
    return trial.parent


def _by_agent(query) -> dict[str, dict]:
    return {json.loads(r["env"])["agent"]["name"]: r for r in query("SELECT * FROM episodes")}


def _steps(query, episode_id):
    return query(f"SELECT * FROM steps WHERE episode_id = '{episode_id}' ORDER BY step_index")


def test_context_summarization_trial_keeps_the_main_line_and_links_its_three_subagents(run, query, tmp_path):
    prefix = "hello-world-context-summarization.trajectory"
    files = {"trajectory.json": T2 / f"{prefix}.json"} | {
        f"trajectory.summarization-1-{part}.json": T2 / f"{prefix}.summarization-1-{part}.json"
        for part in ("summary", "questions", "answers")}
    result = run("ingest-swe", [_trial(tmp_path, files)])
    assert (result.status, result.episodes, result.steps, result.quarantined) == ("success", 4, 10, 0)
    eps = _by_agent(query)
    main = eps["terminus-2"]
    assert (main["task"], main["outcome"], main["reward"], main["num_steps"]) == (TASK, "success", 1.0, 7)
    steps = _steps(query, main["episode_id"])
    assert [s["action"]["tool_name"] for s in steps] == ["bash_command"] * 5 + ["mark_task_complete"] * 2
    assert steps[0]["action"]["kind"] == "keystrokes" and steps[0]["action"]["text"] == "mkdir test_dir\n"
    # the words beside the calls are kept, as the step's reasoning
    assert steps[0]["reasoning"] == ("Analysis: Terminal is ready. Let me create a test directory first.\n"
                                     "Plan: Create test_dir to set up some context.")
    # the handoff: the action after it saw the answers of the summarization, not the system notice
    assert steps[3]["observation"]["text"].startswith("Here are the answers the other agent provided.")
    assert steps[-1]["is_terminal"]
    env = json.loads(main["env"])
    assert "system_prompt" not in env  # Terminus 2 writes none; the handoff notice must not become one
    (event,) = env["system_events"]
    assert event["message"] == "Performed context summarization and handoff to continue task." and event["step"] == 3
    assert [link["trajectory_path"] for link in env["subagents"]] == [
        "trajectory.summarization-1-summary.json", "trajectory.summarization-1-questions.json",
        "trajectory.summarization-1-answers.json"]
    # each subagent's episode names the main episode; one join finds them
    children = query("SELECT json_extract_string(c.env, '$.parent.relation') AS relation, c.num_steps, c.env "
                     "FROM episodes c JOIN episodes p ON json_extract_string(c.env, '$.parent.episode_id') = "
                     "p.episode_id ORDER BY c.source_uri, c.env")
    assert [(c["relation"], c["num_steps"]) for c in children] == [("subagent", 1)] * 3
    copied = {json.loads(r["env"])["agent"]["name"]: json.loads(r["env"]).get("copied_context", {}).get("turns")
              for r in query("SELECT env FROM episodes")}
    assert copied == {"terminus-2": None, "terminus-2-summarization-summary": 3,
                      "terminus-2-summarization-questions": None, "terminus-2-summarization-answers": 5}
    summary = _steps(query, eps["terminus-2-summarization-summary"]["episode_id"])
    assert summary[0]["action"]["kind"] == "message" and summary[0]["observation"]["text"].startswith(
        "You are about to hand off your work to another AI agent.")


def test_linear_history_continuation_reads_its_copied_turns_as_history(run, query, tmp_path):
    prefix = "hello-world-context-summarization-linear-history.trajectory"
    files = {"trajectory.json": T2 / f"{prefix}.json", "trajectory.cont-1.json": T2 / f"{prefix}.cont-1.json"}
    run("ingest-swe", [_trial(tmp_path, files)], stages=["ingest"])
    rows = query("SELECT * FROM episodes ORDER BY source_uri, num_steps")
    first, cont = sorted(rows, key=lambda r: "cont" in json.dumps(json.loads(r["env"]).get("parent")))
    assert (first["num_steps"], cont["num_steps"]) == (3, 4)
    env = json.loads(cont["env"])
    assert env["copied_context"] == {"turns": 4, "step_ids": [1, 2, 3, 4]}
    assert env["parent"]["relation"] == "continuation" and env["parent"]["episode_id"] == first["episode_id"]
    assert cont["task"] == TASK  # from the copied task prompt
    steps = _steps(query, cont["episode_id"])
    assert steps[0]["observation"]["text"].startswith("Here are the answers the other agent provided.")


def test_raw_content_replies_are_the_actions_the_tool_call_trajectory_of_the_same_run_records():
    """Harbor wrote one scripted run twice: with tool calls (`bash_command`, `mark_task_complete`, the message
    `Analysis: ... Plan: ...`) and in raw-content mode (the model's JSON reply as the message, no tool call).
    Both read as the same actions, reasoning and observations; the raw reply is kept in each action's raw."""
    prefix = "hello-world-context-summarization-linear-history.trajectory"
    raw = [s for name in (f"{prefix}.json", f"{prefix}.cont-1.json") for s in _read(T2 / name)[0].steps]
    (calls,) = _read(T2 / "hello-world-context-summarization.trajectory.json")
    seen = lambda s: (s.action.kind, s.action.tool_name, s.action.text, s.action.duration_s, s.reasoning)  # noqa: E731
    assert [seen(s) for s in raw] == [seen(s) for s in calls.steps]
    assert [s.action.kind for s in raw] == ["keystrokes"] * 5 + ["tool_call"] * 2
    assert [s.observation.text for s in raw[4:]] == [s.observation.text for s in calls.steps[4:]]
    reply = json.loads((T2 / f"{prefix}.json").read_text())["steps"][1]["message"]
    assert json.loads(raw[0].action.raw) == {"message": reply, "command": 0}
    (cont,) = _read(T2 / f"{prefix}.cont-1.json")
    assert cont.terminated and cont.env["terminus_replies"] == ["steps[4]", "steps[5]", "steps[6]", "steps[7]"]


def test_raw_content_continuation_matches_the_golden():
    """The continuation of Harbor's raw-content run (four replies after the handoff), read against the raw file:
    two commands (printf, cat) then the completion claim twice (asked, then confirmed)."""
    path = T2 / "hello-world-context-summarization-linear-history.trajectory.cont-1.json"
    golden.check(_read(path), Path(__file__).parent / "golden" / "atif-terminus2-raw-content.json",
                 env_keys=("terminus_replies", "ingest_warnings"))


def _read(path: Path, uri=None):
    return list(atif.read(Source(fs=fsspec.filesystem("file"), path=str(path), uri=uri or path.name,
                                 put_blob=lambda *a: "sha256:0")))


def test_openhands_golden_finishes_and_keeps_its_system_prompt():
    (ep,) = _read(GOLDENS / "openhands" / "hello-world.trajectory.json")
    assert [s.action.tool_name for s in ep.steps] == ["str_replace_editor", "finish"] and ep.terminated
    assert ep.task == TASK + "\n"
    assert ep.env["system_prompt"].startswith("You are OpenHands agent")
    assert [e["message"][:23] for e in ep.env["system_events"]] == ["Retrieving content for:", "Added workspace context"]
    assert ep.steps[1].reasoning == "All done! What's next on the agenda?"


def _doc(steps, **root):
    return {"schema_version": "ATIF-v1.7", "session_id": "s-1", "agent": {"name": "fx", "version": "1"},
            "steps": [{"step_id": i + 1, **s} for i, s in enumerate(steps)], **root}


def test_embedded_subagent_trajectories_are_episodes_linked_both_ways(tmp_path):
    sub = _doc([{"source": "user", "message": "count files"},
                {"source": "agent", "message": "", "tool_calls": [
                    {"tool_call_id": "k1", "function_name": "bash", "arguments": {"command": "ls | wc -l"}}],
                 "observation": {"results": [{"source_call_id": "k1", "content": "3"}]}},
                {"source": "agent", "message": "3 files"}], trajectory_id="sub-1")
    doc = _doc([{"source": "user", "message": "how many files?"},
                {"source": "agent", "message": "asking a helper", "tool_calls": [
                    {"tool_call_id": "c1", "function_name": "delegate", "arguments": {"task": "count files"}}],
                 "observation": {"results": [{"source_call_id": "c1", "content": "3 files",
                                              "subagent_trajectory_ref": [{"trajectory_id": "sub-1"}]}]}},
                {"source": "agent", "message": "3", "tool_calls": [
                    {"tool_call_id": "c2", "function_name": "finish", "arguments": {}}]}],
               subagent_trajectories=[sub])
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    main, child = _read(path, "in/t.json")
    assert (main.key, child.key) == ("", "subagent:sub-1") and main.terminated and not child.terminated
    assert main.steps[0].reasoning == "asking a helper"
    (link,) = main.env["subagents"]
    assert link["step"] == 0 and link["episode_id"] == atif.episode_id("atif", "in/t.json", "subagent:sub-1")
    assert child.env["parent"] == {"episode_id": atif.episode_id("atif", "in/t.json", ""), "key": "",
                                   "session_id": "s-1", "relation": "subagent"}
    assert [s.action.code for s in child.steps] == ["ls | wc -l", None] and child.task == "count files"


def test_unknown_fields_are_kept_raw_with_a_warning_that_validate_reports(run, query, tmp_path):
    doc = _doc([{"source": "user", "message": "go"},
                {"source": "agent", "message": "done", "confidence": 0.9}], future_root={"a": 1})
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "t.json").write_text(json.dumps(doc))
    run("ingest-swe", [tmp_path / "in"])
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert env["atif_unknown_fields"] == {"steps[1]": {"confidence": 0.9}, "root": {"future_root": {"a": 1}}}
    assert [w["rule"] for w in env["ingest_warnings"]] == ["atif.unknown_field"] * 2
    (found,) = query("SELECT severity, findings, example_reason FROM validation_findings "
                     "WHERE rule = 'ingest.kept_unknown'")
    assert (found["severity"], found["findings"]) == ("warning", 2) and "not an ATIF field" in found["example_reason"]


def test_a_trial_whose_trajectory_has_no_agent_step_keeps_its_outcome_and_reward(run, query, tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(_doc([{"source": "user", "message": "go"}])))
    result = run("ingest-swe", [_trial(tmp_path, {"trajectory.json": empty})], stages=["ingest"])
    assert (result.episodes, result.quarantined) == (0, 1)
    (row,) = query("SELECT rule, reason, snippet FROM quarantine")
    assert row["rule"] == "empty_episode" and "outcome (success, reward 1.0) is kept" in row["reason"]
    assert json.loads(row["snippet"])["reward"] == 1.0 and json.loads(row["snippet"])["task"] == "go"


def _fingerprint(trial: Path) -> dict:
    episodes = [r for r in _read(trial, f"harbor-terminus-2/{trial.name}") if isinstance(r, atif.Episode)]
    (ep,) = episodes
    return {"task_start": ep.task[:80], "outcome": ep.outcome, "reward": ep.reward, "terminated": ep.terminated,
            "agent": ep.agent, "actions": [[s.action.kind, s.action.tool_name, (s.action.text or "")[:100],
                                              len(s.action.text or "")] for s in ep.steps],
            "with_reasoning": [i for i, s in enumerate(ep.steps) if s.reasoning]}


def test_real_terminus2_trials_match_the_golden():
    """Two real trials (ATIF v1.5 and v1.6), each action as a person reads it in the raw trajectory: the
    keystrokes of every bash_command, the two mark_task_complete calls (asked, then confirmed), the reward."""
    require_shared_sample(SHARED_TRIALS)
    got = {t.name: _fingerprint(t) for t in sorted(SHARED_TRIALS.iterdir()) if t.is_dir()}
    goldens.check_json(GOLDEN, got, indent=1)
