"""The benchmark's three android state renderings (`schemas.render_android`), each on one real screen, held
against the benchmark's own form: the released rows' lines (samples/agentworld/released, as the dataset viewer
shows them) and DroidBot's element text as its `touch <button id=3 bound_box=...>Sign in</button>` events
name it (tests/transforms/export/golden/bench_layout/android.json)."""

import json
import re

import orjson

from ingest.android.uiautomator import _observation
from schemas import render_android
from tests.conftest import SAMPLES
from transforms.export import android_state

RELEASED = SAMPLES / "agentworld" / "released" / "android_test.jsonl"
DUMP = SAMPLES / "android" / "uiautomator-dump" / "window_dump.xml"
DROIDBOT_STATE = SAMPLES / "android" / "droidbot-run" / "states" / "state_2021-12-06_204505.json"

# one line of each form, as the benchmark writes it
INDEXED_LINE = re.compile(r'^\[ ?\d+\] \| [\w.$]+(?: \|(?: (?:text|hint|desc|res)="(?:[^"\\]|\\.)*")+)? \| '
                          r'bounds=\[\d+,\d+\]\[\d+,\d+\](?: \| [a-z_]+)*$')
PHONE_LINE = re.compile(r"^\d+\. [\w$]+: [^,\s]*, .* - bounds\(\d+,\d+,\d+,\d+\)$")
DROIDBOT_LINE = re.compile(r"^<(input|checkbox|button|scrollbar|p) id=(\d+)(?: text='[^']*')?(?: attr=selected)? "
                           r"bound_box=\d+,\d+,\d+,\d+>.*</\1>$")


def _released_states(row_id: int) -> list[str]:
    """The `**Current State:**` texts of one released trajectory's prompts."""
    states = []
    for line in RELEASED.read_text().splitlines():
        row = json.loads(line)
        if row["id"] == row_id:
            for prompt in row["prompt"]:
                states.append(prompt.split("**Current State:**\n", 1)[1].split("\n\n**Action:**", 1)[0])
    return states


def _dump_views() -> list[dict]:
    obs, _ = _observation(DUMP.read_bytes())
    return orjson.loads(obs.ui_tree)


def test_the_forms_read_the_released_rows():
    """The patterns the renderings are held to are the benchmark's: every element line of the released rows
    (AndroidWorld id 68: indexed lines; the phone tool's id 2: its block) matches them."""
    indexed = [line for state in _released_states(68) for line in state.splitlines()]
    assert indexed and all(INDEXED_LINE.match(line) for line in indexed), indexed
    phone = [line for state in _released_states(2) for line in state.split("Current Clickable UI elements:\n")[1]
             .splitlines()]
    assert phone and all(PHONE_LINE.match(line) for line in phone), phone


def test_indexed_lines_of_a_real_screen():
    """The launcher of a real `uiautomator dump`: visible elements that show text or can be acted on, numbered
    by their index in the element list (the number an AndroidWorld action names)."""
    views = _dump_views()
    lines = render_android.render_indexed(views).splitlines()
    assert all(INDEXED_LINE.match(line) for line in lines), lines
    assert lines[0] == ('[ 6] | android.widget.ScrollView | res="com.google.android.apps.nexuslauncher:id/workspace" '
                        '| bounds=[0,0][1080,1794] | scrollable')
    assert ('[19] | android.widget.TextView | text="Messages" desc="Messages" | bounds=[237,1382][439,1548] '
            '| clickable | long_clickable') in lines
    # the benchmark's example line, in the same order of fields (class, res, bounds, flags)
    mic = next(line for line in lines if "mic_icon" in line)
    assert mic == ('[24] | android.widget.ImageView | desc="Voice search" '
                   'res="com.google.android.apps.nexuslauncher:id/mic_icon" | bounds=[869,1603][1011,1768] | clickable')
    assert all(f"[{i:>2}]" in render_android.render_indexed(views) for i in (6, 19, 24))
    assert "scrim_view" not in "\n".join(lines)  # a layout-only view has no line


def test_the_phone_state_block_of_a_real_screen():
    views = _dump_views()
    text = render_android.render_phone_state(views)
    head, _, elements = text.partition("\n\nCurrent Clickable UI elements:\n")
    released_head = _released_states(2)[0].split("\n\nCurrent Clickable UI elements:\n")[0]
    # the released block's lines, in order, with this screen's values
    assert [line.split("**")[1] for line in head.splitlines()[1:]] == \
        [line.split("**")[1] for line in released_head.splitlines()[1:]] == ["App:", "Keyboard:", "Focused Element:"]
    assert head.splitlines() == ["**Current Phone State:**", "• **App:** com.google.android.apps.nexuslauncher",
                                 "• **Keyboard:** Hidden", "• **Focused Element:** ''"]
    lines = elements.splitlines()
    assert all(PHONE_LINE.match(line) for line in lines), lines
    assert lines[2] == "3. TextView: , Messages - bounds(237,1382,439,1548)"
    assert lines[-1] == ("6. ImageView: com.google.android.apps.nexuslauncher:id/mic_icon, Voice search - "
                         "bounds(869,1603,1011,1768)")


def test_droidbot_state_text_of_a_real_screen():
    """A state of a real DroidBot run: its views as the elements DroidBot's events name, numbered in order; a
    text inside a clickable view is a button (DroidBot reads clickable from the ancestors)."""
    views = json.loads(DROIDBOT_STATE.read_text())["views"]
    lines = render_android.render_droidbot(views).splitlines()
    assert all(DROIDBOT_LINE.match(line) for line in lines), lines
    assert [int(DROIDBOT_LINE.match(line).group(2)) for line in lines] == list(range(len(lines)))
    assert lines == ["<p id=0 text='广告' bound_box=0,171,1080,2148></p>",
                     "<p id=1 bound_box=28,199,88,237>广告</p>",
                     "<button id=2 bound_box=913,359,932,403>3</button>",
                     "<button id=3 bound_box=932,359,1012,403>跳过</button>",
                     "<p id=4 text='让生活充满音乐' bound_box=0,1990,1080,2148></p>"]
    # the element text of the benchmark's DroidBot action has this form
    event = re.search(r"<button id=3 bound_box=[\d,]+>Sign in</button>",
                      "touch <button id=3 bound_box=108,1133,972,1266>Sign in</button>").group(0)
    assert DROIDBOT_LINE.match(event)


def test_each_source_gets_its_style_and_the_view_hierarchy_not_the_text_is_rendered():
    assert {f: render_android.style_of(f) for f in ("droidbot", "androidworld", "androidworld_json", "androidcontrol",
                                                    "aitw", "uiautomator", "getevent", None)} == {
        "droidbot": "droidbot", "androidworld": "indexed", "androidworld_json": "indexed",
        "androidcontrol": "indexed", "aitw": "indexed", "uiautomator": "phone_state", "getevent": None, None: None}
    views = _dump_views()
    text = android_state.state_text("android", "uiautomator")
    obs = {"kind": "screen", "text": "what the reader wrote", "ui_tree": orjson.dumps(views).decode()}
    assert text(obs) == render_android.render_phone_state(views)
    # without a hierarchy (or an unreadable one) the recorded text stays; no observation stays none
    assert text({"kind": "screen", "text": "as recorded", "ui_tree": None}) == "as recorded"
    assert text({"kind": "screen", "text": "as recorded", "ui_tree": "{not json"}) == "as recorded"
    assert text({"kind": "none", "text": None}) is None
    assert android_state.state_text("android", "getevent") is None and android_state.state_text("web", "droidbot") is None
    assert android_state.mode("sft", "bench", None) == android_state.mode("sft", "agentworld", None) == "per-source"
    assert android_state.mode("sft", "trl", None) == android_state.mode("cpt", "text", None) == "ours"
    assert android_state.mode("sft", "bench", "ours") == "ours"


def test_droidbot_actions_name_the_element_of_the_state_text_they_acted_on():
    """DroidBot's event text on a real state: the element is the state text's own line (same id), and the
    reader of the benchmark's DroidBot rows reads it back as the same action on that element."""
    from ingest.android.bench_actions import bench_android_action

    views = json.loads(DROIDBOT_STATE.read_text())["views"]
    skip = orjson.dumps({"temp_id": 10, "class": "android.widget.TextView", "text": "跳过"}).decode()
    event = render_android.droidbot_event({"kind": "tap", "element": skip}, views)
    assert event == "touch <button id=3 bound_box=932,359,1012,403>跳过</button>"
    assert event.split(" ", 1)[1] in render_android.render_droidbot(views).splitlines()
    read = bench_android_action(event, None, event)
    assert read.kind == "tap" and orjson.loads(read.element) == {"tag": "button", "id": "3",
                                                                 "bound_box": "932,359,1012,403", "text": "跳过"}
    typed = render_android.droidbot_event({"kind": "type", "text": "hello", "element": skip}, views)
    assert typed == "set_text <button id=3 bound_box=932,359,1012,403>跳过</button> hello"
    assert bench_android_action(typed, None, typed).text == "hello"
    assert render_android.droidbot_event({"kind": "back"}, views) == "key BACK"
    assert render_android.droidbot_event({"kind": "open_app", "code": "am start a/.B"}, views) == "intent am start a/.B"
    # a view the state text does not list, or a point without a view: DroidBot's form cannot say it
    hidden = orjson.dumps({"temp_id": 12}).decode()  # an ImageView with neither text nor description
    assert render_android.droidbot_event({"kind": "tap", "element": hidden}, views) is None
    assert render_android.droidbot_event({"kind": "tap", "x": 0.5, "y": 0.5}, views) is None
