"""ATIF `trajectory.json` (Agent Trajectory Interchange Format, `schema_version` "ATIF-v1.x"): the
trajectory format of the Harbor / Terminal-Bench 2 harness. One JSON object per file, one episode per file.

ATIF steps are turns: `source` "system" (system prompt -> `env["system_prompt"]`), "user" (a message: the
first one is the task; every user message is observation text for the next action) or "agent" (`message`,
`reasoning_content`, `tool_calls[]` of `{tool_call_id, function_name, arguments}`, and `observation.results[]`
of `{source_call_id, content}`).

Our steps are actions: each tool call of an agent turn is one step (a shell tool with a `command` becomes a
`command` action, see `ingest.tools`); an agent turn without tool calls is a `message` action. The
observation of step t+1 is the result whose `source_call_id` names call t (results without one belong to the
turn's last action), plus any user messages before the next action. Observation 0 is the user messages
before the first action. The turn's `reasoning_content` is the reasoning of its first step.

Round trip: files written by `pipelines export atif` carry our exact records in `extra["trajforge"]` (root:
episode fields; step: `action` and the next `observation`, and with `--include-simulated` the step's
`branches`), and those win over the mapping above, so ingest -> export -> ingest gives the same steps, and
the same branches with their origin (ids follow the new episode id; a branch with a malformed record is
quarantined alone). Timestamps: UTC when zoned, else null. Domain `terminal`
(or `search` for search tools) unless the root extra says otherwise; platform `linux`.
"""

from __future__ import annotations

import posixpath
from typing import Iterator

from ingest.record import Action, Branch, Episode, Observation, Rejected, Step
from ingest.search import episode_domain
from ingest.source import Source, SourceError, parse_json
from ingest.times import parse_time
from ingest.tools import dumps, tool_action, tool_observation

FORMAT = "atif"
VERSION = "1"

EXTRA_KEY = "trajforge"  # where our export keeps exact records inside ATIF `extra` objects
_ACTION_FIELDS = set(Action.__dataclass_fields__)
_OBSERVATION_FIELDS = set(Observation.__dataclass_fields__)


def units(files: list[str], head) -> list[str]:
    """JSON files whose first bytes declare an ATIF schema version."""
    return [p for p in files if p.endswith(".json") and b'"ATIF-v' in head(p) and b'"schema_version"' in head(p)]


def _ours(obj) -> dict:
    extra = obj.get("extra") if isinstance(obj, dict) else None
    mine = extra.get(EXTRA_KEY) if isinstance(extra, dict) else None
    return mine if isinstance(mine, dict) else {}


def _merge(parts: list[Observation]) -> Observation:
    if not parts:
        return Observation()
    if len(parts) == 1:
        return parts[0]
    kinds = {p.kind for p in parts}
    return Observation(kind=parts[0].kind if len(kinds) == 1 else "text",
                       text="\n\n".join(p.text for p in parts if p.text),
                       is_error=True if any(p.is_error for p in parts) else None)


def _restored_observation(value) -> Observation | None:
    return Observation(**{k: v for k, v in value.items() if k in _OBSERVATION_FIELDS}) if isinstance(value, dict) else None


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    doc = parse_json(source.read_bytes(), name)
    if not isinstance(doc, dict) or not str(doc.get("schema_version", "")).startswith("ATIF-"):
        raise SourceError("bad_record", f"{name}: no ATIF schema_version")
    if not isinstance(doc.get("steps"), list):
        raise SourceError("bad_record", f"{name}: 'steps' must be an array")
    root = _ours(doc)
    agent_info = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}

    steps: list[Step] = []
    branches: list[Branch] = []
    pending: list[Observation] = []
    env: dict = {}
    task = None
    for i, turn in enumerate(doc["steps"]):
        if not isinstance(turn, dict) or turn.get("source") not in ("system", "user", "agent"):
            yield Rejected("bad_record", f"{name}: steps[{i}] has no valid 'source'", f"steps[{i}]")
            continue
        mine = _ours(turn)
        message = turn.get("message") if isinstance(turn.get("message"), str) else ""
        if turn["source"] == "system":
            env.setdefault("system_prompt", message)
            continue
        if turn["source"] == "user":
            task = task if task is not None else message
            if "observation" in mine:  # our export: an observation, or (null) the task alone
                restored = _restored_observation(mine["observation"])
                if restored is not None:
                    pending.append(restored)
            elif message:
                pending.append(Observation(kind="text", text=message))
            continue

        calls = [c for c in turn.get("tool_calls") or [] if isinstance(c, dict)]
        results = ((turn.get("observation") or {}).get("results") or []) if isinstance(turn.get("observation"), dict) else []
        by_call = {r.get("source_call_id"): r for r in results if isinstance(r, dict) and r.get("source_call_id")}
        loose = [r for r in results if isinstance(r, dict) and not r.get("source_call_id")]
        stamp = parse_time(turn.get("timestamp"))
        reasoning = turn.get("reasoning_content") or None
        if not calls:
            calls = [None]
        for j, call in enumerate(calls):
            if isinstance(mine.get("action"), dict) and len(calls) == 1:
                action = Action(**{k: v for k, v in mine["action"].items() if k in _ACTION_FIELDS})
            elif call is None:
                action = Action(kind="message", text=message, raw=dumps({"message": message}))
            else:
                action = tool_action(call.get("function_name"), call.get("arguments"), dumps(call))
            steps.append(Step(observation=_merge(pending), action=action, timestamp=stamp,
                              reasoning=reasoning if j == 0 else None))
            found = [by_call[call["tool_call_id"]]] if call and call.get("tool_call_id") in by_call else []
            if j == len(calls) - 1:
                found += loose
            tool = action.tool_name
            pending = [tool_observation(tool, r.get("content") if isinstance(r.get("content"), str)
                                        else (dumps(r["content"]) if r.get("content") is not None else None))
                       for r in found]
        if "observation" in mine:
            restored = _restored_observation(mine["observation"])
            pending = [restored] if restored is not None else []
        for k, record in enumerate(mine.get("branches") or []):
            branch = _branch(record, len(steps) - 1)
            if branch is None:
                yield Rejected("bad_record", f"{name}: steps[{i}] branch {k}: needs an object with 'origin', an "
                               "'action' object with a 'kind' and a 'next_observation' object",
                               f"steps[{i}].extra.{EXTRA_KEY}.branches[{k}]", snippet=dumps(record)[:2000])
            else:
                branches.append(branch)

    if not steps:
        yield Rejected("empty_episode", f"{name}: no agent steps")
        return
    domain = root.get("domain") or episode_domain([s.action.tool_name for s in steps], "terminal")
    env.update({"session_id": doc.get("session_id"), "agent": agent_info or None,
                "final_metrics": doc.get("final_metrics"), "notes": doc.get("notes")})
    if isinstance(root.get("env"), dict):
        env = {**root["env"]}
    yield Episode(
        key="",
        domain=domain,
        platform=root.get("platform", "linux"),
        steps=steps,
        task=root["task"] if "task" in root else task,
        agent=root["agent"] if "agent" in root else (agent_info.get("model_name") or agent_info.get("name")),
        outcome=root.get("outcome") or "unknown",
        reward=root.get("reward"),
        terminated=bool(root.get("terminated", False)),
        final_observation=_merge(pending) if pending else None,
        env={k: v for k, v in env.items() if v is not None},
        branches=branches,
    )


def _branch(record, step: int) -> Branch | None:
    """A branch our export listed on a turn, or None when its record is malformed."""
    if not isinstance(record, dict) or not isinstance(record.get("origin"), str):
        return None
    action, state = record.get("action"), _restored_observation(record.get("next_observation"))
    if not isinstance(action, dict) or not isinstance(action.get("kind"), str) or state is None:
        return None
    text = lambda key: record[key] if isinstance(record.get(key), str) else None  # noqa: E731
    return Branch(step=step, origin=record["origin"],
                  action=Action(**{k: v for k, v in action.items() if k in _ACTION_FIELDS}),
                  next_observation=state, strategy=text("strategy"), labeler=text("labeler"),
                  request_key=text("request_key"))
