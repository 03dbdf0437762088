"""Qwen Code's `/export md` files: written by the CLI itself at two releases after the scripted session of
`test_qwen_code_cli.py` (the same run and the same exports as `test_qwen_code_export.py`, shared), where the
script is the oracle and the same session's JSON export the second one; real exports from public repositories:
shynlee04/hivemind-plugin @ 833b4163 (MIT, bundled: `samples/swe/qwen-code/`, see its PROVENANCE.md), and
berlogabob/flutter-github-issues-todo @ 7f0fad5b49369d65f7e9183bf04ec99a13bba67c
`qwen-code-export-2026-03-12T01-40-58-694Z.md` (MIT, 376 KB, kept with the tests:
`tests/ingest/swe/data/qwen-code-berlogabob-flutter-github-issues-todo/`); hand-made edge cases.
"""

from __future__ import annotations

import json

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import qwen_code_export, qwen_code_markdown
from tests.conftest import REPO
from tests.ingest.golden import check, read_records
from tests.ingest.swe.coding_clis import NOTES, check_qwen_code_close, cli_run, played, qwen_code_export as export
from tests.ingest import golden

VERSIONS = ("0.15.10", "0.24.4")  # the Makefile's QWEN_CODE_VERSIONS
DISPLAY_NAMES = {"glob": "Glob", "read_file": "ReadFile"}  # the titles name these tools by their display names
GOLDEN = REPO / "tests" / "ingest" / "swe" / "golden"
HIVEMIND = REPO / "samples" / "swe" / "qwen-code" / "shynlee04-hivemind-plugin" / \
    "qwen-code-export-2026-04-08T22-26-42-222Z.md"
BERLOGA = REPO / "tests" / "ingest" / "swe" / "data" / "qwen-code-berlogabob-flutter-github-issues-todo" / \
    "qwen-code-export-2026-03-12T01-40-58-694Z.md"


@pytest.fixture(scope="module", params=VERSIONS)
def exported(request, tmp_path_factory):
    cli = cli_run("qwen-code", request.param, tmp_path_factory)
    return cli, {kind: export(cli, kind) for kind in ("json", "md")}


def _episode(module, path) -> Episode:
    records = read_records(module, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    return ep


def test_the_markdown_export_holds_every_scripted_call_with_its_arguments_and_result(exported):
    cli, files = exported
    assert qwen_code_markdown.units([str(files["md"])], golden.head) == [str(files["md"])]
    ep = _episode(qwen_code_markdown, files["md"])
    calls = played(cli)
    tool_steps = [s for s in ep.steps if s.action.kind != "message"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in tool_steps] == \
        [(DISPLAY_NAMES.get(c.name, c.name), c.arguments) for c in calls]
    glob, read, write, failed = [s.observation for s in ep.steps[1:]]
    assert glob.text == calls[0].seen and read.text == calls[1].seen == NOTES
    path = cli.workspace / "out.txt" if cli.version != "0.15.10" else "out.txt"
    assert write.text == f"{path}:\n{NOTES}"  # the edit as its diff: the new text under the path
    check_qwen_code_close(cli, ep, calls, tool_steps[3], failed)


def test_the_markdown_reads_as_the_json_export_of_the_same_session_where_it_carries_it(exported):
    cli, files = exported
    md, js = _episode(qwen_code_markdown, files["md"]), _episode(qwen_code_export, files["json"])

    def seen(ep):
        return [(s.action.kind, s.action.tool_name, s.action.arguments, s.action.code, s.action.text,
                 s.observation.kind, s.observation.text, s.observation.exit_code, s.observation.is_error)
                for s in ep.steps]

    assert seen(md) == seen(js) and md.task == js.task and md.agent == js.agent
    meta, json_meta = md.env["qwen_code_markdown"]["metadata"], js.env["qwen_code_export"]["metadata"]
    assert meta.pop("exportTime") != json_meta.pop("exportTime")  # each export says when it was made
    assert meta == json_meta  # every other field the header lists, numbers as numbers
    assert "tool call ids" in md.env["qwen_code_markdown"]["not_carried"]


def test_a_markdown_export_alone_is_ingested_and_beside_its_json_export_is_listed_as_that_sessions(
        exported, run, query, tmp_path):
    cli, files = exported
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / files["md"].name).write_bytes(files["md"].read_bytes())
    result = run("ingest-swe", [alone], stages=["ingest"])
    assert result.ignored == []
    assert query("SELECT source_format AS f, num_steps AS n FROM episodes") == [{"f": "qwen_code_markdown", "n": 5}]
    other = tmp_path / "other"  # a markdown export of another session beside a JSON export is read
    other.mkdir()
    (other / files["json"].name).write_bytes(files["json"].read_bytes())
    (other / files["md"].name).write_bytes(files["md"].read_bytes().replace(
        json.loads(files["json"].read_text())["sessionId"].encode(), b"another-session"))
    members = qwen_code_export.members([str(other / files["json"].name)], sorted(map(str, other.iterdir())), golden.head)
    assert members == {str(other / files["json"].name): []}


def test_a_real_export_with_its_metadata_and_subagent_calls():
    """Read by hand against the file (shynlee04/hivemind-plugin): one prompt (a `/skills` command and a pasted
    plan); the model's thought and its text each a `## Assistant` (two message steps), two `Agent` calls whose
    outputs are the subagents' answers, then a thought and the answer; model `coder-model`, 4974831 tokens, a
    7.7% context usage; the last message is the model's: terminated."""
    assert qwen_code_markdown.units([str(HIVEMIND)], golden.head) == [str(HIVEMIND)]
    records = read_records(qwen_code_markdown, HIVEMIND)
    check(records, GOLDEN / "qwen-code-markdown-hivemind.json", env_keys=("qwen_code_markdown",))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [s.action.kind for s in ep.steps] == ["message", "message", "tool_call", "tool_call", "message",
                                                 "message"]
    assert [json.loads(s.action.arguments)["description"] for s in ep.steps[2:4]] == \
        ["Cycle 2: Pair Mapping", "Cycle 2: Edge Cases"]
    assert ep.steps[3].observation.text == "Now let me read a few more key agents to complete the picture:"
    assert ep.agent == "coder-model" and ep.terminated and ep.task.startswith("/skills skill-judge")
    meta = ep.env["qwen_code_markdown"]["metadata"]
    assert meta["totalTokens"] == 4974831 and meta["contextUsagePercent"] == 7.7
    assert meta["gitBranch"] == "feature/harness-implementation" and meta["filesWritten"] == 0


def test_the_bundled_real_export_ingests_and_validates_through_ingest_all(run, query):
    result = run("ingest-all", [HIVEMIND.parent])  # ingest, then validate
    assert result.status == "success"
    assert [i.path.rsplit("/", 1)[-1] for i in result.ignored] == ["PROVENANCE.md"]
    assert query("SELECT source_format AS f, num_steps AS n FROM episodes") == [{"f": "qwen_code_markdown", "n": 6}]
    assert query("SELECT stage, rule FROM quarantine") == []


def test_a_long_real_export_of_an_earlier_release_without_a_model():
    """Read by hand against the file (berlogabob/flutter-github-issues-todo, a release whose header lists no
    metadata past the times): prompts in English and Russian, `ReadFile`, `ListFiles`, `WriteFile`, `Edit`,
    `Glob` calls and `Shell` commands with their `Exit Code:` results, the first `flutter pub get` exiting 0, a
    `dart run` exiting 254; no model named."""
    records = read_records(qwen_code_markdown, BERLOGA)
    check(records, GOLDEN / "qwen-code-markdown-berloga.json", texts="hash")
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    commands = [s for s in ep.steps if s.action.kind == "command"]
    assert commands[0].action.code.endswith("flutter pub get")
    assert ep.agent is None and ep.task.startswith("read @Makefile")


def test_hand_made_edge_cases_warn_and_keep_what_they_do_not_know(tmp_path):
    """In the writer's layout: a header field no release writes, a call whose arguments are a string, an output
    fence longer than three backticks (its content holds three), a status no release writes, a system message."""
    fence = "````"
    text = ("# Chat Session Export\n\n- **Session ID**: `s1`\n- **Start Time**: t0\n- **Exported**: t1\n\n"
            "- **Mood**: calm\n\n---\n\n## User\n\nFix &amp; check\n\n\n"
            "### Tool: Shell: ls &amp;&amp; pwd\n**Status**: pending\n\n**Input:**\n```json\nls && pwd\n```\n\n"
            f"**Output:**\n{fence}\nA ``` fence\nExit Code: 3\n{fence}\n\n\n"
            "### System\n\n> goal set\n> twice\n\n\n## Assistant\n\nDone.\n\n")
    path = tmp_path / "qwen-code-export-x.md"
    path.write_text(text)
    records = read_records(qwen_code_markdown, path)
    assert sorted(r.rule for r in records if isinstance(r, Rejected)) == ["unknown_content", "unknown_content"]
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.task == "Fix &amp; check"  # the user's text is written as it is: no escapes to undo
    assert ep.steps[0].action.tool_name == "Shell" and ep.steps[0].action.arguments == '{"input":"ls && pwd"}'
    assert ep.steps[1].observation.text == "A ``` fence\nExit Code: 3"
    assert ep.env["qwen_code_markdown"]["unknown_fields"] == {"header": ["- **Mood**: calm"]}
    assert ep.env["qwen_code_markdown"]["system_messages"] == ["goal set\ntwice"] and ep.terminated


def test_markdown_that_is_not_the_writers_is_not_claimed(tmp_path):
    other = tmp_path / "notes.md"
    other.write_text("# Chat Session Export\n\n**Session ID**: s1\n\n**Start Time**: t0\n")  # another writer's
    assert qwen_code_markdown.units([str(other)], golden.head) == []


def test_a_calls_affected_files_are_kept_with_its_title_and_status(tmp_path):
    text = ("# Chat Session Export\n\n- **Session ID**: `s1`\n- **Start Time**: t0\n- **Exported**: t1\n\n---\n\n"
            "## User\n\nEdit it\n\n\n### Tool: WriteFile: a.py\n**Status**: completed\n\n**Input:**\n```json\n"
            '{"file_path": "a.py"}\n```\n\n**Affected Files:**\n- `a &lt;b.py`\n\n**Output:**\n```\nok\n```\n\n\n'
            "## Assistant\n\nDone.\n\n")
    path = tmp_path / "qwen-code-export-x.md"
    path.write_text(text)
    (ep,) = [r for r in read_records(qwen_code_markdown, path) if isinstance(r, Episode)]
    assert json.loads(ep.steps[0].action.raw) == {"title": "WriteFile: a.py", "status": "completed",
                                                  "locations": ["a <b.py"]}
    assert ep.steps[1].observation.text == "ok"
