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


def test_a_chat_langchain_turn_saved_from_the_api_is_one_episode_of_its_model_calls_and_retrievals():
    """What a person counts: one trace (RetrievalGraph, 81 runs saved as a post line and a patch line each, without
    their parents: the dotted orders give them); the user's question is the root run's message (a pytest error); its
    steps are the graph's 8 model calls (gpt-4o-mini) and its 9 retrievals, in the order they ran. Six model calls
    answer in a schema (`with_structured_output`: the schema forced as the one tool, a tools parser reading the
    call; no tool runs it): the research plan (`Plan`, 3 steps), a `Response` of 3 search queries for each step, the
    hallucination grades ("no"): each is the model's answer (a `message` step, its arguments as JSON), not a tool
    call left waiting for a result. Each retrieval runs one of those queries: a `search` action, the 4 documents it
    got back the observation (the search result blocks, their sources in `ui_tree`). The two earlier turns of the
    thread that the model calls are given are context, not steps of this trace."""
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
    ran = sorted((r for r in posts.values() if r["run_type"] in ("llm", "retriever")), key=lambda r: r["dotted_order"])
    expected, schemas = [], []
    for run in ran:
        if run["run_type"] == "retriever":
            expected.append(("tool_call", "search", run["inputs"]))
            continue
        out = _generation(patches[run["id"]])
        calls = out.get("tool_calls") or []
        expected.append(("message", None, calls[0]["args"] if calls else out["content"]))
        schemas.append(calls[0]["name"] if calls else None)
    got = [(s.action.kind, s.action.tool_name,
            json.loads(s.action.arguments) if s.action.kind == "tool_call" else
            json.loads(s.action.text) if s.action.text.startswith("{") else s.action.text) for s in episode.steps]
    assert got == expected and len(got) == 17
    assert [k for k, _, _ in got].count("tool_call") == 9 and episode.domain == "search"
    assert [json.loads(s.action.raw)["structured_output"]["schema"] if s.action.text.startswith("{") else None
            for s in episode.steps if s.action.kind == "message"] == schemas == \
        ["Plan", "Response", "Response", "Response", None, "GradeHallucinations", None, "GradeHallucinations"]
    assert len(json.loads(episode.steps[0].action.text)["steps"]) == 3
    retrievals = [r for r in ran if r["run_type"] == "retriever"]
    for i, step in enumerate(episode.steps):
        if step.action.kind != "tool_call":
            continue
        docs = patches[retrievals.pop(0)["id"]]["outputs"]["documents"]
        seen = episode.steps[i + 1].observation
        assert seen.text.startswith(f"[1] {docs[0]['metadata']['source']}\nTitle: ")
        assert docs[-1]["page_content"][:200] in seen.text
        results = json.loads(seen.ui_tree)["results"]
        assert [r["url"] for r in results] == [d["metadata"]["source"] for d in docs] and len(docs) == 4
    assert episode.agent == "gpt-4o-mini" and episode.terminated  # it ends on the model's last answer, a grade
    assert episode.env["trace"]["history_messages"] == 4  # the thread's two earlier questions and answers
    # the answer writer and both graders are given the question again (the answer writer the whole conversation
    # under a system prompt of its own, holding the documents): the question is said once, as observation 0; what
    # comes after the last retrieval is its documents alone, and the second grade, given the very prompt the first
    # was, is no new observation
    assert episode.steps[0].observation.text == episode.task
    assert [i for i, s in enumerate(episode.steps) if episode.task in (s.observation.text or "")] == [0]
    assert episode.steps[13].observation.kind == "tool_result" and len(episode.steps[13].observation.text) == 9856
    assert episode.steps[16].observation.kind == "none"
    golden.check(records, GOLDEN / "langsmith-chat-langchain-run-ops.json", texts="hash")
