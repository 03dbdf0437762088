import json
from pathlib import Path

import pyarrow as pa

from transforms.scrub import scrub_table, scrub_text

# the bundled copies (Apache-2.0, samples/*/PROVENANCE.md): the checkout always has them, wherever it lies
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
HAR = SAMPLES / "browser" / "har" / "har-redirect.har"
CAST = SAMPLES / "ubuntu" / "asciicast" / "markers-input.cast"

# Planted secrets: shaped like the real thing, never real.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
OPENAI = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe"
AWS_ID, AWS_SECRET = "AKIA" + "Q3EXAMPLE7KEY2ID", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----"
SECRETS = [GITHUB, OPENAI, AWS_ID, AWS_SECRET, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU=", "sessid-77f1c2"]


def _planted_har() -> str:
    har = json.loads(HAR.read_text())
    request = har["log"]["entries"][0]["request"]
    request["headers"].append({"name": "Authorization", "value": f"Bearer {GITHUB}"})
    request["headers"].append({"name": "Cookie", "value": "sessionid=sessid-77f1c2; theme=dark"})
    request["url"] += f"?api_key={OPENAI}"
    return json.dumps(har, indent=2)


def test_secrets_planted_in_a_real_har_are_scrubbed_and_audited():
    text = _planted_har()
    out, found = scrub_text(text)
    assert not any(s in out for s in SECRETS)
    har = json.loads(out)  # still valid HAR, headers keep their names
    headers = {h["name"]: h["value"] for h in har["log"]["entries"][0]["request"]["headers"]}
    assert headers["Authorization"] == "<REDACTED:http_credential>"
    assert headers["Cookie"] == "<REDACTED:http_credential>"
    assert headers[":authority"] == "theverge.com"  # ordinary headers untouched
    assert har["log"]["entries"][0]["request"]["url"] == "https://theverge.com/?api_key=<REDACTED:api_key>"
    # the recording's own cookies (vmidv1 ids in Set-Cookie and cookie lists) are credentials too
    assert found == {"http_credential": 8, "cookie": 7, "api_key": 1}


def _planted_cast() -> str:
    lines = CAST.read_text().splitlines()
    planted = [
        [2.1, "o", f"$ export OPENAI_API_KEY={OPENAI}\r\n"],
        [2.2, "o", f"$ curl -H 'Authorization: token {GITHUB}' https://api.github.com/user\r\n"],
        [2.3, "o", f"$ cat .env\r\nAWS_ACCESS_KEY_ID={AWS_ID}\r\nAWS_SECRET_ACCESS_KEY={AWS_SECRET}\r\n"],
        [2.4, "o", f"$ cat ~/.ssh/id_ed25519\r\n{PEM}\r\n"],
    ]
    return "\n".join(lines + [json.dumps(event) for event in planted]) + "\n"


def test_secrets_planted_in_a_real_terminal_cast_are_scrubbed_and_audited():
    out, found = scrub_text(_planted_cast())
    assert not any(s in out for s in SECRETS)
    events = [json.loads(line) for line in out.splitlines()[1:]]  # every event line is still JSON
    assert [e[2] for e in events[:3]] == ["start\r\n", "a", "first"]  # the recording itself is unchanged
    assert events[-4][2] == "$ export OPENAI_API_KEY=<REDACTED:api_key>\r\n"
    assert "Authorization: <REDACTED:http_credential>' https://api.github.com/user" in events[-3][2]
    assert "AWS_ACCESS_KEY_ID=<REDACTED:aws_access_key>" in events[-2][2]
    assert "AWS_SECRET_ACCESS_KEY=<REDACTED:env_secret>" in events[-2][2]
    assert events[-1][2] == "$ cat ~/.ssh/id_ed25519\r\n<REDACTED:private_key>\r\n"
    assert found == {"api_key": 1, "http_credential": 1, "aws_access_key": 1, "env_secret": 1, "private_key": 1}


def test_text_without_secrets_is_returned_unchanged():
    text = CAST.read_text() + "password: (hidden)\nPassed 12 tests; token count 5\n"
    assert scrub_text(text) == (text, {})


def test_scrub_table_rewrites_only_the_hit_fields_and_audits_by_record():
    obs = pa.array([{"kind": "terminal", "text": f"export HF_TOKEN=hf_{'x1' * 17}"},
                    {"kind": "terminal", "text": "ls"}, None],
                   pa.struct([("kind", pa.string()), ("text", pa.string())]))
    table = pa.table({"step_id": ["e:0", "e:1", "e:2"], "observation": obs})
    out, audit = scrub_table(table, ["observation.text", "observation.url"], "step_id")
    assert out.column("observation").to_pylist() == [
        {"kind": "terminal", "text": "export HF_TOKEN=<REDACTED:huggingface_token>"},
        {"kind": "terminal", "text": "ls"}, None]
    assert audit == [{"record_id": "e:0", "field": "observation.text", "kind": "huggingface_token", "count": 1}]



def test_a_text_repeated_in_many_rows_is_scrubbed_and_audited_in_each():
    # a screen's view tree is in every step that shows it: each row is rewritten and audited on its own
    secret, other = f"export HF_TOKEN=hf_{'x1' * 17}", f"curl -H 'Authorization: Bearer {'t' * 20}'"
    table = pa.table({"step_id": ["e:0", "e:1", "e:2", "e:3", "e:4"],
                      "text": [secret, "ls", secret, other, secret]})
    out, audit = scrub_table(table, ["text"], "step_id")
    redacted = "export HF_TOKEN=<REDACTED:huggingface_token>"
    assert out.column("text").to_pylist() == [
        redacted, "ls", redacted, "curl -H 'Authorization: <REDACTED:http_credential>'", redacted]
    assert [(a["record_id"], a["kind"], a["count"]) for a in audit] == [
        ("e:0", "huggingface_token", 1), ("e:2", "huggingface_token", 1), ("e:3", "http_credential", 1),
        ("e:4", "huggingface_token", 1)]

# the vectorized screen: every text a rule changes passes it; Android view trees (`"is_password": false` on
# every node) do not --------------------------------------------------------------------------------------------
EXAMPLES = [  # one per rule shape, beside the planted HAR and cast lines
    PEM, '"name": "Authorization", "value": "Bearer abc123"', '"value": "abc123", "name": "cookie"',
    '"x-api-key": "abc123"', "Proxy-Authorization: Basic dXNlcjpwYXNz", AWS_ID, GITHUB,
    "github_pat_" + "A1" * 12, OPENAI, "AIza" + "B" * 35, "xoxb-" + "1234567890-abc", "sk_live_" + "C" * 16,
    "hf_" + "D" * 30, "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlX2hlcmU", "postgres://admin:s3cr3t@db/x",
    "https://x.example/cb?access_token=abc123&x=1", "DB_PASSWORD=hunter22", "\\nAPI_TOKEN='abcdef'",
    '{"password": "hunter22"}', "client-secret: abcd1234", "auth_token=abcd1234",
]


def test_the_screen_passes_every_text_a_rule_changes():
    import pyarrow.compute as pc

    from transforms.scrub import TRIGGERS

    lines = EXAMPLES + _planted_har().splitlines() + _planted_cast().splitlines()
    changed = [line for line in lines if scrub_text(line)[1]]
    assert [e for e in EXAMPLES if not scrub_text(e)[1]] == []  # each example is one a rule changes
    screened = pc.match_substring_regex(pa.array(changed), TRIGGERS).to_pylist()
    assert [line for line, hit in zip(changed, screened) if not hit] == []


def test_android_view_trees_do_not_pass_the_screen():
    import pyarrow.compute as pc

    from transforms.scrub import TRIGGERS

    states = sorted(Path(__file__).resolve().parents[2].glob("samples/android/droidbot-run/states/*.json"))
    texts = [p.read_text() for p in states]
    assert texts and all('"is_password": false' in t for t in texts)
    assert not any(pc.match_substring_regex(pa.array(texts), TRIGGERS).to_pylist())
