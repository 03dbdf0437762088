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


# An absolute Windows path (`C:\Users\...`): not a URL scheme, a word ending in a letter and a colon, nor a letter,
# a colon and an escape in source code (`x:\n`): a folder name of two characters at least follows the drive.
_DRIVE_PATH = re.compile(r"(?<![\w/\\])[A-Za-z]:\\(?=[\w$~.-]{2})[^\s\"'`<>|*?]*")
# A POSIX absolute path under a root folder a Linux or macOS machine has (`/home/x`, `/tmp`), not part of a URL,
# a Windows path or a relative one.
_POSIX_PATH = re.compile(r"(?<![\w.:/\\~-])/(?:home|Users|root|tmp|usr|etc|var|opt|mnt|workspace|srv)(?=/|\b)")
# A relative path in Windows' separators (`src\app.py`): read only in a path argument, where a backslash is no escape.
_BACKSLASH_PATH = re.compile(r"^[\w.-]+(?:\\[\w .-]+)+$")
_PATH_KEY = re.compile(r"path|file|dir|folder|cwd", re.IGNORECASE)
_EVIDENCE_KEPT = 3  # paths kept in env as evidence, each way


def platform_of_paths(texts, path_args, default: str = "linux") -> tuple[str, dict]:
    """The platform the paths a session shows say, for recordings that name no working directory: (`windows`,
    evidence) when some absolute path has a drive letter (or a path argument uses `\\` separators) and no POSIX
    absolute path appears; else (`default`, the evidence either way, with `assumed: True`). `texts`: what the
    agent's tools were given and returned; `path_args`: the values of arguments named like a path."""
    windows: list[str] = []
    posix: list[str] = []
    for text in texts:
        if isinstance(text, str):
            _collect(windows, (m.group(0).rstrip(".,;:)]") for m in _DRIVE_PATH.finditer(text)))
            _collect(posix, (text[m.start():m.start() + 120].split()[0].rstrip(".,;:)]`'\"")
                             for m in _POSIX_PATH.finditer(text)))
    _collect(windows, (p for p in path_args if isinstance(p, str) and _BACKSLASH_PATH.match(p)))
    evidence = {k: v for k, v in (("windows_paths", windows), ("posix_paths", posix)) if v}
    if windows and not posix:
        return "windows", evidence
    return default, {"assumed": True, **evidence}


def _collect(kept: list[str], found) -> None:
    for path in found:
        if len(kept) >= _EVIDENCE_KEPT:
            return
        if path not in kept:
            kept.append(path)


def argument_strings(args) -> tuple[list[str], list[str]]:
    """(every string value of a tool call's arguments, those whose names say they are paths: `file_path`,
    `dir_path`, `absolute_path`...), at any depth."""
    every: list[str] = []
    paths: list[str] = []
    stack = [(None, args)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, str):
            every.append(value)
            if key is not None and _PATH_KEY.search(str(key)):
                paths.append(value)
        elif isinstance(value, dict):
            stack.extend(value.items())
        elif isinstance(value, list):
            stack.extend((key, item) for item in value)
    return every, paths
