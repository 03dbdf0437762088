from transforms.label.parse import parse_output


def test_reasoning_dropped_and_last_block_taken():
    text = ("<think>maybe <predicted_observation>draft</predicted_observation></think>\n"
            "<predicted_observation>first</predicted_observation>\n"
            "<predicted_observation>\n**Environment Observation:**\nActivity: .MainActivity\n[3] Button \"OK\"\n"
            "</predicted_observation>")
    assert parse_output(text, "stop").observation == 'Activity: .MainActivity\n[3] Button "OK"'


def test_plain_text_with_marker():
    assert parse_output("**Environment Observation:**\n$ ls\nREADME.md\n", "stop").observation == "$ ls\nREADME.md"


def test_only_last_think_counts():
    parsed = parse_output("<think>a</think>b</think>  state after  ", "stop")
    assert parsed.observation == "state after"


def test_unclosed_block_runs_to_the_end():
    assert parse_output("<predicted_observation>\nHome screen", "stop").observation == "Home screen"


def test_failures_are_reported_not_stored():
    assert parse_output("<predicted_observation>half a scr", "length").failure.startswith("truncated")
    assert parse_output("", "stop").failure == "empty output"
    assert parse_output(None, "stop").failure == "empty output"
    empty = parse_output("<think>long reasoning</think>", "stop")
    assert empty.observation is None and empty.failure.startswith("empty once reasoning")
    # an empty block is an empty observation (a silent command), as the reference reads it
    assert parse_output("<think>x</think>\n<predicted_observation> </predicted_observation>", "stop").observation == ""
