"""Secrets scrubbed in place before anything is exported, with an audit of what kind was scrubbed where.

A secret is replaced by `<REDACTED:kind>`; everything around it stays byte for byte (a JSON string stays
valid JSON, a header keeps its name). The audit says which kind was found in which field of which record,
and how often: never the secret itself.

Shapes covered, in the order they run (an earlier rule's redaction is never re-matched):
private keys (PEM blocks); HTTP credentials in HAR (`{"name": "Authorization", "value": ...}`), CDP
(`"Cookie": "..."`) and header lines (`Authorization: Bearer ...`, curl -H); HAR cookie lists; provider key
shapes (AWS, GitHub, OpenAI/Anthropic-style `sk-`, Google, Slack, Stripe, Hugging Face, JWTs); passwords in
URLs and token query parameters; `.env`-style assignments (`OPENAI_API_KEY=...`) and `password: ...` keys.

Rows of an Arrow column are first screened with one vectorized RE2 match (`TRIGGERS`: the rules' key shapes);
only the rows that hit are scrubbed in Python, one rule at a time over all of them (`scrub_texts`), each rule's
Python regex run on the rows where RE2 finds the rule's own pattern: the same result as `scrub_text` row by row.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_HEADERS = (r"authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|x-auth-token|"
            r"x-access-token|x-csrf-token|x-xsrf-token|x-amz-security-token")
# the inside of a JSON string literal, unrolled and possessive: `(?:[^"\\]|\\.)*` keeps a backtracking
# frame per character, ~130 bytes each (a 10 MB header value took 1.4 GB and 3 s; this form 0.14 s, nothing)
_JSON_STR = r'[^"\\]*+(?:\\.[^"\\]*+)*+'
# a name starts after a non-word character or after an escaped newline/tab inside a JSON string ("\\nKEY=")
_START = r"(?:(?<=\\[nrt])|(?<![A-Za-z0-9_]))"
_SECRET_NAME = r"[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH)[A-Z0-9_]*"

# (kind, pattern, group holding the secret): the group is replaced, the rest of the match kept.
RULES: list[tuple[str, str, int]] = [
    ("private_key", r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.|\n)*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$))",
     1),
    ("http_credential", rf'"name"\s*:\s*"(?i:{_HEADERS})"\s*,\s*"value"\s*:\s*"({_JSON_STR})"', 1),
    ("http_credential", rf'"value"\s*:\s*"({_JSON_STR})"\s*,\s*"name"\s*:\s*"(?i:{_HEADERS})"', 1),
    ("http_credential", rf'"(?i:{_HEADERS})"\s*:\s*"({_JSON_STR})"', 1),
    ("http_credential", rf"\b(?i:{_HEADERS})[ \t]*:[ \t]*([^\s\"'\\<][^\r\n\"'\\]*)", 1),  # never starts at a blank
    ("aws_access_key", r"\b((?:AKIA|ASIA)[0-9A-Z]{16})\b", 1),
    ("github_token", r"\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b", 1),
    ("api_key", r"\b(sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})", 1),
    ("google_api_key", r"\b(AIza[0-9A-Za-z_-]{35})", 1),
    ("slack_token", r"\b(xox[abposr]-[A-Za-z0-9-]{10,})", 1),
    ("stripe_key", r"\b([rsp]k_(?:live|test)_[A-Za-z0-9]{16,})", 1),
    ("huggingface_token", r"\b(hf_[A-Za-z0-9]{30,})", 1),
    ("jwt", r"\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})", 1),
    ("url_password", r"[a-z][a-z0-9+.-]*://[^/\s:@\"']+:([^/\s@\"'<]+)@", 1),
    ("url_token", r"[?&](?i:access_token|token|api_key|apikey|key|sig|signature|password|secret)=([^&\s\"'#<]+)",
     1),
    ("env_secret", rf"{_START}{_SECRET_NAME}[ \t]*=[ \t]*[\"']?([^\s\"'\\<][^\s\"'\\]{{3,}})", 1),
    ("password", _START + r"(?i:\"?(?:password|passwd|api[_-]?key|secret|access[_-]?token|auth[_-]?token|"
                 r"client[_-]?secret)\"?)[ \t]*[:=][ \t]*\"?([^\s\"',;&\\<(\[{*][^\s\"',;&\\]{3,})", 1),
]
# Cookie lists in HAR (`"cookies": [{"name": "sid", "value": "..."}]`): every value, whatever the name.
_HAR_COOKIES = re.compile(r'"cookies"\s*:\s*\[([^\[\]]*)\]')
_COOKIE_VALUE = re.compile(rf'"value"\s*:\s*"({_JSON_STR})"')

_COMPILED = [(kind, re.compile(pattern, re.ASCII), group) for kind, pattern, group in RULES]
# Per rule, words one of which any text it matches holds (lower-cased): a rule whose words are all absent is
# not run, so a row that passed the screen runs the one or two regexes that can match it, not all seventeen.
_HEADER_WORDS = ("authorization", "cookie", "api-key", "x-auth-token", "x-access-token", "x-csrf-token",
                 "x-xsrf-token", "x-amz-security-token")
_NEEDLES = {
    "private_key": ("private key-----",), "http_credential": _HEADER_WORDS, "aws_access_key": ("akia", "asia"),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), "api_key": ("sk-",),
    "google_api_key": ("aiza",), "slack_token": ("xox",), "stripe_key": ("_live_", "_test_"),
    "huggingface_token": ("hf_",), "jwt": ("eyj",), "url_password": ("://",),
    "url_token": ("token=", "key=", "sig=", "signature=", "password=", "secret="),
    "env_secret": ("key", "token", "secret", "pass", "pwd", "credential", "auth"),
    "password": ("password", "passwd", "api", "secret", "token"),
}


def _re2(pattern: str) -> str:
    """A rule's regex as RE2 (Arrow's engine) reads it, matching wherever the rule does (maybe more): without the
    look-behind of a name's start, possessive as plain repeats, and `\\s` spelt out where a blank must be (RE2's
    `\\s` leaves out the vertical tab; inside a negated class that only widens it)."""
    return pattern.replace(_START, "").replace("*+", "*").replace(r"\s*", r"[\s\x0B]*")


_RULES = [(kind, regex, group, _NEEDLES[kind], _re2(pattern))
          for (kind, regex, group), (_, pattern, _) in zip(_COMPILED, RULES, strict=True)]
# Runs of rules screened together first (one RE2 pass over every text for each run, then one per rule over the
# texts the run's screen found): the private key and the JSON header shapes, which a HAR entry with cookies hits,
# then the header lines and key shapes, which it does not. A pattern without a literal head costs RE2 a pass of
# a few ms per 3 MB; with one, a tenth of that.
_RUNS = [(0, 4), (4, len(_RULES))]
_RUN_SCREENS = ["|".join(f"(?:{screen})" for *_, screen in _RULES[first:last]) for first, last in _RUNS]
# RE2 screen: every text a rule above can change matches it (each rule's key shape, or its trigger word in
# the position the rule needs: `password` after a non-word character and before `:`/`=`, not inside
# `"is_password": false`, which every Android view tree holds), so only rows that may hold a secret go
# through the Python regexes. tests/transforms/test_scrub.py checks it against every rule's examples.
TRIGGERS = "|".join((
    r"PRIVATE KEY-----",
    rf"(?i:{_HEADERS})",
    r"(?:AKIA|ASIA)[0-9A-Z]{16}", r"gh[pousr]_[A-Za-z0-9]{36}", r"github_pat_[A-Za-z0-9_]{22}",
    r"sk-[A-Za-z0-9_-]{20}", r"AIza[0-9A-Za-z_-]{35}", r"xox[abposr]-[A-Za-z0-9-]{10}",
    r"[rsp]k_(?:live|test)_[A-Za-z0-9]{16}", r"hf_[A-Za-z0-9]{30}", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ",
    r"://[^/\s:@\"']+:[^/\s@\"'<]+@",
    r"[?&](?i:access_token|token|api_key|apikey|key|sig|signature|password|secret)=",
    r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIAL|CREDENTIALS|AUTH)[A-Z0-9_]*[ \t]*=",
    r"(?:^|[^A-Za-z0-9_]|\\[nrt])\"?(?i:password|passwd|api[_-]?key|secret|access[_-]?token|auth[_-]?token|"
    r"client[_-]?secret)\"?[ \t]*[:=]",
))


# What is scrubbed in each lake table, and the column that names a row in the audit: every string a trace
# writes (views, actions, raw source records, reasoning), the task and env, and the raw snippets of the
# quarantine. Ingest scrubs these before anything is written; dedup scrubs them again (a second pass).
SCRUBBED: dict[str, tuple[list[str], str]] = {
    "steps": (["observation.text", "observation.ui_tree", "observation.url", "observation.title", "action.text",
               "action.element", "action.arguments", "action.code", "action.raw", "final_observation.text",
               "final_observation.ui_tree", "reasoning"], "step_id"),
    "episodes": (["task", "env"], "episode_id"),
    "branches": (["action.text", "action.element", "action.arguments", "action.code", "action.raw",
                  "next_observation.text", "next_observation.ui_tree"], "step_id"),
    "quarantine": (["reason", "snippet"], "record_id"),
}


def scrub_tables(tables: dict[str, pa.Table]) -> tuple[dict[str, pa.Table], list[dict]]:
    """Every table of `tables` that SCRUBBED names, scrubbed; audit rows carry `table_name`."""
    out, audit = dict(tables), []
    for name, (fields, id_column) in SCRUBBED.items():
        if name in out and out[name].num_rows:
            out[name], found = scrub_table(out[name], fields, id_column)
            audit += [{**a, "table_name": name} for a in found]
    return out, audit


@dataclass(frozen=True)
class Finding:
    kind: str
    count: int


def _redact(kind: str) -> str:
    return f"<REDACTED:{kind}>"


def _splice(m: re.Match, group: int, replacement: str) -> str:
    """The match's text with one group replaced."""
    whole, offset = m.group(0), m.start(0)
    return whole[: m.start(group) - offset] + replacement + whole[m.end(group) - offset:]


def _substitute(text: str, kind: str, regex: re.Pattern, group: int, found: Counter) -> str:
    """One rule applied to `text`; what it redacts counted in `found`."""
    def replace(m: re.Match) -> str:
        secret = m.group(group)
        if not secret or secret.startswith("<REDACTED"):
            return m.group(0)
        found[kind] += 1
        return _splice(m, group, _redact(kind))

    return regex.sub(replace, text)


def _cookie_lists(text: str, found: Counter) -> str:
    """Every value of the HAR cookie lists in `text` redacted (the last rule, run after the others)."""
    def cookie_list(m: re.Match) -> str:
        def one(v: re.Match) -> str:
            if not v.group(1) or v.group(1).startswith("<REDACTED"):
                return v.group(0)
            found["cookie"] += 1
            return _splice(v, 1, _redact("cookie"))

        return _splice(m, 1, _COOKIE_VALUE.sub(one, m.group(1)))

    return _HAR_COOKIES.sub(cookie_list, text) if '"cookies"' in text else text


def scrub_text(text: str | None) -> tuple[str | None, Counter]:
    """(text with secrets replaced, Counter kind -> how many). Text without secrets comes back unchanged."""
    found: Counter = Counter()
    if not text:
        return text, found
    lowered = text.lower()
    for kind, regex, group, needles, _ in _RULES:
        if any(n in lowered for n in needles):
            text = _substitute(text, kind, regex, group, found)
    return _cookie_lists(text, found), found


def scrub_texts(texts: list[str | None]) -> list[Counter]:
    """`scrub_text` of many texts at once, the same results (`texts` rewritten in place, a Counter each), one
    rule at a time over all of them, a rule's Python regex run only on the texts RE2 finds its shape in (its
    pattern, maybe widened: `_re2`) as they stand after the rules before it. The regexes that try every
    position (the header line, URL password and `.env` ones, which HAR entries, naming cookies and URLs, all
    passed the needles of) were half of a HAR's ingest; RE2 reads hundreds of MB/s."""
    found = [Counter() for _ in texts]
    lowered = [text.lower() if text else "" for text in texts]
    # the texts as they stand (None after a rule changed one); large offsets: a column of any size
    current = pa.array(texts, pa.large_string())
    for (first, last), run_screen in zip(_RUNS, _RUN_SCREENS):
        # a text the run's screen misses stays as it is through the run: none of its rules can match it
        rows = _matching(current, run_screen)
        held = current.take(pa.array(rows, pa.int64()))
        for kind, regex, group, needles, screen in _RULES[first:last]:
            if held is None:
                current = pa.array(texts, pa.large_string())
                held = current.take(pa.array(rows, pa.int64()))
            for j in _matching(held, screen):
                i = rows[j]
                if any(n in lowered[i] for n in needles):
                    text = _substitute(texts[i], kind, regex, group, found[i])
                    if text != texts[i]:
                        texts[i], current, held = text, None, None
        if current is None:
            current = pa.array(texts, pa.large_string())
    for i, text in enumerate(texts):
        if text:
            texts[i] = _cookie_lists(text, found[i])
    return found


def _matching(texts: pa.Array, screen: str) -> list[int]:
    """Indices of the texts RE2 finds `screen` in."""
    return pc.indices_nonzero(pc.fill_null(pc.match_substring_regex(texts, screen), False)).to_pylist()


def scrub_array(values: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, dict[int, Counter]]:
    """Scrub a string column. Returns the new column and {row index: Counter(kind -> count)} for the rows
    where something was found."""
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    hits = pc.fill_null(pc.match_substring_regex(values, TRIGGERS), False)
    rows = pc.indices_nonzero(hits).to_pylist()
    if not rows:
        return values, {}
    audit: dict[int, Counter] = {}
    changed, replacements = [], []
    # only the screened rows become Python strings: the whole column's did (~4 % of an ingest when a view
    # tree column of a task had one row with a password field); and each distinct text once (a screen's view
    # tree is in every step that shows it, an episode's env in each of its rows): scrubbing is a function of
    # the text alone
    screened = pc.dictionary_encode(values.take(pa.array(rows, pa.int64())))
    texts = screened.dictionary.to_pylist()
    founds = scrub_texts(texts)
    for i, k in zip(rows, screened.indices.to_numpy().tolist()):
        if founds[k]:
            changed.append(i)
            replacements.append(texts[k])
            audit[i] = founds[k]
    if not audit:
        return values, {}
    mask = np.zeros(len(values), dtype=bool)
    mask[changed] = True
    return pc.replace_with_mask(values, pa.array(mask), pa.array(replacements, type=values.type)), audit


def scrub_table(table: pa.Table, fields: list[str], id_column: str) -> tuple[pa.Table, list[dict]]:
    """Scrub the string `fields` of a table ("column" or "struct.field") in place. Returns the new table and
    audit rows {record_id, field, kind, count}, record_id being the row's `id_column`."""
    audit: list[dict] = []
    ids = None
    columns: dict[str, pa.Array] = {}  # each column made one array once: a struct's fields share it
    for path in fields:
        column_name, _, child = path.partition(".")
        if column_name not in table.column_names:
            continue
        if column_name not in columns:
            columns[column_name] = _one_array(table.column(column_name))
        column = columns[column_name]
        if child:
            if len(column) == 0 or column.type.get_field_index(child) < 0:
                continue
            values = column.field(child)
        else:
            values = column
        new_values, found = scrub_array(values)
        if not found:
            continue
        if ids is None:
            ids = table.column(id_column).to_pylist()
        for row, counter in sorted(found.items()):
            audit += [{"record_id": ids[row], "field": path, "kind": kind, "count": n}
                      for kind, n in sorted(counter.items())]
        if child:
            arrays = [new_values if f.name == child else column.field(f.name) for f in column.type]
            new_values = pa.StructArray.from_arrays(arrays, fields=list(column.type), mask=column.is_null())
        table = table.set_column(table.column_names.index(column_name), column_name, new_values)
        columns[column_name] = new_values  # the next field of this struct is scrubbed on top of this one
    return table, audit


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    """The column as one array: its only chunk as it is (combine_chunks copies even one chunk, and the view
    trees of a task are most of its bytes), else its chunks concatenated."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
