"""Call logs: one tool call per JSON line, request and outcome together, as MCP audit middlewares and gateways
write them (read by `ingest.mcp.audit_log`, and by `ingest.mcp.proxy_log` for such lines inside a text log).

A line is a call record when it names a tool (`toolName`, `tool_name`, `tool`) and its arguments (`params`,
`arguments`, `args`, `tool_args`, `input`, `input_data`); its outcome is `result` / `response` / `output` /
`output_data`, or `error`; a time (`timestamp`, `time`, `ts`) and optionally a server (`serverName`,
`server_name`, `server`) and a session (`sessionId`, `session_id`). Each line is one step: the lines of one
(session, server) are one episode (key `<session>` or `<server>`, "" when neither is named, after the caller's
`key_prefix`), in file order. The outcome is the next step's observation (`is_error` when an `error` is set, or
a `blocked` call); an outcome that is an MCP `CallToolResult` (`content` items) is read as `mcp_jsonrpc` reads
results. Fields this mapping does not use (`duration_ms`, `user`, `policy`...) are kept per step in
`env["calls"]`, and so is a time without a zone (`datetime.utcnow().isoformat()` writes none): the step's
timestamp is then null. Each line is a call and its result for the transcript core (`ingest.transcript`,
`column_steps`: the steps made as values, `ingest.record.StepColumns`), which makes the episode.
"""

from __future__ import annotations

import functools
from typing import Iterator

from ingest.mcp.jsonrpc import call_result
from ingest.record import Episode, Observation, Rejected, StepColumns, field_values
from ingest.search import episode_domain
from ingest.source import Source
from ingest.times import parse_time
from ingest.tools import dumps, tool_call_values
from ingest.transcript import Run, column_steps, records

TOOL_KEYS = ("toolName", "tool_name", "tool")
ARGS_KEYS = ("params", "arguments", "args", "tool_args", "input", "input_data")
RESULT_KEYS = ("result", "response", "output", "output_data")
TIME_KEYS = ("timestamp", "time", "ts")
SERVER_KEYS = ("serverName", "server_name", "server")
SESSION_KEYS = ("sessionId", "session_id")


def _first(obj: dict, keys: tuple[str, ...]):
    for key in keys:
        if key in obj:
            return obj[key]
    return None


def is_call_record(obj) -> bool:
    """Whether a JSON value is one call record: an object naming a tool and its arguments."""
    return isinstance(obj, dict) and isinstance(_first(obj, TOOL_KEYS), str) and any(k in obj for k in ARGS_KEYS)


def read_calls(lines: list, name: str, source: Source, key_prefix: str = "") -> Iterator[Episode | Rejected]:
    """The episodes of (line, value) call records; a `bad_record` row for each value that names no tool."""
    groups: dict[tuple, list] = {}
    for no, obj in lines:
        # each key's first spelling looked up at once: most logs use one spelling throughout
        tool = (obj["toolName"] if "toolName" in obj else _first(obj, TOOL_KEYS)) if isinstance(obj, dict) else None
        if not isinstance(tool, str):
            yield Rejected("bad_record", f"{name}:{no}: a call record needs a tool name ({' / '.join(TOOL_KEYS)})",
                           name, line=no, snippet=dumps(obj)[:300])
            continue
        key = (obj["sessionId"] if "sessionId" in obj else _first(obj, SESSION_KEYS),
               obj["serverName"] if "serverName" in obj else _first(obj, SERVER_KEYS))
        groups.setdefault(key, []).append((no, tool, obj))
    for (session, server), calls in groups.items():
        yield from _call_episode(session, server, calls, source, name, key_prefix)


_USED = {*TOOL_KEYS, *ARGS_KEYS, *RESULT_KEYS, *TIME_KEYS, *SERVER_KEYS, *SESSION_KEYS, "error", "blocked"}


@functools.lru_cache(maxsize=256)
def _unused(keys: tuple[str, ...]) -> tuple[str, ...]:
    """The keys of a call record this mapping does not use, in order: a log's lines share a few key sets."""
    return tuple(k for k in keys if k not in _USED)


def _call_episode(session, server, calls: list, source: Source, name: str,
                  key_prefix: str) -> Iterator[Episode | Rejected]:
    """One (session, server)'s calls through the transcript core: each line a call and its outcome, made as
    values (`StepColumns`: a log of thousands of lines makes no object per step)."""
    extras, steps = [], StepColumns()  # env["calls"]; the steps
    seen = _NOTHING_SEEN  # what came back from the call before: the next step's observation
    for no, tool, obj in calls:
        timestamp = parse_time(obj["timestamp"] if "timestamp" in obj else _first(obj, TIME_KEYS))
        extra = {"line": no}
        for k in _unused(tuple(obj)):
            extra[k] = obj[k]
        if timestamp is None:  # a time without a zone (or none at all) is kept as written, not dropped
            extra.update({k: obj[k] for k in TIME_KEYS if k in obj})
        extras.append(extra)
        args = obj["params"] if "params" in obj else _first(obj, ARGS_KEYS)
        steps.add(seen, tool_call_values(tool, args if args is not None else {}, dumps(obj)), timestamp)
        result = obj["result"] if "result" in obj else None
        # most lines: a text result, no error: what `_outcome` makes of them, at once
        if type(result) is str and obj.get("error") in (None, "", False) and not obj.get("blocked"):
            seen = ("tool_result", result)
        else:
            seen = field_values(_outcome(obj, tool, source))
    env = {"calls": extras}
    if server is not None:
        env["server_name"] = server
    if session is not None:
        env["session_id"] = session
    key = str(session if session is not None else server if server is not None else "")
    run = Run(key=key_prefix + key, domain=episode_domain([tool for _, tool, _ in calls], "mcp"), platform="linux",
              terminated=False, env=env)
    yield from records((), run, name, column_steps(steps, Observation(*seen)))


_NOTHING_SEEN = field_values(Observation())


def _outcome(obj: dict, tool: str, source: Source) -> Observation:
    error = obj.get("error")
    if error not in (None, "", False) or obj.get("blocked"):
        text = error.get("message") if isinstance(error, dict) else str(error or obj.get("block_reason") or "blocked")
        return Observation(kind="tool_result", text=text, is_error=True)
    result = obj["result"] if "result" in obj else _first(obj, RESULT_KEYS)
    if isinstance(result, dict) and isinstance(result.get("content"), list):  # an MCP CallToolResult
        return call_result(tool, {"result": result}, source)
    if result is None:
        return Observation(kind="tool_result")
    return Observation("tool_result", result if isinstance(result, str) else dumps(result))  # by position: faster
