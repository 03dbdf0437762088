"""The mini-swe-agent reader called directly (`minisweagent.read`) on the real 1.15 run (bundled) and on
hand-made trajectories in the shapes its 1.x and 2.x writers save (text mode, tool calls, the Responses API):
each step's command, time and exit code, the outcome from the harness report, and the rows for bad messages."""

import datetime as dt
import json

import pytest
from fsspec.implementations.local import LocalFileSystem

from ingest.record import Episode, Rejected
from ingest.source import Budgets, Source, SourceError
from ingest.swe import minisweagent
from tests.conftest import SAMPLES

REAL = SAMPLES / "swe" / "minisweagent-gemini3pro" / "trajs" / "django__django-16255"
T = 1_700_000_000.25


def _read(path) -> list:
    return list(minisweagent.read(Source(fs=LocalFileSystem(), path=str(path), uri=f"input/{path.name}",
                                         put_blob=lambda *a: "sha256:0")))


def _write(tmp_path, doc, name="inst.traj.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _split(records):
    eps = [r for r in records if isinstance(r, Episode)]
    return (eps[0] if eps else None), [r for r in records if isinstance(r, Rejected)]


def _at(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


def test_the_real_1x_run_submitted_with_its_commands_and_outputs():
    doc = json.loads((REAL / "django__django-16255.traj.json").read_text())
    ep, rows = _split(_read(REAL / "django__django-16255.traj.json"))
    assert rows == []
    assistants = [m for m in doc["messages"] if m["role"] == "assistant"]
    assert len(ep.steps) == len(assistants)
    assert all(s.action.kind == "command" for s in ep.steps)
    assert ep.steps[0].observation.text == doc["messages"][1]["content"] and ep.task == doc["messages"][1]["content"]
    # the output after each command is the next observation, with its return code
    assert ep.steps[1].observation.text == doc["messages"][3]["content"] and ep.steps[1].observation.exit_code == 0
    assert ep.terminated and ep.outcome == "unknown" and ep.reward is None  # no harness report beside it
    assert ep.env["exit_status"] == "Submitted" and ep.env["instance_id"] == "django__django-16255"
    assert ep.env["trajectory_format"] == "mini-swe-agent-1" and ep.env["mini_version"] == doc["info"]["mini_version"]
    assert ep.env["system_prompt"] == doc["messages"][0]["content"]
    # 1.x messages have no time of their own: the response's `created`, whole seconds
    created = assistants[0]["extra"]["response"]["created"]
    assert ep.steps[0].timestamp == _at(created)
    assert ep.agent == assistants[0]["extra"]["response"]["model"]


def _v2(messages, exit_status="Submitted", **info):
    return {"info": {"exit_status": exit_status, "submission": "diff", "mini_version": "2.4.6",
                     "model_stats": {"cost": 1},
                     "config": {"model": {"model_name": "cfg-model"}}, **info},
            "messages": messages, "trajectory_format": "mini-swe-agent-1.1"}


def test_a_2x_text_mode_run_steps_times_codes_and_submission(tmp_path):
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": "THOUGHT: look\n```bash\nls\n```",
         "extra": {"actions": [{"command": "ls"}], "cost": 0.5, "timestamp": T,
                   "response": {"model": "m1", "usage": {"total_tokens": 7}, "created": 5}}},
        {"role": "user", "content": "a b", "extra": {"returncode": 2, "raw_output": "a b", "timestamp": T + 1}},
        {"role": "assistant", "content": "two commands", "reasoning_content": "hmm",
         "extra": {"actions": [{"command": "x"}, {"command": "y"}, "bad"], "timestamp": T + 2}},
        {"role": "user", "content": "<returncode>3</returncode>\nout-x", "extra": {"raw_output": "out-x"}},
        {"role": "user", "content": "out-y", "extra": {"returncode": 0, "exception_info": "boom"}},
        {"role": "exit", "content": "the diff", "extra": {"exit_status": "Submitted", "submission": "the diff",
                                                          "traceback": None, "note": "n"}},
    ]
    ep, rows = _split(_read(_write(tmp_path, _v2(messages))))
    assert rows == []
    assert [(s.action.kind, s.action.code) for s in ep.steps] == [("command", "ls"), ("command", "x"),
                                                                ("command", "y")]
    assert json.loads(ep.steps[0].action.raw) == {"action": "ls", "usage": {"total_tokens": 7}, "cost": 0.5}
    assert [s.timestamp for s in ep.steps] == [_at(T), _at(T + 2), _at(T + 2)]  # own times, not `created`
    assert [s.observation.exit_code for s in ep.steps] == [None, 2, 3]
    assert ep.steps[0].reasoning == "THOUGHT: look\n```bash\nls\n```"
    assert ep.steps[1].reasoning == "hmm\n\ntwo commands" and ep.steps[2].reasoning is None
    assert ep.final_observation.text == "out-y\n\nthe diff" and ep.final_observation.is_error
    assert ep.env["models"] == ["m1", "cfg-model"] and ep.agent == "cfg-model"
    assert ep.env["exit"] == {"traceback": None, "note": "n"} and ep.env["submission"] == "diff"
    assert ep.env["config"] == {"model": {"model_name": "cfg-model"}} and ep.env["model_stats"] == {"cost": 1}
    assert ep.terminated and ep.task == "fix it"


def test_a_text_turn_without_exactly_one_command_is_a_message_and_feedback_the_next_observation(tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"role": "assistant", "content": "no block here"},
                {"role": "user", "content": "Please always provide EXACTLY ONE action"},
                {"role": "assistant", "content": "```bash\na\n```\n```bash\nb\n```"},
                {"role": "user", "content": "again"},
                {"role": "assistant", "content": "ok\n```bash\n  pwd  \n```"},
                {"role": "user", "content": "/repo"}]
    doc = {"info": {"exit_status": "LimitsExceeded", "config": {}}, "messages": messages,
           "trajectory_format": "mini-swe-agent-1"}
    ep, _ = _split(_read(_write(tmp_path, doc)))
    assert [s.action.kind for s in ep.steps] == ["message", "message", "command"]
    assert ep.steps[2].action.code == "pwd"
    assert [s.observation.text for s in ep.steps] == ["task", "Please always provide EXACTLY ONE action", "again"]
    assert ep.final_observation.text == "/repo" and ep.final_observation.exit_code is None
    assert not ep.terminated and ep.env["exit_status"] == "LimitsExceeded" and "config" not in ep.env
    assert ep.agent is None


def test_the_agents_own_action_regex_reads_its_blocks(tmp_path):
    messages = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "<cmd>ls -a</cmd>"},
                {"role": "user", "content": "."}]
    doc = {"info": {"config": {"agent": {"action_regex": "<cmd>(.*?)</cmd>"}}}, "messages": messages}
    ep, _ = _split(_read(_write(tmp_path, doc)))
    assert ep.steps[0].action.code == "ls -a" and ep.steps[0].observation.text == "task"
    doc["info"]["config"]["agent"]["action_regex"] = "(unclosed"  # not a regex: the default one
    messages[1]["content"] = "```bash\nls -b\npwd\n```"
    ep, _ = _split(_read(_write(tmp_path, doc)))
    assert ep.steps[0].action.code == "ls -b\npwd"


def test_a_tool_calling_run_pairs_results_by_id(tmp_path):
    messages = [{"role": "user", "content": [{"type": "text", "text": "part one"}, "part two", 7]},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "function": {"name": "bash", "arguments": '{"command": "ls"}'}},
                    {"id": "c2", "function": "not an object"}],
                 "extra": {"timestamp": T}},
                {"role": "tool", "tool_call_id": "c2", "content": "second", "extra": {"returncode": 1}},
                {"role": "tool", "tool_call_id": "c1", "content": "first"}]
    ep, rows = _split(_read(_write(tmp_path, _v2(messages, exit_status="Error"))))
    assert rows == []
    assert ep.task == "part one\npart two"
    assert (ep.steps[0].action.kind, ep.steps[0].action.code) == ("command", "ls")
    assert json.loads(ep.steps[0].action.raw)["id"] == "c1"
    assert ep.steps[1].action.tool_name is None and ep.steps[1].action.kind == "tool_call"
    assert ep.steps[1].observation.text == "first" and ep.final_observation.text == "second"
    assert ep.final_observation.exit_code == 1 and not ep.terminated
    assert ep.steps[0].reasoning is None  # no content: no text beside the calls
    assert json.loads(ep.steps[1].action.raw) == {"id": "c2", "function": "not an object"}  # the call as written
    assert ep.steps[1].observation.is_error is None


def test_a_responses_api_run_reads_function_calls_and_outputs(tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"object": "response", "model": "r-model", "extra": {"timestamp": T}, "output": [
                    {"type": "reasoning"}, {"type": "message", "content": [{"type": "output_text", "text": "hi"}]},
                    {"type": "function_call", "call_id": "f1", "name": "bash", "arguments": '{"command": "id"}'},
                    "junk"]},
                {"type": "function_call_output", "call_id": "f1", "output": "uid=0"}]
    ep, rows = _split(_read(_write(tmp_path, _v2(messages, config={}))))
    assert rows == []
    assert [(s.action.kind, s.action.code) for s in ep.steps] == [("command", "id")]
    assert ep.steps[0].reasoning == "hi" and ep.steps[0].timestamp == _at(T)
    assert ep.agent == "r-model" and ep.final_observation.text == "uid=0"


def test_a_rejected_2x_reply_is_rebuilt_from_the_format_error(tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"role": "user", "content": "format error!", "extra": {
                    "interrupt_type": "FormatError", "model_response": "I think...", "timestamp": T,
                    "response": {"model": "m9"}}},
                {"role": "assistant", "content": "```bash\nls\n```", "extra": {"actions": [{"command": "ls"}]}},
                {"role": "user", "content": "done", "extra": {"returncode": 0}}]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert [(s.action.kind, s.action.text) for s in ep.steps] == [("message", "I think..."), ("command", None)]
    assert ep.steps[0].timestamp == _at(T) and ep.steps[1].observation.text == "format error!"
    assert ep.env["models"] == ["m9", "cfg-model"]


def test_responses_created_times_only_where_no_message_has_its_own(tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"role": "assistant", "content": "```bash\nls\n```", "extra": {"response": {"created": 100}}},
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": "```bash\npwd\n```", "extra": {"response": {"created": 200}}},
                {"role": "user", "content": "y", "extra": {"response": {"created": 300}}}]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert [s.timestamp for s in ep.steps] == [_at(100), _at(200)]
    messages[2]["timestamp"] = T  # one message with its own time: no `created` is used
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert [s.timestamp for s in ep.steps] == [None, None]


@pytest.mark.parametrize("bad, field", [
    ("text", ": str, expected a message object"),
    ({"role": 3}, ".role: int, expected str"),
    ({"role": "user", "content": {"a": 1}}, ".content: dict, expected str/list"),
    ({"role": "user", "content": "x", "timestamp": True}, ".timestamp: bool, expected int/float/str"),
    ({"role": "assistant", "extra": {"actions": "ls"}}, ".extra.actions: str, expected list"),
    ({"role": "user", "extra": {"returncode": "0"}}, ".extra.returncode: str, expected int"),
    ({"role": "assistant", "tool_calls": ["x"]}, ".tool_calls: expected a list of objects"),
])
def test_a_message_with_a_field_of_the_wrong_type_is_one_row_and_left_out(bad, field, tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"role": "assistant", "content": "```bash\nls\n```"}, bad, {"role": "user", "content": "out"}]
    ep, rows = _split(_read(_write(tmp_path, _v2(messages), "x.traj.json")))
    assert [(r.rule, r.location, r.record_id) for r in rows] == [("bad_record", "x.traj.json", "messages[2]")]
    assert rows[0].reason == f"x.traj.json: messages[2]{field}; the message is left out"
    assert rows[0].snippet == str(bad)[:2000]
    # the pairing of a command with the user message after it stops at the bad message: a plain user message
    assert (ep.final_observation.text, ep.final_observation.kind) == ("out", "text")


def test_an_unknown_role_is_kept_raw(tmp_path):
    messages = [{"role": "user", "content": "task"}, {"role": "critic", "content": "meh"},
                {"role": "assistant", "content": "```bash\nls\n```"}]
    ep, rows = _split(_read(_write(tmp_path, _v2(messages), "u.traj.json")))
    assert [r.rule for r in rows] == ["unknown_content"]
    assert ep.env["unmapped"] == [{"where": "u.traj.json: messages[1]", "role": "critic", "text": "meh",
                                   "raw": {"role": "critic", "content": "meh"}}]
    assert rows[0].reason == ("u.traj.json: messages[1]: role 'critic' is none of system, user, assistant, tool; kept "
                              "raw in env.unmapped")


def _folder(tmp_path, report, name="inst"):
    folder = tmp_path / name
    folder.mkdir()
    messages = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "```bash\nls\n```"}]
    _write(folder, _v2(messages), f"{name}.traj.json")
    if report is not None:
        (folder / "report.json").write_text(report if isinstance(report, str) else json.dumps(report))
    return folder


@pytest.mark.parametrize("report, outcome, reward", [
    ({"inst": {"resolved": True}}, "success", 1.0), ({"resolved": False, "x": 1}, "failure", 0.0),
    ({"other": {"resolved": True}}, "success", 1.0), (None, "unknown", None)])
def test_the_harness_report_is_the_outcome(report, outcome, reward, tmp_path):
    ep, rows = _split(_read(_folder(tmp_path, report)))
    assert rows == [] and (ep.outcome, ep.reward) == (outcome, reward)
    if report is not None:
        assert ep.env["report"]["resolved"] is (outcome == "success")


@pytest.mark.parametrize("report", [{"a": {"resolved": True}, "b": {"resolved": False}}, {"inst": {"resolved": 1}},
                                    [True]])
def test_a_report_without_a_flag_for_the_instance_leaves_the_outcome_unknown(report, tmp_path):
    ep, rows = _split(_read(_folder(tmp_path, report)))
    assert [(r.rule, r.location, r.reason) for r in rows] == [
        ("bad_record", "report.json", "report.json: no `resolved` flag for 'inst'; outcome left unknown")]
    assert ep.outcome == "unknown" and "report" not in ep.env


def test_an_unreadable_report_is_a_row(tmp_path):
    ep, rows = _split(_read(_folder(tmp_path, "{broken")))
    assert [(r.rule, r.location) for r in rows] == [("parse_error", "report.json")] and ep.outcome == "unknown"


def test_a_folder_without_a_trajectory_or_a_file_without_messages_fails_whole(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError) as e:
        _read(tmp_path / "empty")
    assert e.value.rule == "missing_file"
    with pytest.raises(SourceError) as e:
        _read(_write(tmp_path, {"messages": {}}, "m.traj.json"))
    assert (e.value.rule, str(e.value)) == ("bad_record", "m.traj.json: expected an object with a `messages` list")


def test_the_instance_id_from_the_document_or_the_file_name(tmp_path):
    messages = [{"role": "user", "content": "t"}, {"role": "assistant", "content": "```bash\nls\n```"}]
    ep, _ = _split(_read(_write(tmp_path, {**_v2(messages), "instance_id": "given"}, "a.traj.json")))
    assert ep.env["instance_id"] == "given"
    ep, _ = _split(_read(_write(tmp_path, _v2(messages), "b.json")))
    assert "instance_id" not in ep.env


def test_units_claim_trajectories_and_instance_folders_with_a_report():
    heads = {"/r/a/a.traj.json": b'{"info": {"model_stats": {}}}', "/r/a/report.json": b"{}",
             "/r/b.traj.json": b'  {"trajectory_format": "mini-swe-agent-1.1"}', "/r/c.json": b'{"mini_version": 1}',
             "/r/d.json": b'{"info": {"x": 1}}', "/r/e.txt": b'{"mini_version": 1}', "/r/f.json": b"[1]",
             "/r/g/h.traj.json": b'{"mini_version": "1"}', "/r/g/report.json": b"{}"}
    assert minisweagent.units(sorted(heads), heads.__getitem__) == ["/r/a", "/r/b.traj.json", "/r/c.json",
                                                                    "/r/g/h.traj.json"]


def test_messages_that_come_before_any_action_are_rows_naming_them(tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"role": "user", "content": "o", "extra": {"raw_output": "o"}},
                {"role": "tool", "tool_call_id": "c0", "content": "early"},
                {"type": "function_call_output", "call_id": "c9", "output": "early too"},
                {"role": "assistant", "content": ""},
                {"object": "response", "output": []},
                {"role": "user", "content": "bad format", "extra": {"interrupt_type": "FormatError",
                                                                     "model_response": ""}},
                {"type": "reasoning", "content": "a thought"},
                {"role": "exit", "content": "the diff", "extra": {"exit_status": "Submitted"}}]
    records = _read(_write(tmp_path, _v2(messages), "w.traj.json"))
    rows = [r for r in records if isinstance(r, Rejected)]
    assert [r.location for r in rows if r.rule == "unknown_content"] == [
        f"w.traj.json: messages[{i}]" for i in (1, 2, 3, 4, 5, 6, 7, 8)]
    assert (rows[-1].rule, rows[-1].location) == ("empty_episode", "w.traj.json")
    assert "w.traj.json: messages[7]: role 'reasoning' is none of" in rows[6].reason


def test_what_follows_a_result_or_a_reply_is_a_user_message_unless_it_says_it_is_output(tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"role": "assistant", "content": "```bash\nls\n```"},
                {"role": "user", "content": "<returncode>0</returncode>"},
                {"role": "user", "content": "a note"},
                {"role": "assistant", "content": "no command"},
                {"role": "user", "content": "<returncode>4</returncode>x", "extra": {"raw_output": "x"}},
                {"role": "user", "content": "not rebuilt", "extra": {"model_response": "kept out"}},
                {"object": "response", "output": [{"type": "message", "content": "one"},
                                                  {"type": "message", "content": 5}]},
                {"role": "user", "content": "after the response"}]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages, config={}))))
    assert [s.action.kind for s in ep.steps] == ["command", "message", "message"]
    # the result is the command's (terminal), the note after it a user message: mixed kinds merge to text
    assert (ep.steps[1].observation.kind, ep.steps[1].observation.exit_code) == ("text", 0)
    # output said to be output, then a user message that only carries a model response
    assert ep.steps[2].observation.text == "<returncode>4</returncode>x\n\nnot rebuilt"
    assert (ep.steps[2].observation.kind, ep.steps[2].observation.exit_code) == ("text", 4)
    assert ep.steps[2].action.text == "one\n5"
    assert (ep.final_observation.text, ep.final_observation.kind) == ("after the response", "text")


def test_a_result_right_after_a_result_is_not_awaited(tmp_path):
    messages = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "```bash\nls\n```"},
                {"role": "user", "content": "out"}, {"role": "user", "content": "more"}]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert ep.final_observation.text == "out\n\nmore" and ep.final_observation.kind == "text"
    messages[2]["extra"] = {"returncode": 0}
    messages[3]["extra"] = {"returncode": 1}
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert ep.final_observation.kind == "terminal"  # both said they are output


def test_the_models_reasoning_from_the_message_or_the_response(tmp_path):
    def turn(response, **msg):
        return {"role": "assistant", "content": "```bash\nls\n```", **msg, "extra": {"response": response}}

    messages = [{"role": "user", "content": "task"},
                turn({"choices": [{"message": {"reasoning_content": "rc"}}]}),
                turn({"choices": [{"message": {"reasoning": "r"}}]}),
                turn({"choices": [{"message": {"reasoning_content": "rc", "reasoning": "r"}}]}),
                turn({"choices": [{"message": {"reasoning": "r"}}]}, reasoning_content="own"),
                turn({"choices": [{"message": {"reasoning": "   "}}]}),
                turn({"choices": []}), turn({"choices": ["x"]}), turn({"choices": {"message": {"reasoning": "r"}}}),
                turn({"choices": [{"message": "r"}]}), turn({"choices": [{"message": {"reasoning": {"r": 1}}}]})]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    block = "```bash\nls\n```"
    assert [s.reasoning for s in ep.steps] == [f"rc\n\n{block}", f"r\n\n{block}", f"rc\n\n{block}",
                                               f"own\n\n{block}"] + [block] * 6


def test_step_times_from_the_message_or_its_extra_and_created_only_without_either(tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"role": "assistant", "content": "```bash\nls\n```", "timestamp": T},
                {"role": "assistant", "content": "```bash\nls\n```", "extra": {"timestamp": T + 1}},
                {"role": "assistant", "content": "```bash\nls\n```", "extra": {"response": {"created": 9}}}]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert [s.timestamp for s in ep.steps] == [_at(T), _at(T + 1), None]
    del messages[1]["timestamp"], messages[2]["extra"]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert [s.timestamp for s in ep.steps] == [None, None, _at(9)]  # a turn gets its own response's time only


def test_responses_calls_pair_with_outputs_by_call_id(tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"object": "response", "output": [
                    {"type": "function_call", "call_id": "f1", "name": "bash", "arguments": '{"command": "a"}'},
                    {"type": "function_call", "call_id": "f2", "name": "bash", "arguments": '{"command": "b"}'}]},
                {"type": "function_call_output", "call_id": "f2", "output": "out-b"},
                {"type": "function_call_output", "call_id": "f1", "output": "out-a"},
                {"role": "assistant", "content": "```bash\nc\n```", "extra": {"response": {"model": "m1"}}}]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert [s.observation.text for s in ep.steps] == ["task", "out-a", "out-b"]
    assert json.loads(ep.steps[0].action.raw)["type"] == "function_call"
    assert ep.env["models"] == ["cfg-model", "m1"]  # the response item without a model: the configured one


def test_a_format_error_without_a_response_is_the_configured_models(tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"role": "user", "content": "fmt", "extra": {"interrupt_type": "FormatError",
                                                              "model_response": "oops"}},
                {"role": "assistant", "content": "```bash\nls\n```", "extra": {"response": {"model": "m1"}}}]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert ep.env["model_per_step"] == ["cfg-model", "m1"]


def test_a_long_bad_message_keeps_a_snippet_of_2000_characters(tmp_path):
    bad = {"role": 1, "content": "x" * 3000}
    records = _read(_write(tmp_path, _v2([{"role": "user", "content": "t"}, bad])))
    (row,) = [r for r in records if r.rule == "bad_record"]
    assert row.snippet == str(bad)[:2000]


def test_a_report_holding_several_instances_gives_this_ones(tmp_path):
    ep, rows = _split(_read(_folder(tmp_path, {"other": {"resolved": True}, "inst": {"resolved": False}})))
    assert rows == [] and (ep.outcome, ep.reward) == ("failure", 0.0)


def test_info_and_config_that_are_not_objects_are_left_out(tmp_path):
    messages = [{"role": "user", "content": "t"}, {"role": "assistant", "content": "```bash\nls\n```"}]
    ep, _ = _split(_read(_write(tmp_path, {"info": {"config": "cfg", "exit_status": "Submitted"},
                                           "messages": messages})))
    assert ep.terminated and "config" not in ep.env and ep.agent is None
    ep, _ = _split(_read(_write(tmp_path, {"info": ["x"], "messages": messages})))
    assert not ep.terminated and "exit_status" not in ep.env


def test_a_trajectory_that_is_no_json_or_over_the_record_budget_fails_naming_it(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError) as e:
        _read(tmp_path / "empty")
    assert str(e.value) == "no *.traj.json in the instance folder"
    path = tmp_path / "bad.traj.json"
    path.write_text("{nope")
    with pytest.raises(SourceError) as e:
        _read(path)
    assert (e.value.rule, str(e.value).split(":")[0]) == ("parse_error", "bad.traj.json")
    path.write_text(json.dumps(_v2([{"role": "user", "content": "x" * 500}])))
    with pytest.raises(SourceError) as e:
        list(minisweagent.read(Source(fs=LocalFileSystem(), path=str(path), uri="in/bad.traj.json",
                                      put_blob=lambda *a: "", budgets=Budgets(record_bytes=100))))
    assert e.value.rule == "budget_exceeded" and str(e.value).startswith("bad.traj.json: ")


def test_units_leave_reports_and_files_named_like_the_folder_only_when_they_are_trajectories():
    heads = {"/r/a/report.json": b'{"mini_version": "1"}', "/r/inst/inst-runs.json": b'{"mini_version": "1"}',
             "/r/inst/report.json": b"{}"}
    assert minisweagent.units(sorted(heads), heads.__getitem__) == ["/r/inst/inst-runs.json"]


def test_parts_without_text_are_empty_lines(tmp_path):
    messages = [{"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url"}, "end"]},
                {"role": "assistant", "content": "```bash\nls\n```"}]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert ep.task == "look\n\nend"


def test_own_times_in_extra_keep_the_responses_created_out(tmp_path):
    messages = [{"role": "user", "content": "task"},
                {"role": "assistant", "content": "```bash\nls\n```", "extra": {"timestamp": T,
                                                                            "response": {"created": 5}}},
                {"role": "assistant", "content": "```bash\nls\n```", "extra": {"response": {"created": 9}}}]
    ep, _ = _split(_read(_write(tmp_path, _v2(messages))))
    assert [s.timestamp for s in ep.steps] == [_at(T), None]


def test_the_exit_messages_status_when_info_has_none(tmp_path):
    messages = [{"role": "user", "content": "t"}, {"role": "assistant", "content": "```bash\nls\n```"},
                {"role": "exit", "content": "d", "extra": {"exit_status": "Submitted"}}]
    ep, _ = _split(_read(_write(tmp_path, {"info": {"config": {"model": {"model_name": 5}}}, "messages": messages})))
    assert ep.terminated and ep.env["exit_status"] == "Submitted"
    assert ep.agent is None  # a model name that is no string is left out


def test_a_file_unit_reads_no_report_beside_it(tmp_path):
    folder = _folder(tmp_path, {"inst": {"resolved": True}})
    ep, rows = _split(_read(folder / "inst.traj.json"))
    assert rows == [] and ep.outcome == "unknown" and "report" not in ep.env
