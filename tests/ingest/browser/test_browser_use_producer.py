"""browser-use in the loop: its `Agent` (PyPI, its own venv under .venv/producers/, `make parts`) drives Debian's
chromium headless on a page served from loopback, with its `ChatOpenAI` pointed at the scripted model server
(`base_url`); the history it saves (`AgentHistoryList.save_to_file`) is read by the browser_use reader.

The script is the oracle: step by step the model navigates to the page, types a name into the field, clicks the
Greet button (both by the element index browser-use gave them in the state it sent), presses Tab, clicks the
link by its viewport coordinates, and ends with `done` (success). browser-use's own loader
(`AgentHistoryList.load_from_file`, in the producer's venv) is a second oracle for the elements, URLs and results.
"""

import http.server
import json
import os
import re
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from ingest.browser import browser_use
from tests.ingest.browser.producers import CHROMIUM, REPO
from tests.parts import require
from tests.scripted_model_server import ScriptedModelServer, answer

VERSIONS = ("0.7.10", "0.13.14")
# the action names each release's tools take (0.7's `click_element_by_index` clicks elements only; later releases
# click a point when coordinate clicking is on)
NAMES = {"0.7.10": {"navigate": "go_to_url", "input": "input_text", "click": "click_element_by_index",
                    "clear": "clear_existing", "coordinates": False},
         "0.13.14": {"navigate": "navigate", "input": "input", "click": "click", "clear": "clear",
                     "coordinates": True}}
PRODUCER = Path(__file__).with_name("browser_use_producer.py")
VENVS = REPO / ".venv" / "producers"
LINK = (460, 315)  # the centre of the link, which the page places at a fixed spot of the 800x600 viewport
INDEX = """<!doctype html>
<html><head><title>Greeter</title><link rel="icon" href="data:,"></head>
<body style="margin:0">
<h1>Greeter</h1>
<label>Name <input id="name" name="name"></label>
<button id="greet" onclick="document.getElementById('out').textContent = 'Hi ' + document.getElementById('name').value">Greet</button>
<p id="out"></p>
<a id="next" href="/next.html" style="position:absolute; left:400px; top:300px; width:120px; height:30px; display:block">Next page</a>
</body></html>
"""
NEXT = """<!doctype html>
<html><head><title>Next</title><link rel="icon" href="data:,"></head>
<body><h1>Second page</h1><p>Welcome to the second page.</p></body></html>
"""


class _Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        body = {"/index.html": INDEX, "/next.html": NEXT}.get(self.path.split("?")[0])
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write((body or "not found").encode())

    def log_message(self, *args):
        pass


@contextmanager
def _site():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _state_text(body: dict) -> str:
    """The user messages' text: the state browser-use sends for this step is among them."""
    texts = []
    for message in body["messages"]:
        content = message.get("content") if message.get("role") == "user" else None
        parts = [content] if isinstance(content, str) else [p.get("text") for p in content or [] if isinstance(p, dict)]
        texts += [p for p in parts if isinstance(p, str)]
    return "\n".join(texts)


def _index(state: str, pattern: str) -> int:
    found = re.search(r"\[(\d+)\]<" + pattern, state)
    assert found, f"the state browser-use sent names no element like {pattern!r}"
    return int(found.group(1))


class Script:
    """The model's side of the run: the action for each step, the element indexes read from the state the agent
    sent (as a model reads them); `given` keeps every action answered, in order."""

    def __init__(self, start: str, version: str):
        self.start, self.given, self.names = start, [], NAMES[version]

    def __call__(self, protocol: str, body: dict) -> str:
        state = _state_text(body)
        found = re.search(r"<step_info>\s*Step ?(\d+)", state)  # `Step2 maximum:8` (0.13), `Step 2. Maximum` (0.7)
        if found is None:  # a request the loop makes on the side (none expected with the judge and planner off)
            return "OK"
        step = int(found.group(1))
        names = self.names
        link = lambda: {"coordinate_x": LINK[0], "coordinate_y": LINK[1]} if names["coordinates"] else \
            {"index": _index(state, r"a\b[^\n]*\n?\s*Next page")}  # noqa: E731
        actions = {
            1: lambda: {names["navigate"]: {"url": self.start, "new_tab": False}},
            2: lambda: {names["input"]: {"index": _index(state, "input id=name"), "text": "Ada", names["clear"]: True}},
            3: lambda: {names["click"]: {"index": _index(state, "button id=greet")}},
            4: lambda: {"send_keys": {"keys": "Tab"}},
            5: lambda: {names["click"]: link()},
        }
        action = actions.get(step, lambda: {"done": {"text": "The second page says: Welcome to the second page.",
                                                     "success": True}})()
        self.given.append(action)
        return json.dumps({"thinking": f"step {step}", "evaluation_previous_goal": "ok", "memory": f"at step {step}",
                           "next_goal": next(iter(action)), "action": [action]})


def _python(version: str) -> Path:
    return VENVS / f"browser-use-{version}" / "bin" / "python"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    out = {}
    for version in VERSIONS:
        require(f"browser-use {version}", (_python(version).parent.parent / ".installed").exists())
        require("Debian's chromium", Path(CHROMIUM).exists(), "apt-get install chromium")
        folder = tmp_path_factory.mktemp(f"browser-use-{version}")
        home = tmp_path_factory.mktemp("home")
        with _site() as base:
            script = Script(f"{base}/index.html", version)
            with ScriptedModelServer([answer("unused")], side=script) as server:
                # TMPDIR: the agent's folder (its screenshots) lands beside the history it saves
                env = {**os.environ, "TMPDIR": str(folder), "HOME": str(home), "XDG_CONFIG_HOME": str(home),
                       "BROWSER_USE_CONFIG_DIR": str(home / "browseruse")}
                done = subprocess.run([str(_python(version)), str(PRODUCER), str(folder), script.start, server.url],
                                      capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr[-4000:]
        out[version] = (folder, json.loads(done.stdout.strip().splitlines()[-1]), script.given)
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_a_run_leaves_no_downloads_folder_outside_the_tests_folder(runs, version):
    """browser-use makes a downloads folder for every profile (0.7: `/tmp/browser-use-downloads-<id>`, whatever
    TMPDIR says), the default one it builds on import too: the run's goes beside its output, the default's is
    gone, and the agent's folder holds none."""
    folder, oracle, _ = runs[version]
    assert (folder.parent / f"{folder.name}-downloads").is_dir()
    default = Path(oracle["default_downloads"])
    assert default.name.startswith("browser-use-downloads-") and not default.exists()
    assert not list(folder.glob("browser-use-downloads-*"))


@pytest.mark.parametrize("version", VERSIONS)
def test_every_scripted_action_is_a_step_with_its_element_page_and_point(runs, version):
    folder, oracle, given = runs[version]
    blobs = {}
    (ep,) = _read(folder, blobs)
    assert [s.action.kind for s in ep.steps] == ["navigate", "type", "click", "key", "click", "done"]
    names = NAMES[version]
    assert len(given) == 6 and [next(iter(a)) for a in given] == [
        names["navigate"], names["input"], names["click"], "send_keys", names["click"], "done"]
    navigate, typed, greet, tab, link, done = ep.steps
    assert navigate.action.text == given[0][names["navigate"]]["url"]
    assert typed.action.text == "Ada" and tab.action.keys == ["Tab"]
    # the element each action targeted, as browser-use's own loader reads it
    for step, element in ((typed, oracle["steps"][1]["elements"][0]), (greet, oracle["steps"][2]["elements"][0])):
        mine = json.loads(step.action.element)
        assert element is not None and mine["x_path"] == element["x_path"]
        assert mine["attributes"]["id"] == element["attributes"]["id"]
    assert json.loads(typed.action.element)["attributes"]["id"] == "name"
    assert json.loads(greet.action.element)["attributes"]["id"] == "greet"
    # a click or input by index ran at the element's centre, which browser-use's result says: that pixel
    for step, result in ((typed, oracle["steps"][1]["results"][0]), (greet, oracle["steps"][2]["results"][0])):
        prefix = "input" if step is typed else "click"
        executed = (result["metadata"][f"{prefix}_x"], result["metadata"][f"{prefix}_y"])
        width, height = step.observation.width, step.observation.height
        assert (step.action.x * width, step.action.y * height) == pytest.approx(executed)
    # the link clicked at its viewport point (0.13) or by its index (0.7: at its centre): the same pixel of the
    # screenshot it was taken on
    width, height = link.observation.width, link.observation.height
    assert link.observation.screenshot in blobs and width >= LINK[0] and height >= LINK[1]
    assert (round(link.action.x * width), round(link.action.y * height)) == LINK
    assert json.loads(link.action.raw)["point"]["space"] == "viewport"
    # the page each action was taken on, and what the actions before it returned
    assert [s.observation.url for s in ep.steps] == [s["url"] for s in oracle["steps"]]
    assert ep.steps[-1].observation.url.endswith("/next.html")
    # the page before each action: 0.13 keeps the state it showed the model (the greeting once Greet was pressed)
    if version != "0.7.10":
        assert "Hi Ada" not in greet.observation.text and "Hi Ada" in tab.observation.text
        assert "<input id=name" in typed.observation.text and "Ada" not in typed.observation.text.split("Greeter")[1]
    assert done.action.text == "The second page says: Welcome to the second page."
    assert (ep.outcome, ep.terminated) == ("success", True) and oracle["is_successful"] is True
    if version == "0.7.10":
        assert ep.task is None  # 0.7 keeps no `state_message`: its history holds no task
    else:
        assert ep.task.startswith("Open the greeter page, greet Ada")


def _read(folder: Path, blobs: dict) -> list:
    """The history read with the folder as the input (its screenshots lie in the agent's folder inside it)."""
    import hashlib

    import fsspec

    from ingest.source import Source

    def put(data: bytes, media_type: str, uri: str) -> str:
        ref = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[ref] = data
        return ref

    source = Source(fsspec.filesystem("file"), str(folder / "agent_history.json"), "run/agent_history.json", put,
                    root=str(folder))
    return [r for r in browser_use.read(source)]


def test_ingest_all_reads_the_agent_folder_with_its_history_and_lists_only_its_unread_files(runs, run, query,
                                                                                             tmp_path):
    """A run folder as a person keeps it (the history and browser-use's agent folder beside it), moved away from
    where it ran: every screenshot the history names is read with it, none is an unread input or another reader's,
    and browser-use's own `todo.md` is listed as a file of the run its reader does not read."""
    import shutil

    mixed, shots = tmp_path / "mixed", {}
    for version in VERSIONS:
        folder = runs[version][0]
        (mixed / version).mkdir(parents=True)
        shutil.copy(folder / "agent_history.json", mixed / version)
        (agent,) = folder.glob("browser_use_agent_*")
        shutil.copytree(agent, mixed / version / agent.name)
        shots[version] = sorted(p.name for p in agent.glob("screenshots/*.png"))
        assert len(shots[version]) == 5 and (agent / "browseruse_agent_data" / "todo.md").exists()
    result = run("ingest-all", [mixed], stages=["ingest"])
    assert result.status == "success", result.messages
    ignored = {r["path"].split("/mixed/", 1)[1]: r["reason"] for r in query("SELECT path, reason FROM ignored_inputs")}
    assert sorted(p.split("/")[0] for p in ignored) == sorted(VERSIONS)
    for path, reason in ignored.items():
        assert path.endswith("/browseruse_agent_data/todo.md")
        assert reason.startswith("part of the browser_use run agent_history.json, which does not read it")
    episodes = query("SELECT source_format, source_uri FROM episodes ORDER BY source_uri")
    assert episodes == [{"source_format": "browser_use", "source_uri": f"mixed/{v}/agent_history.json"}
                        for v in sorted(VERSIONS)]
    # the screenshots were read from the copies (the paths the histories name lead outside this input)
    pictures = query("SELECT e.source_uri, count(DISTINCT (s.observation).screenshot) AS n FROM steps s "
                     "JOIN episodes e USING (episode_id) WHERE (s.observation).screenshot IS NOT NULL GROUP BY 1")
    assert {r["source_uri"]: r["n"] for r in pictures} == {f"mixed/{v}/agent_history.json": 5 for v in VERSIONS}
