"""Agent TARS / tarko event streams: two real Apache-2.0 streams of bytedance/UI-TARS-desktop (one event a line,
and a JSON array under a `.jsonl` name) against goldens a person read against the raw files, and hand-made edge
cases (see `samples/chat/agent-tars/bytedance-UI-TARS-desktop/PROVENANCE.md`)."""

from __future__ import annotations

import base64
import json

from ingest.chat import agent_tars, by_shape
from ingest.record import Episode, Rejected
from tests.conftest import REPO
from tests.ingest.golden import check, read_records

SAMPLES = REPO / "samples" / "chat" / "agent-tars" / "bytedance-UI-TARS-desktop"
GOLDEN = REPO / "tests" / "ingest" / "chat" / "golden"


def _head(path) -> bytes:
    with open(path, "rb") as f:
        return f.read(4096)


def test_real_jsonl_trace_golden():
    """A prompt, reasoning, one JupyterCI call with its result, reasoning, the answer, the run's end."""
    path = SAMPLES / "trace.jsonl"
    assert agent_tars.units([str(path)], _head) == [str(path)]
    records = read_records(agent_tars, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [("tool_call", "JupyterCI"), ("message", None)]
    assert ep.steps[0].observation.text == "Use jupyter to calculate who is greater in 9.11 and 9.9"
    assert json.loads(ep.steps[1].observation.text)["status"] == "ok"  # the kernel's result object, as JSON
    assert ep.steps[0].reasoning.startswith("Got it, the user wants to use Jupyter")
    assert "9.9 is greater than 9.11" in ep.steps[1].action.text and ep.terminated
    assert ep.key == "3ZZp7adHwAe2e8QlUWM1B" and ep.agent == "ep-20250905175225-hlrvd"
    assert ep.env["agent_tars"]["session"]["modelDisplayName"] == "UI-TARS-2"
    check(records, GOLDEN / "agent-tars-trace.json", env_keys=("agent_tars",))


def test_real_snapshot_array_golden_with_its_screenshot_as_a_blob():
    """A JSON array under a `.jsonl` name (no reader took it before this one): a web search, a page visit, the
    page's screenshot and the answer; the run did not record its end. The snapshot cut the screenshot's data URL
    short: it is no image, and is kept as written, not a blob."""
    path = SAMPLES / "nvidia-stock-event-stream.jsonl"
    assert agent_tars.units([str(path)], _head) == [str(path)]
    assert by_shape.units([str(path)], _head) == []
    blobs: dict = {}
    records = read_records(agent_tars, path, blobs)
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [s.action.tool_name for s in ep.steps] == ["web_search", "browser_navigate", None]
    assert ep.domain == "search" and not ep.terminated
    [image] = ep.env["agent_tars"]["images"]
    assert image["image"] == "data:image/jpeg;base64,/9j/4AAQSk" and blobs == {}
    check(records, GOLDEN / "agent-tars-nvidia-stock.json", env_keys=("agent_tars",))


def test_calls_named_only_by_their_event_an_error_result_and_unknown_events(tmp_path):
    events = [
        {"id": "1", "type": "agent_run_start", "timestamp": 1757351879447, "sessionId": "s1", "model": "m1"},
        {"id": "2", "type": "user_message", "timestamp": 1757351879457, "content": "Read a.txt"},
        {"id": "3", "type": "assistant_streaming_message", "timestamp": 1757351879458, "content": "Re"},
        {"id": "4", "type": "tool_call", "timestamp": 1757351879459, "toolCallId": "c1", "name": "read_file",
         "arguments": {"path": "a.txt"}, "tool": {"name": "read_file", "description": "Read a file"}},
        {"id": "5", "type": "tool_result", "timestamp": 1757351879460, "toolCallId": "c1", "name": "read_file",
         "content": "no such file", "error": "ENOENT", "elapsedMs": 3},
        {"id": "6", "type": "plan_update", "timestamp": 1757351879461, "steps": [{"content": "read"}]},
        {"id": "7", "type": "mystery", "timestamp": 1757351879462},
        {"id": "8", "type": "user_message", "timestamp": 1757351879462, "content": [
            {"type": "text", "text": "Current browser:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(b"PNG").decode()}}]},
        {"id": "8a", "type": "assistant_thinking_message", "timestamp": 1757351879463, "content": "The pa",
         "isComplete": False},
        {"id": "8c", "type": "assistant_thinking_message", "timestamp": 1757351879463, "content": "The path is wrong."},
        {"id": "8b", "type": "assistant_message", "timestamp": 1757351879463, "content": "It is missing."},
        {"id": "9", "type": "agent_run_end", "timestamp": 1757351879464, "status": "idle"},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + "{bad\n")
    blobs: dict = {}
    records = read_records(agent_tars, path, blobs)
    rows = [r for r in records if isinstance(r, Rejected)]
    assert sorted(r.rule for r in rows) == ["parse_error", "unknown_content"]
    assert any("'mystery'" in r.reason for r in rows)
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.tool_name, s.action.text) for s in ep.steps] == [("read_file", None), (None, "It is missing.")]
    # the error result and the page the agent was shown next are what the answer saw
    assert ep.steps[1].observation.is_error and ep.steps[1].observation.text == "no such file\n\nCurrent browser:"
    # a thinking event still streaming is a fragment of the complete one; one that says nothing is complete
    assert ep.steps[1].reasoning == "The path is wrong."
    env = ep.env["agent_tars"]
    assert env["streamed"] == 1 and env["tools"]["read_file"]["description"] == "Read a file"
    assert [e["type"] for e in env["events"]] == ["plan_update", "mystery"]
    assert ep.agent == "m1" and ep.key == "s1" and ep.terminated
    [image] = env["images"]
    assert image["event"] == "8" and blobs[image["image"]] == ("image/png", b"PNG")


def test_the_agent_uis_events_document_written_over_many_lines(tmp_path):
    events = [{"id": "1", "type": "agent_run_start", "timestamp": 1704103200000, "sessionId": "s2", "model": "m"},
              {"id": "2", "type": "user_message", "timestamp": 1704103200000, "content": "Tip on $85 at 18%?"},
              {"id": "3", "type": "assistant_message", "timestamp": 1704103201000, "content": "",
               "toolCalls": [{"id": "c1", "type": "function",
                              "function": {"name": "calculator", "arguments": "{\"expression\": \"85*0.18\"}"}}]},
              {"id": "4", "type": "tool_result", "timestamp": 1704103202000, "toolCallId": "c1", "name": "calculator",
               "content": {"result": 15.3}},
              {"id": "5", "type": "assistant_message", "timestamp": 1704103203000, "content": "$15.30"}]
    path = tmp_path / "custom-format-transformed.json"
    path.write_text(json.dumps({"events": events}, indent=2))
    assert agent_tars.units([str(path)], _head) == [str(path)]
    records = read_records(agent_tars, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.tool_name, s.action.arguments, s.action.text) for s in ep.steps] == [
        ("calculator", '{"expression":"85*0.18"}', None), (None, None, "$15.30")]
    assert ep.steps[1].observation.text == '{"result":15.3}' and ep.key == "s2"
