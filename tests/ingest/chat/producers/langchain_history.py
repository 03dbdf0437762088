"""Run inside a langchain-core venv: `write PATH` saves an agent's conversation as LangChain saves message
histories (`messages_to_dict`, the list FileChatMessageHistory keeps in its file); `read PATH` prints what
LangChain's own `messages_from_dict` reads back from it (the oracle), as JSON."""

import json
import sys

from langchain_core.messages import (AIMessage, HumanMessage, SystemMessage, ToolMessage, messages_from_dict,
                                     messages_to_dict)


def conversation():
    return [
        SystemMessage(content="You are a careful file assistant."),
        HumanMessage(content="Read notes.txt and list the folder, then summarize."),
        AIMessage(content="I'll read the file first.",
                  tool_calls=[{"name": "read_file", "args": {"path": "notes.txt"}, "id": "call_1"}]),
        ToolMessage(content="buy milk\ncall Ana", tool_call_id="call_1", name="read_file"),
        AIMessage(content="", tool_calls=[{"name": "list_dir", "args": {"path": "."}, "id": "call_2"},
                                          {"name": "stat", "args": {"path": "missing.txt"}, "id": "call_3"}]),
        ToolMessage(content="notes.txt\ntodo.md", tool_call_id="call_2", name="list_dir"),
        ToolMessage(content="FileNotFoundError: missing.txt", tool_call_id="call_3", name="stat", status="error"),
        AIMessage(content="notes.txt says to buy milk and call Ana; the folder also holds todo.md."),
    ]


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "write":
        with open(path, "w") as f:
            json.dump(messages_to_dict(conversation()), f)
        return
    with open(path) as f:
        messages = messages_from_dict(json.load(f))
    print(json.dumps([{"type": m.type, "content": m.content,
                       "tool_calls": [{"name": c["name"], "args": c["args"], "id": c["id"]}
                                      for c in getattr(m, "tool_calls", None) or []],
                       "tool_call_id": getattr(m, "tool_call_id", None),
                       "status": getattr(m, "status", None)} for m in messages]))


main()
