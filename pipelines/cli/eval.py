"""`pipelines eval SOURCE --endpoint URL --model NAME --judge-endpoint URL --judge-model NAME`: the AgentWorldBench
protocol (infer, judge, score) on a dataset's held-out split, or on AgentWorldBench as released (a JSONL or
Parquet file, a folder of `*_test.jsonl` files as the reference reads them, or of the Parquet files the dataset
hub converts them to). See `pipelines.stages.eval`.

Exit codes: 0 done (failed samples are counted in the table, as the reference counts them); 1 no world-model
request got an answer (server unreachable, wrong model...).
"""

from __future__ import annotations

import argparse
import os
import sys

from pipelines.infra.label_client import ClientConfig, Sampling
from transforms.reward.judge import ATTEMPTS


def _ratios(text: str) -> tuple[float, float, float]:
    try:
        values = tuple(float(x) for x in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f"{text!r} is not TRAIN,VALIDATION,TEST (e.g. 0.5,0,0.5)")
    return values  # type: ignore[return-value]


def add_parser(sub, add_lake_args) -> None:
    from pipelines.cli.label import engine_arg

    p = sub.add_parser("eval", help="score a world model on held-out data: AgentWorldBench infer, judge, score",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", help="dataset NAME or NAME@VERSION (its --split is evaluated), or AgentWorldBench "
                   "as released: a JSONL or Parquet file, or a folder of them")
    p.add_argument("--endpoint", help="the world model's OpenAI-compatible base URL, e.g. http://localhost:8000/v1")
    p.add_argument("--model", required=True, help="the world model's name on the server (or the vLLM model path)")
    p.add_argument("--judge-endpoint", required=True, help="the judge's OpenAI-compatible base URL")
    p.add_argument("--judge-model", required=True, help="the judge model's name")
    p.add_argument("--split", default="test", help="the split to evaluate (default test)")
    p.add_argument("--per-domain", type=int, metavar="N", help="evaluate the first N samples of each domain")
    p.add_argument("--domains", nargs="+", metavar="D", help="evaluate these domains only")
    p.add_argument("--temperature", type=float, default=0.6, help="world model temperature (default 0.6)")
    p.add_argument("--max-tokens", type=int, help="world model max_tokens (default 32768, the reference's; "
                   "less for a server that reports a small context or serves one request at a time: "
                   "pipelines.infra.server_limits)")
    p.add_argument("--top-p", type=float, help="world model top_p (default: not sent, as the reference)")
    p.add_argument("--top-k", type=int, help="world model top_k (default: not sent)")
    p.add_argument("--judge-temperature", type=float, default=0.6)
    p.add_argument("--judge-max-tokens", type=int, help="judge max_tokens (default 32768, chosen like "
                   "--max-tokens)")
    p.add_argument("--judge-attempts", type=int, default=ATTEMPTS,
                   help=f"judge requests per sample before it counts as failed (default {ATTEMPTS}, the reference's)")
    p.add_argument("--share-identical", action="store_true",
                   help="evaluate a duplicate line once and send identical requests once, sharing the answer "
                   "(default: each line a sample and each sample its own requests, as the reference)")
    p.add_argument("--concurrency", type=int, help=f"world model requests in flight (default "
                   f"{ClientConfig.concurrency}; the server's slots where it reports them, 1 for llama-cpp-python's)")
    p.add_argument("--judge-concurrency", type=int, help="judge requests in flight (default as --concurrency)")
    p.add_argument("--timeout", type=float, default=ClientConfig.timeout_s, help="seconds per attempt")
    p.add_argument("--retries", type=int, default=ClientConfig.retries, help="retries on timeouts, 429 and 5xx")
    p.add_argument("--backend", choices=("http", "vllm"), default="http",
                   help="the world model on the endpoint (http) or on vLLM's offline engine here (vllm)")
    p.add_argument("--engine-arg", dest="engine_args", action="append", type=engine_arg, metavar="KEY=VALUE",
                   help="vllm backend: a vllm.LLM argument (repeatable)")
    p.add_argument("--split-ratios", type=_ratios, metavar="T,V,T",
                   help="a dataset's train,validation,test shares for the export (default 0.9,0.05,0.05)")
    p.add_argument("--seed", default="", help="a dataset's split salt (as `pipelines export --seed`)")
    p.add_argument("--max-context", type=int, dest="max_context", metavar="TOKENS",
                   help="a dataset's context budget per sample (history trimmed from the oldest turn)")
    p.add_argument("--tokenizer", help="tokenizer.json for exact token counts of --max-context")
    p.add_argument("--flush-every", type=int, default=16, metavar="N",
                   help="ledger rows per catalog write (also every 5 s): what an interrupted run keeps")
    add_lake_args(p)


def _client_defaults(args, log) -> None:
    """The flags not given, chosen from what each server reports (`pipelines.infra.server_limits`), so that a small
    local server is not sent 16 requests of max_tokens 32768; the run's recorded config holds the values."""
    from pipelines.infra.server_limits import client_flags
    from pipelines.stages.eval import INFER_SAMPLING
    from pipelines.stages.judge import JUDGE_SAMPLING

    probed: dict = {}
    endpoint = args.endpoint if args.backend == "http" else None
    args.max_tokens, args.concurrency = client_flags(
        endpoint, args.max_tokens, args.concurrency, INFER_SAMPLING.max_tokens, ClientConfig.concurrency, log, "eval: world model",
        probed=probed)
    args.judge_max_tokens, args.judge_concurrency = client_flags(
        args.judge_endpoint, args.judge_max_tokens, args.judge_concurrency, JUDGE_SAMPLING.max_tokens, ClientConfig.concurrency,
        log,
        "eval: judge", "--judge-max-tokens / --judge-concurrency", probed)


def cmd_eval(args) -> int:
    from pipelines.infra.lake import Lake, lake_url
    from pipelines.infra.runs import recorded_run
    from pipelines.stages.eval import EvalOptions, evaluate
    from transforms.reward.scores import format_table

    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    _client_defaults(args, log)
    options = EvalOptions(
        model=args.model, judge_model=args.judge_model, endpoint=args.endpoint, judge_endpoint=args.judge_endpoint,
        split=args.split, per_domain=args.per_domain, domains=args.domains,
        sampling=Sampling(args.temperature, args.top_p, args.top_k, args.max_tokens),
        judge_sampling=Sampling(args.judge_temperature, None, None, args.judge_max_tokens),
        judge_attempts=args.judge_attempts, concurrency=args.concurrency, judge_concurrency=args.judge_concurrency,
        timeout=args.timeout, retries=args.retries, api_key=os.environ.get("OPENAI_API_KEY"),
        judge_api_key=os.environ.get("JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY"), backend=args.backend,
        engine_args=dict(args.engine_args or ()), split_ratios=args.split_ratios, seed=args.seed,
        max_tokens=args.max_context, tokenizer=args.tokenizer, flush_every=args.flush_every,
        share_identical=args.share_identical)
    lake = Lake(lake_url(args.lake))
    config = {k: v for k, v in vars(args).items() if k not in ("lake", "catalog", "verbose")}
    name = args.source if os.path.exists(args.source) else args.source.partition("@")[0]
    with recorded_run(lake, args.catalog, "eval", name, config, [args.source]) as run:
        result = evaluate(lake, args.catalog, args.source, options, run.run_id, log)
        no_answer = result.infer_errors == result.samples
        run.stage("eval", result.samples, result.table.valid, result.table.failed, result.seconds)
        if no_answer:
            run.fail(result.messages[0] if result.messages else "no world-model request got an answer")
    print(f"eval {result.eval_id} of {result.source}: {'FAILED' if no_answer else 'ok'}   run {run.run_id}\n"
          f"  {result.summary()}\n\nAgentWorldBench scores (0-100; failed samples have no verdict)\n"
          + format_table(result.table))
    shown = result.messages if args.verbose else result.messages[:10]
    if shown:
        print("failed samples:\n" + "\n".join(f"  {line}" for line in shown))
        if len(result.messages) > len(shown):
            print(f"  ... {len(result.messages) - len(shown)} more (--verbose, or SELECT * FROM eval_samples "
                  f"WHERE eval_id = '{result.eval_id}' AND failed)")
    return 1 if no_answer else 0
