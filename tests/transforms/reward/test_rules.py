"""The reward's rule part: the real next state scores the maximum in every domain and in every form the
reference evaluation's parser reads (the form a weighted part when asked), an output without an answer the
minimum, and the anchors give partial credit where the state says what is checkable."""

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


def reference_forms(state: str) -> dict[str, str]:
    """The state written in every form the reference's `parse_model_output` reads back as it."""
    block = f"<predicted_observation>\n{state}\n</predicted_observation>"
    return {
        "closed block": block,
        "marker": f"{OBSERVATION_MARKER}\n{state}",
        "bare": state,
        "unclosed block": f"<predicted_observation>\n{state}",
        "marker in a block": f"<predicted_observation>\n{OBSERVATION_MARKER}\n{state}\n</predicted_observation>",
        "reasoning, then a block": f"<think>a draft <predicted_observation>x</predicted_observation></think>{block}",
        "unclosed reasoning, then a block": f"<think>still thinking\n{block}",
        "orphan close of reasoning": f"notes</think>\n{OBSERVATION_MARKER}\n{state}",
        "a draft block, then the last": f"<predicted_observation>draft</predicted_observation>\n{block}",
        "upper-case tags": f"<PREDICTED_OBSERVATION>\n{state}\n</PREDICTED_OBSERVATION>",
        "reasoning, then bare": f"<think>hm</think>\n{state}",
    }


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("form", sorted(reference_forms("x")))
def test_the_real_state_in_every_form_the_reference_reads_scores_the_maximum(domain, form):
    from tests.transforms.reward import reference

    ref = reference.load()
    output = reference_forms(STATES[domain])[form]
    # the oracle: the reference's parser and marker cleaning read the state back exactly
    assert ref.clean_response_marker(reference.parse_model_output(output), domain) == STATES[domain].strip()
    result = rule_score(domain, output, STATES[domain])
    assert result.score == 1.0 and result.anchors == {"exact": 1.0}
    # the form as a weighted part: only the domain's own form keeps the maximum
    weighted = rule_score(domain, output, STATES[domain], RuleOptions(form_weight=0.25))
    assert weighted.score == (1.0 if result.form_ok else 0.75)


@pytest.mark.parametrize("domain", ["android", "web", "os"])
def test_gui_domains_form_is_exactly_one_closed_block(domain):
    block = observation_turn(STATES[domain], domain)
    assert rule_score(domain, block, STATES[domain]).form_ok
    for other in (block + "\n" + block, f"{OBSERVATION_MARKER}\n{STATES[domain]}", STATES[domain]):
        assert not rule_score(domain, other, STATES[domain]).form_ok


@pytest.mark.parametrize("domain", ["terminal", "swe", "mcp", "search"])
def test_marker_domains_form_is_the_marker(domain):
    assert rule_score(domain, observation_turn(STATES[domain], domain), STATES[domain]).form_ok
    for other in (STATES[domain], f"<predicted_observation>\n{STATES[domain]}\n</predicted_observation>"):
        result = rule_score(domain, other, STATES[domain])
        assert not result.form_ok and result.failure and result.score == 1.0  # read, scored, form apart


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("output", ["", None, "   ", "<think>never answers", "<think>a</think>", "x</think>"])
def test_no_answer_scores_the_minimum(domain, output):
    result = rule_score(domain, output, STATES[domain], RuleOptions(form_weight=0.5))
    assert result.score == 0.0 and not result.answered and result.failure


def test_a_wrong_answer_in_any_form_scores_low():
    for output in ("no form at all", "<predicted_observation>unclosed", f"{OBSERVATION_MARKER}\nother"):
        assert rule_score("terminal", output, STATES["terminal"]).score < 0.5
    with pytest.raises(ValueError, match="form_weight"):
        rule_score("terminal", "x", "x", RuleOptions(form_weight=2))


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
