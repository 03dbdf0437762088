"""Producer in the loop: pydantic-ai 2.78.0 runs an agent with a `get_weather` tool (OpenAI provider) against
the scripted model server and saves `ModelMessagesTypeAdapter.dump_json(result.all_messages())`. Two oracles:
the script (every tool call it fixed is an action in order, each followed by what the tool returned; the call
with an empty city raises `ModelRetry`, an error result) and pydantic-ai's own adapter, which reads the saved
file back (`validate_json`): every part it sees is in the episode. Edge cases of older and other part kinds
are hand-made (`test_pydantic_ai_read.py`)."""

import json

from ingest.chat import by_shape, pydantic_ai
from tests.ingest.chat.framework_runs import ANSWER, PLAN, PYDANTIC_AI, TASK, run, scripted_calls, weather
from tests.ingest.traces.read_util import calls, claims, read, results


def _run(tmp_path_factory):
    out, script = run("pydantic-ai", "tools", PYDANTIC_AI, tmp_path_factory)
    assert claims(pydantic_ai, out / "history.json")
    episodes, rejected = read(pydantic_ai, out / "history.json")
    assert rejected == [] and len(episodes) == 1
    return episodes[0], script, json.loads((out / "oracle.json").read_text())


def test_history_has_every_scripted_call_and_result_in_order(tmp_path_factory):
    ep, script, _ = _run(tmp_path_factory)
    assert calls(ep) == scripted_calls(script)
    assert results(ep) == [weather("Paris"), "name a city", weather("Oslo")]
    assert [s.action.kind for s in ep.steps] == ["tool_call"] * 3 + ["message"]
    assert ep.steps[-1].action.text == ANSWER and ep.terminated
    assert ep.task == TASK and ep.agent == "scripted-model-1"
    assert ep.steps[0].reasoning == PLAN
    # the retried call's result is an error; the others are not
    assert [s.observation.is_error for s in ep.steps[1:]] == [None, True, None]
    # the system prompt is what the model was sent as system messages, in that order
    sent = [m["content"] for m in script.requests[0][1]["messages"] if m["role"] == "system"]
    assert ep.env["system_prompt"] == "\n\n".join(sent) and "tool" in sent[-1]
    info = ep.env["pydantic_ai"]
    assert info["finish_reasons"] == ["tool_call", "tool_call", "stop"] and info["providers"] == ["openai"]
    assert info["usage"]["input_tokens"] == 30 and info["usage"]["output_tokens"] == 15


def test_every_part_pydantic_ai_reads_back_is_in_the_episode(tmp_path_factory):
    ep, _, oracle = _run(tmp_path_factory)
    tool_calls = [(name, args) for kind, part, name, args, _, _ in oracle if part == "tool-call"]
    returns = [content for kind, part, _, _, content, _ in oracle if part == "tool-return"]
    texts = [content for kind, part, _, _, content, _ in oracle if kind == "response" and part == "text"]
    assert calls(ep) == tool_calls and results(ep) == returns
    assert [ep.steps[0].reasoning, ep.steps[-1].action.text] == texts
    assert ep.task == next(c for _, part, _, _, c, _ in oracle if part == "user-prompt")
    assert {part for _, part, *_ in oracle} == {"system-prompt", "user-prompt", "text", "tool-call", "tool-return"}


def test_the_history_goes_to_its_reader_before_the_shape_reader(tmp_path_factory):
    out, _ = run("pydantic-ai", "tools", PYDANTIC_AI, tmp_path_factory)
    assert pydantic_ai.INFO.rank < by_shape.INFO.rank
    assert not claims(by_shape, out / "history.json")
