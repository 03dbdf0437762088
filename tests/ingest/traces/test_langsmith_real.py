"""The LangSmith reader on a real trace its API gave back (bundled, MIT: see
`samples/traces/langsmith/langsmith-sdk-chat-langchain/PROVENANCE.md`), against a golden a person read against it."""

import json

from ingest.record import Episode, Rejected
from ingest.traces import langsmith
from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.ingest.golden import head, read_records

GOLDEN = golden.Path(__file__).parent / "golden"
RUN_OPS = SAMPLES / "traces" / "langsmith" / "langsmith-sdk-chat-langchain" / \
    "run_ops_1efb27a4-5264-6908-9ab5-23fc3c60ae2d.jsonl"


def _generation(patch: dict) -> dict:
    return patch["outputs"]["generations"][0]["message"]["kwargs"]


def test_a_chat_langchain_turn_saved_from_the_api_is_one_episode_of_its_model_calls():
    """What a person counts: one trace (RetrievalGraph, 81 runs saved as a post line and a patch line each, without
    their parents: the dotted orders give them); the user's question is the root run's message (a pytest error); the
    graph's 8 model calls (gpt-4o-mini) are its steps: the research plan (`Plan`, 3 steps), a `Response` of search
    queries for each step, the answer, the hallucination grade ("no"), the answer again and its grade. The two
    earlier turns of the thread that the model calls are given are context, not steps of this trace."""
    assert langsmith.units([str(RUN_OPS)], head) == [str(RUN_OPS)]  # its first run's inputs hide `run_type`
    records = read_records(langsmith, RUN_OPS)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [episode] = records
    assert isinstance(episode, Episode)
    lines = [json.loads(line) for line in RUN_OPS.read_text().splitlines()]
    posts = {r["id"]: r for r in lines if "run_type" in r}
    patches = {r["id"]: r for r in lines if "run_type" not in r}
    assert len(posts) == len(patches) == episode.env["trace"]["spans"] == 81
    root = posts[episode.env["trace"]["trace_id"]]
    assert episode.env["langsmith"] == {"name": "RetrievalGraph"} == {"name": root["name"]}
    assert episode.task == root["inputs"]["messages"][-1]["content"]
    assert episode.task.startswith("_____") and "ERROR collecting tests/test_agent.py" in episode.task
    models = sorted((r for r in posts.values() if r["run_type"] == "llm"), key=lambda r: r["dotted_order"])
    said = []
    for run in models:
        out = _generation(patches[run["id"]])
        calls = out.get("tool_calls") or []
        said.append(calls[0]["name"] if calls else out["content"])
    assert [s.action.tool_name or s.action.text for s in episode.steps] == said
    assert [s.action.tool_name for s in episode.steps] == ["Plan", "Response", "Response", "Response", None,
                                                          "GradeHallucinations", None, "GradeHallucinations"]
    assert len(json.loads(episode.steps[0].action.arguments)["steps"]) == 3
    assert episode.agent == "gpt-4o-mini"
    assert episode.env["trace"]["history_messages"] == 4  # the thread's two earlier questions and answers
    golden.check(records, GOLDEN / "langsmith-chat-langchain-run-ops.json", texts="hash")
