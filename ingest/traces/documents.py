"""The JSON documents of a trace file, however its writer laid them out: one document, one per line (JSON Lines,
the OpenTelemetry Collector's `file` exporter), or documents written one after another with indentation (the
OpenTelemetry Python SDK's `ConsoleSpanExporter` prints each span as indented JSON). Text between documents
that is not JSON (a program's own prints in a captured console) is a `parse_error` row naming the line; the
documents after it are read."""

from __future__ import annotations

import json
from typing import Iterator

from ingest.record import Rejected
from ingest.source import BudgetExceeded, Budgets

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def documents(data: bytes, name: str, budgets: Budgets) -> Iterator[tuple[int, object] | Rejected]:
    """(line, document) for each JSON document of the file, and a `Rejected` for each stretch that is none."""
    text = data.decode("utf-8", "replace")
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
            e = BudgetExceeded("record_bytes", budgets.record_bytes, f"{name}:{line}",
                               f"the document has {stop - pos} characters")
            yield Rejected(e.rule, e.reason, name, line=line)
        else:
            yield line, obj
        pos = stop
