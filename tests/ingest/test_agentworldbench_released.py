"""AgentWorldBench in its released layout: the line of turn k holds turns 1..k (a growing history) and its last
prompt carries the evaluation instruction ("Please analyze the input above ...") that the later lines' copies
of the same turn do not. Rows in the structure of the released android file (`samples/agentworld/released`,
see its PROVENANCE.md): every trajectory reads back as one episode with as many steps as its longest line has
turns, whatever the order of its lines."""

import json
import random

import pytest

from ingest import agentworldbench
from ingest.record import Episode, Rejected
from tests.conftest import SAMPLES
from tests.ingest.golden import read_records

RELEASED = SAMPLES / "agentworld" / "released"
ANDROID = RELEASED / "android_test.jsonl"
INSTRUCTION = "Please analyze the input above and predict the realistic output/response"


def _lines():
    return [json.loads(x) for x in ANDROID.read_text().splitlines()]


def _read(tmp_path, lines):
    path = tmp_path / "android_test.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    records = read_records(agentworldbench, path)
    return {r.key: r for r in records if isinstance(r, Episode)}, [r for r in records if isinstance(r, Rejected)]


def test_the_sample_is_in_the_released_layout():
    """What the tests below rely on: line k holds k turns, only its last prompt carries the instruction, and that
    prompt is the next line's copy of the turn plus the instruction."""
    lines = _lines()
    assert [(x["id"], x["turn_idx"], len(x["prompt"]), len(x["response"])) for x in lines] == [
        (68, 1, 1, 1), (68, 2, 2, 2), (68, 3, 3, 3), (2, 1, 1, 1), (2, 2, 2, 2)]
    for line, later in zip(lines, lines[1:]):
        assert [INSTRUCTION in p for p in line["prompt"]] == [False] * (len(line["prompt"]) - 1) + [True]
        if later["id"] == line["id"]:
            k = line["turn_idx"]
            assert later["prompt"][k - 1] != line["prompt"][k - 1]
            assert line["prompt"][k - 1].startswith(later["prompt"][k - 1])


@pytest.mark.parametrize("seed", [None, 1, 2], ids=["file-order", "shuffled-1", "shuffled-2"])
def test_each_trajectory_is_one_episode_with_its_turns(tmp_path, seed):
    lines = _lines()
    if seed is not None:
        random.Random(seed).shuffle(lines)
    episodes, rejected = _read(tmp_path, lines)
    assert rejected == []
    assert {key: len(ep.steps) for key, ep in episodes.items()} == {"android:68": 3, "android:2": 2}
    assert episodes["android:68"].env["evaluated_turns"] == [1, 2, 3]
    assert episodes["android:2"].env["evaluated_turns"] == [1, 2]
    assert episodes["android:68"].env["total_turns"] == 6


def test_the_instruction_is_cut_from_the_actions_and_kept_once(tmp_path):
    lines = _lines()
    episodes, _ = _read(tmp_path, lines)
    ep = episodes["android:68"]
    last = lines[2]["prompt"][2]
    assert [INSTRUCTION in s.action.raw for s in ep.steps] == [False, False, False]
    assert ep.steps[2].action.raw + ep.env["instruction_suffix"] == last  # nothing of the line is lost
    assert ep.env["instruction_suffix"].lstrip().startswith(INSTRUCTION)
    assert ep.env["instruction_suffix"].rstrip().endswith("<predicted_observation></predicted_observation> tags.")
    assert ep.task.startswith("Do I have any events October 28 in Simple Calendar Pro?")
    assert [json.loads(s.action.arguments) for s in ep.steps] == [
        {"action_type": "click", "index": 1}, {"action_type": "click", "index": 1},
        {"action_type": "input_text", "text": "October 28", "index": 1}]
    # observation t+1 is response t without its marker; the first is turn 1's state
    assert ep.steps[0].observation.text.startswith('[ 0] | android.widget.ScrollView | res="com.google.android')
    assert ep.steps[1].observation.text == lines[2]["response"][0].removeprefix("**Environment Observation:**\n")
    assert ep.final_observation.text == lines[2]["response"][2].removeprefix("**Environment Observation:**\n")


def test_phone_state_trajectory_keeps_its_invoke_actions(tmp_path):
    episodes, _ = _read(tmp_path, _lines())
    ep = episodes["android:2"]
    assert ep.steps[0].observation.text.startswith("**Current Phone State:**\n• **App:** Pixel Launcher")
    assert [s.action.raw.split("**Action:**\n")[1] for s in ep.steps] == [
        '```xml\n<invoke name="phone">\n<parameter name="action">click</parameter>\n'
        '<parameter name="index">1</parameter>\n</invoke>\n```'] * 2
    assert ep.final_observation.text.startswith("**Current Phone State:**\n• **App:** Files")


def test_a_turn_that_really_differs_is_still_a_conflict(tmp_path):
    """The instruction is left out of the comparison, nothing else: a later line whose copy of turn 2 clicks
    another element disagrees with the line of turn 2."""
    lines = _lines()[:3]
    lines[2]["prompt"][1] = lines[2]["prompt"][1].replace('"index": 1', '"index": 2')
    episodes, rejected = _read(tmp_path, lines)
    assert len(episodes["android:68"].steps) == 2
    assert [(r.rule, r.line) for r in rejected] == [("conflicting_duplicate", 3)]


def test_a_copy_that_differs_only_in_layout_is_the_same_turn(tmp_path):
    """Turns compare by parsed content: the action's JSON re-indented, the state's lines re-wrapped."""
    lines = _lines()[:3]
    lines[2]["prompt"][0] = lines[2]["prompt"][0].replace('{"action_type": "click", "index": 1}',
                                                          '{\n  "index": 1,\n  "action_type": "click"\n}')
    episodes, rejected = _read(tmp_path, lines)
    assert rejected == [] and len(episodes["android:68"].steps) == 3


def test_ingest_all_counts_per_trajectory(run, query):
    result = run("ingest-all", [RELEASED])
    assert (result.episodes, result.steps, result.quarantined) == (2, 5, 0)
    rows = query("SELECT json_extract(env, '$.benchmark_id')::INT AS id, num_steps FROM episodes ORDER BY id")
    assert [(r["id"], r["num_steps"]) for r in rows] == [(2, 2), (68, 3)]


@pytest.mark.parametrize("body, kind, fields", [
    ('{"action_type": "click", "index": 3}', "tap", {"element": {"index": 3}}),
    ('{"action_type": "input_text", "text": "October 28", "index": 1}', "type", {"text": "October 28"}),
    ('{"action_type": "scroll", "direction": "down"}', "scroll", {"direction": "down"}),
    ('{"action_type": "navigate_back"}', "back", {}),
    ('<invoke name="phone">\n<parameter name="action">click</parameter>\n<parameter name="index">46</parameter>\n'
     '</invoke>', "tap", {"element": {"index": 46}}),
    ('<invoke name="phone">\n<parameter name="action">type</parameter>\n<parameter name="text">hello</parameter>\n'
     '</invoke>', "type", {"text": "hello"}),
    ("touch <button id=3 bound_box=108,1133,972,1266>PRIJAVI SE</button>", "tap",
     {"element": {"tag": "button", "id": "3", "bound_box": "108,1133,972,1266", "text": "PRIJAVI SE"}}),
    ("set_text <input bound_box=108,864,972,1039>Password</input> dummy_user_input", "type",
     {"text": "dummy_user_input"}),
    ("scroll up <scrollbar bound_box=0,72,1080,1776></scrollbar>", "scroll", {"direction": "up"}),
    ("intent am start com.alko.app/com.alko.app.StartActivity", "command", {}),
], ids=["json-click", "json-input", "json-scroll", "json-back", "phone-click", "phone-type", "droidbot-touch",
        "droidbot-set-text", "droidbot-scroll", "droidbot-intent"])
def test_android_actions_in_each_source_form(tmp_path, body, kind, fields):
    """The three action forms of the benchmark's android sources become android action kinds (validate
    quarantines a tool call or code in the android domain), the target element kept."""
    prompt = f"### Turn 1\n**Current State:**\n[ 0] | android.widget.Button | bounds=[0,0][10,10]\n\n" \
             f"**Action:**\n```text\n{body}\n```"
    line = {"task": "android", "id": 5, "turn_idx": 1, "prompt": [prompt], "response": ["**Environment Observation:**\nx"]}
    episodes, rejected = _read(tmp_path, [line])
    action = episodes["android:5"].steps[0].action
    assert rejected == [] and action.kind == kind and action.raw == prompt
    for name, want in fields.items():
        got = getattr(action, name)
        assert (json.loads(got) if name == "element" else got) == want


def test_a_released_file_is_claimed_when_its_first_line_is_long(tmp_path):
    """The first line of a real file can hold a screen of many KiB before `turn_idx`: the key order it opens
    with is evidence enough; a JSONL of other objects is not claimed."""
    line = _lines()[0]
    line["prompt"][0] = line["prompt"][0].replace("**Action:**", "x" * 20000 + "\n\n**Action:**")
    big = tmp_path / "android_test.jsonl"
    big.write_text(json.dumps(line) + "\n")
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"task": "t", "id": 1, "messages": []}) + "\n")
    head = lambda path: open(path, "rb").read(4096)  # noqa: E731 - what the planner hands a format
    assert b'"turn_idx"' not in head(big)
    assert agentworldbench.units([str(big), str(other)], head) == [str(big)]
