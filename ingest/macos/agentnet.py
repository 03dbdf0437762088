"""AgentNet trajectories (one JSON file per human demonstration, with `images/<name>.png` beside it).

Top level: `task_id`, `user_task_description` (the task), `high_level_task_description`, `steps`, and
`meta_info` (`system`: `Darwin` / `Windows` / `Linux`, `screen_resolution` {width, height}, apps...).
A step: `step_num` (not contiguous: steps dropped by the curators leave gaps), `image` (the screen before the
action), `action` (pyautogui code with coordinates already normalized to [0, 1], possibly several lines;
the last step is `computer.terminate(status=...)`), `inner_monologue` {observation, thought,
low_level_instruction} (written afterwards by a model, so it goes to `reasoning`, not to the observation),
`ground_truth_actions`, `milestone`.

Platform comes from `meta_info.system`, never from where the file sits; a file without it is quarantined.
No timestamps. `terminate(status='success' | 'failure')` gives the outcome and makes the last step
terminal; without it the episode is truncated. A missing image keeps its step (a screen without a
screenshot) and gives one quarantine row for the file. The images are named for the trajectory
(`images/<task_id>_<step>.png`, the file named `<task_id>.json`): planning gives a trajectory the images beside it
that start with its file's name (`members`), so they are read with it, never listed as unread.

Record isolation: a step that cannot be used (not an object; `step_num` not an integer; `image` not a string;
`inner_monologue` not an object of strings; `action` not pyautogui code that parses; `ground_truth_actions`
that cannot be written as JSON; a value that does not fit the schema) is quarantined alone, with its index or
`step_num` and the field, and left out: the episode keeps the others, as it keeps the curators' own gaps
(`env.step_nums` lists the steps kept). A bad `meta_info.screen_resolution` keeps the steps without a screen
size; a bad `user_task_description` keeps the episode without a task; each says so in a row.
"""

from __future__ import annotations

import posixpath
from typing import Iterator

import orjson

from ingest.arrow import checked_env, checked_episode, step_problem
from ingest.format_info import FormatInfo
from ingest.members import with_prefix
from ingest.pyautogui_code import CodeError, to_action
from ingest.record import Episode, Observation, Rejected, Step
from ingest.source import BudgetExceeded, Source, SourceError, parse_json

FORMAT = "agentnet"
VERSION = "2"
INFO = FormatInfo(
    group="macos", rank=200, domains=('os',), platform="varies",
    summary="AgentNet trajectories",
)

PLATFORM_BY_SYSTEM = {"darwin": "macos", "macos": "macos", "windows": "windows", "linux": "ubuntu",
                      "ubuntu": "ubuntu"}


def units(files: list[str], head) -> list[str]:
    """JSON files that start like an AgentNet trajectory."""
    out = []
    for path in files:
        if path.endswith(".json"):
            start = head(path)
            if b'"user_task_description"' in start and b'"steps"' in start:
                out.append(path)
    return out


def members(found: list[str], files: list[str], head) -> dict[str, list[str]]:
    """Each trajectory's images: `images/<its file's name>_*` beside it."""
    out = {}
    for path in found:
        folder, name = posixpath.split(path)
        out[path] = with_prefix(files, f"{folder}/images/{name[:-len('.json')]}_")
    return out


def platform_of(system) -> str | None:
    return PLATFORM_BY_SYSTEM.get(str(system).strip().lower()) if system else None


def _reasoning(step: dict) -> str | None:
    mono = step.get("inner_monologue")
    if not isinstance(mono, dict):
        return None
    parts = [f"{label}: {mono[key].strip()}" for key, label in
             (("observation", "Observation"), ("thought", "Thought"), ("low_level_instruction", "Action"))
             if isinstance(mono.get(key), str) and mono[key].strip()]
    return "\n".join(parts) or None


def _kind(value) -> str:
    return "null" if value is None else type(value).__name__


def _screen_size(meta: dict, name: str) -> tuple[int | None, int | None, Rejected | None]:
    res = meta.get("screen_resolution")
    if res is None:
        return None, None, None
    width, height = (res.get("width"), res.get("height")) if isinstance(res, dict) else (None, None)
    if isinstance(res, dict) and all(v is None or (isinstance(v, int) and not isinstance(v, bool) and 0 < v < 1 << 31)
                                     for v in (width, height)):
        return width, height, None
    return None, None, Rejected("bad_record", f"{name}: field meta_info.screen_resolution is {str(res)[:80]!r}, "
                                "expected {width, height} in pixels; steps kept without a screen size", name,
                                record_id="meta_info.screen_resolution")


def _check_step(record) -> None:
    """Raises ValueError naming the first field of a step this reader uses that has the wrong type."""
    if not isinstance(record, dict):
        raise ValueError(f"(the step): {_kind(record)}, expected an object")
    for key, types in (("step_num", (int,)), ("image", (str,)), ("inner_monologue", (dict,))):
        value = record.get(key)
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            raise ValueError(f"{key}: {_kind(value)}, expected {types[0].__name__}")
    mono = record.get("inner_monologue") or {}
    for key in ("observation", "thought", "low_level_instruction"):
        if mono.get(key) is not None and not isinstance(mono.get(key), str):
            raise ValueError(f"inner_monologue.{key}: {_kind(mono.get(key))}, expected str")


def read(source: Source) -> Iterator[Episode | Rejected]:
    """The file's episode. A step with a field of the wrong type is quarantined alone (naming its index,
    step_num and the field) and left out; the others are kept, as the curators' own gaps are."""
    name = posixpath.basename(source.path)
    traj = parse_json(source.read_bytes(), name, source.budgets)
    if not isinstance(traj, dict) or not isinstance(traj.get("steps"), list):
        raise SourceError("bad_record", f"{name}: no 'steps' list", name)
    meta = traj.get("meta_info") if isinstance(traj.get("meta_info"), dict) else {}
    platform = platform_of(meta.get("system"))
    if platform is None:
        raise SourceError("unknown_platform", f"{name}: meta_info.system is {meta.get('system')!r}; the platform "
                          "must come from the recording (Darwin, Windows or Linux)", name)
    width, height, bad_size = _screen_size(meta, name)
    if bad_size:
        yield bad_size
    images_dir = posixpath.join(posixpath.dirname(source.path), "images")

    records = []
    for i, record in enumerate(traj["steps"]):
        try:
            _check_step(record)
        except ValueError as e:
            yield Rejected("bad_record", f"{name} steps[{i}]: field {e}; the step is left out", name,
                           record_id=f"steps[{i}]")
            continue
        records.append(record)
    records.sort(key=lambda s: s.get("step_num") or 0)
    steps, missing, step_nums = [], [], []
    for record in records:
        step, problems = _record_step(record, name, source, images_dir, (width, height), missing)
        yield from problems
        if step is not None:
            steps.append(step)
            step_nums.append(record.get("step_num"))
    if missing:
        yield Rejected("missing_file", f"{name}: {len(missing)} of {len(records)} screenshots not found in images/ "
                       f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}); steps kept without them",
                       "images", snippet=orjson.dumps(missing).decode())
    if not steps:
        return

    yield from _episode(traj, meta, platform, steps, step_nums, (width, height), name)


def _record_step(record: dict, name: str, source: Source, images_dir: str, size: tuple, missing: list[str]
                 ) -> tuple[Step | None, list[Rejected]]:
    """One checked step record as a step (None when it is left out) and the rows it gives; a screenshot not
    found in images/ is added to `missing` (said once for the file)."""
    num = record.get("step_num")
    where = f"{name} step_num {num}"
    code = record.get("action")
    try:
        if not isinstance(code, str):
            raise CodeError(f"action is {_kind(code)}, not a code string")
        action = to_action(code, (1.0, 1.0))  # AgentNet code is already normalized
    except (CodeError, ValueError, TypeError, RecursionError) as e:
        return None, [Rejected("parse_error", f"{where}: {e}", name, record_id=str(num))]
    if record.get("ground_truth_actions"):
        try:
            action.element = orjson.dumps(record["ground_truth_actions"]).decode()
        except TypeError as e:  # orjson.JSONEncodeError: nested too deep, an integer past 64 bits
            return None, [Rejected("bad_record", f"{where}: field ground_truth_actions cannot be written as JSON "
                                   f"({e}); the step is left out", name, record_id=str(num))]
    problems = []
    obs = Observation(kind="screen", width=size[0], height=size[1])
    image = record.get("image")
    if isinstance(image, str) and image and "/" not in image and not image.startswith("."):
        try:
            data = source.read_path(posixpath.join(images_dir, image))
            obs.screenshot = source.put_blob(data, "image/png", source.uri)
        except SourceError as e:
            if e.rule == "missing_file":
                missing.append(image)
            else:  # too large, a link out of the input, a FIFO: said, and the step kept without it
                problems.append(e.as_rejected())
    step = Step(observation=obs, action=action, reasoning=_reasoning(record))
    if (problem := step_problem(step)) is not None:
        return None, problems + [Rejected("bad_record", f"{where}: field {problem}; the step is left out", name,
                                          record_id=str(num))]
    return step, problems


def _episode(traj: dict, meta: dict, platform: str, steps: list[Step], step_nums: list, size: tuple,
             name: str) -> Iterator[Episode | Rejected]:
    """The trajectory's episode: outcome from its last `done` action, env from its meta_info."""
    width, height = size
    last = steps[-1].action if steps else None
    terminated = last is not None and last.kind == "done"
    status = (last.text or "").lower() if terminated and isinstance(last.text, str) else ""
    env = {"system": meta.get("system"), "task_id": traj.get("task_id"), "step_nums": step_nums,
           "high_level_task": traj.get("high_level_task_description")}
    if width and height:
        env["screen_size"] = [width, height]
    for key in ("applications", "websites", "domain", "sub_domain"):
        if meta.get(key):
            env[key] = meta[key]
    env, dropped = checked_env(env)
    for problem in dropped:
        yield Rejected("bad_record", f"{name}: env field {problem}; left out of the episode's env", name,
                       record_id=problem.split(":", 1)[0])
    task = traj.get("user_task_description") or traj.get("instruction")
    if task is not None and not isinstance(task, str):
        yield Rejected("bad_record", f"{name}: field user_task_description is {_kind(task)}, expected a string; "
                       "the episode is kept without its task", name, record_id="user_task_description")
        task = None
    yield checked_episode(Episode(
        key="",
        domain="os",
        platform=platform,
        steps=steps,
        task=task,
        outcome="success" if status == "success" else "failure" if status in ("failure", "fail") else "unknown",
        terminated=terminated,
        env=env,
    ), name)
