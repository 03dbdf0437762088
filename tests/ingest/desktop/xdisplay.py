"""An X virtual display (Debian's Xvfb) with the tests' Tk window on it, for the computer-use producers: started
and stopped by the test that needs it; only the processes started here are ended.

`virtual_display(width, height, log)` yields the display's name (":N", a number Xvfb picks itself) once the
window (tests/ingest/desktop/tk_window.py, run by Debian's python3 with tkinter) has said it is ready in `log`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

TK_WINDOW = Path(__file__).with_name("tk_window.py")
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with python3-tk
TOOLS = ("Xvfb", "xdotool", "import")


def available() -> bool:
    """Xvfb, xdotool, ImageMagick's import and Debian's python3 with tkinter are installed."""
    if not all(shutil.which(t) for t in TOOLS) or not Path(SYSTEM_PYTHON).exists():
        return False
    return subprocess.run([SYSTEM_PYTHON, "-c", "import tkinter"], capture_output=True).returncode == 0


def events(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []


def _wait(predicate, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.1)


@contextlib.contextmanager
def virtual_display(width: int, height: int, log: Path):
    read, write = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{width}x{height}x24",
                             "-nolisten", "tcp"], pass_fds=(write,), stderr=subprocess.DEVNULL)
    os.close(write)
    window = None
    try:
        with os.fdopen(read) as pipe:
            display = ":" + pipe.readline().strip()
        env = {**os.environ, "DISPLAY": display}
        window = subprocess.Popen([SYSTEM_PYTHON, str(TK_WINDOW), str(log)], env=env, stderr=subprocess.DEVNULL)
        _wait(lambda: any(e.get("event") == "ready" for e in events(log)), "the Tk window")
        time.sleep(0.5)  # the window mapped and drawn before the first screenshot
        yield display
    finally:
        for process in (window, xvfb):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
