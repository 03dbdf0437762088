"""What a span says about a model call or a tool call, in the attribute conventions agent tracers write.

- **OpenTelemetry GenAI semantic conventions**: `gen_ai.operation.name` (`chat`, `text_completion`,
  `generate_content` -> a model call; `execute_tool` -> a tool call; `invoke_agent` / `create_agent` -> an agent),
  `gen_ai.request.model` / `gen_ai.response.model`, `gen_ai.system_instructions`, `gen_ai.input.messages` /
  `gen_ai.output.messages` (JSON: `[{role, parts: [{type: text, content} | {type: tool_call, id, name, arguments}
  | {type: tool_call_response, id, response} | {type: reasoning, content} | ...]}]`), and the older event-based
  messages on span events (`gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`,
  `gen_ai.tool.message`, `gen_ai.choice` with `content` / `tool_calls` / `message` attributes, and the first
  conventions' `gen_ai.content.prompt` / `gen_ai.content.completion` events with `gen_ai.prompt` /
  `gen_ai.completion` JSON). Tool spans: `gen_ai.tool.name`, `gen_ai.tool.call.id`,
  `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, else Google ADK's own `gcp.vertex.agent.tool_call_args`
  / `gcp.vertex.agent.tool_response` (its placeholders read as not recorded, an MCP tool's `CallToolResult` as
  its text); agents: `gen_ai.agent.name`.
- **OpenInference**: `openinference.span.kind` (LLM, TOOL, AGENT; CHAIN and the others are not steps),
  `llm.model_name`, `llm.input_messages.N.message.{role, content, contents.M.message_content.text,
  tool_calls.M.tool_call.{id, function.name, function.arguments}, tool_call_id}`, `llm.output_messages...`;
  tools: `tool.name`, `input.value` (the arguments), `output.value` (the result).
- **OpenLLMetry** (Traceloop), the same flattened way: `gen_ai.prompt.N.{role, content, tool_call_id}`,
  `gen_ai.completion.N.{role, content, tool_calls.M.{id, name, arguments}}`.
- **OpenAI Chat Completions messages** (the Agents SDK's generation spans, the `gen_ai.prompt` JSON):
  `{role, content (a string or parts), tool_calls: [{id, function: {name, arguments}}], tool_call_id}`.

Messages come back as `ingest.transcript.Message`s; what a message carries beyond them is kept in `raw`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from ingest.chat.messages import content_text
from ingest.tools import dumps
from ingest.transcript import Message, ToolCall

# `call_llm`: any-agent's (and Google ADK's) name for a model call
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion", "call_llm"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})
_OPENINFERENCE_KINDS = {"LLM": "model", "TOOL": "tool", "AGENT": "agent"}
# smolagents' own roles (`MessageRole`): its memory re-rendered as a model's input writes each step's calls as a
# `tool-call` message (the calls as text, after the step's assistant text) and their observations as `tool-response`
_ROLES = {"system": "system", "developer": "system", "user": "user", "human": "user", "assistant": "assistant",
          "ai": "assistant", "model": "assistant", "tool": "tool", "function": "tool", "ipython": "tool",
          "tool-call": "assistant", "tool-response": "tool"}
_INDEX = re.compile(r"^\d+$")


@dataclass
class ModelTurn:
    """A model call: what it was sent, what it answered, and which model answered."""

    inputs: list[Message] = field(default_factory=list)
    outputs: list[Message] = field(default_factory=list)
    model: str | None = None


@dataclass
class ToolUse:
    """A tool's execution: the call and what it returned."""

    name: str | None
    call_id: str | None = None
    arguments: Any = None
    result: str | None = None
    is_error: bool | None = None


def name_of(value) -> str | None:
    """A name as text: tools and agents are looked up by name, so a name that is no string is kept as JSON text."""
    if value is None or isinstance(value, str):
        return value or None
    return dumps(value)


ADK_MERGED_TOOLS = "(merged tools)"


def span_kind(attrs: dict) -> str | None:
    """`model`, `tool` or `agent` for a span the conventions mark so, else None."""
    op = attrs.get("gen_ai.operation.name")
    op = op if isinstance(op, str) else None
    if op in MODEL_OPERATIONS:
        return "model"
    if op == "execute_tool":
        # Google ADK wraps calls the model made at once in one `execute_tool (merged)` span (tool name `(merged
        # tools)`, arguments `N/A`, the result the event holding every call's response) around each call's own
        # span: a wrapper, not a call
        return None if attrs.get("gen_ai.tool.name") == ADK_MERGED_TOOLS else "tool"
    if op in AGENT_OPERATIONS:
        return "agent"
    kind = _OPENINFERENCE_KINDS.get(str(attrs.get("openinference.span.kind", "")).upper())
    if kind:
        return kind
    if any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in attrs):
        return "model"  # OpenLLMetry's chat spans say it by their flattened messages
    return None


def text_of(value) -> str | None:
    """A result or content value as text: a string as it is, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return dumps(value)


def mcp_result(value):
    """An MCP tool's `CallToolResult` (`{"content": [...], "isError": ...}`, as a value or its JSON) as the text of
    its content parts, and whether it failed; any other value as it is, with None."""
    decoded = json_value(value)
    if isinstance(decoded, dict) and isinstance(decoded.get("content"), list) \
            and set(decoded) <= {"content", "isError"}:
        return content_text(decoded["content"]), bool(decoded.get("isError")) or None
    return value, None


def same_result(one: str | None, other: str | None) -> bool:
    """Whether two records of a tool's result say the same: equal as JSON where both are JSON, else as text."""
    if one == other or (one or "").strip() == (other or "").strip():
        return True
    try:
        return orjson.loads(one) == orjson.loads(other)
    except (orjson.JSONDecodeError, TypeError):
        return False


def json_value(value):
    """A JSON string decoded (attributes carry structures as JSON text); anything else as it is."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


# OpenAI Chat Completions messages --------------------------------------------------------------------------
def _content_text(content) -> tuple[str | None, list]:
    """A chat message's content as text, and the parts that are not text (kept raw)."""
    if content is None or isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        return text_of(content), []
    texts, other = [], []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict) and isinstance(part.get("content"), str) and part.get("type") == "text":
            texts.append(part["content"])
        else:
            other.append(part)
    return ("\n\n".join(texts) if texts else None), other


def chat_tool_call(call) -> ToolCall | None:
    if not isinstance(call, dict):
        return None
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    return ToolCall(id=text_of(call.get("id")), name=name_of(fn.get("name")), arguments=fn.get("arguments"),
                    raw=call)


def chat_message(msg, where: str) -> Message | None:
    """One Chat Completions message (also the Agents SDK's generation input / output items)."""
    if not isinstance(msg, dict):
        return None
    role = _ROLES.get(str(msg.get("role", "")).lower())
    if role is None and msg.get("type") == "function_call_output":
        role = "tool"
    if role is None:
        return Message(role=str(msg.get("role") or msg.get("type") or "unknown"), text=text_of(msg), raw=msg,
                       where=where)
    text, other = _content_text(msg.get("content", msg.get("output")))
    calls = [c for c in map(chat_tool_call, msg.get("tool_calls") or []) if c is not None]
    known = {"role", "content", "tool_calls", "tool_call_id", "name", "refusal", "annotations", "audio",
             "function_call", "reasoning_content"}
    extra = {k: v for k, v in msg.items() if k not in known and v is not None}
    if other:
        extra["content_parts"] = other
    reasoning = msg.get("reasoning_content") if isinstance(msg.get("reasoning_content"), str) else None
    return Message(role=role, text=text, tool_calls=calls, tool_call_id=text_of(msg.get("tool_call_id")),
                   tool_name=name_of(msg.get("name")) if role == "tool" else None,
                   reasoning=reasoning, raw=extra or None, where=where)


def chat_messages(value, where: str) -> list[Message]:
    value = json_value(value)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    return [m for i, item in enumerate(value) if (m := chat_message(item, f"{where}[{i}]")) is not None]


# GenAI semantic conventions: role + parts ------------------------------------------------------------------
def _part_message(role: str, parts: list, where: str, finish=None) -> list[Message]:
    texts, reasoning, calls, results, other = [], [], [], [], []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("content"), str):
            texts.append(part["content"])
        elif kind == "reasoning" and isinstance(part.get("content"), str):
            reasoning.append(part["content"])
        elif kind == "tool_call":
            calls.append(ToolCall(id=text_of(part.get("id")), name=name_of(part.get("name")),
                                  arguments=part.get("arguments"), raw=part))
        elif kind == "tool_call_response":
            results.append(Message(role="tool", text=text_of(part.get("response", part.get("result"))),
                                   tool_call_id=text_of(part.get("id")), where=where))
        else:
            other.append(part)
    out = []
    if role != "tool" or texts or calls or other:
        raw = {k: v for k, v in (("parts", other), ("finish_reason", finish)) if v}
        out.append(Message(role=role, text="\n\n".join(texts) if texts else None, tool_calls=calls,
                           reasoning="\n\n".join(reasoning) if reasoning else None, raw=raw or None, where=where))
    return out + results


def genai_messages(value, where: str) -> list[Message]:
    """`gen_ai.input.messages` / `gen_ai.output.messages` (a JSON string or a list of {role, parts})."""
    value = json_value(value)
    if not isinstance(value, list):
        return []
    out = []
    for i, msg in enumerate(value):
        if not isinstance(msg, dict):
            continue
        if not isinstance(msg.get("parts"), list):  # a chat message written in this attribute
            out.extend(chat_messages([msg], f"{where}[{i}]"))
            continue
        role = _ROLES.get(str(msg.get("role", "")).lower(), str(msg.get("role")))
        out.extend(_part_message(role, msg["parts"], f"{where}[{i}]", msg.get("finish_reason")))
    return out


def system_instructions(value, where: str) -> list[Message]:
    value = json_value(value)
    if isinstance(value, str):
        return [Message(role="system", text=value, where=where)]
    if isinstance(value, list):
        texts = [p.get("content") for p in value if isinstance(p, dict) and isinstance(p.get("content"), str)]
        return [Message(role="system", text="\n\n".join(texts), where=where)] if texts else []
    return []


# flattened lists (OpenInference, OpenLLMetry) -----------------------------------------------------------------
def unflatten(attrs: dict, prefix: str) -> dict:
    """`prefix.0.message.role = x` -> {"0": {"message": {"role": x}}}, for every key under `prefix.`."""
    tree: dict = {}
    start = prefix + "."
    for key, value in attrs.items():
        if not key.startswith(start):
            continue
        node, parts = tree, key[len(start):].split(".")
        for part in parts[:-1]:
            child = node.get(part)
            node = node.setdefault(part, {}) if not isinstance(child, dict) else child
            if not isinstance(node, dict):
                break
        else:
            node[parts[-1]] = value
    return tree


def _indexed(node) -> list:
    if not isinstance(node, dict):
        return []
    return [node[k] for k in sorted((k for k in node if _INDEX.match(k)), key=int)]


def _flat_call(node) -> ToolCall | None:
    call = node.get("tool_call", node) if isinstance(node, dict) else None
    if not isinstance(call, dict):
        return None
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    return ToolCall(id=text_of(call.get("id")), name=name_of(fn.get("name")), arguments=fn.get("arguments"),
                    raw=call)


def flat_messages(attrs: dict, prefix: str, where: str) -> list[Message]:
    out = []
    for i, node in enumerate(_indexed(unflatten(attrs, prefix))):
        msg = node.get("message", node) if isinstance(node, dict) else None
        if not isinstance(msg, dict):
            continue
        text = msg.get("content")
        if not isinstance(text, str):
            parts = [c.get("message_content", c) for c in _indexed(msg.get("contents"))]
            texts = [p.get("text") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
            text = "\n\n".join(texts) if texts else text_of(text)
        role = _ROLES.get(str(msg.get("role", "")).lower(), str(msg.get("role")))
        calls = [c for c in map(_flat_call, _indexed(msg.get("tool_calls"))) if c is not None]
        out.append(Message(role=role, text=text, tool_calls=calls, tool_call_id=text_of(msg.get("tool_call_id")),
                           tool_name=name_of(msg.get("name")) if role == "tool" else None, where=f"{where}.{i}"))
    return out


# a turn of a transcript written as text starts a line with its role (the roles the writer's chat messages hold)
_TURN = re.compile(r"^(system|developer|user|assistant|tool): ", re.MULTILINE)


def role_turns(text: str, least: int = 2) -> list[dict] | None:
    """The turns of a transcript written as text (`role: content`, one turn after another), or None: the text must
    open with a turn and hold `least` at least (two where the writer may as well have written a message as text,
    so that a user's message that merely starts with `user: ` stays text; one where it writes every message so)."""
    starts = list(_TURN.finditer(text))
    if len(starts) < least or not starts or starts[0].start() != 0:
        return None
    turns = []
    for start, end in zip(starts, [s.start() for s in starts[1:]] + [len(text)]):
        content = text[start.end():end].removesuffix("\n")
        role = start.group(1)
        if role == "assistant" and content == "None":  # the turn called tools, which the text does not name
            content = None
        turns.append({"role": role, "content": content})
    return turns


# span events (the older event-based conventions) -----------------------------------------------------------
_EVENT_ROLES = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


def _event_message(event: dict, where: str) -> list[Message]:
    name, attrs = event.get("name"), event.get("attributes")
    attrs = attrs if isinstance(attrs, dict) else {}
    if name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
        value = attrs.get("gen_ai.prompt", attrs.get("gen_ai.completion"))
        if isinstance(value, str) and value and json_value(value) is value:
            # OpenLit writes the prompt as text, each message `role: content` (one message too), and the
            # completion as the answer's text
            if name == "gen_ai.content.prompt":
                turns = role_turns(value, least=1) or [{"role": "user", "content": value}]
                return [Message(role=t["role"], text=t["content"], where=where) for t in turns]
            return [Message(role="assistant", text=value, where=where)]
        return chat_messages(value, where)
    body = json_value(attrs.get("gen_ai.event.content") or attrs.get("body"))
    body = body if isinstance(body, dict) else attrs
    if name == "gen_ai.choice":
        body = json_value(body.get("message", body))
        body = {**body, "role": "assistant"} if isinstance(body, dict) else {"role": "assistant", "content": body}
    else:
        body = {**body, "role": body.get("role") or _EVENT_ROLES[name]}
        if "id" in body and body["role"] == "tool":
            body["tool_call_id"] = body.get("tool_call_id", body["id"])
    body["tool_calls"] = json_value(body.get("tool_calls"))
    message = chat_message(body, where)
    return [message] if message else []


def event_messages(events: list[dict], where: str) -> tuple[list[Message], list[Message]]:
    """(inputs, outputs) written as span events."""
    inputs, outputs = [], []
    for i, event in enumerate(events):
        name = event.get("name")
        here = f"{where}.events[{i}]"
        if name in _EVENT_ROLES or name == "gen_ai.content.prompt":
            inputs.extend(_event_message(event, here))
        elif name in ("gen_ai.choice", "gen_ai.content.completion"):
            outputs.extend(_event_message(event, here))
    return inputs, outputs


# a span's model call and tool call -----------------------------------------------------------------------
def model_turn(attrs: dict, events: list[dict], where: str) -> ModelTurn:
    ev_in, ev_out = event_messages(events, where)
    inputs = (genai_messages(attrs.get("gen_ai.input.messages"), f"{where}.gen_ai.input.messages")
              or flat_messages(attrs, "llm.input_messages", f"{where}.llm.input_messages")
              or flat_messages(attrs, "gen_ai.prompt", f"{where}.gen_ai.prompt") or ev_in)
    outputs = (genai_messages(attrs.get("gen_ai.output.messages"), f"{where}.gen_ai.output.messages")
               or flat_messages(attrs, "llm.output_messages", f"{where}.llm.output_messages")
               or flat_messages(attrs, "gen_ai.completion", f"{where}.gen_ai.completion") or ev_out
               or any_agent_output(attrs, where))
    system = system_instructions(attrs.get("gen_ai.system_instructions"), f"{where}.gen_ai.system_instructions")
    # OpenLLMetry's LangChain instrumentation writes `unknown` where it found no model, and LangChain's own name
    # for it among the association properties
    model = next((m for m in (attrs.get("gen_ai.response.model"), attrs.get("gen_ai.request.model"),
                              attrs.get("llm.model_name"), attrs.get("traceloop.association.properties.ls_model_name"))
                  if isinstance(m, str) and m and m != "unknown"), None)
    return ModelTurn(inputs=system + inputs, outputs=outputs, model=model)


_USAGE_PREFIXES = ("gen_ai.usage.", "llm.token_count.")


def usage(attrs: dict) -> dict | None:
    """A model span's token counts as written (the GenAI conventions' `gen_ai.usage.*`, OpenInference's
    `llm.token_count.*`), None where it wrote none."""
    found = {k: v for k, v in attrs.items() if k.startswith(_USAGE_PREFIXES) and v is not None}
    return found or None


_OUTPUT_KEYS = ("gen_ai.output.messages", "gen_ai.output", "output.value")
_OUTPUT_PREFIXES = ("llm.output_messages.", "gen_ai.completion.")


def unread_output(attrs: dict):
    """A model span's output attributes, as written, where `model_turn` read no message from them (None where it
    wrote none): the episode keeps them raw (`ingest.traces.spans`)."""
    found = {k: v for k, v in attrs.items() if (k in _OUTPUT_KEYS or k.startswith(_OUTPUT_PREFIXES))
             and v not in (None, "", "[]", "{}", [], {})}
    return found or None


def any_agent_output(attrs: dict, where: str) -> list[Message]:
    """any-agent's `gen_ai.output` on a model span: text (`gen_ai.output.type` `text`), or JSON: the calls the model
    made (`[{"tool.name", "tool.args"}]`, before 1.0 OpenAI's `[{"function": {"name", "arguments"}, "id"}]`), or
    the agent's structured answer."""
    value = attrs.get("gen_ai.output")
    if value is None:
        return []
    decoded = json_value(value) if attrs.get("gen_ai.output.type") == "json" else value
    if isinstance(decoded, list) and decoded and all(isinstance(c, dict) and ("tool.name" in c or "function" in c)
                                                     for c in decoded):
        calls = [ToolCall(id=None, name=name_of(c.get("tool.name")), arguments=c.get("tool.args"), raw=c)
                 if "tool.name" in c else chat_tool_call(c) for c in decoded]
        return [Message(role="assistant", tool_calls=[c for c in calls if c is not None], where=where)]
    return [Message(role="assistant", text=value if isinstance(value, str) else dumps(value), where=where)]


def _called_with(arguments, parameters):
    """OpenInference's smolagents instrumentation writes a tool's `input.value` as the Python call it traced,
    `{"args": [...], "kwargs": {...}, "sanitize_inputs_outputs": ...}`: the arguments by name, positional ones
    named after the tool's `tool.parameters` in order (the span keeps the call as written)."""
    try:
        call = orjson.loads(arguments) if isinstance(arguments, str) else None
        names = list(orjson.loads(parameters)) if isinstance(parameters, str) else []
    except (ValueError, TypeError):
        return arguments
    if not (isinstance(call, dict) and set(call) <= {"args", "kwargs", "sanitize_inputs_outputs"}
            and isinstance(call.get("args"), list) and isinstance(call.get("kwargs"), dict)
            and len(call["args"]) <= len(names)):
        return arguments
    return {**dict(zip(names, call["args"])), **call["kwargs"]}


# what Google ADK writes in place of content it did not record: no function response (`<not specified>`), a value
# JSON could not hold, a merged span's arguments, and `{}` for both when content capture is off
_ADK_NOT_RECORDED = frozenset({"<not specified>", "<not serializable>", "N/A"})


def adk_tool_content(attrs: dict) -> tuple:
    """Google ADK's own record of a tool's execution (`gcp.vertex.agent.tool_call_args`, `...tool_response`: the
    function response as JSON, a result that is no object wrapped as `{"result": ...}`), None where ADK wrote a
    placeholder: `{}` as the response is content capture off (arguments `{}` then say nothing either)."""
    arguments = attrs.get("gcp.vertex.agent.tool_call_args")
    result = attrs.get("gcp.vertex.agent.tool_response")
    if isinstance(result, str) and result.strip() in _ADK_NOT_RECORDED | {"{}"}:
        if result.strip() == "{}" and isinstance(arguments, str) and arguments.strip() == "{}":
            arguments = None
        result = None
    if isinstance(arguments, str) and arguments.strip() in _ADK_NOT_RECORDED:
        arguments = None
    return _unescape_html(arguments), _unescape_html(result)


# Go's encoding/json (the Go ADK) writes `<`, `>` and `&` inside strings as `\u003c`, `\u003e`, `\u0026`: the same
# JSON value, but a tool's output would read `\u003cnone\u003e` where the tool printed `<none>`
_GO_HTML_ESCAPES = {"\\u003c": "<", "\\u003e": ">", "\\u0026": "&"}


def _unescape_html(value):
    if not isinstance(value, str) or "\\u00" not in value or value.lstrip()[:1] not in ("{", "["):
        return value  # only inside a JSON document, where the escape is JSON's
    for escaped, char in _GO_HTML_ESCAPES.items():
        value = re.sub(r"(?<!\\)((?:\\\\)*)" + re.escape(escaped), lambda m, c=char: m.group(1) + c, value)
    return value


def tool_use(attrs: dict, span_name: str, error: str | None) -> ToolUse:
    name = name_of(attrs.get("gen_ai.tool.name") or attrs.get("tool.name"))
    if not name:
        name = span_name.removeprefix("execute_tool ").strip() or None
    call_id = attrs.get("gen_ai.tool.call.id", attrs.get("tool_call.id"))
    # any-agent writes `gen_ai.tool.args` and the result as `gen_ai.output`; OpenInference's smolagents
    # instrumentation the traced Python call (`_called_with`)
    called = attrs.get("input.value", attrs.get("gen_ai.tool.args"))
    arguments = attrs.get("gen_ai.tool.call.arguments", _called_with(called, attrs.get("tool.parameters")))
    result = attrs.get("gen_ai.tool.call.result", attrs.get("output.value", attrs.get("gen_ai.output")))
    adk_arguments, adk_result = adk_tool_content(attrs)
    arguments = adk_arguments if arguments is None else arguments
    failed = None
    if result is None and adk_result is not None:
        result, failed = mcp_result(adk_result)  # ADK's MCP tools record the server's CallToolResult
    if result is None and error:
        result = error
    return ToolUse(name=name, call_id=text_of(call_id), arguments=arguments, result=text_of(result),
                   is_error=True if error or failed else None)


def agent_name(attrs: dict, span_name: str) -> str:
    name = name_of(attrs.get("gen_ai.agent.name") or attrs.get("agent.name"))
    if name:
        return name
    return span_name.removeprefix("invoke_agent ").strip() or span_name
