"""The Agents SDK trace reader on hand-made exports in the shapes `Span.export()` / `Trace.export()` return
(`agents/tracing/spans.py`, `span_data.py`): an agent used as a tool (its agent span under the outer agent's
function span), a failed function, a JSON array document, and the rows for records it cannot use."""

import json

from ingest.source import Budgets
from ingest.traces import openai_agents
from ingest.traces.documents import documents
from tests.ingest.traces.read_util import calls, claims, read, results

TRACE = "trace_0123456789abcdef0123456789abcdef"


def _span(sid, parent, start, data, error=None):
    return {"object": "trace.span", "id": sid, "trace_id": TRACE, "parent_id": parent,
            "started_at": f"2025-06-01T10:00:{start:02d}.000000+00:00",
            "ended_at": f"2025-06-01T10:00:{start:02d}.500000+00:00", "span_data": data, "error": error}


def _gen(sid, parent, start, inputs, outputs):
    return _span(sid, parent, start, {"type": "generation", "input": inputs, "output": outputs,
                                      "model": "gpt-4.1", "model_config": {}, "usage": {}})


def _call(cid, name, args, text=None):
    return {"role": "assistant", "content": text, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def _write(tmp_path, records, name="trace.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


USER = {"role": "user", "content": "Plan a trip to Oslo."}


def test_an_agent_used_as_a_tool_is_a_sub_episode(tmp_path):
    records = [{"object": "trace", "id": TRACE, "workflow_name": "Trip", "group_id": "g1", "metadata": None},
               _span("span_a1", None, 0, {"type": "agent", "name": "Planner", "tools": ["researcher"]}),
               _gen("span_g1", "span_a1", 1, [USER], [_call("call_1", "researcher", {"q": "Oslo"}, "Ask it.")]),
               _span("span_f1", "span_a1", 2, {"type": "function", "name": "researcher",
                                               "input": "{\"q\": \"Oslo\"}", "output": "cold"}),
               _span("span_a2", "span_f1", 3, {"type": "agent", "name": "Researcher"}),
               _gen("span_g2", "span_a2", 4, [{"role": "user", "content": "Oslo"}],
                    [_call("call_9", "web_search", {"query": "Oslo weather"})]),
               _span("span_f2", "span_a2", 5, {"type": "function", "name": "web_search",
                                               "input": "{\"query\": \"Oslo weather\"}", "output": "2 C"})]
    path = _write(tmp_path, records)
    assert claims(openai_agents, path)
    (main, sub), rejected = read(openai_agents, path)
    assert rejected == []
    assert calls(main) == [("researcher", {"q": "Oslo"})] and results(main) == ["cold"]
    assert main.steps[0].reasoning == "Ask it." and main.agent == "gpt-4.1"
    assert main.env["openai_agents"] == {"id": TRACE, "workflow_name": "Trip", "group_id": "g1"}
    assert calls(sub) == [("web_search", {"query": "Oslo weather"})] and results(sub) == ["2 C"]
    assert sub.domain == "search"  # its one tool is a search tool
    assert sub.env["parent"]["relation"] == "subagent" and sub.env["parent"]["key"] == main.key
    assert main.env["subagents"][0]["key"] == sub.key and main.env["subagents"][0]["after_steps"] == 1


def test_a_failed_function_is_an_error_result(tmp_path):
    records = [_gen("span_g1", None, 1, [USER], [_call("call_1", "book", {"city": "Oslo"})]),
               _span("span_f1", None, 2, {"type": "function", "name": "book", "input": "{\"city\": \"Oslo\"}",
                                          "output": None},
                     error={"message": "Error running tool", "data": {"error": "sold out"}})]
    (ep,), _ = read(openai_agents, _write(tmp_path, records))
    assert ep.final_observation.is_error and ep.final_observation.text == "Error running tool"
    assert ep.env["trace"]["errors"][0]["error"] == "Error running tool"


def test_a_json_array_and_exporter_batches_read_alike(tmp_path):
    records = [_gen("span_g1", None, 1, [USER], [_call("call_1", "book", {"city": "Oslo"})]),
               _span("span_f1", None, 2, {"type": "function", "name": "book", "input": "{}", "output": "ok"})]
    array = tmp_path / "array.json"
    array.write_text(json.dumps(records, indent=2))
    batches = _write(tmp_path, [{"data": records[:1]}, {"data": records[1:]}], "batches.jsonl")
    assert claims(openai_agents, array) and claims(openai_agents, batches)
    (a,), _ = read(openai_agents, array)
    (b,), _ = read(openai_agents, batches)
    assert calls(a) == calls(b) == [("book", {"city": "Oslo"})] and results(a) == results(b) == ["ok"]


def test_records_it_cannot_use_are_rows(tmp_path):
    bad = _span("span_x", None, 1, {"type": "function", "name": "f", "input": "{}", "output": "x"})
    del bad["trace_id"]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(_span("span_f", None, 0, {"type": "function", "name": "f", "input": "{}",
                                                         "output": "x"})) + "\n{not json\n"
                    + json.dumps(bad) + "\n" + json.dumps({"object": "response", "id": "r1"}) + "\n")
    (ep,), rejected = read(openai_agents, path)
    assert [(r.rule, r.line) for r in rejected] == [("parse_error", 2), ("bad_record", 3), ("unknown_content", 4)]
    assert rejected[1].record_id == "trace_id" and calls(ep) == [("f", {})]


def test_a_document_over_the_record_budget_is_a_row():
    data = b'{"object": "trace", "id": "t1", "workflow_name": "w"}\n' + b'{"object": "trace.span", "x": "' + \
        b"a" * 200 + b'"}\n'
    found = list(documents(data, "t.jsonl", Budgets(record_bytes=100)))
    assert found[0] == (1, {"object": "trace", "id": "t1", "workflow_name": "w"})
    assert found[1].rule == "budget_exceeded" and found[1].line == 2 and "record_bytes" in found[1].reason
