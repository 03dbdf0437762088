"""Harbor job trials read by `ingest.atif`: one trial folder (`result.json`, `agent/trajectory.json`,
`verifier/reward.txt`) is one unit.

The bundled trial (samples/atif/harbor-claude-code, see its PROVENANCE.md) is hand-made: a Claude Code session
written by hand in Claude Code's transcript shape, turned into `agent/trajectory.json` by Harbor's own
converter (the version that puts sidechains first and writes parallel calls in result order), with a
`result.json` in Harbor's TrialResult schema. The variants below (no trajectory, rewards from verifier files,
malformed records, interleaved sidechains of ATIF v1.7) are hand-made from the same schemas."""

import copy
import json
import shutil

import pytest

from ingest import atif
from tests.conftest import SAMPLES

TRIAL = SAMPLES / "atif" / "harbor-claude-code" / "fix-calc-add__Vq7mR2p"
TASK = "The tests in /app fail. Find and fix the bug in /app/calc.py so that `pytest -q` passes in /app."
PROMPT = "List every file in /app that imports or calls calc.add, with the line."


def _episodes(query):
    return {r["task"]: r for r in query("SELECT * FROM episodes")}


def _steps(query, episode_id):
    return query(f"SELECT * FROM steps WHERE episode_id = '{episode_id}' ORDER BY step_index")


def test_trial_is_one_unit_with_the_verifier_reward_and_the_main_line_apart_from_the_sidechain(run, query):
    result = run("ingest-swe", [TRIAL.parent])
    assert (result.status, result.episodes, result.steps, result.quarantined) == ("success", 2, 9, 0)
    assert query("SELECT count(*) n FROM quarantine")[0]["n"] == 0  # validate keeps both episodes
    eps = _episodes(query)
    main, side = eps[TASK], eps[PROMPT]
    assert main["source_uri"] == "harbor-claude-code/fix-calc-add__Vq7mR2p" and main["source_format"] == "atif"
    assert (main["outcome"], main["reward"], main["num_steps"]) == ("success", 1.0, 7)
    assert main["agent"] == "claude-haiku-4-5-20251001"  # the header's model, as Harbor wrote it
    env = json.loads(main["env"])
    assert env["harbor"]["trial_name"] == "fix-calc-add__Vq7mR2p" and env["harbor"]["task_name"] == "fix-calc-add"
    assert env["harbor"]["agent_info"]["model_info"]["name"] == "claude-sonnet-4-5-20250929"
    assert env["models"] == {"claude-opus-4-1-20250805": [0, 1, 2], "claude-sonnet-4-5-20250929": [3, 4, 5, 6]}
    assert env["sidechains"] == {"turns": 3, "episodes": ["sidechain"]}

    steps = _steps(query, main["episode_id"])
    # step 0 is the agent's first action after the task, not the subagent's turns Harbor wrote first
    assert steps[0]["observation"]["text"] == TASK and steps[0]["action"]["kind"] == "message"
    assert [s["action"]["tool_name"] for s in steps] == [None, "Read", "Read", "Task", "Edit", "Bash", None]
    # the parallel Reads keep their recorded order (results came back test file first) ...
    reads = [json.loads(s["action"]["arguments"])["file_path"] for s in steps[1:3]]
    assert reads == ["/app/test_calc.py", "/app/calc.py"]
    assert steps[2]["observation"]["text"].startswith("1\u2192from calc import add, mul")
    # ... and the one whose time goes back has no step timestamp; the recorded time is in env
    assert [s["timestamp"] is None for s in steps] == [False, False, True, False, False, False, False]
    assert env["parallel_call_times"] == {"2": "2025-11-19T22:10:03.412Z"}
    assert steps[5]["action"]["kind"] == "command" and steps[5]["action"]["code"] == "cd /app && pytest -q"
    assert steps[6]["observation"]["kind"] == "terminal" and "4 passed" in steps[6]["observation"]["text"]
    assert steps[-1]["is_terminal"]

    assert (side["outcome"], side["reward"], side["agent"], side["num_steps"]) == (
        "unknown", None, "claude-haiku-4-5-20251001", 2)
    side_env = json.loads(side["env"])
    assert side_env["sidechain"] == {"of": "", "agent_id": None, "turns": 3}
    assert side_env["harbor"] == {"trial_name": "fix-calc-add__Vq7mR2p", "task_name": "fix-calc-add", "source": "tasks"}
    side_steps = _steps(query, side["episode_id"])
    assert [s["action"]["tool_name"] for s in side_steps] == ["Grep", None]
    assert side_steps[0]["observation"]["text"] == PROMPT
    assert side_steps[1]["observation"]["text"].startswith("/app/calc.py:1:def add(a, b):")


def _trial_copy(tmp_path, name="t__1", result=None, trajectory=True, reward_txt=None, reward_json=None):
    trial = tmp_path / "in" / name
    (trial / "verifier").mkdir(parents=True)
    doc = json.loads((TRIAL / "result.json").read_text())
    if result:
        doc.update(result)
    (trial / "result.json").write_text(json.dumps(doc, indent=4))
    if trajectory:
        (trial / "agent").mkdir()
        shutil.copy(TRIAL / "agent" / "trajectory.json", trial / "agent" / "trajectory.json")
    if reward_txt is not None:
        (trial / "verifier" / "reward.txt").write_text(reward_txt)
    if reward_json is not None:
        (trial / "verifier" / "reward.json").write_text(json.dumps(reward_json))
    return tmp_path / "in"


def test_a_trial_with_a_result_but_no_trajectory_is_reported_as_such(run, query, tmp_path):
    failed = {"exception_info": {"exception_type": "AgentTimeoutError", "exception_message": "Agent timed out after 900s",
                                 "exception_traceback": "Traceback ...", "occurred_at": "2025-11-19T22:25:00"},
              "verifier_result": None, "trial_name": "fix-calc-add__Nt0k1aZ"}
    result = run("ingest-swe", [_trial_copy(tmp_path, "fix-calc-add__Nt0k1aZ", failed, trajectory=False)],
                 stages=["ingest"])
    assert (result.episodes, result.quarantined) == (0, 1)
    (row,) = query("SELECT rule, location, reason, source_uri FROM quarantine")
    assert (row["rule"], row["location"], row["source_uri"]) == ("missing_trajectory", "agent/trajectory.json",
                                                                   "in/fix-calc-add__Nt0k1aZ")
    assert row["reason"] == ("Harbor trial fix-calc-add__Nt0k1aZ (task fix-calc-add): result.json but no "
                             "agent/trajectory.json: the agent wrote no ATIF trajectory; the trial failed with "
                             "AgentTimeoutError: Agent timed out after 900s")


def test_a_trial_s_other_files_are_read_or_listed_with_why(run, query, tmp_path):
    """What Harbor leaves in a trial folder beside the trajectory and the reward: the verifier's stdout (why the
    tests passed or failed) is kept whole in the main episode's env; each other file is named in `ignored_inputs`
    with what it is, never taken silently by the trial."""
    root = _trial_copy(tmp_path, result={"verifier_result": None}, reward_txt="0")
    trial = root / "t__1"
    stdout = "============ 1 failed, 3 passed in 0.12s ============\nFAILED test_calc.py::test_add - assert 1 == 2\n"
    files = {"trial.log": "Starting trial t__1\n", "config.json": "{}", "lock.json": "{}",
             "artifacts/app/out.txt": "42\n", "agent/recording.cast": "{}\n", "agent/episode-0/prompt.txt": "p",
             "agent/notes.json": '{"not": "atif"}', "verifier/ctrf.json": "{}", "verifier/test-stdout.txt": stdout}
    for rel, text in files.items():
        (trial / rel).parent.mkdir(parents=True, exist_ok=True)
        (trial / rel).write_text(text)
    result = run("ingest-swe", [root], stages=["ingest"])
    assert (result.status, result.episodes) == ("success", 2)
    main = next(r for r in query("SELECT env, outcome FROM episodes") if "verifier_output" in json.loads(r["env"]))
    assert main["outcome"] == "failure"
    assert json.loads(main["env"])["verifier_output"] == {"file": "in/t__1/verifier/test-stdout.txt", "text": stdout}
    why = {r["path"].split("/t__1/", 1)[1]: r["reason"].split(": ", 1)[1]
           for r in query("SELECT path, reason FROM ignored_inputs")}
    assert all(r["reason"].startswith("part of the atif run t__1, which does not read it: ")
               for r in query("SELECT reason FROM ignored_inputs"))
    assert why == {
        "trial.log": "Harbor's log of running the trial (the harness's messages, not the agent's steps)",
        "config.json": "the trial's configuration (the task, agent and environment Harbor was given; its names and "
                       "agent are read from result.json)",
        "lock.json": "a file of the trial that is none of Harbor's trajectory, result or verifier files",
        "artifacts/app/out.txt": "a file Harbor collected from the task's environment after the run, not a step of "
                                 "the agent",
        "agent/recording.cast": "the agent's own log or recording (its steps are read from agent/trajectory.json)",
        "agent/episode-0/prompt.txt": "the agent's own log or recording (its steps are read from "
                                      "agent/trajectory.json)",
        "agent/notes.json": "a JSON file of the agent's that declares no ATIF schema version",
        "verifier/ctrf.json": "verifier output beside the reward and verifier/test-stdout.txt, which are read"}


def test_a_trial_without_a_trajectory_reads_the_claude_code_session_and_lists_nothing_it_reads(run, query, tmp_path):
    root = _trial_copy(tmp_path, trajectory=False, reward_txt="1")
    sessions = TRIAL / "agent" / "sessions"
    shutil.copytree(sessions, root / "t__1" / "agent" / "sessions")
    (root / "t__1" / "verifier" / "test-stdout.txt").write_text("4 passed\n")
    result = run("ingest-swe", [root], stages=["ingest"])
    assert result.status == "success" and result.episodes >= 1
    assert query("SELECT path FROM ignored_inputs") == []
    envs = [json.loads(r["env"]) for r in query("SELECT env FROM episodes")]
    assert [e.get("verifier_output", {}).get("text") for e in envs if "sidechain" not in e] == ["4 passed\n"]
    assert all("verifier_output" not in e for e in envs if "sidechain" in e)  # the trial's output is the main line's


@pytest.mark.parametrize("result, reward_txt, reward_json, expected", [
    # result.json wins; an error in the verifier comes after the agent finished: still terminated
    ({"verifier_result": {"rewards": {"reward": 0}}, "exception_info": {
        "exception_type": "RewardFileNotFoundError", "exception_message": "no reward file",
        "exception_traceback": "", "occurred_at": "2025-11-19T22:25:00"}}, "1", None, ("failure", 0.0, True)),
    ({"verifier_result": None}, "1\n", None, ("success", 1.0, True)),  # reward.txt
    ({"verifier_result": None}, "0.25", None, ("failure", 0.25, True)),  # partial credit is not success
    ({"verifier_result": None}, None, {"reward": 1}, ("success", 1.0, True)),  # reward.json
    ({"verifier_result": None}, None, {"tests": 0.5, "style": 1.0}, ("unknown", None, True)),  # no single reward
    ({"verifier_result": None, "exception_info": {  # the agent was cut off: truncated
        "exception_type": "AgentTimeoutError", "exception_message": "timeout", "exception_traceback": "",
        "occurred_at": "2025-11-19T22:25:00"}}, None, None, ("unknown", None, False)),
])
def test_reward_outcome_and_termination_of_a_trial(run, query, tmp_path, result, reward_txt, reward_json, expected):
    run("ingest-swe", [_trial_copy(tmp_path, result=result, reward_txt=reward_txt, reward_json=reward_json)],
        stages=["ingest"])
    main = _episodes(query)[TASK]
    last = query(f"SELECT is_terminal FROM steps WHERE episode_id = '{main['episode_id']}' AND is_last")[0]
    assert (main["outcome"], main["reward"], last["is_terminal"]) == expected
    env = json.loads(main["env"])
    if reward_json and "reward" not in reward_json:
        assert env["harbor"]["rewards"] == reward_json
    if result.get("exception_info"):
        assert env["harbor"]["exception"]["type"] == result["exception_info"]["exception_type"]
    # the file whose reward decided is named (result.json first, then the verifier's files)
    decided = "result.json" if (result.get("verifier_result") or {}).get("rewards") is not None else \
        "verifier/reward.txt" if reward_txt else "verifier/reward.json" if reward_json and "reward" in reward_json \
        else None
    assert env.get("outcome_file", "").endswith(f"/{decided}") if decided else "outcome_file" not in env


def test_bad_reward_file_is_quarantined_and_the_episode_kept(run, query, tmp_path):
    result = run("ingest-swe", [_trial_copy(tmp_path, result={"verifier_result": None}, reward_txt="passed")],
                 stages=["ingest"])
    assert (result.episodes, result.quarantined) == (2, 1)
    (row,) = query("SELECT rule, location, reason FROM quarantine")
    assert (row["rule"], row["location"]) == ("parse_error", "verifier/reward.txt")
    assert _episodes(query)[TASK]["outcome"] == "unknown"


def _doc(steps, **root):
    return {"schema_version": "ATIF-v1.7", "session_id": "s-1", "agent": {"name": "claude-code", "version": "2.1.0",
                                                                         "model_name": "claude-sonnet-4-5"},
            "steps": [{"step_id": i + 1, **s} if isinstance(s, dict) else s for i, s in enumerate(steps)], **root}


def _read(doc, tmp_path, name="trajectory.json"):
    import fsspec

    from ingest.source import Source
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return list(atif.read(Source(fs=fsspec.filesystem("file"), path=str(path), uri=f"in/{name}",
                                 put_blob=lambda *a: "sha256:0")))


def _call(call_id, name="Bash", **arguments):
    return {"tool_call_id": call_id, "function_name": name, "arguments": arguments or {"command": "true"}}


def _agent(ts, calls=(), results=(), **more):
    turn = {"source": "agent", "timestamp": ts, "message": more.pop("message", ""), **more}
    if calls:
        turn["tool_calls"] = list(calls)
    if results:
        turn["observation"] = {"results": [{"source_call_id": c, "content": t} for c, t in results]}
    return turn


def test_interleaved_sidechains_of_atif_1_7_become_one_episode_per_subagent(tmp_path):
    """Newer Harbor interleaves subagent turns by time and names each subagent (`extra.agent_id`); one model
    response with parallel calls is one turn, so its steps share the turn's timestamp."""
    side = lambda agent_id: {"is_sidechain": True, "agent_id": agent_id}  # noqa: E731
    doc = _doc([
        {"source": "user", "timestamp": "2026-01-01T10:00:00Z", "message": "fix it", "extra": {"is_sidechain": False}},
        _agent("2026-01-01T10:00:05Z", [_call("c1", "Task", prompt="look A"), _call("c2", "Task", prompt="look B")],
               [("c1", "A found"), ("c2", "B found")]),
        {"source": "user", "timestamp": "2026-01-01T10:00:06Z", "message": "look A", "extra": side("a1")},
        {"source": "user", "timestamp": "2026-01-01T10:00:06Z", "message": "look B", "extra": side("b2")},
        _agent("2026-01-01T10:00:07Z", [_call("s1", command="ls a")], [("s1", "a.py")], extra=side("a1"),
               model_name="claude-haiku-4-5"),
        _agent("2026-01-01T10:00:08Z", [_call("s2", command="ls b")], [("s2", "b.py")], extra=side("b2"),
               model_name="claude-haiku-4-5"),
        _agent("2026-01-01T10:00:09Z", message="A found", extra=side("a1"), model_name="claude-haiku-4-5"),
        _agent("2026-01-01T10:00:09Z", message="B found", extra=side("b2"), model_name="claude-haiku-4-5"),
        _agent("2026-01-01T10:00:20Z", message="done", model_name="claude-sonnet-4-5"),
    ])
    main, a, b = _read(doc, tmp_path)
    assert (main.key, a.key, b.key) == ("", "sidechain:a1", "sidechain:b2")
    assert [s.action.tool_name for s in main.steps] == ["Task", "Task", None]
    assert main.steps[0].timestamp == main.steps[1].timestamp and "parallel_call_times" not in main.env
    assert [s.observation.text for s in main.steps] == ["fix it", "A found", "B found"]  # each result after its call
    assert main.env["sidechains"] == {"turns": 6, "episodes": ["sidechain:a1", "sidechain:b2"]}
    assert "models" not in main.env and main.agent == "claude-sonnet-4-5"
    assert (a.task, [s.action.code for s in a.steps], a.agent) == ("look A", ["ls a", None], "claude-haiku-4-5")
    assert a.steps[1].observation.text == "a.py" and a.env["sidechain"]["agent_id"] == "a1"
    assert b.steps[1].observation.text == "b.py"


def test_only_parallel_calls_lose_their_timestamp_a_real_step_back_keeps_it(tmp_path):
    doc = _doc([
        {"source": "user", "message": "go"},
        _agent("2026-01-01T10:00:10Z", message="first I look"),
        _agent("2026-01-01T10:00:12Z", [_call("c2", command="cat b")], [("c2", "B")]),
        _agent("2026-01-01T10:00:11Z", [_call("c1", command="cat a")], [("c1", "A")]),  # parallel: after 10
        _agent("2026-01-01T10:00:13Z", [_call("c3", command="make")], [("c3", "ok")]),
        {"source": "user", "message": "again"},
        _agent("2026-01-01T10:00:05Z", [_call("c4", command="ls")], [("c4", "x")]),  # before the run: clock went back
    ])
    (ep,) = _read(doc, tmp_path)
    stamps = [s.timestamp.isoformat()[11:19] if s.timestamp else None for s in ep.steps]
    assert stamps == ["10:00:10", "10:00:12", None, "10:00:13", "10:00:05"]
    assert ep.env["parallel_call_times"] == {"2": "2026-01-01T10:00:11Z"}
    assert [s.observation.text for s in ep.steps] == ["go", None, "B", "A", "ok\n\nagain"]


def test_malformed_records_are_quarantined_with_file_record_and_field(tmp_path):
    doc = _doc([
        {"source": "user", "message": [{"type": "text", "text": "do"}, {"type": "image", "source": {"path": "a.png"}}]},
        _agent("2026-01-01T10:00:01Z", [_call("c1", command="ls")], [("c1", "a b")]),
        {"source": "robot", "message": "?"},
        {"source": "agent", "message": "", "tool_calls": {"tool_call_id": "c2"}},
        {"source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c3", "arguments": {}}]},
        {"source": "agent", "message": "", "tool_calls": [_call("c4")], "observation": {"results": "x"}},
        {"source": "agent", "message": "", "tool_calls": [_call("c5")], "observation": {"results": [[1]]}},
        {"source": "agent", "message": "", "tool_calls": [_call({"id": 1}, command="pwd")],
         "observation": {"results": [{"source_call_id": ["c6"], "content": [{"type": "text", "text": "/app"}]}]},
         "reasoning_content": {"not": "text"}},
        "not a turn",
    ])
    items = _read(doc, tmp_path)
    rejected = [(r.rule, r.location) for r in items if isinstance(r, atif.Rejected)]
    assert rejected == [("bad_record", "steps[2].source"), ("bad_record", "steps[8].source"),
                        ("bad_record", "steps[3].tool_calls"), ("bad_record", "steps[4].tool_calls[0].function_name"),
                        ("bad_record", "steps[5].observation.results"), ("bad_record", "steps[6].observation.results[0]")]
    reason = next(r.reason for r in items if isinstance(r, atif.Rejected) and r.location == "steps[3].tool_calls")
    assert reason == "trajectory.json: steps[3].tool_calls is a dict, not an array; the turn is left out"
    (ep,) = [e for e in items if isinstance(e, atif.Episode)]
    assert ep.task == "do" and [s.action.code for s in ep.steps] == ["ls", "pwd"]
    assert ep.steps[1].observation.text == "a b" and ep.steps[1].reasoning is None
    assert ep.final_observation.text == "/app"  # a result without a usable call id belongs to the last action


def test_a_malformed_restored_record_of_our_export_is_quarantined(tmp_path):
    doc = _doc([{"source": "user", "message": "t"},
                _agent(None, [_call("c1", command="ls")], [("c1", "x")],
                       extra={"trajforge": {"action": {"kind": "command", "code": 5}}}),
                _agent(None, [_call("c2", command="pwd")], [("c2", "/")])],
               extra={"trajforge": {"task": "t", "domain": "terminal"}})
    items = _read(doc, tmp_path)
    (bad,) = [r for r in items if isinstance(r, atif.Rejected)]
    assert bad.location == "steps[1].extra.trajforge.action.code" and "has a int, expected str" in bad.reason
    (ep,) = [e for e in items if isinstance(e, atif.Episode)]
    assert [s.action.code for s in ep.steps] == ["pwd"]


def test_units_are_trial_folders_and_loose_atif_files(tmp_path):
    trial_result = json.dumps({"id": "x", "task_name": "t", "trial_name": "t__1", "trial_uri": "file:///t"}).encode()
    job_result = json.dumps({"id": "j", "started_at": None, "n_total_trials": 1,
                             "trial_results": [{"trial_name": "t__1", "task_name": "t"}]}).encode()
    atif_head = b'{"schema_version": "ATIF-v1.2", "session_id": "x"}'
    heads = {"/j/result.json": job_result, "/j/t__1/result.json": trial_result, "/j/t__1/agent/trajectory.json": atif_head,
             "/j/t__2/agent/trajectory.json": atif_head, "/j/t__3/result.json": trial_result,
             "/loose/trajectory.json": atif_head}
    assert atif.units(sorted(heads), heads.get) == ["/j/t__1", "/j/t__3", "/j/t__2/agent/trajectory.json",
                                                    "/loose/trajectory.json"]


def test_the_bundled_trial_is_one_atif_unit_and_the_session_behind_its_trajectory_is_listed(tmp_path):
    """The trial's Claude Code session is the raw material of its `agent/trajectory.json` (read): claimed by the
    trial, so no other reader counts the run twice, and listed with why it is not read."""
    from pipelines.infra import definition
    from pipelines.infra.plan import find_units
    units, ignored = find_units([str(TRIAL.parent)], definition.load("ingest-all").formats)
    assert [(u.format, u.uri) for u in units] == [("atif", "harbor-claude-code/fix-calc-add__Vq7mR2p")]
    session = TRIAL / "agent" / "sessions" / "projects" / "-app" / "5c2e8f0a-91d3-4b6e-8a7f-3d1c0b9e2a44.jsonl"
    assert {i.path: i.reason for i in ignored} == {
        str(TRIAL.parent / "PROVENANCE.md"): "no format reads it",
        str(session): "part of the atif run fix-calc-add__Vq7mR2p, which does not read it: a Claude Code session the "
                      "agent left: Harbor made agent/trajectory.json from it, which is read (reading both would "
                      "count the run twice)"}
