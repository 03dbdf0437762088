"""Qwen Code's `/export` files, written by the CLI itself at two releases: after the scripted session of
`test_qwen_code_cli.py` (the same run, shared), `qwen -p "/export json|jsonl|md" --resume <session>` exports it
(the command runs in non-interactive mode and writes `qwen-code-export-<time>.<ext>` into the workspace). The script
is the oracle: each export holds every call the server asked for, with the arguments the agent sent and the result
the agent recorded (an edit as its diff), the model, the task and the final answer.
"""

from __future__ import annotations

import json

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import qwen_code_export
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import NOTES, QWEN_MODEL, QWEN_PROMPT, cli_run, played, qwen_code_export as export
from tests.scripted_model_server import USAGE

VERSIONS = ("0.15.10", "0.24.4")  # the Makefile's QWEN_CODE_VERSIONS
DISPLAY_NAMES = {"glob": "Glob", "read_file": "ReadFile"}  # the titles name these tools by their display names


@pytest.fixture(scope="module", params=VERSIONS)
def exported(request, tmp_path_factory):
    cli = cli_run("qwen-code", request.param, tmp_path_factory)
    return cli, {kind: export(cli, kind) for kind in ("json", "jsonl", "md")}


def _episode(path) -> Episode:
    records = read_records(qwen_code_export, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    return ep


@pytest.mark.parametrize("kind", ["json", "jsonl"])
def test_each_export_holds_every_scripted_call_with_its_arguments_and_result(exported, kind):
    cli, files = exported
    ep = _episode(files[kind])
    calls = played(cli)
    tool_steps = [s for s in ep.steps if s.action.kind != "message"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in tool_steps] == \
        [(DISPLAY_NAMES.get(c.name, c.name), c.arguments) for c in calls]
    after = [s.observation for s in ep.steps[1:]]
    glob, read, write, failed = after
    assert glob.text == calls[0].seen and "notes.txt" in glob.text
    assert read.text == calls[1].seen == NOTES
    # the export keeps an edit as its diff (under the file's path, 0.15: its name), not the sentence the model got
    path = cli.workspace / "out.txt" if cli.version != "0.15.10" else "out.txt"
    assert write.text == f"{path}:\n{NOTES}" and "out.txt" in calls[2].seen
    assert tool_steps[3].action.kind == "command" and tool_steps[3].action.code == "cat missing.txt"
    assert failed.kind == "terminal" and failed.exit_code == 1 and failed.text == calls[3].seen
    assert failed.is_error is (cli.version != "0.15.10")  # 0.15 records the command's run as a success
    assert ep.agent == QWEN_MODEL and ep.task == QWEN_PROMPT
    assert ep.steps[-1].action.kind == "message" and ep.steps[-1].action.text == cli.script[-1].text
    assert ep.terminated and ep.outcome == "unknown"


def test_the_exports_name_the_session_and_its_totals(exported):
    cli, files = exported
    (session,) = (cli.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
    for kind in ("json", "jsonl"):
        meta = _episode(files[kind]).env["qwen_code_export"]["metadata"]
        assert meta["sessionId"] == session.stem and meta["cwd"] == str(cli.workspace)
        assert meta["promptCount"] == 1 and meta["uniqueFiles"] == [str(cli.workspace / "out.txt")]
        assert meta["totalTokens"] == len(cli.server.agent_requests()) * (USAGE["input_tokens"] + USAGE["output_tokens"])


def test_ingest_reads_the_json_exports_and_lists_the_markdown_unread(exported, run, query):
    cli, files = exported
    result = run("ingest-swe", [files["json"], files["jsonl"], files["md"]], stages=["ingest"])
    assert [(i.path.rsplit("/", 1)[-1], i.reason) for i in result.ignored] == \
        [(files["md"].name, "no format reads it")]
    assert query("SELECT count(*) AS n, min(source_format) AS f, max(source_format) AS g FROM episodes") == \
        [{"n": 2, "f": "qwen_code_export", "g": "qwen_code_export"}]
    assert query("SELECT rule FROM quarantine") == []
