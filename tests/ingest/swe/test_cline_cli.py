"""The Cline CLI itself, at two releases, writes the sessions the reader reads, run against the scripted model
server (`tests/scripted_model_server.py`, Chat Completions with native tool calls, its OpenAI-compatible provider
set by `cline auth`) in a temporary workspace and HOME, executing every tool call of the script (list the
workspace, read a file, write one through `apply_patch`, a command that fails) and ending the task:

- 2.18.0 (Cline's own task loop, Cline core 3.82.0) writes the task folder `~/.cline/data/tasks/<id>/` the VS
  Code extension writes, ends in `attempt_completion`, and sends each result back as a user text block
  `[<tool> for '...'] Result:` after the tool message (with its reminders after it);
- 3.0.65, the current release (the Cline SDK's agent), writes `~/.cline/data/sessions/<id>/<id>.json` and
  `<id>.messages.json`, sends `tool_result`s (`{query, result, success}` records) and ends in a text answer.

2.18.0 also runs with a model Cline gives no native tools, which writes its calls as XML in its text.

The script is the oracle: the episode holds every call with the arguments the agent sent and, as each call's
result, what Cline sent the server; the model, the task and the answer it ended with.
"""

from __future__ import annotations

import json

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import cline
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import (CLINE_ANSWER, CLINE_MODEL, CLINE_PROMPT, CLINE_XML_CALLS, CLINE_XML_MODEL,
                                          NOTES, cli_run, played)
from tests.scripted_model_server import USAGE, call_id

VERSIONS = ("2.18.0", "3.0.65")  # the Makefile's CLINE_VERSIONS


@pytest.fixture(scope="module", params=VERSIONS)
def cli(request, tmp_path_factory):
    return cli_run("cline", request.param, tmp_path_factory)


def _task_loop(cli) -> bool:
    """Whether the release runs Cline's own task loop (2.x: task folders), not the SDK agent (3.x)."""
    return cli.version.startswith("2.")


def _store(cli):
    """The release's one task folder or session folder."""
    found = list((cli.home / ".cline" / "data" / ("tasks" if _task_loop(cli) else "sessions")).iterdir())
    assert len(found) == 1, found
    return found[0]


def _episode(cli) -> Episode:
    records = read_records(cline, _store(cli))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    return ep


def _sent_back(cli, turn: int) -> str | None:
    """What Cline 2.x sent the server as the result of the call of script turn `turn`: the text after `Result:`
    of the user message that follows the call's tool message (its tool message says only "result missing")."""
    issued = call_id("chat", turn, 0)
    for request in cli.server.agent_requests():
        messages = request.body.get("messages") or []
        for i, message in enumerate(messages[:-1]):
            if message.get("role") == "tool" and message.get("tool_call_id") == issued:
                content = messages[i + 1].get("content")
                text = content if isinstance(content, str) else content[0]["text"]
                return text.split("] Result:\n", 1)[1].split("\n\n\n# task_progress")[0]
    return None


def test_the_store_holds_every_scripted_call_with_its_arguments_and_result(cli):
    ep = _episode(cli)
    calls = [c for turn in cli.script for c in turn.calls]
    tool_steps = [s for s in ep.steps if s.action.kind != "message"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in tool_steps] == \
        [(c.name, c.arguments) for c in calls]
    after = [s.observation for s in ep.steps[1:]]
    if _task_loop(cli):  # attempt_completion ends the task: nothing is sent back for it
        seen = [_sent_back(cli, t) for t in range(len(calls) - 1)]
        assert all(s is not None and after[t].text.startswith(s) for t, s in enumerate(seen)), seen
    else:
        assert [a.text for a in after] == [c.seen for c in played(cli)]
    assert "notes.txt" in after[0].text and after[0].exit_code == (None if _task_loop(cli) else 0)  # 2.x: list_files
    assert "1 | alpha" in after[1].text  # what the read returned, numbered
    command, failed = tool_steps[3].action, after[3]
    assert command.kind == "command" and command.code == "cat missing.txt"
    assert failed.exit_code == 1 and failed.is_error and "No such file" in failed.text
    # the agent really wrote it (apply_patch writes the added lines without the last newline)
    assert (cli.workspace / "out.txt").read_text() == NOTES.rstrip("\n")


def test_model_task_answer_and_usage(cli):
    ep = _episode(cli)
    assert ep.agent == CLINE_MODEL and ep.task == CLINE_PROMPT
    assert ep.steps[-1].action.kind == ("done" if _task_loop(cli) else "message")
    assert ep.steps[-1].action.text == CLINE_ANSWER and ep.terminated and ep.outcome == "unknown"
    assert all(s.timestamp is not None for s in ep.steps)
    extras = ep.env["cline"]
    turns = len(cli.server.agent_requests())
    if _task_loop(cli):
        assert extras["completion"] == CLINE_ANSWER
        assert extras["usage"]["tokensOut"] == turns * USAGE["output_tokens"]
        assert extras["environment"]["host_version"] == cli.version
    else:
        assert extras["session"]["status"] == "completed" and extras["session"]["model"] == CLINE_MODEL
        assert extras["usage"]["outputTokens"] == turns * USAGE["output_tokens"]


def test_ingest_swe_reads_the_cli_store_whole(cli, run, query):
    result = run("ingest-swe", [_store(cli).parent], stages=["ingest"])
    assert result.ignored == []
    assert query("SELECT count(*) AS n, min(source_format) AS f FROM episodes") == [{"n": 1, "f": "cline"}]
    steps = len(cli.script) - 1 if _task_loop(cli) else len(cli.script)  # 2.x: the answer is the completion
    assert query("SELECT count(*) AS n FROM steps") == [{"n": steps}]
    assert query("SELECT rule FROM quarantine") == []
    print(f"cline {cli.version}: the run took {cli.seconds:.2f} s")


def test_a_task_kept_among_other_files_is_read_with_the_files_beside_it(cli, run, query, tmp_path):
    """The store's files copied into a project folder beside files Cline does not write: the history (or session
    file) is claimed alone, and the files its reader reads beside it are planned with it, not listed as unread;
    only the project's own file is."""
    import shutil

    folder = tmp_path / "project"
    shutil.copytree(_store(cli), folder)
    (folder / "README.md").write_text("a project that keeps its agent's task files\n")
    result = run("ingest-all", [folder], stages=["ingest"])
    assert result.status == "success", result.messages
    named = {p.name for p in folder.iterdir()}
    assert {"README.md", "ui_messages.json", "task_metadata.json"} <= named if _task_loop(cli) else \
        len([n for n in named if n.endswith(".json")]) == 2
    ignored = {r["path"].rsplit("/project/", 1)[1]: r["reason"]
               for r in query("SELECT path, reason FROM ignored_inputs")}
    assert ignored.pop("README.md") == "no format reads it"
    # what Cline writes in a task folder and its reader does not read is said so, with the task it belongs to
    assert all(reason.startswith("part of the cline run api_conversation_history.json, which does not read it")
               for reason in ignored.values()), ignored
    assert {n for n in named if n not in ignored and n != "README.md"} >= (
        {"api_conversation_history.json", "ui_messages.json", "task_metadata.json"} if _task_loop(cli) else set())
    assert query("SELECT count(*) AS n, min(source_format) AS f FROM episodes") == [{"n": 1, "f": "cline"}]


@pytest.fixture(scope="module")
def xml_cli(tmp_path_factory):
    return cli_run("cline-xml", "2.18.0", tmp_path_factory)


def test_the_xml_tool_form_is_read_with_every_call_its_result_and_the_completion(xml_cli):
    """Cline 2.18.0 with a model it gives no native tools: the calls are XML in the model's text, their results
    the `[tool for '...'] Result:` text of the next request; the CLI ends the task before saving the completion
    turn to the history, so the completion comes from `ui_messages.json`."""
    ep = _episode(xml_cli)
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == CLINE_XML_CALLS
    assert [s.reasoning for s in ep.steps] == [f"Step {n}." for n in range(1, 6)]
    requests = xml_cli.server.requests
    for t, request in enumerate(requests[1:]):  # what each later request carried back as the last result
        sent = request.body["messages"][-1]["content"]
        text = (sent if isinstance(sent, str) else sent[0]["text"]).split("] Result:\n", 1)[1]
        assert ep.steps[t + 1].observation.text.startswith(text.split("\n\n\n# task_progress")[0])
    assert ep.steps[3].action.kind == "command" and ep.steps[4].observation.exit_code == 1
    assert ep.steps[-1].action.kind == "done" and ep.steps[-1].action.text == CLINE_ANSWER and ep.terminated
    assert ep.agent == CLINE_XML_MODEL and ep.task == CLINE_PROMPT
    assert (xml_cli.workspace / "out.txt").read_text() == NOTES.rstrip("\n")


@pytest.fixture(scope="module")
def task_loop_cli(tmp_path_factory):
    return cli_run("cline", VERSIONS[0], tmp_path_factory)  # the release that writes task folders (a UI log)


def test_the_task_folders_ui_log_alone_holds_every_scripted_call_and_its_result(task_loop_cli, tmp_path):
    """2.x: the task's `ui_messages.json` copied alone (the API history not beside it) still holds each call the
    script made, in order, named as the model called it, with the result Cline sent the server and the answer."""
    import shutil

    cli = task_loop_cli
    shutil.copy(_store(cli) / "ui_messages.json", tmp_path / "ui_messages.json")
    records = read_records(cline, tmp_path / "ui_messages.json")
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    calls = [c for turn in cli.script for c in turn.calls]
    assert [s.action.tool_name for s in ep.steps] == [c.name for c in calls]
    seen = [_sent_back(cli, t) for t in range(len(calls) - 1)]
    assert [s.observation.text for s in ep.steps[1:]] == [s.rstrip("\n") for s in seen]
    assert ep.steps[3].action.code == "cat missing.txt" and ep.steps[4].observation.exit_code == 1
    assert ep.steps[-1].action.kind == "done" and ep.steps[-1].action.text == CLINE_ANSWER and ep.terminated
    assert ep.task == CLINE_PROMPT and ep.env["cline"]["read_from"].startswith("ui_messages.json alone")
