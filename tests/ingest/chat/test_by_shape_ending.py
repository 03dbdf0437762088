"""The shape reader's domain and ending, on hand-made lists: a conversation is in the domain its record states,
else the one its calls show, else the documented default said as such in env; the run ended when the log's last
model turn or tool result is the model's answer after the last tool result, as the chat-log readers decide."""

import json

from ingest.chat import by_shape
from ingest.record import Episode
from tests.ingest.golden import read_records

CHAT = [{"role": "user", "content": "What is 1+1?"}, {"role": "assistant", "content": "2."},
        {"role": "user", "content": "And 2+2?"}, {"role": "assistant", "content": "4."}]
CALL = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "18C"}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


def _episode(tmp_path, doc) -> Episode:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(doc))
    [ep] = [r for r in read_records(by_shape, path) if isinstance(r, Episode)]
    return ep


def test_a_plain_chat_is_in_the_default_domain_said_as_a_default_and_ends_on_its_answer(tmp_path):
    ep = _episode(tmp_path, CHAT)
    assert (ep.domain, ep.platform) == ("mcp", "linux")
    assert ep.env["chat_shape"]["domain_from"] == by_shape.DEFAULT_DOMAIN_FROM
    assert [s.action.kind for s in ep.steps] == ["message", "message"]
    assert ep.terminated
    # a person's message after the answer (a simulated user's stop) leaves the run ended
    assert _episode(tmp_path, CHAT + [{"role": "user", "content": "###STOP###"}]).terminated


def test_a_domain_the_record_states_is_taken_and_said(tmp_path):
    ep = _episode(tmp_path, {"domain": "search", "messages": CHAT})
    assert ep.domain == "search" and ep.env["chat_shape"]["domain_from"] == "record.domain"
    ep = _episode(tmp_path, {"run": {"domain": "web", "id": 3, "result": {"messages": CHAT}}})
    assert (ep.domain, ep.platform) == ("web", "browser") and ep.env["chat_shape"]["domain_from"] == "run.domain"
    # a word outside the schema's vocabulary is no domain: kept in the record, the default said
    ep = _episode(tmp_path, {"domain": "airline", "messages": CHAT})
    assert ep.domain == "mcp" and ep.env["record"]["domain"] == "airline"
    assert ep.env["chat_shape"]["domain_from"] == by_shape.DEFAULT_DOMAIN_FROM


def test_tools_called_or_declared_make_the_tool_calling_domain(tmp_path):
    called = _episode(tmp_path, {"messages": CHAT[:1] + [CALL, RESULT, {"role": "assistant", "content": "18C."}]})
    assert called.domain == "mcp" and "domain_from" not in called.env["chat_shape"]  # the steps show it
    declared = _episode(tmp_path, {"tools": TOOLS, "messages": CHAT})
    assert declared.domain == "mcp" and declared.env["chat_shape"]["domain_from"] == "record.tools"


def test_a_log_that_stops_on_a_call_or_its_result_is_cut_not_ended(tmp_path):
    answered = _episode(tmp_path, CHAT[:1] + [CALL, RESULT, {"role": "assistant", "content": "18C."}])
    assert answered.terminated
    for cut in (CHAT[:1] + [CALL], CHAT[:1] + [CALL, RESULT], CHAT[:1] + [CALL, RESULT, {"role": "user",
                                                                                        "content": "well?"}]):
        ep = _episode(tmp_path, cut)
        assert not ep.terminated


BASH = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]}


def test_each_domain_has_its_platform_and_what_is_no_list_of_tools_or_no_name_is_not_taken(tmp_path):
    found = {}
    for name, doc in (("said", {"domain": "search", "messages": CHAT}),
                      ("shell", CHAT[:1] + [BASH, RESULT, {"role": "assistant", "content": "a.py"}]),
                      ("called", CHAT[:1] + [CALL, RESULT, {"role": "assistant", "content": "18C."}]),
                      ("declared", {"tools": TOOLS, "messages": CHAT}),
                      ("not_a_list", {"tools": "auto", "messages": CHAT})):
        ep = _episode(tmp_path, doc)
        found[name] = (ep.domain, ep.platform, ep.env["chat_shape"].get("domain_from"))
    assert found == {"said": ("search", "linux", "record.domain"), "shell": ("terminal", "linux", None),
                     "called": ("mcp", "linux", None), "declared": ("mcp", "linux", "record.tools"),
                     "not_a_list": ("mcp", "linux", by_shape.DEFAULT_DOMAIN_FROM)}
    # a model named by an object, not a name, names no agent
    assert _episode(tmp_path, {"model": {"name": "gpt-4o"}, "messages": CHAT}).agent is None


def test_a_tool_result_after_the_models_last_words_leaves_the_run_cut(tmp_path):
    ep = _episode(tmp_path, CHAT[:1] + [{"role": "assistant", "content": "I'll look."},
                                        {"role": "tool", "tool_call_id": "c9", "content": "18C"}])
    assert not ep.terminated
