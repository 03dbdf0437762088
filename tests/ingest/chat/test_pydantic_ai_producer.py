"""Producer in the loop: pydantic-ai 1.107.10 (the last 1.x) and 2.78.0 run an agent with a `get_weather` tool
(OpenAI provider) against the scripted model server and save `ModelMessagesTypeAdapter.dump_json(
result.all_messages())`. Two oracles: the script (every tool call it fixed is an action in order, each followed
by what the tool returned; the call with an empty city raises `ModelRetry`: an error result, a `retry-prompt`
part in 1.x and the call's `tool-return` with `outcome: retried` in 2.x) and pydantic-ai's own adapter, which reads
the saved file back (`validate_json`): every part it sees is in the episode. Edge cases of other part kinds are
hand-made (`test_frameworks_read.py`)."""

import json

import pytest

from ingest.chat import by_shape, pydantic_ai
from tests.ingest.chat.framework_runs import ANSWER, PLAN, PYDANTIC_AI, TASK, run, scripted_calls, weather
from tests.ingest.traces.read_util import calls, claims, read, results


def _run(tmp_path_factory, version):
    out, script = run("pydantic-ai", "tools", version, tmp_path_factory)
    assert claims(pydantic_ai, out / "history.json") and not claims(by_shape, out / "history.json")
    episodes, rejected = read(pydantic_ai, out / "history.json")
    assert rejected == [] and len(episodes) == 1
    return episodes[0], script, json.loads((out / "oracle.json").read_text())


@pytest.mark.parametrize("version", PYDANTIC_AI)
def test_history_has_every_scripted_call_and_result_in_order(tmp_path_factory, version):
    ep, script, _ = _run(tmp_path_factory, version)
    assert calls(ep) == scripted_calls(script)
    assert results(ep) == [weather("Paris"), "name a city", weather("Oslo")]
    assert [s.action.kind for s in ep.steps] == ["tool_call"] * 3 + ["message"]
    assert ep.steps[-1].action.text == ANSWER and ep.terminated
    assert ep.task == TASK and ep.agent == "scripted-model-1" and ep.domain == "mcp"
    assert ep.steps[0].reasoning == PLAN
    # the retried call's result is an error; the others are not
    assert [s.observation.is_error for s in ep.steps[1:]] == [None, True, None]
    # the system prompt is what the model was sent as system messages, in that order
    sent = [m["content"] for m in script.requests[0][1]["messages"] if m["role"] == "system"]
    assert ep.env["system_prompt"] == "\n\n".join(sent) and "tool" in sent[-1]
    info = ep.env["pydantic_ai"]
    assert info["finish_reasons"] == ["tool_call", "tool_call", "stop"] and info["providers"] == ["openai"]
    assert info["usage"]["input_tokens"] == 30 and info["usage"]["output_tokens"] == 15


@pytest.mark.parametrize("version", PYDANTIC_AI)
def test_every_part_pydantic_ai_reads_back_is_in_the_episode(tmp_path_factory, version):
    ep, _, oracle = _run(tmp_path_factory, version)
    tool_calls = [(name, args) for kind, part, name, args, _, _ in oracle if part == "tool-call"]
    returns = [content for kind, part, _, _, content, _ in oracle if part in ("tool-return", "retry-prompt")]
    texts = [content for kind, part, _, _, content, _ in oracle if kind == "response" and part == "text"]
    assert calls(ep) == tool_calls and results(ep) == returns
    assert [ep.steps[0].reasoning, ep.steps[-1].action.text] == texts
    assert ep.task == next(c for _, part, _, _, c, _ in oracle if part == "user-prompt")
    retry = {"retry-prompt"} if version.startswith("1.") else set()
    assert {part for _, part, *_ in oracle} == {"system-prompt", "user-prompt", "text", "tool-call",
                                                "tool-return"} | retry
