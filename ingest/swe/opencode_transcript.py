"""OpenCode session transcripts: the markdown the TUI's `/export` (and its "copy transcript") writes,
`session-<id>.md`, from `formatTranscript` (`packages/opencode/src/cli/cmd/tui/util/transcript.ts`). An adapter
onto `ingest.transcript`; one file is one episode.

The writer's layout: `# <title>`, `**Session ID:** ses_...`, `**Created:**` and `**Updated:**` (the exporter's
local time, no zone: kept as written), `---`; then each message and a `---` line after it. A message is `## User`
or `## Assistant (<Agent> · <model name> · <seconds>s)` (`## Assistant` alone when the metadata was left out),
then its parts, each followed by a blank line: text as written; `_Thinking:_` and the reasoning (when thinking
was exported); `**Tool: <name>**` with `**Input:**` (the call's input, JSON in a `json` fence), then
`**Output:**` (a completed call's output) or `**Error:**` (a failed call's error), each in a fence; `**File:**
<name>` (an attached file) is user text here. 1.1.65 and 1.18.33 write no file part, no synthetic text and no part
of another type at all. The writer of early 2026 (before 1.1.65) put each call in a fence of its own: a line of
three backticks, `Tool: <name>`, then the same `**Input:**`, `**Output:**` or `**Error:**` fences without the blank
line between them, and a closing fence line: read the same way.

Each call is an action, its output or error the observation (a call with neither has no result: it was unfinished,
or its output was empty, which the writer leaves out; results pair with the call they are written under);
the calls that follow one another are one model turn, the text and reasoning before them that turn's. The model
is the header's name (the model id up to 1.1, the provider config's display name, else the id, later); the agent
name and each reply's duration are kept in `env["opencode_transcript"]["turns"]`, the title, session id and times
there too. OpenCode grades nothing:
outcome `unknown`; terminated when the last message is the model's and calls nothing.

What the markdown cannot say: where reasoning ends and the text after it begins (the writer ends both parts with one
blank line and marks only the reasoning's start: that text is read as part of the reasoning, never lost, and
`env["opencode_transcript"]["reasoning_may_hold_text"]` is set when any reasoning was exported; a transcript
exported without thinking has no such parts, its text is the reply); a text part holding a line `**Tool: x**` or a
`---` line then `## User` reads as the writer's own; text after a call that holds a fence line followed by a blank
line is read into the call's output (an output ends at the last such line before the next tool or reasoning part,
or the message's end). The JSON `opencode export` of a session holds it all, and the `opencode` reader reads that.
"""

from __future__ import annotations

import json
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "opencode_transcript"
VERSION = "1"
INFO = FormatInfo(
    group="swe", rank=305, domains=('swe',), platform="linux",
    summary="OpenCode session transcripts (the TUI's `/export` markdown, `session-ses_*.md`)",
    producer="OpenCode's `/export` (`formatTranscript`)",
    versions=("1.1.65, 1.18.33 (the writer run at test time); the early writer's fenced calls (a real transcript of "
              "January 2026), 1.x (real transcripts of April to July 2026)"),
    proof=("no command, flag or server route writes the markdown at 1.1.65 or 1.18.33 (`opencode export` writes "
           "JSON alone; the TUI's `/export` and `/copy` alone call the writer): the writer, cut unchanged from each "
           "release's binary and run under node on the `opencode export` JSON of a scripted `opencode run`, "
           "writes a transcript that reads as the script (every call, input and result in order, the answer) and "
           "step by step as the JSON's episode, and shows no mark between a reasoning part and the reply after it "
           "(`tests/ingest/swe/test_opencode_transcript.py`); "
           "the opening of a real MIT transcript (shynlee04/hivemind-plugin: 25 messages, 3 prompts, 18 calls with "
           "their inputs, 15 outputs and 3 errors, reasoning exported) is a golden read against the raw file "
           "(`tests/ingest/swe/test_opencode_transcript.py`; the whole file, 90 calls, reads as one episode of 105 "
           "steps); real transcripts of three more public repositories without a license are read where they lie "
           "in ../shared/samples against goldens: the early writer's fenced calls (KartikBazzad/bunbase: 99 calls, "
           "94 results, 5 calls whose empty output was not written), an orchestrator's subagent call "
           "(glats/nixos-hosts), an export without metadata or details (CarbonatiX/carbonatix-be: 81 calls by name) "
           "(`tests/ingest/swe/test_opencode_transcript.py`); the writer's forms (no metadata, unfinished calls, "
           "fences inside outputs, text after a call, the early fenced calls) are hand-made edge cases"),
)

_HEAD = re.compile(r"\A# (?P<title>[^\n]*)\n\n\*\*Session ID:\*\* (?P<id>ses_\w+)\n\*\*Created:\*\* (?P<created>[^\n]*)"
                   r"\n\*\*Updated:\*\* (?P<updated>[^\n]*)\n\n---\n\n")
_CLAIM = re.compile(rb"\A# [^\n]*\n\n\*\*Session ID:\*\* ses_\w+\n\*\*Created:\*\* ")
_MESSAGE = re.compile(r"(?m)^## (?:User|Assistant(?: \([^\n]*\))?)\n\n")
_ASSISTANT = re.compile(r"## Assistant(?: \((?P<agent>.*?) · (?P<model>.*?)(?: · (?P<seconds>[\d.]+)s)?\))?\n\n")
_PART = re.compile(r"(?m)^(?:_Thinking:_\n\n|\*\*Tool: [^\n]+\*\*\n|```\nTool: [^\n]+\n)")
_TOOL = re.compile(r"\*\*Tool: (?P<name>[^\n]+)\*\*\n|```\nTool: (?P<fenced>[^\n]+)\n")
_FENCE_END = "\n```\n\n"
_FENCED_END = "\n```\n```\n\n"  # the early writer's: a result's fence, then the call's own


def units(files: list[str], head) -> list[str]:
    """Markdown files that open as the transcript writer's header: a title, then `**Session ID:** ses_...` and
    `**Created:**`."""
    return [p for p in files if p.endswith(".md") and _CLAIM.match(head(p).lstrip(b"\xef\xbb\xbf"))]


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = source.uri
    text = source.read_bytes().decode("utf-8", "replace").lstrip("\ufeff").replace("\r\n", "\n")
    head = _HEAD.match(text)
    if head is None:
        yield Rejected("parse_error", f"{name}: the header is not OpenCode's (title, Session ID, Created, Updated, "
                       "then a `---` line)", name)
        return
    env = {k: head[k] for k in ("title", "id", "created", "updated")} | {"turns": []}
    messages: list[Message] = []
    problems: list[Rejected] = []
    for no, body in enumerate(_sections(text[head.end():]), 1):
        where = f"{name}: message {no}"
        if body.startswith("## User\n\n"):
            user = _strip_end(body[len("## User\n\n"):])
            if user:
                messages.append(Message("user", text=user, where=where))
            continue
        header = _ASSISTANT.match(body)
        if header is None:
            problems.append(Rejected("unknown_content", f"{where}: not a `## User` or `## Assistant` message; kept "
                                     "raw in env.opencode_transcript.unread", name, record_id=str(no)))
            env.setdefault("unread", []).append(body)
            continue
        env["turns"].append({"message": no, "agent": header["agent"], "model": header["model"],
                             "seconds": float(header["seconds"]) if header["seconds"] else None})
        messages.extend(_assistant(body[header.end():], header["model"], where, problems))
    yield from problems
    if any(m.reasoning for m in messages):  # thinking was exported: a reply's text may sit inside a reasoning
        env["reasoning_may_hold_text"] = True
    last = next((m for m in reversed(messages) if m.role in ("assistant", "tool")), None)
    answered = (last is not None and last.role == "assistant" and not last.tool_calls
                and bool(last.text or last.reasoning))
    yield from records(messages, Run(key=env["id"], domain="swe", platform="linux", terminated=answered,
                                     env={"opencode_transcript": env}), name)


def _sections(rest: str) -> list[str]:
    """Each message's text: the writer ends every message with a `---` line, and each opens on its header."""
    starts = [m.start() for m in _MESSAGE.finditer(rest) if m.start() == 0 or rest.endswith("---\n\n", 0, m.start())]
    return [rest[a:b].removesuffix("---\n\n") for a, b in zip(starts, starts[1:] + [len(rest)])]


def _strip_end(text: str) -> str:
    return text[:-2] if text.endswith("\n\n") else text.rstrip("\n")


def _assistant(body: str, model: str | None, where: str, problems: list) -> list[Message]:
    """The model turns of one assistant message: text and reasoning, then the calls that follow them (and their
    results); text after a call opens the next turn."""
    out: list[Message] = []
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[tuple[ToolCall, Message | None]] = []

    def flush():
        if texts or thoughts or calls:
            out.append(Message("assistant", text="\n\n".join(texts) or None, reasoning="\n\n".join(thoughts) or None,
                               model=model, tool_calls=[c for c, _ in calls], where=where))
            out.extend(r for _, r in calls if r is not None)
        texts.clear(), thoughts.clear(), calls.clear()

    pos = 0
    while pos < len(body):
        tool = _TOOL.match(body, pos)
        if tool:
            call, result, pos = _tool(body, tool, f"{where} call {_calls(out) + len(calls) + 1}", problems)
            calls.append((call, result))
            continue
        thinking = body.startswith("_Thinking:_\n\n", pos)
        start = pos + len("_Thinking:_\n\n") if thinking else pos
        nxt = _next_part(body, start)
        if calls:
            flush()
        (thoughts if thinking else texts).append(_strip_end(body[start:nxt]))
        pos = nxt
    flush()
    return out


def _calls(turns: list[Message]) -> int:
    return sum(len(m.tool_calls) for m in turns)


def _next_part(body: str, start: int) -> int:
    for m in _PART.finditer(body, start):
        if m.start() > start and body.endswith("\n\n", 0, m.start()):
            return m.start()
    return len(body)


def _tool(body: str, tool: re.Match, where: str, problems: list) -> tuple[ToolCall, Message | None, int]:
    """(the call, its result or None, where the next part starts) of a `**Tool: name**` part, or of the early
    writer's fenced one. The transcript holds no call ids: a result answers the call it is written under (`where`
    names the call, and pairs them)."""
    name, fenced = tool["name"] or tool["fenced"], tool["fenced"] is not None
    pos, arguments, result = tool.end(), None, None
    closed = "\n```" if fenced else "\n```\n"  # the early writer put the next label right under the fence
    if body.startswith("\n**Input:**\n```json\n", pos):
        at = pos + len("\n**Input:**\n```json\n")
        try:
            arguments, end = json.JSONDecoder().raw_decode(body, at)
            pos = end + len(closed) if body.startswith(closed, end) else end
        except (ValueError, RecursionError):  # not JSON, or nested past the interpreter's depth: kept as text
            close = body.find(closed, at)
            arguments = body[at:close if close >= 0 else len(body)]
            pos = close + len(closed) if close >= 0 else len(body)
            problems.append(Rejected("bad_record", f"{where}: call {name}: its input is not JSON; kept as "
                                     "written", where))
    terminator = _FENCED_END if fenced else _FENCE_END
    for label, is_error in (("\n**Output:**\n```\n", None), ("\n**Error:**\n```\n", True)):
        if body.startswith(label, pos):
            at = pos + len(label)
            end = _output_end(body, at, terminator)
            result = Message("tool", text=body[at:end], tool_name=name, is_error=is_error, tool_call_id=where,
                             where=where)
            pos = min(end + len(terminator), len(body))
            break
    else:
        if fenced:  # the call's own fence closes under its name or input
            pos = pos + len("\n```\n\n") if body.startswith("\n```\n\n", pos) else pos
        else:
            pos = pos + 1 if body.startswith("\n", pos) else pos
    # the call's place names it: a call left without a result (an empty output is not written) must not take the
    # next call's result, as pairing by order would
    return ToolCall(where, name, arguments, raw={"name": name, "arguments": arguments}), result, pos


def _output_end(body: str, at: int, terminator: str) -> int:
    """Where an output's fence closes: the last closing fence before the next tool or reasoning part (an output
    may hold fences of its own; text after the call may follow its fence)."""
    boundary = _next_part(body, at)
    end = body.rfind(terminator, at - 1, min(boundary + 1, len(body)))
    return end if end >= 0 else len(body[:boundary].rstrip("\n`"))
