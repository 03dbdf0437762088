"""Claude Code session transcripts: `~/.claude/projects/<project>/<session-id>.jsonl` (and, since 2.1, a
session's subagents in `<session-id>/subagents/agent-<id>.jsonl`). An adapter onto `ingest.transcript`.

One JSON object per line; `type` says what it is:
- `user` / `assistant`: a chat message in `message` (`role`, `content`: a string or content blocks), with
  `uuid`, `parentUuid`, `isSidechain`, `sessionId`, `timestamp` (ISO-8601, UTC), `cwd`, `version`, `gitBranch`.
  An assistant API message is streamed as several lines sharing `message.id`, one content block each (`text`,
  `thinking`, `tool_use` `{id, name, input}`); they are joined back into one turn, its `message.model` the turn's
  model. Server-side tools (`server_tool_use`, e.g. web search) have their result inside the same message
  (`web_search_tool_result`): it becomes the call's result, and what follows it a new turn. A `user` line holds
  either the prompt (a string or `text` blocks; `isMeta` marks lines the CLI injected: command output, caveats)
  or `tool_result` blocks `{tool_use_id, content, is_error}` (the structured form in `toolUseResult` duplicates
  them; a failed `Bash` result opens with its exit code, "Exit code 1").
- `summary` (`summary`, `leafUuid`: a title of a conversation), `system` (`subtype`, `content`, `level`:
  compaction boundaries, API errors, hook output): kept in `env["claude_code"]["summaries"]` / `["system"]`.
- `file-history-snapshot`, `queue-operation`, `last-prompt`, `custom-title`, `progress`, `agent-name`, `tag`, and
  since 2.1.3xx `api-request` / `api-request-shape` / `api-request-blob` (the CLI's record of each API request,
  by hashes of what it repeats), `atis-latch`, `tools-used`: the CLI's own bookkeeping (file backups, the input
  queue, request replay); counted in `env["claude_code"]["bookkeeping"]`.
- `attachment` (`attachment.type`, and `rendered`: what the model was given): context the CLI attached to the
  conversation (environment, date, model identity, skill and agent listings, token reminders, prompt
  snapshots); counted by type in `env["claude_code"]["attachments"]`. A `queued_command` attachment with
  `commandMode` "prompt" is what the person typed while the agent worked: a user message where it stands.
- `cost-state` (since 2.1.3xx: `totalCostUSD`, `modelUsage` per model with tokens and cost, durations, lines
  added and removed): the session's cost, the last one kept in `env["claude_code"]["cost"]`.
- any other `type` is kept raw in `env["claude_code"]["unknown_records"]` with an `unknown_content` warning.

Episodes: the main line (lines with `isSidechain` false) is one episode (key ""); each subagent (`isSidechain`
true, grouped by `agentId`, else by the root of its `parentUuid` chain) is an episode of its own (key
`sidechain:<agent id>`), its prompt the task, `env["sidechain"]` naming the session; the main episode lists
them in `env["sidechains"]` (with, since 2.1, the subagents whose transcripts are files of their own: the
`agentId` of the structured result of the call that started each). A subagent file holds one subagent; a
`subagents` folder is read as one unit, each `agent-<id>.jsonl` with its `agent-<id>.meta.json` (`agentType`,
`description`, `toolUseId`) in `env["sidechain"]`. Rewound branches (`parentUuid` forks) are read in file order.

Steps follow `ingest.transcript`: `Bash` called with a `command` is a `command` action, every other tool
(`Read`, `Edit`, `Task`, MCP tools `mcp__server__tool`...) a `tool_call`; a turn's text beside its tool calls and
its `thinking` are the step's reasoning. The task is the first prompt that is neither injected (`isMeta`) nor a
tool result. Claude Code records no grade: outcome `unknown`; terminated when the last turn of the line ends
without a tool call waiting. Domain `swe`, platform `windows` when the `cwd` has a drive letter, else `linux` (the
log names no operating system; `cwd` is in env).

A line that is not JSON is a `parse_error` row naming the line; the rest of the file is read.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Budgets, Source, SourceError, json_lines, parse_json
from ingest.swe.workdir import platform_of
from ingest.times import parse_time
from ingest.tools import SHELL_TOOLS, dumps, tool_action
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "claude_code"
VERSION = "4"
INFO = FormatInfo(
    group="swe", rank=270, domains=('swe',), platform="varies",
    summary="Claude Code session JSONL (subagents as episodes of their own)",
    producer="Claude Code session JSONL (`~/.claude/projects/...`, subagents in `<session>/subagents/`)",
    versions="2.1.220, 2.1.332 (run here); 2.0.46, 2.1.152 (real sessions)",
    proof=("each release from the npm registry in its own prefix runs `claude -p` against the scripted model server "
           "(`tests/scripted_model_server.py`, a loopback stand-in that speaks Anthropic Messages) in a temporary "
           "HOME and workspace: it lists, reads and writes files, runs a command that fails and starts a subagent, "
           "and the script is the oracle for every call, its arguments, the result the agent recorded, the model and "
           "the final answer; the CLI's own JSON report is a second (`tests/ingest/swe/test_claude_code_cli.py`); a "
           "real MIT-licensed 2.0.46 excerpt with a subagent (golden), a real 2.1.152 session in `../shared/samples` "
           "(golden), and the bundled Harbor trial's session against Harbor's own ATIF conversion of it "
           "(`tests/ingest/swe/test_claude_code.py`)"),
)

BOOKKEEPING = frozenset({"file-history-snapshot", "queue-operation", "last-prompt", "custom-title", "progress",
                         "agent-name", "tag", "api-request", "api-request-shape", "api-request-blob", "atis-latch",
                         "tools-used"})
_SNIFF = re.compile(rb'"(?:parentUuid|leafUuid)"\s*:|"type"\s*:\s*"(?:file-history-snapshot|queue-operation)"')
_EXIT_CODE = re.compile(r"(?:Error: )?Exit code (-?\d+)\b")
_SESSION = re.compile(rb'"sessionId"\s*:|"type"\s*:\s*"summary"|"messageId"\s*:')


def units(files: list[str], head) -> list[str]:
    """JSONL files whose first lines are Claude Code transcript records (`parentUuid` with `sessionId`, a
    `summary` with `leafUuid`, or the CLI's snapshot / queue records). A session's `subagents` folder (2.1+:
    `agent-<id>.jsonl` transcripts, each with the `agent-<id>.meta.json` the CLI writes beside it) is one unit."""
    found, folders = [], set()
    for path in files:
        if path.endswith(".jsonl"):
            start = head(path)
            if start.lstrip()[:1] == b"{" and _SNIFF.search(start) and _SESSION.search(start):
                folder, name = posixpath.split(path)
                if posixpath.basename(folder) == "subagents" and name.startswith("agent-"):
                    if folder not in folders:
                        folders.add(folder)
                        found.append(folder)
                else:
                    found.append(path)
    return found


@dataclass
class _Line:
    no: int
    obj: dict


@dataclass
class _Chain:
    """The lines of one episode: the main line, or one subagent."""

    key: str
    agent_id: str | None = None
    lines: list[_Line] = field(default_factory=list)


def read(source: Source) -> Iterator[Episode | Rejected]:
    if not source.is_dir():
        yield from transcript_records(source.read_bytes(), posixpath.basename(source.path), source.budgets)
        return
    names = source.listdir()
    for name in names:
        if name.startswith("agent-") and name.endswith(".jsonl"):
            meta_name = name.removesuffix(".jsonl") + ".meta.json"
            meta = _subagent_meta(source, meta_name) if meta_name in names else {}
            yield from transcript_records(source.read_bytes(name), name, source.budgets, meta)
        elif not (name.startswith("agent-") and name.endswith(".meta.json")):
            yield Rejected("unknown_content", f"subagents/{name}: not a subagent transcript or its metadata; "
                           "left unread", name)


def _subagent_meta(source: Source, name: str) -> dict:
    """A subagent's `agent-<id>.meta.json` (`agentType`, `description`, `toolUseId`: the main line's call
    that started it, `spawnDepth`); {} when it is not a JSON object."""
    try:
        meta = parse_json(source.read_bytes(name), name)
    except SourceError:
        return {}
    return meta if isinstance(meta, dict) else {}


def transcript_records(data: bytes, name: str, budgets: Budgets, meta: dict | None = None
                       ) -> Iterator[Episode | Rejected]:
    """What `read` yields for the bytes of one transcript (also used for the sessions inside a Harbor trial);
    `meta`: a subagent transcript's metadata file, kept in its episode's `env["sidechain"]`."""
    main, side, extras, problems = _split(data, name, budgets)
    yield from problems
    session = next((ln.obj.get("sessionId") for ln in main.lines + [x for c in side for x in c.lines]
                    if isinstance(ln.obj.get("sessionId"), str)), None)
    env = {"claude_code": {k: v for k, v in extras.items() if v}}
    first = next((ln.obj for c in [main, *side] for ln in c.lines), {})
    env["claude_code"].update({k: first.get(k) for k in ("sessionId", "version", "cwd", "gitBranch")
                               if first.get(k) not in (None, "")})
    if main.lines:
        main_env = dict(env)
        linked = [c.key for c in side] + [f"sidechain:{a}" for a in _started_subagents(main.lines)]
        if linked:
            main_env["sidechains"] = list(dict.fromkeys(linked))
        yield from _episode(main, main_env, f"{name}: main line")
    elif not side:
        yield Rejected("empty_episode", f"{name}: a Claude Code transcript with no user or assistant message "
                       f"({', '.join(f'{k} x{v}' for k, v in extras.get('bookkeeping', {}).items()) or 'nothing'})",
                       name)
    for chain in side:
        side_env = {**env, "sidechain": {"of": session, "agent_id": chain.agent_id, **(meta or {})}}
        yield from _episode(chain, side_env, f"{name}: {chain.key}")


def _started_subagents(lines: list[_Line]) -> list[str]:
    """The ids of the subagents the main line started whose transcripts are files of their own (2.1+): the
    `agentId` of an `Agent` / `Task` call's structured result."""
    found = []
    for ln in lines:
        result = ln.obj.get("toolUseResult")
        if isinstance(result, dict) and isinstance(result.get("agentId"), str):
            found.append(result["agentId"])
    return found


def _split(data: bytes, name: str, budgets: Budgets):
    """(main chain, subagent chains, extras for env, rejections) of a transcript's lines."""
    main, side, group_of = _Chain(""), {}, {}  # group_of: uuid -> the subagent group it belongs to
    extras = {"summaries": [], "system": [], "bookkeeping": {}, "attachments": {}, "unknown_records": []}
    problems, last_group = [], None
    for no, line, obj in json_lines(data, name, budgets):
        if isinstance(obj, Rejected):
            problems.append(obj)
            continue
        kind = obj.get("type") if isinstance(obj, dict) else None
        if kind == "attachment":
            obj, kind = _attachment(obj, extras["attachments"])
        if kind in ("user", "assistant") and obj.get("isSidechain"):
            last_group = _group(obj, side, group_of, last_group)
            side[last_group].lines.append(_Line(no, obj))
        elif kind in ("user", "assistant"):
            main.lines.append(_Line(no, obj))
        elif kind == "summary":
            extras["summaries"].append({k: obj.get(k) for k in ("summary", "leafUuid")})
        elif kind == "system":
            extras["system"].append(obj)
        elif kind == "cost-state":
            extras["cost"] = {k: v for k, v in obj.items() if k not in ("type", "sessionId")}
        elif kind == "attachment":
            continue  # counted by its type
        elif kind in BOOKKEEPING:
            extras["bookkeeping"][kind] = extras["bookkeeping"].get(kind, 0) + 1
        else:
            extras["unknown_records"].append(obj)
            problems.append(Rejected("unknown_content", f"{name}:{no}: record type {kind!r} is not one Claude "
                                     "Code is known to write; kept raw in env.claude_code.unknown_records", name,
                                     line=no, snippet=line[:300]))
    for chain in side.values():
        chain.key = f"sidechain:{chain.agent_id or chain.key}"
    return main, list(side.values()), extras, problems


def _attachment(obj: dict, counts: dict) -> tuple[dict, str]:
    """(line, type) of an `attachment` line: a prompt the person queued while the agent worked becomes a user
    line; any other attachment is counted by its type."""
    attached = obj.get("attachment") if isinstance(obj.get("attachment"), dict) else {}
    kind = str(attached.get("type"))
    if kind == "queued_command" and isinstance(attached.get("prompt"), str) \
            and attached.get("commandMode", "prompt") == "prompt":
        return {**obj, "type": "user", "message": {"role": "user", "content": attached["prompt"]}}, "user"
    counts[kind] = counts.get(kind, 0) + 1
    return obj, "attachment"


def _group(obj: dict, side: dict, group_of: dict, last_group):
    """The subagent group of a sidechain line: its parent's group; a new one for a root (`parentUuid` null);
    the previous sidechain line's for a parent not in the file (a cut transcript). The group takes the
    `agentId` the first of its lines that has one names."""
    parent, agent = obj.get("parentUuid"), obj.get("agentId") if isinstance(obj.get("agentId"), str) else None
    if parent in group_of:
        group = group_of[parent]
    elif parent is None or last_group is None:
        group = str(obj.get("uuid") or len(side))
        side[group] = _Chain(group)
    else:
        group = last_group
    if agent and side[group].agent_id is None:
        side[group].agent_id = agent
    if obj.get("uuid") is not None:
        group_of[obj["uuid"]] = group
    return group


def _episode(chain: _Chain, env: dict, where: str) -> Iterator[Episode | Rejected]:
    messages, task = _messages(chain.lines, where)
    last = next((m for m in reversed(messages) if m.role in ("assistant", "tool")), None)
    terminated = last is not None and last.role == "assistant" and not last.tool_calls
    yield from records(messages, Run(key=chain.key, domain="swe",
                                     platform=platform_of(env.get("claude_code", {}).get("cwd")), task=task,
                                     terminated=terminated, env=env), where)


def _messages(lines: list[_Line], where: str) -> tuple[list[Message], str | None]:
    """Chat messages of a chain (streamed assistant lines joined per API message, user lines split into their
    prompt and tool results), and the first prompt a person typed (not injected, not a result): the task."""
    out: list[Message] = []
    current_id, task = None, None
    shell_calls: set = set()  # ids of calls to a shell tool: their results are terminal output
    for ln in lines:
        obj, msg = ln.obj, ln.obj.get("message") if isinstance(ln.obj.get("message"), dict) else {}
        at = f"{where} (line {ln.no})"
        stamp = parse_time(obj.get("timestamp"))
        if obj.get("type") == "assistant":
            mid = msg.get("id")
            if mid is None or mid != current_id or not out or out[-1].role != "assistant":
                out.append(Message("assistant", model=msg.get("model") if isinstance(msg.get("model"), str) else None,
                                   timestamp=stamp, where=at))
            current_id = mid
            first = len(out) - 1  # the turn this line adds to, and any it opens after a server tool's result
            _add_assistant_content(out, msg.get("content"))
            shell_calls.update(c.id for m in out[first:] for c in m.tool_calls
                               if c.action and c.action.kind == "command")
            continue
        current_id = None
        content = msg.get("content")
        texts = [content] if isinstance(content, str) else []
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call_id, text = block.get("tool_use_id"), _block_text(block.get("content"))
                shell = call_id in shell_calls
                out.append(Message("tool", text=text, tool_call_id=call_id, tool_name="bash" if shell else None,
                                   is_error=bool(block.get("is_error")) or None, timestamp=stamp, where=at,
                                   exit_code=_exit_code(text) if shell and block.get("is_error") else None))
            else:
                texts.append(_block_text([block]))
        if any(texts):
            text = "\n".join(t for t in texts if t)
            out.append(Message("user", text=text, timestamp=stamp, where=at))
            task = task if task is not None or obj.get("isMeta") else text
    return out, task


def _add_assistant_content(out: list[Message], content) -> None:
    """Adds a line's blocks to the current assistant turn (`out[-1]`). The results of server-side tools
    (`web_search_tool_result`...) sit inside the assistant message right after their `server_tool_use` call:
    each becomes a tool result, and what follows it a new turn of the same model."""
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    for block in blocks if isinstance(blocks, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if isinstance(kind, str) and kind.endswith("_tool_result") and block.get("tool_use_id"):
            turn = out[-1]
            out.append(Message("tool", text=_block_text(block.get("content")), tool_call_id=block["tool_use_id"],
                               timestamp=turn.timestamp, where=turn.where))
            out.append(Message("assistant", model=turn.model, timestamp=turn.timestamp, where=turn.where))
            continue
        turn = out[-1]
        if kind == "text" and isinstance(block.get("text"), str):
            turn.text = f"{turn.text}\n\n{block['text']}" if turn.text else block["text"]
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            turn.reasoning = f"{turn.reasoning}\n\n{block['thinking']}" if turn.reasoning else block["thinking"]
        elif kind in ("tool_use", "server_tool_use"):
            turn.tool_calls.append(_tool_call(block))
        else:  # redacted_thinking and unknown blocks: kept with the turn (a message action's raw)
            turn.raw = (turn.raw or []) + [block]
    if out and out[-1].role == "assistant" and not (out[-1].text or out[-1].reasoning or out[-1].tool_calls
                                                    or out[-1].raw) and len(out) > 1 and out[-2].role == "tool":
        out.pop()  # a turn opened after a server result that got no content on this line: the next line reopens it


def _tool_call(block: dict) -> ToolCall:
    """A `tool_use` block; Claude Code's `Bash` is the shell tool `ingest.tools` knows as `bash`."""
    name, call = block.get("name"), ToolCall(block.get("id"), block.get("name"), block.get("input"), raw=block)
    if isinstance(name, str) and name.lower() in SHELL_TOOLS:
        call.action = tool_action(name.lower(), block.get("input"), dumps(block))
        call.action.tool_name = name  # the tool's own spelling
    return call


def _exit_code(text: str | None) -> int | None:
    """The exit code a failed `Bash` result opens with ("Exit code 1\n..."); a success records none."""
    m = _EXIT_CODE.match(text or "")
    return int(m.group(1)) if m else None


def _block_text(content) -> str | None:
    """The text of a tool result or prompt: a string, or the text of its blocks (images as `[image]`)."""
    if content is None or isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(block.get("text") or "")
        elif isinstance(block, dict):
            parts.append(f"[{block.get('type')}]")
        else:
            parts.append(dumps(block))
    return "\n".join(parts)
