"""The world-model reward: the rule part's throughput on one core, and the judge client's overhead.

    .venv/bin/python bench/reward.py [--samples 50000] [--judge-requests 400] [--concurrency 16] [--repeats 3]

1. Rule part (`transforms.reward.rules.rule_score`) over rollouts made from the bundled samples of every
   domain (`ingest-all`, exported as RL ground truths of every turn): for each real next state, the exact
   answer in the domain's form, a near miss (one line changed, a volatile value changed), a wrong-form answer
   and an empty one, cycled to --samples. Beside it, a bare loop doing only the parse of the same outputs
   (`transforms.label.parse.parse_output`). One thread; samples per second of its CPU time (so other load on
   the machine does not count), median of the repeats (target: rule part >= 20k samples/s).
2. Judge client: the same judge requests (the judge input of every sample, answered with a readable
   verdict) at the same concurrency through `pipelines.stages.judge.judge_all` (our client, verdict parsing,
   attempt rounds; with and without the reward's directory cache) and through a bare `openai.AsyncOpenAI`
   loop (semaphore and gather, no retries, no parsing), against an instant loopback stand-in server, and
   against the llama.cpp server with SmolLM2 when it is installed (--llama-requests). Interleaved, median
   requests/s, ours / bare (target >= 0.95).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipelines.infra import definition  # noqa: E402
from pipelines.infra.label_client import ClientConfig, Sampling  # noqa: E402
from pipelines.infra.runner import run_ingest  # noqa: E402
from pipelines.stages.judge import DirectoryCache, JudgeJob, judge_all  # noqa: E402
from tests.pipelines.judge_servers import all_scores, verdict_text  # noqa: E402
from tests.pipelines.label_servers import ScriptedServer, chat_completion, smollm_gguf, start_llama_server  # noqa: E402
from transforms.agentworld import observation_turn  # noqa: E402
from transforms.label.parse import parse_output  # noqa: E402
from transforms.reward.judge import judge_messages  # noqa: E402
from transforms.reward.rules import rule_score  # noqa: E402


def ground_truths(lake: str) -> list[tuple[str, str, str]]:
    """(domain, the action's user turn, the real next state) of every turn of the bundled samples."""
    from pipelines import cli

    import pyarrow.parquet as pq

    run_ingest(definition.load("ingest-all"), lake, progress=False, log=lambda line: None)
    out = f"{lake}/sft"
    cli.main(["export", "sft", "all", "--lake", lake, "--out", out, "--format", "trl", "--split-ratios", "1,0,0"])
    found = []
    for path in sorted(Path(out).rglob("*.parquet")):
        for row in pq.read_table(path).to_pylist():
            truth = row["completion"][0]["content"]
            truth = truth.split("\n", 1)[1] if "\n" in truth else ""
            truth = truth.rsplit("\n</predicted_observation>", 1)[0]
            found.append((row["domain"], row["prompt"][-1]["content"], truth))
    return found


def rollouts(truths, n: int) -> list[tuple[str, str, str]]:
    """(domain, output, truth): exact, near miss, wrong form, empty, cycled to n. Each near miss is unique
    (its changed line holds the rollout's number), as rollouts are; ground truths repeat, as the rollouts of
    one prompt share theirs."""
    out = []
    for i in range(n):
        domain, _, truth = truths[(i // 4) % len(truths)]
        kind = i % 4
        if kind == 0:
            out.append((domain, observation_turn(truth, domain), truth))
        elif kind == 1:
            lines = truth.splitlines() or [""]
            near = "\n".join(lines[:-1] + [lines[-1] + f" 12:00:01 pid={i}"])
            out.append((domain, observation_turn(near, domain), truth))
        else:
            out.append((domain, truth if kind == 2 else "", truth))
    return out


def rate(fn, items, repeats: int) -> float:
    """Median samples per second of this process's CPU time (one thread: one core's worth, whatever else the
    machine runs)."""
    rates = []
    for _ in range(repeats):
        started = time.process_time()
        fn(items)
        rates.append(len(items) / (time.process_time() - started))
    return statistics.median(rates)


def rule_part(items) -> None:
    for domain, output, truth in items:
        rule_score(domain, output, truth)


def parse_only(items) -> None:
    for _, output, _ in items:
        parse_output(output)


# 2. judge client ------------------------------------------------------------------------------------------
def judge_requests(truths, n: int) -> list[JudgeJob]:
    jobs = []
    for i in range(n):
        domain, prompt, truth = truths[i % len(truths)]
        jobs.append(JudgeJob(str(i), domain, judge_messages(domain, [], prompt, f"prediction {i}", truth)))
    return jobs


def ours(url: str, model: str, jobs: list[JudgeJob], concurrency: int, cache: str | None = None) -> float:
    config = ClientConfig(url, model, Sampling(0.6, None, None, 256), concurrency, timeout_s=600, retries=0)
    store = DirectoryCache(tempfile.mkdtemp(dir=cache)) if cache else None
    started = time.perf_counter()
    outcomes = judge_all(config, jobs, store.lookup if store else (lambda keys: {}),
                         store.record if store else (lambda row: None), attempts=1)
    seconds = time.perf_counter() - started
    errors = [o.error for o in outcomes.values() if o.error and "request failed" in o.error]
    if errors:
        raise RuntimeError(f"our client: {len(errors)} errors, first: {errors[0]}")
    return len(jobs) / seconds


def bare(url: str, model: str, jobs: list[JudgeJob], concurrency: int) -> float:
    import openai

    async def run() -> None:
        client = openai.AsyncOpenAI(base_url=url, api_key="none", max_retries=0, timeout=600)
        gate = asyncio.Semaphore(concurrency)

        async def one(job):
            async with gate:
                await client.chat.completions.create(model=model, messages=job.messages, temperature=0.6,
                                                     max_tokens=256)

        await asyncio.gather(*(one(j) for j in jobs))
        await client.close()

    started = time.perf_counter()
    asyncio.run(run())
    return len(jobs) / (time.perf_counter() - started)


def compare(name: str, url: str, model: str, jobs, concurrency: int, repeats: int, cache_root: str) -> None:
    clients = {"ours": lambda: ours(url, model, jobs, concurrency),
               "ours + file cache": lambda: ours(url, model, jobs, concurrency, cache_root),
               "bare openai": lambda: bare(url, model, jobs, concurrency)}
    rates = {k: [] for k in clients}
    bare(url, model, jobs[:1], 1)  # warm-up
    order = list(clients)
    for repeat in range(repeats):
        for client in (order if repeat % 2 == 0 else order[::-1]):
            rates[client].append(clients[client]())
    medians = {k: statistics.median(v) for k, v in rates.items()}
    print(f"{name}: {len(jobs)} judge requests, concurrency {concurrency}, median of {repeats}")
    for k, v in medians.items():
        print(f"  {k:18s} {v:9.2f} requests/s")
    print(f"  ours / bare        {medians['ours'] / medians['bare openai']:9.3f}   (target >= 0.95)")
    print(f"  ours + cache / bare {medians['ours + file cache'] / medians['bare openai']:8.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=50_000)
    parser.add_argument("--judge-requests", type=int, default=400)
    parser.add_argument("--llama-requests", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        truths = ground_truths(f"{tmp}/lake")
        items = rollouts(truths, args.samples)
        by_domain = sorted({d for d, _, _ in truths})
        print(f"rule part: {len(items):,} rollouts from {len(truths)} real next states ({', '.join(by_domain)}), "
              f"mean output {sum(len(o) for _, o, _ in items) / len(items):,.0f} chars")
        mine, parse = rate(rule_part, items, args.repeats), rate(parse_only, items, args.repeats)
        print(f"  rule part (form, parse, anchors, masking)  {mine:12,.0f} samples/s   (target >= 20,000)")
        print(f"  bare parse loop                            {parse:12,.0f} samples/s")
        print(f"  rule part / parse                          {mine / parse:12.3f}")

        jobs = judge_requests(truths, args.judge_requests)
        answer = chat_completion(verdict_text(all_scores(4)))
        from http.server import ThreadingHTTPServer

        ThreadingHTTPServer.request_queue_size = 256  # the stand-in must not refuse connections under load
        stand_in = ScriptedServer([(200, answer, 0.0)])
        try:
            compare("instant stand-in server", stand_in.url, "judge", jobs, args.concurrency, args.repeats, tmp)
        finally:
            stand_in.close()
        gguf = smollm_gguf() if importlib.util.find_spec("llama_cpp") else None
        if gguf is None:
            print("llama.cpp server: skipped (llama_cpp or the SmolLM2 GGUF is not installed)")
            return
        proc, url = start_llama_server(gguf)
        try:
            small = [j for j in jobs if len(j.messages[0]["content"]) + len(j.messages[1]["content"]) < 16_000]
            compare("llama.cpp SmolLM2-135M", url, "smollm2", small[: args.llama_requests], 2, args.repeats, tmp)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
