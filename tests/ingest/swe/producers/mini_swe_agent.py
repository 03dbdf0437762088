"""Run inside a mini-swe-agent venv (1.x or 2.x), never imported by the tests.

`run OUTDIR`: the installed mini-swe-agent's own agent loop, local environment and litellm model (answered
by litellm's `mock_response`, so no network) solve a tiny bash task (count the .txt files of a folder) and its own writer saves the trajectories:
`submitted/submitted.traj.json` (a listing, a failing command, a format error, the submit command) and
`limited/limited.traj.json` (stopped by the step limit); under 2.x also `toolcall/toolcall.traj.json` (the
same task with mini-swe-agent's tool-calling test model).

`exit-statuses OUTDIR JSON`: mini-swe-agent's batch progress manager writes its `exit_statuses_<time>.yaml`
for the instances and statuses JSON names (as its SWE-bench batch runner does); prints its path.

`run` then prints, and `oracle FILE...` prints, what mini-swe-agent's own code reads from each file, as JSON: the inspector's steps (its
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


FENCE = "mswea_bash_command" if V2 else "bash"  # the action regex of the textbased model (2.x) / agent (1.x)
MODEL = "gpt-4o-mini"


def _reply(thought: str, *commands: str) -> str:
    """What the model answers: a THOUGHT and fenced command blocks (two blocks are a format error)."""
    return f"THOUGHT: {thought}" + "".join(f"\n\n```{FENCE}\n{c}\n```" for c in commands)


def _litellm_model(replies: list[str], config: dict):
    """mini-swe-agent's own litellm model (the textbased one under 2.x), answered by litellm's
    `mock_response`: the saved messages carry a real litellm response (model, created, usage)."""
    if V2:
        from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel as Base
    else:
        from minisweagent.models.litellm_model import LitellmModel as Base

    class Scripted(Base):
        def _query(self, messages, **kwargs):
            return super()._query(messages, mock_response=replies.pop(0), **kwargs)

    return Scripted(**{**config.get("model", {}), "model_name": MODEL, "cost_tracking": "ignore_errors"})


def _toolcall_model(commands: list[str]):
    from minisweagent.models.test_models import DeterministicToolcallModel, make_toolcall_output

    outputs = []
    for i, command in enumerate(commands, 1):
        call = {"id": f"call_{i}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
        outputs.append(make_toolcall_output(f"step {i}", [call], [{"command": command, "tool_call_id": f"call_{i}"}]))
    return DeterministicToolcallModel(outputs=outputs)


def _run_one(out: Path, name: str, model, config: dict, *, step_limit: int = 0) -> None:
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment

    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    for n in ("a", "b", "c"):
        (work / f"{n}.txt").write_text(n)
    agent_config = {**config["agent"], "step_limit": step_limit, "cost_limit": 0}
    path = out / name / f"{name}.traj.json"
    env = LocalEnvironment(cwd=str(work))
    if V2:
        DefaultAgent(model, env, **agent_config, output_path=path).run(TASK)
        return
    from minisweagent.run.utils.save import save_traj

    agent = DefaultAgent(model, env, **agent_config)
    exit_status, result = agent.run(TASK)
    save_traj(agent, path, exit_status=exit_status, result=result, print_path=False)


def run(out: Path) -> None:
    config = _config()
    session = [_reply("list them", "ls *.txt | wc -l"), _reply("peek", "cat missing.txt"),
               _reply("two at once", "ls", "pwd"), _reply("submit", SUBMIT)]
    _run_one(out, "submitted", _litellm_model(session, config), config)
    _run_one(out, "limited", _litellm_model([_reply("list them", "ls *.txt | wc -l"), _reply("again", "ls")], config),
             config, step_limit=1)
    if V2:
        _run_one(out, "toolcall", _toolcall_model(["ls *.txt | wc -l", SUBMIT]), config)


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
        # a reply rejected for its format is kept only in the feedback's extra (`model_response`)
        rejected = [m for m in messages if (m.get("extra") or {}).get("interrupt_type") == "FormatError"]
        steps = [p for p in _pages(messages) if p and p[0].get("role") == "assistant"] + rejected
        commands = [[a.get("command") for a in m["extra"].get("actions", []) if "command" in a]
                    if m.get("role") == "assistant" else [] for m in messages
                    if m.get("role") == "assistant" or m in rejected]
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


def exit_statuses(out: Path, statuses: dict) -> str:
    """What mini-swe-agent's batch runner (`swebench.py`) writes beside its trajectories: its progress
    manager's `exit_statuses_<time>.yaml`, one `on_instance_end` per instance."""
    if V2:
        from minisweagent.run.benchmarks.utils.batch_progress import RunBatchProgressManager
    else:
        from minisweagent.run.extra.utils.batch_progress import RunBatchProgressManager
    import time

    path = out / f"exit_statuses_{time.time()}.yaml"
    manager = RunBatchProgressManager(len(statuses), path)
    for instance_id, status in statuses.items():
        manager.on_instance_start(instance_id)
        manager.on_instance_end(instance_id, status)
    return str(path)


if __name__ == "__main__":
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm would fetch its price list
    if sys.argv[1] == "run":  # then the oracle on what was written: one interpreter start, not two
        run(Path(sys.argv[2]))
        print(json.dumps({str(p): oracle(p) for p in sorted(Path(sys.argv[2]).glob("*/*.traj.json"))}))
    elif sys.argv[1] == "exit-statuses":  # OUTDIR {instance: status}
        print(json.dumps({"path": exit_statuses(Path(sys.argv[2]), json.loads(sys.argv[3]))}))
    else:
        print(json.dumps({p: oracle(Path(p)) for p in sys.argv[2:]}))
