"""Claude Code itself, at two releases, writes the sessions the reader reads: `claude -p` runs against the
scripted model server (`tests/scripted_model_server.py`) in a temporary workspace and HOME, executes every
tool call of the script (list, read, write, a command that fails, a subagent) and writes
`~/.claude/projects/<project>/<session>.jsonl` with the subagent in `<session>/subagents/agent-<id>.jsonl`.
The script is the oracle: the episodes hold every call it asked for with the arguments the agent sent, the
result the agent recorded is what the server received, in order; the model, the task and the final answer.
Claude Code's own `--output-format json` report (session id, result) is a second oracle.

2.1.220 writes user / assistant lines, `attachment`, `queue-operation` and `last-prompt`; 2.1.332, the current
release, adds its API request records (`api-request`, `api-request-shape`, `api-request-blob`), `atis-latch`,
`tools-used` and `cost-state`: each is read with a known meaning, none is a warning.
"""

from __future__ import annotations

import json

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import claude_code
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import CLAUDE_MODEL, CLAUDE_PROMPT, NOTES, SUBAGENT_PROMPT, cli_run, played

VERSIONS = ("2.1.220", "2.1.332")  # the Makefile's CLAUDE_CODE_VERSIONS


@pytest.fixture(scope="module", params=VERSIONS)
def cli(request, tmp_path_factory):
    return cli_run("claude-code", request.param, tmp_path_factory)


def _sessions(cli):
    """(the session file, its subagents folder, the subagent's transcript)."""
    project = next((cli.home / ".claude" / "projects").iterdir())
    main = list(project.glob("*.jsonl"))
    subagents = list(project.glob("*/subagents/agent-*.jsonl"))
    assert len(main) == 1 and len(subagents) == 1, (main, subagents)
    return main[0], subagents[0].parent, subagents[0]


def _episode(path) -> Episode:
    records = read_records(claude_code, path)
    assert [r for r in records if isinstance(r, Rejected)] == []  # no warning, no unknown record type
    episodes = [r for r in records if isinstance(r, Episode)]
    assert len(episodes) == 1
    return episodes[0]


def _recorded(text: str | None) -> str:
    """What the model was sent of a result, less the reminders the CLI appends to it (attachments)."""
    return (text or "").split("\n\n<system-reminder>", 1)[0].rstrip()


def _check_against_script(ep: Episode, calls) -> None:
    tool_steps = [s for s in ep.steps if s.action.kind != "message"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in tool_steps] == \
        [(c.name, c.arguments) for c in calls]
    after = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    for i, c in enumerate(calls):
        assert c.seen is not None, f"the agent never sent the result of {c.name}"
        assert _recorded(after[i].text) == _recorded(c.seen), c.name
        assert bool(after[i].is_error) == bool(c.is_error), c.name


def test_the_session_holds_every_scripted_call_with_its_arguments_and_result(cli):
    main_path, _, _ = _sessions(cli)
    ep = _episode(main_path)
    calls = played(cli)
    _check_against_script(ep, calls)
    assert [s.action.kind for s in ep.steps] == ["command", "tool_call", "tool_call", "command", "tool_call",
                                                 "message"]
    assert ep.steps[0].action.code == "ls" and "notes.txt" in ep.steps[1].observation.text
    assert "alpha" in ep.steps[2].observation.text  # what Read returned
    failed = ep.steps[4].observation
    assert failed.kind == "terminal" and failed.is_error and failed.exit_code == 1
    assert "missing.txt" in failed.text
    assert (cli.workspace / "out.txt").read_text() == NOTES  # the agent really wrote it


def test_model_task_final_answer_and_the_cli_report_agree(cli):
    main_path, _, _ = _sessions(cli)
    ep = _episode(main_path)
    report = json.loads(cli.stdout)
    assert ep.agent == CLAUDE_MODEL and ep.task == CLAUDE_PROMPT
    assert ep.steps[-1].action.text == cli.script[-1].text == report["result"]
    assert ep.terminated and ep.outcome == "unknown"
    assert main_path.stem == report["session_id"] == ep.env["claude_code"]["sessionId"]
    assert ep.env["claude_code"]["version"] == cli.version
    assert ep.env["sidechains"] == [f"sidechain:{_sessions(cli)[2].stem.removeprefix('agent-')}"]


def test_the_subagent_is_an_episode_with_its_own_call(cli):
    """The subagents folder is one unit: each transcript with the metadata file the CLI writes beside it."""
    main_path, folder, sub_path = _sessions(cli)
    ep = _episode(folder)
    assert ep.key == f"sidechain:{sub_path.stem.removeprefix('agent-')}"
    _check_against_script(ep, played(cli, 1))
    assert ep.task == SUBAGENT_PROMPT and ep.agent == CLAUDE_MODEL
    assert ep.steps[0].action.code == "wc -l notes.txt" and ep.steps[1].observation.text.startswith("2 ")
    assert ep.steps[-1].action.text == cli.conversations[SUBAGENT_PROMPT][-1].text
    started = next(s for s in _episode(main_path).steps if s.action.tool_name == "Agent")
    assert ep.env["sidechain"]["of"] == main_path.stem
    assert ep.env["sidechain"]["agentType"] == "general-purpose"
    assert ep.env["sidechain"]["toolUseId"] == json.loads(started.action.raw)["id"]


def test_records_beside_the_conversation_have_a_known_meaning(cli):
    """Attachments (context the CLI gave the model: environment, date, listings, reminders) are counted by
    type; the current release's cost record is kept; its API request records are bookkeeping."""
    main_path, _, _ = _sessions(cli)
    kinds = {json.loads(line)["type"] for line in main_path.read_text().splitlines()}
    extras = _episode(main_path).env["claude_code"]
    assert "attachment" in kinds and sum(extras["attachments"].values()) >= 2
    if "cost-state" in kinds:
        assert extras["cost"]["totalCostUSD"] > 0 and CLAUDE_MODEL in extras["cost"]["modelUsage"]
        assert {"api-request", "tools-used"} <= set(extras["bookkeeping"])


def test_ingest_swe_reads_the_cli_store_whole(cli, run, query):
    """The pipeline over the CLI's projects folder: both sessions read, nothing left unread."""
    result = run("ingest-swe", [cli.home / ".claude" / "projects"], stages=["ingest"])
    assert result.ignored == []
    assert query("SELECT count(*) AS n FROM episodes")[0]["n"] == 2
    assert query("SELECT rule FROM quarantine") == []
    print(f"claude-code {cli.version}: the run took {cli.seconds:.2f} s")
