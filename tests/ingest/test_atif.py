import json

from ingest import atif
from pipelines.stages.export_atif import export_atif
from pipelines.infra.lake import Lake
from pipelines.infra.runner import open_catalog
from tests.conftest import SAMPLES

STEP_FIELDS = ("step_index, observation, action, final_observation, timestamp, reasoning, is_first, is_last, "
               "is_terminal, action_inferred")


def test_atif_trajectory_tool_calls_become_steps(run, query):
    result = run("ingest-swe", [SAMPLES / "atif" / "hello-world"])
    assert result.status == "success" and result.episodes == 1 and result.steps == 4
    ep = query("SELECT * FROM episodes")[0]
    assert ep["source_format"] == "atif" and ep["domain"] == "terminal" and ep["agent"] == "gpt-5-mini"
    assert ep["task"] == "Create a file called hello.txt with 'Hello, world!' as the content."
    env = json.loads(ep["env"])
    assert env["system_prompt"].startswith("You are an AI assistant tasked with solving command-line tasks")
    assert env["session_id"] == "3f1c2a9e-7b4d-4e0f-9a51-6d2b8c0e4f17" and env["final_metrics"]["total_steps"] == 5
    steps = query("SELECT * FROM steps ORDER BY step_index")
    first = steps[0]["action"]
    assert first["kind"] == "command" and first["tool_name"] == "bash" and first["code"] == "echo 'Hello, world!' > hello.txt"
    assert json.loads(first["raw"])["tool_call_id"] == "call_1"
    assert [s["action"]["kind"] for s in steps] == ["command", "command", "command", "message"]
    assert steps[3]["action"]["text"] == "hello.txt now contains 'Hello, world!'. The task is complete."
    # observation 0 is the user's task; each result follows its own call (source_call_id)
    assert steps[0]["observation"]["text"] == ep["task"]
    assert steps[2]["observation"] == {**steps[2]["observation"], "kind": "terminal", "text": "Hello, world!\n"}
    assert steps[3]["observation"]["text"] == "-rw-r--r-- 1 root root 14 Oct 16 14:30 hello.txt\n"
    assert steps[0]["reasoning"].startswith("A single echo") and steps[1]["reasoning"] is None
    assert steps[0]["timestamp"].isoformat() == "2025-10-16T14:30:04+00:00"
    assert steps[3]["final_observation"] is None


def _roundtrip(run, lake, tmp_path, pipeline, inputs, dataset):
    first = run(pipeline, inputs)
    out = tmp_path / "atif-out"
    summary = export_atif(Lake(lake), None, dataset, str(out))
    assert summary["episodes"] == first.episodes and len(summary["shards"]) == first.episodes
    again = run("ingest-all", [out])
    assert again.episodes == first.episodes and again.quarantined == 0
    with open_catalog(Lake(lake), read_only=True) as cat:
        orig = cat.sql(f"SELECT e.task, e.domain, e.agent, e.env, s.episode_id, {STEP_FIELDS} FROM steps s JOIN episodes e "
                       f"USING (episode_id) WHERE s.dataset = '{dataset}' AND e.dataset = '{dataset}' "
                       "ORDER BY s.episode_id, step_index").to_arrow_table().to_pylist()
        back = cat.sql(f"SELECT e.task, e.domain, e.agent, e.env, e.source_uri, {STEP_FIELDS} FROM steps s JOIN episodes e "
                       "USING (episode_id) WHERE s.dataset = 'all' AND e.dataset = 'all' "
                       "ORDER BY source_uri, step_index").to_arrow_table().to_pylist()
    assert all(r["source_uri"] == f"atif-out/{r2['episode_id']}/trajectory.json" for r, r2 in zip(back, orig))
    for r in back:
        r.pop("source_uri")
    for r in orig:
        r.pop("episode_id")
    assert back == orig
    return summary


def test_export_then_ingest_gives_the_same_steps(run, lake, tmp_path):
    summary = _roundtrip(run, lake, tmp_path, "ingest-swe", [SAMPLES / "swe", SAMPLES / "atif"], "swe")
    # 3 SWE-agent, 3 OpenHands V0, 1 mini-swe-agent, 2 Gemini CLI recordings, an OpenCode export, a Roo Code
    # diagnostics file, a Qwen Code markdown export, the hello-world trajectory, the Harbor trial's main line and
    # its sidechain, and the 7 trajectories of Harbor 0.1.31's goldens
    assert summary["episodes"] == 22


def test_commands_read_back_from_a_recording_round_trip_still_marked_inferred(run, lake, tmp_path, query):
    summary = _roundtrip(run, lake, tmp_path, "ingest-ubuntu", [SAMPLES / "ubuntu" / "asciicast-no-input"], "ubuntu")
    assert summary["episodes"] == 2
    assert query("SELECT count(*) AS n FROM steps WHERE dataset = 'all' AND action_inferred")[0]["n"] == 5


def test_mcp_episodes_round_trip_too(run, lake, tmp_path):
    _roundtrip(run, lake, tmp_path, "ingest-mcp", None, "mcp")


def test_exported_file_is_plain_atif_for_other_readers(run, lake, tmp_path, query):
    run("ingest-swe", [SAMPLES / "swe" / "sweagent-v1"])
    summary = export_atif(lake, None, "swe", str(tmp_path / "out"))
    doc = json.loads((tmp_path / "out" / summary["shards"][0]["path"]).read_text())
    assert doc["schema_version"] == "ATIF-v1.4" and doc["agent"]["model_name"] == "gpt-4o"
    assert doc["session_id"] == query("SELECT episode_id FROM episodes")[0]["episode_id"]
    user, first, *_ = doc["steps"]
    assert user["source"] == "user" and user["message"].startswith("We're currently solving the following issue")
    assert first["step_id"] == 2 and first["source"] == "agent"
    assert first["tool_calls"] == [{"tool_call_id": "call_1", "function_name": "find_file",
                                    "arguments": {"file_name": "missing_colon.py"}}]
    assert first["observation"]["results"][0]["source_call_id"] == "call_1"
    assert first["observation"]["results"][0]["content"].startswith('Found 1 matches for "missing_colon.py"')
    shell = doc["steps"][4]
    assert shell["tool_calls"][0]["function_name"] == "bash"
    assert shell["tool_calls"][0]["arguments"] == {"command": "python3 /SWE-agent__test-repo/tests/missing_colon.py"}
    assert doc["final_metrics"]["total_steps"] == len(doc["steps"]) == 6


def test_cli_export_atif(run, lake, tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    run("ingest-mcp", [SAMPLES / "search"])
    out = tmp_path / "cli-out"
    done = subprocess.run([str(Path(sys.executable).parent / "pipelines"), "export", "atif", "mcp", "--out", str(out),
                           "--lake", lake], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("export atif: 1 trajectory.json file(s) from mcp v1, 0 branches, in ")
    (path,) = out.glob("*/trajectory.json")
    assert json.loads(path.read_text())["steps"][0]["tool_calls"][0]["function_name"] == "web_search"


def test_units_need_the_atif_schema_version():
    heads = {"/t/trajectory.json": b'{"schema_version": "ATIF-v1.2", "session_id": "x"}',
             "/t/other/trajectory.json": b'{"steps": []}'}
    assert atif.units(sorted(heads), heads.get) == ["/t/trajectory.json"]


def test_branches_in_our_extra_become_branches_and_a_malformed_one_is_quarantined_alone(run, query, tmp_path):
    """A hand-made export of ours: the second agent turn lists two branches, one without an action."""
    good = {"step_id": "old:1:sim-abc", "origin": "simulated", "strategy": "failing_command", "labeler": "{}",
            "request_key": "0123456789abcdef0123", "action": {"kind": "command", "code": "cd /nope"},
            "next_observation": {"kind": "terminal", "text": "bash: cd: /nope: No such file or directory"}}
    doc = {"schema_version": "ATIF-v1.4", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": [
        {"step_id": 1, "source": "user", "message": "list files"},
        {"step_id": 2, "source": "agent", "message": "", "tool_calls": [
            {"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "ls"}}],
         "observation": {"results": [{"source_call_id": "c1", "content": "a b\n"}]}},
        {"step_id": 3, "source": "agent", "message": "", "tool_calls": [
            {"tool_call_id": "c2", "function_name": "bash", "arguments": {"command": "cat a"}}],
         "observation": {"results": [{"source_call_id": "c2", "content": "hello\n"}]},
         "extra": {"trajforge": {"branches": [good, {"origin": "simulated", "next_observation": {}}]}}}]}
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "trajectory.json").write_text(json.dumps(doc))
    result = run("ingest-swe", [tmp_path / "in"], stages=["ingest"])
    assert (result.episodes, result.steps, result.quarantined) == (1, 2, 1)
    (rejected,) = query("SELECT rule, location FROM quarantine")
    assert rejected == {"rule": "bad_record", "location": "steps[2].extra.trajforge.branches[1]"}
    (branch,) = query("SELECT * FROM branches")
    (parent,) = query("SELECT step_id FROM steps WHERE step_index = 1")
    assert branch["parent_step_id"] == parent["step_id"] and branch["step_id"] == f"{parent['step_id']}:sim-0123456789abcdef"
    assert (branch["origin"], branch["strategy"], branch["action"]["code"], branch["next_observation"]["text"]) == \
        ("simulated", "failing_command", "cd /nope", "bash: cd: /nope: No such file or directory")
