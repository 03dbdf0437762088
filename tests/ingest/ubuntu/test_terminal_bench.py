"""Terminal-Bench trials. No real trial is bundled, so the fixture follows the harness's documented layout:
`results.json` (TrialResults), `commands.txt` (one `repr(keys)` per send_keys call), `sessions/agent.cast`
(asciicast v2 of the tmux session, output only), `panes/*.txt`."""

import datetime as dt
import json

import pytest

from ingest.ubuntu import terminal_bench

RESULTS = {
    "id": "6f1c0e3a-0000-4000-8000-000000000001", "trial_name": "hello-world.1-of-1", "task_id": "hello-world",
    "instruction": "Create a file called hello.txt with \"Hello, world!\" as the content.",
    "is_resolved": True, "failure_mode": "unset", "parser_results": {"test_hello_file_exists": "passed"},
    "recording_path": "sessions/agent.cast", "total_input_tokens": 1200, "total_output_tokens": 80,
    "trial_started_at": "2025-05-01T10:00:00.000000+00:00", "trial_ended_at": "2025-05-01T10:01:00+00:00",
    "agent_started_at": "2025-05-01T10:00:05+00:00", "agent_ended_at": "2025-05-01T10:00:40+00:00",
}
COMMANDS = "\n".join([
    "['ls -la', 'Enter']",
    "'echo \"Hello, world!\" > hello.txt\\n'",
    "['cat hello.txt', 'Enter']",
    "['C-c']",
]) + "\n"
CAST = "\n".join([
    '{"version": 2, "width": 60, "height": 6, "timestamp": 1746093605, "env": {"SHELL": "/bin/bash", "TERM": "screen"}}',
    '[0.5, "o", "root@c0ffee:/app# "]',
    '[2.0, "o", "ls -la\\r\\ntotal 0\\r\\n"]',
    '[2.1, "o", "root@c0ffee:/app# "]',
    '[4.0, "o", "echo \\"Hello, world!\\" > hello.txt\\r\\n"]',
    '[4.2, "o", "root@c0ffee:/app# "]',
    '[6.0, "o", "cat hello.txt\\r\\nHello, world!\\r\\nroot@c0ffee:/app# "]',
    '[7.0, "o", "^C\\r\\nroot@c0ffee:/app# "]',
]) + "\n"


def make_trial(root, results=RESULTS, commands=COMMANDS, cast=CAST):
    trial = root / "runs" / "2025-05-01__10-00-00" / "hello-world" / "hello-world.1-of-1"
    (trial / "sessions").mkdir(parents=True)
    (trial / "panes").mkdir()
    (trial / "results.json").write_text(json.dumps(results))
    (trial / "commands.txt").write_text(commands) if isinstance(commands, str) else (trial / "commands.txt").write_bytes(commands)
    if cast is not None:
        (trial / "sessions" / "agent.cast").write_text(cast)
    (trial / "panes" / "pre-agent.txt").write_text("root@c0ffee:/app#\n")
    (trial / "panes" / "post-agent.txt").write_text("root@c0ffee:/app# cat hello.txt\nHello, world!\nroot@c0ffee:/app#\n")
    (trial / "panes" / "post-test.txt").write_text("1 passed\n")
    return root / "runs"


def test_trial_becomes_one_episode_of_keystroke_actions(tmp_path, run, query):
    result = run("ingest-ubuntu", [make_trial(tmp_path)])
    assert result.status == "success" and result.episodes == 1 and result.steps == 4 and result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    first = steps[0]["action"]
    assert first["kind"] == "keystrokes" and first["text"] == "ls -la\n" and first["keys"] == ["ls -la", "Enter"]
    assert json.loads(first["arguments"]) == {"keystrokes": "ls -la\n", "duration": None}
    assert first["raw"] == "['ls -la', 'Enter']"
    assert steps[1]["action"]["text"] == 'echo "Hello, world!" > hello.txt\n'  # a bare string repr
    assert steps[3]["action"]["text"] == "\x03"  # tmux C-c is the byte the terminal receives
    # observations: the cast's screen just before each command's echo
    assert steps[0]["observation"]["text"] == "root@c0ffee:/app#"
    assert steps[2]["observation"]["text"] == (
        "root@c0ffee:/app# ls -la\ntotal 0\nroot@c0ffee:/app# echo \"Hello, world!\" > hello.txt\nroot@c0ffee:/app#")
    start = dt.datetime(2025, 5, 1, 10, 0, 5, tzinfo=dt.timezone.utc)
    assert steps[0]["timestamp"] == start + dt.timedelta(seconds=2)
    assert steps[3]["final_observation"]["text"].endswith("Hello, world!\nroot@c0ffee:/app#")
    assert steps[3]["is_last"] and steps[3]["is_terminal"]
    ep = query("SELECT * FROM episodes")[0]
    assert ep["source_format"] == "terminal_bench" and ep["domain"] == "terminal"
    assert ep["outcome"] == "success" and ep["reward"] == 1.0 and ep["task"].startswith("Create a file")
    env = json.loads(ep["env"])
    assert env["task_id"] == "hello-world" and env["tests"] == {"test_hello_file_exists": "passed"}
    assert env["trial_started_at"] == "2025-05-01T10:00:00+00:00"


def test_agent_timeout_is_truncated_failure(tmp_path, run, query):
    results = {**RESULTS, "is_resolved": False, "failure_mode": "agent_timeout"}
    run("ingest-ubuntu", [make_trial(tmp_path, results=results, cast=None)])
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]
    # without a cast, step 0 sees the pane before the agent and the rest have no observation
    assert steps[0]["observation"]["text"] == "root@c0ffee:/app#"
    assert steps[1]["observation"]["kind"] == "none" and steps[1]["timestamp"] is None
    ep = query("SELECT outcome, reward FROM episodes")[0]
    assert ep == {"outcome": "failure", "reward": 0.0}


def test_commands_are_parsed_as_literals_never_run(tmp_path, run, query):
    commands = COMMANDS + "__import__('os').system('touch PWNED')\n{'not': 'keys'}\n"
    result = run("ingest-ubuntu", [make_trial(tmp_path, commands=commands)])
    assert result.steps == 4 and result.quarantined == 2
    rows = query("SELECT rule, line, reason FROM quarantine ORDER BY line")
    assert [(r["rule"], r["line"]) for r in rows] == [("parse_error", 5), ("bad_record", 6)]
    assert rows[1]["reason"] == "commands.txt line 6: expected a list of strings, got dict"
    assert not (tmp_path / "PWNED").exists()


def test_non_utf8_commands_file_is_quarantined(tmp_path, run, query):
    result = run("ingest-ubuntu", [make_trial(tmp_path, commands=b"['caf\xe9', 'Enter']\n")])
    assert result.episodes == 0 and result.quarantined == 1
    assert query("SELECT reason FROM quarantine")[0]["reason"] == "commands.txt: not valid UTF-8 at byte 5"


@pytest.mark.parametrize("keys, typed", [
    (["vim x", "Enter", "i", "hi", "Escape", ":wq", "Enter"], "vim x\nihi\x1b:wq\n"),
    (["C-d"], "\x04"), (["Up", "Tab", "M-b"], "\x1b[A\t\x1bb"),
])
def test_tmux_key_names_become_terminal_input(keys, typed):
    assert terminal_bench.keystrokes(keys) == typed


def test_units_are_trial_directories():
    files = ["/r/t/1/results.json", "/r/t/1/commands.txt", "/r/t/1/sessions/agent.cast", "/r/results.json"]
    assert terminal_bench.units(files, head=None) == ["/r/t/1"]
