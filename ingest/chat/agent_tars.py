"""Agent TARS (tarko) event streams: the events an Agent TARS / tarko agent emits during a run, saved as a JSON
array (the agent's snapshot files, `event-stream.jsonl`), as `{"events": [...]}` or one event a line (the
`agent-ui-cli`'s JSON and `trace.jsonl` forms).
An adapter onto `ingest.transcript`; one file is one episode, the snapshots of a run saved per loop one (below).

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

The agent's snapshots save the stream before each loop's model request (`<run>/loop-<n>/event-stream.jsonl`) beside
the whole run's (`<run>/event-stream.jsonl`), each holding the earlier ones' events again: the run's last snapshot is
the unit and reads the earlier ones with it (`ingest.chat.tarko_snapshots`). A snapshot the run's later ones open
with (as the agent's snapshot test compares them: ids and times aside, images as written) is one episode with them,
`env["agent_tars"]["snapshots"]` naming its files; one they do not open with (another recording: another model, a
changed result, a whole screenshot the last one cut short) is an episode of its own that says so
(`not_in_later_snapshot`, and the last one's `earlier_snapshots_apart`), so nothing is repeated and nothing lost.
Beside each loop's snapshot the agent saves the model request of that loop and its streamed response
(`loop-<n>/llm-request.jsonl`, `llm-response.jsonl`): the run's unit claims them too and reads into
`env["agent_tars"]["requests"]` (one a loop, with the episode holding that loop's snapshot) what the stream lacks:
the system prompt, the declared tools (`declared_tools`: those no call event defines), the options, the endpoint, the
response's id, model, finish reason and usage, and each call the loop ran with its execution time (`tool_calls`, from
`loop-<n>/tool-calls.jsonl`); their messages are the stream's again and make no steps, and a
request whose messages disagree with the stream keeps them with `differs` (so does a saved call whose args or result
do; a response naming another model than its request says so in `differs`, unless the request named a Volcengine
endpoint id: then that id is the loop's `endpoint` and its `model` the response's) (`ingest.chat.tarko_requests`).
"""

from __future__ import annotations

import base64
import posixpath
import re
from typing import Iterator

from ingest.chat import tarko_requests, tarko_snapshots
from ingest.chat.tarko_snapshots import STREAM
from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.search import episode_domain
from ingest.source import Source, SourceError, json_lines, parse_json
from ingest.tools import dumps
from ingest.times import parse_time
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "agent_tars"
VERSION = "6"
INFO = FormatInfo(
    group=None, rank=306, domains=('mcp', 'search', 'web'), platform="linux",
    summary="Agent TARS / tarko event streams (`event-stream.jsonl` snapshots, a run saved per loop read once with "
            "its loops' model requests and tool calls; the agent UI's `trace.jsonl`)",
    producer="Agent TARS / tarko's event stream (bytedance/UI-TARS-desktop `multimodal/`)",
    versions="the streams of the repository's snapshot tests and its agent-ui-cli example (2025)",
    proof=("four real Apache-2.0 streams of bytedance/UI-TARS-desktop (the agent-ui-cli example: thinking, a "
           "JupyterCI call and its result, the answer; a research snapshot: a web search and a page visit with its "
           "screenshot, then the answer; two runs saved per loop: one whose loops the whole run holds, one whose "
           "later loops another model recorded, the first with its loops' model requests and responses, both with their loops' saved tool calls) are "
           "goldens read against the raw files "
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
    millisecond `timestamp`. Of a run saved per loop, the last snapshot (`members`: the earlier ones)."""
    found = [p for p in files if p.endswith((".json", ".jsonl")) and _looks(head(p))]
    held = {p for run in tarko_snapshots.runs(found).values() for p in run[:-1]}
    return [p for p in found if p not in held]


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The earlier snapshots of a run saved per loop that the unit, its last, reads with it, and the model
    requests and responses saved in those loop folders (`ingest.chat.tarko_requests`)."""
    snapshots = tarko_snapshots.runs([p for p in files if p.endswith("/" + STREAM) and _looks(head(p))])
    requests: dict[str, list[tuple[int, str]]] = {}
    for path in files:
        if (place := tarko_requests.LOOP_FILE.match(path)) and tarko_requests.looks(head(path), path):
            requests.setdefault(place["run"], []).append((int(place["n"]), path))
    out = {}
    for folder, run in snapshots.items():
        last = tarko_snapshots.run_of(run[-1])[1]
        beside = [p for n, p in sorted(requests.get(folder, [])) if last is None or n <= last]
        if run[-1] in found and len(run) + len(beside) > 1:
            out[run[-1]] = run[:-1] + beside
    return out


def _looks(start: bytes) -> bool:
    return start.lstrip()[:1] in (b"{", b"[") and bool(_EVENT.search(start)) and bool(_TIMESTAMP.search(start))


def _events(data: bytes, where: str, budgets) -> Iterator[dict | Rejected]:
    """The events of a JSON document (an array of them, or the agent UI's `{"events": [...]}`), whatever its name,
    or of each line of a JSON-lines file."""
    start = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    first = start.split(b"\n", 1)[0].strip()
    if start[:1] == b"[" or not first.endswith(b"}"):
        try:
            doc = parse_json(data, where, budgets)
        except SourceError as e:
            yield Rejected(e.rule, e.reason, where)
            return
        events = doc.get("events") if isinstance(doc, dict) else doc
        yield from (e for e in events if isinstance(e, dict)) if isinstance(events, list) else ()
        return
    for _, _, value in json_lines(data, where, budgets):
        if isinstance(value, (dict, Rejected)):
            yield value


def _earlier(source: Source) -> tuple[str, list[tuple[str, str, str]]]:
    """The unit's name in its run folder and, when it is a snapshot of a run saved per loop
    (`ingest.chat.tarko_snapshots`), the run's earlier snapshots: (name in the run folder, path, where), in loop
    order."""
    place = tarko_snapshots.run_of(source.path)
    if place is None:
        return posixpath.basename(source.path), []
    run, loop = place
    found = []
    for name in source.names_in(run):
        number = tarko_snapshots.LOOP_FOLDER.fullmatch(name)
        if number and (loop is None or int(number[1]) < loop) and STREAM in source.names_in(f"{run}/{name}"):
            path = f"{run}/{name}/{STREAM}"
            found.append((int(number[1]), f"{name}/{STREAM}", path, _where(source, path)))
    return STREAM if loop is None else f"loop-{loop}/{STREAM}", [f[1:] for f in sorted(found)]


def _where(source: Source, path: str) -> str:
    """A file beside the unit named as the unit is (its URI's folder)."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(source.uri),
                                             posixpath.relpath(path, posixpath.dirname(source.path))))


def _model_calls(source: Source) -> tuple[dict[int, dict], list[Rejected]]:
    """The model request, response and tool calls each loop folder of the unit's run holds (up to the unit's loop), by loop:
    what `ingest.chat.tarko_requests` reads of them, and their bad records."""
    place = tarko_snapshots.run_of(source.path)
    found: dict[int, dict] = {}
    bad: list[Rejected] = []
    for name in sorted(source.names_in(place[0])) if place else []:
        number = tarko_snapshots.LOOP_FOLDER.fullmatch(name)
        if not number or (place[1] is not None and int(number[1]) > place[1]):
            continue
        held = source.names_in(f"{place[0]}/{name}")
        for file in (tarko_requests.REQUEST, tarko_requests.RESPONSE, tarko_requests.TOOL_CALLS):
            path = f"{place[0]}/{name}/{file}"
            try:
                data = source.read_path(path) if file in held else b""
            except SourceError as e:
                bad.append(Rejected(e.rule, e.reason, _where(source, path)))
                continue
            if not tarko_requests.looks(data[:4096], file):  # what planning saw of it in `members`: not this run's
                continue
            if file == tarko_requests.RESPONSE:
                got, rows = tarko_requests.response(data, _where(source, path), source.budgets)
                found.setdefault(int(number[1]), {})["response"] = got
                bad.extend(rows)
                continue
            read = (tarko_requests.request if file == tarko_requests.REQUEST else tarko_requests.tool_calls)(
                data, _where(source, path), source.budgets)
            if isinstance(read, Rejected):
                bad.append(read)
            else:
                found.setdefault(int(number[1]), {})[
                    "request" if file == tarko_requests.REQUEST else "tool_calls"] = read
                if file == tarko_requests.REQUEST:
                    read["file"] = f"{name}/{file}"
    return found, bad


def _called(events: list[dict]) -> set:
    return {(e.get("toolCallId"), e.get("name")) for e in events if e.get("type") == "tool_call"}


def _ran_here(calls: dict[int, dict], loops: list[int], i: int, held: list, called: list[set]) -> dict[int, dict]:
    """The model calls of the loops whose snapshot episode `i` holds, and the saved tool calls episode `i`'s
    events hold (a loop's tool calls run after its snapshot: they may be another recording's, the one the run's
    later snapshot holds); a loop's tool calls no episode holds stay with its snapshot's."""
    def holder(n: int) -> int | None:
        ran = {(c.get("toolCallId"), c.get("name")) for c in calls[n]["tool_calls"]}
        heads = [k for k in range(len(held)) if held[k] is None]
        # an episode's calls are those of the snapshots it holds too
        return next((k for k in heads if ran <= set().union(*(called[j] for j in range(len(held))
                                                               if j == k or held[j] == k))), None)
    out = {}
    for n, loop in calls.items():
        keep = {k: v for k, v in loop.items() if k != "tool_calls"} if n in loops else {}
        if "tool_calls" in loop and (holder(n) == i or (holder(n) is None and n in loops)):
            keep["tool_calls"] = loop["tool_calls"]
        if keep:
            out[n] = keep
    return out


# a Volcengine Ark endpoint id in the forms its docs give (BytePlus ModelArk, "Inference endpoints"): a custom
# endpoint `ep-<yyyymmddhhmmss>-<suffix>`, a preconfigured one (a model id's own endpoint) `ep-m-<...>-<suffix>`. A
# request may name the endpoint, whose response names the model behind it. (A batch endpoint, `ep-bi-`, serves the
# batch API alone: no chat request names one.)
ENDPOINT_ID = re.compile(r"^ep-(?:m-)?\d{14}-[0-9a-z]+$")


def _model_note(calls: dict[int, dict], loops: list[int], events: list[dict]) -> dict:
    """The env an episode gains from its loops' model requests and responses: each loop's (`requests`; a request's
    messages kept with `differs` where they disagree with the episode's events) and the tools declared to the
    model that no call event of the stream defines (`declared_tools`, by name, as the first loop declaring one
    wrote it; `tools` holds the called ones' definitions)."""
    requests, declared = [], {}
    defined = {e.get("name") for e in events if e.get("type") == "tool_call" and isinstance(e.get("tool"), dict)}
    for n in (n for n in loops if n in calls):
        item: dict = {"loop": n}
        if sent := calls[n].get("request"):
            for tool in sent["declared"]:
                if (name := (tool.get("function") or tool).get("name")) not in defined:
                    declared.setdefault(str(name), tool)
            item.update({k: v for k, v in sent.items() if k not in ("messages", "declared")})
            if differs := tarko_requests.compare(sent, events):
                item.update({"differs": differs, "messages": sent["messages"]})
        if "response" in calls[n]:
            item["response"] = calls[n]["response"]
            said, asked = item["response"].get("model"), item.get("model")
            if said and asked and said != asked and ENDPOINT_ID.match(asked):
                # the request named the endpoint, its response the model behind it: each in its own field
                item["endpoint"], item["model"] = asked, said
            elif said and asked and said != asked:
                item.setdefault("differs", []).append(f"the response names model {said!r}, the request {asked!r}")
        if "tool_calls" in calls[n]:
            item["tool_calls"] = tarko_requests.compare_calls(calls[n]["tool_calls"], events)
        requests.append(item)
    return {k: v for k, v in (("requests", requests), ("declared_tools", declared)) if v}


def _beside(source: Source, path: str, where: str) -> list | None:
    """An earlier snapshot's events and bad lines; None when it is no event stream (what planning saw of it in
    `units`: a file of another kind is not this run's)."""
    try:
        data = source.read_path(path)
    except SourceError as e:
        return [Rejected(e.rule, e.reason, where)]
    return list(_events(data, where, source.budgets)) if _looks(data[:4096]) else None


def read(source: Source) -> Iterator[Episode | Rejected]:
    name, earlier = _earlier(source)
    # (name, path, where), the events' digests and the called tools' (id, name) of each snapshot read
    snapshots, digests, called = [], [], []
    for rel, path, where in earlier:
        # only the digests are kept: the snapshots of a run hold its first events once a loop, so they are read
        # again below only where one is an episode of its own
        if (events := _beside(source, path, where)) is not None:
            yield from (e for e in events if isinstance(e, Rejected))
            snapshots.append((rel, path, where))
            digests.append(tarko_snapshots.digests([e for e in events if isinstance(e, dict)]))
            called.append(_called([e for e in events if isinstance(e, dict)]))
    own = list(_events(source.read_bytes(), source.uri, source.budgets))
    yield from (e for e in own if isinstance(e, Rejected))
    own = [e for e in own if isinstance(e, dict)]
    calls, bad = _model_calls(source)
    yield from bad
    if not snapshots:
        yield from _episode(own, source, source.uri, _model_note(calls, sorted(calls), own), "")
        return
    snapshots.append((name, source.path, source.uri))
    digests.append(tarko_snapshots.digests(own))
    called.append(_called(own))
    held = tarko_snapshots.holders(digests)
    last = len(snapshots) - 1
    apart = [snapshots[i][0] for i in range(last) if held[i] is None]
    # the episode each snapshot is read with: a loop's model call goes with its snapshot's, or with the run's last
    owner = {snapshots[k][0]: k if held[k] is None else held[k] for k in range(last + 1)}
    for i, (rel, path, where) in enumerate(snapshots):
        if held[i] is not None:
            continue
        # an earlier snapshot read to no event (its bad lines are rows of their own) holds nothing to name
        note: dict = {"snapshots": [snapshots[k][0] for k in range(i) if held[k] == i and digests[k]] + [rel]}
        if i < last:
            note["not_in_later_snapshot"] = {
                "snapshot": name, "differs_at_event": tarko_snapshots.first_difference(digests[i], digests[last]),
                "why": "the run's later snapshots do not open with this one's events (compared as the agent's "
                       "snapshot test compares them: ids and times aside), so it is an episode of its own"}
            events = [e for e in _beside(source, path, where) or [] if isinstance(e, dict)]
        else:
            note.update({"earlier_snapshots_apart": apart} if apart else {})
            events = own
        loops = [n for n in sorted(calls) if owner.get(f"loop-{n}/{STREAM}", last) == i]
        note.update(_model_note(_ran_here(calls, loops, i, held, called), sorted(calls), events))
        yield from _episode(events, source, where, note, "" if i == last else rel.split("/")[0])


def _episode(events: list[dict], source: Source, where: str, note: dict, loop: str) -> Iterator[Episode | Rejected]:
    """One snapshot's events as an episode (`note`: how it stands among its run's snapshots, kept in env);
    `loop` names an earlier snapshot read apart from the run's last, in its key."""
    env: dict = {"events": [], "images": [], "tools": {}, "streamed": 0, "raw_content": []}
    out: list[Message] = []
    problems: list[Rejected] = []
    state = {"thinking": [], "model": None, "ended": None, "called": set(), "where": where}
    for event in events:
        _event(event, out, env, state, source, problems)
    yield from problems
    if not out:
        return
    env = {k: v for k, v in env.items() if v} | note
    last = next((m for m in reversed(out) if m.role in ("assistant", "tool")), None)
    answered = state["ended"] is not None and last is not None and last.role == "assistant" and not last.tool_calls
    tools = [c.name for m in out for c in m.tool_calls]
    key = " ".join(filter(None, (str(env.get("session", {}).get("sessionId") or ""), loop)))
    yield from records(out, Run(key=key, domain=episode_domain(tools, "mcp"), platform="linux", agent=state["model"],
                                terminated=answered, env={"agent_tars": env}), where)


def _event(event: dict, out: list, env: dict, state: dict, source: Source, problems: list) -> None:
    kind, where = event.get("type"), f"{state['where']}: event {event.get('id')}"
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
                                     "to write; kept raw in env.agent_tars.events", state["where"],
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
