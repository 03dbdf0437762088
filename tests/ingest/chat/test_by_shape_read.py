"""The shape reader on hand-made lists of every shape (edge cases of each API's documented forms) and on a real
tau-bench results file (golden)."""

import base64
import json
import struct
import zlib

from ingest.chat import by_shape
from ingest.chat.shapes import list_shape
from ingest.record import Episode, Rejected
from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.ingest.golden import read_records

GOLDEN = golden.Path(__file__).parent / "golden"


def _read(tmp_path, name: str, doc, blobs=None) -> list:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(line) + "\n" for line in doc))
    else:
        path.write_text(json.dumps(doc))
    return read_records(by_shape, path, blobs)


def _episodes(records) -> list[Episode]:
    return [r for r in records if isinstance(r, Episode)]


def _png(width: int, height: int) -> str:
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"\x00" * width * 3 for _ in range(height))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return base64.b64encode(data).decode()


OPENAI = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"},
          {"role": "assistant", "content": None, "reasoning_content": "I should look it up.",
           "tool_calls": [{"id": "c1", "type": "function",
                           "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
          {"role": "tool", "tool_call_id": "c1", "content": "18C"},
          {"role": "assistant", "content": "18C in Paris."}]


def test_tau_bench_results_file_golden():
    """Three real trials (two rewarded 1.0, one 0.0): each `traj` is an episode, its reward and outcome from
    the record's `reward`, the record's other fields in env."""
    records = read_records(by_shape, SAMPLES / "chat" / "tau-bench" / "gpt-4o-airline.json")
    episodes = _episodes(records)
    assert [(e.key, e.outcome, e.reward) for e in episodes] == [
        ("[0].traj", "success", 1.0), ("[1].traj", "success", 1.0), ("[2].traj", "failure", 0.0)]
    assert all(e.env["record"]["task_id"] in (48, 39) and "traj" not in e.env["record"] for e in episodes)
    # the two rewarded trials end on `transfer_to_human_agents`' result ("Transfer successful"): tau-bench's
    # environment ends a trial there (its `terminate_tools`), so they ended, and say so; the third ends on an answer
    assert [(e.terminated, e.steps[-1].action.tool_name) for e in episodes] == [
        (True, "transfer_to_human_agents"), (True, "transfer_to_human_agents"), (True, None)]
    assert [e.env["chat_shape"].get("ended_by") for e in episodes] == ["transfer_to_human_agents"] * 2 + [None]
    assert episodes[0].env["chat_shape"] == {"shape": "openai_chat", "path": "[0].traj", "reward_from": "reward",
                                             "outcome_from": "reward", "ended_by": "transfer_to_human_agents"}
    # every tool call of the file is a step with its result as the next observation
    calls = [m for r in json.loads((SAMPLES / "chat/tau-bench/gpt-4o-airline.json").read_text()) for m in r["traj"]
             for _ in m.get("tool_calls") or []]
    assert sum(s.action.kind == "tool_call" for e in episodes for s in e.steps) == len(calls) == 6
    golden.check(records, GOLDEN / "tau-bench-gpt-4o-airline.json", env_keys=("chat_shape",))


def test_only_a_handover_result_ends_a_log_that_stops_on_a_tool_result(tmp_path):
    call = lambda name: {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c9", "type": "function", "function": {"name": name, "arguments": "{}"}}]}
    for name, ended in (("transfer_to_human_agents", True), ("get_weather", None)):
        doc = {"messages": [*OPENAI, call(name), {"role": "tool", "tool_call_id": "c9", "content": "done"}]}
        [ep] = _episodes(_read(tmp_path, f"{name}.json", doc))
        assert (ep.terminated or None, ep.env["chat_shape"].get("ended_by")) == (ended, ended and name)


def test_openai_chat_under_a_wrapper_key_with_an_outcome_from_a_nested_field(tmp_path):
    doc = {"run": {"id": "r1", "messages": OPENAI, "evaluation": {"resolved": True, "score": 0.5}}}
    [ep] = _episodes(_read(tmp_path, "run.json", doc))
    assert (ep.key, ep.outcome, ep.reward, ep.domain) == ("run.messages", "success", 0.5, "mcp")
    assert ep.env["chat_shape"] == {"shape": "openai_chat", "path": "run.messages",
                                    "reward_from": "evaluation.score", "outcome_from": "evaluation.resolved"}
    assert ep.env["record"] == {"id": "r1", "evaluation": {"resolved": True, "score": 0.5}}
    first, last = ep.steps
    assert (first.action.kind, first.action.tool_name, first.reasoning) == ("tool_call", "get_weather",
                                                                             "I should look it up.")
    assert (last.observation.kind, last.observation.text) == ("tool_result", "18C")
    assert (last.action.kind, last.action.text, ep.task) == ("message", "18C in Paris.", "Weather in Paris?")


def test_jsonl_of_messages_is_one_list_and_jsonl_of_records_one_episode_a_line(tmp_path):
    [one] = _episodes(_read(tmp_path, "chat.jsonl", OPENAI))
    assert one.key == "" and len(one.steps) == 2
    lines = [{"id": i, "conversation": OPENAI, "success": i == 0} for i in range(2)]
    eps = _episodes(_read(tmp_path, "runs.jsonl", lines))
    assert [(e.key, e.outcome) for e in eps] == [("line 1: conversation", "success"),
                                                 ("line 2: conversation", "failure")]


def test_anthropic_blocks_tool_use_result_and_thinking(tmp_path):
    msgs = [{"role": "user", "content": "List files"},
            {"role": "assistant", "model": "claude-x", "content": [
                {"type": "thinking", "thinking": "Use bash.", "signature": "s"},
                {"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt",
                                          "is_error": False}]},
            {"role": "assistant", "content": [{"type": "text", "text": "One file."}]}]
    [ep] = _episodes(_read(tmp_path, "a.json", {"messages": msgs}))
    assert ep.env["chat_shape"]["shape"] == "anthropic" and ep.domain == "terminal" and ep.agent == "claude-x"
    assert (ep.steps[0].action.kind, ep.steps[0].action.code) == ("command", "ls")
    assert ep.steps[0].reasoning == "Use bash.\n\nListing."
    assert (ep.steps[1].observation.kind, ep.steps[1].observation.text) == ("terminal", "a.txt")


def test_responses_items_join_a_turn_and_pair_outputs_by_call_id(tmp_path):
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Sum 2 and 3"}]},
             {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Use add."}]},
             {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{\"a\": 2, \"b\": 3}"},
             {"type": "function_call_output", "call_id": "call_1", "output": "5"},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "5"}]}]
    [ep] = _episodes(_read(tmp_path, "r.json", {"input": items}))
    assert ep.env["chat_shape"]["shape"] == "openai_responses"
    assert [(s.action.kind, s.action.tool_name, s.reasoning) for s in ep.steps] == [
        ("tool_call", "add", "Use add."), ("message", None, None)]
    assert ep.steps[1].observation.text == "5" and ep.task == "Sum 2 and 3"


def test_gemini_parts_function_call_and_response(tmp_path):
    contents = [{"role": "user", "parts": [{"text": "Time in Tokyo?"}]},
                {"role": "model", "parts": [{"text": "Checking.", "thought": True},
                                            {"functionCall": {"name": "get_time", "args": {"tz": "Asia/Tokyo"}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "get_time", "response": {"t": "09:00"}}}]},
                {"role": "model", "parts": [{"text": "09:00."}]}]
    [ep] = _episodes(_read(tmp_path, "g.json", {"contents": contents}))
    assert ep.env["chat_shape"]["shape"] == "gemini"
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [("tool_call", "get_time"), ("message", None)]
    assert ep.steps[0].reasoning == "Checking." and ep.steps[1].observation.text == '{"t":"09:00"}'


def test_langchain_message_dicts_in_both_serialized_forms(tmp_path):
    msgs = [{"type": "human", "data": {"content": "2+2?", "type": "human"}},
            {"type": "ai", "data": {"content": "", "type": "ai", "response_metadata": {"model_name": "m-1"},
                                    "tool_calls": [{"name": "calc", "args": {"x": "2+2"}, "id": "k1"}]}},
            {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
             "kwargs": {"content": "4", "tool_call_id": "k1", "status": "success"}},
            {"type": "ai", "data": {"content": "4", "type": "ai"}}]
    [ep] = _episodes(_read(tmp_path, "lc.json", msgs))
    assert ep.env["chat_shape"]["shape"] == "langchain" and ep.agent == "m-1"
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [("tool_call", "calc"), ("message", None)]
    assert ep.steps[1].observation.text == "4"


def test_autogen_agentchat_messages(tmp_path):
    msgs = [{"source": "user", "type": "TextMessage", "content": "Weather in NYC?", "models_usage": None},
            {"source": "assistant", "type": "ThoughtEvent", "content": "Call the tool."},
            {"source": "assistant", "type": "ToolCallRequestEvent", "models_usage": {"prompt_tokens": 5},
             "content": [{"id": "f1", "name": "get_weather", "arguments": "{\"city\": \"NYC\"}"}]},
            {"source": "assistant", "type": "ToolCallExecutionEvent",
             "content": [{"call_id": "f1", "name": "get_weather", "content": "Sunny", "is_error": False}]},
            {"source": "assistant", "type": "TextMessage", "content": "Sunny in NYC. TERMINATE"}]
    [ep] = _episodes(_read(tmp_path, "ag.json", {"messages": msgs}))
    assert ep.env["chat_shape"]["shape"] == "autogen" and ep.task == "Weather in NYC?"
    assert [(s.action.kind, s.reasoning) for s in ep.steps] == [("tool_call", "Call the tool."), ("message", None)]
    assert ep.steps[1].observation.text == "Sunny"


def test_anthropic_computer_use_calls_are_gui_actions_with_screenshots(tmp_path):
    shot = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png(4, 2)}}
    msgs = [{"role": "user", "content": "Open the menu"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "computer",
                                               "input": {"action": "screenshot"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u1", "content": [shot]}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "u2", "name": "computer",
                                               "input": {"action": "left_click", "coordinate": [640, 200]}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u2", "content": [shot]}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "u3", "name": "computer",
                                               "input": {"action": "key", "text": "ctrl+s"}}]}]
    doc = {"tools": [{"type": "computer_20250124", "name": "computer", "display_width_px": 1280,
                      "display_height_px": 800}], "messages": msgs}
    blobs = {}
    [ep] = _episodes(_read(tmp_path, "cu.json", doc, blobs))
    assert (ep.domain, ep.platform) == ("os", "linux")
    assert [s.action.kind for s in ep.steps] == ["wait", "click", "hotkey"]
    click = ep.steps[1]
    assert (click.action.x, click.action.y) == (0.5, 0.25)
    assert click.observation.kind == "screen" and click.observation.screenshot in blobs
    assert (click.observation.width, click.observation.height) == (4, 2)
    assert ep.steps[2].action.keys == ["ctrl", "s"]


def test_openai_computer_call_without_a_declared_display_takes_the_screenshot_size(tmp_path):
    url = "data:image/png;base64," + _png(100, 50)
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Scroll down"}]},
             {"type": "computer_call", "call_id": "cc1", "action": {"type": "screenshot"}},
             {"type": "computer_call_output", "call_id": "cc1", "output": {"type": "computer_screenshot",
                                                                        "image_url": url}},
             {"type": "computer_call", "call_id": "cc2", "action": {"type": "scroll", "x": 50, "y": 25,
                                                                    "scroll_x": 0, "scroll_y": 300}},
             {"type": "computer_call_output", "call_id": "cc2", "output": {"type": "computer_screenshot",
                                                                        "image_url": url}}]
    [ep] = _episodes(_read(tmp_path, "oc.json", items))
    scroll = ep.steps[1].action
    assert (scroll.kind, scroll.x, scroll.y, scroll.direction) == ("scroll", 0.5, 0.5, "down")
    assert ep.final_observation.kind == "screen"


def test_lists_that_only_look_like_chats_are_not_episodes(tmp_path):
    assert list_shape([{"role": "user", "content": "q1"}, {"role": "user", "content": "q2"}]) is None
    assert list_shape([{"role": "assistant", "content": "only one"}]) is None
    assert list_shape([{"name": "a"}, {"name": "b"}]) is None
    records = _read(tmp_path, "prompts.json", [{"role": "user", "content": "q1"}, {"role": "user", "content": "q2"}])
    assert records == []


def test_a_broken_document_is_one_row_naming_the_file(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text('{"messages": [{"role": "user", "content": "hi"}')
    [row] = read_records(by_shape, path)
    assert isinstance(row, Rejected) and row.rule == "parse_error" and "cut.json" in row.reason


# Real AutoGen AgentChat files without a license: read where they lie in ../shared/samples, never copied here.
# - iteam1/agentchat_fastapi @ 51bc90084f4194adc503556dfdb42879133feda8: `agent_history.json` (the message list
#   AutoGen's FastAPI sample saves: TextMessages with ids and times) and `agent_state.json` (the
#   AssistantAgentState it saves: the model context's UserMessage / AssistantMessage list)
#   -> ../shared/samples/chat/autogen/iteam1-agentchat_fastapi/
# - Arturo-Quiroga-MSFT/3CLOUD-AUTOGEN @ 4cb6b1feedafe7d6b887e0312ae11d06ccd5b018: `agent_history.json`
#   -> ../shared/samples/chat/autogen/3cloud-autogen/
# - AliciaSJF/autogen @ 36013821bce25d6d3cf05260dd890ba0c973d0d1 and alextanhongpin/python-autogen2 @
#   83e90b7bf71f4feb393849be3fae53d6e754425b: `team_state.json` (a RoundRobinGroupChat's saved TeamState: the
#   manager's message thread and each agent's model context) -> ../shared/samples/chat/autogen/<repo name>/
AUTOGEN = SAMPLES.parent.parent / "shared" / "samples" / "chat" / "autogen"


def test_real_autogen_agentchat_histories_and_saved_state():
    from tests.parts import require_shared_sample

    for folder, name, steps in [("iteam1-agentchat_fastapi", "agent_history.json", 3),
                                ("iteam1-agentchat_fastapi", "agent_state.json", 5),
                                ("3cloud-autogen", "agent_history.json", 3)]:
        records = read_records(by_shape, require_shared_sample(AUTOGEN / folder / name))
        [ep] = _episodes(records)
        assert ep.env["chat_shape"]["shape"] == "autogen" and len(ep.steps) == steps
        assert all(s.action.kind == "message" for s in ep.steps)
        if name == "agent_state.json":  # the saved state's own type, around the list's holder
            assert ep.env["around"] == {"(the document)": {"type": "AssistantAgentState", "version": "1.0.0"}}
        golden.check(records, GOLDEN / f"autogen-{folder}-{name}", texts="hash", env_keys=("chat_shape",))


def test_tau2_results_file_golden():
    """tau2's results open with the run's info and tasks: its own reader claims them by that opening and reads
    each simulation's messages by their shape; reward from `reward_info.reward`, tool results paired by `id`."""
    from ingest.chat import tau2

    path = SAMPLES / "chat" / "tau2-bench" / "claude-sonnet-4-5_airline.json"
    head = path.read_bytes()[:4096]
    assert tau2.units([str(path)], lambda p: head) == [str(path)] and by_shape.units([str(path)], lambda p: head) == []
    records = read_records(tau2, path)
    episodes = _episodes(records)
    assert [(e.key, e.outcome, e.reward, e.agent) for e in episodes] == [
        ("simulations[0]", "success", 1.0, "claude-sonnet-4-5"), ("simulations[1]", "success", 1.0, "claude-sonnet-4-5"),
        ("simulations[2]", "failure", 0.0, "claude-sonnet-4-5")]
    assert [e.env["tau2_task"]["id"] for e in episodes] == ["46", "40", "9"]
    doc = json.loads(path.read_text())
    calls = [c for s in doc["simulations"] for m in s["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    steps = [s for e in episodes for s in e.steps if s.action.kind == "tool_call"]
    assert [s.action.tool_name for s in steps] == [c["name"] for c in calls] and len(calls) == 13
    golden.check(records, GOLDEN / "tau2-claude-sonnet-4-5-airline.json", env_keys=("chat_shape",))


def test_real_autogen_team_states_give_the_thread_and_each_agents_context():
    from tests.parts import require_shared_sample

    for folder, thread_steps, context_steps in [("AliciaSJF-autogen", 1, 2), ("python-autogen2", 1, 1)]:
        records = read_records(by_shape, require_shared_sample(AUTOGEN / folder / "team_state.json"))
        episodes = {e.key.rsplit(".", 1)[-1]: e for e in _episodes(records)}
        assert {k: len(e.steps) for k, e in episodes.items()} == {"message_thread": thread_steps,
                                                                   "messages": context_steps}
        assert episodes["message_thread"].env["record"]["type"] == "RoundRobinManagerState"
        golden.check(records, GOLDEN / f"autogen-{folder}-team_state.json", texts="hash", env_keys=("chat_shape",))


def test_gemini_contents_in_both_casings_pair_results_by_id_and_keep_what_they_do_not_map(tmp_path):
    contents = [
        {"role": "system", "parts": [{"text": "Be brief."}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "boot", "response": {"ok": True}}}]},
        {"role": "user", "parts": [{"text": "Time in Tokyo"}, {"text": "and Paris?"}]},
        {"role": "model", "parts": [
            {"text": "Two zones.", "thought": True}, {"text": "Both.", "thought": True},
            {"function_call": {"id": "a", "name": "get_time", "args": {"tz": "Asia/Tokyo"}}},
            {"functionCall": {"id": "b", "name": "get_time", "args": {"tz": "Europe/Paris"}}}]},
        # the results come back in the other order: each goes to its call by id
        {"role": "user", "parts": [{"functionResponse": {"id": "b", "name": "get_time", "response": "02:00"}},
                                   {"function_response": {"id": "a", "name": "get_time", "response": {"t": "09:00"}}}]},
        {"role": "model", "parts": [{"executableCode": {"code": "1"}}, {"codeExecutionResult": {"outcome": "OK"}}]},
        {"role": "model", "finishReason": "STOP", "parts": [
            {"text": "Tokyo first.", "thought": True}, {"text": "09:00"}, {"text": "and 02:00."}]}]
    records = _read(tmp_path, "g.json", {"contents": contents})
    [ep] = _episodes(records)
    assert ep.task == "Time in Tokyo\nand Paris?" and ep.env["system_prompt"] == "Be brief."
    tokyo, paris, answer = ep.steps
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in (tokyo, paris)] == [
        ("get_time", {"tz": "Asia/Tokyo"}), ("get_time", {"tz": "Europe/Paris"})]
    assert json.loads(tokyo.action.raw) == contents[3]["parts"][2]  # the part as written, snake_case kept
    assert tokyo.reasoning == "Two zones.\n\nBoth." and paris.reasoning is None
    assert (paris.observation.kind, paris.observation.text) == ("tool_result", '{"t":"09:00"}')
    assert answer.observation.text == "02:00"  # a text response is the result as written
    assert (answer.action.kind, answer.action.text, answer.reasoning) == ("message", "09:00\n\nand 02:00.",
                                                                          "Tokyo first.")
    assert json.loads(answer.action.raw) == {"finishReason": "STOP"}
    # a response before any call and a turn of parts the mapping does not know: kept raw, each named
    assert ep.env["unmapped"] == [
        {"where": "g.json: contents[1]", "role": "tool", "text": '{"ok":true}', "raw": None},
        {"where": "g.json: contents[5]", "role": "assistant", "text": None, "raw": {"parts": contents[5]["parts"]}}]
    assert [r.location for r in records if isinstance(r, Rejected)] == ["g.json: contents[1]", "g.json: contents[5]"]
    assert tokyo.observation.text == '{"ok":true}\n\nTime in Tokyo\nand Paris?'


def test_openai_chat_roles_results_by_id_legacy_functions_user_calls_and_bad_items(tmp_path):
    msgs = [{"role": "system", "content": "Be brief."},
            {"role": "developer", "content": [{"type": "text", "text": "Use tools."}]},
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {"role": "assistant", "content": "Looking.", "reasoning": "Two calls.", "model": "m-1",
             "created_at": 1767261605, "tool_calls": [
                 {"id": "p", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
                 {"id": "r", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]},
            # out of order: Rome's result first; tau2's tool messages name their call by `id`
            {"role": "tool", "tool_call_id": "r", "content": "22C"},
            {"role": "tool", "id": "p", "content": "18C"},
            {"role": "assistant", "content": None, "function_call": {"name": "convert", "arguments": "{\"c\": 18}"},
             "model": "m-2"},
            {"role": "function", "name": "convert", "content": "64F"},
            # a user's own tool call (tau2's dual control) is what the agent sees, in the user's text
            {"role": "user", "content": "Toggle it.",
             "tool_calls": [{"id": "u1", "function": {"name": "toggle_data", "arguments": {"on": True}}}]},
            {"role": "assistant", "content": "Done.", "model": "m-2", "timestamp": "2026-01-01T10:01:00Z",
             "logprobs": {"x": 1}},
            {"role": "assistant", "content": 5},
            {"role": "user", "content": ["a"]}]
    records = _read(tmp_path, "o.json", {"messages": msgs})
    [ep] = _episodes(records)
    assert ep.env["system_prompt"] == "Be brief.\n\nUse tools." and ep.task == "Weather in Paris and Rome?"
    assert ep.env["model_per_step"] == ["m-1", "m-1", "m-2", "m-2"]
    paris, rome, convert, done = ep.steps
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in (paris, rome, convert)] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"}), ("convert", {"c": 18})]
    assert paris.reasoning == "Two calls.\n\nLooking." and rome.reasoning is None
    assert str(paris.timestamp) == str(rome.timestamp) == "2026-01-01 10:00:05+00:00"
    assert (rome.observation.kind, rome.observation.text) == ("tool_result", "18C")
    assert (convert.observation.kind, convert.observation.text) == ("tool_result", "22C")
    assert done.observation.text == '64F\n\nToggle it.\n[toggle_data({"on":true})]'
    assert (done.action.text, str(done.timestamp)) == ("Done.", "2026-01-01 10:01:00+00:00")
    assert json.loads(done.action.raw) == {"model": "m-2", "logprobs": {"x": 1}}
    bad = [r for r in records if isinstance(r, Rejected)]
    assert [(r.rule, r.location, r.record_id) for r in bad] == [("bad_record", "o.json: messages[10]", "messages[10]"),
                                                               ("bad_record", "o.json: messages[11]", "messages[11]")]
    assert "content: int, expected text" in bad[0].reason and "content: list, expected text" in bad[1].reason
    assert bad[0].snippet == '{"role":"assistant","content":5}'


def test_anthropic_blocks_joined_results_by_id_errors_and_unknown_blocks_kept(tmp_path):
    msgs = [{"role": "system", "content": "Be careful."},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0", "content": "stale"}]},
            {"role": "user", "content": [{"type": "text", "text": "Find the file"}, {"type": "text", "text": "and the docs."}]},
            {"role": "assistant", "model": "claude-x", "content": [
                {"type": "thinking", "thinking": "Search first."}, {"type": "thinking", "thinking": "Then list."},
                {"type": "text", "text": "Searching."}, {"type": "text", "text": "And listing."},
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "docs"}},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}]},
            # the results in the other order, one an error
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "no such dir"}],
                 "is_error": True},
                {"type": "tool_result", "tool_use_id": "s1", "content": "found docs"},
                "stray note", {"type": "text", "text": "Also check /tmp."}]},
            {"role": "assistant", "id": "msg_2", "stop_reason": "end_turn", "content": [
                "stray", {"type": "redacted_thinking", "data": "x"}, {"type": "text", "text": "Nothing there."}]}]
    records = _read(tmp_path, "a.json", {"messages": msgs})
    [ep] = _episodes(records)
    assert ep.env["system_prompt"] == "Be careful." and ep.task == "Find the file\nand the docs."
    search, bash, answer = ep.steps
    assert (search.action.kind, search.action.tool_name, json.loads(search.action.arguments)) == (
        "tool_call", "web_search", {"query": "docs"})
    assert search.reasoning == "Search first.\n\nThen list.\n\nSearching.\n\nAnd listing."
    assert (bash.action.kind, bash.action.code) == ("command", "ls")
    assert (bash.observation.kind, bash.observation.text, bash.observation.is_error) == ("tool_result", "found docs",
                                                                                          None)
    # the result, then the user's own words beside the results
    assert (answer.observation.kind, answer.observation.text, answer.observation.is_error) == (
        "text", "no such dir\n\nstray note\nAlso check /tmp.", True)
    # what the turn holds beside its text: the message's own fields and the blocks the mapping does not know
    assert answer.action.text == "Nothing there."
    assert json.loads(answer.action.raw) == {"message": {"id": "msg_2", "stop_reason": "end_turn"},
                                             "blocks": ["stray", {"type": "redacted_thinking", "data": "x"}]}
    assert ep.env["unmapped"] == [{"where": "a.json: messages[1]", "role": "tool", "text": "stale", "raw": None}]
    assert [r.location for r in records if isinstance(r, Rejected)] == ["a.json: messages[1]"]


def test_units_claim_json_and_jsonl_that_open_on_a_chat_message_only():
    heads = {"a.json": b'\xef\xbb\xbf \n[{"role": "user", "content": "hi"}]', "b.jsonl": b'{"role": "assistant"}\n',
             "c.ndjson": b'\t{"type": "function_call"}', "d.txt": b'[{"role": "user"}]',
             "e.json": b'"role": "user"', "f.json": b'[{"name": "a"}]', "g.json": b'{"functionCall": {}}'}
    assert by_shape.units(list(heads), heads.get) == ["a.json", "b.jsonl", "c.ndjson", "g.json"]


def test_a_nested_list_names_its_record_its_surroundings_and_its_outcome(tmp_path):
    doc = {"type": "TeamState", "version": 2, "nested": {"x": 1},
           "run": {"id": "r", "meta": [1], "data": {"messages": OPENAI, "id": 1, "status": "failure", "agent": "bot"}}}
    [ep] = _episodes(_read(tmp_path, "s.json", doc))
    assert (ep.key, ep.outcome, ep.agent) == ("run.data.messages", "failure", "bot")
    assert ep.env["chat_shape"] == {"shape": "openai_chat", "path": "run.data.messages", "outcome_from": "status"}
    assert ep.env["record"] == {"id": 1, "status": "failure", "agent": "bot"}
    assert ep.env["around"] == {"(the document)": {"type": "TeamState", "version": 2}, "run": {"id": "r"}}
    [top] = _episodes(_read(tmp_path, "top.json", OPENAI))
    assert top.env["chat_shape"]["path"] == "(the document)" and "record" not in top.env and top.outcome == "unknown"


def test_outcomes_from_a_partial_reward_a_zero_reward_a_nested_status_and_an_unknown_status(tmp_path):
    doc = [{"messages": OPENAI, "reward": 0.5, "model": "gpt", "agent": "other"}, {"messages": OPENAI, "reward": 0},
           {"messages": OPENAI, "info": {"outcome": "success"}}, {"messages": OPENAI, "status": "running"}]
    eps = _episodes(_read(tmp_path, "t.json", doc))
    assert [(e.outcome, e.reward, e.agent) for e in eps] == [("unknown", 0.5, "gpt"), ("failure", 0.0, None),
                                                             ("success", None, None), ("unknown", None, None)]
    assert [e.env["chat_shape"] for e in eps] == [
        {"shape": "openai_chat", "path": "[0].messages", "reward_from": "reward"},
        {"shape": "openai_chat", "path": "[1].messages", "reward_from": "reward", "outcome_from": "reward"},
        {"shape": "openai_chat", "path": "[2].messages", "outcome_from": "info.outcome"},
        {"shape": "openai_chat", "path": "[3].messages"}]


def test_ndjson_lines_a_bad_line_is_a_row_with_its_number_and_the_rest_is_read(tmp_path):
    path = tmp_path / "c.ndjson"
    path.write_text(json.dumps({"messages": OPENAI}) + "\n\n{bad\n" + json.dumps({"messages": OPENAI}) + "\n")
    records = read_records(by_shape, path)
    [row] = [r for r in records if isinstance(r, Rejected)]
    assert (row.rule, row.location, row.line, row.snippet) == ("parse_error", "c.ndjson", 3, "{bad")
    assert row.reason.startswith("c.ndjson:3: invalid JSON")
    assert [e.key for e in _episodes(records)] == ["line 1: messages", "line 4: messages"]
    cut = tmp_path / "cut.json"
    cut.write_text('{"messages": [')
    [row] = read_records(by_shape, cut)
    assert (row.rule, row.location) == ("parse_error", "cut.json") and "cut.json" in row.reason


def test_an_item_of_no_known_shape_among_messages_is_kept_raw_and_named(tmp_path):
    items = OPENAI * 2 + [{"foo": 1}]
    records = _read(tmp_path, "u.json", {"messages": items})
    [ep] = _episodes(records)
    assert ep.env["chat_shape"]["unknown_items"] == [{"where": "u.json: messages[10]", "item": {"foo": 1}}]
    [row] = [r for r in records if isinstance(r, Rejected)]
    assert (row.rule, row.location, row.record_id) == ("unknown_content", "u.json: messages[10]", "messages[10]")
    assert "not a openai_chat message" in row.reason


def test_computer_use_results_keep_the_text_beside_the_screenshot_and_the_tools_environment(tmp_path):
    png = base64.b64decode(_png(8, 4))
    jpeg_part = {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": _png(8, 4)}}
    msgs = [{"role": "user", "content": "Open the menu"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "u1", "name": "computer", "input": {"action": "left_click",
                                                                               "coordinate": [320, 100]}},
                {"type": "tool_use", "id": "b1", "name": "bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "b1", "content": [{"type": "text", "text": "a.txt"},
                                                                         jpeg_part]},
                {"type": "tool_result", "tool_use_id": "u1", "is_error": True, "content": [
                    {"type": "text", "text": "Clicked, a dialog opened."}, "not a part", jpeg_part]}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "u2", "name": "computer",
                                               "input": {"action": "key", "text": "Escape"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u2", "content": [
                {"type": "image", "data": "data:image/png;base64," + _png(16, 8)}]}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "u3", "name": "computer",
                                               "input": {"action": "key", "text": "Return"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u3", "content": [
                {"type": "image", "source": {"type": "base64", "data": "not base64!"}}]}]}]
    doc = {"tools": ["a tool that is no object", {"type": "computer_20241022", "name": "computer",
                                                  "display_width": 640, "display_height": 400,
                                                  "environment": "browser"}], "messages": msgs}
    blobs = {}
    [ep] = _episodes(_read(tmp_path, "cu2.json", doc, blobs))
    assert (ep.domain, ep.platform) == ("web", "browser")
    click, bash, escape, enter = ep.steps
    assert (click.action.kind, click.action.x, click.action.y) == ("click", 0.5, 0.25)  # of the declared 640 x 400
    # a screenshot answering a computer call is the screen; beside another call it is an `[image]` in the text
    assert (escape.observation.kind, escape.observation.text) == ("terminal", "a.txt\n[image]")
    assert escape.observation.is_error is None
    shot = bash.observation  # the click's result
    assert (shot.kind, shot.text, shot.is_error, shot.width, shot.height) == (
        "screen", "Clicked, a dialog opened.\nnot a part", True, 8, 4)
    assert blobs[shot.screenshot] == ("image/jpeg", png)  # the media type the block gives
    shot = enter.observation  # a bare data URL
    assert (shot.kind, shot.text, shot.width, shot.height) == ("screen", None, 16, 8)
    assert blobs[shot.screenshot] == ("image/png", base64.b64decode(_png(16, 8)))
    # an image that does not decode is no screenshot: the result keeps its place in the text
    assert (ep.final_observation.kind, ep.final_observation.text) == ("tool_result", "[image]")


def _lc(cls, content):
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": {"content": content}}


def test_each_shape_is_told_by_its_items_and_needs_a_turn_of_the_model():
    plain_user, plain_ai = {"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}
    tool_use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "ls", "input": {}}]}
    lists = {
        "openai_chat": [plain_user, {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f"}}]}],
        "openai_chat (legacy call)": [plain_user, {"role": "assistant", "function_call": {"name": "f"}}],
        "openai_responses": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                             {"type": "message", "role": "assistant", "content": "ok"}],
        "openai_responses (untyped parts)": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                                             {"type": "function_call", "name": "f", "arguments": "{}"}],
        "anthropic": [plain_user, plain_ai, plain_user, tool_use],  # mostly plain: still Anthropic
        "gemini": [{"role": "model", "parts": [{"text": "a"}]}, {"role": "user", "parts": [{"text": "b"}]},
                   {"role": "model", "parts": [{"text": "c"}]}, {"type": "ai", "content": "d"}],
        "langchain": [{"type": "human", "data": {"content": "hi"}}, {"type": "ai", "data": {"content": "ok"}}],
        "langchain (constructor)": [_lc("HumanMessage", "hi"), _lc("AIMessage", "ok")],
        "langchain (chunk)": [_lc("HumanMessage", "hi"), _lc("AIMessageChunk", "ok")],
        "autogen": [{"source": "user", "type": "TextMessage", "content": "hi"},
                    {"source": "helper", "type": "TextMessage", "content": "ok"}],
        "autogen (core)": [{"type": "UserMessage", "content": "hi", "source": "user"},
                           {"type": "AssistantMessage", "content": "ok"}],
    }
    assert {name: list_shape(items) for name, items in lists.items()} == {
        name: name.split(" ")[0] for name in lists}
    nine_of_ten = [plain_user, plain_ai] * 4 + [plain_user, {"x": 1}]
    assert list_shape(nine_of_ten) == "openai_chat" and list_shape(nine_of_ten[1:]) is None  # 8 of 9
    not_chats = {
        "responses user turns": [{"type": "message", "role": "user", "content": "a"}] * 2,
        "langchain human dicts": [{"type": "human", "data": {"content": "a"}}] * 2,
        "langchain human constructors": [_lc("HumanMessage", "a")] * 2,
        "autogen user messages": [{"source": "user", "type": "TextMessage", "content": "a"}] * 2,
        "messages without content": [{"role": "user"}, plain_ai],
        "untyped message items": [{"type": "message", "content": "a"}, {"type": "message", "content": "b"}],
        "a constructor of another class": [_lc("Document", "a"), _lc("AIMessage", "b")],
        "autogen core without content": [{"type": "UserMessage"}, {"type": "AssistantMessage"}],
        "langchain types without content": [{"type": "human"}, {"type": "ai"}],
    }
    assert {name: list_shape(items) for name, items in not_chats.items()} == dict.fromkeys(not_chats)


def test_gemini_contents_dumped_by_the_sdk_with_null_fields_keep_files_and_unread_parts(tmp_path):
    """The google-genai SDK's `Content.model_dump()` writes every field of a part, all null but one: a null
    `inline_data` is no image; an uploaded file's part is its URI in the text; a part with no text is kept raw."""
    fields = ("video_metadata", "thought", "inline_data", "file_data", "thought_signature", "code_execution_result",
              "executable_code", "function_call", "function_response", "text")

    def part(**set_):
        return {k: set_.get(k) for k in fields}
    contents = [
        {"role": "user", "parts": [part(text="Summarise the RFQ."),
                                   part(file_data={"display_name": None, "file_uri": "https://x/files/f1",
                                                   "mime_type": "application/pdf"})]},
        {"role": "model", "parts": [part(text="It asks for three things.")]},
        {"role": "user", "parts": [part(executable_code={"code": "print(1)", "language": "PYTHON"})]},
        {"role": "model", "parts": [part(function_call={"id": "c1", "name": "lookup", "args": {"q": "rfq"}})]},
        {"role": "user", "parts": [part(function_response={"id": "c1", "name": "lookup", "response": {"output": "ok"}})]},
        {"role": "model", "parts": [part(text="Done.")]}]
    [ep] = _episodes(_read(tmp_path, "history.json", contents))
    assert ep.task == "Summarise the RFQ.\n[file https://x/files/f1]"
    first, call, answer = ep.steps
    assert first.action.text == "It asks for three things."
    assert {"step": 1, "role": "user", "raw": {"parts": [{"executable_code": {"code": "print(1)", "language": "PYTHON"}}]}
            } in ep.env["message_extras"]
    assert (call.action.tool_name, json.loads(call.action.arguments)) == ("lookup", {"q": "rfq"})
    assert json.loads(call.action.raw) == {"function_call": {"id": "c1", "name": "lookup", "args": {"q": "rfq"}}}
    assert (answer.observation.text, answer.action.text) == ("ok", "Done.")


def test_jsonl_named_files_of_json_written_over_many_lines_are_read_as_documents(tmp_path):
    """A conversation saved pretty-printed under a `.jsonl` name (an agent's request snapshot) is one document,
    and pretty-printed values one after another are one document each; neither is a parse error a line."""
    one = tmp_path / "llm-request.jsonl"
    one.write_text(json.dumps({"provider": "openai", "request": {"model": "gpt-4o", "messages": OPENAI}}, indent=2))
    records = read_records(by_shape, one)
    assert not [r for r in records if isinstance(r, Rejected)]
    [ep] = _episodes(records)
    assert ep.key == "request.messages" and ep.env["record"]["model"] == "gpt-4o"
    assert [s.action.tool_name for s in ep.steps if s.action.kind == "tool_call"] == ["get_weather"]
    two = tmp_path / "stream.jsonl"
    two.write_text(json.dumps({"messages": OPENAI}, indent=2) + "\n" + json.dumps({"messages": OPENAI[:4]}, indent=4))
    assert [e.key for e in _episodes(read_records(by_shape, two))] == ["value 1: messages", "value 2: messages"]


def test_console_output_with_json_in_a_jsonl_file_is_one_row_and_a_damaged_first_line_stays_one_bad_line(tmp_path):
    """A `.jsonl` holding a pretty-printed response then console text is one row saying why it is not read (its
    file goes on to `ignored_inputs`), not a parse error for each of its lines; a JSON-lines file whose first
    line is cut still has the rest of its lines read."""
    printed = tmp_path / "openai.jsonl"
    printed.write_text(json.dumps({"choices": [{"message": OPENAI[2]}]}, indent=2) + "\nFunction to call: get_weather\n")
    [row] = read_records(by_shape, printed)
    assert row.rule == "unknown_content" and "neither JSON lines" in row.reason and "after 1 value(s)" in row.reason
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text('{"messages": [\n' + json.dumps({"messages": OPENAI}) + "\n")
    records = read_records(by_shape, damaged)
    assert [(r.rule, r.line) for r in records if isinstance(r, Rejected)] == [("parse_error", 1)]
    assert [e.key for e in _episodes(records)] == ["line 2: messages"]


def test_a_jsonl_file_of_values_nested_past_any_depth_is_one_row_naming_it(tmp_path):
    """Untrusted nesting (a value opened 200,000 times) after a first value written over many lines: one row
    saying the file is not read, and the first value is not read alone as if it were the file."""
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{\n"messages": ' + json.dumps(OPENAI) + '}\n{"x": ' + "[" * 200_000 + "]" * 200_000 + "}\n")
    [row] = read_records(by_shape, deep)
    assert row.rule == "unknown_content" and "deep.jsonl" in row.reason and "after 1 value(s)" in row.reason
