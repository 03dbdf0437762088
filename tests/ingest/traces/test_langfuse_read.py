"""The Langfuse reader called directly (`langfuse.read`): real trace downloads of Langfuse's own framework
integrations (samples/traces/langfuse, PROVENANCE.md) against goldens a person read against the raw files and
against Langfuse's own ChatML adapter (its `*.chatml.json` outputs, in data/langfuse-chatml: every tool call it
finds in an observation's messages is a step here); the public API's shapes and what cannot be read, hand-made after the
API's models (`TraceWithFullDetails`, `ObservationsViews`)."""

import json
from pathlib import Path

import pytest

from ingest.traces import langfuse
from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.ingest.golden import read_records

LANGFUSE = SAMPLES / "traces" / "langfuse"
GOLDEN = Path(__file__).parent / "golden"
CHATML = Path(__file__).parent / "data" / "langfuse-chatml"  # the ChatML adapter's parse (oracle, not input)
SAMPLES_READ = sorted(p.name.removesuffix(".trace.json") for p in LANGFUSE.glob("*.trace.json"))


@pytest.mark.parametrize("name", SAMPLES_READ)
def test_real_trace_downloads_against_their_goldens(name):
    records = read_records(langfuse, LANGFUSE / f"{name}.trace.json")
    golden.check(records, GOLDEN / f"langfuse-{name}.json", env_keys=("langfuse",))


# what a person counts in each raw file: (tool calls in order, steps, the task)
COUNTED = {
    # Agno and AutoGen: the model call's messages written as one text (`developer: ...\nuser: ...`), `None` for the
    # answer that only called the tool, whose call Agno's instrumentation records as a span of its own
    "agno-2025-06-11": (["duckduckgo_search"], 2, "What is currently trending on Twitter?"),
    "autogen-2025-06-06": ([], 1, "Say 'Hello World!'"),
    # BeeAI: each event of its ReAct loop a span; per iteration one action (the question as its prompt template
    # puts it to the model, `Message: ...` and when it was written)
    "beeai-2025-08-01": (["Wikipedia", "OpenMeteoTool"], 3, "Message: I'm planning a trip to Barcelona, Spain. Can "
                         "you research key attractions and landmarks I should visit, and also tell me what the "
                         "current weather conditions are like there?\n\nThis message was created at "
                         "2025-08-01T13:56:54+00:00"),
    "langgraph-js-2025-10-30": (["get_weather"], 2, "What's the weather in San Francisco?"),
    "microsoft-agent-2025-12-17": (["get_weather"], 2, "What's the weather in Tokyo?"),
    "crewai-2025-07-11": ([], 1, None),  # the task as CrewAI's prompt puts it (`Current Task: ...`, the criteria)
    "google-gemini-2025-08-01": ([], 1, "What is Langfuse?"),
    "llamaindex-2025-06-05": ([], 1, "What is Langfuse?"),
    "pydantic-ai-with-gemini-2025-12-24": ([], 1, None),  # "what is 1+1?" and the output format asked
    "vercel-aisdk-2025-11-17": (["getWeather"], 1, "What is the weather like today in San Francisco?"),
    "vertex-ai-2025-08-01": ([], 1, "What is Langfuse?"),
    "claude-agent-2025-12-22": (["mcp__weather__get_weather"] * 2, 4,
                                "What's the weather like in Berlin and New York?"),
    "google-adk-2025-08-28": (["say_hello"], 2, "hi"),
    "koog-2025-08-26": (["HelloTool", "ByeTool"], 3, "Greet and say goodbye to the user in the same message. Use "
                        "provided tools to generate a proper greeting. The user name is Bob."),
    "langgraph-python-2025-08-22": (["Web-Search"], 2, "Be helpful!"),
    "openai-agents-2025-09-30": (["get_weather"], 2, "What's the weather in Tokyo?"),
    "pydantic-ai-tools-2025-12-04": (["get_pun_suggestion", "get_dad_joke_suggestion", "get_one_liner_suggestion",
                                      "final_result"], 6, None),
}


@pytest.mark.parametrize("name", SAMPLES_READ)
def test_each_trace_is_one_episode_with_the_calls_a_person_counts(name):
    [ep], rows = golden.read_split(langfuse, LANGFUSE / f"{name}.trace.json")
    calls, steps, task = COUNTED[name]
    assert rows == []
    assert [s.action.tool_name for s in ep.steps if s.action.kind == "tool_call"] == calls
    assert len(ep.steps) == steps
    if task is not None:
        assert ep.task == task
    raw = json.loads((LANGFUSE / f"{name}.trace.json").read_text())
    assert ep.key == raw["trace"]["id"] and ep.env["trace"]["spans"] == len(raw["observations"])


@pytest.mark.parametrize("name", [n for n in SAMPLES_READ if (CHATML / f"{n}.chatml.json").exists()])
def test_every_tool_call_langfuses_own_chatml_adapter_finds_is_a_step(name):
    """Langfuse's adapters (worker/src/__tests__/chatml) parse each observation's input and output into ChatML;
    their outputs were committed beside the traces: each tool call in them (by id, else by name and arguments)
    is a step with the same tool and arguments. The Claude Agent SDK's and Koog's traces are left out: the adapter
    finds none of their calls (Anthropic `tool_use` blocks; calls written as JSON text), which their TOOL / tool
    observations give here (`COUNTED`)."""
    oracle = json.loads((CHATML / f"{name}.chatml.json").read_text())
    expected = {}
    for parsed in oracle.values():
        for side in ("input", "output"):
            for msg in (parsed.get(side) or {}).get("data") or []:
                for call in msg.get("tool_calls") or []:
                    args = json.loads(call["arguments"]) if isinstance(call["arguments"], str) else call["arguments"]
                    expected.setdefault(call.get("id") or (call["name"], json.dumps(args)), (call["name"], args))
    [ep], _ = golden.read_split(langfuse, LANGFUSE / f"{name}.trace.json")
    got = [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps if s.action.kind == "tool_call"]
    assert expected and sorted(map(json.dumps, expected.values())) == sorted(map(json.dumps, got))


def test_a_trace_download_keeps_its_scores_and_the_observations_usage():
    [ep], _ = golden.read_split(langfuse, LANGFUSE / "openai-agents-2025-09-30.trace.json")
    assert ep.env["langfuse"]["name"] == "Agent workflow"
    assert ep.env["langfuse"]["scores"][0] == {
        "name": "toxicity", "value": 0.8, "source": "EVAL",
        "comment": "The generation contains aggressive and dismissive language that undermines trust in "
                   "professionals and promotes a negative view of the public's intelligence, which is harmful and "
                   "disrespectful."}
    assert ep.outcome == "unknown" and ep.agent == "gpt-4.1-2025-04-14"
    assert ep.env["trace"]["agents"] == ["Agent workflow", "Hello world"]
    call = json.loads(ep.steps[0].action.raw) if isinstance(ep.steps[0].action.raw, str) else ep.steps[0].action.raw
    assert "get_weather" in json.dumps(call)


def test_model_calls_written_as_one_text_read_as_their_turns():
    """Agno's and AutoGen's downloads record each model call's messages as one text, a `role: content` turn after
    another: the user's turn is the task and the `developer` / `system` turn the system prompt (not a task that
    opens with `developer:`), and Agno's `None` answer (its call only asked for the tool) is no answer."""
    [agno], _ = golden.read_split(langfuse, LANGFUSE / "agno-2025-06-11.trace.json")
    raw = json.loads((LANGFUSE / "agno-2025-06-11.trace.json").read_text())
    none = [o for o in raw["observations"] if o["output"] == "None"]
    assert len(none) == 1 and none[0]["input"].startswith("developer: <additional_information>")
    assert agno.env["system_prompt"] == "<additional_information>\n- Use markdown to format your answers.\n" \
                                        "</additional_information>"
    assert "None" not in [s.action.text for s in agno.steps]
    [autogen], _ = golden.read_split(langfuse, LANGFUSE / "autogen-2025-06-06.trace.json")
    assert autogen.env["system_prompt"].startswith("You are a helpful AI assistant. Solve tasks using your tools.")


def test_a_beeai_react_run_is_one_action_per_iteration_with_its_thought():
    """BeeAI's instrumentation writes each event of the ReAct loop as a span of its own, all marked AGENT, and the
    streamed answer as one output message per chunk: read as they stand they were 14 empty agents and 62 one-word
    answers. Each iteration's last `agent.react.update` says what was done (its `thought`, the tool and its input,
    the result or the answer): 3 steps, each known at the update that first said it (every event span ends when
    the run ends)."""
    [ep], rows = golden.read_split(langfuse, LANGFUSE / "beeai-2025-08-01.trace.json")
    raw = json.loads((LANGFUSE / "beeai-2025-08-01.trace.json").read_text())
    by_name = {o["name"]: o for o in raw["observations"]}
    last = [json.loads(by_name[f"agent.react.update-{n}"]["metadata"])["attributes"] for n in (14, 18, 20)]
    assert rows == [] and "subagents" not in ep.env
    assert [s.reasoning for s in ep.steps] == [a["thought"].strip() for a in last]
    called = [json.loads(a["tool.parameters"]) for a in last[:2]]
    assert [json.loads(s.action.arguments) for s in ep.steps[:2]] == called
    assert json.loads(ep.steps[1].observation.text)[0]["title"] == "Barcelona"  # Wikipedia's result
    assert json.loads(ep.steps[2].observation.text)["current"]["temperature_2m"] == 29  # OpenMeteo's
    assert ep.steps[2].action.text == last[2]["output.value"] and ep.agent == "gpt-4o-mini"
    assert [s.timestamp.isoformat()[11:23] for s in ep.steps] == ["13:56:55.541", "13:57:03.274", "13:57:11.331"]


def test_a_text_that_opens_with_one_role_stays_the_users_text(tmp_path):
    """One `user: ` prefix is what a person typed, not a transcript; a `None` answer to a call whose messages are a
    list is the model's answer."""
    path = tmp_path / "trace.json"
    observations = [
        _obs("g1", "GENERATION", "chat", "2025-06-26T06:16:19.504Z", "2025-06-26T06:16:20.000Z", model="m",
             input="user: what does None print?", output="None"),
        _obs("g2", "GENERATION", "chat", "2025-06-26T06:16:21.000Z", "2025-06-26T06:16:22.000Z", model="m",
             input=[{"role": "user", "content": "and repr(None)?"}], output="None")]
    path.write_text(json.dumps({"id": "t1", "timestamp": "2025-06-26T06:16:19.504Z", "htmlPath": "/project/p/traces/t1",
                                "observations": observations}))
    [ep], _ = golden.read_split(langfuse, path)
    assert ep.task == "user: what does None print?"
    assert [s.action.text for s in ep.steps] == ["None", "None"]


# the public API's shapes (hand-made after its models) -------------------------------------------------------
def _obs(oid, kind, name, start, end, parent=None, trace="t1", **fields):
    return {"id": oid, "traceId": trace, "type": kind, "name": name, "startTime": start, "endTime": end,
            "parentObservationId": parent, "level": "DEFAULT", "statusMessage": None, **fields}


OBSERVATIONS = [
    _obs("g1", "GENERATION", "chat", "2025-06-26T06:16:19.504Z", "2025-06-26T06:16:20.000Z", model="qwen3",
         input=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "list /tmp"}],
         output={"role": "assistant", "content": None, "tool_calls": [
             {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"path\": \"/tmp\"}"}}]},
         usage={"input": 13, "output": 5, "total": 18, "unit": "TOKENS"}),
    _obs("s1", "TOOL", "ls", "2025-06-26T06:16:20.100Z", "2025-06-26T06:16:20.200Z", input={"path": "/tmp"},
         output="a.txt", level="ERROR", statusMessage="partial listing"),
    _obs("e1", "EVENT", "retry", "2025-06-26T06:16:20.300Z", None),
    _obs("g2", "GENERATION", "chat", "2025-06-26T06:16:20.400Z", "2025-06-26T06:16:21.000Z", model="qwen3",
         input=[{"role": "user", "content": "list /tmp"}, {"role": "assistant", "content": None, "tool_calls": [
             {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
             {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}],
         output="There is a.txt."),
]


def test_an_api_trace_with_inlined_observations(tmp_path):
    """`GET /api/public/traces/{id}` (`TraceWithFullDetails`): the trace with its observations inlined."""
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"id": "t1", "timestamp": "2025-06-26T06:16:19.504Z", "name": "ops", "userId": "u",
                                "htmlPath": "/project/p/traces/t1", "latency": 1.5, "totalCost": 0,
                                "observations": OBSERVATIONS, "scores": []}, indent=2))
    assert langfuse.units([str(path)], lambda p: Path(p).read_bytes()[:4096]) == [str(path)]
    [ep], rows = golden.read_split(langfuse, path)
    assert rows == []
    assert [s.action.tool_name for s in ep.steps] == ["ls", None]
    assert json.loads(ep.steps[0].action.arguments) == {"path": "/tmp"}
    assert (ep.steps[1].observation.text, ep.steps[1].observation.is_error) == ("a.txt", True)
    assert ep.steps[1].action.kind == "message" and ep.terminated
    assert ep.env["langfuse"] == {"name": "ops", "userId": "u", "htmlPath": "/project/p/traces/t1"}
    assert ep.env["trace"]["errors"] == [{"span": "ls", "span_id": "s1", "error": "partial listing"}]
    assert [s["name"] for s in ep.env["trace"]["other_spans"]] == ["retry"]
    assert ep.task == "list /tmp" and ep.agent == "qwen3"


def test_observation_pages_and_table_exports_group_by_trace(tmp_path):
    """`GET /api/public/observations` pages (`{"data": [...], "meta"}`) and a table's JSONL export: one episode per
    `traceId`, whatever order the observations come in."""
    other = [_obs("x1", "GENERATION", "chat", "2025-06-26T07:00:00Z", "2025-06-26T07:00:01Z", trace="t2",
                  input="hello", output="hi there")]
    page = tmp_path / "page.json"
    page.write_text(json.dumps({"data": list(reversed(OBSERVATIONS)) + other,
                                "meta": {"page": 1, "limit": 50, "totalItems": 5, "totalPages": 1}}))
    lines = tmp_path / "observations.jsonl"
    lines.write_text("\n".join(json.dumps(o) for o in OBSERVATIONS + other) + "\n")
    head = lambda p: Path(p).read_bytes()[:4096]  # noqa: E731
    assert langfuse.units([str(page), str(lines)], head) == [str(page), str(lines)]
    for path in (page, lines):
        episodes, rows = golden.read_split(langfuse, path)
        assert rows == []
        assert [(e.key, len(e.steps)) for e in episodes] == [("t1", 2), ("t2", 1)]
        assert (episodes[1].task, episodes[1].steps[0].action.text) == ("hello", "hi there")


def test_what_cannot_be_read_is_a_row_and_the_rest_is_read(tmp_path):
    path = tmp_path / "bad.jsonl"
    no_id = {k: v for k, v in OBSERVATIONS[1].items() if k != "id"}
    path.write_text("\n".join([json.dumps(OBSERVATIONS[0]), json.dumps(no_id), "{not json",
                               json.dumps({"parentObservationId": None, "note": "no observation"})]) + "\n")
    [ep], rows = golden.read_split(langfuse, path)
    assert [(r.rule, r.line) for r in rows] == [("bad_record", 2), ("parse_error", 3), ("unknown_content", 4)]
    assert rows[0].reason == "bad.jsonl:2: an observation has no id; left out"
    assert [s.action.tool_name for s in ep.steps] == ["ls"]


def test_a_trace_list_whose_observations_are_ids_only_has_no_step(tmp_path):
    """`GET /api/public/traces` lists each trace's observations by id: nothing to read as steps."""
    path = tmp_path / "traces.json"
    path.write_text(json.dumps({"data": [{"id": "t1", "timestamp": "2025-06-26T06:16:19.504Z", "observations": [
        "96e16fda"], "htmlPath": "/project/p/traces/t1", "projectId": "p"}], "meta": {"page": 1}}))
    assert golden.read_split(langfuse, path) == ([], [])


def test_units_want_langfuse_evidence():
    heads = {
        "/a/download.json": b'{\n  "trace": {\n    "id": "fee6",\n    "projectId": "clor",\n    "name": "x"',
        "/a/obs.jsonl": b'{"id": "o1", "traceId": "t1", "type": "SPAN", "parentObservationId": null}\n',
        "/a/api.json": b'{"id": "t1", "htmlPath": "/project/p/traces/t1"}',
        "/a/other.json": b'{"parentObservationId": "x", "kind": "span"}',
        "/a/trace.txt": b'{\n  "trace": {\n    "id": "fee6",\n    "projectId": "clor"',
        "/a/plain.json": b'{"trace": {"id": "x", "spans": []}}',
    }
    assert langfuse.units(sorted(heads), heads.get) == ["/a/api.json", "/a/download.json", "/a/obs.jsonl"]


def test_turns_written_as_text_keep_each_roles_words_and_an_answer_of_none_only_calls_tools(tmp_path):
    """A model call's messages written as one text: an assistant's `None` (it only called tools) is no text, kept
    raw with a row; a user who typed `None` said it; the call whose answer is `None` answered nothing (its tool
    span is the step), and a tool span that recorded an empty JSON string (`""`) has no result."""
    path = tmp_path / "trace.json"
    observations = [
        _obs("g1", "GENERATION", "chat", "2025-06-26T06:16:19.000Z", "2025-06-26T06:16:19.500Z", model="m",
             input="system: Be brief.\nuser: What is 6*7?\nassistant: None\ntool: 42\nassistant: It is 42.\n"
                   "user: None\n", output="None"),
        _obs("s1", "TOOL", "note", "2025-06-26T06:16:19.600Z", "2025-06-26T06:16:19.700Z", input={"text": "42"},
             output='""'),
        _obs("g2", "GENERATION", "chat", "2025-06-26T06:16:20.400Z", "2025-06-26T06:16:21.000Z", model="m",
             input=[{"role": "user", "content": "Noted?"}], output="Noted.")]
    path.write_text(json.dumps({"id": "t1", "timestamp": "2025-06-26T06:16:19.504Z", "htmlPath": "/project/p/traces/t1",
                                "observations": observations}))
    [ep], rows = golden.read_split(langfuse, path)
    assert ep.task == "What is 6*7?" and ep.env["system_prompt"] == "Be brief."
    assert [(s.action.kind, s.action.tool_name, s.action.text, s.observation.text) for s in ep.steps] == [
        ("message", None, "It is 42.", "What is 6*7?"), ("tool_call", "note", None, "None"),
        ("message", None, "Noted.", "Noted?")]
    assert ep.env["unmapped"] == [{"where": "trace.json:1 observation g1.input[2]", "role": "assistant", "text": None,
                                   "raw": None}]
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", "trace.json:1 observation g1.input[2]")]


def _beeai_variant(tmp_path, change) -> Path:
    """The BeeAI download with each observation's metadata attributes (and name) changed by `change`."""
    doc = json.loads((LANGFUSE / "beeai-2025-08-01.trace.json").read_text())
    for obs in doc["observations"]:
        meta = json.loads(obs["metadata"])
        change(obs, meta["attributes"])
        obs["metadata"] = json.dumps(meta)
    path = tmp_path / "beeai.trace.json"
    path.write_text(json.dumps(doc))
    return path


def _iteration_as_agent(obs, attrs):
    if obs["name"].startswith("iteration-"):
        attrs["openinference.span.kind"] = "AGENT"


def _event_name_without_its_number(obs, attrs):
    if attrs.get("target") and obs["name"].startswith(attrs["target"] + "-"):
        obs["name"] = attrs["target"]


def test_a_beeai_run_reads_alike_whether_its_iterations_are_agents_and_its_events_numbered(tmp_path):
    """Instrumentations that mark each loop iteration AGENT, or name an event without its number (its `target` says
    which it is), describe the same run: the same three steps, one agent."""
    [plain], _ = golden.read_split(langfuse, LANGFUSE / "beeai-2025-08-01.trace.json")

    def steps(ep):
        return [(s.action.kind, s.action.tool_name, s.action.arguments, s.action.text, s.reasoning,
                 s.observation.text, s.timestamp) for s in ep.steps]

    for change in (_iteration_as_agent, _event_name_without_its_number):
        [ep], rows = golden.read_split(langfuse, _beeai_variant(tmp_path, change))
        assert rows == [] and "subagents" not in ep.env, change.__name__
        assert steps(ep) == steps(plain) and ep.agent == plain.agent, change.__name__
        assert ep.env["trace"]["agents"] == plain.env["trace"]["agents"], change.__name__


def _thoughts_left_out(obs, attrs):
    if obs["name"] == "agent.react.update-14":
        del attrs["thought"]
    elif obs["name"] == "agent.react.update-18":
        attrs["thought"] = " \n "


def test_a_beeai_iteration_whose_last_update_has_no_thought_has_no_reasoning(tmp_path):
    [plain], _ = golden.read_split(langfuse, LANGFUSE / "beeai-2025-08-01.trace.json")
    [ep], rows = golden.read_split(langfuse, _beeai_variant(tmp_path, _thoughts_left_out))
    assert rows == [] and [s.reasoning for s in ep.steps] == [None, None, plain.steps[2].reasoning]
    assert [s.action.arguments for s in ep.steps] == [s.action.arguments for s in plain.steps]


def test_tool_spans_without_a_model_call_are_steps_with_their_input_and_result(tmp_path):
    """A trace of tool observations alone (no generation called them): each is a step with its own input; an MCP
    tool's CallToolResult is its text, a failed call with no output its status message."""
    path = tmp_path / "trace.json"
    observations = [
        _obs("s1", "TOOL", "execute_tool ls", "2025-06-26T06:16:20.100Z", "2025-06-26T06:16:20.200Z",
             input={"path": "/tmp"}, output={"content": [{"type": "text", "text": "a.txt"}], "isError": False}),
        _obs("s2", "TOOL", "cat", "2025-06-26T06:16:20.300Z", "2025-06-26T06:16:20.400Z", input={"path": "/tmp/a"},
             output={}, level="ERROR", statusMessage="no such file")]
    path.write_text(json.dumps({"id": "t1", "timestamp": "2025-06-26T06:16:19.504Z", "htmlPath": "/project/p/traces/t1",
                                "observations": observations}))
    [ep], rows = golden.read_split(langfuse, path)
    assert rows == []
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == [
        ("ls", {"path": "/tmp"}), ("cat", {"path": "/tmp/a"})]
    assert ep.steps[1].observation.text == "a.txt"
    assert (ep.final_observation.text, ep.final_observation.is_error) == ("no such file", True)


def test_an_observation_at_level_error_without_a_message_is_a_failure_named_error(tmp_path):
    path = tmp_path / "trace.json"
    observations = [_obs("g1", "GENERATION", "chat", "2025-06-26T06:16:20.000Z", "2025-06-26T06:16:20.500Z",
                         model="m", input=[{"role": "user", "content": "hi"}], output="Hello.", level="ERROR")]
    path.write_text(json.dumps({"id": "t1", "timestamp": "2025-06-26T06:16:19.504Z", "htmlPath": "/project/p/traces/t1",
                                "observations": observations}))
    [ep], _ = golden.read_split(langfuse, path)
    assert ep.env["trace"]["errors"] == [{"span": "chat", "span_id": "g1", "error": "ERROR"}]


def _events_out_of_their_iteration(obs, attrs):
    if obs["name"] == "tool.search.wikipedia.start-12":
        obs["parentObservationId"] = None  # under no iteration
    elif obs["name"] == "agent.react.success-2":
        obs["parentObservationId"] = obs["id"]  # its own parent: a damaged download


def test_beeai_events_outside_any_iteration_are_no_step_and_a_numbered_name_alone_is_no_event(tmp_path):
    [plain], _ = golden.read_split(langfuse, LANGFUSE / "beeai-2025-08-01.trace.json")
    [ep], _ = golden.read_split(langfuse, _beeai_variant(tmp_path, _events_out_of_their_iteration))
    assert [(s.action.tool_name, s.action.text, s.reasoning) for s in ep.steps] == [
        (s.action.tool_name, s.action.text, s.reasoning) for s in plain.steps]
    # a trace of no BeeAI run whose span names end in a number keeps its spans as they are
    path = tmp_path / "trace.json"
    observations = [_obs("s1", "TOOL", "web.search-1", "2025-06-26T06:16:20.100Z", "2025-06-26T06:16:20.200Z",
                         input={"q": "Barcelona"}, output="sunny")]
    path.write_text(json.dumps({"id": "t1", "timestamp": "2025-06-26T06:16:19.504Z", "htmlPath": "/project/p/traces/t1",
                                "observations": observations}))
    [ep], _ = golden.read_split(langfuse, path)
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in ep.steps] == [
        ("web.search-1", {"q": "Barcelona"})] and ep.final_observation.text == "sunny"


def test_a_generation_output_with_no_message_in_it_is_kept_raw_in_env_with_a_warning(tmp_path):
    """A generation whose output holds no message the reader reads makes no step; its output is kept as written
    in the episode's env with one warning, whether a tool span follows it or it is the trace's last."""
    path = tmp_path / "trace.json"
    observations = [
        _obs("g1", "GENERATION", "chat", "2025-06-26T06:16:19.504Z", "2025-06-26T06:16:20.000Z", model="m",
             input=[{"role": "user", "content": "list /tmp"}], output={"finish": "length", "tokens": [7, 8]}),
        _obs("s1", "TOOL", "ls", "2025-06-26T06:16:20.100Z", "2025-06-26T06:16:20.200Z", input={"path": "/tmp"},
             output="a.txt"),
        _obs("g2", "GENERATION", "chat", "2025-06-26T06:16:20.400Z", "2025-06-26T06:16:21.000Z", model="m",
             input=[{"role": "user", "content": "list /tmp"}], output=12345)]
    path.write_text(json.dumps({"id": "t1", "timestamp": "2025-06-26T06:16:19.504Z", "htmlPath": "/project/p/traces/t1",
                                "observations": observations}))
    [ep], rows = golden.read_split(langfuse, path)
    assert [s.action.tool_name for s in ep.steps] == ["ls"]
    assert ep.env["unread_outputs"] == [
        {"span": "chat", "span_id": "g1", "after_steps": 0, "output": {"finish": "length", "tokens": [7, 8]}},
        {"span": "chat", "span_id": "g2", "after_steps": 1, "output": 12345}]
    assert [r.rule for r in rows] == ["unknown_content"] and "g1, g2" in rows[0].reason
    # a trace whose generations answer in messages has no such key and no warning (OBSERVATIONS)
    path.write_text(json.dumps({"id": "t1", "timestamp": "2025-06-26T06:16:19.504Z", "observations": OBSERVATIONS}))
    [ep], rows = golden.read_split(langfuse, path)
    assert "unread_outputs" not in ep.env and rows == []


def test_runnables_typed_agent_inside_an_agent_are_no_sub_episodes_but_an_agent_that_acts_is(tmp_path):
    """Langfuse's LangChain handler types a tools agent's runnables `AGENT` (`RunnableAssign<agent_scratchpad>`,
    its output parser): nested agents with no step and no agent beneath them are no sub-episodes (no empty episode
    rows); a nested agent with a model call of its own stays one. A generation without `model` takes the one
    LangChain's callback put in its metadata."""
    at = "2025-11-25T13:41:2{}.000Z".format
    observations = [
        _obs("a0", "AGENT", "AgentExecutor", at(0), at(9), input={"input": "pods?"}),
        _obs("a1", "AGENT", "RunnableAssign<agent_scratchpad>", at(1), at(1), parent="a0"),
        _obs("a2", "AGENT", "RunnableParallel<agent_scratchpad>", at(1), at(1), parent="a1"),
        _obs("g1", "GENERATION", "AzureChatOpenAI", at(2), at(3), parent="a0", metadata={"ls_model_name": "gpt-4o"},
             input=[{"role": "user", "content": "pods?"}], output={"role": "assistant", "content": "", "tool_calls": [
                 {"id": "c1", "type": "function", "function": {"name": "kubectl", "arguments": "{}"}}]}),
        _obs("a3", "AGENT", "OpenAIToolsAgentOutputParser", at(3), at(3), parent="a0"),
        _obs("t1", "TOOL", "kubectl", at(4), at(5), parent="a0", input={}, output="3 pods"),
        _obs("a4", "AGENT", "helper", at(5), at(7), parent="a0"),
        _obs("g2", "GENERATION", "chat", at(6), at(7), parent="a4", model="mini",
             input=[{"role": "user", "content": "sum up"}], output="three pods"),
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"id": "t1", "timestamp": at(0), "name": "agent", "observations": observations}))
    [main, helper], rows = golden.read_split(langfuse, path)
    assert rows == []
    assert [s.action.tool_name for s in main.steps] == ["kubectl"] and main.agent == "gpt-4o"
    assert [s["key"] for s in main.env["subagents"]] == ["t1/agent:a4"]
    assert helper.key == "t1/agent:a4" and [s.action.text for s in helper.steps] == ["three pods"]
