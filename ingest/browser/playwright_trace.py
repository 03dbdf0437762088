"""Playwright trace archives (`trace.zip`, trace format version 4 and later).

Members: `<n>-trace.trace` (or `trace.trace`), JSONL events of one browser-context chunk; `<n>-trace.network`,
JSONL `resource-snapshot` lines whose `snapshot` is a HAR entry; `resources/<sha1>` (screencast JPEGs,
snapshot resources); `test.trace`, the test runner's own steps (a view of the same calls, not read as
steps). The archive is opened with `ingest.safe_zip` (path and size guards).

One episode per context chunk. Steps are the top-level API calls: `before` and `after` events paired by
`callId` (calls with a `parentId` are nested inside another call and left out). The observation of a step
is the main-frame DOM snapshot taken before the call (`beforeSnapshot`; the previous call's
`afterSnapshot` when there is none), rendered to text with URL and title, plus the latest screencast frame
(to the blob store) when the archive holds it. The last call's `afterSnapshot` is the final observation.
A call's error shows in the next observation (`is_error`). Timestamps are the calls' `wallTime` (epoch ms).
"""

from __future__ import annotations

import bisect
import datetime as dt
import posixpath
from typing import Iterator

import orjson

from ingest.browser.dom import FrameSnapshots, render, title_of
from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01
from ingest.safe_zip import SafeZip
from ingest.source import Source, SourceError

FORMAT = "playwright_trace"
VERSION = "1"
MIN_TRACE_VERSION = 4

_MEMBER_SUFFIXES = (".trace", ".network", ".stacks")
_WAITS = {"waitForTimeout", "waitForSelector", "waitForLoadState", "waitForURL", "waitForEventInfo",
          "waitForFunction", "waitForNavigation"}


def _first_member_name(head: bytes) -> str | None:
    """The name in a zip's first local file header (offset 30, length at offset 26)."""
    if len(head) < 30 or not head.startswith(b"PK\x03\x04"):
        return None
    length = int.from_bytes(head[26:28], "little")
    return head[30:30 + length].decode("utf-8", "replace")


def looks_like_trace(head: bytes) -> bool:
    name = _first_member_name(head)
    return bool(name) and (name.endswith(_MEMBER_SUFFIXES) or name.startswith("resources/"))


def units(files: list[str], head) -> list[str]:
    """Zip archives whose first member is a trace, network log, stack table or trace resource."""
    return [path for path in files if looks_like_trace(head(path))]


class _Chunk:
    """What one `*.trace` member records, indexed for building steps."""

    def __init__(self):
        self.options: dict = {}
        self.calls: dict[str, dict] = {}  # callId -> {"before": ev, "after": ev, "input": ev}
        self.order: list[str] = []
        self.frames: dict[str, FrameSnapshots] = {}
        self.snapshots: dict[str, list[tuple[str, int, dict]]] = {}  # snapshotName -> (frameId, index, meta)
        self.screencast: dict[str, list[tuple[float, str, dict]]] = {}  # pageId -> sorted (time, sha1, ev)

    def add(self, ev: dict) -> None:
        kind = ev.get("type")
        if kind == "context-options":
            self.options = ev
        elif kind in ("before", "after", "input") and isinstance(ev.get("callId"), str):
            call = self.calls.setdefault(ev["callId"], {})
            if kind == "before" and "before" not in call:
                self.order.append(ev["callId"])
            call[kind] = ev
        elif kind == "frame-snapshot" and isinstance(ev.get("snapshot"), dict):
            snap = ev["snapshot"]
            frames = self.frames.setdefault(snap.get("frameId") or "", FrameSnapshots())
            index = frames.add(snap.get("html"))
            meta = {k: v for k, v in snap.items() if k != "html"}
            self.snapshots.setdefault(snap.get("snapshotName") or "", []).append((snap.get("frameId") or "", index,
                                                                                  meta))
        elif kind == "screencast-frame" and ev.get("sha1"):
            frames = self.screencast.setdefault(ev.get("pageId") or "", [])
            bisect.insort(frames, (float(ev.get("timestamp") or 0), ev["sha1"], ev), key=lambda f: f[0])


def _parse_chunk(data: bytes, name: str) -> tuple[_Chunk, list[Rejected]]:
    chunk, rejected = _Chunk(), []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            ev = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            rejected.append(Rejected("parse_error", f"{name}:{number}: invalid JSON: {e}", name, number,
                                     snippet=line[:200].decode("utf-8", "replace")))
            continue
        if isinstance(ev, dict):
            chunk.add(ev)
    return chunk, rejected


def _wall_time(ev: dict) -> dt.datetime | None:
    wall = ev.get("wallTime")
    return dt.datetime.fromtimestamp(wall / 1000, dt.timezone.utc) if isinstance(wall, (int, float)) and wall > 0 \
        else None


def _error_message(after: dict | None) -> str | None:
    error = (after or {}).get("error")
    if not error:
        return None
    if isinstance(error, dict):
        inner = error.get("error") if isinstance(error.get("error"), dict) else error
        return inner.get("message") or inner.get("name") or "error"
    return str(error)


class _Observer:
    """Builds observations from a chunk's snapshots and screencast frames; blobs are stored once per sha1."""

    def __init__(self, chunk: _Chunk, archive: SafeZip, source: Source):
        self.chunk, self.archive, self.source = chunk, archive, source
        self.blobs: dict[str, str | None] = {}

    def _screenshot(self, page_id: str | None, time: float | None) -> tuple[str | None, dict | None]:
        frames = self.chunk.screencast.get(page_id or "")
        if not frames or time is None:
            return None, None
        at = bisect.bisect_right([f[0] for f in frames], time) - 1
        if at < 0:
            return None, None
        _, sha1, ev = frames[at]
        if sha1 not in self.blobs:
            member = f"resources/{sha1}"
            self.blobs[sha1] = self.source.put_blob(self.archive.read(member), "image/jpeg", self.source.uri) \
                if self.archive.has(member) else None
        return self.blobs[sha1], ev

    def observe(self, snapshot_name: str | None, page_id: str | None, time: float | None,
                error: str | None = None) -> Observation | None:
        """The main-frame snapshot named `snapshot_name`, or None when the trace has none by that name."""
        found = [s for s in self.chunk.snapshots.get(snapshot_name or "", ()) if s[2].get("isMainFrame", True)]
        if not found:
            return None
        frame_id, index, meta = found[0]
        tree = self.chunk.frames[frame_id].resolve(index)
        title = title_of(tree)
        url = meta.get("frameUrl")
        header = [f"URL: {url}", f"Title: {title or ''}"]
        if error:
            header.append(f"Error: {error}")
        viewport = meta.get("viewport") or {}
        shot, frame = self._screenshot(meta.get("pageId") or page_id, time)
        return Observation(kind="web", text="\n".join(header + [render(tree)]).rstrip(), url=url, title=title,
                           ui_tree=orjson.dumps(tree).decode(), screenshot=shot, is_error=bool(error) or None,
                           width=viewport.get("width") or (frame or {}).get("width"),
                           height=viewport.get("height") or (frame or {}).get("height"))


def _keys(combo: str) -> list[str]:
    return combo.split("+") if combo != "+" else ["+"]


def action_from_call(before: dict, after: dict | None, call_input: dict | None, viewport: dict) -> Action:
    """A Playwright API call (its protocol `method` and `params`) in the shared action vocabulary."""
    method, params = before.get("method") or "", before.get("params") or {}
    api = before.get("apiName") or f"{before.get('class', '')}.{method}".lower()
    raw = orjson.dumps({"before": before, "after": after}).decode()
    element = orjson.dumps({"selector": params["selector"]}).decode() if params.get("selector") else None
    common = {"element": element, "arguments": orjson.dumps(params).decode(), "raw": raw}
    point = (call_input or {}).get("point")
    width, height = viewport.get("width"), viewport.get("height")
    x = y = None
    if isinstance(point, dict) and width and height:
        x, y = clamp01(point.get("x", 0) / width), clamp01(point.get("y", 0) / height)
    if method in ("mouseClick", "mouseMove") and width and height and "x" in params:
        x, y = clamp01(params["x"] / width), clamp01(params["y"] / height)
    if method == "goto":
        return Action(kind="navigate", text=params.get("url"), **common)
    if method in ("click", "tap", "mouseClick", "check", "uncheck"):
        kind = "right_click" if params.get("button") == "right" else \
            "double_click" if params.get("clickCount") == 2 else "click"
        return Action(kind=kind, x=x, y=y, **common)
    if method == "dblclick":
        return Action(kind="double_click", x=x, y=y, **common)
    if method in ("hover", "mouseMove"):
        return Action(kind="move", x=x, y=y, **common)
    if method == "selectOption":
        options = params.get("options") or params.get("elements") or []
        chosen = options[0] if options else {}
        text = chosen.get("valueOrLabel") or chosen.get("value") or chosen.get("label") \
            if isinstance(chosen, dict) else str(chosen)
        return Action(kind="click", text=text, **common)
    if method in ("fill", "type", "keyboardType", "keyboardInsertText", "insertText"):
        return Action(kind="type", text=params.get("value", params.get("text")), **common)
    if method in ("press", "keyboardPress"):
        keys = _keys(params.get("key") or "")
        return Action(kind="hotkey" if len(keys) > 1 else "key", keys=keys, **common)
    if method == "mouseWheel":
        dx, dy = params.get("deltaX") or 0, params.get("deltaY") or 0
        direction = ("down" if dy > 0 else "up") if abs(dy) >= abs(dx) else ("right" if dx > 0 else "left")
        return Action(kind="scroll", direction=direction, **common)
    if method == "dragAndDrop":
        element = orjson.dumps({"selector": params.get("source"), "target": params.get("target")}).decode()
        return Action(kind="drag", **{**common, "element": element})
    if method == "goBack":
        return Action(kind="back", **common)
    if method in _WAITS:
        timeout = params.get("timeout")
        duration = timeout / 1000 if method == "waitForTimeout" and isinstance(timeout, (int, float)) else None
        return Action(kind="wait", duration_s=duration, **common)
    return Action(kind="code", code=f"{api}({orjson.dumps(params).decode()})", **common)


def _network_summary(archive: SafeZip, name: str) -> dict:
    member = name[: -len(".trace")] + ".network"
    if not archive.has(member):
        return {}
    documents, count = [], 0
    for line in archive.read(member).splitlines():
        try:
            entry = (orjson.loads(line) or {}).get("snapshot") or {}
        except (orjson.JSONDecodeError, AttributeError):
            continue
        count += 1
        content = (entry.get("response") or {}).get("content") or {}
        if entry.get("_resourceType") == "document" or (content.get("mimeType") or "").startswith("text/html"):
            documents.append({"url": (entry.get("request") or {}).get("url"),
                              "status": (entry.get("response") or {}).get("status")})
    return {"requests": count, "documents": documents[:50]}


def _episode(archive: SafeZip, name: str, source: Source) -> Iterator[Episode | Rejected]:
    chunk, rejected = _parse_chunk(archive.read(name), name)
    yield from rejected
    version = chunk.options.get("version")
    if not isinstance(version, int) or version < MIN_TRACE_VERSION:
        yield Rejected("unsupported_version", f"{name}: trace format version {version!r}; this reader needs "
                       f"{MIN_TRACE_VERSION} or later", name)
        return
    viewport = (chunk.options.get("options") or {}).get("viewport") or {}
    observer = _Observer(chunk, archive, source)
    steps: list[Step] = []
    previous_after: Observation | None = None
    pending_error: str | None = None
    failed = False
    all_closed = True
    for call_id in chunk.order:
        call = chunk.calls[call_id]
        before, after = call["before"], call.get("after")
        if before.get("parentId") or before.get("class") == "Tracing":
            continue
        all_closed = all_closed and after is not None
        obs = observer.observe(before.get("beforeSnapshot"), before.get("pageId"), before.get("startTime"),
                               pending_error)
        if obs is None:  # no snapshot before this call: the page as the previous call left it (error included)
            obs = previous_after or Observation(kind="none", is_error=True if pending_error else None,
                                                text=f"Error: {pending_error}" if pending_error else None)
        steps.append(Step(observation=obs,
                          action=action_from_call(before, after, call.get("input"), viewport),
                          timestamp=_wall_time(before)))
        pending_error = _error_message(after)
        failed = failed or pending_error is not None
        previous_after = observer.observe((after or {}).get("afterSnapshot"), before.get("pageId"),
                                          (after or {}).get("endTime"), pending_error)
    if not steps:
        yield Rejected("empty_episode", f"{name}: no API calls recorded", name)
        return
    options = chunk.options
    env = {"browser": options.get("browserName"), "platform": options.get("platform"),
           "viewport": viewport or None, "trace_version": version, "sdk_language": options.get("sdkLanguage"),
           "user_agent": (options.get("options") or {}).get("userAgent"), "chunk": name,
           **_network_summary(archive, name)}
    yield Episode(
        key=name, domain="web", platform="browser", steps=steps, task=options.get("title"),
        outcome="failure" if failed else "unknown", final_observation=previous_after,
        env={k: v for k, v in env.items() if v is not None},
        terminated=all_closed,  # the script ran to its end; a call left open means the trace was cut
    )


def read(source: Source) -> Iterator[Episode | Rejected]:
    archive = SafeZip(source.read_bytes(), source.uri)
    chunks = sorted(n for n in archive.names()
                    if n.endswith(".trace") and posixpath.basename(n) != "test.trace" and "/" not in n)
    if not chunks:
        raise SourceError("not_a_trace", f"{source.uri}: the archive holds no <n>-trace.trace member")
    for name in chunks:
        yield from _episode(archive, name, source)
