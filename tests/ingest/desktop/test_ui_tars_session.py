"""UI-TARS session logs of a local loop (`ingest.desktop.ui_tars_session`).

Real sessions (no license, so read where they lie, never copied here): martasumyk/ai_practice @
353251dc80981dfa5c28429724caa200a04b97e2, `02-Agents/01-Computer-Use-Agents/ui-tars/logs/task1/`, `task2/`,
`task3/` (their `recordingN.mov` left out), expected under ../shared/samples/macos/ui-tars-session-martasumyk/ as
`task1/`, `task2/`, `task3/`. UI-TARS-1.5-7B on a Mac, 1440x900 screenshots taken before each action. Counted by
hand in `session_log.json` and the PNG headers:
- task1, "Go to apple.com website in Safari": 7 steps: click (154, 860) (Safari in the Dock), wait, click
  (571, 57) (the address bar), type "apple.com", hotkey `enter`, wait, finished("I have successfully accessed
  the Apple website."); 7 screenshots; times 09:48:28 to 09:49:02 local.
- task2, "Go to Calendar app and change the view to Year.": click (94, 128), wait, click (953, 56), finished.
- task3, "Make Safari my default browsser.": 20 clicks, 19 of them on the menu bar (y 14), never finished.
The loop is the oracle for the points: it moves pyautogui to the parsed numbers as they are."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from ingest.desktop import ui_tars_session
from tests.ingest import golden
from tests.ingest.ubuntu.test_osworld import png
from tests.parts import SHARED, require_shared_sample

ROOT = SHARED / "samples" / "macos" / "ui-tars-session-martasumyk"
ENV_KEYS = ("screenshots", "local_time_first", "local_time_last", "agent_claim", "reply_points_differ")



def _pixels(step) -> tuple[int, int]:
    return round(step.action.x * step.observation.width), round(step.action.y * step.observation.height)


def test_the_safari_session_as_a_person_counts_it():
    ep, rows = golden.read_one(ui_tars_session, require_shared_sample(ROOT / "task1"))
    assert rows == [] and ep.task == "Go to apple.com website in Safari"
    assert [s.action.kind for s in ep.steps] == ["click", "wait", "click", "type", "key", "wait", "done"]
    assert [_pixels(ep.steps[i]) for i in (0, 2)] == [(154, 860), (571, 57)]
    assert {(s.observation.width, s.observation.height) for s in ep.steps} == {(1440, 900)}
    assert (ep.steps[3].action.text, ep.steps[4].action.keys) == ("apple.com", ["enter"])
    assert (ep.terminated, ep.outcome, ep.env["agent_claim"]) == (
        True, "unknown", "I have successfully accessed the Apple website.")
    assert (ep.env["local_time_first"], ep.env["local_time_last"]) == ("2025-11-05T09:48:28.078192",
                                                                      "2025-11-05T09:49:02.955912")
    golden.check([ep, *rows], Path(__file__).with_name("golden") / "ui-tars-session-safari.json", texts="hash",
                 env_keys=ENV_KEYS)


def test_the_calendar_and_default_browser_sessions():
    ep, rows = golden.read_one(ui_tars_session, require_shared_sample(ROOT / "task2"))
    assert rows == [] and [s.action.kind for s in ep.steps] == ["click", "wait", "click", "done"]
    assert [_pixels(ep.steps[i]) for i in (0, 2)] == [(94, 128), (953, 56)] and ep.terminated
    ep, rows = golden.read_one(ui_tars_session, require_shared_sample(ROOT / "task3"))
    assert rows == [] and [s.action.kind for s in ep.steps] == ["click"] * 20 and not ep.terminated
    assert sum(1 for s in ep.steps if _pixels(s)[1] == 14) == 19 and ep.env["screenshots"] == 20


def _session(folder: Path, steps: list[dict], size=(1440, 900)) -> Path:
    folder.mkdir(parents=True)
    (folder / "session_log.json").write_bytes(orjson.dumps({"task": "t", "steps": steps}))
    for s in steps:
        (folder / f"step_{s['step']:03d}.png").write_bytes(png(*size, str(s["step"]).encode()))
    return folder


def _entry(n: int, reply: str, parsed: dict, **extra) -> dict:
    return {"step": n, "screenshot_path": f"sessions/x/step_{n:03d}.png", "model_reply": reply, "thought": "t",
            "parsed_action": parsed, "status_after_action": None, **extra}


def test_every_action_the_loop_parses_and_what_it_could_not(tmp_path):
    run = _session(tmp_path / "s", [
        _entry(0, "Action: left_double(point='<point>720 450</point>')", {"type": "left_double", "x": 720, "y": 450}),
        _entry(1, "Action: drag(start_point='<point>0 0</point>', end_point='<point>1440 900</point>')",
               {"type": "drag", "x1": 0, "y1": 0, "x2": 1440, "y2": 900}),
        _entry(2, "Action: scroll(point='<point>10 20</point>', direction='down')",
               {"type": "scroll", "x": 10, "y": 20, "direction": "down"}),
        _entry(3, "Action: hotkey(key='cmd space')", {"type": "hotkey", "keys": ["cmd", "space"]}, mood="odd"),
        _entry(4, "Action: open_app(name='Notes')", {"type": "raw", "raw": "open_app(name='Notes')"}),
        _entry(5, "Action: click(start_box='(1600,100)')", {"type": "click", "x": 1600, "y": 100}),
        _entry(6, "Action: click(start_box='(300,300)')", {"type": "click", "x": 30, "y": 30}),
        _entry(7, "Action: hotkey(key='enter')", {"type": "hotkey", "keys": ["enter"]}),
    ])
    ep, rows = golden.read_one(ui_tars_session, run)
    a = [s.action for s in ep.steps]
    assert rows == [] and [x.kind for x in a] == ["double_click", "drag", "scroll", "hotkey", "message", "click",
                                                  "click", "key"]
    assert (a[0].x, a[0].y, a[1].x2, a[1].y2, a[2].direction, a[3].keys) == (0.5, 0.5, 1.0, 1.0, "down",
                                                                              ["cmd", "space"])
    assert json.loads(a[4].raw)["executed"] is False and a[4].text.endswith("open_app(name='Notes')")
    assert json.loads(a[5].raw)["point"]["outside_screen"] is True and a[5].x == 1.0  # past the 1440-wide screen
    assert json.loads(a[3].raw)["fields"] == {"mood": "odd"}
    assert ep.env["reply_points_differ"] == [6] and not ep.terminated
    assert sorted(w["rule"] for w in ep.env["ingest_warnings"]) == ["ui_tars_session.reply_differs",
                                                                    "ui_tars_session.unknown_field"]


def test_the_folder_is_claimed_on_its_log_and_its_other_files_are_named(tmp_path):
    run = _session(tmp_path / "task1", [_entry(0, "Action: wait()", {"type": "wait"}),
                                        _entry(1, "Action: wait()", {"type": "wait"})])
    (run / "reasoning.json").write_text(json.dumps([{"step": 0, "timestamp": "2025-11-05T09:48:28"},
                                                    {"step": 1, "timestamp": "2025-11-05T09:48:35"}]))
    (run / "reasoning.txt").write_text("Step 0")
    (run / "recording1.mov").write_bytes(b"\0")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "session_log.json").write_text('{"steps": [], "task": "t"}')
    (tmp_path / "another").mkdir()  # another tool's log of the same opening, without the loop's parsed actions
    (tmp_path / "another" / "session_log.json").write_text('{"task": "t", "steps": [{"step": 0, "url": "x"}]}')
    files = sorted(str(p) for p in tmp_path.rglob("*") if p.is_file())
    head = lambda p: open(p, "rb").read(4096)  # noqa: E731
    assert ui_tars_session.units(files, head) == [str(run)]
    unread = ui_tars_session.members([str(run)], files, head)[str(run)]
    assert sorted(Path(p).name for p, _ in unread) == ["reasoning.txt", "recording1.mov"]
    ep, _ = golden.read_one(ui_tars_session, run)
    assert ep.env["local_time_first"] == "2025-11-05T09:48:28" and ep.steps[0].action.duration_s == 5.0
    assert ep.env["local_time_last"] == "2025-11-05T09:48:35"
