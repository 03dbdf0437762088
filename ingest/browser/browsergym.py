"""BrowserGym / AgentLab experiment folders: `step_<n>.pkl.gz` (a pickled `StepInfo` per step),
`summary_info.json`, `goal_object.pkl.gz`, `exp_args.pkl`, `screenshot_step_<n>.png`.

One folder is one episode. `StepInfo` n holds observation n, the action the agent chose from it (a
Python-call string such as `click('a51')`, often inside a fenced block after the agent's reasoning), and
the reward / terminated / truncated that action n-1 produced. So step t = (obs t, action t) and its reward
is the one recorded in `StepInfo` t+1; a last `StepInfo` without an action is the final observation.

Pickles go through `ingest.safe_pickle` with this format's allowlist (`ALLOWED`: BrowserGym / AgentLab
classes become plain dicts, paths strings, numpy arrays plain arrays; anything else refuses the folder with
`forbidden_pickle_class`); gzip is decompressed with a size cap.
Actions are parsed with `ast` (literal arguments only), never evaluated. Observations are the
accessibility-tree text with the active page's URL and title; screenshots go to the blob store.
"""

from __future__ import annotations

import ast
import datetime as dt
import posixpath
import re
from typing import Iterator

import orjson

from ingest.png import png_size
from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01
from ingest.safe_pickle import load_gzip, records, restricted_loads
from ingest.source import Source, SourceError, parse_json

FORMAT = "browsergym"
VERSION = "1"

_STEP_FILE = re.compile(r"^step_(\d+)\.pkl\.gz$")
_CODE_BLOCK = re.compile(r"```(?:python|py)?\s*(.*?)```", re.S)
_GZIP_MAGIC = b"\x1f\x8b"


def _path(*parts) -> str:
    return "/".join(str(p) for p in parts)


_LOOP_CLASSES = ("StepInfo", "StepTimestamps", "ExpArgs", "EnvArgs", "ExpResult")
_LOOP_MODULES = ("browsergym.experiments.loop", "agentlab.experiments.loop", "browsergym.experiments.agent")
# What BrowserGym / AgentLab pickle besides plain data: the experiment loop's records and the agent argument
# classes of exp_args.pkl (BrowserGym's demo agent, AgentLab's generic agent); paths become strings.
ALLOWED = {
    **records(*(f"{module}.{name}" for module in _LOOP_MODULES for name in _LOOP_CLASSES)),
    **records("agent.DemoAgentArgs", "demo_agent.agent.DemoAgentArgs",
              "agentlab.agents.generic_agent.generic_agent.GenericAgentArgs",
              "agentlab.agents.generic_agent.generic_agent_prompt.GenericPromptFlags",
              "agentlab.agents.dynamic_prompting.ObsFlags", "agentlab.agents.dynamic_prompting.ActionFlags",
              "agentlab.llm.chat_api.OpenAIModelArgs"),
    ("pathlib", "PosixPath"): _path, ("pathlib", "WindowsPath"): _path, ("pathlib", "Path"): _path,
}


def units(files: list[str], head) -> list[str]:
    """Folders holding `step_<n>.pkl.gz` files that are gzip data, or a `summary_info.json` with `n_steps`."""
    folders = set()
    for path in files:
        folder, name = posixpath.split(path)
        if _STEP_FILE.match(name) and head(path).startswith(_GZIP_MAGIC):
            folders.add(folder)
        elif name == "summary_info.json" and b'"n_steps"' in head(path):
            folders.add(folder)
    return sorted(folders)


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
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as e:
        raise ValueError(f"not Python call syntax: {e.msg}") from None
    calls = []
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name)):
            raise ValueError(f"not a plain function call: {ast.unparse(stmt)[:80]}")
        call = stmt.value
        try:
            args = [ast.literal_eval(a) for a in call.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
        except ValueError:
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
        keys = _keys(_arg(args, kwargs, 1, "key_comb", ""))
        return Action(kind="hotkey" if len(keys) > 1 else "key", keys=keys, element=element(bid),
                      arguments=arguments)
    if name == "keyboard_press":
        keys = _keys(_arg(args, kwargs, 0, "key", ""))
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
    """(action, reasoning) from the agent's output; unparseable output stays a `code` action, verbatim."""
    code, reasoning = extract_code(text)
    try:
        calls = parse_calls(code)
    except ValueError:
        return Action(kind="code", code=code, raw=text), reasoning
    name, args, kwargs = calls[0]
    action = action_from_call(name, args, kwargs, size)
    action.code, action.raw = code, text
    if len(calls) > 1:  # several actions in one step: keep them all in the arguments
        action.arguments = orjson.dumps([{"name": n, "args": a, "kwargs": k} for n, a, k in calls]).decode()
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

def _load_pickle(source: Source, rel: str, compressed: bool):
    data = source.read_bytes(rel)
    return load_gzip(data, rel, ALLOWED) if compressed else restricted_loads(data, ALLOWED, rel)


def _epoch(value) -> dt.datetime | None:
    return dt.datetime.fromtimestamp(value, dt.timezone.utc) if isinstance(value, (int, float)) and value > 0 \
        else None


def _task(source: Source, first_obs: dict) -> str | None:
    goal = None
    if source.exists("goal_object.pkl.gz"):
        goal = _load_pickle(source, "goal_object.pkl.gz", compressed=True)
    goal = goal or first_obs.get("goal_object")
    if isinstance(goal, list):
        texts = [g.get("text") for g in goal if isinstance(g, dict) and g.get("type") == "text"]
        if any(texts):
            return "\n".join(t for t in texts if t)
    users = [m.get("message") for m in first_obs.get("chat_messages") or () if m.get("role") == "user"]
    return users[0] if users else first_obs.get("goal")


def _package_version(source: Source, package: str) -> str | None:
    if not source.exists("package_versions.txt"):
        return None
    for line in source.read_bytes("package_versions.txt").decode("utf-8", "replace").splitlines():
        name, _, version = line.partition("==")
        if name.strip().lower() == package:
            return version.strip()
    return None


def read(source: Source) -> Iterator[Episode | Rejected]:
    numbered = sorted((int(m.group(1)), name) for name in source.listdir() if (m := _STEP_FILE.match(name)))
    if not numbered:
        raise SourceError("empty_episode", f"{source.uri}: no step_<n>.pkl.gz files")
    if [n for n, _ in numbered] != list(range(len(numbered))):
        raise SourceError("missing_file", f"{source.uri}: step files are not numbered 0..{len(numbered) - 1}: "
                          f"{[n for n, _ in numbered]}")
    # a refused pickle refuses the folder: a gap would make the steps lie about what followed what
    infos = [_load_pickle(source, name, compressed=True) for _, name in numbered]
    for (_, name), info in zip(numbered, infos):
        if not isinstance(info, dict) or not isinstance(info.get("obs"), dict):
            raise SourceError("bad_record", f"{name}: not a StepInfo with an observation", name)

    summary = parse_json(source.read_bytes("summary_info.json"), "summary_info.json") \
        if source.exists("summary_info.json") else {}
    exp_args, rejected_args = {}, None
    if source.exists("exp_args.pkl"):
        try:
            exp_args = _load_pickle(source, "exp_args.pkl", compressed=False)
        except SourceError as e:  # metadata only: the episode stands without it, the refusal is kept
            rejected_args = Rejected(e.rule, e.reason, "exp_args.pkl")
    if rejected_args:
        yield rejected_args

    shots: dict[int, tuple[str, tuple[int, int] | None]] = {}
    for n, _ in numbered:
        rel = f"screenshot_step_{n}.png"
        if source.exists(rel):
            data = source.read_bytes(rel)
            shots[n] = (source.put_blob(data, "image/png", source.uri), png_size(data))
    sizes = [s for _, s in shots.values() if s]
    size = sizes[0] if sizes else None  # the viewport does not change within an experiment

    def observe(n: int) -> Observation:
        shot, shot_size = shots.get(n, (None, None))
        return observation_from(infos[n]["obs"], shot, shot_size or size)

    steps: list[Step] = []
    for n, info in enumerate(infos):
        if info.get("action") is None:
            break  # the agent produced no action from this observation: it is the final one
        action, reasoning = action_from_text(str(info["action"]), size)
        think = (info.get("agent_info") or {}).get("think")
        following = infos[n + 1] if n + 1 < len(infos) else {}
        steps.append(Step(observation=observe(n), action=action,
                          timestamp=_epoch((info.get("profiling") or {}).get("env_stop")),
                          reward=following.get("reward"), reasoning=think or reasoning))
    final = observe(len(steps)) if len(steps) < len(infos) else None

    last = infos[min(len(steps), len(infos) - 1)]
    terminated = bool(summary.get("terminated", last.get("terminated")))
    truncated = bool(summary.get("truncated", last.get("truncated")))
    cum_reward = summary.get("cum_reward")
    outcome = ("success" if (cum_reward or 0) > 0 else "failure") if terminated else "unknown"
    agent_args = exp_args.get("agent_args") if isinstance(exp_args, dict) else None
    env_args = exp_args.get("env_args") if isinstance(exp_args, dict) else None
    agent_args = agent_args if isinstance(agent_args, dict) else {}
    env_args = env_args if isinstance(env_args, dict) else {}
    err = summary.get("err_msg")
    env = {"task_name": env_args.get("task_name"), "task_seed": env_args.get("task_seed"),
           "max_steps": env_args.get("max_steps"), "exp_id": exp_args.get("exp_id") if exp_args else None,
           "exp_name": exp_args.get("exp_name") if exp_args else None, "truncated": truncated,
           "browsergym_version": _package_version(source, "browsergym-core") or _package_version(source,
                                                                                               "browsergym"),
           "error": " ".join(err.strip().splitlines()[:2]) if isinstance(err, str) and err.strip() else None,
           "viewport": list(size) if size else None, "agent_name": agent_args.get("agent_name")}
    yield Episode(
        key="", domain="web", platform="browser", steps=steps, task=_task(source, infos[0]["obs"]),
        agent=agent_args.get("model_name") or agent_args.get("agent_name"), outcome=outcome,
        reward=cum_reward if isinstance(cum_reward, (int, float)) else None, terminated=terminated,
        final_observation=final, env={k: v for k, v in env.items() if v is not None},
    )
