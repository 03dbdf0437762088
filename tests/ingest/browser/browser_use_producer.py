"""Runs inside a browser-use venv (`.venv/producers/browser-use-<version>`, made by `make parts`); started by
tests/ingest/browser/test_browser_use_producer.py, which serves the page and the scripted model.

    python browser_use_producer.py OUT_DIR START_URL MODEL_BASE_URL

browser-use's `Agent` drives Debian's chromium (headless, over CDP) with its `ChatOpenAI` pointed at the scripted
model server (`base_url`), then saves its history (`AgentHistoryList.save_to_file`) to OUT_DIR/agent_history.json.
Its downloads go to OUT_DIR-downloads beside OUT_DIR, and the empty downloads folder of the default profile
browser-use makes when imported is removed (its path in the output's `default_downloads`).
The last line of stdout is JSON: the file, and what browser-use's own loader (`AgentHistoryList.load_from_file`
with the agent's output model) reads back from it: per step the actions, the interacted elements, the URL, the
results, and the final `is_done` / `is_successful`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic"]
TASK = "Open the greeter page, greet Ada, then follow the link to the second page and report what it says."


def _quiet() -> None:
    # no telemetry, no cloud sync, no config written under the real HOME
    os.environ.update({"ANONYMIZED_TELEMETRY": "false", "BROWSER_USE_CLOUD_SYNC": "false",
                       "BROWSER_USE_LOGGING_LEVEL": "warning", "OPENAI_API_KEY": "scripted"})


async def run(out: Path, start_url: str, model_url: str) -> Path:
    from browser_use import Agent, BrowserProfile, BrowserSession
    from browser_use.llm import ChatOpenAI

    # downloads: a folder of the test's beside OUT_DIR (by default browser-use makes one under /tmp a profile)
    profile = BrowserProfile(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, user_data_dir=None,
                             viewport={"width": 800, "height": 600}, window_size={"width": 800, "height": 600},
                             keep_alive=False, enable_default_extensions=False,
                             downloads_path=out.parent / f"{out.name}-downloads")
    llm = ChatOpenAI(model="gpt-4.1-mini", base_url=f"{model_url}/v1", api_key="scripted", max_retries=0)
    # the settings each release has (the judge and the planner came after 0.7): the run is one request a step
    wanted = {"tools": _tools(), "use_judge": False, "enable_planning": False, "directly_open_url": False,
              "use_vision": True, "max_actions_per_step": 1, "max_failures": 2, "calculate_cost": False}
    known = inspect.signature(Agent.__init__).parameters
    session = BrowserSession(browser_profile=profile)
    agent = Agent(task=f"{TASK} The page is {start_url}", llm=llm, browser_session=session,
                  **{k: v for k, v in wanted.items() if k in known})
    history = await agent.run(max_steps=8)
    path = out / "agent_history.json"
    history.save_to_file(str(path))
    return path


def _tools():
    from browser_use.tools.service import Tools

    tools = Tools()
    if hasattr(tools, "set_coordinate_clicking"):  # browser-use turns it on by the model's name (0.8 and later)
        tools.set_coordinate_clicking(True)
    return tools


def oracle(path: Path) -> dict:
    from browser_use import Agent  # noqa: F401 (the loader needs the agent's output model)
    from browser_use.agent.views import AgentHistoryList, AgentOutput
    output_model = AgentOutput.type_with_custom_actions(_tools().registry.create_action_model())
    history = AgentHistoryList.load_from_file(str(path), output_model)
    steps = []
    for item in history.history:
        chosen = item.model_output.action if item.model_output else []
        actions = [a.model_dump(exclude_none=True, mode="json") for a in chosen]
        elements = [e.to_dict() if e else None for e in item.state.interacted_element]
        steps.append({"actions": actions, "url": item.state.url, "title": item.state.title,
                      "elements": elements, "screenshot": item.state.screenshot_path,
                      "results": [r.model_dump(exclude_none=True, mode="json") for r in item.result]})
    return {"history": str(path), "steps": steps, "is_done": history.is_done(),
            "is_successful": history.is_successful(), "final_result": history.final_result()}


def main() -> None:
    _quiet()
    out, start_url, model_url = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    out.mkdir(parents=True, exist_ok=True)
    try:
        path = asyncio.run(run(out, start_url, model_url))
    finally:
        default = _remove_default_downloads()
    print(json.dumps({**oracle(path), "default_downloads": default}))


def _remove_default_downloads() -> str | None:
    """browser-use builds a default profile when it is imported (`DEFAULT_BROWSER_PROFILE`), which makes its own
    empty downloads folder (`browser-use-downloads-<id>`: under /tmp in 0.7, whatever TMPDIR says): this process's
    is removed. Returns its path."""
    from browser_use.browser import session

    default = getattr(getattr(session, "DEFAULT_BROWSER_PROFILE", None), "downloads_path", None)
    if default is not None and Path(default).name.startswith("browser-use-downloads-"):
        try:
            Path(default).rmdir()  # empty: nothing was downloaded with the default profile
        except OSError:
            pass
    return None if default is None else str(default)


if __name__ == "__main__":
    main()
