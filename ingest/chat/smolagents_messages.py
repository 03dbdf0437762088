"""smolagents' memory as the model sees it, `agent.write_memory_to_messages()` saved as dicts (`ChatMessage.dict()`;
1.15 and earlier: the message dicts themselves), as `transcript` messages. Its benchmark script
(`examples/smolagents_benchmark/run.py`) saves them per question under `intermediate_steps` in a JSONL answers file.

Roles are smolagents' `MessageRole`: `system`, `user` (the task as "New task:\n...", a plan's "Now proceed and
carry out this plan."), `assistant` (a step's model output, or a plan; a
ToolCallingAgent's "Tool call <id>: calling '<name>' with arguments: ..." is its summary of the calls, no thought,
kept raw), `tool-call` (a step's calls written as
"Calling tools:\n" and the Python repr of `[{id, type, function: {name, arguments}}]`, read with
`ast.literal_eval`: a literal, never code) and `tool-response` (the step's observations as "Observation:\n...", or
its error as "Call id: ...\nError:\n..."; one per step, so the last call of the step gets it). A ToolCallingAgent
step whose tool raised kept no call in some releases (1.21.0.dev0's benchmark run with gpt-4o): its only message is
"Error:\nError executing tool '<name>' with arguments <literal>: ...", so the call is read back from that text
(`call_from_error`) and marked `action_inferred`, its error the result. A CodeAgent's call is
its `python_interpreter` code, a `code` action; `final_answer` is `done`. A plan (an assistant message followed by
"Now proceed and carry out this plan.") is the reasoning of the next turn, as in the memory reader.
"""

from __future__ import annotations

import ast
import re

from ingest.chat.messages import content_text
from ingest.record import Action
from ingest.tools import arguments_dict, dumps
from ingest.transcript import Message, ToolCall

_CALLING = "Calling tools:\n"
_PROCEED = "Now proceed and carry out this plan."  # what a PlanningStep adds after its plan
_OBSERVATION = "Observation:\n"
_ERROR = "\nError:\n"
_SUMMARY = re.compile(r"Tool call [^:\s]*: calling '[^']+' with arguments: ")  # a ToolCallingAgent's model_output
_TOOL_ERROR = "Error executing tool '"  # smolagents' message when a tool call raised
_WITH_ARGUMENTS = "' with arguments "


def _calls(text: str) -> list[dict] | None:
    """The calls a `tool-call` message writes, or None when its text is not smolagents' literal list."""
    if not text.startswith(_CALLING):
        return None
    try:
        calls = ast.literal_eval(text[len(_CALLING):].strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return calls if isinstance(calls, list) and all(isinstance(c, dict) for c in calls) else None


def interpreter_code(arguments) -> str:
    """The code of a `python_interpreter` call: a CodeAgent passes it as the arguments, a ToolCallingAgent as
    `{"code": ...}`."""
    if isinstance(arguments, dict) and isinstance(arguments.get("code"), str) and len(arguments) == 1:
        return arguments["code"]
    return arguments if isinstance(arguments, str) else dumps(arguments)


def _call(call: dict) -> ToolCall:
    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
    name, arguments = fn.get("name"), fn.get("arguments")
    tc = ToolCall(call.get("id"), name, arguments, raw=call)
    if name == "python_interpreter":
        tc.action = Action(kind="code", code=interpreter_code(arguments), tool_name=name, raw=dumps(call))
    elif name == "final_answer":
        args = arguments_dict(arguments) or {}
        answer = args.get("answer", next(iter(args.values()), None) if len(args) == 1 else None)
        tc.action = Action(kind="done", text=answer if isinstance(answer, str) else dumps(answer), tool_name=name,
                           arguments=dumps(args), raw=dumps(call))
    return tc


def call_from_error(text: str, where: str) -> ToolCall | None:
    """The call an error message names ("Error executing tool 'name' with arguments {...}: ..."), its arguments
    read as a literal (never code), or None when the text names no call this way."""
    start = text.find(_TOOL_ERROR)
    cut = text.find(_WITH_ARGUMENTS, start) if start >= 0 else -1
    if cut < 0:
        return None
    name, rest = text[start + len(_TOOL_ERROR):cut], text[cut + len(_WITH_ARGUMENTS):]
    arguments, end = None, rest.find(": ")
    while end >= 0 and arguments is None:  # the literal ends where a prefix of the rest parses
        try:
            arguments = ast.literal_eval(rest[:end])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            end = rest.find(": ", end + 2)
    if not name or "'" in name:
        return None
    raw = {"read_from": where, "error": text}
    tc = _call({"function": {"name": name, "arguments": arguments if arguments is not None else {}}})
    tc.raw, tc.inferred = raw, True
    if tc.action is not None:
        tc.action.raw = dumps(raw)
    return tc


def _proceeds(items: list, i: int) -> bool:
    item = items[i] if i < len(items) else None
    return isinstance(item, dict) and item.get("role") == "user" and \
        (content_text(item.get("content")) or "").strip() == _PROCEED


def messages(items: list, where: str) -> list[Message]:
    """The transcript messages of one `write_memory_to_messages()` list (an item of another role is kept by the
    transcript core, raw, with a warning)."""
    out: list[Message] = []
    last_call: str | None = None
    called = False  # the step's calls came before its response
    plan: str | None = None
    for i, item in enumerate(items):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            out.append(Message("smolagents:item", text=None, raw=item, where=at))
            continue
        role, text = str(item.get("role")), content_text(item.get("content")) or ""
        raw = {k: v for k, v in item.items() if k not in ("role", "content") and v is not None} or None
        calls = _calls(text) if role == "tool-call" else None
        if calls is not None:
            tool_calls = [_call(c) for c in calls]
            last_call = tool_calls[-1].id if tool_calls else None
            called = True
            if out and out[-1].role == "assistant" and not out[-1].tool_calls:
                out[-1].tool_calls = tool_calls  # the step's model output is the thought beside its calls
                if _SUMMARY.match(out[-1].text or ""):  # no thought: the agent's own summary of the calls
                    out[-1].raw = {**(out[-1].raw or {}), "model_output": out[-1].text}
                    out[-1].text = None
            else:
                out.append(Message("assistant", tool_calls=tool_calls, reasoning=plan, raw=raw, where=at))
                plan = None
        elif role == "tool-response":
            error = _ERROR in text and text.startswith("Call id:") or text.startswith("Error:\n")
            inferred = call_from_error(text, at) if text.startswith("Error:\n") and not called else None
            if inferred is not None:  # the step kept no call, only its error
                out.append(Message("assistant", tool_calls=[inferred], reasoning=plan, where=at))
                plan = None
            body = text[len(_OBSERVATION):] if text.startswith(_OBSERVATION) else text
            out.append(Message("tool", text=body, tool_call_id=None if inferred else last_call,
                               is_error=True if error else None, raw=raw, where=at))
            called = False
        elif role == "assistant" and _proceeds(items, i + 1):
            plan = text
        elif role == "user" and text.strip() == _PROCEED and plan is not None:
            continue
        elif role in ("system", "user", "assistant"):
            out.append(Message(role, text=text, raw=raw, where=at))
            if role == "assistant" and plan is not None:
                out[-1].reasoning, plan = plan, None
        else:
            out.append(Message(f"smolagents:{role}", text=text, raw=item, where=at))
    return out
