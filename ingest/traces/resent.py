"""Which messages of a model call's input an earlier model call of the same episode was already given, by position.

An app re-sends its conversation with every model call, and a graph's nodes give the user's question to several
calls (a query writer, the answer writer, a grader) each under a system prompt of its own: a later call's input
then opens with messages an earlier call's input held in the same places. Those are no new turn of the user; the
messages after them are. Deciding by place, not by text alone, keeps a user who really types the same text again:
that message comes after what any earlier input held, so it is new.

`SentBefore` remembers every prefix of the episode's model inputs (their messages other than system prompts, by
role, text, the result's call id and the turn's call ids) as a running hash, one per prefix, so that a later input
is matched against all the earlier ones in one pass over its messages.

An episode whose model calls are given only what is new since the previous one (the provider holds the
conversation: the Responses API's `previous_response_id`, a server-side conversation) re-sends nothing: once a
call's input opens with a tool result, which no input of a conversation sent whole does, every user message of a
later input is new, so a user who says "yes" twice is heard twice.
"""

from __future__ import annotations

from ingest.transcript import Message


def _key(msg: Message) -> tuple:
    return (msg.role, msg.text, msg.tool_call_id, tuple((c.id, c.name) for c in msg.tool_calls))


class SentBefore:
    """The prefixes of the model inputs an episode's calls were given so far."""

    def __init__(self) -> None:
        self.prefixes: set[int] = set()
        self.held_by_provider = False  # an input opened with a tool result: the calls are sent only what is new

    def held(self, inputs: list[Message]) -> int:
        """The index in `inputs` just past its longest run of leading messages (system prompts aside) that an
        earlier call's input held in the same places; 0 where the first such message is not one of them."""
        running, end = 0, 0
        if self.held_by_provider:
            return 0
        for i, msg in enumerate(inputs):
            if msg.role == "system":
                continue
            running = hash((running, _key(msg)))
            if running not in self.prefixes:
                break
            end = i + 1
        return end

    def add(self, inputs: list[Message]) -> None:
        """Remember a call's input."""
        first = next((m for m in inputs if m.role != "system"), None)
        self.held_by_provider = self.held_by_provider or (first is not None and first.role == "tool")
        running = 0
        for msg in inputs:
            if msg.role != "system":
                running = hash((running, _key(msg)))
                self.prefixes.add(running)
