"""Agent TARS / tarko event streams: two real Apache-2.0 streams of bytedance/UI-TARS-desktop (one event a line,
and a JSON array under a `.jsonl` name) against goldens a person read against the raw files, and hand-made edge
cases (see `samples/chat/agent-tars/bytedance-UI-TARS-desktop/PROVENANCE.md`)."""

from __future__ import annotations

import base64
import json
import shutil

import pytest

from ingest.chat import agent_tars, by_shape
from ingest.record import Episode, Rejected
from tests.conftest import REPO
from tests.ingest.golden import check, read_records
from tests.ingest import golden

SAMPLES = REPO / "samples" / "chat" / "agent-tars" / "bytedance-UI-TARS-desktop"
GOLDEN = REPO / "tests" / "ingest" / "chat" / "golden"


def test_real_jsonl_trace_golden():
    """A prompt, reasoning, one JupyterCI call with its result, reasoning, the answer, the run's end."""
    path = SAMPLES / "trace.jsonl"
    assert agent_tars.units([str(path)], golden.head) == [str(path)]
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
    assert agent_tars.units([str(path)], golden.head) == [str(path)]
    assert by_shape.units([str(path)], golden.head) == []
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
    assert agent_tars.units([str(path)], golden.head) == [str(path)]
    records = read_records(agent_tars, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.tool_name, s.action.arguments, s.action.text) for s in ep.steps] == [
        ("calculator", '{"expression":"85*0.18"}', None), (None, None, "$15.30")]
    assert ep.steps[1].observation.text == '{"result":15.3}' and ep.key == "s2"


def test_real_run_saved_per_loop_is_one_episode_not_one_a_loop():
    """The agent's snapshot of a run: the stream before each loop's model request (`loop-1` the prompt alone,
    `loop-2` the location call and its result, `loop-3` the weather call too) and the whole run (saved again: new
    session and message ids and times, the same events, then the answer). Before, four episodes repeated the
    calls (and `loop-1` was an empty episode); now the whole run's file is the unit and reads its loops with it."""
    run = SAMPLES / "snapshot-tool-calls-basic"
    files = sorted(str(p) for p in run.rglob("*.jsonl"))
    assert agent_tars.units(files, golden.head) == [str(run / "event-stream.jsonl")]
    assert agent_tars.members([str(run / "event-stream.jsonl")], files, golden.head) == {
        str(run / "event-stream.jsonl"): [str(run / f"loop-{n}/event-stream.jsonl") for n in (1, 2, 3)]
        + sorted([str(run / f"loop-{n}/llm-{kind}.jsonl") for n in (1, 2, 3) for kind in ("request", "response")]
                 + [str(run / f"loop-{n}/tool-calls.jsonl") for n in (1, 2)])}
    records = read_records(agent_tars, run / "event-stream.jsonl", root=run)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = records
    assert [s.action.tool_name for s in ep.steps] == ["getCurrentLocation", "getWeather", None]
    assert ep.steps[-1].action.text.startswith("In Boston today, the weather is sunny") and ep.terminated is False
    assert ep.key == "1758276553506-jblu5ot"  # the whole run's session, not the loops' 1758276103049-d6o4kd7
    assert ep.env["agent_tars"]["snapshots"] == [
        "loop-1/event-stream.jsonl", "loop-2/event-stream.jsonl", "loop-3/event-stream.jsonl", "event-stream.jsonl"]
    check(records, GOLDEN / "agent-tars-snapshot-basic.json", env_keys=("agent_tars",))
    # every field, the loops' requests, responses and saved calls in env with them
    golden.check_whole(records, GOLDEN / "agent-tars-snapshot-basic-whole.json")


def test_real_runs_model_requests_give_its_system_prompt_tools_and_options_not_steps():
    """Each loop's `llm-request.jsonl` holds the messages so far (the stream's again: no steps) and what the
    stream lacks: the system prompt (with the loop's time), the tools as declared to the model, the options and
    the endpoint; each `llm-response.jsonl` the streamed reply's id, model and finish reason."""
    run = SAMPLES / "snapshot-tool-calls-basic"
    [ep] = read_records(agent_tars, run / "event-stream.jsonl", root=run)
    requests = ep.env["agent_tars"]["requests"]
    assert [r["loop"] for r in requests] == [1, 2, 3] and not any("differs" in r or "messages" in r for r in requests)
    first = requests[0]
    assert (first["provider"], first["model"], first["baseURL"]) == (
        "volcengine", "doubao-seed-1-6-vision-250815", "https://ark.cn-beijing.volces.com/api/v3")
    assert first["system"][0].startswith("You are an intelligent assistant that can use provided tools")
    assert first["system"][0].endswith("Current time: 9/19/2025, 6:01:43 PM")
    assert first["tools"] == ["getCurrentLocation", "getWeather"]
    assert first["options"] == {"temperature": 0.7, "stream": True, "thinking": {"type": "disabled"}}
    # both declared tools were called: their definitions are the call events' (`tools`), not repeated
    assert sorted(ep.env["agent_tars"]["tools"]) == first["tools"] and "declared_tools" not in ep.env["agent_tars"]
    assert [(r["response"]["finish_reason"], r["response"]["model"]) for r in requests] == [
        ("tool_calls", "doubao-seed-1-6-vision-250815")] * 2 + [("stop", "doubao-seed-1-6-vision-250815")]
    assert requests[0]["response"]["id"] == "0217582761039690fa6ef8c2347680bd87fd8d357bb16f1c7d91e"
    # each loop's `tool-calls.jsonl`: the calls the loop ran, their args and results the stream's own (not kept
    # again), their execution time in ms (0: the test's tools answer at once)
    assert [r.get("tool_calls") for r in requests] == [
        [{"toolCallId": "call_bvgy2ky1fmbyqhy1gct18f17", "name": "getCurrentLocation", "executionTime": 0}],
        [{"toolCallId": "call_ztpsz2lreib2j3ckchidw1z4", "name": "getWeather", "executionTime": 0}], None]


def test_real_run_whose_later_loops_another_model_wrote_keeps_them_as_their_own_episode():
    """`loop-1` and the whole run are one recording (doubao-seed-1-6-vision, September 2025); `loop-2` and
    `loop-3` an older one (another model, July 2025), which the whole run does not open with: its two calls are
    an episode of their own that says so, the whole run's episode names it. Each loop's model request and
    response go with the episode holding that loop's snapshot."""
    run = SAMPLES / "snapshot-tool-calls-structured-outputs-impl"
    records = read_records(agent_tars, run / "event-stream.jsonl", root=run)
    older, whole = [r for r in records if isinstance(r, Episode)]
    assert (older.agent, whole.agent) == ("ep-20250510145437-5sxhs", "doubao-seed-1-6-vision-250815")
    assert [s.action.tool_name for s in older.steps] == ["getCurrentLocation", "getWeather"]
    assert [s.action.tool_name for s in whole.steps] == ["getCurrentLocation", "getWeather", None]
    assert older.key == "1752414629292-cppocur loop-3" and whole.key == "1758276553547-5dnppkg"
    assert older.env["agent_tars"]["snapshots"] == ["loop-2/event-stream.jsonl", "loop-3/event-stream.jsonl"]
    apart = older.env["agent_tars"]["not_in_later_snapshot"]
    assert (apart["snapshot"], apart["differs_at_event"]) == ("event-stream.jsonl", 1)  # the run's start: its model
    assert whole.env["agent_tars"]["snapshots"] == ["loop-1/event-stream.jsonl", "event-stream.jsonl"]
    assert whole.env["agent_tars"]["earlier_snapshots_apart"] == ["loop-3/event-stream.jsonl"]
    # both loops' `tool-calls.jsonl` are the whole run's recording (its call ids), `loop-2`'s too: they go with the
    # episode whose stream holds them, not with the older recording's `loop-2` snapshot, and agree with its events
    assert [r.get("tool_calls") for r in older.env["agent_tars"]["requests"]] == [None, None]
    assert [(r["loop"], r.get("tool_calls")) for r in whole.env["agent_tars"]["requests"]] == [
        (1, [{"toolCallId": "call_1758276553551_5eixt", "name": "getCurrentLocation", "executionTime": 0}]),
        (2, [{"toolCallId": "call_1758276553555_sn87j", "name": "getWeather", "executionTime": 0}])]
    # the loops' requests and responses: the older recording's two named a Volcengine endpoint id, whose responses
    # name the model behind it (kept apart, no disagreement); `loop-1`'s request names doubao-seed-1-6-vision while
    # its saved response is the older recording's doubao-1-5-thinking-vision-pro stream (a real disagreement)
    older_requests = older.env["agent_tars"]["requests"]
    assert [(r["loop"], r["endpoint"], r["model"], r["response"]["model"]) for r in older_requests] == [
        (n, "ep-20250510145437-5sxhs", "doubao-1-5-thinking-vision-pro-250428",
         "doubao-1-5-thinking-vision-pro-250428") for n in (2, 3)]
    assert not any("differs" in r for r in older_requests)
    first = whole.env["agent_tars"]["requests"][0]
    assert "endpoint" not in first and first["model"] == "doubao-seed-1-6-vision-250815"
    assert first["differs"] == ["the response names model 'doubao-1-5-thinking-vision-pro-250428', "
                                "the request 'doubao-seed-1-6-vision-250815'"]
    check(records, GOLDEN / "agent-tars-snapshot-two-recordings.json", env_keys=("agent_tars",))
    golden.check_whole(records, GOLDEN / "agent-tars-snapshot-two-recordings-whole.json")


def _stream(events: list[dict]) -> str:
    return json.dumps(events, indent=2)


_RUN = [{"id": "1", "type": "user_message", "timestamp": 1757351879447, "content": "Open the page"},
        {"id": "2", "type": "assistant_message", "timestamp": 1757351879448, "content": "",
         "toolCalls": [{"id": "c1", "type": "function", "function": {"name": "browser_navigate", "arguments": "{}"}}]},
        {"id": "3", "type": "tool_result", "timestamp": 1757351879449, "toolCallId": "c1", "name": "browser_navigate",
         "content": "navigated", "elapsedMs": 30592}]


def _shot(url: str) -> dict:
    return {"id": "4", "type": "user_message", "timestamp": 1757351879450,
            "content": [{"type": "text", "text": "Current browser:"}, {"type": "image_url", "image_url": {"url": url}}]}


def test_a_run_without_its_whole_snapshot_is_read_from_its_last_loop(tmp_path):
    """An interrupted run saved only its loops: the last loop is the unit and holds the earlier ones; a loop's
    bad line is its own quarantine row naming that file."""
    run = tmp_path / "case"
    for n, events in ((1, _RUN[:1]), (2, _RUN[:3])):
        (run / f"loop-{n}").mkdir(parents=True)
        (run / f"loop-{n}" / "event-stream.jsonl").write_text(_stream(events) + ("\n]" if n == 1 else ""))
    files = sorted(str(p) for p in run.rglob("*.jsonl"))
    assert agent_tars.units(files, golden.head) == [str(run / "loop-2" / "event-stream.jsonl")]
    records = read_records(agent_tars, run / "loop-2" / "event-stream.jsonl", root=run)
    [bad] = [r for r in records if isinstance(r, Rejected)]
    assert bad.rule == "parse_error" and bad.location == "case/loop-1/event-stream.jsonl"
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [s.action.tool_name for s in ep.steps] == ["browser_navigate"]
    assert ep.env["agent_tars"]["snapshots"] == ["loop-2/event-stream.jsonl"]  # loop-1 could not be read


def test_a_loop_whose_screenshot_the_whole_run_cut_short_is_kept_beside_it(tmp_path):
    """The agent's snapshot test replaces images before comparing; here they are compared as written, so a loop
    holding the only whole screenshot (the whole run saved a data URL cut short) is not dropped for the run's
    last snapshot: both are episodes, the loop's screenshot a blob; ids and times alone differing do not count."""
    run = tmp_path / "case"
    (run / "loop-1").mkdir(parents=True)
    whole_png = "data:image/png;base64," + base64.b64encode(b"PNG whole").decode()
    (run / "loop-1" / "event-stream.jsonl").write_text(_stream(_RUN + [_shot(whole_png)]))
    again = [dict(e, id=e["id"] + "b", timestamp=e["timestamp"] + 9000) for e in _RUN]
    answer = {"id": "5", "type": "assistant_message", "timestamp": 1757351889451, "content": "It opened."}
    (run / "event-stream.jsonl").write_text(_stream(again + [_shot("data:image/png;base64,UE5")] + [answer]))
    blobs: dict = {}
    records = read_records(agent_tars, run / "event-stream.jsonl", blobs, root=run)
    loop, whole = records
    assert loop.env["agent_tars"]["not_in_later_snapshot"]["differs_at_event"] == 3
    assert [i["image"] for i in loop.env["agent_tars"]["images"]] == [next(iter(blobs))]
    assert blobs[next(iter(blobs))] == ("image/png", b"PNG whole")
    assert whole.env["agent_tars"]["earlier_snapshots_apart"] == ["loop-1/event-stream.jsonl"]
    assert [s.action.text for s in whole.steps] == [None, "It opened."]
    # the same screenshot in both: the loop is the whole run's opening, one episode
    (run / "event-stream.jsonl").write_text(_stream(again + [_shot(whole_png)] + [answer]))
    [ep] = read_records(agent_tars, run / "event-stream.jsonl", root=run)
    assert ep.env["agent_tars"]["snapshots"] == ["loop-1/event-stream.jsonl", "event-stream.jsonl"]


def test_a_loop_a_later_snapshot_changed_in_the_middle_is_kept(tmp_path):
    """A later snapshot that holds the loop's events with one changed (a tool's result) does not hold the loop:
    the loop is an episode of its own; a file named so that is no event stream is no snapshot of the run."""
    run = tmp_path / "case"
    for name in ("loop-1", "loop-2", "loop-3"):
        (run / name).mkdir(parents=True)
    (run / "loop-1" / "event-stream.jsonl").write_text(_stream(_RUN[:1]))
    (run / "loop-2" / "event-stream.jsonl").write_text(_stream(_RUN[:2] + [dict(_RUN[2], content="timed out")]))
    (run / "loop-3" / "event-stream.jsonl").write_text('{"note": "not an event"}\n')
    (run / "event-stream.jsonl").write_text(_stream(_RUN))
    files = sorted(str(p) for p in run.rglob("*.jsonl"))
    assert agent_tars.units(files, golden.head) == [str(run / "event-stream.jsonl")]
    records = read_records(agent_tars, run / "event-stream.jsonl", root=run)
    changed, whole = records
    assert changed.steps[0].observation.text == "Open the page" and changed.final_observation.text == "timed out"
    assert changed.env["agent_tars"]["not_in_later_snapshot"]["differs_at_event"] == 2
    # the prompt alone (loop-1) both open with: the first episode that holds it names it
    assert changed.env["agent_tars"]["snapshots"] == ["loop-1/event-stream.jsonl", "loop-2/event-stream.jsonl"]
    assert whole.env["agent_tars"]["snapshots"] == ["event-stream.jsonl"]
    assert whole.final_observation.text == "navigated" and len({changed.key, whole.key}) == 2


def test_planning_claims_a_runs_loops_with_its_last_snapshot(tmp_path):
    """Every reader in `ingest-all`'s order over the run: one unit, the whole run's file, its loops its members
    (claimed with it: neither units of their own nor left to the shape reader)."""
    from pipelines.infra import definition, plan

    run = tmp_path / "in" / "basic"
    shutil.copytree(SAMPLES / "snapshot-tool-calls-basic", run)
    units, ignored = plan.find_units([str(tmp_path / "in")], definition.load("ingest-all").formats)
    [unit] = units
    assert (unit.format, unit.path) == ("agent_tars", str(run / "event-stream.jsonl")) and ignored == []
    assert sorted(unit.members) == sorted([str(run / f"loop-{n}" / name) for n in (1, 2, 3)
                                           for name in ("event-stream.jsonl", "llm-request.jsonl", "llm-response.jsonl")
                                           ] + [str(run / f"loop-{n}" / "tool-calls.jsonl") for n in (1, 2)])


def _request(model: str, messages: list[dict], tools: tuple[str, ...] = ()) -> str:
    declared = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in tools]
    return json.dumps({"provider": "openai", "request": {"model": model, "messages": messages, "tools": declared,
                                                         "temperature": 0}, "baseURL": "http://127.0.0.1:9"}, indent=2)


def test_model_requests_that_disagree_with_the_stream_keep_their_messages_and_say_so(tmp_path):
    """Loop 1's request agrees with the stream (its system prompt and a declared tool no event defines are read);
    loop 2's names another model and an assistant reply the stream does not hold: its messages are kept with why;
    a loop folder with a request but no snapshot goes with the run's last episode; a broken request and a
    response's bad line are rows naming their file; a request file that is no JSON object is not the run's."""
    run = tmp_path / "case"
    for n in (1, 2, 3, 4):
        (run / f"loop-{n}").mkdir(parents=True)
    (run / "loop-1" / "event-stream.jsonl").write_text(_stream(_RUN[:1]))
    (run / "loop-2" / "event-stream.jsonl").write_text(_stream(_RUN[:3]))
    (run / "event-stream.jsonl").write_text(_stream(_RUN))
    system = {"role": "system", "content": "You browse."}
    prompt = {"role": "user", "content": "Open the page"}
    (run / "loop-1" / "llm-request.jsonl").write_text(_request("m1", [system, prompt], ("browser_navigate", "find")))
    (run / "loop-1" / "llm-response.jsonl").write_text(
        '{"id": "r1", "model": "m1", "choices": [{"delta": {"content": ""}, "finish_reason": "tool_calls"}]}\n'
        '{"id": "r1", "choices": [\n')
    replied = {"role": "assistant", "content": "I will search first."}
    (run / "loop-2" / "llm-request.jsonl").write_text(_request("m2", [system, prompt, replied]))
    (run / "loop-3" / "llm-request.jsonl").write_text(_request("m1", [prompt]))
    (run / "loop-4" / "llm-request.jsonl").write_text('{"provider": "openai", "request": ')
    (run / "loop-4" / "llm-response.jsonl").write_text('["not", "a", "chunk"]\n')
    files = sorted(str(p) for p in run.rglob("*.jsonl"))
    [unit] = agent_tars.units(files, golden.head)
    members = agent_tars.members([unit], files, golden.head)[unit]
    assert str(run / "loop-4" / "llm-response.jsonl") not in members
    assert str(run / "loop-4" / "llm-request.jsonl") in members and len(members) == 7
    records = read_records(agent_tars, run / "event-stream.jsonl", root=run)
    rows = sorted((r.rule, r.location) for r in records if isinstance(r, Rejected))
    assert rows == [("parse_error", "case/loop-1/llm-response.jsonl"), ("parse_error", "case/loop-4/llm-request.jsonl")]
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [s.action.tool_name for s in ep.steps] == ["browser_navigate"]  # the requests' messages are no steps
    first, second, third = ep.env["agent_tars"]["requests"]
    assert (first["system"], first["tools"], first["options"]) == (["You browse."], ["browser_navigate", "find"],
                                                                  {"temperature": 0})
    assert "differs" not in first and first["response"] == {"chunks": 1, "id": "r1", "model": "m1",
                                                            "finish_reason": "tool_calls"}
    assert list(ep.env["agent_tars"]["declared_tools"]) == ["browser_navigate", "find"]  # no call event defines one
    assert second["differs"] == ["assistant message 0 is not the stream's"]
    golden.check_whole(records, GOLDEN / "agent-tars-requests-disagree-whole.json")
    assert second["messages"] == [system, prompt, replied]
    assert (third["loop"], third["file"]) == (3, "loop-3/llm-request.jsonl") and "differs" not in third
    started = {"id": "0", "type": "agent_run_start", "timestamp": 1757351879446, "model": "m1"}
    for path, events in ((run / "loop-1", _RUN[:1]), (run / "loop-2", _RUN[:3]), (run, _RUN)):
        (path / "event-stream.jsonl").write_text(_stream([started] + events))
    [ep] = [r for r in read_records(agent_tars, run / "event-stream.jsonl", root=run) if isinstance(r, Episode)]
    assert ep.env["agent_tars"]["requests"][1]["differs"] == [
        "model 'm2', the stream's 'm1'", "assistant message 0 is not the stream's"]


def test_saved_tool_calls_keep_their_time_and_say_where_they_disagree_with_the_stream(tmp_path):
    """Loop 1's `tool-calls.jsonl` agrees with the stream (the call named by the assistant message): only its id,
    name and execution time are kept; loop 2's ran with other args, got another result and failed, and a call the
    stream does not hold: those keep what they hold with why; loop 3's is broken: a row naming it, the episode
    still read; a response naming another model than its request says so."""
    run = tmp_path / "case"
    for n in (1, 2, 3):
        (run / f"loop-{n}").mkdir(parents=True)
    (run / "loop-1" / "event-stream.jsonl").write_text(_stream(_RUN[:1]))
    (run / "event-stream.jsonl").write_text(_stream(_RUN))
    (run / "loop-1" / "tool-calls.jsonl").write_text(json.dumps(
        [{"toolCallId": "c1", "name": "browser_navigate", "args": {}, "result": "navigated", "executionTime": 30590}],
        indent=2))
    (run / "loop-2" / "tool-calls.jsonl").write_text(json.dumps(
        [{"toolCallId": "c1", "name": "browser_navigate", "args": {"url": "x"}, "result": None,
          "error": "timeout", "executionTime": 5},
         {"toolCallId": "c9", "name": "find", "args": {}, "result": "?", "executionTime": 1}], indent=2))
    (run / "loop-3" / "tool-calls.jsonl").write_text('[\n  {"toolCallId": "c1", ')
    (run / "loop-1" / "llm-request.jsonl").write_text(_request("m1", [{"role": "user", "content": "Open the page"}]))
    (run / "loop-1" / "llm-response.jsonl").write_text('{"id": "r1", "model": "m9", "choices": []}\n')
    files = sorted(str(p) for p in run.rglob("*.jsonl"))
    [unit] = agent_tars.units(files, golden.head)
    assert {str(run / f"loop-{n}" / "tool-calls.jsonl") for n in (1, 2, 3)} <= set(
        agent_tars.members([unit], files, golden.head)[unit])
    records = read_records(agent_tars, run / "event-stream.jsonl", root=run)
    assert [(r.rule, r.location) for r in records if isinstance(r, Rejected)] == [
        ("parse_error", "case/loop-3/tool-calls.jsonl")]
    golden.check_whole(records, GOLDEN / "agent-tars-tool-calls-disagree-whole.json")
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [s.action.tool_name for s in ep.steps] == ["browser_navigate"]  # the saved calls make no steps
    first, second = ep.env["agent_tars"]["requests"]
    assert first["tool_calls"] == [{"toolCallId": "c1", "name": "browser_navigate", "executionTime": 30590}]
    assert first["differs"] == ["the response names model 'm9', the request 'm1'"] and "messages" not in first
    assert second["tool_calls"] == [
        {"toolCallId": "c1", "name": "browser_navigate", "executionTime": 5, "args": {"url": "x"}, "result": None,
         "error": "timeout", "differs": ["args are not the stream's tool_call arguments",
                                         "result is not the stream's tool_result content",
                                         "error is not the stream's tool_result error"]},
        {"toolCallId": "c9", "name": "find", "executionTime": 1, "args": {}, "result": "?",
         "differs": ["the stream holds no tool_call of this id and name"]}]


# The loop files' readers and the comparisons with the stream, called directly on hand-made loop files


def test_a_loop_request_or_tool_call_file_of_another_shape_is_a_row_naming_it():
    from ingest.chat import tarko_requests
    from ingest.source import Budgets

    budgets = Budgets()
    for data in (b"[1]", b'{"request": "x"}', b'{"request": {"messages": "x"}}'):
        row = tarko_requests.request(data, "case/loop-1/llm-request.jsonl", budgets)
        assert (row.rule, row.reason, row.location) == (
            "bad_record", "case/loop-1/llm-request.jsonl: no `request` object with a `messages` list",
            "case/loop-1/llm-request.jsonl")
    for data in (b'{"id": 1}', b'[{"toolCallId": "c1"}, 2]'):
        row = tarko_requests.tool_calls(data, "case/loop-1/tool-calls.jsonl", budgets)
        assert (row.rule, row.reason, row.location) == (
            "bad_record", "case/loop-1/tool-calls.jsonl: not a list of tool call objects",
            "case/loop-1/tool-calls.jsonl")
    small = Budgets(record_bytes=10)  # a loop file is one record: over the budget it is not parsed
    assert tarko_requests.request(b'{"request": {"messages": []}}', "r", small).rule == "budget_exceeded"
    assert tarko_requests.tool_calls(b'[{"toolCallId": "c1"}]', "t", small).rule == "budget_exceeded"


def test_a_loop_request_reads_its_provider_system_parts_and_other_fields():
    from ingest.chat import tarko_requests
    from ingest.source import Budgets

    sent = {"provider": "volcengine", "model": "m", "max_tokens": 9,
            "messages": [{"role": "system", "content": [{"type": "text", "text": "You browse."},
                                                        {"type": "cache", "ttl": 5}]},
                         {"role": "system", "content": {"note": "kept as JSON"}}, "not a message"]}
    got = tarko_requests.request(json.dumps({"request": sent, "savedAt": "t"}).encode(), "r", Budgets())
    assert got["provider"] == "volcengine" and got["options"] == {"max_tokens": 9} and got["other"] == {
        "savedAt": "t"}
    assert got["system"] == ['You browse.\n{"type":"cache","ttl":5}', '{"note":"kept as JSON"}']
    assert len(got["messages"]) == 2
    assert tarko_requests.request(b'{"request": {"model": "m"}}', "r", Budgets())["messages"] == []


def test_a_loop_response_reads_past_bad_lines_and_lines_of_no_object():
    from ingest.chat import tarko_requests
    from ingest.source import Budgets

    data = b'{"id": \n[1]\n{"id": "r1", "model": "m", "usage": {"total_tokens": 7}}\n{"id": "r2", "usage": null}\n'
    got, bad = tarko_requests.response(data, "case/loop-1/llm-response.jsonl", Budgets())
    assert got == {"chunks": 2, "id": "r1", "model": "m", "usage": {"total_tokens": 7}}
    assert [(r.rule, r.location) for r in bad] == [("parse_error", "case/loop-1/llm-response.jsonl")]


def test_loop_files_are_told_by_their_first_byte_after_blanks():
    from ingest.chat import tarko_requests

    assert tarko_requests.looks(b'\n  {"provider": "x"}', "run/loop-1/llm-request.jsonl")
    assert tarko_requests.looks(b'\n  [{"toolCallId": "c"}]', "run/loop-1/tool-calls.jsonl")
    assert not tarko_requests.looks(b'{"toolCallId": "c"}', "run/loop-1/tool-calls.jsonl")


def _assistant(content, calls=(), raw=None, kind="assistant_message"):
    event = {"type": kind, "content": content, "toolCalls": list(calls)}
    return event | ({"rawContent": raw} if raw is not None else {})


def _call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_a_requests_prompt_and_replies_are_compared_with_the_stream_as_text():
    from ingest.chat import tarko_requests

    parts = [{"type": "text", "text": "Open the page"}, {"type": "image_url", "image_url": {"url": "u"}}]
    events = [{"type": "user_message", "content": parts},
              _assistant("I will look.", raw="<think>x</think>I will look."), _assistant(None)]
    # the request sends the raw reply back, or no text where the turn held calls alone
    agree = {"messages": [{"role": "user", "content": parts},
                          {"role": "assistant", "content": "<think>x</think>I will look."},
                          {"role": "assistant", "content": None}]}
    assert tarko_requests.compare(agree, events) == []
    other = {"messages": [{"role": "user", "content": "Open another page"}]}
    assert tarko_requests.compare(other, events) == ["the first user message is not the stream's prompt"]
    longer = {"messages": [{"role": "assistant", "content": "I will look."}, {"role": "assistant", "content": ""},
                           {"role": "assistant", "content": "And more."}]}
    assert tarko_requests.compare(longer, events) == ["assistant message 2 is not the stream's"]


def test_saved_calls_are_compared_with_the_streams_calls_by_id_and_name():
    from ingest.chat import tarko_requests

    events = [
        _assistant("", [_call("c0", "open", '{"ur')], kind="assistant_streaming_message"),  # a streamed piece
        _assistant("", ["not a call", _call("c0", "open", '{"url": "a"}'), _call("c1", "run", "not JSON"),
                        _call("c2", "find", '{"q": "x"}'), _call("c3", "list", "")]),  # no arguments: {}
        {"type": "tool_call", "toolCallId": "c2", "name": "find", "arguments": {"q": "y"}},  # the event's own wins
        {"type": "tool_call", "toolCallId": "c2", "name": "find", "arguments": {"q": "z"}},  # the first of the pair
        {"type": "tool_result", "toolCallId": "c0", "name": "open", "content": "opened", "error": "slow"},
        {"type": "tool_result", "toolCallId": "c2", "name": "find", "content": "found"},
        {"type": "tool_result", "toolCallId": "c3", "name": "list", "content": "a b"}]
    calls = [{"toolCallId": "c0", "name": "open", "args": {"url": "a"}, "result": "opened", "error": "slow"},
             {"toolCallId": "c1", "name": "run", "args": "not JSON", "result": None},
             {"toolCallId": "c2", "name": "find", "args": {"q": "y"}, "result": "found"},
             {"toolCallId": "c3", "name": "list", "args": {}, "result": "a b"}]
    assert tarko_requests.compare_calls(calls, events) == [
        {"toolCallId": "c0", "name": "open"},
        {"toolCallId": "c1", "name": "run", "args": "not JSON", "result": None,
         "differs": ["the stream holds no tool_result of this id and name"]},
        {"toolCallId": "c2", "name": "find"}, {"toolCallId": "c3", "name": "list"}]


def test_snapshots_compare_events_without_their_times_ids_or_key_order():
    from ingest.chat import tarko_snapshots

    event = {"type": "tool_result", "content": "ok", "endTime": 1, "callid": "a"}
    again = {"callid": "b", "endTime": 2, "content": "ok", "type": "tool_result"}
    assert tarko_snapshots.digests([event]) == tarko_snapshots.digests([again])
    assert tarko_snapshots.digests([event]) != tarko_snapshots.digests([event | {"content": "no"}])
    one, two = tarko_snapshots.digests([event, event | {"content": "no"}])
    assert tarko_snapshots.first_difference([one, two], [one]) == 1
    assert tarko_snapshots.first_difference([one], [two, one]) == 0
    assert tarko_snapshots.run_of("case/trace.jsonl") is None and tarko_snapshots.run_of("event-stream.jsonl") is None
    assert tarko_snapshots.run_of("case/event-stream.jsonl") == ("case", None)


# Volcengine Ark's endpoint ids as its docs give them (BytePlus ModelArk, "Inference endpoints"): a custom endpoint
# `ep-<created yyyymmddhhmmss>-<suffix>`, a preconfigured one (the endpoint a model id is served by) `ep-m-...`.
# A batch endpoint (`ep-bi-...`) answers the batch API alone, never a chat request.
@pytest.mark.parametrize("endpoint", ["ep-20250510145437-5sxhs", "ep-m-20250411184749-5qknb"])
def test_a_request_naming_a_documented_endpoint_id_keeps_it_beside_the_model_its_response_names(endpoint):
    calls = {0: {"request": {"model": endpoint, "messages": [], "declared": []},
                 "response": {"model": "doubao-seed-1-6-250615"}}}
    [item] = agent_tars._model_note(calls, [0], [])["requests"]
    assert (item["endpoint"], item["model"]) == (endpoint, "doubao-seed-1-6-250615") and "differs" not in item


@pytest.mark.parametrize("asked", ["ep-bi-20250401151011-nzp5d", "ep-2025051014543-5sxhs", "doubao-pro-32k"])
def test_a_request_naming_no_documented_endpoint_id_differs_from_its_response(asked):
    calls = {0: {"request": {"model": asked, "messages": [], "declared": []},
                 "response": {"model": "doubao-seed-1-6-250615"}}}
    [item] = agent_tars._model_note(calls, [0], [])["requests"]
    assert "endpoint" not in item and item["model"] == asked
    assert item["differs"] == [f"the response names model 'doubao-seed-1-6-250615', the request {asked!r}"]
