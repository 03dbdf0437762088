"""Agent S session logs (`gui_agents`, the `agent_s` command: Agent S3): the `logs/` folder it writes in the
folder it runs in, three files per session named by its start (`normal-<YYYYMMDD@HHMMSS>.log`, INFO and up;
`debug-<...>.log`, everything; `sdebug-<...>.log`, the `desktopenv` logger), each record a line
`[<local time> <LEVEL> <module>/<line>-<process>] <message>` coloured with ANSI codes, a message going on over
the lines after it.

One episode per session, read from its `normal` log (the `debug` and `sdebug` logs of the same session repeat
its records among library noise: counted in env, not read twice). One step per `PLAN:` record (the worker's
answer): its action is the grounded action in the plan's last ```python block, Agent S's own call
(`agent.click("<element description>", 1, "left")`, `agent.type(...)`, `agent.hotkey([...])`, `agent.done()`),
decoded as a literal call, never run; the target element is the description the grounding model was asked to
find (`element: {"description": ...}`); its reasoning the plan's text before the code and the `REFLECTION:`
before it. The log keeps no coordinates (the grounding model's answer and the pyautogui code executed are
printed, not logged) and no screenshots: the observations are `none`, said in `env`. The task is not logged
either (the command reads it from its prompt). `agent.done()` / `agent.fail()` end the episode: the agent's
claim, kept in `env.agent_claim` (no evaluator: the outcome is unknown). Times are the machine's local time
with no zone: kept in `raw`, never guessed into UTC.
"""

from __future__ import annotations

import ast
import posixpath
import re
from typing import Iterator

import orjson

from ingest.arrow import checked_episode
from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Observation, Rejected, Step, episode_without_steps
from ingest.source import Source, text_lines

FORMAT = "agent_s_log"
VERSION = "1"
INFO = FormatInfo(
    group=None, rank=207, domains=('os',), platform="varies",
    summary=("Agent S session logs (`logs/normal-*.log` of the `agent_s` command: each `PLAN:` a step, its "
             "grounded `agent.click(...)` / `type` / `hotkey` / `done` call the action with the element "
             "description it targets, reflections as reasoning)"),
    producer="Agent S3 (`gui_agents` `agent_s` command), on an X virtual display",
    versions="gui-agents 0.3.2",
    proof=("the `agent_s` command runs on Debian's Xvfb with its worker and grounding models at the scripted model "
           "server (Chat Completions), clicking and typing in a Tk window through pyautogui; the script is the "
           "oracle for every plan, action and element, the window's event log for where the grounded clicks "
           "landed (`tests/ingest/desktop/test_agent_s_producer.py`)"),
)

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_HEADER = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (\w+) ([\w.]+)/(\d+)-([^\]]*)\] ?(.*)$")
_LOG = re.compile(r"(normal|debug|sdebug)-(\d{8}@\d{6})\.log$")
_CODE = re.compile(r"```python\s*\n(.*?)```", re.S)
_CLICK_KINDS = {(1, "left"): "click", (2, "left"): "double_click", (1, "right"): "right_click"}


def units(files: list[str], head) -> list[str]:
    """Folders holding Agent S's `normal-<YYYYMMDD@HHMMSS>.log` whose first records are its own (ANSI-coloured
    `[time LEVEL module/line-process]` headers with a `PLAN:`, `REFLECTION` or `CodeAgent` message)."""
    found = set()
    for path in files:
        m = _LOG.search(posixpath.basename(path))
        if not m or m.group(1) != "normal":
            continue
        start = _ANSI.sub("", head(path).decode("utf-8", "replace"))
        first = start.split("\n", 1)[0]
        if _HEADER.match(first) and re.search(r"\] (PLAN:|REFLECTION|CodeAgent initialized)", start):
            found.add(posixpath.dirname(path))
    return sorted(found)


def _records(data: bytes, name: str, source: Source, rows: list[Rejected]) -> list[dict]:
    """The log's records: {time, level, module, line, message} with continuation lines joined."""
    records: list[dict] = []
    for n, line, problem in text_lines(data, name, source.budgets):
        if problem:
            rows.append(Rejected("bad_record", problem, name, line=n))
            if line is None:
                continue
        line = _ANSI.sub("", line or "")
        m = _HEADER.match(line)
        if m:
            records.append({"time": m.group(1), "level": m.group(2), "module": m.group(3), "line": n,
                            "message": m.group(6)})
        elif records:
            records[-1]["message"] += "\n" + line
    return records


def _call(code: str) -> tuple[str, list, dict] | None:
    """The last `agent.<name>(...)` call of a plan's code, its arguments decoded as literals; None otherwise."""
    try:
        tree = ast.parse(code.strip())
    except SyntaxError:
        return None
    calls = [n.value for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
    if not calls or not isinstance(calls[-1].func, ast.Attribute) or not isinstance(calls[-1].func.value, ast.Name):
        return None
    call = calls[-1]
    try:
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
    except ValueError:
        return None
    return call.func.attr, args, kwargs


# Agent S3's grounded actions (`OSWorldACI`), their parameters in order, to bind positional arguments
_PARAMS = {
    "click": ("element_description", "num_clicks", "button_type", "hold_keys"),
    "type": ("element_description", "text", "overwrite", "enter"),
    "hotkey": ("keys",), "hold_and_press": ("hold_keys", "press_keys"),
    "scroll": ("element_description", "clicks", "shift"), "open": ("app_or_filename",),
    "switch_applications": ("app_code",), "drag_and_drop": ("starting_description", "ending_description", "hold_keys"),
    "wait": ("time",), "done": (), "fail": (),
}


def _element(description) -> str | None:
    return orjson.dumps({"description": description}).decode() if isinstance(description, str) else None


def _action(name: str, args: dict, raw: str) -> Action:
    """Agent S's grounded call as an action: the element it names, no point (the log has none)."""
    if name == "click":
        key = (args.get("num_clicks", 1), args.get("button_type", "left"))
        return Action(kind=_CLICK_KINDS.get(key, "click"), element=_element(args.get("element_description")), raw=raw)
    if name == "type":
        return Action(kind="type", text=str(args.get("text", "")), element=_element(args.get("element_description")),
                      raw=raw)
    if name in ("hotkey", "hold_and_press"):
        keys = [*(args.get("hold_keys") or []), *(args.get("keys") or args.get("press_keys") or [])]
        return Action(kind="hotkey" if len(keys) > 1 else "key", keys=[str(k) for k in keys], raw=raw)
    if name == "scroll":
        clicks = args.get("clicks")
        direction = ("up" if clicks > 0 else "down") if isinstance(clicks, (int, float)) and clicks else None
        return Action(kind="scroll", direction=direction, element=_element(args.get("element_description")), raw=raw)
    if name in ("open", "switch_applications"):
        return Action(kind="open_app", text=str(args.get("app_or_filename") or args.get("app_code")), raw=raw)
    if name == "drag_and_drop":
        return Action(kind="drag", element=orjson.dumps({"from": args.get("starting_description"),
                                                         "to": args.get("ending_description")}).decode(), raw=raw)
    if name == "wait":
        seconds = args.get("time")
        return Action(kind="wait", duration_s=float(seconds) if isinstance(seconds, (int, float)) else None, raw=raw)
    if name in ("done", "fail"):
        return Action(kind="done", text=name, raw=raw)
    return Action(kind="tool_call", tool_name=name, arguments=orjson.dumps(args, default=str).decode(), raw=raw)


def _step(record: dict, reflection: str | None) -> Step:
    plan = record["message"].split("PLAN:", 1)[1].strip()
    blocks = _CODE.findall(plan)
    thought = plan.split("```python")[0].replace("(Grounded Action)", "").strip()
    reasoning = "\n\n".join(p for p in (f"Reflection: {reflection}" if reflection else None, thought) if p) or None
    raw = {"plan": plan, "time": record["time"], "line": record["line"]}
    call = _call(blocks[-1]) if blocks else None
    if call is None:
        return Step(observation=Observation(kind="none"), reasoning=reasoning,
                    action=Action(kind="message", text=plan, raw=orjson.dumps(raw).decode()))
    name, positional, keywords = call
    args = {**dict(zip(_PARAMS.get(name, ()), positional)), **keywords}
    raw["call"] = {"name": name, "args": args}
    raw = orjson.dumps(raw, default=str).decode()
    return Step(observation=Observation(kind="none"), action=_action(name, args, raw), reasoning=reasoning)


def _session(source: Source, name: str, stamp: str, names: list[str]) -> Iterator[Episode | Rejected]:
    rows: list[Rejected] = []
    records = _records(source.read_bytes(name), name, source, rows)
    steps, reflection, models = [], None, []
    for record in records:
        message = record["message"]
        if message.startswith("REFLECTION: "):
            reflection = message[len("REFLECTION: "):].strip()
        elif message.startswith("PLAN:"):
            steps.append(_step(record, reflection))
            reflection = None
    claim = steps[-1].action.text if steps and steps[-1].action.kind == "done" else None
    env = {"session": stamp, "log": name, "observations": "none recorded: the log keeps no screenshots",
           "points": "none recorded: the grounding model's answers are not logged",
           "companion_logs": [n for n in names if _LOG.search(n) and _LOG.search(n).group(2) == stamp and n != name]}
    if records:
        env["started_local"] = records[0]["time"]
    if claim:
        env["agent_claim"] = claim
    yield from rows
    if not steps:
        yield episode_without_steps(f"{name}: no PLAN record", name, "unknown", None, record_id=stamp)
        return
    yield checked_episode(Episode(key=stamp, domain="os", platform="linux", steps=steps, agent="Agent S3",
                                  terminated=claim is not None, env=env), name)


def read(source: Source) -> Iterator[Episode | Rejected]:
    names = source.listdir()
    for name in names:
        m = _LOG.fullmatch(name)
        if m and m.group(1) == "normal":
            yield from _session(source, name, m.group(2), names)
