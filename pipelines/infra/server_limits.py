"""What an OpenAI-compatible server says about its own limits, and the client defaults chosen from them.

`pipelines eval` and `label` default to the reference's max_tokens 32768 and 16 requests in flight, right for a
GPU server of a large model and wrong for a small local one: llama.cpp on a CPU answers one request (or one per
slot) at a time, so 16 queue behind each other, and a small model that rambles to 32768 tokens takes many
minutes per answer. A flag the user gave is never changed; the others are chosen from what the server reports:

- llama.cpp's server (`GET <root>/props`: `total_slots`, `default_generation_settings.n_ctx`, a slot's
  context): as many requests in flight as it has slots, max_tokens at most half a slot's context;
- vLLM (`GET /v1/models`: `max_model_len`): max_tokens at most half the model's context (vLLM refuses a request
  whose prompt and max_tokens exceed it);
- llama-cpp-python's server (`make serve-model`; `GET /v1/models` lists models `owned_by` "me", and it reports
  no context size): one request at a time (it serves one), max_tokens `LOCAL_MAX_TOKENS`;
- anything else (a hosted API, a server that answers none of these): the defaults as they are.
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass

LOCAL_MAX_TOKENS = 512  # at the 10-30 tokens/s of a small model on a busy CPU: under a minute an answer
PROBE_TIMEOUT_S = 3.0


@dataclass
class ServerLimits:
    kind: str = ""  # "llama.cpp", "vLLM", "llama-cpp-python"; "" when the server said nothing we read
    n_ctx: int | None = None  # context per request (a llama.cpp slot's, vLLM's max_model_len)
    slots: int | None = None  # requests it serves at once

    def describe(self) -> str:
        said = [f"context {self.n_ctx:,} tokens" if self.n_ctx else "no context size reported"]
        if self.slots:
            said.append(f"{self.slots} slot(s)")
        return f"{self.kind} ({', '.join(said)})"


def _get_json(url: str, timeout: float) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return json.loads(r.read())
    except (OSError, ValueError):
        return None


def probe(endpoint: str, timeout: float = PROBE_TIMEOUT_S) -> ServerLimits:
    """The limits the server at `endpoint` (an OpenAI-compatible base URL, e.g. http://host:8080/v1) reports."""
    base = endpoint.rstrip("/").removesuffix("/chat/completions")
    root = base.removesuffix("/v1")
    props = _get_json(f"{root}/props", timeout)
    if isinstance(props, dict) and isinstance(props.get("default_generation_settings"), dict):
        n_ctx = props["default_generation_settings"].get("n_ctx")
        slots = props.get("total_slots")
        return ServerLimits("llama.cpp", n_ctx if isinstance(n_ctx, int) else None,
                            slots if isinstance(slots, int) and slots > 0 else None)
    models = _get_json(f"{base}/models", timeout)
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list) or not data or not all(isinstance(m, dict) for m in data):
        return ServerLimits()
    lengths = [m["max_model_len"] for m in data if isinstance(m.get("max_model_len"), int)]
    if lengths:
        return ServerLimits("vLLM", min(lengths))
    if all(m.get("owned_by") == "me" for m in data):
        return ServerLimits("llama-cpp-python", None, 1)
    return ServerLimits()


def chosen(limits: ServerLimits, max_tokens: int | None, concurrency: int | None, default_max_tokens: int,
           default_concurrency: int, flags: str = "--max-tokens / --concurrency") -> tuple[int, int, str]:
    """(max_tokens, concurrency, a line saying what was chosen and why, "" when the defaults stand). A value
    given (not None) is kept."""
    picked_tokens, picked_concurrency = default_max_tokens, default_concurrency
    if limits.n_ctx:
        picked_tokens = min(default_max_tokens, max(256, limits.n_ctx // 2))
    elif limits.kind == "llama-cpp-python":
        picked_tokens = min(default_max_tokens, LOCAL_MAX_TOKENS)
    if limits.slots:
        picked_concurrency = min(default_concurrency, limits.slots)
    changed = []
    if max_tokens is None and picked_tokens != default_max_tokens:
        changed.append(f"max_tokens {picked_tokens:,}")
    if concurrency is None and picked_concurrency != default_concurrency:
        changed.append(f"concurrency {picked_concurrency}")
    line = (f"{limits.describe()}: {', '.join(changed)} instead of the defaults (give {flags} to choose)"
            if changed else "")
    return (max_tokens if max_tokens is not None else picked_tokens,
            concurrency if concurrency is not None else picked_concurrency, line)


def client_flags(endpoint: str | None, max_tokens: int | None, concurrency: int | None, default_max_tokens: int,
                 default_concurrency: int, log, what: str, flags: str = "--max-tokens / --concurrency",
                 probed: dict | None = None) -> tuple[int, int]:
    """`chosen` for the server at `endpoint` (probed once per endpoint when `probed` is shared), the choice
    logged as `<what>: <endpoint> is <server>: ...`; the defaults without an endpoint or when both are given."""
    if not endpoint or (max_tokens is not None and concurrency is not None):
        return (default_max_tokens if max_tokens is None else max_tokens,
                default_concurrency if concurrency is None else concurrency)
    probed = {} if probed is None else probed
    if endpoint not in probed:
        probed[endpoint] = probe(endpoint)
    tokens, in_flight, line = chosen(probed[endpoint], max_tokens, concurrency, default_max_tokens,
                                     default_concurrency, flags)
    if line:
        log(f"{what}: {endpoint} is {line}")
    return tokens, in_flight
