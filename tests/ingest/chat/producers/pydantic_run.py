"""Runs a pydantic-ai agent with a `get_weather` tool against the scripted model server and saves its message
history with pydantic-ai's own adapter.

Run with the `pydantic-ai` venv's Python: `pydantic_run.py BASE_URL OUT_DIR MODE` (MODE: `tools`). Writes
`OUT_DIR/history.json` (`ModelMessagesTypeAdapter.dump_json(result.all_messages())`), and `OUT_DIR/oracle.json`:
what the adapter reads back from that file (`validate_json`), each part as `[message kind, part kind, tool name,
args as a dict, content, tool call id]`. Prints the run's output.
"""

import json
import sys
from pathlib import Path

from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessagesTypeAdapter
try:
    from pydantic_ai.models.openai import OpenAIChatModel
except ImportError:  # its name before 1.0
    from pydantic_ai.models.openai import OpenAIModel as OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

TASK = "What is the weather in Paris and in Oslo?"


def main(base_url: str, out: Path, mode: str) -> None:
    model = OpenAIChatModel("scripted-model-1", provider=OpenAIProvider(base_url=base_url, api_key="sk-scripted"))
    agent = Agent(model, instructions="Answer weather questions with the tool.",
                  system_prompt="You are a weather assistant.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Tells the weather in a city."""
        if not city:
            raise ModelRetry("name a city")
        return f"The weather in {city} is sunny, 21 C."

    result = agent.run_sync(TASK)
    data = ModelMessagesTypeAdapter.dump_json(result.all_messages(), indent=1)
    (out / "history.json").write_bytes(data)
    parts = []
    for message in ModelMessagesTypeAdapter.validate_json(data):
        for part in message.parts:
            args = part.args_as_dict() if hasattr(part, "args_as_dict") else None
            content = getattr(part, "content", None)
            parts.append([message.kind, part.part_kind, getattr(part, "tool_name", None), args,
                          content if isinstance(content, str) else None, getattr(part, "tool_call_id", None)])
    (out / "oracle.json").write_text(json.dumps(parts, indent=1))
    print(result.output)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), sys.argv[3])
