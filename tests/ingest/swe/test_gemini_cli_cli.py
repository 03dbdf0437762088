"""Gemini CLI itself, at two releases, writes the chat recordings the reader reads: `gemini -p` runs against the
scripted model server (`tests/scripted_model_server.py`, Gemini's `streamGenerateContent`) in a temporary
workspace and HOME, executes every tool call of the script (list a folder, read a file, write one, a command
that fails) and writes `~/.gemini/tmp/<project>/chats/session-*`. The script is the oracle: the episode holds
every call with the arguments the agent sent and, as each call's result, what the server received; the model,
the task and the final answer. The CLI's own `--output-format json` report (answer, tool counts) is a second.

0.35.0 writes the recording as one JSON document (`session-*.json`); 0.61.0, the current release, as a JSONL
log (`session-*.jsonl`: the record, messages written again as they change, `$set` lines), with the context it
gives the model and the tool responses it sends back recorded as user messages too.
"""

from __future__ import annotations

import json

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import gemini_cli
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import GEMINI_MODEL, GEMINI_PROMPT, NOTES, cli_run, played
from tests.scripted_model_server import USAGE

VERSIONS = ("0.35.0", "0.61.0")  # the Makefile's GEMINI_CLI_VERSIONS


@pytest.fixture(scope="module", params=VERSIONS)
def cli(request, tmp_path_factory):
    return cli_run("gemini-cli", request.param, tmp_path_factory)


def _recording(cli):
    found = list((cli.home / ".gemini" / "tmp").glob("*/chats/session-*"))
    assert len(found) == 1, found
    return found[0]


def _episode(cli) -> Episode:
    records = read_records(gemini_cli, _recording(cli))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    return ep


def test_the_recording_holds_every_scripted_call_with_its_arguments_and_result(cli):
    ep = _episode(cli)
    calls = played(cli)
    tool_steps = [s for s in ep.steps if s.action.kind != "message"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in tool_steps] == \
        [(c.name, c.arguments) for c in calls]
    after = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    for i, c in enumerate(calls):
        assert c.seen is not None and after[i].text == c.seen, c.name
    assert after[1].text == NOTES and after[1].kind == "tool_result"  # what read_file returned
    failed = after[3]
    assert tool_steps[3].action.kind == "command" and tool_steps[3].action.code == "cat missing.txt"
    assert failed.kind == "terminal" and failed.exit_code == 1 and "No such file" in failed.text
    assert (cli.workspace / "out.txt").read_text() == NOTES  # the agent really wrote it


def test_model_task_final_answer_and_the_cli_report_agree(cli):
    ep = _episode(cli)
    report = json.loads(cli.stdout[cli.stdout.index("{"):])
    assert ep.agent == GEMINI_MODEL and ep.task == GEMINI_PROMPT
    assert ep.steps[-1].action.kind == "message"
    assert ep.steps[-1].action.text == cli.script[-1].text == report["response"]
    assert report["stats"]["tools"]["totalCalls"] == len(played(cli))
    assert ep.terminated and ep.outcome == "unknown"
    extras = ep.env["gemini_cli"]
    assert _recording(cli).stem.endswith(extras["sessionId"][:8])
    turns = len(cli.server.agent_requests())
    assert extras["tokens"]["output"] == turns * USAGE["output_tokens"]


def test_ingest_swe_reads_the_cli_store_whole(cli, run, query):
    """The pipeline over the CLI's chats folder: the recording read, nothing left unread."""
    result = run("ingest-swe", [_recording(cli).parent], stages=["ingest"])
    assert result.ignored == []
    assert query("SELECT count(*) AS n, min(source_format) AS f FROM episodes") == [{"n": 1, "f": "gemini_cli"}]
    assert query("SELECT rule FROM quarantine") == []
    print(f"gemini-cli {cli.version}: the run took {cli.seconds:.2f} s")
