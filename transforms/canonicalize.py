"""Typed masking of volatile values, for dedup keys only: the stored data keeps the original text.

Execution traces are full of values that change from run to run without changing what happened
(timestamps, UUIDs, addresses, PIDs, ports, temp paths, container hostnames, session ids). Two runs that
differ only there are the same trajectory; masking them with a typed token (`<TIMESTAMP>`, `<UUID>`, ...)
makes their dedup keys equal while keeping the kind of value visible.

Every rule is one regular expression written in the subset that Python's `re` and RE2 (pyarrow.compute)
both read the same way (ASCII classes, no look-around), so `canonicalize_text` (one string) and
`canonicalize_array` (a whole Arrow column, vectorized) give identical results. Rules run in order: a later
rule never sees what an earlier one replaced.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

_HEX = "[0-9a-fA-F]"
_MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"


def _long_hex_with_letter() -> str:
    """A hex token of 8+ characters holding at least one letter (so plain numbers stay): written without
    look-ahead as 'the first letter is at position i' for i = 0..7+."""
    alternatives = [f"[0-9]{{{i}}}[a-fA-F]{_HEX}{{{7 - i},}}" for i in range(7)]
    alternatives.append(f"[0-9]{{7,}}[a-fA-F]{_HEX}*")
    return r"\b(?:" + "|".join(alternatives) + r")\b"


# (token, pattern, replacement). `\1` in a replacement keeps the matched prefix (a key name, a user name).
RULES: list[tuple[str, str, str]] = [
    # 2021-12-06T20:44:49.123Z, 2021-12-06 20:44:49+02:00, DroidBot's 2021-12-06_204505
    ("TIMESTAMP", r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T _][0-9]{2}:?[0-9]{2}(?::?[0-9]{2})?(?:[.,][0-9]+)?"
                  r"(?:Z|[+-][0-9]{2}:?[0-9]{2}| ?UTC)?)?", "<TIMESTAMP>"),
    # HTTP dates (Mon, 06 Dec 2021 20:44:49 GMT) and `date` output (Mon Dec  6 20:44:49 UTC 2021)
    ("TIMESTAMP", rf"\b{_DAY},? (?:[0-9]{{1,2}} {_MONTH} [0-9]{{4}}|{_MONTH} +[0-9]{{1,2}}) [0-9]{{2}}:[0-9]{{2}}"
                  r"(?::[0-9]{2})?(?: [A-Z]{2,5})?(?: [0-9]{4})?", "<TIMESTAMP>"),
    ("TIMESTAMP", rf"\b{_MONTH} +[0-9]{{1,2}} [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}", "<TIMESTAMP>"),  # syslog
    ("TIMESTAMP", r"\b[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?\b", "<TIMESTAMP>"),  # bare clock time
    ("TIMESTAMP", r"\b1[4-9][0-9]{8}(?:[0-9]{3}|\.[0-9]+)?\b", "<TIMESTAMP>"),  # epoch s / ms, 2014-2033
    ("UUID", rf"\b{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}\b", "<UUID>"),
    # root@ad092d3df69c: a container's hostname is its short id
    ("HOST", r"\b([A-Za-z_][A-Za-z0-9_.-]*)@[0-9a-f]{12}\b", r"\1@<HOST>"),
    ("TMPPATH", r"(?:/private)?/(?:tmp|var/tmp|var/folders|dev/shm)/[^\s\"'`:;,)\]}>]*", "<TMPPATH>"),
    ("TMPPATH", r"\btmp[a-z0-9_]{6,8}\b", "<TMPPATH>"),  # tempfile.mkdtemp() names
    ("SESSION", r"((?i:session[_-]?id|sessionid|sid|session|csrf[_-]?token|xsrf[_-]?token|request[_-]?id|"
                r"trace[_-]?id|nonce)[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9._~+/=-]{8,}", r"\1<SESSION>"),
    ("PID", r"(\b(?i:pid)\b[ =:]{1,3})[0-9]+", r"\1<PID>"),
    ("PID", r"(\b[A-Za-z][A-Za-z0-9_.-]*\[)[0-9]+(\]:)", r"\1<PID>\2"),  # syslog: sshd[1234]:
    ("PID", r"(?m)^(\[[0-9]+\][+-]? +)[0-9]+$", r"\1<PID>"),  # shell job start: [1] 12345
    ("PORT", r"(\b(?:localhost|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|<HOST>)|\[[0-9a-fA-F:]+\]):[0-9]{2,5}\b",
             r"\1:<PORT>"),
    ("PORT", r"(\b(?i:port)[ =:]{1,3})[0-9]{2,5}\b", r"\1<PORT>"),
    ("IP", r"\b[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\b", "<IP>"),
    ("HEX", rf"\b0x{_HEX}{{4,}}\b", "<HEX>"),
    ("HEX", _long_hex_with_letter(), "<HEX>"),
    ("DURATION", r"\b[0-9]+\.[0-9]+ ?(?:ms|us|ns|s|sec|secs|seconds)\b", "<DURATION>"),
]

_COMPILED = [(token, re.compile(pattern, re.ASCII), repl) for token, pattern, repl in RULES]
TOKENS = tuple(dict.fromkeys(token for token, _, _ in RULES))


def canonicalize_text(text: str | None) -> str:
    """The text with every volatile value replaced by its typed token; None becomes ""."""
    if not text:
        return ""
    for _, regex, repl in _COMPILED:
        text = regex.sub(repl, text)
    return text


def canonicalize_array(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """`canonicalize_text` over a whole string column, in Arrow (RE2); nulls become ""."""
    values = pc.fill_null(values.cast(pa.large_string()), "")
    for _, pattern, repl in RULES:
        values = pc.replace_substring_regex(values, pattern=pattern, replacement=repl)
    return values


# What of a step goes into its dedup key. Left out: `raw` (the source's verbatim action, restated by the
# structured fields and full of source bookkeeping), `ui_tree` (rendered into `text`), durations and pixel
# sizes. A screenshot ref counts only when the observation has no text: it is then all there is.
ACTION_KEY_FIELDS = ("kind", "x", "y", "x2", "y2", "text", "keys", "element", "direction", "tool_name",
                     "arguments", "code")
OBSERVATION_KEY_FIELDS = ("kind", "text", "url", "title", "exit_code", "is_error")
_NL, _SPACE = pa.scalar("\n", pa.large_string()), pa.scalar(" ", pa.large_string())


def _as_text(values: pa.Array) -> pa.Array:
    """One struct field as strings: floats rounded to 1e-3 (a pixel of jitter is the same tap), lists
    joined, nulls empty."""
    if pa.types.is_floating(values.type):
        values = pc.round(values, 3)
    if pa.types.is_list(values.type) or pa.types.is_large_list(values.type):
        values = pc.binary_join(values, ",")
    return pc.fill_null(values.cast(pa.large_string()), "")


def _struct(column: pa.ChunkedArray | pa.Array) -> pa.StructArray:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def action_key_column(actions: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Per step, the action's canonical key text: its key fields in a fixed order, volatile values masked."""
    actions = _struct(actions)
    parts = [_as_text(actions.field(name)) for name in ACTION_KEY_FIELDS]
    return canonicalize_array(pc.binary_join_element_wise(*parts, _NL))


def observation_key_column(observations: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Per step, the observation's canonical key text (the screenshot ref only when there is no text)."""
    observations = _struct(observations)
    parts = [_as_text(observations.field(name)) for name in OBSERVATION_KEY_FIELDS]
    text = parts[1]
    parts.append(pc.if_else(pc.equal(text, ""), _as_text(observations.field("screenshot")), ""))
    return canonicalize_array(pc.binary_join_element_wise(*parts, _NL))


def step_text_column(actions: pa.ChunkedArray | pa.Array, observations: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Per step, the readable text near-duplicate search shingles: the action's non-empty key fields, then
    what the agent saw (text, else url/title, else the kind), volatile values masked."""
    actions, observations = _struct(actions), _struct(observations)
    action = pc.binary_join_element_wise(*[_as_text(actions.field(n)) for n in ACTION_KEY_FIELDS], _SPACE)
    seen = pc.coalesce(*[pc.if_else(pc.equal(_as_text(observations.field(n)), ""), None,
                                    _as_text(observations.field(n))) for n in ("text", "url", "title", "kind")], "")
    return canonicalize_array(pc.binary_join_element_wise(action, seen, _NL))
