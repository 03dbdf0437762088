"""Generated coding-agent sessions for the readers' benchmark (`bench/readers.py`): the chat-log readers through
`ingest.transcript` on sessions as long as real ones (the bundled samples hold a few turns), each file its own.

- `claude_code_session(path, seed)`: a Claude Code transcript (`~/.claude/projects/<p>/<session>.jsonl`): a
  prompt, then 150-250 turns, each an assistant message streamed as one line per content block sharing
  `message.id` (thinking now and then, text, a `Read` / `Bash` / `Grep` / `Edit` call) and the user line with its
  `tool_result` and the structured `toolUseResult`, `parentUuid` chaining them; a subagent (`isSidechain`) and
  the CLI's bookkeeping (`file-history-snapshot`) among them; about 1-2 MB.
- `codex_rollout(path, seed)`: a Codex CLI rollout: `session_meta`, `turn_context`, then 150-250 turns of
  `reasoning`, an `exec_command` `function_call` or an `apply_patch` `custom_tool_call` with its output, the
  `token_count` events, messages to the user; about 1-2 MB.
Tool outputs are source files and command output of random words and code, distinct per seed.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import uuid
from pathlib import Path

from bench.har_corpus import _CODE, _WORDS, _text

_START = dt.datetime(2025, 11, 19, 22, tzinfo=dt.timezone.utc)


def _at(ms: int) -> str:
    return (_START + dt.timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _uuid(rnd: random.Random) -> str:
    return str(uuid.UUID(int=rnd.getrandbits(128), version=4))


def _claude_call(rnd: random.Random) -> tuple[str, dict, str]:
    """(tool name, input, result text) of one Claude Code tool call."""
    name = rnd.choice(["Read", "Read", "Bash", "Grep", "Edit"])
    path = f"/work/src/pkg/module_{rnd.getrandbits(20):05x}.py"
    if name == "Read":
        return name, {"file_path": path}, _text(rnd, _CODE, rnd.randint(1_000, 12_000))
    if name == "Bash":
        return name, {"command": f"pytest -q tests/test_{rnd.getrandbits(16):04x}.py", "description": "Run tests"}, \
            _text(rnd, _WORDS, rnd.randint(200, 4_000))
    if name == "Grep":
        return name, {"pattern": rnd.choice(_CODE), "path": "/work/src"}, "\n".join(
            f"/work/src/m{rnd.randint(1, 99)}.py:{rnd.randint(1, 900)}: {_text(rnd, _CODE, 40)}" for _ in range(20))
    old = _text(rnd, _CODE, rnd.randint(50, 400))
    return name, {"file_path": path, "old_string": old, "new_string": old + "\n" + _text(rnd, _CODE, 80)}, \
        f"The file {path} has been updated."


def claude_code_session(path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    session, lines, ms = _uuid(rnd), [], 0
    base = {"userType": "external", "cwd": "/work/src", "sessionId": session, "version": "2.0.46",
            "gitBranch": "main"}

    def put(obj: dict, parent: str | None, sidechain: bool = False) -> str:
        nonlocal ms
        ms += rnd.randint(200, 9_000)
        me = _uuid(rnd)
        lines.append({"parentUuid": parent, "isSidechain": sidechain, **base, "uuid": me, "timestamp": _at(ms),
                      **obj})
        return me

    def turn(parent: str, sidechain: bool = False) -> str:
        msg_id, call_id = f"msg_{rnd.getrandbits(80):020x}", f"toolu_{rnd.getrandbits(80):020x}"
        name, args, result = _claude_call(rnd)
        blocks = [{"type": "text", "text": _text(rnd, _WORDS, rnd.randint(40, 600))},
                  {"type": "tool_use", "id": call_id, "name": name, "input": args}]
        if rnd.random() < 0.3:
            blocks.insert(0, {"type": "thinking", "thinking": _text(rnd, _WORDS, rnd.randint(100, 1_500)),
                              "signature": f"{rnd.getrandbits(256):064x}"})
        for block in blocks:
            parent = put({"type": "assistant", "requestId": f"req_{rnd.getrandbits(64):x}", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                "content": [block], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 3, "cache_read_input_tokens": rnd.randint(1_000, 140_000),
                          "output_tokens": rnd.randint(10, 900)}}}, parent, sidechain)
        return put({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": result, "is_error": False}]},
            "toolUseResult": {"stdout": result[:200], "stderr": "", "interrupted": False}}, parent, sidechain)

    parent = put({"type": "user", "message": {"role": "user", "content": _text(rnd, _WORDS, 300)}}, None)
    for i in range(rnd.randint(150, 250)):
        parent = turn(parent)
        if i % 40 == 0:
            lines.append({"type": "file-history-snapshot", "messageId": _uuid(rnd), "snapshot": {
                "trackedFileBackups": {}, "timestamp": _at(ms)}, "isSnapshotUpdate": False})
        if i == 60:  # a subagent's own chain
            side = put({"type": "user", "message": {"role": "user", "content": _text(rnd, _WORDS, 200)}}, None, True)
            for _ in range(rnd.randint(5, 15)):
                side = turn(side, True)
    put({"type": "assistant", "message": {"id": f"msg_{rnd.getrandbits(80):020x}", "type": "message",
         "role": "assistant", "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn",
         "content": [{"type": "text", "text": _text(rnd, _WORDS, 400)}]}}, parent)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def codex_rollout(path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    session, lines, ms = _uuid(rnd), [], 0

    def put(kind: str, payload: dict) -> None:
        nonlocal ms
        ms += rnd.randint(100, 6_000)
        lines.append({"timestamp": _at(ms), "type": kind, "payload": payload})

    put("session_meta", {"id": session, "timestamp": _at(0), "cwd": "/work/src", "originator": "codex_cli_rs",
                         "cli_version": "0.60.1", "source": "cli", "model_provider": "openai"})
    put("turn_context", {"cwd": "/work/src", "model": "gpt-5-codex", "approval_policy": "never",
                         "sandbox_policy": {"type": "workspace-write"}})
    prompt = _text(rnd, _WORDS, 300)
    put("event_msg", {"type": "user_message", "message": prompt})
    put("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]})
    for _ in range(rnd.randint(150, 250)):
        put("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": _text(
            rnd, _WORDS, rnd.randint(60, 600))}], "encrypted_content": f"{rnd.getrandbits(512):0128x}"})
        call_id = f"call_{rnd.getrandbits(96):024x}"
        if rnd.random() < 0.8:
            cmd = f"sed -n 1,200p src/module_{rnd.getrandbits(16):04x}.py"
            put("response_item", {"type": "function_call", "name": "exec_command",
                                  "arguments": json.dumps({"cmd": cmd}), "call_id": call_id})
            put("response_item", {"type": "function_call_output", "call_id": call_id,
                                  "output": _text(rnd, _CODE, rnd.randint(300, 10_000))})
        else:
            patch = f"*** Begin Patch\n*** Update File: src/m.py\n+{_text(rnd, _CODE, rnd.randint(100, 900))}\n*** End Patch"
            put("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": patch,
                                  "call_id": call_id})
            put("response_item", {"type": "custom_tool_call_output", "call_id": call_id,
                                  "output": json.dumps({"output": "Success.", "metadata": {"exit_code": 0}})})
        put("event_msg", {"type": "token_count", "info": {"total_token_usage": {
            "input_tokens": rnd.randint(1_000, 90_000), "output_tokens": rnd.randint(10, 900)}}})
    answer = _text(rnd, _WORDS, 400)
    put("event_msg", {"type": "agent_message", "message": answer})
    put("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]})
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))


def harbor_trial(folder: Path, seed: int) -> None:
    """A Harbor trial folder (`result.json`, `agent/trajectory.json`, `verifier/reward.txt` and
    `test-stdout.txt`) whose ATIF v1.5 trajectory is a Terminus 2 run of 100-200 agent turns: each turn's JSON
    reply (analysis, plan, `commands` of keystrokes), its tool calls and the terminal screen after them, its
    metrics; about 0.5-1.5 MB."""
    rnd = random.Random(seed)
    trial = f"task-{seed:05d}__{rnd.getrandbits(32):08x}"
    steps = [{"step_id": 1, "timestamp": _at(0), "source": "user",
              "message": "Task Description:\n" + _text(rnd, _WORDS, 600)}]
    ms = 0
    for i in range(rnd.randint(100, 200)):
        ms += rnd.randint(500, 20_000)
        commands = [{"keystrokes": f"{rnd.choice(['cat', 'grep -n x', 'python3', 'ls -la'])} "
                                   f"src/m{rnd.getrandbits(16):04x}.py\n", "duration": 0.5} for _ in range(rnd.randint(1, 3))]
        reply = {"analysis": _text(rnd, _WORDS, rnd.randint(100, 800)), "plan": _text(rnd, _WORDS, 200),
                 "commands": commands, "task_complete": False}
        calls = [{"tool_call_id": f"call_{i}_{j}", "function_name": "bash_command", "arguments": c}
                 for j, c in enumerate(commands)]
        screen = "New Terminal Output:\n\n" + "".join(f"root@box:/app# {c['keystrokes']}" + _text(
            rnd, _CODE, rnd.randint(200, 3_000)) + "\n" for c in commands)
        steps.append({"step_id": i + 2, "timestamp": _at(ms), "source": "agent", "model_name": "openai/gpt-5",
                      "message": json.dumps(reply, indent=2), "tool_calls": calls,
                      "observation": {"results": [{"content": screen}]},
                      "metrics": {"prompt_tokens": rnd.randint(1_000, 90_000), "completion_tokens": rnd.randint(50, 900),
                                  "cost_usd": rnd.random() / 100}})
    trajectory = {"schema_version": "ATIF-v1.5", "session_id": _uuid(rnd), "agent": {
        "name": "terminus-2", "version": "2.0.0", "model_name": "openai/gpt-5", "extra": {"parser": "json"}},
        "steps": steps, "final_metrics": {"total_prompt_tokens": 1_000_000, "total_completion_tokens": 40_000}}
    reward = rnd.choice([0, 1])
    result = {"id": _uuid(rnd), "task_name": f"task-{seed:05d}", "trial_name": trial, "source": "terminal-bench",
              "agent_info": {"name": "terminus-2", "version": "2.0.0",
                             "model_info": {"name": "gpt-5", "provider": "openai"}},
              "verifier_result": {"rewards": {"reward": reward}}, "exception_info": None,
              "started_at": _at(0), "finished_at": _at(ms)}
    (folder / "agent").mkdir(parents=True)
    (folder / "verifier").mkdir()
    (folder / "result.json").write_text(json.dumps(result, indent=4))
    (folder / "agent" / "trajectory.json").write_text(json.dumps(trajectory, indent=2))
    (folder / "verifier" / "reward.txt").write_text(f"{reward}\n")
    (folder / "verifier" / "test-stdout.txt").write_text(_text(rnd, _WORDS, 2_000))
