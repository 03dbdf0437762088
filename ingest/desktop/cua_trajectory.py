"""cua-agent trajectories (`ComputerAgent(trajectory_dir=...)`, its `TrajectorySaverCallback`): a computer-use
loop logged per step, one folder per run.

`<trajectory_id>/metadata.json` holds the run (`trajectory_id`, `status` running/completed, `kwargs` with the
task's `messages`, the `model` and the `agent_loop`, and at the end `total_usage`, `total_turns`, `new_items`).
Beside it, `turn_NNN/` folders hold numbered artifacts (`NNNN_<name>.json|png`, one counter across the run):
`api_start` / `api_result` (the request to the vendor and its answer, images replaced by `[omitted]`),
`agent_response` (the loop's answer as Responses items: `computer_call` with `action: {type, x, y, ...}`,
`function_call`, `message`, `reasoning`), `computer_call_result` / `function_call_result` (the call and the
items it gave back) and the screenshots: `screenshot_after` / `screenshot` (the screen after a call: what the
model sees next) and `screenshot_action` (a copy with a crosshair drawn on the clicked point: counted in env,
never an observation). With cua's `screenshot_dir` option (made for OSWorld evaluations) each call's screenshot is
also written outside the run as `<screenshot_dir>/<call_id>.png` and metadata.json names that file instead of
embedding it: such copies are the run's files (found by the call ids its turn folders hold), listed as not read
since the turn folder keeps the same screen.

One step per call of an `agent_response`, and one per reply without calls (a `message`), through the transcript
core. A computer call's action is read as `ingest.chat.computer_use` reads OpenAI's `computer_call`; its point
is where the loop executed it, in the pixels of the screenshot it acted on (cua 0.9 scales the model's numbers
from the declared display to the screenshot before it executes them), placed through `ingest.coords`; the model's
own call (its numbers in the declared display, `display_width_px` x `display_height_px` of the request's
tools) is kept beside it in `raw` when the `api_result` has it. cua 0.4's Anthropic loop executed the model's
numbers as given while declaring a 1024x768 display when the computer gave no size, the model seeing the
unscaled screenshot: where the executed point is the model's own and the declared display is not the
screenshot's size, `raw.model_numbers` says the numbers are the screenshot's pixels. The task is the run's
`messages` (a string: one user message). A model that answers in text (UI-TARS:
`Thought: ... Action: click(start_box='(x,y)')`, `ingest.ui_tars`) has its reply and parsed action kept there,
with the space the loop read its numbers in (cua's UI-TARS loop: thousandths of the screenshot, UI-TARS 1.0's
convention, where ByteDance's parser reads UI-TARS 1.5's as pixels of the resized screenshot), its `finished`
a `done` with the content. The screenshot before the first call (`screenshot_before`) is the task's
observation. The observation after a computer call is its
screenshot, a blob (`kind` screen without text: these runs record no text state, said in
`env.observation_text`). cua records no evaluator: the outcome is unknown; a run whose `status` is `completed`
ended (terminated).
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from typing import Iterator

import orjson

from ingest.chat.computer_use import domain_of, openai_action
from ingest.coords import Space, place
from ingest.format_info import FormatInfo
from ingest.members import with_prefix
from ingest.png import png_size
from ingest.record import Action, Episode, Observation, Rejected, warn
from ingest.source import Source, SourceError, parse_json
from ingest.tools import dumps
from ingest.transcript import Message, Run, ToolCall, records
from ingest.ui_tars import parse_reply

FORMAT = "cua_trajectory"
VERSION = "3"
INFO = FormatInfo(
    group=None, rank=206, domains=('os', 'web'), platform="varies",
    summary=("cua-agent trajectories (computer-use loops logged per step: `turn_NNN/` folders of the vendor's "
             "request and answer, the loop's `computer_call`s with the pixels it executed, the model's own "
             "numbers in the declared display, or its UI-TARS reply, kept beside them, one screenshot per call as "
             "the next observation)"),
    producer="cua-agent's `ComputerAgent` with its `TrajectorySaverCallback`, on an X virtual display",
    versions=("cua-agent 0.4.0 (real runs: its Anthropic loop); cua-agent 0.9.1 (Anthropic `computer` tool loop; "
              "OpenAI `computer-use-preview` `computer_call` loop; its UI-TARS loop), ui-tars 0.5.1 (ByteDance's "
              "action parser)"),
    proof=("cua-agent runs on Debian's Xvfb against the scripted model server (Anthropic Messages; OpenAI "
           "Responses with `computer_call` items), its computer a `CustomComputerHandler` over xdotool and "
           "ImageMagick's screenshots of a Tk window; the script is the oracle for every action and its point "
           "(Anthropic: the model's numbers in the declared 1024x640 display, executed at the scaled pixel of the "
           "1440x900 screen; UI-TARS: its `Thought: ... Action: click(start_box=...)` replies, read by the loop as "
           "thousandths of the screenshot), and the window's own event log says where each click and key landed; "
           "ByteDance's own parser reads every UI-TARS reply as we do (`tests/ingest/desktop/test_cua_producer.py`);"
           " real cua-agent 0.4.0 runs of a shopping agent in trycua/cua's pull request #412 (claude-opus-4, a "
           "fallback 1024x768 declared display and 1512x857 screenshots, the points checked against the crosshair "
           "cua drew), goldens (`tests/ingest/desktop/test_cua_trajectory_real.py`)"),
)

METADATA = "metadata.json"
_ARTIFACT = re.compile(r"(\d{4,})_([a-z_]+)\.(json|png)$")  # the counter is zero-padded to 4 digits, then grows
_TURN = re.compile(r"turn_\d{3,}")
_SCREENSHOTS = ("screenshot_after", "screenshot")  # the screen after a call, as the loop sent it on


def units(files: list[str], head) -> list[str]:
    """Folders holding `metadata.json` that opens with cua-agent's `trajectory_id` and `turn_NNN/` folders
    beside it."""
    turns = {posixpath.dirname(posixpath.dirname(p)) for p in files
             if _TURN.fullmatch(posixpath.basename(posixpath.dirname(p)))}
    found = []
    for path in files:
        folder = posixpath.dirname(path)
        if posixpath.basename(path) == METADATA and folder in turns and b'"trajectory_id"' in head(path)[:512]:
            found.append(folder)
    return sorted(found)


_CALL_RESULT = re.compile(r"turn_\d{3,}/\d{4,}_(computer|function)_call_result\.json")
_CALL_ID = re.compile(rb'"call_id": "([^"\\]{1,200})"')
_IMAGE = re.compile(r"\.(png|jpe?g|webp)$")
COPY_WHY = ("a copy of the call's screenshot written by cua's `screenshot_dir` option (named by the call's id); the "
            "turn folder keeps the same screen, which is read")


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """Each run's screenshots that cua's `screenshot_dir` option wrote outside the run (`<dir>/<call_id>.png`, the
    calls' screenshots moved out of metadata.json; the turn folder holds the same screens): files of the run,
    left unread. A call's id is read from the head of its turn's `computer_call_result` (the call comes first)."""
    out: dict[str, list] = {run: [] for run in found}
    copies: dict[str, list[str]] = {}  # images outside turn folders, by name: the only candidates
    for path in files:
        folder, name = posixpath.split(path)
        stem, ext = posixpath.splitext(name)
        if _IMAGE.fullmatch(ext) and not _TURN.fullmatch(posixpath.basename(folder)):
            copies.setdefault(stem, []).append(path)
    if not copies:
        return out  # no run here used the option: no call result is opened
    for run in found:
        for path in with_prefix(files, run + "/"):
            if _CALL_RESULT.fullmatch(path[len(run) + 1:]) and (m := _CALL_ID.search(head(path))):
                out[run].extend((copy, COPY_WHY) for copy in copies.pop(m.group(1).decode("utf-8", "replace"), ()))
    return out


def _artifacts(source: Source) -> list[tuple[int, str, str]]:
    """(counter, name, relative path) of every artifact of every turn, in the order the loop saved them; a
    file named otherwise comes back with counter -1 and name "" (the reader says it was not read)."""
    found = []
    for turn in source.listdir():
        if not _TURN.fullmatch(turn) or not source.is_dir(turn):
            continue
        for name in source.listdir(turn):
            m = _ARTIFACT.fullmatch(name)
            found.append((int(m.group(1)), m.group(2), f"{turn}/{name}") if m else (-1, "", f"{turn}/{name}"))
    return sorted(found)


def _reply_text(result: dict) -> str | None:
    """The model's reply when it answered in text (UI-TARS's `Thought: ... Action: ...`), not tool calls."""
    answer = result.get("result") if isinstance(result.get("result"), dict) else {}
    for choice in answer.get("choices") or []:
        message = (choice or {}).get("message") or {}
        if not message.get("tool_calls") and isinstance(message.get("content"), str):
            return message["content"]
    return None


def _text_reply_calls(state: dict) -> list[dict]:
    """The actions of the text reply the loop turned into this answer's calls, each with the reply beside it
    and the space its numbers were read in (cua's UI-TARS loop: thousandths of the screenshot); consumed."""
    reply = state.pop("reply", None)
    if not reply or "Action:" not in reply:
        return []
    _, actions = parse_reply(reply)
    read_as = "thousandths of the screenshot" if "UITARS" in (state.get("agent_loop") or "").upper() else None
    return [{**a, "reply": reply, **({"read_as": read_as} if read_as else {})} for a in actions]


def _model_calls(result: dict) -> dict[str, dict]:
    """call id -> the model's own call, from an `api_result`: the arguments of a chat completion's tool call
    (litellm's form of Anthropic's answer), or a Responses `computer_call`'s action."""
    answer = result.get("result") if isinstance(result.get("result"), dict) else {}
    calls = {}
    for item in answer.get("output") or []:
        if isinstance(item, dict) and item.get("type") == "computer_call":
            calls[item.get("call_id")] = item.get("action")
    for choice in answer.get("choices") or []:
        for call in ((choice or {}).get("message") or {}).get("tool_calls") or []:
            arguments = ((call or {}).get("function") or {}).get("arguments")
            try:
                calls[call.get("id")] = orjson.loads(arguments) if isinstance(arguments, str) else arguments
            except orjson.JSONDecodeError:
                calls[call.get("id")] = {"unparsed": arguments}
    return calls


def _tool(start: dict) -> tuple[Space | None, str | None]:
    """The display size the request's computer tool declared to the model (Anthropic `display_width_px`,
    OpenAI `display_width`) and the environment it named (OpenAI's `environment`)."""
    for tool in (start.get("kwargs") or {}).get("tools") or []:
        params = {**(tool or {}), **(((tool or {}).get("function") or {}).get("parameters") or {})}
        width = params.get("display_width_px") or params.get("display_width")
        height = params.get("display_height_px") or params.get("display_height")
        if isinstance(width, (int, float)) and isinstance(height, (int, float)):
            environment = params.get("environment")
            return Space("declared_display", width, height), environment if isinstance(environment, str) else None
    return None, None


_UUID1_EPOCH = 122192928000000000  # 100 ns intervals from 1582-10-15 (uuid1's clock) to 1970-01-01


def _time(value):
    """A `created_at` / `timestamp` of uuid1's clock (a string of 100 ns intervals) as aware UTC, or None."""
    if not (isinstance(value, str) and value.isdigit()):
        return None
    seconds = (int(value) - _UUID1_EPOCH) / 1e7
    if not 0 < seconds < 1e10:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


AS_GIVEN = "executed as given: the loop did not scale them from the declared display to the screenshot"


def _executed_as_given(model_call, x, y, declared: Space, screen: Space | None) -> bool:
    """True when the loop clicked the model's own numbers unchanged although the display it declared is not the
    screenshot's size (cua-agent 0.4's Anthropic loop declares 1024x768 when the computer gives no size and sends
    the screenshot unscaled): those numbers are screenshot pixels, not the declared display's."""
    point = model_call.get("coordinate") if isinstance(model_call, dict) else None
    return (isinstance(point, list) and point == [x, y] and screen is not None
            and (declared.width, declared.height) != (screen.width, screen.height))


def _computer_action(item: dict, screen: Space | None, model_call, declared: Space | None) -> Action:
    """A `computer_call`'s action, its point placed in the screenshot it acted on (where cua executes it)."""
    spec = item.get("action") if isinstance(item.get("action"), dict) else {}
    action = openai_action(spec, (screen.width, screen.height) if screen else None, "")
    raw: dict = {"call": item}
    x, y = spec.get("x"), spec.get("y")
    if screen and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y)):
        action.x, action.y, raw["point"] = place(x, y, screen, note="executed by the loop")
    if model_call is not None:
        raw["model_call"] = model_call
        if declared:
            raw["declared_display"] = {"width": declared.width, "height": declared.height}
            if _executed_as_given(model_call, x, y, declared, screen):
                raw["model_numbers"] = AS_GIVEN
    action.raw = dumps(raw)
    return action


def _reply(data: dict, state: dict) -> Message:
    """An `agent_response`'s items as one assistant turn: its text, reasoning and calls."""
    texts, thoughts, calls, other = [], [], [], []
    parsed = _text_reply_calls(state)
    for item in (data.get("response") or {}).get("output") or []:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "message":
            texts += [c.get("text") for c in item.get("content") or [] if isinstance(c, dict) and c.get("text")]
        elif kind == "reasoning":
            thoughts += [s.get("text") for s in item.get("summary") or [] if isinstance(s, dict) and s.get("text")]
        elif kind == "computer_call":
            model_call = state["model_calls"].get(item.get("call_id"))
            if model_call is None and parsed:
                model_call = parsed.pop(0)
            action = _computer_action(item, state["screen"], model_call, state["declared"])
            calls.append(ToolCall(item.get("call_id"), "computer", item.get("action"), action=action))
        elif kind == "function_call":
            calls.append(ToolCall(item.get("call_id"), item.get("name"), item.get("arguments"), raw=item))
        else:
            other.append(item)
    if not calls and parsed and parsed[0].get("name") == "finished":  # UI-TARS ends the task with its answer
        text = parsed[0]["args"].get("content") or "\n".join(texts) or None
        calls.append(ToolCall(None, "finished", parsed[0]["args"], action=Action(
            kind="done", text=text, raw=dumps({"model_call": parsed[0], "model_reply": parsed[0]["reply"]}))))
        texts = []
    return Message(role="assistant", text="\n".join(texts) or None, tool_calls=calls,
                   reasoning="\n".join(thoughts) or None, model=data.get("model"),
                   timestamp=_time(data.get("timestamp")), raw=other or None)


def _result(data: dict, state: dict) -> Message:
    """A call's result: the screenshot saved after a computer call, a function call's output as text."""
    item = data.get("item") if isinstance(data.get("item"), dict) else {}
    if item.get("type") == "computer_call":
        ref, size = state.pop("shot", (None, None))
        obs = Observation(kind="screen", screenshot=ref, width=size[0] if size else None,
                          height=size[1] if size else None)
        if ref is None:
            state["without_screenshot"] += 1
        return Message(role="tool", tool_call_id=item.get("call_id"), observation=obs)
    outputs = [r.get("output") for r in data.get("result") or [] if isinstance(r, dict) and "output" in r]
    text = "\n".join(o if isinstance(o, str) else orjson.dumps(o).decode() for o in outputs)
    return Message(role="tool", tool_call_id=item.get("call_id"), text=text or None)


def _screenshot(source: Source, rel: str, state: dict, rows: list[Rejected]) -> None:
    try:
        data = source.read_bytes(rel)
    except SourceError as e:
        rows.append(Rejected(e.rule, f"{e.reason}; the call's result is kept without its screenshot", rel))
        return
    size = png_size(data)
    state["shot"] = (source.put_blob(data, "image/png", source.uri), size)
    if size:
        state["screen"] = Space("screenshot", size[0], size[1])
    state["screenshots"] += 1


def _turn_messages(source: Source, state: dict, env: dict, rows: list[Rejected]) -> list[Message]:
    messages = []
    for _, name, rel in _artifacts(source):
        if name == "screenshot_before":  # the screen before the first call: the opening observation
            _screenshot(source, rel, state, rows)
            state["before"] = state.pop("shot", None)
            continue
        if name in _SCREENSHOTS:
            _screenshot(source, rel, state, rows)
            continue
        if name == "screenshot_action":
            state["annotated"] += 1
            continue
        if not name or not rel.endswith(".json"):
            warn(env, "unknown_artifact", f"a file of a turn that is no artifact cua-agent names is not read ({rel})")
            continue
        try:
            data = parse_json(source.read_bytes(rel), rel, source.budgets)
        except SourceError as e:
            rows.append(Rejected(e.rule, f"{e.reason}; the turn's artifact is left out", rel))
            continue
        if not isinstance(data, dict):
            rows.append(Rejected("bad_record", f"{rel}: expected a JSON object", rel))
        elif name == "api_start":
            declared, environment = _tool(data)
            state["declared"] = declared or state["declared"]
            state["environment"] = environment or state["environment"]
        elif name == "api_result":
            state["model_calls"].update(_model_calls(data))
            state["reply"] = _reply_text(data)
        elif name == "agent_response":
            messages.append(_reply(data, state))
        elif name in ("computer_call_result", "function_call_result"):
            messages.append(_result(data, state))
        else:
            warn(env, "unknown_artifact", f"an artifact cua-agent names {name!r} is kept out of the steps ({rel})")
    return messages


def _opening(meta: dict) -> list[Message]:
    """The run's own messages before the loop's first answer: the task (and any system prompt)."""
    messages = []
    given = (meta.get("kwargs") or {}).get("messages") or []
    if isinstance(given, str):  # `agent.run("task")`: cua takes a string as the user's one message
        given = [{"role": "user", "content": given}]
    for msg in given:
        if not isinstance(msg, dict) or msg.get("role") not in ("system", "user"):
            continue
        content = msg.get("content")
        if isinstance(content, list):
            content = "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("text"))
        messages.append(Message(role=msg["role"], text=content if isinstance(content, str) else None))
    return messages


def _observe_opening(messages: list[Message], before) -> None:
    """The screenshot the loop took before its first call, on the task's observation."""
    first = next((m for m in messages if m.role == "user"), None)
    if not before or first is None:
        return
    ref, size = before
    first.observation = Observation(kind="screen", text=first.text, screenshot=ref,
                                    width=size[0] if size else None, height=size[1] if size else None)


def _metadata(source: Source, rows: list[Rejected]) -> dict:
    """The run's metadata, or {} with a row saying why: a run killed mid-write, or one whose metadata outgrew
    the record budget (cua keeps every screenshot of `new_items` in it, base64), is still read from its turns."""
    try:
        meta = parse_json(source.read_bytes(METADATA), METADATA, source.budgets)
    except SourceError as e:
        rows.append(Rejected(e.rule, f"{e.reason}; the run is read from its turns without it", METADATA))
        return {}
    if not isinstance(meta, dict):
        rows.append(Rejected("bad_record", f"{METADATA}: expected a JSON object; the run is read from its turns "
                             "without it", METADATA))
        return {}
    return meta


def _task_from_turns(source: Source) -> list[Message]:
    """The task when the metadata is lost: the user messages of the first answer's input."""
    for _, name, rel in _artifacts(source):
        if name == "agent_response":  # its `kwargs.messages` are the loop's input, the task first
            try:
                data = parse_json(source.read_bytes(rel), rel, source.budgets)
            except SourceError:
                continue
            if isinstance(data, dict):
                return _opening(data)
    return []


def read(source: Source) -> Iterator[Episode | Rejected]:
    rows: list[Rejected] = []
    meta = _metadata(source, rows)
    kwargs = meta.get("kwargs") if isinstance(meta.get("kwargs"), dict) else {}
    env: dict = {k: meta[k] for k in ("trajectory_id", "status", "total_turns", "total_usage") if k in meta}
    env.update({k: kwargs[k] for k in ("agent_loop", "model") if k in kwargs})
    state = {"screen": None, "declared": None, "model_calls": {}, "environment": None, "screenshots": 0,
             "agent_loop": kwargs.get("agent_loop"), "annotated": 0,
             "without_screenshot": 0}
    opening = _opening(meta) or _task_from_turns(source)
    messages = opening + _turn_messages(source, state, env, rows)
    _observe_opening(messages, state.get("before"))
    env["screenshots"] = state["screenshots"]
    env["observation_text"] = "none: screenshots only"
    if state["annotated"]:
        env["screenshots_with_crosshair"] = state["annotated"]  # copies of observations, marked by the loop
    if state["without_screenshot"]:
        env["results_without_screenshot"] = state["without_screenshot"]
    if state["declared"]:
        env["declared_display"] = {"width": state["declared"].width, "height": state["declared"].height}
    if state["environment"]:
        env["environment"] = state["environment"]
    domain, platform = domain_of(state["environment"])
    yield from rows
    yield from records(messages, Run(domain=domain, platform=platform, agent=kwargs.get("model"), env=env,
                                     terminated=meta.get("status") == "completed"), METADATA)
