"""The SWE-agent reader called directly (`sweagent.read`) on the three bundled real `.traj` files (1.x, legacy
0.x, history-only) and on hand-made files in their shapes: each step's command, tool call, observation and
duration, the task, env and terminal flag, and the rows (record, field) for wrong-typed records."""

import json

import pytest
from fsspec.implementations.local import LocalFileSystem

from ingest.record import Episode, Rejected
from ingest.source import Budgets, Source, SourceError
from ingest.swe import sweagent
from tests.conftest import SAMPLES

SWE = SAMPLES / "swe"
V1 = SWE / "sweagent-v1" / "6e44b9__sweagenttestrepo-1c2844.traj"
LEGACY = SWE / "sweagent-legacy" / "pydicom__pydicom-1458.traj"
HISTORY = SWE / "sweagent-history-only" / "function_calling_simple.traj"


def _read(path, budgets=None) -> list:
    return list(sweagent.read(Source(fs=LocalFileSystem(), path=str(path), uri=f"in/{path.name}",
                                     put_blob=lambda *a: "sha256:0", **({"budgets": budgets} if budgets else {}))))


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _write(tmp_path, doc, name="inst.traj"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def _split(records):
    return [r for r in records if isinstance(r, Episode)], [r for r in records if isinstance(r, Rejected)]


def _edited(tmp_path, src, edit, name=None):
    doc = json.loads(src.read_text())
    edit(doc)
    return _read(_write(tmp_path, doc, name or src.name))


# --- the real files ------------------------------------------------------------------------------------------

def test_real_v1_run_steps_task_and_env():
    doc = json.loads(V1.read_text())
    (ep,), rows = _split(_read(V1))
    assert rows == []
    assert ep.key == "" and ep.domain == "swe" and ep.platform == "linux" and ep.agent == "gpt-4o"
    assert ep.terminated
    assert ep.task.startswith("SyntaxError: invalid syntax\nI'm running `missing_colon.py` as follows:")
    assert "INSTRUCTIONS" not in ep.task and "ISSUE:" not in ep.task and ep.task == ep.task.strip()
    assert ep.env == {"layout": "v1", "exit_status": "submitted", "submission": _lf(doc["info"]["submission"]),
                      "model_stats": doc["info"]["model_stats"], "environment": "main",
                      "repo": "https://github.com/SWE-agent/test-repo/", "instance_id": "SWE-agent__test-repo-i1"}
    assert [s.action.code for s in ep.steps] == [t["action"].strip() for t in doc["trajectory"]]
    assert [s.action.kind for s in ep.steps] == ["tool_call", "tool_call", "tool_call", "command", "command"]
    assert [s.action.tool_name for s in ep.steps] == ["find_file", "open", "edit", "bash", None]
    assert [s.action.duration_s for s in ep.steps] == [t["execution_time"] for t in doc["trajectory"]]
    assert [s.reasoning for s in ep.steps] == [t["thought"] for t in doc["trajectory"]]
    raw = json.loads(ep.steps[0].action.raw)
    assert raw == {"action": doc["trajectory"][0]["action"], "tool_calls": doc["history"][2]["tool_calls"],
                   "state": doc["trajectory"][0]["state"]}
    assert json.loads(ep.steps[4].action.raw) == {"action": "submit", "state": doc["trajectory"][4]["state"]}
    # observation 0: the task message as read; t+1: the tool message after command t
    assert ep.steps[0].observation.kind == "text"
    assert ep.steps[0].observation.text == doc["history"][1]["content"].replace("\r\n", "\n")
    for t in range(1, 5):
        assert ep.steps[t].observation.kind == "terminal"
        assert ep.steps[t].observation.text == doc["history"][2 * t + 1]["content"].replace("\r\n", "\n")
    assert ep.final_observation.kind == "terminal"
    assert ep.final_observation.text == _lf(doc["trajectory"][4]["observation"])
    assert all(s.timestamp is None for s in ep.steps)


def test_real_legacy_run_with_demonstrations_and_state_strings():
    doc = json.loads(LEGACY.read_text())
    (ep,), rows = _split(_read(LEGACY))
    assert rows == []
    assert ep.env["layout"] == "legacy" and ep.env["instance_id"] == "pydicom__pydicom-1458"
    assert ep.env["exit_status"] == doc["info"]["exit_status"] and ep.terminated
    assert "repo" not in ep.env and ep.agent is None
    assert ep.task.startswith("Pixel Representation attribute should be optional") and ep.task.endswith("```")
    assert len(ep.steps) == 12 and all(s.action.kind == "command" for s in ep.steps)
    assert json.loads(ep.steps[0].action.raw) == {"action": "create reproduce_bug.py\n",
                                                  "state": {"open_file": "n/a", "working_dir": "/pydicom__pydicom"}}
    assert all(s.action.duration_s is None for s in ep.steps)
    # the observation of step t+1 is the user message after the t-th (non-demo) assistant message
    users = [m for m in doc["history"][3:] if m["role"] == "user"]
    assert [s.observation.text for s in ep.steps[1:]] == [m["content"].replace("\r\n", "\n") for m in users[:11]]
    assert ep.steps[0].observation.text == doc["history"][2]["content"].replace("\r\n", "\n")
    assert ep.final_observation.text == doc["trajectory"][-1]["observation"]


def test_real_history_only_file():
    doc = json.loads(HISTORY.read_text())
    (ep,), rows = _split(_read(HISTORY))
    assert rows == []
    assert ep.env == {"layout": "history_only", "instance_id": "function_calling_simple"}
    assert not ep.terminated and ep.agent is None and ep.key == ""
    assert [s.action.tool_name for s in ep.steps] == ["find_file", "open", "edit", "bash", "submit"]
    assert ep.steps[0].observation.kind == "text" and ep.steps[0].observation.text == _lf(doc["history"][1]["content"])
    assert [s.observation.kind for s in ep.steps[1:]] == ["terminal"] * 4
    assert [s.observation.text for s in ep.steps[1:]] == [_lf(doc["history"][i]["content"]) for i in (3, 5, 7, 9)]
    assert ep.final_observation.kind == "terminal"
    assert ep.final_observation.text == _lf(doc["history"][11]["content"])
    assert [s.reasoning for s in ep.steps] == [doc["history"][i]["thought"] for i in (2, 4, 6, 8, 10)]
    assert all(json.loads(s.action.raw)["tool_calls"] == doc["history"][i]["tool_calls"]
               for s, i in zip(ep.steps, (2, 4, 6, 8, 10)))
    assert all("state" not in json.loads(s.action.raw) for s in ep.steps)


# --- hand-made files ------------------------------------------------------------------------------------------

def _msg(role, content, **kw):
    return {"role": role, "content": content, **kw}


def _call(name, args):
    return [{"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]


def test_units_take_traj_files_and_sniff_json_objects():
    heads = {"/a/x.json": b'  {\n  "environment": "main",\n  "trajectory": [{"action": "ls"',
             "/a/y.json": b'{"history": [{"role": "system", "content": "hi", "agent": "main"}]}',
             "/a/s.json": b'{"history": [{"role": "system", "content": "hi"}]}',  # a plain chat: no SWE-agent field
             "/a/w.json": b'{"trajectory": [{"observation": "x"}]}',
             "/a/v.json": b'{"history": []}',
             "/a/u.json": b'{"steps": [{"role": "user", "action": "x"}]}',
             "/a/t.json": b'["history", {"role": "user"}]',
             "/a/z.json": b'{"schema_version": "ATIF-v1.4", "steps": []}',
             "/a/notes.txt": b'{"history": [{"role": "user"}]}',
             "/a/run.traj": b"{}"}
    assert sweagent.units(sorted(heads), heads.get) == ["/a/run.traj", "/a/w.json", "/a/x.json", "/a/y.json"]
    # only the first 4 KiB are looked at
    start = b'  {"history": [{"agent": "main", '
    edge = start + b" " * (4097 + 2 - len(start) - len(b'"role"')) + b'"role"'  # its last byte: 4097th
    late = {"/a/late.json": edge, "/a/early.json": edge[:-len(b'"role"') - 1] + b'"role"'}
    assert sweagent.units(sorted(late), late.get) == ["/a/early.json"]


def test_a_file_that_is_no_object_or_has_neither_list_is_an_error(tmp_path):
    with pytest.raises(SourceError) as e:
        _read(_write(tmp_path, "[1, 2]", "a.traj"))
    assert e.value.rule == "bad_record" and e.value.reason == "a.traj: a .traj file holds one JSON object"
    with pytest.raises(SourceError) as e:
        _read(_write(tmp_path, {"trajectory": {}, "history": []}, "b.traj"))
    assert (e.value.rule, e.value.reason) == ("bad_record", "b.traj: neither 'trajectory' nor 'history' is a list")
    with pytest.raises(SourceError) as e:
        _read(_write(tmp_path, "{", "c.traj"))
    assert e.value.rule == "parse_error" and e.value.reason.startswith("c.traj: invalid JSON")


def test_a_file_over_the_record_budget_is_not_parsed(tmp_path):
    with pytest.raises(SourceError) as e:
        _read(_write(tmp_path, json.loads(V1.read_text())), Budgets(record_bytes=1000))
    assert e.value.rule == "budget_exceeded" and "record_bytes budget of 1000 bytes" in e.value.reason


def test_an_empty_trajectory_is_one_empty_episode_row(tmp_path):
    records = _read(_write(tmp_path, {"trajectory": [], "history": []}, "e.traj"))
    assert len(records) == 1 and records[0].rule == "empty_episode"
    assert records[0].reason == "e.traj: no actions in the trajectory"
    # history-only with no assistant command either
    records = _read(_write(tmp_path, {"history": [_msg("user", "hi"), _msg("assistant", "thinking")]}, "f.traj"))
    assert [r.rule for r in records] == ["empty_episode"]


def test_handmade_trajectory_matches_history_commands_in_order(tmp_path):
    doc = {"trajectory": [{"action": "ls\n", "observation": "raw ls", "execution_time": 2},
                          {"action": "cat a", "observation": "raw cat\r\nend", "thought": "look"},
                          {"action": "ls\n", "observation": "raw ls 2"}],
           "history": [_msg("system", "sys"), _msg("user", "demo", is_demo=True),
                       _msg("user", "the task\r\nline"),
                       _msg("assistant", "", action="ls\n", tool_calls=_call("bash", {"command": "ls"})),
                       _msg("tool", "a b\r\n"),
                       _msg("assistant", "", action="ls\n"), _msg("user", "second ls")],
           "info": {"exit_status": "exit_cost", "submission": "diff\r\n"},
           "replay_config": json.dumps({"agent": {"model": {"name": "m"}},
                                        "problem_statement": {"text": "statement", "id": "inst-1"}})}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert rows == []
    assert ep.env == {"layout": "legacy", "exit_status": "exit_cost", "submission": "diff\n",
                      "instance_id": "inst-1"}
    assert not ep.terminated and ep.agent == "m"
    assert ep.task == "the task\nline"  # no ISSUE template: the whole first non-demo user message
    assert [s.action.code for s in ep.steps] == ["ls", "cat a", "ls"]
    assert [s.action.kind for s in ep.steps] == ["command"] * 3
    assert ep.steps[0].action.tool_name == "bash" and ep.steps[0].action.duration_s == 2.0
    assert isinstance(ep.steps[0].action.duration_s, float)
    assert [s.observation.text for s in ep.steps] == ["the task\nline", "a b\n", "raw cat\nend"]
    assert [s.observation.kind for s in ep.steps] == ["text", "terminal", "terminal"]
    # the second "ls" matched the second history "ls" (after "cat a", which has none): its output is read there
    assert ep.final_observation.text == "second ls"
    assert ep.steps[1].reasoning == "look"
    assert "tool_calls" not in json.loads(ep.steps[2].action.raw)


def test_task_comes_from_the_issue_template_or_the_problem_statement(tmp_path):
    issue = "We have:\n\nISSUE:\nBug here\n\n\nINSTRUCTIONS:\nfix it"
    doc = {"trajectory": [{"action": "ls"}], "history": [_msg("user", [{"type": "text", "text": issue}, "tail"])]}
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.task == "Bug here"
    doc = {"trajectory": [{"action": "ls"}], "history": [],
           "replay_config": {"problem_statement": {"text": "from config"}}}
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.task == "from config"
    assert (ep.steps[0].observation.kind, ep.steps[0].observation.text) == ("none", None)  # no history: read nothing
    doc["replay_config"] = {"problem_statement": {"text": 5}}
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.task is None
    doc["replay_config"] = "{not json"
    (ep,), _ = _split(_read(_write(tmp_path, doc, "x.json")))
    assert ep.task is None and ep.agent is None and "instance_id" not in ep.env  # no .traj name to take it from


def test_state_and_layout(tmp_path):
    doc = {"trajectory": [{"action": "ls", "state": '{"open_file": "a"}\n'}, {"action": "pwd", "state": "{bad"}],
           "history": []}
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.env["layout"] == "legacy"
    assert json.loads(ep.steps[0].action.raw)["state"] == {"open_file": "a"}
    assert json.loads(ep.steps[1].action.raw)["state"] == "{bad"
    doc["trajectory"][1]["state"] = {"open_file": "b"}
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.env["layout"] == "v1"
    doc = {"trajectory": [{"action": "ls"}], "history": [_msg("user", "t", message_type="observation")]}
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.env["layout"] == "v1" and ep.task == "t"
    doc["history"][0]["message_type"] = "demonstration"
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.task is None and ep.steps[0].observation.kind == "text" and ep.steps[0].observation.text is None


def test_a_non_shell_tool_call_keeps_the_command_as_code(tmp_path):
    doc = {"trajectory": [{"action": "open  x.py "}, {"action": "  "}],
           "history": [_msg("assistant", "", action="open  x.py ", tool_calls=_call("open", {"path": "x.py"})),
                       _msg("assistant", "", action="  ", tool_calls=_call("open", {"path": "y"}))]}
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    first, second = ep.steps[0].action, ep.steps[1].action
    assert first.kind == "tool_call" and first.tool_name == "open" and first.code == "open  x.py"
    assert json.loads(first.arguments) == {"path": "x.py"}
    assert second.kind == "tool_call" and second.code is None
    # a tool call without a function: no tool name
    doc["history"][0]["tool_calls"] = [{"id": "c"}]
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.steps[0].action.kind == "tool_call" and ep.steps[0].action.tool_name is None


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["trajectory"][2].update(thought=["not", "text"]), "trajectory[2].thought: list, expected a string"),
    (lambda d: d["trajectory"][2].update(observation=3), "trajectory[2].observation: int, expected a string"),
    (lambda d: d["trajectory"][2].update(action=42), "trajectory[2].action: int, expected the command string"),
    (lambda d: d["trajectory"][2].pop("action"), "trajectory[2].action: null, expected the command string"),
    (lambda d: d["trajectory"][2].update(execution_time="slow"), "trajectory[2].execution_time: str, expected seconds"),
    (lambda d: d["trajectory"][2].update(execution_time=True), "trajectory[2].execution_time: bool, expected seconds"),
    (lambda d: d["trajectory"].__setitem__(2, "ls"), "trajectory[2]: str, expected a step object"),
])
def test_a_wrong_typed_step_splits_the_episode(tmp_path, edit, field):
    doc = json.loads(V1.read_text())
    head, tail = None, None
    (head, tail), rows = _split(_edited(tmp_path, V1, edit))
    assert [(r.rule, r.record_id, r.location, r.reason) for r in rows] == [
        ("bad_record", "trajectory[2]", V1.name, f"{V1.name}: field {field}; the episode is split there")]
    assert head.key == "" and tail.key == "segment-3"
    assert len(head.steps) == 2 and len(tail.steps) == 2
    assert not head.terminated and tail.terminated and head.final_observation is None
    assert head.env["segment"] == {"index": 0, "count": 2, "first_record": 0, "records": "trajectory"}
    assert tail.env["segment"] == {"index": 1, "count": 2, "first_record": 3, "records": "trajectory"}
    assert head.env["layout"] == "v1" and tail.env["exit_status"] == "submitted"
    # the next segment opens on the bad step's output: its history message when its command matched one,
    # else its raw observation, else nothing
    opening = tail.steps[0].observation
    if field.endswith("step object"):
        assert (opening.kind, opening.text) == ("none", None)
    elif ".action:" in field:
        assert (opening.kind, opening.text) == ("terminal", _lf(doc["trajectory"][2]["observation"]))
    else:
        assert (opening.kind, opening.text) == ("terminal", _lf(doc["history"][7]["content"]))


def test_a_bad_first_step_leaves_one_segment_keyed_by_its_first_record(tmp_path):
    (ep,), rows = _split(_edited(tmp_path, V1, lambda d: d["trajectory"][0].update(action=None)))
    assert [r.record_id for r in rows] == ["trajectory[0]"]
    assert ep.key == "" and len(ep.steps) == 4 and ep.terminated and "segment" not in ep.env
    # the last step bad: the first segment does not reach the end, and is not terminal
    (ep,), rows = _split(_edited(tmp_path, V1, lambda d: d["trajectory"][4].update(action=None)))
    assert ep.key == "" and len(ep.steps) == 4 and not ep.terminated and ep.final_observation is None


def test_a_wrong_typed_history_message_is_left_out(tmp_path):
    (ep,), rows = _split(_edited(tmp_path, V1, lambda d: d["history"][4].update(content=7)))
    assert [(r.rule, r.record_id, r.reason) for r in rows] == [
        ("bad_record", "history[4]", f"{V1.name}: field history[4].content: int, expected a string or a list of "
                                     "parts; the message is left out")]
    assert len(ep.steps) == 5 and ep.terminated
    # the open command's tool call went with it: a plain command, its output the raw one
    assert ep.steps[1].action.kind == "command" and ep.steps[1].action.tool_name is None


@pytest.mark.parametrize("msg, reason", [
    ("text", "history[0]: str, expected a message object"),
    ({"role": 1}, "history[0].role: int, expected a string"),
    ({"role": "user", "action": []}, "history[0].action: list, expected a string"),
    ({"role": "user", "thought": 1.5}, "history[0].thought: float, expected a string"),
    ({"role": "user", "message_type": {}}, "history[0].message_type: dict, expected a string"),
    ({"role": "user", "content": ["a", 3]}, "history[0].content[1]: int, expected text"),
    ({"role": "user", "content": [{"text": None}]}, "history[0].content[0]: null, expected text"),
    ({"role": "user", "tool_calls": "x"}, "history[0].tool_calls: str, expected a list of objects"),
    ({"role": "user", "tool_calls": [{}, 1]}, "history[0].tool_calls: list, expected a list of objects"),
    ({"role": "user", "tool_calls": [{"function": "f"}]}, "history[0].tool_calls[0].function: str, expected an object"),
    ({"role": "user", "tool_calls": [{"function": {"name": 3}}]},
     "history[0].tool_calls[0].function.name: int, expected a string"),
])
def test_each_bad_message_field_is_named(tmp_path, msg, reason):
    doc = {"trajectory": [{"action": "ls"}], "history": [msg, _msg("user", "task")]}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert [r.reason for r in rows] == [f"inst.traj: field {reason}; the message is left out"]
    assert ep.task == "task"


def test_good_tool_calls_and_content_parts_are_read(tmp_path):
    doc = {"trajectory": [{"action": "x"}],
           "history": [_msg("user", [{"type": "text", "text": "a"}, {"type": "image"}, "b"]),
                       _msg("assistant", None, action="x", tool_calls=[]),
                       _msg("tool", None)]}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert rows == [] and ep.task == "a\n\nb"
    assert ep.steps[0].action.kind == "command" and "tool_calls" not in json.loads(ep.steps[0].action.raw)
    doc["history"][1]["tool_calls"] = [{"function": {"name": None, "arguments": "{}"}}]
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert rows == [] and ep.steps[0].action.kind == "tool_call"


def test_history_only_splits_at_a_bad_message(tmp_path):
    (head, tail), rows = _split(_edited(tmp_path, HISTORY, lambda d: d["history"][4].update(action=["open"])))
    assert [(r.rule, r.record_id, r.location, r.reason) for r in rows] == [
        ("bad_record", "history[4]", HISTORY.name,
         f"{HISTORY.name}: field history[4].action: list, expected a string; the episode "
                                     "is split there")]
    assert len(head.steps) == 1 and len(tail.steps) == 3
    assert head.key == "" and tail.key == "segment-6"
    assert head.final_observation is None and tail.final_observation is not None
    assert head.env["segment"] == {"index": 0, "count": 2, "first_record": 2, "records": "history"}
    assert tail.env["segment"]["first_record"] == 6
    # after the split the next step opens on what followed the bad message, as text read afresh
    doc = json.loads(HISTORY.read_text())
    assert tail.steps[0].observation.text == _lf(doc["history"][5]["content"])
    assert tail.steps[0].observation.kind == "terminal"


def test_history_only_steps_skip_demos_system_and_replies_without_command(tmp_path):
    doc = {"history": [_msg("system", "sys"), _msg("user", "demo", message_type="demonstration"),
                       _msg("user", "t1"), _msg("user", "t2\r\n"),
                       _msg("assistant", "format error"),
                       _msg("user", "fix format"),
                       _msg("assistant", "", action="ls", thought="why"),
                       _msg("tool", "out")],
           "info": {"exit_status": "submitted (exit_cost)"}}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert rows == [] and len(ep.steps) == 1 and ep.terminated
    assert ep.steps[0].observation.kind == "text" and ep.steps[0].observation.text == "t1\nt2\n\nfix format"
    assert ep.steps[0].reasoning == "why"
    assert ep.final_observation.kind == "terminal" and ep.final_observation.text == "out"
    assert ep.task == "t1"
    # a second command with no message between: the observation is empty, not the previous one
    doc["history"] = doc["history"][:7] + [_msg("assistant", "", action="pwd")]
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert (ep.steps[1].observation.kind, ep.steps[1].observation.text) == ("none", None)
    assert ep.final_observation is None
    doc["history"].append(_msg("user", "after"))
    doc["history"].append(_msg("assistant", "", action="cd"))
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.steps[2].observation.kind == "terminal" and ep.steps[2].observation.text == "after"


def test_history_only_split_at_first_message_keys_from_the_next_command(tmp_path):
    doc = {"history": [{"role": 5}, _msg("user", "t"), _msg("assistant", "", action="ls")]}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert [r.record_id for r in rows] == ["history[0]"]
    assert ep.key == "" and ep.steps[0].observation.text == "t"
    assert ep.steps[0].observation.kind == "text"
    doc = {"history": [_msg("user", "t"), _msg("assistant", "", action="ls"), _msg("tool", "o"), {"role": 5},
                       _msg("user", "u")]}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert ep.key == "" and ep.final_observation is None and len(ep.steps) == 1


def test_a_state_too_deep_to_write_names_the_state(tmp_path):
    deep: list = []
    for _ in range(300):
        deep = [deep]
    (head, tail), rows = _split(_edited(tmp_path, V1, lambda d: d["trajectory"][1].update(state=deep)))
    assert [r.record_id for r in rows] == ["trajectory[1]"]
    assert rows[0].reason.startswith(f"{V1.name}: field trajectory[1].state: cannot be written as JSON (")
    # too deep tool calls are named as such
    doc = {"history": [_msg("assistant", "", action="ls", tool_calls=[{"function": {"name": "f"}, "x": deep}])]}
    records = _read(_write(tmp_path, doc))
    assert "history[0].tool_calls: cannot be written as JSON" in records[0].reason


def test_an_env_value_orjson_cannot_write_is_left_out_with_a_row(tmp_path):
    deep: list = []
    for _ in range(300):
        deep = [deep]
    doc = {"trajectory": [{"action": "ls"}], "history": [], "info": {"model_stats": {"n": deep},
                                                                      "exit_status": "submitted"}}
    records = _read(_write(tmp_path, doc))
    rows = [r for r in records if isinstance(r, Rejected)]
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [(r.rule, r.record_id) for r in rows] == [("bad_record", "model_stats")]
    assert rows[0].reason.startswith("inst.traj: env field model_stats") and rows[0].reason.endswith(
        "; left out of the episode's env")
    assert "model_stats" not in ep.env and ep.env["exit_status"] == "submitted" and ep.terminated


def test_info_and_replay_that_are_no_objects(tmp_path):
    doc = {"trajectory": [{"action": "ls"}], "history": [], "info": ["x"],
           "replay_config": {"agent": "m", "env": {"repo": {"github_url": "u"}}}}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert rows == [] and ep.agent is None and not ep.terminated
    assert ep.env == {"layout": "legacy", "repo": "u", "instance_id": "inst"}
    doc["info"] = {"exit_status": 1}
    doc["replay_config"] = {"agent": {"model": {"name": 3}}}
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.agent is None and not ep.terminated and ep.env["exit_status"] == 1


def test_a_step_over_the_field_budget_is_a_bad_record(tmp_path, monkeypatch):
    monkeypatch.setattr("ingest.source._DEFAULT", [Budgets(field_bytes=1000)])
    doc = {"trajectory": [{"action": "ls"}, {"action": "cat", "thought": "x" * 2000}], "history": []}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert [r.record_id for r in rows] == ["trajectory[1]"] and len(ep.steps) == 1
    assert rows[0].reason.startswith("inst.traj: field reasoning: 2000 characters, over the field_bytes budget")
    assert rows[0].reason.endswith("; the episode is split there")


def test_a_history_message_over_the_field_budget_is_a_bad_record(tmp_path, monkeypatch):
    """History-only: the command and the thought of a message are checked before it becomes a step."""
    monkeypatch.setattr("ingest.source._DEFAULT", [Budgets(field_bytes=1000)])
    doc = {"history": [_msg("user", "task"), _msg("assistant", "", action="ls"), _msg("user", "out"),
                       _msg("assistant", "", action="cat", thought="x" * 2000), _msg("user", "out 2"),
                       _msg("assistant", "", action="y" * 2000), _msg("assistant", "", action="pwd", thought="t")]}
    eps, rows = _split(_read(_write(tmp_path, doc)))
    assert [r.record_id for r in rows] == ["history[3]", "history[5]"]
    assert rows[0].reason.startswith("inst.traj: field reasoning: 2000 characters, over the field_bytes budget")
    assert "field action" in rows[1].reason
    assert [[s.action.code for s in ep.steps] for ep in eps] == [["ls"], ["pwd"]]
    assert eps[1].steps[0].reasoning == "t" and eps[1].key == "segment-6"


def test_outputs_of_several_messages_are_joined_and_system_messages_left_out(tmp_path):
    doc = {"trajectory": [{"action": "ls", "observation": "raw"}, {"action": "pwd"}, {"action": "ls"}],
           "history": [_msg("user", "task"),
                       _msg("assistant", "", action="ls"), _msg("user", "out 1"), _msg("system", "reminder"),
                       _msg("user", "out 2"),
                       _msg("assistant", "", action="pwd"), _msg("tool", "out 3"),
                       _msg("assistant", "", action="ls"), _msg("tool", "out 4")]}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert rows == []
    assert [s.observation.text for s in ep.steps] == ["task", "out 1\nout 2", "out 3"]
    # the second `ls` is matched to the history after `pwd`, not to the first `ls` again
    assert ep.final_observation.text == "out 4"


def test_history_only_final_output_of_several_messages(tmp_path):
    doc = {"history": [_msg("assistant", "", action="ls"), _msg("tool", "a"), _msg("user", "b")]}
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.final_observation.text == "a\nb"
    # no message before the first command: it read nothing
    assert (ep.steps[0].observation.kind, ep.steps[0].observation.text) == ("none", None)


def test_a_message_without_content_is_empty_text(tmp_path):
    doc = {"history": [_msg("user", None), _msg("assistant", "", action="ls")]}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert rows == [] and ep.task is None
    assert (ep.steps[0].observation.kind, ep.steps[0].observation.text) == ("text", "")


def test_a_bad_last_message_leaves_a_submitted_run_not_terminal(tmp_path):
    doc = {"history": [_msg("user", "t"), _msg("assistant", "", action="ls"), _msg("tool", "o"), {"role": 1}],
           "info": {"exit_status": "submitted"}}
    (ep,), rows = _split(_read(_write(tmp_path, doc)))
    assert [(r.record_id, r.location) for r in rows] == [("history[3]", "inst.traj")]
    assert not ep.terminated and ep.final_observation is None
    doc["history"].pop()
    (ep,), _ = _split(_read(_write(tmp_path, doc)))
    assert ep.terminated and ep.final_observation.text == "o"


def test_a_history_that_is_no_list_lends_nothing(tmp_path):
    for history in ({"role": "user"}, "text"):
        (ep,), rows = _split(_read(_write(tmp_path, {"trajectory": [{"action": "ls"}], "history": history})))
        assert rows == [] and ep.task is None
    (ep,), rows = _split(_read(_write(tmp_path, {"trajectory": [{"action": "ls", "observation": "o"}]})))
    assert rows == [] and (ep.steps[0].observation.kind, ep.steps[0].observation.text) == ("none", None)
    assert ep.final_observation.text == "o"


def test_unwritable_tool_calls_are_named_when_the_state_is_fine(tmp_path):
    deep: list = []
    for _ in range(300):
        deep = [deep]
    doc = {"trajectory": [{"action": "ls", "state": {"open_file": "a"}}, {"action": "pwd"}],
           "history": [_msg("assistant", "", action="ls", tool_calls=[{"function": {"name": "f"}, "x": deep}])]}
    records = _read(_write(tmp_path, doc))
    assert records[0].reason.startswith("inst.traj: field trajectory[0].tool_calls: cannot be written as JSON")


def test_rows_name_the_file_as_their_location(tmp_path, monkeypatch):
    (ep,), rows = _split(_edited(tmp_path, V1, lambda d: d["history"][4].update(content=7)))
    assert [r.location for r in rows] == [V1.name]
    deep: list = []
    for _ in range(300):
        deep = [deep]
    records = _read(_write(tmp_path, {"trajectory": [{"action": "ls"}], "info": {"model_stats": deep}}))
    assert [(r.rule, r.location) for r in records if isinstance(r, Rejected)] == [("bad_record", "inst.traj")]
    # an episode whose own field does not fit is quarantined whole, naming the file
    monkeypatch.setattr("ingest.source._DEFAULT", [Budgets(field_bytes=1000)])
    records = _read(_write(tmp_path, {"trajectory": [{"action": "ls"}],
                                      "replay_config": {"problem_statement": {"text": "x" * 2000}}}))
    assert [(r.rule, r.location) for r in records] == [("schema_mismatch", "inst.traj")]
    assert records[0].reason.startswith("inst.traj: the episode: field task: 2000 characters, over the field_bytes")
