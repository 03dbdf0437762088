"""Context budgets: count tokens, and trim a transition's history from the oldest turn to fit.

With `tokenizer_path` (a local Hugging Face `tokenizer.json`, read with the `tokenizers` package) counts
are real token counts of each message's content. Without one they are an estimate: ceil(chars / 4), the
usual rule of thumb for English and code with BPE vocabularies (it under-counts CJK text, which runs
nearer one token per character). Either way each message adds `MESSAGE_OVERHEAD` tokens for the chat
template's role markers. The target (the next observation) is never trimmed: a transition whose
system prompt + action + target alone exceed the budget is dropped and counted as over budget.
"""

from __future__ import annotations

import hashlib
import math

MESSAGE_OVERHEAD = 4  # <|im_start|>role\n ... <|im_end|>\n


class TokenCounter:
    def __init__(self, tokenizer_path: str | None = None):
        if tokenizer_path:
            try:
                from tokenizers import Tokenizer
            except ImportError as e:  # the `export` extra
                raise RuntimeError("--tokenizer needs the `tokenizers` package: pip install 'trajforge[export]'") from e
            with open(tokenizer_path, "rb") as f:
                data = f.read()
            self._tokenizer = Tokenizer.from_str(data.decode("utf-8"))
            self.name = f"tokenizer.json sha256:{hashlib.sha256(data).hexdigest()[:16]}"
        else:
            self._tokenizer = None
            self.name = "estimate: ceil(chars / 4)"
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        """Tokens of `text` (no special tokens)."""
        if self._tokenizer is None:
            return math.ceil(len(text) / 4)
        cached = self._cache.get(text)
        if cached is None:
            cached = len(self._tokenizer.encode(text, add_special_tokens=False).ids)
            if len(self._cache) < 100_000:
                self._cache[text] = cached
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
