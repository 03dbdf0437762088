"""SFT records: one per transition (history + action -> next observation), in five shapes.

- `agentworld`: `messages` = the AgentWorld layout (system, user/assistant pairs, final user = the action)
  followed by the assistant target (the next observation in the domain's answer form).
- `trl`: TRL conversational prompt-completion: `prompt` = the messages up to the final user turn,
  `completion` = [the assistant target].
- `swift`: ms-swift `messages` with a per-message `loss`: true on the target only (history, system and
  actions false).
- `sharegpt`: LLaMA-Factory sharegpt: `conversations` of `{"from": "human"|"gpt", "value"}` and `system`;
  `pipelines.stages.export.outputs` writes the matching `dataset_info.json`. (LLaMA-Factory trains on every gpt
  turn unless its `mask_history` training option is set: set it to train on the target only.)
- `bench`: AgentWorldBench-shaped (`task`, `id`, `prompt[]`, `response[]`, `current_prompt`, `system_str`,
  `turn_idx`, `total_turns`) so the reference evaluation reads our data. `prompt`/`response` hold the kept
  history, the evaluated turn and the following turns of the same trajectory while their observations are
  recorded and admissible; `turn_idx` is 1-based into them. Responses carry the `**Environment
  Observation:**` marker in every domain, as the benchmark's own data does (its evaluation strips that
  marker from the ground truth; GUI answers in the training form would reach its judge with their tags).
  The evaluated turn's prompt ends with the evaluation instruction the released lines append to it
  (`agentworld.EVALUATION_INSTRUCTION`, or the one a benchmark line read back recorded), so the world model
  is asked what the released lines ask; `current_prompt` is the turn without it, as theirs is.

Every record also carries `origin` (real, or the most synthetic origin it touches) and a string id of the
acting step (`id`; `source_id` in `bench`, whose `id` is an integer by the reference's format, one per
trajectory as in the released files).
"""

from __future__ import annotations

import xxhash

from transforms import agentworld
from transforms.export.chat import Sample, TrajectoryRenderer

FORMATS = ("agentworld", "trl", "swift", "sharegpt", "bench")
FILE_TYPES = {"agentworld": "jsonl", "trl": "parquet", "swift": "jsonl", "sharegpt": "jsonl", "bench": "jsonl"}


def _meta(sample: Sample) -> dict:
    return {"id": sample.transition.turn.step_id, "domain": sample.transition.trajectory.domain,
            "origin": sample.transition.origin}


def agentworld_record(sample: Sample, renderer: TrajectoryRenderer, admissible=None) -> dict:
    # written as JSON lines only: the messages go pre-encoded (orjson fragments, the same bytes)
    messages = renderer.messages_json(sample) + [{"role": "assistant", "content": sample.target}]
    return {"messages": messages, **_meta(sample)}


def trl_record(sample: Sample, renderer: TrajectoryRenderer, admissible=None) -> dict:
    return {"prompt": sample.messages, "completion": [{"role": "assistant", "content": sample.target}],
            **_meta(sample)}


def swift_record(sample: Sample, renderer: TrajectoryRenderer, admissible=None) -> dict:
    messages = [{**m, "loss": False} for m in sample.messages]
    messages.append({"role": "assistant", "content": sample.target, "loss": True})
    return {"messages": messages, **_meta(sample)}


_SHAREGPT_ROLE = {"user": "human", "assistant": "gpt"}


def sharegpt_record(sample: Sample, renderer: TrajectoryRenderer, admissible=None) -> dict:
    conversations = [{"from": _SHAREGPT_ROLE[m["role"]], "value": m["content"]} for m in sample.messages[1:]]
    conversations.append({"from": "gpt", "value": sample.target})
    return {"conversations": conversations, "system": sample.messages[0]["content"], **_meta(sample)}


def bench_id(step_id: str) -> int:  # a step's or a trajectory's id
    """A stable positive 63-bit integer id, as the reference's `id` field is an int."""
    return xxhash.xxh64_intdigest(step_id.encode()) & ((1 << 63) - 1)


def evaluation_instruction(env: dict) -> str:
    """The instruction a bench line's evaluated prompt ends with: the one the episode's benchmark line carried
    (`env.instruction_suffix`, a line read back from the benchmark), else the released lines' own."""
    recorded = env.get("instruction_suffix")
    return recorded if isinstance(recorded, str) and recorded.strip() else agentworld.EVALUATION_INSTRUCTION


def bench_record(sample: Sample, renderer: TrajectoryRenderer, admissible=None) -> dict:
    """`admissible(turn) -> bool` says whether a later turn may follow the evaluated one in `response[]`
    (recorded observation, origin allowed by the export); None: none follow."""
    trajectory, t, k = renderer.trajectory, sample.transition.t, sample.first_turn
    last = t
    while admissible and last + 1 < len(trajectory.turns) and admissible(trajectory.turns[last + 1]):
        last += 1
    prompts = [renderer.user(i, k) for i in range(k, last + 1)]
    responses = [agentworld.observation_turn(trajectory.turns[i].observation) for i in range(k, last + 1)]
    current = prompts[t - k]
    prompts[t - k] = current + evaluation_instruction(trajectory.env)
    meta = _meta(sample)
    # one id per trajectory, as the released lines have (a line is told apart by its `turn_idx`): the benchmark's
    # reader folds a trajectory's lines into one episode by it
    return {"task": trajectory.domain, "id": bench_id(trajectory.trajectory_id), "prompt": prompts,
            "response": responses,
            "current_prompt": current, "system_str": sample.messages[0]["content"],
            "turn_idx": t - k + 1, "total_turns": len(prompts), "source_id": meta["id"], "origin": meta["origin"]}


RENDER = {"agentworld": agentworld_record, "trl": trl_record, "swift": swift_record, "sharegpt": sharegpt_record,
          "bench": bench_record}


def dataset_info(name: str, splits: list[str], fmt: str = "sharegpt", folder: str = "") -> dict:
    """LLaMA-Factory `dataset_info.json` entries for a sharegpt or agentworld export: one dataset per split
    directory (`file_name`: the split's folder, relative to the `dataset_dir` the file sits in, `folder` before
    it). Both are LLaMA-Factory's sharegpt formatting: `conversations` of from/value turns with `system` beside
    them, or agentworld's OpenAI-style `messages` of role/content turns with the system prompt first."""
    if fmt == "agentworld":
        columns = {"messages": "messages"}
        tags = {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant",
                "system_tag": "system"}
    else:
        columns = {"messages": "conversations", "system": "system"}
        tags = {"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt"}
    return {f"{name}_{split}": {"file_name": f"{folder}{split}", "formatting": "sharegpt", "columns": columns,
                                "tags": tags} for split in splits}
