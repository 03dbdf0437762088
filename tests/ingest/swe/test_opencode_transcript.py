"""OpenCode session transcripts (the TUI's `/export` markdown): the opening of a real MIT transcript against a golden
a person read against the raw file, and the writer's forms (`formatTranscript`) as hand-made edge cases.

The writer itself (cut unchanged from each installed release's binary and run under node: no command, flag or
server route writes the markdown, the TUI's `/export` and `/copy` alone call it) writes the transcript of the
scripted `opencode run` session from its `opencode export` JSON: the script and the JSON's episode are the oracle.

Bundled (MIT): shynlee04/hivemind-plugin @ 7f115ce744f0ce95e2aac5aa383c19bba1b50786, `session-ses_1877.md`, its
first 25 messages (`samples/opencode-transcript/shynlee04-hivemind-plugin/`, see its PROVENANCE.md).

Read where they lie in `../shared/samples/opencode-transcript/` (no license at the commit that holds them, so never
copied here), against goldens a person read against the raw files (`texts="hash"`):
- KartikBazzad/bunbase @ 94e57a13a37422d18f74f2844543128520a0a3a7, `session-ses_3f83.md` (436,809 bytes; the
  repository's MIT `LICENSE` came two weeks after the file was deleted) -> `kartikbazzad-bunbase/session-ses_3f83.md`:
  the early writer's fenced calls (January 2026), glm-4.7 in Plan then Build mode;
- glats/nixos-hosts @ d4725b478d874ca52a7ced06bd6c76fff81ff446, `session-ses_24f1.md` (7,172 bytes) ->
  `glats-nixos-hosts/session-ses_24f1.md`: Kimi K2.5 as an orchestrator, one `task` call (a subagent);
- CarbonatiX/carbonatix-be @ c551760c8019400886a4ed00b5fc7979c2539cb4, `session-ses_0479.md` (7,950 bytes) ->
  `carbonatix-carbonatix-be/session-ses_0479.md`: exported without metadata or tool details (names of calls alone).
"""

from __future__ import annotations

import copy
import json

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import opencode, opencode_transcript
from tests.conftest import REPO
from tests.ingest.golden import check, read_records
from tests.parts import require_shared_sample
from tests.ingest.swe.coding_clis import (OPENCODE_MODEL, OPENCODE_PROMPT, cli_run, opencode_export,
                                          opencode_transcript as written_transcript, played)
from tests.ingest import golden

SAMPLE = REPO / "samples" / "opencode-transcript" / "shynlee04-hivemind-plugin" / "session-ses_1877.md"
GOLDEN = REPO / "tests" / "ingest" / "swe" / "golden"
SHARED = REPO.parent / "shared" / "samples" / "opencode-transcript"
HEAD = ("# Fix the build\n\n**Session ID:** ses_abc123\n**Created:** 1/2/2026, 3:04:05 PM\n"
        "**Updated:** 1/2/2026, 3:09:00 PM\n\n---\n\n")


VERSIONS = ("1.1.65", "1.18.33")  # the Makefile's OPENCODE_VERSIONS


@pytest.fixture(scope="module", params=VERSIONS)
def cli(request, tmp_path_factory):
    return cli_run("opencode", request.param, tmp_path_factory)


@pytest.fixture(scope="module")
def exported(cli, tmp_path_factory) -> tuple[str, Episode]:
    """(`opencode export` of the run's main session, that JSON's episode as the `opencode` reader reads it)."""
    data = cli.home / ".local" / "share" / "opencode"
    data = data / ("storage" if cli.version.startswith("1.1.") else "opencode.db")
    episodes = [e for e in read_records(opencode, data) if isinstance(e, Episode)]
    (main,) = [e for e in episodes if "parentID" not in e.env["opencode"]]
    path = tmp_path_factory.mktemp("export") / "session.json"
    path.write_text(opencode_export(cli, main.key))
    (episode,) = read_records(opencode, path)
    return path.read_text(), episode


def _transcript(tmp_path, markdown: str) -> list:
    path = tmp_path / "session-ses_scripted.md"
    path.write_text(markdown)
    return read_records(opencode_transcript, path)


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
    assert opencode_transcript.units([str(SAMPLE)], golden.head) == [str(SAMPLE)]
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


def _shared_episode(path) -> tuple[list, Episode]:
    assert opencode_transcript.units([str(path)], golden.head) == [str(path)]
    records = read_records(opencode_transcript, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    return records, ep


def _results(ep: Episode) -> list:
    """The observation after each call: its result (with any user message that came after it)."""
    calls = [i for i, s in enumerate(ep.steps) if s.action.kind != "message"]
    return [ep.steps[i + 1].observation if i + 1 < len(ep.steps) else ep.final_observation for i in calls]


def test_a_real_transcript_of_the_early_writer_reads_every_fenced_call():
    """Counted by hand in the raw file: 4 `## User` and 96 `## Assistant (Plan|Build · glm-4.7 · <s>s)` messages,
    95 `_Thinking:_` parts, 99 fenced calls (31 read, 26 bash, 26 edit, 10 todowrite, 3 write, 2 glob, 1 grep), 91
    `**Output:**` and 3 `**Error:**` results: 5 calls have none (completed with an empty output, the writer skips
    it; one of them is followed by the user's next prompt). The transcript opens on the model's turn (the first
    prompt is not in it); it ends on an empty reply after a failed `git diff`: not terminated."""
    path = require_shared_sample(SHARED / "kartikbazzad-bunbase" / "session-ses_3f83.md")
    records, ep = _shared_episode(path)
    calls = [s for s in ep.steps if s.action.kind != "message"]
    assert len(calls) == path.read_text().count("\n```\nTool: ") == 99
    assert [s.action.tool_name for s in calls].count("edit") == 26 and ep.agent == "glm-4.7"
    results = _results(ep)
    assert sum(1 for o in results if o.is_error) == 3 and sum(1 for o in results if o.kind == "none") == 4
    assert ep.steps[1].observation.text.startswith("<file>\n00001| // Package pool manages multiple logical")
    assert ep.final_observation.text.startswith("fatal: ambiguous argument 'internal/docdb/core.go'")
    assert not ep.terminated and len(ep.env["opencode_transcript"]["turns"]) == 96
    check(records, GOLDEN / "opencode-transcript-bunbase-early-writer.json", texts="hash",
          env_keys=("opencode_transcript",))


def test_a_real_orchestrator_transcript_with_a_subagent_call():
    """Read whole: an empty first prompt (a command's), the orchestrator's `task` call whose output is the
    subagent's report (`task_id: ses_24f1162c...`, then `<task_result>`), two replies (their text after the
    reasoning is read into it: the writer marks no end), the user's answer between them; terminated."""
    path = require_shared_sample(SHARED / "glats-nixos-hosts" / "session-ses_24f1.md")
    records, ep = _shared_episode(path)
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [("tool_call", "task"), ("message", None),
                                                                         ("message", None)]
    assert json.loads(ep.steps[0].action.arguments)["subagent_type"] == "sdd-orchestrator"
    assert ep.steps[1].observation.text.startswith("task_id: ses_24f1162c8ffeJXwWl8eqOMMmJl")
    assert ep.task == "no. quiero continuar con los builds explora" and ep.agent == "Kimi K2.5" and ep.terminated
    check(records, GOLDEN / "opencode-transcript-nixos-hosts.json", texts="hash", env_keys=("opencode_transcript",))


def test_a_real_transcript_exported_without_details_keeps_each_call_by_name():
    """No metadata and no tool details: 81 `**Tool: <name>**` lines and nothing under them: 81 calls with no
    input and no result (the observation after a call holds the user's next prompt where one follows), 7 text
    replies; the model is unknown."""
    path = require_shared_sample(SHARED / "carbonatix-carbonatix-be" / "session-ses_0479.md")
    records, ep = _shared_episode(path)
    calls = [s for s in ep.steps if s.action.kind != "message"]
    assert len(calls) == path.read_text().count("\n**Tool: ") == 81 and len(ep.steps) == 88
    assert all(json.loads(s.action.arguments) == {} for s in calls) and ep.agent is None
    assert sum(1 for o in _results(ep) if o.kind == "none") == 80
    check(records, GOLDEN / "opencode-transcript-carbonatix.json", texts="hash", env_keys=("opencode_transcript",))


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


def _fenced_tool(name: str, arguments: dict | None, output: str | None = None, error: str | None = None) -> str:
    """A call as the writer of early 2026 wrote it: in a fence of its own, the labels right under each fence."""
    text = f"```\nTool: {name}\n"
    if arguments is not None:
        text += f"\n**Input:**\n```json\n{json.dumps(arguments, indent=2)}\n```"
    if output is not None:
        text += f"\n**Output:**\n```\n{output}\n```"
    if error is not None:
        text += f"\n**Error:**\n```\n{error}\n```"
    return text + "\n```\n\n"


def test_the_early_writers_fenced_calls_are_read_and_a_call_without_output_takes_no_other_result(tmp_path):
    """Before 1.1.65 the writer fenced each call (`Tool: <name>` inside the fence): every call is an action, each
    result the observation of the step after its own call; a completed call whose output was empty has none
    written, and the next call's result stays with the next call (pairing by order would shift every result)."""
    body = ("## User\n\nBuild it.\n\n---\n\n"
            "## Assistant (Build · glm-4.7 · 3.2s)\n\n_Thinking:_\n\nRemove the stale file first.\n\n"
            + _fenced_tool("bash", {"command": "rm old.go"})
            + "---\n\n## Assistant (Build · glm-4.7 · 5.0s)\n\n"
            + _fenced_tool("bash", {"command": "go build ./..."}, output="ok\n")
            + _fenced_tool("read", {"filePath": "a.md"}, output="```go\nx := 1\n```\n")
            + _fenced_tool("edit", {"filePath": "a.go"}, error="oldString not found")
            + _fenced_tool("glob", None)
            + "Done.\n\n---\n\n")
    records = _read(tmp_path, body)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps[:5]] == [("bash", {"command": "rm old.go"}), ("bash", {"command": "go build ./..."}),
                                       ("read", {"filePath": "a.md"}), ("edit", {"filePath": "a.go"}),
                                       ("glob", {})]  # exported without details: no input
    assert ep.steps[0].reasoning == "Remove the stale file first." and ep.agent == "glm-4.7"
    assert ep.steps[1].observation.kind == "none"  # `rm` printed nothing: no output written, no result
    assert ep.steps[2].observation.text == "ok\n"
    assert ep.steps[3].observation.text == "```go\nx := 1\n```\n"  # a fence inside the output is kept
    assert ep.steps[4].observation.is_error and ep.steps[4].observation.text == "oldString not found"
    assert ep.steps[5].observation.kind == "none" and ep.steps[5].action.text == "Done." and ep.terminated


def test_a_last_reply_of_reasoning_alone_ends_the_run_and_a_last_call_does_not(tmp_path):
    # with thinking exported the reply's text may sit inside the reasoning part: the model still answered
    [ep] = [r for r in _read(tmp_path, "## User\n\nHi.\n\n---\n\n## Assistant (Build · GPT-5 · 1.0s)\n\n"
                               "_Thinking:_\n\nHello back.\n\n---\n\n") if isinstance(r, Episode)]
    assert ep.steps[-1].reasoning == "Hello back." and ep.terminated
    [ep] = [r for r in _read(tmp_path, "## User\n\nHi.\n\n---\n\n## Assistant (Build · GPT-5 · 1.0s)\n\n"
                               + _tool("bash", {"command": "ls"}, output="a.py") + "---\n\n")
            if isinstance(r, Episode)]
    assert not ep.terminated


def test_only_the_writers_header_is_claimed_and_a_message_of_no_kind_is_kept_raw(tmp_path):
    other = tmp_path / "notes.md"
    other.write_text("# Notes\n\n**Session ID:** 42\n")
    plain = tmp_path / "session.md"
    plain.write_text("# New session\n\n**Session ID:** ses_x1\n**Created:** today\n")
    assert opencode_transcript.units([str(other), str(plain)], golden.head) == [str(plain)]
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


def test_the_writers_transcript_of_a_scripted_run_reads_as_the_script_and_as_its_json_export(cli, exported, tmp_path):
    """Every scripted call with its arguments and the result OpenCode sent back, in order, then the answer; step by
    step the JSON export's episode, less what the markdown does not write (a command's exit code)."""
    text, json_episode = exported
    records = _transcript(tmp_path, written_transcript(cli, text))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = records
    assert ep.key == json_episode.key and ep.terminated and ep.outcome == "unknown"
    assert ep.task.rstrip("\n") == OPENCODE_PROMPT  # 1.1 keeps the prompt's closing newline; the JSON reader trims it
    # the header names the model by id up to 1.1, by the provider config's display name later
    assert ep.agent == (OPENCODE_MODEL if cli.version.startswith("1.1.") else "Scripted")
    calls = played(cli)
    tool_steps = [s for s in ep.steps if s.action.kind != "message"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in tool_steps] == \
        [(c.name, c.arguments) for c in calls]
    after = [s.observation for s in ep.steps[1:]]
    assert [o.text for o in after[:len(calls)]] == [c.seen for c in calls]
    assert after[3].text.startswith("cat: missing.txt: No such file")
    assert ep.steps[-1].action.kind == "message" and ep.steps[-1].action.text == cli.script[-1].text
    assert [(s.action.kind, s.action.tool_name, s.action.arguments, s.action.text, s.observation.kind,
             s.observation.text) for s in ep.steps[1:]] == \
        [(s.action.kind, s.action.tool_name, s.action.arguments, s.action.text, s.observation.kind,
          s.observation.text) for s in json_episode.steps[1:]]
    turns = ep.env["opencode_transcript"]["turns"]
    assert len(turns) == len(cli.server.agent_requests()) and {t["agent"] for t in turns} == {"Build"}
    assert "reasoning_may_hold_text" not in ep.env["opencode_transcript"]


def test_the_writer_puts_no_mark_between_reasoning_and_the_text_after_it(cli, exported, tmp_path):
    """A reasoning part before the answer's text (added to the exported session, then written by the writer): with
    thinking exported the answer reads into the reasoning, and the episode says so; without it, the answer is the
    last step's message."""
    text, _ = exported
    doc = json.loads(text)
    last = doc["messages"][-1]
    assert last["info"]["role"] == "assistant" and [p["type"] for p in last["parts"]].count("text") == 1
    at = next(i for i, p in enumerate(last["parts"]) if p["type"] == "text")
    thought = copy.deepcopy(last["parts"][at]) | {"type": "reasoning", "text": "The copy worked; cat failed."}
    last["parts"].insert(at, thought)
    answer = cli.script[-1].text
    (with_thinking,) = _transcript(tmp_path, written_transcript(cli, json.dumps(doc)))
    final = with_thinking.steps[-1]
    assert final.reasoning == f"The copy worked; cat failed.\n\n{answer}" and not final.action.text
    assert with_thinking.env["opencode_transcript"]["reasoning_may_hold_text"] is True
    (without,) = _transcript(tmp_path, written_transcript(cli, json.dumps(doc), thinking=False))
    assert without.steps[-1].action.text == answer and without.steps[-1].reasoning is None
    assert "reasoning_may_hold_text" not in without.env["opencode_transcript"]


def _raw(action) -> dict:
    return json.loads(action.raw) if isinstance(action.raw, str) else action.raw


def test_a_call_keeps_its_name_and_input_as_written_and_text_after_an_unfinished_call_stays_whole(tmp_path):
    """The transcript holds no call ids: the id that pairs a result with its call is the call's place, which is no
    part of what the writer wrote (`action.raw`)."""
    body = ("## User\n\nWrite c.py.\n\n---\n\n## Assistant (Build · GPT-5 · 1.0s)\n\n"
            + _tool("bash", {"command": "ls"}, output="")
            + _tool("write", {"filePath": "c.py"})
            + "Done: c.py holds it.\n\n---\n\n")
    [ep] = [r for r in _read(tmp_path, body) if isinstance(r, Episode)]
    assert [_raw(s.action) for s in ep.steps[:2]] == [{"name": "bash", "arguments": {"command": "ls"}},
                                                      {"name": "write", "arguments": {"filePath": "c.py"}}]
    # an empty output written as an empty fence: nothing of the fence is left over as the next call's text
    assert ep.steps[1].observation.text == "" and ep.steps[1].reasoning is None
    assert ep.steps[2].observation.kind == "none" and ep.steps[2].action.text == "Done: c.py holds it."


def test_an_output_cut_short_by_the_files_end_keeps_what_was_written(tmp_path):
    body = ("## User\n\nList it.\n\n---\n\n## Assistant (Build · GPT-5 · 1.0s)\n\n"
            + _tool("bash", {"command": "ls"}, output="a.py")
            + "**Tool: read**\n\n**Input:**\n```json\n{\"filePath\": \"a.py\"}\n```\n\n"
            + "**Output:**\n```\nprint(1)\nprin")
    records = _read(tmp_path, body)
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [s.observation.text for s in ep.steps[1:]] + [ep.final_observation.text] == ["a.py", "print(1)\nprin"]


def test_inputs_that_are_not_json_are_kept_exactly_as_written_in_either_writers_form(tmp_path):
    body = ("## Assistant (Build · GPT-5 · 1.0s)\n\n" + _tool("bash", {"command": "ls"}, output="a.py")
            + "**Tool: bash**\n\n**Input:**\n```json\n{not json\n```\n\n**Output:**\n```\nok\n```\n\n"
            + "```\nTool: read\n\n**Input:**\n```json\n{\"filePath\": a.md}\n```\n**Output:**\n```\n# A\n```\n```\n\n"
            + "---\n\n")
    records = _read(tmp_path, body)
    rows = [r for r in records if isinstance(r, Rejected)]
    assert [(r.rule, r.reason, r.location) for r in rows] == [
        ("bad_record", f"session-ses_abc123.md: message 1 call {n}: call {name}: its input is not JSON; kept as "
                       "written", f"session-ses_abc123.md: message 1 call {n}")
        for n, name in ((2, "bash"), (3, "read"))]
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [json.loads(s.action.arguments) for s in ep.steps] == [
        {"command": "ls"}, {"input": "{not json"}, {"input": '{"filePath": a.md}'}]
    assert [s.observation.text for s in ep.steps[1:]] + [ep.final_observation.text] == ["a.py", "ok", "# A"]
    # a file cut inside such an input: the rest of the file is the input
    records = _read(tmp_path, "## Assistant (Build · GPT-5 · 1.0s)\n\n"
                    + _tool("bash", {"command": "ls"}, output="a.py") + "**Tool: bash**\n\n**Input:**\n```json\n{cut")
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [json.loads(s.action.arguments) for s in ep.steps] == [{"command": "ls"}, {"input": "{cut"}]


def test_a_turns_reasoning_parts_are_joined_and_a_part_quoted_under_a_line_of_text_is_text(tmp_path):
    """A part opens after a blank line only: `**Tool: ...**` or `_Thinking:_` quoted right under a line of text is
    that text's, not a call or a reasoning of its own."""
    body = ("## User\n\nFix it.\n\n---\n\n## Assistant (Build · GPT-5 · 1.0s)\n\n"
            "_Thinking:_\n\nFirst look.\n\nI will call it as\n**Tool: bash**\nthe usual way.\n\n"
            "_Thinking:_\n\nThen run it.\n\nRunning.\n_Thinking:_\n\nquoted.\n\n"
            + _tool("bash", {"command": "ls"}, output="a.py") + "---\n\n")
    [ep] = [r for r in _read(tmp_path, body) if isinstance(r, Episode)]
    assert [(s.action.tool_name, s.action.text) for s in ep.steps] == [("bash", None)]
    assert ep.steps[0].reasoning == ("First look.\n\nI will call it as\n**Tool: bash**\nthe usual way.\n\nThen run it."
                                     "\n\nRunning.\n_Thinking:_\n\nquoted.")
