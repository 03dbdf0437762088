"""The complete values at the start of a JSON array that stops before it closes.

A writer that dies inside `json.dump` leaves the document it had written so far: Python's encoder writes as it
goes, so a value it cannot serialize (smolagents 1.1x's `get_full_steps()` hands `json.dump` a `ChatMessage`
object under `model_output_message`) ends the file right after that value's key. The items written before it are
whole, and so are the fields of the cut item that came before the key: this module reads them back, so that a
reader keeps what was saved and says where it stops, instead of rejecting the whole file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


@dataclass
class Prefix:
    """What a cut array holds: its whole `items`, the complete `fields` of the object it stops in (None when it
    stops between items or inside a value that is no object), and `cut_at`, the key whose value is cut."""
    items: list = field(default_factory=list)
    fields: dict | None = None
    cut_at: str | None = None


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _SPACE:
        i += 1
    return i


def _members(text: str, i: int, into: dict) -> str | None:
    """Read the `"key": value` pairs of an object whose `{` is before `i` into `into`, up to the first one that
    does not decode; that pair's key (None when the file stops before a key is whole)."""
    while True:
        i = _skip(text, i)
        try:
            key, i = _DECODER.raw_decode(text, i)
        except ValueError:
            return None
        if not isinstance(key, str):
            return None
        i = _skip(text, i)
        if text[i:i + 1] != ":":
            return key
        try:
            value, i = _DECODER.raw_decode(text, _skip(text, i + 1))
        except ValueError:
            return key
        into[key] = value
        i = _skip(text, i)
        if text[i:i + 1] != ",":
            return None
        i += 1


def array_prefix(text: str) -> Prefix | None:
    """The whole items of a top-level JSON array that stops before its `]`, and the complete fields of the object
    it stops in; None when the text is no array."""
    i = _skip(text, 0)
    if text[i:i + 1] != "[":
        return None
    found, i = Prefix(), i + 1
    while True:
        i = _skip(text, i)
        if i >= len(text):
            return found
        try:
            value, i = _DECODER.raw_decode(text, i)
        except ValueError:
            if text[i] == "{":
                found.fields = {}
                found.cut_at = _members(text, i + 1, found.fields)
            return found
        found.items.append(value)
        i = _skip(text, i)
        if text[i:i + 1] != ",":
            return found
        i += 1
