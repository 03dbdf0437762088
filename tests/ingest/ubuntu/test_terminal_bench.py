"""Terminal-Bench trials. The first fixtures follow the harness's layout: `results.json` (TrialResults),
`commands.txt` (one `repr(keys)` per send_keys call), `sessions/agent.cast` (asciicast v2 of the tmux
session), `panes/*.txt`. The real trial in ../shared/samples/ubuntu (no license: read there, never copied
into the repository) is checked against a golden fingerprint; those tests skip when it is absent."""

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
    # the final observation is the cast's screen when the agent stopped (its C-c echoed, a new prompt), no
    # longer panes/post-agent.txt: in a real trial that pane is the session's whole scrollback, not a screen
    assert steps[3]["final_observation"]["text"].endswith("Hello, world!\nroot@c0ffee:/app# ^C\nroot@c0ffee:/app#")
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


# A trial in the harness's real shape: commands.txt holds the harness's keystrokes around the agent's, and
# agent.cast (`asciinema rec --stdin`) has the input events, the harness's blocking suffix included.
HARNESS_COMMANDS = "\n".join([
    "['asciinema rec --stdin /logs/agent.cast', 'Enter']",
    "['clear', 'Enter']",
    "['ls', 'Enter']",
    "['cat notes.txt', 'Enter']",
    "['C-c']",
    "['asciinema rec --stdin /logs/tests.cast', 'Enter']",
    "['clear', 'Enter']",
    "['bash ', '/tests/run-tests.sh', 'Enter']",
    "['C-d']",
    "['C-d']",
]) + "\n"
HARNESS_CAST = "\n".join([
    '{"version": 2, "width": 40, "height": 6, "timestamp": 1746093600}',
    '[0.1, "o", "$ "]',
    '[0.5, "i", "clear; tmux wait -S done\\r"]',
    '[0.5, "o", "clear; tmux wait -S done\\r\\n\\u001b[H\\u001b[J$ "]',
    '[1.0, "i", "ls\\r"]',
    '[1.0, "o", "ls\\r\\nnotes.txt\\r\\n$ "]',
    '[2.0, "i", "cat notes.txt\\r"]',
    '[2.0, "o", "cat notes.txt\\r\\nhello\\r\\n$ "]',
    '[3.0, "i", "\\u0003"]',
    '[3.0, "o", "^C\\r\\n$ "]',
    '[9.0, "i", "\\u0004"]',
    '[9.0, "o", "exit\\r\\n"]',
]) + "\n"


def test_harness_keystrokes_are_not_steps(tmp_path, run, query):
    result = run("ingest-ubuntu", [make_trial(tmp_path, commands=HARNESS_COMMANDS, cast=HARNESS_CAST)])
    assert result.episodes == 1 and result.steps == 3 and result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["text"] for s in steps] == ["ls\n", "cat notes.txt\n", "\x03"]
    # each observation is the screen just before the step's input event; the harness's `clear` came before
    assert [s["observation"]["text"] for s in steps] == [
        "$", "$ ls\nnotes.txt\n$", "$ ls\nnotes.txt\n$ cat notes.txt\nhello\n$"]
    start = dt.datetime(2025, 5, 1, 10, 0, 0, tzinfo=dt.timezone.utc)
    assert [s["timestamp"] for s in steps] == [start + dt.timedelta(seconds=t) for t in (1, 2, 3)]
    # the final observation is the screen when the harness typed C-d, not a step of its own
    last = steps[-1]
    assert last["final_observation"]["text"] == "$ ls\nnotes.txt\n$ cat notes.txt\nhello\n$ ^C\n$"
    assert last["is_last"] and last["is_terminal"]
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert env["agent_kind"] == "tmux"
    assert [(c["line"], c["phase"]) for c in env["harness_commands"]] == [
        (1, "record"), (2, "record"), (6, "tests"), (7, "tests"), (8, "tests"), (9, "stop"), (10, "stop")]
    # the test run is kept apart: its results and screen, not steps
    assert env["tests"] == {"test_hello_file_exists": "passed"} and env["test_screen"] == "1 passed"


def _mini_output(turns: list[tuple[int, str, str | None]], banner=True) -> list[str]:
    """Console output of mini-swe-agent as it prints through Rich: (step, reply, the User: message after it)."""
    rule = "\x1b[92m" + "\u2500" * 60 + "\x1b[0m\r\n"
    spinner = "\r\x1b[2K\x1b[32m\u280b\x1b[0m Waiting for the LM to respond..."
    out = ["\U0001f44b This is \x1b[1;32mmini-swe-agent\x1b[0m version \x1b[1;32m1.9.0\x1b[0m.\r\n" if banner
           else "agent 0.1 starting\r\n",
           "\r\n\x1b[1;35mSystem\x1b[0m:\r\nYou are a helpful assistant.\r\n\r\n\x1b[1;32mUser\x1b[0m:\r\n"
           "Please solve this issue: say hi\r\n" + rule + "\x1b[?25l"]
    for number, reply, message in turns:
        out.append(spinner)
        out.append(f"\r\x1b[2K\r\n\x1b[1;31mmini-swe-agent\x1b[0m\x1b[31m (step \x1b[0m\x1b[1;31m{number}\x1b[0m"
                   f"\x1b[31m, \x1b[0m\x1b[1;31m$0.0{number}\x1b[0m\x1b[31m):\x1b[0m\r\n" + spinner)
        out.append("\r\x1b[2K" + reply.replace("\n", "\r\n") + "\r\n" + spinner)
        out.append(spinner + "\r\n\x1b[?25h\r\x1b[1A\x1b[2K")
        out.append("\r\n\x1b[1;32mUser\x1b[0m:\r\n")
        if message is not None:
            out.append(message.replace("\n", "\r\n") + "\r\n" + rule)
    out.append("\r\nSaved trajectory to '/root/.config/mini-swe-agent/last_mini_run.traj.json'\r\n$ ")
    return out


INSTALLED_COMMANDS = "\n".join([
    "['asciinema rec --stdin /logs/agent.cast', 'Enter']",
    "['clear', 'Enter']",
    "['source /installed-agent/setup-env.sh', 'Enter']",
    "[\"source /installed-agent/install-agent.sh && echo 'INSTALL_SUCCESS'\", 'Enter']",
    "[\"mini -m anthropic/claude-sonnet-4-0 -t 'Say hi' -y --exit-immediately\", 'Enter']",
    "['asciinema rec --stdin /logs/tests.cast', 'Enter']",
    "['clear', 'Enter']",
    "['bash ', '/tests/run-tests.sh', 'Enter']",
    "['C-d']",
    "['C-d']",
]) + "\n"
# Rich broke this command at the 60-column width before `done`, keeping the space before the break
LONG = "echo 'hi there' > hello.txt && grep -c hi hello.txt && echo done"
WRAPPED = "echo 'hi there' > hello.txt && grep -c hi hello.txt && echo \ndone"
MINI_TURNS = [
    (1, "THOUGHT: Write the greeting, then count it.\n\n```bash\n" + WRAPPED + "\n```",
     "<returncode>0</returncode>\n<output>\n1\ndone\n</output>"),
    (2, "I am done, I think.", "Please always provide EXACTLY ONE action in triple backticks, found 0 actions."),
    (4, "THOUGHT: Submit.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```", None),
]


LAUNCH = "mini -m anthropic/claude-sonnet-4-0 -t 'Say hi' -y --exit-immediately"


def _installed_cast(output: list[str]) -> str:
    events = [[0.1, "o", "$ "], [0.5, "i", "clear; tmux wait -S done\r"], [0.5, "o", "clear\r\n\x1b[H\x1b[J$ "],
              [1.0, "i", "source /installed-agent/setup-env.sh; tmux wait -S done\r"],
              [1.5, "i", "source /installed-agent/install-agent.sh && echo 'INSTALL_SUCCESS'; tmux wait -S done\r"],
              [2.0, "o", "INSTALL_SUCCESS\r\n$ "],
              [3.0, "i", LAUNCH + "; tmux wait -S done\r"], [3.0, "o", LAUNCH + "; tmux wait -S done\r\n"]]
    events += [[4.0 + i, "o", chunk] for i, chunk in enumerate(output)]
    events.append([60.0, "i", "\x04"])
    events.append([60.0, "o", "exit\r\n"])
    header = {"version": 2, "width": 60, "height": 8, "timestamp": 1746093600}
    return "\n".join(json.dumps(e) for e in [header, *events]) + "\n"


def test_installed_agent_steps_come_from_its_printed_turns(tmp_path, run, query):
    trial = make_trial(tmp_path, commands=INSTALLED_COMMANDS, cast=_installed_cast(_mini_output(MINI_TURNS)))
    result = run("ingest-ubuntu", [trial])
    assert result.episodes == 1 and result.steps == 3 and result.quarantined == 1
    gap = query("SELECT * FROM quarantine")[0]  # step 3 is missing from the printed turns
    assert gap["rule"] == "bad_record" and gap["line"] is not None
    assert gap["reason"].startswith(f"sessions/agent.cast line {gap['line']}: field step: mini-swe-agent step 4")
    steps = query("SELECT * FROM steps ORDER BY step_index")
    first, second, last = steps
    # the command as it ran: Rich's line break undone
    assert first["action"]["kind"] == "command" and first["action"]["code"] == LONG
    assert first["reasoning"] == "Write the greeting, then count it."
    assert json.loads(first["action"]["raw"])["printed"][-4:] == [WRAPPED.split("\n")[0], "done", "```", ""]
    # observation 0: the task message the agent read; then what its last command returned
    assert first["observation"]["kind"] == "text" and first["observation"]["text"] == "Please solve this issue: say hi"
    assert second["observation"] == {**second["observation"], "kind": "tool_result", "exit_code": 0,
                                     "text": "<returncode>0</returncode>\n<output>\n1\ndone\n</output>"}
    # a turn without exactly one bash block is a message; mini-swe-agent's format error is what it read next
    assert second["action"]["kind"] == "message" and second["action"]["text"] == "I am done, I think."
    assert last["observation"]["text"].startswith("Please always provide EXACTLY ONE action")
    assert last["action"]["code"] == "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    assert first["timestamp"] == dt.datetime(2025, 5, 1, 10, 0, 8, tzinfo=dt.timezone.utc)  # when the reply printed
    # nothing followed the submission: the final observation is the session's screen when the harness typed C-d
    assert last["final_observation"]["kind"] == "terminal"
    screen = last["final_observation"]["text"]  # 60 columns: the long line wraps on the screen
    assert "\nSaved trajectory to '/root/" in screen and screen.endswith("run.traj.json'\n$")
    assert (last["final_observation"]["width"], last["final_observation"]["height"]) == (60, 8)
    assert last["is_last"] and last["is_terminal"]  # submitted
    ep = query("SELECT * FROM episodes")[0]
    assert ep["agent"] == "mini-swe-agent" and ep["num_steps"] == 3
    env = json.loads(ep["env"])
    assert env["agent_kind"] == "installed" and env["model"] == "anthropic/claude-sonnet-4-0"
    assert env["agent_version"] == "1.9.0" and env["cost_usd"] == 0.04
    assert env["system_prompt"] == "You are a helpful assistant."
    assert [c["phase"] for c in env["harness_commands"]] == [
        "record", "record", "install", "install", "launch", "tests", "tests", "tests", "stop", "stop"]


def test_installed_agent_that_did_not_submit_is_truncated(tmp_path, run, query):
    turns = MINI_TURNS[:1]
    result = run("ingest-ubuntu", [make_trial(tmp_path, commands=INSTALLED_COMMANDS,
                                              cast=_installed_cast(_mini_output(turns)))])
    assert result.episodes == 1 and result.steps == 1 and result.quarantined == 0
    step = query("SELECT * FROM steps")[0]
    assert step["is_last"] and not step["is_terminal"]
    # what the agent read after its last command is the final observation
    assert step["final_observation"]["kind"] == "tool_result" and step["final_observation"]["exit_code"] == 0


def test_installed_agent_read_from_the_log_without_a_cast(tmp_path, run, query):
    trial = make_trial(tmp_path, commands=INSTALLED_COMMANDS, cast=None)
    log = next(trial.rglob("sessions"))
    (log / "agent.log").write_text("".join(_mini_output(MINI_TURNS)))
    result = run("ingest-ubuntu", [trial])
    assert result.episodes == 1 and result.steps == 3
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert steps[0]["action"]["code"] == LONG and steps[0]["timestamp"] is None  # a log has no times


def test_installed_agent_of_unknown_output_is_quarantined(tmp_path, run, query):
    cast = _installed_cast(_mini_output(MINI_TURNS, banner=False))
    result = run("ingest-ubuntu", [make_trial(tmp_path, commands=INSTALLED_COMMANDS, cast=cast)])
    assert result.episodes == 0 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "agent_output_unknown"
    assert row["reason"].startswith("sessions/agent.cast: the installed agent started by commands.txt line 5 "
                                    "(\"mini -m anthropic/claude-sonnet-4-0 -t 'Say hi'")


def test_bad_results_field_is_quarantined_and_the_trial_read(tmp_path, run, query):
    results = {**RESULTS, "is_resolved": "yes", "trial_started_at": "yesterday"}
    result = run("ingest-ubuntu", [make_trial(tmp_path, results=results)])
    assert result.episodes == 1 and result.quarantined == 2
    reasons = sorted(r["reason"] for r in query("SELECT reason FROM quarantine"))
    assert reasons == ["results.json: field is_resolved: expected true, false or null, got str",
                       "results.json: field trial_started_at: expected an ISO-8601 time with a zone, got str"]
    assert query("SELECT outcome, reward FROM episodes")[0] == {"outcome": "unknown", "reward": None}


def test_phases_of_commands():
    texts = [terminal_bench.keystrokes(keys) for keys in (
        ["asciinema rec --stdin /logs/agent.cast", "Enter"], ["clear", "Enter"], ["clear", "Enter"],
        ["bash /tests/run-tests.sh", "Enter"], ["C-d"])]
    # the agent's own `clear` and even its own run of the tests stay the agent's: only the harness's last
    # run-tests line starts the test phase
    assert terminal_bench._phases(texts) == ["record", "record", "agent", "tests", "stop"]
    assert terminal_bench._phases([terminal_bench.keystrokes(["ls", "Enter"]), "\x04"]) == ["agent", "stop"]


@pytest.mark.parametrize("printed, width, text", [
    (["THOUGHT: a b ", "cdef"], 14, ["THOUGHT: a b cdef"]),  # the space before the break is kept
    (["sed 's/a, b/'", "x"], 13, ["sed 's/a, b/' x"]),  # a full line: Rich cropped the space
    (["abcdefgh", "ij"], 8, ["abcdefghij"]),  # one word folded at the width
    (["short line", "next"], 40, ["short line", "next"]),  # the next word would have fit: a real line end
    (["ends with space ", "x"], 40, ["ends with space ", "x"]),
    (["full width line", "  indented"], 15, ["full width line", "  indented"]),
])
def test_rich_line_breaks_are_undone(printed, width, text):
    assert terminal_bench._unwrap(printed, width) == text
