"""Real Cline task folders and a Cline SDK session from public repositories, read where they lie in `../shared/samples/cline/` (their
repositories carry no license, so they are never copied here), each against a golden a person read against the
raw files (`texts="hash"`):

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
"""

from __future__ import annotations

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
