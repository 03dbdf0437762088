"""browser-use agent histories: the JSON `AgentHistoryList.save_to_file` writes (`agent_history.json` by
custom), `{"history": [...], "usage"?}` with one item per agent step:

- `model_output`: `{evaluation_previous_goal, memory, next_goal, thinking?, action: [{"<name>": {params}}...]}`
  (before 0.2 the three goals sat in `current_state`); null when the model gave no valid output (an error step);
- `result`: one `ActionResult` per action run (`is_done`, `success`, `error`, `extracted_content`,
  `long_term_memory`, `metadata` with the pixel point an input or click acted on);
- `state`: the page the step started on (`url`, `title`, `tabs`, `interacted_element`: the DOM element each
  action targeted, or null; `screenshot_path`, or a base64 `screenshot` before 0.2);
- `metadata`: `step_start_time` / `step_end_time` (epoch seconds), `step_number`; `state_message` (newer):
  the text the model was given, which holds the task in `<user_request>`.

One episode per file (domain `web`, platform `browser`). Each action is a step: its observation is the page the
step started on (`url`, `title`, its screenshot when the file names one inside the input or holds it inline)
with the results of the actions before it and, where the history keeps the step's `state_message` (0.13.14
does, 0.7.10 does not), the `<browser_state>` browser-use showed the model (tabs, the indexed interactive
elements, the page's text) before the step's first action; `navigate` / `go_to_url` / `open_tab` are
`navigate`, `click` /
`click_element_by_index` / `click_element` `click`, `input` / `input_text` `type`, `scroll` /
`scroll_down` / `scroll_up` `scroll`, `send_keys` `key` (a `+` combination `hotkey`), `go_back` `back`,
`wait` `wait`, `done` `done` (its text the answer); any other action (search, extract, tabs, files,
dropdowns...) a `tool_call` named by the action. The targeted element (`x_path`, attributes, accessible name,
bounds) is the action's `element`, with the pixel point of the result's metadata. A click or input that ran at a
point (`click_x` / `input_x` in the result's metadata, else the model's `coordinate_x`) on a step with a
screenshot has x / y in that screenshot (`ingest.coords`: viewport pixels, which browser-use captures at device
scale factor 1; the source's numbers under `point` in `raw`); without a screenshot the history says no viewport
size, and x / y stay null. The step's goals and thinking are the first action's
reasoning; its start time every action's timestamp. A step without model output (an error) is kept as a
`wait` whose observation says the error. Outcome: the `done` result's `success` (success / failure); a history
without `done` is truncated (outcome unknown, not terminal). The task: the first `<user_request>` of a
`state_message`, else null (browser-use does not save it).

Screenshots: browser-use saves them in its agent folder (`browser_use_agent_<id>_<time>/screenshots/step_N.png`,
made in the temp folder unless the run sets it) and names them by absolute path. A path that does not lead into
the input (a run folder copied elsewhere) is looked up by the same tail beside the history, where a person keeps
the agent folder with it. Planning gives a history its agent folder beside it (`members`): the one its first
bytes name, else, where the folder holds one history, every agent folder there; its screenshots are read with
the history, its other files (browser-use's `todo.md`, saved results) are listed as not read.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
from typing import Iterator

import orjson

from ingest.coords import Space, place
from ingest.format_info import FormatInfo
from ingest.members import with_prefix
from ingest.png import png_size
from ingest.record import Action, Episode, Observation, Rejected, Step
from ingest.source import Source, SourceError, json_list
from ingest.times import parse_time
from ingest.tools import dumps

FORMAT = "browser_use"
VERSION = "4"
INFO = FormatInfo(
    group="browser", rank=152, domains=('web',), platform="browser",
    summary=("browser-use agent histories (`AgentHistoryList.save_to_file`: each action a step with its target "
             "element, the page it started on, the results before it, success from `done`)"),
    producer="browser-use (`Agent` with `ChatOpenAI`, `AgentHistoryList.save_to_file`)",
    versions="0.7.10, 0.13.14 (run here); real 0.7-era histories, the pre-0.2 layout",
    proof=("each release in its own venv drives Debian's chromium headless on a loopback page with its `ChatOpenAI` "
           "at the scripted model server: navigate, type into a field and click a button by the indexes of the state"
           " it sent, press Tab, click a link (0.13: at a viewport point; 0.7: by index), `done`; the script is the "
           "oracle for every action, and browser-use's own `AgentHistoryList.load_from_file` for the elements, URLs "
           "and results; points land on the pixels browser-use says it clicked, in the step's screenshot "
           "(`tests/ingest/browser/test_browser_use_producer.py`); a real MIT-licensed history (a failed navigation)"
           " is a golden, a real unlicensed form-filling run in `../shared/samples` (golden), the older layout "
           "(`current_state`, inline screenshots) hand-made after browser-use's own `model_dump` "
           "(`tests/ingest/browser/test_browser_use_read.py`)"),
)

_HEAD = re.compile(rb'^\s*\{\s*"history"\s*:\s*\[')
_MODEL_OUTPUT = re.compile(rb'"model_output"\s*:\s*(?:\{|null)')
_BROWSER_STATE = re.compile(r"<browser_state>\s*(.*?)\s*</browser_state>", re.S)
_USER_REQUEST = re.compile(r"<user_request>\s*(?:USER REQUEST:[^\n]*\n)?(.*?)\s*</user_request>", re.S)
_KINDS = {"navigate": "navigate", "go_to_url": "navigate", "open_tab": "navigate", "click": "click",
          "click_element_by_index": "click", "click_element": "click", "input": "type", "input_text": "type",
          "scroll": "scroll", "scroll_down": "scroll", "scroll_up": "scroll", "send_keys": "key",
          "go_back": "back", "wait": "wait", "done": "done"}
_GOALS = (("evaluation_previous_goal", "Evaluation"), ("memory", "Memory"), ("next_goal", "Next goal"))


def units(files: list[str], head) -> list[str]:
    """JSON files that open with `{"history": [` and hold a browser-use step's `model_output`."""
    return [p for p in files if p.endswith(".json") and _HEAD.match(head(p)) and _MODEL_OUTPUT.search(head(p))]


_AGENT_FOLDER = "browser_use_agent_"
_NAMED_FOLDER = re.compile(rb"/(browser_use_agent_[^/\\\"]+)/")


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """Each history's agent folder beside it (see the module docstring): its screenshots are read, its other
    files named as not read."""
    by_folder: dict[str, list[str]] = {}
    for path in found:
        by_folder.setdefault(posixpath.dirname(path), []).append(path)
    out: dict[str, list] = {}
    for folder, histories in by_folder.items():
        agents = _agent_folders(folder, files)
        unnamed = []
        for path in histories:
            named = _NAMED_FOLDER.search(head(path))
            name = named.group(1).decode("utf-8", "replace") if named else None
            if name in agents:
                out[path] = _member_files(agents.pop(name))
            elif name is None:
                unnamed.append(path)
        if len(unnamed) == 1 or (unnamed and len(histories) == 1):  # one history here: the agent folders are its
            out[unnamed[0]] = [m for paths in agents.values() for m in _member_files(paths)]
    return out


def _agent_folders(folder: str, files: list[str]) -> dict[str, list[str]]:
    """{agent folder name: its files} of `browser_use_agent_*` folders in `folder` (sorted `files`, by bisection)."""
    out: dict[str, list[str]] = {}
    for path in with_prefix(files, f"{folder}/{_AGENT_FOLDER}"):
        name, _, rest = path[len(folder) + 1:].partition("/")
        if rest:
            out.setdefault(name, []).append(path)
    return out


def _member_files(paths: list[str]) -> list:
    return [p if p.split("/")[-2] == "screenshots" and p.endswith(".png") else
            (p, "a file of browser-use's agent folder (its todo list, saved results); the reader reads the "
                "screenshots the history names") for p in paths]


def _reasoning(output: dict) -> str | None:
    goals = output.get("current_state") if isinstance(output.get("current_state"), dict) else output
    lines = [f"{label}: {goals[key]}" for key, label in _GOALS if isinstance(goals.get(key), str) and goals[key]]
    if isinstance(output.get("thinking"), str) and output["thinking"]:
        lines.insert(0, output["thinking"])
    return "\n".join(lines) or None


def _executed_point(point: dict) -> tuple[float, float, str] | None:
    """The viewport pixel the action ran at: the result's `click_x` / `input_x` (after browser-use scaled a model's
    point from a resized screenshot), else the model's `coordinate_x`."""
    for prefix in ("click", "input", "coordinate"):
        x, y = point.get(f"{prefix}_x"), point.get(f"{prefix}_y")
        if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
            return float(x), float(y), f"{prefix}_x/{prefix}_y"
    return None


def _place(act: Action, point: dict, page: Observation, raw: str) -> None:
    """x / y in the screenshot the step observed: browser-use captures the viewport at device scale factor 1,
    so the viewport's CSS pixels are the screenshot's (the history records no viewport size of its own)."""
    executed = _executed_point(point)
    if executed is None or not (page.width and page.height):
        return
    x, y, source_fields = executed
    act.x, act.y, entry = place(x, y, Space("viewport", page.width, page.height),
                                note=f"{source_fields}; viewport size taken from the step's screenshot")
    act.raw = dumps({"action": orjson.loads(raw), "point": entry})


def _action(name: str, params, element, result: dict, raw: str, page: Observation) -> Action:
    kind = _KINDS.get(name, "tool_call")
    params = params if isinstance(params, dict) else {"value": params}
    meta = result.get("metadata") if isinstance(result.get("metadata"), dict) else {}
    point = {k: v for k, v in meta.items() if k.endswith(("_x", "_y"))}
    if isinstance(params.get("coordinate_x"), (int, float)):
        point |= {"coordinate_x": params["coordinate_x"], "coordinate_y": params.get("coordinate_y")}
    target = dict(element) if isinstance(element, dict) else ({} if point else None)
    if point:
        target["pixel_point"] = point
    act = Action(kind=kind, element=dumps(target) if target else None, raw=raw)
    if kind in ("click", "type"):
        _place(act, point, page, raw)
    if kind == "navigate":
        act.text = _str(params.get("url"))
    elif kind in ("type", "done"):
        act.text = _str(params.get("text"))
    elif kind == "scroll":
        down = params.get("down", name != "scroll_up")
        act.direction = "down" if down else "up"
        amount = params.get("pages", params.get("amount"))
        act.text = str(amount) if amount is not None else None
    elif kind == "key":
        keys = [k for k in str(params.get("keys", "")).split("+") if k]
        act.kind, act.keys = ("hotkey" if len(keys) > 1 else "key"), keys
    elif kind == "wait":
        seconds = params.get("seconds")
        act.duration_s = float(seconds) if isinstance(seconds, (int, float)) else None
    elif kind == "tool_call":
        act.tool_name, act.arguments = name, dumps(params)
    return act


def _str(value) -> str | None:
    return value if isinstance(value, str) else None


def _screenshot(source: Source, state: dict, problems: list[Rejected], where: str) -> Observation:
    """The page the step started on; its screenshot from the inline base64 or the file it names."""
    obs = Observation(kind="web", url=_str(state.get("url")), title=_str(state.get("title")))
    data = None
    if isinstance(state.get("screenshot"), str):
        try:
            data = base64.b64decode(state["screenshot"], validate=True)
        except (binascii.Error, ValueError):
            problems.append(Rejected("bad_record", f"{where}: state.screenshot is not base64; left out", where))
    elif isinstance(state.get("screenshot_path"), str):
        data = _saved_screenshot(source, state["screenshot_path"])
    if data:
        size = png_size(data)
        obs.screenshot = source.put_blob(data, "image/png", source.uri)
        obs.width, obs.height = size if size else (None, None)
    return obs


def _saved_screenshot(source: Source, named: str) -> bytes | None:
    """The screenshot file the history names, else the same agent-folder tail beside the history; None when
    neither is in the input (a temporary file of the run: the page has no picture)."""
    tried = [named]
    at = named.find("/" + _AGENT_FOLDER)
    if at >= 0:
        tried.append(posixpath.join(posixpath.dirname(source.path), named[at + 1:]))
    for candidate in tried:
        try:
            return source.read_path(candidate)
        except SourceError:
            continue
    return None


def _result_text(result: dict) -> str | None:
    for key in ("error", "extracted_content", "long_term_memory"):
        if isinstance(result.get(key), str) and result[key]:
            return f"Error: {result[key]}" if key == "error" else result[key]
    return None


def _page_text(obs: Observation, before: list[str], shown: str | None = None) -> str:
    return "\n".join([f"URL: {obs.url}", f"Title: {obs.title}", *([shown] if shown else []), *before])


def _browser_state(item: dict) -> str | None:
    """The page as browser-use showed it to the model (`<browser_state>` of the step's `state_message`: tabs,
    scroll position, the indexed interactive elements and the page's text), when the history keeps it."""
    message = item.get("state_message")
    found = _BROWSER_STATE.search(message) if isinstance(message, str) else None
    return found.group(1) if found else None


_ITEM_TYPES = {"model_output": dict, "result": list, "state": dict, "metadata": dict}


def _check_types(item: dict, where: str, problems: list[Rejected]) -> None:
    """A row for each field of a history item that is neither null nor of the type browser-use writes (the
    step is still made from what can be read)."""
    for key, kind in _ITEM_TYPES.items():
        value = item.get(key)
        if value is not None and not isinstance(value, kind):
            problems.append(Rejected("bad_record", f"{where}.{key}: {type(value).__name__}, expected "
                                     f"{'an object' if kind is dict else 'a list'}; read as absent", where,
                                     record_id=where.rsplit(": ", 1)[-1]))


def _item_steps(source: Source, item: dict, where: str, carried: list[str], problems: list[Rejected]):
    """The steps of one history item, and the result texts the next item's first observation carries."""
    _check_types(item, where, problems)
    state = item.get("state") if isinstance(item.get("state"), dict) else {}
    output = item.get("model_output") if isinstance(item.get("model_output"), dict) else None
    results = [r for r in item.get("result") or [] if isinstance(r, dict)]
    page = _screenshot(source, state, problems, where)
    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    stamp = parse_time(meta.get("step_start_time"))
    actions = [a for a in (output or {}).get("action") or [] if isinstance(a, dict) and a]
    elements = state.get("interacted_element") if isinstance(state.get("interacted_element"), list) else []
    steps, seen, shown = [], list(carried), _browser_state(item)
    if not actions:  # no valid model output: the step is the error it hit
        step = Step(Observation(**{**vars(page), "text": _page_text(page, seen, shown)}),
                    Action(kind="wait", raw=dumps(item)), timestamp=stamp,
                    reasoning=_reasoning(output) if output else None)
        return [step], [t for t in map(_result_text, results) if t]
    for j, spec in enumerate(actions):
        name, params = next(iter(spec.items()))
        result = results[j] if j < len(results) else {}
        # the state browser-use showed is the page before the step's first action (later ones act on what it became)
        obs = Observation(**{**vars(page), "text": _page_text(page, seen, shown if j == 0 else None)})
        act = _action(name, params, elements[j] if j < len(elements) else None, result, dumps(spec), page)
        steps.append(Step(obs, act, timestamp=stamp, reasoning=_reasoning(output) if j == 0 else None))
        seen = [t for t in [_result_text(result)] if t]
    return steps, seen


def _outcome(history: list) -> tuple[str, bool]:
    for item in reversed(history):
        for r in item.get("result") or [] if isinstance(item, dict) else []:
            if isinstance(r, dict) and r.get("is_done"):
                success = r.get("success")
                return ("success" if success else "failure" if success is False else "unknown"), True
    return "unknown", False


def _task(history: list) -> str | None:
    for item in history:
        message = item.get("state_message") if isinstance(item, dict) else None
        found = _USER_REQUEST.search(message) if isinstance(message, str) else None
        if found:
            return found.group(1).strip()
    return None


def read(source: Source) -> Iterator[Episode | Rejected]:
    name = source.uri
    doc, history, problem = json_list(source, "history")
    if problem is not None:
        yield problem
        return
    steps, problems, carried = [], [], []
    for i, item in enumerate(history):
        if not isinstance(item, dict):
            problems.append(Rejected("bad_record", f"{name}: history[{i}] is not an object; left out", name,
                                     record_id=f"history[{i}]"))
            continue
        try:
            found, carried = _item_steps(source, item, f"{name}: history[{i}]", carried, problems)
        except (TypeError, AttributeError, ValueError) as e:  # a field of another type: this step only
            problems.append(Rejected("bad_record", f"{name}: history[{i}]: a field has a type browser-use does not "
                                     f"write ({type(e).__name__}: {e}); the step is left out", name,
                                     record_id=f"history[{i}]"))
            continue
        steps += found
    yield from problems
    outcome, done = _outcome(history)
    final = Observation(kind="text", text="\n".join(carried)) if carried else None
    env = {k: doc[k] for k in doc if k != "history"}
    env["steps_recorded"] = len(history)
    yield Episode(key="", domain="web", platform="browser", steps=steps, task=_task(history), outcome=outcome,
                  terminated=done, final_observation=final, env=env)
