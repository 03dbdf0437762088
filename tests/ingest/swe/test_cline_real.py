"""Real Cline task folders and Cline SDK sessions from public repositories, read where they lie in
`../shared/samples/cline/` (their repositories carry no license, so they are never copied here), each against a
golden a person read against the raw files (`texts="hash"`), but the VS Code session (281 KB, not fetchable here
whole: what its test checks a person read in the file):

- gmfstu/Online-Card-Architecture @ 2e6753c, `exported_conversation_1769053680585/` (`api_conversation_history.json`,
  `ui_messages.json`, `task_metadata.json`, `focus_chain_taskid_1769053680585.md`; the folder's README.md, written
  by its owner, is not laid there) -> `cline/gmfstu-online-card-architecture/1769053680585/`: a VS Code task of
  claude-sonnet-4-5 with native `tool_use` blocks and `thinking`, its results sent back as
  `[tool for '...'] Result:` text: 47 calls, the last `attempt_completion`; no `ts` in the history (no step
  time), usage from `ui_messages.json`.
- mike4567/MRA04242026 @ 7644913, `api_conversation_history.json` (at the repository's root, alone) ->
  `cline/mike4567-mra04242026/api_conversation_history.json`: a long plan/act task (`claude_4_5_opus` through an
  OpenAI-compatible provider) with `use_subagents`, several calls per turn, thirteen completions each followed by
  the user's next request, and a last request left unanswered (not terminated).
- coderkamlesh/cline_agent @ 12795a397f8f2ab288cff515045ced11ed0af4bf, the folder
  `data/sessions/session_1790234093134_wwzcs/` (`session_1790234093134_wwzcs.messages.json` and the session record
  `session_1790234093134_wwzcs.json`; the repository is a copy of its owner's `~/.cline/`, whose `secrets.json` is
  not laid) -> `cline/coderkamlesh-cline-agent/session_1790234093134_wwzcs/`: a session of the Cline desktop app
  (the Cline SDK's agent, `origin.version` 0.0.34, the store Cline CLI 3 writes) on Windows: one prompt, wrapped in
  `<user_input mode="act">` in the record too, answered by `stealth/space-bunny-alpha` without a tool; the app's
  stale-session reconciler marked it `failed` (exit code 1) when its process was gone.
- satyajeetbinwade-cpu/Accounts-setu @ c9d0cae54fe8a6ebc22a3e0cb82c04f3c1c9701f, the folder
  `data/sessions/1787843611507_t3wg2/` (`1787843611507_t3wg2.messages.json`, 281 KB, and `1787843611507_t3wg2.json`)
  -> `cline/satyajeetbinwade-accounts-setu/1787843611507_t3wg2/`: a session of the Cline VS Code extension 4.1.16
  (which writes the same SDK store) on macOS, `zai/glm-5.2` through an OpenAI-compatible provider: a plan-mode
  prompt with a document attached (a `file` block), `read_files` calls, ending on the result of its last
  `read_files` (lines 250-360 of the document); its record says `failed` and cuts the prompt to a title.
"""

from __future__ import annotations

import json

from ingest.record import Episode
from ingest.swe import cline
from tests.conftest import REPO
from tests.ingest.golden import check, read_records
from tests.parts import require_shared_sample

SHARED = REPO.parent / "shared" / "samples" / "cline"
GOLDEN = REPO / "tests" / "ingest" / "swe" / "golden"


def test_a_vscode_task_folder_with_native_tool_calls():
    folder = require_shared_sample(SHARED / "gmfstu-online-card-architecture" / "1769053680585")
    records = read_records(cline, folder)
    check(records, GOLDEN / "cline-gmfstu-online-card-architecture.json", texts="hash")
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert len(ep.steps) == 47 and ep.steps[-1].action.kind == "done" and ep.terminated
    assert ep.agent == "claude-sonnet-4-5-20250929"
    assert ep.env["cline"]["usage"]["tokensOut"] > 0 and ep.env["cline"]["completion"] == ep.steps[-1].action.text


def test_a_history_alone_with_subagents_and_many_completions():
    path = require_shared_sample(SHARED / "mike4567-mra04242026" / "api_conversation_history.json")
    records = read_records(cline, path)
    check(records, GOLDEN / "cline-mike4567-mra04242026.json", texts="hash")
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.steps[0].action.tool_name == "use_subagents" and ep.agent == "claude_4_5_opus"
    assert sum(s.action.kind == "done" for s in ep.steps) == 13 and not ep.terminated
    assert all(s.timestamp is not None for s in ep.steps)


def test_a_cline_desktop_session_on_windows():
    folder = require_shared_sample(SHARED / "coderkamlesh-cline-agent" / "session_1790234093134_wwzcs")
    records = read_records(cline, folder)
    check(records, GOLDEN / "cline-sdk-coderkamlesh-cline-agent.json", texts="hash")
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.task == "hello tum kaunsa llm ho aur knowledge cutoff kya hai?" and ep.platform == "windows"
    assert ep.agent == "stealth/space-bunny-alpha" and [s.action.kind for s in ep.steps] == ["message"]
    assert ep.steps[0].observation.text.startswith('<user_input mode="act">')  # what the model got
    assert not ep.terminated and ep.env["cline"]["session"]["status"] == "failed"
    assert ep.env["cline"]["usage"]["outputTokens"] == 120
    assert ep.env["cline"]["thread"]["agent"] == "lead" and ep.env["cline"]["thread"]["origin"]["source"] == "desktop"


def test_a_cline_vscode_session_with_an_attached_document_on_macos():
    folder = require_shared_sample(SHARED / "satyajeetbinwade-accounts-setu" / "1787843611507_t3wg2")
    records = read_records(cline, folder)
    assert [r for r in records if not isinstance(r, Episode)] == []
    (ep,) = records
    record = json.loads((folder / "1787843611507_t3wg2.json").read_text())
    assert ep.task.startswith("Go through this document , it is the reference for the problem that we are trying")
    assert ep.task.endswith("Accuracy is something we are looking as a top priority")
    assert len(ep.task) > len(record["prompt"]) == 120  # the record keeps a title's length of it
    assert ep.platform == "macos" and ep.agent == "zai/glm-5.2" and not ep.terminated
    assert ep.steps[0].observation.text.startswith('<user_input mode="plan">Go through this document')
    assert '\n<file_content path="/Users/satyajeetbinwade/Desktop/Setu_Implementation_Reference.md">\n# Setu — ' \
        'Implementation Reference for Cline + Sarvam-105B' in ep.steps[0].observation.text
    last = ep.steps[-1].action
    assert last.tool_name == "read_files" and json.loads(last.arguments) == {"files": [
        {"end_line": 360, "path": "/Users/satyajeetbinwade/Desktop/Setu_Implementation_Reference.md",
         "start_line": 250}]}
    (result,) = json.loads(ep.final_observation.text)
    assert result["success"] and result["result"].startswith("250 |     status VARCHAR(20) DEFAULT 'sent'")
    assert all(s.timestamp is not None for s in ep.steps)
    assert ep.env["cline"]["session"]["status"] == "failed" and ep.env["cline"]["usage"]["inputTokens"] == 1026700
    assert ep.env["cline"]["thread"]["origin"] == {"source": "vscode", "mode": "user",
                                                   "sessionId": "1787843611507_t3wg2", "version": "4.1.16"}
