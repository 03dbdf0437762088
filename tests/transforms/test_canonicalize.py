import hashlib
import re
import string
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.compute as pc

from ingest import registry
from ingest.arrow import TableBuilder
from ingest.source import Source
from schemas import v1
from tests.transforms.dedup.copies import DROIDBOT_RUN, edited_copy, volatile_copy
from transforms.canonicalize import (action_key_column, canonicalize_array, canonicalize_text, observation_key_column,
                                     step_text_column)

# lines as they appear in real traces: a SWE-agent container prompt, DroidBot tags and state hashes, an
# HTTP date, syslog, Python reprs, a dev server log
REAL = [
    "root@ad092d3df69c:/testbed# python /tmp/tmpk2x9_a1b/reproduce.py",
    "event_2021-12-06_204505.json: TouchEvent(state=548af0338782a0a419f95f42b1485549, view=7ca778feba2fbc68)",
    "date: Thu, 16 Jun 2022 21:41:24 GMT",
    "Dec  6 20:44:49 host sshd[4312]: Accepted publickey",
    "<Session object at 0x7f3a9c2b1d90> id=3f2b8c1e-8a4d-4f6a-9c1e-2b7d5e8f9a01",
    "[2] 48213",
    "Serving on http://127.0.0.1:8000 (pid 4312, port 8000) in 0.53s, session_id=AbC123xyz987",
]


def test_volatile_values_become_typed_tokens():
    out = [canonicalize_text(line) for line in REAL]
    assert out == [
        "root@<HOST>:/testbed# python <TMPPATH>",
        "event_<TIMESTAMP>.json: TouchEvent(state=<HEX>, view=<HEX>)",
        "date: <TIMESTAMP>",
        "<TIMESTAMP> host sshd[<PID>]: Accepted publickey",
        "<Session object at <HEX>> id=<UUID>",
        "[2] <PID>",
        "Serving on http://<IP>:<PORT> (pid <PID>, port <PORT>) in <DURATION>, session_id=<SESSION>",
    ]


def test_ordinary_text_is_left_alone():
    # words made of hex letters, short hashes, plain numbers and version strings are content, not noise
    text = "facade deadline 1c2844 12345678 v1.2.3 python3.11 Select all 5 seconds"
    assert canonicalize_text(text) == text


def test_vectorized_and_single_string_agree():
    values = [*REAL, None, "", "résumé 2021-12-06 中文 0xdeadbeef"]
    assert canonicalize_array(pa.array(values)).to_pylist() == [canonicalize_text(v) for v in values]


def test_long_hex_rule_masks_exactly_hex_tokens_of_eight_or_more_with_a_letter():
    # the rule is written without look-ahead (RE2 has none) as one alternative per position of the first
    # letter: every length and letter position up to 12 characters against the plain definition
    from transforms.canonicalize import _long_hex_with_letter

    tokens = []
    for size in range(1, 13):
        digits = "".join(str(i % 10) for i in range(size))
        tokens.append(digits)
        for pos in range(size):
            for letter in "aF":
                tokens.append(digits[:pos] + letter + digits[pos + 1:])
        tokens.append(digits[:-1] + "g")  # not hex
    pattern = _long_hex_with_letter()
    python = [re.fullmatch(pattern, t, re.ASCII) is not None for t in tokens]
    expected = [len(t) >= 8 and all(c in string.hexdigits for c in t) and any(c.isalpha() for c in t)
                for t in tokens]
    assert python == expected
    # RE2 (canonicalize_array) reads it the same; inside text only whole tokens count
    assert pc.match_substring_regex(pa.array([f"={t}," for t in tokens]), pattern).to_pylist() == expected
    assert re.search(pattern, "id_0123456789a") is None and re.search(pattern, "x 0123456a9 y")


def _actions(rows: list[dict]) -> pa.Array:
    return pa.array(rows, v1.ACTION)


def _observations(rows: list[dict]) -> pa.Array:
    return pa.array(rows, v1.OBSERVATION)


def test_an_action_key_is_its_key_fields_one_a_line_in_a_fixed_order():
    actions = _actions([
        {"kind": "drag", "x": 0.12341, "y": 0.5, "x2": 1.0, "y2": 0.0004, "text": "hi", "keys": ["ctrl", "c"],
         "element": "#ok", "direction": "up", "tool_name": "t", "arguments": '{"a": 1}', "code": "print()",
         "duration_s": 2.5, "raw": "{...}"},
        {"kind": "tap", "x": 0.12349, "y": 0.5, "duration_s": 0.1, "raw": "other"},  # jitter below 1e-3
        {"kind": "tap", "x": 0.1236, "y": 0.5},
        {"kind": "wait", "text": "at 2021-12-06 20:44:49 pid 4312", "keys": []},
        {}])
    keys = action_key_column(actions).to_pylist()
    assert keys[0] == "drag\n0.123\n0.5\n1\n0\nhi\nctrl,c\n#ok\nup\nt\n{\"a\": 1}\nprint()"
    # duration and the raw record are not part of it; a pixel of jitter is the same tap, more is not
    assert keys[1] == "tap\n0.123\n0.5" + "\n" * 9
    assert keys[2] == "tap\n0.124\n0.5" + "\n" * 9
    assert keys[3] == "wait\n\n\n\n\nat <TIMESTAMP> pid <PID>" + "\n" * 6
    assert keys[4] == "\n" * 11
    # a column read from parts (chunked) gives the same keys
    assert action_key_column(pa.chunked_array([actions[:2], actions[2:]])).to_pylist() == keys


def test_an_observation_key_holds_the_screenshot_only_when_there_is_no_text():
    observations = _observations([
        {"kind": "web", "text": "Cart (2)", "url": "http://127.0.0.1:8000/cart", "title": "Shop", "exit_code": 0,
         "is_error": False, "screenshot": "sha256:aa", "ui_tree": "<tree/>", "width": 1080, "height": 2280},
        {"kind": "screen", "text": "", "screenshot": "sha256:bb"},
        {"kind": "screen", "screenshot": "sha256:cc", "exit_code": 1, "is_error": True},
        {"kind": "terminal", "text": "done in 0.53s"},
        {"kind": "screen", "text": "Home", "screenshot": "sha256:dd"},  # text, no url: the text decides
        {"kind": "web", "url": "http://a", "screenshot": "sha256:ee"}])  # a url, no text: the screenshot counts
    keys = observation_key_column(observations).to_pylist()
    assert keys == ["web\nCart (2)\nhttp://<IP>:<PORT>/cart\nShop\n0\nfalse\n",
                    "screen\n\n\n\n\n\nsha256:bb",
                    "screen\n\n\n\n1\ntrue\nsha256:cc",
                    "terminal\ndone in <DURATION>\n\n\n\n\n",
                    "screen\nHome\n\n\n\n\n",
                    "web\n\nhttp://a\n\n\n\nsha256:ee"]
    assert observation_key_column(pa.chunked_array([observations[:1], observations[1:]])).to_pylist() == keys


def test_a_steps_text_is_its_action_then_what_was_seen_text_else_url_else_title_else_kind():
    actions = _actions([{"kind": "type", "text": "hello", "keys": ["a"]}, {"kind": "back"},
                        {"kind": "navigate", "text": "x"}, {"kind": "tap", "x": 0.5}, {"kind": "done"}])
    observations = _observations([
        {"kind": "web", "text": "Page", "url": "http://a", "title": "T"},
        {"kind": "web", "text": "", "url": "http://b", "title": "T"},
        {"kind": "web", "title": "Only a title"},
        {"kind": "screen"},
        {}])
    # the twelve key fields (kind, x, y, x2, y2, text, keys, ...) joined by a space, empty ones too
    action = [" ".join(["type", "", "", "", "", "hello", "a", *[""] * 5]), "back" + " " * 11,
              " ".join(["navigate", "", "", "", "", "x", *[""] * 6]), "tap 0.5" + " " * 10, "done" + " " * 11]
    assert step_text_column(actions, observations).to_pylist() == [
        f"{action[0]}\nPage", f"{action[1]}\nhttp://b", f"{action[2]}\nOnly a title", f"{action[3]}\nscreen",
        f"{action[4]}\n"]
    assert step_text_column(pa.chunked_array([actions]), pa.chunked_array([observations[:2], observations[2:]])
                            ).to_pylist() == step_text_column(actions, observations).to_pylist()


def _droidbot_steps(run: Path) -> pa.Table:
    """The steps table of a DroidBot run as ingest builds it (its reader, the table build), without a lake."""
    reader = registry.load("droidbot")
    fs, _ = fsspec.core.url_to_fs(str(run))
    source = Source(fs=fs, path=str(run), uri=run.name,
                    put_blob=lambda data, media_type, source_uri: f"sha256:{hashlib.sha256(data).hexdigest()}")
    builder = TableBuilder("run")
    for episode in reader.read(source):
        builder.add_episode(episode, source_format="droidbot", source_uri=run.name, source_sha256=source.sha256(),
                            ingestor_version=reader.VERSION)
    return builder.tables()["steps"]


def test_a_rerun_differing_in_volatile_values_only_has_the_same_keys_step_for_step(tmp_path):
    run, rerun = _droidbot_steps(DROIDBOT_RUN), _droidbot_steps(volatile_copy(tmp_path / "rerun"))
    edited = _droidbot_steps(edited_copy(tmp_path / "edited"))
    raw = [r.column("action").combine_chunks().field("raw").to_pylist() for r in (run, rerun)]
    assert sum(a != b for a, b in zip(*raw)) >= 10  # other timestamps and state hashes in the events
    for column, key in (("action", action_key_column), ("observation", observation_key_column)):
        assert key(run.column(column)).to_pylist() == key(rerun.column(column)).to_pylist()
    assert (step_text_column(run.column("action"), run.column("observation")).to_pylist()
            == step_text_column(rerun.column("action"), rerun.column("observation")).to_pylist())
    # the edited copy's BACK that became HOME is another action key at that step only
    keys, edited_keys = (action_key_column(t.column("action")).to_pylist() for t in (run, edited))
    changed = [i for i, (a, b) in enumerate(zip(keys, edited_keys)) if a != b]
    assert len(keys) == len(edited_keys) == 12 and len(changed) == 2
    assert any(keys[i].startswith("back\n") and edited_keys[i].startswith("home\n") for i in changed)
