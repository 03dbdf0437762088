"""smolagents memory steps: `agent.memory.get_full_steps()` / `get_succinct_steps()` saved as a JSON list, or
`agent.run(..., return_full_result=True)`'s `RunResult.dict()` (`{output, state, steps, token_usage, timing}`;
1.20 and 1.21's dataclass saved with `asdict` holds them under `messages`), or
an object of such step lists by agent name (a manager agent's memory beside its managed agents', each an episode
keyed by the name). The answers JSONL of smolagents' benchmark script, whose lines keep each question's
`write_memory_to_messages()` under `intermediate_steps`, is read through `ingest.chat.smolagents_messages`, a line
an episode (its question the task, its `model_id` the agent, the line's other fields in `env.smolagents`).

`dict()` writes no type: each step is told by its fields (smolagents' `memory.py`), or by the class name a
saving script put beside them (`__class__` or `type`: `TaskStep`, `ActionStep`...):
- `TaskStep` `{task, task_images}`: the task, a user message;
- `SystemPromptStep` `{system_prompt}`;
- `PlanningStep` `{model_input_messages, model_output_message, plan, timing, token_usage}`: the plan is the
  reasoning of the next action (it is no action of its own);
- `ActionStep`: `tool_calls` `[{id, type, function: {name, arguments}}]` (a ToolCallingAgent's tool calls; a
  CodeAgent's one `python_interpreter` call whose arguments are the code, also in `code_action` since 1.20),
  `model_output_message` (the model's message: its `content` is the turn's text, its client `raw` response
  names the model), `model_output` (the text; 1.15's ToolCallingAgent wrote a "Called Tool" summary there),
  `observations` (what came back: a ToolCallingAgent joins its parallel calls' results with newlines, so they
  are the last call's result), `error` `{type, message}` (an error result; a step whose tool raised kept no call
  in some releases, only the error "Error executing tool 'name' with arguments {...}": the call is read back from
  it and marked `action_inferred`), `action_output`, `is_final_answer`
  (1.20+), token usage (`token_usage` since 1.17, or `input_token_count` / `output_token_count`) and times
  (`timing` since 1.17, `start_time` / `end_time` / `duration` and `step` instead of `step_number` in 1.15);
- `FinalAnswerStep` `{output}` (`{final_answer}` in early releases), where a stream's steps were saved.

A ToolCallingAgent's `final_answer` call is a `done` action with the answer; a CodeAgent's code is a `code`
action, and its run is in the `terminal` domain (Python its executor runs, the execution logs seen); a
tool-calling run is `mcp`, or `search` when it mostly searches. The run ended when its last action step is a
final answer (`is_final_answer`, else a `final_answer` call without an error); `RunResult.state`
`max_steps_error` is a failure (smolagents grades nothing else). `model_input_messages` re-render the memory for
each model call (`write_memory_to_messages`): only the system prompt is taken from them, and each step's count of
them kept in `env.smolagents.steps`. Fields this reader does not know are kept raw in
`env.smolagents.unknown_fields`, each with a warning row.

**A list of steps cut short.** smolagents 1.1x's `ActionStep.dict()` keeps the model's `ChatMessage` object under
`model_output_message`, so `json.dump(agent.memory.get_full_steps(), f)` raises there and leaves the file cut
after that key. Such a file is read as far as it goes (`ingest.json_prefix`): its whole steps, then the fields of
the step it stops in that were written (the task, the step's calls and times); a `truncated_file` row says where it
stops and `env.smolagents.cut` what was read (`at_byte`, `whole_steps`, `cut_step_fields`, `cut_at`). The run is
not ended: the file does not say whether the last call ran.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Iterator

from ingest.chat.messages import content_text
from ingest.chat.smolagents_messages import call_from_error, interpreter_code, messages as memory_messages
from ingest.format_info import FormatInfo
from ingest.json_prefix import array_prefix
from ingest.record import Action, Episode, Rejected
from ingest.search import episode_domain
from ingest.source import Source, SourceError, json_lines, parse_json
from ingest.tools import arguments_dict, dumps
from ingest.transcript import Message, Run, ToolCall, records
from ingest.unread import truncation

FORMAT = "smolagents"
VERSION = "4"
INFO = FormatInfo(
    group=None, rank=303, domains=('mcp', 'terminal', 'search'), platform="linux",
    summary="smolagents memory steps (`get_full_steps()`, `RunResult`) and its benchmark's answers JSONL",
    producer="smolagents (ToolCallingAgent and CodeAgent)",
    versions="1.15.0, 1.26.0",
    proof=("each release runs a ToolCallingAgent and a CodeAgent (1.26.0 with a planning step) against the scripted "
           "model server; every scripted call, its result and the final answer are in the episode in order, from the "
           "saved memory steps and from the benchmark script's answers line (`write_memory_to_messages()`) alike; "
           "1.26.0's run traced by OpenInference is read by `otel` (`tests/ingest/chat/`); the maintainers' real "
           "gpt-4o benchmark runs (1.21.0.dev0, ToolCallingAgent and CodeAgent on 50 MATH questions, Apache-2.0) are "
           "goldens read against the raw files, and so are a second repository's two memory dumps (prymal-agent's "
           "manager CodeAgent, in `../shared/samples`), cut where 1.1x's `json.dump(get_full_steps())` could not "
           "serialize the model's message: the task and the step's code read back, the cut said "
           "(`test_smolagents_real.py`)"),
)

_HEAD = re.compile(rb'"task_images"\s*:|"step_number"\s*:\s*\d+\s*,\s*"timing"\s*:')
_ANSWERS = re.compile(rb'"agent_action_type"\s*:')
_TASK = {"task", "task_images"}
_PLAN = {"model_input_messages", "model_output_message", "plan", "timing", "token_usage", "__class__", "type"}
_ACTION = {"__class__", "type", "step_number", "step", "timing", "start_time", "end_time", "duration",
           "model_input_messages", "tool_calls", "error", "model_output_message", "model_output", "code_action",
           "observations", "observations_images", "action_output", "token_usage", "input_token_count",
           "output_token_count", "is_final_answer"}
_CODE_TOOL = "python_interpreter"


def units(files: list[str], head) -> list[str]:
    """JSON files whose opening holds a smolagents memory step (a `TaskStep`'s `task_images`, or an
    `ActionStep`'s `step_number` followed by its `timing`); JSONL answers files of smolagents' benchmark script
    (`agent_action_type` and `intermediate_steps` in the first line)."""
    return [path for path in files if (path.endswith(".json") and _HEAD.search(head(path))) or
            (path.endswith(".jsonl") and _ANSWERS.search(head(path)) and b'"intermediate_steps"' in head(path))]


def domain_of(messages: list[Message]) -> str:
    """`terminal` for a CodeAgent (its actions are Python code its executor runs, the observations the execution
    logs), else `search` when it mostly searches, else `mcp` (tool calls with their results)."""
    calls = [c for m in messages for c in m.tool_calls]
    if any(c.action is not None and c.action.kind == "code" for c in calls):
        return "terminal"
    return episode_domain([c.name for c in calls], "mcp")


def _runs(doc) -> list[tuple[str, list, dict]]:
    """(key, steps, the RunResult's other fields) of each memory in a saved document: the document itself, a
    RunResult, or an object of step lists by agent name (a manager and its managed agents)."""
    if isinstance(doc, list):
        return [("", doc, {})]
    if not isinstance(doc, dict):
        return []
    for key in ("steps", "messages"):  # 1.20 and 1.21's RunResult (a dataclass) named them `messages`
        if isinstance(doc.get(key), list) and (key == "steps" or "state" in doc):
            return [("", doc[key], {k: v for k, v in doc.items() if k != key})]
    return [(str(k), v, {}) for k, v in doc.items()
            if isinstance(v, list) and v and all(isinstance(s, dict) and _kind(s) for s in v)]


def _time(step: dict) -> dt.datetime | None:
    timing = step.get("timing") if isinstance(step.get("timing"), dict) else step
    start = timing.get("start_time")
    if isinstance(start, (int, float)) and not isinstance(start, bool):
        return dt.datetime.fromtimestamp(start, tz=dt.timezone.utc)
    return None


def _model(step: dict) -> str | None:
    out = step.get("model_output_message")
    raw = out.get("raw") if isinstance(out, dict) else None
    model = raw.get("model") if isinstance(raw, dict) else None
    return model if isinstance(model, str) else None


def _turn_text(step: dict) -> str | None:
    """The model's own text: the output message's content (1.15's `model_output` is a summary of the call)."""
    out = step.get("model_output_message")
    if isinstance(out, dict) and "content" in out:
        return content_text(out.get("content"))
    return content_text(step.get("model_output"))


def _call(call: dict, step: dict, final: bool) -> ToolCall:
    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
    name, arguments = fn.get("name"), fn.get("arguments")
    tc = ToolCall(call.get("id"), name, arguments, raw=call)
    if name == _CODE_TOOL:
        code = step.get("code_action") if isinstance(step.get("code_action"), str) else arguments
        tc.action = Action(kind="code", code=interpreter_code(code), tool_name=name, raw=dumps(call))
    elif name == "final_answer":
        args = arguments_dict(arguments) or {}
        answer = args.get("answer", step.get("action_output") if final else None)
        tc.action = Action(kind="done", text=answer if isinstance(answer, str) else dumps(answer), tool_name=name,
                           arguments=dumps(args), raw=dumps(call))
    return tc


def _is_final(step: dict) -> bool:
    if isinstance(step.get("is_final_answer"), bool):
        return step["is_final_answer"]
    if step.get("error"):
        return False
    for call in step.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) and isinstance(call.get("function"), dict) else {}
        if fn.get("name") == "final_answer" or (fn.get("name") == _CODE_TOOL and "final_answer(" in
                                                str(fn.get("arguments")) and step.get("action_output") is not None):
            return True
    return False


def _action(step: dict, plan: str | None, where: str) -> list[Message]:
    stamp, final = _time(step), _is_final(step)
    calls = [_call(c, step, final) for c in step.get("tool_calls") or [] if isinstance(c, dict)]
    error = step.get("error")
    if not calls and isinstance(error, dict) and isinstance(error.get("message"), str):
        inferred = call_from_error(error["message"], where)  # the step kept no call, only its error
        calls = [inferred] if inferred is not None else calls
    text = _turn_text(step)
    out = [Message("assistant", text=text, tool_calls=calls, reasoning=plan, model=_model(step), timestamp=stamp,
                   where=where)]
    observations = step.get("observations")
    last = calls[-1].id if calls else None
    if isinstance(observations, str):
        out.append(Message("tool", text=observations, tool_call_id=last, timestamp=stamp, where=where))
    if isinstance(error, dict):
        message = f"{error.get('type') or 'Error'}: {error.get('message')}"
        out.append(Message("tool", text=message, tool_call_id=last, is_error=True, timestamp=stamp, where=where))
    return out


def _usage(step: dict) -> dict | None:
    usage = step.get("token_usage")
    if isinstance(usage, dict):
        return {k: usage.get(k) for k in ("input_tokens", "output_tokens")}
    if "input_token_count" in step:
        return {"input_tokens": step.get("input_token_count"), "output_tokens": step.get("output_token_count")}
    return None


def _summary(step: dict, kind: str) -> dict:
    """What the episode's env keeps of one step beside its messages."""
    inputs = step.get("model_input_messages")
    summary = {"kind": kind, "step_number": step.get("step_number", step.get("step")),
               "model_input_messages": len(inputs) if isinstance(inputs, list) else None,
               "token_usage": _usage(step)}
    for key in ("error", "action_output", "is_final_answer", "timing"):
        if step.get(key) is not None:
            summary[key] = step[key]
    return summary


_CLASSES = {"TaskStep": "task", "ActionStep": "action", "PlanningStep": "planning",
            "SystemPromptStep": "system_prompt", "FinalAnswerStep": "final_answer"}
_MARKS = ("__class__", "type")  # the step's class, where the saving code wrote it beside `dict()`'s fields


def _kind(step: dict) -> str | None:
    named = next((_CLASSES[step[m]] for m in _MARKS if isinstance(step.get(m), str) and step[m] in _CLASSES), None)
    if named:
        return named
    keys = set(step)
    if "task" in keys and keys <= _TASK:
        return "task"
    if "plan" in keys:
        return "planning"
    if "system_prompt" in keys and len(keys) == 1:
        return "system_prompt"
    if keys in ({"output"}, {"final_answer"}):
        return "final_answer"
    if keys & {"tool_calls", "observations", "model_output", "step_number", "step"}:
        return "action"
    return None


def _system_prompt(step: dict) -> str | None:
    for m in step.get("model_input_messages") or []:
        if isinstance(m, dict) and m.get("role") == "system":
            return content_text(m.get("content"))
    return None


class _Reading:
    def __init__(self, name: str):
        self.name, self.messages, self.summaries = name, [], []
        self.unknown: list = []
        self.rows: list[Rejected] = []
        self.plan: str | None = None
        self.system: str | None = None
        self.final: bool = False

    def _unknown_fields(self, step: dict, known: set, at: str) -> None:
        extra = {k: v for k, v in step.items() if k not in known}
        if extra:
            self.unknown.append({"where": at, "fields": extra})
            self.rows.append(Rejected("unknown_content", f"{self.name}: {at}: fields {sorted(extra)} are not read; "
                                      "kept raw in env.smolagents.unknown_fields", self.name, record_id=at))

    def step(self, step, at: str) -> None:
        kind = _kind(step) if isinstance(step, dict) else None
        if kind is None:
            self.unknown.append({"where": at, "step": step})
            self.rows.append(Rejected("unknown_content", f"{self.name}: {at} is no smolagents memory step; kept raw "
                                      "in env.smolagents.unknown_fields", self.name, record_id=at))
            return
        self.summaries.append(_summary(step, kind))
        if kind == "task":
            self.messages.append(Message("user", text=content_text(step.get("task")), where=at))
        elif kind == "system_prompt":
            self.messages.append(Message("system", text=content_text(step.get("system_prompt")), where=at))
        elif kind == "planning":
            self._unknown_fields(step, _PLAN, at)
            plan = content_text(step.get("plan"))
            self.plan = "\n\n".join(p for p in (self.plan, plan) if p) or None
        elif kind == "final_answer":
            self.summaries[-1]["output"] = step.get("output", step.get("final_answer"))
        else:
            self._unknown_fields(step, _ACTION, at)
            self.system = self.system or _system_prompt(step)
            self.messages += _action(step, self.plan, at)
            self.plan, self.final = None, _is_final(step)


def _cut_steps(data: bytes, name: str) -> tuple[list, Rejected, dict] | None:
    """The steps a list of memory steps cut short still holds, and the row that says where it stops: its whole
    steps, then the fields of the step it stops in that came before the cut (smolagents 1.1x's `dict()` keeps the
    `ChatMessage` object under `model_output_message`, so `json.dump(get_full_steps())` dies there, after the
    task and the step's calls were written), and what `env.smolagents.cut` says of it. None when the file is not
    such a list."""
    cut = truncation(data)
    found = array_prefix(data.decode("utf-8", "replace")) if cut else None
    if found is None or not (found.items or found.fields):
        return None
    steps = found.items + ([found.fields] if found.fields else [])
    if not all(isinstance(s, dict) and _kind(s) for s in steps):
        return None
    what = (f"and the fields of step {len(found.items)} before `{found.cut_at}`" if found.fields and found.cut_at
            else "and the fields of the step it stops in" if found.fields else "")
    said = {"at_byte": len(data), "whole_steps": len(found.items),
            "cut_step_fields": sorted(found.fields) if found.fields is not None else None, "cut_at": found.cut_at}
    return steps, Rejected("truncated_file", f"{name}: truncated at byte {len(data)} ({cut}); read its "
                           f"{len(found.items)} whole steps {what}".rstrip(), name,
                           snippet=data[-300:].decode("utf-8", "replace")), said


def _document(source: Source) -> tuple[list, Rejected | None, dict | None]:
    name = source.uri
    data = source.read_bytes()
    try:
        doc = parse_json(data, name, source.budgets)
    except SourceError as e:
        salvaged = _cut_steps(data, name) if e.rule == "parse_error" else None
        if salvaged is None:
            return [], Rejected(e.rule, e.reason, name), None
        steps, row, cut = salvaged
        return [("", steps, {})], row, cut
    runs = _runs(doc)
    if not runs:
        return [], Rejected("bad_record", f"{name}: neither a list of memory steps, a RunResult with `steps`, nor "
                            "step lists by agent", name), None
    return runs, None, None


def _episode(name: str, key: str, steps: list, result: dict, cut: dict | None = None) -> Iterator[Episode | Rejected]:
    where = f"{name}: {key}" if key else name
    reading = _Reading(where)
    for i, step in enumerate(steps):
        reading.step(step, f"{key}[{i}]" if key else f"steps[{i}]")
    yield from reading.rows
    messages = reading.messages
    if reading.system and not any(m.role == "system" for m in messages):
        messages = [Message("system", text=reading.system)] + messages
    env = {"smolagents": {"steps": reading.summaries}}
    if result:
        env["smolagents"]["run_result"] = result
    if reading.plan:
        env["smolagents"]["plan_after_last_action"] = reading.plan
    if reading.unknown:
        env["smolagents"]["unknown_fields"] = reading.unknown
    if cut:
        env["smolagents"]["cut"] = cut
    outcome = "failure" if result.get("state") == "max_steps_error" else "unknown"
    yield from records(messages, Run(key=key, domain=domain_of(messages), platform="linux", outcome=outcome,
                                     terminated=reading.final, env=env), where)


def _answer(name: str, no: int, record) -> Iterator[Episode | Rejected]:
    """One line of a benchmark answers file: the question's run, its memory as the model saw it."""
    where = f"{name}: line {no}"
    steps = record.get("intermediate_steps") if isinstance(record, dict) else None
    if not isinstance(steps, (list, str)):
        yield Rejected("bad_record", f"{where}: no `intermediate_steps` list", name, line=no)
        return
    task = record.get("question") if isinstance(record.get("question"), str) else None
    if isinstance(steps, str):  # a `vanilla` run: the model's answer alone
        messages = [Message("user", text=task), Message("assistant", text=steps, where=where)]
    else:
        messages = memory_messages(steps, "intermediate_steps")
    model = record.get("model_id")
    env = {"smolagents": {"answers_record": {k: v for k, v in record.items() if k != "intermediate_steps"}}}
    yield from records(messages, Run(key=f"line {no}", domain=domain_of(messages), platform="linux", task=task,
                                     agent=model if isinstance(model, str) else None, env=env,
                                     terminated=True if _code_answered(messages) else None), where)


def _code_answered(messages: list[Message]) -> bool:
    """A CodeAgent's run ended: its last call is code that calls `final_answer(` and ran without an error (the
    answers line keeps no `action_output`; a tool-calling run ends on its `final_answer` call, a `done` action)."""
    calls = [(i, m.tool_calls[-1]) for i, m in enumerate(messages) if m.role == "assistant" and m.tool_calls]
    if not calls:
        return False
    i, call = calls[-1]
    after = [m for m in messages[i + 1:] if m.role == "tool"]
    return call.name == _CODE_TOOL and "final_answer(" in str(call.arguments) and bool(after) and \
        not after[-1].is_error and not any(m.role == "assistant" for m in messages[i + 1:])


def _answers(source: Source) -> Iterator[Episode | Rejected]:
    for no, _, value in json_lines(source.read_bytes(), source.uri, source.budgets):
        if isinstance(value, Rejected):
            yield value
        else:
            yield from _answer(source.uri, no, value)


def read(source: Source) -> Iterator[Episode | Rejected]:
    if source.path.endswith(".jsonl"):
        yield from _answers(source)
        return
    runs, problem, cut = _document(source)
    if problem is not None:
        yield problem
    for key, steps, result in runs:
        yield from _episode(source.uri, key, steps, result, cut)
