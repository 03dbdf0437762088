"""The ATIF reader called directly (`atif.read`) on the bundled Harbor trial (samples/atif/harbor-claude-code),
Harbor 0.1.31's own Terminus 2 goldens put in a trial folder, and hand-made trials and documents in Harbor's
schemas (TrialResult, ATIF v1.2-v1.7): each step's time, action and raw call, the reward, outcome and terminal
flag a trial's result and verifier files give, our export's restored records, and each quarantine row's reason
and location."""

import datetime as dt
import json
import shutil

import pytest
from fsspec.implementations.local import LocalFileSystem

from ingest import atif
from ingest.record import Episode, Rejected, episode_id
from ingest.source import Source, SourceError
from tests.conftest import SAMPLES

TRIAL = SAMPLES / "atif" / "harbor-claude-code" / "fix-calc-add__Vq7mR2p"
T2 = SAMPLES / "atif" / "harbor-0.1.31-goldens" / "terminus_2"
TASK = "The tests in /app fail. Find and fix the bug in /app/calc.py so that `pytest -q` passes in /app."
PROMPT = "List every file in /app that imports or calls calc.add, with the line."


def _read(path, uri=None) -> list:
    return list(atif.read(Source(fs=LocalFileSystem(), path=str(path), uri=uri or f"in/{path.name}",
                                 put_blob=lambda *a: "sha256:0")))


def _split(records):
    return [r for r in records if isinstance(r, Episode)], [r for r in records if isinstance(r, Rejected)]


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _doc(steps, **root):
    return {"schema_version": "ATIF-v1.7", "session_id": "s-1", "agent": {"name": "fx", "version": "1"},
            "steps": [{"step_id": i + 1, **s} if isinstance(s, dict) else s for i, s in enumerate(steps)], **root}


def _write(tmp_path, doc, name="t.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _call(call_id, name="bash", **arguments):
    return {"tool_call_id": call_id, "function_name": name, "arguments": arguments or {"command": "true"}}


def _agent(calls=(), results=(), ts=None, **more):
    turn = {"source": "agent", "message": more.pop("message", ""), **more}
    if ts:
        turn["timestamp"] = ts
    if calls:
        turn["tool_calls"] = list(calls)
    if results:
        turn["observation"] = {"results": [{"source_call_id": c, "content": t} for c, t in results]}
    return turn


def _user(message, **more):
    return {"source": "user", "message": message, **more}


# the bundled trial ----------------------------------------------------------------------------------------------------
def test_the_bundled_trial_each_steps_time_action_and_the_verifiers_outcome():
    doc = json.loads((TRIAL / "agent" / "trajectory.json").read_text())
    records = _read(TRIAL, "harbor-claude-code/fix-calc-add__Vq7mR2p")
    (main, side), rows = _split(records)
    assert rows == []
    assert (main.key, main.task, main.outcome, main.reward, main.terminated) == ("", TASK, "success", 1.0, True)
    assert (main.domain, main.platform, main.agent) == ("terminal", "linux", "claude-haiku-4-5-20251001")
    turns = {t["step_id"]: t for t in doc["steps"]}
    # the main line's turns 5-11; turn 7's time goes back inside a run of calls: a parallel call, no time
    assert [s.timestamp for s in main.steps] == [_at(turns[5]["timestamp"]), _at(turns[6]["timestamp"]), None,
                                                 *(_at(turns[i]["timestamp"]) for i in (8, 9, 10, 11))]
    assert main.env["parallel_call_times"] == {"2": turns[7]["timestamp"]}
    assert [s.action.kind for s in main.steps] == ["message", "tool_call", "tool_call", "tool_call", "tool_call",
                                                   "command", "message"]
    assert [json.loads(s.action.raw) for s in main.steps[1:6]] == [
        turns[i]["tool_calls"][0] for i in (6, 7, 8, 9, 10)]
    assert main.steps[0].action.text == turns[5]["message"]
    assert json.loads(main.steps[0].action.raw) == {"message": turns[5]["message"]}
    assert main.steps[5].action.code == "cd /app && pytest -q" and main.steps[5].action.tool_name == "Bash"
    assert json.loads(main.steps[4].action.arguments) == turns[9]["tool_calls"][0]["arguments"]
    assert main.steps[6].observation.kind == "terminal" and main.steps[6].observation.is_error is None
    assert main.final_observation is None
    assert main.env["harbor"] == {"trial_name": "fix-calc-add__Vq7mR2p", "task_name": "fix-calc-add",
                                  "source": "tasks", "agent_info": json.loads((TRIAL / "result.json").read_text())[
                                      "agent_info"], "started_at": "2025-11-19T22:08:41.502113Z",
                                  "finished_at": "2025-11-19T22:11:02.877410Z"}
    assert main.env["models"] == {"claude-opus-4-1-20250805": [0, 1, 2], "claude-sonnet-4-5-20250929": [3, 4, 5, 6]}
    assert main.env["session_id"] == doc["session_id"] and main.env["final_metrics"] == doc["final_metrics"]
    assert main.env["sidechains"] == {"turns": 3, "episodes": ["sidechain"]} and "notes" not in main.env
    assert (side.key, side.task, side.agent, side.outcome, side.reward, side.terminated) == (
        "sidechain", PROMPT, "claude-haiku-4-5-20251001", "unknown", None, False)
    assert [s.timestamp for s in side.steps] == [_at(turns[2]["timestamp"]), _at(turns[3]["timestamp"])]
    assert side.env["sidechain"] == {"of": "", "agent_id": None, "turns": 3}
    assert side.env["harbor"] == {"trial_name": "fix-calc-add__Vq7mR2p", "task_name": "fix-calc-add",
                                  "source": "tasks"}
    assert "models" not in side.env and side.final_observation is None


def _trial(tmp_path, result=None, trajectory=True, reward_txt=None, reward_json=None, name="t__1", sessions=False):
    trial = tmp_path / name
    (trial / "verifier").mkdir(parents=True)
    doc = json.loads((TRIAL / "result.json").read_text())
    doc.update(result or {})
    (trial / "result.json").write_text(json.dumps(doc))
    (trial / "agent").mkdir()
    if trajectory:
        shutil.copy(TRIAL / "agent" / "trajectory.json", trial / "agent" / "trajectory.json")
    if sessions:
        shutil.copytree(TRIAL / "agent" / "sessions", trial / "agent" / "sessions")
    if reward_txt is not None:
        (trial / "verifier" / "reward.txt").write_text(reward_txt)
    if reward_json is not None:
        (trial / "verifier" / "reward.json").write_text(
            reward_json if isinstance(reward_json, str) else json.dumps(reward_json))
    return trial


def _error(kind, message="m"):
    return {"exception_type": kind, "exception_message": message, "exception_traceback": "",
            "occurred_at": "2025-11-19T22:25:00"}


@pytest.mark.parametrize("result, reward_txt, reward_json, expected", [
    ({"verifier_result": {"rewards": {"reward": 0}}, "exception_info": _error("RewardFileNotFoundError")}, "1",
     None, ("failure", 0.0, True)),
    ({"verifier_result": {"rewards": {"reward": 0}}, "exception_info": _error("VerifierTimeoutError")}, None,
     None, ("failure", 0.0, True)),
    ({"verifier_result": {"rewards": {"tests": 1}}}, "0", None, ("success", 1.0, True)),  # the only value
    ({"verifier_result": {"rewards": {"a": 1, "b": 0}}}, "1", None, ("unknown", None, True)),  # not read beside
    ({"verifier_result": {"rewards": {"reward": True}}}, None, None, ("unknown", None, True)),  # no number
    ({"verifier_result": {"rewards": {"reward": 1.5}}}, None, None, ("success", 1.5, True)),
    ({"verifier_result": {"rewards": {"reward": 0.999}}}, None, None, ("failure", 0.999, True)),
    ({"verifier_result": None}, "1\n", None, ("success", 1.0, True)),
    ({"verifier_result": None}, "0.25", {"reward": 1}, ("failure", 0.25, True)),  # reward.txt before reward.json
    ({"verifier_result": {"rewards": "x"}}, None, {"reward": 1}, ("success", 1.0, True)),
    ({"verifier_result": None}, None, {"tests": 0.5}, ("failure", 0.5, True)),
    ({"verifier_result": None}, None, {"tests": 0.5, "style": 1.0}, ("unknown", None, True)),
    ({"verifier_result": None, "exception_info": _error("AgentTimeoutError")}, None, None, ("unknown", None, False)),
    ({"verifier_result": None, "exception_info": {"exception_message": "?"}}, None, None, ("unknown", None, False)),
])
def test_reward_outcome_and_termination_of_a_trial(tmp_path, result, reward_txt, reward_json, expected):
    (main, side), rows = _split(_read(_trial(tmp_path, result, reward_txt=reward_txt, reward_json=reward_json)))
    assert rows == []
    assert (main.outcome, main.reward, main.terminated) == expected
    assert (side.outcome, side.reward) == ("unknown", None)
    rewards = (result.get("verifier_result") or {}).get("rewards")
    written = rewards if isinstance(rewards, dict) else reward_json if reward_txt is None else None
    if isinstance(written, dict) and set(written) != {"reward"}:
        assert main.env["harbor"]["rewards"] == written
    else:
        assert "rewards" not in main.env["harbor"]
    error = result.get("exception_info")
    if error:
        assert main.env["harbor"]["exception"] == {"type": error.get("exception_type"),
                                                   "message": error["exception_message"]}
    else:
        assert "exception" not in main.env["harbor"]


def test_an_exception_message_is_kept_to_500_characters(tmp_path):
    (main, _), _ = _split(_read(_trial(tmp_path, {"exception_info": _error("AgentTimeoutError", "x" * 900)})))
    assert main.env["harbor"]["exception"] == {"type": "AgentTimeoutError", "message": "x" * 500}


@pytest.mark.parametrize("reward_txt, reward_json, row", [
    ("passed", None, ("parse_error", "verifier/reward.txt", "verifier/reward.txt: reward 'passed' is not a number")),
    (None, "{nope", ("parse_error", "verifier/reward.json", None)),
])
def test_a_bad_verifier_file_is_a_row_and_the_episodes_are_kept(tmp_path, reward_txt, reward_json, row):
    records = _read(_trial(tmp_path, {"verifier_result": None}, reward_txt=reward_txt, reward_json=reward_json))
    (main, side), rows = _split(records)
    assert isinstance(records[0], Rejected)  # the trial's rows come first
    (bad,) = rows
    assert (bad.rule, bad.location) == row[:2]
    if row[2]:
        assert bad.reason == row[2] and bad.snippet == "passed"
    else:
        assert bad.reason.startswith("verifier/reward.json")
    assert (main.outcome, main.reward, main.terminated) == ("unknown", None, True)


def test_an_unreadable_result_reads_the_reward_from_the_verifier(tmp_path):
    trial = _trial(tmp_path, reward_txt="1")
    (trial / "result.json").write_text("{broken")
    (main, _), rows = _split(_read(trial))
    (bad,) = rows
    assert (bad.rule, bad.location) == ("parse_error", "result.json")
    assert bad.reason.startswith("result.json")
    assert bad.reason.endswith("; the trial's reward is read from verifier/ only")
    assert (main.outcome, main.reward, main.terminated) == ("success", 1.0, True) and main.env["harbor"] == {}
    (trial / "result.json").write_text("[1]")  # JSON, not an object
    (main, _), rows = _split(_read(trial))
    assert rows == [] and main.reward == 1.0


@pytest.mark.parametrize("result, reason", [
    ({"trial_name": "fix__A", "exception_info": _error("AgentTimeoutError", "Agent timed out after 900s")},
     "Harbor trial fix__A (task fix-calc-add): result.json but no agent/trajectory.json: the agent wrote no ATIF "
     "trajectory; the trial failed with AgentTimeoutError: Agent timed out after 900s"),
    ({"trial_name": None, "task_name": None},
     "Harbor trial t__1: result.json but no agent/trajectory.json: the agent wrote no ATIF trajectory"),
])
def test_a_trial_without_a_trajectory_is_one_row_naming_it(tmp_path, result, reason):
    records = _read(_trial(tmp_path, result, trajectory=False))
    assert [(r.rule, r.location, r.reason) for r in records] == [("missing_trajectory", "agent/trajectory.json",
                                                                  reason)]


def test_a_long_exception_is_cut_in_the_missing_trajectory_row(tmp_path):
    (row,) = _read(_trial(tmp_path, {"exception_info": _error("E", "y" * 400)}, trajectory=False))
    assert row.reason.endswith("the trial failed with E: " + "y" * 200)


def test_a_trial_without_atif_is_read_from_its_claude_code_sessions(tmp_path):
    trial = _trial(tmp_path, {"verifier_result": {"rewards": {"reward": 0}}}, trajectory=False, sessions=True)
    (main, side), rows = _split(_read(trial))
    assert rows == []
    rel = "agent/sessions/projects/-app/5c2e8f0a-91d3-4b6e-8a7f-3d1c0b9e2a44.jsonl"
    assert main.key == rel and side.key.startswith(rel + ":")
    assert (main.outcome, main.reward, main.terminated) == ("failure", 0.0, True)
    assert side.outcome != "failure" and side.env["harbor"]["trial_name"] == "fix-calc-add__Vq7mR2p"
    assert main.env["harbor"]["task_name"] == "fix-calc-add"
    assert main.env["sidechains"] == [side.key]


def test_other_atif_files_of_the_agent_are_episodes_of_their_own(tmp_path):
    trial = _trial(tmp_path)
    _write(trial / "agent", _doc([_user("side task"), _agent(message="ok")]), "extra.json")
    (trial / "agent" / "notes.json").write_text('{"not": "atif"}')
    (trial / "agent" / "bad.json").write_text('{"schema_version": "ATIF-v1.2", "steps": 3}')
    records = _read(trial)
    (main, side, extra), rows = _split(records)
    assert (main.key, side.key, extra.key) == ("", "sidechain", "agent/extra.json")
    assert (extra.task, extra.outcome, extra.reward, extra.terminated) == ("side task", "unknown", None, False)
    assert "harbor" not in extra.env
    assert [(r.rule, r.location, r.reason) for r in rows] == [
        ("bad_record", "agent/bad.json: steps", "agent/bad.json: 'steps' must be an array")]


def test_a_trial_whose_trajectory_has_no_agent_step_is_one_row_with_its_outcome(tmp_path):
    trial = _trial(tmp_path, trajectory=False)
    _write(trial / "agent", _doc([_user("go"), _user("side", extra={"is_sidechain": True}),
                                  _agent(message="x", extra={"is_sidechain": True})],
                                 agent={"name": "fx", "model_name": "m"}), "trajectory.json")
    (side,), rows = _split(_read(trial))
    (row,) = rows
    assert (row.rule, row.location) == ("empty_episode", "agent/trajectory.json")
    assert row.reason == ("agent/trajectory.json: no agent steps on the main line; the episode's outcome (success, "
                          "reward 1.0) is kept in this row")
    snippet = json.loads(row.snippet)
    assert snippet["task"] == "go" and snippet["agent"] == "m" and snippet["session_id"] == "s-1"
    assert snippet["harbor"]["trial_name"] == "fix-calc-add__Vq7mR2p" and (snippet["outcome"], snippet["reward"]) == (
        "success", 1.0)
    assert side.key == "sidechain"


def test_a_file_alone_without_an_agent_step_is_a_row_without_a_trial(tmp_path):
    (row,) = _read(_write(tmp_path, _doc([_user("go")])))
    assert row.reason == "t.json: no agent steps; the episode's outcome (unknown, reward None) is kept in this row"
    assert json.loads(row.snippet) == {"outcome": "unknown", "reward": None, "task": "go", "session_id": "s-1"}


# Terminus 2's goldens in a trial folder: subagent files and continuations linked both ways ----------------------------
def _t2_trial(tmp_path, files):
    trial = _trial(tmp_path, trajectory=False, name="hello__1")
    for target, source in files.items():
        shutil.copy(T2 / source, trial / "agent" / target)
    return trial


def test_summarization_subagent_files_name_their_parent_and_the_parent_names_them(tmp_path):
    prefix = "hello-world-context-summarization.trajectory"
    parts = ("summary", "questions", "answers")
    trial = _t2_trial(tmp_path, {"trajectory.json": f"{prefix}.json"} | {
        f"trajectory.summarization-1-{p}.json": f"{prefix}.summarization-1-{p}.json" for p in parts})
    eps, rows = _split(_read(trial, "in/hello__1"))
    assert rows == []
    main, *subs = eps
    doc = json.loads((T2 / f"{prefix}.json").read_text())
    assert main.key == "" and [s.key for s in subs] == [f"agent/trajectory.summarization-1-{p}.json"
                                                        for p in ("answers", "questions", "summary")]
    back = {"episode_id": episode_id("atif", "in/hello__1", ""), "key": "", "session_id": doc["session_id"],
            "relation": "subagent"}
    assert [s.env["parent"] for s in subs] == [back] * 3
    assert (main.outcome, main.reward, main.terminated) == ("success", 1.0, True)
    assert all((s.outcome, s.reward, "harbor" in s.env) == ("unknown", None, False) for s in subs)
    assert [s.action.kind for s in main.steps] == ["keystrokes"] * 5 + ["tool_call"] * 2
    agent_turns = [t for t in doc["steps"] if t["source"] == "agent"]
    calls = [c for t in agent_turns for c in t.get("tool_calls", [])]
    assert [json.loads(s.action.raw) for s in main.steps] == calls
    assert [s.action.text for s in main.steps[:5]] == [c["arguments"]["keystrokes"] for c in calls[:5]]
    assert [s.action.duration_s for s in main.steps[:5]] == [float(c["arguments"]["duration"]) for c in calls[:5]]
    assert [s.action.tool_name for s in main.steps] == [c["function_name"] for c in calls]
    assert [s.observation.kind for s in main.steps[1:6]] == ["terminal", "terminal", "text", "terminal", "terminal"]
    stamps = [_at(t["timestamp"]) if t.get("timestamp") else None for t in agent_turns for _ in t.get("tool_calls", [])]
    assert [s.timestamp for s in main.steps] == stamps
    (event,) = main.env["system_events"]
    assert event["step"] == 3 and "system_prompt" not in main.env
    # the handoff: the first action after the summarization saw the answers, not what came before
    assert main.steps[3].observation.text.startswith("Here are the answers the other agent provided.")


def test_a_linear_history_continuation_names_the_first_file_as_its_parent(tmp_path):
    prefix = "hello-world-context-summarization-linear-history.trajectory"
    trial = _t2_trial(tmp_path, {"trajectory.json": f"{prefix}.json",
                                 "trajectory.cont-1.json": f"{prefix}.cont-1.json"})
    (first, cont), rows = _split(_read(trial, "in/hello__1"))
    assert rows == [] and cont.key == "agent/trajectory.cont-1.json"
    assert cont.env["parent"] == {"episode_id": episode_id("atif", "in/hello__1", ""), "key": "",
                                  "session_id": json.loads((T2 / f"{prefix}.json").read_text())["session_id"],
                                  "relation": "continuation"}
    assert cont.env["copied_context"] == {"turns": 4, "step_ids": [1, 2, 3, 4]}
    assert cont.task == first.task == 'Create a file called hello.txt with "Hello, world!" as the content.'
    assert (first.outcome, cont.outcome) == ("success", "unknown")


def test_a_subagent_file_read_alone_names_its_parent_by_session(tmp_path):
    doc = _doc([_user("q"), _agent(message="a")], agent={"name": "fx", "extra": {"parent_session_id": "p-9"}})
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.env["parent"] == {"session_id": "p-9", "relation": "subagent"}
    doc["agent"]["extra"] = {"parent_session_id": 5}
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert "parent" not in ep.env
    doc["agent"]["extra"] = "x"
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert "parent" not in ep.env


# one line of turns ----------------------------------------------------------------------------------------------------
def test_system_prompt_events_and_a_context_replacing_turn(tmp_path):
    doc = _doc([{"source": "system", "message": "you are"},
                _user("Task Description:\nmake it\n\nCurrent terminal state:\n$ "),
                _agent([_call("c1", command="ls")], [("c1", "a")], ts="2026-01-01T10:00:00Z"),
                {"source": "system", "message": "note", "extra": {"k": 1}},
                _user("seen"),
                _agent([_call("c2", command="pwd")], [("c2", "/")]),
                _user("dropped"),
                {"source": "system", "message": "compacted", "extra": {"context_management": {"boundary": "replace"}}},
                _user("fresh"),
                _agent(message="done", ts="2026-01-01T10:00:09+02:00"),
                {"source": "system", "message": "keep", "extra": {"context_management": {"boundary": "append"}}},
                _user("tail")])
    ((ep,), rows) = _split(_read(_write(tmp_path, doc)))
    assert rows == []
    assert ep.env["system_prompt"] == "you are" and ep.task == "make it"
    assert ep.steps[0].observation.text.startswith("Task Description:")
    assert [s.observation.text for s in ep.steps] == [ep.steps[0].observation.text, "a\n\nseen", "fresh"]
    assert [s.observation.kind for s in ep.steps] == ["text", "text", "text"]
    assert ep.env["system_events"] == [
        {"step": 1, "step_id": 4, "message": "note", "extra": {"k": 1}},
        {"step": 2, "step_id": 8, "message": "compacted", "extra": {"context_management": {"boundary": "replace"}}},
        {"step": 3, "step_id": 11, "message": "keep", "extra": {"context_management": {"boundary": "append"}}}]
    assert [s.timestamp for s in ep.steps] == [_at("2026-01-01T10:00:00Z"), None, _at("2026-01-01T08:00:09Z")]
    assert ep.final_observation.text == "tail" and ep.final_observation.kind == "text"
    assert (ep.steps[2].action.kind, ep.steps[2].action.text) == ("message", "done")
    assert not ep.terminated and ep.outcome == "unknown" and ep.reward is None


def test_a_system_turn_after_a_user_turn_is_an_event_not_the_prompt(tmp_path):
    doc = _doc([_user("go"), {"source": "system", "message": "late"}, _agent(message="ok"),
                {"source": "system", "message": [{"type": "text", "text": "x"}]}])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert "system_prompt" not in ep.env
    assert [(e["step"], e["step_id"], e["message"]) for e in ep.env["system_events"]] == [(0, 2, "late"), (1, 4, "x")]
    assert ep.steps[0].observation.text == "go"  # an event that does not replace the context keeps what came before


def test_copied_context_is_history_and_its_task_and_handoff_stay(tmp_path):
    doc = _doc([{"source": "system", "message": "sp", "is_copied_context": True},
                _user("the task", is_copied_context=True),
                _agent([_call("c0")], [("c0", "old")], is_copied_context=True),
                _user("handoff", is_copied_context=True),
                {"source": "user", "message": "", "is_copied_context": True},
                _user("now"),
                _agent(message="go on")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert len(ep.steps) == 1 and ep.task == "the task" and ep.env["system_prompt"] == "sp"
    assert ep.steps[0].observation.text == "handoff\n\nnow"
    assert ep.env["copied_context"] == {"turns": 5, "step_ids": [1, 2, 3, 4, 5]}
    doc["steps"][0].pop("step_id")
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.env["copied_context"]["step_ids"] == [1, 2, 3, 4, 5]  # a turn without an id: its place


def test_a_copied_system_turn_after_the_prompt_keeps_the_prompt(tmp_path):
    doc = _doc([{"source": "system", "message": "first"}, {"source": "system", "message": "copied",
                                                          "is_copied_context": True},
                _user("t"), _agent(message="m")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.env["system_prompt"] == "first"


def test_injected_cli_context_is_never_the_task(tmp_path):
    doc = _doc([_user("  <environment_context>cwd</environment_context>"), _user("# AGENTS.md instructions x"),
                _user("real task"), _user("later"), _agent(message="ok")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.task == "real task"
    assert ep.steps[0].observation.text.endswith("real task\n\nlater")


def test_calls_results_reasoning_errors_and_finishing(tmp_path):
    doc = _doc([_user("go"),
                _agent([_call("a", command="ls"), _call("b", "Read", file_path="/x")],
                       [("b", "B"), ("a", "A")], reasoning_content="think", message="plan",
                       extra={"tool_result_is_error": True}),
                {"source": "agent", "message": "", "tool_calls": [_call(7, command="make")],
                 "observation": {"results": [{"source_call_id": 7, "content": "built"},
                                             {"content": "loose"}]},
                 "extra": {"tool_result_is_error": True}, "reasoning_content": "only"},
                _agent([_call("k", "bash_command", keystrokes="ls\n", duration=True)], [("k", "$ ls")]),
                _agent([_call("f", "finish", message="bye")], [("f", "ok")], message="all done")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    a, b, make, keys, fin = ep.steps
    assert (a.action.kind, a.action.code, a.action.tool_name) == ("command", "ls", "bash")
    assert (b.action.kind, b.action.tool_name, json.loads(b.action.arguments)) == ("tool_call", "Read",
                                                                                     {"file_path": "/x"})
    assert (a.reasoning, b.reasoning, make.reasoning, fin.reasoning) == ("think\n\nplan", None, "only", "all done")
    assert (b.observation.text, b.observation.kind, b.observation.is_error) == ("A", "terminal", None)
    assert (make.observation.text, make.observation.is_error) == ("B", None)  # two calls: no error flag
    assert (keys.observation.text, keys.observation.is_error, keys.observation.kind) == ("built\n\nloose", True,
                                                                                          "terminal")
    assert (keys.action.kind, keys.action.text, keys.action.duration_s) == ("keystrokes", "ls\n", None)
    assert (fin.observation.text, fin.observation.kind) == ("$ ls", "terminal")
    assert ep.terminated and ep.final_observation.text == "ok" and ep.final_observation.kind == "tool_result"
    assert json.loads(make.action.raw) == doc["steps"][2]["tool_calls"][0]


def test_a_result_naming_no_call_of_its_turn_or_a_call_twice_is_kept(tmp_path):
    doc = _doc([_user("go"),
                _agent([_call("a", command="ls"), _call("b", command="pwd")],
                       [("a", "A1"), ("zz", "orphan"), ("a", "A2"), ("b", "B")]),
                _agent(message="done")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    a, b, done = ep.steps
    assert b.observation.text == "A1\n\nA2"  # call a's two results, in order
    assert done.observation.text == "B\n\norphan"  # the stray result with the turn's last call


def test_a_finishing_call_before_the_last_agent_turn_does_not_end_the_run(tmp_path):
    doc = _doc([_user("go"), _agent([_call("f", "mark_task_complete")]), _agent(message="still here")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert not ep.terminated
    doc["steps"].pop()
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.terminated and ep.steps[-1].action.tool_name == "mark_task_complete"


def test_keystrokes_with_a_wait_and_content_parts(tmp_path):
    doc = _doc([_user([{"type": "text", "text": "a"}, {"type": "image", "source": {}}, {"type": "text", "text": "b"}]),
                _agent([_call("k", "bash_command", keystrokes="q", duration=2)],
                       message=[{"type": "text", "text": "why"}]),
                _agent(message={"odd": 1}),
                _agent(message=None)])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.task == "a\n\nb"
    assert (ep.steps[0].action.duration_s, ep.steps[0].reasoning) == (2.0, "why")
    assert json.loads(ep.steps[0].action.arguments) == {"keystrokes": "q", "duration": 2}
    assert ep.steps[1].action.text == '{"odd":1}' and ep.steps[2].action.text == ""
    assert json.loads(ep.steps[2].action.raw) == {"message": ""}


def test_models_agent_and_header_fields(tmp_path):
    doc = _doc([_user("go"), _agent(message="a", model_name="m1"), _agent(message="b", model_name="m1"),
                _agent(message="c", model_name=5)], notes="n", final_metrics={"t": 1})
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.agent == "m1" and "models" not in ep.env  # the one model all steps name
    assert ep.env["notes"] == "n" and ep.env["final_metrics"] == {"t": 1}
    assert ep.env["agent"] == {"name": "fx", "version": "1"} and ep.env["session_id"] == "s-1"
    doc["steps"][3]["model_name"] = "m2"
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.agent == "fx" and ep.env["models"] == {"m1": [0, 1], "m2": [2]}
    doc["agent"] = {"name": 3, "model_name": "hm"}
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.agent == "hm" and ep.env["models"] == {"m1": [0, 1], "m2": [2]}
    doc["agent"] = "not an object"
    for turn in doc["steps"]:
        turn.pop("model_name", None)
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.agent is None and "agent" not in ep.env and "models" not in ep.env


def test_unknown_fields_are_kept_raw_with_a_warning_each(tmp_path):
    doc = _doc([_user("go", mood="x"), _agent(message="ok", zeta=1, alpha=2)], future={"a": 1})
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.env["atif_unknown_fields"] == {"steps[0]": {"mood": "x"}, "steps[1]": {"zeta": 1, "alpha": 2},
                                             "root": {"future": {"a": 1}}}
    assert [(w["rule"], w["reason"]) for w in ep.env["ingest_warnings"]] == [
        ("atif.unknown_field", "t.json: steps[0]: mood is not an ATIF field; kept raw in env.atif_unknown_fields"),
        ("atif.unknown_field", "t.json: steps[1]: alpha, zeta is not an ATIF field; kept raw in "
                               "env.atif_unknown_fields"),
        ("atif.unknown_field", "t.json: root: future is not an ATIF field; kept raw in env.atif_unknown_fields")]


def test_parallel_calls_inside_a_run_and_times_of_a_new_run(tmp_path):
    doc = _doc([_user("go"),
                _agent([_call("a")], ts="2026-01-01T10:00:05Z"),
                _agent([_call("b"), _call("c")], ts="2026-01-01T10:00:04Z"),  # back, not before the run's start
                _agent([_call("d")], ts="2026-01-01T10:00:05Z"),  # equal to the run's latest: kept
                _agent(message="pause", ts="2026-01-01T10:00:06Z"),
                _agent([_call("e")], ts="2026-01-01T10:00:09Z"),
                _agent([_call("f")], ts="2026-01-01T10:00:06Z"),  # back to the step before the run: parallel
                _agent([_call("g")], ts="2026-01-01T10:00:05Z"),  # before the run: a clock that went back, kept
                _user("u"),
                _agent([_call("h")], ts="2026-01-01T10:00:01Z")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    stamps = [s.timestamp.isoformat()[11:19] if s.timestamp else None for s in ep.steps]
    assert stamps == ["10:00:05", None, None, "10:00:05", "10:00:06", "10:00:09", None, "10:00:05", "10:00:01"]
    assert ep.env["parallel_call_times"] == {"1": "2026-01-01T10:00:04Z", "2": "2026-01-01T10:00:04Z",
                                             "6": "2026-01-01T10:00:06Z"}


def test_the_first_run_of_calls_without_an_earlier_step(tmp_path):
    doc = _doc([_user("go"), _agent([_call("a")], ts="2026-01-01T10:00:05Z"),
                _agent([_call("b")], ts="2026-01-01T10:00:02Z"), _agent([_call("c")]),
                _agent([_call("d")], ts="2026-01-01T10:00:01Z")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert [s.timestamp.isoformat()[11:19] if s.timestamp else None for s in ep.steps] == [
        "10:00:05", None, None, None]
    assert ep.env["parallel_call_times"] == {"1": "2026-01-01T10:00:02Z", "3": "2026-01-01T10:00:01Z"}


# sidechains -----------------------------------------------------------------------------------------------------------
def test_sidechains_by_agent_id_and_an_empty_one_is_a_row(tmp_path):
    side = lambda agent_id: {"is_sidechain": True, "agent_id": agent_id}  # noqa: E731
    doc = _doc([_user("main"),
                _user("p1", extra=side(7)), _agent([_call("s")], [("s", "r")], extra=side(7), model_name="h1",
                                                    ts="2026-01-01T10:00:05Z"),
                _agent([_call("t")], extra=side(7), model_name="h2", ts="2026-01-01T10:00:04Z"),
                _user("lonely", extra=side("z")),
                _agent(message="main answer", extra={"is_sidechain": False})],
               agent={"name": "fx", "model_name": "hm"})
    records = _read(_write(tmp_path, doc))
    (main, s7), rows = _split(records)
    assert [(r.rule, r.location, r.reason) for r in rows] == [
        ("empty_episode", "t.json: sidechain:z", "t.json: sidechain:z has no agent steps")]
    assert main.env["sidechains"] == {"turns": 4, "episodes": ["sidechain:7", "sidechain:z"]}
    assert (s7.key, s7.task, s7.agent) == ("sidechain:7", "p1", "hm")
    assert s7.env["models"] == {"h1": [0], "h2": [1]} and s7.env["sidechain"] == {"of": "", "agent_id": "7",
                                                                                   "turns": 3}
    assert s7.env["parallel_call_times"] == {"1": "2026-01-01T10:00:04Z"} and s7.steps[1].timestamp is None
    assert s7.final_observation is None and s7.steps[1].observation.text == "r"
    assert (s7.outcome, s7.reward, s7.terminated, s7.platform, s7.domain) == ("unknown", None, False, "linux",
                                                                              "terminal")


# our export's exact records -------------------------------------------------------------------------------------------
def _ours(**fields):
    return {"extra": {"trajforge": fields}}


def test_our_exports_records_win_over_the_mapping(tmp_path):
    root = {"task": "T", "agent": "A", "outcome": "failure", "reward": 0.5, "terminated": True, "domain": "web",
            "platform": "win", "env": {"k": "v"}, "other": 1}
    doc = _doc([_user("shown task", **_ours(observation={"kind": "text", "text": "seen"})),
                _user("no obs", **_ours(observation=None)),
                {**_agent([_call("c", command="ls")], [("c", "raw out")], ts="2026-01-01T10:00:05Z"),
                 **_ours(action={"kind": "click", "x": 1, "y": 2.5}, action_inferred=True,
                         observation={"kind": "screen", "width": 3, "is_error": False},
                         branches=[{"origin": "sim", "action": {"kind": "type", "text": "hi"},
                                    "next_observation": {"kind": "text", "text": "after"}, "strategy": "s",
                                    "labeler": 4},
                                   {"origin": "sim", "action": {"kind": "type"}},
                                   {"origin": 1, "action": {"kind": "x"}, "next_observation": {}}])},
                {**_agent([_call("d")], [("d", "o")], ts="2026-01-01T10:00:01Z"),
                 **_ours(observation=None, branches="nope")},
                {**_agent([_call("e"), _call("f")], ts="2026-01-01T10:00:00Z"),
                 **_ours(action={"kind": "ignored"})},
                {**_agent(message="m", extra={"is_sidechain": True, "trajforge": {}})}],
               **_ours(**root))
    records = _read(_write(tmp_path, doc))
    (ep,), rows = _split(records)
    assert (ep.task, ep.agent, ep.outcome, ep.reward, ep.terminated, ep.domain, ep.platform) == (
        "T", "A", "failure", 0.5, True, "web", "win")
    assert ep.env == {"k": "v"}
    assert len(ep.steps) == 5  # the sidechain flag is not read in our export: one line
    click = ep.steps[0]
    assert (click.action.kind, click.action.x, click.action.y, click.action.code) == ("click", 1, 2.5, None)
    assert click.action_inferred and not ep.steps[1].action_inferred
    assert click.observation.text == "seen" and click.observation.kind == "text"
    assert (ep.steps[1].observation.kind, ep.steps[1].observation.width, ep.steps[1].observation.is_error) == (
        "screen", 3, False)
    # exact times: no parallel-call repair in our export
    assert [s.timestamp.isoformat()[11:19] for s in ep.steps[:4]] == ["10:00:05", "10:00:01", "10:00:00", "10:00:00"]
    assert ep.steps[2].observation.kind == "none" and ep.steps[2].observation.text is None  # restored as none
    assert [s.action.kind for s in ep.steps[2:]] == ["command", "command", "message"]  # two calls: not restored
    (branch,) = ep.branches
    assert (branch.step, branch.origin, branch.action.kind, branch.action.text, branch.next_observation.text) == (
        0, "sim", "type", "hi", "after")
    assert (branch.strategy, branch.labeler, branch.request_key) == ("s", None, None)
    assert [(r.rule, r.location) for r in rows] == [
        ("bad_record", "steps[2].extra.trajforge.branches[1]"), ("bad_record", "steps[2].extra.trajforge.branches[2]"),
        ("bad_record", "steps[3].extra.trajforge.branches")]
    assert rows[0].reason == ("t.json: steps[2] branch 1: needs an object with 'origin', an 'action' object with a "
                              "'kind' and a 'next_observation' object")
    assert json.loads(rows[0].snippet) == {"origin": "sim", "action": {"kind": "type"}}
    assert rows[2].reason == "t.json: steps[3].extra.trajforge.branches is not an array; no branch is read from it"
    assert rows[2].snippet == '"nope"'


def test_our_export_without_a_task_or_terminated_flag_falls_back(tmp_path):
    doc = _doc([_user("the task"), _agent([_call("f", "finish")])], **_ours(outcome="", domain=""))
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert (ep.task, ep.agent, ep.outcome, ep.reward, ep.terminated, ep.domain) == (
        "the task", "fx", "unknown", None, True, "terminal")
    assert ep.env["session_id"] == "s-1"


@pytest.mark.parametrize("root, reason, location", [
    ({"reward": "1"}, "t.json: extra.trajforge.reward has a str, expected int/float", "extra.trajforge.reward"),
    ({"terminated": 1}, "t.json: extra.trajforge.terminated has a int, expected bool", "extra.trajforge.terminated"),
    ({"reward": True}, "t.json: extra.trajforge.reward has a bool, expected int/float", "extra.trajforge.reward"),
])
def test_a_malformed_root_record_of_our_export_fails_the_file_naming_the_field(tmp_path, root, reason, location):
    with pytest.raises(SourceError) as e:
        _read(_write(tmp_path, _doc([_user("t")], **_ours(**root))))
    assert (e.value.rule, e.value.reason, e.value.location) == ("bad_record", reason, location)


@pytest.mark.parametrize("mine, location, what", [
    ({"action": {"kind": "type", "keys": ["a", 1]}}, "steps[1].extra.trajforge.action.keys",
     "has a list, expected list"),
    ({"action": {"text": "x"}}, "steps[1].extra.trajforge.action.kind", "is missing"),
    ({"action": {"kind": "type"}, "observation": "x"}, "steps[1].extra.trajforge.observation", "is not an object"),
    ({"observation": {"exit_code": True}}, "steps[1].extra.trajforge.observation.exit_code",
     "has a bool, expected int"),
])
def test_a_malformed_restored_step_is_a_row_and_left_out(tmp_path, mine, location, what):
    doc = _doc([_user("t"), {**_agent([_call("c", command="ls")]), **_ours(**mine)}, _agent(message="next")],
               **_ours(task="t"))
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    (row,) = rows
    assert (row.rule, row.location, row.reason) == ("bad_record", location,
                                                    f"t.json: {location} {what}; the turn is left out")
    assert json.loads(row.snippet) == doc["steps"][1]
    assert [s.action.text for s in ep.steps] == ["next"]


def test_a_restored_user_observation_that_is_malformed_leaves_the_turn_out(tmp_path):
    doc = _doc([_user("t", **_ours(observation={"text": 5})), _agent(message="m")], **_ours(task="t"))
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert [(r.location, r.reason) for r in rows] == [
        ("steps[0].extra.trajforge.observation.text",
         "t.json: steps[0].extra.trajforge.observation.text has a int, expected str; the turn is left out")]
    assert ep.steps[0].observation.text is None


# documents ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("doc, reason, location", [
    ({"steps": []}, "t.json: no ATIF schema_version", "t.json"),
    ({"schema_version": "v1", "steps": []}, "t.json: no ATIF schema_version", "t.json"),
    ([1], "t.json: no ATIF schema_version", "t.json"),
    ({"schema_version": "ATIF-v1.2", "steps": {}}, "t.json: 'steps' must be an array", "t.json: steps"),
])
def test_a_document_that_is_no_atif_fails_naming_it(tmp_path, doc, reason, location):
    with pytest.raises(SourceError) as e:
        _read(_write(tmp_path, doc))
    assert (e.value.rule, e.value.reason, e.value.location) == ("bad_record", reason, location)


def test_a_bad_turn_is_a_row_with_its_snippet(tmp_path):
    doc = _doc([_user("t"), {"source": "tool", "message": "x" * 3000}, _agent(message="m")])
    (ep,), (row,) = _split(_read(_write(tmp_path, doc)))
    assert (row.rule, row.location) == ("bad_record", "steps[1].source")
    assert row.reason == "t.json: steps[1].source is not system, user or agent; the turn is left out"
    assert row.snippet == json.dumps(doc["steps"][1], separators=(",", ":"))[:2000]


@pytest.mark.parametrize("turn, location, what", [
    ({"source": "agent", "tool_calls": ["x"]}, "steps[1].tool_calls[0]", "is not an object"),
    ({"source": "agent", "tool_calls": [_call("c")], "observation": "x"}, "steps[1].observation", "is not an object"),
])
def test_a_malformed_call_or_observation_names_its_field(tmp_path, turn, location, what):
    (ep,), (row,) = _split(_read(_write(tmp_path, _doc([_user("t"), turn, _agent(message="m")]))))
    assert (row.location, row.reason) == (location, f"t.json: {location} {what}; the turn is left out")
    assert len(ep.steps) == 1


def test_an_observation_without_results_is_none(tmp_path):
    doc = _doc([_user("t"), {**_agent([_call("c")]), "observation": {"results": None}}, _agent(message="m")])
    ((ep,), rows) = _split(_read(_write(tmp_path, doc)))
    assert rows == [] and ep.steps[1].observation.text is None and ep.steps[1].observation.kind == "none"


def test_embedded_subagents_nested_and_malformed(tmp_path):
    inner = _doc([_user("inner task"), _agent(message="deep")], trajectory_id="in-1")
    sub = _doc([_user("sub task"), _agent(message="ok")], trajectory_id=5, subagent_trajectories=[inner])
    anon = _doc([_user("anon"), _agent(message="a")])
    doc = _doc([_user("t"), _agent([_call("c", "delegate")], [("c", "r")])],
               subagent_trajectories=[sub, "junk", {"schema_version": "x"}, anon])
    doc["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"] = [
        {"trajectory_id": 5, "session_id": "s9", "extra": None}, {"trajectory_id": "none"}, "bad"]
    records = _read(_write(tmp_path, doc), "in/t.json")
    eps, rows = _split(records)
    assert [e.key for e in eps] == ["", "subagent:5", "subagent:5:subagent:in-1", "subagent:3"]
    main = eps[0]
    assert main.env["subagents"] == [
        {"step": 0, "trajectory_id": 5, "session_id": "s9",
         "episode_id": episode_id("atif", "in/t.json", "subagent:5")},
        {"step": 0, "trajectory_id": "none"}]
    assert eps[2].env["parent"] == {"episode_id": episode_id("atif", "in/t.json", "subagent:5"),
                                    "key": "subagent:5", "session_id": "s-1", "relation": "subagent"}
    assert eps[3].task == "anon"
    assert [(r.rule, r.location, r.reason) for r in rows] == [
        ("bad_record", "t.json subagent_trajectories[1]", "t.json subagent_trajectories[1] is not an object; left out"),
        ("bad_record", "t.json subagent_trajectories[2]", "t.json subagent_trajectories[2]: no ATIF schema_version")]


def test_embedded_subagents_deeper_than_the_bound_are_not_read(tmp_path):
    doc = _doc([_user("d9"), _agent(message="x")], trajectory_id="d9")
    for depth in range(8, -1, -1):
        doc = _doc([_user(f"d{depth}"), _agent(message="x")], trajectory_id=f"d{depth}", subagent_trajectories=[doc])
    eps, _ = _split(_read(_write(tmp_path, doc)))
    assert [e.task for e in eps] == [f"d{d}" for d in range(9)]  # d9 lies 9 levels down: left out


def test_units_find_trial_folders_above_their_nested_files():
    heads = {"/j/t/result.json": b'{"trial_name": "t", "task_name": "x"}',
             "/j/t/agent/sub/deep.json": b'{"schema_version": "ATIF-v1.2"}',
             "t2/result.json": b'{"trial_name": "t", "task_name": "x"}',
             "t3/a.json": b'{"schema_version": "ATIF-v1.2"}',
             "/k/result.json": b'{"trial_name": "t"}', "/k/x.json": b'{"schema_version": "ATIF-v1.2"}',
             "/k/y.txt": b'{"schema_version": "ATIF-v1.2"}', "/k/z.json": b'{"schema_version": "v1"}'}
    assert atif.units(sorted(heads), heads.get) == ["/j/t", "t2", "/k/x.json", "t3/a.json"]


# what each mapping says exactly: names, reasons, fallbacks ------------------------------------------------------------
def _hms(ep):
    return [s.timestamp.isoformat()[11:19] if s.timestamp else None for s in ep.steps]


def test_a_new_run_after_a_user_turn_starts_from_the_latest_time(tmp_path):
    doc = _doc([_user("go"), _agent([_call("a")], ts="2026-01-01T10:00:05Z"),
                _agent([_call("b")], ts="2026-01-01T10:00:09Z"), _user("again"),
                _agent([_call("c")], ts="2026-01-01T10:00:07Z")])  # before the last step, after no run start
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert _hms(ep) == ["10:00:05", "10:00:09", "10:00:07"] and "parallel_call_times" not in ep.env


def test_a_time_before_the_run_keeps_the_runs_latest(tmp_path):
    doc = _doc([_user("go"), _agent(message="m", ts="2026-01-01T10:00:05Z"),
                _agent([_call("a")], ts="2026-01-01T10:00:07Z"),
                _agent([_call("b")], ts="2026-01-01T10:00:03Z"),  # before the run: a clock gone back, kept
                _agent([_call("c")], ts="2026-01-01T10:00:06Z")])  # inside the run's span: parallel
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert _hms(ep) == ["10:00:05", "10:00:07", "10:00:03", None]


def test_the_latest_time_is_the_largest_seen(tmp_path):
    doc = _doc([_user("go"), _agent(message="m", ts="2026-01-01T10:00:10Z"),
                _agent(message="n", ts="2026-01-01T10:00:05Z"),
                _agent([_call("a")], ts="2026-01-01T10:00:07Z"), _agent([_call("b")], ts="2026-01-01T10:00:06Z")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert _hms(ep) == ["10:00:10", "10:00:05", "10:00:07", "10:00:06"]  # both before the run's start: kept


def test_system_turns_without_an_id_links_and_an_empty_prompt(tmp_path):
    link = {"results": [{"content": "x", "subagent_trajectory_ref": [{"trajectory_path": "a.json"}]}, "junk"]}
    doc = _doc([{"source": "system", "message": ""}, _user("go"),
                _agent([_call("c", "delegate")], [("c", "r")]),
                {"source": "system", "message": "s1", "observation": link},
                {"source": "system", "message": "s2", "observation": {"results": [
                    {"subagent_trajectory_ref": [{"trajectory_path": "b.json", "session_id": "x"}]}]}},
                _agent(message="m")])
    doc["steps"][3].pop("step_id")
    doc["steps"][4]["step_id"] = 77
    ((ep,), rows) = _split(_read(_write(tmp_path, doc)))
    assert rows == [] and ep.env["system_prompt"] == ""
    assert [(e["step_id"], e["message"]) for e in ep.env["system_events"]] == [(4, "s1"), (77, "s2")]
    assert ep.env["subagents"] == [{"step": 1, "trajectory_path": "a.json"},
                                   {"step": 1, "trajectory_path": "b.json", "session_id": "x"}]
    assert ep.steps[1].observation.kind == "none"  # the links replaced the context: the result is gone


def test_an_empty_first_user_message_is_the_task_as_written(tmp_path):
    doc = _doc([{"source": "user", "message": None}, _user("later"), _agent(message="m")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.task == "" and ep.steps[0].observation.text == "later"


def test_copied_turns_keep_their_own_step_ids_and_a_handoff_is_text(tmp_path):
    doc = _doc([_user("t", is_copied_context=True), _user("handoff", is_copied_context=True), _agent(message="m")])
    doc["steps"][0]["step_id"], doc["steps"][1]["step_id"] = 41, 42
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.env["copied_context"] == {"turns": 2, "step_ids": [41, 42]}
    assert (ep.steps[0].observation.kind, ep.steps[0].observation.text) == ("text", "t\n\nhandoff")
    doc["steps"].pop(0)
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert (ep.steps[0].observation.kind, ep.steps[0].observation.text) == ("text", "handoff")


def test_merged_observations_without_errors_are_no_error(tmp_path):
    doc = _doc([_user("go"), _agent([_call("a")], [("a", "out")]), _user("note"), _agent(message="m")])
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert (ep.steps[1].observation.text, ep.steps[1].observation.is_error) == ("out\n\nnote", None)


@pytest.mark.parametrize("message, text", [
    (["a", "b"], '["a","b"]'), ([{"text": "no type"}], '[{"text":"no type"}]'), (["type"], '["type"]'),
    ({}, "{}"), ([{"type": "image", "text": "alt"}, {"type": "text", "text": "t"}], "t"),
])
def test_a_message_that_is_no_list_of_parts_is_kept_as_json(tmp_path, message, text):
    ((ep,), _) = _split(_read(_write(tmp_path, _doc([_user("go"), _agent(message=message)]))))
    assert ep.steps[0].action.text == text


def test_calls_with_arguments_that_are_no_object(tmp_path):
    doc = _doc([_user("go"), {"source": "agent", "message": "", "tool_calls": [
        {"tool_call_id": "s", "function_name": "search", "arguments": "free text"},
        {"tool_call_id": "n", "function_name": "noop"}]}])
    ((ep,), rows) = _split(_read(_write(tmp_path, doc)))
    assert rows == [] and [s.action.tool_name for s in ep.steps] == ["search", "noop"]
    assert json.loads(ep.steps[1].action.raw) == {"tool_call_id": "n", "function_name": "noop"}


@pytest.mark.parametrize("turn, location, what", [
    ({"source": "agent", "tool_calls": [{"tool_call_id": "c"}]}, "steps[1].tool_calls[0].function_name",
     "is missing or not a string"),
    ({"source": "agent", "tool_calls": [_call("c")], "observation": {"results": "x"}}, "steps[1].observation.results",
     "is not an array"),
    ({"source": "agent", "tool_calls": [_call("c")], "observation": {"results": [1]}},
     "steps[1].observation.results[0]", "is not an object"),
])
def test_each_malformed_field_says_what_is_wrong(tmp_path, turn, location, what):
    (_, (row,)) = _split(_read(_write(tmp_path, _doc([_user("t"), turn, _agent(message="m")]))))
    assert (row.location, row.reason) == (location, f"t.json: {location} {what}; the turn is left out")


def test_long_bad_records_keep_2000_characters(tmp_path):
    long = "x" * 3000
    doc = _doc([_user("t"), {"source": "agent", "message": long, "tool_calls": "no"},
                {**_agent([_call("c")]), **{"extra": {"trajforge": {"branches": long}}}},
                {**_agent([_call("d")]), **{"extra": {"trajforge": {"branches": [{"origin": long}]}}}}],
               subagent_trajectories=[long, "junk"])
    rows = [r for r in _read(_write(tmp_path, doc)) if isinstance(r, Rejected)]
    assert [len(r.snippet) for r in rows] == [2000, 2000, 2000, 2000, 6]
    assert rows[-1].snippet == '"junk"' and rows[1].snippet == json.dumps(long)[:2000]


def test_a_restored_record_with_a_null_field_keeps_the_fields_after_it(tmp_path):
    doc = _doc([_user("t"), {**_agent([_call("c")]), **_ours(action={"kind": "type", "text": None, "code": "ls",
                                                                     "raw": "r"})}], **_ours(task="t"))
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert (ep.steps[0].action.kind, ep.steps[0].action.text, ep.steps[0].action.code, ep.steps[0].action.raw) == (
        "type", None, "ls", "r")


def test_a_branch_keeps_its_labeler_and_request_key(tmp_path):
    branch = {"origin": "sim", "action": {"kind": "type"}, "next_observation": {"kind": "text"}, "labeler": "L",
              "request_key": "K", "strategy": 5}
    doc = _doc([_user("t"), {**_agent([_call("c")]), **_ours(branches=[branch])}], **_ours(task="t"))
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert [(b.labeler, b.request_key, b.strategy) for b in ep.branches] == [("L", "K", None)]


def test_an_export_root_with_only_fields_we_do_not_know_is_still_ours(tmp_path):
    doc = _doc([_user("t"), _agent([_call("a")], ts="2026-01-01T10:00:05Z"),
                {**_agent([_call("b")], ts="2026-01-01T10:00:04Z"), "extra": {"is_sidechain": True}}],
               **_ours(future=1))
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert _hms(ep) == ["10:00:05", "10:00:04"] and "parallel_call_times" not in ep.env


def test_header_fields_that_are_no_strings_name_no_agent(tmp_path):
    doc = _doc([_user("t"), _agent(message="m")], agent={"name": 3, "model_name": 5})
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.agent is None
    doc["agent"] = {"name": "fx", "model_name": 5}
    ((ep,), _) = _split(_read(_write(tmp_path, doc)))
    assert ep.agent == "fx"


def test_sidechains_empty_first_a_bad_turn_and_a_final_observation(tmp_path):
    side = lambda agent_id: {"is_sidechain": True, "agent_id": agent_id}  # noqa: E731
    doc = _doc([_user("main"), _user("lonely", extra=side("a")),
                _user("p", extra=side("b")), _agent([_call("s")], [("s", "last result")], extra=side("b")),
                {"source": "agent", "tool_calls": "bad", "extra": side("b")},
                _agent(message="main answer")])
    eps, rows = _split(_read(_write(tmp_path, doc)))
    assert [e.key for e in eps] == ["", "sidechain:b"]
    assert eps[1].final_observation.text == "last result" and eps[1].final_observation.kind == "terminal"
    assert [(r.rule, r.location) for r in rows] == [("empty_episode", "t.json: sidechain:a"),
                                                    ("bad_record", "steps[4].tool_calls")]
    assert rows[1].reason == "t.json (sidechain:b): steps[4].tool_calls is a str, not an array; the turn is left out"


def test_an_embedded_subagent_that_fails_is_a_row_at_its_location(tmp_path):
    doc = _doc([_user("t"), _agent(message="m")],
               subagent_trajectories=[{"schema_version": "ATIF-v1.7", "steps": {}}])
    (_, (row,)) = _split(_read(_write(tmp_path, doc)))
    assert (row.rule, row.location, row.reason) == ("bad_record", "t.json subagent_trajectories[0]: steps",
                                                    "t.json subagent_trajectories[0]: 'steps' must be an array")


def test_a_loose_file_that_is_no_json_or_over_the_record_budget_fails_naming_it(tmp_path):
    from ingest.source import Budgets

    path = tmp_path / "t.json"
    path.write_text("{nope")
    with pytest.raises(SourceError) as e:
        _read(path)
    assert (e.value.rule, e.value.location) == ("parse_error", "t.json") and e.value.reason.startswith("t.json: ")
    path.write_text(json.dumps(_doc([_user("x" * 500), _agent(message="m")])))
    with pytest.raises(SourceError) as e:
        list(atif.read(Source(fs=LocalFileSystem(), path=str(path), uri="in/t.json", put_blob=lambda *a: "",
                              budgets=Budgets(record_bytes=100))))
    assert e.value.rule == "budget_exceeded" and e.value.reason.startswith("t.json: ")


def test_trial_files_in_order_broken_ones_and_the_budget(tmp_path):
    from ingest.source import Budgets

    trial = _trial(tmp_path)
    (trial / "agent" / "a_notes.json").write_text('{"not": "atif"}')  # before the others: skipped, not the end
    _write(trial / "agent", _doc([_user("side task"), _agent(message="ok")]), "b.json")
    (trial / "agent" / "c.json").write_text('{"schema_version": "ATIF-v1.2", broken')
    pad = 4097 - len('{"pad": "", "schema_version": "ATIF-v')
    late = '{"pad": "' + "p" * pad + '", "schema_version": "ATIF-v1.2", "steps": []}'
    assert late.index('"ATIF-v') + len('"ATIF-v') == 4097
    (trial / "agent" / "d.json").write_text(late)  # its marker ends past the first 4096 bytes: no ATIF file
    eps, rows = _split(_read(trial))
    assert [e.key for e in eps] == ["", "sidechain", "agent/b.json"]
    assert [(r.rule, r.location) for r in rows] == [("parse_error", "agent/c.json")]
    assert rows[0].reason.startswith("agent/c.json: invalid JSON")
    source = Source(fs=LocalFileSystem(), path=str(trial), uri="in/t", put_blob=lambda *a: "",
                    budgets=Budgets(record_bytes=2000))
    rows = [r for r in atif.read(source) if isinstance(r, Rejected)]
    assert [(r.rule, r.location) for r in rows][:1] == [("budget_exceeded", "agent/trajectory.json")]


def test_embedded_subagents_of_a_trial_name_the_trials_uri(tmp_path):
    trial = _trial(tmp_path, trajectory=False)
    sub = _doc([_user("sub"), _agent(message="s")], trajectory_id="k")
    _write(trial / "agent", _doc([_user("go"), _agent([_call("c", "delegate")], [("c", "r")])],
                                 subagent_trajectories=[sub]), "trajectory.json")
    doc = json.loads((trial / "agent" / "trajectory.json").read_text())
    doc["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"] = [{"trajectory_id": "k"}]
    (trial / "agent" / "trajectory.json").write_text(json.dumps(doc))
    (main, child), _ = _split(_read(trial, "in/t__1"))
    assert main.env["subagents"][0]["episode_id"] == episode_id("atif", "in/t__1", "subagent:k")
    assert child.env["parent"]["episode_id"] == episode_id("atif", "in/t__1", "")


def test_a_trial_step_that_is_no_object_is_a_row(tmp_path):
    trial = _trial(tmp_path, trajectory=False)
    _write(trial / "agent", _doc([_user("go"), "junk", _agent(message="m")]), "trajectory.json")
    (ep,), rows = _split(_read(trial))
    assert [(r.rule, r.location) for r in rows] == [("bad_record", "steps[1].source")]
    assert ep.outcome == "success"


def test_trial_result_fields_of_odd_shapes(tmp_path):
    (main, _), _ = _split(_read(_trial(tmp_path, {"exception_info": "not an object"}, name="a")))
    assert main.terminated and "exception" not in main.env["harbor"]
    (main, _), _ = _split(_read(_trial(tmp_path, {"exception_info": {"exception_type": "E"}}, name="b")))
    assert main.env["harbor"]["exception"] == {"type": "E", "message": ""} and not main.terminated
    (main, _), _ = _split(_read(_trial(tmp_path, {"verifier_result": {"rewards": {"reward": 0.5, "other": 1}}},
                                       name="c")))
    assert (main.reward, main.outcome) == (0.5, "failure") and main.env["harbor"]["rewards"] == {"reward": 0.5,
                                                                                                 "other": 1}


def test_a_reward_file_that_is_no_utf8_or_long_is_a_row_with_its_start(tmp_path):
    trial = _trial(tmp_path, {"verifier_result": None}, name="a")
    (trial / "verifier" / "reward.txt").write_bytes(b"\xff\xfe1")
    (main, _), (row,) = _split(_read(trial))
    assert (row.rule, row.location, row.reason) == ("parse_error", "verifier/reward.txt",
                                                    "verifier/reward.txt: reward '\ufffd\ufffd1' is not a number")
    trial = _trial(tmp_path, {"verifier_result": None}, reward_txt="x" * 300, name="b")
    (main, _), (row,) = _split(_read(trial))
    assert row.reason == f"verifier/reward.txt: reward {'x' * 50!r} is not a number" and row.snippet == "x" * 200


def test_rows_of_a_broken_session_in_a_trial_name_the_session_file(tmp_path):
    trial = _trial(tmp_path, trajectory=False, sessions=True)
    (session,) = (trial / "agent" / "sessions" / "projects" / "-app").glob("*.jsonl")
    session.write_text(session.read_text() + "{broken\n")
    _, rows = _split(_read(trial))
    rel = f"agent/sessions/projects/-app/{session.name}"
    assert [(r.rule, r.location) for r in rows] == [("parse_error", rel)]


def test_a_turn_is_read_by_the_transcript_core_rules(tmp_path):
    """Reasoning, merging and empty turns follow `ingest.transcript`: a blank `reasoning_content` is no
    reasoning, a search result followed by a user message keeps its parsed results, an empty agent turn is
    still a `message` step, and a result naming no call of its turn goes to the turn's last call."""
    found = "[1] https://a.example\nTitle: A\nSnippet: about a"
    doc = _doc([
        {"source": "user", "message": "find a"},
        {"source": "agent", "message": "plan", "reasoning_content": "\n ",
         "tool_calls": [_call("s1", "web_search", query="a"), _call("s2", "web_search", query="b")],
         "observation": {"results": [{"source_call_id": "elsewhere", "content": found}]}},
        {"source": "user", "message": "and b?"},
        {"source": "agent", "message": ""},
    ])
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert rows == [] and [s.action.kind for s in ep.steps] == ["tool_call", "tool_call", "message"]
    assert ep.steps[0].reasoning == "plan" and ep.steps[1].observation.kind == "none"
    last = ep.steps[2].observation
    assert (last.kind, last.text) == ("text", f"{found}\n\nand b?")
    assert json.loads(last.ui_tree)["results"][0]["url"] == "https://a.example"
    assert ep.steps[2].action.text == "" and ep.final_observation is None


def test_links_results_and_inferred_marks_stay_with_the_step_they_belong_to(tmp_path):
    """A subagent link names the step whose call it answers (the second call of a turn: that step); a result on
    a message turn comes after that message, not after an older call still waiting; a copied user message after
    an action is what the next action saw; our export's inferred mark covers its own turn's steps only."""
    doc = _doc([_user("t"), _agent([_call("a")], [("a", "one")]), _agent([_call("b"), _call("c")],
                                                                         [("b", "two"), ("c", "three")]),
                _agent([_call("d")]), _user("handoff", is_copied_context=True),
                _agent(message="done", observation={"results": [{"content": "late"}]})])
    doc["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"] = [{"trajectory_id": "x"}]
    doc["steps"][2]["observation"]["results"][1]["subagent_trajectory_ref"] = [{"trajectory_id": "y"}]
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert rows == [] and [s.action.kind for s in ep.steps] == ["command"] * 4 + ["message"]
    assert ep.env["subagents"] == [{"step": 0, "trajectory_id": "x"}, {"step": 2, "trajectory_id": "y"}]
    assert [s.observation.text for s in ep.steps] == ["t", "one", "two", "three", "handoff"]
    assert ep.final_observation.text == "late"
    ours = _doc([_user("t"), _agent([_call("a")], [("a", "one")]), {**_agent([_call("b")]), **_ours(
        action_inferred=True)}, {**_agent(message="bye"), **_ours(action={"kind": "done", "text": "bye"})}],
        **_ours(task="t"))
    (ep,), rows = _split(_read(_write(tmp_path, ours, "ours.json")))
    assert rows == [] and [s.action_inferred for s in ep.steps] == [False, True, False]
    assert (ep.steps[2].action.kind, ep.steps[2].action.text) == ("done", "bye")  # a message turn's restored action
