"""Langfuse dataset runs read by `langfuse` (`ingest.traces.langfuse_runs`): each run item is its trace's episode with
the dataset item's input and expected output, and the outcome from its trace's scores.

No public export of a dataset run was found, so the files here are hand-made, each exactly after the public API's
documented response shapes (langfuse/langfuse `fern/apis/server/definition/`: `commons.yml` `DatasetRunWithItems`,
`DatasetRunItem`, `DatasetItem`, `Score`; `experiments.yml` `ExperimentItem`; `scores-v3.yml` `ScoreV3`) and the UI's
export of the dataset run items table (`worker/src/features/database-read-stream/getDatabaseReadStream.ts`: `id,
projectId, datasetItemId, traceId, observationId, createdAt, updatedAt, datasetName`). The traces the run ran are two
real trace downloads (samples/traces/langfuse, PROVENANCE.md), put in the saved run as they are."""

import json

from ingest.record import Episode, Rejected
from ingest.traces import langfuse
from ingest.traces.langfuse_runs import outcome_of
from tests.conftest import SAMPLES
from tests.ingest.golden import read_records
from tests.ingest import golden

LANGFUSE = SAMPLES / "traces" / "langfuse"
TOKYO = json.loads((LANGFUSE / "openai-agents-2025-09-30.trace.json").read_text())  # trace fee618f9...
HELLO = json.loads((LANGFUSE / "google-adk-2025-08-28.trace.json").read_text())  # trace b82a0bdc...
TIMES = {"createdAt": "2025-10-01T10:00:00.000Z", "updatedAt": "2025-10-01T10:00:00.000Z"}


def _run_item(i: int, item: str, trace: str) -> dict:  # commons.yml DatasetRunItem
    return {"id": f"dri-{i}", "datasetRunId": "run-1", "datasetRunName": "gpt-4.1 baseline", "datasetItemId": item,
            "traceId": trace, "observationId": None, **TIMES}


def _dataset_item(item: str, given, expected) -> dict:  # commons.yml DatasetItem
    return {"id": item, "status": "ACTIVE", "input": given, "expectedOutput": expected, "metadata": {"split": "test"},
            "sourceTraceId": None, "sourceObservationId": None, "datasetId": "ds-1", "datasetName": "agent-qa", **TIMES}


def _score(trace: str, name: str, value, data_type: str, string_value=None) -> dict:  # commons.yml Score
    score = {"id": f"s-{name}", "traceId": trace, "name": name, "source": "EVAL", "observationId": None,
             "timestamp": TIMES["createdAt"], **TIMES, "comment": None, "dataType": data_type, "value": value}
    return score | ({"stringValue": string_value} if string_value is not None else {})


def _saved_run(tmp_path):
    """A run (`GET /api/public/datasets/agent-qa/runs/gpt-4.1%20baseline`) saved with its dataset items
    (`GET /api/public/dataset-items` page), its scores (`GET /api/public/v2/scores` page) and the traces it ran (the
    UI's trace downloads): three run items, the third one's trace not saved; one dataset item not run."""
    tokyo, hello = TOKYO["trace"]["id"], HELLO["trace"]["id"]
    run = {"id": "run-1", "name": "gpt-4.1 baseline", "description": "first try", "metadata": {"model": "gpt-4.1"},
           "datasetId": "ds-1", "datasetName": "agent-qa", **TIMES,
           "datasetRunItems": [_run_item(1, "item-tokyo", tokyo), _run_item(2, "item-hello", hello),
                               _run_item(3, "item-paris", "0123456789abcdef0123456789abcdef")]}
    items = {"data": [_dataset_item("item-tokyo", "What's the weather in Tokyo?", "sunny"),
                      _dataset_item("item-hello", {"question": "hi"}, {"answer": "a greeting"}),
                      _dataset_item("item-paris", "What's the weather in Paris?", "rain"),
                      _dataset_item("item-unrun", "What's the weather in Oslo?", "snow")],
             "meta": {"page": 1, "limit": 50, "totalItems": 4, "totalPages": 1}}
    scores = {"data": [_score(tokyo, "correctness", 1, "BOOLEAN", "True"), _score(hello, "accuracy", 0, "NUMERIC")],
              "meta": {"page": 1, "limit": 50, "totalItems": 2, "totalPages": 1}}
    path = tmp_path / "agent-qa-gpt-4.1-baseline.json"
    path.write_text(json.dumps({"run": run, "datasetItems": items, "scores": scores, "traces": [TOKYO, HELLO]}))
    return path


def test_a_saved_run_makes_each_run_item_its_traces_episode_with_its_item_and_outcome(tmp_path):
    path = _saved_run(tmp_path)
    assert langfuse.units([str(path)], golden.head) == [str(path)]
    records = read_records(langfuse, path)
    episodes = {r.key: r for r in records if isinstance(r, Episode)}
    rows = {r.rule: r for r in records if isinstance(r, Rejected)}
    tokyo, hello = episodes[TOKYO["trace"]["id"]], episodes[HELLO["trace"]["id"]]
    # the trace's own steps, as without the run (test_langfuse_read: 1 call then the answer)
    assert [s.action.tool_name for s in tokyo.steps if s.action.kind == "tool_call"] == ["get_weather"]
    assert (tokyo.outcome, tokyo.reward) == ("success", 1.0)  # correctness: BOOLEAN True
    assert (hello.outcome, hello.reward) == ("failure", 0.0)  # accuracy: NUMERIC 0
    run = tokyo.env["langfuse"]["dataset_run"]
    assert {k: run[k] for k in ("run_id", "run_name", "run_description", "dataset_id", "dataset_name",
                                "dataset_item_id", "run_item_id", "input", "expected_output", "item_metadata",
                                "outcome_from")} == {
        "run_id": "run-1", "run_name": "gpt-4.1 baseline", "run_description": "first try", "dataset_id": "ds-1",
        "dataset_name": "agent-qa", "dataset_item_id": "item-tokyo", "run_item_id": "dri-1",
        "input": "What's the weather in Tokyo?", "expected_output": "sunny", "item_metadata": {"split": "test"},
        "outcome_from": "correctness"}
    # the trace's own scores (toxicity, hallucination) are kept beside the run's
    assert [s["name"] for s in run["scores"]] == ["toxicity", "hallucination", "correctness"]
    assert hello.env["langfuse"]["dataset_run"]["expected_output"] == {"answer": "a greeting"}
    assert hello.task == "hi"  # the trace's first user turn
    assert "0123456789abcdef0123456789abcdef" in rows["trace_not_in_file"].snippet
    assert rows["unrun_dataset_items"].snippet == "item-unrun"
    assert set(rows) == {"trace_not_in_file", "unrun_dataset_items"} and len(episodes) == 2


def test_a_run_items_page_without_the_traces_names_every_item_in_one_row(tmp_path):
    """The UI's export of the dataset run items table (JSONL): links only, so no episode and one row."""
    path = tmp_path / "dataset_run_items.jsonl"
    rows = [{"id": f"dri-{i}", "projectId": "p-1", "datasetItemId": f"item-{i}", "traceId": f"trace-{i}",
             "observationId": None, **TIMES, "datasetName": "agent-qa"} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert langfuse.units([str(path)], golden.head) == [str(path)]
    [row] = read_records(langfuse, path)
    assert row.rule == "trace_not_in_file" and "3 dataset run items" in row.reason
    assert row.snippet == "dri-0 -> trace trace-0, dri-1 -> trace trace-1, dri-2 -> trace trace-2"


def _experiment_item(i: int, given, output, scores) -> dict:  # experiments.yml ExperimentItem, fields=core,...
    return {"id": f"span-{i}", "traceId": f"{i:032x}", "startTime": "2026-03-02T09:00:00.000Z",
            "endTime": "2026-03-02T09:00:02.000Z", "level": "DEFAULT", "environment": "default",
            "experimentId": "exp-7", "experimentName": "prompt v2", "experimentItemId": f"item-{i}",
            "experimentDatasetId": "ds-1", "experimentItemVersion": None, "input": given, "output": output,
            "expectedOutput": "4", "metadata": None, "experimentItemMetadata": {"level": "easy"},
            "experimentMetadata": {"prompt": "v2"}, "experimentDescription": None, "scores": scores}


def _score_v3(name: str, value, data_type: str) -> dict:  # scores-v3.yml ScoreV3
    return {"id": f"s3-{name}", "projectId": "p-1", "name": name, "source": "EVAL",
            "timestamp": "2026-03-02T09:00:03.000Z", "environment": "default", "createdAt": "2026-03-02T09:00:03.000Z",
            "updatedAt": "2026-03-02T09:00:03.000Z", "dataType": data_type, "value": value}


def test_experiment_items_without_their_traces_are_an_input_and_its_answer(tmp_path):
    """Langfuse v4's `GET /api/public/experiment-items?fields=core,dataset,io,scores,itemMetadata,
    experimentMetadata` page: each item with an output is an episode (the input, then the output as the answer);
    one without an output is named in a row."""
    messages = [{"role": "system", "content": "Answer with a number."}, {"role": "user", "content": "2 + 2?"}]
    page = {"data": [_experiment_item(1, messages, {"role": "assistant", "content": "4"},
                                      [_score_v3("exact_match", True, "BOOLEAN"), _score_v3("latency", 1.9, "NUMERIC")]),
                     _experiment_item(2, "3 + 3?", "5", [_score_v3("exact_match", 0, "NUMERIC")]),
                     _experiment_item(3, "4 + 4?", None, [])],
            "meta": {"cursor": "djE6MTIz"}}
    path = tmp_path / "experiment-items.json"
    path.write_text(json.dumps(page, indent=2))
    assert langfuse.units([str(path)], golden.head) == [str(path)]
    records = read_records(langfuse, path)
    first, second = [r for r in records if isinstance(r, Episode)]
    [row] = [r for r in records if isinstance(r, Rejected)]
    assert (first.key, first.task, first.outcome, first.reward) == (f"{1:032x}", "2 + 2?", "success", 1.0)
    assert [(s.action.kind, s.action.text) for s in first.steps] == [("message", "4")]
    assert first.env["system_prompt"] == "Answer with a number."
    run = first.env["langfuse"]["dataset_run"]
    assert (run["run_id"], run["run_name"], run["dataset_item_id"], run["expected_output"], run["item_metadata"],
            run["outcome_from"]) == ("exp-7", "prompt v2", "item-1", "4", {"level": "easy"}, "exact_match")
    assert "steps_from" in run and first.terminated
    assert (second.task, second.outcome, second.reward, second.steps[0].action.text) == ("3 + 3?", "failure", 0.0, "5")
    assert row.rule == "trace_not_in_file" and row.snippet == f"span-3 -> trace {3:032x}"


def test_the_outcome_comes_from_the_one_score_or_the_one_named_for_it():
    num = lambda name, v: {"name": name, "value": v, "dataType": "NUMERIC"}  # noqa: E731
    assert outcome_of([num("helpfulness", 0.5)]) == ("unknown", 0.5, "helpfulness")  # the only one: its reward
    assert outcome_of([num("toxicity", 0.0), num("hallucination", 1.0)]) == ("unknown", None, None)
    assert outcome_of([num("toxicity", 0.0), num("Exact-Match", 1)]) == ("success", 1.0, "Exact-Match")
    assert outcome_of([{"name": "verdict", "value": None, "stringValue": "Passed", "dataType": "CATEGORICAL"}]) == \
        ("success", None, "verdict")
    assert outcome_of([{"name": "grade", "value": 2.0, "stringValue": "wrong", "dataType": "CATEGORICAL"}]) == \
        ("failure", None, "grade")
    assert outcome_of([{"name": "correct", "value": 0, "stringValue": "False", "dataType": "BOOLEAN"}]) == \
        ("failure", 0.0, "correct")
    assert outcome_of([]) == ("unknown", None, None)


def test_a_dataset_items_export_alone_is_no_run_and_not_claimed(tmp_path):
    """The UI's dataset items export holds tasks, not runs: the Langfuse reader does not claim it."""
    path = tmp_path / "dataset_items.json"
    path.write_text(json.dumps([_dataset_item("item-1", "q", "a") | {"htmlSourcePath": ""}]))
    assert langfuse.units([str(path)], golden.head) == []
