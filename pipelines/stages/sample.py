"""Rejection sampling: SFT targets with thinking (`pipelines label DATASET --mode sample`).

For each real transition of a dataset version's chosen split, rendered exactly as `pipelines export sft`
renders it (the same system prompt, history and action; the records of an SFT export into
`<lake>/samples/<dataset>/sft-<hash>/`):

1. **Rollouts.** N requests to an OpenAI-compatible reasoning model (or vLLM's offline engine), rollout i with
   sampling seed `seed + i` so that the rollouts differ. Every answer is a row of the labeler's ledger
   (`label_ledger`: strategy `rollout-<i>`, `parent_step_id` the real acting step), so a rerun sends nothing
   twice and an interrupted one resumes. A rollout is usable when it parses like a labeler's answer
   (`transforms.label.parse.parse_output`).
2. **Judge.** Each usable rollout is judged against the real next state by the AgentWorldBench judge
   (`pipelines.stages.judge`, its requests cached in `eval_requests`): its score is the verdict's total, the
   mean of the five 1-5 dimensions. An unusable rollout or a verdict that never reads scores 0.
3. **Choice.** The best rollout (highest score; the lowest rollout index on ties) becomes the transition's
   target when its score reaches `min_score`; under it the transition gets no target (counted as dropped).
4. **Record.** Every rollout, its scores and whether it was chosen is a row of the catalog table
   `sampled_rollouts`; the targets kept are a new `targets` part of a new dataset version
   (`schemas.v1.TARGETS`). `steps` is never touched.

A target is the rollout's reasoning in a `<think>` block followed by its own prediction in the domain's answer
form (`transforms.agentworld.observation_turn`): the SFT record trains the reasoning and the answer it led to,
never a real observation under a model's reasoning. `pipelines export sft --targets sampled` takes these
targets and marks every record (`origin` and `target_origin` "sampled"); without it no export reads them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import orjson
import pyarrow as pa

from pipelines.stages import label_ledger
from pipelines.infra.label_client import ChatRequest, ClientConfig, Completion, Sampling, complete, complete_offline
from pipelines.infra.lake import Lake
from pipelines.infra.request_progress import RequestProgress
from pipelines.stages import StageContext, StageResult
from pipelines.stages.eval import LedgerWriter
from pipelines.stages.judge import CACHED, JUDGE_SAMPLING, JudgeJob, ModelAndJudgeOptions, judge_all
from schemas import TARGETS
from transforms.agentworld import observation_turn
from transforms.label.parse import parse_output, reference_answer, strip_marker
from transforms.reward.judge import SCORE_DIMENSIONS, judge_messages

if TYPE_CHECKING:
    from catalog import Version

# The project's default bar: a target's best rollout must be judged "good" (4 of 5) on average
MIN_SCORE = 4.0
ROLLOUT_STRATEGY = "rollout-{}"
_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.IGNORECASE | re.DOTALL)


@dataclass
class SampleOptions(ModelAndJudgeOptions):
    rollouts: int = 4  # N per transition
    min_score: float = MIN_SCORE  # the best rollout's judge total (1-5) a transition needs to get a target
    split: str | None = "train"  # the export split whose transitions are sampled; None: every split
    sampling: Sampling = field(default_factory=Sampling)  # rollout i sends seed (sampling.seed or 0) + i

    def rollout_sampling(self, i: int) -> Sampling:
        return dataclasses.replace(self.sampling, seed=(self.sampling.seed or 0) + i)

    def client(self, i: int) -> ClientConfig:
        return self.model_client(self.rollout_sampling(i))


@dataclass
class Query:
    """One real transition: the SFT record's prompt and its real target."""

    step_id: str  # the acting step (the SFT record's `id`)
    domain: str
    messages: list[dict]  # system, history, the action: the record's messages without its target
    real: str  # the record's target: the real next observation in the answer form


@dataclass
class Rollout:
    query: Query
    index: int
    request_key: str
    row: dict | None = None  # its ledger row
    observation: str | None = None  # parsed prediction; None when unusable
    error: str | None = None
    judge_key: str | None = None
    scores: dict = field(default_factory=dict)
    score: float = 0.0


@dataclass
class SampleResult:
    queries: int = 0
    rollouts: int = 0
    rollouts_sent: int = 0
    rollouts_cached: int = 0
    unusable: int = 0  # rollouts without a usable prediction (no answer, empty, truncated)
    judged: int = 0
    judge_failed: int = 0  # verdicts that never read: scored 0
    kept: int = 0  # transitions with a target
    dropped: int = 0  # transitions whose best rollout scored under min_score
    without_reasoning: int = 0  # kept targets whose rollout showed no reasoning
    targets_written: int = 0
    version: int | None = None
    version_created: bool = False
    seconds: float = 0.0
    messages: list[str] = field(default_factory=list)  # one line per dropped transition

    def summary(self) -> str:
        return (f"{self.queries} transitions x rollouts = {self.rollouts} ({self.rollouts_cached} from the ledger, "
                f"{self.rollouts_sent} sent, {self.unusable} unusable); {self.judged} judged "
                f"({self.judge_failed} verdicts unread); {self.kept} kept, {self.dropped} under the bar; "
                f"{self.targets_written} new targets; {self.seconds:.1f} s")


def _sha(data, n: int = 32) -> str:
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()[:n]


def _check(options: SampleOptions) -> None:
    if options.backend not in ("http", "vllm"):
        raise ValueError(f"unknown backend {options.backend!r} (http, vllm)")
    if options.backend == "http" and not options.endpoint:
        raise ValueError("the http backend needs the reasoning model's endpoint (--endpoint http://host:port/v1)")
    if not options.judge_endpoint or not options.judge_model:
        raise ValueError("rejection sampling needs a judge (--judge-endpoint URL --judge-model NAME)")
    if options.rollouts < 1:
        raise ValueError("--rollouts must be at least 1")
    if options.judge_attempts < 1:
        raise ValueError("--judge-attempts must be at least 1")


# the transitions --------------------------------------------------------------------------------------
def export_queries(lake: Lake, catalog_path: str | None, dataset: str, options: SampleOptions,
                   log: Callable[[str], None]) -> tuple[list[Query], Version]:
    """The version's transitions of the split as `pipelines export sft` renders them, taken from the export's
    stream (nothing written to be read back). Returns (queries, the version rendered)."""
    from pipelines.stages.export.render import rendered_records

    version, stream = rendered_records(lake, catalog_path, dataset, options.render_options("agentworld"))
    queries: list[Query] = []
    per_domain: dict[str, int] = {}
    for record in stream:
        if options.split is not None and record["_split"] != options.split:
            continue
        domain = record["domain"]
        if options.per_domain is not None and per_domain.get(domain, 0) >= options.per_domain:
            continue
        per_domain[domain] = per_domain.get(domain, 0) + 1
        messages = record["messages"]
        queries.append(Query(record["id"], domain, messages[:-1], messages[-1]["content"]))
    log(f"label: {len(queries)} transitions of {dataset} v{version.version} "
        f"(split {options.split or 'all'}) rendered as the SFT export renders them")
    return queries, version


# rollouts and their judging ---------------------------------------------------------------------------
def _rollout_key(options: SampleOptions, query: Query, i: int) -> str:
    return _sha([options.model, orjson.loads(options.rollout_sampling(i).key()), query.messages])


def _ledger_row(rollout: Rollout, options: SampleOptions, completion: Completion) -> dict:
    query = rollout.query
    row = {"request_key": rollout.request_key, "model": options.model, "template_hash": None,
           "input_hash": _sha(query.messages), "sampling": options.rollout_sampling(rollout.index).key(),
           "domain": query.domain, "parent_step_id": query.step_id,
           "strategy": ROLLOUT_STRATEGY.format(rollout.index), "branch_id": None, "output": completion.text,
           "finish_reason": completion.finish_reason, "tokens_in": completion.tokens_in,
           "tokens_out": completion.tokens_out, "latency_s": completion.latency_s, "attempts": completion.attempts}
    if completion.error:
        return {**row, "status": "error", "observation": None, "error": completion.error}
    parsed = parse_output(completion.text, completion.finish_reason)
    return {**row, "status": "failed" if parsed.failure else "ok", "observation": parsed.observation,
            "error": parsed.failure}


def _roll(rollouts: list[Rollout], options: SampleOptions, ledger: LedgerWriter, result: SampleResult,
          log: Callable[[str], None]) -> None:
    """Each rollout's ledger row: from the ledger, or sent now (a round per seed). Identical requests (the
    same transition twice) are sent once and share the answer."""
    rows = {k: row for k, row in ledger.lookup(list({r.request_key for r in rollouts})).items()
            if row["status"] in CACHED}
    result.rollouts += len(rollouts)
    result.rollouts_cached += sum(r.request_key in rows for r in rollouts)
    for i in range(options.rollouts):
        todo = {r.request_key: r for r in rollouts if r.index == i and r.request_key not in rows}
        if not todo:
            continue
        log(f"label: rollout {i + 1}/{options.rollouts}: sending {len(todo)} requests "
            f"(seed {options.rollout_sampling(i).seed})")

        def on_result(completion: Completion, todo=todo) -> None:
            rows[completion.key] = _ledger_row(todo[completion.key], options, completion)
            ledger.add(rows[completion.key])

        requests = [ChatRequest(key, r.query.messages) for key, r in todo.items()]
        with RequestProgress(f"label: rollout {i + 1}", len(todo), log) as progress:
            def counted(completion: Completion, progress=progress) -> None:
                on_result(completion)
                progress.done(completion.error is None)

            if options.backend == "vllm":
                complete_offline(options.model, options.rollout_sampling(i), requests, counted,
                                 **options.engine_args)
            else:
                complete(options.client(i), requests, counted)
        result.rollouts_sent += len(todo)
    for rollout in rollouts:
        rollout.row = rows[rollout.request_key]
        if rollout.row["status"] == "ok":
            rollout.observation = rollout.row["observation"]
        else:
            rollout.error = f"rollout unusable: {rollout.row['error']}"
            result.unusable += 1


def _judge_messages(query: Query, output: str) -> list[dict]:
    """The judge's input for a rollout: the transition's earlier turns, its action, the rollout's prediction
    and the real next state, each answer read as the reference evaluation reads a model's output; the earlier
    turns' observations in the benchmark's response form, as `pipelines eval` and the RL reward show them."""
    turns = query.messages[1:]
    history = [(turns[i]["content"], observation_turn(strip_marker(reference_answer(turns[i + 1]["content"]))))
               for i in range(0, len(turns) - 1, 2)]
    return judge_messages(query.domain, history, turns[-1]["content"], reference_answer(output),
                          reference_answer(query.real))


def _judge(rollouts: list[Rollout], options: SampleOptions, judge_ledger: LedgerWriter, result: SampleResult,
           log: Callable[[str], None]) -> None:
    usable = [r for r in rollouts if r.observation is not None]
    jobs = [JudgeJob(r.request_key, r.query.domain, _judge_messages(r.query, r.row["output"])) for r in usable]
    if jobs:
        log(f"label: judge {options.judge_model} at {options.judge_endpoint}: {len(jobs)} rollouts")
    outcomes = judge_all(options.judge_client(), jobs, judge_ledger.lookup, judge_ledger.add, options.judge_attempts,
                         share_identical=options.share_identical, log=log, what="label: judge")
    for rollout in usable:
        outcome = outcomes[rollout.request_key]
        rollout.judge_key = outcome.request_key
        result.judged += 1
        if outcome.verdict.success:
            rollout.scores = dict(outcome.verdict.scores)
            rollout.score = float(outcome.verdict.total_score)
        else:
            rollout.error = outcome.error
            result.judge_failed += 1


def best(rollouts: list[Rollout]) -> Rollout:
    """The highest score, the lowest rollout index among equals."""
    return max(rollouts, key=lambda r: (r.score, -r.index))


def reasoning_of(output: str | None) -> str | None:
    """The text of the output's closed `<think>` blocks, joined; None when it shows none."""
    parts = [m.group(1).strip() for m in _THINK_BLOCK.finditer(output or "")]
    parts = [p for p in parts if p]
    return "\n\n".join(parts) if parts else None


def target_text(domain: str, reasoning: str | None, observation: str) -> str:
    """The SFT target of a kept rollout: its reasoning, then its own prediction in the domain's answer form."""
    answer = observation_turn(observation, domain)
    return f"<think>\n{reasoning}\n</think>\n\n{answer}" if reasoning else answer


# the run ----------------------------------------------------------------------------------------------
ROLLOUT_COLUMNS = ("request_key", "judge_model", "step_id", "domain", "rollout", "model", "status", "judge_key",
                   "score", *SCORE_DIMENSIONS, "error", "chosen", "kept", "min_score", "target_id", "run_id",
                   "created_at")
CHUNK = 256  # transitions whose rollouts are sent and judged together (memory and progress follow it)


def sample_targets(lake: Lake, catalog_path: str | None, dataset: str, options: SampleOptions, run_id: str,
                   log: Callable[[str], None] = print) -> SampleResult:
    """Sample, judge and keep targets for `dataset` (NAME or NAME@VERSION), and commit a version with them.
    Raises ValueError for bad options, DatasetError for an unknown dataset."""
    from catalog.catalog import now
    from pipelines.infra.datasets import read_table
    from pipelines.infra.runs import open_catalog

    started = time.perf_counter()
    _check(options)
    queries, version = export_queries(lake, catalog_path, dataset, options, log)
    existing = set(read_table(lake, version, "targets", ["step_id"]).column("step_id").to_pylist())
    rollout_ledger = LedgerWriter(lake, catalog_path, run_id, options.flush_every, options.flush_seconds,
                                  "label_ledger", label_ledger.COLUMNS)
    judge_ledger = LedgerWriter(lake, catalog_path, run_id, options.flush_every, options.flush_seconds)
    result = SampleResult(queries=len(queries))
    labeler = orjson.dumps({"model": options.model, "sampling": orjson.loads(options.sampling.key()),
                            "rollouts": options.rollouts, "judge_model": options.judge_model,
                            "judge_sampling": orjson.loads(options.judge_sampling.key()),
                            "min_score": options.min_score}, option=orjson.OPT_SORT_KEYS).decode()
    targets, rollout_rows = [], []
    for start in range(0, len(queries), CHUNK):
        rollouts = [Rollout(q, i, _rollout_key(options, q, i))
                    for q in queries[start:start + CHUNK] for i in range(options.rollouts)]
        try:
            _roll(rollouts, options, rollout_ledger, result, log)
            _judge(rollouts, options, judge_ledger, result, log)
        finally:  # what finished is kept even when interrupted: a rerun resumes from it
            rollout_ledger.flush()
            judge_ledger.flush()
        for i in range(0, len(rollouts), options.rollouts):
            target = _choose(rollouts[i:i + options.rollouts], options, result, labeler, run_id, rollout_rows)
            if target is not None and target["step_id"] not in existing:
                existing.add(target["step_id"])
                targets.append(target)
    stamp = now()
    with open_catalog(lake, catalog_path) as cat:
        label_ledger.record(cat.con, [{**r, "created_at": stamp} for r in rollout_rows], "sampled_rollouts",
                            ROLLOUT_COLUMNS)
    result.targets_written = len(targets)
    result.version, result.version_created = _commit(lake, catalog_path, version, targets, run_id, options)
    result.seconds = time.perf_counter() - started
    return result


def _choose(rollouts: list[Rollout], options: SampleOptions, result: SampleResult, labeler: str, run_id: str,
            rollout_rows: list[dict]) -> dict | None:
    """One transition's decision: its target row (episode and step index filled at commit), or None; every
    rollout's `sampled_rollouts` row is appended to `rollout_rows`."""
    query, chosen = rollouts[0].query, best(rollouts)
    kept = chosen.observation is not None and chosen.score >= options.min_score
    target_id = f"{query.step_id}:rs-{chosen.request_key[:16]}" if kept else None
    for r in rollouts:
        rollout_rows.append({"request_key": r.request_key, "judge_model": options.judge_model, "step_id": query.step_id,
                             "domain": query.domain, "rollout": r.index, "model": options.model,
                             "status": r.row["status"], "judge_key": r.judge_key, "score": r.score,
                             **{d: r.scores.get(d, 0) for d in SCORE_DIMENSIONS}, "error": r.error,
                             "chosen": kept and r is chosen, "kept": kept, "min_score": options.min_score,
                             "target_id": target_id if r is chosen else None, "run_id": run_id})
    if not kept:
        result.dropped += 1
        result.messages.append(f"{query.step_id}: best of {len(rollouts)} rollouts scored {chosen.score:.2f} "
                               f"< {options.min_score:g}" + (f" ({chosen.error})" if chosen.error else ""))
        return None
    result.kept += 1
    reasoning = reasoning_of(chosen.row["output"])
    result.without_reasoning += reasoning is None
    return {"step_id": target_id, "parent_step_id": query.step_id, "domain": query.domain, "origin": "sampled",
            "target": target_text(query.domain, reasoning, chosen.observation), "reasoning": reasoning,
            "prediction": chosen.observation, "score": chosen.score, "rollouts": len(rollouts), "labeler": labeler,
            "request_key": chosen.request_key, "_run_id": run_id}


def _commit(lake: Lake, catalog_path: str | None, version, targets: list[dict], run_id: str,
            options: SampleOptions) -> tuple[int, bool]:
    """A new version whose `targets` gain one part (each row with its step's episode and index)."""
    from pipelines.infra.datasets import commit, read_parts, write_part
    from pipelines.infra.runs import open_catalog

    if not targets:
        return version.version, False
    import pyarrow.compute as pc

    wanted = pa.array(sorted({t["parent_step_id"] for t in targets}), pa.string())
    where = {}
    for part in version.parts.get("steps", []):
        steps = read_parts(lake, [part], "steps", ["step_id", "episode_id", "step_index"])
        for row in steps.filter(pc.is_in(steps["step_id"], wanted)).to_pylist():
            where[row["step_id"]] = (row["episode_id"], row["step_index"])
    rows = [{**t, "episode_id": where[t["parent_step_id"]][0], "step_index": where[t["parent_step_id"]][1]}
            for t in targets]
    with open_catalog(lake, catalog_path) as cat:
        part = write_part(lake, version.dataset, "targets", pa.Table.from_pylist(rows, schema=TARGETS), "label")
        return commit(lake, cat, version, run_id, {"targets": [*version.parts.get("targets", []), part]},
                      note=f"label: {len(rows)} sampled targets by {options.model}, judged by {options.judge_model}")


def sample_options(table: dict, where: str = "stage_options.sample") -> SampleOptions:
    """A definition's `[stage_options.sample]` (or `[stage_options.label]` with `mode = "sample"`) table:
    SampleOptions fields, the rollouts' sampling as a table (`sampling = {temperature = 0.6, max_tokens = 32768,
    seed = 0}`); ValueError naming the bad key."""
    from pipelines.infra.options import from_mapping
    from pipelines.stages.judge import model_and_judge_table

    data, sampling = model_and_judge_table(table, where, Sampling())
    return dataclasses.replace(from_mapping(SampleOptions, data, where), **sampling)


def sample_stage(ctx: StageContext) -> StageResult:
    """The `sample` stage (`[stage_options.sample]`), also `label` with `mode = "sample"`
    (`[stage_options.label]`): `sample_options`."""
    data = {k: v for k, v in ctx.options.items() if k != "mode"}
    options = sample_options(data, "stage_options.label" if "mode" in ctx.options else "stage_options.sample")
    result = sample_targets(ctx.lake, ctx.catalog_path, ctx.dataset, options, ctx.run_id, ctx.log)
    for line in result.messages[:10]:
        ctx.log(f"  {line}")
    return StageResult(records_in=result.queries, records_out=result.targets_written, quarantined=result.dropped,
                       version=result.version if result.version_created else None, summary=result.summary())
