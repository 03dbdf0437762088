"""Parsing a world model's output at its edges: a nested unclosed <think>, tags rebuilt by the removal (named,
lower-cased, in the failure), and the `(no output)` line of a silent command stored as an empty state."""

from transforms.label.parse import leftover_tags, parse_output, strip_reasoning


def test_an_unclosed_think_inside_a_closed_one_removes_to_the_end():
    # the first <think> pairs with the first </think>; the second <think> stays unclosed: all goes
    assert strip_reasoning("<think>a<think>b</think>c") == ""
    assert parse_output("<think>a<think>b</think>c").failure.startswith("empty once reasoning is removed")


def test_tags_rebuilt_by_the_removal_fail_the_output_naming_each_tag():
    text = ("<predicted_observation>a <TH<think>.</think>INK> b </th<think>.</think>ink>"
            "</predicted_observation>")
    parsed = parse_output(text)
    assert parsed.observation is None
    assert parsed.failure == "reasoning or tags left in the parsed state: </think> <think>"
    assert leftover_tags("<THINK> x </Predicted_Observation>") == ["</predicted_observation>", "<think>"]
    assert leftover_tags(None) == [] and leftover_tags("") == []


def test_a_predicted_no_output_is_an_empty_state():
    assert parse_output("<predicted_observation>\n(no output)\n</predicted_observation>").observation == ""
    assert parse_output("<predicted_observation>(no output) yet</predicted_observation>").observation == (
        "(no output) yet")
