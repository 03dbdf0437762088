"""Why a file no format claimed is listed in `ignored_inputs`: the reason says what is wrong with its bytes."""

import json

from ingest.unread import NO_FORMAT, why_unread


def test_utf16_json_says_its_encoding_and_what_to_do():
    """A Jaeger trace saved through PowerShell's `>` (UTF-16 with a byte-order mark, as a real observability lab's
    `single_trace.json` is): no reader decodes it, and the row says so instead of only "no format reads it"."""
    data = "\ufeff" + json.dumps({"traceID": "8c72", "spans": [{"operationName": "predict"}]})
    for encoding, name in (("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32-le", "UTF-32")):
        raw = data.encode(encoding)
        reason = why_unread("single_trace.json", len(raw), lambda: raw)
        assert reason == (f"{name} text (its byte-order mark says so): no reader decodes it; re-save it as UTF-8; "
                          f"{NO_FORMAT}")
    plain = b'{"not": "a trace"}'
    assert why_unread("whole.json", len(plain), lambda: plain) == NO_FORMAT
