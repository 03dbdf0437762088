"""Aider chat histories: `.aider.chat.history.md` (or the file `--chat-history-file` names), the Markdown log
aider's `InputOutput` appends to (`aider/io.py`: `append_chat_history`). An adapter onto `ingest.transcript`; each
chat session in the file (`# aider chat started at <local time>`) is one episode.

What aider writes, entry by entry:
- `#### <line>`: what the person typed (`user_input`; a prompt of several lines is one `####` line each, and
  `/commands` are logged the same way);
- plain text: the model's reply (`ai_output`), with its edits: for the SEARCH/REPLACE edit formats (`diff`,
  `diff-fenced`), a file name, then `<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE` blocks (an empty SEARCH
  creates the file);
- `> <text>  `: aider's own output (`tool_output`, `tool_error`, `tool_warning`, the questions it asked with the
  answer given): the command line, `Aider v...`, `Main model: <model> with <format> edit format` (`Model:` in older
  releases) before the first prompt; after a reply `Tokens: ... sent, ... received. Cost: $... message, $...
  session.`, `Applied edit to <path>`, `Commit <hash> <message>`, and when blocks did not match, the error the
  model was sent back (`# N SEARCH/REPLACE block(s) failed to match!`, one `## SearchReplaceNoExactMatch` section
  per failed block). An entry of several lines has `> ` on its first line only and ends with the line that ends
  in two spaces (aider's line break).
Aider's own parser (`aider.utils.split_chat_history_markdown`, which `--restore-chat-history` uses) splits on the
same prefixes; a `> ` line inside a reply that does not end in aider's line break is the reply's own Markdown.

Mapping: a prompt is a user message (the first that is a request, not a `/command`, is the task: `/ask`,
`/code`, `/architect` and `/context` carry one); a reply is an assistant turn whose SEARCH/REPLACE
blocks are `edit` tool calls (`path`, `search`, `replace`: the text between the markers, as aider applies it);
the reply's other text is the turn's reasoning, each block as written the action's raw form; its result is
`Applied edit to <path>` for the blocks on that path, or the failed block's section of the error
(an error), or the error's `The other N ... were applied successfully` line for the blocks that did apply. Aider's
other output after a reply (commits, questions, notices) is what the person saw next: a text observation, and
each commit is kept in `env["aider"]["commits"]`. The `Tokens:` lines go to `env["aider"]["usage"]` (aider rounds
the counts: kept as written, with the costs in dollars), the header to `env["aider"]` (version, model, edit
format, the rest as lines). A reply without edits (an answer, or an edit format without SEARCH/REPLACE blocks) is
a `message` action. The session's start is local time without a zone: kept as written in
`env["aider"]["started"]`, never as a timestamp. Aider grades nothing: outcome `unknown`; terminated when every
edit of the last reply has its result. Domain `swe`, platform `linux` (not recorded).
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Source
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "aider_chat"
VERSION = "1"
INFO = FormatInfo(
    group="swe", rank=335, domains=('swe',), platform="linux",
    summary="Aider chat histories (`.aider.chat.history.md`)",
    producer="Aider chat histories (`.aider.chat.history.md`, one episode per chat session)",
    versions="0.82.3, 0.86.2 (run here); 0.74.0, 0.86.1 (real histories)",
    proof=("each release from PyPI in its own venv runs `aider --message` with `--openai-api-base` at the scripted "
           "model server (Chat Completions, streamed), in a temporary HOME and git workspace: the script's replies "
           "create a file, edit one with a block that fails to match, fix it after aider's reflection, in two chat "
           "sessions; the script is the oracle for every block, its outcome on disk, the commits and the model, "
           "and aider's own parser (`split_chat_history_markdown`, `find_original_update_blocks`) a second "
           "(`tests/ingest/swe/test_aider_cli.py`); two real histories in `../shared/samples` (0.74.0 run by an "
           "IDE plugin, 0.86.1 by a task harness: goldens) and edge cases (`tests/ingest/swe/test_aider.py`)"),
)

_STARTED = re.compile(r"^# aider chat started at (.+?)\s*$")
_SEARCH = re.compile(r"^<{5,9} SEARCH>?\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9} REPLACE\s*$")
# the fences aider picks for a reply (`aider/coders/base_coder.py`: all_fences), with the language after them
_FENCE = re.compile(r"^(`{3,}|~{3,}|<(?:source|code|pre|codeblock|sourcecode)>)")
_MODEL = re.compile(r"^(?:Main model|Model): (\S+)(?: with (\S+) edit format)?")
_TOKENS = re.compile(r"^Tokens: (?P<sent>[\d.]+[kM]?) sent(?:, (?P<write>[\d.]+[kM]?) cache write)?"
                     r"(?:, (?P<hit>[\d.]+[kM]?) cache hit)?, (?P<received>[\d.]+[kM]?) received\."
                     r"(?:\s+Cost: \$(?P<cost>[\d.]+) message, \$(?P<session>[\d.]+) session\.)?")
_APPLIED = re.compile(r"^(?:Applied edit to|Did not apply edit to) (.+?)(?: \(--dry-run\))?$")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.*)$")
_FAILED = re.compile(r"^# \d+ SEARCH/REPLACE blocks? failed to match!")
_SECTION = "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in "
_OTHERS = re.compile(r"^# The other \d+ SEARCH/REPLACE blocks? (?:were|was) applied successfully\.$", re.M)
_MUST_MATCH = "\nThe SEARCH section must exactly match"
# aider's own output after a reply, known by its words even where its entries lost their trailing spaces
_OUTPUT = re.compile(r"^(?:Tokens: |Applied edit to |Did not apply edit to |Commit [0-9a-f]{7,40} "
                     r"|# \d+ SEARCH/REPLACE)")
_HEAD = re.compile(rb"(?m)^# aider chat started at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\r?$")
# prompts that are commands, not requests: the task is the first prompt that is a request (`/ask`, `/code`,
# `/architect` and `/context` carry one)
_COMMAND = re.compile(r"^/(?!(?:ask|code|architect|context)\s+\S)\S*")
_REQUEST_COMMAND = re.compile(r"^/(?:ask|code|architect|context)\s+")


def units(files: list[str], head) -> list[str]:
    """Markdown files whose first 4 KiB hold aider's `# aider chat started at <date> <time>` line."""
    return [path for path in files if path.endswith(".md") and _HEAD.search(head(path))]


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    text = source.read_bytes().decode("utf-8", "replace")
    preface, sessions = split_sessions(text)
    if not sessions:
        yield Rejected("bad_record", f"{name}: no `# aider chat started at` line", name)
        return
    if preface.strip():
        yield Rejected("unknown_content", f"{name}: text before the first chat session is not aider's; kept raw "
                       "here and in the first session's env.aider.preface", name, snippet=preface)
    for n, (started, lines) in enumerate(sessions):
        where = f"{name}: session {n + 1} (started {started})"
        messages, extras = session_messages(entries(lines), where)
        answered = {m.tool_call_id for m in messages if m.role == "tool"}
        last = next((m for m in reversed(messages) if m.role == "assistant"), None)
        run = Run(key=f"session-{n + 1}", task=extras.pop("task"), agent=extras.get("model"),
                  terminated=last is not None and all(c.id in answered for c in last.tool_calls),
                  env={"aider": {"started": started, **{k: v for k, v in extras.items() if v}}})
        if n == 0 and preface.strip():
            run.env["aider"]["preface"] = preface
        yield from records(messages, run, where)


def split_sessions(text: str) -> tuple[str, list[tuple[str, list[str]]]]:
    """The text before the first session, and (start time as written, lines) of each chat session; lines keep
    their ends."""
    sessions: list[tuple[str, list[str]]] = []
    preface = []
    for line in text.splitlines(keepends=True):
        m = _STARTED.match(line)
        if m:
            sessions.append((m.group(1), []))
        elif sessions:
            sessions[-1][1].append(line)
        else:
            preface.append(line)
    return "".join(preface), sessions


def _breaks(line: str) -> bool:
    """Whether a line ends with aider's line break (two spaces): the end of a `>` or `####` entry."""
    return line.rstrip("\r\n").endswith("  ")


def entries(lines: list[str]) -> list[tuple[str, str]]:
    """The session's entries in order: ("user" | "assistant" | "tool", text); consecutive `####` lines are one
    prompt, a reply is the plain text between entries (stripped), a tool entry one `>` entry of aider's. An entry
    of several lines is taken whole where aider writes one: the command line (`--message` text) before the first
    prompt, the failed-edit report and the usage report (its cost on a second line when the cache was both
    written and read); elsewhere (lint or test output), as in aider's own parser, the lines after
    the first read as a reply (files whose entries lost their trailing spaces leave no other way to tell)."""
    out: list[tuple[str, list[str]]] = []  # (kind, its lines): joined once at the end, never grown as strings
    prompted = in_reply = False  # a prompt seen yet; the last entry is a reply with text
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#### "):
            _add(out, "user", line[5:].rstrip("\r\n")[:-2] if _breaks(line) else line[5:].rstrip("\r\n"))
            prompted, in_reply = True, False
        elif line.rstrip("\r\n") == ">" or (line.startswith("> ") and (_breaks(line) or not in_reply or
                                                                         _OUTPUT.match(line[2:]))):
            end = i
            if not prompted or _FAILED.match(line[2:]) or _TOKENS.match(line[2:]):
                while not _breaks(lines[end]) and end + 1 < len(lines) and not _starts_entry(lines[end + 1]):
                    end += 1  # `> ` on its first line, aider's line break on its last
            out.append(("tool", [line[2:], *lines[i + 1:end + 1]]))
            in_reply, i = False, end
        else:
            _add(out, "assistant", line)
            in_reply = in_reply or bool(line.strip())
        i += 1
    joined = [(kind, "\n".join(parts) if kind == "user" else "".join(parts)) for kind, parts in out]
    return [(kind, text.strip("\n") if kind == "assistant" else text.rstrip() if kind == "tool" else text)
            for kind, text in joined if kind != "assistant" or text.strip()]


def _starts_entry(line: str) -> bool:
    return line.startswith(("> ", "#### ")) or line.rstrip("\r\n") == ">"


def _add(out: list[tuple[str, list[str]]], kind: str, text: str) -> None:
    if out and out[-1][0] == kind:
        out[-1][1].append(text)
    else:
        out.append((kind, [text]))


def edit_blocks(reply: str) -> list[tuple[str | None, str, str, str]]:
    """(path, search, replace, the block as written) of each SEARCH/REPLACE block of a reply, in order, as aider
    applies them: the path is the line before the block (or before its opening fence), else the previous block's
    path; the block as written runs from its path line (or fence) to its closing fence."""
    lines = reply.splitlines(keepends=True)
    found: list[tuple[str | None, str, str, str]] = []
    i = 0
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        first, path = _path_before(lines, i)
        path = path or (found[-1][0] if found else None)
        j = i + 1
        while j < len(lines) and not _DIVIDER.match(lines[j]):
            j += 1
        k = j + 1
        while k < len(lines) and not _REPLACE.match(lines[k]):
            k += 1
        if k >= len(lines):
            break  # an unfinished block (a reply cut short): aider applies nothing of it
        last = k + 1 if k + 1 < len(lines) and _FENCE.match(lines[k + 1].strip()) else k
        found.append((path, "".join(lines[i + 1:j]), "".join(lines[j + 1:k]), "".join(lines[first:last + 1])))
        i = last + 1
    return found


def prose(reply: str, blocks: list[tuple[str | None, str, str, str]]) -> str:
    """The reply without its blocks: what the model wrote around them."""
    for block in blocks:
        reply = reply.replace(block[3], "", 1)
    return re.sub(r"\n{3,}", "\n\n", reply).strip()


def _path_before(lines: list[str], i: int) -> tuple[int, str | None]:
    """(where the block starts, its path) from the two lines before its SEARCH marker."""
    first = i
    for back in (1, 2):
        if i - back < 0:
            break
        line = lines[i - back].strip()
        if _FENCE.match(line):
            first = i - back
            continue
        name = line.strip("#").strip().strip(":").strip("`*").strip()
        if not name:
            return first, None
        opened = back == 1 and i - 2 >= 0 and _FENCE.match(lines[i - 2].strip())  # diff-fenced: the path inside
        return (i - 2 if opened else i - back), name
    return first, None


def _header(tools: list[str], extras: dict) -> None:
    for text in tools:
        m = _MODEL.match(text)
        if text.startswith("Aider v"):
            extras["version"] = text[len("Aider v"):].split()[0]
        elif m and "model" not in extras:
            extras["model"], extras["edit_format"] = m.group(1), m.group(2)
        else:
            extras["header"].append(text)


def session_messages(items: list[tuple[str, str]], where: str) -> tuple[list[Message], dict]:
    """Transcript messages of one session, and what goes to env (task, model, usage, commits)."""
    extras: dict = {"task": None, "header": [], "usage": [], "commits": []}
    first_user = next((i for i, (kind, _) in enumerate(items) if kind != "tool"), len(items))
    _header([text for _, text in items[:first_user]], extras)
    messages: list[Message] = []
    said: list[Message] = []  # aider's output after the current reply: placed after the edits' results
    open_calls: list[tuple[ToolCall, str | None, str]] = []  # this reply's edits still waiting for a result
    replies = 0
    for n, (kind, text) in enumerate(items[first_user:]):
        at = f"{where}: entry {first_user + n + 1}"
        if kind != "tool":
            messages += said
            said = []
        if kind == "user":
            messages.append(Message("user", text=text, where=at))
            if extras["task"] is None and not _COMMAND.match(text):
                extras["task"] = _REQUEST_COMMAND.sub("", text, count=1)
        elif kind == "assistant":
            replies += 1
            blocks = edit_blocks(text)
            calls = [ToolCall(f"r{replies}e{e + 1}", "edit", {"path": p, "search": s, "replace": r}, raw=written)
                     for e, (p, s, r, written) in enumerate(blocks)]
            messages.append(Message("assistant", text=prose(text, blocks) if blocks else text, tool_calls=calls,
                                    model=extras.get("model"), where=at))
            open_calls = [(c, c.arguments["path"], c.arguments["search"]) for c in calls]
        else:
            open_calls = _outcome(text, open_calls, messages, said, extras, replies, at)
    return messages + said, extras


def _outcome(text: str, open_calls: list, messages: list[Message], said: list[Message], extras: dict, reply: int,
             at: str) -> list:
    """Map one of aider's entries after a reply: a result for the edits it settles, usage, a commit, or output
    the person saw (a user message: the next observation). Returns the edits still open."""
    tokens, applied, commit = _TOKENS.match(text), _APPLIED.match(text), _COMMIT.match(text)
    if tokens:
        extras["usage"].append({"reply": reply, **{k: (float(v) if k in ("cost", "session") else v)
                                                  for k, v in tokens.groupdict().items() if v is not None}})
        return open_calls
    if applied:
        done = [c for c in open_calls if c[1] == applied.group(1)]
        for call, _, _ in done:
            messages.append(Message("tool", text=text, tool_call_id=call.id, where=at))
        if done:
            return [c for c in open_calls if c not in done]
    elif _FAILED.match(text) and open_calls:
        return _failed(text, open_calls, messages, said, at)
    if commit:
        extras["commits"].append({"reply": reply, "hash": commit.group(1), "message": commit.group(2)})
    said.append(Message("user", text=text, where=at))
    return open_calls


def _failed(text: str, open_calls: list, messages: list[Message], said: list[Message], at: str) -> list:
    """The blocks a failure names get their section of it (errors); the error's `The other N ... applied` line
    settles the rest of the reply's blocks."""
    left = list(open_calls)
    for section in text.split("\n" + _SECTION)[1:]:
        path, _, rest = section.partition("\n")
        body = rest.split("\n", 1)[1] if _SEARCH.match(rest.split("\n", 1)[0]) else rest
        search = body.split("\n=======\n", 1)[0] + "\n" if "\n=======\n" in body else None
        if body.startswith("=======\n"):
            search = ""
        match = next((c for c in left if c[1] == path.strip() and c[2] == search), None)
        if match is None:
            continue
        left.remove(match)
        messages.append(Message("tool", text=_SECTION + section.split(_MUST_MATCH, 1)[0].rstrip(),
                                tool_call_id=match[0].id, is_error=True, where=at))
    others = _OTHERS.search(text)
    if others:
        for call, _, _ in left:
            messages.append(Message("tool", text=others.group(0), tool_call_id=call.id, where=at))
        left = []
    head = text.split("\n" + _SECTION, 1)[0].strip()
    if head:
        said.append(Message("user", text=head, where=at))
    return left
