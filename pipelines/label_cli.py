"""`pipelines label DATASET --endpoint URL --model NAME ...`: the labeler's command (see `pipelines.label`).

Exit codes: 0 done (unusable outputs and request errors are reported, recorded in `label_ledger`, and do not
fail the run unless every request failed); 1 every request errored (server unreachable, wrong model...).
"""

from __future__ import annotations

import os
import sys

from pipelines.label_client import Sampling
from transforms.label.branch_points import MODES
from transforms.label.counterfactual import STRATEGIES

_DEFAULTS = Sampling()


def add_parser(sub, add_lake_args) -> None:
    p = sub.add_parser("label", help="predict counterfactual states with a world model (simulated branches)",
                       description=__doc__)
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    p.add_argument("--endpoint", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1")
    p.add_argument("--model", required=True, help="model name the server serves (or the vLLM model path)")
    p.add_argument("--per-episode", type=int, default=2, metavar="K", help="branch points per episode with "
                   "--branch-points random (default 2)")
    p.add_argument("--branch-points", choices=MODES, default="random",
                   help="every step, K random steps per episode, or the steps whose action changed the state")
    p.add_argument("--strategies", nargs="+", choices=sorted(STRATEGIES), metavar="NAME",
                   help=f"counterfactual strategies to use (default: all of each domain's): {', '.join(STRATEGIES)}")
    p.add_argument("--seed", type=int, default=0, help="seed for branch points and counterfactual choices")
    p.add_argument("--concurrency", type=int, default=16, metavar="N", help="requests in flight (default 16)")
    p.add_argument("--temperature", type=float, default=_DEFAULTS.temperature)
    p.add_argument("--top-p", type=float, default=_DEFAULTS.top_p)
    p.add_argument("--top-k", type=int, default=_DEFAULTS.top_k)
    p.add_argument("--max-tokens", type=int, default=_DEFAULTS.max_tokens)
    p.add_argument("--sampling-seed", type=int, help="the server's sampling seed (default: none)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per attempt (default 600)")
    p.add_argument("--retries", type=int, default=4, help="retries on timeouts, 429 and 5xx (default 4)")
    p.add_argument("--backend", choices=("http", "vllm"), default="http",
                   help="http: the endpoint; vllm: vLLM's offline engine in this process (GPU node)")
    p.add_argument("--retry-failed", action="store_true", help="resend requests whose output was unusable")
    p.add_argument("--dry-run", action="store_true", help="print the requests (JSON lines) without sending")
    add_lake_args(p)


def cmd_label(args) -> int:
    from pipelines.cli import _lake_url
    from pipelines.label import LabelOptions, label
    from pipelines.lake import Lake
    from pipelines.runner import new_run_id, open_catalog

    sampling = Sampling(args.temperature, args.top_p, args.top_k, args.max_tokens, args.sampling_seed)
    options = LabelOptions(model=args.model, endpoint=args.endpoint, per_episode=args.per_episode,
                           mode=args.branch_points, strategies=args.strategies, seed=args.seed, sampling=sampling,
                           concurrency=args.concurrency, timeout_s=args.timeout, retries=args.retries,
                           api_key=os.environ.get("OPENAI_API_KEY"), backend=args.backend,
                           retry_failed=args.retry_failed, dry_run=args.dry_run)
    lake = Lake(_lake_url(args.lake))
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    if args.dry_run:
        result = label(lake, args.catalog, args.dataset, options, "dry-run", log)
        log(f"dry run: {result.requests - result.cached} requests printed, {result.cached} already in the ledger")
        return 0
    run_id = new_run_id()
    config = {k: v for k, v in vars(args).items() if k not in ("lake", "catalog", "verbose")}
    with open_catalog(lake, args.catalog) as cat:
        cat.start_run(run_id, "label", args.dataset.partition("@")[0], config, [args.dataset])
    try:
        result = label(lake, args.catalog, args.dataset, options, run_id, log)
    except BaseException as e:
        with open_catalog(lake, args.catalog) as cat:
            cat.finish_run(run_id, "failed", error=f"{type(e).__name__}: {e}")
        raise
    all_errored = result.requests > 0 and result.errors == result.requests
    with open_catalog(lake, args.catalog) as cat:
        cat.add_stage_stats(run_id, "label", result.requests, result.branches_written,
                            result.failed + result.errors, result.seconds)
        cat.finish_run(run_id, "failed" if all_errored else "success", version=result.version,
                       steps=result.branches_written, error=result.messages[0] if all_errored else None)
    state = "new" if result.version_created else "unchanged"
    print(f"label {args.dataset}: {'FAILED' if all_errored else 'ok'}   run {run_id}\n  {result.summary()}\n"
          f"  dataset      {args.dataset.partition('@')[0]} v{result.version} ({state})")
    for line in result.messages[: None if args.verbose else 10]:
        print(f"    {line}")
    if len(result.messages) > 10 and not args.verbose:
        print(f"    ... {len(result.messages) - 10} more (--verbose, or SELECT * FROM label_ledger WHERE status <> 'ok')")
    return 1 if all_errored else 0
