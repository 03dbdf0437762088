"""Claude Code session transcripts: real public transcripts (samples/claude-code: an MIT-licensed excerpt of a
real 2.0.46 session; ../shared/samples/claude-code: a real 2.1.152 session without a license, skipped when
absent), Harbor's own conversion of the bundled trial's session to ATIF, and small hand-made edge cases. The
sessions Claude Code writes at test time are read in `test_claude_code_cli.py`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.parts import require_shared_sample

from ingest import atif
from ingest.record import Episode, Rejected
from ingest.swe import claude_code
from tests.ingest.golden import check, read_records

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples"
SHARED = REPO.parent / "shared" / "samples" / "claude-code"
GOLDEN = Path(__file__).parent / "golden"
HARBOR_TRIAL = SAMPLES / "atif" / "harbor-claude-code" / "fix-calc-add__Vq7mR2p"
HARBOR_SESSION = next((HARBOR_TRIAL / "agent" / "sessions" / "projects" / "-app").glob("*.jsonl"))


def _line(kind: str, uuid: str, parent: str | None, content, *, side=False, model=None, mid=None, **extra) -> str:
    msg = {"role": kind, "content": content}
    if kind == "assistant":
        msg.update(id=mid or f"msg_{uuid}", model=model or "claude-sonnet-4-5-20250929", type="message")
    return json.dumps({"parentUuid": parent, "isSidechain": side, "userType": "external", "cwd": "/w",
                       "sessionId": "s-1", "version": "2.0.50", "type": kind, "message": msg, "uuid": uuid,
                       "timestamp": f"2025-11-20T10:00:0{len(uuid) % 10}.000Z", **extra})


def _read(tmp_path, lines: list[str], name="s-1.jsonl") -> list:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return read_records(claude_code, path)


def test_golden_real_excerpt_with_a_subagent():
    """Read by hand against the file: the main line's `Task` call, its result and closing turn; the subagent's
    narration (the reasoning of its `Grep` call) and a result whose call was cut from the excerpt (kept as the
    subagent's final observation); the subagent named by its agentId."""
    records = read_records(claude_code, SAMPLES / "claude-code" / "claude-code-log" / "sidechain_integrated.jsonl")
    check(records, GOLDEN / "claude-code-sidechain.json", env_keys=("sidechains", "sidechain", "claude_code"))


def test_golden_real_session_without_license():
    path = require_shared_sample(SHARED / "agent-history" / "session-01.jsonl")
    records = read_records(claude_code, path)
    check(records, GOLDEN / "claude-code-agent-history.json", texts="hash", env_keys=("claude_code",))


def test_the_bundled_harbor_session_reads_as_harbor_converted_it():
    """Harbor's converter made agent/trajectory.json from this session: the same tool calls with the same results
    and the same closing message, main line and subagent (Harbor writes parallel calls in the order their results
    came back and a narration turn as an action of its own; we keep the calls in the order they were made)."""
    ours = [r for r in read_records(claude_code, HARBOR_SESSION) if isinstance(r, Episode)]
    theirs = [r for r in read_records(atif, HARBOR_TRIAL) if isinstance(r, Episode)]
    assert [e.key for e in ours] == ["", "sidechain:7a3e0000-0000-4000-8000-000000000008"]
    for mine, harbor in zip(ours, theirs):
        calls = lambda ep: sorted((s.action.tool_name, s.action.arguments) for s in ep.steps if s.action.tool_name)
        assert calls(mine) == calls(harbor)
        assert mine.steps[-1].action.text == harbor.steps[-1].action.text
        assert mine.task == harbor.task
    main = ours[0]
    assert [s.action.tool_name for s in main.steps] == ["Read", "Read", "Task", "Edit", "Bash", None]
    # parallel reads: each result is paired with its own call although they came back in reverse order
    assert "return a - b" in main.steps[1].observation.text and "def test_add" in main.steps[2].observation.text
    assert main.steps[0].reasoning == "I'll read the module and its tests first."
    assert main.steps[4].action.kind == "command" and main.steps[4].action.code == "cd /app && pytest -q"
    assert main.steps[5].observation.kind == "terminal" and "4 passed" in main.steps[5].observation.text
    assert main.env["models"] == ["claude-opus-4-1-20250805", "claude-sonnet-4-5-20250929"]
    assert main.terminated and main.outcome == "unknown"


def test_the_time_of_each_message_the_session_wrote_is_kept_with_the_step_it_joined():
    """A step's time is its call's; the user's prompt and each tool result were written at times of their own
    (the parallel reads came back in reverse order): each is kept, with the step whose observation holds it."""
    main = next(r for r in read_records(claude_code, HARBOR_SESSION) if isinstance(r, Episode) and r.key == "")
    written = [json.loads(line) for line in HARBOR_SESSION.read_text().splitlines() if line.strip()]
    users = [o for o in written if o["type"] == "user" and not o["isSidechain"]]
    extras = main.env["message_extras"]
    assert [e["timestamp"] for e in extras] == [o["timestamp"].replace("Z", "000+00:00") for o in users]
    assert [e["role"] for e in extras] == ["user"] + ["tool"] * (len(users) - 1)
    for extra, record in zip(extras[1:], users[1:]):
        (block,) = record["message"]["content"]
        content = block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]
        seen = main.steps[extra["step"]].observation if extra["step"] < len(main.steps) else main.final_observation
        assert content.strip()[:40] in seen.text
    assert [e["step"] for e in extras[1:3]] == [2, 1]


def test_streamed_lines_of_one_message_are_one_turn(tmp_path):
    """Claude Code writes one line per content block of a streamed message (same message.id)."""
    records = _read(tmp_path, [
        _line("user", "u1", None, "Fix it."),
        _line("assistant", "a1", "u1", [{"type": "thinking", "thinking": "Look first.", "signature": "x"}], mid="m1"),
        _line("assistant", "a2", "a1", [{"type": "text", "text": "Reading."}], mid="m1"),
        _line("assistant", "a3", "a2", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}],
              mid="m1"),
        _line("user", "u2", "a3", [{"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True}]),
        _line("assistant", "a4", "u2", [{"type": "text", "text": "Done."}], mid="m2"),
    ])
    [ep] = records
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [("tool_call", "Read"), ("message", None)]
    assert ep.steps[0].reasoning == "Look first.\n\nReading."
    assert (ep.steps[1].observation.text, ep.steps[1].observation.is_error) == ("boom", True)


def test_injected_prompts_are_not_the_task_and_odd_lines_are_kept(tmp_path):
    records = _read(tmp_path, [
        json.dumps({"type": "summary", "summary": "Fixing a bug", "leafUuid": "a1"}),
        _line("user", "u0", None, "Caveat: the messages below were generated by local commands.", isMeta=True),
        _line("user", "u1", "u0", [{"type": "text", "text": "Fix the bug."}]),
        "{not json",
        json.dumps({"type": "brand-new-kind", "sessionId": "s-1", "x": 1}),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "Fixed."}]),
    ])
    kinds = [(r.rule, r.line) if isinstance(r, Rejected) else "episode" for r in records]
    assert kinds == [("parse_error", 4), ("unknown_content", 5), "episode"]
    ep = records[-1]
    assert ep.task == "Fix the bug."
    assert ep.env["claude_code"]["summaries"] == [{"summary": "Fixing a bug", "leafUuid": "a1"}]
    assert ep.env["claude_code"]["unknown_records"] == [{"type": "brand-new-kind", "sessionId": "s-1", "x": 1}]


def test_a_session_cut_while_a_tool_runs_is_not_terminated(tmp_path):
    [ep] = _read(tmp_path, [
        _line("user", "u1", None, "Run it."),
        _line("assistant", "a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}]),
    ])
    assert ep.terminated is False and ep.steps[0].action.code == "make"


def test_units_claims_sessions_only(tmp_path):
    session = tmp_path / "s.jsonl"
    session.write_text(_line("user", "u1", None, "hi") + "\n")
    other = SAMPLES / "mcp" / "jsonrpc-session.jsonl"
    files = [str(session), str(HARBOR_SESSION), str(other)]
    heads = {f: Path(f).read_bytes()[:4096] for f in files}
    assert claude_code.units(files, heads.__getitem__) == [str(session), str(HARBOR_SESSION)]


def test_a_subagent_file_is_one_episode_of_its_subagent(tmp_path):
    """Claude Code 2.1 writes each subagent to `<session>/subagents/agent-<id>.jsonl`: only sidechain lines."""
    records = _read(tmp_path, [
        _line("user", "u1", None, "Find callers.", side=True, agentId="a7"),
        _line("assistant", "a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Grep", "input": {"pattern": "f("}}],
              side=True, agentId="a7"),
        _line("user", "u2", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "x.py:3"}], side=True,
              agentId="a7"),
        _line("assistant", "a2", "u2", [{"type": "text", "text": "x.py line 3."}], side=True, agentId="a7"),
    ], name="agent-a7.jsonl")
    [ep] = records
    assert ep.key == "sidechain:a7" and ep.task == "Find callers." and ep.env["sidechain"]["agent_id"] == "a7"
    assert [s.action.tool_name for s in ep.steps] == ["Grep", None] and ep.terminated


def test_a_harbor_trial_without_atif_is_read_from_its_claude_code_session(tmp_path):
    """A trial whose agent wrote no agent/trajectory.json (what most Claude Code trials hold before conversion):
    its session file is read instead, the main line with the trial's reward."""
    import shutil

    trial = tmp_path / HARBOR_TRIAL.name
    shutil.copytree(HARBOR_TRIAL, trial)
    (trial / "agent" / "trajectory.json").unlink()
    records = read_records(atif, trial)
    rel = f"agent/sessions/projects/-app/{HARBOR_SESSION.name}"
    assert [(r.key, r.outcome, r.reward) for r in records] == [
        (rel, "success", 1.0), (f"{rel}:sidechain:7a3e0000-0000-4000-8000-000000000008", "unknown", None)]
    assert records[0].env["harbor"]["task_name"] == "fix-calc-add"
    assert records[0].env["sidechains"] == [records[1].key]
    direct = [r for r in read_records(claude_code, HARBOR_SESSION)]
    assert [len(r.steps) for r in records] == [len(r.steps) for r in direct] == [6, 2]


def test_server_tool_results_inside_the_assistant_message_are_results(tmp_path):
    """A web search runs on Anthropic's side: its call and its result are both blocks of the assistant message."""
    [ep] = _read(tmp_path, [
        _line("user", "u1", None, "Latest pytest?"),
        _line("assistant", "a1", "u1", [
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "pytest release"}},
            {"type": "web_search_tool_result", "tool_use_id": "s1",
             "content": [{"type": "web_search_result", "title": "pytest 9", "url": "https://x"}]},
            {"type": "text", "text": "pytest 9."}], mid="m1"),
    ])
    assert [(s.action.tool_name, s.action.text) for s in ep.steps] == [("web_search", None), (None, "pytest 9.")]
    assert ep.steps[1].observation.text == "[web_search_result]" and ep.domain == "swe"


def test_a_prompt_queued_while_the_agent_worked_is_a_user_message_and_other_attachments_are_counted(tmp_path):
    """Shapes as Claude Code 2.1 writes them: a `queued_command` attachment with `commandMode` "prompt" is what
    the person typed during the turn (seen before the next action); a task notification and the context
    attachments are counted by type, with no warning."""
    def attachment(uuid, parent, body):
        return json.dumps({"type": "attachment", "parentUuid": parent, "isSidechain": False, "uuid": uuid,
                           "sessionId": "s-1", "attachment": body, "timestamp": "2025-11-20T10:00:05.000Z"})

    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    result = [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]
    records = _read(tmp_path, [
        _line("user", "u1", None, "list the files"),
        attachment("a0", "u1", {"type": "date", "date": "2025-11-20"}),
        _line("assistant", "a1", "a0", [call]),
        _line("user", "u2", "a1", result),
        attachment("a2", "u2", {"type": "queued_command", "prompt": "and count them", "commandMode": "prompt"}),
        attachment("a3", "a2", {"type": "queued_command", "prompt": "<task-notification/>",
                                "commandMode": "task-notification"}),
        _line("assistant", "a4", "a3", [{"type": "text", "text": "One file."}]),
    ])
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.steps[1].observation.text == "a.txt\n\nand count them"
    assert ep.env["claude_code"]["attachments"] == {"date": 1, "queued_command": 1}
    assert ep.task == "list the files"
