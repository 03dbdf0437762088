"""LangChain's message dicts written at test time: each langchain-core release (its own venv under
`.venv/producers/langchain-core-<version>/`, `make setup-test`) saves an agent's conversation with
`messages_to_dict` (the list FileChatMessageHistory keeps: tool calls, a parallel pair, an error result), and its
own `messages_from_dict` reading of the file is the oracle: every call, its arguments and its result is a step
of the one episode the shape reader makes of it (`producers/langchain_history.py`)."""

import json
import subprocess
from pathlib import Path

import pytest

from ingest.chat import by_shape
from ingest.record import Episode, Rejected
from tests.ingest.golden import read_records
from tests.ingest.producers import PRODUCERS
from tests.parts import require

VERSIONS = ("0.3.86", "1.8.0")
SCRIPT = Path(__file__).parent / "producers" / "langchain_history.py"


def _run(version: str, *args: str) -> str:
    venv = PRODUCERS / f"langchain-core-{version}"
    require(f"langchain-core {version} in {venv}", (venv / ".installed").exists())
    done = subprocess.run([str(venv / "bin" / "python"), str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("version", VERSIONS)
def test_messages_to_dict_histories_read_as_langchain_reads_them(version, tmp_path):
    path = tmp_path / "history.json"
    _run(version, "write", str(path))
    oracle = json.loads(_run(version, "read", str(path)))
    records = read_records(by_shape, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert ep.env["chat_shape"]["shape"] == "langchain"
    calls = [c for m in oracle for c in m["tool_calls"]]
    results = {m["tool_call_id"]: m for m in oracle if m["type"] == "tool"}
    tool_steps = [s for s in ep.steps if s.action.kind == "tool_call"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in tool_steps] == \
        [(c["name"], c["args"]) for c in calls]
    answers = [ep.steps[i + 1].observation if i + 1 < len(ep.steps) else ep.final_observation
               for i, s in enumerate(ep.steps) if s.action.kind == "tool_call"]
    assert [(o.text, bool(o.is_error)) for o in answers] == \
        [(results[c["id"]]["content"], results[c["id"]]["status"] == "error") for c in calls]
    assert ep.steps[-1].action.kind == "message" and ep.steps[-1].action.text == oracle[-1]["content"]
    assert ep.task == oracle[1]["content"] and ep.env["system_prompt"] == oracle[0]["content"]
    assert ep.steps[0].reasoning == oracle[2]["content"]
