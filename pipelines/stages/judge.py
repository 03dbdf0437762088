"""Judge requests: the AgentWorldBench LLM judge on an OpenAI-compatible endpoint, through the labeler's client
(`pipelines.label_client`: concurrency, timeouts, transport retries), with the reference's attempts on top.

Each sample's judge messages (`transforms.reward.judge`) are sent as attempt 1; a sample whose verdict cannot
be read (`parse_verdict`) is sent again as attempt 2, and so on up to `attempts` (the reference's 3): a round
of every pending sample at a time, so the client keeps its concurrency. A sample with no readable verdict
after its attempts is failed (every dimension 0), exactly as the reference counts it.

Every attempt is a request with its own key, a hash of (model, sampling, messages, attempt number), looked up
in a cache before it is sent (`pipelines eval`: the catalog table `eval_requests`; the RL reward: files in a
directory, `DirectoryCache`), so a rerun pays nothing twice. Answers are cached whether or not they read
(`ok` / `failed`, as the reference would not get a different verdict for the same attempt); `error` (no
answer: server down, timeouts, HTTP errors after the client's retries) is not, so a rerun asks again.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Iterable

import orjson

from pipelines.label_client import ChatRequest, ClientConfig, Completion, Sampling, complete
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

    def model_client(self, sampling: Sampling) -> ClientConfig:
        return ClientConfig(self.endpoint or "", self.model, sampling, self.concurrency, self.timeout,
                            self.retries, self.backoff_s, self.api_key)

    def judge_client(self) -> ClientConfig:
        return ClientConfig(self.judge_endpoint or "", self.judge_model, self.judge_sampling, self.judge_concurrency,
                            self.timeout, self.retries, self.backoff_s, self.judge_api_key)


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


def attempt_key(config: ClientConfig, messages: list[dict], attempt: int) -> str:
    data = orjson.dumps([config.model, orjson.loads(config.sampling.key()), messages, attempt])
    return hashlib.sha256(data).hexdigest()[:32]


def completion_row(request_key: str, config: ClientConfig, completion: Completion, **extra) -> dict:
    """A cache / ledger row for one answered (or failed) request."""
    status = "error" if completion.error else ("ok" if extra.pop("usable", True) else "failed")
    return {"request_key": request_key, "model": config.model, "sampling": config.sampling.key(), "status": status,
            "output": completion.text, "finish_reason": completion.finish_reason, "tokens_in": completion.tokens_in,
            "tokens_out": completion.tokens_out, "latency_s": completion.latency_s,
            "attempts": completion.attempts, "error": completion.error, **extra}


def judge_all(config: ClientConfig, jobs: Iterable[JudgeJob], lookup: Callable[[list[str]], dict[str, dict]],
              on_row: Callable[[dict], None], attempts: int = ATTEMPTS,
              send: Callable = complete) -> dict[str, JudgeOutcome]:
    """Verdicts for `jobs` (sample key -> outcome). `lookup(request keys)` returns cached rows; `on_row(row)`
    is called for each new answer as it arrives (cache it there). `send` is the client call
    (`label_client.complete`'s signature)."""
    pending = {job.key: job for job in jobs}
    outcomes = {key: JudgeOutcome(key, Verdict(False), None, 0) for key in pending}
    for attempt in range(1, attempts + 1):
        if not pending:
            break
        keys = {job.key: attempt_key(config, job.messages, attempt) for job in pending.values()}
        cached = {k: r for k, r in lookup(list(keys.values())).items() if r.get("status") in CACHED}
        by_request = {keys[job.key]: job for job in pending.values()}
        fresh: dict[str, dict] = {}

        def on_result(completion: Completion, attempt=attempt) -> None:
            job = by_request[completion.key]
            usable = completion.error is None and parse_verdict(completion.text).success
            row = completion_row(completion.key, config, completion, usable=usable, kind="judge",
                                 sample_key=job.key, domain=job.domain, attempt=attempt)
            fresh[completion.key] = row
            on_row(row)

        todo = [ChatRequest(rk, job.messages) for rk, job in by_request.items() if rk not in cached]
        if todo:
            send(config, todo, on_result)
        for request_key, job in by_request.items():
            row = cached.get(request_key) or fresh[request_key]
            outcome = outcomes[job.key]
            outcome.attempts, outcome.request_key = attempt, request_key
            outcome.rows.append(row)
            if row["status"] == "error":
                outcome.error = f"judge request failed: {row['error']}"
                continue
            verdict = parse_verdict(row["output"])
            if verdict.success:
                outcome.verdict, outcome.error = verdict, None
                del pending[job.key]
            else:
                outcome.error = f"judge output not read: {verdict.error}"
    for key in pending:
        outcomes[key].error = f"Judge scoring failed after {attempts} attempts ({outcomes[key].error})"
    return outcomes


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
