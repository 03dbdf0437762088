"""WebVoyager result folders from two repositories, read against what a person counts in them (their
PROVENANCE.md): MinorJerry/WebVoyager's own GPT-4V example and a Gemini run of a modified loop from
gndd1221/webvoyager_test (both beside this test with their license, Apache-2.0). The loop is the oracle for the action
grammar and for which iterations have a screenshot: it takes one for each observation it sends and none for
its own feedback turns."""

import json
import shutil
from pathlib import Path

import orjson

from ingest.browser import webvoyager
from ingest.record import Episode
from tests import goldens
from tests.ingest import golden
from pipelines.infra import definition
from pipelines.infra.plan import find_units

WOLFRAM = Path(__file__).parent / "data" / "webvoyager-gpt4v" / "taskWolfram Alpha--6"
GEMINI = Path(__file__).parent / "data" / "webvoyager-gemini" / "taskamazon--04"
GOLDEN = Path(__file__).with_name("golden") / "webvoyager.json"
ENV_KEYS = ("task_id", "start_url", "screenshots", "observations_without_text", "observations_without_screenshot")


def _episode(folder: Path, blobs: dict | None = None) -> Episode:
    (ep,) = golden.read_records(webvoyager, folder, blobs)
    return ep


def test_the_gpt4v_example_as_a_person_counts_it():
    blobs = {}
    ep = _episode(WOLFRAM, blobs)
    assert [s.action.kind for s in ep.steps] == ["type", "scroll", "done"]
    assert ep.task == "Simplify x^5-20x^4+163x^3-676x^2+1424x-1209 so that it has fewer items."
    assert ep.env["start_url"] == "https://www.wolframalpha.com/" and ep.env["task_id"] == "Wolfram Alpha--6"
    typed = ep.steps[0].action
    assert typed.text == "x^5-20x^4+163x^3-676x^2+1424x-1209"
    assert json.loads(typed.element) == {"label": 8, "text": '<input> ""'}
    assert ep.steps[1].action.direction == "down" and ep.steps[1].action.element is None  # WINDOW
    assert ep.steps[2].action.text == "(x - 4)^5 + 3(x - 4)^3 + 7"
    assert (ep.outcome, ep.reward, ep.terminated, ep.agent) == ("unknown", None, True, "WebVoyager")
    # one labelled screenshot per observation, each with the element list the model was given
    assert len(blobs) == 3 and all(s.observation.screenshot in blobs for s in ep.steps)
    assert {(s.observation.width, s.observation.height) for s in ep.steps} == {(1024, 768)}
    assert all(s.observation.kind == "web" and s.observation.text.startswith("[0]: ") for s in ep.steps)
    assert ep.steps[0].action.x is None  # the loop clicks elements: the file records no point
    assert "Numerical Label" in ep.env["system_prompt"]


def test_the_gemini_run_with_feedback_turns_and_clipped_observations():
    blobs = {}
    ep = _episode(GEMINI, blobs)
    kinds = [s.action.kind for s in ep.steps]
    assert kinds == ["type", "type", "type", "scroll", "scroll", "click", "scroll", "back", "scroll", "message",
                     "navigate", "done"]
    shots = [i for i, s in enumerate(ep.steps) if s.observation.screenshot]
    assert shots == [0, 1, 2, 3, 4, 5, 7, 9, 11] and len(blobs) == 9  # screenshot<i+1>.png
    feedback = [i for i, s in enumerate(ep.steps) if s.observation.kind == "text"]
    assert feedback == [6, 8, 10]
    assert ep.steps[6].observation.text.startswith("The action you have chosen cannot be executed")
    assert ep.steps[10].observation.text.startswith("Format ERROR")
    assert ep.steps[9].action.text.startswith("I apologize")  # the reply without Thought: the loop refused
    assert ep.env["observations_without_text"] == [0, 1, 2, 3, 4, 5]
    assert all(ep.steps[i].observation.text is None for i in range(6))
    assert ep.steps[11].observation.text.startswith('[0]: text="關於 Google"')  # after the Google action
    assert ep.steps[10].action.text == "https://www.google.com/"
    assert ep.steps[11].action.text.startswith("No game consoles with explicit promotions")
    assert {(s.observation.width, s.observation.height) for s in ep.steps if s.observation.screenshot} == {(1008, 621)}
    assert (ep.outcome, ep.terminated) == ("unknown", True)
    assert [w["rule"] for w in ep.env["ingest_warnings"]] == ["unparsed_reply"]


def test_the_real_folders_match_the_golden():
    got = {name: golden.fingerprint(golden.read_records(webvoyager, folder), env_keys=ENV_KEYS)
           for name, folder in (("MinorJerry/WebVoyager taskWolfram Alpha--6", WOLFRAM),
                                ("gndd1221/webvoyager_test taskamazon--04", GEMINI))}
    goldens.check_json(GOLDEN, json.loads(json.dumps(got, default=str)), indent=1)


def test_detection_needs_the_chat_and_its_system_prompt(tmp_path):
    head = lambda p: Path(p).read_bytes()[:4096]  # noqa: E731
    other = tmp_path / "taskX" / webvoyager.MESSAGES
    other.parent.mkdir()
    other.write_bytes(orjson.dumps([{"role": "system", "content": "You are helpful."},
                                    {"role": "user", "content": "hi"}], option=orjson.OPT_INDENT_2))
    compact = tmp_path / "taskY" / webvoyager.MESSAGES  # the same chat written without indentation
    compact.parent.mkdir()
    compact.write_bytes(orjson.dumps(json.loads((WOLFRAM / webvoyager.MESSAGES).read_bytes())))
    real = str(WOLFRAM / webvoyager.MESSAGES)
    assert webvoyager.units([str(other), real, str(compact)], head) == sorted([str(WOLFRAM), str(compact.parent)])


def test_a_missing_screenshot_of_an_observation_is_said_and_the_step_kept(tmp_path):
    folder = tmp_path / "taskWolfram Alpha--6"
    shutil.copytree(WOLFRAM, folder)
    (folder / "screenshot2.png").unlink()
    (folder / "screenshot3_no_box.png").write_bytes((folder / "screenshot3.png").read_bytes())
    ep = _episode(folder)
    assert len(ep.steps) == 3 and ep.steps[1].observation.screenshot is None
    assert ep.steps[1].observation.text.startswith("[0]: ")
    assert ep.env["observations_without_screenshot"] == [1] and ep.env["screenshots"] == 2
    assert ep.env["screenshots_without_labels"] == 1


def test_the_files_of_a_task_folder_the_reader_leaves_are_listed_with_why(tmp_path):
    """A real result folder with what WebVoyager also writes there (its log, an unlabelled screenshot): the chat
    and the labelled screenshots are read as the unit; the others are listed in `ignored_inputs` as files of the
    run the reader does not read, and the unit's size counts only what it reads."""
    task = tmp_path / GEMINI.name
    shutil.copytree(GEMINI, task)
    (task / "agent.log").write_text("INFO - Iter: 1\n")
    shutil.copy(task / "screenshot1.png", task / "screenshot1_no_box.png")
    units, ignored = find_units([str(tmp_path)], definition.load("ingest-all").formats)
    assert [(u.format, u.uri) for u in units] == [("webvoyager", f"{tmp_path.name}/{GEMINI.name}")]
    run = f"part of the webvoyager run {GEMINI.name}, which does not read it: "
    assert {i.path.rsplit("/", 1)[1]: i.reason for i in ignored} == {
        "agent.log": run + "WebVoyager's reader reads interact_messages.json and the labelled screenshots",
        "screenshot1_no_box.png": run + "the screenshot without Set-of-Mark labels (counted in env)"}
    read = [p for p in GEMINI.iterdir()]
    assert units[0].size == sum(p.stat().st_size for p in read)
