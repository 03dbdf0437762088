"""Playwright trace archives (`trace.zip`, trace format versions 4 to 10: Playwright 1.31 to 1.65).

Members: `<n>-trace.trace` (or `trace.trace`), JSONL events of one context chunk; `<n>-trace.network`, JSONL
`resource-snapshot` lines whose `snapshot` is a HAR entry; `<n>-trace.stacks`; screencast JPEGs
(`resources/<sha1>` up to v8, `screencast/<page>-<time>.jpeg` from v9, named by the frame's `sha1` or `file`);
snapshot resources. A test-runner trace (@playwright/test) adds the runner's own chunk, `test.trace` (or,
before v7, a chunk with no `context-options` whose calls are all `Test` steps: 1.37's `1-trace.trace`), and
`src/<sha1>.<ext>` sources and `attachments/`; an APIRequestContext chunk (no browser) usually records no call.
The archive is opened with `ingest.safe_zip` (path and size guards).

One episode per library (browser context) chunk. Steps are the top-level API calls: `before` and `after`
events paired by `callId` (calls with a `parentId` are nested inside another call and left out). The
observation of a step is the main-frame DOM snapshot taken before the call (named by the call's
`beforeSnapshot` up to v9; from v10 the snapshot names its `callId` and `phase`), or the previous call's
after-snapshot when there is none, rendered to text with URL and title, plus the latest screencast frame
(to the blob store) when the archive holds it. The last call's after-snapshot is the final observation.
A call's error shows in the next observation (`is_error`). A call's point (`input.point`, a mouse call's `x`,
`y`) is normalized by the context's fixed viewport, or, in a context without one (`no_viewport`), by the page's
size at that call: the snapshot's `viewport`, else the screencast frame's size.

Timestamps. Up to v6 every `before` carries its `wallTime` (epoch ms). From v7 calls carry only monotonic
`startTime` (ms on the recording process's clock); the chunk's `context-options` records `wallTime` and
`monotonicTime` read together when the chunk started, so a call started at
`wallTime + (startTime - monotonicTime)` (Playwright's viewer aligns contexts by the same time origin,
`wallTime - monotonicTime`: traceModel.ts `mergeActionsAndUpdateTiming`).

The test runner's chunk is a view of the same calls (hooks, fixtures, `expect` steps): it is not read as
steps; its step errors and `error` events decide the outcome of the archive's episodes (an error: failure;
none and every step closed: success) and are summarized in `env.test_runner`. An archive whose chunks hold no
call at all is one `empty_episode` row that says what it does hold.
"""

from __future__ import annotations

import bisect
import datetime as dt
import posixpath
import re
from typing import Iterator

import orjson

from ingest.browser.dom import FrameSnapshots, render, title_of
from ingest.format_info import FormatInfo
from ingest.record import Action, Episode, Observation, Rejected, Step, clamp01
from ingest.safe_zip import SafeZip
from ingest.source import Source, SourceError

FORMAT = "playwright_trace"
VERSION = "3"
INFO = FormatInfo(
    group="browser", rank=120, domains=('web',), platform="browser",
    summary="Playwright `trace.zip` (v4–v10, library and test-runner traces)",
    producer="Playwright (Python library, `@playwright/test` 1.65.1)",
    versions="current",
    proof=("the same session recorded by the library and the test runner in Debian's chromium "
           "(`tests/ingest/browser/test_playwright_producer.py`)"),
)
MIN_TRACE_VERSION = 4
MAX_TRACE_VERSION = 10  # the newest format read here (Playwright 1.65); a newer one may mean other fields

_MEMBER_SUFFIXES = (".trace", ".network", ".stacks")
# what a test-runner archive may start with: its sources (`src/<sha1>.<ext>`) and attachments
_RUNNER_FIRST_MEMBER = re.compile(r"(src|attachments)/[0-9a-f]{40}(\.\w+)?$")
_WAITS = {"waitForTimeout", "waitForSelector", "waitForLoadState", "waitForURL", "waitForEventInfo",
          "waitForFunction", "waitForNavigation", "__waitInfo__"}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RUNNER_ERRORS_KEPT = 5


def _first_member_name(head: bytes) -> str | None:
    """The name in a zip's first local file header (offset 30, length at offset 26)."""
    if len(head) < 30 or not head.startswith(b"PK\x03\x04"):
        return None
    length = int.from_bytes(head[26:28], "little")
    return head[30:30 + length].decode("utf-8", "replace")


def looks_like_trace(head: bytes) -> bool:
    name = _first_member_name(head)
    return bool(name) and (name.endswith(_MEMBER_SUFFIXES) or name.startswith(("resources/", "screencast/"))
                           or bool(_RUNNER_FIRST_MEMBER.match(name)))


def units(files: list[str], head) -> list[str]:
    """Zip archives whose first member is a trace, network log, stack table, trace resource or screencast
    frame, or a test-runner trace's source or attachment."""
    return [path for path in files if looks_like_trace(head(path))]


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class _Chunk:
    """What one `*.trace` member records, indexed for building steps."""

    def __init__(self, name: str):
        self.name = name
        self.options: dict = {}
        self.calls: dict[str, dict] = {}  # callId -> {"before": ev, "after": ev, "input": ev}
        self.order: list[str] = []
        self.errors: list[str] = []  # `error` events (the test runner's test errors)
        self.frames: dict[str, FrameSnapshots] = {}
        self.by_name: dict[str, list[tuple[str, int, dict]]] = {}  # snapshotName -> (frameId, index, meta)
        self.by_phase: dict[tuple[str, str], list[tuple[str, int, dict]]] = {}  # (callId, phase) -> same
        self.screencast: dict[str, list[tuple[float, str, dict]]] = {}  # pageId -> sorted (time, member, ev)

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
            frame_id = snap.get("frameId") or ""
            index = self.frames.setdefault(frame_id, FrameSnapshots()).add(snap.get("html"))
            entry = (frame_id, index, {k: v for k, v in snap.items() if k != "html"})
            if snap.get("snapshotName"):  # up to v9: `before@<callId>`, named by the call's `beforeSnapshot`
                self.by_name.setdefault(snap["snapshotName"], []).append(entry)
            if snap.get("callId") and snap.get("phase"):  # v10: the call and phase (before, action, after)
                self.by_phase.setdefault((snap["callId"], snap["phase"]), []).append(entry)
        elif kind == "screencast-frame":
            member = ev.get("file") or (f"resources/{ev['sha1']}" if ev.get("sha1") else None)
            if member:
                frames = self.screencast.setdefault(ev.get("pageId") or "", [])
                bisect.insort(frames, (float(ev.get("timestamp") or 0), member, ev), key=lambda f: f[0])
        elif kind == "error" and ev.get("message"):
            self.errors.append(str(ev["message"]))

    def version(self):
        return self.options.get("version")

    def is_test_runner(self) -> bool:
        """The @playwright/test runner's own chunk: `test.trace`, origin `testRunner` (v7+), or, before v7, a
        chunk without `context-options` whose calls are all `Test` steps."""
        if posixpath.basename(self.name) == "test.trace" or self.options.get("origin") == "testRunner":
            return True
        return not self.options and bool(self.order) and \
            all(self.calls[c]["before"].get("class") == "Test" for c in self.order)

    def top_level_calls(self) -> list[dict]:
        calls = (self.calls[c] for c in self.order)
        return [c for c in calls if not c["before"].get("parentId") and c["before"].get("class") != "Tracing"]


def _parse_chunk(data: bytes, name: str) -> tuple[_Chunk, list[Rejected]]:
    chunk, rejected = _Chunk(name), []
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


class _Clock:
    """Epoch time of a chunk's calls. Up to v6 a `before` carries its own `wallTime`. From v7 only the chunk's
    `context-options` does, with the `monotonicTime` read at the same moment: their difference is the time
    origin of every monotonic time in the chunk (`startTime`, `endTime`, screencast `timestamp`)."""

    def __init__(self, chunk: _Chunk):
        options, self.origin = chunk.options, None
        wall, mono = options.get("wallTime"), options.get("monotonicTime")
        if _number(wall) and wall > 0 and _number(mono) and mono > 0:
            self.origin = wall - mono
        else:  # v6 and earlier (monotonicTime absent): the first call that has both times anchors the rest
            for call in chunk.calls.values():
                before = call.get("before") or {}
                if _number(before.get("wallTime")) and before["wallTime"] > 0 and _number(before.get("startTime")):
                    self.origin = before["wallTime"] - before["startTime"]
                    break

    def wall_time(self, before: dict) -> dt.datetime | None:
        wall = before.get("wallTime")
        if not (_number(wall) and wall > 0):
            start = before.get("startTime")
            wall = self.origin + start if self.origin is not None and _number(start) else None
        return dt.datetime.fromtimestamp(wall / 1000, dt.timezone.utc) if wall else None


def _error_message(after: dict | None) -> str | None:
    error = (after or {}).get("error")
    if not error:
        return None
    if isinstance(error, dict):
        inner = error.get("error") if isinstance(error.get("error"), dict) else error
        return inner.get("message") or inner.get("name") or "error"
    return str(error)


class _Observer:
    """Builds observations from a chunk's snapshots and screencast frames; blobs are stored once per member."""

    def __init__(self, chunk: _Chunk, archive: SafeZip, source: Source):
        self.chunk, self.archive, self.source = chunk, archive, source
        self.blobs: dict[str, str | None] = {}

    def _screenshot(self, page_id: str | None, time: float | None) -> tuple[str | None, dict | None]:
        """The last screencast frame of the page at or before `time` (monotonic ms): (blob ref, its event)."""
        frames = self.chunk.screencast.get(page_id or "")
        if not frames or time is None:
            return None, None
        at = bisect.bisect_right([f[0] for f in frames], time) - 1
        if at < 0:
            return None, None
        _, member, ev = frames[at]
        if member not in self.blobs:
            self.blobs[member] = self.source.put_blob(self.archive.read(member), "image/jpeg", self.source.uri) \
                if self.archive.has(member) else None
        return self.blobs[member], ev

    def _snapshot(self, name: str | None, call_id: str | None, phase: str) -> tuple[str, int, dict] | None:
        found = self.chunk.by_name.get(name or "") or self.chunk.by_phase.get((call_id or "", phase)) or ()
        main = [s for s in found if s[2].get("isMainFrame", True)]
        return main[0] if main else None

    def observe(self, name: str | None, call_id: str | None, phase: str, page_id: str | None, time: float | None,
                error: str | None = None) -> Observation | None:
        """The main-frame snapshot of the call's `phase` (named `name` when the trace names snapshots), or None
        when the trace has none."""
        found = self._snapshot(name, call_id, phase)
        if found is None:
            return None
        frame_id, index, meta = found
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


def _api_name(before: dict) -> str:
    """`page.goto` style: the call's `apiName` (up to v7), else its protocol class and method (from v8 the
    `title` is a caption such as "Navigate", and often absent)."""
    if before.get("apiName"):
        return before["apiName"]
    cls = before.get("class") or ""
    return f"{cls[:1].lower()}{cls[1:]}.{before.get('method') or ''}"


def action_from_call(before: dict, after: dict | None, call_input: dict | None, viewport: dict) -> Action:
    """A Playwright API call (its protocol `method` and `params`) in the shared action vocabulary."""
    method, params = before.get("method") or "", before.get("params") or {}
    api = _api_name(before)
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


def _runner_verdict(chunks: list[_Chunk]) -> dict | None:
    """What the test runner's chunks say about the test: {"outcome", "summary"}; None without one."""
    if not chunks:
        return None
    errors, steps, closed = [], 0, True
    for chunk in chunks:
        for call_id in chunk.order:
            call = chunk.calls[call_id]
            steps += 1
            closed = closed and "after" in call
            if message := _error_message(call.get("after")):
                errors.append(message)
        errors.extend(chunk.errors)
    # the runner colours its messages for a terminal; the first line says what failed
    first_lines = list(dict.fromkeys(_ANSI.sub("", e).strip().splitlines()[0] for e in errors if e.strip()))
    summary = {"chunks": [c.name for c in chunks], "steps": steps,
               "errors": first_lines[:_RUNNER_ERRORS_KEPT]}
    outcome = "failure" if errors else "success" if closed else "unknown"
    return {"outcome": outcome, "summary": summary}


def _episode(archive: SafeZip, chunk: _Chunk, source: Source) -> Episode | None:
    """The chunk's top-level calls as an episode; None when it recorded no call."""
    calls = chunk.top_level_calls()
    if not calls:
        return None
    viewport = (chunk.options.get("options") or {}).get("viewport") or {}
    observer, clock = _Observer(chunk, archive, source), _Clock(chunk)
    steps: list[Step] = []
    previous_after: Observation | None = None
    pending_error: str | None = None
    failed = False
    all_closed = True
    for call in calls:
        before, after = call["before"], call.get("after")
        call_id, page_id = before.get("callId"), before.get("pageId")
        all_closed = all_closed and after is not None
        obs = observer.observe(before.get("beforeSnapshot"), call_id, "before", page_id, before.get("startTime"),
                               pending_error)
        if obs is None:  # no snapshot before this call: the page as the previous call left it (error included)
            obs = previous_after or Observation(kind="none", is_error=True if pending_error else None,
                                                text=f"Error: {pending_error}" if pending_error else None)
        # a context with no fixed viewport (`no_viewport`, a headed window): the page's size at this call, from
        # its snapshot or screencast frame, is what the call's point is in
        size = viewport or {"width": obs.width, "height": obs.height}
        steps.append(Step(observation=obs, action=action_from_call(before, after, call.get("input"), size),
                          timestamp=clock.wall_time(before)))
        pending_error = _error_message(after)
        failed = failed or pending_error is not None
        previous_after = observer.observe((after or {}).get("afterSnapshot"), call_id, "after", page_id,
                                          (after or {}).get("endTime"), pending_error)
    options = chunk.options
    env = {"browser": options.get("browserName"), "platform": options.get("platform"),
           "viewport": viewport or None, "trace_version": chunk.version(), "sdk_language": options.get("sdkLanguage"),
           "playwright_version": options.get("playwrightVersion"),
           "user_agent": (options.get("options") or {}).get("userAgent"), "chunk": chunk.name,
           **_network_summary(archive, chunk.name)}
    return Episode(
        key=chunk.name, domain="web", platform="browser", steps=steps, task=options.get("title"),
        outcome="failure" if failed else "unknown", final_observation=previous_after,
        env={k: v for k, v in env.items() if v is not None},
        terminated=all_closed,  # the script ran to its end; a call left open means the trace was cut
    )


def _version_problem(chunk: _Chunk) -> Rejected | None:
    version = chunk.version()
    if not chunk.options:
        return Rejected("unsupported_version", f"{chunk.name}: no context-options event, so no trace format "
                        "version (and not the test runner's chunk: its calls are not all Test steps)", chunk.name)
    if not isinstance(version, int) or version < MIN_TRACE_VERSION:
        return Rejected("unsupported_version", f"{chunk.name}: trace format version {version!r}; this reader "
                        f"needs {MIN_TRACE_VERSION} or later", chunk.name)
    if version > MAX_TRACE_VERSION:
        return Rejected("unsupported_version", f"{chunk.name}: trace format version {version} is newer than "
                        f"this reader knows ({MIN_TRACE_VERSION} to {MAX_TRACE_VERSION}); update the reader",
                        chunk.name)
    return None


def read(source: Source) -> Iterator[Episode | Rejected]:
    archive = SafeZip(source.read_bytes(), source.uri)
    names = sorted(n for n in archive.names() if n.endswith(".trace") and "/" not in n)
    if not names:
        raise SourceError("not_a_trace", f"{source.uri}: the archive holds no <n>-trace.trace member")
    runner: list[_Chunk] = []
    episodes: list[Episode] = []
    empty: list[str] = []
    refused = False
    for name in names:
        chunk, rejected = _parse_chunk(archive.read(name), name)
        yield from rejected
        if chunk.is_test_runner():
            runner.append(chunk)
            continue
        if problem := _version_problem(chunk):
            refused = True
            yield problem
            continue
        episode = _episode(archive, chunk, source)
        if episode is None:
            empty.append(name)
        else:
            episodes.append(episode)
    verdict = _runner_verdict(runner)
    for episode in episodes:
        if verdict:  # the runner saw the test's assertions; a call's error alone may have been expected
            episode.outcome = verdict["outcome"]
            episode.env["test_runner"] = verdict["summary"]
        yield episode
    if not episodes and not refused:
        held = [f"{', '.join(empty)} (no call)"] if empty else []
        held += [f"the test runner's steps ({', '.join(c.name for c in runner)})"] if runner else []
        yield Rejected("empty_episode", f"{source.uri}: no browser call recorded; the archive holds only "
                       f"{' and '.join(held)}", names[0])
