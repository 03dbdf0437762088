"""Chat-message lists in any JSON or JSONL document, found by their structure: the reader of last resort.

Every named reader comes first (the `ingest-all` order puts this one last): this one reads what none of them
claims. It claims a `.json` / `.jsonl` / `.ndjson` file whose first 4 KiB hold a chat message marker (a
`"role": "user"/"assistant"/...` pair, a Responses or LangChain / AutoGen `type`, a Gemini `functionCall`);
whether the file really holds a conversation is decided when it is read, and a file it finds none in is
passed on and reported (`ignored_inputs`), never an empty episode.

**Where lists are found.** The document (each line of a JSONL file) is walked to depth 16: every list whose
items are chat messages of one shape (`ingest.chat.shapes`: OpenAI Chat Completions, OpenAI Responses items,
Anthropic Messages, Gemini contents, LangChain, AutoGen, smolagents' `write_memory_to_messages()`) is one
episode, whatever holds it: the top level, a wrapper key (`messages`, `traj`, `history`, `contents`,
`input`...), one per record of an array, one per line. A JSONL file whose lines are themselves messages of one
shape is one list. A list found is not searched further.

**What each episode keeps.** Key: the list's path in the document (`[3].traj`, `simulations[0].messages`;
JSONL: `line 4: messages`). `env["chat_shape"]`: `shape`, `path`, and where the outcome and reward came from
(`outcome_from`, `reward_from`). `env["record"]`: the wrapper's other fields (the object holding the list:
task ids, metadata, scores, usage), as they are; `env["around"]`: the plain fields (text, numbers) of the
objects around the wrapper, by path (a saved state's `type` and `version`). The task is the first user message; the agent the first model
a message names, else the wrapper's `model` / `agent` string.

**Outcome and reward** come from the wrapper, then from its nested objects named `reward_info`, `info`,
`result`, `results`, `evaluation`, `eval`, `metrics`, `grade` (two levels at most), first found:
- reward: a number under `reward`, `score`, `total_reward`, `final_reward`;
- outcome: a boolean under `success`, `resolved`, `passed`, `pass` (Toolathlon's trajectories), `is_success`,
  `solved`, `correct` (true: success, false: failure), else a string `outcome` / `status` that is success /
  failure; else from the reward: >= 1 success, <= 0 failure, between unknown.

**Domain**, first found: a computer-use run (Anthropic `computer` tool, OpenAI `computer_call`) is GUI: `os`, or
`web` / `android` when the computer tool declares that environment (its display size, from the tool definition in
the record's `tools`, normalizes the coordinates); a domain of the schema's vocabulary the record states in a
`domain` field (the wrapper's, else one of the objects around it); a run with shell commands or code (a smolagents
CodeAgent's) is `terminal`; a run that mostly searches is `search`; any other tool-calling conversation is `mcp`
(tool calls with JSON results), and so is one whose record declares `tools` it did not call. A conversation that
calls and declares no tool and states no domain (a chat history of questions and answers) is `mcp` by default:
the tool-calling domain, whose episodes hold the agent's answers to a person too (tau-bench's). Where the steps do
not show the domain, `env["chat_shape"]["domain_from"]` says where it came from (`record.domain`, `record.tools`,
or `default: ...`), so a default is never taken for evidence. Platform: `browser` / `android` for a stated `web` /
`android`, else `linux` for text domains (the log does not say).

**Ending.** The run ended (its last step terminal) when the log's last model turn or tool result is the model's
answer: a turn with text and no tool call, after the last tool result (a person's message after it changes
nothing), as the chat-log readers on `ingest.transcript` decide it; or when it is the result of a call that
handed the user over to a person (`transfer_to_human_agents`: tau-bench ends its trials there), the tool named in
`env["chat_shape"]["ended_by"]`; else only when its last action is `done`. A log that stops on any other tool
call or tool result is cut, not ended.
"""

from __future__ import annotations

import json
import re
from typing import Iterator

from ingest.chat import computer_use
from ingest.chat.frameworks import autogen, langchain
from ingest.chat.messages import Context, anthropic, gemini, guarded, openai_chat
from ingest.chat.responses import responses
from ingest.chat.smolagents_messages import messages as smolagents_messages
from ingest.chat.shapes import item_shape, list_shape
from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.search import episode_domain
from ingest.source import Source, SourceError, parse_json, text_lines
from ingest.transcript import Message, Run, episode, records
from schemas.v1 import DOMAINS

FORMAT = "chat_shape"
VERSION = "7"
INFO = FormatInfo(
    group=None, rank=1000, domains=('mcp', 'swe', 'terminal', 'os', 'web', 'android'), platform="varies",
    summary=("chat-message lists in any JSON / JSONL no named reader claims, read by their shape (`chat_shape`, tried"
             " last): OpenAI Chat Completions and Responses items, Anthropic Messages, Gemini contents, LangChain and"
             " AutoGen messages, smolagents' memory as messages, at the top level, under a wrapper key, one per "
             "record or one per line (tau-bench results, agent frameworks' saved histories); computer-use calls as "
             "GUI actions"),
    producer=("any agent that saves chat-message lists (tau-bench results, OpenAI / Anthropic / Gemini / LangChain / "
              "AutoGen message histories); AutoGen AgentChat run at test time"),
    versions=("tau-bench (real results of gpt-4o, golden); langchain-core 0.3.86, 1.8.0; anthropic 2.17.0, openai "
              "3.63.0, google-genai 3.6.1; autogen-agentchat 0.4.9.3, 0.7.5 (run here)"),
    proof=("a real tau-bench results excerpt (sierra-research/tau-bench, MIT: 3 of 200 trials; the whole file reads "
           "as 200 episodes, 84 rewarded) is a golden, and real unlicensed AutoGen AgentChat histories, a saved agent"
           " state and two saved team states (the manager's thread and each agent's model context, an episode each) "
           "in `../shared/samples` (goldens), and so are two Toolathlon trajectories its viewer serves "
           "(claude-4.5-sonnet on MCP email and calendar tools, its `pass` the outcome); AutoGen AgentChat 0.4.9.3 "
           "and 0.7.5 run an AssistantAgent with a tool, "
           "alone and in a RoundRobinGroupChat, against the scripted model server: its `result.messages` and saved "
           "agent and team states hold every scripted call and result in order; each shape's documented forms, "
           "computer use (Anthropic `computer`, OpenAI `computer_call`) and the lists that only look like chats are "
           "hand-made edge cases (`tests/ingest/chat/`); each langchain-core release in its own venv saves a "
           "tool-calling history with `messages_to_dict` (parallel calls, an error result) and its "
           "`messages_from_dict` is the oracle for every call, argument and result "
           "(`tests/ingest/chat/test_langchain_producer.py`); the Anthropic, OpenAI (Responses) and Gemini SDKs each "
           "run an agent loop against the scripted model server and save the conversation as their own types dump "
           "it, the loop and the server being the oracle (`tests/ingest/chat/test_sdk_histories_producer.py`)"),
)

MAX_DEPTH = 16
_PLATFORMS = {"web": "browser", "android": "android"}  # a stated domain's platform; the text domains: linux
# no tool called, none declared, no domain stated: a conversation with a person, kept in the tool-calling domain
# (whose episodes hold the agent's answers to the person too: tau-bench's) and said to be a default
DEFAULT_DOMAIN_FROM = "default: no tool called or declared, no domain stated"
_EXTENSIONS = (".json", ".jsonl", ".ndjson")
_MARKER = re.compile(
    rb'"role"\s*:\s*"(?:user|assistant|system|tool|model|developer|function)"'
    rb'|"type"\s*:\s*"(?:function_call|function_call_output|computer_call|human|ai|TextMessage|ToolCallRequestEvent'
    rb'|AssistantMessage|UserMessage)"'
    rb'|"(?:functionCall|functionResponse)"\s*:')
REWARD_KEYS = ("reward", "score", "total_reward", "final_reward")
SUCCESS_KEYS = ("success", "resolved", "passed", "pass", "is_success", "solved", "correct")
OUTCOME_KEYS = ("outcome", "status")
NESTED_RESULT_KEYS = ("reward_info", "info", "result", "results", "evaluation", "eval", "metrics", "grade")
_PER_ITEM = {"openai_chat": openai_chat, "anthropic": anthropic, "gemini": gemini, "langchain": langchain}
_PER_LIST = {"openai_responses": responses, "autogen": autogen,
             "smolagents": lambda ctx, items, where: smolagents_messages(items, where)}


def units(files: list[str], head) -> list[str]:
    """JSON / JSONL files whose first 4 KiB hold a chat-message marker (a `role` of a chat API, a Responses,
    LangChain or AutoGen message `type`, a Gemini `functionCall`)."""
    found = []
    for path in files:
        if path.endswith(_EXTENSIONS):
            start = head(path).lstrip(b"\xef\xbb\xbf \t\r\n")
            if start[:1] in (b"{", b"[") and _MARKER.search(start):
                found.append(path)
    return found


def find_lists(doc, path: str = "", holder: dict | None = None, depth: int = 0, outer: tuple = ()):
    """(path, shape, items, the object holding the list, the objects around that one as (path, object)) of
    every chat-message list in `doc`."""
    if depth > MAX_DEPTH:
        return
    if isinstance(doc, list):
        shape = list_shape(doc)
        if shape:
            yield path, shape, doc, holder, outer
            return
        for i, item in enumerate(doc):
            if isinstance(item, (list, dict)):
                yield from find_lists(item, f"{path}[{i}]", None, depth + 1, outer)
    elif isinstance(doc, dict):
        for key, value in doc.items():
            if isinstance(value, list):
                yield from find_lists(value, f"{path}.{key}" if path else str(key), doc, depth + 1, outer)
            elif isinstance(value, dict):
                yield from find_lists(value, f"{path}.{key}" if path else str(key), None, depth + 1,
                                      outer + ((path, doc),))


def _around(outer: tuple) -> dict:
    """The plain fields (text, numbers, booleans) of the objects around a list's holder, by their path: the
    saved state's type and version, a run's ids."""
    found = {}
    for path, obj in outer:
        plain = {k: v for k, v in obj.items() if v is None or isinstance(v, (str, int, float, bool))}
        if plain:
            found[path or "(the document)"] = plain
    return found


def _first(obj: dict, keys: tuple[str, ...], kind, prefix: str):
    for key in keys:
        value = obj.get(key)
        if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
            return value, f"{prefix}{key}"
    return None, None


def _candidates(holder: dict, prefix: str, depth: int = 0):
    yield holder, prefix
    if depth < 2:
        for key in NESTED_RESULT_KEYS:
            if isinstance(holder.get(key), dict):
                yield from _candidates(holder[key], f"{prefix}{key}.", depth + 1)


def outcome_of(holder: dict | None, prefix: str) -> tuple[str, float | None, dict]:
    """(outcome, reward, {"outcome_from", "reward_from"}) from the object holding a list (module docstring)."""
    if not holder:
        return "unknown", None, {}
    reward = success = status = None
    where: dict = {}
    for obj, at in _candidates(holder, prefix):
        if reward is None:
            reward, where["reward_from"] = _first(obj, REWARD_KEYS, (int, float), at)
        if success is None:
            success, where["outcome_from"] = _first(obj, SUCCESS_KEYS, bool, at)
        if status is None:
            status, found = _first(obj, OUTCOME_KEYS, str, at)
            status, status_from = (status, found) if status in ("success", "failure") else (None, None)
    where = {k: v for k, v in where.items() if v}
    if success is not None:
        return ("success" if success else "failure"), reward, where
    if status is not None:
        return status, reward, where | {"outcome_from": status_from}
    if reward is not None:
        outcome = "success" if reward >= 1 else "failure" if reward <= 0 else "unknown"
        return outcome, float(reward), where | ({"outcome_from": where["reward_from"]} if outcome != "unknown" else {})
    return "unknown", None, where


def _tools_environment(holder: dict | None, ctx: Context) -> str | None:
    """The computer-use tool's declared display (-> ctx.screen) and environment, from the record's `tools`."""
    for tool in (holder or {}).get("tools") or []:
        if not isinstance(tool, dict):
            continue
        width = tool.get("display_width_px", tool.get("display_width"))
        height = tool.get("display_height_px", tool.get("display_height"))
        if isinstance(width, int) and isinstance(height, int):
            ctx.screen, ctx.declared = (width, height), True
            return tool.get("environment") if isinstance(tool.get("environment"), str) else None
    return None


def messages_of(shape: str, items: list, ctx: Context, where: str) -> list[Message]:
    """The transcript messages of one list; an item no shape knows is kept raw (the core warns), an item whose
    fields have the wrong types is a row in `ctx.problems`."""
    if shape in _PER_LIST:
        return _PER_LIST[shape](ctx, items, where)
    out = []
    for i, item in enumerate(items):
        found = item_shape(item)
        if found is not None:
            out.extend(guarded(ctx, _PER_ITEM.get(found, _PER_ITEM.get(shape)), item, f"{where}[{i}]"))
            continue
        at = f"{where}[{i}]"
        ctx.unknown.append({"where": at, "item": item})
        ctx.problems.append(Rejected("unknown_content", f"{at}: not a {shape} message; kept raw in "
                                     "env.chat_shape.unknown_items", at, record_id=at.rsplit(": ", 1)[-1]))
    return out


def _domain(ctx: Context, environment: str | None, kinds: list[str], tools: list, holder: dict | None,
            around: dict) -> tuple[str, str, str | None]:
    """(domain, platform, where the domain came from when the steps do not show it) (module docstring)."""
    if ctx.gui:
        return (*computer_use.domain_of(environment), None)
    said = _said_domain(holder, around)
    if said:
        domain, at = said
        return domain, _PLATFORMS.get(domain, "linux"), at
    if "command" in kinds or "code" in kinds:  # shell commands, or code an executor ran (a smolagents CodeAgent)
        return "terminal", "linux", None
    if any(tools):
        return episode_domain(tools, "mcp"), "linux", None
    declared = (holder or {}).get("tools")
    if isinstance(declared, list) and declared:
        return "mcp", "linux", "record.tools"
    return "mcp", "linux", DEFAULT_DOMAIN_FROM


def _said_domain(holder: dict | None, around: dict) -> tuple[str, str] | None:
    """A domain of the schema's vocabulary that the record states in a `domain` field (the list's holder first,
    then the objects around it), with its path."""
    if isinstance(holder, dict) and holder.get("domain") in DOMAINS:
        return holder["domain"], "record.domain"
    for path, plain in around.items():
        if plain.get("domain") in DOMAINS:
            return plain["domain"], f"{path}.domain"
    return None


def answered(messages: list[Message]) -> bool:
    """Whether the log shows the run ended: its last model turn or tool result is the model's answer (a turn
    with text and no tool call), after the last tool result. A person's message after it leaves it so (the answer
    was given; a question left unanswered follows no answer)."""
    last = next((m for m in reversed(messages) if m.role in ("assistant", "tool")), None)
    return last is not None and last.role == "assistant" and not last.tool_calls and bool(last.text or last.action)


# tools whose call hands the user over to a person: the episode ends with its result (tau-bench's environments
# list it in `terminate_tools` and end the trial there; tau2's user simulator then answers `###TRANSFER###`)
HANDOVER_TOOLS = frozenset({"transfer_to_human_agents"})


def handed_over(messages: list[Message]) -> str | None:
    """The tool that handed the user over to a person (`HANDOVER_TOOLS`) when the log's last model turn or tool
    result is that call's result, else None."""
    last = next((m for m in reversed(messages) if m.role in ("assistant", "tool")), None)
    if last is None or last.role != "tool":
        return None
    name = last.tool_name or next((c.name for m in messages for c in m.tool_calls
                                   if c.id is not None and c.id == last.tool_call_id), None)
    return name if name in HANDOVER_TOOLS else None


def list_records(source: Source, shape: str, items: list, holder: dict | None, path: str, key: str, where: str,
                 env: dict | None = None, agent: str | None = None, around: dict | None = None,
                 outcome: str | None = None) -> Iterator[Episode | Rejected]:
    """What the reader yields for one chat-message list (`holder`: the object holding it, whose other fields
    go to env["record"]; `around`: the plain fields of the objects around it, by path); `env` adds to the
    episode's env, `agent` names the agent when the record does not, `outcome` is the run's when a file beside
    the list decides it (a verifier's verdict)."""
    ctx = Context(lambda data, media_type: source.put_blob(data, media_type, source.uri))
    environment = _tools_environment(holder, ctx)
    messages = messages_of(shape, items, ctx, where)
    yield from ctx.problems
    found_outcome, reward, found = outcome_of(holder, "")
    outcome = outcome or found_outcome
    list_key = path.rsplit(".", 1)[-1] if holder is not None else None
    env = {"chat_shape": {"shape": shape, "path": path or "(the document)", **found}, **(env or {})}
    if ctx.unknown:
        env["chat_shape"]["unknown_items"] = ctx.unknown
    if holder:
        env["record"] = {k: v for k, v in holder.items() if k != list_key}
    agent = (holder or {}).get("model") or (holder or {}).get("agent") or agent
    draft, _ = episode(messages, Run())
    domain, platform, domain_from = _domain(ctx, environment, [s.action.kind for s in draft.steps],
                                            [s.action.tool_name for s in draft.steps], holder, around or {})
    if domain_from:
        env["chat_shape"]["domain_from"] = domain_from
    # ended on the model's answer or on handing the user over (the tool kept in env): terminal; else (None) only
    # when the last action is `done`
    handover = handed_over(messages)
    if handover:
        env["chat_shape"]["ended_by"] = handover
    yield from records(messages, Run(key=key, domain=domain, platform=platform, outcome=outcome, reward=reward,
                                     agent=agent if isinstance(agent, str) else None,
                                     terminated=True if answered(messages) or handover else None, env=env), where)


def _documents(source: Source, name: str) -> Iterator[tuple[str, object] | Rejected]:
    """(key prefix, document) of a JSON file, or of each line of a JSONL file; a JSONL file whose lines are
    messages of one shape is one document (the list of its lines), and one that holds a single value written over
    many lines is that document (`_whole_values`)."""
    data = source.read_bytes()
    if not source.path.endswith((".jsonl", ".ndjson")):
        try:
            yield "", parse_json(data, name, source.budgets)
        except SourceError as e:
            yield Rejected(e.rule, e.reason, name)
        return
    values = _whole_values(data, name, source)
    if isinstance(values, Rejected):
        yield values
        return
    if values is not None:
        for i, value in enumerate(values):
            yield (f"value {i + 1}: " if len(values) > 1 else ""), value
        return
    lines = []
    for no, line, problem in text_lines(data, name, source.budgets):
        if problem:
            yield Rejected("parse_error", problem, name, line=no)
        elif line and line.strip():
            try:
                lines.append((no, parse_json(line.encode(), f"{name}:{no}", source.budgets)))
            except SourceError as e:
                yield Rejected(e.rule, e.reason, name, line=no, snippet=line[:300])
    if list_shape([obj for _, obj in lines]):
        yield "", [obj for _, obj in lines]
        return
    for no, obj in lines:
        yield f"line {no}: ", obj


def _whole_values(data: bytes, name: str, source: Source) -> list | Rejected | None:
    """The values of a JSON-lines-named file that holds JSON written over many lines (a request, an event list or
    a stream of responses saved pretty-printed under a `.jsonl` name, one value after another): its first line is
    no whole value and the whole file is one value or a sequence of them. None for a real JSON-lines file (its
    lines are read one by one, a bad line a row of its own); a row saying why for a file that is neither (console
    output with JSON in it: one row, not one per line)."""
    start = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    first = start.split(b"\n", 1)[0].strip()
    if start[:1] not in (b"{", b"[") or first.endswith((b"}", b"]")):
        return None
    try:
        return [parse_json(data, name, source.budgets)]
    except SourceError:
        pass
    text, decoder, values, at = start.decode("utf-8", "replace"), json.JSONDecoder(), [], 0
    try:  # values one after another (what `jq` or a streamed client's log writes)
        while at < len(text):
            value, at = decoder.raw_decode(text, at)
            values.append(value)
            at = len(text) - len(text[at:].lstrip())
        return values
    except (ValueError, RecursionError) as e:  # nesting past the interpreter's depth: not read, said why
        if _has_whole_line(start):  # a JSON-lines file whose first line is damaged: read line by line
            return None
        return Rejected("unknown_content", f"{name}: neither JSON lines (line 1 opens a value written over several"
                        f" lines) nor JSON values one after another ({e}, after {len(values)} value(s)); not read",
                        name, snippet=text[at:at + 300])


def _has_whole_line(data: bytes, lines: int = 50) -> bool:
    """Whether one of the first `lines` lines after the first is a whole JSON object (JSON lines), which no line
    of JSON written over many lines is."""
    for line in data.split(b"\n", lines + 1)[1:lines + 1]:
        line = line.strip()
        if line.startswith(b"{") and line.endswith(b"}") and len(line) > 2:
            try:
                if isinstance(json.loads(line), dict):
                    return True
            except (ValueError, RecursionError):
                continue
    return False


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = source.uri
    for found in _documents(source, name):
        if isinstance(found, Rejected):
            yield found
            continue
        prefix, doc = found
        for path, shape, items, holder, outer in find_lists(doc):
            key = f"{prefix}{path}" if (prefix or path) else ""
            around = _around(outer)
            yield from list_records(source, shape, items, holder, path, key, f"{name}: {key or 'the document'}",
                                    env={"around": around} if around else None, around=around)
