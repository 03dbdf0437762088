"""The labeler: counterfactual branches of real trajectories, their next state predicted by a world model.

For each episode of a dataset version: choose branch points (`transforms.label.branch_points`), make
counterfactual actions (`transforms.label.counterfactual`), render each as an AgentWorld chat request exactly
like the SFT export (`transforms.agentworld.transition_messages`: real history up to the branch point, then
the counterfactual action), send the requests that are not in the ledger (`pipelines.stages.label_ledger`) to the
world model (`pipelines.infra.label_client`), parse the outputs (`transforms.label.parse`) and commit a new dataset
version whose `branches` gain one part (`steps`, the real line, is never touched; `schemas.branches`).

A branch row (one per successful request) has:
- `parent_step_id` = the real step t it leaves from (its observation is the state the counterfactual action
  is taken in; its history is the episode's real steps before t), `episode_id`, `step_index` t, `domain`;
- `step_id` = `{parent_step_id}:sim-{request key[:16]}` (one labeler's answer), `branch_id` =
  `schemas.branches.branch_key(parent, action)`: the same branch labeled by two models shares it;
- `origin` = "simulated", `action` = the counterfactual action (its `raw` names the strategy), `strategy`,
  `next_observation` = the predicted state, `labeler` = JSON {model, template, sampling}, `request_key` =
  the ledger row holding the raw output.

The stage runs on `pipelines.infra.stage_runner` (`LABEL`): each part group is a task (`label_group`: its requests
planned and sent, in-process or on Ray, asking for one CPU with the HTTP client and the engine's GPUs with the
vllm backend), and the driver does what must stay in one place: the ledger rows a task sends in batches while its
requests run are written to the catalog as they come (`_report`; the catalog is opened only for the write, so
`pipelines sql` works during a long run; an interrupted run resumes from them), and after each group, in group
order, the dry run's request lines are written or the group's branch rows made (`_group_done`). In-process a
group starts after the one before it is recorded, so the same request in two groups is sent once; on Ray a
group's rows reach the driver with its result.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import orjson
import pyarrow as pa

from pipelines.stages import label_ledger
from pipelines.infra.datasets import read_parts, read_table, write_part
from pipelines.infra.executor import Resources
from pipelines.infra.label_client import ChatRequest, ClientConfig, Completion, Sampling, complete, complete_offline, request_body
from pipelines.infra.lake import Lake
from pipelines.infra.request_progress import RequestProgress
from pipelines.infra.options import OptionsError, from_mapping
from pipelines.infra.stage_runner import Outcome, PartsStage, Plan, StageRun, run_parts
from pipelines.stages import StageContext, StageResult
from schemas import BRANCHES, TABLES
from schemas.branches import branch_key
from transforms.agentworld import action_block, prompt_tools, screen_size, system_prompt, transition_messages
from transforms.label import branch_points
from transforms.label.counterfactual import counterfactuals, make_action
from transforms.label.parse import leftover_tags, parse_output

# Bump when the way this module assembles a request changes (it is part of every template hash).
REQUEST_LAYOUT_VERSION = "1"
FLUSH_EVERY = 64  # ledger rows per catalog write
FLUSH_SECONDS = 10.0


@dataclass
class LabelOptions:
    model: str
    endpoint: str | None = None  # OpenAI-compatible base URL; None with backend "vllm"
    per_episode: int = 2
    branch_points: str = "random"  # transforms.label.branch_points.MODES
    strategies: list[str] | None = None  # None: every strategy of each domain
    seed: int = 0  # branch point and counterfactual choices
    sampling: Sampling = field(default_factory=Sampling)
    # the client's settings, flat so stage options and flags map one to one; defaults are the client's
    concurrency: int = ClientConfig.concurrency
    timeout: float = ClientConfig.timeout_s  # seconds per attempt
    retries: int = ClientConfig.retries
    backoff_s: float = ClientConfig.backoff_s
    api_key: str | None = None
    backend: str = "http"  # http | vllm (offline engine)
    engine_args: dict[str, object] = field(default_factory=dict)  # vllm backend: vllm.LLM arguments (tensor_parallel_size...)
    retry_failed: bool = False  # resend requests whose earlier output was unusable
    dry_run: bool = False

    def client(self) -> ClientConfig:
        return ClientConfig(self.endpoint or "", self.model, self.sampling, self.concurrency, self.timeout,
                            self.retries, self.backoff_s, self.api_key)


@dataclass
class Job:
    """One request: a counterfactual action at a branch point, rendered."""

    request_key: str
    domain: str
    step: dict  # the real step at the branch point
    next_kind: str
    strategy: str
    action: dict
    messages: list[dict]
    template_hash: str
    input_hash: str
    branch_id: str


@dataclass
class LabelResult:
    requests: int = 0
    cached: int = 0  # answered by the ledger
    sent: int = 0
    ok: int = 0
    failed: int = 0  # unusable output (empty, truncated, reasoning / tags left in the state)
    errors: int = 0  # no answer after retries
    branches_written: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    version: int | None = None
    version_created: bool = False
    messages: list[str] = field(default_factory=list)  # one line per failed / errored request

    def summary(self) -> str:
        return (f"{self.requests} requests ({self.cached} from the ledger, {self.sent} sent): {self.ok} ok, "
                f"{self.failed} unusable, {self.errors} errors; {self.branches_written} new branches; "
                f"tokens {self.tokens_in:,} in / {self.tokens_out:,} out; {self.seconds:.1f} s")


def _sha(data: bytes, n: int = 32) -> str:
    return hashlib.sha256(data).hexdigest()[:n]


def template_hash(domain: str) -> str:
    """Changes when the domain's rendering changes (system prompt, turn layout, action shapes): the hash of a
    fixed probe transition rendered by the SFT renderer, plus this module's layout version."""
    probe = transition_messages(domain, [(make_action("wait"), "<probe observation>")],
                                make_action("done"), "<probe state>")
    return _sha(orjson.dumps([REQUEST_LAYOUT_VERSION, probe]), 16)


def labeler_id(model: str, template: str, sampling: Sampling) -> str:
    return orjson.dumps({"model": model, "template": template, "sampling": orjson.loads(sampling.key())},
                        option=orjson.OPT_SORT_KEYS).decode()


def _tools(env_json: str | None) -> list[dict] | None:
    try:
        tools = orjson.loads(env_json or "{}").get("tools")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return tools if isinstance(tools, list) and tools else None


def plan_jobs(steps: pa.Table, episodes: pa.Table, options: LabelOptions) -> list[Job]:
    """Every request for the steps (the real line) of a version, ordered so that requests sharing a trajectory prefix
    (same episode, then same branch point) are adjacent."""
    episode_rows = {e["episode_id"]: e for e in episodes.select(["episode_id", "env", "task"]).to_pylist()}
    by_episode: dict[str, list[dict]] = {}
    for row in steps.to_pylist():
        by_episode.setdefault(row["episode_id"], []).append(row)
    templates: dict[str, str] = {}
    sampling_key = options.sampling.key()
    jobs = []
    for episode_id in sorted(by_episode):
        rows = sorted(by_episode[episode_id], key=lambda r: r["step_index"])
        domain = rows[0]["domain"]
        if domain not in templates:
            templates[domain] = template_hash(domain)
        first_state = rows[0]["observation"]["text"]
        episode = episode_rows.get(episode_id, {})
        tools = prompt_tools(_tools(episode.get("env")), [r["action"] for r in rows])
        system, blocks = system_prompt(domain, tools), []  # rendered once for the episode's requests
        for t in branch_points.choose(episode_id, rows, options.branch_points, options.per_episode, options.seed):
            history = [(rows[i]["action"], rows[i + 1]["observation"]["text"] or "") for i in range(t)]
            blocks.extend(action_block(rows[i]["action"], domain, screen_size(rows[i]["observation"]))
                          for i in range(len(blocks), t))
            after = branch_points.next_observation(rows, t)
            next_kind = (after or {}).get("kind") or rows[t]["observation"]["kind"]
            for cf in counterfactuals(domain, rows, t, strategies=options.strategies, seed=options.seed,
                                      episode_id=episode_id):
                messages = transition_messages(domain, history, cf.action, first_state, tools, task=episode.get("task"),
                                               system=system, action_blocks=blocks,
                                               screen=screen_size(rows[t]["observation"]))
                input_hash = _sha(orjson.dumps(messages))
                key = _sha("\x1f".join((options.model, templates[domain], input_hash, sampling_key)).encode())
                branch = branch_key(rows[t]["step_id"], cf.action)
                jobs.append(Job(key, domain, rows[t], next_kind, cf.strategy, cf.action, messages,
                                templates[domain], input_hash, branch))
    return jobs


def _ledger_row(job: Job, options: LabelOptions, completion: Completion, run_id: str) -> dict:
    from catalog.catalog import now

    row = {"request_key": job.request_key, "model": options.model, "template_hash": job.template_hash,
           "input_hash": job.input_hash, "sampling": options.sampling.key(), "domain": job.domain,
           "parent_step_id": job.step["step_id"], "strategy": job.strategy, "branch_id": job.branch_id,
           "output": completion.text, "finish_reason": completion.finish_reason,
           "tokens_in": completion.tokens_in, "tokens_out": completion.tokens_out,
           "latency_s": completion.latency_s, "attempts": completion.attempts, "run_id": run_id,
           "created_at": now()}
    if completion.error:
        return {**row, "status": "error", "error": completion.error}
    parsed = parse_output(completion.text, completion.finish_reason)
    return {**row, "status": "failed" if parsed.failure else "ok", "observation": parsed.observation,
            "error": parsed.failure}


def branch_row(job: Job, row: dict, labeler: str, run_id: str) -> dict:
    """The `branches` row of a usable answer."""
    step = job.step
    predicted = {f.name: None for f in TABLES["steps"].field("observation").type} | {
        "kind": job.next_kind, "text": row["observation"]}
    return {"step_id": f"{step['step_id']}:sim-{job.request_key[:16]}", "branch_id": job.branch_id,
            "parent_step_id": step["step_id"], "episode_id": step["episode_id"], "step_index": step["step_index"],
            "domain": job.domain, "origin": "simulated", "action": job.action, "next_observation": predicted,
            "strategy": job.strategy, "labeler": labeler, "request_key": job.request_key, "_run_id": run_id}


def label(lake: Lake, catalog_path: str | None, dataset: str, options: LabelOptions, run_id: str,
          log: Callable[[str], None] = print, out=None, executor: str = "auto", ray_address: str | None = None,
          resources: Resources | None = None) -> LabelResult:
    """Label one dataset version (NAME or NAME@VERSION) and commit the new version. With `dry_run`, write the
    requests that would be sent (one JSON object per line: url and body) to `out` and change nothing.
    Works one part group (whole episodes with their steps) at a time on `pipelines.infra.stage_runner`, so
    memory follows the part size: a group's requests are planned and sent by its task (`label_group`), the
    driver records its answers in the ledger as they come and makes its branch rows before the next group's
    (`_group_done`). Each task asks for `resources` (None: as declared; the vllm backend adds its GPUs).
    Raises DatasetError for an unknown dataset, ValueError for bad options."""
    from pipelines.stages import STAGES

    ctx = StageContext(lake, catalog_path, dataset, run_id, {"options": options, "out": out}, log, executor,
                       ray_address, resources or STAGES["label"].resources)
    return run_parts(ctx, LABEL)


def _checked(table: dict) -> LabelOptions:
    options = table["options"]
    if options.backend not in ("http", "vllm"):
        raise ValueError(f"unknown backend {options.backend!r} (http, vllm)")
    if options.backend == "http" and not options.endpoint and not options.dry_run:
        raise ValueError("the http backend needs an endpoint (--endpoint http://host:port/v1)")
    return options


def _needs(options: LabelOptions, declared: Resources) -> Resources:
    """The offline engine's GPUs (tensor x pipeline parallel, as vLLM takes them) where none are declared; the
    HTTP client's task sends requests: the declared CPU."""
    if options.backend != "vllm" or declared.gpus:
        return declared
    args = options.engine_args
    return dataclasses.replace(declared, gpus=int(args.get("tensor_parallel_size", 1) or 1)
                               * int(args.get("pipeline_parallel_size", 1) or 1))


@dataclass
class LabelJob:
    """What every group's task shares: the options, and the ledger's keys whose answers this run reuses. In-process
    the job is the driver's own object, and the keys a group's answers add are there for the next group (the
    same request in two groups is sent once); a Ray task has the plan's copy."""

    lake_url: str
    options: LabelOptions
    run_id: str
    reusable: set[str]


@dataclass
class GroupLabeled:
    """A group's task's result: its requests (without their messages), how many the ledger answered, the keys
    sent (printed in a dry run) and, in a dry run, the request lines."""

    jobs: list[Job]
    cached: int
    sent: list[str]
    printed: list[str] = field(default_factory=list)


@dataclass
class _Labeling:
    """The driver's side of a run: the result so far, the branch rows made, the step ids the version has."""

    result: LabelResult
    existing: set[str]
    statuses: tuple[str, ...]  # ledger statuses reused: ok and failed, or ok alone with retry_failed
    out: object = None  # a dry run's requests file (None: stdout)
    new_branches: list[dict] = field(default_factory=list)


def _reusable_keys(cat, options: LabelOptions, statuses: tuple[str, ...]) -> set[str]:
    """The ledger's keys of this model and sampling (every request key holds both) whose answers are reused."""
    if not label_ledger.exists(cat.con):
        return set()
    marks = ", ".join("?" for _ in statuses)
    rows = cat.con.execute(f"SELECT request_key FROM label_ledger WHERE model = ? AND sampling = ? AND status IN "
                           f"({marks})", [options.model, options.sampling.key(), *statuses]).fetchall()
    return {key for key, in rows}


def _plan(run: StageRun, cat) -> Plan:
    options = run.options
    statuses = ("ok", "failed") if not options.retry_failed else ("ok",)
    existing = set(read_table(run.ctx.lake, run.version, "branches", ["step_id"]).column("step_id").to_pylist())
    state = _Labeling(LabelResult(), existing, statuses, run.ctx.options.get("out"))
    job = LabelJob(run.ctx.lake.url, options, run.ctx.run_id, _reusable_keys(cat, options, statuses))
    return Plan(run.groups, job, run.groups, f"label {run.dataset}", state=state)


def label_group(group: dict[str, list[str]], job: LabelJob, send: Callable[[tuple], None]) -> GroupLabeled:
    """One part group's requests (a task): planned, those the ledger does not answer sent, each answer handed to
    the driver in batches as it arrives (`send(("ledger", rows))`, with `("log", line)` for progress); in a
    dry run the request lines instead. Identical requests (duplicated episodes) are sent once."""
    lake, options = Lake(job.lake_url), job.options
    jobs = plan_jobs(read_parts(lake, group["steps"], "steps"),
                     read_parts(lake, group["episodes"], "episodes", ["episode_id", "env", "task"]), options)
    todo = list({j.request_key: j for j in jobs if j.request_key not in job.reusable}.values())
    cached = sum(j.request_key in job.reusable for j in jobs)
    printed = []
    if options.dry_run:
        client = options.client()
        printed = [orjson.dumps({"url": client.url, "request_key": j.request_key,
                                 "body": request_body(client, j.messages)}).decode() + "\n" for j in todo]
    elif todo:
        _send_group(jobs, todo, job, send)
    slim = [dataclasses.replace(j, messages=[], step={k: j.step[k] for k in ("step_id", "episode_id", "step_index")})
            for j in jobs]
    return GroupLabeled(slim, cached, [j.request_key for j in todo], printed)


def _send_group(jobs: list[Job], todo: list[Job], job: LabelJob, send: Callable[[tuple], None]) -> None:
    """The group's requests to the world model; their ledger rows to the driver every `FLUSH_EVERY` rows or
    `FLUSH_SECONDS`, and what finished even when interrupted (a rerun resumes from it)."""
    options, by_key = job.options, {j.request_key: j for j in todo}
    pending: list[dict] = []
    last_flush = [time.perf_counter()]
    usable: set[str] = set()

    def flush() -> None:
        if pending:
            send(("ledger", list(pending)))
        pending.clear()
        last_flush[0] = time.perf_counter()

    def on_result(completion: Completion) -> None:
        row = _ledger_row(by_key[completion.key], options, completion, job.run_id)
        if row["status"] == "ok":
            usable.add(completion.key)
        pending.append(row)
        if len(pending) >= FLUSH_EVERY or time.perf_counter() - last_flush[0] > FLUSH_SECONDS:
            flush()

    log = lambda line: send(("log", line))  # noqa: E731
    where = (f"vLLM offline engine {options.model}" if options.backend == "vllm"
             else f"{options.endpoint} ({options.concurrency} at a time)")
    log(f"label: {len(jobs)} requests, {len(jobs) - len(todo)} from the ledger, sending {len(todo)} to {where}")
    requests = [ChatRequest(j.request_key, j.messages) for j in todo]
    try:
        _send(options, requests, on_result, usable.__contains__, log)
    finally:
        flush()


def _report(run: StageRun, piece: tuple) -> None:
    """A piece a group's task sent: a progress line to the log, or answers to the ledger (the catalog opened for
    the write only, so `pipelines sql` works during a long run); the keys now reusable go to the job."""
    from pipelines.infra.runs import open_catalog, release_catalog

    kind, value = piece
    if kind == "log":
        run.ctx.log(value)
        return
    with open_catalog(run.ctx.lake, run.ctx.catalog_path) as cat:
        label_ledger.record(cat.con, value)
    release_catalog()
    statuses = run.plan.state.statuses
    run.plan.job.reusable.update(r["request_key"] for r in value if r["status"] in statuses)


def _group_done(run: StageRun, group: dict, done: GroupLabeled) -> None:
    """The driver's step after each group, in group order: a dry run's request lines written out, or the
    group's answers read back from the ledger and its new branch rows made; the numbers added up."""
    from pipelines.infra.runs import open_catalog, release_catalog

    state, result = run.plan.state, run.plan.state.result
    result.requests += len(done.jobs)
    result.cached += done.cached
    result.sent += len(done.sent)
    if run.options.dry_run:
        out = state.out or sys.stdout
        for line in done.printed:
            out.write(line)
        return None
    if done.jobs:
        with open_catalog(run.ctx.lake, run.ctx.catalog_path, read_only=True) as cat:
            rows = label_ledger.lookup(cat.con, (j.request_key for j in done.jobs))
        release_catalog()
        _add_branches(run, done, rows)
    return None


def _add_branches(run: StageRun, done: GroupLabeled, rows: dict[str, dict]) -> None:
    """Each request's answer counted, and a branch row for each usable one the version does not have yet."""
    state, options, sent = run.plan.state, run.options, set(done.sent)
    result = state.result
    for job in done.jobs:
        row = rows[job.request_key]
        tags = leftover_tags(row["observation"]) if row["status"] == "ok" else []
        if tags:  # a ledger row parsed by an older reader may still hold reasoning / tags: never a state
            row = {**row, "status": "failed", "error": f"reasoning or tags left in the parsed state: {' '.join(tags)}"}
        if job.request_key in sent:  # sent by this run
            result.tokens_in += row["tokens_in"] or 0
            result.tokens_out += row["tokens_out"] or 0
        if row["status"] == "ok":
            result.ok += 1
            labeler = labeler_id(options.model, job.template_hash, options.sampling)
            branch = branch_row(job, row, labeler, run.ctx.run_id)
            if branch["step_id"] not in state.existing:
                state.existing.add(branch["step_id"])
                state.new_branches.append(branch)
        else:
            result.failed += row["status"] == "failed"
            result.errors += row["status"] == "error"
            result.messages.append(f"{job.step['step_id']} {job.strategy}: {row['error']}")


def _reduce(run: StageRun, results: list) -> Outcome:
    """The new branch rows as one `branches` part beside the version's others."""
    state = run.plan.state
    new = state.new_branches
    state.result.branches_written = len(new)
    if not new or run.options.dry_run:
        return Outcome(state=state)
    part = write_part(run.ctx.lake, run.dataset, "branches", pa.Table.from_pylist(new, schema=BRANCHES), "label")
    return Outcome({"branches": [*run.version.parts.get("branches", []), part]},
                   note=f"label: {len(new)} simulated branches by {run.options.model}", state=state)


def _finish(run: StageRun, outcome: Outcome, version: int, created: bool) -> LabelResult:
    result = outcome.state.result
    result.version, result.version_created = version, created
    result.seconds = time.perf_counter() - run.started
    return result


def _send(options: LabelOptions, requests: list[ChatRequest], on_result: Callable[[Completion], None],
          usable: Callable[[str], bool], log: Callable[[str], None]) -> None:
    """The requests to the world model, `on_result` called as each finishes, a progress line every few
    seconds (`usable(key)`: whether the finished request's answer made a state)."""
    waiting = f"max_tokens {options.sampling.max_tokens:,}, {options.concurrency} at a time"
    with RequestProgress("label", len(requests), log, waiting_on=waiting) as progress:
        def counted(completion: Completion) -> None:
            on_result(completion)
            progress.done(usable(completion.key))

        if options.backend == "vllm":
            complete_offline(options.model, options.sampling, requests, counted, **options.engine_args)
        else:
            complete(options.client(), requests, counted)


# Ray never pays off on its own for the labeler: its groups wait on the model, whose concurrency the client
# sets; its groups go to Ray when the run asks (`--executor ray`, a cluster address, a run already on Ray)
LABEL = PartsStage("label", label_group, float("inf"), _plan, _reduce, _finish, options=_checked, needs=_needs,
                   report=_report, each=_group_done)

_SAMPLING_FIELDS = {f.name for f in dataclasses.fields(Sampling)}


def options_from_dict(data: dict) -> LabelOptions:
    """A definition's `[stage_options.label]` table: LabelOptions fields plus the Sampling fields
    (temperature, top_p, top_k, max_tokens, sampling_seed, stop), checked like every stage's options
    (`pipelines.infra.options.from_mapping`). Raises ValueError naming the bad key."""
    data = dict(data)
    sampling = {k: data.pop(k) for k in list(data) if k in _SAMPLING_FIELDS - {"seed"}}
    if "sampling_seed" in data:
        sampling["seed"] = data.pop("sampling_seed")
    if "model" not in data:
        raise OptionsError("stage_options.label: 'model' is required")
    for key in ("sampling", "dry_run"):  # the sampling fields are flat here; a dry run is the command's
        if key in data:
            raise OptionsError(f"stage_options.label: {key!r} cannot be set in a definition")
    sampling = from_mapping(Sampling, sampling, "stage_options.label")
    return dataclasses.replace(from_mapping(LabelOptions, data, "stage_options.label"), sampling=sampling)


def label_stage_options(table: dict):
    """`[stage_options.label]`: LabelOptions (`options_from_dict`), or with `mode = "sample"` the sample
    stage's (`pipelines.stages.sample.sample_options`); ValueError naming the bad key."""
    mode = table.get("mode", "branches")
    rest = {k: v for k, v in table.items() if k != "mode"}
    if mode == "sample":
        from pipelines.stages.sample import sample_options

        return sample_options(rest, "stage_options.label")
    if mode != "branches":
        raise OptionsError(f"stage_options.label.mode: {mode!r} is not one of branches, sample")
    return options_from_dict(rest)


def label_stage(ctx: StageContext) -> StageResult:
    """The `label` stage of a pipeline definition (options from `[stage_options.label]`; `mode = "sample"`
    runs rejection sampling, `pipelines.stages.sample`, with its options)."""
    if ctx.options.get("mode", "branches") == "sample":
        from pipelines.stages.sample import sample_stage

        return sample_stage(ctx)
    if "mode" in ctx.options and ctx.options["mode"] != "branches":
        raise OptionsError(f"stage_options.label.mode: {ctx.options['mode']!r} is not one of branches, sample")
    options = {k: v for k, v in ctx.options.items() if k != "mode"}
    result = label(ctx.lake, ctx.catalog_path, ctx.dataset, options_from_dict(options), ctx.run_id, ctx.log,
                   executor=ctx.executor, ray_address=ctx.ray_address, resources=ctx.resources)
    for line in result.messages[:10]:
        ctx.log(f"  {line}")
    return StageResult(records_in=result.requests, records_out=result.branches_written,
                       quarantined=result.failed + result.errors,
                       version=result.version if result.version_created else None, summary=result.summary())
