"""The smolagents reader on answers files its own benchmark script wrote in a real run with gpt-4o (bundled, Apache-2.0:
see `samples/chat/smolagents/huggingface-smolagents/PROVENANCE.md`), against goldens a person read against them."""

import ast
import json

from ingest.chat import smolagents
from ingest.record import Episode, Rejected
from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.ingest.golden import read_records
from tests.ingest.traces.read_util import claims

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
