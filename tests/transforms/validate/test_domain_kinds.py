"""The per-domain action-kind table against the kinds the readers really emit: each episode is shaped as its
reader yields it (built with `ingest.arrow.TableBuilder`); a kind from another domain is still an error."""

import pytest

from ingest.arrow import TableBuilder
from ingest.record import Action, Episode, Observation, Step
from transforms.validate.check import validate


def _findings(domain, platform, actions, obs):
    builder = TableBuilder("run-t")
    builder.add_episode(Episode(key="", domain=domain, platform=platform, steps=[Step(obs, a) for a in actions]),
                        source_format="test", source_uri="test/ep", source_sha256="0" * 64, ingestor_version="1")
    t = builder.tables()
    outcome = validate(t["episodes"], t["steps"])
    return [(r["rule"], r["reason"]) for r in outcome.findings.iter_rows(named=True)]


SCREEN = Observation(kind="screen", screenshot="blobs/ab/abcd.png", width=1080, height=2400)
TERM = Observation(kind="terminal", text="root@box:/app$ ")


@pytest.mark.parametrize("domain, platform, obs, actions", [
    # AndroidWorld: double_tap -> double_click, then status -> done
    ("android", "android", SCREEN, [Action(kind="double_click", x=0.5, y=0.4), Action(kind="done", text="complete")]),
    # ATIF / AgentWorldBench terminal agents call non-shell tools beside their shell
    ("terminal", "linux", TERM, [Action(kind="command", code="ls", tool_name="bash"),
                                 Action(kind="tool_call", tool_name="read_file", arguments='{"path": "a.txt"}')]),
    # a pointer move (hover): pyautogui moveTo on the desktop, BrowserGym hover / Playwright mouseMove
    ("os", "ubuntu", SCREEN, [Action(kind="move", x=0.5, y=0.25, code="pyautogui.moveTo(960, 270)"),
                              Action(kind="click", x=0.5, y=0.25)]),
    ("web", "browser", Observation(kind="web", text="page", url="https://example.com/"),
     [Action(kind="move", element='{"bid":"a7"}'), Action(kind="click", element='{"bid":"a7"}')]),
])
def test_kinds_the_readers_emit_are_allowed(domain, platform, obs, actions):
    assert _findings(domain, platform, actions, obs) == []


def test_a_kind_from_another_domain_is_an_error():
    found = _findings("terminal", "linux", [Action(kind="home")], TERM)
    assert found == [("action.kind_not_allowed", "action kind home is not used in the terminal domain")]
    # touch screens have no pointer to hover with
    found = _findings("android", "android", [Action(kind="move", x=0.5, y=0.5)], SCREEN)
    assert found == [("action.kind_not_allowed", "action kind move is not used in the android domain")]
