"""OpenCode session transcripts (the TUI's `/export` markdown): the opening of a real MIT transcript against a golden
a person read against the raw file, and the writer's forms (`formatTranscript`) as hand-made edge cases.

Bundled (MIT): shynlee04/hivemind-plugin @ 7f115ce744f0ce95e2aac5aa383c19bba1b50786, `session-ses_1877.md`, its
first 25 messages (`samples/opencode-transcript/shynlee04-hivemind-plugin/`, see its PROVENANCE.md).
"""

from __future__ import annotations

import json

from ingest.record import Episode, Rejected
from ingest.swe import opencode_transcript
from tests.conftest import REPO
from tests.ingest.golden import check, read_records

SAMPLE = REPO / "samples" / "opencode-transcript" / "shynlee04-hivemind-plugin" / "session-ses_1877.md"
GOLDEN = REPO / "tests" / "ingest" / "swe" / "golden"
HEAD = ("# Fix the build\n\n**Session ID:** ses_abc123\n**Created:** 1/2/2026, 3:04:05 PM\n"
        "**Updated:** 1/2/2026, 3:09:00 PM\n\n---\n\n")


def _head(path) -> bytes:
    with open(path, "rb") as f:
        return f.read(4096)


def _tool(name: str, arguments: dict, output: str | None = None, error: str | None = None) -> str:
    text = f"**Tool: {name}**\n\n**Input:**\n```json\n{json.dumps(arguments, indent=2)}\n```\n"
    if output is not None:
        text += f"\n**Output:**\n```\n{output}\n```\n"
    if error is not None:
        text += f"\n**Error:**\n```\n{error}\n```\n"
    return text + "\n"


def _read(tmp_path, body: str) -> list:
    path = tmp_path / "session-ses_abc123.md"
    path.write_text(HEAD + body)
    return read_records(opencode_transcript, path)


def test_real_transcript_opening_golden():
    """18 calls (every one finished: 15 outputs, 3 errors), three prompts, reasoning exported: each call an action
    with its input, its output or error the next observation; the agent and each reply's time kept in env."""
    assert opencode_transcript.units([str(SAMPLE)], _head) == [str(SAMPLE)]
    records = read_records(opencode_transcript, SAMPLE)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    calls = [s for s in ep.steps if s.action.kind in ("tool_call", "command")]
    assert len(calls) == SAMPLE.read_text().count("\n**Tool: ") == 18
    assert [s.action.tool_name for s in calls][:4] == ["task", "invalid", "read", "edit"]
    assert sum(1 for s in ep.steps if s.observation.is_error) + (ep.final_observation.is_error or 0) == 3
    assert ep.key == "ses_18773c333ffeheRO5lJXdOi34C" and ep.agent == "DeepSeek V4 Pro" and ep.outcome == "unknown"
    turns = ep.env["opencode_transcript"]["turns"]
    assert len(turns) == 22 and turns[0] == {"message": 1, "agent": "Gsd-Phase-Researcher", "model": "DeepSeek V4 Pro",
                                             "seconds": 156.5}
    check(records, GOLDEN / "opencode-transcript-hivemind.json", texts="hash", env_keys=("opencode_transcript",))


def test_calls_follow_their_turn_text_opens_the_next_and_unfinished_calls_have_no_result(tmp_path):
    body = ("## User\n\nList the files, then fix it.\n\n---\n\n"
            "## Assistant (Build · GPT-5 · 3.2s)\n\n_Thinking:_\n\nI should look first.\n\n"
            + _tool("bash", {"command": "ls"}, output="a.py\nb.py")
            + _tool("read", {"filePath": "a.py"}, output="```python\nprint(1)\n```\n\nmore")
            + "Now the fix.\n\n"
            + _tool("edit", {"filePath": "a.py"}, error="Could not find oldString")
            + _tool("write", {"filePath": "c.py"})
            + "---\n\n## Assistant\n\nDone: c.py holds it.\n\n---\n\n")
    records = _read(tmp_path, body)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert ep.task == "List the files, then fix it."
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [
        ("command", "bash"), ("tool_call", "read"), ("tool_call", "edit"), ("tool_call", "write"), ("message", None)]
    assert ep.steps[0].reasoning == "I should look first."
    assert ep.steps[0].observation.text == "List the files, then fix it."
    # a fence inside an output ends where the next part starts, not at the output's own fence
    assert ep.steps[2].observation.text == "```python\nprint(1)\n```\n\nmore"
    assert ep.steps[2].reasoning == "Now the fix."
    assert ep.steps[3].observation.is_error and ep.steps[3].observation.text == "Could not find oldString"
    assert ep.steps[4].observation.kind == "none"  # `write` never finished: no result
    assert ep.steps[4].action.text == "Done: c.py holds it." and ep.terminated
    assert ep.env["opencode_transcript"]["turns"][1] == {"message": 3, "agent": None, "model": None, "seconds": None}


def test_only_the_writers_header_is_claimed_and_a_message_of_no_kind_is_kept_raw(tmp_path):
    other = tmp_path / "notes.md"
    other.write_text("# Notes\n\n**Session ID:** 42\n")
    plain = tmp_path / "session.md"
    plain.write_text("# New session\n\n**Session ID:** ses_x1\n**Created:** today\n")
    assert opencode_transcript.units([str(other), str(plain)], _head) == [str(plain)]
    records = _read(tmp_path, "## User\n\nhi\n\n---\n\n## Assistant (Build · GPT-5)\n\nhello\n\n---\n\n")
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [s.action.text for s in ep.steps] == ["hello"]
    bad = tmp_path / "bad.md"
    bad.write_text("# t\n\n**Session ID:** ses_y\n**Created:** x\n")
    [row] = read_records(opencode_transcript, bad)
    assert row.rule == "parse_error" and "header" in row.reason


def test_an_input_that_is_not_json_is_kept_as_written_with_a_row(tmp_path):
    body = ("## Assistant (Build · GPT-5 · 1.0s)\n\n**Tool: bash**\n\n**Input:**\n```json\n{not json\n```\n\n"
            "**Output:**\n```\nok\n```\n\n---\n\n")
    records = _read(tmp_path, body)
    [row] = [r for r in records if isinstance(r, Rejected)]
    assert row.rule == "bad_record" and "input is not JSON" in row.reason
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert "{not json" in ep.steps[0].action.arguments and ep.final_observation.text == "ok"
