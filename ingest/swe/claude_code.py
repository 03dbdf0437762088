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
  them).
- `summary` (`summary`, `leafUuid`: a title of a conversation), `system` (`subtype`, `content`, `level`:
  compaction boundaries, API errors, hook output): kept in `env["claude_code"]["summaries"]` / `["system"]`.
- `file-history-snapshot`, `queue-operation`, `last-prompt`, `custom-title`, `progress`: the CLI's own
  bookkeeping (file backups, the input queue); counted in `env["claude_code"]["bookkeeping"]`.
- any other `type` is kept raw in `env["claude_code"]["unknown_records"]` with an `unknown_content` warning.

Episodes: the main line (lines with `isSidechain` false) is one episode (key ""); each subagent (`isSidechain`
true, grouped by `agentId`, else by the root of its `parentUuid` chain) is an episode of its own (key
`sidechain:<agent id>`), its prompt the task, `env["sidechain"]` naming the session; the main episode lists
them in `env["sidechains"]`. A subagent file holds one subagent. Rewound branches (`parentUuid` forks) are read
in file order.

Steps follow `ingest.transcript`: `Bash` called with a `command` is a `command` action, every other tool
(`Read`, `Edit`, `Task`, MCP tools `mcp__server__tool`...) a `tool_call`; a turn's text beside its tool calls and
its `thinking` are the step's reasoning. The task is the first prompt that is neither injected (`isMeta`) nor a
tool result. Claude Code records no grade: outcome `unknown`; terminated when the last turn of the line ends
without a tool call waiting. Domain `swe`, platform `linux` (the log does not say; `cwd` is in env).

A line that is not JSON is a `parse_error` row naming the line; the rest of the file is read.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Budgets, Source, SourceError, parse_json, text_lines
from ingest.times import parse_time
from ingest.tools import SHELL_TOOLS, dumps, tool_action
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "claude_code"
VERSION = "1"
INFO = FormatInfo(
    group="swe", rank=270, domains=('swe',), platform="linux",
    summary="Claude Code session JSONL (subagents as episodes of their own)",
    producer="Claude Code session JSONL (`~/.claude/projects/...`)",
    versions="2.0.46, 2.1.152 (real sessions)",
    proof=("cannot run here (vendor service): a real MIT-licensed 2.0.46 excerpt with a subagent (golden), a real "
           "2.1.152 session in `../shared/samples` (golden), and the bundled Harbor trial's session against Harbor's "
           "own ATIF conversion of it (`tests/ingest/swe/test_claude_code.py`)"),
)

BOOKKEEPING = frozenset({"file-history-snapshot", "queue-operation", "last-prompt", "custom-title", "progress",
                         "agent-name", "tag"})
_SNIFF = re.compile(rb'"(?:parentUuid|leafUuid)"\s*:|"type"\s*:\s*"(?:file-history-snapshot|queue-operation)"')
_SESSION = re.compile(rb'"sessionId"\s*:|"type"\s*:\s*"summary"|"messageId"\s*:')


def units(files: list[str], head) -> list[str]:
    """JSONL files whose first lines are Claude Code transcript records (`parentUuid` with `sessionId`, a
    `summary` with `leafUuid`, or the CLI's snapshot / queue records)."""
    found = []
    for path in files:
        if path.endswith(".jsonl"):
            start = head(path)
            if start.lstrip()[:1] == b"{" and _SNIFF.search(start) and _SESSION.search(start):
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
    yield from transcript_records(source.read_bytes(), posixpath.basename(source.path), source.budgets)


def transcript_records(data: bytes, name: str, budgets: Budgets) -> Iterator[Episode | Rejected]:
    """What `read` yields for the bytes of one transcript (also used for the sessions inside a Harbor trial)."""
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
        if side:
            main_env["sidechains"] = [c.key for c in side]
        yield from _episode(main, main_env, f"{name}: main line")
    elif not side:
        yield Rejected("empty_episode", f"{name}: a Claude Code transcript with no user or assistant message "
                       f"({', '.join(f'{k} x{v}' for k, v in extras.get('bookkeeping', {}).items()) or 'nothing'})",
                       name)
    for chain in side:
        side_env = {**env, "sidechain": {"of": session, "agent_id": chain.agent_id}}
        yield from _episode(chain, side_env, f"{name}: {chain.key}")


def _split(data: bytes, name: str, budgets: Budgets):
    """(main chain, subagent chains, extras for env, rejections) of a transcript's lines."""
    main, side, group_of = _Chain(""), {}, {}  # group_of: uuid -> the subagent group it belongs to
    extras = {"summaries": [], "system": [], "bookkeeping": {}, "unknown_records": []}
    problems, last_group = [], None
    for no, line, problem in text_lines(data, name, budgets):
        if problem or not line or not line.strip():
            if problem:
                problems.append(Rejected("parse_error", problem, name, line=no))
            continue
        try:
            obj = parse_json(line.encode(), f"{name}:{no}")
        except SourceError as e:
            problems.append(Rejected(e.rule, e.reason, name, line=no, snippet=line[:300]))
            continue
        kind = obj.get("type") if isinstance(obj, dict) else None
        if kind in ("user", "assistant") and obj.get("isSidechain"):
            last_group = _group(obj, side, group_of, last_group)
            side[last_group].lines.append(_Line(no, obj))
        elif kind in ("user", "assistant"):
            main.lines.append(_Line(no, obj))
        elif kind == "summary":
            extras["summaries"].append({k: obj.get(k) for k in ("summary", "leafUuid")})
        elif kind == "system":
            extras["system"].append(obj)
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
    yield from records(messages, Run(key=chain.key, domain="swe", platform="linux", task=task,
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
                call_id = block.get("tool_use_id")
                out.append(Message("tool", text=_block_text(block.get("content")), tool_call_id=call_id,
                                   tool_name="bash" if call_id in shell_calls else None,
                                   is_error=bool(block.get("is_error")) or None, timestamp=stamp, where=at))
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
