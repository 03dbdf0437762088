"""Runs a small tool-calling loop traced by the LangSmith SDK (`wrap_openai` around an `openai` client, the tool
and the loop as `@traceable` runs) against the scripted model server, which also stands in for LangSmith's ingest
API and keeps the run batches the SDK posts.

Run with the `langsmith` venv's Python: `langsmith_run.py BASE_URL OUT_DIR` (BASE_URL ends in `/v1`; the SDK posts
to its parent). Prints the final answer.
"""

import json
import os
import sys


def main(base_url: str) -> None:
    os.environ.update({"LANGSMITH_TRACING": "true", "LANGSMITH_ENDPOINT": base_url.removesuffix("/v1"),
                       "LANGSMITH_API_KEY": "x", "LANGSMITH_PROJECT": "weather"})
    from langsmith import Client, traceable
    from langsmith.wrappers import wrap_openai
    from openai import OpenAI

    client = Client()
    openai = wrap_openai(OpenAI(base_url=base_url, api_key="x"))
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "The current weather of a city.",
                                               "parameters": {"type": "object",
                                                              "properties": {"city": {"type": "string"}}}}}]

    @traceable(run_type="tool", name="get_weather", client=client)
    def get_weather(city: str) -> str:
        return f"The weather in {city} is sunny, 21 C."

    @traceable(run_type="chain", name="weather agent", client=client)
    def agent(question: str) -> str:
        messages = [{"role": "system", "content": "Answer weather questions with the tool."},
                    {"role": "user", "content": question}]
        while True:
            message = openai.chat.completions.create(model="scripted-model-1", messages=messages,
                                                     tools=tools).choices[0].message
            if not message.tool_calls:
                return message.content
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": get_weather(**json.loads(call.function.arguments))})

    answer = agent("What is the weather in Paris and in Oslo?")
    client.flush()
    print(answer)


if __name__ == "__main__":
    main(sys.argv[1])
