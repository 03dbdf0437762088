"""The conversation a computer-use loop keeps beside an OSWorld result folder's traj.jsonl: `messages.json`, as
the Anthropic computer-use agent of OSWorld forks writes it (richartkeil/OSWorld-Sec-Eval @ 5f1ef45,
`mm_agents/computer_use.py`, `ComputerUseAgent.predict`): before each model call the whole list it sends, its
screenshots replaced by a placeholder, so the file left is the one of the run's last call.

Its messages, in the order the loop builds them: the system prompt ending `You are asked to complete the
following task: <instruction>`; then per earlier turn the shell tool's result (`The command completed
successfully and produced no output.` or `The command completed with exit code N.\\nThe output is:\\n...`)
when the turn before ran one, `Here is the next screenshot.` (with an image, or `[Screenshot removed to save
tokens]`), the model's text of that turn (`No valid action` when it wrote none) and `Executed a translation of
your issued tool call: [<code>, ...]` (the Python list of the lines it logged to traj.jsonl, or `None`); last,
the newest shell result and screenshot. The model's tool calls themselves are not in it, only their
translation, and the reply to the last call (the one that said `DONE`) never is.

What the reader takes from it: the task (where the folder names none), each turn's text as the reasoning of
the first traj.jsonl line of its executed list (found in order by the logged code, so a loop that kept only
its last turns in the prompt still lands each text on its own lines), and each shell result as the text of
the observation that followed the command. The system prompt is kept in `env`. A message of a shape the loop
does not write, and a turn whose lines are not in traj.jsonl, are kept raw in `env` with a warning (a turn that
executed nothing has no line: it is kept in `env` as such); a file that is no message list is a quarantine row
naming it, and the run is read without it.
"""

from __future__ import annotations

import ast
import re

import orjson

from ingest.record import Observation, Rejected, Step, warn

NAME = "messages.json"
_TASK = "\nYou are asked to complete the following task: "
_EXECUTED = "Executed a translation of your issued tool call: "
_SCREENSHOT = "Here is the next screenshot."
_SHELL = re.compile(r"The command completed (?:successfully and produced no output\.|with exit code (-?\d+)\.)")


def _texts(message: dict) -> list[str] | None:
    """The texts of a message, or None when it is not a message of the loop's shape."""
    content = message.get("content")
    if set(message) != {"role", "content"} or not isinstance(content, list):
        return None
    if not all(isinstance(c, dict) and c.get("type") in ("text", "image") for c in content):
        return None
    return [c.get("text") for c in content if c.get("type") == "text" and isinstance(c.get("text"), str)]


def _executed(text: str) -> list[str] | None:
    """The code lines of an `Executed a translation` message (a Python literal: read as data, never run)."""
    try:
        codes = ast.literal_eval(text[len(_EXECUTED):].strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if codes is None:
        return []
    return [c for c in codes if isinstance(c, str)] if isinstance(codes, list) else None


def conversation(data: bytes) -> dict:
    """The loop's conversation: `system` (the system prompt), `task`, `turns` (each `thought`, `codes`,
    `shell`: the shell result that came after its lines), `unread` (messages of another shape). Raises
    ValueError when the file is no list of messages."""
    messages = orjson.loads(data)
    if not isinstance(messages, list):
        raise ValueError("not a list of messages")
    talk: dict = {"system": None, "task": None, "turns": [], "unread": []}
    thought = None
    for i, message in enumerate(messages):
        texts = _texts(message) if isinstance(message, dict) else None
        role = message.get("role") if isinstance(message, dict) else None
        if texts is None or len(texts) != 1:
            talk["unread"].append({"message": i, "raw": message})
        elif role == "system" and talk["system"] is None:
            talk["system"] = texts[0]
            talk["task"] = texts[0].partition(_TASK)[2].strip() or None
        elif role == "assistant":
            thought = texts[0]
        elif role == "user" and texts[0].startswith(_EXECUTED) and _executed(texts[0]) is not None:
            talk["turns"].append({"thought": thought, "codes": _executed(texts[0]), "shell": None, "message": i})
            thought = None
        elif role == "user" and (shell := _SHELL.match(texts[0])) and talk["turns"]:
            talk["turns"][-1]["shell"] = (texts[0], int(shell.group(1) or 0))
        elif not (role == "user" and texts[0].startswith(_SCREENSHOT)):
            talk["unread"].append({"message": i, "raw": message})
    return talk


def _find(codes: list[str], actions: list, start: int) -> int | None:
    """The first index from `start` where the steps' logged actions are `codes`, in order."""
    for j in range(start, len(actions) - len(codes) + 1):
        if actions[j:j + len(codes)] == codes:
            return j
    return None


def apply(talk: dict, steps: list[Step], actions: list, env: dict, final: Observation | None) -> None:
    """Put the conversation on the steps (`actions`: each step's logged traj.jsonl action): the turns' texts as
    reasoning, the shell results on the observations after them, the rest in `env` (see the docstring)."""
    env["conversation"] = {"file": NAME, "system_prompt": talk["system"], "turns": len(talk["turns"])}
    cursor, unmatched, idle = 0, [], []
    for turn in talk["turns"]:
        kept = {k: turn[k] for k in ("message", "thought", "codes", "shell")}
        at = _find(turn["codes"], actions, cursor) if turn["codes"] else None
        if at is None:
            (unmatched if turn["codes"] else idle).append(kept)
            continue
        cursor = at + len(turn["codes"])
        if turn["thought"] and steps[at].reasoning is None:
            steps[at].reasoning = turn["thought"]
        after = steps[cursor].observation if cursor < len(steps) else final
        if turn["shell"] and after is not None:
            after.text, after.exit_code = turn["shell"]
            after.kind = "terminal" if after.kind == "none" else after.kind
    if idle:  # the loop ran nothing for these replies, so traj.jsonl has no line of theirs
        env["conversation"]["turns_without_action"] = idle
    if unmatched:
        env["conversation"]["turns_not_in_traj"] = unmatched
        warn(env, "osworld.conversation_unmatched", f"{NAME}: {len(unmatched)} turn(s) whose executed lines are "
             "not in traj.jsonl; kept raw in env.conversation.turns_not_in_traj")
    if talk["unread"]:
        env["conversation"]["unread_messages"] = talk["unread"]
        warn(env, "osworld.conversation_unread", f"{NAME}: {len(talk['unread'])} message(s) of a shape the "
             "computer-use loop does not write; kept raw in env.conversation.unread_messages")


def read_conversation(source) -> tuple[dict | None, Rejected | None]:
    """The conversation of the folder's `messages.json` (None without one), or the quarantine row of one that is
    no message list."""
    if not source.exists(NAME):
        return None, None
    try:
        return conversation(source.read_bytes(NAME)), None
    except (orjson.JSONDecodeError, ValueError) as e:
        return None, Rejected("parse_error", f"{NAME}: not the computer-use loop's conversation ({e}); the run is "
                              "read without it", NAME)
