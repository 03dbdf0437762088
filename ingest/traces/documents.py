"""The JSON documents of a trace file, however its writer laid them out: one document, one per line (JSON Lines,
the OpenTelemetry Collector's `file` exporter, a trace processor's lines), or documents written one after another
with indentation (the OpenTelemetry Python SDK's `ConsoleSpanExporter` prints each span as indented JSON). Text
that is not JSON (a program's own prints in a captured console) is a `parse_error` row naming the line; the
documents after it are read. A document over the `record_bytes` budget is a row of its own, not decoded.

One document and JSON Lines are parsed with orjson (a line at a time); only a file whose first line opens an
indented document is scanned with the standard library's decoder, which finds where each document ends.
"""

from __future__ import annotations

import json
from typing import Iterator

import orjson

from ingest.record import Rejected
from ingest.source import BudgetExceeded, Budgets

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def _too_large(name: str, line: int, size: int, budgets: Budgets) -> Rejected:
    e = BudgetExceeded("record_bytes", budgets.record_bytes, f"{name}:{line}", f"the document has {size} bytes")
    return Rejected(e.rule, e.reason, name, line=line)


def documents(data: bytes, name: str, budgets: Budgets) -> Iterator[tuple[int, object] | Rejected]:
    """(line, document) for each JSON document of the file, and a `Rejected` for each stretch that is none."""
    first = data.lstrip()[:1]
    if first in (b"{", b"[") and len(data) <= budgets.record_bytes:
        try:
            yield 1, orjson.loads(data)
            return
        except orjson.JSONDecodeError:
            pass
    opening = data.lstrip().split(b"\n", 1)[0].strip()
    if opening in (b"{", b"["):
        yield from _scanned(data.decode("utf-8", "replace"), name, budgets)
    else:
        yield from _lines(data, name, budgets)


def _lines(data: bytes, name: str, budgets: Budgets) -> Iterator[tuple[int, object] | Rejected]:
    for no, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        if len(line) > budgets.record_bytes:
            yield _too_large(name, no, len(line), budgets)
            continue
        try:
            yield no, orjson.loads(line)
        except orjson.JSONDecodeError as e:
            yield Rejected("parse_error", f"{name}:{no}: not JSON ({e})", name, line=no,
                           snippet=line[:300].decode("utf-8", "replace"))


def _scanned(text: str, name: str, budgets: Budgets) -> Iterator[tuple[int, object] | Rejected]:
    pos, end, line, counted = 0, len(text), 1, 0
    while True:
        while pos < end and text[pos] in _SPACE:
            pos += 1
        if pos >= end:
            return
        line += text.count("\n", counted, pos)  # counted once per stretch: no quadratic rescans
        counted = pos
        try:
            obj, stop = _DECODER.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError) as e:
            skip = text.find("\n{", pos + 1)
            stop = end if skip < 0 else skip + 1
            yield Rejected("parse_error", f"{name}:{line}: not JSON ({e}); skipped to the next document", name,
                           line=line, snippet=text[pos:min(stop, pos + 300)])
            pos = stop
            continue
        if stop - pos > budgets.record_bytes:
            yield _too_large(name, line, stop - pos, budgets)
        else:
            yield line, obj
        pos = stop
