"""Qwen Code's `/export md` files (`qwen-code-export-<time>.md`), written by the CLI's `toMarkdown`
(`packages/cli/src/ui/utils/export/formatters/markdown.ts`, the same writer in every release that lists the session's
metadata): the messages `/export json` holds (see `ingest.swe.qwen_code_export`), as markdown. An adapter onto
`ingest.transcript`; one file is one episode.

The writer's layout:
- `# Chat Session Export`, then `- **Session ID**: `<id>``, `- **Start Time**: ...`, `- **Exported**: ...` and,
  where the session has them, `- **Working Directory**`, `**Git Repository**`, `**Git Branch**`, `**Model**`,
  `**Channel**`, `**Prompt Count**`, `**Total Tokens**`, `**Context Window Size**`, `**Context Usage**` (a percent),
  `**Files Written**`, `**Lines Added**`, `**Lines Removed**`, and the unique files in a `<details>` list; a line
  `---`;
- each message after two blank lines: `## User` or `## Assistant` and its text as it is, `### System` and its
  text quoted (`> `), or a call: `### Tool: <title>`, `**Status**: completed|failed`, `**Input:**` and the
  arguments in a `json` code block (indented JSON, or the raw string), `**Affected Files:**` (a list of paths),
  `**Output:**` and each result item in a code block: a text item as it is, an edit as `*Diff for `<path>`:*` and
  the file's new text in a `diff` block. A code block's fence is one backtick longer than the longest run of
  backticks in its content (so a fence closes it unambiguously); titles and paths have `&` and `<` escaped as
  `&amp;` and `&lt;`.
The tool name is the title's part before `: ` (the display name, or the function name where the exporting CLI did
not resolve the tool); a call with a `command` string of a shell tool (`Shell`, `run_shell_command`) is a
`command` action, its result a terminal observation with the `Exit Code: N` its text gives.

What the markdown does not carry, beside the JSON export (named in `env["qwen_code_markdown"]["not_carried"]`):
message ids and timestamps, the model's usage per turn, which of the model's texts were its thoughts (both are
`## Assistant`: each is a turn of its own here), call ids, the tool's kind and raw output (a shell's exit code
only as its text gives it), an edit's old text, and whether the arguments were an object or a string that reads
as one. The user's and model's text go in as they are, so a line `## User` or `## Assistant` after two blank lines
inside a text cannot be told from the writer's own heading (it starts a message here). A header field none of the
writer's releases writes is kept raw with an `unknown_content` warning. Qwen Code grades nothing: outcome
`unknown`; terminated when the last message is the model's answer.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Rejected
from ingest.tools import SHELL_TOOLS, dumps, tool_observation
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "qwen_code_markdown"
VERSION = "1"
INFO = FormatInfo(
    group="swe", rank=267, domains=('swe',), platform="linux",
    summary="Qwen Code `/export md` files",
    producer="Qwen Code's `/export md` (`qwen-code-export-<time>.md`)",
    versions="0.15.10, 0.24.4",
    proof=("each release from the npm registry runs its scripted session against the scripted model server, then "
           "`qwen -p \"/export md\"` with `--resume <session>` exports it; the script is the oracle for every "
           "call, its arguments and the result the agent recorded, the model and the final answer, and the "
           "episode matches the one read from the same session's JSON export where the markdown carries it; real "
           "markdown exports from two public repositories with goldens read against the files "
           "(`tests/ingest/swe/test_qwen_code_markdown.py`)"),
)

_HEAD = re.compile(r"^# Chat Session Export\n\n- \*\*Session ID\*\*: `[^`\n]*`\n- \*\*Start Time\*\*: [^\n]*\n"
                   r"- \*\*Exported\*\*: ")
_FIELD = re.compile(r"^- \*\*(.+?)\*\*: (.*)$")
_FIELDS = {"Session ID": "sessionId", "Start Time": "startTime", "Exported": "exportTime", "Working Directory": "cwd",
           "Git Repository": "gitRepo", "Git Branch": "gitBranch", "Model": "model", "Channel": "channel",
           "Prompt Count": "promptCount", "Total Tokens": "totalTokens", "Context Window Size": "contextWindowSize",
           "Context Usage": "contextUsagePercent", "Files Written": "filesWritten", "Lines Added": "linesAdded",
           "Lines Removed": "linesRemoved"}
_NUMBERS = frozenset({"promptCount", "totalTokens", "contextWindowSize", "contextUsagePercent", "filesWritten",
                      "linesAdded", "linesRemoved"})
_SPLIT = re.compile(r"\n\n\n(?=## User\n\n|## Assistant\n\n|### System\n\n|### Tool: [^\n]*\n\*\*Status\*\*: )")
_FENCE = re.compile(r"^(`{3,})([\w+#.-]*)$")
_DIFF = re.compile(r"^\*Diff for `(.*)`:\*$")
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)  # the shell tool's result text
_SHELL_NAMES = SHELL_TOOLS | {"Shell"}  # `Shell`: the display name of Qwen Code's `run_shell_command`
NOT_CARRIED = ("message ids and timestamps", "usage per model turn", "which model texts are thoughts",
               "tool call ids", "tool kind", "raw tool output (exit code only as the result text gives it)",
               "an edit's old text", "whether the arguments were an object or a JSON string")


def units(files: list[str], head) -> list[str]:
    """`.md` files that open as `/export md` writes them: `# Chat Session Export`, then the session id, start time
    and export time as the writer lists them."""
    return [path for path in files
            if path.endswith(".md") and _HEAD.match(head(path).decode("utf-8", "replace"))]


def session_id(text: str) -> str | None:
    """The session id a markdown export's head names (None when it is not one)."""
    return _unescape(text.split("`", 2)[1]) if _HEAD.match(text) else None


def read(source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    text = source.read_bytes().decode("utf-8", "replace")
    header, sep, body = text.partition("\n\n---\n\n")
    if not _HEAD.match(text) or not sep:
        yield Rejected("bad_record", f"{name}: not Qwen Code's markdown export (no `# Chat Session Export` header "
                       "ending in a `---` line)", name)
        return
    extras: dict = {"system_messages": [], "unknown_fields": {}}
    yield from _metadata(header, name, extras)
    messages: list[Message] = []
    for n, block in enumerate(_SPLIT.split(body.removesuffix("\n\n")) if body.strip() else []):
        yield from _block(block, f"{name}: message {n + 1}", messages, extras)
    last = messages[-1] if messages else None
    answered = last is not None and last.role == "assistant" and not last.tool_calls and bool(last.text)
    model = extras["metadata"].get("model")
    env = {"qwen_code_markdown": {**{k: v for k, v in extras.items() if v}, "not_carried": list(NOT_CARRIED)}}
    yield from records(messages, Run(key="", domain="swe", platform="linux", terminated=answered,
                                     agent=model if isinstance(model, str) else None, env=env), name)


def _unescape(value: str) -> str:
    return value.replace("&lt;", "<").replace("&amp;", "&")


def _metadata(header: str, name: str, extras: dict) -> Iterator[Rejected]:
    """The header's fields under the JSON export's names (numbers as numbers, the unique files as a list)."""
    meta: dict = {}
    files = None
    for line in header.split("\n")[1:]:
        m = _FIELD.match(line)
        if line.startswith("<summary><strong>Unique Files Referenced"):
            files = []
        elif files is not None and line.startswith("- `") and line.endswith("`"):
            files.append(_unescape(line[3:-1]))
        elif m and m.group(1) in _FIELDS:
            meta[_FIELDS[m.group(1)]] = _value(_FIELDS[m.group(1)], m.group(2))
        elif line.strip() and line != "</details>" and line != "<details>":
            extras["unknown_fields"].setdefault("header", []).append(line)
    if files:
        meta["uniqueFiles"] = files
    extras["metadata"] = meta
    if extras["unknown_fields"]:
        yield Rejected("unknown_content", f"{name}: header line(s) none of Qwen Code's markdown exports write; kept "
                       "raw in env.qwen_code_markdown.unknown_fields.header", name)


def _value(key: str, text: str):
    text = _unescape(text[1:-1] if len(text) > 1 and text[0] == text[-1] == "`" else text)
    if key in _NUMBERS:
        number = text.removesuffix("%")
        try:
            return int(number)
        except ValueError:
            try:
                return float(number)
            except ValueError:
                return text
    return text


def _block(block: str, where: str, messages: list[Message], extras: dict) -> Iterator[Rejected]:
    heading, _, rest = block.partition("\n")
    if heading == "## User":
        messages.append(Message("user", text=rest.removeprefix("\n"), where=where))
    elif heading == "## Assistant":
        text = rest.removeprefix("\n")
        messages.append(Message("assistant", text=text or None, where=where))
    elif heading == "### System":
        extras["system_messages"].append(re.sub(r"^> ?", "", rest.removeprefix("\n"), flags=re.M))
    elif heading.startswith("### Tool: "):
        yield from _tool_call(_unescape(heading[len("### Tool: "):]), rest, where, messages)
    else:
        yield Rejected("unknown_content", f"{where}: not a `## User`, `## Assistant`, `### System` or `### Tool:` "
                       "block; kept as the model's text", where, snippet=block[:200])
        messages.append(Message("assistant", text=block, where=where))


def _code_blocks(lines: list[str], i: int) -> tuple[str | None, int]:
    """The content of the code block opening at line `i` (None when none opens there) and the line after it."""
    m = _FENCE.match(lines[i]) if i < len(lines) else None
    if not m:
        return None, i
    end = next((j for j in range(i + 1, len(lines)) if lines[j] == m.group(1)), len(lines))
    return "\n".join(lines[i + 1:end]), end + 1


def _call_parts(rest: str) -> tuple[str, object, list[str], list[str]]:
    """(status, arguments, affected files, result texts) of a call block after its title line."""
    lines = rest.split("\n")
    status = lines[0].removeprefix("**Status**: ") if lines and lines[0].startswith("**Status**: ") else ""
    args: object = {}
    affected: list[str] = []
    results: list[str] = []
    i = 1
    while i < len(lines):
        line = lines[i]
        if line == "**Input:**":
            raw, i = _code_blocks(lines, i + 1)
            try:
                args = json.loads(raw) if raw is not None else {}
            except (ValueError, RecursionError):  # not JSON, or nested past the interpreter's depth: kept as text
                args = raw
            continue
        diff = _DIFF.match(line)
        if line.startswith("- `") and line.endswith("`") and not results:
            affected.append(_unescape(line[3:-1]))
        elif diff:
            content, i = _code_blocks(lines, i + 1)
            results.append(f"{_unescape(diff.group(1))}:\n{content or ''}")
            continue
        elif _FENCE.match(line):
            content, i = _code_blocks(lines, i)
            results.append(content or "")
            continue
        i += 1
    return _unescape(status), args, affected, results


def _tool_call(title: str, rest: str, where: str, messages: list[Message]) -> Iterator[Rejected]:
    """A `### Tool:` block: the model's turn that called it and the call's result."""
    name = title.split(": ", 1)[0]
    status, args, affected, results = _call_parts(rest)
    command = args.get("command") if isinstance(args, dict) else None
    shell = isinstance(command, str) and name in _SHELL_NAMES
    raw = {"title": title, "status": status, **({"locations": affected} if affected else {})}
    action = Action(kind="command", code=command, tool_name=name, arguments=dumps(args), raw=dumps(raw)) \
        if shell else None
    messages.append(Message("assistant", where=where,
                            tool_calls=[ToolCall(None, name, args, raw=raw, action=action)]))
    text = "\n".join(results) or None
    m = _EXIT_CODE.search(text or "") if shell else None
    exit_code = int(m.group(1)) if m else None
    failed = status == "failed"
    observation = tool_observation(name, text, is_error=failed, exit_code=exit_code,
                                   kind="terminal" if shell else "tool_result")
    messages.append(Message("tool", text=text, tool_name=name, where=where, is_error=failed, exit_code=exit_code,
                            observation=observation))
    if status not in ("completed", "failed"):
        yield Rejected("unknown_content", f"{where}: call status {status!r} is none Qwen Code writes; kept in the "
                       "call's raw", where)
