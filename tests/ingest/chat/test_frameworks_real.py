"""The framework readers and the shape reader on files real runs saved in public repositories, against goldens a
person read against the raw files. Files without a license are read where ../shared lays them (never copied here): their goldens keep a
hash and the opening of each text only."""

import json

from ingest.chat import by_shape, pydantic_ai
from ingest.record import Episode, Rejected
from tests.ingest import golden
from tests.ingest.golden import read_records
from tests.ingest.traces.read_util import claims
from tests.parts import SHARED, require_shared_sample

GOLDEN = golden.Path(__file__).parent / "golden"

# winndan/taranaa @ f367828132851e23f0aa4e68096974c1005c28de, `message_history.json` (no license): a travel
# agency's pydantic-ai chat agent (gemini-2.0-flash, an output type with an `answer`) saved with
# `all_messages()` after two conversations of two questions each ("I want a trip for summer", "Can you suggest
# something cheaper?", asked again in a second session a minute later): 12 messages, each answer a call of the
# output tool `final_result` followed by its "Final result processed." return
TARANAA = SHARED / "samples" / "chat" / "pydantic-ai" / "taranaa" / "message_history.json"


def test_a_saved_pydantic_ai_chat_reads_each_answer_of_the_output_tool_and_ends_on_the_last():
    """What a person counts: 4 user questions, 4 answers (the output tool's `answer`, never a tool the agent ran),
    the system prompt once; the history ends on the last answer's return, so the run ended."""
    path = require_shared_sample(TARANAA)
    assert claims(pydantic_ai, path)
    records = read_records(pydantic_ai, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    raw = json.loads(path.read_text())
    answers = [p["args"]["answer"] for m in raw if m["kind"] == "response" for p in m["parts"]]
    assert [s.action.kind for s in ep.steps] == ["done"] * 4
    assert [json.loads(s.action.text)["answer"] for s in ep.steps] == answers
    assert ep.terminated and ep.agent == "gemini-2.0-flash" and ep.task == "I want a trip for summer"
    assert ep.env["system_prompt"].startswith("You are an AI assistant for a travel agency")
    # each later question reaches the model after the output tool's return: both are what the agent saw next
    assert ep.steps[1].observation.text == "Final result processed.\n\nCan you suggest something cheaper?"
    assert [s.timestamp.isoformat() for s in ep.steps] == [m["timestamp"].replace("Z", "+00:00") for m in raw
                                                           if m["kind"] == "response"]
    assert ep.env["pydantic_ai"]["messages"] == 12
    golden.check(records, GOLDEN / "pydantic-ai-taranaa-message_history.json", texts="hash")


# LangChain messages saved by three apps, no license: read where ../shared lays them
# - `FileChatMessageHistory` files (`messages_to_dict`: `[{"type": "human" | "ai", "data": {...}}]`) of two people's
#   runs of the same course exercise (a terminal chat, ChatOpenAI with ConversationBufferMemory):
#   fahmialfareza/chatgpt-langchain-the-complete-developer-masterclass @ bbc24a2b771dd618775b0ab57eb6eb051c104dc9
#   (the file last changed in 1181c3d6, 2025-04-25), `tchat/messages.json`
#   -> ../shared/samples/chat/langchain/fahmialfareza-masterclass/messages.json;
#   elbertsoftware/langchain-projects @ 0b18fc3d2c81df275e8fba71b1a6a528ce3c466d (last changed in 4a361a58,
#   2024-08-29), `tchat/messages.json` -> ../shared/samples/chat/langchain/elbertsoftware-langchain-projects/
# - a LangGraph campaign-launch agent's thread (`model_dump()` of each message: flat `type`, `content`, `id`, the
#   answers' `response_metadata` with gpt-4.1-2025-04-14's token usage): hitesh-s0lanki-striq/subagent-poc @
#   7e5d4ca4df946c219f374b8fbbe0f1a517e15de5 (the file last changed in fe988f5a, 2025-12-16), `logs/messages.json`
#   -> ../shared/samples/chat/langchain/subagent-poc/messages.json
LANGCHAIN = SHARED / "samples" / "chat" / "langchain"
# what a person counts: (the first question, how many answers, the model)
LANGCHAIN_COUNTED = {"fahmialfareza-masterclass": ("What is 1+1?", 3, None),
                     "elbertsoftware-langchain-projects": ("what is 1 + 2?", 4, None),
                     "subagent-poc": ("launch me a campaign ", 9, "gpt-4.1-2025-04-14")}


def test_saved_langchain_chat_histories_read_each_answer_after_its_question():
    for folder, (task, answers, model) in LANGCHAIN_COUNTED.items():
        path = require_shared_sample(LANGCHAIN / folder / "messages.json")
        records = read_records(by_shape, path)
        [ep] = records
        assert ep.env["chat_shape"]["shape"] == "langchain"
        raw = [m.get("data", m) for m in json.loads(path.read_text())]  # `messages_to_dict` wraps each in `data`
        assert [s.action.text for s in ep.steps] == [m["content"] for m in raw if m["type"] == "ai"]
        assert [s.observation.text for s in ep.steps] == [m["content"] for m in raw if m["type"] == "human"]
        assert (ep.task, len(ep.steps), ep.agent) == (task, answers, model)
        assert all(s.action.kind == "message" for s in ep.steps)
        golden.check(records, GOLDEN / f"langchain-{folder}-messages.json", texts="hash", env_keys=("chat_shape",))
    # what a message carried beyond its text stays with its step: the answer's usage, the question's id
    last = json.loads(ep.steps[-1].action.raw)
    assert last["response_metadata"]["token_usage"]["prompt_tokens"] == 2084
    assert ep.env["message_extras"][0]["raw"]["id"] == "06706fd1-c323-48e8-a752-a42b2bcb45d3"


# Gemini `contents` saved by two apps, no license: read where ../shared lays them
# - AnikCOLAB/acsa_presentation_Public @ 3dc9046aec326bb1c923b50a555aabcaed1ca8b2 (the file added in 9215ff65,
#   2025-09-25), `gemini_history.json` (1.8 MB): an architecture studio's project assistant, the google-genai SDK's
#   `Content.model_dump()` of each turn (every part field written, all null but one): 111 contents, 16 model answers;
#   the user's turns hold texts, pasted JSON attachments and 54 uploaded files (`file_data` URIs: the RFQ, site
#   panoramas) -> ../shared/samples/chat/gemini/acsa_presentation_Public/gemini_history.json
# - junsonle/robot @ fd42b3d77b629ea098eba3f546037757ee3337e4 (the file last changed in 5ed07cb1, 2025-06-23),
#   `gemini_history.json`: a home-robot voice chat in Vietnamese, the REST API's camelCase contents as the Node app
#   keeps them: 128 contents, 64 exchanges -> ../shared/samples/chat/gemini/junsonle-robot/gemini_history.json
GEMINI = SHARED / "samples" / "chat" / "gemini"


def test_saved_gemini_contents_read_one_step_per_model_answer_and_keep_the_uploaded_files():
    counted = {"acsa_presentation_Public": (16, 54), "junsonle-robot": (64, 0)}  # (answers, uploaded files)
    for folder, (answers, files) in counted.items():
        path = require_shared_sample(GEMINI / folder / "gemini_history.json")
        records = read_records(by_shape, path)
        [ep] = records
        raw = json.loads(path.read_text())
        model = [m for m in raw if m["role"] == "model"]
        assert ep.env["chat_shape"]["shape"] == "gemini" and len(ep.steps) == len(model) == answers
        assert [s.action.text for s in ep.steps] == ["\n\n".join(p["text"] for p in m["parts"]) for m in model]
        uris = [p["file_data"]["file_uri"] for m in raw for p in m["parts"] if (p.get("file_data") or {}).get("file_uri")]
        seen = "\n".join(s.observation.text or "" for s in ep.steps)
        assert len(uris) == files and all(f"[file {uri}]" in seen for uri in uris)  # each file named where it came
        assert "[image]" not in seen  # the SDK's null `inline_data` is no image
        golden.check(records, GOLDEN / f"gemini-{folder}-gemini_history.json", texts="hash", env_keys=("chat_shape",))


# Toolathlon trajectories as its trajectory viewer serves them (`{"pass", "messages", "failure"}`: the benchmark's
# verdict, the OpenAI Chat Completions conversation of the agent with its MCP tools, the checker's log when it
# failed), no license: WaitHZ/toolathlon-traj-website @ 3097ad8b3f835cb9c3945cfe8d624f33694767d5 (2025-11-03),
# `trajs/claude-4.5-sonnet_set-conf-cr-ddl.json` and `trajs/claude-4.5-sonnet_student-interview.json`
# -> ../shared/samples/chat/toolathlon/toolathlon-traj-website/<the same names>
TOOLATHLON = SHARED / "samples" / "chat" / "toolathlon" / "toolathlon-traj-website"
# what a person counts: (the tools called in order, `pass`)
TOOLATHLON_COUNTED = {
    "claude-4.5-sonnet_set-conf-cr-ddl.json": (
        ["emails-search_emails"] * 2 + ["emails-read_email"] * 3 + ["google_calendar-create_event"], True),
    "claude-4.5-sonnet_student-interview.json": (
        ["emails-search_emails"] + ["emails-read_email"] * 3 + ["google_calendar-list_events"]
        + ["google_calendar-create_event"] * 2, False),
}


def test_toolathlon_trajectories_are_read_by_shape_with_their_pass_as_the_outcome():
    """What a person counts: a task, the calls above each with its result (three reads in one turn, two events
    created in one turn), the model's closing summary; `pass` is Toolathlon's verdict (the second run scheduled
    two of the three qualified students: `failure` holds the checker's log). The verdict was read as unknown."""
    for name, (tools, passed) in TOOLATHLON_COUNTED.items():
        path = require_shared_sample(TOOLATHLON / name)
        assert claims(by_shape, path)
        records = read_records(by_shape, path)
        assert [r for r in records if isinstance(r, Rejected)] == []
        [ep] = [r for r in records if isinstance(r, Episode)]
        raw = json.loads(path.read_text())
        assert [s.action.tool_name for s in ep.steps[:-1]] == tools and ep.steps[-1].action.kind == "message"
        results = [m["content"] for m in raw["messages"] if m["role"] == "tool"]
        assert [s.observation.text for s in ep.steps[1:]] == results
        assert ep.steps[-1].action.text == raw["messages"][-1]["content"] and ep.terminated
        assert ep.outcome == ("success" if passed else "failure") and ep.env["chat_shape"]["outcome_from"] == "pass"
        assert ep.task == raw["messages"][0]["content"] and ep.env["record"]["pass"] is passed
        assert ("failure" in ep.env["record"]) is (not passed)
        golden.check(records, GOLDEN / f"toolathlon-{name}", texts="hash", env_keys=("chat_shape",))
