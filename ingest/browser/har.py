"""HAR 1.2 captures (`{"log": {"version", "creator", "pages", "entries"}}`), including the `_`-prefixed
extensions browsers and test runners add (`_frameref`, `_monotonicTime`, `_resourceType`, `content._file`...).

One episode per page (`pageref`); entries without a page form one more episode. Each entry is one step
(see `ingest.browser.http`): a document load or a followed redirect is a `navigate`, any other request a
`tool_call` named `http_request`; the response is the next step's observation. Bodies over
`http.BODY_INLINE_BYTES`, or binary, go to the blob store and the step's `raw` keeps the blob ref in place
of the body text. A HAR has no instruction (task is null) and ends when recording stops (not terminal).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from typing import Iterator

from ingest.browser.http import Exchange, exchanges_to_steps
from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError, parse_json
from ingest.times import parse_time

FORMAT = "har"
VERSION = "1"

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
    # without `_resourceType`, the first request of a page and the redirects it follows are its navigation
    is_navigation = resource_type == "document" if resource_type else (
        previous_redirect is None or url == previous_redirect)
    raw = entry
    if body is not None and "text" in content:
        raw = {**entry, "response": {**response, "content": {k: v for k, v in content.items() if k != "text"}}}
    status = response.get("status")
    return Exchange(
        method=request.get("method") or "GET", url=url, is_navigation=is_navigation, raw=raw,
        request_headers=_headers(request.get("headers")),
        post_data=(request.get("postData") or {}).get("text"),
        status=status if isinstance(status, int) and status > 0 else None,
        status_text=response.get("statusText") or "", http_version=response.get("httpVersion") or "",
        response_headers=_headers(response.get("headers")), mime_type=mime, body=body, body_note=note,
        started_at=parse_time(entry.get("startedDateTime")), frame=entry.get("_frameref"),
        error=response.get("_failureText") or entry.get("_failureText"),
        title=titles.get(entry.get("pageref")),
    )


def exchanges_from_entries(entries: list[dict], titles: dict[str, str]) -> list[Exchange]:
    """Entries in start order; a followed redirect (the URL the previous response pointed to) navigates."""
    exchanges, redirect = [], None
    for entry in entries:
        ex = exchange_from_entry(entry, titles, redirect)
        location = (entry.get("response") or {}).get("redirectURL")
        redirect = location or ({k.lower(): v for k, v in ex.response_headers.items()}.get("location") or "")
        exchanges.append(ex)
    return exchanges


def read(source: Source) -> Iterator[Episode | Rejected]:
    # Windows exporters (Fiddler, some browsers) write a UTF-8 BOM, which JSON parsers refuse
    har = parse_json(source.read_bytes().removeprefix(b"\xef\xbb\xbf"), source.uri)
    log = har.get("log") if isinstance(har, dict) else None
    if not isinstance(log, dict) or not isinstance(log.get("entries"), list):
        raise SourceError("bad_record", f"{source.uri}: no log.entries array (not HAR)")
    pages = [p for p in log.get("pages") or () if isinstance(p, dict) and p.get("id")]
    titles = {p["id"]: p.get("title") for p in pages}
    groups: dict[str, list[dict]] = {p["id"]: [] for p in pages}
    for index, entry in enumerate(log["entries"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("request"), dict):
            yield Rejected("bad_record", f"{source.uri}: log.entries[{index}] has no request object",
                           record_id=str(index))
            continue
        groups.setdefault(entry.get("pageref") or "", []).append(entry)

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
