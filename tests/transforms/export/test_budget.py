from tests.parts import require_module
from transforms.export.budget import MESSAGE_OVERHEAD, TokenCounter, first_kept_turn


def test_estimate_is_chars_over_four():
    counter = TokenCounter()
    assert counter.count("abcdefghi") == 3 and counter.message("") == MESSAGE_OVERHEAD
    assert counter.name.startswith("estimate")


def test_a_local_tokenizer_json_gives_real_counts(tmp_path):
    tokenizers = require_module("tokenizers")
    from tokenizers import models, pre_tokenizers
    vocab = {"[UNK]": 0, "ls": 1, "-la": 2, "root@host:/#": 3}
    tok = tokenizers.Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    counter = TokenCounter(str(path))
    assert counter.count("root@host:/# ls -la") == 3 and counter.count("x y z w") == 4
    assert counter.name.startswith("tokenizer.json sha256:")


def test_history_is_trimmed_from_the_oldest_turn_never_the_target():
    pairs, states = [50, 30, 20], [10, 5, 5, 5]
    assert first_kept_turn(100, pairs, states, None) == 0
    assert first_kept_turn(100, pairs, states, 210) == 0  # 100 + 100 + 10
    assert first_kept_turn(100, pairs, states, 209) == 1  # drop the oldest: 100 + 50 + 5
    assert first_kept_turn(100, pairs, states, 125) == 2
    assert first_kept_turn(100, pairs, states, 105) == 3  # no history left
    assert first_kept_turn(100, pairs, states, 104) is None  # the target alone does not fit
