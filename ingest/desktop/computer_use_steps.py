"""Computer-use tool loops that log one JSON file and one screenshot per step: the Anthropic `computer` tool loop
of martasumyk/ai_practice (`02-Agents/01-Computer-Use-Agents/anthropic_cu/anthropic_computer_use.py` @ 353251d),
run on the machine it drives (pyautogui, Pillow's `ImageGrab`).

Its folder `task_<NNN>/`: `task_<NNN>.txt` (the task as given), per step `step_<NN>.json` written as
`{"response": [<the model's content blocks>], "tool_output": {...}}` and `step_<NN>.png`, the screen grabbed
*after* the step's tool ran (so the observation before step k is step k-1's screenshot; the first step has
none; the last is the final observation), and maybe a screen recording (`task_<NNN>.mov`, not read). The model's
final answer (a reply without a tool call) ends the loop and is never written; a repeated call the loop skipped
leaves a gap in the numbering (said in `env`). `tool_output` is the loop's result: `status` (`clicked at (x,y)`,
`typed '...'`, `waited N seconds`, `manual screenshot taken`), or `error` for a call it could not run
(`Unknown action: key`: the action was asked for, not executed: said in the action's `raw`), or a bash call's
`stdout` / `stderr` (the text of the next observation), and `screenshot`, the path it saved to (kept raw; the
PNG beside the JSON is read). A response with several tool calls is written once, with the last call's result.

Three coordinate spaces (`ingest.coords`): the model answers in the display the loop declares to it (1024x768,
`AI_WIDTH`/`AI_HEIGHT`: in the loop's request, not in these files), the loop clicks the logical screen
(`pyautogui.size()`), scaling each axis, and the status says where (`clicked at (278,867)`); Pillow grabs a
Retina screen at twice its logical size (2880x1800 for 1440x900). A point is stored in the screenshot's pixels
through the declared display; the model's numbers, the executed pixel and the logical screen it implies are kept
in `raw`. The logical screen is the screenshot's size divided by the smallest whole factor under which every
executed pixel is the loop's own rounding of the model's numbers; when none fits, a warning says so and the
points stay the declared display's fractions. No evaluator: the outcome is unknown. The platform is macOS: the
loop's runs are (Safari, the Dock, Retina grabs), and nothing in the files names another.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.chat.computer_use import anthropic_action
from ingest.coords import Space, place
from ingest.format_info import FormatInfo
from ingest.members import unread_in
from ingest.png import png_size
from ingest.record import Action, Episode, Observation, Rejected, Step, episode_without_steps, warn
from ingest.source import Source

FORMAT = "computer_use_steps"
VERSION = "1"
INFO = FormatInfo(
    group=None, rank=208, domains=('os',), platform="macos",
    summary=("computer-use tool loops logged one step per file (`task_NNN/step_NN.json` with the model's content "
             "blocks and the loop's tool result, `step_NN.png` the screen after it): Anthropic `computer` calls "
             "placed on the Retina screenshot's pixels through the declared display, the executed pixel kept"),
    producer="an Anthropic `computer` tool loop over pyautogui (martasumyk/ai_practice's `anthropic_computer_use.py`)",
    versions="martasumyk/ai_practice @ 353251d (claude-sonnet-4, November 2025, macOS)",
    proof=("cannot run here (macOS, a vendor model): two real runs in `../shared/samples` read against the raw "
           "files (a golden of 12 steps, `[198, 740]` in the declared 1024x768 display executed at (278, 867) on "
           "the 1440x900 screen and placed at (557, 1734) of the 2880x1800 screenshots; 20 steps with 11 calls the "
           "loop could not run, counted by hand); one repository so far; edge cases hand-made "
           "(`tests/ingest/desktop/test_computer_use_steps.py`)"),
)

DECLARED = Space("declared_display", 1024, 768)  # AI_WIDTH, AI_HEIGHT of the loop: its tool declaration
_STEP = re.compile(r"step_(\d+)\.json$")
_TASK = re.compile(r"task_\d+\.txt$")
_OPENING = re.compile(rb'^\s*\{\s*"response"\s*:\s*\[')
_EXECUTED = re.compile(r"clicked at \((-?\d+),\s*(-?\d+)\)")
_RECORDING = "the loop's screen recording of the run (the screenshot of each step is read)"


def units(files: list[str], head) -> list[str]:
    """Folders holding a `task_<NNN>.txt` and `step_<NN>.json` files that open with the loop's
    `{"response": [` (the model's content blocks)."""
    tasks = {posixpath.dirname(p) for p in files if _TASK.search(posixpath.basename(p))}
    return sorted({posixpath.dirname(p) for p in files if _STEP.fullmatch(posixpath.basename(p))
                   and posixpath.dirname(p) in tasks and _OPENING.match(head(p))})


def _reads(rel: str) -> bool:
    return "/" not in rel and bool(_STEP.fullmatch(rel) or _TASK.fullmatch(rel)
                                   or re.fullmatch(r"step_\d+\.png", rel))


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The files of each run folder the reader does not read (its recording, anything else)."""
    return {folder: unread_in(folder, files, _reads, lambda rel: _RECORDING if rel.endswith(".mov") else
                              "the reader reads task_NNN.txt, step_NN.json and step_NN.png") for folder in found}


def _screen(source: Source, name: str) -> Observation | None:
    if not source.exists(name):
        return None
    data = source.read_bytes(name)
    size = png_size(data)
    return Observation(kind="screen", screenshot=source.put_blob(data, "image/png", source.uri),
                       width=size[0] if size else None, height=size[1] if size else None)


def _calls(doc: dict) -> tuple[str | None, list[dict], list]:
    """The response's text (the reasoning), its tool calls, and the blocks of other kinds."""
    blocks = doc.get("response") if isinstance(doc.get("response"), list) else []
    texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and b.get("text")]
    calls = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
    other = [b for b in blocks if not (isinstance(b, dict) and b.get("type") in ("text", "tool_use"))]
    return "\n\n".join(texts) or None, calls, other


def _action(call: dict, output: dict | None) -> Action:
    """The action of one tool call, its point in the declared display for now (`_place` moves it)."""
    spec = call.get("input") if isinstance(call.get("input"), dict) else {}
    raw: dict = {"tool": call.get("name"), "input": spec}
    if output is not None:
        raw["tool_output"] = {k: v for k, v in output.items()}
        if "error" in output:
            raw["executed"] = False  # the loop could not run it: asked for, not done
    if call.get("name") == "computer":
        action = anthropic_action(spec, (DECLARED.width, DECLARED.height), "")
    elif call.get("name") == "bash":
        action = Action(kind="command", code=str(spec.get("command", "")))
    else:
        action = Action(kind="tool_call", tool_name=str(call.get("name")), arguments=orjson.dumps(spec).decode())
    action.element = None
    action.raw = orjson.dumps(raw).decode()
    return action


def _logical(pairs: list[tuple[list, tuple[int, int]]], shot: tuple[int, int] | None) -> Space | None:
    """The logical screen: the screenshot divided by the smallest whole factor under which every executed pixel is
    the loop's `int(model * screen / declared)` (see the docstring)."""
    if not shot or not pairs:
        return None
    for factor in (1, 2, 3):
        w, h = shot[0] / factor, shot[1] / factor
        if all((int(m[0] * w / DECLARED.width), int(m[1] * h / DECLARED.height)) == e for m, e in pairs):
            return Space("logical_screen", w, h)
    return None


def _place(action: Action, shot: Space | None, logical: Space | None) -> None:
    raw = orjson.loads(action.raw)
    spec = raw["input"]
    xy = spec.get("coordinate")
    if not (isinstance(xy, list) and len(xy) == 2 and all(isinstance(v, (int, float)) for v in xy)):
        return
    status = (raw.get("tool_output") or {}).get("status")
    executed = _EXECUTED.search(status) if isinstance(status, str) else None
    note = "the model's numbers in the display the loop declared"
    action.x, action.y, raw["point"] = place(xy[0], xy[1], DECLARED, shot, note=note)
    if executed:
        raw["point"]["executed"] = {"x": int(executed.group(1)), "y": int(executed.group(2)),
                                    "space": logical.name if logical else "logical_screen (size unknown)"}
    action.raw = orjson.dumps(raw).decode()


def _read_step(source: Source, name: str, n: int) -> tuple[list[tuple[Action, str | None]], Rejected | None]:
    try:
        doc = orjson.loads(source.read_bytes(name))
    except orjson.JSONDecodeError as e:
        return [], Rejected("parse_error", f"{name}: invalid JSON: {e}", name)
    if not isinstance(doc, dict) or not isinstance(doc.get("response"), list):
        return [], Rejected("bad_record", f"{name}: no `response` list of content blocks", name)
    reasoning, calls, other = _calls(doc)
    output = doc.get("tool_output") if isinstance(doc.get("tool_output"), dict) else None
    if not calls:
        return [(Action(kind="message", text=reasoning, raw=orjson.dumps(doc).decode()), None)], None
    steps = []
    for i, call in enumerate(calls):  # the loop wrote the file once, with its last call's result
        action = _action(call, output if i == len(calls) - 1 else None)
        if other and i == 0:
            action.raw = orjson.dumps({**orjson.loads(action.raw), "other_blocks": other}).decode()
        steps.append((action, reasoning if i == 0 else None))
    return steps, None


def read(source: Source) -> Iterator[Episode | Rejected]:
    names = sorted((int(m.group(1)), name) for name in source.listdir() if (m := _STEP.fullmatch(name)))
    env: dict = {"loop": "anthropic computer tool, one file per step", "declared_display": [1024, 768]}
    task_file = next((n for n in sorted(source.listdir()) if _TASK.fullmatch(n)), None)
    task = source.read_bytes(task_file).decode("utf-8", "replace").strip() if task_file else None
    numbers = [n for n, _ in names]
    if numbers and numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        env["steps_not_written"] = sorted(set(range(numbers[0], numbers[-1] + 1)) - set(numbers))
    planned, shots = [], []
    for n, name in names:
        acts, problem = _read_step(source, name, n)
        if problem:
            yield problem
            continue
        shot = _screen(source, f"step_{n:02d}.png") or _screen(source, f"step_{n}.png")
        planned.append((n, acts))
        shots.append(shot)
    sizes = [(s.width, s.height) for s in shots if s and s.width and s.height]
    shot_space = Space("screenshot", *sizes[0]) if sizes else None
    pairs = []
    for _, acts in planned:
        for action, _ in acts:
            raw = orjson.loads(action.raw)
            m = _EXECUTED.search(str((raw.get("tool_output") or {}).get("status", "")))
            xy = raw["input"].get("coordinate")
            if m and isinstance(xy, list) and len(xy) == 2:
                pairs.append((xy, (int(m.group(1)), int(m.group(2)))))
    logical = _logical(pairs, sizes[0] if sizes else None)
    if logical:
        env["logical_screen"] = [logical.width, logical.height]
    elif pairs:
        warn(env, "computer_use_steps.executed_points", "the executed pixels are not the loop's scaling of the "
             "model's numbers from a 1024x768 display onto the screenshot's screen; kept raw in each action")
    steps, previous = [], Observation(kind="none")
    for (n, acts), shot in zip(planned, shots):
        for i, (action, reasoning) in enumerate(acts):
            _place(action, shot_space, logical)
            steps.append(Step(observation=previous if i == 0 else Observation(kind="none"), action=action,
                              reasoning=reasoning))
        out = orjson.loads(acts[-1][0].raw).get("tool_output") or {}
        previous = shot or Observation(kind="none")
        said = "".join(str(out.get(k) or "") for k in ("stdout", "stderr"))
        if said and previous.kind != "none":
            previous.text = said
    env["screenshots"] = sum(1 for s in shots if s)
    if not steps:
        yield episode_without_steps("no step file of the loop holds a step", source.uri, "unknown", None, task=task)
        return
    yield Episode(key="", domain="os", platform="macos", steps=steps, task=task, outcome="unknown",
                  terminated=False, final_observation=previous if previous.kind != "none" else None, env=env)
