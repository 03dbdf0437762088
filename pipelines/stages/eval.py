"""`pipelines eval`: the AgentWorldBench protocol (Qwen-AgentWorld `eval/eval.py`: infer, judge, score) on a
dataset's held-out split, or on AgentWorldBench as released (its JSONL files, or the hub's Parquet of them).

1. Samples: a dataset version's records as `sft --format bench` renders them (the reference's record layout,
   with our grouped splits), taken from the export's render stream (`pipelines.stages.export.render.rendered_records`:
   nothing is written to be read back), those of the split in the order the bench files would hold them;
   a path is read directly (a folder: its `*_<split>.jsonl` files, as the reference's
   `load_data` globs `*_test.jsonl`, else the split's Parquet files; `read_bench`). Each line is a sample, a
   duplicate line too (its key numbered), as the reference evaluates every line. `per_domain` keeps the
   first N samples of each domain.
2. Infer: each sample's messages exactly as the reference's `run_inference` builds them (system_str, the
   earlier prompt/response pairs, the current prompt), sent with the labeler's client (any
   OpenAI-compatible server, or vLLM's offline engine); the generation is the answer's content alone (the
   reference's `gen = message.content or ""`: reasoning returned beside an empty content is no generation),
   and a request that gets no answer leaves the sample without one too. While requests are out a progress
   line comes every few seconds (`pipelines.infra.request_progress`: answered / total, failed, rate, ETA; before the
   first answer, how long it has waited and on what), so a slow server is never silence.
3. Judge (`pipelines.stages.judge`): the prediction parsed like the reference (`reference_answer`), the
   judge input of `transforms.reward.judge`, up to `judge_attempts` requests of the sample's own; a sample
   without a generation, or whose verdict never reads, is failed.
   Each sample is its own request to the world model and to the judge, as the reference sends one per
   sample (independent draws): samples with identical messages get separate requests (`judge.draws`).
   `share_identical` evaluates a duplicate line once and sends identical requests once, sharing the
   answer. The summary counts duplicate lines and identical requests either way.
4. Score (`transforms.reward.scores.aggregate`): per domain and dimension, (mean - 1) / 4 x 100, and overall.
   The rule part of the RL reward is computed for every sample too (`rule_score`), beside the verdict.

Catalog (tables created by `catalog.catalog`):
- `eval_requests`: every request (kind `infer` or `judge`; key = hash of model, sampling, messages, the
  judge attempt and the draw), its status (`ok`, `failed`: a judge answer that does not read, `error`: no
  answer), output (the content), tokens, latency. Rows are flushed while requests run; a rerun sends only
  the requests it has no `ok` or `failed` row for, so an interrupted run resumes and a finished one sends
  nothing.
- `evals`: one row per evaluation (`eval_id` = hash of the samples, models and settings): counts, overall.
- `eval_samples`: per sample its domain, prediction (the reference's `extracted_output`), real state, verdict
  (five dimensions, total, strengths, weaknesses), failed and why, rule score.
- `eval_scores`: the table: per domain (and `overall`) and dimension the normalized score, with the
  sample, valid and failed counts.
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable

import orjson

from pipelines.stages import label_ledger
from pipelines.infra.label_client import ChatRequest, ClientConfig, Completion, Sampling, complete, complete_offline
from pipelines.infra.lake import Lake
from pipelines.infra.request_progress import EVERY_S as PROGRESS_EVERY_S
from pipelines.infra.request_progress import RequestProgress
from pipelines.stages.judge import (CACHED, JudgeJob, JudgeOutcome, ModelAndJudgeOptions, completion_row, draws,
                                     judge_all)
from transforms.label.parse import reference_answer
from transforms.reward.judge import SCORE_DIMENSIONS, bench_domain, bench_judge_messages, clean_marker
from transforms.reward.rules import rule_score
from transforms.reward.scores import DIMENSIONS, Table, aggregate

LEDGER = "eval_requests"
LEDGER_COLUMNS = ("request_key", "kind", "model", "sampling", "domain", "sample_key", "attempt", "status", "output",
                  "finish_reason", "tokens_in", "tokens_out", "latency_s", "attempts", "error", "run_id",
                  "created_at")
# The reference's inference request: temperature 0.6 and max_tokens 32768, nothing else
INFER_SAMPLING = Sampling(temperature=0.6, top_p=None, top_k=None, max_tokens=32768)


@dataclass
class EvalOptions(ModelAndJudgeOptions):
    split: str = "test"
    sampling: Sampling = field(default_factory=lambda: INFER_SAMPLING)

    def client(self) -> ClientConfig:
        return self.model_client(self.sampling)


@dataclass
class EvalResult:
    eval_id: str
    table: Table
    source: str
    samples: int = 0
    infer_sent: int = 0
    infer_cached: int = 0
    infer_errors: int = 0
    judge_sent: int = 0
    judge_cached: int = 0
    duplicate_lines: int = 0  # lines identical to an earlier one: samples of their own, or merged when shared
    identical_infer: int = 0  # samples whose world-model request an earlier sample has too
    identical_judge: int = 0  # samples with a generation whose judge input an earlier sample has too
    shared: bool = False  # --share-identical: identical requests were sent once, duplicate lines merged
    seconds: float = 0.0
    messages: list[str] = field(default_factory=list)  # one line per failed sample

    def summary(self) -> str:
        how = "merged / shared (--share-identical)" if self.shared else "each its own sample and requests"
        return (f"{self.samples} samples; world model {self.infer_sent} sent, {self.infer_cached} from the ledger, "
                f"{self.infer_errors} without an answer; judge {self.judge_sent} sent, {self.judge_cached} from the "
                f"ledger; {self.duplicate_lines} duplicate lines, {self.identical_infer} world-model and "
                f"{self.identical_judge} judge requests identical to another sample's: {how}; {self.seconds:.1f} s")


def _sha(data, n: int = 32) -> str:
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()[:n]


# samples ----------------------------------------------------------------------------------------------
def read_bench(path: str, split: str) -> list[dict]:
    """AgentWorldBench records as released: a JSONL or Parquet file, or a folder of `*_<split>.jsonl` files
    (sorted, and their `<split>/` sub-folder's, where our bench export writes them) or, when it has none, of
    the Parquet files the dataset hub converts them to (`<config>/<split>/0000.parquet`,
    `<config>/partial-<split>/`, `<name>-<split>.parquet`, `<split>-00000-of-00001.parquet`: the files of the
    split, at any depth). Raises
    ValueError naming the file and line (row) of a record that is not an AgentWorldBench record."""
    files = _bench_files(path, split) if os.path.isdir(path) else [path]
    records = []
    for name in files:
        rows = _parquet_rows(name) if name.endswith(".parquet") else _jsonl_rows(name)
        for number, record in rows:
            if not isinstance(record, dict) or not isinstance(record.get("prompt"), (list, str)):
                raise ValueError(f"{name} {'row' if name.endswith('.parquet') else 'line'} {number}: "
                                 "not an AgentWorldBench record (no prompt list)")
            records.append(record)
    return records


def _bench_files(folder: str, split: str) -> list[str]:
    jsonl = sorted(glob.glob(os.path.join(folder, f"*_{split}.jsonl"))
                   + glob.glob(os.path.join(folder, split, f"*_{split}.jsonl")))
    if jsonl:
        return jsonl
    named = re.compile(rf"(^|[-_.]){re.escape(split)}([-_.]|$)")
    found = []
    for path in glob.glob(os.path.join(folder, "**", "*.parquet"), recursive=True):
        *parents, name = os.path.relpath(path, folder).split(os.sep)  # the split is named below `folder`
        if named.search(name[:-len(".parquet")]) or (parents and named.search(parents[-1])):
            found.append(path)
    return sorted(found)


def _jsonl_rows(name: str):
    with open(name, "rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield number, orjson.loads(line)
            except orjson.JSONDecodeError as e:
                raise ValueError(f"{name} line {number}: not JSON: {e}") from None


def _parquet_rows(name: str):
    """(row number, record) a row group at a time; a file without the prompt column says so."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(name)
    except Exception as e:  # pyarrow raises several kinds for a file that is not Parquet
        raise ValueError(f"{name}: not a Parquet file: {e}") from None
    if "prompt" not in parquet.schema_arrow.names:
        raise ValueError(f"{name}: not AgentWorldBench records (no prompt column; columns "
                         f"{', '.join(parquet.schema_arrow.names)})")
    number = 0
    for group in range(parquet.num_row_groups):
        for record in parquet.read_row_group(group).to_pylist():
            number += 1
            yield number, record


def dataset_samples(lake: Lake, catalog_path: str | None, dataset: str, options: EvalOptions,
                    log: Callable[[str], None]) -> tuple[list[dict], dict]:
    """The dataset version's samples of `options.split`, rendered as `sft --format bench` renders them (the
    reference's record layout, with our grouped splits) and taken from the export's stream: nothing is
    written to be read back. In the order the bench export's files would give them (domains by name, each
    domain's records in render order). Returns (records, source description)."""
    from collections import Counter

    from pipelines.stages.export.render import rendered_records

    version, stream = rendered_records(lake, catalog_path, dataset, options.render_options("bench"))
    in_split: list[tuple[str, dict]] = []
    for record in stream:
        split, domain = record.pop("_split"), record.pop("_domain")
        if split == options.split:
            in_split.append((domain, record))
    in_split.sort(key=lambda pair: pair[0])  # stable: render order within a domain
    counts = dict(sorted(Counter(domain for domain, _ in in_split).items()))
    log(f"eval: {dataset} v{version.version} rendered as AgentWorldBench records ({counts} in split {options.split})")
    return [record for _, record in in_split], {"source": f"{dataset}", "dataset": version.dataset,
                                                "version": version.version}


def select(records: list[dict], options: EvalOptions) -> tuple[list[dict], int]:
    """The domains asked for, the first `per_domain` of each: each line a sample, as the reference evaluates
    every line (a duplicate line's key gets its occurrence number), or duplicates once with
    `share_identical`. Returns (samples, duplicate lines)."""
    kept, per_domain, seen, duplicates = [], {}, {}, 0
    for record in records:
        domain = bench_domain(record)
        if options.domains and domain not in options.domains:
            continue
        key = _sha(record)
        occurrence = seen.get(key, 0)
        if occurrence and options.share_identical:
            duplicates += 1
            continue
        if options.per_domain is not None and per_domain.get(domain, 0) >= options.per_domain:
            continue
        seen[key] = occurrence + 1
        duplicates += occurrence > 0
        per_domain[domain] = per_domain.get(domain, 0) + 1
        kept.append({**record, "_key": _sha([key, occurrence]) if occurrence else key})
    return kept, duplicates


def infer_messages(record: dict) -> list[dict]:
    """The world model's request for one record, as the reference's `run_inference` builds it."""
    system, prompts, responses = record.get("system_str", ""), record.get("prompt", []), record.get("response", [])
    prompts = [prompts] if isinstance(prompts, str) else prompts
    turn = record.get("turn_idx", 1) - 1
    messages = [{"role": "system", "content": system}] if system else []
    for prompt, response in zip(prompts[:turn], responses[:turn]):
        messages += [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]
    messages.append({"role": "user", "content": prompts[turn]})
    return messages


def ground_truth(record: dict) -> str:
    responses = record.get("response", [])
    responses = [responses] if isinstance(responses, str) else responses
    turn = max(record.get("turn_idx", 1) - 1, 0)
    return responses[turn] if turn < len(responses) else ""


# the ledger ---------------------------------------------------------------------------------------------
class LedgerWriter:
    """Rows for a request ledger (`eval_requests`, or the labeler's `label_ledger` with its columns), written
    to the catalog in batches (the catalog is opened only to write, so `pipelines sql` works during a run);
    `flush` at the end and when interrupted."""

    def __init__(self, lake: Lake, catalog_path: str | None, run_id: str, every: int, seconds: float,
                 table: str = LEDGER, columns: tuple[str, ...] = LEDGER_COLUMNS):
        self.lake, self.catalog_path, self.run_id = lake, catalog_path, run_id
        self.every, self.seconds, self.pending, self.last = every, seconds, [], time.perf_counter()
        self.table, self.columns = table, columns

    def lookup(self, keys: list[str]) -> dict[str, dict]:
        from pipelines.infra.runs import open_catalog, release_catalog

        try:
            with open_catalog(self.lake, self.catalog_path, read_only=True) as cat:
                return label_ledger.lookup(cat.con, keys, self.table)
        finally:
            release_catalog()  # requests follow: the catalog stays free for others meanwhile

    def add(self, row: dict) -> None:
        from catalog.catalog import now

        self.pending.append({**row, "run_id": self.run_id, "created_at": now()})
        if len(self.pending) >= self.every or time.perf_counter() - self.last > self.seconds:
            self.flush()

    def flush(self) -> None:
        from pipelines.infra.runs import open_catalog, release_catalog

        if self.pending:
            try:
                with open_catalog(self.lake, self.catalog_path) as cat:
                    label_ledger.record(cat.con, self.pending, self.table, self.columns)
            finally:
                release_catalog()  # more requests follow: the catalog stays free for others meanwhile
            self.pending.clear()
        self.last = time.perf_counter()


# the stage ----------------------------------------------------------------------------------------------
def evaluate(lake: Lake, catalog_path: str | None, source: str, options: EvalOptions, run_id: str,
             log: Callable[[str], None] = print) -> EvalResult:
    """Infer, judge and score `source` (a dataset NAME[@VERSION] of the lake, or a bench JSONL file or folder)
    and store everything in the catalog. Raises ValueError for bad options or input, DatasetError for an
    unknown dataset."""
    started = time.perf_counter()
    _check(options)
    if os.path.exists(source):
        records, described = read_bench(source, options.split), {"source": os.path.abspath(source)}
    else:
        records, described = dataset_samples(lake, catalog_path, source, options, log)
    samples, duplicates = select(records, options)
    if not samples:
        raise ValueError(f"no samples in split {options.split!r} of {source} (a small dataset may have an empty "
                         "test split: set --split-ratios, e.g. 0.5,0,0.5)")
    eval_id = _sha([[s["_key"] for s in samples], options.model, options.sampling.key(), options.judge_model,
                    options.judge_sampling.key(), options.judge_attempts]
                   + (["shared"] if options.share_identical else []), 16)
    result = EvalResult(eval_id, aggregate([]), described["source"], len(samples), duplicate_lines=duplicates,
                        shared=options.share_identical)
    ledger = LedgerWriter(lake, catalog_path, run_id, options.flush_every, options.flush_seconds)
    try:
        generations, infer_keys = _infer(samples, options, ledger, result, log)
        outcomes = _judge(samples, generations, options, ledger, result, log)
    finally:
        ledger.flush()  # what finished is kept even when interrupted: a rerun resumes from it
    rows = [_sample_row(s, generations[s["_key"]], infer_keys[s["_key"]], outcomes.get(s["_key"]), eval_id, run_id)
            for s in samples]
    result.table = aggregate(rows)
    result.messages = [f"{r['domain']} {r['source_id']}: {r['error']}" for r in rows if r["failed"]]
    _record(lake, catalog_path, result, rows, described, options, run_id)
    result.seconds = time.perf_counter() - started
    return result


def _check(options: EvalOptions) -> None:
    if options.backend not in ("http", "vllm"):
        raise ValueError(f"unknown backend {options.backend!r} (http, vllm)")
    if options.backend == "http" and not options.endpoint:
        raise ValueError("the http backend needs the world model's endpoint (--endpoint http://host:port/v1)")
    if not options.judge_endpoint:
        raise ValueError("the judge needs an endpoint (--judge-endpoint http://host:port/v1)")
    if options.judge_attempts < 1:
        raise ValueError("--judge-attempts must be at least 1")


def _infer(samples: list[dict], options: EvalOptions, ledger: LedgerWriter, result: EvalResult,
           log: Callable[[str], None]) -> tuple[dict[str, str], dict[str, str]]:
    """(sample key -> the world model's content, "" when it got none, as the reference's `gen`; sample key ->
    request key). Each sample is its own request (the n-th with the same messages its own draw) unless
    `share_identical`. The ledger keeps the content alone: a reasoning-only answer is no generation."""
    client = options.client()
    sampling = orjson.loads(options.sampling.key())
    messages = [infer_messages(s) for s in samples]
    drawn = draws(messages, options.share_identical)
    result.identical_infer = sum(1 for n in draws(messages) if n)
    keys = {s["_key"]: _sha([options.model, sampling, m, {"output": "content", "draw": n}])
            for s, m, n in zip(samples, messages, drawn)}
    cached = {k: r for k, r in ledger.lookup(list(keys.values())).items() if r["status"] in CACHED}
    by_request = {}
    for s, m in zip(samples, messages):
        by_request.setdefault(keys[s["_key"]], (s, m))
    todo = [ChatRequest(k, m) for k, (s, m) in by_request.items() if k not in cached]
    fresh: dict[str, dict] = {}

    def on_result(completion: Completion) -> None:
        sample = by_request[completion.key][0]
        row = completion_row(completion.key, client, completion, output=completion.content, kind="infer",
                             sample_key=sample["_key"], domain=bench_domain(sample), attempt=1)
        fresh[completion.key] = row
        ledger.add(row)

    result.infer_cached, result.infer_sent = len(by_request) - len(todo), len(todo)
    if todo:
        where = f"vLLM offline engine {options.model}" if options.backend == "vllm" else options.endpoint
        log(f"eval: world model: {len(by_request)} requests, {len(by_request) - len(todo)} from the ledger, "
            f"sending {len(todo)} to {where}")
        waiting = f"max_tokens {options.sampling.max_tokens:,}" + (
            "" if options.backend == "vllm" else f", {options.concurrency} at a time")
        with RequestProgress("eval: world model", len(todo), log, PROGRESS_EVERY_S, waiting) as progress:
            def counted(completion: Completion) -> None:
                on_result(completion)
                progress.done(completion.error is None)

            if options.backend == "vllm":
                complete_offline(options.model, options.sampling, todo, counted, **options.engine_args)
            else:
                complete(client, todo, counted)
    generations = {}
    for s in samples:
        row = cached.get(keys[s["_key"]]) or fresh[keys[s["_key"]]]
        generations[s["_key"]] = (row["output"] or "") if row["status"] != "error" else ""
        result.infer_errors += row["status"] == "error"
    return generations, keys


def _judge(samples: list[dict], generations: dict[str, str], options: EvalOptions, ledger: LedgerWriter,
           result: EvalResult, log: Callable[[str], None]) -> dict[str, JudgeOutcome]:
    jobs = [JudgeJob(s["_key"], bench_domain(s), bench_judge_messages(s, reference_answer(generations[s["_key"]])))
            for s in samples if generations[s["_key"]]]
    counted = {"sent": 0, "cached": 0}

    def lookup(keys: list[str]) -> dict[str, dict]:
        found = ledger.lookup(keys)
        counted["cached"] += sum(1 for r in found.values() if r["status"] in CACHED)
        return found

    def on_row(row: dict) -> None:
        counted["sent"] += 1
        ledger.add(row)

    result.identical_judge = sum(1 for n in draws(job.messages for job in jobs) if n)
    if jobs:
        log(f"eval: judge {options.judge_model} at {options.judge_endpoint}: {len(jobs)} samples, "
            f"up to {options.judge_attempts} attempts each")
    outcomes = judge_all(options.judge_client(), jobs, lookup, on_row, options.judge_attempts,
                         share_identical=options.share_identical, log=log, what="eval: judge")
    result.judge_sent, result.judge_cached = counted["sent"], counted["cached"]
    return outcomes


def _sample_row(sample: dict, generation: str, infer_key: str, outcome: JudgeOutcome | None, eval_id: str,
                run_id: str) -> dict:
    domain, truth = bench_domain(sample), ground_truth(sample)
    verdict = outcome.verdict if outcome else None
    ok = bool(verdict and verdict.success)
    error = None if ok else (outcome.error if outcome else "No model generation")
    return {"eval_id": eval_id, "sample_key": sample["_key"], "domain": domain,
            "source_id": _source_id(sample), "turn_idx": sample.get("turn_idx"),
            "infer_key": infer_key, "judge_key": outcome.request_key if outcome else None,
            # the reference's `extracted_output`: the parsed answer as its judge got it (marker and all)
            "prediction": reference_answer(generation) if generation else None,
            "ground_truth": clean_marker(truth, domain),
            "failed": not ok, "error": error,
            **{d: (verdict.scores[d] if ok else 0) for d in SCORE_DIMENSIONS},
            "total_score": verdict.total_score if ok else 0.0,
            "rule_score": rule_score(domain, generation, truth).score,
            "strengths": orjson.dumps(verdict.strengths if ok else []).decode(),
            "weaknesses": orjson.dumps(verdict.weaknesses if ok else []).decode(), "run_id": run_id}


def _source_id(sample: dict) -> str:
    """The record's own id: `source_id` (our bench export's), else `id` (0 is an id too)."""
    for name in ("source_id", "id"):
        if sample.get(name) not in (None, ""):
            return str(sample[name])
    return ""


def _record(lake: Lake, catalog_path: str | None, result: EvalResult, rows: list[dict], described: dict,
            options: EvalOptions, run_id: str) -> None:
    """The evaluation's rows in `evals`, `eval_samples`, `eval_scores`, replacing an earlier run's of the
    same eval_id, in one transaction."""
    import pyarrow as pa

    from catalog.catalog import now
    from pipelines.infra.runs import open_catalog

    table = result.table
    scores = []
    for d in table.domains:
        for dim in DIMENSIONS:
            scores.append({"eval_id": result.eval_id, "domain": d.domain, "dimension": dim,
                           "score": d.scores.get(dim), "samples": d.samples, "valid": d.valid, "failed": d.failed})
    scores.append({"eval_id": result.eval_id, "domain": "overall", "dimension": "total_score", "score": table.overall,
                   "samples": table.samples, "valid": table.valid, "failed": table.failed})
    config = {k: v for k, v in vars(options).items() if "api_key" not in k}
    config = orjson.loads(orjson.dumps(config, default=lambda v: v.__dict__ if hasattr(v, "__dict__") else str(v)))
    with open_catalog(lake, catalog_path) as cat:
        con = cat.con
        con.execute("BEGIN")
        for name in ("evals", "eval_samples", "eval_scores"):
            con.execute(f"DELETE FROM {name} WHERE eval_id = ?", [result.eval_id])
        con.execute("INSERT INTO evals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [result.eval_id, described["source"], described.get("dataset"), described.get("version"),
                     options.split, options.model, options.judge_model, table.samples, table.valid, table.failed,
                     table.overall, orjson.dumps(config).decode(), run_id, now()])
        for name, data in (("eval_samples", rows), ("eval_scores", scores)):
            con.register("_eval_rows", pa.Table.from_pylist(data))
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _eval_rows")
            con.unregister("_eval_rows")
        con.execute("COMMIT")


# as a stage of a definition ------------------------------------------------------------------------------
def eval_options(table: dict) -> EvalOptions:
    """A definition's `[stage_options.eval]` table: EvalOptions fields, the world model's and the judge's
    sampling as tables (`sampling = {temperature = 0.6, max_tokens = 32768}`); the API keys, when the table
    names none, from OPENAI_API_KEY and JUDGE_API_KEY as the command reads them. ValueError naming the bad key."""
    from pipelines.infra.options import from_mapping
    from pipelines.stages.judge import model_and_judge_table

    where = "stage_options.eval"
    data, sampling = model_and_judge_table(table, where, INFER_SAMPLING)
    if "split_ratios" in data:
        data["split_ratios"] = tuple(data["split_ratios"])
    options = dataclasses.replace(from_mapping(EvalOptions, data, where), **sampling)
    options.api_key = options.api_key or os.environ.get("OPENAI_API_KEY")
    options.judge_api_key = options.judge_api_key or os.environ.get("JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")
    _check(options)
    return options


def eval_stage(ctx) -> "StageResult":
    """`stages = [..., "eval"]`: the dataset's held-out split evaluated as `pipelines eval` does, with its
    options from `[stage_options.eval]` (`eval_options`). A run where no world-model request got an answer
    fails the stage."""
    from pipelines.stages import StageResult
    from transforms.reward.scores import format_table

    options = eval_options(ctx.options)
    result = evaluate(ctx.lake, ctx.catalog_path, ctx.dataset, options, ctx.run_id, ctx.log)
    if result.samples and result.infer_errors == result.samples:
        raise RuntimeError(result.messages[0] if result.messages else "no world-model request got an answer")
    ctx.log(f"eval {result.eval_id}: {result.summary()}\n" + format_table(result.table))
    for line in result.messages[:10]:
        ctx.log(f"  {line}")
    overall = result.table.overall
    return StageResult(records_in=result.samples, records_out=result.table.valid, quarantined=result.table.failed,
                       summary=f"eval {result.eval_id}: overall {overall:.2f}" if overall is not None
                       else f"eval {result.eval_id}: no valid sample")
