"""Aider itself, at two releases, writes the chat histories the reader reads: `aider --message` runs twice (two
chat sessions) in a temporary git workspace and HOME against the scripted model server's Chat Completions
endpoint, which answers in aider's SEARCH/REPLACE edit format: session 1 creates out.txt and sends a block that
cannot match, aider sends the failure back, the next reply fixes it; session 2 edits out.txt. Aider applies the
blocks, commits each reply's changes and appends `.aider.chat.history.md`.

The script is the oracle: each episode holds every block the server sent, in order, with its file, its SEARCH and
REPLACE text and the outcome aider recorded (applied, or the failure), the files on disk are what the applied
blocks make, the commits are git's, the model and the usage lines are one per reply. Aider's own parser of the
file (`aider.utils.split_chat_history_markdown`, which `--restore-chat-history` uses, and the `diff` coder's
`find_original_update_blocks`), run in aider's venv, is a second.

0.82.3 and 0.86.2 (the current release) write the same entries; the header names the model `Model:` in some
releases and `Main model:` in others.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import aider
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import AIDER_EDITS, AIDER_MODEL, AIDER_PROMPTS, NOTES, cli_run, venv_cli

VERSIONS = ("0.82.3", "0.86.2")  # the Makefile's AIDER_VERSIONS


@pytest.fixture(scope="module", params=VERSIONS)
def cli(request, tmp_path_factory):
    return cli_run("aider", request.param, tmp_path_factory)


def _episodes(cli) -> list[Episode]:
    records = read_records(aider, cli.workspace / ".aider.chat.history.md")
    assert [r for r in records if isinstance(r, Rejected)] == []
    return [r for r in records if isinstance(r, Episode)]


def _edits(ep: Episode) -> list[tuple[dict, object]]:
    """(arguments, the observation after it) of each edit action."""
    after = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    return [(json.loads(s.action.arguments), after[i]) for i, s in enumerate(ep.steps) if s.action.tool_name == "edit"]


def test_every_scripted_block_is_an_edit_with_the_outcome_aider_recorded(cli):
    episodes = _episodes(cli)
    assert len(episodes) == len(AIDER_PROMPTS) == len(cli.sessions)
    for ep, session, replies in zip(episodes, cli.sessions, AIDER_EDITS):
        # the server played every reply of the session's script, in order
        assert [r.turn for r in session.server.agent_requests()] == list(range(len(replies)))
        sent = [e for _, edits in replies for e in edits]
        got = _edits(ep)
        assert [a for a, _ in got] == [{"path": e.path, "search": e.search, "replace": e.replace} for e in sent]
        assert all(s.action.kind == "tool_call" for s in ep.steps)
    (create, miss, fix), (delta,) = _edits(episodes[0]), _edits(episodes[1])
    assert miss[1].is_error and "failed to exactly match lines in notes.txt" in miss[1].text
    assert "delta" in miss[1].text  # the block aider could not find
    assert not create[1].is_error and "applied successfully" in create[1].text  # applied beside the failure
    assert fix[1].text.startswith("Applied edit to notes.txt") and delta[1].text.startswith("Applied edit to out.txt")
    # what the applied blocks make is on disk
    assert (cli.workspace / "notes.txt").read_text() == NOTES + "gamma\n"
    assert (cli.workspace / "out.txt").read_text() == NOTES.replace("beta\n", "beta\ndelta\n")


def test_task_model_usage_and_commits_per_session(cli):
    episodes = _episodes(cli)
    log = subprocess.run(["git", "log", "--reverse", "--format=%h %s"], cwd=cli.workspace, capture_output=True,
                         text=True, check=True).stdout.split("\n")[1:-1]  # after the workspace's own first commit
    commits = []
    for ep, (prompt, _), replies in zip(episodes, AIDER_PROMPTS, AIDER_EDITS):
        extras = ep.env["aider"]
        assert ep.task == prompt and ep.agent == AIDER_MODEL and extras["edit_format"] == "diff"
        assert extras["version"] == cli.version and ep.terminated and ep.outcome == "unknown"
        assert [u["reply"] for u in extras["usage"]] == list(range(1, len(replies) + 1))
        assert all(u["cost"] > 0 for u in extras["usage"])  # gpt-4o's prices priced the scripted usage
        assert extras["usage"][-1]["session"] == pytest.approx(sum(u["cost"] for u in extras["usage"]), abs=0.01)
        commits += [f"{c['hash']} {c['message']}" for c in extras["commits"]]
    assert commits == log and len(log) == 3  # the partly applied first reply, its fix, session 2's edit


def test_aiders_own_parser_reads_the_same_blocks(cli):
    """`split_chat_history_markdown` + `find_original_update_blocks` in aider's own venv: the same blocks in the
    same order, the same prompts. Aider's splitter takes the lines after the first of a `>` entry of several lines
    for a reply: the failure it logged becomes a reply whose one block is the failed one, under the section's
    title; the reader keeps it as the failed block's result."""
    python = venv_cli("aider", cli.version, "python")
    program = (
        "import json, sys\nfrom aider.utils import split_chat_history_markdown\n"
        "from aider.coders.editblock_coder import find_original_update_blocks\n"
        "messages = split_chat_history_markdown(open(sys.argv[1]).read())\n"
        "blocks = [list(b) for m in messages if m['role'] == 'assistant'\n"
        "          for b in find_original_update_blocks(m['content'])]\n"
        "prompts = [m['content'].strip() for m in messages if m['role'] == 'user']\n"
        "print(json.dumps({'blocks': blocks, 'prompts': prompts}))\n")
    done = subprocess.run([str(python), "-c", program, str(cli.workspace / ".aider.chat.history.md")],
                          capture_output=True, text=True, check=True)
    theirs = json.loads(done.stdout)
    failure = "SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in notes.txt"
    assert [b for b in theirs["blocks"] if b[0].startswith("SearchReplace")] == [[failure, "delta\n", "gamma\n"]]
    theirs["blocks"] = [b for b in theirs["blocks"] if not b[0].startswith("SearchReplace")]
    ours = [a for ep in _episodes(cli) for a, _ in _edits(ep)]
    assert [[a["path"], a["search"], a["replace"]] for a in ours] == theirs["blocks"]
    assert [ep.task for ep in _episodes(cli)] == theirs["prompts"]


def test_ingest_swe_reads_the_history_beside_the_workspace(cli, run, query):
    """The pipeline over the workspace: the chat history read, one episode per session."""
    result = run("ingest-swe", [cli.workspace / ".aider.chat.history.md"], stages=["ingest"])
    assert result.ignored == []
    assert query("SELECT count(*) AS n, min(source_format) AS f FROM episodes") == [{"n": 2, "f": "aider_chat"}]
    assert query("SELECT rule FROM quarantine") == []
    print(f"aider {cli.version}: the two sessions took {cli.seconds:.2f} s")
