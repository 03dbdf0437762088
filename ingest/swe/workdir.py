"""The platform a coding agent ran on, read from the working directory its session records.

Coding-agent CLIs record the folder they worked in (`cwd`) but not the operating system; a Windows path (a drive
letter, `C:\\Users\\...`) says Windows, which no other platform writes. A POSIX path may be Linux or macOS, so
it leaves the reader's default.
"""

from __future__ import annotations

import re

_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]")


def platform_of(cwd, default: str = "linux") -> str:
    """`windows` for a working directory with a drive letter, else `default`."""
    return "windows" if isinstance(cwd, str) and _WINDOWS_PATH.match(cwd) else default
