import json
from pathlib import Path

import pytest

from ingest.swe import sweagent
from tests.conftest import SAMPLES

SWE = SAMPLES / "swe"


def test_current_layout_pairs_commands_with_their_tool_calls(run, query):
    result = run("ingest-swe", [SWE / "sweagent-v1"])
    assert result.status == "success" and result.episodes == 1 and result.steps == 5 and result.quarantined == 0
    ep = query("SELECT * FROM episodes")[0]
    assert ep["source_format"] == "sweagent" and ep["domain"] == "swe" and ep["platform"] == "linux"
    assert ep["task"].startswith("SyntaxError: invalid syntax\nI'm running `missing_colon.py` as follows:")
    assert "\r" not in ep["task"] and ep["agent"] == "gpt-4o" and ep["started_at"] is None
    env = json.loads(ep["env"])
    assert env["layout"] == "v1" and env["exit_status"] == "submitted"
    assert env["model_stats"] == {"instance_cost": 0.019520000000000006, "tokens_sent": 7141,
                                  "tokens_received": 243, "api_calls": 5}
    assert env["submission"].startswith("\ndiff --git a/tests/missing_colon.py b/tests/missing_colon.py")
    assert env["repo"] == "https://github.com/SWE-agent/test-repo/" and env["instance_id"] == "SWE-agent__test-repo-i1"

    steps = query("SELECT * FROM steps ORDER BY step_index")
    first = steps[0]["action"]
    assert first["kind"] == "tool_call" and first["tool_name"] == "find_file"
    assert json.loads(first["arguments"]) == {"file_name": "missing_colon.py"}
    assert first["code"] == "find_file missing_colon.py" and abs(first["duration_s"] - 0.2814128329991945) < 1e-12
    assert json.loads(first["raw"])["state"] == {"open_file": "n/a", "working_dir": "/SWE-agent__test-repo"}
    # a bash tool call is a shell command
    assert steps[3]["action"]["kind"] == "command"
    assert steps[3]["action"]["code"] == "python3 /SWE-agent__test-repo/tests/missing_colon.py"
    # the last history message has no tool call (SWE-agent stops before logging it): a plain command
    assert steps[4]["action"]["kind"] == "command" and steps[4]["action"]["code"] == "submit"
    # observation 0 is the issue as the agent read it; observation t+1 is the output of command t
    assert steps[0]["observation"]["kind"] == "text" and "INSTRUCTIONS:" in steps[0]["observation"]["text"]
    assert steps[1]["observation"]["text"] == ('Found 1 matches for "missing_colon.py" in /SWE-agent__test-repo:\n'
                                               "/SWE-agent__test-repo/tests/missing_colon.py\n(Open file: n/a)\n"
                                               "(Current directory: /SWE-agent__test-repo)\nbash-$")
    assert steps[4]["observation"]["text"].startswith("8.2\n(Open file: /SWE-agent__test-repo/tests/missing_colon.py)")
    # the submit's output is not in the history: the trajectory's raw observation
    assert steps[4]["final_observation"]["text"].startswith("\ndiff --git a/tests/missing_colon.py")
    assert steps[0]["reasoning"].startswith("To start addressing this issue, I will first search")
    assert steps[-1]["is_last"] and steps[-1]["is_terminal"]  # submitted: the episode ended
    assert all(s["timestamp"] is None for s in steps)


def test_legacy_layout_with_state_as_json_string(run, query):
    result = run("ingest-swe", [SWE / "sweagent-legacy"])
    assert result.episodes == 1 and result.steps == 12
    ep = query("SELECT * FROM episodes")[0]
    assert ep["task"].startswith("Pixel Representation attribute should be optional for pixel data handler\n")
    assert ep["task"].rstrip().endswith("```")  # the issue only, not SWE-agent's instructions
    env = json.loads(ep["env"])
    assert env["layout"] == "legacy" and env["environment"] == "swe_main" and env["instance_id"] == "pydicom__pydicom-1458"
    assert env["model_stats"]["api_calls"] == 12 and env["model_stats"]["tokens_sent"] == 122612
    steps = query("SELECT * FROM steps ORDER BY step_index")
    first = steps[0]["action"]
    assert first["kind"] == "command" and first["code"] == "create reproduce_bug.py" and first["tool_name"] is None
    assert json.loads(first["raw"]) == {"action": "create reproduce_bug.py\n",
                                        "state": {"open_file": "n/a", "working_dir": "/pydicom__pydicom"}}
    assert steps[1]["action"]["code"].startswith("edit 1:1\nimport numpy as np")
    assert [s["action"]["code"] for s in steps[-2:]] == ["rm reproduce_bug.py", "submit"]
    # the demonstration message injected into the context is not the task
    assert "Here is a demonstration" not in steps[0]["observation"]["text"]
    assert steps[1]["observation"]["text"] == ("[File: /pydicom__pydicom/reproduce_bug.py (1 lines total)]\n1:\n\n"
                                               "(Open file: /pydicom__pydicom/reproduce_bug.py)\n"
                                               "(Current directory: /pydicom__pydicom)\nbash-$")
    # `rm` printed nothing: the agent read SWE-agent's notice, not an empty string
    assert steps[-1]["observation"]["text"].startswith("Your command ran successfully and did not produce any output.")
    assert steps[-1]["is_terminal"]


def test_history_only_file_rebuilds_steps_from_chat(run, query):
    result = run("ingest-swe", [SWE / "sweagent-history-only"])
    assert result.episodes == 1 and result.steps == 5
    ep = query("SELECT * FROM episodes")[0]
    assert json.loads(ep["env"]) == {"layout": "history_only", "instance_id": "function_calling_simple"}
    assert ep["task"].startswith("SyntaxError: invalid syntax")
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["tool_name"] for s in steps] == ["find_file", "open", "edit", "bash", "submit"]
    edit = steps[2]["action"]
    assert json.loads(edit["arguments"]) == {"search": "def division(a: float, b: float) -> float",
                                             "replace": "def division(a: float, b: float) -> float:"}
    # outputs come from the tool messages, with SWE-agent's status footer
    assert steps[4]["observation"]["text"] == ("8.2\n(Open file: /SWE-agent__test-repo/tests/missing_colon.py)\n"
                                               "(Current directory: /SWE-agent__test-repo)\nbash-$")
    assert steps[4]["final_observation"]["text"].startswith("\ndiff --git")
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]  # no exit status recorded: not known to be done


def test_broken_traj_is_quarantined_with_its_name(run, query, tmp_path):
    bad = tmp_path / "in" / "broken.traj"
    bad.parent.mkdir()
    bad.write_bytes((SWE / "sweagent-v1" / "6e44b9__sweagenttestrepo-1c2844.traj").read_bytes()[:500])
    result = run("ingest-swe", [bad.parent])
    assert result.episodes == 0 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "parse_error" and row["reason"].startswith("broken.traj: invalid JSON")


def test_units_sniff_json_files_by_content():
    heads = {"/a/x.json": b'{\n  "environment": "main",\n  "trajectory": [{"action": "ls"',
             "/a/y.json": b'{"history": [{"role": "system", "content": "hi", "agent": "main", "message_type": "system'
                          b'_prompt"}]}',
             "/a/z.json": b'{"schema_version": "ATIF-v1.4", "steps": []}',
             "/a/run.traj": b"{}",
             # a `history` key alone is no evidence: a browser-use history, a plain chat history
             "/a/browser-use.json": b'{"history": [{"model_output": {"action": [{"go_to_url": {"url": "x"}}]}',
             "/a/chat.json": b'{"history": [{"role": "user", "content": "hi"}, {"role": "assistant"'}
    assert sweagent.units(sorted(heads), heads.get) == ["/a/run.traj", "/a/x.json", "/a/y.json"]


# --- record isolation --------------------------------------------------------------------------------------

def _traj(tmp_path, src, edit) -> Path:
    doc = json.loads(src.read_text())
    edit(doc)
    path = tmp_path / "in" / src.name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(doc))
    return path.parent


V1 = SWE / "sweagent-v1" / "6e44b9__sweagenttestrepo-1c2844.traj"


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["trajectory"][2].update(thought=["not", "text"]), "trajectory[2].thought: list, expected a string"),
    (lambda d: d["trajectory"][2].update(action=42), "trajectory[2].action: int, expected the command string"),
    (lambda d: d["trajectory"][2].update(execution_time="slow"), "trajectory[2].execution_time: str, expected seconds"),
    (lambda d: d["trajectory"].__setitem__(2, "ls"), "trajectory[2]: str, expected a step object"),
])
def test_a_wrong_typed_step_splits_the_episode_and_names_record_and_field(run, query, tmp_path, edit, field):
    result = run("ingest-swe", [_traj(tmp_path, V1, edit)], stages=["ingest"])
    assert result.status == "success" and result.episodes == 2 and result.steps == 4 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "bad_record" and row["record_id"] == "trajectory[2]"
    assert row["reason"] == f"{V1.name}: field {field}; the episode is split there"
    head, tail = query("SELECT * FROM episodes ORDER BY num_steps DESC, episode_id")
    assert head["num_steps"] == 2 and tail["num_steps"] == 2
    assert json.loads(tail["env"])["segment"] == {"index": 1, "count": 2, "first_record": 3, "records": "trajectory"}
    cut = query(f"SELECT * FROM steps WHERE episode_id = '{head['episode_id']}' ORDER BY step_index")
    assert cut[-1]["is_last"] and not cut[-1]["is_terminal"]
    rest = query(f"SELECT * FROM steps WHERE episode_id = '{tail['episode_id']}' ORDER BY step_index")
    assert rest[-1]["is_terminal"]  # submitted: the segment that reaches the end ends the episode
    if "execution_time" in field or "thought" in field:  # the command ran: its output opens the next segment
        assert rest[0]["observation"]["kind"] == "terminal" and rest[0]["observation"]["text"]


def test_a_wrong_typed_history_message_is_left_out_with_a_row(run, query, tmp_path):
    result = run("ingest-swe", [_traj(tmp_path, V1, lambda d: d["history"][4].update(content=7))], stages=["ingest"])
    assert result.episodes == 1 and result.steps == 5 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["record_id"] == "history[4]" and "history[4].content: int" in row["reason"]


def test_history_only_layout_splits_at_a_bad_message(run, query, tmp_path):
    src = SWE / "sweagent-history-only" / "function_calling_simple.traj"
    result = run("ingest-swe", [_traj(tmp_path, src, lambda d: d["history"][4].update(action=["open"]))],
                 stages=["ingest"])
    # the second command is lost: find_file ends its episode cut, the three after it make another
    assert result.status == "success" and result.episodes == 2 and result.steps == 4 and result.quarantined == 1
    assert query("SELECT record_id FROM quarantine")[0]["record_id"] == "history[4]"
    assert [r["n"] for r in query("SELECT num_steps AS n FROM episodes ORDER BY n")] == [1, 3]


def test_a_state_too_deep_to_write_is_one_bad_step_not_a_failed_task(run, query, tmp_path):
    deep: list = []
    for _ in range(300):
        deep = [deep]
    result = run("ingest-swe", [_traj(tmp_path, V1, lambda d: d["trajectory"][1].update(state=deep))],
                 stages=["ingest"])
    assert result.status == "success" and result.steps == 4 and result.quarantined == 1
    assert "trajectory[1].state: cannot be written as JSON" in query("SELECT reason FROM quarantine")[0]["reason"]
