"""Agent TARS (tarko) event streams: the events an Agent TARS / tarko agent emits during a run, saved as a JSON
array (the agent's snapshot files, `event-stream.jsonl`), as `{"events": [...]}` or one event a line (the
`agent-ui-cli`'s JSON and `trace.jsonl` forms).
An adapter onto `ingest.transcript`; one file is one episode.

An event has `id`, `type`, `timestamp` (ms since the epoch) and by type:
- `user_message`: `content`, a string or a list of parts (`text`, `image_url` with a data URL): the prompt;
- `assistant_thinking_message` (`content`, `isComplete`): the model's reasoning, kept for its next message;
- `assistant_message`: `content`, `toolCalls` (OpenAI form: `id`, `function.name`, `function.arguments`),
  `finishReason`, `messageId`; `rawContent` (the reply before parsing) kept in env;
- `tool_call` (`toolCallId`, `name`, `arguments`, `startTime`, the `tool`'s definition): the call the message
  made, read from the message; the tool definitions are kept in env (a call event whose message did not name it
  is read as a call of its own);
- `tool_result`: `toolCallId`, `name`, `content` (a string, an object, or parts), `error`, `elapsedMs`;
- `agent_run_start` (`sessionId`, `provider`, `model`, `modelDisplayName`, `agentName`, `runOptions`) and
  `agent_run_end` (`iterations`, `elapsedMs`, `status`): env, the model and agent;
- `plan_start`, `plan_update`, `plan_finish`, `system`: kept raw in `env["agent_tars"]["events"]`;
- `assistant_streaming_message`, `assistant_streaming_tool_call`: the deltas of the messages above (counted,
  not read: the whole message follows them).
An event of another type is kept raw in env with an `unknown_content` warning. An image a part carries is a blob
(`env["agent_tars"]["images"]` names each by its event). Agent TARS grades nothing: outcome `unknown`; terminated
when a run ended (`agent_run_end`) on the model's answer. Domain from the tools called (`ingest.search`).

The agent's own snapshot tests save the stream after each loop (`loop-<n>/event-stream.jsonl`) beside the whole
run's: each file is read, the loops' being the run's opening.
"""

from __future__ import annotations

import base64
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.search import episode_domain
from ingest.source import Source, SourceError, json_lines, parse_json
from ingest.tools import dumps
from ingest.times import parse_time
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "agent_tars"
VERSION = "1"
INFO = FormatInfo(
    group=None, rank=306, domains=('mcp', 'search', 'web'), platform="linux",
    summary="Agent TARS / tarko event streams (`event-stream.jsonl` snapshots, the agent UI's `trace.jsonl`)",
    producer="Agent TARS / tarko's event stream (bytedance/UI-TARS-desktop `multimodal/`)",
    versions="the streams of the repository's snapshot tests and its agent-ui-cli example (2025)",
    proof=("two real Apache-2.0 streams of bytedance/UI-TARS-desktop (the agent-ui-cli example: thinking, a "
           "JupyterCI call and its result, the answer; a research snapshot: a web search and a page visit with its "
           "screenshot, then the answer) are goldens read against the raw files "
           "(`tests/ingest/chat/test_agent_tars.py`); edge cases hand-made"),
)

_EVENT = re.compile(rb'"type"\s*:\s*"(?:agent_run_start|user_message|assistant_message|assistant_thinking_message'
                    rb'|assistant_streaming_message|tool_call|tool_result)"')
_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*\d{12,}')
_KEPT = ("plan_start", "plan_update", "plan_finish", "system")
_STREAMED = ("assistant_streaming_message", "assistant_streaming_tool_call", "assistant_streaming_thinking_message")
_DATA_URL = re.compile(r"^data:(?P<type>[\w/+.-]+);base64,(?P<data>.*)$", re.S)


def units(files: list[str], head) -> list[str]:
    """JSON / JSONL files whose opening holds an Agent TARS event: a `type` of the event stream's and a
    millisecond `timestamp`."""
    found = []
    for path in files:
        if path.endswith((".json", ".jsonl")):
            start = head(path)
            if start.lstrip()[:1] in (b"{", b"[") and _EVENT.search(start) and _TIMESTAMP.search(start):
                found.append(path)
    return found


def _events(source: Source) -> Iterator[dict | Rejected]:
    """The events of a JSON document (an array of them, or the agent UI's `{"events": [...]}`), whatever its name,
    or of each line of a JSON-lines file."""
    data = source.read_bytes()
    start = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    first = start.split(b"\n", 1)[0].strip()
    if start[:1] == b"[" or not first.endswith(b"}"):
        try:
            doc = parse_json(data, source.uri, source.budgets)
        except SourceError as e:
            yield Rejected(e.rule, e.reason, source.uri)
            return
        events = doc.get("events") if isinstance(doc, dict) else doc
        yield from (e for e in events if isinstance(e, dict)) if isinstance(events, list) else ()
        return
    for _, _, value in json_lines(data, source.uri, source.budgets):
        if isinstance(value, (dict, Rejected)):
            yield value


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = source.uri
    env: dict = {"events": [], "images": [], "tools": {}, "streamed": 0, "raw_content": []}
    out: list[Message] = []
    problems: list[Rejected] = []
    state = {"thinking": [], "model": None, "ended": None, "called": set()}
    for event in _events(source):
        if isinstance(event, Rejected):
            problems.append(event)
            continue
        _event(event, out, env, state, source, problems)
    yield from problems
    if not out:
        return
    env = {k: v for k, v in env.items() if v}
    last = next((m for m in reversed(out) if m.role in ("assistant", "tool")), None)
    answered = state["ended"] is not None and last is not None and last.role == "assistant" and not last.tool_calls
    tools = [c.name for m in out for c in m.tool_calls]
    key = str(env.get("session", {}).get("sessionId") or "")
    yield from records(out, Run(key=key, domain=episode_domain(tools, "mcp"), platform="linux", agent=state["model"],
                                terminated=answered, env={"agent_tars": env}), name)


def _event(event: dict, out: list, env: dict, state: dict, source: Source, problems: list) -> None:
    kind, where = event.get("type"), f"{source.uri}: event {event.get('id')}"
    stamp = parse_time(event.get("timestamp"))
    if kind == "user_message":
        out.append(Message("user", text=_text(event.get("content"), event, env, source), timestamp=stamp, where=where))
    elif kind == "assistant_thinking_message":
        if isinstance(event.get("content"), str) and event.get("isComplete", True):
            state["thinking"].append(event["content"])
    elif kind == "assistant_message":
        calls = [ToolCall(c.get("id"), (c.get("function") or {}).get("name"),
                          (c.get("function") or {}).get("arguments"), raw=c)
                 for c in event.get("toolCalls") or [] if isinstance(c, dict)]
        state["called"].update(c.id for c in calls)
        if event.get("rawContent") not in (None, "", event.get("content")):
            env["raw_content"].append({"id": event.get("id"), "rawContent": event["rawContent"]})
        out.append(Message("assistant", text=event.get("content") or None, tool_calls=calls, model=state["model"],
                           reasoning="\n\n".join(state["thinking"]) or None, timestamp=stamp, where=where))
        state["thinking"] = []
    elif kind == "tool_call":
        if isinstance(event.get("tool"), dict) and event.get("name"):
            env["tools"].setdefault(event["name"], event["tool"])
        if event.get("toolCallId") not in state["called"]:
            out.append(Message("assistant", tool_calls=[ToolCall(event.get("toolCallId"), event.get("name"),
                                                                 event.get("arguments"), raw=event)],
                               model=state["model"], timestamp=stamp, where=where))
    elif kind == "tool_result":
        error = event.get("error")
        out.append(Message("tool", text=_text(event.get("content"), event, env, source), tool_call_id=event.get(
            "toolCallId"), tool_name=event.get("name"), is_error=bool(error) or None, timestamp=stamp, where=where,
            raw={"error": error, "elapsedMs": event.get("elapsedMs")} if error else None))
    elif kind in ("agent_run_start", "agent_run_end"):
        env.setdefault("session", {}).update({k: v for k, v in event.items() if k not in ("id", "type")})
        state["model"] = state["model"] or event.get("model")
        if kind == "agent_run_end":
            state["ended"] = event.get("status")
    elif kind in _STREAMED:
        env["streamed"] += 1
    else:
        env["events"].append(event)
        if kind not in _KEPT:
            problems.append(Rejected("unknown_content", f"{where}: event type {kind!r} is none Agent TARS is known "
                                     "to write; kept raw in env.agent_tars.events", source.uri,
                                     record_id=str(event.get("id"))))


def _text(content, event: dict, env: dict, source: Source) -> str | None:
    """A message's or result's text: a string as it is, an object as JSON, parts joined (an image part a blob)."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        return dumps(content)
    texts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict) and part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url") if isinstance(part.get("image_url"), dict) else None
            found = _DATA_URL.match(url or "")
            try:
                ref = source.put_blob(base64.b64decode(found["data"]), found["type"], source.uri) if found else url
            except ValueError:  # not base64 after all: the URL as written
                ref = url
            env["images"].append({"event": event.get("id"), "image": ref})
        else:
            texts.append(dumps(part))
    return "\n".join(texts) or None
