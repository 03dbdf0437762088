"""Edge cases of Agent S session logs, hand-made in the record layout its `agent_s` command writes (the runs
themselves are in test_agent_s_producer.py): a plan whose code is no grounded call, a session the agent
failed, a log with no plan, a grounded call whose arguments are not literals."""

from __future__ import annotations

import json

import orjson

from ingest.desktop import agent_s_log
from tests.ingest import golden

ANSI = "\x1b[1;33m[{time} \x1b[31m{level} \x1b[32m{module}/{line}-MainProcess\x1b[1;33m] \x1b[0m{message}\n"


def _log(*records: tuple[str, str]) -> str:
    return "".join(ANSI.format(time=f"2025-09-01 10:00:{i:02d},000", level="INFO", module=m, line=1, message=text)
                   for i, (m, text) in enumerate(records))


def test_a_failed_session_and_what_is_not_a_grounded_call(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "normal-20250901@100000.log").write_text(_log(
        ("code_agent", "CodeAgent initialized with budget=20"),
        ("worker", "PLAN:\n I will think first.\n(Grounded Action)\nno code here"),
        ("worker", "REFLECTION: Nothing changed."),
        ("worker", 'PLAN:\n Scroll.\n(Grounded Action)\n```python\nagent.scroll("The list", -3)\n```'),
        ("worker", 'PLAN:\n Sneaky.\n(Grounded Action)\n```python\nagent.click(__import__("os").getcwd())\n```'),
        ("worker", "PLAN:\n Impossible.\n(Grounded Action)\n```python\nagent.fail()\n```"),
    ))
    (logs / "debug-20250901@100000.log").write_text("same records")
    assert agent_s_log.units([str(p) for p in logs.iterdir()], lambda p: open(p, "rb").read(4096)) == [str(logs)]
    (episode,) = golden.read_records(agent_s_log, logs)
    assert [s.action.kind for s in episode.steps] == ["message", "scroll", "message", "done"]
    assert episode.steps[1].action.direction == "down"
    assert json.loads(episode.steps[1].action.element) == {"description": "The list"}
    assert episode.steps[1].reasoning == "Reflection: Nothing changed.\n\nScroll."
    assert "__import__" in episode.steps[2].action.text  # kept as the plan's text, never run
    assert episode.env["agent_claim"] == "fail" and episode.terminated
    assert episode.env["companion_logs"] == ["debug-20250901@100000.log"]
    assert orjson.loads(episode.steps[3].action.raw)["time"] == "2025-09-01 10:00:05,000"


def test_a_session_without_plans_is_an_empty_episode_row(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "normal-20250901@110000.log").write_text(_log(("code_agent", "CodeAgent initialized with budget=20")))
    (row,) = golden.read_records(agent_s_log, logs)
    assert row.rule == "empty_episode" and "no PLAN record" in row.reason


def test_other_logs_are_not_claimed(tmp_path):
    plain = tmp_path / "normal-20250901@120000.log"
    plain.write_text("[2025-09-01 12:00:00,000] something else\n")
    assert agent_s_log.units([str(plain)], lambda p: open(p, "rb").read(4096)) == []
