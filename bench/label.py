"""The labeler's client overhead, and how much prefix grouping lets a server's prefix cache serve.

    .venv/bin/python bench/label.py [--concurrency 4] [--llama-requests 6] [--fake-requests 300] [--repeats 2]

Requests are the labeler's own (`pipelines.stages.label.plan_jobs`, every branch point) over the bundled samples of
every format (`ingest-all` into a scratch lake).

1. Client overhead: the same requests at the same concurrency through our client
   (`pipelines.infra.label_client.complete`) and through a bare `openai.AsyncOpenAI` loop (a semaphore and
   `gather`, no retries), after one warm-up request, interleaved with the first client alternating, median
   requests/s of the repeats, and ours / bare (target >= 0.95):
   a) against the loopback llama.cpp server with SmolLM2-135M (skipped when llama_cpp is not installed);
      requests whose prompt exceeds --max-prompt-chars are left out so every one fits the context;
   b) against an instant loopback stand-in (a scripted server answering at once), where the client is
      nearly all the work.
2. Prefix reuse: a request reuses a previous request's prefix when its prompt (the messages concatenated)
   shares more than the system prompt with one of the `concurrency` requests sent just before it (those a
   server still has cached, even with a small cache). Printed: that share of requests, and the share of
   prompt characters a prefix cache could serve, for our order (grouped by episode, then branch point), the
   order a plain loop over strategies would send (strategy-major), and a shuffled order.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipelines.infra import definition  # noqa: E402
from pipelines.infra.datasets import read_table, resolve  # noqa: E402
from pipelines.stages.label import LabelOptions, plan_jobs  # noqa: E402
from pipelines.infra.label_client import ChatRequest, ClientConfig, Sampling, complete  # noqa: E402
from pipelines.infra.lake import Lake  # noqa: E402
from pipelines.infra.runner import run_ingest  # noqa: E402
from pipelines.infra.runs import open_catalog  # noqa: E402
from tests.pipelines.label_servers import ScriptedServer, chat_completion, smollm_gguf, start_llama_server  # noqa: E402


def labeler_jobs(lake_dir: str):
    run_ingest(definition.load("ingest-all"), lake_dir, progress=False, log=lambda line: None)
    lake = Lake(lake_dir)
    with open_catalog(lake, read_only=True) as cat:
        version = resolve(cat, "all")
        steps, episodes = read_table(lake, version, "steps"), read_table(lake, version, "episodes")
    return plan_jobs(steps, episodes, LabelOptions(model="bench", branch_points="every"))


# 1. client overhead -------------------------------------------------------------------------------------
def ours(url: str, model: str, sampling: Sampling, messages: list[list[dict]], concurrency: int) -> float:
    config = ClientConfig(url, model, sampling, concurrency, timeout_s=600, retries=0)
    started = time.perf_counter()
    results = complete(config, [ChatRequest(str(i), m) for i, m in enumerate(messages)])
    seconds = time.perf_counter() - started
    errors = [r.error for r in results if r.error]
    if errors:
        raise RuntimeError(f"our client: {len(errors)} errors, first: {errors[0]}")
    return len(messages) / seconds


def bare(url: str, model: str, sampling: Sampling, messages: list[list[dict]], concurrency: int) -> float:
    import openai

    async def run() -> None:
        client = openai.AsyncOpenAI(base_url=url, api_key="none", max_retries=0, timeout=600)
        gate = asyncio.Semaphore(concurrency)

        async def one(m):
            async with gate:
                await client.chat.completions.create(
                    model=model, messages=m, temperature=sampling.temperature, top_p=sampling.top_p,
                    max_tokens=sampling.max_tokens, extra_body={"top_k": sampling.top_k})

        await asyncio.gather(*(one(m) for m in messages))
        await client.close()

    started = time.perf_counter()
    asyncio.run(run())
    return len(messages) / (time.perf_counter() - started)


def compare(name: str, url: str, model: str, sampling: Sampling, messages, concurrency: int, repeats: int) -> None:
    rates = {"ours": [], "bare openai": []}
    clients = {"ours": ours, "bare openai": bare}
    bare(url, model, sampling, messages[:1], 1)  # warm-up: the server's state is the same for both
    for repeat in range(repeats):  # interleaved, alternating who goes first: noise and cache state hit both
        for client in (("ours", "bare openai") if repeat % 2 == 0 else ("bare openai", "ours")):
            rates[client].append(clients[client](url, model, sampling, messages, concurrency))
    mine, theirs = statistics.median(rates["ours"]), statistics.median(rates["bare openai"])
    print(f"{name}: {len(messages)} requests, concurrency {concurrency}, median of {repeats}")
    print(f"  ours         {mine:9.2f} requests/s")
    print(f"  bare openai  {theirs:9.2f} requests/s")
    print(f"  ours / bare  {mine / theirs:9.3f}   (target >= 0.95)")


# 2. prefix reuse ----------------------------------------------------------------------------------------
def _prompt(messages: list[dict]) -> str:
    return "\x1e".join(f"{m['role']}\x1f{m['content']}" for m in messages)


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n  # binary search on equal prefixes: fast on long prompts
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def prefix_reuse(jobs, window: int) -> tuple[float, float]:
    """(share of requests reusing more than the system prompt of one of the `window` previous requests,
    share of prompt characters such reuse covers)."""
    prompts = [_prompt(j.messages) for j in jobs]
    systems = [len(_prompt(j.messages[:1])) for j in jobs]
    reused, covered, total = 0, 0, 0
    for i, prompt in enumerate(prompts):
        best = max((_common_prefix(prompt, prompts[j]) for j in range(max(0, i - window), i)), default=0)
        if best > systems[i] + 1:
            reused += 1
            covered += best
        total += len(prompt)
    return reused / len(prompts), covered / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--llama-requests", type=int, default=6)
    parser.add_argument("--fake-requests", type=int, default=300)
    parser.add_argument("--max-tokens", type=int, default=8, help="per llama.cpp request")
    parser.add_argument("--max-prompt-chars", type=int, default=6000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        jobs = labeler_jobs(str(Path(tmp) / "lake"))
    print(f"labeler requests over the bundled samples (every branch point): {len(jobs)}")

    order = {s: i for i, s in enumerate(dict.fromkeys(j.strategy for j in jobs))}
    strategy_major = sorted(jobs, key=lambda j: (order[j.strategy], j.step["episode_id"], j.step["step_index"]))
    shuffled = random.Random(0).sample(jobs, len(jobs))
    print(f"prefix reuse within the last {args.concurrency} requests: requests reusing / prompt chars servable")
    for name, ordered in (("grouped (ours)", jobs), ("strategy-major loop", strategy_major), ("shuffled", shuffled)):
        share, chars = prefix_reuse(ordered, args.concurrency)
        print(f"  {name:20s} {share:6.1%} / {chars:6.1%}")

    fake_messages = [jobs[i % len(jobs)].messages for i in range(args.fake_requests)]
    fake = ScriptedServer([(200, chat_completion("<predicted_observation>ok</predicted_observation>"), 0.0)])
    try:
        compare("instant loopback stand-in", fake.url, "bench", Sampling(), fake_messages, args.concurrency,
                args.repeats)
    finally:
        fake.close()

    gguf = smollm_gguf()
    if importlib.util.find_spec("llama_cpp") is None or gguf is None:
        print("llama.cpp server: skipped (pip install 'trajforge[label-test]')")
        return
    fitting = [j.messages for j in jobs if len(_prompt(j.messages)) <= args.max_prompt_chars]
    proc, url = start_llama_server(gguf)
    try:
        sampling = Sampling(temperature=0.0, max_tokens=args.max_tokens, seed=0)
        compare(f"llama.cpp SmolLM2-135M, max_tokens {args.max_tokens}", url, "smollm2", sampling,
                fitting[: args.llama_requests], args.concurrency, args.repeats)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
