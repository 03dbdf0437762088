"""Cline task folders (`<tasks>/<task id>/`, as the VS Code extension and the Cline CLI 2.x write them) and Roo
Code's (a fork of Cline, `globalStorage/rooveterinaryinc.roo-cline/tasks/<task id>/`, the same two files in the same
forms): `api_conversation_history.json` (the conversation sent to the model, in Anthropic message form),
`ui_messages.json` (what Cline showed: `say` / `ask` records with `ts`) and `task_metadata.json` (`model_usage`,
`environment_history`, `files_in_context`). An adapter onto `ingest.transcript`; one folder is one episode.

Tool calls come in two forms. Models Cline calls with native tools answer with `tool_use` blocks (`id`, `name`,
`input`); any other model writes the call as XML in its text (`<read_file>\\n<path>a.py</path>\\n</read_file>`),
which is read here for the tools Cline and Roo Code define. Either way Cline sends the result back as a user
text block `[<tool> for '<what>'] Result:\\n<output>` (a `tool_result` block where the history has one), with
the context it adds (`<environment_details>`, reminders) as further text blocks of the same message: the result
is the call's observation, the rest is seen with it. `execute_command` results say `Command executed.` or
`Command failed with exit code N.` (Roo Code: `Command executed in terminal within working directory '...'.
Exit code: N`): the exit code. `attempt_completion` is a `done` action, its `result` the
answer (a completion the CLI showed but ended the task before saving to the history is read from its
`completion_result` in `ui_messages.json`); `<task>` in the first user message is the task.

Model per turn: the assistant entry's `modelInfo.modelId`, else the latest `task_metadata.json` `model_usage`
entry. Timestamps: the entry's `ts` (epoch ms), where recorded. Usage and cost: the `api_req_started` records of
`ui_messages.json` (`tokensIn`, `tokensOut`, `cacheWrites`, `cacheReads`, `cost`) summed into `env["cline"]`; a
record whose text is not a JSON object (one being written when the task stopped) is kept raw in
`unread_requests` with an `unknown_content` warning. Reasoning: the history's `thinking` / `reasoning` blocks; where
the history holds none, the `say: reasoning` records of `ui_messages.json` (Roo Code before 3.2x and Cline with
models served through OpenAI-compatible providers shown the reasoning without saving it): each goes to the first
assistant entry saved after it (by `ts`) when it is the only record since the entry before
(`reasoning_from_ui`: how many); records of requests whose reply the history does not hold (several before one
entry, or after the last, or all of them where the entries carry no `ts`) are kept in `ui_reasoning_unplaced`.
Cline grades nothing: outcome `unknown`; terminated when the conversation ends in `attempt_completion`. Domain `swe`,
platform from `environment_history` (`linux`, `darwin`, `win32`), else `linux`.

**Roo Code** (and its forks that keep its files, such as Kilo Code) is told from Cline by what only it writes: a
`history_item.json` in the folder, `<environment_details>` whose `# Current Mode` names the mode as `<slug>`, or
`api_req_started` records naming the `apiProtocol`; its episodes carry `env["roo_code"]` in place of `env["cline"]`.
Its differences, from its writer (`src/core/task-persistence/`, `Task.ts`, `getEnvironmentDetails.ts`): no
`modelInfo` on the entries (the model of a turn is the `<model>` the environment details before it named); the
task as `<user_message>` (`<task>` before 3.2x); its own tools (`apply_diff`, `switch_mode`, `new_task` with a
`mode`, `update_todo_list`, `codebase_search`, ...); reasoning as `reasoning` blocks, or top-level encrypted
reasoning items (nothing readable: counted); condensing and truncation mark entries (`isSummary`,
`condenseParent`, `truncationParent`) but keep them in the file, and they are read as the model saw them when
sent (counted in `context_management`). `history_item.json` (`mode`, `status`, `parentTaskId`, `childIds`,
usage) is kept whole as `history_item` (a field its schema does not name with an `unknown_content` warning), the
modes the turns ran in as `modes`.

**Roo Code's error diagnostics** (`roo-diagnostics-<task>-<time>.json`, which its "report an error" action writes for
its users to share with its support, `src/core/webview/diagnosticsHandler.ts`): two `//` comment lines, then
`{"error": {timestamp, version, provider, model, details}, "history": [the task's api_conversation_history]}`.
The history is read as a task folder's is (the model named by the error for turns whose environment details name
none); the error is kept as `diagnostics` in `env["roo_code"]` (its `details` are not the task's outcome: Roo
Code grades nothing), any other top-level field raw in `unknown_fields`, and history blocks of a type Roo Code does
not write (the forks that build the file from a history of their own) raw in `unread_blocks`, each with an
`unknown_content` warning. The file is claimed by its comment lines and its opening (people share it under other
names, `.md` among them; forks reword the first line).

**Cline CLI 3 sessions** (the Cline SDK's agent, `~/.cline/data/sessions/<id>/`): `<id>.messages.json` (`sessionId`,
`messages` in the same block form with `ts`, `modelInfo.id` and `metrics`, `system_prompt`) beside the session
record `<id>.json` (`status`, `exit_code`, `provider`, `model`, `cwd`, `prompt`, `metadata.usage`). Its results
are `tool_result` blocks whose content is a list of `{query, result, success, error}` records (kept as the JSON
the model was sent); `run_commands` is a `command` action (its commands, one per line), its exit code the one
its error names. The task is the `<user_input>` of the first message (as the model got it), else the record's
`prompt` (the desktop app's wraps it in `<user_input>`: unwrapped; the VS Code extension's is cut to a title's
length); it ends in a text answer: terminated when the record's status is `completed` and the last turn calls no
tool. A `file` block (a document the user attached) is the text the SDK sends for it, `<file_content
path="...">\\n<content>\\n</file_content>`. Platform: the one the system prompt's `<env>` names (`1. Platform:
darwin`), else `windows` when the record's `cwd` has a drive letter, else `linux`. Env `cline`: the record
(`session`), its usage, and the messages file's own `agent` (`lead`, or `teammate` for the files of a team's members
beside the lead's, each read as its own episode), `taskType`, `origin` (a teammate's names its `parentThreadId`) and
`updated_at` (`thread`); where the app compacted the session, its `<id>.compaction.json` (the summary the model was
given in place of the older messages, which the messages file keeps whole) as `compaction`: its fields, its messages
counted.

**A UI log alone** (`ui_messages.json` with no `api_conversation_history.json` beside it, as people share it) is
read by `ingest.swe.cline_ui` into the episode the extension showed: the task, each tool, command, browser or MCP
action with the result the next request sent back (else the output the log showed), the reasoning and text
shown, `completion_result` as the answer; env says `read_from` the UI log alone (the model's own messages are not
in it), with `task_metadata.json` beside it read as a folder's is. A history block of a type Cline does not write
(in a task folder or a diagnostics file) is kept raw in `unread_blocks` with an `unknown_content` warning.

A history or session file claimed alone (its folder holds other files) is planned with the files beside it that
the reader reads (`members`): `ui_messages.json`, `task_metadata.json`, `history_item.json`, or the session
record `<id>.json`; the other files Cline writes in a task folder (settings, context history, focus chain,
checkpoints) are listed in `ignored_inputs` as files of the task the reader does not read.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.members import with_prefix
from ingest.record import Action, Episode, Rejected
from ingest.source import Source, SourceError, parse_json
from ingest.swe.cline_ui import RESULT as _RESULT
from ingest.swe.cline_ui import ROO_EXIT as _ROO_EXIT
from ingest.swe.cline_ui import exit_code as _exit_code
from ingest.swe.cline_ui import read_ui
from ingest.swe.workdir import platform_of
from ingest.times import parse_time
from ingest.tools import dumps, tool_observation
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "cline"
VERSION = "8"
INFO = FormatInfo(
    group="swe", rank=310, domains=('swe',), platform="varies",
    summary=("Cline and Roo Code task folders (`api_conversation_history.json`, `ui_messages.json`), a UI log "
             "shared alone, Roo Code error diagnostics, Cline CLI 3 sessions"),
    producer=("Cline task folders (`~/.cline/data/tasks/<id>/`, the VS Code extension's `tasks/<id>/`), Cline CLI 3 "
              "sessions (`~/.cline/data/sessions/<id>/`), Roo Code task folders (`rooveterinaryinc.roo-cline/tasks/"
              "<id>/`, with `history_item.json`) and its error diagnostics (`roo-diagnostics-*.json`)"),
    versions=("Cline CLI 2.18.0 (Cline core 3.82.0: task folders), 3.0.65 (SDK sessions), run here; real VS Code "
              "tasks (native and `use_subagents` calls); a real session of the Cline desktop app (SDK 0.0.34)"),
    proof=("each Cline CLI release from the npm registry in its own prefix runs with its OpenAI-compatible provider "
           "set by `cline auth` at the scripted model server (Chat Completions; native tool calls, and 2.18.0 also "
           "with the XML tool form in the text), in a temporary HOME and workspace: it lists, reads and writes files, "
           "runs a command that fails and ends the task (`attempt_completion`, or a text answer); the script is the "
           "oracle for every call, its arguments, the result the agent sent back, the model and the final answer "
           "(`tests/ingest/swe/test_cline_cli.py`), and its `ui_messages.json` read alone holds every call and "
           "result too; two real task histories in "
           "`../shared/samples` (goldens: 47 calls ending in a completion; 239 steps with subagents, 13 completions "
           "and a resumed task) and a real Windows session of the Cline desktop app, which writes the CLI 3 store "
           "(golden) (`tests/ingest/swe/test_cline_real.py`); edge cases of the XML tool form and of "
           "pairing hand-made (`tests/ingest/swe/test_cline.py`); Roo Code cannot run here (its CLI is not on the npm "
           "registry, only in its GitHub releases): its task folders hand-made in the shapes of its writer at "
           "3.53 (native calls, modes, `history_item.json`, condensing) and of its XML era "
           "(`tests/ingest/swe/test_roo_code.py`; its UI records checked by `@roo-code/types`' strict message "
           "schema); a real Roo Code 3.53.0 error diagnostics file of a public repository (`samples/swe/roo-code`, "
           "golden), a real MIT task folder of its XML era (jsboige/jsboige-mcp-servers: a subtask writing a file "
           "and completing, its reasoning shown in the UI log alone; golden) and a real Roo Code UI log shared "
           "alone in `../shared/samples` (`tests/ingest/swe/test_roo_code_real.py`); two real Cline "
           "UI logs shared alone in `../shared/samples` (goldens: 61 steps with commands and MCP calls; 24 steps with "
           "seven completions), the writers' other record kinds hand-made (`tests/ingest/swe/test_cline_ui.py`)"),
)

HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
METADATA = "task_metadata.json"
# the tools Cline and Roo Code define, whose XML form a model writes in its text when it has no native tools
TOOLS = ("execute_command", "read_file", "write_to_file", "replace_in_file", "search_files", "list_files",
         "list_code_definition_names", "browser_action", "use_mcp_tool", "access_mcp_resource",
         "ask_followup_question", "attempt_completion", "new_task", "plan_mode_respond", "load_mcp_documentation",
         "web_fetch", "apply_patch", "new_rule", "condense", "summarize_task", "report_bug", "apply_diff",
         "insert_content", "search_and_replace", "switch_mode", "fetch_instructions", "codebase_search",
         "update_todo_list", "generate_image", "run_slash_command")
_XML_CALL = re.compile(r"<(" + "|".join(TOOLS) + r")>(.*?)</\1>", re.S)
_XML_PARAM = re.compile(r"<(\w+)>(.*?)</\1>", re.S)
_TASK = re.compile(r"<task>\n?(.*?)\n?</task>", re.S)
_USER_MESSAGE = re.compile(r"<user_message>\n?(.*?)\n?</user_message>", re.S)  # Roo Code's task and replies
# Roo Code's `<environment_details>` names the mode and (from 3.2x) the model of every turn
_ROO_MODE = re.compile(r"# Current Mode\n<slug>(.*?)</slug>(?:\n<name>.*?</name>)?(?:\n<model>(.*?)</model>)?", re.S)
ROO_ITEM = "history_item.json"
# the fields of Roo Code's `historyItemSchema` (`@roo-code/types`): any other is kept too, with a warning
_ROO_ITEM_KEYS = frozenset({
    "id", "number", "ts", "task", "mode", "status", "workspace", "size", "rootTaskId", "parentTaskId", "childIds",
    "delegatedToId", "awaitingChildId", "completedByChildId", "completionResultSummary", "apiConfigName", "tokensIn",
    "tokensOut", "cacheWrites", "cacheReads", "totalCost"})
_TASK_FILES = (HISTORY, UI, METADATA, "settings.json", "context_history.json", "claude_messages.json",
               "history_item.json")
_HAS_CHANGES = "HAS_CHANGES"
SESSION_MESSAGES = ".messages.json"
COMPACTION = ".compaction.json"  # the summary that replaced a session's older messages in the context
_SESSION_SNIFF = re.compile(rb'^\s*\{[^\[]*"sessionId"\s*:', re.S)
_USER_INPUT = re.compile(r"<user_input[^>]*>(.*?)</user_input>", re.S)
_EXITED = re.compile(r"exited with code (-?\d+)")
_SESSION_KEYS = ("session_id", "source", "status", "exit_code", "provider", "model", "cwd", "started_at",
                 "ended_at", "prompt")
_PLATFORM = re.compile(r"<env>\n1\. Platform: (darwin|win32|linux)\n")  # the SDK's system prompt
_PLATFORMS = {"darwin": "macos", "win32": "windows", "linux": "linux"}
_THREAD_KEYS = ("agent", "taskType", "origin", "updated_at")
_USAGE = ("tokensIn", "tokensOut", "cacheWrites", "cacheReads", "cost")
# Roo Code's error diagnostics: its two comment lines (the first says whom to share it with: each fork names its
# own, or a GitHub issue), then the JSON document
_DIAGNOSTICS = re.compile(rb"^// [^\n]*\n// Just make sure you're OK sharing the contents of the conversation "
                          rb"below\.\s*\{\s*\"error\"\s*:")
_DIAGNOSTICS_KEYS = ("error", "history")
# a UI log: a list whose first record has a `type` of `say` or `ask` and then that kind's key, as Cline writes it
_UI_SNIFF = re.compile(rb'^\s*\[\s*\{[^{}\[]*?"type"\s*:\s*"(say|ask)"\s*,\s*"\1"\s*:', re.S)
# the content blocks of an API history the reader reads (images and signatures hold nothing for a step)
_BLOCKS = ("text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking", "reasoning",
           "thoughtSignature")


def units(files: list[str], head) -> list[str]:
    """Folders holding an `api_conversation_history.json` whose first bytes open a list of messages with a
    `role`, and Cline CLI 3 session folders (`<id>.messages.json` opening with `sessionId`, beside `<id>.json`);
    the file alone where the folder also holds files Cline does not write there. A `ui_messages.json` whose first
    record has a `type` of `say` or `ask` and that kind's key, with no API history beside it, alone."""
    found = []
    ordered = sorted(files)
    for path in files:
        folder, name = posixpath.split(path)
        if name == HISTORY and head(path).lstrip()[:1] == b"[" and b'"role"' in head(path):
            found.append(folder if all(_task_file(f) for f in files_under(ordered, folder)) else path)
        elif name.endswith(SESSION_MESSAGES) and _SESSION_SNIFF.search(head(path)):
            session = name[:-len(SESSION_MESSAGES)]
            found.append(folder if all(f.startswith(session + ".") for f in files_under(ordered, folder)) else path)
        elif _DIAGNOSTICS.match(head(path)):
            found.append(path)
        elif name == UI and _UI_SNIFF.match(head(path)) and not _listed(ordered, posixpath.join(folder, HISTORY)):
            found.append(path)  # the UI log alone: read as what it showed
    return found


def _listed(ordered: list[str], path: str) -> bool:
    """Whether `path` is in the sorted listing `ordered`."""
    at = bisect.bisect_left(ordered, path)
    return ordered[at:at + 1] == [path]


def files_under(ordered: list[str], folder: str) -> list[str]:
    """The paths (relative to `folder`) of the files under `folder`, from the sorted listing `ordered`."""
    prefix = folder + "/"
    start = bisect.bisect_left(ordered, prefix)
    end = bisect.bisect_left(ordered, folder + chr(ord("/") + 1))
    return [f[len(prefix):] for f in ordered[start:end]]


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The files beside a history or session file claimed alone that `read` reads with it (see the docstring);
    a folder unit holds its own."""
    out: dict[str, list] = {}
    for path in found:
        folder, name = posixpath.split(path)
        if name == HISTORY:
            beside = [p for p in with_prefix(files, folder + "/") if p != path and _task_file(p[len(folder) + 1:])]
            out[path] = [p if posixpath.basename(p) in (UI, METADATA, ROO_ITEM) else
                         (p, "a file Cline writes in a task folder; the reader reads the conversation, "
                             f"{UI}, {METADATA} and {ROO_ITEM}") for p in beside]
        elif name.endswith(SESSION_MESSAGES):
            session = f"{folder}/{name[:-len(SESSION_MESSAGES)]}"
            out[path] = [session + ".json"] + ([session + COMPACTION] if _listed(files, session + COMPACTION) else [])
        elif name == UI:
            beside = [p for p in with_prefix(files, folder + "/") if p != path and _task_file(p[len(folder) + 1:])]
            out[path] = [p if posixpath.basename(p) == METADATA else
                         (p, f"a file Cline writes in a task folder; the reader reads {UI} and {METADATA} when the "
                             "conversation is not beside them") for p in beside]
    return out


def _task_file(rel: str) -> bool:
    """Whether a file of a task folder is one Cline (or Roo Code) writes there."""
    return rel in _TASK_FILES or rel.startswith("focus_chain_taskid_") or rel.startswith("checkpoints/")


def read(source: Source) -> Iterator[Episode | Rejected]:
    """A task folder, or its `api_conversation_history.json` alone (then read with its siblings beside it); a
    CLI 3 session folder, or its `<id>.messages.json` alone."""
    folder = "" if source.is_dir() else ".."
    if folder and posixpath.basename(source.path) == UI:
        yield from _ui_alone(source)
        return
    if folder and posixpath.basename(source.path) != HISTORY and not source.path.endswith(SESSION_MESSAGES):
        yield from _diagnostics(source)
        return
    sessions = [n for n in source.listdir(folder) if n.endswith(SESSION_MESSAGES)]
    if (folder and source.path.endswith(SESSION_MESSAGES)) or (not folder and sessions and HISTORY not in
                                                                  source.listdir()):
        yield from _session(source, folder, posixpath.basename(source.path) if folder else sessions[0])
        return
    where = posixpath.basename(source.path.rstrip("/") if not folder else posixpath.dirname(source.path)) or HISTORY
    try:
        history = parse_json(source.read_bytes("" if folder else HISTORY),
                             f"{where}/{HISTORY}", source.budgets)
    except SourceError as e:
        yield e.as_rejected()
        return
    if not isinstance(history, list):
        yield Rejected("bad_record", f"{where}/{HISTORY}: not a list of messages", HISTORY)
        return
    names = set(source.listdir(folder))
    side = {}
    for name, kind in ((UI, list), (METADATA, dict), (ROO_ITEM, dict)):
        try:
            value = parse_json(source.read_bytes(posixpath.join(folder, name)), f"{where}/{name}", source.budgets) \
                if name in names else kind()
        except SourceError as e:
            yield e.as_rejected()  # the conversation is still read, without it
            value = kind()
        side[name] = value if isinstance(value, kind) else kind()
    ui, metadata, item = side[UI], side[METADATA], side[ROO_ITEM]
    env, task, unread = _env(ui, metadata)
    models = [m for m in metadata.get("model_usage") or [] if isinstance(m, dict)]
    messages, found_task, seen = _messages(history, f"{where}/{HISTORY}", models)
    env.update(_ui_reasoning(ui, messages))
    if history and isinstance(history[-1], dict) and history[-1].get("role") != "assistant":
        messages += _unsaved_completion(ui, len(history) - 1, f"{where}/{UI}")
    # ended: the conversation's last message is the turn that calls attempt_completion (a user reply after a
    # completion reopens the task)
    completed = bool(messages) and any(c.name == "attempt_completion" for c in messages[-1].tool_calls)
    roo = bool(item) or bool(seen["modes"]) or _roo_usage(ui)
    if roo:
        env.update(_roo_env(item, seen))
    yield from _kept_raw(unread, item, where, "roo_code" if roo else "cline")
    yield from _unread_blocks(history, f"{where}/{HISTORY}", env, "roo_code" if roo else "cline",
                              "Roo Code" if roo else "Cline")
    yield from records(messages, Run(key=where, domain="swe", platform=env.pop("platform", "linux"),
                                     task=found_task or task or item.get("task"), terminated=completed,
                                     env={"roo_code" if roo else "cline": env}), where)


def _diagnostics(source: Source) -> Iterator[Episode | Rejected]:
    """Roo Code's error diagnostics file: its comment lines, then the error and the task's API history."""
    name = posixpath.basename(source.path)
    data = source.read_bytes()
    while data.startswith(b"//"):  # the comment lines before the JSON
        data = data.partition(b"\n")[2]
    try:
        doc = _listed_doc(data, name, "history", "a Roo Code diagnostics file", source.budgets)
    except SourceError as e:
        yield e.as_rejected()
        return
    error = doc.get("error") if isinstance(doc.get("error"), dict) else {}
    named = [{"model_id": error["model"]}] if isinstance(error.get("model"), str) and error["model"] else []
    messages, task, seen = _messages(doc["history"], name, named)
    env = {"diagnostics": error, **_roo_env({}, seen)}
    unknown = {k: v for k, v in doc.items() if k not in _DIAGNOSTICS_KEYS}
    if unknown:
        env["unknown_fields"] = unknown
        yield Rejected("unknown_content", f"{name}: field(s) {', '.join(sorted(unknown))} are none Roo Code's "
                       "diagnostics are known to hold; kept raw in env.roo_code.unknown_fields", name)
    # forks that write the diagnostics from a history of their own (Kilo Code's `tool` parts)
    yield from _unread_blocks(doc["history"], name, env, "roo_code", "Roo Code")
    completed = bool(messages) and any(c.name == "attempt_completion" for c in messages[-1].tool_calls)
    yield from records(messages, Run(key=name, domain="swe", platform="linux", task=task, terminated=completed,
                                     env={"roo_code": env}), name)


def _listed_doc(data: bytes, name: str, key: str, what: str, budgets) -> dict:
    """The JSON object in `data` whose `key` holds a list (a diagnostics file's history, a session's messages);
    SourceError (`bad_record`, naming `what` the file should have been) for any other document."""
    doc = parse_json(data, name, budgets)
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        raise SourceError("bad_record", f"{name}: {what} without a `{key}` list", name)
    return doc


def _ui_alone(source: Source) -> Iterator[Episode | Rejected]:
    """A `ui_messages.json` with no API history beside it (`ingest.swe.cline_ui`), with the `task_metadata.json`
    beside it where there is one."""
    where = posixpath.basename(posixpath.dirname(source.path)) or UI
    try:
        ui = parse_json(source.read_bytes(), f"{where}/{UI}", source.budgets)
    except SourceError as e:
        yield e.as_rejected()
        return
    try:
        metadata = parse_json(source.read_bytes(f"../{METADATA}"), f"{where}/{METADATA}", source.budgets) \
            if METADATA in source.listdir("..") else {}
    except SourceError as e:
        yield e.as_rejected()  # the log is still read, without it
        metadata = {}
    if not isinstance(ui, list):
        yield Rejected("bad_record", f"{where}/{UI}: not a list of UI records", UI)
        return
    env, task, unread = _env(ui, metadata if isinstance(metadata, dict) else {})
    messages, seen, warnings = read_ui(ui, f"{where}/{UI}")
    env.update(seen)
    env["read_from"] = f"{UI} alone: what Cline showed; the model's own messages (its API history) are not in it"
    key = "roo_code" if _roo_usage(ui) else "cline"
    yield from warnings
    yield from _kept_raw(unread, {}, where, key)
    last = next((m for m in reversed(messages) if m.role in ("assistant", "user")), None)
    completed = last is not None and any(c.name == "attempt_completion" for c in last.tool_calls)
    yield from records(messages, Run(key=where, domain="swe", platform=env.pop("platform", "linux"), task=task,
                                     terminated=completed, env={key: env}), where)


def _unread_blocks(history: list, name: str, env: dict, key: str, writer: str) -> Iterator[Rejected]:
    """The history's content blocks of a type the reader does not read, kept raw in `env[key]["unread_blocks"]`
    with one warning naming their types."""
    unread = [b for e in history if isinstance(e, dict) and isinstance(e.get("content"), list)
              for b in e["content"] if isinstance(b, dict) and b.get("type") not in _BLOCKS]
    if unread:
        env["unread_blocks"] = unread
        yield Rejected("unknown_content", f"{name}: history block type(s) "
                       f"{', '.join(sorted({str(b.get('type')) for b in unread}))} are none {writer} writes; kept raw "
                       f"in env.{key}.unread_blocks", name)


def _kept_raw(unread: list[int], item: dict, where: str, key: str) -> Iterator[Rejected]:
    """A warning for each thing kept raw that the reader could not read: an `api_req_started` record whose text is
    not a JSON object (a request being written when the task stopped; kept in `unread_requests`), and each
    `history_item.json` field Roo Code is not known to write (kept in `history_item` with the others)."""
    for i in unread:
        yield Rejected("unknown_content", f"{where}/{UI}[{i}]: an api_req_started record whose text is not a JSON "
                       f"object; its usage is not counted; kept raw in env.{key}.unread_requests", f"{where}/{UI}",
                       record_id=str(i))
    unknown = sorted(k for k in item if k not in _ROO_ITEM_KEYS)
    if unknown:
        yield Rejected("unknown_content", f"{where}/{ROO_ITEM}: field(s) {', '.join(unknown)} are none Roo Code is "
                       f"known to write; kept raw in env.{key}.history_item", f"{where}/{ROO_ITEM}")


def _roo_usage(ui: list) -> bool:
    """Whether Cline's UI log is Roo Code's: its `api_req_started` records name the `apiProtocol`."""
    return any(isinstance(m, dict) and m.get("say") == "api_req_started" and '"apiProtocol"' in str(m.get("text"))
               for m in ui)


def _roo_env(item: dict, seen: dict) -> dict:
    """What Roo Code adds to a task folder: its `history_item.json` (mode, status, parent and child tasks, usage),
    the modes the turns ran in, and how its context management rewrote the history."""
    env: dict = {"modes": seen["modes"]} if seen["modes"] else {}
    if item:
        env["history_item"] = dict(item)  # whole: the fields it is not known to write are warned of
    managed = {k: seen[k] for k in ("summaries", "condensed", "truncated", "encrypted_reasoning") if seen[k]}
    if managed:
        env["context_management"] = managed
    return env


def _unsaved_completion(ui: list, last: int, where: str) -> list[Message]:
    """The completion Cline showed after the history's last entry but did not save to the history (the CLI ends
    the task first): its `completion_result` (and the model's text before it) in `ui_messages.json`, as the
    `attempt_completion` turn it was."""
    after = [m for m in ui if isinstance(m, dict) and m.get("conversationHistoryIndex") == last
             and m.get("type") == "say"]
    done = next((m for m in after if m.get("say") == "completion_result" and isinstance(m.get("text"), str)), None)
    if done is None:
        return []
    thought = "\n".join(m["text"] for m in after if m.get("say") == "text" and isinstance(m.get("text"), str))
    info = done.get("modelInfo") if isinstance(done.get("modelInfo"), dict) else {}
    result = done["text"].removesuffix(_HAS_CHANGES)
    return [Message("assistant", text=thought or None, model=info.get("modelId"), timestamp=parse_time(done.get("ts")),
                    tool_calls=[_call(None, "attempt_completion", {"result": result}, done)], where=where)]


def _session(source: Source, folder: str, name: str) -> Iterator[Episode | Rejected]:
    """A Cline CLI 3 session: `<id>.messages.json` (`messages` in the same block form, `modelInfo.id`, `ts`) and
    the session record `<id>.json` beside it (status, provider, model, usage)."""
    record_name = name[:-len(SESSION_MESSAGES)] + ".json"
    try:
        doc = _listed_doc(source.read_bytes(posixpath.join(folder, name) if not folder else ""), name, "messages",
                          "a Cline session", source.budgets)
        record = parse_json(source.read_bytes(posixpath.join(folder, record_name)), record_name, source.budgets) \
            if record_name in source.listdir(folder) else {}
    except SourceError as e:
        yield e.as_rejected()
        return
    record = record if isinstance(record, dict) else {}
    compaction = yield from _compaction(source, folder, name[:-len(SESSION_MESSAGES)] + COMPACTION)
    messages, task, _seen = _messages(doc["messages"], name, [])
    if doc.get("system_prompt"):
        messages.insert(0, Message("system", text=str(doc["system_prompt"]), where=name))
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    env = {"session": {k: record[k] for k in _SESSION_KEYS if record.get(k) is not None}}
    env.update({k: metadata[k] for k in ("usage", "aggregateUsage", "totalCost") if k in metadata})
    # who wrote the file: the lead agent or a teammate of its team, and the thread it answers to
    thread = {k: doc[k] for k in _THREAD_KEYS if doc.get(k) is not None}
    if thread:
        env["thread"] = thread
    if compaction:
        env["compaction"] = compaction
    last = messages[-1] if messages else None
    ended = record.get("status") == "completed" if record else last is not None and last.role == "assistant"
    prompt = record.get("prompt") if isinstance(record.get("prompt"), str) else None
    wrapped = _USER_INPUT.search(prompt or "")  # the desktop app's record keeps the prompt as the model got it
    yield from records(messages, Run(key=str(doc.get("sessionId") or name), domain="swe",
                                     platform=_session_platform(doc.get("system_prompt"), record.get("cwd")),
                                     task=task or (wrapped.group(1) if wrapped else prompt),
                                     terminated=ended and last is not None and
                                     last.role == "assistant" and not last.tool_calls, env={"cline": env}), name)


def _session_platform(system_prompt, cwd) -> str:
    """The platform the SDK's system prompt names (`1. Platform: darwin` in its `<env>`), else the working
    directory's (`ingest.swe.workdir`)."""
    named = _PLATFORM.search(system_prompt) if isinstance(system_prompt, str) else None
    return _PLATFORMS[named.group(1)] if named else platform_of(cwd)


def _compaction(source: Source, folder: str, name: str):
    """What `<id>.compaction.json` says (the messages the model was given in place of the session's older ones,
    which the messages file keeps whole): its fields, and its messages counted; None where there is none. A
    generator returning it, so that a broken file is a row of its own and the session is read on."""
    if name not in source.listdir(folder):
        return None
    try:
        doc = parse_json(source.read_bytes(posixpath.join(folder, name)), name, source.budgets)
    except SourceError as e:
        yield e.as_rejected()
        return None
    if not isinstance(doc, dict):
        yield Rejected("bad_record", f"{name}: not an object", name)
        return None
    kept = {k: v for k, v in doc.items() if k != "messages"}
    return {"file": name, **kept, "messages": len(doc["messages"]) if isinstance(doc.get("messages"), list) else None}


def _env(ui: list, metadata: dict) -> tuple[dict, str | None, list[int]]:
    """env["cline"] (summed usage, the completion Cline showed, the environment, the `api_req_started` records
    whose text is not a JSON object, raw), the task Cline showed, and those records' places in `ui`."""
    env: dict = {}
    usage: dict = {}
    task = None
    unread: list[int] = []
    for i, item in enumerate(ui):
        if not isinstance(item, dict):
            continue
        if item.get("say") == "api_req_started":
            info = _request_info(item.get("text"))
            if info is None:
                unread.append(i)
                env.setdefault("unread_requests", []).append(item)
                continue
            for key in _USAGE:
                value = info.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    usage[key] = usage.get(key, 0) + value
        elif item.get("say") == "completion_result" and isinstance(item.get("text"), str):
            # Cline marks a completion whose checkpoint holds changes by appending HAS_CHANGES to what it shows
            text = item["text"]
            env["completion"] = text.removesuffix(_HAS_CHANGES)
            env["completion_has_changes"] = text.endswith(_HAS_CHANGES)
        elif item.get("say") == "task" and task is None:
            task = item.get("text")
    if usage:
        env["usage"] = usage
    environment = [e for e in metadata.get("environment_history") or [] if isinstance(e, dict)]
    if environment:
        env["environment"] = environment[-1]
        if environment[-1].get("os_name") in ("linux", "darwin", "win32"):
            env["platform"] = {"darwin": "macos", "win32": "windows"}.get(environment[-1]["os_name"], "linux")
    if metadata.get("files_in_context"):
        env["files_in_context"] = metadata["files_in_context"]
    return env, task, unread


def _ui_reasoning(ui: list, messages: list[Message]) -> dict:
    """Puts the UI log's reasoning records on the assistant turns saved after them, where the history kept no
    reasoning of its own; what it placed and what it could not (see the module's docstring)."""
    turns = [m for m in messages if m.role == "assistant"]
    if any(m.reasoning for m in turns):
        return {}  # the history's own reasoning wins: the UI log shows the same
    stamps = [m.timestamp for m in turns]
    timed = None not in stamps and stamps == sorted(stamps)  # else nothing can be matched: all kept unplaced
    shown = [(parse_time(r.get("ts")), r["text"]) for r in ui if isinstance(r, dict) and r.get("say") == "reasoning"
             and isinstance(r.get("text"), str) and r["text"].strip()]
    before: dict[int, list[str]] = {}
    unplaced: list[str] = []
    for stamp, text in shown:
        k = bisect.bisect_left(stamps, stamp) if timed and stamp is not None else len(stamps)
        (before.setdefault(k, []) if k < len(stamps) else unplaced).append(text)
    placed = 0
    for k, texts in before.items():
        if len(texts) == 1:  # several: requests whose replies the history lost share the interval
            turns[k].reasoning, placed = texts[0], placed + 1
        else:
            unplaced.extend(texts)
    found = {"reasoning_from_ui": placed} if placed else {}
    return found | ({"ui_reasoning_unplaced": unplaced} if unplaced else {})


def _request_info(text) -> dict | None:
    """The JSON object an `api_req_started` record's text holds (request, usage, cost), else None."""
    if not isinstance(text, str):
        return None
    try:
        info = parse_json(text.encode(), "api_req_started")
    except SourceError:
        return None
    return info if isinstance(info, dict) else None


def _messages(history: list, where: str, models: list[dict]) -> tuple[list[Message], str | None, dict]:
    """The messages of the list of entries `history` (of the file `where` names), the task, and what Roo Code's
    entries said beside them (`seen`: the modes in order, the model its environment details named last, its
    context-management marks)."""
    out: list[Message] = []
    task = None
    seen = {"modes": [], "model": None, "summaries": 0, "condensed": 0, "truncated": 0, "encrypted_reasoning": 0}
    pending: dict[str, str | None] = {}  # the last assistant turn's calls still waiting for a result: id -> name
    for i, entry in enumerate(history):
        if not isinstance(entry, dict):
            continue
        _mark_context(entry, seen)
        if entry.get("type") == "reasoning" and "role" not in entry:
            continue  # Roo Code's encrypted reasoning item (OpenAI Responses), counted: nothing readable
        mwhere = f"{where}[{i}]"
        stamp = parse_time(entry.get("ts"))
        blocks = entry.get("content") if isinstance(entry.get("content"), list) else [
            {"type": "text", "text": entry.get("content")}]
        blocks = [b for b in blocks if isinstance(b, dict)]
        if entry.get("role") == "assistant":
            turn = _assistant(entry, blocks, stamp, mwhere, models, seen["model"])
            for k, call in enumerate(turn.tool_calls):
                call.id = call.id or f"{i}.{k}"  # XML calls carry no id: results pair with them in order
            pending = {c.id: c.name for c in turn.tool_calls}
            out.append(turn)
        else:
            found = _user(out, blocks, stamp, mwhere, pending)
            task = task or found
            pending = {}  # a call its answer did not answer was interrupted (a task resumed later)
            _roo_context(blocks, seen)
    return out, task, seen


def _mark_context(entry: dict, seen: dict) -> None:
    """Counts Roo Code's context-management marks: condensed summaries, the messages a summary or a truncation
    hides from later requests (kept in the file and read here: the model saw them when they were sent)."""
    seen["summaries"] += bool(entry.get("isSummary"))
    seen["condensed"] += bool(entry.get("condenseParent"))
    seen["truncated"] += bool(entry.get("truncationParent"))
    seen["encrypted_reasoning"] += entry.get("type") == "reasoning" and "role" not in entry


def _roo_context(blocks: list[dict], seen: dict) -> None:
    """The mode and model a user entry's Roo Code `<environment_details>` names (they hold for the next turn)."""
    for block in blocks:
        found = _ROO_MODE.search(block["text"]) if isinstance(block.get("text"), str) else None
        if found:
            if not seen["modes"] or seen["modes"][-1] != found.group(1):
                seen["modes"].append(found.group(1))
            seen["model"] = found.group(2) or seen["model"]


def _assistant(entry: dict, blocks: list[dict], stamp, where: str, models: list[dict], named: str | None) -> Message:
    """An assistant entry; its model from its `modelInfo` (Cline), else the one the environment details before it
    named (`named`, Roo Code), else `task_metadata.json`'s at its time."""
    info = entry.get("modelInfo") if isinstance(entry.get("modelInfo"), dict) else {}
    model = info.get("modelId") or info.get("id") or named or _model_at(models, entry.get("ts"))
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    thinking = [b.get("thinking") or b.get("text") for b in blocks if b.get("type") in ("thinking", "reasoning")]
    calls = [_call(b.get("id"), b.get("name"), b.get("input"), b) for b in blocks if b.get("type") == "tool_use"]
    text = "\n".join(texts)
    if not calls:  # the XML form: calls written in the text
        calls = [_call(None, m.group(1), {p.group(1): p.group(2).strip("\n") for p in _XML_PARAM.finditer(m.group(2))},
                       m.group(0)) for m in _XML_CALL.finditer(text)]
        text = _XML_CALL.sub("", text).strip() if calls else text
    return Message("assistant", text=text or None, reasoning="\n\n".join(t for t in thinking if t) or None,
                   model=model if isinstance(model, str) else None, timestamp=stamp, tool_calls=calls, where=where,
                   raw={k: v for k, v in entry.items() if k in ("metrics",)} or None)


def _call(call_id, name, arguments, raw) -> ToolCall:
    call = ToolCall(call_id, name, arguments, raw=raw)
    command = arguments.get("command") if isinstance(arguments, dict) else None
    commands = arguments.get("commands") if isinstance(arguments, dict) else None
    if name == "run_commands" and isinstance(commands, list) and all(isinstance(c, str) for c in commands):
        command = "\n".join(commands)  # the CLI 3 shell tool: commands run one after another
    if name in ("execute_command", "run_commands") and isinstance(command, str):
        call.action = Action(kind="command", code=command, tool_name=name, arguments=dumps(arguments),
                             raw=raw if isinstance(raw, str) else dumps(raw))
    if name == "attempt_completion":
        result = arguments.get("result") if isinstance(arguments, dict) else None
        call.action = Action(kind="done", text=result, tool_name=name, arguments=dumps(arguments),
                             raw=raw if isinstance(raw, str) else dumps(raw))
    return call


def _model_at(models: list[dict], ts) -> str | None:
    """The model `task_metadata.json` says was in use at `ts` (its latest entry before it)."""
    chosen = None
    for entry in models:
        if ts is None or not isinstance(entry.get("ts"), (int, float)) or entry["ts"] <= ts:
            chosen = entry.get("model_id") or chosen
    return chosen


def _user(out: list[Message], blocks: list[dict], stamp, where: str, pending: dict) -> str | None:
    """A user entry: tool results (a `tool_result` block, or a text block `[tool ...] Result:`, which answers
    the next of the `pending` calls of the turn before), then what else it carries as one user message;
    returns the task it holds (`<task>`, Roo Code's `<user_message>`, CLI 3's `<user_input>`), if any."""
    rest, task = [], None
    for block in blocks:
        kind = block.get("type")
        text = _block_text(block)
        match = _RESULT.match(text) if kind == "text" else None
        if kind == "tool_result" or match:
            body = text[match.end():] if match else text
            answered = block.get("tool_use_id") or next(iter(pending), None)
            tool = match.group(1) if match else block.get("name") or pending.get(answered)
            exit_code = _exit_code(tool, body) if match else _roo_exit(body) if tool == "execute_command" \
                else _command_exit(block)
            failed = block.get("is_error") or (exit_code or 0) != 0 or _unsuccessful(block.get("content"))
            seen = tool_observation(tool, body, is_error=failed or None, exit_code=exit_code,
                                    kind="terminal" if tool in ("execute_command", "run_commands") else None)
            pending.pop(answered, None)
            out.append(Message("tool", text=body, tool_call_id=answered, observation=seen, timestamp=stamp,
                               where=where))
        elif text:
            found = _TASK.search(text) or _USER_MESSAGE.search(text) or _USER_INPUT.search(text)
            task = task or (found.group(1).strip() if found else None)
            rest.append(text)
    if rest:
        out.append(Message("user", text="\n".join(rest), timestamp=stamp, where=where))
    return task


def _block_text(block: dict) -> str:
    """A block's text: a string, the text parts of a list of content blocks, or (CLI 3's results, a list of
    `{query, result, success}` records) the value as JSON, as the model was sent it."""
    content = block.get("text") if block.get("type") == "text" else block.get("content")
    if block.get("type") == "file" and isinstance(content, str) and isinstance(block.get("path"), str):
        return f'<file_content path="{block["path"]}">\n{content}\n</file_content>'  # as the Cline SDK sends it
    if isinstance(content, str):
        return content
    if isinstance(content, list) and any(isinstance(c, dict) and c.get("type") == "text" for c in content):
        return "\n".join(c.get("text") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return "" if content is None else dumps(content)


def _unsuccessful(content) -> bool:
    items = content if isinstance(content, list) else [content]
    return any(isinstance(c, dict) and c.get("success") is False for c in items)


def _command_exit(block: dict) -> int | None:
    """A CLI 3 `run_commands` result's exit code, when it ran one command: 0 on success, else the code its
    error names."""
    content = block.get("content")
    if block.get("name") != "run_commands" or not isinstance(content, list) or len(content) != 1 \
            or not isinstance(content[0], dict):
        return None
    if content[0].get("success") is True:
        return 0
    found = _EXITED.search(str(content[0].get("error") or ""))
    return int(found.group(1)) if found else None


def _roo_exit(body: str) -> int | None:
    """The exit code a Roo Code `execute_command` result names (a `tool_result` block's text)."""
    found = _ROO_EXIT.match(body)
    return int(found.group(1)) if found else None

