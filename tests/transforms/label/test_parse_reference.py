"""The labeler's parser against the reference evaluation's reading of a world-model output
(Qwen-AgentWorld eval/lwm_eval_utils/output_parser.py: parse_model_output, then clean_response_marker).

Each expected value is what the reference returns for that text (worked out by running it). Where the
reference returns `No output` the labeler records an unusable output; where the reference's answer still
holds reasoning / answer tags the labeler refuses it too (a state with tags is never stored)."""

import pytest

from transforms.label.parse import parse_output

M = "**Environment Observation:**"
P, C = "<predicted_observation>", "</predicted_observation>"
NO_OUTPUT = object()  # reference: "No output"
TAGS = object()  # reference returns text that still holds tags: unusable here

CASES = [
    ("empty", "", NO_OUTPUT),
    ("whitespace only", "  \n\t ", NO_OUTPUT),
    ("plain text, no tags", "  $ ls\nREADME.md\n", "$ ls\nREADME.md"),
    ("leading marker", M + "\n$ ls\nREADME.md\n", "$ ls\nREADME.md"),
    ("marker elsewhere is removed everywhere", "Screen:\n" + M + " Home " + M, "Screen:\n Home"),
    ("leading marker is cut once only", M + " a " + M + " b", "a " + M + " b"),
    ("closed think then block", "<think>plan</think>\n" + P + "\nHome screen\n" + C, "Home screen"),
    ("tags in any case", "<THINK>plan</THINK><PREDICTED_OBSERVATION> Home </Predicted_Observation>", "Home"),
    ("several blocks: the last wins", P + "first" + C + "\n" + P + "second" + C, "second"),
    ("fake block inside reasoning", "<think>" + P + "draft" + C + "</think>" + P + "real" + C, "real"),
    ("unclosed last block runs to the end", P + "one" + C + P + "\nHome screen  ", "Home screen"),
    ("empty block is an empty observation", "<think>x</think>" + P + "  " + C, ""),
    ("block holding only the marker", P + M + "\n" + C, ""),
    ("orphan </think> drops everything before it", "reasoning... </think>  state after  ", "state after"),
    ("two orphan </think>", "a</think>b</think> state", "state"),
    ("unclosed <think> stops at the block", "<think>still thinking " + P + "Home" + C, "Home"),
    ("unclosed <think> with no block eats the rest", "Home screen <think> hmm, maybe", "Home screen"),
    ("only an unclosed <think>", "<think> hmm, maybe", NO_OUTPUT),
    ("only reasoning", "<think>plan</think>", NO_OUTPUT),
    ("nested think goes whole", "<think>a<think>b</think>c</think> state", "state"),
    ("think in the middle of the text", "line 1\n<think>aside</think>\nline 2", "line 1\n\nline 2"),
    ("think inside the block", P + "Home <think>aside</think>screen" + C, "Home screen"),
    ("unclosed think inside the block eats its close tag", P + "Home <think>aside" + C, "Home"),
    ("orphan close, then a pair", "x</think>y<think>z</think>w", "yw"),
    ("block closed twice", P + "a" + C + "b" + C, "a"),
    ("close tag without an open one", "Home" + C, TAGS),  # reference: 'Home</predicted_observation>'
    ("tags rebuilt by the removal", "<thi<think>x</think>nk> Home", TAGS),  # reference: '<think> Home'
    ("the model writes No output in a block", P + "No output" + C, "No output"),
    ("CRLF and tabs are whitespace", "\r\n\t" + P + "\r\n Home \t\r\n" + C + "\r\n", "Home"),
]


@pytest.mark.parametrize("text, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_same_reading_as_the_reference(text, expected):
    parsed = parse_output(text, "stop")
    if expected is NO_OUTPUT:
        assert parsed.observation is None and parsed.failure.startswith("empty")
    elif expected is TAGS:
        assert parsed.observation is None and parsed.failure.startswith("reasoning or tags left")
    else:
        assert parsed.failure is None and parsed.observation == expected


def test_truncated_output_is_unusable_whatever_it_holds():
    assert parse_output(P + "Home screen" + C, "length").failure.startswith("truncated")
