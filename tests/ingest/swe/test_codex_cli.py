"""Codex itself, at two releases, writes the rollouts the reader reads: `codex exec` runs with a custom model
provider pointing at the scripted model server's Responses endpoint (`tests/scripted_model_server.py`), in a
temporary workspace and HOME, executes every shell call of the script (list, read, write, a command that fails)
and writes `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`. The script is the oracle: the episode holds every call
with the arguments the agent sent and, as each call's result, exactly what the server received; the model, the
task and the final answer. `codex exec --json`'s own event stream (commands, exit codes, the answer) is a second.

0.135.0 writes the `{timestamp, type, payload}` lines the reader has read since mid 2025; 0.171.0, the current
release, adds an `ordinal` to every line and `world_state` and `token_usage_record` lines.
"""

from __future__ import annotations

import json
import shlex

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import codex
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import CODEX_MODEL, CODEX_PROMPT, NOTES, cli_run, played
from tests.scripted_model_server import USAGE

VERSIONS = ("0.135.0", "0.171.0")  # the Makefile's CODEX_VERSIONS


@pytest.fixture(scope="module", params=VERSIONS)
def cli(request, tmp_path_factory):
    return cli_run("codex", request.param, tmp_path_factory)


def _rollout(cli):
    found = list((cli.home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    assert len(found) == 1, found
    return found[0]


def _episode(cli) -> Episode:
    records = read_records(codex, _rollout(cli))
    assert [r for r in records if isinstance(r, Rejected)] == []  # no warning, no unknown line type
    (ep,) = [r for r in records if isinstance(r, Episode)]
    return ep


def _events(cli) -> list[dict]:
    return [json.loads(line) for line in cli.stdout.splitlines() if line.startswith("{")]


def test_the_rollout_holds_every_scripted_call_with_its_arguments_and_result(cli):
    ep = _episode(cli)
    calls = played(cli)
    tool_steps = [s for s in ep.steps if s.action.kind != "message"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in tool_steps] == \
        [(c.name, c.arguments) for c in calls]
    assert [s.action.code for s in tool_steps] == [c.arguments["cmd"] for c in calls]
    after = [s.observation for s in ep.steps[1:]] + [ep.final_observation]
    for i, c in enumerate(calls):
        assert c.seen is not None and after[i].text == c.seen, c.arguments
        assert after[i].kind == "terminal"
    assert [o.exit_code for o in after[:len(calls)]] == [0, 0, 0, 1]
    assert after[1].text.endswith("Output:\nalpha\nbeta\n")
    assert (cli.workspace / "out.txt").read_text() == NOTES  # the agent really wrote it


def test_model_task_final_answer_and_the_cli_event_stream_agree(cli):
    ep = _episode(cli)
    events = _events(cli)
    commands = [e["item"] for e in events if e.get("type") == "item.completed"
                and e["item"].get("type") == "command_execution"]
    answer = [e["item"]["text"] for e in events if e.get("type") == "item.completed"
              and e["item"].get("type") == "agent_message"]
    assert ep.agent == CODEX_MODEL and ep.task == CODEX_PROMPT
    assert ep.steps[-1].action.kind == "message" and ep.steps[-1].action.text == cli.script[-1].text == answer[-1]
    # the CLI shows each command as the shell ran it (`/bin/bash -lc <script>`), with its exit code
    after = [s.observation for s in ep.steps[1:]]
    assert [(shlex.split(c["command"])[-1], c["exit_code"]) for c in commands] == \
        [(s.action.code, obs.exit_code) for s, obs in zip(ep.steps, after) if s.action.kind == "command"]
    assert ep.terminated and ep.outcome == "unknown"
    session = ep.env["codex"]["session"]
    assert session["id"] == next(e["thread_id"] for e in events if e.get("type") == "thread.started")
    assert session["cli_version"] == cli.version and _rollout(cli).stem.endswith(session["id"])


def test_the_current_release_lines_have_a_known_meaning(cli):
    """`world_state` keeps the context the instructions were built from; `token_usage_record` gives each
    model response's usage, the scripted server's per response."""
    kinds = {json.loads(line)["type"] for line in _rollout(cli).read_text().splitlines()}
    extras = _episode(cli).env["codex"]
    if "world_state" in kinds:
        assert extras["world_state"]["environments"]["environments"]["local"]["cwd"] == str(cli.workspace)
    if "token_usage_record" in kinds:
        responses = len(cli.server.agent_requests())
        assert [u["usage"]["output_tokens"] for u in extras["usage_per_response"]] == [USAGE["output_tokens"]] * responses
        assert extras["thread_token_usage"]["total_tokens"] == responses * sum(USAGE.values())
    assert extras["token_usage"]["total_token_usage"]["output_tokens"] == 5 * USAGE["output_tokens"]


def test_ingest_swe_reads_the_sessions_folder_whole(cli, run, query):
    result = run("ingest-swe", [cli.home / ".codex" / "sessions"], stages=["ingest"])
    assert result.ignored == []
    assert query("SELECT count(*) AS n FROM episodes")[0]["n"] == 1
    assert query("SELECT rule FROM quarantine") == []
    print(f"codex {cli.version}: the run took {cli.seconds:.2f} s")
