"""The reward's rule part: the real next state in the domain's answer form scores the maximum in every domain,
an empty or malformed answer the minimum, and the anchors give partial credit where the state says what is
checkable."""

import pytest

from transforms.agentworld import DOMAINS, OBSERVATION_MARKER, observation_turn
from transforms.reward.rules import RuleOptions, rule_score

STATES = {
    "android": 'Activity: com.android.settings/.Settings\n[1] TextView "Wi-Fi" id=title {clickable} @[0,0][10,10]\n'
               '[2] Switch "On" {checkable,checked} @[0,10][10,20]',
    "os": 'Window: Files\n[0] Pane "Files" @[0,0][800,600]\n  [1] Button "Open" @[10,10][50,30]',
    "web": 'URL: https://example.com/cart\nTitle: Cart\n[3] button "Checkout"',
    "terminal": "root@ad092d3df69c:/app# ls\nmain.py  README.md\nroot@ad092d3df69c:/app# ",
    "swe": '{"stdout": "ok", "exit_code": 0}',
    "mcp": '{"content": [{"type": "text", "text": "3 rows"}], "isError": false}',
    "search": "[1] https://a.example / A page / about A / 2024-01-02",
}


def test_every_domain_has_a_state():
    assert set(STATES) == set(DOMAINS)


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_real_state_in_answer_form_scores_the_maximum(domain):
    result = rule_score(domain, observation_turn(STATES[domain], domain), STATES[domain])
    assert (result.score, result.form_ok) == (1.0, True)
    # reasoning before the answer does not matter; the ground truth may carry the marker
    assert rule_score(domain, "<think>let me see</think>" + observation_turn(STATES[domain], domain),
                      f"{OBSERVATION_MARKER}\n{STATES[domain]}").score == 1.0


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("output", ["", None, "   ", "<think>never answers", "no form at all",
                                    "<predicted_observation>unclosed", "<think>a</think>"])
def test_empty_or_malformed_scores_the_minimum(domain, output):
    result = rule_score(domain, output, STATES[domain])
    assert result.score == 0.0 and not result.form_ok and result.failure


@pytest.mark.parametrize("domain", ["android", "web", "os"])
def test_gui_domains_want_exactly_one_closed_block(domain):
    block = observation_turn(STATES[domain], domain)
    assert rule_score(domain, block + "\n" + block, STATES[domain]).score == 0.0
    assert rule_score(domain, f"{OBSERVATION_MARKER}\n{STATES[domain]}", STATES[domain]).score == 0.0


@pytest.mark.parametrize("domain", ["terminal", "swe", "mcp", "search"])
def test_marker_domains_want_the_marker_form(domain):
    assert rule_score(domain, STATES[domain], STATES[domain]).score == 0.0  # no marker
    tagged = f"<predicted_observation>\n{STATES[domain]}\n</predicted_observation>"
    assert rule_score(domain, tagged, STATES[domain]).score == 0.0


def test_volatile_values_are_masked():
    truth = "$ date\nThu Dec  3 19:51:48 UTC 2026\n$ "
    predicted = "**Environment Observation:**\n$ date\nMon Jan  5 08:00:01 UTC 2026\n$ "
    assert rule_score("terminal", predicted, truth).score == 1.0
    wrong = "**Environment Observation:**\n$ date\ndate: command not found\n$ "
    assert rule_score("terminal", wrong, truth).score < 1.0


def test_partial_agreement_scores_between():
    truth = STATES["web"]
    same_url = "<predicted_observation>\nURL: https://example.com/cart\nTitle: Basket\n[3] button \"Pay\"\n</predicted_observation>"
    result = rule_score("web", same_url, truth)
    assert result.anchors == {"url": 1.0, "title": 0.0, "elements": 0.0} and result.score == pytest.approx(1 / 3)
    android = rule_score("android", '<predicted_observation>\nActivity: com.android.settings/.Settings\n'
                                    '[1] TextView "Wi-Fi" id=title {clickable} @[0,0][99,99]\n</predicted_observation>',
                         STATES["android"])
    assert android.anchors["header"] == 1.0 and android.anchors["elements"] == pytest.approx(2 / 3)  # bounds ignored


def test_tool_results_check_json_and_keys():
    truth = STATES["mcp"]
    same_keys = '**Environment Observation:**\n{"content": [], "isError": true}'
    assert rule_score("mcp", same_keys, truth).anchors == {"json": 1.0, "keys": 1.0}
    other_keys = '**Environment Observation:**\n{"result": 1, "isError": false}'
    assert rule_score("mcp", other_keys, truth).anchors == {"json": 1.0, "keys": pytest.approx(1 / 3)}
    assert rule_score("mcp", "**Environment Observation:**\nnot json", truth).anchors == {"json": 0.0, "keys": 0.0}


def test_silent_command_and_thresholds():
    assert rule_score("terminal", observation_turn("", "terminal"), "(no output)").score == 1.0
    truth = "a\nb\nc\nd"
    half = "**Environment Observation:**\na\nx\ny\nd"
    assert rule_score("terminal", half, truth).anchors["lines"] == 0.5
    assert rule_score("terminal", half, truth, RuleOptions(f1_floor=0.6)).anchors["lines"] == 0.0
    assert rule_score("terminal", "**Environment Observation:**\n" + "x" * 50, truth,
                      RuleOptions(max_chars=20)).score == 0.0
