"""`pipelines label DATASET --endpoint URL --model NAME ...`: the labeler's command (see `pipelines.stages.label`).
On a GPU node, `--backend vllm --model PATH [--engine-arg KEY=VALUE ...]` runs vLLM's offline engine instead.

`--mode sample --judge-endpoint URL --judge-model NAME [--rollouts N --min-score S]`: rejection sampling
(`pipelines.stages.sample`): N rollouts per real transition of the split from a reasoning model, judged
against the real next state; the best one at or above the bar becomes the transition's SFT target with
thinking (`pipelines export sft --targets sampled`).

Exit codes: 0 done (unusable outputs and request errors are reported, recorded in `label_ledger`, and do not
fail the run unless every request failed); 1 every request errored (server unreachable, wrong model...).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

from pipelines.infra.label_client import ClientConfig, Sampling
from transforms.label.branch_points import MODES
from transforms.label.counterfactual import STRATEGIES

_DEFAULTS = Sampling()
PREVIEW = 3  # requests a dry run prints
PREVIEW_CHARS = 160  # of each message
# flags of the http client only; their defaults are None so that the vllm backend can tell a given flag
_HTTP_ONLY = (("--endpoint", "endpoint"), ("--concurrency", "concurrency"), ("--timeout", "timeout"),
              ("--retries", "retries"))


def engine_arg(item: str) -> tuple[str, object]:
    """`--engine-arg KEY=VALUE`: VALUE is JSON when it parses (2, true, 0.9, {"level": 3}), Python's True /
    False / None are read as such too (a string "False" would be true to vLLM), anything else is a string."""
    key, sep, text = item.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"{item!r} is not KEY=VALUE (e.g. tensor_parallel_size=2)")
    if key == "model":
        raise argparse.ArgumentTypeError(f"{item!r}: the model is given by --model")
    try:
        return key, json.loads(text)
    except ValueError:
        return key, {"True": True, "False": False, "None": None}.get(text, text)


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
    p.add_argument("--concurrency", type=int, metavar="N",
                   help=f"http backend: requests in flight (default {ClientConfig.concurrency})")
    p.add_argument("--temperature", type=float, default=_DEFAULTS.temperature)
    p.add_argument("--top-p", type=float, default=_DEFAULTS.top_p)
    p.add_argument("--top-k", type=int, default=_DEFAULTS.top_k)
    p.add_argument("--max-tokens", type=int, help=f"default {_DEFAULTS.max_tokens}; less for a server that reports "
                   "a small context or serves one request at a time (pipelines.infra.server_limits), as --concurrency")
    p.add_argument("--sampling-seed", type=int, help="the server's sampling seed (default: none)")
    p.add_argument("--timeout", type=float,
                   help=f"http backend: seconds per attempt (default {ClientConfig.timeout_s:g})")
    p.add_argument("--retries", type=int,
                   help=f"http backend: retries on timeouts, 429 and 5xx (default {ClientConfig.retries})")
    p.add_argument("--backend", choices=("http", "vllm"), default="http",
                   help="http: the endpoint; vllm: vLLM's offline engine in this process (GPU node)")
    p.add_argument("--engine-arg", dest="engine_args", action="append", type=engine_arg, metavar="KEY=VALUE",
                   help="vllm backend: a vllm.LLM argument, VALUE as JSON (repeatable), e.g. "
                        "--engine-arg tensor_parallel_size=2 --engine-arg max_model_len=32768")
    p.add_argument("--retry-failed", action="store_true", help="resend requests whose output was unusable")
    p.add_argument("--mode", choices=("branches", "sample"), default="branches",
                   help="branches: counterfactual states (default); sample: rejection-sampled thinking targets "
                        "for the real transitions")
    s = p.add_argument_group("--mode sample")
    s.add_argument("--rollouts", type=int, default=4, metavar="N", help="rollouts per transition (default 4)")
    s.add_argument("--judge-endpoint", help="the judge's OpenAI-compatible base URL")
    s.add_argument("--judge-model", help="the judge's model name")
    s.add_argument("--min-score", type=float, default=4.0, metavar="S",
                   help="the best rollout's judge total (1-5) a transition needs to get a target (default 4)")
    s.add_argument("--split", default="train", help="the export split to sample ('all': every split; default train)")
    s.add_argument("--per-domain", type=int, metavar="N", help="the first N transitions of each domain")
    s.add_argument("--domains", nargs="+", metavar="DOMAIN", help="only these domains")
    s.add_argument("--share-identical", action="store_true",
                   help="judge rollouts with identical judge input once, sharing the verdict (default: each its own)")
    p.add_argument("--dry-run", action="store_true", help="write the requests (JSON lines) to --requests-out "
                   f"without sending; print the first {PREVIEW} of them, cut short, and the count")
    p.add_argument("--requests-out", metavar="FILE", help="--dry-run: where every request goes (default "
                   "label-requests-DATASET.jsonl in the current folder; '-': all of them to stdout)")
    add_lake_args(p)


def check_backend_args(args, log) -> None:
    """With --backend vllm, one line per http client flag given (they do not apply); with http, --engine-arg is
    an error (ValueError). Then `args.engine_args` becomes a dict (later ones win) and the http client's
    defaults fill the flags not given, so that the run's recorded config holds them."""
    args.engine_args = dict(args.engine_args or ())
    if args.backend == "vllm":
        for flag, name in _HTTP_ONLY:
            if getattr(args, name) is not None:
                log(f"label: {flag} is ignored by the vllm backend")
    elif args.engine_args:
        raise ValueError("--engine-arg applies to --backend vllm only")
    for name, default in (("concurrency", ClientConfig.concurrency), ("timeout", ClientConfig.timeout_s),
                          ("retries", ClientConfig.retries)):
        if getattr(args, name) is None:
            setattr(args, name, default)


def _client_defaults(args, log) -> int | None:
    """--max-tokens and --concurrency where not given, from what the server reports (`pipelines.infra.server_limits`);
    with `--mode sample`, also the judge's max_tokens (returned; None: the judge's default)."""
    from pipelines.infra.server_limits import client_flags
    from pipelines.stages.judge import JUDGE_SAMPLING

    probed: dict = {}
    endpoint = args.endpoint if args.backend == "http" else None
    concurrency = args.concurrency
    args.max_tokens, args.concurrency = client_flags(endpoint, args.max_tokens, args.concurrency,
                                                     _DEFAULTS.max_tokens, ClientConfig.concurrency, log, "label",
                                                     probed=probed)
    if endpoint is None:
        args.concurrency = concurrency  # the vllm backend tells a given flag by None
    if args.mode != "sample" or not args.judge_endpoint:
        return None
    judge_max_tokens, _ = client_flags(args.judge_endpoint, None, concurrency, JUDGE_SAMPLING.max_tokens,
                                       ClientConfig.concurrency, log, "label: judge", "--concurrency", probed)
    return judge_max_tokens


def cmd_label(args) -> int:
    from pipelines.infra.lake import lake_url
    from pipelines.stages.label import LabelOptions, label
    from pipelines.infra.lake import Lake
    from pipelines.infra.runs import recorded_run

    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    judge_max_tokens = _client_defaults(args, log)
    check_backend_args(args, log)
    sampling = Sampling(args.temperature, args.top_p, args.top_k, args.max_tokens, args.sampling_seed)
    options = LabelOptions(model=args.model, endpoint=args.endpoint, per_episode=args.per_episode,
                           branch_points=args.branch_points, strategies=args.strategies, seed=args.seed, sampling=sampling,
                           concurrency=args.concurrency, timeout=args.timeout, retries=args.retries,
                           api_key=os.environ.get("OPENAI_API_KEY"), backend=args.backend,
                           engine_args=args.engine_args, retry_failed=args.retry_failed, dry_run=args.dry_run)
    lake = Lake(lake_url(args.lake))
    if args.mode == "sample":
        return _cmd_sample(args, options, lake, log, judge_max_tokens)
    if args.dry_run:
        return _dry_run(args, options, lake, log)
    config = {k: v for k, v in vars(args).items() if k not in ("lake", "catalog", "verbose")}
    with recorded_run(lake, args.catalog, "label", args.dataset.partition("@")[0], config, [args.dataset]) as run:
        result = label(lake, args.catalog, args.dataset, options, run.run_id, log)
        all_errored = result.requests > 0 and result.errors == result.requests
        run.stage("label", result.requests, result.branches_written, result.failed + result.errors, result.seconds)
        run.fields.update(version=result.version, steps=result.branches_written)
        if all_errored:
            run.fail(result.messages[0])
    run_id = run.run_id
    state = "new" if result.version_created else "unchanged"
    print(f"label {args.dataset}: {'FAILED' if all_errored else 'ok'}   run {run_id}\n  {result.summary()}\n"
          f"  dataset      {args.dataset.partition('@')[0]} v{result.version} ({state})")
    for line in result.messages[: None if args.verbose else 10]:
        print(f"    {line}")
    if len(result.messages) > 10 and not args.verbose:
        print(f"    ... {len(result.messages) - 10} more (--verbose, or SELECT * FROM label_ledger WHERE status <> 'ok')")
    return 1 if all_errored else 0


def _dry_run(args, options, lake, log) -> int:
    """Every request to a file (or stdout with `--requests-out -`), a bounded preview and the count: a dataset's
    requests run to megabytes, which no terminal should scroll through before the summary."""
    from pipelines.stages.label import label

    path = args.requests_out or f"label-requests-{args.dataset.partition('@')[0]}.jsonl"
    if path == "-":
        result = label(lake, args.catalog, args.dataset, options, "dry-run", log)
    else:
        out = _OpenedOnWrite(path)
        try:
            result = label(lake, args.catalog, args.dataset, options, "dry-run", log, out)
        finally:
            out.close()
        for line in out.first:
            print(preview(json.loads(line)))
    shared = result.requests - result.cached - result.sent
    where = "" if path == "-" or not result.sent else f" to {path} (the first {min(PREVIEW, result.sent)} above)"
    log(f"dry run: {result.sent} requests printed{where}, {result.cached} already in the ledger"
        + (f", {shared} identical to a printed one (sent once, their answer shared)" if shared else ""))
    return 0


class _OpenedOnWrite:
    """The requests file, made only when there is a request to write (a run refused before planning leaves no
    file behind); keeps the first `PREVIEW` lines for the preview."""

    def __init__(self, path: str):
        self.path, self.file, self.first = path, None, []

    def write(self, line: str) -> None:
        if self.file is None:
            self.file = open(self.path, "w", encoding="utf-8")
        if len(self.first) < PREVIEW:
            self.first.append(line)
        self.file.write(line)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def preview(request: dict, width: int = PREVIEW_CHARS) -> str:
    """One request in a few lines: where it goes, its sampling, and the start of its first and last messages."""
    body = request["body"]
    head = (f"request {request['request_key']}: POST {request['url']} model {body.get('model')}, "
            f"max_tokens {body.get('max_tokens')}, {len(body['messages'])} messages")
    lines, messages = [head], body["messages"]
    shown = messages if len(messages) <= 3 else [messages[0], None, messages[-1]]
    for m in shown:
        if m is None:
            lines.append(f"  ... {len(messages) - 2} messages of earlier turns")
            continue
        text = m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
        cut = " ".join((text or "").split())
        lines.append(f"  {m['role']}: {cut[:width]}" + (f" ... ({len(text):,} chars)" if len(cut) > width else ""))
    return "\n".join(lines)


def _cmd_sample(args, label_options, lake, log, judge_max_tokens: int | None = None) -> int:
    """`--mode sample`: the rollouts take the labeler's model, sampling and client flags."""
    from pipelines.infra.runs import recorded_run
    from pipelines.stages.sample import SampleOptions, sample_targets

    if args.dry_run:
        raise ValueError("--dry-run applies to --mode branches only")
    options = SampleOptions(model=args.model, judge_model=args.judge_model, endpoint=args.endpoint,
                            judge_endpoint=args.judge_endpoint, rollouts=args.rollouts, min_score=args.min_score,
                            split=None if args.split == "all" else args.split, domains=args.domains,
                            per_domain=args.per_domain, sampling=label_options.sampling,
                            concurrency=args.concurrency, judge_concurrency=args.concurrency, timeout=args.timeout,
                            retries=args.retries, api_key=label_options.api_key,
                            judge_api_key=os.environ.get("JUDGE_API_KEY") or label_options.api_key,
                            backend=args.backend, engine_args=args.engine_args,
                            share_identical=args.share_identical)
    if judge_max_tokens is not None:
        options.judge_sampling = dataclasses.replace(options.judge_sampling, max_tokens=judge_max_tokens)
    config = {k: v for k, v in vars(args).items() if k not in ("lake", "catalog", "verbose")}
    with recorded_run(lake, args.catalog, "label", args.dataset.partition("@")[0], config, [args.dataset]) as run:
        result = sample_targets(lake, args.catalog, args.dataset, options, run.run_id, log)
        failed = result.rollouts > 0 and result.unusable == result.rollouts
        run.stage("label", result.queries, result.targets_written, result.dropped, result.seconds)
        run.fields.update(version=result.version, steps=result.targets_written)
        if failed:
            run.fail("no rollout gave a usable prediction (see label_ledger)")
    state = "new" if result.version_created else "unchanged"
    print(f"label {args.dataset} (rejection sampling): {'FAILED' if failed else 'ok'}   run {run.run_id}\n"
          f"  {result.summary()}\n  dataset      {args.dataset.partition('@')[0]} v{result.version} ({state})")
    for line in result.messages[: None if args.verbose else 10]:
        print(f"    {line}")
    if len(result.messages) > 10 and not args.verbose:
        print(f"    ... {len(result.messages) - 10} more (--verbose, or SELECT * FROM sampled_rollouts)")
    return 1 if failed else 0
