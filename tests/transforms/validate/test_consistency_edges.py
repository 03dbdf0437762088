"""Cross-step rules at their edges, each check called on its own: which domains and step pairs a rule reads,
the reasons' exact text, rows out of step order, several findings of one rule, and Android taps that only the
exact check (parsing the hierarchy) can judge."""

import orjson
import polars as pl
import pytest

from ingest.arrow import TableBuilder
from ingest.record import Action, Episode, Observation, Step
from transforms.validate.consistency import (check_android_taps, check_terminal_cwd, check_tool_results,
                                             check_web_navigation)


def _steps(domain: str, steps: list[Step], final: Observation | None = None, platform: str = "linux") -> pl.DataFrame:
    builder = TableBuilder("run-t")
    builder.add_episode(Episode(key="", domain=domain, platform=platform, steps=steps, final_observation=final),
                        source_format="test", source_uri="test/ep", source_sha256="0" * 64, ingestor_version="1")
    return pl.from_arrow(builder.tables()["steps"])


def _found(check, steps: pl.DataFrame) -> list[tuple[str, str, str]]:
    return [(r["rule"], r["step_id"].split(":")[1], r["reason"]) for r in check(steps).iter_rows(named=True)]


def _term(cwd: str, output: str = "") -> Observation:
    return Observation(kind="terminal", text=f"{output}root@box:{cwd}$ ")


CWD = "terminal.cwd_discontinuity"


def test_each_cwd_finding_quotes_what_was_typed_cut_at_80_characters():
    long = "python -c 'print(" + "1 + " * 30 + "1)'"
    steps = [Step(_term("/a"), Action(kind="keystrokes", text="python run.py", keys=["C-c", "Enter"])),
             Step(_term("/b"), Action(kind="wait")),
             Step(_term("/c"), Action(kind="command", code=long)),
             Step(_term("/d"), Action(kind="command", code="cd /e")),
             Step(_term("/e"), Action(kind="done"))]
    # three findings of one rule, each on its own step (not one column of three)
    assert _found(check_terminal_cwd, _steps("terminal", steps)) == [
        (CWD, "0", "prompt directory /a became /b after 'python run.py C-c Enter'"),
        (CWD, "1", "prompt directory /b became /c after ''"),
        (CWD, "2", f"prompt directory /c became /d after {long[:80]!r}")]


def test_the_cwd_rule_reads_the_terminal_swe_and_os_domains_in_step_order():
    steps = [Step(_term("/a"), Action(kind="command", code="ls")), Step(_term("/b"), Action(kind="done"))]
    for domain in ("terminal", "swe", "os"):
        assert _found(check_terminal_cwd, _steps(domain, steps)) == [
            (CWD, "0", "prompt directory /a became /b after 'ls'")], domain
    assert _found(check_terminal_cwd, _steps("web", steps, platform="browser")) == []
    # rows out of step order: the step after step 0 is still step 1
    steps = [Step(_term("/a"), Action(kind="command", code="cd /b")),
             Step(_term("/b"), Action(kind="command", code="ls")), Step(_term("/b"), Action(kind="done"))]
    table = _steps("terminal", steps).to_arrow()
    backwards = pl.from_arrow(table.take(list(range(table.num_rows))[::-1]))
    assert _found(check_terminal_cwd, backwards) == _found(check_terminal_cwd, pl.from_arrow(table)) == []


def _page(url: str) -> Observation:
    return Observation(kind="web", url=url, text=f"page {url}")


def test_the_navigation_rule_reads_the_web_search_and_swe_domains_and_navigations_only():
    steps = [Step(_page("about:blank"), Action(kind="navigate", text="https://example.org/")),
             Step(_page("https://evil.test/"), Action(kind="done"))]
    reason = "navigated to https://example.org/ but the page is https://evil.test/"
    for domain in ("web", "search", "swe"):
        assert _found(check_web_navigation, _steps(domain, steps, platform="browser")) == [
            ("web.url_not_following_navigation", "0", reason)], domain
    assert _found(check_web_navigation, _steps("mcp", steps)) == []
    # a URL typed into a form is not a navigation, whatever page follows
    typed = [Step(_page("https://example.org/form"), Action(kind="type", text="https://other.test/")),
             Step(_page("https://example.org/sent"), Action(kind="done"))]
    assert _found(check_web_navigation, _steps("web", typed, platform="browser")) == []


def _json(data: dict) -> str:
    return orjson.dumps(data).decode()


def test_the_tool_id_rule_pairs_a_call_with_a_tool_result_only():
    # a call answered by text that is not a tool result, and a message followed by a result: no pair to judge
    steps = [Step(Observation(kind="text", text="task"), Action(kind="tool_call", tool_name="f", raw=_json({"id": 1}))),
             Step(Observation(kind="text", text=_json({"id": 2})), Action(kind="message", text="hi",
                                                                         raw=_json({"id": 3}))),
             Step(Observation(kind="tool_result", text=_json({"id": 4})), Action(kind="done"))]
    assert _found(check_tool_results, _steps("mcp", steps)) == []


# android ------------------------------------------------------------------------------------------------
def _screen(tree) -> Observation:
    return Observation(kind="screen", text="screen", ui_tree=orjson.dumps(tree).decode(), width=100, height=200)


def _tap(element: dict | str | None = None, x: float | None = None, y: float | None = None) -> Action:
    return Action(kind="tap", x=x, y=y, element=element if isinstance(element, str) or element is None
                  else _json(element))


TAP = "android.tap_target_missing"
NODES = [{"class": "Frame", "view_str": "v-root", "bounds": [[0, 0], [100, 200]]},
         {"class": "Button", "view_str": "com.app:id/ok", "bounds": [[10, 10], [50, 30]]}]


def test_a_view_id_is_matched_as_text_not_as_a_pattern():
    # 'comXapp...' is what the id would match were it read as a regular expression ('.' is any character)
    tree = [NODES[0], {"class": "Button", "view_str": "comXapp:id/ok", "bounds": [[10, 10], [50, 30]]}]
    steps = [Step(_screen(tree), _tap({"view_str": "com.app:id/ok"}, 0.2, 0.1)),
             Step(_screen(NODES), _tap({"view_str": "com.app:id/ok"}, 0.2, 0.1))]
    assert _found(check_android_taps, _steps("android", steps, platform="android")) == [
        (TAP, "0", "target view com.app:id/ok is not in the view hierarchy")]


def test_a_view_id_that_is_not_a_string_gets_the_exact_check_whatever_its_point():
    # the point (0.5, 0.5) is inside the first node: that proves nothing about a view id
    steps = [Step(_screen(NODES), _tap({"view_str": 42}, 0.5, 0.5))]
    assert _found(check_android_taps, _steps("android", steps, platform="android")) == [
        (TAP, "0", "target view 42 is not in the view hierarchy")]


def test_a_point_on_a_hierarchy_with_bounds_as_objects_gets_the_exact_check():
    tree = {"node": {"bounds": {"left": 0, "top": 0, "right": 50, "bottom": 50},
                     "children": [{"bounds": {"left": 10, "top": 10, "right": 20, "bottom": 20}}]}}
    steps = [Step(_screen(tree), _tap(None, 0.9, 0.9)), Step(_screen(tree), _tap(None, 0.15, 0.075))]
    assert _found(check_android_taps, _steps("android", steps, platform="android")) == [
        (TAP, "0", "point (90, 180) is inside no node")]


@pytest.mark.parametrize("bad", ["element", "tree"])
def test_a_tap_with_malformed_json_is_skipped_and_the_next_still_judged(bad):
    first = (Step(_screen(NODES), _tap('{"view_str": "v', 0.5, 0.5)) if bad == "element" else
             Step(Observation(kind="screen", text="screen", ui_tree='[{"view_str": "v-root"', width=100, height=200),
                  _tap({"view_str": "v-gone"}, 0.5, 0.5)))
    steps = [first, Step(_screen(NODES), _tap({"view_str": "v-gone"}, 0.5, 0.5))]
    assert _found(check_android_taps, _steps("android", steps, platform="android")) == [
        (TAP, "1", "target view v-gone is not in the view hierarchy")]


def test_a_point_outside_the_first_node_is_judged_against_every_node():
    tree = [{"bounds": [[0, 0], [100, 50]]}, {"bounds": [[0, 60], [100, 100]]}]
    steps = [Step(_screen(tree), _tap(None, 0.5, 0.75)), Step(_screen(tree), _tap(None, 0.5, 0.4)),
             Step(_screen(tree), _tap(None, 0.5, 0.1))]
    assert _found(check_android_taps, _steps("android", steps, platform="android")) == [
        (TAP, "0", "point (50, 150) is inside no node")]


def test_only_android_taps_are_judged():
    gone = {"view_str": "v-gone"}
    android = [Step(_screen(NODES), Action(kind="type", text="hello", element=_json(gone))),
               Step(_screen(NODES), _tap(gone, 0.5, 0.5))]
    assert _found(check_android_taps, _steps("android", android, platform="android")) == [
        (TAP, "1", "target view v-gone is not in the view hierarchy")]
    web = [Step(_screen(NODES), Action(kind="click", x=0.5, y=0.5, element=_json(gone)))]
    assert _found(check_android_taps, _steps("web", web, platform="browser")) == []
