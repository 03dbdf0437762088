"""The shell screen inside a harness's message, on Terminus's own texts (Harbor 0.1.31's terminus_2 golden,
samples/atif/harbor-0.1.31-goldens): the screen after `New Terminal Output:` / `Current Terminal Screen:`,
and what counts as a screen (a shell prompt line)."""

import json

import pytest

from tests.conftest import SAMPLES
from transforms.export.shell_screen import is_screen, screen_text

TERMINUS = SAMPLES / "atif" / "harbor-0.1.31-goldens" / "terminus_2" / "hello-world-context-summarization.trajectory.json"


def _steps():
    return json.loads(TERMINUS.read_text())["steps"]


def test_the_screen_after_terminus_output_header():
    content = _steps()[1]["observation"]["results"][0]["content"]
    assert content.startswith("New Terminal Output:\n\n")
    assert screen_text(content) == "root@CONTAINER_ID:/app# mkdir test_dir"
    assert is_screen(screen_text(content))


def test_the_first_message_is_instructions_and_a_screen_without_a_prompt():
    """Terminus's first message: its instructions, the task, then `Current terminal state:` and `Current Terminal
    Screen:` with bash's start-up warnings only: not a screen to start from."""
    first = _steps()[0]["message"]
    screen = screen_text(first)
    assert screen.startswith("bash: cannot set terminal process group") and "Task Description" not in screen
    assert not is_screen(screen) and not is_screen("Create a file called hello.txt.")


@pytest.mark.parametrize("text, screen", [
    ("root@ad092d3df69c:/app#", True), ("user@host:~/src$ ls\nREADME", True), ("data.csv  run.sh", False),
    (None, False), ("", False)])
def test_a_screen_has_a_shell_prompt(text, screen):
    assert is_screen(text) is screen
    assert screen_text(text) == text  # no header: the text as it is
