"""Judge requests: the AgentWorldBench LLM judge on an OpenAI-compatible endpoint, through the labeler's client
(`pipelines.infra.label_client`: concurrency, timeouts, transport retries), with the reference's attempts on top.

Each sample's judge messages (`transforms.reward.judge`) are sent as attempt 1; a sample whose verdict cannot
be read (`parse_verdict`) is sent again as attempt 2, and so on up to `attempts` (the reference's 3): a round
of every pending sample at a time, so the client keeps its concurrency. A sample with no readable verdict
after its attempts is failed (every dimension 0), exactly as the reference counts it. Each sample is judged
on its own, as the reference sends one request per sample: samples whose messages are identical are
separate requests (independent draws at the judge's temperature) unless the caller shares them.

Every attempt is a request with its own key, a hash of (model, sampling, messages, attempt number, draw),
looked up in a cache before it is sent (`pipelines eval`: the catalog table `eval_requests`; the RL reward:
files in a directory, `DirectoryCache`), so a rerun pays nothing twice. Answers are cached whether or not they
read (`ok` / `failed`, as the reference would not get a different verdict for the same attempt); `error` (no
answer: server down, timeouts, HTTP errors after the client's retries) is not, so a rerun asks again. The
answer read is the message's content alone (the reference's `content or ""`): reasoning a server returns
beside it is not part of the verdict.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Iterable

import orjson

from pipelines.infra.label_client import ChatRequest, ClientConfig, Completion, Sampling, complete
from pipelines.infra.request_progress import RequestProgress
from transforms.reward.judge import ATTEMPTS, Verdict, parse_verdict

# The reference's judge request: temperature 0.6, max_tokens 32768, nothing else (OpenAI's API rejects top_k)
JUDGE_SAMPLING = Sampling(temperature=0.6, top_p=None, top_k=None, max_tokens=32768)
CACHED = ("ok", "failed")  # statuses a cache keeps; `error` is asked again


@dataclass
class ModelAndJudgeOptions:
    """What a stage that asks a model and has a judge score its answers (`pipelines eval`, `label --mode
    sample`) is told: both endpoints and their client settings, and how the dataset's transitions are
    rendered (as `pipelines export sft` renders them)."""

    model: str
    judge_model: str
    endpoint: str | None = None  # the model's OpenAI-compatible base URL; None with backend vllm
    judge_endpoint: str | None = None
    domains: list[str] | None = None
    per_domain: int | None = None  # the first N transitions of each domain
    judge_sampling: Sampling = field(default_factory=lambda: JUDGE_SAMPLING)
    judge_attempts: int = ATTEMPTS
    concurrency: int = ClientConfig.concurrency
    judge_concurrency: int = ClientConfig.concurrency
    timeout: float = ClientConfig.timeout_s
    retries: int = ClientConfig.retries
    backoff_s: float = ClientConfig.backoff_s
    api_key: str | None = None
    judge_api_key: str | None = None
    backend: str = "http"  # http | vllm (the model on vLLM's offline engine; the judge is always http)
    engine_args: dict = field(default_factory=dict)
    split_ratios: tuple[float, float, float] | None = None
    seed: str = ""
    max_tokens: int | None = None  # context budget per transition
    tokenizer: str | None = None
    flush_every: int = 16  # ledger rows per catalog write
    flush_seconds: float = 5.0
    # identical requests (and, in `pipelines eval`, duplicate lines) once, their answer shared; by default each
    # sample is its own request, as the reference sends them
    share_identical: bool = False

    def model_client(self, sampling: Sampling) -> ClientConfig:
        return ClientConfig(self.endpoint or "", self.model, sampling, self.concurrency, self.timeout,
                            self.retries, self.backoff_s, self.api_key)

    def judge_client(self) -> ClientConfig:
        return ClientConfig(self.judge_endpoint or "", self.judge_model, self.judge_sampling, self.judge_concurrency,
                            self.timeout, self.retries, self.backoff_s, self.judge_api_key)

    def render_options(self, format: str):
        """The `ExportOptions` that render the dataset's transitions as `pipelines export sft --format FORMAT`
        renders them with this stage's seed, split ratios, domains and token budget: the records a `records`
        stage reads (`pipelines.stages.export.rendered_records`), its split the export's."""
        from pipelines.infra.options import ExportOptions

        settings = {"kind": "sft", "format": format, "seed": self.seed, "max_tokens": self.max_tokens,
                    "tokenizer": self.tokenizer, "domains": self.domains}
        if self.split_ratios:
            settings["split_ratios"] = tuple(self.split_ratios)
        return ExportOptions(**settings)


@dataclass
class JudgeJob:
    key: str  # the sample's key (the caller's)
    domain: str
    messages: list[dict]


@dataclass
class JudgeOutcome:
    key: str
    verdict: Verdict
    request_key: str | None  # the attempt whose verdict counts (the last one tried when none read)
    attempts: int  # attempts made (sent now or found in the cache)
    error: str | None = None  # why the sample failed; None when a verdict was read
    rows: list[dict] = field(default_factory=list)  # every attempt's cache row, in order


def attempt_key(config: ClientConfig, messages: list[dict], attempt: int, draw: int = 0) -> str:
    """The cache key of one judge request: model, sampling, messages, attempt number, and `draw` for the n-th
    sample (from 0) with these same messages, each of which is asked on its own (draw 0 keeps the key it had
    before draws existed)."""
    data = [config.model, orjson.loads(config.sampling.key()), messages, attempt] + ([draw] if draw else [])
    return hashlib.sha256(orjson.dumps(data)).hexdigest()[:32]


def draws(messages_of: Iterable[list[dict]], share_identical: bool = False) -> list[int]:
    """For each request in order, how many earlier ones had the same messages: its draw, so that identical
    requests of different samples are separate requests (the reference's independent draws); all 0 when
    `share_identical` (identical requests are one, its answer shared)."""
    seen: dict[bytes, int] = {}
    out = []
    for messages in messages_of:
        digest = hashlib.sha256(orjson.dumps(messages)).digest()
        out.append(0 if share_identical else seen.get(digest, 0))
        seen[digest] = seen.get(digest, 0) + 1
    return out


def completion_row(request_key: str, config: ClientConfig, completion: Completion, **extra) -> dict:
    """A cache / ledger row for one answered (or failed) request (`extra` may set `output`, e.g. the content
    alone)."""
    status = "error" if completion.error else ("ok" if extra.pop("usable", True) else "failed")
    return {"request_key": request_key, "model": config.model, "sampling": config.sampling.key(), "status": status,
            "output": completion.text, "finish_reason": completion.finish_reason, "tokens_in": completion.tokens_in,
            "tokens_out": completion.tokens_out, "latency_s": completion.latency_s,
            "attempts": completion.attempts, "error": completion.error, **extra}


def judge_all(config: ClientConfig, jobs: Iterable[JudgeJob], lookup: Callable[[list[str]], dict[str, dict]],
              on_row: Callable[[dict], None], attempts: int = ATTEMPTS, send: Callable = complete,
              share_identical: bool = False, log: Callable[[str], None] | None = None,
              what: str = "judge") -> dict[str, JudgeOutcome]:
    """Verdicts for `jobs` (sample key -> outcome; a key given twice is one sample). Every sample is judged on
    its own, up to `attempts` requests of its own; samples with identical messages are separate requests
    (`draws`) unless `share_identical`, where they are one request whose answer each of them reads.
    `lookup(request keys)` returns cached rows; `on_row(row)` is called for each new answer as it arrives
    (cache it there). `send` is the client call (`label_client.complete`'s signature). The judge's answer is
    its message content alone, as the reference reads it. With `log`, each round of requests says every few
    seconds how many verdicts came back, how many did not read, the rate and the ETA (`what` names it)."""
    pending: dict[str, JudgeJob] = {}
    for job in jobs:
        pending.setdefault(job.key, job)
    draw = dict(zip(pending, draws((job.messages for job in pending.values()), share_identical)))
    outcomes = {key: JudgeOutcome(key, Verdict(False), None, 0) for key in pending}
    for attempt in range(1, attempts + 1):
        if not pending:
            break
        by_request: dict[str, list[JudgeJob]] = {}
        for job in pending.values():
            by_request.setdefault(attempt_key(config, job.messages, attempt, draw[job.key]), []).append(job)
        rows = {k: r for k, r in lookup(list(by_request)).items() if r.get("status") in CACHED}
        todo = [ChatRequest(rk, group[0].messages) for rk, group in by_request.items() if rk not in rows]

        def on_result(completion: Completion, attempt=attempt) -> None:
            job = by_request[completion.key][0]
            usable = completion.error is None and parse_verdict(completion.content).success
            row = completion_row(completion.key, config, completion, usable=usable, output=completion.content,
                                 kind="judge", sample_key=job.key, domain=job.domain, attempt=attempt)
            rows[completion.key] = row
            on_row(row)

        if todo:
            _send_round(config, todo, on_result, send, log, f"{what} attempt {attempt}", rows)
        for request_key, group in by_request.items():
            for job in group:
                _read(outcomes[job.key], rows[request_key], request_key, attempt, pending)
    for key in pending:
        outcomes[key].error = f"Judge scoring failed after {attempts} attempts ({outcomes[key].error})"
    return outcomes


def _send_round(config: ClientConfig, todo: list[ChatRequest], on_result: Callable[[Completion], None],
                send: Callable, log: Callable[[str], None] | None, what: str, rows: dict[str, dict]) -> None:
    """One attempt's requests, with a progress line every few seconds when there is a `log` (a request whose
    verdict does not read counts as failed)."""
    if log is None:
        send(config, todo, on_result)
        return
    waiting = f"max_tokens {config.sampling.max_tokens:,}, {config.concurrency} at a time"
    with RequestProgress(what, len(todo), log, waiting_on=waiting) as progress:
        def counted(completion: Completion) -> None:
            on_result(completion)
            progress.done(rows[completion.key]["status"] == "ok")

        send(config, todo, counted)


def _read(outcome: JudgeOutcome, row: dict, request_key: str, attempt: int, pending: dict) -> None:
    """One attempt's answer into a sample's outcome; a verdict that reads ends the sample's attempts."""
    outcome.attempts, outcome.request_key = attempt, request_key
    outcome.rows.append(row)
    if row["status"] == "error":
        outcome.error = f"judge request failed: {row['error']}"
        return
    verdict = parse_verdict(row["output"])
    if verdict.success:
        outcome.verdict, outcome.error = verdict, None
        del pending[outcome.key]
    else:
        outcome.error = f"judge output not read: {verdict.error}"


class DirectoryCache:
    """Cache rows as JSON files under `root` (`<key[:2]>/<key>.json`, written atomically), for the reward
    function, which runs in the trainer's processes without a catalog. Many processes may share one root."""

    def __init__(self, root: str):
        self.root = root

    def _path(self, key: str) -> str:
        return os.path.join(self.root, key[:2], f"{key}.json")

    def lookup(self, keys: list[str]) -> dict[str, dict]:
        found = {}
        for key in keys:
            try:
                with open(self._path(key), "rb") as f:
                    found[key] = orjson.loads(f.read())
            except (FileNotFoundError, orjson.JSONDecodeError):
                continue  # absent, or torn by a crash: asked again
        return found

    def record(self, row: dict) -> None:
        if row.get("status") not in CACHED:
            return
        path = self._path(row["request_key"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(orjson.dumps(row))
        os.replace(tmp, path)


def model_and_judge_table(table: dict, where: str, model_sampling: Sampling) -> tuple[dict, dict]:
    """A definition's table for a stage that asks a model and a judge (`[stage_options.eval]`, `.sample`): the
    two sampling tables made Sampling over their defaults (`model_sampling`, JUDGE_SAMPLING), `model` and
    `judge_model` required. Returns (the other fields, {"sampling": ..., "judge_sampling": ...} as given);
    OptionsError naming the bad key."""
    from pipelines.infra.options import OptionsError, from_mapping

    data = dict(table)
    for key, default in (("sampling", model_sampling), ("judge_sampling", JUDGE_SAMPLING)):
        if key in data:
            if not isinstance(data[key], dict):
                raise OptionsError(f"{where}.{key}: a table of Sampling fields")
            given = from_mapping(Sampling, data[key], f"{where}.{key}")
            data[key] = dataclasses.replace(default, **{k: getattr(given, k) for k in data[key]})
    for key in ("model", "judge_model"):
        if key not in data:
            raise OptionsError(f"{where}: {key!r} is required")
    return data, {k: data.pop(k) for k in ("sampling", "judge_sampling") if k in data}
