"""Document pairs whose exact Jaccard sits just above, exactly at, just below and well below a threshold: the
boundary cases of near-duplicate acceptance (`sim >= threshold`)."""

from __future__ import annotations

import numpy as np

# isolated one-word edits per pair: each changes the `ngram` shingles that hold the word
EDITS = {"above": 5, "at": 6, "below": 7, "far": 12}
WORDS = 300
NGRAM = 5


def word(rng: np.random.Generator) -> str:
    """A word of letters no canonical mask touches (no digits, no hex letters)."""
    return "".join(rng.choice(list("ghijklmnopqrstuvwxyz"), 7))


def pair_texts(seed: int = 5) -> dict[str, tuple[str, str]]:
    """name -> (base text, edited text): the edited text replaces EDITS[name] words, 24 words apart."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, edits in EDITS.items():
        base = [word(rng) for _ in range(WORDS)]
        edited = list(base)
        for k in range(edits):
            edited[10 + 24 * k] = word(rng)
        out[name] = (" ".join(base), " ".join(edited))
    return out


def shingles(text: str, n: int = NGRAM) -> set:
    words = text.split()
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)} or ({tuple(words)} if words else set())


def jaccard(a: str, b: str) -> float:
    """The exact Jaccard of the two texts' shingle sets, as plain Python computes it (the oracle)."""
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / len(sa | sb)
