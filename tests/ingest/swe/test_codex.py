"""Codex CLI rollouts: the reader is checked on public rollouts (samples/codex: an MIT-licensed rollout from
claude-code-log's tests; data/codemie-code: a real 0.77.0 `codex exec` opening from codemie-code, Apache-2.0;
../shared/samples/codex: a real 0.135.0 `codex exec` rollout whose license could not be checked, skipped when
absent) and on hand-made edge cases written in the shapes of codex-rs's `ResponseItem`
(`codex-rs/protocol/src/models.rs`). The rollouts Codex writes at test time are read in `test_codex_cli.py`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.parts import require_shared_sample

from ingest.record import Rejected
from ingest.swe import codex
from tests.ingest.golden import check, read_records

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "samples" / "codex" / "claude-code-log" / \
    "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"
SHARED = REPO.parent / "shared" / "samples" / "codex"
CODEMIE = (Path(__file__).parent / "data" / "codemie-code"
           / "rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl")  # Apache-2.0: bundled
GOLDEN = Path(__file__).parent / "golden"


def _rollout(tmp_path, items: list[dict], name="rollout-2025-09-01T10-00-00-x.jsonl", wrap=True) -> list:
    lines = [{"timestamp": f"2025-09-01T10:00:{i:02d}.000Z", "type": kind, "payload": payload} if wrap else payload
             for i, (kind, payload) in enumerate((it["kind"], it["payload"]) for it in items)]
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return read_records(codex, path)


def _item(kind: str, **payload) -> dict:
    return {"kind": kind, "payload": payload}


META = _item("session_meta", id="0199a0b0-0000-7000-8000-000000000001", timestamp="2025-09-01T10:00:00Z",
             cwd="/repo", originator="codex_cli_rs", cli_version="0.39.0", instructions="Be brief.")
PROMPT = [_item("turn_context", cwd="/repo", model="gpt-5-codex", approval_policy="never"),
          _item("response_item", type="message", role="user",
                content=[{"type": "input_text", "text": "<environment_context>cwd /repo</environment_context>"}]),
          _item("response_item", type="message", role="user", content=[{"type": "input_text", "text": "List files"}]),
          _item("event_msg", type="user_message", message="List files")]


def test_golden_sample():
    """Read by hand against the file: exec_command (a command action, terminal output), apply_patch (a custom tool
    call whose output is a list of parts), an MCP tool, the final message; the reasoning summary on the first step."""
    check(read_records(codex, SAMPLE), GOLDEN / "codex-claude-code-log.json", env_keys=("codex",))


def test_golden_real_rollout_without_license():
    path = require_shared_sample(SHARED / "agent-history" / "rollout-session-01.jsonl")
    check(read_records(codex, path), GOLDEN / "codex-agent-history.json", texts="hash", env_keys=("codex",))


def test_shell_calls_become_commands_with_their_exit_codes(tmp_path):
    records = _rollout(tmp_path, [META, *PROMPT,
        _item("response_item", type="reasoning", summary=[{"type": "summary_text", "text": "List them."}],
              encrypted_content="opaque"),
        _item("response_item", type="function_call", name="shell", call_id="c1",
              arguments=json.dumps({"command": ["bash", "-lc", "ls -a"], "workdir": "/repo"})),
        _item("response_item", type="function_call", name="shell", call_id="c2",
              arguments=json.dumps({"command": ["git", "status", "--short"]})),
        _item("response_item", type="function_call_output", call_id="c2",
              output=json.dumps({"output": "fatal: not a git repository", "metadata": {"exit_code": 128}})),
        _item("response_item", type="function_call_output", call_id="c1",
              output=json.dumps({"output": ".\n..\nsrc", "metadata": {"exit_code": 0, "duration_seconds": 0.01}})),
        _item("response_item", type="local_shell_call", call_id="c3", status="completed",
              action={"type": "exec", "command": ["cat", "a b.txt"]}),
        _item("response_item", type="function_call_output", call_id="c3", output="hi"),
        _item("response_item", type="message", role="assistant", content=[{"type": "output_text", "text": "src"}]),
        _item("event_msg", type="task_complete", last_agent_message="src"),
    ])
    [ep] = records
    assert [(s.action.kind, s.action.code) for s in ep.steps] == [
        ("command", "ls -a"), ("command", "git status --short"), ("command", "cat 'a b.txt'"), ("message", None)]
    assert ep.steps[0].reasoning == "List them." and ep.steps[1].reasoning is None  # one model turn, two calls
    obs = [(s.observation.kind, s.observation.text, s.observation.exit_code) for s in ep.steps[1:]]
    assert obs == [("terminal", ".\n..\nsrc", 0), ("terminal", "fatal: not a git repository", 128),
                   ("terminal", "hi", None)]
    assert ep.task == "List files" and ep.steps[0].observation.text == "List files"
    assert ep.env["system_prompt"] == "Be brief.\n\n<environment_context>cwd /repo</environment_context>"
    assert ep.agent == "gpt-5-codex" and ep.terminated is True
    assert ep.env["codex"]["session"]["cli_version"] == "0.39.0"


def test_an_aborted_turn_is_not_terminated(tmp_path):
    [ep] = _rollout(tmp_path, [META, *PROMPT,
        _item("response_item", type="function_call", name="exec_command", call_id="c1",
              arguments=json.dumps({"cmd": "rm -rf build"})),
        _item("event_msg", type="turn_aborted", reason="interrupted")])
    assert ep.terminated is False and ep.steps[0].action.code == "rm -rf build"


def test_a_rollout_that_stops_after_a_calls_output_is_not_terminated(tmp_path):
    """The model always answers a call's output; a rollout whose last item is one was cut (or the CLI was still
    running), unless the CLI recorded the turn as complete after it."""
    items = [META, *PROMPT, _item("response_item", type="function_call", name="shell", call_id="c1",
                                  arguments=json.dumps({"command": ["bash", "-lc", "ls"]})),
             _item("response_item", type="function_call_output", call_id="c1",
                   output=json.dumps({"output": "a.txt", "metadata": {"exit_code": 0}}))]
    [ep] = _rollout(tmp_path, items)
    assert ep.terminated is False and ep.final_observation.text == "a.txt"
    [ep] = _rollout(tmp_path, [*items, _item("event_msg", type="task_complete", last_agent_message=None)])
    assert ep.terminated is True


def test_real_codex_exec_rollout_cut_after_three_commands():
    """codemie-ai/codemie-code (Apache-2.0) `tests/integration/metrics/fixtures/codex/sessions/2026/01/02/
    rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl` at commit
    8f3a25928b281e0b67e83dd59ebbc991282ba40b: a real `codex exec` 0.77.0 rollout (gpt-5-1-codex-2025-11-13,
    source `exec`), committed by its authors as the first 26 lines of the session. Bundled in
    data/codemie-code/ with the license and its PROVENANCE.md. A person counts: the prompt "what is current
    repository about? ...", then three `shell` calls (`ls`, `rg --files -g 'AGENTS.md'`,
    `sed -n '1,160p' README.md`), each answered with exit code 0; the file ends after the third output, before
    the model answered: 3 steps, not terminated, outcome unknown."""
    path = CODEMIE
    records = read_records(codex, path)
    check(records, GOLDEN / "codex-codemie-code.json", env_keys=("codex",))
    [ep] = records
    assert ep.task == "what is current repository about? summarize purpuse and explain goals"
    assert [s.action.code for s in ep.steps] == ["ls", "rg --files -g 'AGENTS.md'", "sed -n '1,160p' README.md"]
    assert [s.observation.exit_code for s in ep.steps[1:]] + [ep.final_observation.exit_code] == [0, 0, 0]
    assert ep.steps[2].observation.text == "docs/AGENTS.md\n" and ep.agent == "gpt-5-1-codex-2025-11-13"
    assert ep.terminated is False and ep.outcome == "unknown"
    assert ep.env["codex"]["session"]["cli_version"] == "0.77.0" and ep.env["codex"]["session"]["source"] == "exec"
    # the session's instructions (its skills list), then the AGENTS.md and environment messages the CLI injects
    prompt = ep.env["system_prompt"]
    assert prompt.startswith("## Skills") and "# AGENTS.md instructions for" in prompt and "<environment_context>" in prompt


def test_the_older_bare_layout(tmp_path):
    """Rollouts written before the `{timestamp, type, payload}` lines: the session meta, then bare items and
    `record_type: state` lines."""
    items = [{"kind": "", "payload": {"id": "0197c0de-0000-7000-8000-000000000002", "timestamp": "2025-06-01T09:00:00Z",
                                      "instructions": None, "git": {"branch": "main"}}},
             {"kind": "", "payload": {"record_type": "state"}},
             {"kind": "", "payload": {"type": "message", "role": "user",
                                      "content": [{"type": "input_text", "text": "Count lines"}]}},
             {"kind": "", "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
                                      "arguments": json.dumps({"command": ["bash", "-lc", "wc -l a.txt"]})}},
             {"kind": "", "payload": {"type": "function_call_output", "call_id": "c1",
                                      "output": json.dumps({"output": "3 a.txt", "metadata": {"exit_code": 0}})}},
             {"kind": "", "payload": {"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text", "text": "3"}]}}]
    [ep] = _rollout(tmp_path, items, wrap=False)
    assert [(s.action.kind, s.action.code or s.action.text) for s in ep.steps] == [("command", "wc -l a.txt"),
                                                                                    ("message", "3")]
    assert ep.task == "Count lines" and ep.steps[1].observation.exit_code == 0
    assert ep.env["codex"]["session"]["git"] == {"branch": "main"}


def test_broken_and_unknown_lines_are_reported_and_the_rest_is_read(tmp_path):
    path = tmp_path / "rollout-x.jsonl"
    good = [json.dumps({"timestamp": "2025-09-01T10:00:00Z", "type": k["kind"], "payload": k["payload"]})
            for k in (META, *PROMPT)]
    answer = json.dumps({"timestamp": "2025-09-01T10:00:09Z", "type": "response_item", "payload": {
        "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a b"}]}})
    unknown = json.dumps({"timestamp": "2025-09-01T10:00:10Z", "type": "future_record", "payload": {"x": 1}})
    path.write_text("\n".join([*good, '{"timestamp": "2025', answer, unknown]) + "\n")
    records = read_records(codex, path)
    assert [r.rule for r in records if isinstance(r, Rejected)] == ["parse_error", "unknown_content"]
    assert records[-1].steps[0].action.text == "a b"
    assert records[-1].env["codex"]["unknown_records"] == [json.loads(unknown)]


def test_units(tmp_path):
    files = [str(SAMPLE), str(REPO / "samples" / "mcp" / "jsonrpc-session.jsonl")]
    heads = {f: Path(f).read_bytes()[:4096] for f in files}
    assert codex.units(files, heads.__getitem__) == [str(SAMPLE)]


def test_real_rollout_cut_before_the_answer_keeps_its_task():
    """simonw/claude-code-transcripts' real 0.77.0 opening (Apache-2.0, beside this test): instructions, the
    AGENTS.md and environment messages, the prompt, six turn_context lines and no answer: one empty_episode row
    whose snippet keeps the task."""
    path = Path(__file__).parent / "data" / "codex-0.77.0" / "sample_codex_session.jsonl"
    [row] = read_records(codex, path)
    assert row.rule == "empty_episode"
    assert json.loads(row.snippet)["task"].startswith("can you analyse the MD files in this directory")


def test_bookkeeping_items_are_counted_and_unknown_items_kept_raw(tmp_path):
    records = _rollout(tmp_path, [META, *PROMPT,
        _item("response_item", type="ghost_snapshot", ghost_commit={"id": "abc"}),
        _item("response_item", type="hologram", data=1),
        _item("response_item", type="message", role="assistant", content=[{"type": "output_text", "text": "ok"}])])
    assert [r.rule for r in records if isinstance(r, Rejected)] == ["unknown_content"]
    ep = records[-1]
    assert ep.env["codex"]["bookkeeping"] == {"ghost_snapshot": 1}
    assert ep.env["unmapped"][0]["raw"] == {"type": "hologram", "data": 1}
