"""Qwen Code's `/export` files, written by the CLI itself at two releases: after the scripted session of
`test_qwen_code_cli.py` (the same run, shared), `qwen -p "/export json|jsonl|md|html" --resume <session>` exports it
(the command runs in non-interactive mode and writes `qwen-code-export-<time>.<ext>` into the workspace). The script
is the oracle: each export holds every call the server asked for, with the arguments the agent sent and the result
the agent recorded (an edit as its diff), the model, the task and the final answer.
"""

from __future__ import annotations

import json

import pytest

from ingest.record import Episode, Rejected
from ingest.swe import qwen_code_export
from ingest.times import parse_time
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import NOTES, QWEN_MODEL, check_qwen_code_close, cli_run, played, \
    qwen_code_export as export
from tests.scripted_model_server import USAGE
from tests.ingest import golden

VERSIONS = ("0.15.10", "0.24.4")  # the Makefile's QWEN_CODE_VERSIONS
DISPLAY_NAMES = {"glob": "Glob", "read_file": "ReadFile"}  # the titles name these tools by their display names


@pytest.fixture(scope="module", params=VERSIONS)
def exported(request, tmp_path_factory):
    cli = cli_run("qwen-code", request.param, tmp_path_factory)
    return cli, {kind: export(cli, kind) for kind in ("json", "jsonl", "md", "html")}


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
    check_qwen_code_close(cli, ep, calls, tool_steps[3], failed)


def test_the_exports_name_the_session_and_its_totals(exported):
    cli, files = exported
    (session,) = (cli.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
    for kind in ("json", "jsonl"):
        meta = _episode(files[kind]).env["qwen_code_export"]["metadata"]
        assert meta["sessionId"] == session.stem and meta["cwd"] == str(cli.workspace)
        assert meta["promptCount"] == 1 and meta["uniqueFiles"] == [str(cli.workspace / "out.txt")]
        assert meta["totalTokens"] == len(cli.server.agent_requests()) * (USAGE["input_tokens"] + USAGE["output_tokens"])


def test_the_0_15_html_page_reads_as_its_json_export_and_a_later_ones_is_not_claimed(exported):
    """0.15's page embeds the object `/export json` writes (its chat viewer's data); 0.24's embeds its renderer's
    transcript document (previews of the calls): not read."""
    cli, files = exported
    claimed = qwen_code_export.units([str(files["html"])], golden.head)
    if cli.version != "0.15.10":
        assert claimed == [] and b'id="transcript-document"' in files["html"].read_bytes()
        return
    assert claimed == [str(files["html"])]
    page, doc = _episode(files["html"]), _episode(files["json"])
    assert [(s.action.kind, s.action.tool_name, s.action.arguments, s.observation.text) for s in page.steps] == \
        [(s.action.kind, s.action.tool_name, s.action.arguments, s.observation.text) for s in doc.steps]
    page_meta, doc_meta = page.env["qwen_code_export"].pop("metadata"), doc.env["qwen_code_export"].pop("metadata")
    assert page_meta.pop("exportTime") != doc_meta.pop("exportTime")  # each export says when it was made
    assert page_meta == doc_meta and page.env["qwen_code_export"] == doc.env["qwen_code_export"]
    assert page.agent == QWEN_MODEL


def test_ingest_reads_the_json_exports_and_lists_the_same_sessions_markdown_as_theirs(exported, run, query):
    cli, files = exported
    folder = files["json"].parent
    assert sorted(p.name for p in folder.iterdir()) == sorted(["notes.txt", "out.txt", *(f.name for f in files.values())])
    result = run("ingest-swe", [folder], stages=["ingest"])
    unread = {i.path.rsplit("/", 1)[-1]: i.reason for i in result.ignored}
    page = cli.version == "0.15.10"  # 0.15's HTML page is read; a later one is the same session's, unread
    assert unread.keys() == {"notes.txt", "out.txt", files["md"].name, *(() if page else (files["html"].name,))}
    assert unread[files["md"].name].endswith(f"which does not read it: {qwen_code_export.MARKDOWN_REASON}")
    if not page:
        assert unread[files["html"].name].endswith(f"which does not read it: {qwen_code_export._UNREAD_REASON}")
    assert query("SELECT count(*) AS n, min(source_format) AS f, max(source_format) AS g FROM episodes") == \
        [{"n": 3 if page else 2, "f": "qwen_code_export", "g": "qwen_code_export"}]
    assert query("SELECT rule FROM quarantine") == []


def _jsonl(tmp_path, *messages) -> list:
    meta = {"type": "session_metadata", "sessionId": "s1", "startTime": "2026-01-01T00:00:00.000Z", "model": "m"}
    path = tmp_path / "qwen-code-export-2026-01-01T00-00-01-000Z.jsonl"
    path.write_text("\n".join(json.dumps(m) if isinstance(m, dict) else m for m in (meta, *messages)))
    return read_records(qwen_code_export, path)


def test_thoughts_go_to_the_next_turn_and_unknown_content_is_kept_with_a_warning(tmp_path):
    """Hand-made in the writer's shapes: a `thinking` message before a call, an unknown message type, a field no
    release writes, and a line that is not JSON."""
    base = {"uuid": "u", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
    records = _jsonl(
        tmp_path,
        {**base, "type": "user", "message": {"role": "user", "parts": [{"text": "Fix it"}]}},
        {**base, "type": "assistant", "message": {"role": "thinking", "parts": [{"text": "Look first."}]}},
        {**base, "type": "tool_call", "toolCall": {"toolCallId": "c1", "kind": "execute", "title": "Shell: ls",
                                                    "status": "completed", "rawInput": {"command": "ls"},
                                                    "content": [{"type": "content",
                                                                 "content": {"type": "text", "text": "a.py"}}],
                                                    "rawOutput": {"type": "shell_result", "exitCode": 0}}},
        {**base, "type": "hologram", "x": 1},
        "{not json",
        {**base, "type": "assistant", "mood": "ok", "message": {"role": "assistant", "parts": [{"text": "Done."}]},
         "usageMetadata": {"candidatesTokenCount": 3}})
    warnings = [r for r in records if isinstance(r, Rejected)]
    assert sorted(w.rule for w in warnings) == ["parse_error", "unknown_content", "unknown_content"]
    (bad,) = [w for w in warnings if w.rule == "parse_error"]
    assert (bad.location, bad.line) == ("qwen-code-export-2026-01-01T00-00-01-000Z.jsonl", 6)
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.kind, s.action.code or s.action.text) for s in ep.steps] == [("command", "ls"),
                                                                                  ("message", "Done.")]
    assert ep.steps[0].reasoning == "Look first." and ep.steps[0].action.tool_name == "Shell"
    assert ep.steps[1].observation.kind == "terminal" and ep.steps[1].observation.exit_code == 0
    extras = ep.env["qwen_code_export"]
    assert extras["unknown_records"] == [{**base, "type": "hologram", "x": 1}]
    assert list(extras["unknown_fields"].values()) == [{"mood": "ok"}]
    assert extras["tokens"] == {"candidatesTokenCount": 3} and ep.agent == "m" and ep.terminated


def test_a_json_document_without_messages_is_rejected_naming_the_file(tmp_path):
    path = tmp_path / "qwen-code-export-x.json"
    path.write_text('{"sessionId": "s1", "startTime": "t", "messages": {}}')
    (row,) = read_records(qwen_code_export, path)
    assert isinstance(row, Rejected) and row.rule == "bad_record" and "qwen-code-export-x.json" in row.reason


def test_a_chat_viewer_page_without_its_data_is_rejected_naming_the_file(tmp_path):
    path = tmp_path / "qwen-code-export-x.html"
    path.write_text('<html><head><script src="https://unpkg.com/@qwen-code/webui@latest/dist/index.umd.js">'
                    '</script><title>Qwen Code Chat Export</title></head><body></body></html>')
    assert qwen_code_export.units([str(path)], golden.head) == [str(path)]
    (row,) = read_records(qwen_code_export, path)
    assert isinstance(row, Rejected) and row.rule == "bad_record" and "qwen-code-export-x.html" in row.reason


def test_units_are_the_json_exports_and_members_list_the_others_of_the_session_beside_them_once(exported):
    """The CLI's own JSON and JSONL exports are claimed by how they open, a look-alike is not; the markdown export
    of the same session beside them is listed once, with why, for the folder's first export, and so is 0.24's page
    (0.15's page holds the session's JSON export and is read); a markdown export of another session is not listed."""
    cli, files = exported
    root = files["json"].parent
    heads = {f"w/{p.name}": golden.head(p) for p in root.iterdir()}
    heads["w/other.json"] = b'{"sessionId": "s1", "messages": []}'
    heads["w/other.jsonl"] = b'{"type":"user","sessionId":"s1","startTime":"t"}\n'
    heads["w/sub/" + files["md"].name] = b"# Chat Session Export\n"
    heads["w/another.md"] = b"# Chat Session Export\n\n- **Session ID**: `another`\n"
    names = sorted(heads)
    found = qwen_code_export.units(names, heads.__getitem__)
    page = [f"w/{files['html'].name}"] if cli.version == "0.15.10" else []
    assert found == sorted([f"w/{files['json'].name}", f"w/{files['jsonl'].name}", *page])
    listed = [(f"w/{files['md'].name}", qwen_code_export.MARKDOWN_REASON)]
    if not page:
        listed.insert(0, (f"w/{files['html'].name}", qwen_code_export._UNREAD_REASON))
    assert qwen_code_export.members(found, names, heads.__getitem__) == {found[0]: listed}


def test_the_first_metadata_line_is_the_sessions_and_a_second_one_is_kept_raw(tmp_path):
    """Two exports appended into one file: the first metadata line (an unknown field warned of, naming its line)
    is the episode's; the second is a record the reader does not read, kept raw."""
    base = {"uuid": "u", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
    second = {"type": "session_metadata", "sessionId": "s2", "startTime": "2026-01-02T00:00:00.000Z", "model": "n"}
    path = tmp_path / "qwen-code-export-x.jsonl"
    lines = [{"type": "session_metadata", "sessionId": "s1", "startTime": "t", "model": "m", "mood": "ok"},
             {**base, "type": "user", "message": {"role": "user", "parts": [{"text": "Hi"}]}},
             {**base, "type": "assistant", "message": {"role": "assistant", "parts": [{"text": "Hello."}]}}, second]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    records = read_records(qwen_code_export, path)
    assert [(r.rule, r.location) for r in records if isinstance(r, Rejected)] == [
        ("unknown_content", "qwen-code-export-x.jsonl:1"), ("unknown_content", "qwen-code-export-x.jsonl:4")]
    (ep,) = [r for r in records if isinstance(r, Episode)]
    extras = ep.env["qwen_code_export"]
    assert extras["metadata"]["sessionId"] == "s1" and extras["unknown_records"] == [second] and ep.agent == "m"


def test_a_jsonl_export_without_its_metadata_line_still_reads_its_messages(tmp_path):
    base = {"uuid": "u", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
    path = tmp_path / "qwen-code-export-y.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in (
        {**base, "type": "user", "message": {"role": "user", "parts": [{"text": "Hi"}]}},
        {**base, "type": "assistant", "message": {"role": "assistant", "parts": [{"text": "Hello."}]}})))
    (ep,) = [r for r in read_records(qwen_code_export, path) if isinstance(r, Episode)]
    assert ep.task == "Hi" and [s.action.text for s in ep.steps] == ["Hello."] and ep.agent is None


def _json_export(tmp_path, doc, name="qwen-code-export-z.json") -> list:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
    return read_records(qwen_code_export, path)


def test_a_hand_made_json_export_with_fields_and_calls_of_every_shape(tmp_path):
    """The JSON form's own fields (metadata beside the session's id and start, fields no release writes) and calls
    told apart as the writer's releases write them: a shell tool by its kind, its result's type or its function
    name; a title holding `: ` in its description; a call without title or input."""
    base = {"uuid": "u", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}

    def call(call_id, title, raw_input, **more):
        return {**base, "type": "tool_call", "toolCall": {"toolCallId": call_id, "title": title,
                                                          "status": "completed", "rawInput": raw_input,
                                                          "content": [{"type": "content", "content": {
                                                              "type": "text", "text": f"out {call_id}"}}], **more}}

    messages = [{**base, "type": "user", "message": {"role": "user", "parts": [{"text": "Go"}]}},
                call("c1", "Shell: ls", {"command": "ls"}, kind="execute"),
                call("c2", "run_shell_command", {"command": "pwd"}),
                call("c3", "Runner", {"command": "make"}, rawOutput={"type": "shell_result", "exitCode": 2}),
                call("c4", "Edit: a.py: line 3", {"command": "not a shell", "path": "a.py"}, kind="edit"),
                call("c5", 7, None),
                {**base, "type": "assistant", "message": {"role": "assistant", "parts": [{"text": "Done."}]}}]
    doc = {"sessionId": "s1", "startTime": "2026-01-01T00:00:00.000Z", "messages": messages,
           "metadata": {"model": "m", "cwd": "/w", "mood": "ok"}, "theme": "dark", "zoom": 2}
    records = _json_export(tmp_path, doc)
    name = "qwen-code-export-z.json"
    assert [(r.rule, r.location, r.reason) for r in records if isinstance(r, Rejected)] == [
        ("unknown_content", f"{name}: metadata", f"{name}: metadata: metadata field(s) mood are none Qwen Code's "
         "export writes; kept raw in env.qwen_code_export.metadata"),
        ("unknown_content", name, f"{name}: top-level field(s) theme, zoom are none Qwen Code's export writes; kept "
         "raw in env.qwen_code_export.unknown_fields")]
    (ep,) = [r for r in records if isinstance(r, Episode)]
    extras = ep.env["qwen_code_export"]
    assert extras["metadata"] == {"sessionId": "s1", "startTime": "2026-01-01T00:00:00.000Z", "model": "m",
                                  "cwd": "/w", "mood": "ok"}
    assert extras["unknown_fields"] == {name: {"theme": "dark", "zoom": 2}}
    actions = [s.action for s in ep.steps]
    assert [(a.kind, a.tool_name, a.code) for a in actions] == [
        ("command", "Shell", "ls"), ("command", "run_shell_command", "pwd"), ("command", "Runner", "make"),
        ("tool_call", "Edit", None), ("tool_call", None, None), ("message", None, None)]
    assert json.loads(actions[0].raw) == {k: v for k, v in messages[1]["toolCall"].items() if k != "content"}
    assert json.loads(actions[4].arguments) == {} and ep.steps[3].observation.exit_code == 2


@pytest.mark.parametrize("doc, rule, reason", [
    ('{"sessionId": "s1", "messages": [', "parse_error", "qwen-code-export-z.json"),
    ({"sessionId": "s1", "messages": {}}, "bad_record", "qwen-code-export-z.json: `messages` is not a list")])
def test_a_broken_json_export_is_one_row_naming_the_file(tmp_path, doc, rule, reason):
    (row,) = _json_export(tmp_path, doc)
    assert (row.rule, row.location) == (rule, "qwen-code-export-z.json") and row.reason.startswith(reason)


def test_records_of_every_kind_keep_what_the_export_holds(tmp_path):
    """Hand-made in the writer's shapes: a line that is no object, a call's field no release writes, a goal
    transition, two thoughts before one turn, usage summed over turns (counts only), the prompt's time."""
    def at(second):
        return {"uuid": "u", "sessionId": "s1", "timestamp": f"2026-01-01T00:00:0{second}.000Z"}

    thought = [{**at(1), "type": "assistant", "message": {"role": "thinking", "parts": [{"text": t}]}}
               for t in ("Look.", "Then act.")]
    goal = {**at(2), "type": "system", "goalState": {"status": "active"}}
    call = {**at(3), "type": "tool_call", "toolCall": {"toolCallId": "c1", "kind": "read", "title": "ReadFile: a",
                                                       "status": "failed", "rawInput": {"path": "a"}, "extra": 1}}
    records = _jsonl(
        tmp_path, {**at(0), "type": "user", "message": {"role": "user", "parts": [{"text": "Fix"}, "x"]}}, "7",
        *thought, goal, call,
        {**at(4), "type": "assistant", "message": {"role": "assistant", "parts": []},
         "usageMetadata": {"promptTokenCount": 5, "cached": True, "model": "m"}},
        {**at(5), "type": "assistant", "message": {"role": "assistant", "parts": [{"text": "Done."}]},
         "usageMetadata": {"promptTokenCount": 7}})
    name = "qwen-code-export-2026-01-01T00-00-01-000Z.jsonl"
    assert [(r.rule, r.location) for r in records if isinstance(r, Rejected)] == [
        ("unknown_content", f"{name}:3"), ("unknown_content", f"{name}:7"),
        ("unknown_content", f"{name}:8")]  # a turn of no text: kept raw by the transcript core
    (ep,) = [r for r in records if isinstance(r, Episode)]
    extras = ep.env["qwen_code_export"]
    assert extras["unknown_records"] == [7] and extras["unknown_fields"] == {f"{name}:7": {"toolCall.extra": 1}}
    assert extras["system_messages"] == [goal] and extras["tokens"] == {"promptTokenCount": 12}
    assert ep.task == "Fix" and ep.steps[0].reasoning == "Look.\n\nThen act."
    assert ep.steps[1].observation.is_error and [s.action.text for s in ep.steps[1:]] == ["Done."]
    assert ep.steps[0].timestamp.isoformat() == "2026-01-01T00:00:03+00:00"


def _export_messages(path) -> list[dict]:
    """The messages of a JSON or JSONL export as the CLI wrote them (the JSONL's first line is the metadata)."""
    if path.suffix == ".json":
        return json.loads(path.read_text())["messages"]
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


@pytest.mark.parametrize("kind", ["json", "jsonl"])
def test_each_step_keeps_its_turns_time_and_the_calls_own_record(exported, kind):
    """Against the messages the CLI wrote: each step's time is its turn's (a call's, the answer's), each call's
    action keeps the export's record of the call (id, kind, title, status, input, output) but its result, which
    is the next observation (a tool's result, the shell's a terminal one), and each result's time is kept beside
    the step it answers."""
    cli, files = exported
    messages = _export_messages(files[kind])
    turns = [m for m in messages if m["type"] in ("tool_call", "assistant")]
    ep = _episode(files[kind])
    assert [s.timestamp for s in ep.steps] == [parse_time(m["timestamp"]) for m in turns]
    calls = [m["toolCall"] for m in turns if m["type"] == "tool_call"]
    assert [json.loads(s.action.raw) for s in ep.steps[:-1]] == [
        {k: v for k, v in call.items() if k != "content"} for call in calls]
    assert [s.observation.kind for s in ep.steps[1:]] == ["tool_result"] * 3 + ["terminal"]
    results = [{"step": i + 1, "role": "tool", "timestamp": parse_time(m["timestamp"]).isoformat(),
                **({"raw": {"rawOutput": m["toolCall"]["rawOutput"]}} if m["toolCall"].get("rawOutput") else {})}
               for i, m in enumerate(turns) if m["type"] == "tool_call"]
    prompts = [{"step": 0, "role": "user", "timestamp": parse_time(m["timestamp"]).isoformat()}
               for m in messages if m["type"] == "user"]
    assert ep.env["message_extras"] == prompts + results
    assert ("raw" in results[-1]) is (cli.version != "0.15.10")  # 0.24 records the shell's result object
    assert len(prompts) == 1  # the prompt's time, kept before the first step


def test_the_json_and_jsonl_exports_of_a_session_read_alike(exported):
    """The two exports of one session: the same steps and the same metadata (each says when it was made, and so
    does each call's own `timestamp`; the JSONL line's own `type` is not the session's)."""
    _, files = exported
    doc, lines = _episode(files["json"]), _episode(files["jsonl"])

    def steps(ep):  # the answer's time is when the session was last saved: each export saves it again
        return [(s.timestamp if s.action.raw else None, s.action.text, s.observation.text,
                 {k: v for k, v in json.loads(s.action.raw or "{}").items() if k != "timestamp"}) for s in ep.steps]
    assert steps(doc) == steps(lines)
    doc_meta, line_meta = doc.env["qwen_code_export"]["metadata"], lines.env["qwen_code_export"]["metadata"]
    assert doc_meta.pop("exportTime") <= line_meta.pop("exportTime") and doc_meta == line_meta
    assert "type" not in line_meta


def _call(call_id: str, title: str, raw_input, content: list, **more) -> dict:
    return {"uuid": call_id, "sessionId": "s1", "timestamp": "2026-01-01T00:00:01.000Z", "type": "tool_call",
            "toolCall": {"toolCallId": call_id, "kind": "other", "title": title, "status": "completed",
                         "rawInput": raw_input, "content": content, **more}}


def _text_item(text: str) -> dict:
    return {"type": "content", "content": {"type": "text", "text": text}}


def test_results_exit_codes_and_inputs_of_every_shape(tmp_path):
    """Hand-made in the writer's shapes: a result of several text items and an edit that emptied a file (its text
    items in order, the edit under its path with no text, what is no item skipped); a file read that holds an
    `Exit Code:` line has no exit code (only a shell's result is read for one); a shell's recorded exit code wins
    over its text's; an input that is no object is kept as written."""
    user = {"uuid": "u", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "type": "user",
            "message": {"role": "user", "parts": [{"text": "Fix"}, {"text": "the build"}]}}
    records = _jsonl(
        tmp_path, user,
        _call("c1", "Edit: a.py", {"file_path": "a.py"}, ["junk", _text_item("one"), {"type": "content",
              "content": "not an item"}, {"type": "note", "content": {"text": "none"}}, _text_item("two"),
              {"type": "diff", "path": "a.py", "oldText": "x", "newText": None}]),
        _call("c2", "ReadFile: build.log", {"file_path": "build.log"}, [_text_item("make: done\nExit Code: 3")]),
        _call("c3", "Shell: make", {"command": "make"}, [_text_item("Exit Code: 1")], kind="execute",
              rawOutput={"type": "shell_result", "exitCode": 2}),
        _call("c4", "Shell", "make all", [_text_item("ok")]))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.task == "Fix\nthe build"
    edit, read, shell = (s.observation for s in ep.steps[1:])
    odd = ep.final_observation
    assert edit.text == "one\ntwo\na.py:\n" and edit.exit_code is None
    assert read.text == "make: done\nExit Code: 3" and read.kind == "tool_result" and read.exit_code is None
    assert shell.kind == "terminal" and shell.exit_code == 2
    assert json.loads(ep.steps[3].action.arguments) == {"input": "make all"} and odd.text == "ok"
    assert json.loads(ep.steps[3].action.raw)["rawInput"] == "make all"
    assert not ep.terminated  # the session ends on a call's result, not an answer


def test_thoughts_before_the_answer_are_its_reasoning_and_a_session_ending_on_the_prompt_is_not_answered(tmp_path):
    base = {"uuid": "u", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
    prompt = {**base, "type": "user", "message": {"role": "user", "parts": [{"text": "Hi"}]}}
    records = _jsonl(tmp_path, prompt,
                     {**base, "type": "assistant", "message": {"role": "thinking", "parts": [{"text": "Greet."}]}},
                     {**base, "type": "assistant", "timestamp": "2026-01-01T00:00:02.000Z",
                      "message": {"role": "assistant", "parts": [{"text": "Hello."}]}})
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.text, s.reasoning) for s in ep.steps] == [("Hello.", "Greet.")] and ep.terminated
    assert ep.steps[0].timestamp.isoformat() == "2026-01-01T00:00:02+00:00"
    # the session saved again after a second prompt nobody answered: the answer is not its last word
    records = _jsonl(tmp_path, prompt, {**base, "type": "assistant", "message": {"role": "assistant", "parts": [
        {"text": "Hello."}]}}, {**prompt, "message": {"role": "user", "parts": [{"text": "And then?"}]}})
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [s.action.text for s in ep.steps] == ["Hello."] and ep.final_observation.text == "And then?"
    assert not ep.terminated


def test_an_export_of_no_message_is_one_row_naming_it(tmp_path):
    (row,) = _jsonl(tmp_path)
    assert row.rule == "empty_episode" and row.location == "qwen-code-export-2026-01-01T00-00-01-000Z.jsonl"


def test_a_model_that_is_no_name_is_kept_in_the_metadata_only(tmp_path):
    doc = {"sessionId": "s1", "startTime": "2026-01-01T00:00:00.000Z", "metadata": {"model": {"id": "m"}},
           "messages": [{"uuid": "u", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "type": "assistant",
                         "message": {"role": "assistant", "parts": [{"text": "Hi."}]}}]}
    (ep,) = [r for r in _json_export(tmp_path, doc) if isinstance(r, Episode)]
    assert ep.agent is None and ep.env["qwen_code_export"]["metadata"]["model"] == {"id": "m"}


def test_warnings_name_the_fields_and_the_message_they_keep(tmp_path):
    """What a person reads in the quarantine: the message, the fields no release writes (a call's by their path in
    it) and where in env they are kept; a metadata object that is no object reads as none."""
    base = {"uuid": "u", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
    doc = {"sessionId": "s1", "startTime": "2026-01-01T00:00:00.000Z", "metadata": None, "messages": [
        {**base, "type": "user", "mood": "ok", "tone": 1, "message": {"role": "user", "parts": [{"text": "Go"}]}},
        _call("c1", "Glob: '*'", {"pattern": "*"}, [_text_item("a.py")], **{"v2.extra": 1}),
        {**base, "type": "hologram"}]}
    records = _json_export(tmp_path, doc)
    name = "qwen-code-export-z.json"
    assert [(r.location, r.reason) for r in records if isinstance(r, Rejected)] == [
        (f"{name}: messages[0]", f"{name}: messages[0]: field(s) mood, tone are none Qwen Code's export writes; kept "
         "raw in env.qwen_code_export.unknown_fields"),
        (f"{name}: messages[1]", f"{name}: messages[1]: field(s) toolCall.v2.extra are none Qwen Code's export "
         "writes; kept raw in env.qwen_code_export.unknown_fields"),
        (f"{name}: messages[2]", f"{name}: messages[2]: not a Qwen Code export user, assistant, tool_call or system "
         "message; kept raw in env.qwen_code_export.unknown_records")]
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.env["qwen_code_export"]["unknown_fields"][f"{name}: messages[1]"] == {"toolCall.v2.extra": 1}
    assert ep.env["qwen_code_export"]["metadata"] == {"sessionId": "s1", "startTime": "2026-01-01T00:00:00.000Z"}
    lines = _jsonl(tmp_path)  # the metadata line's fields, named in order
    path = tmp_path / "qwen-code-export-2026-01-01T00-00-01-000Z.jsonl"
    path.write_text(json.dumps({"type": "session_metadata", "sessionId": "s1", "startTime": "t", "zeta": 1,
                                "alpha": 2}))
    (row, _) = read_records(qwen_code_export, path)
    assert lines and row.reason == (f"{path.name}:1: metadata field(s) alpha, zeta are none Qwen Code's export "
                                    "writes; kept raw in env.qwen_code_export.metadata")


def test_a_chat_viewer_pages_rows_name_the_page(tmp_path):
    """0.15's page: a page without the session's data is one row naming it; the messages of the data it holds are
    named by the page (a field no release writes)."""
    head = ('<html><head><script src="https://unpkg.com/@qwen-code/webui@latest/dist/index.umd.js"></script>'
            '<title>Qwen Code Chat Export</title></head><body>')
    path = tmp_path / "qwen-code-export-x.html"
    path.write_text(head + "</body></html>")
    (row,) = read_records(qwen_code_export, path)
    assert (row.rule, row.location) == ("bad_record", "qwen-code-export-x.html")
    doc = {"sessionId": "s1", "startTime": "t", "metadata": {"model": "m"}, "messages": [
        {"uuid": "u", "sessionId": "s1", "timestamp": "t", "type": "user", "mood": "ok",
         "message": {"role": "user", "parts": [{"text": "Hi"}]}}]}
    path.write_text(head + '<script id="chat-data" type="application/json">' + json.dumps(doc).replace("<", "\\u003c")
                    + "</script></body></html>")
    rows = [r for r in read_records(qwen_code_export, path) if isinstance(r, Rejected)]
    assert [r.location for r in rows] == ["qwen-code-export-x.html: messages[0]", "qwen-code-export-x.html"]


def test_members_of_exports_in_two_folders_are_each_folders_own(exported):
    """Two folders each holding a session's JSON export and its markdown export: each folder's markdown is listed
    for that folder's export; a markdown export of the same session in a subfolder is not the folder's."""
    _, files = exported
    json_head, md_head = golden.head(files["json"]), golden.head(files["md"])
    heads = {"a/qwen-code-export-1.json": json_head, "a/qwen-code-export-1.jsonl": golden.head(files["jsonl"]),
             "a/qwen-code-export-1.md": md_head, "a/sub/qwen-code-export-2.md": md_head,
             "b/qwen-code-export-3.json": json_head, "b/qwen-code-export-3.md": md_head}
    names = sorted(heads)
    found = qwen_code_export.units(names, heads.__getitem__)
    assert found == ["a/qwen-code-export-1.json", "a/qwen-code-export-1.jsonl", "b/qwen-code-export-3.json"]
    assert qwen_code_export.members(found, names, heads.__getitem__) == {
        "a/qwen-code-export-1.json": [("a/qwen-code-export-1.md", qwen_code_export.MARKDOWN_REASON)],
        "b/qwen-code-export-3.json": [("b/qwen-code-export-3.md", qwen_code_export.MARKDOWN_REASON)]}
