"""UI Automator view-hierarchy dumps (`adb shell uiautomator dump`, `window_dump.xml`): observations only.

A dump records what was on screen, never what was done, so every step has `action = None`.

Representation (what an episode is):
- the dumps of one directory, ordered by file name, form one episode: step t observes dump t. A folder of
  numbered dumps (`0001.xml`, `0002.xml`...) thus keeps its screen sequence;
- a directory holding a single dump, or a dump given alone as `--input`, is a file unit: a one-step episode.

A file is a dump when its name ends in `.xml` and its head holds `<hierarchy` (content sniffing, so a
renamed dump is still found). A directory unit claims the other files left in that directory (the planner
gives a directory unit everything under it), so this format is listed after the file formats in a
pipeline's `formats`, and nested dump folders are returned deepest first so each keeps its own dumps.

The screen size comes from the root node's bounds. Dumps carry no time: step timestamps stay null.

Bad input: a dump that cannot be used (malformed XML, no `<hierarchy>` root, bounds outside the pixel range
of int32, nesting deeper than Python's recursion limit, over the `file_bytes` budget) is quarantined alone
with its file name (and line or node); the other dumps of the folder still make the episode. An `.xml` file
of a dump folder without `<hierarchy` in its head is reported (`not_a_dump`) and skipped.
"""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
from typing import Iterator

import orjson

from ingest.android.views import views_from_uiautomator
from ingest.arrow import checked_episode, step_problem
from ingest.format_info import FormatInfo
from ingest.record import Episode, Observation, Rejected, Step
from ingest.source import Source, SourceError
from ingest.unread import truncation
from schemas.render import render_android_screen

FORMAT = "uiautomator"
VERSION = "1"
INFO = FormatInfo(
    group="android", rank=110, domains=('android',), platform="android",
    summary="UI Automator dumps",
)

_ROTATION = re.compile(rb'<hierarchy[^>]*\brotation="(\d+)"')
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


def _is_dump(path: str, head) -> bool:
    return path.endswith(".xml") and b"<hierarchy" in head(path)


def units(files: list[str], head) -> list[str]:
    """One unit per directory of dumps; a lone dump is a file unit. Deepest directories first."""
    by_dir: dict[str, list[str]] = {}
    for path in files:
        if _is_dump(path, head):
            by_dir.setdefault(posixpath.dirname(path), []).append(path)
    found = []
    for directory, dumps in by_dir.items():
        found.extend(dumps if len(dumps) == 1 else [directory])
    return sorted(found, key=lambda p: (-p.count("/"), p))


def _bounds_problem(views: list[dict]) -> str | None:
    for view in views:
        for x, y in view.get("bounds") or ():
            if not (_INT32_MIN <= x <= _INT32_MAX and _INT32_MIN <= y <= _INT32_MAX):
                return f"node {view['temp_id']} field bounds: {x},{y} is out of the pixel range (int32)"
    return None


def _observation(data: bytes) -> tuple[Observation, dict]:
    """Raises ET.ParseError (malformed XML) or ValueError (not a <hierarchy>, bounds out of range)."""
    views, size = views_from_uiautomator(data)
    if (problem := _bounds_problem(views)) is not None:
        raise ValueError(problem)
    package = views[0].get("package") if views else None
    rotation = _ROTATION.search(data[:4096])
    obs = Observation(
        kind="screen",
        text=render_android_screen(views, f"Package: {package}" if package else None),
        ui_tree=orjson.dumps(views).decode(),  # the canonical Android view list (DroidBot's shape)
        width=size[0] if size else None,
        height=size[1] if size else None,
    )
    return obs, {"package": package, "rotation": rotation.group(1).decode() if rotation else None}


def read(source: Source) -> Iterator[Episode | Rejected]:
    """One episode of the unit's dumps; a dump that cannot be used is quarantined alone (file, line or node,
    field) and the others are kept (`env.dumps` lists the ones the steps come from)."""
    if source.is_dir():
        names = [n for n in source.listdir() if n.endswith(".xml")]
    else:
        names = [""]  # the unit is the dump itself
    steps: list[Step] = []
    dumps: list[str] = []
    facts: dict = {}
    for name in names:
        where = name or posixpath.basename(source.path)
        try:
            data = source.read_bytes(name)
        except SourceError as e:
            yield e.as_rejected(where)
            continue
        if b"<hierarchy" not in data[:4096]:
            # another XML file in the same folder, or a dump damaged past recognition: said, not silently skipped
            yield Rejected("not_a_dump", f"{where}: no <hierarchy> in its first 4 KiB "
                           f"({'empty' if not data.strip() else 'another kind of XML, or a damaged dump'}); skipped",
                           where, snippet=data[:300].decode("utf-8", "replace"))
            continue
        try:
            obs, info = _observation(data)
            step = Step(observation=obs, action=None)
            if (problem := step_problem(step)) is not None:
                raise ValueError(f"field {problem}")
        except ET.ParseError as e:
            line, column = e.position
            cut = truncation(data)
            reason = (f"{where}: truncated at byte {len(data)} ({cut})" if cut else
                      f"{where}: malformed XML at line {line}, column {column}: {str(e).rsplit(': line', 1)[0]}")
            yield Rejected("truncated_file" if cut else "parse_error", reason, where, line=line,
                           snippet=data[:300].decode("utf-8", "replace"))
            continue
        except RecursionError:
            yield Rejected("bad_record", f"{where}: the view hierarchy is nested deeper than Python's recursion limit",
                           where)
            continue
        except (ValueError, TypeError, OverflowError) as e:  # orjson: an integer past 64 bits is a TypeError
            yield Rejected("bad_record", f"{where}: {e}", where)
            continue
        steps.append(step)
        dumps.append(where)
        facts = facts or info
        if obs.width and "screen_size" not in facts:
            facts["screen_size"] = [obs.width, obs.height]
    if not steps:
        return
    env = {"device": "android", "dumps": dumps, "observation_only": True,
           **{k: v for k, v in facts.items() if v is not None}}
    yield checked_episode(Episode(key="", domain="android", platform="android", steps=steps, env=env,
                                  terminated=False),  # a dump sequence says nothing about the task ending
                          posixpath.basename(source.path))
