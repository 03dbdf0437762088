"""browser-use `AgentHistoryList` files: a real MIT-licensed history (golden), a real unlicensed one in
../shared/samples (golden, texts hashed), and the older layout's edge cases (`current_state`, an inline
screenshot) hand-made after browser-use's own `AgentHistory.model_dump`."""

import base64
import json
import struct
import zlib
from pathlib import Path

from ingest.browser import browser_use
from ingest.record import Episode, Rejected
from ingest.swe import sweagent
from tests.conftest import SAMPLES
from tests.ingest.golden import check, read_records
from tests.parts import require_shared_sample
from tests.ingest import golden

GOLDEN = Path(__file__).parent / "golden"
SAMPLE = SAMPLES / "browser" / "browser-use" / "agent_history.json"
# richard-devbot/waigenie-qa @ eb3d77fca2f7e6dac2b22a5efc7f635681e3089f, agent_history.json (no license)
WAIGENIE = SAMPLES.parent.parent / "shared" / "samples" / "browser" / "browser-use" / "waigenie-qa" / "agent_history.json"


def test_claimed_by_browser_use_never_by_the_swe_agent_reader():
    assert browser_use.units([str(SAMPLE)], golden.head) == [str(SAMPLE)]
    assert sweagent.units([str(SAMPLE)], golden.head) == []


def test_real_history_of_a_failed_run_golden():
    records = read_records(browser_use, SAMPLE)
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [s.action.kind for s in ep.steps] == ["navigate", "wait"]
    assert ep.steps[0].action.text == "https://juice-shop.herokuapp.com/#/"
    # the navigation's timeout is what the next step saw; no `done`: truncated
    assert "Error: Navigation failed" in ep.steps[1].observation.text
    assert (ep.outcome, ep.terminated, ep.domain, ep.platform) == ("unknown", False, "web", "browser")
    check(records, GOLDEN / "browser-use-pentest-agent.json", env_keys=("steps_recorded",))


def test_real_form_filling_history_without_license_golden():
    records = read_records(browser_use, require_shared_sample(WAIGENIE))
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert [s.action.kind for s in ep.steps] == ["type"] * 4 + ["done"]
    assert (ep.outcome, ep.terminated) == ("failure", True)
    element = json.loads(ep.steps[1].action.element)
    assert element["attributes"]["id"] == "lastName" and set(element["pixel_point"]) == {"input_x", "input_y"}
    check(records, GOLDEN / "browser-use-waigenie-qa.json", texts="hash", env_keys=("steps_recorded",))


def _png() -> str:
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 6, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 25 * 6)) + chunk(b"IEND", b""))
    return base64.b64encode(data).decode()


def test_older_layout_with_current_state_inline_screenshot_and_several_actions_a_step(tmp_path):
    history = {"history": [
        {"model_output": {"current_state": {"evaluation_previous_goal": "Unknown", "memory": "",
                                            "next_goal": "Search"},
                          "action": [{"input_text": {"index": 3, "text": "shoes"}},
                                     {"send_keys": {"keys": "Control+Enter"}},
                                     {"extract_content": {"goal": "prices"}}]},
         "result": [{"is_done": False, "extracted_content": "Input shoes"}, {"is_done": False},
                    {"is_done": False, "extracted_content": "$10, $12"}],
         "state": {"url": "https://shop.test/", "title": "Shop", "tabs": [], "screenshot": _png(),
                   "interacted_element": [{"tag_name": "input", "xpath": "html/body/input"}, None, None]}},
        "not an item",
        {"model_output": {"current_state": {"next_goal": "Finish"},
                          "action": [{"scroll_down": {"amount": 300}}, {"done": {"text": "Found 2", "success": True}}]},
         "result": [{"is_done": False}, {"is_done": True, "success": True, "extracted_content": "Found 2"}],
         "state": {"url": "https://shop.test/s", "title": "Results", "tabs": [], "interacted_element": [None, None]},
         "state_message": "<user_request>\nFind shoe prices\n</user_request>"}]}
    path = tmp_path / "h.json"
    path.write_text(json.dumps(history))
    blobs = {}
    records = read_records(browser_use, path, blobs)
    [row] = [r for r in records if isinstance(r, Rejected)]
    assert row.record_id == "history[1]"
    [ep] = [r for r in records if isinstance(r, Episode)]
    kinds = [(s.action.kind, s.action.text, s.action.keys, s.action.tool_name, s.action.direction) for s in ep.steps]
    assert kinds == [("type", "shoes", None, None, None), ("hotkey", None, ["Control", "Enter"], None, None),
                     ("tool_call", None, None, "extract_content", None), ("scroll", "300", None, None, "down"),
                     ("done", "Found 2", None, None, None)]
    first = ep.steps[0]
    assert first.reasoning == "Evaluation: Unknown\nNext goal: Search"
    assert first.observation.screenshot in blobs and (first.observation.width, first.observation.height) == (8, 6)
    assert json.loads(first.action.element)["xpath"] == "html/body/input"
    # the next action's page is the same, with what the previous action returned
    assert ep.steps[1].observation.text.endswith("Input shoes")
    assert ep.steps[3].observation.text == "URL: https://shop.test/s\nTitle: Results\n$10, $12"
    assert (ep.task, ep.outcome, ep.terminated) == ("Find shoe prices", "success", True)


def test_each_history_is_planned_with_the_agent_folder_it_names_or_the_one_beside_it_alone():
    """Two histories in one folder take the agent folders their first bytes name; a history alone in its folder
    takes the agent folders there (its first step may name none: 0.13 saves no screenshot before the first
    action). Screenshots are read members, other agent files are listed as not read."""
    head = {"/in/a/h1.json": b'{"history": [{"state": {"screenshot_path": "/tmp/x/browser_use_agent_1_9/screenshots/'
                             b'step_1.png"}}]}',
            "/in/a/h2.json": b'{"history": [{"state": {"screenshot_path": "/tmp/y/browser_use_agent_2_9/screenshots/'
                             b'step_1.png"}}]}',
            "/in/b/agent_history.json": b'{"history": [{"state": {"screenshot_path": null}}]}'}
    files = sorted(["/in/a/h1.json", "/in/a/h2.json", "/in/a/browser_use_agent_1_9/screenshots/step_1.png",
                    "/in/a/browser_use_agent_2_9/screenshots/step_1.png", "/in/a/notes.txt",
                    "/in/b/agent_history.json", "/in/b/browser_use_agent_3_9/screenshots/step_2.png",
                    "/in/b/browser_use_agent_3_9/browseruse_agent_data/todo.md"])
    found = ["/in/a/h1.json", "/in/a/h2.json", "/in/b/agent_history.json"]
    members = browser_use.members(found, files, head.__getitem__)
    assert members["/in/a/h1.json"] == ["/in/a/browser_use_agent_1_9/screenshots/step_1.png"]
    assert members["/in/a/h2.json"] == ["/in/a/browser_use_agent_2_9/screenshots/step_1.png"]
    (todo, why), shot = members["/in/b/agent_history.json"]
    assert shot == "/in/b/browser_use_agent_3_9/screenshots/step_2.png"
    assert todo.endswith("/todo.md") and "todo list" in why
