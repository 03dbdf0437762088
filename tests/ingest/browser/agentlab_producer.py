"""Run one AgentLab / BrowserGym experiment with a scripted agent and write its folder, then print what the
producer's own loader (`ExpResult`) reads back from it, as JSON. Runs inside a producer venv
(`.venv/producers/agentlab-<version>/`, see the Makefile), not the project's.

    agentlab_producer.py write OUT_ROOT START_URL   -> prints {"exp_dir": ..., "oracle": what read prints}
    agentlab_producer.py read EXP_DIR               -> prints the steps as ExpResult loads them

`write` reads the folder back from disk in the same process (one import of AgentLab, ~15 s, not two).

The task is BrowserGym's open-ended task (start page, free goal) with a check of the page added, so that the
episode ends the way benchmark tasks end it: reward 1 and `terminated` once the page greets the name typed.
The agent answers like AgentLab's GenericAgent: an `AgentInfo` holding its reasoning, the `Discussion` of
chat messages it would have sent to a model (none is called) and the model arguments in `extra_info`. Debian's
chromium stands in for Playwright's browser download (no network here).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic"]
GOAL = "Greet Ada on the greeter page, then tell the user what it said."


def use_debian_chromium() -> None:
    from playwright.sync_api._generated import BrowserType

    launch = BrowserType.launch

    def launch_debian_chromium(self, *args, **kwargs):
        kwargs.setdefault("executable_path", CHROMIUM)
        kwargs["args"] = list(kwargs.get("args") or []) + CHROMIUM_ARGS
        return launch(self, *args, **kwargs)

    BrowserType.launch = launch_debian_chromium


def loop_module():
    try:  # agentlab >= 0.4 has its own experiment loop
        import agentlab.experiments.loop as loop
    except ImportError:  # agentlab 0.3 runs BrowserGym's
        import browsergym.experiments.loop as loop
    return loop


def register_greeter_task() -> None:
    from browsergym.core.registration import register_task
    from browsergym.core.task import OpenEndedTask

    class GreeterTask(OpenEndedTask):
        """The open-ended task on the greeter page; done (reward 1) once the page greets someone."""

        @classmethod
        def get_task_id(cls):
            return "greeter"

        def validate(self, page, chat_messages):
            reward, done, msg, info = super().validate(page, chat_messages)
            greeting = page.inner_text("#out") if page.query_selector("#out") else ""
            if greeting.startswith("Hi "):
                return 1.0, True, msg, {"greeting": greeting}
            return reward, done, msg, info

    register_task(GreeterTask.get_task_id(), GreeterTask)


def bid(axtree: str, role: str, name: str) -> str:
    match = re.search(rf"\[(\w+)\] {role} '{re.escape(name)}'", axtree)
    if not match:
        raise RuntimeError(f"no {role} {name!r} in the accessibility tree:\n{axtree[:2000]}")
    return match.group(1)


def make_agent_classes():
    from agentlab.llm.chat_api import OpenRouterModelArgs
    from agentlab.llm.llm_utils import AIMessage, Discussion, HumanMessage, SystemMessage
    from browsergym.experiments.agent import Agent, AgentInfo

    loop = loop_module()

    class ScriptedAgent(Agent):
        """Types a name, waits, presses Greet: what GenericAgent records, with answers written in advance."""

        def __init__(self, model_args):
            self.model_args, self.turn = model_args, 0

        def get_action(self, obs):
            axtree = obs["axtree_txt"]
            plans = [
                ("The name goes in the Name box.", f"fill('{bid(axtree, 'textbox', 'Name')}', 'Ada')"),
                ("Let the page settle before pressing the button.", "noop(200)"),
                ("Now press Greet.", f"click('{bid(axtree, 'button', 'Greet')}')"),
                ("The page greeted Ada.", "send_msg_to_user('The page says Hi Ada')"),
            ]
            think, action = plans[min(self.turn, len(plans) - 1)]
            self.turn += 1
            answer = f"<think>\n{think}\n</think>\n<action>\n{action}\n</action>"
            chat = Discussion([SystemMessage("You are an agent using a web browser."),
                               HumanMessage(f"# Goal\n{GOAL}\n\n# Observation\n{axtree}"), AIMessage(answer)])
            return action, AgentInfo(think=think, chat_messages=chat, stats={"n_retry": 0},
                                     extra_info={"chat_model_args": asdict(self.model_args)})

    @dataclass
    class ScriptedAgentArgs(loop.AbstractAgentArgs):
        agent_name: str = "ScriptedAgent"
        chat_model_args: OpenRouterModelArgs = field(default_factory=lambda: OpenRouterModelArgs(
            model_name="scripted/no-model", max_total_tokens=8192, max_input_tokens=8000, max_new_tokens=192))

        def make_agent(self):
            return ScriptedAgent(self.chat_model_args)

    # pickled by name: exp_args.pkl refers to these as __main__.<name>, as a user's own script writes them
    ScriptedAgentArgs.__module__ = ScriptedAgent.__module__ = "__main__"
    ScriptedAgentArgs.__qualname__, ScriptedAgent.__qualname__ = "ScriptedAgentArgs", "ScriptedAgent"
    sys.modules["__main__"].ScriptedAgentArgs, sys.modules["__main__"].ScriptedAgent = ScriptedAgentArgs, ScriptedAgent
    return ScriptedAgentArgs


def write(out_root: str, start_url: str) -> None:
    use_debian_chromium()
    register_greeter_task()
    loop = loop_module()
    agent_args = make_agent_classes()()
    env_args = loop.EnvArgs(task_name="greeter", task_seed=0, max_steps=8, headless=True,
                            viewport={"width": 640, "height": 480},
                            task_kwargs={"start_url": start_url, "goal": GOAL})
    exp = loop.ExpArgs(agent_args=agent_args, env_args=env_args)
    exp.prepare(Path(out_root))
    exp.run()
    print(json.dumps({"exp_dir": str(exp.exp_dir), "oracle": oracle(str(exp.exp_dir))}))


def oracle(exp_dir: str) -> dict:
    """The steps as the producer's own loader reads them from disk: what the reader is compared with."""
    loop = loop_module()
    result = loop.ExpResult(Path(exp_dir))
    steps = []
    for info in result.steps_info:
        obs = info.obs or {}
        steps.append({"step": info.step, "action": info.action, "reward": info.reward,
                      "terminated": info.terminated, "truncated": info.truncated,
                      "url": (obs.get("open_pages_urls") or [None])[0], "axtree_txt": obs.get("axtree_txt"),
                      "think": info.agent_info.get("think") if info.agent_info else None,
                      "agent_info_class": f"{type(info.agent_info).__module__}.{type(info.agent_info).__name__}",
                      "chat_classes": sorted({f"{type(m).__module__}.{type(m).__name__}"
                                              for m in (info.agent_info or {}).get("chat_messages") or []}),
                      "chat_class": type((info.agent_info or {}).get("chat_messages")).__name__})
    return {"steps": steps, "summary": result.summary_info, "loop": loop.__name__}


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    else:
        print(json.dumps(oracle(sys.argv[2])))
