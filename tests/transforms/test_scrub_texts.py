"""`scrub_texts`, the column path (one rule at a time over all texts, RE2 picking the texts a rule's regex runs
on), finds and rewrites exactly what `scrub_text` does text by text: on every bundled sample (whole and line by
line: HAR entries with cookies, terminal casts, transcripts...), on secrets planted in real files, and on texts
where one rule's redaction comes before another's."""

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from tests.transforms.test_scrub import EXAMPLES, _planted_cast, _planted_har
from transforms import scrub
from transforms.scrub import scrub_array, scrub_text, scrub_texts

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _sample_texts() -> list[str]:
    texts = []
    for path in sorted(p for p in SAMPLES.rglob("*") if p.is_file()):
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        texts += [text] + [line for line in text.splitlines() if line.strip()]
    return texts


def _mixed_texts() -> list[str]:
    """Several rules' secrets in one text, so later rules run on what earlier ones rewrote; JSON headers spaced by
    a vertical tab (a blank to Python's `\\s`, not to RE2's)."""
    joined = [sep.join(EXAMPLES) for sep in ("\n", " ", "\\n", "; ")]
    spaced = [e.replace(" ", "\v") for e in EXAMPLES if e.startswith('"')]
    return (joined + [json.dumps(t) for t in joined] + spaced + _planted_har().splitlines()
            + [_planted_har(), _planted_cast()] + _planted_cast().splitlines())


def _same_as_one_by_one(texts: list[str]) -> None:
    expected = [scrub_text(t) for t in texts]
    got = list(texts)
    found = scrub_texts(got)
    assert [(t, f) for t, f in zip(got, found)] == expected
    assert sum(bool(f) for f in found) > 0  # a test that finds nothing proves nothing


def test_the_column_path_finds_what_one_by_one_does_on_every_bundled_sample():
    texts = _sample_texts()
    assert len(texts) > 1000 and any('"cookies"' in t for t in texts)
    _same_as_one_by_one(texts)


def test_the_column_path_finds_what_one_by_one_does_when_rules_follow_each_others_redactions():
    texts = _mixed_texts() + [None, ""]
    expected = [scrub_text(t) for t in texts]
    got = list(texts)
    assert list(zip(got, scrub_texts(got))) == expected
    assert all(expected[i][1] for i in range(4))  # each joined text holds many rules' secrets
    assert scrub_text(_mixed_texts()[8])[1]  # a vertical tab is a blank to the JSON header rules


def test_each_rules_screen_passes_every_text_its_regex_matches():
    """Each rule's RE2 screen as `_re2` writes it from the rule's pattern (called here: the module builds its
    screens once, at import), and each run's screen of them: a text a screen misses keeps its secret."""
    texts = _sample_texts() + _mixed_texts()
    screens = [scrub._re2(pattern) for _, pattern, _ in scrub.RULES]
    for (kind, regex, *_), screen in zip(scrub._RULES, screens, strict=True):
        matched = [t for t in texts if regex.search(t)]
        screened = pc.match_substring_regex(pa.array(matched, pa.string()), screen).to_pylist()
        assert all(screened), (kind, [t[:200] for t, hit in zip(matched, screened) if not hit][:3])
    for (first, last), run_screen in zip(scrub._RUNS, scrub._RUN_SCREENS):
        matched = [t for t in texts if any(r.search(t) for _, r, *_ in scrub._RULES[first:last])]
        assert all(pc.match_substring_regex(pa.array(matched, pa.string()), run_screen).to_pylist())
        assert matched


def test_scrub_array_rewrites_a_har_column_as_scrub_text_does():
    har = json.loads(_planted_har())
    rows = [json.dumps(entry) for entry in har["log"]["entries"]] + ["no secret here", None]
    out, audit = scrub_array(pa.array(rows, pa.string()))
    expected = [scrub_text(r) for r in rows]
    assert out.to_pylist() == [t for t, _ in expected]
    assert audit == {i: f for i, (_, f) in enumerate(expected) if f}
    assert audit and re.search(r"<REDACTED:cookie>", out[0].as_py())
