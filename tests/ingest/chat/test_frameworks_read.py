"""Hand-made edge cases of the smolagents and pydantic-ai readers, in the layouts their sources define
(smolagents' `memory.py` at 1.15 / 1.17 / 1.26, pydantic-ai's `messages.py` at 1.x and 2.x): what the producer
runs do not reach (errors, retries without a tool, thinking, output tools, unknown fields and parts)."""

import json

from ingest.chat import pydantic_ai, smolagents
from tests.ingest.traces.read_util import calls, claims, read

TASK = {"task": "Find the weather.", "task_images": None}


def _action(n, calls=(), **fields):
    return {"step_number": n, "timing": {"start_time": 1767225600.0 + n, "end_time": None, "duration": None},
            "model_input_messages": None, "tool_calls": [
                {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
                for i, (name, args) in enumerate(calls)],
            "error": None, "model_output_message": None, "model_output": None, "observations": None,
            "action_output": None, "token_usage": None, "is_final_answer": False, **fields}


def _write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def test_smolagents_errors_are_error_results_and_max_steps_is_a_failure(tmp_path):
    steps = [TASK,
             _action(1, model_output="I am not sure.", error={"type": "AgentParsingError", "message": "no call"}),
             _action(2, [("get_weather", {"city": "Rome"})],
                     error={"type": "AgentToolExecutionError", "message": "service down"}),
             _action(3, [("get_weather", {"city": "Rome"})], observations="Rainy.",
                     error={"type": "AgentMaxStepsError", "message": "Reached max steps."})]
    # 1.20's RunResult dataclass (`asdict`) holds the steps under `messages`
    path = _write(tmp_path, "run.json", {"output": None, "state": "max_steps_error", "messages": steps,
                                         "token_usage": None, "timing": {"start_time": 1767225600.0}})
    assert claims(smolagents, path)
    (ep,), rejected = read(smolagents, path)
    assert rejected == []
    assert [s.action.kind for s in ep.steps] == ["message", "tool_call", "tool_call"]
    assert ep.steps[1].observation.is_error and "no call" in ep.steps[1].observation.text
    assert ep.steps[2].observation.text == "AgentToolExecutionError: service down"
    assert ep.steps[2].observation.is_error
    assert ep.final_observation.text.startswith("Rainy.") and "Reached max steps." in ep.final_observation.text
    assert ep.outcome == "failure" and not ep.terminated and ep.key == ""
    assert ep.env["smolagents"]["run_result"]["state"] == "max_steps_error"
    assert ep.steps[0].timestamp.isoformat() == "2026-01-01T00:00:01+00:00"


def test_smolagents_unknown_fields_and_items_are_kept_with_a_warning(tmp_path):
    steps = [TASK, _action(1, [("final_answer", {"answer": "Sunny."})], is_final_answer=True, new_field=7,
                           input_token_count=3, output_token_count=4), 42]
    path = _write(tmp_path, "steps.json", steps)
    (ep,), rejected = read(smolagents, path)
    assert [r.rule for r in rejected] == ["unknown_content", "unknown_content"]
    assert ep.env["smolagents"]["unknown_fields"] == [{"where": "steps[1]", "fields": {"new_field": 7}},
                                                      {"where": "steps[2]", "step": 42}]
    assert ep.steps[0].action.kind == "done" and ep.steps[0].action.text == "Sunny." and ep.terminated
    assert ep.env["smolagents"]["steps"][1]["token_usage"] == {"input_tokens": 3, "output_tokens": 4}


def test_smolagents_document_without_steps_is_a_bad_record(tmp_path):
    path = _write(tmp_path, "other.json", {"task_images": None, "something": 1})
    episodes, rejected = read(smolagents, path)
    assert episodes == [] and [r.rule for r in rejected] == ["bad_record"]


def _request(*parts, **fields):
    return {"kind": "request", "parts": list(parts), **fields}


def _response(*parts, **fields):
    return {"kind": "response", "parts": list(parts), "model_name": "m-1", "timestamp": "2026-01-01T00:00:00Z",
            **fields}


def test_pydantic_ai_1x_retries_thinking_and_the_output_tool(tmp_path):
    history = [
        _request({"part_kind": "user-prompt", "content": ["Weather in Rome?", {"kind": "image-url", "url": "u"}]}),
        _response({"part_kind": "thinking", "content": "Use the tool."},
                  {"part_kind": "tool-call", "tool_name": "get_weather", "args": {"town": "Rome"},
                   "tool_call_id": "a"}),
        _request({"part_kind": "retry-prompt", "tool_name": "get_weather", "tool_call_id": "a",
                  "content": [{"type": "missing", "loc": ["city"], "msg": "Field required"}]}),
        _response({"part_kind": "tool-call", "tool_name": "get_weather", "args": '{"city": "Rome"}',
                   "tool_call_id": "b"}),
        _request({"part_kind": "tool-return", "tool_name": "get_weather", "tool_call_id": "b", "content": {"t": 20}}),
        _response({"part_kind": "tool-call", "tool_name": "final_result", "args": {"summary": "Warm."},
                   "tool_call_id": "c"}),
        _request({"part_kind": "retry-prompt", "content": "Say more."}),
    ]
    path = _write(tmp_path, "history.json", history)
    assert claims(pydantic_ai, path)
    (ep,), rejected = read(pydantic_ai, path)
    assert rejected == []
    assert ep.task == "Weather in Rome?\n[image-url]"
    assert ep.env["pydantic_ai"]["media"] == [{"where": "[0].parts[0]", "item": {"kind": "image-url", "url": "u"}}]
    assert calls(ep) == [("get_weather", {"town": "Rome"}), ("get_weather", {"city": "Rome"})]
    assert ep.steps[0].reasoning == "Use the tool."
    assert ep.steps[1].observation.is_error and "Field required" in ep.steps[1].observation.text
    assert ep.steps[2].observation.text == '{"t":20}'
    assert ep.steps[2].action.kind == "done" and json.loads(ep.steps[2].action.text) == {"summary": "Warm."}
    assert ep.final_observation.text == "Say more."  # feedback with no tool: what the model was told next
    assert not ep.terminated  # the history ends on a request


def test_pydantic_ai_unknown_parts_are_kept_and_a_jsonl_holds_a_history_per_line(tmp_path):
    one = [_request({"part_kind": "user-prompt", "content": "Hi"}),
           _response({"part_kind": "text", "content": "Hello."}, {"part_kind": "speech", "data": "…"})]
    two = {"messages": [_request({"part_kind": "user-prompt", "content": "Bye"}),
                        _response({"part_kind": "text", "content": "Bye."})], "user": "u-2"}
    path = _write(tmp_path, "histories.jsonl", json.dumps(one) + "\n" + json.dumps(two) + "\nnot json\n")
    assert claims(pydantic_ai, path)
    episodes, rejected = read(pydantic_ai, path)
    assert [r.rule for r in rejected] == ["parse_error", "unknown_content"]
    assert [ep.key for ep in episodes] == ["line 1", "line 2"]
    assert episodes[0].env["pydantic_ai"]["unknown_parts"][0]["part"]["part_kind"] == "speech"
    assert episodes[1].env["record"] == {"user": "u-2"} and episodes[1].terminated
    assert [ep.steps[0].action.text for ep in episodes] == ["Hello.", "Bye."]


def test_smolagents_step_lists_by_agent_with_their_class_names_are_an_episode_each(tmp_path):
    """A saving script that writes each step's class beside `dict()` and keeps a manager's and a managed
    agent's memory side by side (`{"managerAgent": [{"__class__": "TaskStep", ...}, ...], ...}`)."""
    code = [("python_interpreter", "print(search('x'))")]
    doc = {"managerAgent": [{"__class__": "TaskStep", **TASK},
                            {"__class__": "ActionStep", **_action(1, code, observations="found x")}],
           "searchAgent": [{"__class__": "TaskStep", "task": "Search x.", "task_images": None},
                           {"__class__": "PlanningStep", "plan": "Search.", "model_input_messages": [],
                            "model_output_message": None, "timing": None, "token_usage": None},
                           {"__class__": "ActionStep", **_action(1, [("final_answer", {"answer": "x"})],
                                                                 is_final_answer=True)}]}
    path = _write(tmp_path, "memory.json", doc)
    assert claims(smolagents, path)
    episodes, rejected = read(smolagents, path)
    assert rejected == []
    manager, searcher = episodes
    assert (manager.key, searcher.key) == ("managerAgent", "searchAgent")
    assert manager.steps[0].action.kind == "code" and manager.steps[0].action.code == "print(search('x'))"
    assert manager.final_observation.text == "found x" and not manager.terminated
    assert searcher.task == "Search x." and searcher.steps[0].reasoning == "Search."
    assert searcher.steps[0].action.kind == "done" and searcher.terminated


def test_smolagents_benchmark_line_with_an_error_and_a_call_that_is_no_literal(tmp_path):
    def msg(role, text):
        return {"role": role, "content": [{"type": "text", "text": text}], "tool_calls": None}
    steps = [msg("system", "You are an agent."), msg("user", "New task:\nFind x."),
             msg("assistant", "Let me search."),
             msg("tool-call", "Calling tools:\n[{'id': 'c1', 'type': 'function', 'function': {'name': 'search', "
                              "'arguments': {'q': 'x'}}}]"),
             msg("tool-response", "Call id: c1\nError:\nsearch is down\nNow let's retry"),
             msg("tool-call", "Calling tools:\n[__import__('os')]")]
    line = {"model_id": "m", "agent_action_type": "tool-calling", "question": "Find x.", "intermediate_steps": steps}
    path = _write(tmp_path, "answers.jsonl", json.dumps(line) + "\n" + json.dumps({"agent_action_type": "code"}))
    assert claims(smolagents, path)
    episodes, rejected = read(smolagents, path)
    assert [r.rule for r in rejected] == ["unknown_content", "bad_record"]
    (ep,) = episodes
    assert calls(ep) == [("search", {"q": "x"})] and ep.steps[0].reasoning == "Let me search."
    assert ep.final_observation.is_error and "search is down" in ep.final_observation.text
    # the text that is no literal list is kept as it was written, never evaluated
    assert ep.env["unmapped"][0]["raw"]["content"][0]["text"].endswith("[__import__('os')]")
    assert ep.env["system_prompt"] == "You are an agent."


def test_smolagents_step_whose_tool_raised_keeps_its_call_read_back_from_the_error(tmp_path):
    """A step that kept no `tool_calls`, only the error naming the call (as 1.21's ToolCallingAgent memory did): the
    call is read from the error's literal (never evaluated), marked `action_inferred`, its error the result; a
    step with neither output nor call whose error names no call is no step: its error is seen before the next."""
    raised = ("Error executing tool 'python_interpreter' with arguments {'code': \"import os: print(1)\"}: "
              "InterpreterError: Import of os is not allowed.")
    steps = [TASK, _action(1, error={"type": "AgentToolExecutionError", "message": raised}),
             _action(2, [("python_interpreter", {"code": "print(2)"})], observations="2"),
             _action(3, error={"type": "AgentParsingError", "message": "no call in the output"}),
             _action(4, [("final_answer", {"answer": "2"})], is_final_answer=True, action_output="2")]
    path = _write(tmp_path, "memory.json", steps)
    (ep,), rejected = read(smolagents, path)
    assert [(s.action.kind, s.action_inferred) for s in ep.steps] == [("code", True), ("code", False),
                                                                        ("done", False)]
    assert "no call in the output" in ep.steps[2].observation.text  # step 3's error, before the answer
    assert ep.steps[0].action.code == "import os: print(1)" and ep.steps[1].action.code == "print(2)"
    assert ep.steps[1].observation.is_error and "Import of os is not allowed" in ep.steps[1].observation.text
    assert json.loads(ep.steps[0].action.raw)["read_from"] == "steps[1]"
    assert ep.terminated and [(r.rule, r.location) for r in rejected] == [("unknown_content", "steps[3]")]
