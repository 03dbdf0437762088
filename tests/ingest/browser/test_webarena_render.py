"""WebArena / VisualWebArena result folders (`render_<task_id>.html` with the run's `config.json`, logs and
traces), read against what a person counts in them (samples/browser/webarena-render/PROVENANCE.md).

Real folders beside the repository (Apache-2.0): HuiyuanYan/webarena's llama2:7b run (4 actions) and a
VisualWebArena render of supermomo668/visualwebarena whose run stopped before its first action. Read where they
lie under ../shared/samples/browser/webarena-render/ (never copied here): supermomo668/visualwebarena @ 54be10c,
`results/` (a 1.9 MB Set-of-Mark run, 14 actions) and devin-distyl/webarena @ c9135f6 (no license),
`parallel_demo_results/example_result/` (2 actions, its Playwright trace beside it). The hand-made cases follow
RenderHelper's own f-strings (web-arena-x/webarena @ f62e0b9, `browser_env/helper_functions.py`) and run.py's
`[Result] (PASS|FAIL) <config file>` log line.
"""

import base64
import hashlib
import json
import shutil
import struct
import zlib
from pathlib import Path

import fsspec

from ingest.browser import playwright_trace, webarena_render
from ingest.record import Rejected
from ingest.source import Source
from pipelines.infra import definition
from pipelines.infra.plan import find_units
from tests.conftest import SAMPLES
from tests.ingest import golden
from tests.parts import SHARED, require_shared_sample

REAL = SAMPLES / "browser" / "webarena-render"
LLAMA = REAL / "huiyuanyan-qwen2-llama2"
CONFIG_ONLY = Path(__file__).parent / "data" / "webarena-render" / "supermomo-vwa-config-only"
SHARED_ROOT = SHARED / "samples" / "browser" / "webarena-render"
GOLDEN = Path(__file__).with_name("golden") / "webarena-render.json"
ENV_KEYS = ("task_id", "start_url", "action_set_tag", "observation_type", "screenshots", "stopped_by",
            "outcome_file", "run_error", "playwright_trace")

TEMPLATE = """
<!DOCTYPE html>
<head>
    <style>
        pre {{
            white-space: pre-wrap;
            word-wrap: break-word;
        }}
    </style>
</head>
<html>
    <body>
     {body}
    </body>
</html>
"""


def _put(data: bytes, media_type: str, uri: str) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _episodes(folder: Path, blobs: dict | None = None) -> list:
    return golden.read_records(webarena_render, folder, blobs)


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\0" + b"\0" * width * 3 for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _block(url: str, tree: str, prev: str, reply: str, action_object: str, parsed: str, png: bytes | None) -> str:
    """One block as RenderHelper.render writes it (its f-strings, id_accessibility_tree)."""
    out = "<h2>New Page</h2>\n"
    out += f"<h3 class='url'><a href={url}>URL: {url}</a></h3>\n"
    out += f"<div class='state_obv'><pre>{tree}</pre><div>\n"
    if png is not None:
        out += f"<img src='data:image/png;base64,{base64.b64encode(png).decode()}' style='width:50vw; height:auto;'/>\n"
    out += f"<div class='prev_action' style='background-color:pink'>{prev}</div>\n"
    action = (f"<div class='raw_parsed_prediction' style='background-color:grey'><pre>{reply}</pre></div>"
              f"<div class='action_object' style='background-color:grey'><pre>{action_object}</pre></div>"
              f"<div class='parsed_action' style='background-color:yellow'><pre>{parsed}</pre></div>")
    return out + f"<div class='predict_action'>{action}</div>\n"


def _render(task_id: int, intent: str, blocks: list[str]) -> str:
    config = (f"<pre>sites: ['shopping']\ntask_id: {task_id}\nstart_url: http://localhost:7770\n"
              f"intent: {intent}\n</pre>\n")
    return TEMPLATE.format(body=config + "".join(blocks))


def _object(kind: str, number: int, **fields) -> str:
    values = {"element_id": "", "url": "", "key_comb": "", "direction": "", "answer": "", **fields}
    text = ", ".join(f"'{k}': {v!r}" for k, v in values.items())
    return (f"{{'action_type': <ActionTypes.{kind}: {number}>, 'coords': array([0., 0.], dtype=float32), "
            f"'text': [], 'page_number': 0, {text}, 'raw_prediction': '...'}}")


def test_the_llama2_run_as_a_person_counts_it():
    blobs = {}
    (ep,) = _episodes(LLAMA, blobs)
    assert [s.action.kind for s in ep.steps] == ["click", "click", "click", "done"]
    assert ep.task == "What is the top-1 best-selling product in 2022" and ep.agent == "llama2:7b"
    assert {s.observation.url for s in ep.steps} == {
        "http://ec2-3-131-244-37.us-east-2.compute.amazonaws.com:7780/admin/admin/dashboard/"}
    assert len(blobs) == 4 and all(s.observation.screenshot in blobs for s in ep.steps)
    assert {(s.observation.width, s.observation.height) for s in ep.steps} == {(1280, 720)}
    first = json.loads(ep.steps[0].action.element)
    assert first == {"id": "8", "line": "[8] SPAN 'Stores'", "description": "[8] SPAN 'Stores'"}
    # the filtered tree of the next observations left element 8 out: its line is null, the node is named
    assert json.loads(ep.steps[1].action.element)["line"] is None
    assert ep.steps[0].observation.text.startswith("Tab 0 (current): Dashboard / Magento Admin\n    [4] SPAN")
    assert ep.steps[0].reasoning.startswith("In summary, the next action I will perform is ```click [8]```")
    assert all(s.action.x is None for s in ep.steps)  # the action space names elements, not points
    assert ep.steps[3].action.text == "Early stop: Same action for 3 times"
    assert (ep.outcome, ep.reward, ep.terminated) == ("unknown", None, False)  # the named log is not there
    assert ep.env["stopped_by"] == "Early stop: Same action for 3 times" and ep.env["screenshots"] == 4
    assert ep.env["observation_type"] == "grounding"


def test_a_render_whose_run_stopped_before_its_first_action():
    (ep,) = _episodes(CONFIG_ONLY)
    assert ep.steps == [] and ep.key == "render_1.html" and ep.agent == "gpt-3.5-turbo-1106"
    assert ep.task == 'Buy the least expensive blue headset from "Virtual Reality (VR) Headsets" category.'


def test_goldens_of_the_real_folders():
    records = _episodes(LLAMA) + _episodes(CONFIG_ONLY)
    golden.check(records, GOLDEN, env_keys=ENV_KEYS)


def test_a_visualwebarena_set_of_mark_run_from_shared():
    blobs = {}
    (ep,) = _episodes(require_shared_sample(SHARED_ROOT / "supermomo-vwa-som"), blobs)
    kinds = [s.action.kind for s in ep.steps]
    assert kinds == ["move", "click", "back", "navigate", "navigate", "navigate", "navigate", "tool_call",
                     "navigate", "tool_call", "message", "message", "message", "done"]
    assert [s.action.tool_name for s in ep.steps if s.action.kind == "tool_call"] == ["new_tab", "new_tab"]
    assert json.loads(ep.steps[0].action.element)["line"] == "[7] [BUTTON] [Search icon]"
    assert sum(1 for s in ep.steps if s.observation.screenshot) == 14
    assert {(s.observation.width, s.observation.height) for s in ep.steps} == {(1280, 2048)}
    assert ep.env["action_set_tag"] == "som" and ep.agent == "gpt-4-vision-preview"
    assert "opentable_get_reservation_confirmation" in ep.env["run_error"]
    assert (ep.outcome, ep.terminated) == ("unknown", False)


def test_a_webarena_run_with_its_trace_from_shared():
    (ep,) = _episodes(require_shared_sample(SHARED_ROOT / "devin-distyl"))
    assert [s.action.kind for s in ep.steps] == ["click", "done"]
    assert json.loads(ep.steps[0].action.element)["id"] == "1090"
    assert ep.steps[1].action.text == "Quest Lumaflex™ Band" and ep.terminated is True
    assert ep.env["playwright_trace"] == "traces/0.zip" and ep.agent == "gpt-4-turbo-2024-04-09"
    # the trace of the same run is read by the Playwright trace reader: the start page, then the click
    (trace,) = [r for r in golden.read_records(playwright_trace, SHARED_ROOT / "devin-distyl" / "traces" / "0.zip")
                if not isinstance(r, Rejected)]
    kinds = [s.action.kind for s in trace.steps]
    assert len(kinds) == 17 and kinds.count("navigate") == 1 and kinds.count("click") == 1
    assert trace.steps[kinds.index("navigate")].action.text == "http://localhost:7780/admin"


def test_the_evaluators_verdict_from_the_logs_the_run_names(tmp_path):
    """run.py logs `[Result] (PASS|FAIL) <config file>` into log_files/ of the folder it ran in, and lists that
    log in the result folder's log_files.txt; a rerun's later line stands."""
    results = tmp_path / "cache" / "results"
    results.mkdir(parents=True)
    png = _png(4, 3)
    click = _block("http://localhost:7770/", "Tab 0 (current): One Stop Market\n\n[1] RootWebArea 'One Stop Market'\n"
                   "\t[12] link 'My Account'", "None", "Let's think. ```click [12]```",
                   _object("CLICK", 6, element_id="12"), "click [12] where [12] is link 'My Account'", png)
    typed = _block("http://localhost:7770/customer/", "Tab 0 (current): Account\n\n\t[20] searchbox 'Search'",
                   "click [12] where [12] is link 'My Account'", "```type [20] [blue headset] [1]```",
                   _object("TYPE", 7, element_id="20"), "type [20] [blue headset] where [20] is searchbox 'Search'",
                   png)
    press = _block("http://localhost:7770/?q=a&copy=b", "Tab 0 (current): x", "type", "```press [Control+v]```",
                   _object("KEY_PRESS", 5, key_comb="Control+v"), "press [Control+v]", None)
    stop = _block("http://localhost:7770/", "Tab 0 (current): x", "press", "```stop [$14.99]```",
                  _object("STOP", 17, answer="$14.99"), "stop [$14.99]", png)
    (results / "render_7.html").write_text(_render(7, "Find the price", [click, typed, press, stop]))
    (results / "render_8.html").write_text(_render(8, "Other task", [stop]))
    (results / "log_files.txt").write_text("log_files/log_1.log\nlog_files/log_2.log\n")
    (tmp_path / "cache" / "log_files").mkdir()
    line = "2024-12-30 00:54:56,441 - INFO - [Result] ({}) config_files/{}.json\n"
    (tmp_path / "cache" / "log_files" / "log_1.log").write_text(line.format("FAIL", 7) + line.format("PASS", 8))
    (tmp_path / "cache" / "log_files" / "log_2.log").write_text(line.format("PASS", 7))  # the rerun
    (results / "error.txt").write_text("[Config file]: config_files/8.json\n[Unhandled Error] TimeoutError('x')\n")
    # the input is the folder run.py ran in: the logs above the result folder are inside it
    source = Source(fsspec.filesystem("file"), str(results), "cache/results", _put, root=str(tmp_path / "cache"))
    seven, eight = list(webarena_render.read(source))
    assert [s.action.kind for s in seven.steps] == ["click", "type", "hotkey", "done"]
    assert (seven.outcome, seven.reward, seven.env["outcome_file"]) == ("success", 1.0, "../log_files/log_2.log")
    assert (eight.outcome, eight.reward) == ("success", 1.0) and eight.env["run_error"] == "TimeoutError('x')"
    assert seven.steps[1].action.text == "blue headset" and seven.steps[2].action.keys == ["Control", "v"]
    assert json.loads(seven.steps[0].action.element)["line"] == "[12] link 'My Account'"
    assert seven.steps[2].observation.url == "http://localhost:7770/?q=a&copy=b"  # raw, not an entity
    assert seven.steps[2].observation.screenshot is None and seven.env["screenshots"] == 3
    assert seven.terminated is True and seven.steps[3].action.text == "$14.99"
    # planned with the result folder: the logs it reads above it are no unread inputs
    units, ignored = find_units([str(tmp_path / "cache")], definition.load("ingest-all").formats)
    assert [(u.format, u.uri) for u in units] == [("webarena_render", "cache/results")] and ignored == []
    assert units[0].members == tuple(str(tmp_path / "cache" / "log_files" / f"log_{n}.log") for n in (1, 2))


def test_raw_and_escaped_texts_and_a_file_fed_in_small_pieces(tmp_path, monkeypatch):
    """The writer puts the tree and the reply in `<pre>` unescaped (a `<` inside is text, not a tag); forks that
    escape write what html.escape writes. Fed 7 bytes at a time, the blocks come out the same."""
    raw_tree = "Tab 0 (current): a < b ✓\n\t[3] StaticText '<div> & </span>'\n\t[4] button 'Go'"
    escaped_tree = "Tab 0 (current): a &lt; b &amp; c"
    one = _block("http://h/", raw_tree, "None", "reply with <b>tags</b>", _object("CLICK", 6, element_id="4"),
                 "click [4] where [4] is button 'Go'", None)
    two = _block("http://h/2", escaped_tree, "click", "x", _object("GO_BACK", 11), "go_back", None)
    (tmp_path / "render_3.html").write_text(_render(3, "Check", [one, two]))
    expected = _episodes(tmp_path)
    monkeypatch.setattr(webarena_render, "_CHUNK", 7)
    (ep,) = _episodes(tmp_path)
    assert ep.steps[0].observation.text == raw_tree and ep.steps[0].reasoning == "reply with <b>tags</b>"
    assert ep.steps[1].observation.text == "Tab 0 (current): a < b & c"
    assert [s.action.kind for s in ep.steps] == ["click", "back"]
    assert golden.fingerprint([ep]) == golden.fingerprint(expected)
    assert ep.terminated is False and ep.outcome == "unknown"  # no stop: the run was cut


def test_the_playwright_action_sets_code(tmp_path):
    """With `--action_set_tag playwright` RenderHelper writes the action's `pw_code` bare in predict_action."""
    block = ("<h2>New Page</h2>\n<h3 class='url'><a href=http://h/>URL: http://h/</a></h3>\n"
             "<div class='state_obv'><pre>Tab 0 (current): x</pre><div>\n"
             "<div class='prev_action' style='background-color:pink'>None</div>\n"
             "<div class='predict_action'>page.get_by_role(\"link\", name=\"Go\").click()</div>\n")
    (tmp_path / "render_4.html").write_text(_render(4, "Go", [block]))
    (ep,) = _episodes(tmp_path)
    code = 'page.get_by_role("link", name="Go").click()'
    assert [(s.action.kind, s.action.code) for s in ep.steps] == [("code", code)]


def test_detection_claims_the_result_folder_not_other_html(tmp_path):
    shutil.copytree(LLAMA, tmp_path / "results")
    (tmp_path / "results" / "traces").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "render_2.html").write_text("<html><body><pre>task_id: 2</pre></body></html>")
    files = sorted(str(p) for p in tmp_path.rglob("*") if p.is_file())
    head = lambda p: Path(p).read_bytes()[:65536]
    assert webarena_render.units(files, head) == [str(tmp_path / "results")]


def test_files_of_a_forks_own_beside_the_renders_are_named_not_dropped(tmp_path):
    shutil.copytree(LLAMA, tmp_path / "results")
    (tmp_path / "results" / "format_traces" / "task_0").mkdir(parents=True)
    (tmp_path / "results" / "format_traces" / "task_0" / "0.json").write_text("{}")
    (ep,) = _episodes(tmp_path / "results")
    assert ep.env["folder_files_not_read"] == ["format_traces/task_0/0.json"]
    assert [w["rule"] for w in ep.env["ingest_warnings"]] == ["folder_files_not_read"]
    (clean,) = _episodes(LLAMA)
    assert "folder_files_not_read" not in clean.env


def test_a_page_without_the_task_config_is_a_row_naming_the_file(tmp_path):
    (tmp_path / "render_5.html").write_text(TEMPLATE.format(body="<h2>New Page</h2>"))
    (row,) = _episodes(tmp_path)
    assert isinstance(row, Rejected) and row.location == "render_5.html" and "task config" in row.reason

