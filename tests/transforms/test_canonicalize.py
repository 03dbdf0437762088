import pyarrow as pa

from transforms.canonicalize import canonicalize_array, canonicalize_text

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
