"""MCPMark task runs: the folder its evaluator writes for each task of a run (eval-sys/mcpmark's
`src/evaluator.py`, `results/<experiment>/<model>__<service>/run-N/<category>__<task>/`, and the copies its
experiment repositories keep), holding `messages.json`, the agent's conversation, and `meta.json`, the run's
record (`ResultsReporter.save_meta_json`: `task_name`, `model_name`, `litellm_run_model_name`,
`reasoning_effort`, `mcp`, `timeout`, `time` {start, end}, `agent_execution_time`, `task_execution_time`,
`execution_result` {success, error_message, verification_error, verification_output}, `token_usage`,
`turn_count`; some runs add `actual_model_name`).

The conversation is in OpenAI Responses item form, two writers' (read by their shape, `ingest.chat.by_shape`):
- until August 2025 MCPMark ran the OpenAI Agents SDK over LiteLLM and saved `result.to_input_list()`: the task
  as a user message, then the model's `message`s (`output_text`; `id` `__fake_id__`, LiteLLM's), its
  `function_call`s of the MCP server's tools and their `function_call_output`s, each the MCP content the SDK sent
  the model (`TextContent.model_dump_json()`: `{"type":"text","text":...,"annotations":null}`), kept as it is;
- since September 2025 its own agent (`src/agents/base_agent.py`) calls LiteLLM's chat API and converts the chat
  to that form when it saves it: each tool result the model saw is wrapped as
  `json.dumps({"type": "text", "text": <result>, "annotations": None, "meta": None})`, a wrapper the model never
  saw. An output that is exactly that wrapper is read back to the result it wraps (`env.mcpmark`
  `tool_outputs_unwrapped` counts them); any other output is the tool's result as the model saw it.

Outcome: `execution_result.success` (MCPMark's verifier checked the service's state after the run: true
success, false failure). Agent: `actual_model_name`, else `litellm_run_model_name`, else `model_name`. The whole of
`meta.json` is kept in `env.mcpmark.meta` (its times carry no zone: steps' timestamps stay null). A run whose
conversation is empty (the agent failed before answering: `error_message` says why) is an `empty_episode` row
that keeps the outcome.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Iterator

from ingest.chat.by_shape import list_records
from ingest.format_info import FormatInfo
from ingest.members import unread_in
from ingest.record import Episode, Rejected, episode_without_steps
from ingest.source import Source, SourceError, parse_json

FORMAT = "mcpmark"
VERSION = "1"
INFO = FormatInfo(
    group=None, rank=307, domains=('mcp', 'search'), platform="linux",
    summary=("MCPMark task runs (`messages.json` in OpenAI Responses item form beside its `meta.json`: the verifier's "
             "success the outcome, MCPMark's own wrapper around each tool result read back to the result)"),
    producer="MCPMark's evaluator (eval-sys/mcpmark): the OpenAI Agents SDK's `to_input_list()`, then its own agent",
    versions=("eval-sys/mcpmark-community-experiments @ 92db83e (claude-sonnet-4 on GitHub's MCP servers, August and "
              "September 2025)"),
    proof=("cannot run here (a vendor model, live GitHub, Notion and Postgres services): real runs of both writers in "
           "`../shared/samples`, counted by hand against the raw files (calls, results, answer, the verifier's "
           "verdict), are goldens; one repository so far (`tests/ingest/chat/test_mcpmark_real.py`); the layout, an "
           "unread `execution.log`, a run that saved no message, hand-made (`test_mcpmark_read.py`)"),
)

MESSAGES, META = "messages.json", "meta.json"
_META_HEAD = re.compile(rb'^\s*\{\s*"task_name"\s*:')


def units(files: list[str], head) -> list[str]:
    """Folders holding MCPMark's `meta.json` (opening with `task_name`, naming its `execution_result`) beside a
    `messages.json` that opens a list."""
    names = set(files)
    found = []
    for path in files:
        folder, name = posixpath.split(path)
        messages = posixpath.join(folder, MESSAGES)
        if name == META and messages in names and _META_HEAD.match(head(path)) and \
                b'"execution_result"' in head(path) and head(messages).lstrip()[:1] == b"[":
            found.append(folder)
    return sorted(found)


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The files of each run folder other than the two the reader reads (a later MCPMark's `execution.log`)."""
    return {folder: unread_in(folder, files, lambda rel: rel in (MESSAGES, META),
                              f"MCPMark's reader reads {MESSAGES} and {META}") for folder in found}


def unwrapped(output) -> str | None:
    """The tool result MCPMark's own agent wrapped when it saved the chat (module docstring), or None when
    `output` is not exactly that wrapper (the SDK's `TextContent` JSON the model saw is no such wrapper)."""
    if not isinstance(output, str) or not output.startswith('{"type": "text", "text": '):
        return None
    try:
        value = json.loads(output)
    except ValueError:
        return None
    if not isinstance(value, dict) or list(value) != ["type", "text", "annotations", "meta"] or \
            not isinstance(value["text"], str) or value["annotations"] is not None or value["meta"] is not None:
        return None
    return value["text"] if json.dumps(value) == output else None


def _items(messages: list) -> tuple[list, int]:
    out, count = [], 0
    for item in messages:
        text = unwrapped(item.get("output")) if isinstance(item, dict) and \
            item.get("type") == "function_call_output" else None
        if text is not None:
            item, count = {**item, "output": text}, count + 1
        out.append(item)
    return out, count


def _json(source: Source, rel: str, name: str):
    try:
        return parse_json(source.read_bytes(rel), f"{name}/{rel}", source.budgets), None
    except SourceError as e:
        return None, Rejected(e.rule, e.reason, f"{name}/{rel}")


def _agent(meta: dict) -> str | None:
    for key in ("actual_model_name", "litellm_run_model_name", "model_name"):
        if isinstance(meta.get(key), str) and meta[key]:
            return meta[key]
    return None


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = source.uri
    meta, problem = _json(source, META, name)
    if problem is not None or not isinstance(meta, dict):
        yield problem or Rejected("bad_record", f"{name}/{META} is not an object", f"{name}/{META}")
        return
    messages, problem = _json(source, MESSAGES, name)
    if problem is not None or not isinstance(messages, list):
        yield problem or Rejected("bad_record", f"{name}/{MESSAGES} is not a list", f"{name}/{MESSAGES}")
        return
    result = meta.get("execution_result") if isinstance(meta.get("execution_result"), dict) else {}
    success = result.get("success")
    outcome = ("success" if success else "failure") if isinstance(success, bool) else "unknown"
    if not messages:
        yield episode_without_steps(f"{name}: {MESSAGES} is empty (error: {result.get('error_message')})", name,
                                    outcome, None, agent=_agent(meta), task=meta.get("task_name"))
        return
    items, count = _items(messages)
    env = {"mcpmark": {"meta": meta, "tool_outputs_unwrapped": count}}
    yield from list_records(source, "openai_responses", items, None, MESSAGES, "", f"{name}/{MESSAGES}",
                            env=env, agent=_agent(meta), outcome=outcome)
