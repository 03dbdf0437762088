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
screenshot) and gives one quarantine row for the file.
"""

from __future__ import annotations

import posixpath
from typing import Iterator

import orjson

from ingest.pyautogui_code import CodeError, to_action
from ingest.record import Episode, Observation, Rejected, Step
from ingest.source import Source, SourceError, parse_json

FORMAT = "agentnet"
VERSION = "1"

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


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = posixpath.basename(source.path)
    traj = parse_json(source.read_bytes(), name)
    if not isinstance(traj, dict) or not isinstance(traj.get("steps"), list):
        raise SourceError("bad_record", f"{name}: no 'steps' list", name)
    meta = traj.get("meta_info") if isinstance(traj.get("meta_info"), dict) else {}
    platform = platform_of(meta.get("system"))
    if platform is None:
        raise SourceError("unknown_platform", f"{name}: meta_info.system is {meta.get('system')!r}; the platform "
                          "must come from the recording (Darwin, Windows or Linux)", name)
    res = meta.get("screen_resolution") or {}
    width, height = res.get("width"), res.get("height")
    images_dir = posixpath.join(posixpath.dirname(source.path), "images")

    steps, missing, step_nums = [], [], []
    records = sorted((s for s in traj["steps"] if isinstance(s, dict)), key=lambda s: s.get("step_num", 0))
    for record in records:
        where = f"{name} step_num {record.get('step_num')}"
        code = record.get("action")
        try:
            if not isinstance(code, str):
                raise CodeError("action is not a code string")
            action = to_action(code, (1.0, 1.0))  # AgentNet code is already normalized
        except CodeError as e:
            yield Rejected("parse_error", f"{where}: {e}", name, record_id=str(record.get("step_num")))
            continue
        obs = Observation(kind="screen", width=width, height=height)
        image = record.get("image")
        if isinstance(image, str) and image and "/" not in image and not image.startswith("."):
            path = posixpath.join(images_dir, image)
            if source.fs.exists(path):
                with source.fs.open(path, "rb") as f:
                    obs.screenshot = source.put_blob(f.read(), "image/png", source.uri)
            else:
                missing.append(image)
        if record.get("ground_truth_actions"):
            action.element = orjson.dumps(record["ground_truth_actions"]).decode()
        steps.append(Step(observation=obs, action=action, reasoning=_reasoning(record)))
        step_nums.append(record.get("step_num"))
    if missing:
        yield Rejected("missing_file", f"{name}: {len(missing)} of {len(records)} screenshots not found in images/ "
                       f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}); steps kept without them",
                       "images", snippet=orjson.dumps(missing).decode())

    last = steps[-1].action if steps else None
    terminated = last is not None and last.kind == "done"
    status = (last.text or "").lower() if terminated else ""
    env = {"system": meta.get("system"), "task_id": traj.get("task_id"), "step_nums": step_nums,
           "high_level_task": traj.get("high_level_task_description")}
    if width and height:
        env["screen_size"] = [width, height]
    for key in ("applications", "websites", "domain", "sub_domain"):
        if meta.get(key):
            env[key] = meta[key]
    yield Episode(
        key="",
        domain="os",
        platform=platform,
        steps=steps,
        task=traj.get("user_task_description") or traj.get("instruction"),
        outcome="success" if status == "success" else "failure" if status in ("failure", "fail") else "unknown",
        terminated=terminated,
        env=env,
    )
