"""The scripted model server (the stand-in for the vendors' services that the coding-agent CLIs run against):
OpenAI's own client parses its Chat Completions and Responses answers, streamed and not, into the scripted
calls; the Anthropic and Gemini streams add up to the same message as the plain answers; the script advances
only on the results a request carries (a retried or side request gets what it should), and subagent
conversations get their own script; an agent that edits through text (Aider) gets text turns. Claude Code,
Codex, Gemini CLI, Qwen Code and Aider speak to it in tests/ingest/swe/."""

from __future__ import annotations

import json
import urllib.request

import openai  # a test dependency of the project (pyproject's `test` extra)
import pytest

from tests.scripted_model_server import ScriptedModelServer, Turn, answer, call, call_id

SCRIPT = [call("read_file", path="notes.txt"),
          Turn(calls=(call("ls").calls[0], call("cat", path="a b").calls[0]), text="Two at once."),
          answer("Done.")]


@pytest.fixture
def server():
    with ScriptedModelServer(SCRIPT, conversations={"SUBTASK": [answer("sub done")]}) as s:
        yield s


TOOLS_CHAT = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
TOOLS_RESPONSES = [{"type": "function", "name": "read_file", "parameters": {"type": "object"}}]


def _post(url: str, body: dict) -> tuple[str, bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as r:
        return r.headers["Content-Type"], r.read()


def _sse(data: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in data.decode().splitlines()
            if line.startswith("data: ") and line[6:] != "[DONE]"]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_client_reads_the_chat_completions_turns(server, stream):
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="x")
    messages = [{"role": "user", "content": "go"}]
    calls = []
    for _ in range(3):
        if stream:
            chunks = list(client.chat.completions.create(model="m1", messages=messages, tools=TOOLS_CHAT, stream=True))
            deltas = [c.choices[0].delta for c in chunks if c.choices]
            text = "".join(d.content or "" for d in deltas)
            got = [(tc.id, tc.function.name, json.loads(tc.function.arguments)) for d in deltas for tc in d.tool_calls or []]
            assert chunks[-1].usage.completion_tokens == 30
        else:
            done = client.chat.completions.create(model="m1", messages=messages, tools=TOOLS_CHAT)
            assert done.model == "m1"
            text = done.choices[0].message.content or ""
            got = [(tc.id, tc.function.name, json.loads(tc.function.arguments))
                   for tc in done.choices[0].message.tool_calls or []]
        calls.append((text, got))
        messages.append({"role": "assistant", "content": text, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for i, n, a in got]})
        messages += [{"role": "tool", "tool_call_id": i, "content": f"result of {n}"} for i, n, _ in got]
    assert calls == [("", [(call_id("chat", 0, 0), "read_file", {"path": "notes.txt"})]),
                     ("Two at once.", [(call_id("chat", 1, 0), "ls", {}), (call_id("chat", 1, 1), "cat", {"path": "a b"})]),
                     ("Done.", [])]
    assert [r.turn for r in server.requests] == [0, 1, 2]
    assert [x.output for x in server.requests[-1].results] == ["result of read_file", "result of ls", "result of cat"]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_client_reads_the_responses_turns(server, stream):
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="x")
    items: list = [{"role": "user", "content": "go"}]
    for expected in (["read_file"], ["ls", "cat"], []):
        if stream:
            events = list(client.responses.create(model="m2", input=items, tools=TOOLS_RESPONSES, stream=True))
            response = events[-1].response
            assert events[-1].type == "response.completed"
        else:
            response = client.responses.create(model="m2", input=items, tools=TOOLS_RESPONSES)
        assert response.model == "m2" and response.usage.output_tokens == 30
        calls = [o for o in response.output if o.type == "function_call"]
        assert [c.name for c in calls] == expected
        items += [{"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.arguments} for c in calls]
        items += [{"type": "function_call_output", "call_id": c.call_id, "output": f"out {c.name}"} for c in calls]
    assert response.output_text == "Done."
    assert [x.output for x in server.requests[-1].results] == ["out read_file", "out ls", "out cat"]


def test_anthropic_stream_adds_up_to_the_plain_message(server):
    body = {"model": "claude-x", "messages": [{"role": "user", "content": "go"}], "tools": [{"name": "read_file"}]}
    _, plain = _post(f"{server.url}/v1/messages", body)
    kind, streamed = _post(f"{server.url}/v1/messages", {**body, "stream": True})
    message = json.loads(plain)
    events = _sse(streamed)
    assert kind == "text/event-stream" and events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    inputs = [json.loads(e["delta"]["partial_json"]) for e in events if e.get("delta", {}).get("type") == "input_json_delta"]
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [(b["id"], b["name"]) for b in starts] == [(b["id"], b["name"]) for b in message["content"]]
    assert inputs == [b["input"] for b in message["content"]] == [{"path": "notes.txt"}]
    assert message["model"] == "claude-x" and message["stop_reason"] == "tool_use"
    assert [r.turn for r in server.requests] == [0, 0]  # the same request twice: the same turn


def test_gemini_answers_and_results_matched_by_name_when_the_id_is_not_echoed(server):
    path = f"{server.url}/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
    tools = [{"functionDeclarations": [{"name": "read_file"}]}]
    _, first = _post(path, {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": tools})
    (chunk,) = _sse(first)
    part = chunk["candidates"][0]["content"]["parts"][0]["functionCall"]
    assert part == {"id": call_id("gemini", 0, 0), "name": "read_file", "args": {"path": "notes.txt"}}
    contents = [{"role": "user", "parts": [{"text": "go"}]}, {"role": "model", "parts": [{"functionCall": part}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "x"}}}]}]
    _, plain = _post(f"{server.url}/v1beta/models/gemini-x:generateContent", {"contents": contents, "tools": tools})
    second = json.loads(plain)
    assert [p["functionCall"]["name"] for p in second["candidates"][0]["content"]["parts"] if "functionCall" in p] == \
        ["ls", "cat"]
    assert second["modelVersion"] == "gemini-x" and server.requests[-1].results[0].output == "x"


def test_side_requests_and_subagent_conversations(server):
    _, side = _post(f"{server.url}/v1/messages", {"model": "h", "messages": [{"role": "user", "content": "title?"}]})
    assert json.loads(side)["content"] == [{"type": "text", "text": "OK"}]
    _, sub = _post(f"{server.url}/v1/messages", {"model": "h", "tools": [{"name": "x"}],
                                                 "messages": [{"role": "user", "content": "do the SUBTASK"}]})
    assert json.loads(sub)["content"] == [{"type": "text", "text": "sub done"}]
    assert [(r.turn, r.script) for r in server.requests] == [(None, 0), (0, 1)]
    assert server.agent_requests(1) == [server.requests[1]] and server.agent_requests() == []


def test_a_script_must_end_with_an_answer():
    with pytest.raises(ValueError, match="final answer"):
        ScriptedModelServer([call("ls")])


def test_an_agent_that_edits_through_text_gets_the_text_turns_its_history_lacks():
    """Aider offers no tools: `loop` says which tool-less requests are its own; each gets the first text turn no
    assistant message of its history holds yet (a retried request the same turn), the others the side text."""
    script = [answer("edit one"), answer("edit two")]
    loop = lambda protocol, body: body["messages"][0]["content"] == "edit"
    with ScriptedModelServer(script, loop=loop, side=lambda protocol, body: "a commit message") as s:
        client = openai.OpenAI(base_url=f"{s.url}/v1", api_key="x")
        history = [{"role": "system", "content": "edit"}, {"role": "user", "content": "go"}]
        ask = lambda messages: client.chat.completions.create(model="m", messages=messages).choices[0].message.content
        assert ask(history) == ask(history) == "edit one"
        assert ask([{"role": "system", "content": "commit?"}]) == "a commit message"
        history += [{"role": "assistant", "content": "edit one\n"}, {"role": "user", "content": "it failed"}]
        assert ask(history) == "edit two"
        history += [{"role": "assistant", "content": "edit two"}, {"role": "user", "content": "again"}]
        assert ask(history) == "edit two"  # the last turn repeats
    assert [r.turn for r in s.requests] == [0, 0, None, 1, 1]
