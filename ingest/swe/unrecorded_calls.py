"""Saying that a coding agent's recording lacks the tool calls its model made.

Some releases of the CLIs record the model's turns but not its calls (Qwen Code 0.1.x's copy of Gemini CLI's
recorder writes none). The steps then read as messages with nothing seen between them; a reader that sees evidence
of tool use in the file says so in `env["calls_not_recorded"]` and a warning, and makes no call up.
"""

from __future__ import annotations

from ingest.record import warn

RULE = "calls_not_recorded"


def went_on_without_prompt(turns: list[tuple[str, str | None, bool]]) -> list[str]:
    """Where the model went on after results it was sent: the places of model turns that answered (text, no call)
    and that another model turn follows with no prompt or result between. `turns`: (role, where, answered) of the
    conversation's messages in order (`assistant`, `user`, `tool`...). A turn of thoughts alone is left out: the
    CLIs record one before they retry a stream that ended without text."""
    return [where or "?" for (role, where, answered), (next_role, _, _) in zip(turns, turns[1:])
            if role == "assistant" and answered and next_role == "assistant"]


def note(env: dict, name: str, evidence: list[str], went_on: list[str], producer: str | None = None) -> None:
    """Record the evidence (and the producer known to drop calls, if any) in `env["calls_not_recorded"]`, with a
    warning; nothing when there is neither."""
    if not evidence and producer is None:
        return
    env[RULE] = {"evidence": evidence, "turns_before_unrecorded_calls": went_on,
                 **({"producer": producer} if producer else {})}
    by = f" (written by {producer})" if producer else ""
    said = (f"the model used tools ({'; '.join(evidence)}) but the recording{by} holds no tool call" if evidence
            else f"the recording{by} cannot hold tool calls: whether the model used tools is unknown")
    warn(env, RULE, f"{name}: {said}; the steps are as recorded, no call made up: env.{RULE}")
