"""Cline's and Roo Code's UI log (`ui_messages.json`) read alone, where the task's API history is not beside it
(people share the UI log alone: it is the file the extension's "export task" and bug reports point at).

The log is what the extension showed, in order: `say` / `ask` records with `ts`. Its writers (Cline's
`ExtensionMessage.ts` `ClineSay` / `ClineAsk`, Roo Code's `clineSays` / `clineAsks` in `@roo-code/types`)
define its sequence: each request to the model opens with an `api_req_started` record (a JSON object: `request`,
the text Cline sent, usage and cost); what the model answered follows it (`text`, `reasoning`, and the action it
called: a `tool` record, JSON naming the tool and its params; a `command`; a browser action; an MCP request; a
follow-up question; `completion_result`, the answer), then what the action printed (`command_output`,
`browser_action_result`, `mcp_server_response`) and what the user said (`user_feedback`). The next
`api_req_started`'s `request` begins with each action's result as the model was sent it, `[<tool> for '<what>']
Result:\\n<output>` (Cline's reminders and `<environment_details>` after it): that is the action's observation,
and its `<tool>` the action's tool name (the API's, where the `tool` record names the UI's: `readFile` is
`read_file`). Where no request follows (the task ended; Roo Code's requests that carry no `request` text), the
output the log showed is the observation.

The first record (`task`, or `text` in older releases and Roo Code) is the task. Records of the extension's own
bookkeeping (checkpoints, retries, progress lists, resume prompts) hold nothing of a step: counted by kind in
`ui_kinds`; its errors are kept raw in `errors`; a kind neither writer defines is kept raw in `unread_ui` with an
`unknown_content` warning, never dropped, and so is a record's field neither writer defines (in `unknown_fields`,
with the record's index). The model's own messages are not in this file: what it wrote beside
its calls is only what the extension showed of it.
"""

from __future__ import annotations

import json
import re

from ingest.record import Action, Rejected
from ingest.times import parse_time
from ingest.tools import dumps, tool_observation
from ingest.transcript import Message, ToolCall

RESULT = re.compile(r"^\[([\w-]+)(?: for (.*?))?\] Result:\n?", re.S)
_RESULTS = re.compile(r"^\[([\w-]+)(?: for (.*?))?\] Result:\n?", re.S | re.M)
# what Cline adds after a result as blocks of their own (joined by blank lines in a request's text)
_AFTER_RESULT = re.compile(r"\n\n+(?:<environment_details>|# task_progress|# Todo List|# TODO LIST)")
EXIT = re.compile(r"^Command failed with exit code (-?\d+)")
# Roo Code's execute_command result: `Command executed in terminal within working directory '<cwd>'. [Command
# execution was not successful, ...\n]Exit code: N\nOutput:` (no exit code after a signal or while running)
ROO_EXIT = re.compile(r"Command executed in [^\n]*?'\.\s(?:Command execution was not successful[^\n]*\n)?"
                      r"Exit code: (-?\d+)")
# the records that are an action of the model, and the tool of the API each one is
_ACTIONS = {"tool": None, "command": "execute_command", "browser_action_launch": "browser_action",
            "browser_action": "browser_action", "use_mcp_server": "use_mcp_tool",
            "load_mcp_documentation": "load_mcp_documentation", "followup": "ask_followup_question",
            "plan_mode_respond": "plan_mode_respond", "act_mode_respond": "act_mode_respond", "new_task": "new_task",
            "condense": "condense", "summarize_task": "summarize_task", "report_bug": "report_bug",
            "use_subagents": "use_subagents", "completion_result": "attempt_completion"}
# what an action printed in the log, by the record that holds it
_OUTPUTS = ("command_output", "browser_action_result", "mcp_server_response", "codebase_search_result",
            "subtask_result")
_ERRORS = frozenset({"error", "api_req_failed", "diff_error", "mistake_limit_reached", "command_permission_denied",
                     "clineignore_error", "rooignore_error", "condense_context_error", "shell_integration_warning",
                     "shell_integration_warning_with_suggestion", "too_many_tools_warning", "error_retry",
                     "auto_approval_max_req_reached"})
# the extension's bookkeeping: nothing of a step
_NOTICES = frozenset({"api_req_finished", "api_req_retried", "api_req_retry_delayed", "api_req_rate_limit_wait",
                      "api_req_deleted", "deleted_api_reqs", "checkpoint_created", "checkpoint_saved",
                      "task_progress", "resume_task", "resume_completed_task", "mcp_server_request_started",
                      "mcp_notification", "info", "hook_status", "hook_output_stream", "conditional_rules_applied",
                      "subagent", "subagent_usage", "generate_explanation", "condense_context",
                      "sliding_window_truncation", "user_edit_todos", "browser_session_status", "image",
                      "idle", "resumable"})
# the fields of a UI record: Cline's `ClineMessage` (`ExtensionMessage.ts`) and Roo Code's `clineMessageSchema`
# (`@roo-code/types`); any other is kept raw with a warning
_RECORD_KEYS = frozenset({"ts", "type", "ask", "say", "text", "reasoning", "images", "files", "partial",
                          "commandCompleted", "lastCheckpointHash", "isCheckpointCheckedOut",
                          "isOperationOutsideWorkspace", "conversationHistoryIndex", "conversationHistoryDeletedRange",
                          "modelInfo", "checkpoint", "progressStatus", "contextCondense", "contextTruncation",
                          "isProtected", "apiProtocol", "isAnswered", "metadata"})
# Cline's UI names of its file tools, and the API tool each is (when no result names it)
_UI_TOOLS = {"readFile": "read_file", "listFilesTopLevel": "list_files", "listFilesRecursive": "list_files",
             "listCodeDefinitionNames": "list_code_definition_names", "searchFiles": "search_files",
             "newFileCreated": "write_to_file", "editedExistingFile": "replace_in_file", "webFetch": "web_fetch",
             "appliedDiff": "apply_diff", "codebaseSearch": "codebase_search", "switchMode": "switch_mode",
             "newTask": "new_task", "updateTodoList": "update_todo_list", "summarizeTask": "summarize_task"}


def exit_code(tool: str | None, body: str) -> int | None:
    """The exit code an `execute_command` result names (Cline's `Command executed.` is 0)."""
    if tool != "execute_command":
        return None
    failed = EXIT.match(body) or ROO_EXIT.match(body)
    if failed:
        return int(failed.group(1))
    # Cline's `Command executed.`; Roo Code's own form without an exit code (a signal, still running): unknown
    return 0 if body.startswith("Command executed") and not body.startswith("Command executed in") else None


def read_ui(ui: list, where: str) -> tuple[list[Message], dict, list[Rejected]]:
    """The messages of a UI log read alone, what it held beside them (`ui_kinds`, `errors`, `unread_ui`) and a
    warning per kind of record no writer defines."""
    state = _State(where)
    for i, item in enumerate(ui):
        if isinstance(item, dict):
            state.record(i, item)
        else:
            state.unread.append(item)
    state.close(None, None)
    env: dict = {"ui_kinds": dict(sorted(state.kinds.items()))}
    if state.errors:
        env["errors"] = state.errors
    warnings = []
    if state.unknown_fields:
        env["unknown_fields"] = state.unknown_fields
        names = sorted({k for fields in state.unknown_fields for k in fields if k != "record"})
        warnings.append(Rejected("unknown_content", f"{where}: UI record field(s) {', '.join(names)} are none Cline or "
                                 "Roo Code is known to write; kept raw in env.unknown_fields", where))
    if state.unread:
        env["unread_ui"] = state.unread
        kinds = sorted({str(_kind(m)) if isinstance(m, dict) else type(m).__name__ for m in state.unread})
        warnings.append(Rejected("unknown_content", f"{where}: UI record kind(s) {', '.join(kinds)} are none Cline or "
                                 "Roo Code is known to write; kept raw in env.unread_ui", where))
    return state.messages, env, warnings


def _kind(item: dict):
    return item.get("say") if item.get("type") == "say" else item.get("ask") if item.get("type") == "ask" else None


class _State:
    """The log read so far: the messages, the assistant turn being read (what followed the latest request), its
    calls waiting for a result and the output the log showed for each, the user's feedback after them."""

    def __init__(self, where: str):
        self.where = where
        self.messages: list[Message] = []
        self.turn: Message | None = None
        self.outputs: dict[str, list[str]] = {}
        self.feedback: list[Message] = []
        self.kinds: dict[str, int] = {}
        self.errors: list[dict] = []
        self.unread: list = []
        self.unknown_fields: list[dict] = []
        self.started = False

    def record(self, i: int, item: dict) -> None:
        unknown = sorted(k for k in item if k not in _RECORD_KEYS)
        if unknown:
            self.unknown_fields.append({"record": i, **{k: item[k] for k in unknown}})
        kind, text = _kind(item), item.get("text")
        text = text if isinstance(text, str) else None
        if kind == "api_req_started":
            self.close(_request_text(text), item)
            self.started = True
        elif kind in ("task", "text") and not self.started and not self.messages:
            self.messages.append(_user(i, item, text, self.where))
        elif kind in ("text", "reasoning"):
            if text:
                turn = self._turn(i, item)
                field = "text" if kind == "text" else "reasoning"
                setattr(turn, field, f"{getattr(turn, field)}\n\n{text}" if getattr(turn, field) else text)
        elif kind in _ACTIONS and not (kind == "completion_result" and item.get("type") == "ask"):
            self._turn(i, item).tool_calls.append(_action(kind, text, item, f"{self.where}[{i}]"))
        elif kind in _OUTPUTS:
            self._output(kind, text)
        elif kind in ("user_feedback", "user_feedback_diff"):
            self.feedback.append(_user(i, item, text, self.where))
        elif kind in _ERRORS or kind in _NOTICES or kind == "completion_result":
            if kind in _ERRORS:
                self.errors.append(item)
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
        else:
            self.unread.append(item)

    def _turn(self, i: int, item: dict) -> Message:
        if self.turn is None:
            info = item.get("modelInfo") if isinstance(item.get("modelInfo"), dict) else {}
            model = info.get("modelId")
            self.turn = Message("assistant", model=model if isinstance(model, str) else None,
                                timestamp=parse_time(item.get("ts")), where=f"{self.where}[{i}]")
            self.messages.append(self.turn)
        return self.turn

    def _output(self, kind: str, text: str | None) -> None:
        """What the log showed an action print, for the latest call it can be the output of."""
        if self.turn is None or not self.turn.tool_calls or text is None:
            return
        call = self.turn.tool_calls[-1]
        self.outputs.setdefault(call.id, []).append(text)

    def close(self, request: str | None, item: dict | None) -> None:
        """Ends the turn being read: each call gets the result the request after it sent back (in order), else
        the output the log showed; then the user's feedback."""
        calls = self.turn.tool_calls if self.turn is not None else []
        results = _results(request or "")
        for call in calls:
            if results:
                name, body = results.pop(0)
                if call.action is None:  # the tool the model called, as the result names it
                    call.name = name
                self._result(call, name, body, item, exact=True)
            elif call.id in self.outputs:
                self._result(call, call.name, "\n".join(self.outputs[call.id]), item, exact=False)
        self.messages.extend(self.feedback)
        self.turn, self.outputs, self.feedback = None, {}, []

    def _result(self, call: ToolCall, name: str | None, body: str, item: dict | None, exact: bool) -> None:
        code = exit_code(name, body) if exact else None
        command = name == "execute_command"
        seen = tool_observation(name, body, is_error=(code or 0) != 0 or None, exit_code=code,
                                kind="terminal" if command else None)
        self.messages.append(Message("tool", text=body, tool_call_id=call.id, observation=seen,
                                     timestamp=parse_time(item.get("ts")) if item else None))


def _user(i: int, item: dict, text: str | None, where: str) -> Message:
    """The task or the user's feedback, with the images and files attached to it kept raw."""
    attached = {k: item[k] for k in ("images", "files") if item.get(k)}
    return Message("user", text=text, timestamp=parse_time(item.get("ts")), raw=attached or None,
                   where=f"{where}[{i}]")


def _action(kind: str, text: str | None, item: dict, where: str) -> ToolCall:
    """The call a record is: a `tool` record's JSON (its `tool` the UI's name), a command, a browser action, an
    MCP request, a question, the completion."""
    call_id = where
    if kind == "command":
        arguments = {"command": text}
        call = ToolCall(call_id, "execute_command", arguments)  # its action keeps the record
        call.action = Action(kind="command", code=text, tool_name="execute_command", arguments=dumps(arguments),
                             raw=dumps(item))
        return call
    if kind == "completion_result":
        answer = (text or "").removesuffix("HAS_CHANGES")  # Cline's mark of a checkpoint that holds changes
        arguments = {"result": answer}
        call = ToolCall(call_id, "attempt_completion", arguments)
        call.action = Action(kind="done", text=answer, tool_name="attempt_completion", arguments=dumps(arguments),
                             raw=dumps(item))
        return call
    if kind == "browser_action_launch":
        return ToolCall(call_id, "browser_action", {"action": "launch", "url": text}, raw=item)
    arguments = _json_object(text)
    if kind == "tool" and arguments is not None:
        name = arguments.get("tool")
        return ToolCall(call_id, _UI_TOOLS.get(name, name), arguments, raw=item)
    if kind == "use_mcp_server" and isinstance(arguments, dict) and arguments.get("type") == "access_mcp_resource":
        return ToolCall(call_id, "access_mcp_resource", arguments, raw=item)
    return ToolCall(call_id, _ACTIONS[kind] or kind, arguments if arguments is not None else {"text": text}, raw=item)


def _json_object(text: str | None):
    """A record's text as the JSON object it holds, else None."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # nested past the interpreter's depth: no object either
        return None
    return value if isinstance(value, dict) else None


def _request_text(text: str | None) -> str | None:
    """The `request` an `api_req_started` record's JSON holds: the text Cline sent the model."""
    info = _json_object(text)
    request = info.get("request") if info else None
    return request if isinstance(request, str) else None


def _results(request: str) -> list[tuple[str, str]]:
    """The results a request sent back, in order: (tool, output), each output up to the next result or the
    blocks Cline adds after the results."""
    found = list(_RESULTS.finditer(request))
    out = []
    for k, match in enumerate(found):
        end = found[k + 1].start() if k + 1 < len(found) else len(request)
        body = request[match.end():end]
        after = _AFTER_RESULT.search(body)
        out.append((match.group(1), (body[:after.start()] if after else body).strip()))
    return out
