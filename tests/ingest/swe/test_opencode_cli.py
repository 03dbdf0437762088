"""OpenCode itself, at two releases, writes the sessions the reader reads: `opencode run` runs against the
scripted model server (`tests/scripted_model_server.py`, Chat Completions through a custom OpenAI-compatible
provider in its config) in a temporary workspace with HOME and the XDG folders temporary, executes every tool
call of the script (list the workspace, read a file, write one, a command that fails, a subagent through its
`task` tool, which runs a command in a session of its own) and writes its session store. The script is the
oracle: the episodes hold every call with the arguments the agent sent and, as each call's result, what the
server received; the model, the task and the final answer. `opencode export` of the same session is a second:
read by the same reader, it gives the same episode.

1.1.65 keeps sessions as JSON files under `~/.local/share/opencode/storage/`; 1.18.33, the current release,
in the SQLite database `opencode.db` (since 1.2), whose writes OpenCode leaves in `opencode.db-wal`.
"""

from __future__ import annotations

import json
import shutil

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import opencode
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import (NOTES, OPENCODE_MODEL, OPENCODE_PROMPT, SUBAGENT_PROMPT, cli_run,
                                          opencode_export, played)
from tests.scripted_model_server import USAGE

VERSIONS = ("1.1.65", "1.18.33")  # the Makefile's OPENCODE_VERSIONS


@pytest.fixture(scope="module", params=VERSIONS)
def cli(request, tmp_path_factory):
    return cli_run("opencode", request.param, tmp_path_factory)


def _store(cli):
    """The session store the release wrote: the `storage` folder, or the database."""
    data = cli.home / ".local" / "share" / "opencode"
    return data / ("storage" if cli.version.startswith("1.1.") else "opencode.db")


def _episodes(records) -> tuple[Episode, Episode | None]:
    """(the main session's episode, its subagent's, which names it as its parent)."""
    assert [r for r in records if isinstance(r, Rejected)] == []
    episodes = [r for r in records if isinstance(r, Episode)]
    (main,) = [e for e in episodes if "parentID" not in e.env["opencode"]]
    subs = [e for e in episodes if e.env["opencode"].get("parentID") == main.key]
    assert len(episodes) == 1 + len(subs)
    return main, subs[0] if subs else None


def _episode(records) -> Episode:
    return _episodes(records)[0]


def _check_calls(ep: Episode, calls) -> list:
    """The episode's tool steps against the script's calls and what the server received; the observations after
    each call."""
    tool_steps = [s for s in ep.steps if s.action.kind != "message"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in tool_steps] == \
        [(c.name, c.arguments) for c in calls]
    after = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    for i, c in enumerate(calls):
        assert c.seen is not None and after[i].text == c.seen, c.name
    return after


def test_the_store_holds_every_scripted_call_with_its_arguments_and_result(cli):
    ep, sub = _episodes(read_records(opencode, _store(cli)))
    after = _check_calls(ep, played(cli))
    assert after[0].text == "notes.txt\n" and after[0].exit_code == 0
    assert "1: alpha" in after[1].text and after[1].kind == "tool_result"  # what `read` returned, numbered
    failed = after[3]
    assert ep.steps[3].action.kind == "command" and ep.steps[3].action.code == "cat missing.txt"
    assert failed.kind == "terminal" and failed.exit_code == 1 and "No such file" in failed.text
    assert (cli.workspace / "out.txt").read_text() == NOTES  # the agent really wrote it
    # the subagent's session: its own episode, its call and result, its answer in the task's result
    assert sub is not None and sub.task == SUBAGENT_PROMPT
    sub_after = _check_calls(sub, played(cli, 1))
    assert sub_after[0].exit_code == 0 and sub.steps[-1].action.text == "notes.txt has 2 lines."
    assert sub.steps[-1].action.text in after[4].text


def test_model_task_final_answer_and_usage(cli):
    ep = _episode(read_records(opencode, _store(cli)))
    assert ep.agent == OPENCODE_MODEL and ep.task == OPENCODE_PROMPT
    assert ep.steps[-1].action.kind == "message"
    assert ep.steps[-1].action.text == cli.script[-1].text and cli.script[-1].text in cli.stdout
    assert ep.terminated and ep.outcome == "unknown"
    assert all(s.timestamp is not None for s in ep.steps)
    extras = ep.env["opencode"]
    assert extras["version"] == cli.version and extras["directory"] == str(cli.workspace)
    assert extras["providers"] == ["scripted"]
    turns = len(cli.server.agent_requests())
    assert extras["tokens"]["output"] == turns * USAGE["output_tokens"]
    assert extras["tokens"]["input"] == turns * USAGE["input_tokens"]
    # what each message says beyond the steps: the user's agent and model, each answer's mode, path and finish
    kept = extras["message_fields"]
    assert kept[0]["role"] == "user" and kept[0]["agent"] == "build"
    assert kept[0]["model"]["modelID"] == OPENCODE_MODEL
    answers = [m for m in kept if m["role"] == "assistant"]
    assert len(answers) == turns and answers[-1]["finish"] == "stop"  # one message per model call here
    assert all(m["path"]["cwd"] == str(cli.workspace) and m["mode"] == "build" for m in answers)


def test_opencode_export_reads_as_the_same_episode(cli, tmp_path):
    stored = _episode(read_records(opencode, _store(cli)))
    exported = tmp_path / "session.json"
    exported.write_text(opencode_export(cli, stored.key))
    ep = _episode(read_records(opencode, exported))
    assert ep.key == stored.key and ep.task == stored.task and ep.agent == stored.agent
    assert [(s.action.kind, s.action.arguments, s.action.text, s.observation.text, s.observation.exit_code,
             s.timestamp) for s in ep.steps] == \
        [(s.action.kind, s.action.arguments, s.action.text, s.observation.text, s.observation.exit_code,
          s.timestamp) for s in stored.steps]


def test_ingest_swe_reads_the_cli_store_whole(cli, run, query, tmp_path):
    """The pipeline over the CLI's data folder less its logs: the store read (the database with its WAL and
    shared-memory files), nothing left unread."""
    store = tmp_path / "opencode"
    shutil.copytree(cli.home / ".local" / "share" / "opencode", store, ignore=shutil.ignore_patterns("log", "repos"))
    result = run("ingest-swe", [store], stages=["ingest"])
    assert result.ignored == []
    assert query("SELECT count(*) AS n, min(source_format) AS f FROM episodes") == [{"n": 2, "f": "opencode"}]
    scripts = [cli.script, *cli.conversations.values()]
    assert query("SELECT count(*) AS n FROM steps") == [{"n": sum(len(s) for s in scripts)}]
    assert query("SELECT rule FROM quarantine") == []
    print(f"opencode {cli.version}: the run took {cli.seconds:.2f} s")
