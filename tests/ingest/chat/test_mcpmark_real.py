"""The MCPMark reader on task runs its evaluator saved in a public repository (no license: read where ../shared lays
them), against goldens a person read against the raw files.

eval-sys/mcpmark-community-experiments @ 92db83e36c6da2691141a0698f137665aa0116fe (no license), two task folders,
each `messages.json` and `meta.json` as MCPMark's evaluator wrote them (claude-sonnet-4 on GitHub's MCP servers):
- `mcp_servers/github/official/run-1/easyr1__qwen3_issue_management/` (2025-08-19, the OpenAI Agents SDK's
  `to_input_list()`, GitHub's official MCP server)
  -> ../shared/samples/chat/mcpmark/community-experiments/github-official-run-1/easyr1__qwen3_issue_management/
- `mcp_servers/github/klavis/run-4/missing-semester__find_legacy_name/` (2025-09-19, MCPMark's own agent, Klavis'
  GitHub server behind its discover / details / execute tools)
  -> ../shared/samples/chat/mcpmark/community-experiments/github-klavis-run-4/missing-semester__find_legacy_name/
"""

import base64
import json

from ingest.chat import by_shape, mcpmark
from ingest.record import Episode, Rejected
from tests.ingest import golden
from tests.ingest.golden import head, read_records
from tests.parts import SHARED, require_shared_sample

GOLDEN = golden.Path(__file__).parent / "golden"
RUNS = SHARED / "samples" / "chat" / "mcpmark" / "community-experiments"
SDK_RUN = RUNS / "github-official-run-1" / "easyr1__qwen3_issue_management"
AGENT_RUN = RUNS / "github-klavis-run-4" / "missing-semester__find_legacy_name"


def _raw(folder):
    return json.loads((folder / "messages.json").read_text()), json.loads((folder / "meta.json").read_text())


def _read(folder) -> tuple[Episode, list]:
    folder = require_shared_sample(folder)
    files = [str(folder / "messages.json"), str(folder / "meta.json")]
    assert mcpmark.units(files, head) == [str(folder)]
    records = read_records(mcpmark, folder)
    [episode] = [r for r in records if isinstance(r, Episode)]
    assert [r for r in records if isinstance(r, Rejected)] == []
    return episode, records


def test_a_run_the_agents_sdk_saved_keeps_each_result_as_the_model_saw_it_and_the_verifier_s_failure():
    """What a person counts: the task (reopen the closed Qwen3 issues, label them, open a summary issue), 5 calls
    of GitHub's MCP tools (`search_issues`, `get_issue` #40, `update_issue` reopening #49, `update_issue` adding
    its label, `create_issue` #51) with their 5 results, each the MCP text content as the SDK sent it to the model
    (`{"type":"text","text":...}`), the model's text before each call and its final summary; `meta.json`:
    MCPMark's verifier failed the run (`success: false`), 6 turns, claude-sonnet-4-20250514. Read by its shape
    alone (`chat_shape`) the episode had no agent and an unknown outcome; meta.json was an unread input."""
    episode, records = _read(SDK_RUN)
    messages, meta = _raw(SDK_RUN)
    calls = [m for m in messages if m.get("type") == "function_call"]
    outputs = [m["output"] for m in messages if m.get("type") == "function_call_output"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in episode.steps[:-1]] == \
        [(c["name"], json.loads(c["arguments"])) for c in calls]
    assert [c["name"] for c in calls] == ["search_issues", "get_issue", "update_issue", "update_issue", "create_issue"]
    assert [s.observation.text for s in episode.steps[1:]] == outputs  # kept: the model saw these very strings
    assert outputs[0].startswith('{"type":"text","text":"{\\"total_count\\":2,')
    assert episode.steps[-1].action.kind == "message" and episode.terminated
    assert episode.steps[-1].action.text == messages[-1]["content"][0]["text"]
    assert episode.task == messages[0]["content"] and episode.steps[0].observation.text == episode.task
    assert (episode.outcome, episode.agent) == ("failure", "claude-sonnet-4-20250514") and meta["turn_count"] == 6
    assert episode.env["mcpmark"] == {"meta": meta, "tool_outputs_unwrapped": 0}
    golden.check(records, GOLDEN / "mcpmark-community-github-official-qwen3.json", texts="hash",
                 env_keys=("mcpmark",))


def test_a_run_mcpmark_s_own_agent_saved_reads_each_result_out_of_the_wrapper_it_added():
    """What a person counts: the task (find the course's old name and domain in the commit history, write them to
    ANSWER.md on `master`), 10 calls of Klavis' tools (`discover_server_categories_or_actions`,
    `get_category_actions`, 4 `get_action_details`, 4 `execute_action`: a commit search, two `get_commit`s, the
    file's creation) with 10 results, the final summary; each result is MCPMark's wrapper
    `{"type": "text", "text": ..., "annotations": null, "meta": null}` around the server's `CallToolResult` JSON,
    the text the model was sent (`base_agent._convert_to_sdk_format`): the observation is that text. `meta.json`:
    the verifier passed it (`[Hacker Tools](https://hacker-tools.github.io)`), 11 turns."""
    episode, records = _read(AGENT_RUN)
    messages, meta = _raw(AGENT_RUN)
    calls = [m["name"] for m in messages if m.get("type") == "function_call"]
    outputs = [m["output"] for m in messages if m.get("type") == "function_call_output"]
    assert [s.action.tool_name for s in episode.steps[:-1]] == calls and len(calls) == 10
    assert calls.count("get_action_details") == 4 and calls.count("execute_action") == 4
    seen = [s.observation.text for s in episode.steps[1:]]
    assert seen == [json.loads(o)["text"] for o in outputs] and all(t.startswith('{"meta": null, "content": [')
                                                                    for t in seen)
    assert all(mcpmark.unwrapped(o) is not None for o in outputs)
    assert episode.env["mcpmark"]["tool_outputs_unwrapped"] == 10 and episode.env["mcpmark"]["meta"] == meta
    create = json.loads(episode.steps[9].action.arguments)  # the answer file, its content base64 as GitHub takes it
    assert create["action_name"] == "create_or_update_file_contents"
    body = json.loads(create["body_schema"])
    assert base64.b64decode(body["content"]).decode() == "[Hacker Tools](https://hacker-tools.github.io)"
    assert body["branch"] == "master"
    assert (episode.outcome, episode.agent, episode.terminated) == ("success", "claude-sonnet-4-20250514", True)
    assert meta["turn_count"] == len(episode.steps) == 11
    golden.check(records, GOLDEN / "mcpmark-community-github-klavis-find-legacy-name.json", texts="hash",
                 env_keys=("mcpmark",))


def test_the_sdk_s_text_content_and_other_outputs_are_no_mcpmark_wrapper():
    """Only the exact bytes of MCPMark's `json.dumps` wrapper are read back; the SDK's compact `TextContent` JSON
    (what the model saw), other keys, and a wrapper whose bytes differ stay as they are."""
    wrapped = json.dumps({"type": "text", "text": "result", "annotations": None, "meta": None})
    assert mcpmark.unwrapped(wrapped) == "result"
    assert mcpmark.unwrapped('{"type":"text","text":"result","annotations":null}') is None
    assert mcpmark.unwrapped(json.dumps({"type": "text", "text": "r", "annotations": None, "meta": None, "x": 1})) \
        is None
    assert mcpmark.unwrapped(json.dumps({"type": "text", "text": "é", "annotations": None, "meta": None},
                                        ensure_ascii=False)) is None
    assert mcpmark.unwrapped(None) is None and mcpmark.unwrapped('{"type": "text", "text": ') is None


def test_the_shape_reader_alone_loses_the_run_s_verdict():
    """The same messages.json read by its shape: the calls are all there, but no agent and no outcome."""
    folder = require_shared_sample(SDK_RUN)
    [episode] = [r for r in read_records(by_shape, folder / "messages.json") if isinstance(r, Episode)]
    assert len(episode.steps) == 6 and (episode.outcome, episode.agent) == ("unknown", None)
