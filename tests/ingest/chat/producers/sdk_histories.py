"""Run inside the chat SDKs' venv: one small tool-calling agent loop per vendor SDK (Anthropic Messages, OpenAI
Responses, Gemini `generate_content`) against the scripted model server at URL, each saving its conversation as
apps do, with the SDK's own types dumped (`model_dump`): `anthropic.json` (the `messages` list),
`responses.json` (the `input` items with the response's output items), `gemini.json` (the `contents`). Prints
what it ran (the oracle) as JSON. Usage: sdk_histories.py URL OUTDIR"""

import json
import sys
from pathlib import Path

import anthropic
import openai
from google import genai
from google.genai import types

URL, OUT = sys.argv[1], Path(sys.argv[2])
TASK = "Read notes.txt and stat missing.txt, then say what the notes say."
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = {"read_file": "Read a file", "stat": "Stat a file"}
ran: dict[str, list] = {}


def run_tool(vendor: str, name: str, args: dict) -> tuple[str, bool]:
    out, failed = ("buy milk", False) if name == "read_file" else (f"FileNotFoundError: {args.get('path')}", True)
    ran.setdefault(vendor, []).append({"name": name, "arguments": args, "output": out, "is_error": failed})
    return out, failed


def with_anthropic() -> list:
    client = anthropic.Anthropic(api_key="sk-ant-test", base_url=URL)
    tools = [{"name": n, "description": d, "input_schema": SCHEMA} for n, d in TOOLS.items()]
    messages = [{"role": "user", "content": TASK}]
    for _ in range(4):
        reply = client.messages.create(model="claude-test", max_tokens=512, messages=messages, tools=tools)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return messages
        results = []
        for use in uses:
            out, failed = run_tool("anthropic", use.name, use.input)
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": out, "is_error": failed})
        messages.append({"role": "user", "content": results})
    return messages


def with_responses() -> list:
    client = openai.OpenAI(api_key="sk-test", base_url=f"{URL}/v1")
    tools = [{"type": "function", "name": n, "description": d, "parameters": SCHEMA} for n, d in TOOLS.items()]
    items: list = [{"role": "user", "content": TASK}]
    for _ in range(4):
        reply = client.responses.create(model="gpt-test", input=items, tools=tools)
        items += [o.model_dump(exclude_none=True) for o in reply.output]
        calls = [o for o in reply.output if o.type == "function_call"]
        if not calls:
            return items
        for c in calls:
            out, _ = run_tool("responses", c.name, json.loads(c.arguments))
            items.append({"type": "function_call_output", "call_id": c.call_id, "output": out})
    return items


def with_gemini() -> list:
    client = genai.Client(api_key="gm-test", http_options=types.HttpOptions(base_url=URL))
    declarations = [types.FunctionDeclaration(name=n, description=d, parameters_json_schema=SCHEMA)
                    for n, d in TOOLS.items()]
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=declarations)],
                                         automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    contents = [types.Content(role="user", parts=[types.Part(text=TASK)])]
    for _ in range(4):
        reply = client.models.generate_content(model="gemini-test", contents=contents, config=config)
        contents.append(reply.candidates[0].content)
        calls = reply.function_calls or []
        if not calls:
            break
        parts = []
        for c in calls:
            out, failed = run_tool("gemini", c.name, dict(c.args or {}))
            response = {"error" if failed else "output": out}  # the API's convention for a result and a failure
            parts.append(types.Part.from_function_response(name=c.name, response=response))
        contents.append(types.Content(role="user", parts=parts))
    return [c.model_dump(mode="json", exclude_none=True) for c in contents]


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, run in (("anthropic", with_anthropic), ("responses", with_responses), ("gemini", with_gemini)):
        (OUT / f"{name}.json").write_text(json.dumps(run(), indent=1))
    print(json.dumps({"task": TASK, "ran": ran}))


main()
