"""Web actions in the benchmark's form, BrowserGym calls: every call `export sft --format bench` writes for the
bundled web samples (a BrowserGym run, Playwright traces, a browser-use run) is read by BrowserGym's own
parser (`highlevel_action_parser`, the producer venv of AgentLab 0.4.2 / BrowserGym 0.14.3) as one call of
the action space the web prompt lists (a BrowserGym run's recorded calls: of BrowserGym's action set), and
`--web-action json` keeps the schema's JSON form."""

import json
import re
import subprocess

import pytest

from pipelines import cli

from pipelines.infra import definition
from pipelines.infra.runner import run_ingest
from tests.conftest import REPO, SAMPLES
from tests.parts import require
from transforms import agentworld
from transforms.browsergym_code import browsergym_call

BROWSERGYM_PYTHON = REPO / ".venv" / "producers" / "agentlab-0.4.2" / "bin" / "python"
ACTION = re.compile(r"\*\*Action:\*\*\n```(\w*)\n(.*?)\n```", re.S)
# what BrowserGym makes of each call: (function name, arguments), by its own parser and action set
PARSE = """
import json, sys
from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.core.action.parsers import highlevel_action_parser
full = HighLevelActionSet(subsets=["chat", "infeas", "bid", "coord", "nav", "tab"], strict=True)
out = []
for call in json.load(sys.stdin):
    calls = highlevel_action_parser.parse_string(call, parse_all=True).as_list()
    full.to_python_code(call)  # raises on a name outside BrowserGym's action set, or several calls
    out.append([[name, [getattr(a, "value", a) for a in args]] for name, args in calls])
print(json.dumps(out))
"""


def _prompt_action_space() -> set[str]:
    """The function names the web system prompt's `# Action Space` lists."""
    prompt = agentworld.system_prompt("web")
    block = prompt.split("# Action Space", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return set(re.findall(r"^([a-z_]+)\(", block, re.M))


def _browsergym_parse(calls: list[str]) -> list[list]:
    require("AgentLab 0.4.2's producer venv (BrowserGym 0.14.3)", BROWSERGYM_PYTHON.exists(),
            "make parts installs it")
    done = subprocess.run([str(BROWSERGYM_PYTHON), "-c", PARSE], input=json.dumps(calls), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> str:
    lake = str(tmp_path_factory.mktemp("web") / "lake")
    assert run_ingest(definition.load("ingest-all"), lake, [str(SAMPLES / "browser")], progress=False,
                      log=lambda line: None).status == "success"
    return lake


def _actions(lake: str, out, *extra: str) -> list[tuple[str, str, str]]:
    """(source id, fence, action text) of every action the web records of the export hold, once each."""
    assert cli.main(["export", "sft", "all", "--format", "bench", "--out", str(out), "--lake", lake,
                     "--split-ratios", "1,0,0", "--domains", "web", *extra]) == 0
    seen = {}
    for path in sorted(out.rglob("*_train.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            episode = record["source_id"].rsplit(":", 1)[0]
            for turn, prompt in enumerate(record["prompt"]):
                fence, body = ACTION.search(prompt).groups()
                seen[(episode, turn)] = (episode, fence, body)
    return list(seen.values())


def test_every_web_action_browsergym_can_say_is_a_call_its_parser_reads(lake, tmp_path):
    actions = _actions(lake, tmp_path / "out")
    calls = [body for _, fence, body in actions if fence == "text"]
    assert calls and all(fence in ("text", "json") for _, fence, _ in actions)
    parsed = _browsergym_parse(calls)
    assert all(len(p) == 1 for p in parsed), "one call per action"
    names = {p[0][0] for p in parsed}
    space = _prompt_action_space()
    assert len(space) == 21  # the prompt's own count ("21 different types of actions are available")
    recorded = {'click("156")', 'click("168")', "go_back()"}  # the BrowserGym run's calls, as recorded
    assert recorded <= set(calls)
    assert {p[0][0] for c, p in zip(calls, parsed) if c not in recorded} <= space, names
    # every kind of call the sources' actions make: element ids, pixels, typing, keys, navigation, tabs
    assert {"click", "goto", "go_back", "keyboard_type", "keyboard_press", "mouse_click", "noop",
            "new_tab"} <= names
    pixel_clicks = [p[0][1] for p in parsed if p[0][0] == "mouse_click"]
    assert [256, 90] in pixel_clicks  # the Playwright click at (255.87, 90.37) on a 640x480 viewport
    # what no call says stays JSON: Playwright API calls of no browser action (route, expect, setContent)
    kept = [json.loads(body) for _, fence, body in actions if fence == "json"]
    assert kept and all(value["kind"] == "code" for value in kept)


def test_the_json_form_is_kept_as_an_option(lake, tmp_path):
    actions = _actions(lake, tmp_path / "json", "--web-action", "json")
    assert actions and all(fence == "json" and "kind" in json.loads(body) for _, fence, body in actions)


@pytest.mark.parametrize("action, screen, call", [
    ({"kind": "click", "element": '{"bid": "a51"}'}, None, "click('a51')"),
    ({"kind": "right_click", "element": '{"bid": "a51"}'}, None, "click('a51', 'right')"),
    ({"kind": "type", "text": "it's", "element": '{"label": 12, "text": "Search"}'}, None, "fill('12', \"it's\")"),
    ({"kind": "click", "element": '{"highlight_index": 3, "x_path": "html/body/a"}'}, None, "click('3')"),
    ({"kind": "click", "x": 0.5, "y": 0.25, "element": '{"selector": "#go"}'}, (1280, 720), "mouse_click(640, 180)"),
    ({"kind": "double_click", "x": 0.5, "y": 0.25}, (1280, 720), "mouse_dblclick(640, 180)"),
    ({"kind": "click", "element": '{"pixel_point": {"click_x": 10.4, "click_y": 20.6}}'}, None, "mouse_click(10, 21)"),
    ({"kind": "type", "text": "Ada", "element": '{"selector": "#name"}'}, None, "keyboard_type('Ada')"),
    ({"kind": "hotkey", "keys": ["ctrl", "a"]}, None, "keyboard_press('Control+a')"),
    ({"kind": "scroll", "direction": "down", "text": "0.5"}, (1280, 720), "scroll(0, 360)"),
    ({"kind": "scroll", "direction": "down", "arguments": '{"deltaX": 0, "deltaY": 300}'}, None, "scroll(0, 300)"),
    ({"kind": "navigate", "text": "https://example.com/"}, None, "goto('https://example.com/')"),
    ({"kind": "wait", "duration_s": 2.5}, None, "noop(2500)"),
    ({"kind": "done", "text": "42"}, None, "send_msg_to_user('42')"),
    ({"kind": "code", "code": "page.close({})"}, None, "tab_close()"),
])
def test_each_action_kind_as_its_browsergym_call(action, screen, call):
    assert browsergym_call(action, screen) == call


@pytest.mark.parametrize("action, screen", [
    ({"kind": "click", "x": 0.5, "y": 0.25, "element": '{"selector": "#go"}'}, None),  # no screen size: no pixels
    ({"kind": "scroll", "direction": "down"}, None),  # no distance recorded, none known
    ({"kind": "code", "code": "page.route({})"}, None),
    ({"kind": "double_click", "element": '{"bid": "7"}'}, None),  # the action space has no dblclick on an element
])
def test_an_action_no_call_says_whole_is_none(action, screen):
    assert browsergym_call(action, screen) is None


def test_a_browsergym_run_keeps_its_recorded_call():
    action = {"kind": "click", "element": '{"bid": "48"}', "code": "click('48', button=\"middle\")"}
    assert browsergym_call(action, None, recorded=True) == "click('48', button=\"middle\")"
    assert browsergym_call(action, None) == "click('48')"
    unread = {"kind": "code", "code": "I will now click the login button"}  # output no call was read from
    assert browsergym_call(unread, None, recorded=True) is None
