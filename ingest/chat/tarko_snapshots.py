"""The snapshot layout of Agent TARS / tarko runs (`@tarko/agent-snapshot`): before each model request of loop N the
agent saves its whole event stream so far as `<run>/loop-<N>/event-stream.jsonl`, and at the run's end the whole
stream as `<run>/event-stream.jsonl`. Each later file holds the earlier ones' events again, so the files of one run
are read together (`ingest.chat.agent_tars`): a snapshot whose events a later one opens with is that later
snapshot's opening, not an episode of its own.

"Opens with" is the agent's own snapshot comparison (`snapshot-normalizer.ts`, DEFAULT_CONFIG): event ids,
session and message ids, tool call ids and times are replaced before comparing (a run saved again gets new
ones), except that images are compared as written here (a snapshot may keep the only whole screenshot).
"""

from __future__ import annotations

import hashlib
import posixpath
import re

import orjson

STREAM = "event-stream.jsonl"
_LOOP_FILE = re.compile(r"^(?P<run>.+)/loop-(?P<n>\d+)/event-stream\.jsonl$")
LOOP_FOLDER = re.compile(r"loop-(\d+)")
# fields the agent's snapshot comparison replaces (by name, or a name ending so), image_url left out: see above
_NOISE = frozenset({"timestamp", "created", "startTime", "elapsedMs", "toolCallId", "sessionId", "messageId",
                    "ttftMs", "ttltMs"})


def runs(paths: list[str]) -> dict[str, list[str]]:
    """Run folder -> its snapshot files among `paths`, in loop order, the whole run's last (where there is one),
    for each folder holding `loop-<N>/event-stream.jsonl` files."""
    held = set(paths)
    loops: dict[str, list[tuple[int, str]]] = {}
    for path in paths:
        if found := _LOOP_FILE.match(path):
            loops.setdefault(found["run"], []).append((int(found["n"]), path))
    out = {}
    for run, numbered in loops.items():
        whole = run + "/" + STREAM
        out[run] = [p for _, p in sorted(numbered)] + ([whole] if whole in held else [])
    return out


def run_of(path: str) -> tuple[str, int | None] | None:
    """The run folder of a snapshot file and its loop (None: the whole run's), or None for a file of another
    name."""
    if found := _LOOP_FILE.match(path):
        return found["run"], int(found["n"])
    if posixpath.basename(path) == STREAM and posixpath.dirname(path):
        return posixpath.dirname(path), None
    return None


def _normal(value, name: str = ""):
    if name in _NOISE or name.endswith(("id", "Time")):
        return None
    if isinstance(value, dict):
        return {k: _normal(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def digests(events: list[dict]) -> list[bytes]:
    """Each event as the agent's snapshot comparison sees it (a digest: the events themselves may hold images)."""
    return [hashlib.blake2b(orjson.dumps(_normal(e), option=orjson.OPT_SORT_KEYS), digest_size=16).digest()
            for e in events]


def holders(streams: list[list[bytes]]) -> list[int | None]:
    """For each snapshot (in loop order, the digests of its events), the later snapshot read as the episode that
    holds it: the first one that opens with its events and is held by none after it; None for those held by
    none (the last, and any a later snapshot does not open with): each of them is an episode."""
    def opens(later: int, earlier: int) -> bool:
        return streams[later][:len(streams[earlier])] == streams[earlier]

    held: list[int | None] = [None] * len(streams)
    for i in range(len(streams) - 2, -1, -1):
        if any(opens(j, i) for j in range(i + 1, len(streams))):
            # the opening relation is transitive: one of the snapshots held by none opens with this one too
            held[i] = next(j for j in range(i + 1, len(streams)) if held[j] is None and opens(j, i))
    return held


def first_difference(earlier: list[bytes], later: list[bytes]) -> int:
    """The index of the first event of `earlier` that `later` does not hold at the same place."""
    return next((i for i, (a, b) in enumerate(zip(earlier, later)) if a != b), min(len(earlier), len(later)))
