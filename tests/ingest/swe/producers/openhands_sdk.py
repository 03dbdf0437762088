"""Run inside an openhands-sdk venv, never imported by the tests.

`run OUTDIR`: the SDK's own agent loop, with its terminal and file-editor tools in a local workspace and its
scripted test model (`openhands.sdk.testing.TestLLM`), solves a tiny task (count the .txt files of a folder)
and persists the conversation (`OUTDIR/conversations/<id>/base_state.json` + `events/`): a listing, a
failing command, a file view, a parallel pair of calls in one response, then `finish`. A second conversation
stops before finishing (the script runs out after one command: the SDK records an error status).

Then prints, as JSON, what the SDK's own event models read back from each conversation's files (the oracle):
for every event file in index order, the event class and, for actions, the tool, the action class and the
terminal command, for observations the observation class, its exit code and error flag; and the
conversation's execution status.
"""

import json
import sys
from pathlib import Path

TASK = "Count the .txt files in the workspace and tell me the number."


def _conversation(out: Path, work: Path, turns: list, conversation_id: str) -> None:
    from openhands.sdk import Agent, Conversation
    from openhands.sdk.llm import Message, MessageToolCall, TextContent
    from openhands.sdk.testing import TestLLM
    from openhands.sdk.tool import Tool
    from openhands.tools.file_editor import FileEditorTool
    from openhands.tools.terminal import TerminalTool

    def response(thought: str, *calls: tuple[str, str, dict]) -> Message:
        return Message(role="assistant", content=[TextContent(text=thought)], tool_calls=[
            MessageToolCall(id=call_id, name=name, arguments=json.dumps(args), origin="completion")
            for call_id, name, args in calls])

    llm = TestLLM.from_messages([response(*t) for t in turns], model="test-model")
    tools = [Tool(name=TerminalTool.name, params={"terminal_type": "subprocess"}), Tool(name=FileEditorTool.name)]
    agent = Agent(llm=llm, tools=tools)
    import uuid

    conversation = Conversation(agent=agent, workspace=str(work), persistence_dir=str(out / "conversations"),
                                conversation_id=uuid.UUID(conversation_id), visualizer=None)
    conversation.send_message(TASK)
    try:
        conversation.run()
    except Exception as e:  # the scripted model ran out: the SDK records it; the files are what we read
        print(f"run ended: {type(e).__name__}", file=sys.stderr)
    conversation.close()


def run(out: Path) -> None:
    from openhands.tools.terminal import TerminalTool

    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    for n in ("a", "b", "c"):
        (work / f"{n}.txt").write_text(n)
    term = TerminalTool.name
    finished = [
        ("Let me count them.", ("call_1", term, {"command": "ls *.txt | wc -l"})),
        ("Peek at a missing file.", ("call_2", term, {"command": "cat missing.txt"})),
        ("Look at one.", ("call_3", "file_editor", {"command": "view", "path": str(work / "a.txt")})),
        ("Two at once.", ("call_4", term, {"command": "echo one"}), ("call_5", term, {"command": "echo two"})),
        ("Done.", ("call_6", "finish", {"message": "There are 3 .txt files."})),
    ]
    _conversation(out, work, finished, "00000000-0000-4000-8000-000000000001")
    _conversation(out, work, [("Let me count them.", ("call_1", term, {"command": "ls"}))],
                  "00000000-0000-4000-8000-000000000002")


def oracle(folder: Path) -> dict:
    from openhands.sdk.conversation.persistence_const import EVENT_NAME_RE
    from openhands.sdk.event import ActionEvent, Event, ObservationEvent

    files = sorted(((int(m.group("idx")), p) for p in (folder / "events").iterdir()
                    if (m := EVENT_NAME_RE.match(p.name))), key=lambda t: t[0])
    events = []
    for _, path in files:
        event = Event.model_validate_json(path.read_text())
        seen = {"kind": type(event).__name__}
        if isinstance(event, ActionEvent):
            action = event.action
            seen |= {"tool": event.tool_name, "action": type(action).__name__ if action else None,
                     "command": getattr(action, "command", None), "call_id": event.tool_call_id}
        elif isinstance(event, ObservationEvent):
            obs = event.observation
            seen |= {"observation": type(obs).__name__, "exit_code": getattr(obs, "exit_code", None),
                     "is_error": obs.is_error, "call_id": event.tool_call_id}
        events.append(seen)
    state = json.loads((folder / "base_state.json").read_text())
    return {"events": events, "execution_status": state.get("execution_status")}


if __name__ == "__main__":
    out = Path(sys.argv[2])
    if sys.argv[1] == "run":
        run(out)
    folders = sorted(p for p in (out / "conversations").iterdir() if p.is_dir())
    import openhands.sdk

    print(json.dumps({"version": getattr(openhands.sdk, "__version__", None),
                      "conversations": {p.name: oracle(p) for p in folders}}))
