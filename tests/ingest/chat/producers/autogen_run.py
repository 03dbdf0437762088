"""Runs AutoGen AgentChat against the scripted model server and saves what it holds the ways its docs show.

Run with the `autogen-agentchat` venv's Python: `autogen_run.py BASE_URL OUT_DIR MODE` (MODE: `agent` (an
AssistantAgent with a `get_weather` tool that reflects on the tool's results) or `team` (the same agent in a
RoundRobinGroupChat that stops on TERMINATE)). Writes `OUT_DIR/messages.json` (`[m.model_dump(mode="json") for m
in result.messages]`) and `OUT_DIR/state.json` (`await agent.save_state()` / `await team.save_state()`). Prints
the last message's text.
"""

import asyncio
import json
import sys
from pathlib import Path

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import TextMentionTermination
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_ext.models.openai import OpenAIChatCompletionClient

TASK = "What is the weather in Paris and in Oslo?"


async def get_weather(city: str) -> str:
    """Tells the weather in a city."""
    return f"The weather in {city} is sunny, 21 C."


async def main(base_url: str, out: Path, mode: str) -> None:
    client = OpenAIChatCompletionClient(
        model="scripted-model-1", base_url=base_url, api_key="sk-scripted",
        model_info={"vision": False, "function_calling": True, "json_output": False, "family": "unknown",
                    "structured_output": False})
    agent = AssistantAgent("weather_agent", model_client=client, tools=[get_weather], reflect_on_tool_use=True,
                           system_message="Answer weather questions with the tool.")
    runner = agent if mode == "agent" else RoundRobinGroupChat(
        [agent], termination_condition=TextMentionTermination("TERMINATE"))
    result = await runner.run(task=TASK)
    (out / "messages.json").write_text(json.dumps([m.model_dump(mode="json") for m in result.messages], indent=1))
    (out / "state.json").write_text(json.dumps(await runner.save_state(), indent=1))
    await client.close()
    print(result.messages[-1].content)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3]))
