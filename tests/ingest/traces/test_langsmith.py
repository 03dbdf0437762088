"""The LangSmith reader. Producer in the loop: the LangSmith SDK 0.15.1 traces a tool-calling loop (`wrap_openai`
around an `openai` client, `@traceable` tool and loop) against the scripted model server, which also stands in for
LangSmith's ingest API and keeps the `/runs/batch` payloads the SDK posts: the script is the oracle. Hand-made, in
the forms LangSmith's API exports (`Run` schema): run trees with naive UTC times, patches, LangChain messages."""

import json

from ingest.traces import langsmith, openai_agents, otel
from tests.ingest.traces.producer_runs import ANSWER, PLAN, TASK, run, scripted_calls, weather
from tests.ingest.traces.read_util import calls, claims, read, results


def test_the_sdks_batches_are_one_episode_with_every_scripted_call(tmp_path_factory):
    out, script = run("langsmith", tmp_path_factory)
    path = out / "runs.jsonl"
    assert claims(langsmith, path) and not claims(otel, path) and not claims(openai_agents, path)
    (ep,), rejected = read(langsmith, path)
    assert rejected == []
    assert calls(ep) == scripted_calls(script)
    assert results(ep) == [weather("Paris"), weather("Oslo")]
    sent = [m["content"] for m in script.requests[1][1]["messages"] if m["role"] == "tool"]
    assert sent == results(ep)
    assert [s.action.kind for s in ep.steps] == ["tool_call", "tool_call", "message"]
    assert ep.steps[-1].action.text == ANSWER and ep.terminated
    assert ep.task == TASK and ep.agent == "scripted-model-1" and ep.steps[0].reasoning == PLAN
    assert ep.env["langsmith"] == {"session_name": "weather", "name": "weather agent"}
    assert all(s.timestamp is not None and s.timestamp.tzinfo is not None for s in ep.steps)


ROOT = "1ef0a000-0000-0000-0000-000000000001"


def _run(rid, parent, run_type, name, second, **fields):
    dotted = f"20240405T01285{second}000000Z{ROOT}" + ("" if rid == ROOT else f".20240405T01285{second}000000Z{rid}")
    return {"id": rid, "trace_id": ROOT, "parent_run_id": parent, "name": name, "run_type": run_type,
            "dotted_order": dotted, "start_time": f"2024-04-05T01:28:5{second}.000000",
            "end_time": f"2024-04-05T01:28:5{second}.500000", **fields}


def test_an_exported_run_tree_with_langchain_messages(tmp_path):
    ai_call = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
               "kwargs": {"content": "Searching.", "tool_calls": [{"name": "Search", "args": {"query": "tides"},
                                                                   "id": "t1"}]}}
    human = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
             "kwargs": {"content": "When is high tide?"}}
    llm = _run("1ef0a000-0000-0000-0000-000000000002", ROOT, "llm", "ChatAnthropic", 1,
               inputs={"messages": [[human]]}, outputs={"generations": [[{"text": "", "message": ai_call}]]},
               extra={"invocation_params": {"model": "claude-sonnet-4-5"}})
    tool = _run("1ef0a000-0000-0000-0000-000000000003", ROOT, "tool", "Search", 2,
                inputs={"query": "tides"}, outputs=None, error="TimeoutError('search took too long')")
    root = _run(ROOT, None, "chain", "AgentExecutor", 0, inputs={"input": "When is high tide?"}, child_runs=[llm, tool])
    path = tmp_path / "run.json"
    path.write_text(json.dumps(root, indent=2))
    assert claims(langsmith, path)
    (ep,), rejected = read(langsmith, path)
    assert rejected == []
    assert calls(ep) == [("Search", {"query": "tides"})] and ep.steps[0].reasoning == "Searching."
    assert ep.final_observation.is_error and "took too long" in ep.final_observation.text
    assert ep.agent == "claude-sonnet-4-5" and ep.task == "When is high tide?" and not ep.terminated
    assert ep.steps[0].timestamp.isoformat() == "2024-04-05T01:28:51.500000+00:00"  # naive API time, UTC
    assert ep.env["trace"]["other_spans"][0]["name"] == "AgentExecutor"


def test_patches_complete_their_posts_and_bad_records_are_rows(tmp_path):
    post = _run("1ef0a000-0000-0000-0000-000000000003", ROOT, "tool", "Search", 2, inputs={"query": "x"})
    patch = {"id": post["id"], "trace_id": ROOT, "outputs": {"output": "found"},
             "end_time": "2024-04-05T01:28:52.900000"}
    no_id = {k: v for k, v in post.items() if k != "id"}
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in ({"post": [post]}, {"patch": [patch]}, no_id,
                                                      {"note": "x"})) + "\n")
    (ep,), rejected = read(langsmith, path)
    assert [(r.rule, r.line) for r in rejected] == [("bad_record", 3), ("unknown_content", 4)]
    assert calls(ep) == [("Search", {"query": "x"})] and results(ep) == ["found"]


def _llm(rid, parent, second, call, **extra):
    message = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
               "kwargs": {"content": "", "tool_calls": [call]}}
    return _run(rid, parent, "llm", "ChatOpenAI", second, inputs={"messages": [[{"type": "human", "data": {
        "content": "Plan the trip."}}]]}, outputs={"generations": [[{"text": "", "message": message}]]},
        extra={"invocation_params": {"model": "gpt-4o-mini", **extra}})


def test_a_forced_call_is_the_models_answer_only_where_a_parser_reads_it(tmp_path):
    """`with_structured_output` before LangChain marked it: the schema forced as the one function and a tools
    parser beside the call reading it; no tool runs it. The same forced choice with no parser, answered by a tool
    run, stays a tool call with its result."""
    forced = {"tool_choice": {"type": "function", "function": {"name": "Plan"}}}
    seq = "1ef0a000-0000-0000-0000-0000000000a1"
    runs = [_run(ROOT, None, "chain", "graph", 0, inputs={"question": "Plan the trip."}),
            _run(seq, ROOT, "chain", "RunnableSequence", 1),
            _llm("1ef0a000-0000-0000-0000-0000000000a2", seq, 2,
                 {"name": "Plan", "args": {"steps": ["book", "pack"]}, "id": "c1"}, **forced),
            _run("1ef0a000-0000-0000-0000-0000000000a3", seq, "parser", "PydanticToolsParser", 3,
                 outputs={"output": {"steps": ["book", "pack"]}}),
            _llm("1ef0a000-0000-0000-0000-0000000000a4", ROOT, 4, {"name": "Plan", "args": {"steps": []}, "id": "c2"},
                 **forced),
            _run("1ef0a000-0000-0000-0000-0000000000a5", ROOT, "tool", "Plan", 5, inputs={"steps": []},
                 outputs={"output": "no steps"})]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in runs) + "\n")
    (ep,), rejected = read(langsmith, path)
    assert rejected == []
    assert [(s.action.kind, s.action.text) for s in ep.steps][0] == ("message", '{"steps":["book","pack"]}')
    assert json.loads(ep.steps[0].action.raw)["structured_output"]["schema"] == "Plan"
    assert calls(ep) == [("Plan", {"steps": []})] and results(ep) == ["no steps"]


def test_retrievals_their_documents_and_failures(tmp_path):
    """A retriever run is a `search` action; its documents (serialized, one without a source) the observation, each
    a result block; a failed retrieval an error result; a retriever run beneath a tool run is the tool's work."""
    doc = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"],
           "kwargs": {"page_content": "Trains leave hourly.", "metadata": {"source": "https://rail.example/x"}}}
    bare = {"page_content": "Buses at noon.", "metadata": {"title": "Buses"}}
    tool = "1ef0a000-0000-0000-0000-0000000000b3"
    runs = [_run(ROOT, None, "chain", "graph", 0, inputs={"question": "How do I get there?"}),
            _run("1ef0a000-0000-0000-0000-0000000000b1", ROOT, "retriever", "Retriever", 1,
                 inputs={"query": "trains"}, outputs={"documents": [doc, bare]}),
            _run("1ef0a000-0000-0000-0000-0000000000b2", ROOT, "retriever", "Retriever", 2,
                 inputs={"query": "ferries"}, error="ConnectionError('store down')"),
            _run(tool, ROOT, "tool", "lookup", 3, inputs={"input": "taxis"}, outputs={"output": "no taxis"}),
            _run("1ef0a000-0000-0000-0000-0000000000b4", tool, "retriever", "Retriever", 4,
                 inputs={"query": "taxis"}, outputs={"documents": []})]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in runs) + "\n")
    (ep,), rejected = read(langsmith, path)
    assert rejected == []
    assert calls(ep) == [("search", {"query": "trains"}), ("search", {"query": "ferries"}),
                         ("lookup", {"input": "taxis"})]
    found, failed, _ = results(ep)
    assert found == ("[1] https://rail.example/x\nSnippet: Trains leave hourly.\n\n"
                     "[2] (no source)\nTitle: Buses\nSnippet: Buses at noon.")
    assert json.loads(ep.steps[1].observation.ui_tree)["results"][0]["url"] == "https://rail.example/x"
    assert "store down" in failed and ep.steps[2].observation.is_error
    assert ep.domain == "search"
