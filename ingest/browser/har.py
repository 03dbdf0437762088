"""HAR 1.2 captures (`{"log": {"version", "creator", "pages", "entries"}}`), including the `_`-prefixed
extensions browsers and test runners add (`_frameref`, `_monotonicTime`, `_resourceType`, `content._file`...).

One episode per page (`pageref`); entries without a page form one more episode. Each entry is one step
(see `ingest.browser.http`): a document load or a followed redirect is a `navigate`, any other request a
`tool_call` named `http_request`; the response is the next step's observation. Bodies over
`http.BODY_INLINE_BYTES`, or binary, go to the blob store and the step's `raw` keeps the blob ref in place
of the body text. A HAR has no instruction (task is null) and ends when recording stops (not terminal).

A file within the `record_bytes` budget is parsed whole (orjson: no entry in it can pass the budget); a larger
one is streamed (ijson): the file is never held whole and each entry is built on its own, so an entry over the
budget is not built but quarantined alone. A document broken part way is streamed too: the entries before the
damage are kept, the rest is one quarantine row.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import io
import re
from typing import Iterator

import ijson
import orjson

from ingest.browser.http import Exchange, exchanges_to_steps, is_inline_text
from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import BudgetExceeded, Source, SourceError, parse_json
from ingest.times import parse_time

FORMAT = "har"
VERSION = "1"
INFO = FormatInfo(
    group="browser", rank=130, domains=('web',), platform="browser",
    summary="HAR 1.2",
    producer="Playwright (Python library, `@playwright/test` 1.65.1)",
    versions="current",
    proof=("the same session recorded by the library and the test runner in Debian's chromium "
           "(`tests/ingest/browser/test_playwright_producer.py`)"),
)

_HAR_HEAD = re.compile(rb'^\s*\{\s*"log"\s*:\s*\{')
_HAR_KEYS = (b'"entries"', b'"creator"', b'"version"')


def looks_like_har(head: bytes) -> bool:
    """A JSON object whose first key is `log`, an object with HAR's keys."""
    head = head.removeprefix(b"\xef\xbb\xbf")
    return bool(_HAR_HEAD.match(head)) and any(key in head for key in _HAR_KEYS)


def units(files: list[str], head) -> list[str]:
    """Every file whose content starts like a HAR document, whatever its name."""
    return [path for path in files if looks_like_har(head(path))]


def _headers(items) -> dict[str, str]:
    return {h["name"]: h.get("value", "") for h in items or () if isinstance(h, dict) and "name" in h}


def _body(content: dict) -> tuple[bytes | None, str | None]:
    """(body bytes, note when absent)."""
    if "text" in content and content["text"] is not None:
        text = content["text"]
        if content.get("encoding") == "base64":
            try:
                return base64.b64decode(text, validate=False), None
            except (binascii.Error, ValueError):
                return None, "base64 body does not decode"
        return text.encode(), None
    if content.get("_file"):
        return None, f"stored in the external file {content['_file']!r}"
    return None, None


def exchange_from_entry(entry: dict, titles: dict[str, str], previous_redirect: str | None) -> Exchange:
    """One HAR entry (also the `snapshot` of a Playwright `.network` line) as an `Exchange`;
    `previous_redirect` is where the previous response pointed (None for the first entry)."""
    request, response = entry.get("request") or {}, entry.get("response") or {}
    content = response.get("content") or {}
    body, note = _body(content)
    url = request.get("url") or ""
    mime = content.get("mimeType")
    resource_type = entry.get("_resourceType")
    # without `_resourceType`, the first request of a page and the redirects it follows are its navigation (a
    # request without a URL follows no redirect: "" is what a response that names none leaves)
    is_navigation = resource_type == "document" if resource_type else (
        previous_redirect is None or (bool(url) and url == previous_redirect))
    raw = entry
    if body is not None and "text" in content:
        raw = {**entry, "response": {**response, "content": {k: v for k, v in content.items() if k != "text"}}}
    post = request.get("postData") or {}
    if isinstance(post.get("text"), str) and not is_inline_text(post["text"]):  # it goes to a blob: not twice
        raw = {**raw, "request": {**request, "postData": {k: v for k, v in post.items() if k != "text"}}}
    status = response.get("status")
    return Exchange(
        method=request.get("method") or "GET", url=url, is_navigation=is_navigation, raw=raw,
        request_headers=_headers(request.get("headers")),
        post_data=post.get("text"), post_mime_type=post.get("mimeType"),
        status=status if isinstance(status, int) and status > 0 else None,
        status_text=response.get("statusText") or "", http_version=response.get("httpVersion") or "",
        response_headers=_headers(response.get("headers")), mime_type=mime, body=body, body_note=note,
        started_at=parse_time(entry.get("startedDateTime")), frame=entry.get("_frameref"),
        error=response.get("_failureText") or entry.get("_failureText"),
        title=titles.get(entry.get("pageref")),
    )


def _location(headers: dict[str, str]) -> str | None:
    """The `Location` header, any case (the last of several spellings, as a dict of lower-cased names keeps)."""
    found = None
    for name, value in headers.items():
        if name.lower() == "location":
            found = value
    return found


def exchanges_from_entries(entries: list[dict], titles: dict[str, str]) -> list[Exchange]:
    """Entries in start order; a followed redirect (the URL the previous response pointed to) navigates."""
    exchanges, redirect = [], None
    for entry in entries:
        ex = exchange_from_entry(entry, titles, redirect)
        location = (entry.get("response") or {}).get("redirectURL")
        redirect = location or (_location(ex.response_headers) or "")
        exchanges.append(ex)
    return exchanges


_OPEN, _CLOSE = ("start_map", "start_array"), ("end_map", "end_array")
_ENTRY = "log.entries.item"


class _WithoutBom:
    """A stream without its leading UTF-8 byte order mark (Windows exporters write one; JSON has none)."""

    def __init__(self, stream):
        self._stream, self._first = stream, True

    def read(self, n: int = -1) -> bytes:
        if not self._first or n == 0:  # ijson reads 0 bytes first to tell bytes from text
            return self._stream.read(n)
        self._first = False
        head = self._stream.read(3).removeprefix(b"\xef\xbb\xbf")
        return head + self._stream.read(max(0, n - len(head)) if n > 0 else n)


def _members(stream, limit: int) -> Iterator[tuple[str, object, int]]:
    """(where, value, size) for each member of `log` but `entries` ("log.version", ...) and for each entry
    (`_ENTRY`), built one at a time; value None when its text passed `limit` characters (`size` is then
    where building stopped). SourceError when there is no `log.entries` array."""
    builder, depth, size, target, entries = None, 0, 0, "", False
    # 1 MiB reads: yajl's cost for a value split over reads grows with the square of their number (a 50 MB
    # body takes 15 s in ijson's default 64 KiB reads, 1.1 s in 1 MiB ones; larger reads slow many small entries)
    for prefix, event, value in ijson.parse(stream, use_float=True, buf_size=1 << 20):
        if depth:  # inside a value being built (or skipped, once over the limit)
            depth += 1 if event in _OPEN else -1 if event in _CLOSE else 0
            if builder is not None:
                size += len(value) if value.__class__ is str else 8
                if size > limit:
                    builder = None
                else:
                    builder.event(event, value)
            if not depth:
                yield target, (builder.value if builder is not None else None), size
            continue
        if prefix == "log.entries":
            if event == "start_array":
                entries = True
            elif event != "end_array":
                break
        elif prefix == _ENTRY or (prefix.startswith("log.") and prefix.count(".") == 1):
            if event in _CLOSE:
                continue
            if event not in _OPEN:
                yield prefix, value, 8
                continue
            builder, depth, size, target = ijson.ObjectBuilder(), 1, 0, prefix
            builder.event(event, value)
    if not entries:
        raise SourceError("bad_record", "no log.entries array (not HAR)")


def _whole_members(doc) -> Iterator[tuple[str, object, int]]:
    """`_members` of a document parsed whole."""
    log = doc.get("log") if isinstance(doc, dict) else None
    if not isinstance(log, dict) or not isinstance(log.get("entries"), list):
        raise SourceError("bad_record", "no log.entries array (not HAR)")
    for key, value in log.items():
        if key != "entries":
            yield f"log.{key}", value, 0
    for entry in log["entries"]:
        yield _ENTRY, entry, 0


def _log_members(source: Source, limit: int, errors: list[str]) -> Iterator[tuple[str, object, int]]:
    """`_members` of the unit: parsed whole when the file is within `limit` (fast), else streamed. A whole
    parse's error is appended to `errors` (it says where, which the streaming parser's does not)."""
    size = source.size(source.path)
    if size is None or size > limit:
        with source.open_stream() as stream:
            yield from _members(_WithoutBom(stream), limit)
        return
    # Windows exporters (Fiddler, some browsers) write a UTF-8 BOM, which JSON parsers refuse
    data = source.read_bytes().removeprefix(b"\xef\xbb\xbf")
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        if "depth limit" in str(e):
            parse_json(data, source.uri)  # raises the json_depth budget's error
        errors.append(str(e))
        yield from _members(io.BytesIO(data), limit)  # damaged: stream it to keep the entries before the damage
        return
    del data
    yield from _whole_members(doc)


def _read_log(source: Source, log: dict, entries: list) -> Iterator[Rejected]:
    """Fill `log` (its members but entries) and `entries` ((index, entry)) from the streamed document;
    Rejected for each entry over the record_bytes budget or that is not an entry, and for a broken tail."""
    limit, index, errors = source.budgets.record_bytes, -1, []
    try:
        for where, value, size in _log_members(source, limit, errors):
            if where != _ENTRY:
                if value is None:
                    yield BudgetExceeded("record_bytes", limit, source.uri,
                                         f"{where} is not decoded").as_rejected(where)
                else:
                    log[where[4:]] = value
                continue
            index += 1
            if value is None:
                yield BudgetExceeded("record_bytes", limit, f"{source.uri}: log.entries[{index}]",
                                     "the entry is not decoded",
                                     location=source.uri).as_rejected(str(index))
            elif not isinstance(value, dict) or not isinstance(value.get("request"), dict):
                yield Rejected("bad_record", f"{source.uri}: log.entries[{index}] has no request object",
                               record_id=str(index))
            else:
                entries.append((index, value))
    except SourceError as e:
        if e.reason.startswith(f"{source.uri}: "):
            raise
        raise SourceError(e.rule, f"{source.uri}: {e.reason}", e.location or source.uri) from None
    except ijson.JSONError as e:
        error = errors[0] if errors else str(e).strip().splitlines()[0]
        if index < 0:  # nothing whole was read: the file is not JSON (or not HAR) from the start
            raise SourceError("parse_error", f"{source.uri}: invalid JSON: {error}", source.uri) from None
        yield Rejected("parse_error", f"{source.uri}: invalid JSON after log.entries[{index}] (what follows it "
                       f"is lost): {error}", source.uri, record_id=str(index + 1))


def read(source: Source) -> Iterator[Episode | Rejected]:
    log: dict = {}
    entries: list[tuple[int, dict]] = []
    yield from _read_log(source, log, entries)
    pages = [p for p in log.get("pages") or () if isinstance(p, dict) and p.get("id")]
    titles = {p["id"]: p.get("title") for p in pages}
    groups: dict[str, list[dict]] = {p["id"]: [] for p in pages}
    for _, entry in entries:
        groups.setdefault(entry.get("pageref") or "", []).append(entry)
    entries.clear()

    creator = log.get("creator") or {}
    browser = log.get("browser") or {}
    for page_id, entries in groups.items():
        if not entries:
            continue
        # stable sort: entries without a time keep their file order
        entries.sort(key=lambda e: parse_time(e.get("startedDateTime")) or dt.datetime.min.replace(
            tzinfo=dt.timezone.utc))
        steps, final = exchanges_to_steps(exchanges_from_entries(entries, titles), source.put_blob, source.uri)
        page = next((p for p in pages if p["id"] == page_id), {})
        env = {"browser": browser.get("name"), "browser_version": browser.get("version"),
               "recorder": creator.get("name"), "recorder_version": creator.get("version"),
               "har_version": log.get("version"), "page_id": page_id or None, "page_title": page.get("title"),
               "page_timings": page.get("pageTimings")}
        yield Episode(key=page_id, domain="web", platform="browser", steps=steps, task=None,
                      final_observation=final, env={k: v for k, v in env.items() if v is not None},
                      terminated=False)  # recording stopped; the page lived on
