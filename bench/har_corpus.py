"""Generated HAR captures for the readers' benchmark (`bench/readers.py`): browser sessions of the size real
exports have, each file its own (no two alike, so nothing a reader caches per distinct text flatters it).

`har_session(path, seed)` writes one HAR 1.2 file as Chrome's DevTools export writes it: 2-4 pages, each a
document load (now and then after a redirect) and 20-60 subresources: scripts, style sheets, images and fonts
(base64), JSON XHRs (some POSTs with a JSON body), each with its headers, cookies, timings and the
`_`-extensions (`_resourceType`, `_initiator`, `_priority`, `_transferSize`); about 2-6 MB (indented, as DevTools saves it), text bodies of
random words and code, binary ones random bytes.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import random
from pathlib import Path

_START = dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc)
_WORDS = ("the agent page search result item price cart account order review button form input value list table "
          "data user session token request response cache layout header footer section article image video "
          "link title label menu option select filter sort next prev close open load error status").split()
_CODE = ("function var let const return if else for while new this await async import export class extends "
         "document window fetch then catch push map filter reduce JSON parse stringify length null true false").split()
# (resource type, mime type, body kind, smallest and largest body in bytes, weight)
_KINDS = [("script", "application/javascript", "code", 2_000, 120_000, 5),
          ("stylesheet", "text/css", "code", 1_000, 40_000, 2),
          ("image", "image/png", "binary", 500, 60_000, 5),
          ("image", "image/jpeg", "binary", 2_000, 90_000, 3),
          ("font", "font/woff2", "binary", 10_000, 40_000, 1),
          ("xhr", "application/json", "json", 200, 8_000, 5),
          ("fetch", "application/json", "json", 200, 4_000, 3)]


def _text(rnd: random.Random, words, size: int) -> str:
    out, n = [], 0
    while n < size:
        line = " ".join(rnd.choices(words, k=rnd.randint(4, 14)))
        out.append(line)
        n += len(line) + 1
    return "\n".join(out)


def _headers(rnd: random.Random, mime: str, size: int, extra: dict | None = None) -> list[dict]:
    items = {"date": "Sun, 01 Jun 2025 10:00:00 GMT", "content-type": mime, "content-length": str(size),
             "cache-control": rnd.choice(["max-age=3600", "no-cache", "public, max-age=31536000"]),
             "etag": f'"{rnd.getrandbits(64):016x}"', "server": rnd.choice(["nginx", "cloudflare", "AmazonS3"]),
             "x-request-id": f"{rnd.getrandbits(96):024x}", "vary": "Accept-Encoding", **(extra or {})}
    return [{"name": k, "value": v} for k, v in items.items()]


def _entry(rnd: random.Random, page: str, host: str, ms: int, kind, first: bool) -> dict:
    rtype, mime, body, low, high, _ = kind
    size = rnd.randint(low, high)
    path = f"/{rtype}/{rnd.getrandbits(48):012x}"
    content: dict = {"size": size, "mimeType": mime}
    if body == "binary":
        content |= {"text": base64.b64encode(rnd.randbytes(size)).decode(), "encoding": "base64"}
    elif body == "json":
        content["text"] = json.dumps({"items": [{"id": rnd.getrandbits(32), "name": _text(rnd, _WORDS, 30)}
                                                for _ in range(max(1, size // 60))]})
    else:
        content["text"] = _text(rnd, _CODE if body == "code" else _WORDS, size)
    method = "POST" if rtype == "xhr" and rnd.random() < 0.3 else "GET"
    request = {"method": method, "url": f"https://{host}{path}?v={rnd.randint(1, 99)}", "httpVersion": "http/2.0",
               "headers": [{"name": ":authority", "value": host}, {"name": "accept", "value": "*/*"},
                           {"name": "user-agent", "value": "Mozilla/5.0 (X11; Linux x86_64) Chrome/125.0"},
                           {"name": "cookie", "value": f"sid={rnd.getrandbits(64):x}"}],
               "queryString": [{"name": "v", "value": "1"}], "cookies": [], "headersSize": -1, "bodySize": 0}
    if method == "POST":
        post = json.dumps({"query": _text(rnd, _WORDS, 80), "page": rnd.randint(1, 9)})
        request |= {"postData": {"mimeType": "application/json", "text": post}, "bodySize": len(post)}
    timings = {"blocked": rnd.random() * 5, "dns": -1, "ssl": -1, "connect": -1, "send": 0.1,
               "wait": rnd.random() * 200, "receive": rnd.random() * 30}
    return {"_initiator": {"type": "parser" if first else "script"}, "_priority": rnd.choice(["High", "Low"]),
            "_resourceType": "document" if first else rtype, "cache": {}, "connection": str(rnd.randint(1, 900)),
            "pageref": page, "request": request,
            "response": {"status": 200, "statusText": "", "httpVersion": "http/2.0",
                         "headers": _headers(rnd, mime, size), "cookies": [], "content": content,
                         "redirectURL": "", "headersSize": -1, "bodySize": size, "_transferSize": size + 300},
            "serverIPAddress": f"10.0.{rnd.randint(0, 255)}.{rnd.randint(1, 254)}",
            "startedDateTime": (_START + dt.timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z"),
            "time": sum(v for v in timings.values() if v > 0), "timings": timings}


def _redirect(rnd: random.Random, page: str, host: str, ms: int, target: str) -> dict:
    entry = _entry(rnd, page, host, ms, ("document", "text/html", "words", 0, 0, 0), True)
    entry["request"]["url"] = f"http://{host}/"
    entry["response"] |= {"status": 301, "statusText": "Moved Permanently", "redirectURL": target,
                          "headers": _headers(rnd, "text/html", 0, {"location": target}),
                          "content": {"size": 0, "mimeType": "text/html"}}
    return entry


def har_session(path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    pages, entries, ms = [], [], 0
    weights = [k[-1] for k in _KINDS]
    for p in range(rnd.randint(2, 4)):
        page, host = f"page_{p + 1}", f"shop{rnd.randint(1, 999)}.example.com"
        pages.append({"startedDateTime": (_START + dt.timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z"),
                      "id": page, "title": _text(rnd, _WORDS, 30).replace("\n", " "),
                      "pageTimings": {"onContentLoad": rnd.random() * 900, "onLoad": rnd.random() * 2000}})
        document = _entry(rnd, page, host, ms, ("document", "text/html", "words", 20_000, 80_000, 0), True)
        if rnd.random() < 0.4:
            entries.append(_redirect(rnd, page, host, ms, document["request"]["url"]))
        entries.append(document)
        for _ in range(rnd.randint(20, 60)):
            ms += rnd.randint(1, 40)
            entries.append(_entry(rnd, page, host, ms, rnd.choices(_KINDS, weights)[0], False))
        ms += 5_000
    log = {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "pages": pages,
           "entries": entries}
    path.write_text(json.dumps({"log": log}, indent=2))
