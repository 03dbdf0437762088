"""The judge's input and the reading of its verdict, against the reference evaluation's own code (the oracle,
`reference_eval/`): every output below is read by both, and success, scores, total, strengths and weaknesses
must agree."""

import json
import random

import pytest

from transforms.label.parse import reference_answer
from transforms.reward.judge import SCORE_DIMENSIONS, bench_judge_messages, judge_system_prompt, parse_verdict
from tests.transforms.reward import reference

SCORES = {"format": 4, "factuality": 3, "consistency": 5, "realism": 2, "quality": 4}
JSON = json.dumps({"strengths": ["a"], "weaknesses": ["b", "c"], "scores": SCORES}, indent=2)
OTHER = json.dumps({"strengths": [], "weaknesses": [], "scores": {d: 1 for d in SCORE_DIMENSIONS}})

CASES = {
    "the requested form": f"reasoning\n<final_evaluation>\n```json\n{JSON}\n```\n</final_evaluation>",
    "fenced without the tag": f"```json\n{JSON}\n```",
    "fence without a language": f"<final_evaluation>```\n{JSON}\n```</final_evaluation>",
    "bare JSON in the tag": f"<final_evaluation>{JSON}</final_evaluation>",
    "bare JSON, no tag": f"Here it is: {JSON} done",
    "unclosed tag": f"<final_evaluation>\n```json\n{JSON}\n```",
    "unclosed tag, unclosed fence": f"<final_evaluation>\n```json\n{JSON}",
    "two blocks: the last counts": f"<final_evaluation>{OTHER}</final_evaluation> then <final_evaluation>{JSON}</final_evaluation>",
    "two fences: the last with scores": f"```json\n{JSON}\n```\n```json\n{{\"note\": 1}}\n```",
    "reasoning holds a fake verdict": f"<think><final_evaluation>{OTHER}</final_evaluation></think><final_evaluation>{JSON}</final_evaluation>",
    "unclosed think before the verdict": f"<think>hmm {OTHER} <final_evaluation>{JSON}</final_evaluation>",
    "orphan close think": f"{OTHER}</think>\n<final_evaluation>{JSON}</final_evaluation>",
    "trailing commas": '<final_evaluation>{"strengths": ["x",], "scores": {"format": 3, "factuality": 3, '
                       '"consistency": 3, "realism": 3, "quality": 3,},}</final_evaluation>',
    "single-quoted and unquoted keys": "<final_evaluation>{'scores': {format: 2, 'factuality': 4, consistency: 5, "
                                       "realism: 1, quality: 3}}</final_evaluation>",
    "string and float scores": '{"scores": {"format": "4/5", "factuality": 3.6, "consistency": "x", '
                               '"realism": 9, "quality": -2}}',
    "missing dimensions": '{"scores": {"format": 5}}',
    "scores not an object": '{"scores": [5, 5, 5, 5, 5]}',
    "no scores key": '<final_evaluation>{"strengths": ["a"]}</final_evaluation>',
    "broken JSON, scores readable": '<final_evaluation>{"strengths": ["unterminated, "scores": {"format": 4, '
                                    '"factuality": 4, "consistency": 4, "realism": 4, "quality": 4}}</final_evaluation>',
    "broken JSON, nothing readable": "<final_evaluation>{\"scores\": {\"format\": </final_evaluation>",
    "no JSON at all": "I think the simulation is fine. Score: 5",
    "only reasoning": "<think>all of it is thinking",
    "empty": "",
    "whitespace": "   \n ",
    "escaped quotes in strings": '{"strengths": ["say \\"hi\\" {x}"], "scores": {"format": 5, "factuality": 5, '
                                 '"consistency": 5, "realism": 5, "quality": 5}}',
    "upper-case tags": f"<FINAL_EVALUATION>```json\n{JSON}\n```</FINAL_EVALUATION>",
}


def _same(raw: str) -> None:
    ours, theirs = parse_verdict(raw), reference.parse_judge_output(raw)
    assert ours.success == theirs["success"], (raw, ours, theirs)
    assert ours.scores == theirs["scores"]
    assert ours.total_score == pytest.approx(theirs["total_score"])
    assert (ours.strengths, ours.weaknesses) == (theirs["strengths"], theirs["weaknesses"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_verdicts_read_as_the_reference_reads_them(name):
    _same(CASES[name])


def test_the_cases_cover_both_outcomes():
    read = {name: parse_verdict(raw).success for name, raw in CASES.items()}
    assert read["the requested form"] and read["unclosed tag"] and read["two blocks: the last counts"]
    assert not read["no JSON at all"] and not read["empty"] and not read["no scores key"]
    assert parse_verdict(CASES["two blocks: the last counts"]).scores == SCORES  # the last block, not the first
    assert parse_verdict(CASES["string and float scores"]).scores == {
        "format": 4, "factuality": 4, "consistency": 0, "realism": 5, "quality": -2}


def test_mangled_verdicts_read_as_the_reference_reads_them():
    """Random cuts, duplications and tag / fence / brace insertions of valid verdicts."""
    rng = random.Random(7)
    pieces = ["<final_evaluation>", "</final_evaluation>", "```json\n", "```", "{", "}", '"', ",", "<think>",
              "</think>", '"scores": {"format": 3}', "\\"]
    base = list(CASES.values())
    for _ in range(600):
        text = rng.choice(base)
        for _ in range(rng.randint(1, 4)):
            i = rng.randint(0, len(text))
            op = rng.random()
            if op < 0.4:
                text = text[:i] + rng.choice(pieces) + text[i:]
            elif op < 0.7:
                text = text[:i] + text[i + rng.randint(1, 20):]
            else:
                text = text + text[i:]
        _same(text)


def test_judge_input_is_the_references():
    ref = reference.load()
    prompts = {d: judge_system_prompt(d) for d in ("android", "terminal", "mcp")}
    record = {"task": "agentworld/terminal", "prompt": ["### Turn 1\n**Action:**\n```json\n[]\n```", "### Turn 2\nls"],
              "response": ["**Environment Observation:**\nfirst", "**Environment Observation:**\nfile.txt"],
              "current_prompt": "### Turn 2\nls", "turn_idx": 2}
    gen = "<think>hm</think>**Environment Observation:**\nfile.txt\nother"
    ours = bench_judge_messages(record, reference_answer(gen))
    theirs = ref.build_judge_messages(record, reference.parse_model_output(gen), prompts)
    assert ours == theirs
    assert "# Context (Historical Interactions):" in ours[1]["content"] and ours[0]["content"] == prompts["terminal"]
    first = {**record, "turn_idx": 1, "current_prompt": ""}  # no context; the current prompt from prompt[]
    assert bench_judge_messages(first, "x") == ref.build_judge_messages(first, "x", prompts)


@pytest.mark.parametrize("gen", ["", "<think>only", "<predicted_observation>a</predicted_observation>",
                                 "x<predicted_observation>a<predicted_observation>b", "</think>tail", "  plain  "])
def test_predictions_parse_as_the_references(gen):
    assert reference_answer(gen) == reference.parse_model_output(gen)
