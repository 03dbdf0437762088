"""The Cline CLI itself writes the task folder the reader reads: `cline -y` runs against the scripted model server
(`tests/scripted_model_server.py`, Chat Completions with native tool calls, its OpenAI-compatible provider set by
`cline auth`) in a temporary workspace and HOME, executes every tool call of the script (list the workspace, read
a file, write one through `apply_patch`, a command that fails, `attempt_completion`) and writes
`~/.cline/data/tasks/<id>/`. The script is the oracle: the episode holds every call with the arguments the agent
sent and, as each call's result, what Cline sent back to the server (Cline 2.x sends it as a user text block
`[<tool> for '...'] Result:` after the tool message, with its reminders after it), the model, the task and the
completion it ended with.
"""

from __future__ import annotations

import json

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import cline
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import CLINE_ANSWER, CLINE_MODEL, CLINE_PROMPT, NOTES, cli_run
from tests.scripted_model_server import USAGE, call_id

VERSIONS = ("2.18.0",)  # the Makefile's CLINE_VERSIONS


@pytest.fixture(scope="module", params=VERSIONS)
def cli(request, tmp_path_factory):
    return cli_run("cline", request.param, tmp_path_factory)


def _task(cli):
    found = list((cli.home / ".cline" / "data" / "tasks").iterdir())
    assert len(found) == 1, found
    return found[0]


def _episode(cli) -> Episode:
    records = read_records(cline, _task(cli))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    return ep


def _sent_back(cli, turn: int) -> str | None:
    """What Cline sent the server as the result of the call of script turn `turn`: the text after `Result:` of
    the user message that follows the call's tool message (None: never sent)."""
    issued = call_id("chat", turn, 0)
    for request in cli.server.agent_requests():
        messages = request.body.get("messages") or []
        for i, message in enumerate(messages[:-1]):
            if message.get("role") == "tool" and message.get("tool_call_id") == issued:
                content = messages[i + 1].get("content")
                text = content if isinstance(content, str) else content[0]["text"]
                return text.split("] Result:\n", 1)[1]
    return None


def test_the_task_folder_holds_every_scripted_call_with_its_arguments_and_result(cli):
    ep = _episode(cli)
    calls = [c for turn in cli.script for c in turn.calls]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == \
        [(c.name, c.arguments) for c in calls]
    after = [s.observation for s in ep.steps[1:]]
    for t, c in enumerate(calls[:-1]):  # attempt_completion ends the task: nothing is sent back
        seen = _sent_back(cli, t)
        assert seen is not None and after[t].text.startswith(seen.split("\n\n\n# task_progress")[0]), c.name
    assert after[0].text.startswith("notes.txt")
    assert after[1].text.startswith("1 | alpha\n2 | beta")  # what read_file returned, numbered
    command, failed = ep.steps[3].action, after[3]
    assert command.kind == "command" and command.code == "cat missing.txt"
    # the result with Cline's reminders after it: kind `text`, the command's exit code kept
    assert failed.exit_code == 1 and failed.is_error and "No such file" in failed.text
    # the agent really wrote it (apply_patch writes the added lines without the last newline)
    assert (cli.workspace / "out.txt").read_text() == NOTES.rstrip("\n")


def test_model_task_completion_and_usage(cli):
    ep = _episode(cli)
    assert ep.agent == CLINE_MODEL and ep.task == CLINE_PROMPT
    assert ep.steps[-1].action.kind == "done" and ep.steps[-1].action.text == CLINE_ANSWER
    assert ep.terminated and ep.outcome == "unknown"
    assert all(s.timestamp is not None for s in ep.steps)
    extras = ep.env["cline"]
    assert extras["completion"] == CLINE_ANSWER
    turns = len(cli.server.agent_requests())
    assert extras["usage"]["tokensOut"] == turns * USAGE["output_tokens"]
    assert extras["environment"]["host_version"] == cli.version


def test_ingest_swe_reads_the_cli_tasks_whole(cli, run, query):
    result = run("ingest-swe", [cli.home / ".cline" / "data" / "tasks"], stages=["ingest"])
    assert result.ignored == []
    assert query("SELECT count(*) AS n, min(source_format) AS f FROM episodes") == [{"n": 1, "f": "cline"}]
    assert query("SELECT count(*) AS n FROM steps") == [{"n": len(cli.script) - 1}]
    assert query("SELECT rule FROM quarantine") == []
    print(f"cline {cli.version}: the run took {cli.seconds:.2f} s")
