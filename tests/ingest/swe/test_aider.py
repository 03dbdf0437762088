"""Aider chat histories: two real public histories without a bundled license, read where they lie in
../shared/samples/aider (goldens a person read against the files, texts hashed), and hand-made edge cases. The
histories Aider writes at test time (0.82.3 and 0.86.2) are read in `test_aider_cli.py`.

- `coding-aider/example.chat.history.md`: p-wegner/coding-aider @ d9f091cbde6fc7248215ede3c50f0e84bf3ca7d2,
  `.coding-aider-docs/example.chat.history.md` (GPL-3.0, so not copied into this repository): Aider 0.74.0 run by
  the Coding-Aider IntelliJ plugin; a multi-line `--message` command line, entries that lost their trailing
  spaces, one created file in a `kotlin` fence, a commit before and after the edit.
- `demo-code-genie-logs/aider.chat.md`: PrasanKumar93/demo-code-genie-logs @
  33b3c1b9924b8c5b89ee0b8613289ea17158668d, `57/693187888606b35482d4db27/aider.chat.md` (no license): Aider
  0.86.1 run with `--yes-always --message` by a task harness, three chat sessions of gpt-4o, blocks in ```` and
  `<source>` / `<code>` / `<pre>` fences, edits to files outside the chat that aider asked to add first, commits,
  shell commands declined, the harness's pasted shell results.
"""

from __future__ import annotations

import json
from pathlib import Path

from ingest.record import Episode, Rejected
from ingest.swe import aider
from tests.ingest.golden import check, read_records
from tests.parts import require_shared_sample

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO.parent / "shared" / "samples" / "aider"
GOLDEN = Path(__file__).parent / "golden"


def test_golden_real_plugin_history_without_license():
    """Read by hand against the file: the header's command line of several lines and the model
    (claude-3-5-sonnet-20241022, diff); the prompt of many `####` lines as the task; the one block creating
    DefaultVotingServiceTest.kt, applied, its commits kept; terminated."""
    path = require_shared_sample(SHARED / "coding-aider" / "example.chat.history.md")
    records = read_records(aider, path)
    check(records, GOLDEN / "aider-coding-aider.json", texts="hash")
    (ep,) = records
    assert (ep.env["aider"]["version"], ep.env["aider"]["edit_format"]) == ("0.74.0", "diff")
    assert [c["hash"] for c in ep.env["aider"]["commits"]] == ["593aea4", "b80ccf7"]  # before and after the edit
    assert [u["cost"] for u in ep.env["aider"]["usage"]] == [0.03]


def test_golden_real_harness_history_without_license():
    """Read by hand against the file: session 1's three blocks (two created files, package.json) then the fix of
    package.json, each `Applied edit to`; session 2's two blocks sent before aider added their files (no result)
    and sent again (applied); session 3's one block; the harness's pasted shell results read as replies."""
    path = require_shared_sample(SHARED / "demo-code-genie-logs" / "aider.chat.md")
    records = read_records(aider, path)
    check(records, GOLDEN / "aider-demo-code-genie.json", texts="hash")
    assert [len(ep.env["aider"]["commits"]) for ep in records] == [2, 1, 1]
    assert {ep.agent for ep in records} == {"gpt-4o"} and {ep.env["aider"]["version"] for ep in records} == {"0.86.1"}


def _read(tmp_path, text: str, name=".aider.chat.history.md") -> list:
    path = tmp_path / name
    path.write_text(text)
    return read_records(aider, path)


HEADER = "\n# aider chat started at 2025-05-01 10:00:00\n\n> aider --model gpt-4o  \n> Aider v0.80.0  \n" \
         "> Model: gpt-4o with diff-fenced edit format  \n"


def test_units_claims_a_history_by_its_session_line_only(tmp_path):
    (tmp_path / "a.md").write_text("# Project context\n\nnotes\n" + HEADER)
    (tmp_path / "b.md").write_text("# aider chat started somewhere\n")
    (tmp_path / "c.txt").write_text(HEADER)
    files = [str(tmp_path / n) for n in ("a.md", "b.md", "c.txt")]
    assert aider.units(files, lambda p: Path(p).read_bytes()[:4096]) == [files[0]]


def test_diff_fenced_blocks_a_prompt_of_several_lines_and_a_quote_in_the_reply(tmp_path):
    text = HEADER + (
        "\n#### add a greeting  \n#### to app.py  \n\n"
        "Here is the change.\n\n> a quoted line of the reply\n\n"
        "```python\napp.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 1\nprint('hi')\n>>>>>>> REPLACE\n```\n\n"
        "> Tokens: 1.2k sent, 1.5k cache write, 3.0k cache hit, 80 received.\n"
        "Cost: $0.0021 message, $0.0042 session.  \n"
        "> Applied edit to app.py  \n")
    records = _read(tmp_path, text)
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.task == "add a greeting\nto app.py" and ep.agent == "gpt-4o"
    assert ep.env["aider"]["edit_format"] == "diff-fenced" and ep.env["aider"]["version"] == "0.80.0"
    (step,) = ep.steps
    assert json.loads(step.action.arguments) == {"path": "app.py", "search": "x = 1\n",
                                                 "replace": "x = 1\nprint('hi')\n"}
    assert "> a quoted line of the reply" in step.reasoning  # the reply's own Markdown, not aider's output
    assert "SEARCH" not in step.reasoning and step.action.raw.startswith("```python\napp.py\n<<<<<<< SEARCH")
    assert ep.final_observation.text == "Applied edit to app.py"
    assert ep.env["aider"]["usage"] == [{"reply": 1, "sent": "1.2k", "write": "1.5k", "hit": "3.0k", "received": "80",
                                         "cost": 0.0021, "session": 0.0042}]


def test_blocks_that_all_fail_are_errors_and_a_reply_without_blocks_is_a_message(tmp_path):
    failure = ("> # 2 SEARCH/REPLACE blocks failed to match!\n\n"
               "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in a.py\n"
               "<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n\n"
               "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in b.py\n"
               "<<<<<<< SEARCH\n=======\nmore\n>>>>>>> REPLACE\n\n"
               "The SEARCH section must exactly match an existing block of lines including all white space, comments, "
               "indentation, docstrings, etc  \n")
    text = HEADER + ("\n#### /add a.py  \n> Added a.py to the chat  \n\n#### /ask why?  \n\nBecause.\n\n"
                     "> Tokens: 900 sent, 5 received.  \n\n#### fix both  \n\n"
                     "a.py\n```\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n\n"
                     "b.py\n```\n<<<<<<< SEARCH\n=======\nmore\n>>>>>>> REPLACE\n```\n\n"
                     "> Tokens: 1k sent, 9 received.  \n" + failure)
    (ep,) = [r for r in _read(tmp_path, text) if isinstance(r, Episode)]
    assert ep.task == "why?"  # /add is a command; /ask carries a request
    assert [s.action.kind for s in ep.steps] == ["message", "tool_call", "tool_call"]
    assert ep.steps[0].action.text == "Because."
    second, final = ep.steps[2].observation, ep.final_observation
    assert second.is_error and second.text.endswith("lines in a.py\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE")
    assert final.is_error and "lines in b.py" in final.text and "# 2 SEARCH/REPLACE blocks failed" in final.text
    assert ep.env["aider"]["usage"][0] == {"reply": 1, "sent": "900", "received": "5"}  # no price known: no cost


def test_sessions_without_a_prompt_and_a_preface_are_kept(tmp_path):
    text = "# Project context\n\nby the harness\n" + HEADER + "> ^C KeyboardInterrupt  \n" + \
        HEADER.replace("10:00:00", "11:00:00") + "\n#### hello  \n\nHi.\n"
    records = _read(tmp_path, text)
    rejected = [r for r in records if isinstance(r, Rejected)]
    assert [r.rule for r in rejected] == ["unknown_content", "empty_episode"]  # the preface, session 1 without actions
    assert rejected[0].snippet == "# Project context\n\nby the harness\n\n"  # up to the session line
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.key == "session-2" and ep.env["aider"]["started"] == "2025-05-01 11:00:00"
    assert ep.steps[0].action.text == "Hi." and ep.terminated
    assert "preface" not in ep.env["aider"]  # it went with session 1, kept in the warning's snippet


def test_entries_that_lost_their_trailing_spaces_leave_the_reply_whole(tmp_path):
    """A history whose `>` entries lost aider's line break (editors, plugins): the last header line before the
    prompt and the output before a reply do not swallow what follows."""
    text = ("\n# aider chat started at 2025-05-01 10:00:00\n\n> aider --message do it\nplease\n> Aider v0.74.0\n"
            "> Main model: gpt-4o with diff edit format\n> Added x.py to the chat.\n\n#### do it\n#### please\n"
            "> Has it been deleted?\n\nDone:\n\nx.py\n```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n\n"
            "> Tokens: 2k sent, 10 received.\n> Applied edit to x.py\n> Commit 1234567 edit x\n")
    (ep,) = [r for r in _read(tmp_path, text) if isinstance(r, Episode)]
    assert ep.env["aider"]["header"][0] == "aider --message do it\nplease"
    assert ep.task == "do it\nplease" and ep.agent == "gpt-4o"
    (step,) = ep.steps
    assert json.loads(step.action.arguments)["path"] == "x.py" and step.reasoning == "Done:"
    assert ep.final_observation.text.startswith("Applied edit to x.py")
    assert ep.env["aider"]["commits"] == [{"reply": 1, "hash": "1234567", "message": "edit x"}]


def test_a_failure_naming_one_block_leaves_the_others_applied(tmp_path):
    """aider's error names the failed block (a section for a block the reply does not hold is skipped) and says
    the other blocks were applied: each block gets its own result, the failed one an error."""
    failure = ("> # 1 SEARCH/REPLACE block failed to match!\n\n"
               "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in z.py\n"
               "<<<<<<< SEARCH\nnothing\n=======\nx\n>>>>>>> REPLACE\n\n"
               "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in b.py\n"
               "<<<<<<< SEARCH\nold b\n=======\nnew b\n>>>>>>> REPLACE\n\n"
               "The SEARCH section must exactly match an existing block of lines including all white space, "
               "comments, indentation, docstrings, etc\n\n"
               "# The other 2 SEARCH/REPLACE blocks were applied successfully.\n")
    text = HEADER + ("\n#### fix all three  \n\n"
                     "a.py\n```\n<<<<<<< SEARCH\nold a\n=======\nnew a\n>>>>>>> REPLACE\n```\n\n"
                     "b.py\n```\n<<<<<<< SEARCH\nold b\n=======\nnew b\n>>>>>>> REPLACE\n```\n\n"
                     "c.py\n```\n<<<<<<< SEARCH\n=======\nnew c\n>>>>>>> REPLACE\n```\n\n"
                     "> Tokens: 1k sent, 9 received.  \n" + failure + "\n#### thanks  \n\nWelcome.\n")
    (ep,) = [r for r in _read(tmp_path, text) if isinstance(r, Episode)]
    a, b, c, welcome = ep.steps
    assert [json.loads(s.action.arguments) for s in (a, b, c)] == [
        {"path": "a.py", "search": "old a\n", "replace": "new a\n"},
        {"path": "b.py", "search": "old b\n", "replace": "new b\n"}, {"path": "c.py", "search": "", "replace": "new c\n"}]
    applied = "# The other 2 SEARCH/REPLACE blocks were applied successfully."
    assert (b.observation.text, b.observation.is_error) == (applied, None)  # a's result
    assert c.observation.is_error and c.observation.text == (
        "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in b.py\n"
        "<<<<<<< SEARCH\nold b\n=======\nnew b\n>>>>>>> REPLACE")
    # c's result, then what aider said before the sections and the next prompt
    assert welcome.observation.text == f"{applied}\n\n# 1 SEARCH/REPLACE block failed to match!\n\nthanks"
    assert not welcome.observation.is_error and welcome.action.text == "Welcome."


def test_each_applied_edit_settles_its_own_block_in_any_order(tmp_path):
    text = HEADER + ("\n#### edit both  \n\n"
                     "a.py\n```\n<<<<<<< SEARCH\nold a\n=======\nnew a\n>>>>>>> REPLACE\n```\n\n"
                     "b.py\n```\n<<<<<<< SEARCH\nold b\n=======\nnew b\n>>>>>>> REPLACE\n```\n\n"
                     "> Tokens: 1k sent, 9 received.  \n> Applied edit to b.py  \n> Applied edit to a.py  \n"
                     "> Commit 1234567 fix both  \n\n#### ok  \n\nDone.\n")
    (ep,) = [r for r in _read(tmp_path, text) if isinstance(r, Episode)]
    a, b, done = ep.steps
    assert b.observation.text == "Applied edit to a.py"  # a's result, though aider named b.py first
    assert done.observation.text == "Applied edit to b.py\n\nCommit 1234567 fix both\n\nok"
    assert ep.env["aider"]["commits"] == [{"reply": 1, "hash": "1234567", "message": "fix both"}]


def test_a_file_without_a_session_line_is_one_row_naming_it(tmp_path):
    assert _read(tmp_path, "just text\n", name="x.chat.history.md") == [
        Rejected("bad_record", "x.chat.history.md: no `# aider chat started at` line", "x.chat.history.md")]
