"""Real Qwen Code sessions (`~/.qwen/projects/<project>/chats/<session>.jsonl`) that their owners committed with a
copy of their home's `.qwen/` folder, read where they lie in `../shared/samples/qwen-code/` (their repositories
carry no license, so they are never copied here), each against a golden a person read against the raw file
(`texts="hash"`). Four releases, four repositories (the public sessions with tool calls are long, and lie beside
OAuth credentials their owners also committed, which are never laid):

- artas-linux/dotfiles @ 35098a27ef450434fe33247e4a7bcb244ee676f0,
  `.qwen/projects/-home-archbtw/chats/9a578cd0-ad2c-423c-8f19-95412a2d81af.jsonl` ->
  `qwen-code/artas-linux-dotfiles/9a578cd0-ad2c-423c-8f19-95412a2d81af.jsonl`: 0.5.1, three records (the prompt
  "hi", the API's telemetry, the answer of `coder-model` with its usage).
- Suleman-Sehar/ai-textbook @ 40b8c0cb0c153a0f91da7dd5ebc18ffe92ca18b9,
  `.qwen/projects/-home-ai-textbook/chats/71d5c522-1d07-47c5-873b-b730eeefc75c.jsonl` ->
  `qwen-code/suleman-sehar-ai-textbook/71d5c522-1d07-47c5-873b-b730eeefc75c.jsonl`: 0.5.0 on a git branch, two
  prompts ("stop", "exit"), each answered, six records.
- Haniaimraxn/TODO-LIST @ f2a4071a05a708f4c3dfc8849daf14e93d0e0306,
  `.qwen/projects/D--Hack-TODO-LIST/chats/734553eb-442f-4bd2-8002-4cd9ecd958e3.jsonl` ->
  `qwen-code/haniaimraxn-todo-list/734553eb-442f-4bd2-8002-4cd9ecd958e3.jsonl`: 0.9.1 on Windows (`cwd`
  `D:\\Hack TODO LIST`), whose telemetry record also keeps the streamed response's chunks (`response_text`).
  From the same repository, `.qwen/projects/D--Hackathon-Book/chats/c85afb93-5dc4-4bb5-be6e-0f2771b8e976.jsonl` ->
  `qwen-code/haniaimraxn-todo-list/c85afb93-5dc4-4bb5-be6e-0f2771b8e976.jsonl`: 0.5.0 on Windows, 1.5 MB, a long
  spec-kit session with tool calls; too large to read here whole, so its test checks what a person read in its
  first records: two prompts answered, then a slash command's prompt answered by a `todo_write` call and its result.
- sma1kyyy/qwen-extension @ 2373b07402a99c64b387c1f4edbd5bd432ce33b2,
  `.qwen/projects/-home-kirill/chats/09e7e5b8-0f11-45ca-9ae6-d205542e6932.jsonl` ->
  `qwen-code/sma1kyyy-qwen-extension/09e7e5b8-0f11-45ca-9ae6-d205542e6932.jsonl`: 0.17.0, a prompt the API
  refused (401): no model turn, so no episode, one `empty_episode` row keeping the task.

And a recording of an early interactive release in Gemini CLI's layout, which `gemini_cli` reads:

- cercaniaWeb/racompospro @ b551956377bd441ce70a3024272e1f199f4b5763, in the folder
  `.qwen/tmp/1682660f8c8c6e8e6c11d4d6fa2801927955c010c54b5359c50efeea1015d1c5/`,
  `chats/session-2025-11-07T00-07-c1d03777.json` ->
  `qwen-code/cercaniaweb-racompospro/session-2025-11-07T00-07-c1d03777.json`: one prompt (in Spanish) and 14
  `qwen` turns of `coder-model` with their tokens; the recorder of that release kept no tool call (the turns say
  "Let me check..." and the next one's input grew), so each turn is a message step with nothing seen between, and
  the reader says so in `env.calls_not_recorded` (13 turns the model went on from without a prompt).
"""

from __future__ import annotations

import json

from ingest.record import Episode, Rejected
from ingest.swe import gemini_cli, qwen_code
from tests.conftest import REPO
from tests.ingest.golden import check, read_records
from tests.parts import require_shared_sample

SHARED = REPO.parent / "shared" / "samples" / "qwen-code"
GOLDEN = REPO / "tests" / "ingest" / "swe" / "golden"


def _episode(records) -> Episode:
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [r for r in records if isinstance(r, Rejected)] == []
    return ep


def test_a_0_5_1_session_of_one_prompt_and_its_answer():
    path = require_shared_sample(SHARED / "artas-linux-dotfiles" / "9a578cd0-ad2c-423c-8f19-95412a2d81af.jsonl")
    records = read_records(qwen_code, path)
    check(records, GOLDEN / "qwen-code-artas-linux-dotfiles.json", texts="hash")
    ep = _episode(records)
    assert ep.task == "hi" and ep.agent == "coder-model" and ep.platform == "linux" and ep.terminated
    assert [s.action.text for s in ep.steps] == ["Hello! How can I assist you today?"]
    assert ep.env["qwen_code"]["tokens"]["totalTokenCount"] == 11665 and ep.env["qwen_code"]["version"] == "0.5.1"


def test_a_0_5_0_session_of_two_prompts_on_a_branch():
    path = require_shared_sample(SHARED / "suleman-sehar-ai-textbook" / "71d5c522-1d07-47c5-873b-b730eeefc75c.jsonl")
    records = read_records(qwen_code, path)
    check(records, GOLDEN / "qwen-code-suleman-sehar-ai-textbook.json", texts="hash")
    ep = _episode(records)
    assert ep.task == "stop" and [s.observation.text for s in ep.steps] == ["stop", "exit"]
    assert [s.action.kind for s in ep.steps] == ["message", "message"] and ep.terminated
    assert ep.env["qwen_code"]["gitBranch"] == "001-ai-robotics-textbook"
    assert ep.env["qwen_code"]["tokens"]["promptTokenCount"] == 12166 + 12187
    assert len(ep.env["qwen_code"]["system_records"]) == 2


def test_a_0_9_1_session_on_windows():
    path = require_shared_sample(SHARED / "haniaimraxn-todo-list" / "734553eb-442f-4bd2-8002-4cd9ecd958e3.jsonl")
    records = read_records(qwen_code, path)
    check(records, GOLDEN / "qwen-code-haniaimraxn-todo-list.json", texts="hash")
    ep = _episode(records)
    assert ep.platform == "windows" and ep.env["qwen_code"]["cwd"] == "D:\\Hack TODO LIST"
    assert ep.task == "hello" and ep.steps[0].action.text == "Hi there! ٩(◕‿◕｡)۶ How can I assist you today?"
    (telemetry,) = ep.env["qwen_code"]["system_records"]
    assert '"finishReason":"STOP"' in telemetry["systemPayload"]["uiEvent"]["response_text"]


def test_a_0_17_0_session_the_api_refused_is_one_row_keeping_its_task():
    path = require_shared_sample(SHARED / "sma1kyyy-qwen-extension" / "09e7e5b8-0f11-45ca-9ae6-d205542e6932.jsonl")
    records = read_records(qwen_code, path)
    (row,) = records
    assert isinstance(row, Rejected) and row.rule == "empty_episode"
    assert json.loads(row.snippet) == {"outcome": "unknown", "reward": None, "task": "привет"}


def test_an_early_interactive_recording_in_gemini_clis_layout_keeps_its_turns_and_tokens():
    path = require_shared_sample(SHARED / "cercaniaweb-racompospro" / "session-2025-11-07T00-07-c1d03777.json")
    records = read_records(gemini_cli, path)
    check(records, GOLDEN / "qwen-code-cercaniaweb-racompospro.json", texts="hash")
    ep = _episode(records)
    assert ep.task.startswith("Busca en todo el código de EcoDev") and ep.agent == "coder-model" and ep.terminated
    assert len(ep.steps) == 14 and {s.action.kind for s in ep.steps} == {"message"}
    assert [s.observation.kind for s in ep.steps[1:]] == ["none"] * 13  # the calls between were not recorded
    assert ep.steps[-1].action.text.startswith("Perfect! I have successfully created configuration files")
    assert ep.env["gemini_cli"]["tokens"] == {"input": 543030, "output": 7852, "cached": 495140, "thoughts": 0,
                                              "tool": 0, "total": 550882}
    # the recorder of that release writes no call (`recordToolCalls` is never called): said, with the evidence
    unrecorded = ep.env["calls_not_recorded"]
    assert unrecorded["evidence"] == ["13 model turn(s) followed by another with no prompt between"]
    assert len(unrecorded["turns_before_unrecorded_calls"]) == 13
    assert unrecorded["producer"].startswith("Qwen Code 0.1.x (model turns typed `qwen`)")
    assert "calls_not_recorded" in [w["rule"] for w in ep.env["ingest_warnings"]]
    assert ep.platform == "linux" and ep.env["gemini_cli"]["platform"]["assumed"]


def test_a_long_0_5_0_session_opens_with_two_answers_then_a_todo_write_call_and_its_result():
    path = require_shared_sample(SHARED / "haniaimraxn-todo-list" / "c85afb93-5dc4-4bb5-be6e-0f2771b8e976.jsonl")
    (ep,) = [r for r in read_records(qwen_code, path) if isinstance(r, Episode)]
    assert ep.task == "hello" and ep.agent == "coder-model" and ep.platform == "windows"
    assert ep.env["qwen_code"]["version"] == "0.5.0" and ep.env["qwen_code"]["gitBranch"] == "master"
    hello, cleared, todo = ep.steps[:3]
    assert (hello.observation.text, hello.action.kind) == ("hello", "message")
    assert hello.action.text == "Hello! How can I assist you today with your Hackathon Book project?"
    assert (cleared.observation.text, cleared.action.kind) == ("clear", "message")
    assert cleared.action.text == ("The conversation has been cleared. How can I help you with your Hackathon Book "
                                   "project today?")
    assert todo.observation.text.startswith("---\ndescription: Create or update the project constitution")
    assert (todo.action.kind, todo.action.tool_name) == ("tool_call", "todo_write")
    assert todo.reasoning.startswith('I\'ll help you create a constitution document for a book about "Physical AI')
    todos = json.loads(todo.action.arguments)["todos"]
    assert len(todos) == 5 and todos[0] == {"id": "1", "content": "Check if constitution template exists at "
                                            ".specify/memory/constitution.md", "status": "pending"}
    assert str(todo.timestamp) == "2025-12-17 13:50:39.437000+00:00"
    assert ep.steps[3].observation.text.startswith("Todos have been modified successfully.")
