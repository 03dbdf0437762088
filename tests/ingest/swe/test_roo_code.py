"""Roo Code task folders, read by the Cline reader (Roo Code is a fork of Cline and keeps the same two files).

Roo Code cannot run here: its CLI (`@roo-code/cli`, `apps/cli` of RooCodeInc/Roo-Code) is a private package of its
monorepo, shipped only as GitHub release tarballs, and not on the npm registry (only `@roo-code/types` is). So its
folders are hand-made in the shapes its writer gives them at RooCodeInc/Roo-Code @ cb83656 (3.53):
`Task.addToApiConversationHistory` (entries with `ts`, `reasoning` blocks, top-level encrypted reasoning items),
`getEnvironmentDetails` (`# Current Mode` with `<slug>`, `<name>`, `<model>`), `ExecuteCommandTool` (`Command
executed in terminal within working directory '...'. Exit code: N`), `taskMetadata` / `TaskHistoryStore`
(`history_item.json`), condensing (`isSummary`, `condenseParent`); and in the forms of its XML era (`<task>`,
`[tool for '...'] Result:` text). The first conversation follows a real Roo Code 3.53.0 history (a GLM-5.1 run
whose turns the error report of its extension exported), shortened. Roo Code's own schemas are the oracle for
the files laid out: `@roo-code/types` (MIT, on the npm registry, installed by `make parts`) parses the UI log with
`clineMessageSchema` and `history_item.json` with `historyItemSchema`, and names every tool the histories call.
"""

from __future__ import annotations

import json
import subprocess

import fsspec

from ingest.record import Episode, Rejected
from ingest.source import Budgets, Source
from ingest.swe import cline
from tests.ingest.golden import read_records
from tests.ingest.swe.coding_clis import PRODUCERS
from tests.parts import require

MODEL = "unsloth/GLM-5.1-GGUF:UD-IQ2_XXS"


def _env(mode: str = "code", name: str = "💻 Code", model: str | None = MODEL) -> dict:
    details = ("<environment_details>\n# VSCode Visible Files\nrun.sh\n\n# Current Time\nCurrent time in ISO 8601 "
               "UTC format: 2026-05-06T09:02:18.429Z\n\n# Current Cost\n$0.00\n\n# Current Mode\n"
               f"<slug>{mode}</slug>\n<name>{name}</name>\n" + (f"<model>{model}</model>\n" if model else "") +
               "</environment_details>")
    return {"type": "text", "text": details}


def _folder(tmp_path, history, ui=None, item=None):
    task = tmp_path / "tasks" / "0f5c1c1e-roo"
    task.mkdir(parents=True)
    (task / "api_conversation_history.json").write_text(json.dumps(history))
    if ui is not None:
        (task / "ui_messages.json").write_text(json.dumps(ui))
    if item is not None:
        (task / "history_item.json").write_text(json.dumps(item))
    return task


def _episode(path) -> Episode:
    records = read_records(cline, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    return ep


def native_history() -> list:
    """Roo Code 3.53 with native tool calls: reasoning, a read, a command that fails, a mode switch and the
    completion, the model named by every user entry's environment details."""
    return [
        {"role": "user", "ts": 1778058138487, "content": [
            {"type": "text", "text": "<user_message>\nrun ./run.sh and analyze errors\n</user_message>"}, _env()]},
        {"role": "assistant", "ts": 1778058145594, "content": [
            {"type": "reasoning", "text": "Read the script first.", "summary": []},
            {"type": "tool_use", "id": "KTj", "name": "read_file",
             "input": {"path": "run.sh", "mode": "slice", "offset": 1, "limit": 100}}]},
        {"role": "user", "ts": 1778058145999, "content": [
            {"type": "tool_result", "tool_use_id": "KTj", "content": "File: run.sh\n1 | uv run alembic upgrade head"},
            _env()]},
        {"role": "assistant", "ts": 1778058154008, "content": [
            {"type": "tool_use", "id": "Gn", "name": "execute_command",
             "input": {"command": "bash ./run.sh 2>&1", "cwd": "/home/k/proj", "timeout": 60}}]},
        {"role": "user", "ts": 1778058170000, "content": [
            {"type": "tool_result", "tool_use_id": "Gn", "content":
                "Command executed in terminal within working directory '/home/k/proj'. Command execution was not "
                "successful, inspect the cause and adjust as needed.\nExit code: 2\nOutput:\nerror: Failed to spawn: "
                "`alembic`\n"}, _env()]},
        {"role": "assistant", "ts": 1778058180000, "content": [
            {"type": "tool_use", "id": "Sw", "name": "switch_mode",
             "input": {"mode_slug": "debug", "reason": "Investigate the failure"}}]},
        {"role": "user", "ts": 1778058181000, "content": [
            {"type": "tool_result", "tool_use_id": "Sw", "content": "Successfully switched from 💻 Code mode to "
                                                                   "🪲 Debug mode because: Investigate the failure."},
            _env("debug", "🪲 Debug", "glm-4.6")]},
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA...", "id": "rs_1"},
        {"role": "assistant", "ts": 1778058190000, "content": [
            {"type": "tool_use", "id": "Done", "name": "attempt_completion",
             "input": {"result": "alembic is not installed in the project's environment."}}]},
    ]


def native_ui() -> list:
    return [{"ts": 1778058138480, "type": "say", "say": "text", "text": "run ./run.sh and analyze errors"},
          {"ts": 1778058138490, "type": "say", "say": "api_req_started",
           "text": json.dumps({"apiProtocol": "openai", "tokensIn": 100, "tokensOut": 20, "cacheWrites": 0,
                               "cacheReads": 0, "cost": 0.01})},
          {"ts": 1778058146000, "type": "say", "say": "api_req_started",
           "text": json.dumps({"apiProtocol": "openai", "tokensIn": 150, "tokensOut": 30, "cost": 0.02})}]


def native_item() -> dict:
    return {"id": "0f5c1c1e-roo", "number": 3, "ts": 1778058190000, "task": "run ./run.sh and analyze errors",
            "tokensIn": 250, "tokensOut": 50, "totalCost": 0.03, "size": 1234, "workspace": "/home/k/proj",
            "mode": "debug", "status": "completed"}


def test_a_native_roo_code_task_reads_its_calls_models_modes_and_exit_codes(tmp_path):
    ep = _episode(_folder(tmp_path, native_history(), native_ui(), native_item()))
    assert ep.task == "run ./run.sh and analyze errors"
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [
        ("tool_call", "read_file"), ("command", "execute_command"), ("tool_call", "switch_mode"),
        ("done", "attempt_completion")]
    assert ep.steps[0].reasoning == "Read the script first."
    assert ep.steps[1].action.code == "bash ./run.sh 2>&1"
    assert ep.steps[2].observation.exit_code == 2 and "Failed to spawn" in ep.steps[2].observation.text
    assert ep.steps[1].observation.text.startswith("File: run.sh")
    assert ep.agent == MODEL and ep.env["model_per_step"] == [MODEL, MODEL, MODEL, "glm-4.6"]
    assert ep.terminated and ep.steps[-1].action.text.startswith("alembic is not installed")
    assert "cline" not in ep.env
    roo = ep.env["roo_code"]
    assert roo["modes"] == ["code", "debug"]
    assert roo["history_item"]["mode"] == "debug" and roo["history_item"]["status"] == "completed"
    assert roo["usage"] == {"tokensIn": 250, "tokensOut": 50, "cacheWrites": 0, "cacheReads": 0, "cost": 0.03}
    assert roo["context_management"] == {"encrypted_reasoning": 1}


def test_a_roo_code_task_of_the_xml_era_is_told_from_cline_by_its_environment_details(tmp_path):
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nList the files\n</task>"},
                                     _env("architect", "🏗️ Architect", model=None)]},
        {"role": "assistant", "content": [{"type": "text", "text":
            "<execute_command>\n<command>ls</command>\n</execute_command>"}]},
        {"role": "user", "content": [{"type": "text", "text":
            "[execute_command for 'ls'] Result:\nCommand executed in terminal within working directory "
            "'/w'. Exit code: 0\nOutput:\na.py"}, _env("architect", "🏗️ Architect", model=None)]},
        {"role": "assistant", "content": [{"type": "text", "text":
            "<attempt_completion>\n<result>\nOne file.\n</result>\n</attempt_completion>"}]},
    ]
    ep = _episode(_folder(tmp_path, history))
    assert ep.task == "List the files" and ep.agent is None  # this era named no model
    assert [(s.action.kind, s.action.code or s.action.text) for s in ep.steps] == [("command", "ls"),
                                                                                   ("done", "One file.")]
    assert ep.steps[1].observation.exit_code == 0
    assert ep.env == {"roo_code": {"modes": ["architect"]}}


def _xml_history() -> list:
    """An XML-era history with times and no reasoning blocks: three turns."""
    def turn(ts, call):
        return {"role": "assistant", "ts": ts, "content": [{"type": "text", "text": call}]}

    def result(ts, text):
        return {"role": "user", "ts": ts, "content": [{"type": "text", "text": text}, _env()]}
    return [result(1000, "<task>\nFix it\n</task>"),
            turn(2000, "<read_file>\n<path>a.py</path>\n</read_file>"),
            result(2100, "[read_file for 'a.py'] Result:\nx = 1"),
            turn(5000, "<read_file>\n<path>b.py</path>\n</read_file>"),
            result(5100, "[read_file for 'b.py'] Result:\ny = 2"),
            turn(6000, "<attempt_completion>\n<result>\nDone.\n</result>\n</attempt_completion>")]


def test_reasoning_shown_in_the_ui_log_alone_goes_to_the_turn_saved_after_it(tmp_path):
    """Roo Code's XML era kept the model's reasoning in `ui_messages.json` only: one record before a turn is that
    turn's reasoning; two before one turn (a request whose reply the history lost) and one after the last turn are
    kept unplaced in env, none dropped."""
    def thought(ts, text):
        return {"ts": ts, "type": "say", "say": "reasoning", "text": text, "partial": True}
    ui = [thought(1500, "Look at a.py first."), thought(3000, "Retry, lost."), thought(4000, "Now b.py."),
          {"ts": 5500, "type": "say", "say": "reasoning", "text": "  "}, thought(5600, "It works.")]
    ep = _episode(_folder(tmp_path, _xml_history(), ui))
    assert [s.reasoning for s in ep.steps] == ["Look at a.py first.", None, "It works."]
    roo = ep.env["roo_code"]
    assert roo["reasoning_from_ui"] == 2 and roo["ui_reasoning_unplaced"] == ["Retry, lost.", "Now b.py."]
    after = _folder(tmp_path / "after", _xml_history(), [thought(7000, "Shown after the last turn.")])
    assert _episode(after).env["roo_code"]["ui_reasoning_unplaced"] == ["Shown after the last turn."]


def test_the_historys_own_reasoning_wins_over_the_ui_logs(tmp_path):
    ui = native_ui() + [{"ts": 1778058140000, "type": "say", "say": "reasoning", "text": "Shown, not saved."}]
    ep = _episode(_folder(tmp_path, native_history(), ui, native_item()))
    assert ep.steps[0].reasoning == "Read the script first." and "reasoning_from_ui" not in ep.env["roo_code"]
    untimed = [{k: v for k, v in m.items() if k != "ts"} for m in _xml_history()]
    ep = _episode(_folder(tmp_path / "untimed", untimed, [{"ts": 1500, "type": "say", "say": "reasoning",
                                                           "text": "No time to match."}]))
    assert all(s.reasoning is None for s in ep.steps)  # entries without times: kept, not guessed
    assert ep.env["roo_code"]["ui_reasoning_unplaced"] == ["No time to match."]


def test_condensed_messages_are_read_as_sent_and_counted(tmp_path):
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<user_message>\nfix it\n</user_message>"}, _env()],
         "condenseParent": "c1"},
        {"role": "assistant", "content": [{"type": "text", "text": "Looking."}], "condenseParent": "c1"},
        {"role": "user", "content": [{"type": "text", "text": "Summary of the conversation so far: looked."}],
         "isSummary": True, "condenseId": "c1"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "attempt_completion",
                                           "input": {"result": "Fixed."}}]},
    ]
    ep = _episode(_folder(tmp_path, history))
    assert ep.task == "fix it" and ep.terminated
    assert ep.env["roo_code"]["context_management"] == {"summaries": 1, "condensed": 2}


def test_a_roo_command_killed_by_a_signal_has_no_exit_code(tmp_path):
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<user_message>\nrun\n</user_message>"}, _env()]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "execute_command",
                                           "input": {"command": "sleep 100"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content":
            "Command executed in terminal within working directory '/w'. Process terminated by signal SIGKILL\n"
            "Output:\n"}]},
    ]
    ep = _episode(_folder(tmp_path, history))
    assert ep.final_observation.exit_code is None


def test_a_cline_folder_stays_cline():
    """Cline's own environment details (`# Current Mode\\nACT MODE`) and usage records name no slug and no
    protocol: its episodes keep `env["cline"]`."""
    assert not cline._roo_usage([{"say": "api_req_started", "text": '{"request":"x","tokensIn":1}'}])
    seen = {"modes": [], "model": None}
    cline._roo_context([{"type": "text", "text": "<environment_details>\n# Current Mode\nACT MODE\n"
                                                 "</environment_details>"}], seen)
    assert seen == {"modes": [], "model": None}


HEADER = ("// Please share this file with Roo Code Support (support@roocode.com) to diagnose the issue faster\n"
          "// Just make sure you're OK sharing the contents of the conversation below.\n\n")
ERROR = {"timestamp": "2026-05-06T09:16:21.683Z", "version": "3.53.0", "provider": "openai", "model": "m-err",
         "details": "Error writing file"}


def _diagnostics(tmp_path, doc, name="roo-diagnostics-0f5c1c1e-1778058981683.json", header=HEADER):
    """A diagnostics file in the layout of Roo Code's `generateErrorDiagnostics`: the comment lines, then the
    document indented by two."""
    path = tmp_path / name
    path.write_text(header + (doc if isinstance(doc, str) else json.dumps(doc, indent=2)))
    return path


def test_a_diagnostics_file_reads_the_history_it_holds_and_keeps_the_error(tmp_path):
    history = native_history()
    for entry in history:  # a provider whose turns the environment details do not name
        if isinstance(entry.get("content"), list):
            entry["content"] = [b for b in entry["content"] if "<environment_details>" not in str(b.get("text"))]
    path = _diagnostics(tmp_path, {"error": ERROR, "history": history})
    assert cline.units([str(path)], lambda p: open(p, "rb").read(4096)) == [str(path)]
    ep = _episode(path)
    assert [s.action.tool_name for s in ep.steps] == ["read_file", "execute_command", "switch_mode",
                                                      "attempt_completion"]
    assert ep.terminated and ep.key == path.name and ep.agent == "m-err"  # the error's model names every turn
    assert ep.env["roo_code"] == {"diagnostics": ERROR, "context_management": {"encrypted_reasoning": 1}}


def test_a_fork_naming_its_own_maintainers_is_claimed_and_other_comments_are_not(tmp_path):
    fork = _diagnostics(tmp_path, {"error": ERROR, "history": []}, name="a.json",
                        header=HEADER.replace("Roo Code Support (support@roocode.com)", "the Tumble Code maintainers"))
    issue = _diagnostics(tmp_path, {"error": ERROR, "history": []}, name="d.json", header=HEADER.replace(
        "share this file with Roo Code Support (support@roocode.com) to diagnose the issue faster",
        "attach this file to a GitHub issue if it helps diagnose the problem faster"))
    other = _diagnostics(tmp_path, {"error": ERROR, "history": []}, name="b.json", header="// notes\n\n")
    bare = _diagnostics(tmp_path, {"history": [], "error": ERROR}, name="c.json")  # the writer puts `error` first
    claimed = cline.units([str(fork), str(other), str(bare), str(issue)], lambda p: open(p, "rb").read(4096))
    assert claimed == [str(fork), str(issue)]


def test_history_blocks_roo_code_does_not_write_are_kept_raw_with_a_warning(tmp_path):
    """Kilo Code writes the same file from its own history, its calls as `tool` parts with their state: kept raw,
    not read as Roo Code's, and said once per file."""
    tool = {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {"command": "ls"}}}
    history = [{"role": "user", "content": [{"type": "text", "text": "<user_message>\nlist\n</user_message>"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "Listing."}, tool, {"type": "file"}]},
               {"role": "assistant", "content": [tool, "not a block"]}, {"role": "user", "content": "done?"},
               "not an entry", {"role": "assistant", "content": [{"type": "image"}, {"type": "text", "text": "Yes."}]}]
    path = _diagnostics(tmp_path, {"error": ERROR, "history": history})
    records = read_records(cline, path)
    # the turn of a `tool` part alone is an empty turn to the transcript core, which keeps it raw and says so too
    warning, empty = [r for r in records if isinstance(r, Rejected)]
    assert "neither text nor tool calls" in empty.reason and empty.location == f"{path.name}[2]"
    assert warning.reason == (f"{path.name}: history block type(s) file, tool are none Roo Code writes; kept raw in "
                              "env.roo_code.unread_blocks") and warning.location == path.name
    assert warning.rule == "unknown_content"
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.env["roo_code"]["unread_blocks"] == [tool, {"type": "file"}, tool]


def test_a_diagnostics_field_roo_code_does_not_write_is_kept_raw_with_a_warning(tmp_path):
    path = _diagnostics(tmp_path, {"error": ERROR, "history": native_history(), "zeta": 1, "alpha": [2]})
    records = read_records(cline, path)
    (warning,) = [r for r in records if isinstance(r, Rejected)]
    assert (warning.rule, warning.location) == ("unknown_content", path.name)
    assert warning.reason == (f"{path.name}: field(s) alpha, zeta are none Roo Code's diagnostics are known to hold; "
                              "kept raw in env.roo_code.unknown_fields")
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.env["roo_code"]["unknown_fields"] == {"zeta": 1, "alpha": [2]} and ep.agent == MODEL


def test_a_diagnostics_file_without_a_history_or_broken_is_rejected_naming_it(tmp_path):
    for doc, rule in (({"error": ERROR}, "bad_record"), ({"error": ERROR, "history": {}}, "bad_record"),
                      ([1], "bad_record"), ('{"error": {', "parse_error")):
        path = _diagnostics(tmp_path, doc)
        (rejected,) = read_records(cline, path)
        assert rejected.rule == rule and rejected.reason.startswith(path.name)
    (rejected,) = read_records(cline, _diagnostics(tmp_path, {"error": "x", "history": "y"}))
    assert rejected.reason == f"{path.name}: a Roo Code diagnostics file without a `history` list"
    assert rejected.location == path.name


def test_a_diagnostics_file_over_the_record_budget_is_refused_not_parsed(tmp_path):
    path = _diagnostics(tmp_path, {"error": ERROR, "history": native_history()})
    source = Source(fsspec.filesystem("file"), str(path), "d", lambda *a: "sha256:0", budgets=Budgets(record_bytes=100))
    (refused,) = list(cline.read(source))
    assert refused.rule == "budget_exceeded" and path.name in refused.reason


def test_a_diagnostics_file_of_an_empty_history_is_an_empty_episode_row_naming_it(tmp_path):
    path = _diagnostics(tmp_path, {"error": ERROR, "history": []})
    (row,) = read_records(cline, path)
    assert row.rule == "empty_episode" and row.reason.startswith(f"{path.name}: ") and row.location == path.name


def test_a_completion_the_user_answered_before_the_error_does_not_end_the_task(tmp_path):
    """The history's last turn calls `attempt_completion` only until the user replies: then the task goes on."""
    ended = native_history()
    reopened = [*ended, {"role": "user", "content": [{"type": "text", "text": "<user_message>\nand the docs\n"
                                                                              "</user_message>"}]}]
    ep = _episode(_diagnostics(tmp_path, {"error": ERROR, "history": ended}, name="ended.json"))
    assert ep.terminated and ep.platform == "linux" and ep.domain == "swe"
    ep = _episode(_diagnostics(tmp_path, {"error": ERROR, "history": reopened}, name="reopened.json"))
    assert not ep.terminated and ep.steps[-1].action.kind == "done"


def test_a_diagnostics_error_that_is_no_object_or_names_no_model_leaves_the_model_to_the_history(tmp_path):
    for error in ("boom", {**ERROR, "model": ""}, {**ERROR, "model": 7}):
        ep = _episode(_diagnostics(tmp_path, {"error": error, "history": native_history()}))
        assert ep.agent == MODEL and ep.env["roo_code"]["diagnostics"] == (error if isinstance(error, dict) else {})


ROO_TYPES = PRODUCERS / "roo-code-types-1.115.0"
_CHECK = """
const t = require("@roo-code/types");
const [ui, item, calls] = JSON.parse(require("fs").readFileSync(0, "utf8"));
ui.forEach(m => t.clineMessageSchema.parse(m));
t.historyItemSchema.parse(item);
const unknown = calls.filter(n => !t.toolNames.includes(n));
if (unknown.length) throw new Error("not Roo Code tools: " + unknown);
console.log("ok " + ui.length);
"""


def test_roo_codes_own_schemas_accept_the_folders_laid_out_here():
    """The UI log, the history item and the tool names of the conversations above, as Roo Code's own types
    package parses them (a field of the wrong type, an unknown `say`, a tool Roo Code does not define fail)."""
    require(f"@roo-code/types (npm prefix {ROO_TYPES})", (ROO_TYPES / ".installed").exists(),
            "make parts (part of make setup-test) installs it")
    calls = sorted({b["name"] for e in native_history() for b in e.get("content") or []
                    if isinstance(b, dict) and b.get("type") == "tool_use"} | {"execute_command"})
    done = subprocess.run(["node", "-e", _CHECK], cwd=ROO_TYPES, capture_output=True, text=True, timeout=60,
                          input=json.dumps([native_ui(), native_item(), calls]))
    assert done.returncode == 0 and done.stdout.strip() == "ok 3", done.stderr
    bad = subprocess.run(["node", "-e", _CHECK], cwd=ROO_TYPES, capture_output=True, text=True, timeout=60,
                         input=json.dumps([[{"ts": 1, "type": "say", "say": "no_such_say"}], native_item(), []]))
    assert bad.returncode != 0  # the oracle can fail


def _tail_of_a_real_ui_log() -> list:
    """A Roo Code UI log in the shapes of the end of a real one (Extremity/scratchspace @ 7573c05,
    `ui_messages.json`: a GPT-served Architect task), shortened: requests carrying only usage, `reasoning` and
    `text` records, a follow-up question with modes the user answered (`isAnswered`), the user's feedback, the
    completion and a failed condensing."""
    usage = {"apiProtocol": "openai", "tokensIn": 105052, "tokensOut": 414, "cacheWrites": 0, "cacheReads": 0}
    question = {"question": "How would you like to proceed?",
                "suggest": [{"answer": "Run the triage diff first", "mode": "architect"},
                            {"answer": "Just confirm the reasoning for now", "mode": "ask"}]}
    return [
        {"ts": 1787366936311, "type": "say", "say": "text", "text": "# Task 6M: a migration plan"},
        {"ts": 1787446934682, "type": "say", "say": "api_req_started", "text": json.dumps(usage)},
        {"ts": 1787447071075, "type": "say", "say": "reasoning", "text": "Ask which option.", "partial": False},
        {"ts": 1787447077330, "type": "say", "say": "text", "text": "Let me capture the choice.", "partial": False},
        {"ts": 1787447083974, "type": "ask", "ask": "followup", "text": json.dumps(question), "partial": False,
         "isAnswered": True},
        {"ts": 1787447363124, "type": "say", "say": "user_feedback", "text": "Condensing first.", "images": []},
        {"ts": 1787447363403, "type": "say", "say": "api_req_started", "text": json.dumps(usage)},
        {"ts": 1787447391756, "type": "say", "say": "completion_result", "text": "Plan complete.", "partial": False},
        {"ts": 1787447392186, "type": "ask", "ask": "completion_result", "text": ""},
        {"ts": 1787447396429, "type": "say", "say": "condense_context_error",
         "text": "Condensing API call failed: 400 request (281671 tokens) exceeds the available context size"}]


_FIELDS = """
const t = require("@roo-code/types");
const ui = JSON.parse(require("fs").readFileSync(0, "utf8"));
ui.forEach(m => t.clineMessageSchema.strict().parse(m));
console.log(JSON.stringify(Object.keys(t.clineMessageSchema.shape)));
"""


def test_a_roo_ui_log_alone_reads_its_own_fields_and_keeps_one_no_writer_defines_with_a_warning(tmp_path):
    """Roo Code's `clineMessageSchema` (strict: no field it does not define) accepts the log, and every field it
    defines is one the reader knows; a field neither Cline nor Roo Code writes is kept raw with a warning."""
    require(f"@roo-code/types (npm prefix {ROO_TYPES})", (ROO_TYPES / ".installed").exists(),
            "make parts (part of make setup-test) installs it")
    ui = _tail_of_a_real_ui_log()
    done = subprocess.run(["node", "-e", _FIELDS], cwd=ROO_TYPES, capture_output=True, text=True, timeout=60,
                          input=json.dumps(ui))
    assert done.returncode == 0, done.stderr
    from ingest.swe.cline_ui import _RECORD_KEYS
    assert set(json.loads(done.stdout)) <= _RECORD_KEYS
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "ui_messages.json").write_text(json.dumps(ui))
    records = read_records(cline, tmp_path / "ok" / "ui_messages.json")
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [("tool_call", "ask_followup_question"),
                                                                      ("done", "attempt_completion")]
    # the thought and the text the log showed beside the question are the step's reasoning
    assert ep.steps[0].reasoning == "Ask which option.\n\nLet me capture the choice."
    assert ep.steps[1].observation.text == "Condensing first."
    roo = ep.env["roo_code"]
    assert roo["usage"]["tokensIn"] == 2 * 105052 and roo["errors"][0]["say"] == "condense_context_error"
    ui[4]["answeredBy"] = "user"  # a field no writer defines
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "ui_messages.json").write_text(json.dumps(ui))
    records = read_records(cline, tmp_path / "odd" / "ui_messages.json")
    (warning,) = [r for r in records if isinstance(r, Rejected)]
    assert warning.rule == "unknown_content" and "answeredBy" in warning.reason
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.env["roo_code"]["unknown_fields"] == [{"record": 4, "answeredBy": "user"}]


def test_a_roo_code_task_folder_keeps_history_blocks_roo_code_does_not_write_raw_with_a_warning(tmp_path):
    """A task folder told Roo Code's by its `history_item.json`: the warning names Roo Code, and where it is kept."""
    history = native_history() + [{"role": "user", "content": [{"type": "file", "path": "a.py"}]}]
    task = _folder(tmp_path, history, native_ui(), native_item())
    records = read_records(cline, task)
    (warning,) = [r for r in records if isinstance(r, Rejected)]
    assert warning.reason == (f"{task.name}/api_conversation_history.json: history block type(s) file are none Roo "
                              "Code writes; kept raw in env.roo_code.unread_blocks")
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.env["roo_code"]["unread_blocks"] == [{"type": "file", "path": "a.py"}]
