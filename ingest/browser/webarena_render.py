"""WebArena and VisualWebArena result folders (`run.py --result_dir`): a folder is a unit, each
`render_<task_id>.html` in it an episode: the page `RenderHelper` (`browser_env/helper_functions.py`) rewrites
after every action of one task.

The file is the task's config as `<pre>key: value</pre>` lines (`intent` is the task), then per action a block:
`<h2>New Page</h2>`, `<h3 class='url'><a href=URL>URL: URL</a></h3>`, `<div class='state_obv'><pre>` the text
observation (an accessibility tree, or VisualWebArena's Set-of-Mark element list) `</pre>`, with
`--render_screenshot` an `<img src='data:image/png;base64,...'>` of the page, `<div class='prev_action'>` the
previous action's description, and `<div class='predict_action'>` holding the model's reply
(`raw_parsed_prediction`), `repr()` of the action object (`action_object`: `'action_type': <ActionTypes.CLICK:
6>`, `'element_id': '1090'`...) and the parsed action (`parsed_action`: `click [1090] where [1090] is link
'...'`). The writer does not escape these texts (some forks do, with `html.escape`): each `<pre>`, the URL and
`prev_action` are read raw up to their closing tag (HTMLParser's CDATA mode) and unescaped only when they hold
what `html.escape` writes. The file is fed to the parser piece by piece, so memory is bounded by the largest
block (its screenshot), not the file.

One step per block: the observation is the page the action was taken on (`web`: the text observation, its URL,
the screenshot as a blob with its size from the PNG header); the action from the action object (`click`, `type`
with the text from the parsed action, `hover` -> `move`, `scroll`, `press` -> `key`/`hotkey`, `goto` ->
`navigate`, `go_back` -> `back`, `stop` -> `done` with the answer; tab actions, `go_forward`, `clear`, `upload`
-> `tool_call` named by the action; `NONE`, a reply the agent could not parse, -> `message` with the reply; the
`playwright` action set's code, written bare in `predict_action`, -> `code`),
the target element `{"id", "line", "description"}`: its line in the observation (null when the observation, a
filtered tree, left it out) and the node the parsed action names. The accessibility-tree and Set-of-Mark
action spaces name elements, not points: x / y stay null. The reply is the step's reasoning.

Outcome: the evaluator's `[Result] (PASS|FAIL) <config>/<task_id>.json` line in the run's logs (`merged_log.txt`
or `merge_log.txt` beside the renders, as the released traces keep them, and the logs `log_files.txt` names,
found relative to the result folder or a folder above it): PASS -> success (reward 1), FAIL -> failure (0); no
log line -> unknown. An `[Unhandled Error]` for the task in `error.txt` is kept in `env.run_error`. The episode is
terminal when its last action is the agent's `stop` (an early stop or an error stop is `env.stopped_by`, and
truncated). `config.json` in the folder (run.py's arguments) names the model (`agent`) and the action space.
`traces/<task_id>.zip` (the Playwright trace of the same run, read by the Playwright trace reader) is named in
`env.playwright_trace`. Other files in the folder (a fork's own outputs) are not read: each episode names them in
`env.folder_files_not_read` with a warning, so nothing the folder unit took is dropped unsaid. The logs
`log_files.txt` names in a folder above the result folder are planned with it (`members`: the names in the
first 4 KiB of `log_files.txt`, looked up as `read` looks them up, inside the input only), so they are not
listed as unread inputs.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import posixpath
import re
from html.parser import HTMLParser
from typing import Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.members import holds
from ingest.png import png_size
from ingest.record import Action, Episode, Observation, Rejected, Step, warn
from ingest.source import Source, SourceError

FORMAT = "webarena_render"
VERSION = "1"
INFO = FormatInfo(
    group="browser", rank=154, domains=('web',), platform="browser",
    summary=("WebArena / VisualWebArena result folders (`render_<task_id>.html`: each action on the page it was "
             "taken on, with its URL, accessibility tree or Set-of-Mark text and screenshot, the target element "
             "and the model's reply; the evaluator's PASS / FAIL from the run's logs)"),
    producer="WebArena / VisualWebArena `run.py` (RenderHelper in `browser_env/helper_functions.py`)",
    versions=("web-arena-x/webarena @ f62e0b9, web-arena-x/visualwebarena @ 89f5af2 (the writers read); result "
              "folders of HuiyuanYan/webarena, supermomo668/visualwebarena, devin-distyl/webarena"),
    proof=("cannot run here (WebArena's sites, a vendor model): real result folders from three repositories, read "
           "against the raw files (goldens: a llama2 run of 4 actions with 4 screenshots; a VisualWebArena render "
           "stopped before its first action; in `../shared/samples` a 14-action Set-of-Mark run and a 2-action "
           "gpt-4-turbo run with its Playwright trace); the evaluator's log lines, escaped forks, raw `<` in the "
           "tree and a file fed in 7-byte pieces hand-made after RenderHelper's own f-strings "
           "(`tests/ingest/browser/test_webarena_render.py`)"),
)

_NAME = re.compile(r"render_([^/]+)\.html")
_CHUNK = 1 << 20
_ESCAPED = re.compile(r"&(?:lt|gt|amp|quot|#x27|#39);")
_UNESCAPE = {"&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#x27;": "'", "&#39;": "'"}
_TYPE = re.compile(r"<ActionTypes\.(\w+): \d+>")
_FIELD = re.compile(r"'(element_id|url|key_comb|direction|answer|pw_code)': ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_PAGE = re.compile(r"'page_number': (\d+)")
_TYPED = re.compile(r"^type \[[^\]]*\] \[(.*)\] where \[", re.S)
_TYPED_REPLY = re.compile(r"type \[[^\]]*\] \[([^\]]*)\]")
_RESULT = re.compile(r"\[Result\] \((PASS|FAIL)\)\s+(\S+)")
_KINDS = {"CLICK": "click", "TYPE": "type", "HOVER": "move", "SCROLL": "scroll", "KEY_PRESS": "key",
          "GOTO_URL": "navigate", "GO_BACK": "back", "STOP": "done", "NONE": "message"}
_FIELDS = ("state_obv", "raw_parsed_prediction", "action_object", "parsed_action")


def units(files: list[str], head) -> list[str]:
    """Folders holding `render_<task_id>.html` files whose start is RenderHelper's page: the task config's
    `task_id:` line inside a `<pre>` and, once an action is rendered, `<div class='state_obv'>`. The folder is
    the unit: its `config.json`, logs, `error.txt` belong to the run (a trace zip goes to its own reader)."""
    found = set()
    for path in files:
        if not _NAME.fullmatch(posixpath.basename(path)):
            continue
        start = head(path)
        if b"<pre>" in start and b"\ntask_id: " in start and (b"intent: " in start or b"class='state_obv'" in start):
            found.add(posixpath.dirname(path))
    return sorted(found)


def members(found: list[str], files: list[str], head) -> dict[str, list[str]]:
    """The logs each result folder's `log_files.txt` names that lie above the folder (see the docstring)."""
    out = {}
    for folder in found:
        listed = f"{folder}/log_files.txt"
        if not holds(files, listed):
            continue
        logs = []
        for line in head(listed).decode("utf-8", "replace").splitlines():
            name = line.strip()
            if not name or name.startswith("/") or ".." in name.split("/"):
                continue
            for up in ("", "..", "../.."):
                path = posixpath.normpath(posixpath.join(folder, up, name))
                if holds(files, path):
                    logs += [path] if up else []
                    break
        out[folder] = logs
    return out


def _text(raw: str) -> str:
    """A field as the agent saw it: unescaped only when it holds what `html.escape` writes."""
    return _ESCAPED.sub(lambda m: _UNESCAPE[m.group(0)], raw) if _ESCAPED.search(raw) else raw


class _Blocks(HTMLParser):
    """RenderHelper's page as a config and a list of blocks (dicts of raw field texts)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.config: str | None = None
        self.blocks: list[dict] = []
        self._context: str | None = None  # the class of the last div or h3 opened
        self._field: str | None = None
        self._closing: str | None = None  # the tag whose end closes the field being read
        self._buffer: list[str] = []
        self._heading: list[str] | None = None
        self._in_predict = False

    def _capture(self, field: str, tag: str) -> None:
        self._field, self._closing, self._buffer = field, tag, []
        self.set_cdata_mode(tag)  # raw text up to </tag>: the writer does not escape it

    def handle_startendtag(self, tag, attrs):
        # `<a href=http://host/path/>`: the writer's unquoted URL ends in a slash, which is not a void tag
        self.handle_starttag(tag, attrs)
        if tag != "a":
            self.handle_endtag(tag)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("div", "h3"):
            self._context = attrs.get("class")
            # the playwright action set writes its code straight into predict_action, with no inner div
            self._in_predict = self._context == "predict_action" and bool(self.blocks)
        if tag == "h2" and self._field is None:
            self._heading = []  # text arrives in pieces: "New Page" is judged at </h2>
        elif tag == "pre":
            if not self.blocks and self.config is None:
                self._capture("config", "pre")
            elif self.blocks:
                self._capture(self._context if self._context in _FIELDS else "pre", "pre")
        elif tag == "a" and self._context == "url" and self.blocks:
            self._capture("url", "a")
        elif tag == "div" and self._context == "prev_action" and self.blocks:
            self._capture("prev_action", "div")
        elif tag == "img" and self.blocks:
            self.blocks[-1]["images"] = self.blocks[-1].get("images", 0) + 1
            src = attrs.get("src") or ""
            if src.startswith("data:image/") and ";base64," in src:
                self.blocks[-1]["image"] = src.split(";base64,", 1)[1]

    def handle_endtag(self, tag):
        if self._field is not None and tag == self._closing:
            text = "".join(self._buffer)
            if self._field == "config":
                self.config = text
            else:
                self.blocks[-1].setdefault(self._field, text)
            self._field = None
        if tag in ("div", "h3"):
            self._context = None
        if tag == "h2" and self._heading is not None:
            if "".join(self._heading).strip() == "New Page":
                self.blocks.append({})
            self._heading = None

    def handle_data(self, data):
        if self._field is not None or self._heading is not None:
            (self._buffer if self._field is not None else self._heading).append(data)
        elif self._in_predict:
            self.blocks[-1]["pw_code"] = self.blocks[-1].get("pw_code", "") + data

    def feed_stream(self, stream) -> Iterator[dict]:
        """Feed the file piece by piece, yielding each block once the next one has begun."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")  # a character may straddle two pieces
        while True:
            chunk = stream.read(_CHUNK)
            if not chunk:
                break
            self.feed(decoder.decode(chunk))
            while len(self.blocks) > 1:
                yield self.blocks.pop(0)
        self.close()
        yield from self.blocks
        self.blocks = []


def _config(text: str | None) -> dict[str, str]:
    out = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition(": ")
        if sep and re.fullmatch(r"\w+", key):
            out[key] = _text(value)
    return out


def _element_line(observation: str | None, element_id: str) -> str | None:
    prefix = f"[{element_id}]"
    for line in (observation or "").splitlines():
        if line.strip().startswith(prefix + " "):
            return line.strip()
    return None


def _fields(action_object: str) -> tuple[str | None, dict]:
    """The action type and the string fields of the action object's repr (each a Python string literal)."""
    kind = _TYPE.search(action_object)
    fields = {}
    for name, literal in _FIELD.findall(action_object):
        try:
            fields.setdefault(name, ast.literal_eval(literal))
        except (ValueError, SyntaxError):
            continue
    page = _PAGE.search(action_object)
    if page:
        fields["page_number"] = int(page.group(1))
    return (kind.group(1) if kind else None), fields


def _action(block: dict, observation: str | None, env: dict) -> Action:
    reply = _text(block.get("raw_parsed_prediction", ""))
    parsed = _text(block["parsed_action"]) if "parsed_action" in block else None
    raw_object = _text(block["action_object"]) if "action_object" in block else None
    raw = orjson.dumps({k: v for k, v in (("action_object", raw_object), ("parsed_action", parsed)) if v}).decode()
    if raw_object is None and block.get("pw_code", "").strip():  # the playwright action set: code, verbatim
        code = _text(block["pw_code"]).strip()
        return Action(kind="code", code=code, raw=orjson.dumps({"pw_code": code}).decode())
    if raw_object is None:
        warn(env, "no_action_object", "a block without the action object: kept as a message with the reply")
        return Action(kind="message", text=reply or None, raw=raw)
    name, fields = _fields(raw_object)
    kind = _KINDS.get(name or "", "tool_call")
    act = Action(kind=kind, raw=raw)
    element_id = fields.get("element_id")
    if element_id and name not in ("STOP", "NONE", "GOTO_URL", "SCROLL", "KEY_PRESS"):
        described = re.search(r" where \[[^\]]*\] is (.*)", parsed or "", re.S)
        act.element = orjson.dumps({"id": element_id, "line": _element_line(observation, element_id),
                                    "description": described.group(1) if described else None}).decode()
    if kind == "type":
        typed = _TYPED.match(parsed or "") or _TYPED_REPLY.search(reply)
        act.text = typed.group(1) if typed else None
    elif kind == "scroll":
        act.direction = "up" if "up" in fields.get("direction", "") else "down"
    elif kind == "key":
        keys = [k for k in fields.get("key_comb", "").split("+") if k]
        act.kind, act.keys = ("hotkey" if len(keys) > 1 else "key"), keys
    elif kind == "navigate":
        act.text = fields.get("url")
    elif kind == "done":
        act.text = fields.get("answer")
    elif kind == "message":
        act.text = reply or None
    elif kind == "tool_call":
        act.tool_name = (name or "unknown").lower()
        act.arguments = orjson.dumps({k: v for k, v in fields.items() if v not in ("", None)}).decode()
        if name is None:
            warn(env, "unknown_action_type", "an action object without an ActionTypes member: kept as a tool call")
    return act


def _screenshot(source: Source, block: dict, where: str, rows: list[Rejected]) -> tuple:
    data = block.get("image")
    if not data:
        return None, None
    try:
        png = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        rows.append(Rejected("bad_record", f"{where}: the screenshot is not base64; the step is kept without it",
                             where))
        return None, None
    return source.put_blob(png, "image/png", source.uri), png_size(png)


def _step(source: Source, name: str, block: dict, index: int, env: dict, rows: list[Rejected]) -> Step:
    where = f"{name}: block {index}"
    text = _text(block["state_obv"]) if "state_obv" in block else None
    url = _text(block.get("url", "")).strip()
    url = url[len("URL: "):] if url.startswith("URL: ") else url
    ref, size = _screenshot(source, block, where, rows)
    obs = Observation(kind="web", text=text, url=url or None, screenshot=ref,
                      width=size[0] if size else None, height=size[1] if size else None)
    reply = _text(block.get("raw_parsed_prediction", "")).strip()
    return Step(observation=obs, action=_action(block, text, env), reasoning=reply or None)


def _read_run_file(source: Source, rel: str) -> bytes | None:
    """A file of the run: in the result folder, or (`rel` going up) in a folder above it; None if absent."""
    try:
        if not rel.startswith(".."):
            return source.read_bytes(rel) if source.exists(rel) else None
        return source.read_path(posixpath.normpath(posixpath.join(source.path, rel)))
    except SourceError:
        return None


def _logs(source: Source) -> list[tuple[str, str]]:
    """The run's logs: merged logs in the folder (as the released traces keep them), and those
    `log_files.txt` names, relative to the folder run.py ran in (the result folder or one above it)."""
    found = [(name, data) for name in ("merged_log.txt", "merge_log.txt")
             if (data := _read_run_file(source, name)) is not None]
    listed = _read_run_file(source, "log_files.txt")
    for line in (listed or b"").decode("utf-8", "replace").splitlines():
        name = line.strip()
        if not name or name.startswith("/") or ".." in name.split("/"):
            continue
        for up in ("", "..", "../.."):
            data = _read_run_file(source, posixpath.join(up, name) if up else name)
            if data is not None:
                found.append((posixpath.join(up, name) if up else name, data))
                break
    return [(name, data.decode("utf-8", "replace")) for name, data in found]


def _verdict(logs: list[tuple[str, str]], task_id: str) -> tuple[str, float | None, str | None]:
    verdict = None
    for name, text in logs:
        for status, config in _RESULT.findall(text):
            if posixpath.basename(config) == f"{task_id}.json":
                verdict = (status, name)  # a rerun's line comes later: the last one stands
    if verdict is None:
        return "unknown", None, None
    return ("success", 1.0, verdict[1]) if verdict[0] == "PASS" else ("failure", 0.0, verdict[1])


def _run_error(errors: str, task_id: str) -> str | None:
    for part in errors.split("[Config file]: ")[1:]:
        config, _, rest = part.partition("\n")
        if posixpath.basename(config.strip()) == f"{task_id}.json":
            found = re.search(r"\[Unhandled Error\] (.*)", rest)
            return (found.group(1) if found else rest)[:500]
    return None


def _run(source: Source) -> dict:
    """What the folder says about every task of the run: run.py's arguments, logs, errors."""
    data = _read_run_file(source, "config.json")
    try:
        args = orjson.loads(data) if data else None
    except orjson.JSONDecodeError:
        args = None
    errors = _read_run_file(source, "error.txt")
    return {"args": args if isinstance(args, dict) else {}, "logs": _logs(source),
            "errors": errors.decode("utf-8", "replace") if errors else ""}


def _episode_env(source: Source, run: dict, config: dict, task_id: str) -> dict:
    env = {"task_id": task_id}
    env.update({k: config[k] for k in ("sites", "start_url", "intent_template_id") if k in config})
    if config.get("eval"):
        env["eval"] = config["eval"][:2000]
    env.update({k: run["args"][k] for k in ("action_set_tag", "observation_type", "max_steps", "provider")
                if k in run["args"]})
    error = _run_error(run["errors"], task_id)
    if error:
        env["run_error"] = error
    if source.exists(f"traces/{task_id}.zip"):
        env["playwright_trace"] = f"traces/{task_id}.zip"
    return env


def _render(source: Source, name: str, run: dict) -> Iterator[Episode | Rejected]:
    parser, steps, rows, notes = _Blocks(), [], [], {}
    with source.open_stream(name) as stream:
        for index, block in enumerate(parser.feed_stream(stream)):
            steps.append(_step(source, name, block, index, notes, rows))
    if parser.config is None:
        yield Rejected("bad_record", f"{name}: no task config `<pre>`: not a RenderHelper page", name)
        return
    config = _config(parser.config)
    task_id = config.get("task_id") or _NAME.fullmatch(name).group(1)
    env = _episode_env(source, run, config, task_id) | notes
    env["screenshots"] = sum(1 for s in steps if s.observation.screenshot)
    outcome, reward, decided_by = _verdict(run["logs"], task_id)
    if decided_by:
        env["outcome_file"] = decided_by
    last = steps[-1].action if steps else None
    stopped = last is not None and last.kind == "done"
    if stopped and (last.text or "").startswith(("Early stop:", "ERROR:")):
        env["stopped_by"] = last.text
        stopped = False
    model = run["args"].get("model")
    yield from rows
    yield Episode(key=name, domain="web", platform="browser", steps=steps, task=config.get("intent"),
                  agent=model if isinstance(model, str) else None, outcome=outcome, reward=reward,
                  terminated=stopped, env=env)


def _task_order(name: str):
    task = _NAME.fullmatch(name).group(1)
    return (0, int(task), name) if task.isdigit() else (1, 0, name)


_RUN_FILES = {"config.json", "log_files.txt", "error.txt", "merged_log.txt", "merge_log.txt"}


def _unread(source: Source, rel: str = "", depth: int = 0) -> list[str]:
    """Files the folder holds that no part of this reader reads (a fork's own outputs beside the renders; the
    traces go to their own reader), so an episode can say they were left: at most 50 named."""
    out = []
    for name in source.listdir(rel):
        path = posixpath.join(rel, name) if rel else name
        if source.is_dir(path):
            if depth < 3 and path != "traces":
                out += _unread(source, path, depth + 1)
        elif not (depth == 0 and (name in _RUN_FILES or _NAME.fullmatch(name))):
            out.append(path)
        if len(out) >= 50:
            break
    return out[:50]


def read(source: Source) -> Iterator[Episode | Rejected]:
    run = _run(source)
    unread = _unread(source)
    for name in sorted((n for n in source.listdir() if _NAME.fullmatch(n)), key=_task_order):
        for record in _render(source, name, run):
            if unread and isinstance(record, Episode):
                record.env["folder_files_not_read"] = unread
                warn(record.env, "folder_files_not_read", "files in the result folder that are not part of "
                     "WebArena's layout were left unread (listed in env.folder_files_not_read)")
            yield record
