"""The vendors' SDKs write the conversations at test time: in their own venv (`.venv/producers/anthropic-...-
openai-...-google-genai-...`, `make setup-test`) a small agent loop per SDK (Anthropic Messages, OpenAI Responses,
Gemini `generate_content`) calls the scripted model server, runs two tools (one fails) and saves its conversation
as apps do, the SDK's own types dumped (`producers/sdk_histories.py`). The loop's record of what it ran and the
server's record of what each request carried are the oracle: each file is one episode of the shape reader with
every call, its arguments, its result (the failure an error where the shape says so) and the answer."""

import json
import subprocess
from pathlib import Path

import pytest

from ingest.chat import by_shape
from ingest.record import Episode, Rejected
from tests.ingest.golden import read_records
from tests.ingest.producers import PRODUCERS
from tests.parts import require
from tests.scripted_model_server import Call, ScriptedModelServer, Turn, answer

VENV = PRODUCERS / "anthropic-2.17.0-openai-3.63.0-google-genai-3.6.1"
SCRIPT = Path(__file__).parent / "producers" / "sdk_histories.py"
ANSWER = "The notes say: buy milk."
TURNS = [Turn(calls=(Call("read_file", {"path": "notes.txt"}), Call("stat", {"path": "missing.txt"}))),
         answer(ANSWER)]
# file -> (shape, protocol of its requests, whether the shape can say a result failed)
FILES = {"anthropic": ("anthropic", "anthropic", True), "responses": ("openai_responses", "responses", False),
         "gemini": ("gemini", "gemini", True)}


@pytest.fixture(scope="module")
def histories(tmp_path_factory):
    require(f"the vendors' SDKs in {VENV}", (VENV / ".installed").exists())
    out = tmp_path_factory.mktemp("sdk-histories")
    with ScriptedModelServer(TURNS) as server:
        done = subprocess.run([str(VENV / "bin" / "python"), str(SCRIPT), server.url, str(out)], capture_output=True,
                              text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-3000:]
        requests = list(server.agent_requests())
    return out, json.loads(done.stdout.splitlines()[-1]), requests


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_sdks_saved_conversation_reads_as_the_loop_ran_it(name, histories):
    out, oracle, requests = histories
    shape, protocol, says_failure = FILES[name]
    ran = oracle["ran"][name]
    # the server saw each result the loop sent back (it keeps Gemini's `{"error": ...}` response as JSON text)
    sent = [r for req in requests if req.protocol == protocol for r in req.results]
    assert len(sent) == len(ran) and all(c["output"] in r.output for r, c in zip(sent, ran))
    records = read_records(by_shape, out / f"{name}.json")
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert ep.env["chat_shape"]["shape"] == shape and ep.task == oracle["task"]
    calls = [s for s in ep.steps if s.action.kind == "tool_call"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in calls] == \
        [(c["name"], c["arguments"]) for c in ran]
    results = [ep.steps[i + 1].observation for i, s in enumerate(ep.steps) if s.action.kind == "tool_call"]
    assert [o.text for o in results] == [c["output"] for c in ran]
    assert [bool(o.is_error) for o in results] == [c["is_error"] and says_failure for c in ran]
    assert (ep.steps[-1].action.kind, ep.steps[-1].action.text) == ("message", ANSWER)
