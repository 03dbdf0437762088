"""The smolagents reader on answers files its own benchmark script wrote in a real run with gpt-4o (bundled, Apache-2.0:
see `samples/chat/smolagents/huggingface-smolagents/PROVENANCE.md`), and on memory dumps a second repository's app
saved (no license: read where ../shared lays them), against goldens a person read against them."""

import ast
import json

import pytest

from ingest.chat import smolagents
from ingest.record import Episode, Rejected
from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.ingest.golden import read_records
from tests.ingest.traces.read_util import claims
from tests.parts import SHARED, require_shared_sample

GOLDEN = golden.Path(__file__).parent / "golden"
RUNS = SAMPLES / "chat" / "smolagents" / "huggingface-smolagents"
TOOL_CALLING = RUNS / "gpt-4o__tool-calling__math__2025-07-24.jsonl"
CODE = RUNS / "gpt-4o__code__math__2025-07-24.jsonl"
_CALLING = "Calling tools:\n"
_RAISED = "Error:\nError executing tool '"


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _calls_a_person_counts(record: dict) -> list[tuple[str, bool]]:
    """Each call of a run in order, with whether only its error names it: the calls its `tool-call` messages list,
    and the call a step kept no record of but whose error says "Error executing tool '<name>' with arguments"."""
    calls = []
    for message in record["intermediate_steps"]:
        text = message["content"][0]["text"] if message["content"] else ""
        if message["role"] == "tool-call":
            calls += [(c["function"]["name"], False) for c in ast.literal_eval(text[len(_CALLING):])]
        elif message["role"] == "tool-response" and text.startswith(_RAISED):
            calls.append((text[len(_RAISED):].split("'")[0], True))
    return calls


def test_a_tool_calling_run_keeps_the_calls_whose_tool_raised_read_back_from_their_errors():
    """What a person counts: 50 questions, each a run ending on `final_answer`; 148 calls, 44 of them a
    `python_interpreter` call that raised (the step kept only the error naming the call and its code). They were
    "a tool result before any action" rows (43) or glued to the step before; now each is its own step, marked
    `action_inferred`, its error what the agent saw next."""
    assert claims(smolagents, TOOL_CALLING)
    records = read_records(smolagents, TOOL_CALLING)
    assert [r for r in records if isinstance(r, Rejected)] == []
    episodes = [r for r in records if isinstance(r, Episode)]
    lines = _lines(TOOL_CALLING)
    assert len(episodes) == len(lines) == 50
    for episode, line in zip(episodes, lines):
        assert [(s.action.tool_name, s.action_inferred) for s in episode.steps] == _calls_a_person_counts(line)
        assert episode.terminated and episode.steps[-1].action.kind == "done"
        assert episode.agent == "gpt-4o" and episode.task == line["question"]
    assert sum(len(e.steps) for e in episodes) == 148
    assert sum(s.action_inferred for e in episodes for s in e.steps) == 44
    # "In right triangle ABC ... What is tan A?": sympy is not allowed, then plain code, then the answer 2
    first, retry, answer = episodes[1].steps
    assert first.action_inferred and first.action.kind == "code"
    assert first.action.code.startswith("from sympy import symbols, solve, tan, Eq\n")
    assert retry.observation.text.startswith("Error:\nError executing tool 'python_interpreter'")
    assert "Import from sympy is not allowed" in retry.observation.text
    assert retry.action.code.startswith("import math\n") and not retry.action_inferred
    assert (answer.action.kind, answer.action.text) == ("done", "2") == ("done", lines[1]["answer"])
    golden.check(records, GOLDEN / "smolagents-huggingface-tool-calling-math.json", texts="hash")


def test_a_code_agent_run_ended_when_its_last_code_called_final_answer():
    """What a person counts: 50 questions, 127 model turns: 116 code blobs and 11 replies with no code in them
    (the agent answered "Error in code parsing"); every run's last code calls `final_answer(...)` and ran, so
    each run ended (the answers file keeps no `action_output`: the code says it)."""
    records = read_records(smolagents, CODE)
    assert [r for r in records if isinstance(r, Rejected)] == []
    episodes = [r for r in records if isinstance(r, Episode)]
    assert len(episodes) == 50 and all(e.terminated for e in episodes)
    kinds = [s.action.kind for e in episodes for s in e.steps]
    assert (kinds.count("code"), kinds.count("message"), len(kinds)) == (116, 11, 127)
    for episode, line in zip(episodes, _lines(CODE)):
        written = [c["function"]["arguments"] for m in line["intermediate_steps"] if m["role"] == "tool-call"
                   for c in ast.literal_eval(m["content"][0]["text"][len(_CALLING):])]
        assert [s.action.code for s in episode.steps if s.action.kind == "code"] == written
        assert "final_answer(" in episode.steps[-1].action.code
    golden.check(records, GOLDEN / "smolagents-huggingface-code-math.json", texts="hash")


# logankud/prymal-agent (no license): a Slack analytics copilot whose chat loop saved its manager CodeAgent's
# memory after each answer, `json.dump(manager_agent.memory.get_full_steps(), f, indent=4)` (`agent.py` at
# 964dfbaba12f46667546f694d40bf8647906c530). smolagents 1.1x's `ActionStep.dict()` keeps the `ChatMessage` object
# under `model_output_message`, so the dump raised there and left the file cut after that key, at both commits
# that saved one:
# - 964dfbaba12f46667546f694d40bf8647906c530 (2025-05-26), `agent_memory_steps.json`
#   -> ../shared/samples/chat/smolagents/prymal-agent/964dfba/agent_memory_steps.json
# - da7258ae89cff9c1893d40357e72bfbc0f944295 (2025-06-02), `agent_memory_steps.json`
#   -> ../shared/samples/chat/smolagents/prymal-agent/da7258a/agent_memory_steps.json
PRYMAL = SHARED / "samples" / "chat" / "smolagents" / "prymal-agent"
# what a person counts in each: (the task, the code of the step's one `python_interpreter` call, its start time)
PRYMAL_COUNTED = {
    "964dfba": ("how are you?", "final_answer(\"I'm an AI, so I don't have feelings, but I'm here to help you! How "
                "can I assist you today?\")", 1748288694.8840923),
    "da7258a": ("what's today?", "import datetime\ntoday = datetime.date.today()\nfinal_answer(today)",
                1748289765.4649763),
}


@pytest.mark.parametrize("commit", sorted(PRYMAL_COUNTED))
def test_a_memory_dump_cut_where_smolagents_could_not_serialize_keeps_the_task_and_the_code(commit):
    """What a person counts: a `TaskStep` (the user's question, `task_images: null`), then one `ActionStep` in
    1.1x's layout (`step`, `start_time`, `end_time`, `duration`) whose one call is the CodeAgent's code calling
    `final_answer(...)`; the file stops after `"model_output_message": ` (nothing of the model's text, the
    observations or the answer that ran). It was one `parse_error` row and nothing read; now the task and the code
    are an episode, not ended (the file does not say the code ran), and a `truncated_file` row says where it
    stops."""
    path = require_shared_sample(PRYMAL / commit / "agent_memory_steps.json")
    assert claims(smolagents, path)
    records = read_records(smolagents, path)
    [row] = [r for r in records if isinstance(r, Rejected)]
    [episode] = [r for r in records if isinstance(r, Episode)]
    task, code, started = PRYMAL_COUNTED[commit]
    assert row.rule == "truncated_file" and "1 whole steps and the fields of step 1 before `model_output_message`" \
        in row.reason
    assert episode.task == task and [s.action.kind for s in episode.steps] == ["code"]
    assert episode.steps[0].action.code == code and episode.steps[0].observation.text == task
    assert abs(episode.steps[0].timestamp.timestamp() - started) < 1e-3  # the step's `start_time`, to the microsecond
    assert not episode.terminated and episode.outcome == "unknown" and episode.domain == "terminal"
    cut = episode.env["smolagents"]["cut"]
    assert cut["cut_at"] == "model_output_message" and cut["whole_steps"] == 1 and cut["at_byte"] == \
        path.stat().st_size
    assert cut["cut_step_fields"] == ["duration", "end_time", "error", "model_input_messages", "start_time", "step",
                                      "tool_calls"]
    assert "Analyst" in episode.env["system_prompt"]  # the managed agent the prompt names, from the step's inputs
    golden.check(records, GOLDEN / f"smolagents-prymal-agent-{commit}.json", texts="hash", env_keys=("smolagents",))
