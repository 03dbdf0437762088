"""Langfuse dataset runs (experiments): which trace ran which dataset item, and how it scored.

A dataset run item links a dataset item (an input with its expected output) to the trace that ran it. Langfuse
gives them as (`fern/apis/server/definition/`: `commons.yml`, `datasets.yml`, `dataset-run-items.yml`,
`dataset-items.yml`, `experiments.yml`, `scores-v3.yml`):

- a run with its items, `GET /api/public/datasets/{datasetName}/runs/{runName}` and `/v2/dataset-runs/by-dataset-id/
  {datasetId}/{runId}` (`DatasetRunWithItems`: `{id, name, description, metadata, datasetId, datasetName,
  datasetRunItems: [...]}`);
- run items, `GET /api/public/dataset-run-items` pages (`{data: [...], meta}`) and the UI's export of the dataset run
  items table (JSON or JSONL): `{id, datasetRunId, datasetRunName, datasetItemId, traceId, observationId, ...}`
  (the table export names `datasetName` instead of the run);
- dataset items, `GET /api/public/dataset-items` pages and the UI's dataset items export: `{id, status, input,
  expectedOutput, metadata, sourceTraceId, datasetId, datasetName, ...}`;
- scores, `GET /api/public/v2/scores` / `v3/scores` pages: `{id, traceId, observationId, name, value,
  stringValue, dataType: NUMERIC | BOOLEAN | CATEGORICAL..., source, comment}`, and a trace's own `scores`;
- Langfuse v4's experiment items, `GET /api/public/experiment-items` pages (`fields=core,dataset,io,scores...`):
  `{id, traceId, experimentId, experimentName, experimentItemId, experimentDatasetId, input, output,
  expectedOutput, metadata, experimentItemMetadata, scores: [...]}`: a run item, its dataset item and its scores in
  one record.

These may lie in one file with the traces they ran (one document holding them under keys of its own, or JSON Lines
of each), read by `ingest.traces.langfuse`. Each run item is its trace's episode (`ingest.traces.langfuse` builds
it from the trace's observations), whose `env["langfuse"]["dataset_run"]` says the run (id, name, description,
metadata), the dataset (id, name), the dataset item (id, `input`, `expected_output`, metadata), the run item's id
and observation, and the scores; the task is the trace's first user turn, else the dataset item's input.

**Outcome and reward** come from the scores of the run item's trace (the trace's `scores`, the file's score records
with its `traceId`, the experiment item's `scores`): the only one, else the first named `reward`, `score`,
`success`, `correct`, `correctness`, `accuracy`, `exact_match`, `passed`, `pass`, `resolved` (case and `-` / space
aside). A boolean (BOOLEAN, or `true` / `false`) is success or failure with reward 1.0 or 0.0; a number is the
reward, success at 1 or more, failure at 0 or less, unknown between; a category is success for pass / passed /
correct / success / true / yes / resolved, failure for fail / failed / incorrect / wrong / false / no, else
unknown. `dataset_run.outcome_from` names the score. No such score: `unknown`, the scores kept.

A run item whose trace's observations the file does not hold: an experiment item with an `output` is an episode of
its own, the input as the user's turn and the output as the answer (`dataset_run.steps_from` says so); any other
is named in one `trace_not_in_file` row. Dataset items no run item of the file links are tasks, not runs: one
`unrun_dataset_items` row names them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.chat.messages import Context
from ingest.record import Episode, Rejected
from ingest.traces import genai
from ingest.traces.io_messages import io_messages
from ingest.transcript import Message, Run, records

KINDS = ("dataset_run", "run_item", "dataset_item", "experiment_item", "score")
OUTCOME_SCORES = ("reward", "score", "success", "correct", "correctness", "accuracy", "exact_match", "passed", "pass",
                  "resolved")
SUCCESS_WORDS = frozenset({"pass", "passed", "correct", "success", "true", "yes", "resolved"})
FAILURE_WORDS = frozenset({"fail", "failed", "incorrect", "wrong", "false", "no"})
_SCORE_KEPT = ("name", "value", "stringValue", "dataType", "source", "comment", "observationId")


def kind_of(obj) -> str | None:
    """Which dataset-run record `obj` is (one of `KINDS`), or None."""
    if not isinstance(obj, dict) or "type" in obj:
        return None
    if isinstance(obj.get("datasetRunItems"), list) and "datasetId" in obj:
        return "dataset_run"
    if "experimentItemId" in obj and "experimentId" in obj and "traceId" in obj:
        return "experiment_item"
    if "datasetItemId" in obj and "traceId" in obj and \
            any(k in obj for k in ("datasetRunId", "datasetRunName", "datasetName")):
        return "run_item"
    if "datasetId" in obj and "id" in obj and ("expectedOutput" in obj or obj.get("status") in ("ACTIVE", "ARCHIVED")):
        return "dataset_item"
    if "traceId" in obj and isinstance(obj.get("name"), str) and ("dataType" in obj or "source" in obj) and \
            ("value" in obj or "stringValue" in obj):
        return "score"
    return None


@dataclass
class Links:
    """The dataset-run records of one file, in file order."""

    runs: dict[str, dict] = field(default_factory=dict)  # run id -> the run (without its items)
    run_items: list[tuple[dict, str]] = field(default_factory=list)  # (run item or experiment item, where)
    dataset_items: dict[str, dict] = field(default_factory=dict)
    scores: dict[str, list[dict]] = field(default_factory=dict)  # trace id -> score records

    def add(self, kind: str, obj: dict, where: str) -> None:
        if kind == "dataset_run":
            self.runs.setdefault(str(obj.get("id")), {k: v for k, v in obj.items() if k != "datasetRunItems"})
            for i, item in enumerate(obj["datasetRunItems"]):
                if isinstance(item, dict):
                    self.run_items.append(({"datasetRunId": obj.get("id"), **item}, f"{where}.datasetRunItems[{i}]"))
        elif kind in ("run_item", "experiment_item"):
            self.run_items.append((obj, where))
        elif kind == "dataset_item":
            self.dataset_items.setdefault(str(obj["id"]), obj)
        elif kind == "score":
            self.scores.setdefault(str(obj["traceId"]), []).append(obj)

    def __bool__(self) -> bool:
        return bool(self.run_items or self.dataset_items or self.scores)


def _score_name(score: dict) -> str:
    return str(score.get("name") or "").strip().lower().replace("-", "_").replace(" ", "_")


def outcome_of(scores: list[dict]) -> tuple[str, float | None, str | None]:
    """(outcome, reward, the name of the score they came from) (module docstring)."""
    chosen = scores[0] if len(scores) == 1 else next((s for s in scores if _score_name(s) in OUTCOME_SCORES), None)
    if chosen is None:
        return "unknown", None, None
    value, text, kind = chosen.get("value"), chosen.get("stringValue"), chosen.get("dataType")
    name = chosen.get("name")
    if isinstance(value, bool) or kind == "BOOLEAN" and isinstance(value, (int, float)):
        return ("success" if value else "failure"), float(bool(value)), name
    if isinstance(value, (int, float)) and kind not in ("CATEGORICAL", "TEXT", "CORRECTION"):
        return ("success" if value >= 1 else "failure" if value <= 0 else "unknown"), float(value), name
    word = str(text if isinstance(text, str) else value).strip().lower()
    if word in SUCCESS_WORDS or word in FAILURE_WORDS:
        return ("success" if word in SUCCESS_WORDS else "failure"), None, name
    return "unknown", None, None


def _kept_scores(scores: list[dict]) -> list[dict]:
    return [{k: s.get(k) for k in _SCORE_KEPT if s.get(k) is not None} for s in scores]


@dataclass
class Linked:
    """What a run item adds to its trace's episode."""

    env: dict
    outcome: str
    reward: float | None
    task: str | None


def _link(item: dict, links: Links, trace_scores: list[dict]) -> Linked:
    run = links.runs.get(str(item.get("datasetRunId"))) or {}
    dataset_item = links.dataset_items.get(str(item.get("datasetItemId") or item.get("experimentItemId"))) or {}
    experiment = "experimentItemId" in item
    scores = [*trace_scores, *links.scores.get(str(item["traceId"]), []),
              *[s for s in item.get("scores") or [] if isinstance(s, dict)]]
    outcome, reward, found = outcome_of(scores)
    values = {
        "run_id": item.get("experimentId") if experiment else item.get("datasetRunId") or run.get("id"),
        "run_name": item.get("experimentName") if experiment else item.get("datasetRunName") or run.get("name"),
        "run_description": item.get("experimentDescription") if experiment else run.get("description"),
        "run_metadata": item.get("experimentMetadata") if experiment else run.get("metadata"),
        "dataset_id": item.get("experimentDatasetId") if experiment else run.get("datasetId") or
        dataset_item.get("datasetId"),
        "dataset_name": item.get("datasetName") or run.get("datasetName") or dataset_item.get("datasetName"),
        "dataset_item_id": item.get("experimentItemId") if experiment else item.get("datasetItemId"),
        "run_item_id": item.get("id"), "trace_id": item.get("traceId"), "observation_id": item.get("observationId"),
        "input": item.get("input", dataset_item.get("input")),
        "expected_output": item.get("expectedOutput", dataset_item.get("expectedOutput")),
        "item_metadata": item.get("experimentItemMetadata") if experiment else dataset_item.get("metadata"),
        "output": item.get("output"), "scores": _kept_scores(scores) or None, "outcome_from": found,
    }
    env = {k: v for k, v in values.items() if v not in (None, "", [], {})}
    task = genai.text_of(genai.json_value(env.get("input")))
    return Linked(env=env, outcome=outcome, reward=reward, task=task)


def link(links: Links, envs: dict[str, dict]) -> dict[str, Linked]:
    """Trace id -> what its run item adds; each run item's env goes into its trace's `env["langfuse"]`."""
    found: dict[str, Linked] = {}
    for item, _where in links.run_items:
        trace_id = str(item["traceId"])
        if trace_id in found:
            continue  # the same run item seen twice (a run and its items page in one file)
        trace_scores = (envs.get(trace_id) or {}).get("langfuse", {}).get("scores") or []
        found[trace_id] = linked = _link(item, links, trace_scores)
        envs.setdefault(trace_id, {}).setdefault("langfuse", {})["dataset_run"] = linked.env
    return found


def with_outcome(record, found: dict[str, Linked]):
    """A trace's root episode with its run item's outcome, reward and (when its turns name none) task."""
    if not isinstance(record, Episode) or "parent" in record.env:
        return record
    linked = found.get(str(record.env.get("trace", {}).get("trace_id")))
    if linked is not None:
        record.outcome, record.reward = linked.outcome, linked.reward
        record.task = record.task or linked.task
    return record


def _answer_episode(item: dict, linked: Linked, where: str, ctx: Context):
    """An experiment item whose trace is not in the file: its input as the user's turn, its output the answer."""
    inputs = io_messages(item.get("input"), "user", ctx, f"{where}.input")
    task = None if any(m.role == "user" and m.text for m in inputs) else linked.task  # None: the first user turn
    inputs = inputs or [Message(role="user", text=linked.task or "", where=f"{where}.input")]
    outputs = io_messages(item.get("output"), "assistant", ctx, f"{where}.output") or \
        [Message(role="assistant", text=genai.text_of(item.get("output")), where=f"{where}.output")]
    env = {"langfuse": {"dataset_run": {**linked.env, "steps_from": "the experiment item's input and output (the "
                                        "trace's observations are not in this file)"}},
           "trace": {"trace_id": str(item["traceId"])}}
    run = Run(key=str(item["traceId"]), domain="mcp", platform="linux", task=task, outcome=linked.outcome,
              reward=linked.reward, terminated=True, env=env)
    yield from records(inputs + outputs, run, f"{where} experiment item {item.get('id')}")


def unread(links: Links, found: dict[str, Linked], read_traces: set[str], name: str, ctx: Context):
    """The run items whose traces the file does not hold (module docstring), and the unrun dataset items."""
    missing: list[str] = []
    for item, where in links.run_items:
        trace_id = str(item["traceId"])
        if trace_id in read_traces:
            continue
        if "experimentItemId" in item and item.get("output") is not None:
            yield from _answer_episode(item, found[trace_id], where, ctx)
        else:
            missing.append(f"{item.get('id')} -> trace {trace_id}")
    if missing:
        yield Rejected("trace_not_in_file", f"{name}: {len(missing)} dataset run items link traces whose "
                       "observations this file does not hold (download each trace, or export the run with them); "
                       "not read", name, snippet=", ".join(missing[:20]))
    run_items = {str(item.get("datasetItemId")) for item, _ in links.run_items}
    unrun = [item_id for item_id in links.dataset_items if item_id not in run_items]
    if unrun:
        yield Rejected("unrun_dataset_items", f"{name}: {len(unrun)} dataset items no run item of this file links "
                       "(tasks without a run); not read", name, snippet=", ".join(unrun[:20]))
