"""BrowserGym / AgentLab experiment folders: `step_<n>.pkl.gz` (a pickled `StepInfo` per step),
`summary_info.json`, `goal_object.pkl.gz`, `exp_args.pkl`, `screenshot_step_<n>.png`.

One folder is one episode. `StepInfo` n holds observation n, the action the agent chose from it (a
Python-call string such as `click('a51')`, often inside a fenced block after the agent's reasoning), and
the reward / terminated / truncated that action n-1 produced. So step t = (obs t, action t) and its reward
is the one recorded in `StepInfo` t+1; a last `StepInfo` without an action is the final observation.

This module decodes the folder; the transcript core (`ingest.transcript`) makes the episode. An environment
loop's record is a transcript of pages seen and actions chosen: StepInfo n is a `user` message holding its
page (accessibility tree, URL, screenshot) as the observation, then an assistant turn holding its action, its
reasoning (AgentLab's `think`, else the text beside the action's code), its time and the reward StepInfo n+1
recorded; a last StepInfo without an action is a last `user` message, the final observation. The chats inside
the record are not that transcript: `obs.chat_messages` is the chat with the user of an open-ended task (its
first user message is read as the task; the agent's messages in it are its `send_msg_to_user` actions, steps
already), and `agent_info.chat_messages` is the prompt an AgentLab agent builds afresh for each step.

Pickles go through `ingest.safe_pickle` with the unit's budgets (size, array sizes, memo fan-out, depth):
BrowserGym / AgentLab classes become dicts of their state (AgentLab 0.3's `browsergym.experiments.loop` and
0.4's `agentlab.experiments.loop` records, `AgentInfo`, the `Discussion` of chat messages, model arguments),
paths strings, numpy arrays plain arrays. A class `ALLOWED` does not list loads the same way and is named in
the episode's `env.ingest_warnings` (validate: `ingest.kept_unknown`). gzip is inflated as a stream with a
size cap, every member read.
Actions are parsed with `ast` (literal arguments only), never evaluated; output that is no plain call with
literal arguments fitting the action stays a `code` action, verbatim. Observations are the accessibility-tree
text with the active page's URL and title; screenshots go to the blob store.

Record isolation: a step file that cannot be used (missing from the numbering, corrupt, truncated, code a
pickle asks to run, over a budget, a field this reader uses of the wrong type: `obs`, `action`, `reward`,
`agent_info.think`, `profiling.env_stop`, `obs.open_pages_urls` / `open_pages_titles` / `last_action_error`
/ `axtree_txt` / `pruned_html`, or a value the schema or the `field_bytes` budget refuses) gets one
quarantine row (record_id `step <n>`) naming the file, the step and the field, and splits
the episode there: the steps before it end truncated (the missing observation was their next one), the steps
after it form an episode of their own, keyed `segment-<n>` with `env.segment` saying which step files it
holds. The run's outcome and reward (summary_info.json, else the StepInfos: the last one's flags, the sum of
the rewards) go with the last segment, terminal only when it reaches the last StepInfo; a run none of whose
steps can be used leaves them in an `empty_episode` row (`ingest.record.episode_without_steps`). A bad
`summary_info.json` (or one bad field of it), `exp_args.pkl`, `goal_object.pkl.gz` or screenshot is
quarantined and the episode kept without it. Bytes after a step's pickle (a second gzip member, trailing
data) are said in a `trailing_data` row and the step kept. A folder is claimed when a step file is gzip data,
when `summary_info.json` has `n_steps`, or when damaged step files sit beside another experiment file, so
a damaged experiment is quarantined rather than left unread. The folder's other files (AgentLab's
`experiment.log`, its Set-of-Mark screenshots `screenshot_som_step_<n>.png`, anything else) are named by
`members` as files of the run the reader does not read, so `ignored_inputs` lists them with why.
"""

from __future__ import annotations

import ast
import datetime as dt
import posixpath
import re
from typing import Iterator

import orjson

from ingest import transcript
from ingest.arrow import step_problem
from ingest.format_info import FormatInfo
from ingest.members import unread_in
from ingest.png import png_size
from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01, episode_without_steps, warn
from ingest.safe_pickle import load_gzip, records, restricted_loads
from ingest.source import Source, SourceError, parse_json
from ingest.transcript import Message, Run

FORMAT = "browsergym"
VERSION = "2"
INFO = FormatInfo(
    group="browser", rank=150, domains=('web',), platform="browser",
    summary="BrowserGym / AgentLab experiment folders",
    producer="AgentLab + BrowserGym step pickles",
    versions="agentlab 0.3.2 (browsergym 0.13.4), 0.4.2 (browsergym 0.14.3)",
    proof=("each version in its own venv runs a scripted agent on BrowserGym's open-ended task served from loopback "
           "in Debian's chromium; AgentLab's own `ExpResult` loading is the oracle for every step's action, page, "
           "reward and terminal flag (`tests/ingest/browser/test_agentlab_producer.py`)"),
)

_STEP_FILE = re.compile(r"^step_(\d+)\.pkl\.gz$")
_CODE_BLOCK = re.compile(r"```(?:python|py)?\s*(.*?)```", re.S)
_GZIP_MAGIC = b"\x1f\x8b"
_MAX_CODE = 1 << 16  # an action call is a line or two; longer text is kept verbatim, not parsed
_MARKERS = ("summary_info.json", "exp_args.pkl", "goal_object.pkl.gz")


_LOOP_CLASSES = ("StepInfo", "StepTimestamps", "ExpArgs", "EnvArgs", "ExpResult", "AgentInfo")
_LOOP_MODULES = ("browsergym.experiments.loop", "agentlab.experiments.loop", "browsergym.experiments.agent")
_MODEL_ARGS = ("OpenAIModelArgs", "AzureModelArgs", "OpenRouterModelArgs", "SelfHostedModelArgs",
               "AnthropicModelArgs", "BedrockModelArgs", "LiteLLMModelArgs", "ChatModelArgs", "CheatMiniWoBLLMArgs")
# What BrowserGym / AgentLab 0.3-0.4 are known to pickle besides plain data: the experiment loop's records,
# the agent's info (`AgentInfo`, its `Discussion` of chat messages), the agent and model argument classes of
# exp_args.pkl. Any other class loads too, as the record of its state, with a warning (`ingest.safe_pickle`,
# which also reads paths as strings): a class a new release adds never costs a step.
ALLOWED = {
    **records(*(f"{module}.{name}" for module in _LOOP_MODULES for name in _LOOP_CLASSES)),
    **records("agent.DemoAgentArgs", "demo_agent.agent.DemoAgentArgs",
              "agentlab.agents.generic_agent.generic_agent.GenericAgentArgs",
              "agentlab.agents.generic_agent.generic_agent_prompt.GenericPromptFlags",
              "agentlab.agents.dynamic_prompting.ObsFlags", "agentlab.agents.dynamic_prompting.ActionFlags",
              *(f"agentlab.llm.llm_utils.{name}" for name in ("Discussion", "BaseMessage", "SystemMessage",
                                                                "HumanMessage", "AIMessage")),
              *(f"agentlab.llm.chat_api.{name}" for name in _MODEL_ARGS)),
}


_READ_FILES = re.compile(r"step_\d+\.pkl\.gz|screenshot_step_\d+\.png|package_versions\.txt|summary_info\.json"
                         r"|exp_args\.pkl|goal_object\.pkl\.gz")


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The files of each experiment folder the reader does not read (see the docstring)."""
    why = "the reader reads the step pickles, their screenshots and the experiment's summary, arguments, goal and " \
          "package versions"
    return {folder: unread_in(folder, files, _READ_FILES.fullmatch, why) for folder in found}


def units(files: list[str], head) -> list[str]:
    """Folders holding `step_<n>.pkl.gz` files that are gzip data, or a `summary_info.json` with `n_steps`, or
    `step_<n>.pkl.gz` files (damaged: empty, not gzip) beside another file of an experiment folder
    (`summary_info.json`, `exp_args.pkl`, `goal_object.pkl.gz`): a damaged experiment is still claimed, so
    its damage is quarantined rather than left unread."""
    folders, step_names, markers = set(), set(), set()
    for path in files:
        folder, name = posixpath.split(path)
        if _STEP_FILE.match(name):
            step_names.add(folder)
            if head(path).startswith(_GZIP_MAGIC):
                folders.add(folder)
        elif name in _MARKERS:
            markers.add(folder)
            if name == "summary_info.json" and b'"n_steps"' in head(path):
                folders.add(folder)
    return sorted(folders | (step_names & markers))


# --- actions ---------------------------------------------------------------------------------------------

def extract_code(text: str) -> tuple[str, str | None]:
    """(action code, reasoning): the fenced code blocks when there are any, else the whole text."""
    blocks = _CODE_BLOCK.findall(text)
    if not blocks:
        return text.strip(), None
    reasoning = _CODE_BLOCK.sub("", text).strip()
    return "\n".join(b.strip() for b in blocks), reasoning or None


def parse_calls(code: str) -> list[tuple[str, list, dict]]:
    """`click('a51')\\nfill('a12', "x")` -> [(name, args, kwargs)], literal arguments only.

    Raises ValueError for anything that is not a sequence of plain calls with literal arguments.
    """
    if len(code) > _MAX_CODE:
        raise ValueError(f"{len(code)} characters of code: longer than any action call")
    try:
        tree = ast.parse(code, mode="exec")
    except (SyntaxError, RecursionError, MemoryError) as e:  # nesting too deep for the parser is no call either
        raise ValueError(f"not Python call syntax: {getattr(e, 'msg', type(e).__name__)}") from None
    calls = []
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name)):
            raise ValueError(f"not a plain function call: {ast.unparse(stmt)[:80]}")
        call = stmt.value
        try:
            args = [ast.literal_eval(a) for a in call.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise ValueError(f"non-literal argument in {ast.unparse(call)[:80]}") from None
        calls.append((call.func.id, args, kwargs))
    if not calls:
        raise ValueError("no action call")
    return calls


def _arg(args: list, kwargs: dict, index: int, name: str, default=None):
    return args[index] if len(args) > index else kwargs.get(name, default)


def _keys(combo: str) -> list[str]:
    return combo.split("+") if combo != "+" else ["+"]


def action_from_call(name: str, args: list, kwargs: dict, size: tuple[int, int] | None) -> Action:
    """One BrowserGym high-level action in the shared vocabulary (without `raw`, set by the caller)."""
    arguments = orjson.dumps({"args": args, "kwargs": kwargs}).decode()

    def element(*bids) -> str:
        return orjson.dumps({"bid": bids[0]} if len(bids) == 1 else {"bid": bids[0], "target_bid": bids[1]}).decode()

    def point(x, y):
        if size is None or not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
            return None, None
        return clamp01(x / size[0]), clamp01(y / size[1])

    bid = _arg(args, kwargs, 0, "bid")
    if name in ("click", "dblclick"):
        button = _arg(args, kwargs, 1, "button", "left")
        kind = "double_click" if name == "dblclick" else "right_click" if button == "right" else "click"
        return Action(kind=kind, element=element(bid), arguments=arguments)
    if name in ("fill", "clear"):
        return Action(kind="type", element=element(bid), text=_arg(args, kwargs, 1, "value", ""),
                      arguments=arguments)
    if name == "select_option":
        options = _arg(args, kwargs, 1, "options")
        text = options if isinstance(options, str) else orjson.dumps(options).decode()
        return Action(kind="click", element=element(bid), text=text, arguments=arguments)
    if name == "press":
        keys = _keys(str(_arg(args, kwargs, 1, "key_comb", "")))
        return Action(kind="hotkey" if len(keys) > 1 else "key", keys=keys, element=element(bid),
                      arguments=arguments)
    if name == "keyboard_press":
        keys = _keys(str(_arg(args, kwargs, 0, "key", "")))
        return Action(kind="hotkey" if len(keys) > 1 else "key", keys=keys, arguments=arguments)
    if name in ("keyboard_type", "keyboard_insert_text"):
        return Action(kind="type", text=_arg(args, kwargs, 0, "text"), arguments=arguments)
    if name == "drag_and_drop":
        return Action(kind="drag", element=element(bid, _arg(args, kwargs, 1, "to_bid")), arguments=arguments)
    if name == "scroll":
        dx, dy = _arg(args, kwargs, 0, "delta_x", 0) or 0, _arg(args, kwargs, 1, "delta_y", 0) or 0
        direction = ("down" if dy > 0 else "up") if abs(dy) >= abs(dx) else ("right" if dx > 0 else "left")
        return Action(kind="scroll", direction=direction, arguments=arguments)
    if name in ("mouse_click", "mouse_dblclick"):
        x, y = point(_arg(args, kwargs, 0, "x"), _arg(args, kwargs, 1, "y"))
        button = _arg(args, kwargs, 2, "button", "left")
        kind = "double_click" if name == "mouse_dblclick" else "right_click" if button == "right" else "click"
        return Action(kind=kind, x=x, y=y, arguments=arguments)
    if name == "hover":
        return Action(kind="move", element=element(bid), arguments=arguments)
    if name == "mouse_move":
        x, y = point(_arg(args, kwargs, 0, "x"), _arg(args, kwargs, 1, "y"))
        return Action(kind="move", x=x, y=y, arguments=arguments)
    if name == "mouse_drag_and_drop":
        x, y = point(_arg(args, kwargs, 0, "from_x"), _arg(args, kwargs, 1, "from_y"))
        x2, y2 = point(_arg(args, kwargs, 2, "to_x"), _arg(args, kwargs, 3, "to_y"))
        return Action(kind="drag", x=x, y=y, x2=x2, y2=y2, arguments=arguments)
    if name == "goto":
        return Action(kind="navigate", text=_arg(args, kwargs, 0, "url"), arguments=arguments)
    if name == "go_back":
        return Action(kind="back", arguments=arguments)
    if name == "send_msg_to_user":
        return Action(kind="message", text=_arg(args, kwargs, 0, "text"), arguments=arguments)
    if name == "report_infeasible":
        return Action(kind="done", text=_arg(args, kwargs, 0, "reason"), arguments=arguments)
    if name == "noop":
        wait_ms = _arg(args, kwargs, 0, "wait_ms", 1000)
        return Action(kind="wait", duration_s=wait_ms / 1000 if isinstance(wait_ms, (int, float)) else None,
                      arguments=arguments)
    # focus, upload_file, go_forward, new_tab, tab_close, tab_focus, mouse_up/down...
    return Action(kind="code", element=element(bid) if isinstance(bid, str) else None, arguments=arguments)


def action_from_text(text: str, size: tuple[int, int] | None) -> tuple[Action, str | None]:
    """(action, reasoning) from the agent's output; output that does not parse, or whose arguments do not fit
    the action (a number where a key combination goes...), stays a `code` action, verbatim."""
    code, reasoning = extract_code(text)
    try:
        calls = parse_calls(code)
        name, args, kwargs = calls[0]
        action = action_from_call(name, args, kwargs, size)
        arguments = orjson.dumps([{"name": n, "args": a, "kwargs": k} for n, a, k in calls]).decode() \
            if len(calls) > 1 else None
        for field in ("text", "direction"):  # a literal of another type where a string goes: kept as JSON
            if getattr(action, field) is not None and not isinstance(getattr(action, field), str):
                setattr(action, field, orjson.dumps(getattr(action, field)).decode())
    except (ValueError, TypeError, AttributeError, orjson.JSONEncodeError):
        return Action(kind="code", code=code, raw=text), reasoning
    action.code, action.raw = code, text
    if arguments is not None:  # several actions in one step: keep them all in the arguments
        action.arguments = arguments
    return action, reasoning


# --- observations ----------------------------------------------------------------------------------------

def _active_index(obs: dict) -> int:
    index = obs.get("active_page_index")
    if hasattr(index, "tolist"):  # a numpy array (or scalar)
        index = index.tolist()
    if isinstance(index, list):
        index = index[0] if index else 0
    return index if isinstance(index, int) else 0


def observation_from(obs: dict, screenshot: str | None, size: tuple[int, int] | None) -> Observation:
    urls, titles = obs.get("open_pages_urls") or [], obs.get("open_pages_titles") or []
    active = _active_index(obs)
    url = urls[active] if active < len(urls) else None
    title = titles[active] if active < len(titles) else None
    lines = [f"URL: {url or ''}", f"Title: {title or ''}"]
    if len(urls) > 1:
        lines.append("Tabs: " + " | ".join(f"[{i}]{'*' if i == active else ''} {t}" for i, t in enumerate(titles)))
    error = obs.get("last_action_error") or None
    if error:
        lines.append(f"Error: {error}")
    axtree = obs.get("axtree_txt")
    if axtree:
        lines.append(axtree)
    html = obs.get("pruned_html")
    return Observation(kind="web", text="\n".join(lines), url=url, title=title,
                       ui_tree=orjson.dumps({"pruned_html": html}).decode() if html else None,
                       screenshot=screenshot, is_error=bool(error),
                       width=size[0] if size else None, height=size[1] if size else None)


# --- the folder ------------------------------------------------------------------------------------------

class _BadRecord(ValueError):
    """A record with a field of the wrong type; the message is "field: what is wrong"."""


def _load_pickle(source: Source, rel: str, compressed: bool, notes: list[str] | None = None,
                 unknown: dict[str, str] | None = None):
    """The file's value; classes it holds that `ALLOWED` does not list go in `unknown` (name -> first file)."""
    data, found = source.read_bytes(rel), []
    if compressed:
        value = load_gzip(data, rel, ALLOWED, budgets=source.budgets, notes=notes, unknown=found)
    else:
        value = restricted_loads(data, ALLOWED, rel, source.budgets, unknown=found)
    if unknown is not None:
        for name in found:
            unknown.setdefault(name, rel)
    return value


def _plain(value):
    """numpy scalars and arrays as Python values; anything else unchanged."""
    return value.tolist() if hasattr(value, "tolist") and type(value).__module__ == "numpy" else value


def _optional(mapping: dict, key: str, types: tuple, label: str):
    value = _plain(mapping.get(key))
    if value is not None and (not isinstance(value, types) or isinstance(value, bool) and bool not in types):
        raise _BadRecord(f"{label}: {type(value).__name__}, expected {' or '.join(t.__name__ for t in types)}")
    return value


def _strings(mapping: dict, key: str, label: str) -> list[str]:
    value = _optional(mapping, key, (list, tuple), label) or []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _BadRecord(f"{label}[{i}]: {type(item).__name__}, expected str")
    return list(value)


def _check_info(info) -> None:
    """Raises _BadRecord naming the first field of a StepInfo this reader uses that has the wrong type."""
    if not isinstance(info, dict):
        raise _BadRecord(f"(the record): {type(info).__name__}, expected a StepInfo")
    obs = info.get("obs")
    if not isinstance(obs, dict):
        raise _BadRecord(f"obs: {type(obs).__name__}, expected a dict")
    _optional(info, "action", (str,), "action")
    _optional(info, "reward", (int, float), "reward")
    for key in ("agent_info", "profiling"):
        _optional(info, key, (dict,), key)
    _optional(info.get("agent_info") or {}, "think", (str,), "agent_info.think")
    _optional(info.get("profiling") or {}, "env_stop", (int, float), "profiling.env_stop")
    for key in ("open_pages_urls", "open_pages_titles"):
        _strings(obs, key, f"obs.{key}")
    for key in ("last_action_error", "axtree_txt", "pruned_html"):
        _optional(obs, key, (str,), f"obs.{key}")


def _epoch(value) -> dt.datetime | None:
    value = _plain(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 253402300800:  # < 10000 AD
        return dt.datetime.fromtimestamp(value, dt.timezone.utc)
    return None


def _task(goal, first_obs: dict) -> str | None:
    goal = goal or first_obs.get("goal_object")
    if isinstance(goal, (list, tuple)):
        texts = [g.get("text") for g in goal if isinstance(g, dict) and g.get("type") == "text"]
        if any(isinstance(t, str) and t for t in texts):
            return "\n".join(t for t in texts if isinstance(t, str) and t)
    messages = first_obs.get("chat_messages")
    users = [m.get("message") for m in messages if isinstance(m, dict) and m.get("role") == "user"] \
        if isinstance(messages, (list, tuple)) else []
    task = users[0] if users else first_obs.get("goal")
    return task if isinstance(task, str) else None


def _package_version(source: Source, package: str) -> str | None:
    if not source.exists("package_versions.txt"):
        return None
    for line in source.read_bytes("package_versions.txt").decode("utf-8", "replace").splitlines():
        name, _, version = line.partition("==")
        if name.strip().lower() == package:
            return version.strip()
    return None


def _scalar(value):
    """A value `env` may hold (JSON scalar), or None."""
    value = _plain(value)
    if isinstance(value, (str, bool, float)) or value is None:
        return value
    return value if isinstance(value, int) and -(1 << 63) <= value < 1 << 63 else None


def _summary(source: Source) -> tuple[dict, list[Rejected]]:
    """summary_info.json's fields this reader uses, checked; a bad file or field is reported, not fatal."""
    if not source.exists("summary_info.json"):
        return {}, []
    try:
        summary = parse_json(source.read_bytes("summary_info.json"), "summary_info.json")
    except SourceError as e:
        return {}, [Rejected(e.rule, f"{e.reason}; the episode is kept without its summary", "summary_info.json")]
    if not isinstance(summary, dict):
        return {}, [Rejected("bad_record", "summary_info.json: not a JSON object; the episode is kept without its "
                             "summary", "summary_info.json")]
    out, rejected = {}, []
    for key, types in (("terminated", (bool,)), ("truncated", (bool,)), ("cum_reward", (int, float)),
                       ("err_msg", (str,))):
        value = summary.get(key)
        if value is None or (isinstance(value, types) and (bool in types or not isinstance(value, bool))):
            out[key] = value
        else:
            rejected.append(Rejected("bad_record", f"summary_info.json: field {key} is {type(value).__name__}, "
                                     f"expected {types[0].__name__}; ignored", "summary_info.json", record_id=key))
    return {k: v for k, v in out.items() if v is not None}, rejected


def _step_infos(source: Source, unknown: dict[str, str]) -> tuple[list[dict | None], list[Rejected]]:
    """StepInfo n at index n (None where missing or unusable), and a row for each one that is not usable."""
    numbered = sorted((int(m.group(1)), name) for name in source.listdir() if (m := _STEP_FILE.match(name)))
    if not numbered:
        raise SourceError("empty_episode", f"{source.uri}: no step_<n>.pkl.gz files")
    last_n = numbered[-1][0]
    infos: list[dict | None] = [None] * (last_n + 1)
    present, rows = {n for n, _ in numbered}, []
    for n in range(last_n + 1):
        if n not in present:
            rows.append(Rejected("missing_file", f"step_{n}.pkl.gz: missing from the step files 0..{last_n}; the "
                                 "episode is split there", f"step_{n}.pkl.gz", record_id=f"step {n}"))
    for n, name in numbered:
        notes: list[str] = []
        try:
            info = _load_pickle(source, name, compressed=True, notes=notes, unknown=unknown)
            _check_info(info)
        except SourceError as e:
            rows.append(Rejected(e.rule, f"{e.reason}; the episode is split there", name, record_id=f"step {n}"))
            continue
        except _BadRecord as e:
            rows.append(Rejected("bad_record", f"{name}: field {e}; the episode is split there", name,
                                 record_id=f"step {n}"))
            continue
        rows += [Rejected("trailing_data", note, name, record_id=f"step {n}") for note in notes]
        infos[n] = info
    return infos, rows


def _side_files(source: Source, unknown: dict[str, str]) -> tuple[dict, dict, object, list[Rejected]]:
    """(summary, exp_args, goal object) and a row for each that could not be used; the episode stands
    without them."""
    summary, rows = _summary(source)
    exp_args, goal = {}, None
    if source.exists("exp_args.pkl"):
        try:
            exp_args = _load_pickle(source, "exp_args.pkl", compressed=False, unknown=unknown)
        except SourceError as e:  # metadata only: the episode stands without it, the refusal is kept
            rows.append(Rejected(e.rule, e.reason, "exp_args.pkl"))
    if source.exists("goal_object.pkl.gz"):
        try:
            goal = _load_pickle(source, "goal_object.pkl.gz", compressed=True, unknown=unknown)
        except SourceError as e:
            rows.append(Rejected(e.rule, f"{e.reason}; the task is taken from the first observation",
                                 "goal_object.pkl.gz"))
    return summary, exp_args if isinstance(exp_args, dict) else {}, goal, rows


def _run_result(summary: dict, infos: list[dict | None]) -> tuple[bool, bool, float | None]:
    """(terminated, truncated, cumulative reward) of the run: summary_info.json's, else what the StepInfos
    say (the last one's flags; the sum of the rewards when every StepInfo was read, as AgentLab sums them)."""
    last_info = infos[-1] or {}
    terminated = bool(summary.get("terminated", _plain(last_info.get("terminated"))))
    truncated = bool(summary.get("truncated", _plain(last_info.get("truncated"))))
    cum_reward = summary.get("cum_reward")
    if cum_reward is None and all(info is not None for info in infos):
        rewards = [_plain(info.get("reward")) for info in infos]
        cum_reward = float(sum(r for r in rewards if isinstance(r, (int, float))))
    return terminated, truncated, cum_reward


def _screenshots(source: Source, infos: list[dict | None]) -> tuple[dict[int, tuple], list[Rejected]]:
    """Step n -> (blob ref, (width, height) or None) of screenshot_step_<n>.png, and a row for each unreadable."""
    shots, rows = {}, []
    for n, info in enumerate(infos):
        rel = f"screenshot_step_{n}.png"
        if info is not None and source.exists(rel):
            try:
                data = source.read_bytes(rel)
            except SourceError as e:
                rows.append(Rejected(e.rule, f"{e.reason}; step {n} is kept without its screenshot", rel))
                continue
            shots[n] = (source.put_blob(data, "image/png", source.uri), png_size(data))
    return shots, rows


# --- the run as a transcript (`ingest.transcript`) -----------------------------------------------------------

# One StepInfo with an action: its number, the page it saw (a user message with the observation) and the action
# the agent chose from it (an assistant turn with that action, its reasoning, time and reward).
Turn = tuple[int, Message, Message]
Segment = tuple[list[Turn], Message | None]  # a run of turns, and the page seen after the last (None: not read)


def _turn(n: int, info: dict, following: dict | None, observe, size) -> tuple[Turn, str | None]:
    """StepInfo n as a turn, and the schema's objection to the step it makes (None: it fits). Its reward is the
    one StepInfo n+1 recorded; AgentLab's `think` is the reasoning, else the text beside the action's code."""
    action, reasoning = action_from_text(info["action"], size)
    reward = _plain(following.get("reward")) if following is not None else None
    think = (info.get("agent_info") or {}).get("think")
    seen = Message("user", observation=observe(n))
    chose = Message("assistant", action=action, reasoning=think if think and think.strip() else reasoning,
                    timestamp=_epoch((info.get("profiling") or {}).get("env_stop")),
                    reward=float(reward) if reward is not None else None)
    # the step the core makes of this turn, as the schema sees it (its time and reward always fit their columns)
    return (n, seen, chose), step_problem(Step(seen.observation, action, reasoning=chose.reasoning))


def _segments(infos: list[dict | None], observe, size) -> tuple[list[Segment], list[Rejected]]:
    """Runs of usable StepInfos with an action; one ends where the next StepInfo is missing or unusable (cut)
    or has no action (its page is the final one)."""
    last_n = len(infos) - 1
    segments: list[Segment] = []
    current: list[Turn] = []
    rows = []
    for n, info in enumerate(infos):
        if info is None or info.get("action") is None:
            if current:
                segments.append((current, Message("user", observation=observe(n)) if info is not None else None))
                current = []
            if info is not None and n < last_n:
                rows.append(Rejected("bad_record", f"step_{n}.pkl.gz: the agent chose no action, yet step files "
                                     "follow; the episode is split there", f"step_{n}.pkl.gz", record_id=f"step {n}"))
            continue
        turn, problem = _turn(n, info, infos[n + 1] if n < last_n else None, observe, size)
        if problem is not None:
            rows.append(Rejected("bad_record", f"step_{n}.pkl.gz: field {problem}; the episode is split there",
                                 f"step_{n}.pkl.gz", record_id=f"step {n}"))
            if current:
                segments.append((current, None))
                current = []
            continue
        current.append(turn)
    if current:
        segments.append((current, None))
    return segments, rows


def _messages(turns: list[Turn], final: Message | None) -> Iterator[Message]:
    for _, seen, chose in turns:
        yield seen
        yield chose
    if final is not None:
        yield final


def _agent_name(agent_args: dict) -> str | None:
    model_args = agent_args.get("chat_model_args")
    model = model_args.get("model_name") if isinstance(model_args, dict) else None
    name = _scalar(agent_args.get("model_name")) or _scalar(model) or _scalar(agent_args.get("agent_name"))
    return name if isinstance(name, str) else None


def _env(source: Source, summary: dict, exp_args: dict, truncated: bool, size, unknown: dict[str, str]) -> dict:
    """The run's `env`: the task's and the experiment's names, versions, error, viewport, warnings."""
    agent_args = exp_args.get("agent_args") if isinstance(exp_args.get("agent_args"), dict) else {}
    env_args = exp_args.get("env_args") if isinstance(exp_args.get("env_args"), dict) else {}
    err = summary.get("err_msg")
    version = _package_version(source, "browsergym-core") or _package_version(source, "browsergym")
    env = {"task_name": _scalar(env_args.get("task_name")), "task_seed": _scalar(env_args.get("task_seed")),
           "max_steps": _scalar(env_args.get("max_steps")), "exp_id": _scalar(exp_args.get("exp_id")),
           "exp_name": _scalar(exp_args.get("exp_name")), "truncated": truncated, "browsergym_version": version,
           "agentlab_version": _package_version(source, "agentlab"),
           "error": " ".join(err.strip().splitlines()[:2]) if isinstance(err, str) and err.strip() else None,
           "viewport": list(size) if size else None, "agent_name": _scalar(agent_args.get("agent_name"))}
    env = {k: v for k, v in env.items() if v is not None}
    for name, rel in unknown.items():
        warn(env, "unknown_pickle_class", f"{rel} holds {name}, a class this reader does not list: kept as the "
             "record of its state")
    return env


def _runs(segments: list[Segment], last_n: int, outcome: str, cum_reward, terminated: bool, **run) -> Iterator[Run]:
    """Each segment's `Run`: the run's outcome and reward go with the segment that ends it; its steps are
    terminal only when that segment reaches the last StepInfo (a missing one in between leaves them truncated).
    `run` holds what every segment shares (task, agent, env)."""
    (_, final_seen), end = segments[-1], segments[-1][0][-1][0]
    # the last segment reached the end of the run: it holds the last StepInfo, or ends on it as final observation
    ended_here = end == last_n or (final_seen is not None and end + 1 == last_n)
    env = run.pop("env")
    for j, (turns, _) in enumerate(segments):
        last = j == len(segments) - 1
        seg_env = env if len(segments) == 1 else {**env, "segment": {
            "index": j, "count": len(segments), "first_step_file": f"step_{turns[0][0]}.pkl.gz",
            "last_step_file": f"step_{turns[-1][0]}.pkl.gz"}}
        yield Run(key="" if j == 0 else f"segment-{turns[0][0]}", domain="web", platform="browser",
                  outcome=outcome if last else "unknown",
                  reward=float(cum_reward) if last and isinstance(cum_reward, (int, float)) else None,
                  terminated=terminated and last and ended_here, env=seg_env, **run)


def read(source: Source) -> Iterator[Episode | Rejected]:
    """The folder's episode; a step file that cannot be used (unreadable, a field of the wrong type) is
    quarantined alone and splits the episode there (see the module docstring). A run none of whose steps
    can be used leaves its outcome and reward in an `empty_episode` row (`ingest.record.episode_without_steps`)."""
    unknown: dict[str, str] = {}  # classes no one listed -> the first file holding one
    infos, rows = _step_infos(source, unknown)
    yield from rows
    summary, exp_args, goal, rows = _side_files(source, unknown)
    yield from rows
    terminated, truncated, cum_reward = _run_result(summary, infos)
    outcome = ("success" if (cum_reward or 0) > 0 else "failure") if terminated else "unknown"
    shots, rows = _screenshots(source, infos)
    yield from rows
    sizes = [s for _, s in shots.values() if s]
    size = sizes[0] if sizes else None  # the viewport does not change within an experiment

    def observe(n: int) -> Observation:
        shot, shot_size = shots.get(n, (None, None))
        return observation_from(infos[n]["obs"], shot, shot_size or size)

    segments, rows = _segments(infos, observe, size) if any(infos) else ([], [])
    yield from rows
    if not segments:
        yield episode_without_steps(f"{source.uri}: no step of the run could be read", "summary_info.json",
                                    outcome, cum_reward, terminated=terminated, truncated=truncated,
                                    steps_recorded=len(infos))
        return
    agent_args = exp_args.get("agent_args") if isinstance(exp_args.get("agent_args"), dict) else {}
    first = next(info for info in infos if info is not None)
    runs = _runs(segments, len(infos) - 1, outcome, cum_reward, terminated, task=_task(goal, first["obs"]),
                 agent=_agent_name(agent_args), env=_env(source, summary, exp_args, truncated, size, unknown))
    for (turns, final), run in zip(segments, runs):
        yield from transcript.records(_messages(turns, final), run, source.uri)
