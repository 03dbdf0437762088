"""Run inside Harbor 0.26's environment (`.venv/producers/harbor-0.26.0/bin/python`), not the project's: lays a
Codex rollout JSONL where Harbor's Codex agent finds the sessions it downloads from the container
(`<logs_dir>/sessions/YYYY/MM/DD/rollout-....jsonl`) and runs the agent's own post-run step, which converts the
rollout to ATIF and writes `<logs_dir>/trajectory.json`, as it does after every trial. Prints the usage Harbor
put in the agent context, as one JSON object. Imports nothing of this project.

Usage: python harbor_codex_producer.py ROLLOUT.jsonl LOGS_DIR
"""

import json
import re
import shutil
import sys
from pathlib import Path

from harbor.agents.installed.codex import Codex
from harbor.models.agent.context import AgentContext

# Codex names a rollout rollout-<YYYY-MM-DD>T<hh-mm-ss>-<thread id>.jsonl under sessions/YYYY/MM/DD
_DATE = re.compile(r"^rollout-(\d{4})-(\d{2})-(\d{2})T")


def produce(rollout: Path, logs_dir: Path) -> dict:
    match = _DATE.match(rollout.name)
    if match is None:
        raise SystemExit(f"{rollout.name}: not a Codex rollout name (rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl)")
    day = logs_dir / "sessions" / match[1] / match[2] / match[3]
    day.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(rollout, day / rollout.name)
    # no model_name: resolving one imports litellm, which the converter does not need
    context = AgentContext()
    Codex(logs_dir=logs_dir).populate_context_post_run(context)
    return {"n_input_tokens": context.n_input_tokens, "n_cache_tokens": context.n_cache_tokens,
            "n_output_tokens": context.n_output_tokens}


if __name__ == "__main__":
    print(json.dumps(produce(Path(sys.argv[1]), Path(sys.argv[2]))))
