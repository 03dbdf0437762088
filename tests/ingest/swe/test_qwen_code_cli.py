"""Qwen Code itself, at two releases, writes the sessions the reader reads: `qwen -p` runs against the scripted
model server's Chat Completions endpoint (`tests/scripted_model_server.py`) in a temporary workspace and HOME,
executes every tool call of the script (list the workspace, read a file, write one, a command that fails) and
writes `~/.qwen/projects/<project>/chats/<session>.jsonl`. The script is the oracle: the episode holds every call
with the arguments the agent sent and, as each call's result, what the server received; the model, the task and
the final answer. The CLI's own `--output-format json` report (its result, tool counts, token totals) is a second.

0.15.10 records a command that exits 1 as a success (its exit code in the output); 0.24.4, the current release,
as an error (`errorType`, `executionStatus`), and adds `provenance` and `contextWindowSize` to its records.
0.1.4, from before Qwen Code wrote its own log, kept Gemini CLI's recorder (`~/.qwen/tmp/<project>/chats/
session-*.json`, model turns typed `qwen`): the `gemini_cli` format reads it. It records the prompt and the final
answer only, although it ran every call: its recorder's `recordToolCalls` is called nowhere in the release, and
neither function responses nor model turns without text are recorded; the reader says the calls are not recorded.
"""

from __future__ import annotations

import json

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import gemini_cli, qwen_code
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import NOTES, QWEN_GEMINI_LAYOUT, QWEN_MODEL, QWEN_PROMPT, cli_run, played
from tests.scripted_model_server import USAGE

VERSIONS = ("0.15.10", "0.24.4")  # the Makefile's QWEN_CODE_VERSIONS, with QWEN_GEMINI_LAYOUT


@pytest.fixture(scope="module", params=VERSIONS)
def cli(request, tmp_path_factory):
    return cli_run("qwen-code", request.param, tmp_path_factory)


def _session(cli):
    found = list((cli.home / ".qwen" / "projects").glob("*/chats/*.jsonl"))
    assert len(found) == 1, found
    return found[0]


def _episode(cli) -> Episode:
    records = read_records(qwen_code, _session(cli))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    return ep


def _report(cli) -> dict:
    """The `result` event of the CLI's JSON output."""
    events = json.loads(cli.stdout[cli.stdout.index("["):])
    return next(e for e in events if e.get("type") == "result")


def test_the_session_holds_every_scripted_call_with_its_arguments_and_result(cli):
    ep = _episode(cli)
    calls = played(cli)
    tool_steps = [s for s in ep.steps if s.action.kind != "message"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in tool_steps] == \
        [(c.name, c.arguments) for c in calls]
    after = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    for i, c in enumerate(calls):
        assert c.seen is not None and after[i].text == c.seen, c.name
    assert "notes.txt" in after[0].text  # what glob listed
    assert after[1].text == NOTES and after[1].kind == "tool_result"  # what read_file returned
    failed = after[3]
    assert tool_steps[3].action.kind == "command" and tool_steps[3].action.code == "cat missing.txt"
    # The CLI's pty capture may cut cat's stderr short of "No such file" (seen in CI); what the
    # model was sent is checked above, so only the command's own prefix is asked for here.
    assert failed.kind == "terminal" and failed.exit_code == 1 and "cat: missing.txt" in failed.text
    assert failed.is_error is (cli.version != "0.15.10")  # 0.15 records the command's run as a success
    assert (cli.workspace / "out.txt").read_text() == NOTES  # the agent really wrote it


def test_model_task_final_answer_tokens_and_the_cli_report_agree(cli):
    ep = _episode(cli)
    report = _report(cli)
    assert ep.agent == QWEN_MODEL and ep.task == QWEN_PROMPT
    assert ep.steps[-1].action.kind == "message"
    assert ep.steps[-1].action.text == cli.script[-1].text == report["result"]
    assert report["stats"]["tools"]["totalCalls"] == len(played(cli))
    assert ep.terminated and ep.outcome == "unknown"
    extras = ep.env["qwen_code"]
    assert _session(cli).stem == extras["sessionId"] == report["session_id"] and extras["version"] == cli.version
    turns = len(cli.server.agent_requests())
    output_tokens = extras["tokens"]["candidatesTokenCount"]
    assert output_tokens == turns * USAGE["output_tokens"] == report["usage"]["output_tokens"]
    assert {r["subtype"] for r in extras["system_records"]} >= {"ui_telemetry"}


def test_ingest_swe_reads_the_cli_store_whole(cli, run, query):
    """The pipeline over the CLI's projects folder: the session read by its own format, nothing left unread."""
    result = run("ingest-swe", [cli.home / ".qwen" / "projects"], stages=["ingest"])
    assert result.ignored == []
    assert query("SELECT count(*) AS n, min(source_format) AS f FROM episodes") == [{"n": 1, "f": "qwen_code"}]
    assert query("SELECT rule FROM quarantine") == []
    print(f"qwen-code {cli.version}: the run took {cli.seconds:.2f} s")


@pytest.fixture(scope="module")
def gemini_layout(tmp_path_factory):
    return cli_run("qwen-code", QWEN_GEMINI_LAYOUT, tmp_path_factory)


def test_0_1_writes_a_gemini_cli_recording_that_format_reads(gemini_layout, run, query):
    cli = gemini_layout
    (path,) = (cli.home / ".qwen" / "tmp").glob("*/chats/session-*.json")
    records = read_records(gemini_cli, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.task == QWEN_PROMPT and ep.agent == QWEN_MODEL
    assert all(c.seen is not None for c in played(cli)) and (cli.workspace / "out.txt").read_text() == NOTES
    assert [s.action.kind for s in ep.steps] == ["message"]  # -p records no tool call
    assert ep.steps[0].action.text == cli.script[-1].text and ep.terminated
    assert ep.env["gemini_cli"]["tokens"]["output"] == USAGE["output_tokens"]  # the one turn recorded
    # the calls it ran are not in the recording: the reader says the producer writes none, and makes none up
    assert ep.env["calls_not_recorded"]["producer"].startswith("Qwen Code 0.1.x")
    assert [w["rule"] for w in ep.env["ingest_warnings"]] == ["calls_not_recorded"]
    result = run("ingest-swe", [cli.home / ".qwen" / "tmp"], stages=["ingest"])
    assert result.ignored == []
    assert query("SELECT count(*) AS n, min(source_format) AS f FROM episodes") == [{"n": 1, "f": "gemini_cli"}]
    print(f"qwen-code {cli.version}: the run took {cli.seconds:.2f} s")
