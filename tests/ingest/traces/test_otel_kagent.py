"""A real kagent agent's run as one OTLP/JSON document (`resourceSpans` and `resourceLogs`), read against the truth
file its recorders wrote by reading the spans (samples/traces/otel/agentevals-kagent, PROVENANCE.md): the truth
file is the oracle for the prompt, the calls, their results, the answer, the agent and the model calls."""

import json

from ingest.record import Episode, Rejected
from ingest.traces import otel
from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.ingest.golden import read_records
from tests.ingest.traces.read_util import calls, claims, results
from tests.ingest.traces.test_langfuse_read import GOLDEN

KAGENT = SAMPLES / "traces" / "otel" / "agentevals-kagent"
RUN = KAGENT / "adk_go_1turn.json"
TRUTH = json.loads((KAGENT / "adk_go_1turn.truth.json").read_text())


def _episode():
    """The run, read with no row: its 9 `resourceLogs` records (GenAI events, content `<elided>`) are events of the
    two model spans they name; the spans' own message attributes hold the messages."""
    records = read_records(otel, RUN)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    return ep, records


def _by_arguments(pairs) -> list:
    return sorted(pairs, key=lambda p: json.dumps(p[:2], sort_keys=True))


def test_the_run_holds_every_fact_of_its_truth_file():
    """Prompt, answer, the text beside the calls, the agent, each call with its arguments and its own result."""
    assert claims(otel, RUN)
    ep, _ = _episode()
    [turn] = TRUTH["turns"]
    assert ep.key == "87c6a986091561073755b87f921ed006" and ep.task == turn["user_text"]
    assert [s.action.kind for s in ep.steps] == ["tool_call", "tool_call", "message"] and ep.terminated
    assert ep.steps[-1].action.text == turn["final_text"]
    assert [s.reasoning for s in ep.steps if s.reasoning] == turn["intermediate_texts"]
    assert ep.env["trace"]["agents"] == turn["agents"]
    got = [(name, args, json.loads(result)) for (name, args), result in zip(calls(ep), results(ep))]
    want = [(c["name"], c["args"], c["result"]) for c in turn["tool_calls"]]
    assert _by_arguments(got) == _by_arguments(want)
    assert not any(c["is_error"] for c in turn["tool_calls"])


def test_each_model_call_keeps_its_token_counts():
    """Two model calls, whose input and output tokens add up to the truth file's (the spans' own counts: the
    ADK's `generate_content` spans hold the provider's usage; no wrapper span counts them again)."""
    ep, _ = _episode()
    [turn] = TRUTH["turns"]
    used = ep.env["trace"]["model_usage"]
    assert len(used) == turn["llm_calls"] and {u["model"] for u in used} == {"claude-haiku-4-5"}
    assert (sum(u["gen_ai.usage.input_tokens"] for u in used), sum(u["gen_ai.usage.output_tokens"] for u in used)) \
        == (turn["tokens"]["input"], turn["tokens"]["output"]) == (TRUTH["tokens"]["input"], TRUTH["tokens"]["output"])


def test_concurrent_calls_keep_the_order_the_model_asked_for_them():
    """The model asked for the pods, then the namespaces, in one answer; their spans started 2.75 µs apart in the
    other order (the truth file lists them by span start). The episode keeps the model's order; each result is
    the one its own span and call id give."""
    ep, _ = _episode()
    assert calls(ep) == [("k8s_get_resources", {"namespace": "kagent", "resource_type": "pod"}),
                         ("k8s_get_resources", {"resource_type": "namespace"})]
    pods, namespaces = results(ep)
    assert "kagent-controller-85744f4879-tdh5c" in pods and "podcertificate-controller-system" in namespaces


def test_adks_merged_tools_span_is_a_wrapper_not_a_call():
    """ADK wraps the two concurrent calls in `execute_tool (merged)` (tool `(merged tools)`, arguments `N/A`): it is
    kept among the trace's other spans, and each call's raw names its own span, not the wrapper."""
    ep, _ = _episode()
    other = [s["name"] for s in ep.env["trace"]["other_spans"]]
    assert other.count("execute_tool (merged)") == 1
    spans = [json.loads(s.action.raw)["span"] for s in ep.steps if s.action.kind == "tool_call"]
    assert [s["span_id"] for s in spans] == ["65cf897f6ffd0d56", "876ed29440f0e524"]
    assert ep.agent == "claude-haiku-4-5" and ep.env["trace"]["spans"] == 116


def test_golden():
    _, records = _episode()
    golden.check(records, GOLDEN / "otel-agentevals-kagent-adk-go-1turn.json")


TWO_TURNS = KAGENT / "adk_go_2turn.json"
TWO_TURNS_TRUTH = json.loads((KAGENT / "adk_go_2turn.truth.json").read_text())


def test_a_two_turn_conversation_is_one_episode_a_turn_each_holding_only_its_own_steps():
    """Two user turns of one conversation (`gen_ai.conversation.id`), one trace each, sent through the Collector.
    The second turn's first model call is given the whole first turn: that is context (5 messages), not its steps;
    each episode holds its turn's prompt, calls with their own results, answer and model calls, as the truth says."""
    assert claims(otel, TWO_TURNS)
    records = read_records(otel, TWO_TURNS)
    assert [r for r in records if isinstance(r, Rejected)] == []
    episodes = [r for r in records if isinstance(r, Episode)]
    assert [ep.key for ep in episodes] == ["bf5aed954bb31b9234b2a29b14224354", "b9b73f9f8227b2fc56b56ce57409119a"]
    for ep, turn in zip(episodes, TWO_TURNS_TRUTH["turns"], strict=True):
        assert ep.task == turn["user_text"] and ep.terminated and ep.steps[-1].action.text == turn["final_text"]
        assert [s.reasoning for s in ep.steps if s.reasoning] == turn["intermediate_texts"]
        got = [(name, args, json.loads(result)) for (name, args), result in zip(calls(ep), results(ep))]
        assert _by_arguments(got) == _by_arguments([(c["name"], c["args"], c["result"]) for c in turn["tool_calls"]])
        used = ep.env["trace"]["model_usage"]
        assert len(used) == turn["llm_calls"] and ep.env["trace"]["agents"] == turn["agents"]
        assert (sum(u["gen_ai.usage.input_tokens"] for u in used), sum(u["gen_ai.usage.output_tokens"] for u in used)) \
            == (turn["tokens"]["input"], turn["tokens"]["output"])
    assert [len(ep.steps) for ep in episodes] == [3, 2]
    assert "history_messages" not in episodes[0].env["trace"] and episodes[1].env["trace"]["history_messages"] == 5
    # the model asked for the namespaces first this time; the truth lists the pods first (their span began first)
    assert [args for _, args in calls(episodes[0])] == [{"all_namespaces": True, "resource_type": "namespace"},
                                                         {"namespace": "kagent", "resource_type": "pod"}]
    golden.check(records, GOLDEN / "otel-agentevals-kagent-adk-go-2turn.json")
