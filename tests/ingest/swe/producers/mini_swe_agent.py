"""Run inside a mini-swe-agent venv (1.x or 2.x), never imported by the tests.

`run OUTDIR`: the installed mini-swe-agent's own agent loop, local environment and deterministic test model
solve a tiny bash task (count the .txt files of a folder) and its own writer saves the trajectories:
`submitted/submitted.traj.json` (a listing, a failing command, a format error, the submit command) and
`limited/limited.traj.json` (stopped by the step limit); under 2.x also `toolcall/toolcall.traj.json` (the
same task with the tool-calling test model).

`oracle FILE...`: what mini-swe-agent's own code reads from each file, as JSON: the inspector's steps (its
`_messages_to_steps` pages that begin with a model turn), the command of each turn parsed by the agent's own
action parser (1.x) or recorded in `extra.actions` (2.x), each result's return code, and the exit status.
"""

import json
import os
import re
import sys
from pathlib import Path

import minisweagent
import yaml

V2 = int(minisweagent.__version__.split(".")[0]) >= 2
TASK = "Count the .txt files in the current folder and submit the number."
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && ls *.txt | wc -l"


def _config() -> dict:
    from minisweagent.config import builtin_config_dir

    return yaml.safe_load((builtin_config_dir / "default.yaml").read_text())


def _turn(thought: str, command: str | None, *, toolcall: bool = False, call_id: str = ""):
    if not V2:
        return f"THOUGHT: {thought}\n\n```bash\n{command}\n```"
    from minisweagent.models.test_models import make_output, make_toolcall_output

    if toolcall:
        call = {"id": call_id, "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
        return make_toolcall_output(thought, [call], [{"command": command, "tool_call_id": call_id}])
    return make_output(f"THOUGHT: {thought}\n\n```mswea_bash_command\n{command}\n```", [{"command": command}])


def _format_error():
    if not V2:
        return "THOUGHT: two at once\n\n```bash\nls\n```\n\n```bash\npwd\n```"
    from minisweagent.exceptions import FormatError

    error = FormatError({"role": "user", "content": "Please always provide EXACTLY ONE action.",
                         "extra": {"interrupt_type": "FormatError"}})
    return {"role": "assistant", "content": "THOUGHT: two at once", "extra": {"actions": [{"raise": error}]}}


def _run_one(out: Path, name: str, outputs: list, *, step_limit: int = 0, toolcall: bool = False) -> None:
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment

    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    for n in ("a", "b", "c"):
        (work / f"{n}.txt").write_text(n)
    config = _config()
    agent_config = {**config["agent"], "step_limit": step_limit, "cost_limit": 0}
    path = out / name / f"{name}.traj.json"
    if V2:
        from minisweagent.models.test_models import DeterministicModel, DeterministicToolcallModel

        model = (DeterministicToolcallModel if toolcall else DeterministicModel)(outputs=outputs)
        agent = DefaultAgent(model, LocalEnvironment(cwd=str(work)), **agent_config, output_path=path)
        agent.run(TASK)
        return
    from minisweagent.models.test_models import DeterministicModel
    from minisweagent.run.utils.save import save_traj

    agent = DefaultAgent(DeterministicModel(outputs=outputs), LocalEnvironment(cwd=str(work)), **agent_config)
    exit_status, result = agent.run(TASK)
    save_traj(agent, path, exit_status=exit_status, result=result, print_path=False)


def run(out: Path) -> None:
    session = [_turn("list them", "ls *.txt | wc -l"), _turn("peek", "cat missing.txt"), _format_error(),
               _turn("submit", SUBMIT)]
    _run_one(out, "submitted", session)
    _run_one(out, "limited", [_turn("list them", "ls *.txt | wc -l"), _turn("again", "ls")], step_limit=1)
    if V2:
        _run_one(out, "toolcall", [_turn("list them", "ls *.txt | wc -l", toolcall=True, call_id="call_1"),
                                   _turn("submit", SUBMIT, toolcall=True, call_id="call_2")], toolcall=True)


def _pages(messages: list[dict]) -> list[list[dict]]:
    if V2:
        from minisweagent.run.utilities.inspector import _messages_to_steps
    else:
        from minisweagent.agents.interactive_textual import _messages_to_steps
    return _messages_to_steps(messages)


def oracle(path: Path) -> dict:
    data = json.loads(path.read_text())
    messages = data["messages"]
    turns = [m for m in messages if m.get("role") == "assistant"]
    if V2:
        steps = [p for p in _pages(messages) if p and p[0].get("role") == "assistant"]
        commands = [[a.get("command") for a in (m.get("extra") or {}).get("actions", []) if "command" in a]
                    for m in turns]
        codes = [(m.get("extra") or {}).get("returncode") for m in messages if "returncode" in (m.get("extra") or {})]
    else:
        from minisweagent.agents.default import AgentConfig, DefaultAgent, FormatError

        steps = [p for p in _pages(messages) if any(m["role"] == "assistant" for m in p)]
        parser = DefaultAgent.__new__(DefaultAgent)
        parser.config = AgentConfig(**{k: v for k, v in data["info"]["config"]["agent"].items()
                                       if k in AgentConfig.__dataclass_fields__})
        parser.extra_template_vars, parser.env, parser.model = {}, None, None
        parser.render_template = lambda template, **kw: template  # the error text is not compared
        commands = []
        for m in turns:
            try:
                commands.append([parser.parse_action(m)["action"]])
            except FormatError:
                commands.append([])
        codes = [int(c) for m in messages if m["role"] == "user"
                 for c in re.findall(r"<returncode>(-?\d+)</returncode>", m["content"])]
    return {"steps": len(steps), "commands": commands, "returncodes": codes,
            "exit_status": data["info"]["exit_status"], "submission": data["info"]["submission"],
            "version": minisweagent.__version__}


if __name__ == "__main__":
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    if sys.argv[1] == "run":
        run(Path(sys.argv[2]))
    else:
        print(json.dumps({p: oracle(Path(p)) for p in sys.argv[2:]}))
