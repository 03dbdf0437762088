"""Google ADK's own record of a tool's execution (`gcp.vertex.agent.tool_call_args` / `...tool_response` on its
`execute_tool` spans) is the call's observation: a run that ends after the tool, or whose next model call was not
traced, keeps every result. Read on the real kagent run cut after its tools (samples/traces/otel/agentevals-kagent,
its truth file the oracle), and on hand-made spans for ADK's placeholders and a model input that says otherwise."""

import json

from ingest.traces import otel
from tests.conftest import SAMPLES
from tests.ingest.traces.read_util import calls, read, results
from tests.ingest.traces.test_otel_read import _otlp, _span

KAGENT = SAMPLES / "traces" / "otel" / "agentevals-kagent"


def _without_last_model_call(tmp_path):
    """The real run as a trace that ended after its tools: its second `generate_content` span (the one given the
    tools' results) dropped, with the log records that name it."""
    doc = json.loads((KAGENT / "adk_go_1turn.json").read_text())
    spans = [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    model = sorted((s for s in spans if s["name"].startswith("generate_content")),
                   key=lambda s: int(s["startTimeUnixNano"]))
    last = model[-1]["spanId"]
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            ss["spans"] = [s for s in ss["spans"] if s["spanId"] != last]
    for rl in doc.get("resourceLogs", []):
        for sl in rl["scopeLogs"]:
            sl["logRecords"] = [r for r in sl["logRecords"] if r.get("spanId") != last]
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_run_ending_after_its_tools_keeps_each_result_from_the_tool_span(tmp_path):
    truth = json.loads((KAGENT / "adk_go_1turn.truth.json").read_text())
    [ep], rows = read(otel, _without_last_model_call(tmp_path))
    assert rows == []
    assert [s.action.kind for s in ep.steps] == ["tool_call", "tool_call"] and not ep.terminated
    got = sorted((json.dumps(args, sort_keys=True), json.loads(r)) for (_, args), r in zip(calls(ep), results(ep)))
    want = sorted((json.dumps(c["args"], sort_keys=True), c["result"]) for c in truth["turns"][0]["tool_calls"])
    assert got == want
    assert "<none>" in results(ep)[0]  # Go's `\u003c` escapes read as the characters the tool printed


ADK_MODEL = {"gen_ai.operation.name": "generate_content", "gen_ai.request.model": "gemini-2.5-flash"}


def _adk_trace(tmp_path, tool_attrs: dict, next_input=None):
    """An ADK run: a model call asking for `lookup`, the tool's span, and (when given) the next model call's input."""
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "lookup",
                                            "arguments": {"q": "x"}}]}
    first = {**ADK_MODEL, "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "go"}]}],
             "gen_ai.output.messages": [call]}
    spans = [_span("a1", None, "invoke_agent root", 0, {"gen_ai.operation.name": "invoke_agent",
                                                         "gen_ai.agent.name": "root"}),
             _span("m1", "a1", "generate_content", 1, first),
             _span("t1", "a1", "execute_tool lookup", 2, {"gen_ai.operation.name": "execute_tool",
                                                          "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "c1",
                                                          **tool_attrs})]
    if next_input is not None:
        given = [{"role": "user", "parts": [{"type": "text", "content": "go"}]}, call,
                 {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": next_input}]}]
        answer = [{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]
        spans.append(_span("m2", "a1", "generate_content", 3, {**ADK_MODEL, "gen_ai.input.messages": given,
                                                               "gen_ai.output.messages": answer}))
    [ep], rows = read(otel, _otlp(tmp_path, spans))
    return ep, rows


def test_the_tool_spans_record_is_the_observation_and_a_model_input_that_differs_is_kept_beside_it(tmp_path):
    ep, rows = _adk_trace(tmp_path, {"gcp.vertex.agent.tool_call_args": '{"q": "x"}',
                                     "gcp.vertex.agent.tool_response": '{"result": "42 rows"}'},
                          next_input={"result": "42 rows (truncated by the framework)"})
    assert rows == [] and results(ep) == ['{"result": "42 rows"}']
    [differ] = ep.env["trace"]["tool_results_differ"]
    assert differ["tool_call_id"] == "c1" and differ["tool"] == "lookup"
    assert differ["tool_span"] == '{"result": "42 rows"}' and "truncated" in differ["model_input"]


def test_the_same_result_written_otherwise_is_no_difference(tmp_path):
    ep, _ = _adk_trace(tmp_path, {"gcp.vertex.agent.tool_response": '{"result":"42 rows"}'},
                       next_input={"result": "42 rows"})
    assert results(ep) == ['{"result":"42 rows"}'] and "tool_results_differ" not in ep.env["trace"]


def test_adks_placeholders_are_no_result_and_the_next_model_input_gives_it(tmp_path):
    """Content capture off: ADK writes `{}` as arguments and response; no function response: `<not specified>`."""
    for response in ("{}", "<not specified>", "<not serializable>"):
        ep, rows = _adk_trace(tmp_path, {"gcp.vertex.agent.tool_call_args": "{}",
                                         "gcp.vertex.agent.tool_response": response}, next_input={"result": "ok"})
        assert rows == [] and calls(ep) == [("lookup", {"q": "x"})]
        assert [json.loads(r) for r in results(ep)] == [{"result": "ok"}], response


def test_an_mcp_tools_call_result_reads_as_its_text_and_its_failure(tmp_path):
    failed = {"content": [{"type": "text", "text": "no such table"}], "isError": True}
    ep, _ = _adk_trace(tmp_path, {"gcp.vertex.agent.tool_response": json.dumps(failed)})
    assert results(ep) == ["no such table"]
    assert ep.final_observation.is_error
