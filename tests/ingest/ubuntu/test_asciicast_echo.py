"""Recordings without input events (asciinema's default): the commands are read back from the echo after
each prompt (`ingest.ubuntu.cast_echo`), one `command` step each, marked `action_inferred`.

The producer in the loop: asciinema 2.4.0 records a bash session at test time without `--stdin` (its default),
keys typed one by one into its pseudo-terminal as a person types them, with a prompt that shows `$?`. The
edge cases below are hand-made."""

import json
import os
import re
import time
from pathlib import Path

import fsspec
import pytest

from ingest.record import Episode
from ingest.source import Source
from ingest.ubuntu import asciicast
from tests.conftest import REPO, SAMPLES
from tests.ingest.ubuntu.test_asciicast_recorder import RECORDER, _Terminal
from tests import goldens
from tests.parts import require, require_shared_sample

PROMPT = rb"\[\d+\] \$ $"  # PS1 '[$?] $ ': the status of the last command, then "$ "


def _type(term: _Terminal, keys: str) -> None:
    for key in keys:
        term.type(key.encode())
        time.sleep(0.03)  # one key at a time: the shell echoes each in its own output event


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> str:
    """`echo one`, `ls /nonexistent` (status 2), Enter on an empty line, `echo twx` corrected with two
    Backspaces to `echo two`, `exit`; recorded without input capture."""
    require("the asciinema 2.4.0 recorder", RECORDER is not None, "pip install asciinema==2.4.0 (make setup-test)")
    tmp = tmp_path_factory.mktemp("echo")
    cast = tmp / "session.cast"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp), "TERM": "xterm-256color",
           "SHELL": "/bin/bash", "PS1": "[$?] $ ", "LANG": "C.UTF-8", "ASCIINEMA_CONFIG_HOME": str(tmp / "cfg")}
    argv = [*RECORDER, "rec", "--quiet", "--overwrite", "-c", "bash --norc --noprofile -i", str(cast)]
    term = _Terminal(argv, env, 80, 24)
    try:
        term.expect(PROMPT)
        _type(term, "echo one\r")
        term.expect(rb"one\r\n.*" + PROMPT)
        _type(term, "ls /nonexistent\r")
        term.expect(rb"No such file.*" + PROMPT)
        _type(term, "\r")
        term.expect(PROMPT)
        _type(term, "echo twx\x7f\x7fwo\r")
        term.expect(rb"two\r\n.*" + PROMPT)
        _type(term, "exit\r")
    finally:
        code = term.close()
    assert code == 0
    return cast


def test_recorded_session_without_input_gives_one_inferred_command_per_prompt(recorded, run, query):
    events = [json.loads(line) for line in recorded.read_text().splitlines()[1:]]
    assert {e[1] for e in events} == {"o"}  # no input was recorded
    result = run("ingest-ubuntu", [recorded])
    assert (result.status, result.episodes, result.steps, result.quarantined) == ("success", 1, 4, 0)
    steps = query("SELECT * FROM steps ORDER BY step_index")
    # the empty line is no command; the Backspaces are read as the screen showed them
    assert [s["action"]["code"] for s in steps] == ["echo one", "ls /nonexistent", "echo two", "exit"]
    assert all(s["action"]["kind"] == "command" and s["action_inferred"] is True for s in steps)
    # the observation is the screen with the prompt, before the first key's echo
    assert steps[0]["observation"]["text"] == "[0] $"
    assert steps[1]["observation"]["text"] == "[0] $ echo one\none\n[0] $"
    assert steps[2]["observation"]["text"].endswith("No such file or directory\n[2] $\n[2] $")
    # the status the next prompt shows is the command's exit code, on the observation after it
    assert [s["observation"]["exit_code"] for s in steps] == [None, 0, 2, 0]
    # timestamps: the header's start + the first echoed key's time; each a distinct, increasing time
    times = [s["timestamp"] for s in steps]
    assert times == sorted(times) and len(set(times)) == 4 and all(t.tzinfo is not None for t in times)
    header = json.loads(recorded.read_text().splitlines()[0])
    first_key = next(e[0] for e in events if e[2] == "e")
    assert abs(times[0].timestamp() - (header["timestamp"] + first_key)) < 1e-5
    raw = json.loads(steps[2]["action"]["raw"])
    assert raw["inferred_from"] == "echo" and raw["row"] == "[2] $ echo two" and raw["prompt"] == "[2] $ "
    assert steps[-1]["final_observation"]["text"].endswith("[0] $ exit\nexit")
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert env["actions_from_echo"] == {"prompts": ["[0] $", "[2] $"], "exit_codes_from_prompt": True}
    # a user keeps recorded actions only with one filter
    assert query("SELECT count(*) AS n FROM steps WHERE NOT action_inferred")[0]["n"] == 0


def _cast(tmp_path, events, name="s.cast", width=60):
    """A v2 cast of output events 0.1 s apart; the first key of a typed command comes 1 s after the prompt."""
    path = tmp_path / name
    lines, t = [json.dumps({"version": 2, "width": width, "height": 10})], 0.0
    for data in events:
        t += 1.0 if isinstance(data, Key) and data.first else 0.1
        lines.append(json.dumps([round(t, 3), "o", str(data)]))
    path.write_text("\n".join(lines) + "\n")
    return path


class Key(str):
    first = False


def _typed(command: str) -> list[str]:
    keys = [Key(k) for k in command]
    keys[0].first = True
    return keys + ["\r\n"]


def test_a_prompt_without_a_prompt_sign_is_known_by_recurring(tmp_path, run, query):
    """`dev ~/src ` ends with no prompt sign: it counts as a prompt because two typed rows start with it."""
    events = ["dev ~/src ", *_typed("make"), "built\r\n", "dev ~/src ", *_typed("ls"), "a  b\r\n", "dev ~/src "]
    run("ingest-ubuntu", [_cast(tmp_path, events)])
    steps = query("SELECT action, observation FROM steps ORDER BY step_index")
    assert [s["action"]["code"] for s in steps] == ["make", "ls"]
    assert steps[1]["observation"]["text"] == "dev ~/src make\nbuilt\ndev ~/src"


def test_output_that_pauses_on_a_row_once_is_not_a_command(tmp_path, run, query):
    """A row that waited once and went on (no prompt sign, nothing recurring) is output, not a command."""
    events = ["Downloading", ".", ".", " done\r\n"]
    result = run("ingest-ubuntu", [_cast(tmp_path, events)])
    assert (result.episodes, result.quarantined) == (0, 1)
    assert query("SELECT rule FROM quarantine")[0]["rule"] == "no_input"


def test_a_history_counter_in_the_prompt_is_not_an_exit_code(tmp_path, run, query):
    events = ["(17)$ ", *_typed("true"), "(18)$ ", *_typed("false"), "(19)$ ", *_typed("true"), "(20)$ "]
    run("ingest-ubuntu", [_cast(tmp_path, events)])
    steps = query("SELECT action, observation FROM steps ORDER BY step_index")
    assert [s["action"]["code"] for s in steps] == ["true", "false", "true"]
    assert [s["observation"]["exit_code"] for s in steps] == [None, None, None]
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert env["actions_from_echo"]["exit_codes_from_prompt"] is False


def test_a_command_pasted_in_one_event_and_a_cleared_screen(tmp_path, run, query):
    """A pasted command arrives with Enter in one event; Ctrl-L redraws the prompt at the top."""
    events = ["root@box:/app# ", "git status\r\n", "clean\r\n", "root@box:/app# ", "\x1b[H\x1b[2J",
              "root@box:/app# ", *_typed("pwd"), "/app\r\n", "root@box:/app# "]
    run("ingest-ubuntu", [_cast(tmp_path, events)])
    steps = query("SELECT action, observation FROM steps ORDER BY step_index")
    assert [s["action"]["code"] for s in steps] == ["git status", "pwd"]
    assert steps[1]["observation"]["text"] == "root@box:/app#"
    final = query("SELECT final_observation FROM steps WHERE is_last")[0]["final_observation"]
    assert final["text"] == "root@box:/app# pwd\n/app\nroot@box:/app#"


def test_a_zsh_theme_prompt_in_two_events_keeps_its_repository_segment(tmp_path, run, query):
    """oh-my-zsh's robbyrussell prompt reached the terminal as the arrow and folder, then `git:(main) ✗ `: the
    command is `htop`, never `git:(main) ✗ htop`, and a clean repository's `git:(main) ` is prompt too."""
    events = ["➜  app ", "git:(main) ✗ ", *_typed("htop"), "\x1b[?1049h\x1b[?1049l", "➜  app ", "git:(main) ",
              *_typed("git status"), "clean\r\n", "➜  app ", "git:(main) "]
    run("ingest-ubuntu", [_cast(tmp_path, events)])
    steps = query("SELECT action FROM steps ORDER BY step_index")
    assert [s["action"]["code"] for s in steps] == ["htop", "git status"]
    assert [json.loads(s["action"]["raw"])["prompt"] for s in steps] == ["➜  app git:(main) ✗ ",
                                                                         "➜  app git:(main) "]


def test_a_colour_demo_without_a_prompt_gives_no_command_of_glyphs(tmp_path, run, query):
    """Rows of colour blocks that pause and recur (a terminal theme's demo) look like a recurring prompt, but what
    follows them is glyphs, not a command: no action, `no_input`."""
    events = ["\x1b[41m█▓▒\x1b[0m ", *_typed("░█"), "\x1b[42m█▓▒\x1b[0m ", *_typed("░█"), "█▓▒ "]
    result = run("ingest-ubuntu", [_cast(tmp_path, events)])
    assert (result.episodes, result.quarantined) == (0, 1)
    assert query("SELECT rule FROM quarantine")[0]["rule"] == "no_input"


def test_recorded_input_still_wins(tmp_path, run, query):
    """A recording with input events keeps its keystroke actions (recorded, not inferred)."""
    path = tmp_path / "in.cast"
    path.write_text('{"version": 2, "width": 40, "height": 5}\n[0.1, "o", "$ "]\n[0.2, "i", "ls\\r"]\n'
                    '[0.3, "o", "ls\\r\\na\\r\\n$ "]\n')
    run("ingest-ubuntu", [path])
    (step,) = query("SELECT action, action_inferred FROM steps")
    assert step["action"]["kind"] == "keystrokes" and step["action_inferred"] is False


# Real recordings without input ----------------------------------------------------------------------------------
REAL = SAMPLES / "ubuntu" / "asciicast-no-input"  # nbedos/termtosvg, BSD-3-Clause (PROVENANCE.md)
SHARED = REPO.parent / "shared" / "samples" / "ubuntu"
SHARED_NO_INPUT = SHARED / "asciicast-no-input"  # Nate-Wilkins/asciinema-automation, license unclear: not copied here
GOLDEN = Path(__file__).parent / "golden" / "asciicast-no-input.json"


def _fingerprint(path: Path) -> dict:
    """What a person checks against the raw file: each command, when it was typed, how long its output took,
    the last row of the screen before it, and the screen's last row at the end."""
    (ep,) = [r for r in asciicast.read(_source(path)) if isinstance(r, Episode)]
    return {"steps": [{"command": s.action.code, "timestamp": s.timestamp.isoformat() if s.timestamp else None,
                       "duration_s": s.action.duration_s, "screen_last_row": s.observation.text.split("\n")[-1],
                       "exit_code": s.observation.exit_code} for s in ep.steps],
            "final_last_row": ep.final_observation.text.split("\n")[-1], "terminated": ep.terminated}


def _source(path: Path) -> Source:
    return Source(fsspec.filesystem("file"), str(path), path.name, lambda *a: "sha256:")


def test_real_recordings_without_input_match_the_golden():
    """termtosvg's demo recordings (bundled) and asciinema-automation's (../shared/samples, when present),
    each command as a person reads it in the raw file (golden read by hand against the files)."""
    got = {p.name: _fingerprint(p) for p in sorted(REAL.glob("*.cast"))}
    if SHARED_NO_INPUT.is_dir():
        got |= {p.name: _fingerprint(p) for p in sorted(SHARED_NO_INPUT.glob("*.cast"))}
    if os.environ.get(goldens.REGEN) == "1" or not GOLDEN.exists():
        goldens.check_json(GOLDEN, got, indent=1)  # writes it for review, or fails naming the command
    want = json.loads(GOLDEN.read_text())
    if not SHARED_NO_INPUT.is_dir():
        want = {k: v for k, v in want.items() if (REAL / k).exists()}
    assert got == want
    assert [s["command"] for s in got["awesome.cast"]["steps"]] == [
        "termtosvg", 'for i in {0..10}; do\necho "termtosvg is awesome!"\ndone | lolcat', "exit"]


def test_real_recordings_of_the_shared_samples_are_there_when_shared_is():
    require_shared_sample(SHARED_NO_INPUT)
    names = sorted(p.name for p in SHARED_NO_INPUT.glob("*.cast"))
    assert names == ["autocompletion.cast", "history.cast"]


def _without_input(path: Path, tmp_path: Path) -> Path:
    lines = path.read_text().splitlines(keepends=True)
    out = tmp_path / f"no-input-{path.name}"
    out.write_text(lines[0] + "".join(line for line in lines[1:] if json.loads(line)[1] != "i"))
    return out


def _typed_commands(steps) -> list[str]:
    """The commands the recorded keystrokes make: text up to each Enter, control keys left out."""
    text = "".join(s.action.text for s in steps)
    lines = [re.sub(r"[\x00-\x1f\x7f]", "", line) for line in text.replace("\r", "\n").split("\n")]
    return [line.strip() for line in lines if line.strip()]


@pytest.mark.parametrize("cast", [
    Path(__file__).parent / "data" / "asciinema-resize.cast",  # recorded here with `--stdin` (asciinema 2.4.0)
    SHARED / "terminal-bench-trial" / "incompatible-python-fasttext.base_with_hint.1-of-1.2025-08-15__19-28-24"
    / "sessions" / "agent.cast",  # a real Terminal-Bench tmux session (harness keystrokes)
    REPO.parent / "shared" / "samples" / "atif" / "harbor-terminus-2" / "et-67e8a015__fVYDC7q" / "agent"
    / "recording.cast",  # a real Harbor Terminus 2 tmux session (the agent's keystrokes)
], ids=["asciinema-stdin", "terminal-bench", "harbor-terminus-2"])
def test_recordings_with_input_read_the_same_commands_once_their_input_is_removed(cast, tmp_path):
    """The recorded keystrokes are the oracle: remove the input events and the commands read back from the
    echo are the ones typed, and each observation is the screen the recorded action saw."""
    if "shared" in cast.parts:
        require_shared_sample(cast)
    (recorded,) = [r for r in asciicast.read(_source(cast)) if isinstance(r, Episode)]
    (inferred,) = [r for r in asciicast.read(_source(_without_input(cast, tmp_path))) if isinstance(r, Episode)]
    commands = [line for s in inferred.steps for line in s.action.code.split("\n") if line.strip()]
    assert commands == _typed_commands(recorded.steps)
    assert all(s.action_inferred for s in inferred.steps) and not any(s.action_inferred for s in recorded.steps)
    by_text = {s.observation.text for s in recorded.steps}
    assert all(s.observation.text in by_text for s in inferred.steps)
    assert inferred.final_observation.text == recorded.final_observation.text


def test_v3_recording_without_input_as_asciinema_3_writes_it(tmp_path, run, query):
    """asciinema 3 (not installable here: a Rust binary, on neither PyPI nor Debian 12) writes a compact header,
    intervals in milliseconds, no input unless `--capture-input`, and the exit status as an `x` event; an
    event code it does not define is kept raw with a warning. Hand-made in the shape of its v3 encoder."""
    path = tmp_path / "v3.cast"
    path.write_text("\n".join([
        '{"version":3,"term":{"cols":40,"rows":6,"type":"xterm-256color"},"timestamp":1700000000,'
        '"command":"bash","env":{"SHELL":"/bin/bash"}}',
        '[0.010, "o", "$ "]', '[1.500, "o", "g"]', '[0.100, "o", "o"]', '[0.100, "o", "\\r\\n"]',
        '[0.050, "o", "bash: go: command not found\\r\\n$ "]', '[0.200, "z", "custom"]',
        '[2.000, "o", "e"]', '[0.100, "o", "x"]', '[0.100, "o", "i"]', '[0.100, "o", "t"]',
        '[0.100, "o", "\\r\\nexit\\r\\n"]', '[0.010, "x", "127"]']) + "\n")
    result = run("ingest-ubuntu", [path])
    assert (result.episodes, result.steps, result.quarantined) == (1, 2, 0)
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["code"] for s in steps] == ["go", "exit"]
    start = 1700000000
    assert [round(s["timestamp"].timestamp() - start, 3) for s in steps] == [1.51, 3.96]  # intervals summed
    assert steps[1]["final_observation"]["exit_code"] == 127
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert env["unknown_events"] == [[1.96, "z", "custom"]]
    assert [w["rule"] for w in env["ingest_warnings"]] == ["asciicast.unknown_event"]
