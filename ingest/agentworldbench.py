"""AgentWorldBench JSONL (`<domain>_test.jsonl`): world-model evaluation samples, one line per evaluated turn.

A line holds a trajectory's turns (`prompt[]`: action prompts, `response[]`: ground-truth observations) plus
the evaluated turn (`turn_idx`, 1-based; `current_prompt` == `prompt[turn_idx-1]`),
`task` (the domain, possibly with a prefix: `"x/mcp"`), `id`, `system_str` (the world-model system prompt,
with the tool definitions) and `total_turns`. The same trajectory repeats on several lines; they are folded
back into one episode per (domain, `id`), key `<domain>:<id>`.

Steps: action t is the fenced JSON (or text) after `**Action:**` in `prompt[t]`; observation 0 is the
`**Current State:**` block of the first prompt (`none` when it has none); the observation of step t+1 is
`response[t]` without its `**Environment Observation:**` marker (and without a fence wrapping all of it);
the last response is the final observation. Action JSON maps by shape: `{"name", "arguments"}` -> tool call
(`ingest.tools`), `[{"keystrokes", "duration"}]` -> keystrokes, `{"command"}` -> command, the schema's own form
(`{"kind": ...}`, what an export writes for an action no form of its domain holds) -> that action, a BrowserGym or
pyautogui string -> code; android actions in their sources' three forms (JSONAction, `<invoke name="phone">`,
DroidBot's event text) as `ingest.android.bench_actions` reads them. `task` is the `**Task Instruction:**` /
`Target Query:` text of the first prompt when there is one. Platform: android, browser (web), ubuntu (os), else
linux. `env`: `system_prompt`, `benchmark_id`, `evaluated_turns`, `total_turns`, `reference_answer` (a search
row's `Reference Answer:`), `instruction_suffix` (the evaluation instruction cut from the prompts, below).
Lines of one trajectory may hold all of it or only the turns up to the evaluated one (the released files: the
line of turn k holds turns 1..k, growing prefixes): a line that extends the turns kept so far replaces them, a line
that is a prefix of them adds nothing, so the episode has the longest copy. A line whose turns disagree with
the kept ones (neither extends the other) is quarantined (`conflicting_duplicate`). Turns are compared by their
parsed content (task, state, action; the observation without its marker), never their raw text: the released
files append the evaluation instruction ("Please analyze the input above ...") to each line's last prompt only,
so line k's copy of turn k differs in text from line k+1's. That instruction is no part of the trajectory: it
is cut from the action prompt and kept in `env.instruction_suffix`.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from typing import Iterator

import orjson

from ingest.android.bench_actions import bench_android_action
from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Observation, Rejected, Step
from ingest.search import episode_domain, results_tree
from ingest.source import BudgetExceeded, Source
from ingest.tools import dumps, tool_action
from schemas.v1 import ACTION_KINDS

FORMAT = "agentworldbench"
VERSION = "4"
INFO = FormatInfo(
    group=None, rank=80, domains=('mcp', 'search', 'terminal', 'swe', 'android', 'web', 'os'), platform="varies",
    summary="AgentWorldBench JSONL",
)

OBSERVATION_MARKER = "**Environment Observation:**"
_DOMAINS = {"mcp": ("linux", "tool_result"), "search": ("linux", "tool_result"), "terminal": ("linux", "terminal"),
            "swe": ("linux", "tool_result"), "android": ("android", "screen"), "web": ("browser", "web"),
            "os": ("ubuntu", "screen")}
_STATE = re.compile(r"\*\*Current State:\*\*\s*\n(.*?)(?=\n\*\*Action:\*\*)", re.DOTALL)
_ACTION = re.compile(r"\*\*Action:\*\*\s*\n(.*)", re.DOTALL)
_FENCE = re.compile(r"^```[\w-]*\n(.*?)\n```", re.DOTALL)
_TARGET_QUERY = re.compile(r"^Target Query:[ \t]*(.+)$", re.MULTILINE)
# a search row's reference answer: the rest of its Simulation Instruction (up to a blank line or the next section)
_REFERENCE_ANSWER = re.compile(r"^Reference Answer:[ \t]*(.+?)(?=\n\s*\n|\n\*\*|\Z)", re.MULTILINE | re.DOTALL)
_TASK = re.compile(r"\*\*(?:Task Instruction|Task|Instruction)s?:?\*\*:?[ \t]*\n?(.*?)(?=\n\s*\n|\n\*\*|\Z)", re.DOTALL)
# The evaluated turn's instruction the released files append to a line's last prompt (after the action)
_SUFFIX = re.compile(r"\n\s*Please analyze the input above\b")


# The released files' key order: a first line opening with these keys is a sample even when its prompt list
# (a long history, a large screen) pushes `turn_idx` past the first 4 KiB
_RELEASED_START = re.compile(
    rb'^\{\s*"task"\s*:\s*"[^"\\]*"\s*,\s*"id"\s*:\s*("[^"\\]*"|-?\d+)\s*,\s*"prompt"\s*:\s*[\["]')


def units(files: list[str], head) -> list[str]:
    """JSONL files whose first line is an object with `prompt`, `response` and `turn_idx` (or `current_prompt`)
    in its first 4 KiB, or that opens with `task`, `id` and `prompt` as the released files do."""
    found = []
    for path in files:
        if path.endswith((".jsonl", ".json", ".ndjson")):
            start = head(path).lstrip()
            keyed = b'"prompt"' in start and (b'"turn_idx"' in start or b'"current_prompt"' in start)
            if start.startswith(b"{") and keyed or _RELEASED_START.match(start):
                found.append(path)
    return found


def _strip_fence(text: str) -> str:
    m = _FENCE.match(text.strip())
    return m.group(1) if m and m.end() == len(text.strip()) else text.strip()


def _observation_text(response: str) -> str:
    text = response.strip()
    if text.startswith(OBSERVATION_MARKER):
        text = text[len(OBSERVATION_MARKER):]
    return _strip_fence(text)


def split_instruction(prompt: str) -> tuple[str, str | None]:
    """(the action prompt, the evaluation instruction appended after its action or None): `prompt` is their
    concatenation."""
    action = prompt.find("**Action:**")
    found = None
    for found in _SUFFIX.finditer(prompt, max(action, 0)):
        pass
    return (prompt, None) if found is None else (prompt[:found.start()], prompt[found.start():])


def _turn_digest(prompt: str) -> bytes:
    """What a turn's prompt says, as a digest: the text before the action with its whitespace collapsed, and the
    action's value (JSON decoded where it is JSON); the evaluation instruction is left out."""
    text, _ = split_instruction(prompt)
    m = _ACTION.search(text)
    head, body = (text[:m.start()], m.group(1)) if m else ("", text)
    fence = _FENCE.match(body.strip())
    body = fence.group(1) if fence else body.strip()
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        value = body
    return _digest([" ".join(head.split()), value])


def _digest(value) -> bytes:
    return hashlib.blake2b(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


def _signature(line: dict) -> tuple[list[bytes], list[bytes]]:
    """A line's turns as digests of their parsed content: prompts, and observations without their marker."""
    return [_turn_digest(p) for p in line["prompt"]], [_digest(_observation_text(r)) for r in line["response"]]


def _action(prompt: str, domain: str) -> Action:
    raw = prompt
    m = _ACTION.search(prompt)
    body = m.group(1) if m else prompt
    fence = _FENCE.match(body.strip())
    text = fence.group(1) if fence else body.strip()
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = None
    if domain == "android" and (android := bench_android_action(text, value, raw)) is not None:
        return android
    if isinstance(value, dict) and value.get("kind") in ACTION_KINDS and "name" not in value:
        return _schema_action(value, raw)
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return tool_action(value["name"], value.get("arguments", value.get("parameters", {})), raw)
    if isinstance(value, list) and value and all(isinstance(v, dict) and "keystrokes" in v for v in value):
        durations = [v.get("duration") for v in value if isinstance(v.get("duration"), (int, float))]
        return Action(kind="keystrokes", text="".join(str(v["keystrokes"]) for v in value),
                      duration_s=float(sum(durations)) if durations else None, arguments=dumps(value), raw=raw)
    if isinstance(value, dict) and isinstance(value.get("keystrokes"), str):
        return Action(kind="keystrokes", text=value["keystrokes"], duration_s=value.get("duration"), raw=raw)
    if isinstance(value, dict) and isinstance(value.get("command"), str):
        return Action(kind="command", code=value["command"], raw=raw)
    if value is not None:
        return Action(kind="tool_call", arguments=dumps(value if isinstance(value, dict) else {"input": value}), raw=raw)
    if domain == "terminal":
        return Action(kind="command", code=text, raw=raw)
    return Action(kind="code", code=text, raw=raw)


def _schema_action(value: dict, raw: str) -> Action:
    """An action in the schema's own JSON form (what an export writes for an action no form of the domain holds
    whole: `{"kind": "command", "code": ...}`), read back field by field."""
    fields = {}
    for name in ("x", "y", "x2", "y2", "duration_s"):
        if isinstance(value.get(name), (int, float)) and not isinstance(value.get(name), bool):
            fields[name] = float(value[name])
    for name in ("text", "direction", "tool_name", "code"):
        if isinstance(value.get(name), str):
            fields[name] = value[name]
    if isinstance(value.get("keys"), list):
        fields["keys"] = [str(k) for k in value["keys"]]
    for name in ("element", "arguments"):
        if value.get(name) is not None:
            fields[name] = value[name] if isinstance(value[name], str) else dumps(value[name])
    return Action(kind=value["kind"], raw=raw, **fields)


def _episode(domain: str, traj_id, line: dict, turns: list[int]) -> Episode:
    platform, obs_kind = _DOMAINS.get(domain, ("linux", "text"))
    prompts, suffixes = [], []
    for prompt in line["prompt"]:
        text, suffix = split_instruction(prompt)
        prompts.append(text)
        if suffix is not None and suffix not in suffixes:
            suffixes.append(suffix)
    responses = line["response"]
    state = _STATE.search(prompts[0])
    obs = Observation(kind=obs_kind, text=state.group(1).strip()) if state else Observation()
    steps = []
    for t, prompt in enumerate(prompts):
        action = _action(prompt, domain)
        steps.append(Step(observation=obs, action=action))
        if t < len(responses):
            text = _observation_text(responses[t])
            obs = Observation(kind=obs_kind, text=text, ui_tree=results_tree(action.tool_name, text))
        else:
            obs = None
    task = _TARGET_QUERY.search(prompts[0]) or _TASK.search(prompts[0])
    answer = _REFERENCE_ANSWER.search(prompts[0])
    env = {"system_prompt": line.get("system_str"), "benchmark_id": traj_id, "evaluated_turns": sorted(turns),
           "total_turns": line.get("total_turns"), "reference_answer": answer.group(1).strip() if answer else None,
           "instruction_suffix": suffixes[0] if len(suffixes) == 1 else (suffixes or None)}
    return Episode(key=f"{domain}:{traj_id}", domain=episode_domain([s.action.tool_name for s in steps], domain)
                   if domain in ("mcp", "search") else domain, platform=platform, steps=steps,
                   task=task.group(1).strip() if task else None, final_observation=obs, terminated=False,
                   env={k: v for k, v in env.items() if v is not None})


def _extends(line: tuple[list, list], other: tuple[list, list]) -> bool:
    """`line` holds every turn of `other`, the same, and maybe more: its prompts and responses start with
    `other`'s (both `_signature`s)."""
    (a, c), (b, d) = line, other
    return len(a) >= len(b) and len(c) >= len(d) and a[:len(b)] == b and c[:len(d)] == d


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, line) one at a time: `splitlines` would hold a copy of every line at once."""
    start, no = 0, 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        no += 1
        yield no, data[start:end]
        start = end + 1


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    first: dict[tuple, dict] = {}
    signatures: dict[tuple, tuple[list, list]] = {}
    turns: dict[tuple, list[int]] = {}
    limit = source.budgets.record_bytes
    for no, raw in _lines(source.read_bytes()):
        if len(raw) > limit:  # a line is one record: over the budget it is not decoded
            yield Rejected("budget_exceeded", BudgetExceeded("record_bytes", limit, f"{name}:{no}",
                                                             f"the line has {len(raw)} bytes").reason, name, line=no)
            continue
        if not raw.strip():
            continue
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            yield Rejected("parse_error", f"{name}:{no}: invalid JSON: {e}", name, line=no, snippet=raw[:500].decode(errors="replace"))
            continue
        if not isinstance(line, dict) or "id" not in line or not isinstance(line.get("task"), str):
            yield Rejected("bad_record", f"{name}:{no}: a sample needs 'task' (str) and 'id'", name, line=no,
                           snippet=raw[:500].decode(errors="replace"))
            continue
        for key in ("prompt", "response"):  # eval.py accepts a plain string for a one-turn trajectory
            if isinstance(line.get(key), str):
                line[key] = [line[key]]
        if not isinstance(line.get("prompt"), list) or not line["prompt"] or not isinstance(line.get("response"), list) \
                or not all(isinstance(p, str) for p in line["prompt"] + line["response"]):
            yield Rejected("bad_record", f"{name}:{no}: 'prompt' and 'response' must be lists of strings", name,
                           line=no, record_id=str(line["id"]))
            continue
        domain = line["task"].split("/")[-1]
        key = (domain, line["id"])
        signature = _signature(line)
        if key in first:
            seen = signatures[key]
            if _extends(signature, seen):
                first[key], signatures[key] = line, signature  # a longer copy (files whose line k holds turns 1..k)
            elif not _extends(seen, signature):
                yield Rejected("conflicting_duplicate", f"{name}:{no}: sample {line['id']} turn {line.get('turn_idx')} "
                               "holds a different trajectory than its earlier lines (neither extends the other)",
                               name, line=no, record_id=str(line["id"]))
                continue
        else:
            first[key], signatures[key] = line, signature
            turns[key] = []
        if isinstance(line.get("turn_idx"), int):
            turns[key].append(line["turn_idx"])
    for (domain, traj_id), line in first.items():
        yield _episode(domain, traj_id, line, turns[(domain, traj_id)])
