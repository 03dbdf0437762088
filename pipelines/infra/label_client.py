"""Chat completions from a world model: any OpenAI-compatible server (vLLM, SGLang, llama.cpp) over HTTP, or
vLLM's offline engine on a GPU node (optional extra `label-vllm`, imported only when used).

HTTP contract:
- at most `concurrency` requests in flight; requests go out in the order given, so the caller puts requests
  that share a trajectory prefix next to each other and the server's prefix cache serves them;
- each attempt has a `timeout_s` limit; timeouts, connection errors, 429, 5xx and malformed JSON bodies are
  retried `retries` times with exponential backoff (a 429/503 `Retry-After` wins when longer);
- any other 4xx is not retried: the result carries `HTTP <code> from <url>: <server's message>`;
- a request never raises: every one ends as a `Completion` with either text or an `error`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable

import orjson

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Sampling:
    """Defaults are the reference world model's (max_tokens 8192 truncated a quarter of outputs)."""

    temperature: float = 0.6
    top_p: float | None = 0.95  # None: not sent (the server's default; OpenAI's API has no top_k)
    top_k: int | None = 20
    max_tokens: int = 32768
    seed: int | None = None
    stop: tuple[str, ...] = ()

    def body(self) -> dict:
        """The request fields (top_k is an extension vLLM, SGLang and llama.cpp accept)."""
        body = {"temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k,
                "max_tokens": self.max_tokens}
        body = {k: v for k, v in body.items() if v is not None}
        if self.seed is not None:
            body["seed"] = self.seed
        if self.stop:
            body["stop"] = list(self.stop)
        return body

    def key(self) -> str:
        """Canonical JSON: part of the ledger key."""
        return orjson.dumps(asdict(self), option=orjson.OPT_SORT_KEYS).decode()


@dataclass
class ChatRequest:
    key: str  # the caller's id (the ledger key)
    messages: list[dict]


@dataclass
class Completion:
    key: str
    text: str | None = None
    finish_reason: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float = 0.0  # the successful (or last) attempt's
    attempts: int = 0
    error: str | None = None  # transport / HTTP failure after retries; None when the server answered
    # the message's content alone, as the server sent it (`text` adds the reasoning a reasoning parser returned
    # beside it): what the reference evaluation reads, whose `gen` is `message.content or ""`
    content: str | None = None


@dataclass
class ClientConfig:
    endpoint: str  # base URL, e.g. http://host:8000/v1 (".../chat/completions" is accepted too)
    model: str
    sampling: Sampling = field(default_factory=Sampling)
    concurrency: int = 16
    timeout_s: float = 600.0
    retries: int = 4
    backoff_s: float = 0.5
    api_key: str | None = None

    @property
    def url(self) -> str:
        base = self.endpoint.rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"


def request_body(config: ClientConfig, messages: list[dict]) -> dict:
    """The exact JSON body sent for one request (what `--dry-run` prints)."""
    return {"model": config.model, "messages": messages, **config.sampling.body()}


class _Retry(Exception):
    def __init__(self, message: str, wait_s: float | None = None):
        super().__init__(message)
        self.wait_s = wait_s


def _server_message(body: bytes) -> str:
    try:
        data = orjson.loads(body)
        error = data.get("error", data) if isinstance(data, dict) else data
        message = error.get("message", error) if isinstance(error, dict) else error
        text = message if isinstance(message, str) else orjson.dumps(message).decode()
    except orjson.JSONDecodeError:
        text = body.decode("utf-8", "replace")
    text = " ".join(text.split())
    return text[:300] or "(empty body)"


def _retry_after(headers) -> float | None:
    try:
        return float(headers.get("Retry-After"))
    except (TypeError, ValueError):
        return None


def parse_completion(key: str, data) -> Completion:
    """A chat.completion JSON object to a Completion. Raises _Retry when it has no choices."""
    try:
        choice = data["choices"][0]
        message = choice.get("message") or {}
        text = message.get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise _Retry(f"response has no choices[0].message: {str(data)[:200]}") from None
    # servers with a reasoning parser (vLLM, SGLang, llama.cpp) return the thinking beside the content, as
    # `reasoning_content` or `reasoning`: kept as the `<think>` block the model wrote, which every reader of
    # an output (the labeler's and the evaluation's parsers) removes from the answer
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning.strip():
        text = f"<think>\n{reasoning.strip()}\n</think>\n\n{text or ''}"
    usage = data.get("usage") or {}
    return Completion(key, text=text, finish_reason=choice.get("finish_reason"),
                      tokens_in=usage.get("prompt_tokens"), tokens_out=usage.get("completion_tokens"),
                      content=message.get("content") if isinstance(message.get("content"), str) else None)


async def _attempt(session, config: ClientConfig, request: ChatRequest) -> Completion:
    import aiohttp

    body = orjson.dumps(request_body(config, request.messages))
    headers = {"Content-Type": "application/json"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    try:
        async with session.post(config.url, data=body, headers=headers,
                                timeout=aiohttp.ClientTimeout(total=config.timeout_s)) as response:
            payload = await response.read()
            if response.status in RETRY_STATUS:
                raise _Retry(f"HTTP {response.status} from {config.url}: {_server_message(payload)}",
                             _retry_after(response.headers))
            if response.status >= 400:
                return Completion(request.key, error=f"HTTP {response.status} from {config.url}: "
                                  f"{_server_message(payload)} (client error: not retried; check --model, "
                                  "--endpoint and the request size)")
            try:
                data = orjson.loads(payload)
            except orjson.JSONDecodeError:
                raise _Retry(f"malformed JSON from {config.url}: {payload[:120]!r}") from None
            return parse_completion(request.key, data)
    except asyncio.TimeoutError:
        raise _Retry(f"timed out after {config.timeout_s:g} s waiting for {config.url}") from None
    except aiohttp.ClientError as e:
        raise _Retry(f"cannot reach {config.url}: {type(e).__name__}: {e}") from None


async def _complete_one(session, config: ClientConfig, request: ChatRequest) -> Completion:
    for attempt in range(1, config.retries + 2):
        started = time.perf_counter()
        try:
            result = await _attempt(session, config, request)
        except _Retry as e:
            if attempt > config.retries:
                return Completion(request.key, latency_s=time.perf_counter() - started, attempts=attempt,
                                  error=f"{e} (gave up after {attempt} attempts)")
            await asyncio.sleep(max(config.backoff_s * 2 ** (attempt - 1), e.wait_s or 0))
            continue
        result.latency_s, result.attempts = time.perf_counter() - started, attempt
        return result
    raise AssertionError("unreachable")


async def complete_all(config: ClientConfig, requests: Iterable[ChatRequest],
                       on_result: Callable[[Completion], None] | None = None) -> list[Completion]:
    """Send `requests` in order with at most `config.concurrency` in flight; `on_result` is called in this
    event loop as each one finishes (in completion order). Returns the completions in request order."""
    import aiohttp

    requests = list(requests)
    results: list[Completion | None] = [None] * len(requests)
    queue = iter(enumerate(requests))

    async def worker(session):
        for index, request in queue:  # a shared iterator: each worker takes the next request in order
            results[index] = await _complete_one(session, config, request)
            if on_result:
                on_result(results[index])

    connector = aiohttp.TCPConnector(limit=config.concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(max(1, min(config.concurrency, len(requests))))))
    return results  # type: ignore[return-value]


def complete(config: ClientConfig, requests: Iterable[ChatRequest],
             on_result: Callable[[Completion], None] | None = None) -> list[Completion]:
    """`complete_all` from synchronous code. When this thread already runs an event loop (a notebook, a
    trainer's reward loop, a browser driver), the requests run in a thread of their own; `on_result` is then
    called there while this thread waits."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(complete_all(config, requests, on_result))
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, complete_all(config, requests, on_result)).result()


OFFLINE_FINISH_REASONS = frozenset({"stop", "length"})  # any other reason (abort, error) is a failed request


def _prompt_token_ids(tokenizer, messages: list[dict]) -> list[int]:
    """The chat template applied the way `LLM.chat` does it (vllm/entrypoints/llm.py): render the text, then
    encode it without special tokens, because the template already holds them (a second BOS otherwise).
    vLLM's Mistral tokenizer returns token ids from `apply_chat_template` directly. Our messages have plain
    string content, which HF templates take as is (LLM.chat converts content to OpenAI parts first only for
    templates that iterate over parts)."""
    rendered = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    if isinstance(rendered, str):
        return tokenizer.encode(rendered, add_special_tokens=False)
    return list(rendered)


def _offline_completion(key: str, output, latency_s: float) -> Completion:
    """A finished vllm.RequestOutput (vllm/outputs.py) to a Completion, with the HTTP path's fields."""
    best = output.outputs[0]
    result = Completion(key, text=best.text, finish_reason=best.finish_reason,
                        tokens_in=len(output.prompt_token_ids or ()), tokens_out=len(best.token_ids),
                        latency_s=latency_s, attempts=1, content=best.text)
    if best.finish_reason not in OFFLINE_FINISH_REASONS:
        result.error = f"vLLM ended the request with finish_reason {best.finish_reason!r}"
    return result


def complete_offline(model: str, sampling: Sampling, requests: Iterable[ChatRequest],
                     on_result: Callable[[Completion], None] | None = None, *, max_pending: int = 2048,
                     **engine_args) -> list[Completion]:
    """The same requests through vLLM's offline engine (`pip install 'trajforge[label-vllm]'`, GPU node).
    `engine_args` go to `vllm.LLM` (tensor_parallel_size, max_model_len, ...; `enable_prefix_caching`
    defaults to True here). `on_result` is called as each request finishes, so an interrupted run keeps
    what finished. Returns the completions in request order; a request the engine rejects (prompt longer
    than max_model_len, a chat template error) or ends with a reason other than stop / length gets a
    Completion with `error`, and the others go on. Errors of the engine itself are raised.

    This drives the engine the way `LLM.generate` does inside (vllm/entrypoints/llm.py `_run_engine`:
    `llm_engine.add_request(request_id, prompt, params)`, then `step()` while `has_unfinished_requests()`,
    keeping the outputs with `.finished`; vllm/v1/engine/llm_engine.py), rather than calling `LLM.chat` on
    chunks: a chunk waits for its longest generation with the batch draining, and one prompt the engine
    rejects fails its whole chunk. At most `max_pending` requests are in the engine at once, added in the
    caller's order (requests sharing a prefix are adjacent, so the prefix cache serves them); keep it above
    the engine's `max_num_seqs` so that continuous batching always has a queue. Sampling uses
    `RequestOutputKind.FINAL_ONLY` like `LLM.generate` (vllm/sampling_params.py): no per-step outputs."""
    try:
        from vllm import LLM, SamplingParams
        from vllm.sampling_params import RequestOutputKind
    except ImportError as e:
        raise RuntimeError("the offline backend needs vLLM: pip install 'trajforge[label-vllm]'") from e
    requests = list(requests)
    llm = LLM(model=model, **{"enable_prefix_caching": True, **engine_args})
    engine, tokenizer = llm.llm_engine, llm.get_tokenizer()
    params = SamplingParams(temperature=sampling.temperature, top_p=sampling.top_p, top_k=sampling.top_k,
                            max_tokens=sampling.max_tokens, seed=sampling.seed, stop=list(sampling.stop) or None,
                            output_kind=RequestOutputKind.FINAL_ONLY)
    results: list[Completion | None] = [None] * len(requests)
    in_flight: dict[str, tuple[int, float]] = {}  # our request id -> (index, time added)
    aliases: dict[str, str] = {}  # the engine's id -> ours, where add_request returns another one
    todo = iter(range(len(requests)))

    def finish(index: int, result: Completion) -> None:
        results[index] = result
        if on_result:
            on_result(result)

    def top_up() -> None:
        while len(in_flight) < max_pending:
            index = next(todo, None)
            if index is None:
                return
            request_id = str(index)
            try:
                prompt = {"prompt_token_ids": _prompt_token_ids(tokenizer, requests[index].messages)}
                engine_id = engine.add_request(request_id, prompt, params)
            except Exception as e:  # this request only: the engine has not taken it
                finish(index, Completion(requests[index].key, attempts=1,
                                         error=f"vLLM rejected the request: {type(e).__name__}: {e}"))
                continue
            # newer vLLM returns its internal id (ours plus a random suffix) while outputs carry ours;
            # older ones return None
            if isinstance(engine_id, str) and engine_id != request_id:
                aliases[engine_id] = request_id
            in_flight[request_id] = (index, time.perf_counter())

    top_up()
    while in_flight:
        if not engine.has_unfinished_requests():  # the engine dropped these without an output
            for index, _ in in_flight.values():
                finish(index, Completion(requests[index].key, attempts=1, error="vLLM finished without an output"))
            in_flight.clear()
        for output in engine.step() if in_flight else ():
            request_id = aliases.get(output.request_id, output.request_id)
            if not output.finished or request_id not in in_flight:
                continue
            aliases.pop(output.request_id, None)
            index, added = in_flight.pop(request_id)
            try:
                result = _offline_completion(requests[index].key, output, time.perf_counter() - added)
            except Exception as e:  # a malformed output fails its request, not the run
                result = Completion(requests[index].key, attempts=1,
                                    error=f"unreadable vLLM output: {type(e).__name__}: {e}")
            finish(index, result)
        top_up()
    return results  # type: ignore[return-value]
