"""A real producer in the loop: the asciinema recorder (2.x) records a bash session at test time, in a
pseudo-terminal whose window is resized while it records, and the reader ingests the cast.

asciinema writes an `r` event ("COLSxROWS") when its terminal sends it SIGWINCH, which the kernel does when
the window size of the pty is changed (TIOCSWINSZ on the master side): asciinema then resizes the pty of the
recorded shell, so `stty size` inside the session shows the new size. The recording test skips when the
recorder is not installed (`pip install asciinema==2.4.0`, or Debian's `apt-get install asciinema`).

`data/asciinema-resize.cast` is one such recording, made by `_record` with asciinema 2.4.0 on this
project's machine (our own session, nothing third-party in it), kept byte for byte so that the same checks
run where the recorder is not installed.
"""

import fcntl
import importlib.util
import json
import os
import pty
import re
import select
import shutil
import struct
import sys
import termios
import time
from pathlib import Path

from tests.parts import require

if importlib.util.find_spec("asciinema") is not None:
    RECORDER = [sys.executable, "-m", "asciinema"]
elif shutil.which("asciinema"):
    RECORDER = [shutil.which("asciinema")]
else:
    RECORDER = None

RECORDED = Path(__file__).parent / "data" / "asciinema-resize.cast"

PROMPT = rb"\$ $"  # PS1 is "$ "; bash wraps its prompt in bracketed-paste switches


class _Terminal:
    """The master side of a pty running the recorder: what a person's terminal window is."""

    def __init__(self, argv: list[str], env: dict, cols: int, rows: int):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: nothing but exec
            os.execvpe(argv[0], argv, env)
        self.resize(cols, rows)
        self.seen = b""

    def resize(self, cols: int, rows: int) -> None:
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def expect(self, pattern: bytes, timeout: float = 20.0) -> None:
        """Read until `pattern` matches what came since the last match (bounded in time)."""
        deadline = time.monotonic() + timeout
        while not (m := re.search(pattern, self.seen, re.S)):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {pattern!r} in {self.seen[-400:]!r}")
            if select.select([self.fd], [], [], left)[0]:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:  # EIO: the child closed the pty
                    data = b""
                if not data:
                    raise EOFError(f"the recorder ended before {pattern!r}: {self.seen[-400:]!r}")
                self.seen += data
        self.seen = self.seen[m.end():]

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def close(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            if select.select([self.fd], [], [], 0.1)[0]:
                try:
                    os.read(self.fd, 65536)
                except OSError:
                    pass
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        raise TimeoutError("the recorder did not exit")


def _record(tmp_path) -> str:
    """Record: `echo one`, `seq 3 14`, the window resized from 80x24 to 100x10, `stty size`, resized to
    60x20, `stty size`, `exit`."""
    cast = tmp_path / "session.cast"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "TERM": "xterm-256color",
           "SHELL": "/bin/bash", "PS1": "$ ", "LANG": "C.UTF-8", "ASCIINEMA_CONFIG_HOME": str(tmp_path / "cfg")}
    argv = [*RECORDER, "rec", "--stdin", "--quiet", "--overwrite", "-c", "bash --norc --noprofile -i", str(cast)]
    term = _Terminal(argv, env, 80, 24)
    try:
        term.expect(PROMPT)
        term.type(b"echo one\r")
        term.expect(rb"one\r\n.*" + PROMPT)
        term.type(b"seq 3 14\r")
        term.expect(rb"14\r\n.*" + PROMPT)
        for cols, rows in ((100, 10), (60, 20)):
            term.resize(cols, rows)
            time.sleep(0.3)  # the recorder takes SIGWINCH, writes the `r` event and resizes the shell's pty
            term.type(b"stty size\r")
            term.expect(f"{rows} {cols}\r\n".encode() + rb".*" + PROMPT)
        term.type(b"exit\r")
    finally:
        code = term.close()
    assert code == 0
    return cast


def test_recorded_resizes_are_ingested_keeping_the_screen(tmp_path, run, query):
    require("the asciinema recorder", RECORDER is not None, "pip install asciinema==2.4.0, or apt-get install asciinema")
    _check_ingested(_record(tmp_path), run, query)


def test_stored_recording_is_ingested_keeping_the_screen(run, query):
    _check_ingested(RECORDED, run, query)


def _check_ingested(cast: Path, run, query) -> None:
    events = [json.loads(line) for line in cast.read_text().splitlines()[1:]]
    assert [e[2] for e in events if e[1] == "r"] == ["100x10", "60x20"]
    result = run("ingest-ubuntu", [cast])
    assert result.status == "success" and result.episodes == 1 and result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["text"] for s in steps] == ["echo one\r", "seq 3 14\r", "stty size\r", "stty size\r",
                                                    "exit\r"]
    # before the first `stty size`: 10 rows high now, the cursor was on row 15, so the top rows scrolled
    # away and the rest of the screen is what it was (pyte's own resize left it blank but for the prompt)
    first = steps[2]["observation"]
    assert (first["width"], first["height"]) == (100, 10)
    assert first["text"].split("\n") == [str(n) for n in range(6, 15)] + ["$"]
    # then 20 rows: the screen grows below, the text stays where it was
    second = steps[3]["observation"]
    assert (second["width"], second["height"]) == (60, 20)
    assert second["text"].split("\n") == [str(n) for n in range(8, 15)] + ["$ stty size", "10 100", "$"]
    assert "20 60" in steps[4]["observation"]["text"]
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert (env["cols"], env["rows"]) == (80, 24)  # the header keeps the size the recording started at
