"""asciicast v3 as asciinema 3 writes it, from real recordings in data/asciicast-v3 (two MIT-licensed demos
copied unchanged with their licenses; PROVENANCE.md says where from and what a person counted in each): a
zsh session that runs zellij full screen, and a TUI recorded with `asciinema rec -c`. Each has one golden read
by hand against the raw file. The alternate-screen edge case is hand-made."""

from pathlib import Path

import fsspec

from ingest.source import Source
from ingest.ubuntu import asciicast
from tests.ingest import golden

DATA_V3 = Path(__file__).parent / "data" / "asciicast-v3"
GOLDEN = Path(__file__).parent / "golden"
ENV_KEYS = ("asciicast_version", "cols", "rows", "term", "shell", "command", "title", "exit_code",
            "actions_from_echo", "unknown_events")


def _read(path: Path) -> list:
    return list(asciicast.read(Source(fsspec.filesystem("file"), str(path), path.name, lambda *a: "sha256:")))


def test_zellij_session_matches_the_golden():
    """One command typed at a zsh prompt (`zellij a my`), zellij full screen for 20 s, then the prompt again:
    one inferred command step, the exit status from the `x` event, and the shell's screen at the end."""
    records = _read(DATA_V3 / "zellij-leap-demo.cast")
    golden.check(records, GOLDEN / "asciicast-v3-zellij-leap.json", env_keys=ENV_KEYS)
    (ep,) = records
    assert [s.action.code for s in ep.steps] == ["zellij a my"] and ep.steps[0].action_inferred
    assert ep.steps[0].timestamp.isoformat() == "2026-05-10T13:42:13.650000+00:00"  # 1778420532 + 1.650 s
    assert ep.terminated and ep.env["exit_code"] == 0 and ep.final_observation.exit_code == 0
    # the terminal left the alternate screen: what shows is the shell's screen, not zellij's last frame
    assert ep.final_observation.text.endswith("Bye from Zellij!\n\uf155 ~/\uf401/zellij-leap 19s ❯")
    assert "keybinds" not in ep.final_observation.text


def test_tui_recorded_with_a_command_and_no_prompt_is_that_one_command():
    """`asciinema rec -c 'tgt --demo'`: no input events and no shell prompt, but the header names the command
    asciinema ran: one `command` step from the blank screen, lasting the whole recording (its intervals add up to
    12.871 s), the exit status from the `x` event; the TUI left the alternate screen, so the screen at the
    end is the terminal's own (blank). The real v3 header (term.version, idle_time_limit) parses without
    complaint."""
    records = _read(DATA_V3 / "telegram-tui-demo.cast")
    golden.check(records, GOLDEN / "asciicast-v3-telegram-tui.json", env_keys=ENV_KEYS + ("action_from_header",))
    (ep,) = records
    (step,) = ep.steps
    assert step.action.kind == "command" and not step.action_inferred
    assert step.action.code == "/Users/cedi/src/gh/SpechtLabs/telegram-tui/target/release/tgt --demo"
    assert step.observation.text == "" and (step.observation.width, step.observation.height) == (110, 30)
    assert step.timestamp.isoformat() == "2026-08-01T01:27:51+00:00"  # the header's start
    assert step.action.duration_s == 12.871
    assert ep.env["action_from_header"] == "command" and ep.env["exit_code"] == 0
    assert ep.final_observation.exit_code == 0 and ep.terminated


def test_leaving_the_alternate_screen_shows_the_shell_screen_again(tmp_path):
    """A full-screen program (`ESC[?1049h` ... `ESC[?1049l`, also 1047 and 47) draws on a screen of its own;
    on exit the terminal shows the shell's rows and cursor as they were, and the next prompt follows them."""
    for mode in (1049, 1047, 47):
        path = tmp_path / f"alt-{mode}.cast"
        path.write_text("\n".join([
            '{"version": 2, "width": 30, "height": 5, "timestamp": 1700000000}',
            '[0.1, "o", "$ "]', '[0.2, "i", "top\\r"]', '[0.3, "o", "top\\r\\n"]',
            f'[0.4, "o", "\\u001b[?{mode}h\\u001b[2J\\u001b[Hload average 0.5\\r\\nPID USER"]',
            f'[1.0, "o", "\\u001b[?{mode}l$ "]', '[1.5, "i", "q"]']) + "\n")
        (ep,) = _read(path)
        assert ep.final_observation.text == "$ top\n$", mode
