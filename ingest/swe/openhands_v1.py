"""OpenHands V1 conversations (the `openhands-sdk` agent): one conversation folder is one episode; an adapter
onto `ingest.transcript`.

The SDK persists a conversation as `base_state.json` (the agent with its LLM config, `execution_status`,
`stats` with usage) and `events/event-NNNNN-<id>.json`, one event per file, each a JSON object with `kind`
(the event class), `id`, `timestamp` (local time of an unknown zone: step timestamps stay null, the first and
last are kept in `env`) and `source` (`user`, `agent`, `environment`). Events are read in the order of their
index `NNNNN` (5+ digits):

- `SystemPromptEvent` (`system_prompt`, `tools`, `dynamic_context`): the system message; tool names to `env`;
- `MessageEvent` (`llm_message` `{role, content[], reasoning_content}`, `source`): a user message (the first
  is the task) or an assistant message without tool calls (a `message` action);
- `ActionEvent` (`tool_name`, `tool_call_id`, `tool_call` `{id, name, arguments}`, `action` `{kind, ...}`,
  `thought[]`, `reasoning_content`, `llm_response_id`): a tool call; consecutive actions of one LLM response
  are one assistant turn (thought and reasoning go on its first step). `TerminalAction` is a `command`
  (`terminal` is a shell tool), `FinishAction` is `done` (text = its message), anything else a `tool_call`
  with the model's own arguments (`FileEditorAction` also names its `path` in `element`);
- `ObservationEvent` (`observation` `{kind, content[], is_error, exit_code, metadata}`, `tool_call_id`):
  the call's result (a `TerminalObservation` is `terminal`, with its exit code); `UserRejectObservation`
  and `AgentErrorEvent` are error results of their call;
- `ConversationErrorEvent` (`code`, `detail`: why a run stopped) is kept in `env.errors`; bookkeeping
  (`ConversationStateUpdateEvent`, `PauseEvent`, `Condensation*`, `TokenEvent`, `LLMCompletionLogEvent`,
  `StreamingDeltaEvent`, hooks...) is counted in `env.bookkeeping`; an event of a
  kind this reader does not know is kept raw (`env.unmapped`) with an `unknown_content` row.

Outcome: the SDK records the agent's own verdict, not a test's: a `FinishAction` ends the episode (terminal)
and, with `execution_status` `finished`, is outcome `success` (no reward: nothing scored it); `error` or
`stuck` is `failure`; anything else (paused, idle, waiting) is `unknown` and truncated. A `finished`
conversation whose last turn is an assistant message without tool calls (the SDK sets `finished` when the
model replies without one, "awaits user input") is terminal too; its outcome follows the rule above.

Bad input: an event file that is not valid JSON, not an object, or with a field of the wrong type (`action`
not an object, a `tool_name` that is not a string...) is a `parse_error` / `bad_record` row naming the file
and the field, and is left out; the rest of the conversation is read. `agent`: `base_state.json` `agent.llm.model`. `env`:
`conversation_id`, `execution_status`, `stats` (usage), `tools`, `errors`, `bookkeeping`,
`local_time_first/last`. Terminal output is kept as the SDK recorded it (escape sequences included).
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Rejected
from ingest.source import Source, SourceError, parse_json
from ingest.tools import dumps
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "openhands_v1"
VERSION = "1"
INFO = FormatInfo(
    group="swe", rank=40, domains=('swe',), platform="linux",
    summary="OpenHands conversation folders (V1: `base_state.json` + `events/`)",
    producer="openhands-sdk + openhands-tools",
    versions="1.58.2",
    proof=("the SDK's agent with its terminal and file-editor tools in a local workspace, driven by its scripted "
           "`TestLLM`; its event models read the files back as the oracle (`tests/ingest/swe/test_openhands_v1.py`); "
           "a real gpt-4o-mini conversation from the SDK's own repository (MIT) beside the test (golden)"),
)

EVENT_NAME = re.compile(r"^event-(\d{5,})-([0-9a-fA-F\-]{8,})\.json$")  # the SDK's EVENT_NAME_RE
_BOOKKEEPING = frozenset({
    "ConversationStateUpdateEvent", "PauseEvent", "InterruptEvent", "Condensation", "CondensationRequest",
    "CondensationSummaryEvent", "TokenEvent", "LLMCompletionLogEvent", "StreamingDeltaEvent",
    "HookExecutionEvent"})


def units(files: list[str], head) -> list[str]:
    """Conversation folders: the parent of an `events/` folder of `event-NNNNN-<id>.json` files whose first
    bytes name a `kind`."""
    found: dict[str, None] = {}
    for path in files:
        folder, name = posixpath.split(path)
        if posixpath.basename(folder) != "events" or not EVENT_NAME.match(name):
            continue
        conversation = posixpath.dirname(folder)
        if conversation not in found and b'"kind"' in head(path):
            found[conversation] = None
    return list(found)


def _texts(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _call(event: dict) -> ToolCall:
    action = event.get("action") if isinstance(event.get("action"), dict) else {}
    call = event.get("tool_call") if isinstance(event.get("tool_call"), dict) else {}
    kind, name = action.get("kind"), event.get("tool_name") or call.get("name")
    raw = dumps({k: event[k] for k in ("id", "tool_name", "tool_call_id", "tool_call", "action", "summary",
                                       "security_risk", "llm_response_id") if k in event})
    own = None
    if kind == "FinishAction":
        own = Action(kind="done", text=action.get("message") if isinstance(action.get("message"), str) else None,
                     tool_name=name, raw=raw)
    arguments = call.get("arguments") if call.get("arguments") is not None else {
        k: v for k, v in action.items() if k != "kind"}
    return ToolCall(event.get("tool_call_id") or call.get("id"), name, arguments, raw=raw, action=own)


def _result(event: dict, kind: str, where: str) -> Message:
    call_id = event.get("tool_call_id")
    if kind == "ObservationEvent":
        obs = event.get("observation") if isinstance(event.get("observation"), dict) else {}
        code = _int(obs.get("exit_code"))
        if code is None and isinstance(obs.get("metadata"), dict):
            code = _int(obs["metadata"].get("exit_code"))
        return Message("tool", _texts(obs.get("content")), tool_call_id=call_id, tool_name=event.get("tool_name"),
                       is_error=True if obs.get("is_error") else None, exit_code=code, where=where)
    text = event.get("rejection_reason") if kind == "UserRejectObservation" else event.get("error")
    return Message("tool", text if isinstance(text, str) else None, tool_call_id=call_id,
                   tool_name=event.get("tool_name"), is_error=True, where=where)


def _message(event: dict, where: str, model: str | None) -> Message:
    llm = event.get("llm_message") if isinstance(event.get("llm_message"), dict) else {}
    role = llm.get("role") or ("user" if event.get("source") == "user" else "assistant")
    text = _texts(llm.get("content"))
    extended = _texts(event.get("extended_content"))
    if extended:
        text = f"{text}\n\n{extended}" if text else extended
    reasoning = llm.get("reasoning_content") if isinstance(llm.get("reasoning_content"), str) else None
    return Message(role if role in ("user", "assistant", "system") else str(role), text, reasoning=reasoning,
                   model=model if role == "assistant" else None, where=where)


def _turn(events: list[tuple[str, dict]], model: str | None) -> Message:
    """Consecutive ActionEvents of one LLM response: one assistant turn."""
    first = events[0][1]
    thought = _texts(first.get("thought"))
    reasoning = first.get("reasoning_content") if isinstance(first.get("reasoning_content"), str) else None
    return Message("assistant", thought or None, [_call(e) for _, e in events], reasoning=reasoning or None,
                   model=model, where=events[0][0])


# the fields this reader uses, by type: another type makes the event a `bad_record`
_FIELDS = {"source": (str,), "timestamp": (str,), "tool_name": (str,), "tool_call_id": (str,),
           "llm_response_id": (str,), "reasoning_content": (str,), "thought": (list, str), "action": (dict,),
           "tool_call": (dict,), "observation": (dict,), "llm_message": (dict,), "tools": (list,),
           "error": (str,), "rejection_reason": (str,), "extended_content": (list,)}
_NESTED = {"tool_call": {"id": (str,), "name": (str,), "arguments": (str, dict)},
           "action": {"kind": (str,), "message": (str,)}, "llm_message": {"role": (str,), "content": (list, str)},
           "observation": {"content": (list, str), "exit_code": (int,), "metadata": (dict,)}}


def _bad_field(event: dict) -> str | None:
    """"field: what is wrong" for the first field of an event with a type the reader cannot use."""
    def check(obj: dict, fields: dict, prefix: str) -> str | None:
        for key, types in fields.items():
            value = obj.get(key)
            if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
                return f"{prefix}{key}: {type(value).__name__}, expected {'/'.join(t.__name__ for t in types)}"
        return None

    found = check(event, _FIELDS, "")
    for key, fields in _NESTED.items():
        if found is None and isinstance(event.get(key), dict):
            found = check(event[key], fields, f"{key}.")
    return found


def _events(source: Source) -> tuple[list[tuple[str, dict]], list[Rejected]]:
    names = sorted((int(m.group(1)), n) for n in source.listdir("events") if (m := EVENT_NAME.match(n)))
    out, problems = [], []
    for _, name in names:
        rel = f"events/{name}"
        try:
            event = parse_json(source.read_bytes(rel), rel, source.budgets)
        except SourceError as e:
            problems.append(e.as_rejected())
            continue
        if not isinstance(event, dict) or not isinstance(event.get("kind"), str):
            problems.append(Rejected("bad_record", f"{rel}: expected an event object with a `kind`; left out", rel))
            continue
        if (bad := _bad_field(event)) is not None:
            problems.append(Rejected("bad_record", f"{rel}: {event['kind']} field {bad}; the event is left out", rel,
                                     snippet=dumps(event)[:2000]))
            continue
        out.append((rel, event))
    return out, problems


def _messages(events: list[tuple[str, dict]], model: str | None, env: dict) -> list[Message]:
    out: list[Message] = []
    i = 0
    while i < len(events):
        where, event = events[i]
        kind = event["kind"]
        if kind == "ActionEvent":
            j = i + 1
            response = event.get("llm_response_id")
            while j < len(events) and events[j][1]["kind"] == "ActionEvent" and response is not None \
                    and events[j][1].get("llm_response_id") == response:
                j += 1
            out.append(_turn(events[i:j], model))
            i = j
            continue
        if kind == "SystemPromptEvent":
            text = "\n\n".join(t for t in (_texts(event.get("system_prompt")), _texts(event.get("dynamic_context")))
                               if t)
            out.append(Message("system", text, where=where))
            tools = event.get("tools") if isinstance(event.get("tools"), list) else []
            # as every reader records tools ({"name", "description"}): the event keeps no argument schema
            env["tools"] = [{"name": t.get("name") or t.get("title"), "description": t.get("description") or ""}
                            for t in tools if isinstance(t, dict) and (t.get("name") or t.get("title"))]
        elif kind == "MessageEvent":
            out.append(_message(event, where, model))
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            out.append(_result(event, kind, where))
        elif kind == "ConversationErrorEvent":  # why the run stopped: kept whole
            env.setdefault("errors", []).append({k: v for k, v in event.items() if k not in ("kind", "parent_id")})
        elif kind in _BOOKKEEPING:
            env.setdefault("bookkeeping", {}).setdefault(kind, 0)
            env["bookkeeping"][kind] += 1
        else:
            out.append(Message(f"event {kind}", raw=event, where=where))
        i += 1
    return out


def _mark_file_targets(ep: Episode) -> None:
    """A file editor's path as the action's `element`, as the V0 reader does for its file tools."""
    for step in ep.steps:
        if step.action.kind == "tool_call" and step.action.tool_name in ("file_editor", "str_replace_editor"):
            path = (parse_json(step.action.arguments, "arguments") or {}).get("path")
            if isinstance(path, str):
                step.action.element = dumps({"path": path})


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path.rstrip("/"))
    state = {}
    if source.exists("base_state.json"):
        try:
            state = parse_json(source.read_bytes("base_state.json"), "base_state.json")
        except SourceError as e:
            yield e.as_rejected()
        state = state if isinstance(state, dict) else {}
    events, problems = _events(source)
    yield from problems
    model = (state.get("agent") or {}).get("llm", {}).get("model") if isinstance(state.get("agent"), dict) else None
    model = model if isinstance(model, str) else None
    times = [e.get("timestamp") for _, e in events if isinstance(e.get("timestamp"), str)]
    env = {"conversation_id": state.get("id") or name, "execution_status": state.get("execution_status"),
           "stats": state.get("stats")}
    if times:
        env |= {"local_time_first": times[0], "local_time_last": times[-1]}
    messages = _messages(events, model, env)
    status = env["execution_status"]
    finished = any(m.role == "assistant" and any(c.action is not None and c.action.kind == "done"
                                                  for c in m.tool_calls) for m in messages)
    outcome = "failure" if status in ("error", "stuck") else "success" if finished and status == "finished" \
        else "unknown"
    # the SDK also ends a run (status `finished`) when the model answers with a message and no tool call: a
    # conversation whose last turn is that reply ended on the agent's own turn, like one ended by a finish
    last = next((m for m in reversed(messages) if m.role in ("assistant", "tool", "user")), None)
    replied = status == "finished" and last is not None and last.role == "assistant" and not last.tool_calls
    run = Run(agent=model, outcome=outcome, terminated=True if replied else None,
              env={k: v for k, v in env.items() if v is not None})
    for item in records(messages, run, name):
        if isinstance(item, Episode):
            _mark_file_targets(item)
        yield item
