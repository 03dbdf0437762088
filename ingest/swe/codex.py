"""Codex CLI session rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (the Rust CLI,
`codex-rs/core/src/rollout/recorder.rs`). An adapter onto `ingest.transcript`; one file is one episode.

Each line is `{"timestamp", "type", "payload"}` (older files, up to mid 2025, wrote the session meta and the
items bare, one per line, with `record_type: "state"` lines between; both are read):
- `session_meta`: the session `id`, `cwd`, `cli_version`, `originator`, `model_provider`, `instructions` /
  `base_instructions`, `git` -> `env["codex"]`.
- `turn_context`: a turn's `model` (and cwd, approval and sandbox policy); assistant turns after it are that
  model's.
- `response_item`: what the model saw and wrote (the Responses API items, `codex-rs/protocol/src/models.rs`):
  `message` (`role` user / assistant / developer / system, `content` parts `input_text` / `output_text` /
  `input_image`), `reasoning` (`summary` texts, `content` texts; `encrypted_content` is opaque), `function_call`
  (`name`, `arguments` as a JSON string, `call_id`), `function_call_output` (`call_id`, `output`: text, or the
  `shell` tool's JSON `{"output", "metadata": {"exit_code", "duration_seconds"}}`, or content parts),
  `custom_tool_call` / `custom_tool_call_output` (`apply_patch`, with a free-text `input`), `local_shell_call`
  (`action.command` argv), `web_search_call`; `ghost_snapshot` (the CLI's git snapshot for /undo) is counted,
  `compaction` items kept with the compactions; any other item type is kept raw with a warning.
- `event_msg`: the UI's event stream (`user_message`, `agent_message`, `agent_reasoning`, `token_count`,
  `exec_command_end`, `task_started`, `task_complete`, `turn_aborted`...): it repeats the response items, so
  only the prompts (`user_message`: the task), the last token usage, aborted turns and counts per type are kept.
- `compacted` (a summary that replaced the history): kept in `env["codex"]["compactions"]`.
- in releases after 0.135 (0.150 has them), lines carry an `ordinal` (their order in the thread) after the
  timestamp, and there are two more line types: `world_state` (the context the CLI builds the instructions
  from: environments, cwd, date, AGENTS.md, skills; the first full state is kept in `env["codex"]["world_state"]`,
  later updates counted) and, after 0.150 (0.169 has it), `token_usage_record` (one per model response:
  `response_id`, `usage`, the thread's total after it; kept in `env["codex"]["usage_per_response"]` and
  `["thread_token_usage"]`). The prompt is then also an `item_completed` event whose item is a `UserMessage`.
- any other line type is kept raw in `env["codex"]["unknown_records"]` with an `unknown_content` warning.

Mapping: developer and system messages, and the user messages the CLI injects (`<environment_context>`,
`<user_instructions>`, `# AGENTS.md instructions`) are the system prompt; a reasoning item is the reasoning
of the assistant turn that follows. Shell calls (`shell` / `container.exec` with an argv, `exec_command` /
`shell_command` with a `cmd` / `command` string, `local_shell_call`) are `command` actions whose code is the
script (`bash -lc <script>` unwrapped); their outputs are terminal observations with the exit code when the
output carries one (`exec_command` writes it in a header above "Output:": "Process exited with code 1").
Outcome `unknown` (Codex grades nothing); terminated unless the last turn was aborted or ends on a call, or a
call's output, that the model has not answered (and no `task_complete` came after it). Domain `swe`, platform
`windows` when the session's `cwd` has a drive letter, else `linux` (the rollout names no operating system).
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Rejected
from ingest.source import Source, json_lines
from ingest.swe.workdir import platform_of
from ingest.times import parse_time
from ingest.tools import arguments_dict, dumps, shell_script
from ingest.transcript import INJECTED_USER_CONTEXT, Message, Run, ToolCall, records

FORMAT = "codex"
VERSION = "4"
INFO = FormatInfo(
    group="swe", rank=280, domains=('swe',), platform="varies",
    summary="Codex CLI rollouts",
    producer="Codex CLI rollout JSONL (`~/.codex/sessions/...`)",
    versions=("0.135.0, 0.171.0 (run here; 0.171.0 adds `ordinal`s, `world_state` and `token_usage_record` lines); "
              "0.135.0, 0.77.0 (real); the older bare-item layout"),
    proof=("each release from the npm registry (its platform binary inside the package) in its own prefix runs `codex"
           " exec` with a custom model provider in `$CODEX_HOME/config.toml` at the scripted model server's Responses"
           " endpoint, in a temporary HOME and workspace: it lists, reads and writes files and runs a command that "
           "fails; the script is the oracle for every call, its arguments, the result the agent recorded, the model "
           "and the final answer, and `codex exec --json`'s event stream a second "
           "(`tests/ingest/swe/test_codex_cli.py`); a real 0.135.0 `codex exec` rollout in `../shared/samples`, "
           "beside the test a real 0.77.0 `codex exec` run with three shell calls (codemie-code, Apache-2.0) and a "
           "real Apache-2.0 0.77.0 opening, and an MIT-licensed rollout from claude-code-log's tests (goldens), edge "
           "cases in codex-rs's item shapes (`tests/ingest/swe/test_codex.py`)"),
)

KNOWN_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted", "world_state",
                         "token_usage_record"})
_SNIFF = re.compile(rb'^\s*\{"timestamp":"[^"]*",(?:"ordinal":\d+,)?"type":"(?:session_meta|response_item|event_msg|'
                    rb'turn_context)"')
_EXIT_CODE = re.compile(r"^(?:Exit code|Process exited with code):? (-?\d+)\b", re.MULTILINE)
_LEGACY_SNIFF = re.compile(rb'^\s*\{"id":"[0-9a-f-]{36}","timestamp":"')
_ITEM_TYPES = frozenset({"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
                         "custom_tool_call_output", "local_shell_call", "web_search_call"})
_SHELL_ARGV = frozenset({"shell", "container.exec", "local_shell"})
_SHELL_STRING = {"exec_command": "cmd", "shell_command": "command"}


def units(files: list[str], head) -> list[str]:
    """`.jsonl` files that open with a Codex rollout line (`{"timestamp", "type": "session_meta"...`), or a
    `rollout-*.jsonl` whose first line is the older bare session meta."""
    found = []
    for path in files:
        if not path.endswith(".jsonl"):
            continue
        start = head(path)
        if _SNIFF.match(start) or (posixpath.basename(path).startswith("rollout-") and _LEGACY_SNIFF.match(start)):
            found.append(path)
    return found


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    state = _State(name)
    for no, line, obj in json_lines(source.read_bytes(), name, source.budgets):
        if isinstance(obj, Rejected):
            yield obj
            continue
        if isinstance(obj, dict):
            yield from state.add(no, obj)
    yield from records(state.messages, state.run(), name)


class _State:
    """What the lines of one rollout add up to."""

    def __init__(self, name: str):
        self.name = name
        self.messages: list[Message] = []
        self.model: str | None = None
        self.reasoning: list[str] = []
        self.shell_calls: set[str] = set()
        self.codex: dict = {"events": {}}
        self.prompts: list[str] = []
        self.aborted = False
        self.completed = False  # a `task_complete` with nothing written after it

    def add(self, no: int, obj: dict) -> Iterator[Rejected]:
        kind, payload = obj.get("type"), obj.get("payload")
        if "payload" not in obj:  # the older layout: bare items
            kind, payload = ("response_item", obj) if obj.get("type") in _ITEM_TYPES else \
                ("session_meta", obj) if "instructions" in obj or not self.messages and "id" in obj else \
                ("state", obj) if obj.get("record_type") == "state" else (obj.get("type"), obj)
            if kind == "state":
                return
        payload = payload if isinstance(payload, dict) else {}
        stamp = parse_time(obj.get("timestamp") or payload.get("timestamp"))
        if kind == "session_meta":
            meta = {k: v for k, v in payload.items() if k not in ("instructions", "base_instructions")}
            self.codex["session"] = meta
            instructions = payload.get("instructions") or (payload.get("base_instructions") or {})
            text = instructions.get("text") if isinstance(instructions, dict) else instructions
            if isinstance(text, str) and text:
                self.messages.append(Message("system", text=text, where=f"{self.name}:{no}"))
        elif kind == "turn_context":
            self.model = payload.get("model") if isinstance(payload.get("model"), str) else self.model
            self.codex.setdefault("turn_context", payload)
        elif kind == "response_item":
            self.completed = False
            self._item(no, payload, stamp)
        elif kind == "event_msg":
            self._event(payload)
        elif kind == "compacted":
            self.codex.setdefault("compactions", []).append(payload)
        elif kind == "world_state":
            self._world_state(payload)
        elif kind == "token_usage_record":
            self._usage(payload)
        else:
            self.codex.setdefault("unknown_records", []).append(obj)
            yield Rejected("unknown_content", f"{self.name}:{no}: line type {kind!r} is not one Codex is known to "
                           "write; kept raw in env.codex.unknown_records", self.name, line=no,
                           snippet=dumps(obj)[:300])

    def _world_state(self, payload: dict) -> None:
        """The context the CLI builds the model's instructions from (environments and cwd, date, AGENTS.md,
        skills, collaboration mode): the first full state is kept, later updates are counted."""
        if payload.get("full") and "world_state" not in self.codex:
            self.codex["world_state"] = payload.get("state")
        else:
            self.codex["world_state_updates"] = self.codex.get("world_state_updates", 0) + 1

    def _usage(self, payload: dict) -> None:
        """One model response's token usage (`response_id`, `usage`), and the thread's total after it."""
        self.codex.setdefault("usage_per_response", []).append(
            {k: payload.get(k) for k in ("response_id", "turn_id", "usage") if payload.get(k) is not None})
        if isinstance(payload.get("thread_token_usage"), dict):
            self.codex["thread_token_usage"] = payload["thread_token_usage"]

    def _event(self, payload: dict) -> None:
        kind = payload.get("type")
        counts = self.codex["events"]
        counts[str(kind)] = counts.get(str(kind), 0) + 1
        if kind == "user_message" and isinstance(payload.get("message"), str):
            self.prompts.append(payload["message"])
        elif kind == "item_completed" and isinstance(payload.get("item"), dict) \
                and payload["item"].get("type") == "UserMessage":  # 0.15x on: the prompt as a thread item
            texts = [p.get("text") for p in payload["item"].get("content") or []
                     if isinstance(p, dict) and isinstance(p.get("text"), str)]
            if texts:
                self.prompts.append("\n".join(texts))
        elif kind == "token_count" and payload.get("info"):
            self.codex["token_usage"] = payload["info"]
        elif kind == "turn_aborted":
            self.aborted = True
        elif kind == "task_complete":
            self.aborted, self.completed = False, True

    def _item(self, no: int, item: dict, stamp) -> None:
        kind, where = item.get("type"), f"{self.name}:{no}"
        if kind == "message":
            self._message(item, stamp, where)
        elif kind == "reasoning":
            texts = [p.get("text") for key in ("summary", "content") for p in item.get(key) or []
                     if isinstance(p, dict) and isinstance(p.get("text"), str)]
            self.reasoning += texts
        elif kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            self._call(item, stamp, where)
        elif kind == "ghost_snapshot":  # the CLI's git snapshot for /undo: bookkeeping, counted
            counts = self.codex.setdefault("bookkeeping", {})
            counts[kind] = counts.get(kind, 0) + 1
        elif kind in ("compaction", "compaction_summary"):
            self.codex.setdefault("compactions", []).append(item)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            text, exit_code = _output(item.get("output"))
            call_id = item.get("call_id")
            self.messages.append(Message("tool", text=text, tool_call_id=call_id, exit_code=exit_code,
                                         tool_name="bash" if call_id in self.shell_calls else None,
                                         timestamp=stamp, where=where))
        else:
            self.messages.append(Message("assistant", text=None, raw=item, where=where))

    def _message(self, item: dict, stamp, where: str) -> None:
        role = item.get("role")
        parts = [p.get("text") if isinstance(p.get("text"), str) else f"[{p.get('type')}]"
                 for p in item.get("content") or [] if isinstance(p, dict)]
        text = "\n".join(parts)
        if role in ("developer", "system") or (role == "user" and text.lstrip().startswith(INJECTED_USER_CONTEXT)):
            self.messages.append(Message("system", text=text, where=where))
        elif role == "assistant":
            self.messages.append(Message("assistant", text=text, reasoning=self._take_reasoning(),
                                         model=self.model, timestamp=stamp, where=where))
        else:
            self.messages.append(Message(str(role), text=text, timestamp=stamp, where=where))

    def _take_reasoning(self) -> str | None:
        text, self.reasoning = "\n\n".join(self.reasoning) or None, []
        return text

    def _call(self, item: dict, stamp, where: str) -> None:
        call = _tool_call(item)
        if call.action is not None and call.action.kind == "command" and call.id is not None:
            self.shell_calls.add(call.id)
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "assistant" and last.raw is None and not self.reasoning:
            last.tool_calls.append(call)  # the same model response: its text, then its calls
            return
        self.messages.append(Message("assistant", tool_calls=[call], reasoning=self._take_reasoning(),
                                     model=self.model, timestamp=stamp, where=where))

    def run(self) -> Run:
        last = next((m for m in reversed(self.messages) if m.role in ("assistant", "tool")), None)
        # a call, or a call's output the model has not answered yet: the rollout stops mid-turn (cut, or the
        # CLI still running), unless the CLI recorded the turn as complete after it
        waiting = last is not None and (last.role == "tool" or bool(last.tool_calls)) and not self.completed
        task = self.prompts[0] if self.prompts else None
        cwd = (self.codex.get("session") or {}).get("cwd")
        return Run(key="", domain="swe", platform=platform_of(cwd), task=task,
                   terminated=not (self.aborted or waiting), env={"codex": {k: v for k, v in self.codex.items() if v}})


def _tool_call(item: dict) -> ToolCall:
    kind, call_id = item.get("type"), item.get("call_id") or item.get("id")
    if kind == "local_shell_call":
        action = item.get("action") if isinstance(item.get("action"), dict) else {}
        return _shell(ToolCall(call_id, "local_shell", action, raw=item), action.get("command"))
    if kind == "web_search_call":
        action = item.get("action") if isinstance(item.get("action"), dict) else {}
        return ToolCall(call_id, "web_search", action, raw=item)
    name = item.get("name")
    if kind == "custom_tool_call":
        return ToolCall(call_id, name, {"input": item.get("input")}, raw=item)
    args = arguments_dict(item.get("arguments"))
    call = ToolCall(call_id, name, args, raw=item)
    if name in _SHELL_ARGV and isinstance(args, dict):
        return _shell(call, args.get("command"))
    if name in _SHELL_STRING and isinstance(args, dict):
        return _shell(call, args.get(_SHELL_STRING[name]))
    return call


def _shell(call: ToolCall, command) -> ToolCall:
    """A shell call as a `command` action: an argv (`["bash", "-lc", script]` unwrapped) or a script string."""
    script = shell_script(command)
    if script is None:
        return call
    call.action = Action(kind="command", code=script, tool_name=call.name, arguments=dumps(call.arguments or {}),
                         raw=dumps(call.raw))
    return call


def _output(output) -> tuple[str | None, int | None]:
    """(text, exit code) of a call's output: plain text, the `shell` tool's JSON with metadata, or parts."""
    if isinstance(output, list):
        return "\n".join(p.get("text") or f"[{p.get('type')}]" for p in output if isinstance(p, dict)), None
    if isinstance(output, dict):
        output = output.get("content") if isinstance(output.get("content"), str) else dumps(output)
    if not isinstance(output, str):
        return None, None
    if output.startswith("{") and '"metadata"' in output:
        try:
            value = orjson.loads(output)
        except orjson.JSONDecodeError:
            return output, None
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            meta = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
            code = meta.get("exit_code")
            return value["output"], code if isinstance(code, int) and not isinstance(code, bool) else None
    # the first line, or the header `exec_command` writes above "Output:" (chunk id, wall time, exit code...)
    head = output.split("\nOutput:", 1)[0] if "\nOutput:" in output else output.split("\n", 1)[0]
    m = _EXIT_CODE.search(head)
    return output, int(m.group(1)) if m else None
