"""Chrome DevTools Protocol logs: a JSON array of raw protocol messages `{"method": "Domain.event",
"params": {...}}` (the "devtoolsLog" recorders and performance tools write), optionally with `sessionId`.

One episode per session (messages without `sessionId` form one). Requests are steps (see
`ingest.browser.http`): `Network.requestWillBeSent` opens an exchange, `Network.responseReceived`, the
`redirectResponse` of the next `requestWillBeSent` with the same `requestId`, or `Network.loadingFailed`
closes it. A `Document` request is a `navigate`, anything else a `tool_call` named `http_request`.
Bodies are not part of these logs. Timestamps come from `wallTime` (epoch seconds); the monotonic
`timestamp` fields have no epoch, so steps without `wallTime` stay untimed.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from typing import Iterator

from ingest.browser.http import Exchange, exchanges_to_steps, is_inline_text
from ingest.format_info import FormatInfo
from ingest.record import Episode, Rejected
from ingest.source import Source, SourceError, parse_json

FORMAT = "cdp"
VERSION = "1"
INFO = FormatInfo(
    group="browser", rank=140, domains=('web',), platform="browser",
    summary="Chrome DevTools Protocol logs",
)

_CDP_HEAD = re.compile(rb'^\s*\[\s*\{')
_CDP_METHOD = re.compile(rb'"method"\s*:\s*"(Page|Network|Runtime|Target|DOM|Input|Log|Fetch|Emulation|Security|'
                         rb'Performance|Tracing|Debugger|Console|Inspector|Storage|ServiceWorker|CSS|Overlay|'
                         rb'Browser|Accessibility|Animation|Audits|Preload)\.[A-Za-z]+"')
_PROTOCOLS = {"http/1.0": "HTTP/1.0", "http/1.1": "HTTP/1.1", "h2": "HTTP/2.0", "h3": "HTTP/3"}


def looks_like_cdp(head: bytes) -> bool:
    head = head.removeprefix(b"\xef\xbb\xbf")
    return bool(_CDP_HEAD.match(head) and _CDP_METHOD.search(head))


def units(files: list[str], head) -> list[str]:
    """Every file whose content is a JSON array of protocol messages, whatever its name."""
    return [path for path in files if looks_like_cdp(head(path))]


def _wall_time(params: dict) -> dt.datetime | None:
    wall = params.get("wallTime")
    if not isinstance(wall, (int, float)) or wall <= 0:
        return None
    return dt.datetime.fromtimestamp(wall, dt.timezone.utc)


def _apply_response(ex: Exchange, response: dict) -> None:
    status = response.get("status")
    ex.status = int(status) if isinstance(status, (int, float)) else None
    ex.status_text = response.get("statusText") or ""
    protocol = (response.get("protocol") or "").lower()
    ex.http_version = _PROTOCOLS.get(protocol, protocol.upper())
    ex.response_headers = {str(k): str(v) for k, v in (response.get("headers") or {}).items()}
    ex.mime_type = response.get("mimeType")


def _without_big_post(params: dict) -> dict:
    """The message's params, less a request body that goes to the blob store (held once, there)."""
    request = params.get("request")
    post = request.get("postData") if isinstance(request, dict) else None
    if not isinstance(post, str) or is_inline_text(post):
        return params
    return {**params, "request": {k: v for k, v in request.items() if k != "postData"}}


def _new_exchange(params: dict) -> Exchange:
    request = params.get("request") or {}
    return Exchange(
        method=request.get("method") or "GET", url=request.get("url") or params.get("documentURL") or "",
        is_navigation=params.get("type") == "Document",
        raw={"request": _without_big_post(params)},
        request_headers={str(k): str(v) for k, v in (request.get("headers") or {}).items()},
        post_data=request.get("postData"), started_at=_wall_time(params), frame=params.get("frameId"),
    )


def exchanges_from_messages(messages: list[dict]) -> list[Exchange]:
    """Exchanges in request order; redirects of one `requestId` become one exchange per hop."""
    exchanges: list[Exchange] = []
    open_by_id: dict[str, Exchange] = {}
    for message in messages:
        method, params = message.get("method"), message.get("params") or {}
        request_id = params.get("requestId")
        if method == "Network.requestWillBeSent":
            previous = open_by_id.get(request_id)
            if previous is not None and isinstance(params.get("redirectResponse"), dict):
                _apply_response(previous, params["redirectResponse"])
            ex = _new_exchange(params)
            exchanges.append(ex)
            open_by_id[request_id] = ex
        elif method == "Network.responseReceived" and request_id in open_by_id:
            ex = open_by_id[request_id]
            _apply_response(ex, params.get("response") or {})
            ex.raw["response"] = params
        elif method == "Network.loadingFailed" and request_id in open_by_id:
            ex = open_by_id[request_id]
            if ex.status is None:
                ex.error = params.get("errorText") or "loading failed"
            ex.raw["failure"] = params
    return exchanges  # an exchange left without response or failure observes "no response recorded"


def read(source: Source) -> Iterator[Episode | Rejected]:
    messages = parse_json(source.read_bytes(), source.uri, source.budgets)
    if not isinstance(messages, list):
        raise SourceError("bad_record", f"{source.uri}: expected a JSON array of protocol messages")
    sessions: dict[str, list[dict]] = {}
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("method") or message.get("id"), (str, int)):
            yield Rejected("bad_record", f"{source.uri}: message [{index}] is not a protocol message",
                           record_id=str(index), snippet=str(message)[:200])
            continue
        sessions.setdefault(message.get("sessionId") or "", []).append(message)

    for session, session_messages in sessions.items():
        exchanges = exchanges_from_messages(session_messages)
        if not exchanges:
            yield Rejected("empty_episode", f"{source.uri}: session {session or '(default)'} has no network "
                           "requests", record_id=session or None)
            continue
        steps, final = exchanges_to_steps(exchanges, source.put_blob, source.uri)
        navigated = [m["params"]["frame"] for m in session_messages if m.get("method") == "Page.frameNavigated"
                     and isinstance((m.get("params") or {}).get("frame"), dict)]
        main = next((f for f in navigated if not f.get("parentId")), None)
        env = {"session_id": session or None, "main_frame_url": main.get("url") if main else None,
               "events": dict(Counter(m.get("method") for m in session_messages if m.get("method")))}
        yield Episode(key=session, domain="web", platform="browser", steps=steps, task=None,
                      final_observation=final, env={k: v for k, v in env.items() if v is not None},
                      terminated=False)  # the log stops with the recorder; the page lived on
