"""cua-agent's computer-use loop in the loop: `ComputerAgent` 0.9.1 (its own venv, `make parts`) runs on an X
virtual display (Debian's Xvfb) with a Tk window on it, against the scripted model server speaking Anthropic
Messages (its `computer` tool loop) and OpenAI Responses (`computer_call` items of `computer-use-preview`), and
writes its trajectory folder (`TrajectorySaverCallback`). Its computer is cua-agent's
`CustomComputerHandler` over xdotool (clicks, typing, keys) and ImageMagick's screenshots of the root window
(tests/ingest/desktop/cua_producer.py).

The screen is 1440x900: for Anthropic, cua caps the display it declares to the model at 1024x768, so the model
sees 1024x640 and the loop scales each point it gets by 1440/1024 and 900/640 before it clicks (OpenAI's tool is
told the whole screen): the three coordinate spaces of
a computer-use run (declared display, the screen the executor clicks, the screenshot) with the declared one
differing. The script is the oracle for every action and the model's numbers; the window's own event log says
where each click and key really landed, so a point read in the wrong space fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import orjson
import pytest

from ingest import ui_tars
from ingest.desktop import cua_trajectory
from pipelines.infra import definition
from pipelines.infra.plan import find_units
from tests.ingest import golden
from tests.ingest.desktop import xdisplay
from tests.ingest.producers import PRODUCERS
from tests.parts import require
from tests.scripted_model_server import COMPUTER_CALL, ScriptedModelServer, Turn, answer, call

VERSION = "0.9.1"
VENV = PRODUCERS / f"cua-agent-{VERSION}"
PRODUCER = Path(__file__).with_name("cua_producer.py")
SCREEN = (1440, 900)
DECLARED = (1024, 640)  # cua's cap for Anthropic (1024x768) kept to the screen's 16:10
TASK = "Type hello world in the field and press Save"
# the points, in the display declared to each vendor's model: the entry (screen 40..440 x 40..80) and the Save
# button (40..160 x 120..170) of tests/ingest/desktop/tk_window.py
RUNS = {
    "anthropic": {"model": "anthropic/claude-sonnet-4-5-20250929", "declared": DECLARED,
                  "entry": (169, 42), "save": (71, 103), "platform": "linux"},
    "openai": {"model": "openai/computer-use-preview", "declared": SCREEN, "entry": (240, 60), "save": (100, 145),
               "platform": "ubuntu"},
}


def _script(vendor: str) -> list:
    run = RUNS[vendor]
    if vendor == "anthropic":
        return [call("computer", action="screenshot"),
                call("computer", action="left_click", coordinate=list(run["entry"])),
                call("computer", action="type", text="hello world"),
                call("computer", action="key", text="ctrl+e"),
                call("computer", action="left_click", coordinate=list(run["save"])),
                answer("Saved the form.")]
    return [call(COMPUTER_CALL, type="screenshot"),
            call(COMPUTER_CALL, type="click", button="left", x=run["entry"][0], y=run["entry"][1]),
            call(COMPUTER_CALL, type="type", text="hello world"),
            call(COMPUTER_CALL, type="keypress", keys=["ctrl", "e"]),
            call(COMPUTER_CALL, type="click", button="left", x=run["save"][0], y=run["save"][1]),
            answer("Saved the form.")]


def _model_point(vendor: str, raw: dict) -> tuple:
    call_ = raw["model_call"]
    return tuple(call_["coordinate"]) if vendor == "anthropic" else (call_["x"], call_["y"])


def _executed(point: tuple[int, int], declared: tuple[int, int]) -> tuple[int, int]:
    """Where the loop clicks a point of the declared display: scaled per axis to the screenshot, rounded."""
    return (round(point[0] * SCREEN[0] / declared[0]), round(point[1] * SCREEN[1] / declared[1]))


@pytest.fixture(scope="module", params=list(RUNS))
def cua_run(request, tmp_path_factory):
    """(vendor, the trajectory folder, the window's events, the requests the model server answered)."""
    vendor = request.param
    folder, events, requests = _produce(tmp_path_factory.mktemp("cua"), _script(vendor), RUNS[vendor]["model"],
                                        "" if vendor == "anthropic" else "/v1")
    return vendor, folder, events, [r for r in requests if r.turn is not None]


def _produce(out: Path, script: list, model: str, path: str = "", producer_args: tuple = (), **server_options):
    """Run the loop on a fresh display: (the trajectory folder, the window's events, the requests answered);
    `producer_args`: the producer's options after the task (`title-tool`)."""
    require(f"cua-agent {VERSION} in {VENV}", (VENV / ".installed").exists())
    require("Xvfb, xdotool, ImageMagick and python3-tk (Debian packages)", xdisplay.available())
    log = out / "window.jsonl"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "CUA_TELEMETRY_ENABLED": "false",
           "CUA_TELEMETRY": "off", "PYTHONWARNINGS": "ignore"}
    with xdisplay.virtual_display(*SCREEN, log) as display, ScriptedModelServer(script, **server_options) as server:
        done = subprocess.run([str(VENV / "bin" / "python"), str(PRODUCER), display, model, server.url + path,
                               str(out / "trajectories"), TASK, *producer_args], capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr[-4000:]
        (folder,) = json.loads(done.stdout.strip().splitlines()[-1])["trajectories"]
        return Path(folder), xdisplay.events(log), list(server.requests)


def _episode(folder: Path, blobs: dict | None = None):
    (episode,) = golden.read_records(cua_trajectory, folder, blobs)
    return episode


def test_every_action_and_point_is_the_scripts_at_the_pixel_the_loop_clicked(cua_run):
    vendor, folder, _, _ = cua_run
    run = RUNS[vendor]
    episode = _episode(folder)
    kinds = [s.action.kind for s in episode.steps]
    assert kinds == ["wait", "click", "type", "hotkey", "click", "message"]
    assert (episode.task, episode.domain, episode.platform, episode.terminated) == (TASK, "os", run["platform"], True)
    clicks = [s.action for s in episode.steps if s.action.kind == "click"]
    for action, model_point in zip(clicks, (run["entry"], run["save"])):
        raw = orjson.loads(action.raw)
        pixel = _executed(model_point, run["declared"])
        assert (raw["point"]["x"], raw["point"]["y"]) == pixel
        assert raw["point"]["space"] == "screenshot" and (raw["point"]["width"], raw["point"]["height"]) == SCREEN
        assert (action.x, action.y) == pytest.approx((pixel[0] / SCREEN[0], pixel[1] / SCREEN[1]))
        # the model's own numbers and the display it was told of, kept beside the executed point
        assert _model_point(vendor, raw) == model_point
        assert raw["declared_display"] == {"width": run["declared"][0], "height": run["declared"][1]}
        if run["declared"] != SCREEN:  # read over the screenshot, the model's numbers would miss, by x and y apart
            assert abs(model_point[0] - pixel[0]) > 15 and abs(model_point[1] - pixel[1]) > 15
    assert episode.steps[2].action.text == "hello world"
    assert [k.lower() for k in episode.steps[3].action.keys] == ["ctrl", "e"]
    assert episode.steps[5].action.text == "Saved the form."
    assert episode.env["declared_display"] == {"width": run["declared"][0], "height": run["declared"][1]}


def test_the_clicks_and_keys_landed_where_the_episode_says(cua_run):
    vendor, folder, events, _ = cua_run
    run = RUNS[vendor]
    episode = _episode(folder)
    presses = [(e["x"], e["y"]) for e in events if e["event"] == "press"]
    expected = [tuple(orjson.loads(s.action.raw)["point"][k] for k in ("x", "y"))
                for s in episode.steps if s.action.kind == "click"]
    assert presses == expected == [_executed(run["entry"], run["declared"]), _executed(run["save"], run["declared"])]
    assert [e["text"] for e in events if e["event"] == "save"] == ["hello world"]


def test_each_call_observes_its_own_screenshot_without_a_text_state(cua_run):
    _, folder, _, _ = cua_run
    blobs: dict = {}
    episode = _episode(folder, blobs)
    observed = [s.observation for s in episode.steps[1:]]
    assert all(o.kind == "screen" and o.text is None and o.screenshot for o in observed)
    assert all((o.width, o.height) == SCREEN for o in observed)
    assert {o.screenshot for o in observed} <= set(blobs)
    assert all(blobs[o.screenshot][1].startswith(b"\x89PNG") for o in observed)
    # the crosshair copies cua draws on clicked screenshots are counted, never observations
    assert episode.env["screenshots"] == 5 and episode.env["screenshots_with_crosshair"] == 2
    assert episode.env["observation_text"].startswith("none")


def test_the_model_was_told_the_declared_display(cua_run):
    vendor, _, _, requests = cua_run
    assert len(requests) == len(_script(vendor))
    tools = [t for t in requests[0].body["tools"] if t.get("name") == "computer" or t["type"] == "computer_use_preview"]
    sizes = [(t.get("display_width_px") or t["display_width"], t.get("display_height_px") or t["display_height"])
             for t in tools]
    assert sizes == [RUNS[vendor]["declared"]]


def test_detection_needs_the_metadata_and_its_turn_folders(tmp_path):
    run = tmp_path / "2025-01-01_claude_000000_abcd"
    (run / "turn_000").mkdir(parents=True)
    (run / "metadata.json").write_text('{"trajectory_id": "x", "status": "completed", "kwargs": {}}')
    (run / "turn_000" / "0000_api_start.json").write_text("{}")
    files = [str(p) for p in sorted(tmp_path.rglob("*")) if p.is_file()]
    head = lambda p: Path(p).read_bytes()[:4096]  # noqa: E731
    assert cua_trajectory.units(files, head) == [str(run)]
    lone = [str(run / "metadata.json")]
    assert cua_trajectory.units(lone, head) == []


# UI-TARS through cua's loop for it: the model answers in text (`Thought: ... Action: click(start_box='(x,y)')`),
# which the loop parses and executes; it reads the numbers as thousandths of the screenshot (UI-TARS 1.0's
# convention) and sends the model its history back rewritten in pixels, so each turn is chosen by how many
# replies the history holds.
UI_TARS_MODEL = "openai/ByteDance-Seed/UI-TARS-1.5-7B"
UI_TARS_ENTRY, UI_TARS_SAVE = (167, 67), (69, 161)
UI_TARS_SCRIPT = [
    Turn(text=f"Thought: The field is at the top left.\nAction: click(start_box='({UI_TARS_ENTRY[0]},{UI_TARS_ENTRY[1]})')"),
    Turn(text="Thought: Type the words.\nAction: type(content='hello world')"),
    Turn(text="Thought: Go to the end of the line.\nAction: hotkey(key='ctrl e')"),
    Turn(text=f"Thought: Save.\nAction: click(start_box='<|box_start|>({UI_TARS_SAVE[0]},{UI_TARS_SAVE[1]})<|box_end|>')"),
    Turn(text="Thought: Done.\nAction: finished(content='Saved the form.')"),
]


def _replies_so_far(script: list, protocol: str, body: dict) -> int:
    return min(sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant"), len(script) - 1)


@pytest.fixture(scope="module")
def ui_tars_run(tmp_path_factory):
    return _produce(tmp_path_factory.mktemp("uitars"), UI_TARS_SCRIPT, UI_TARS_MODEL, "/v1",
                    loop=lambda protocol, body: protocol == "chat", text_turn=_replies_so_far)


def _thousandths(point: tuple[int, int]) -> tuple[int, int]:
    """Where cua's UI-TARS loop clicks a point of the model's: thousandths of the screenshot, truncated."""
    return int(point[0] / 1000 * SCREEN[0]), int(point[1] / 1000 * SCREEN[1])


def test_a_ui_tars_session_reads_with_the_models_reply_and_the_pixel_the_loop_clicked(ui_tars_run):
    folder, events, _ = ui_tars_run
    blobs: dict = {}
    episode = _episode(folder, blobs)
    assert [s.action.kind for s in episode.steps] == ["click", "type", "hotkey", "click", "done"]
    assert episode.steps[-1].action.text == "Saved the form." and episode.terminated
    assert [s.reasoning for s in episode.steps[:4]] == ["The field is at the top left.", "Type the words.",
                                                        "Go to the end of the line.", "Save."]
    clicks = [s.action for s in episode.steps if s.action.kind == "click"]
    for action, model_point, turn in zip(clicks, (UI_TARS_ENTRY, UI_TARS_SAVE), (0, 3)):
        raw = orjson.loads(action.raw)
        pixel = _thousandths(model_point)
        assert (raw["point"]["x"], raw["point"]["y"]) == pixel
        assert raw["model_call"]["boxes"]["start_box"] == list(map(float, model_point))
        assert raw["model_call"]["read_as"] == "thousandths of the screenshot"
        assert raw["model_call"]["reply"] == UI_TARS_SCRIPT[turn].text
    assert [(e["x"], e["y"]) for e in events if e["event"] == "press"] == [_thousandths(UI_TARS_ENTRY),
                                                                           _thousandths(UI_TARS_SAVE)]
    assert [e["text"] for e in events if e["event"] == "save"] == ["hello world"]
    # the screen before the first click is the opening observation; every call has its screenshot after it
    assert episode.steps[0].observation.screenshot in blobs and episode.steps[0].observation.kind == "screen"
    assert all(s.observation.screenshot in blobs for s in episode.steps)


def test_ui_tars_replies_read_as_bytedances_own_parser_reads_them(ui_tars_run):
    """ByteDance's parser (`ui_tars.action_parser`, the PyPI package `ui-tars`, in cua-agent's venv) is the
    oracle of the grammar: the same actions, arguments and box numbers for every reply of the session and for
    the grammar's other forms (it is given the replies without the box tokens, which its callers strip)."""
    folder, _, _ = ui_tars_run
    replies = [t.text for t in UI_TARS_SCRIPT] + [
        "Thought: Drag it.\nAction: drag(start_box='(10,20)', end_box='(300,400)')",
        "Thought: Point form.\nAction: click(point='<point>512 384</point>')",
        "Reflection: It moved.\nAction_Summary: Scroll down.\nAction: scroll(start_box='(100,200,300,400)', direction='down')",
        "Thought: Two keys.\nAction: hotkey(key='ctrl c')\n\nhotkey(key='ctrl v')",
    ]
    oracle = _bytedance_parse(replies, folder.parent)
    for reply, theirs in zip(replies, oracle):
        _, ours = ui_tars.parse_reply(reply)
        assert [a["name"] for a in ours] == [a["action_type"] for a in theirs]
        for mine, their in zip(ours, theirs):
            for key, value in their["action_inputs"].items():
                if key.endswith("_box"):  # theirs: thousandths as fractions, a point doubled into a box
                    numbers = [n / 1000 for n in mine["boxes"][key]]
                    assert json.loads(value) == pytest.approx(numbers * (2 if len(numbers) == 2 else 1))
                else:
                    assert mine["args"][key] == value


def _bytedance_parse(replies: list[str], where: Path) -> list:
    script = where / "bytedance_parse.py"
    script.write_text(
        "import json, sys\nfrom ui_tars.action_parser import parse_action_to_structure_output as parse\n"
        "replies = json.load(open(sys.argv[1]))\n"
        "tokens = lambda r: r.replace('<|box_start|>', '').replace('<|box_end|>', '')\n"
        "print(json.dumps([parse(tokens(r), 1000, 900, 1440, model_type='qwen2vl') for r in replies]))\n")
    (where / "replies.json").write_text(json.dumps(replies))
    done = subprocess.run([str(VENV / "bin" / "python"), str(script), str(where / "replies.json")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_trajectory_folder_is_one_unit_with_nothing_left_unread(cua_run):
    _, folder, _, _ = cua_run
    units, ignored = find_units([str(folder.parent)], definition.load("ingest-all").formats)
    assert [(u.format, u.uri.rsplit("/", 1)[-1]) for u in units] == [("cua_trajectory", folder.name)]
    assert ignored == []  # every turn's JSON and PNG goes with its folder


def test_screenshots_written_outside_the_run_are_its_files_not_unread_inputs(tmp_path):
    """cua's `screenshot_dir` (added for OSWorld evaluations, whose trajectories outgrew 100 GB) writes every call's
    screenshot beside the runs as `<call_id>.png`: they belong to the run, the same screens its turn folders keep."""
    shots = tmp_path / "trajectories" / "call_screenshots"
    folder, events, _ = _produce(tmp_path, _script("anthropic"), RUNS["anthropic"]["model"],
                                 producer_args=(f"screenshot-dir={shots}",))
    episode = _episode(folder)
    assert [s.action.kind for s in episode.steps] == ["wait", "click", "type", "hotkey", "click", "message"]
    assert episode.env["screenshots"] == 5 and [e["text"] for e in events if e["event"] == "save"] == ["hello world"]
    units, ignored = find_units([str(folder.parent)], definition.load("ingest-all").formats)
    assert [(u.format, u.uri.rsplit("/", 1)[-1]) for u in units] == [("cua_trajectory", folder.name)]
    copies = sorted(shots.iterdir())
    assert len(copies) == 5 and sorted(Path(i.path) for i in ignored) == copies
    assert all(i.reason.startswith(f"part of the cua_trajectory run {folder.name}, which does not read it: a copy")
               for i in ignored)
    # the reason is true: each copy is a screen a turn folder keeps (and is read); how many of the 5 screens are
    # distinct depends on when the window painted, so only the sets are compared
    kept = {p.read_bytes() for p in folder.glob("turn_*/*_screenshot_after.png")}
    assert {p.read_bytes() for p in copies} == kept
