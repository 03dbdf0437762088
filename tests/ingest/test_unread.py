"""Why a file no format claimed is listed in `ignored_inputs`: the reason says what is wrong with its bytes."""

import json

from ingest.unread import NO_FORMAT, why_unread


def test_utf16_json_no_reader_claims_is_said_decoded_and_checked_as_its_text():
    """JSON saved through PowerShell's `>` (UTF-16 with a byte-order mark) is decoded for the readers; when none of
    them claims it the reason says it was decoded, and a cut document is named as cut, as its UTF-8 form would be."""
    data = "\ufeff" + json.dumps({"not": "a trace", "spans": [{"operationName": "predict"}]})
    for encoding, name in (("utf-16-le", "UTF-16LE"), ("utf-16-be", "UTF-16BE"), ("utf-32-le", "UTF-32LE")):
        raw = data.encode(encoding)
        assert why_unread("single_trace.json", len(raw), lambda: raw) == f"{name} text, decoded; {NO_FORMAT}"
        cut = data[:-5].encode(encoding)
        assert why_unread("single_trace.json", len(cut), lambda: cut) == (
            f"{name} text, decoded; truncated at byte {len(cut)} (the JSON ends before its last value closes); "
            f"{NO_FORMAT}")
    plain = b'{"not": "a trace"}'
    assert why_unread("whole.json", len(plain), lambda: plain) == NO_FORMAT


def test_utf16_text_that_is_not_json_says_its_encoding_and_what_to_do():
    """UTF-16 prose under a JSON name is not decoded (only JSON text is): the row names the encoding."""
    raw = "\ufeffnot json at all".encode("utf-16-le")
    assert why_unread("notes.json", len(raw), lambda: raw) == (
        "UTF-16 text (its byte-order mark says so) that does not open as JSON: only JSON and JSON lines are decoded "
        f"from it; re-save it as UTF-8; {NO_FORMAT}")
