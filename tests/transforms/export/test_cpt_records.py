"""CPT documents at their edges: a turn exactly at the budget, a turn over it only with its opening state
block, the recipe's loss flags and the character spans of each turn's observation, in the text and the
ms-swift layout, for a document that starts at turn 0 and one that starts later; the RL record's current
prompt."""

from tests.transforms.export.test_transitions import _steps, _trajectories
from transforms.export import cpt, rl
from transforms.export.budget import TokenCounter
from transforms.export.chat import TrajectoryRenderer


def _renderer() -> TrajectoryRenderer:
    (main,) = _trajectories(_steps())
    return TrajectoryRenderer(main, TokenCounter())


def test_a_turn_that_fills_the_budget_exactly_is_kept_and_one_over_it_dropped():
    renderer = _renderer()
    # turn 1 opening a window (with its state block) costs more than turns 0 + 1 leave room for
    alone = renderer.turn_tokens(1, 1)
    assert renderer.turn_tokens(0, 0) + renderer.turn_tokens(1, 0) > alone > renderer.turn_tokens(1, 0)
    assert cpt.windows(renderer, 3, alone, with_system=False) == ([(0, 1), (1, 2), (2, 3)], 0)
    # one token less: turn 1 fits without its opening block but not with it, so it is dropped
    assert cpt.windows(renderer, 3, alone - 1, with_system=False) == ([(0, 1), (2, 3)], 1)


def test_text_spans_cover_each_turns_observation_and_the_loss_flags_are_the_documents():
    renderer = _renderer()
    loss = [True, False, True]
    for first, stop in ((0, 3), (1, 3), (2, 3)):
        record = cpt.text_record(renderer, first, stop, loss)
        assert record["turn_loss"] == loss[first:stop]
        text, spans = record["text"], record["turn_spans"]
        assert [text[a:b] for a, b in spans] == renderer.assistants[first:stop]
        assert spans[-1][1] == len(text)  # the last observation ends the document
        for (_, end), (start, _) in zip(spans, spans[1:]):  # a blank line, then the next turn's user part
            assert text[end:end + 2] == "\n\n" and text[start - 1] == "\n"
    assert set(cpt.text_record(renderer, 0, 3)) == {"text"}


def test_swift_records_put_the_loss_on_observations_by_the_turns_own_flag():
    renderer = _renderer()
    loss = [True, False, True]
    for first in (0, 1, 2):
        messages = cpt.swift_record(renderer, first, 3, loss)["messages"]
        assert [(m["role"], m["loss"]) for m in messages] == [("system", False)] + [
            pair for flag in loss[first:] for pair in (("user", False), ("assistant", flag))]
        assert [m["content"] for m in messages if m["role"] == "assistant"] == renderer.assistants[first:]
    plain = cpt.swift_record(renderer, 1, 3)["messages"]
    assert [m["loss"] for m in plain if m["role"] == "assistant"] == [True, True]


def test_an_rl_records_current_prompt_is_its_last_user_turn():
    renderer = _renderer()
    sample = renderer.sample(2)
    assert [m["role"] for m in sample.messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    info = rl.verl_record(sample, "train", 4)["extra_info"]
    assert info["current_prompt"] == sample.messages[-1]["content"] != sample.messages[1]["content"]
    assert (info["turn_idx"], info["index"], info["split"]) == (3, 4, "train")
