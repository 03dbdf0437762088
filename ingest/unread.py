"""Why an input file that no format claimed could not be read, when its bytes say more than "no format reads
it": an empty file, or a JSON / XML / JSON-lines document cut short (the usual damage of a copy or an upload
that stopped), named with the byte where it ends, or UTF-16 / UTF-32 text that is not JSON (JSON in those
encodings, such as a trace saved through Windows PowerShell's `>`, is decoded for the readers:
`ingest.text_encoding`; when none claims it, the reason says it was decoded). Only the files no format claimed
come here, and only their first `DIAGNOSE_BYTES` are parsed, so a run pays for this only on what it could not
read."""

from __future__ import annotations

import xml.parsers.expat

import orjson

from ingest.text_encoding import SNIFF_BYTES, pieces_of, sniff, to_utf8

NO_FORMAT = "no format reads it"
DIAGNOSE_BYTES = 64 << 20  # a larger unclaimed file is not parsed to say why


def why_unread(name: str, size: int | None, read) -> str:
    """The reason a file that no format claimed is listed in `ignored_inputs`. `read()` returns its bytes (at
    most `DIAGNOSE_BYTES`); it is called only for a small file that looks like JSON or XML."""
    if size == 0:
        return f"empty file; {NO_FORMAT}"
    if size is None or size > DIAGNOSE_BYTES or not name.endswith((".json", ".jsonl", ".xml", ".traj", ".har")):
        return NO_FORMAT
    data = read()
    found = sniff(data[:SNIFF_BYTES])
    said = ""
    if found is not None:  # JSON in UTF-16 and the like: the readers were shown its text, as they read it
        said = f"{found.name} text, decoded; "
        text, _ = to_utf8(pieces_of(data), found, name)
    else:
        wide = _wide_text(data)
        if wide:
            return (f"{wide} text (its byte-order mark says so) that does not open as JSON: only JSON and JSON lines "
                    f"are decoded from it; re-save it as UTF-8; {NO_FORMAT}")
        text = data
    if not text.strip():
        return f"{said}only white space; {NO_FORMAT}"
    cut = truncation(text)
    return f"{said}truncated at byte {len(data)} ({cut}); {NO_FORMAT}" if cut else f"{said}{NO_FORMAT}"


def _wide_text(data: bytes) -> str | None:
    """UTF-16 / UTF-32 by the byte-order mark a file opens with (what Windows PowerShell's `>` writes), else None."""
    for mark, name in ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
                       (b"\xfe\xff", "UTF-16")):
        if data.startswith(mark):
            return name
    return None


def truncation(data: bytes) -> str | None:
    """What ends early in `data`, when the document stops before it closes; None when it is whole (or broken
    some other way: that is a format question, not damage)."""
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] in (b"{", b"["):
        last = text.rstrip().rsplit(b"\n", 1)[-1] if b"\n" in text.rstrip() else text
        for doc in (text, last):
            try:
                orjson.loads(doc)
                return None
            except orjson.JSONDecodeError as e:
                if "EOF" in str(e) or "unexpected end" in str(e).lower():
                    return "the JSON ends before its last value closes"
        return None
    if text.startswith(b"<"):
        parser = xml.parsers.expat.ParserCreate()
        try:
            parser.Parse(text, True)
        except xml.parsers.expat.ExpatError as e:
            if e.code in (xml.parsers.expat.errors.codes[xml.parsers.expat.errors.XML_ERROR_NO_ELEMENTS],
                          xml.parsers.expat.errors.codes[xml.parsers.expat.errors.XML_ERROR_UNCLOSED_TOKEN]) \
                    or "no element found" in str(e):
                return "the XML ends before its root element closes"
    return None
