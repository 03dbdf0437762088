"""JSON and JSON lines saved as UTF-16, UTF-32 or UTF-8 with a byte-order mark (what Windows PowerShell's `>` and
some editors write) are read by the reader that reads their UTF-8 form, with the same steps; the encoding is said
in env, the digest stays that of the bytes as stored, and a file cut inside a character is a row, not a crash.
Hand-made encodings of a real Jaeger trace (tests/ingest/traces/data/jaeger-ui, Apache-2.0) and of a chat log;
the real UTF-16 trace is tests/ingest/traces/test_jaeger_utf16_real.py."""

import hashlib
import json
import struct
import tracemalloc
from pathlib import Path

import fsspec

from ingest.source import Source
from ingest.text_encoding import Decoded, decoded_head

TRACE = Path(__file__).parent / "traces" / "data" / "jaeger-ui" / "genai-flamegraph-traces.json"
# (file name, Python codec, byte-order mark written first, what env says)
ENCODINGS = [("utf16le-bom", "utf-16-le", True, "UTF-16LE"), ("utf16be-bom", "utf-16-be", True, "UTF-16BE"),
             ("utf16le", "utf-16-le", False, "UTF-16LE"), ("utf16be", "utf-16-be", False, "UTF-16BE"),
             ("utf32le-bom", "utf-32-le", True, "UTF-32LE"), ("utf32be", "utf-32-be", False, "UTF-32BE"),
             ("utf8-bom", "utf-8", True, "UTF-8")]
CHAT = [{"role": "user", "content": "Wetter in Köln? ☔"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "18°C 🌦"},
        {"role": "assistant", "content": "18°C."}]


def _encoded(text: str, codec: str, bom: bool) -> bytes:
    return (("\ufeff" if bom else "") + text).encode(codec)


def _steps(query, uri: str) -> list[tuple]:
    return [(s["kind"], s["tool_name"], s["arguments"], s["text"], s["obs"]) for s in query(
        "SELECT s.action.kind AS kind, s.action.tool_name AS tool_name, s.action.arguments AS arguments, "
        "s.action.text AS text, s.observation.text AS obs FROM steps s JOIN episodes e USING (episode_id) "
        f"WHERE e.source_uri = '{uri}' ORDER BY s.step_index")]


def test_a_trace_in_every_unicode_encoding_reads_as_its_utf8_form(tmp_path, run, query):
    folder = tmp_path / "in"
    folder.mkdir()
    text = TRACE.read_text(encoding="utf-8")
    (folder / "utf8.json").write_text(text, encoding="utf-8")
    for name, codec, bom, _ in ENCODINGS:
        (folder / f"{name}.json").write_bytes(_encoded(text, codec, bom))
    result = run("ingest-all", [folder], stages=["ingest"])
    assert result.status == "success"
    assert query("SELECT path, reason FROM ignored_inputs") == []
    episodes = {e["source_uri"]: e for e in query("SELECT source_uri, source_format, env, source_sha256, num_steps "
                                                   "FROM episodes")}
    assert sorted(episodes) == sorted(f"in/{n}.json" for n in ["utf8"] + [e[0] for e in ENCODINGS])
    plain = _steps(query, "in/utf8.json")
    assert [s[1] for s in plain if s[0] == "tool_call"] == ["web_search"]  # the trace's one tool call
    assert "source_encodings" not in json.loads(episodes["in/utf8.json"]["env"])
    for name, codec, bom, said in ENCODINGS:
        ep = episodes[f"in/{name}.json"]
        assert ep["source_format"] == "otel" and _steps(query, f"in/{name}.json") == plain, name
        assert json.loads(ep["env"])["source_encodings"] == [
            {"file": f"{name}.json", "encoding": said, "byte_order_mark": bom}]
        # the digest is of the file as stored: another encoding is another file
        assert ep["source_sha256"] != episodes["in/utf8.json"]["source_sha256"]
    # each trace's second, content-less trace is said in a row, as for the UTF-8 file
    rows = query("SELECT rule, source_uri FROM quarantine")
    assert sorted(r["source_uri"] for r in rows if r["rule"] == "empty_episode") == sorted(episodes)


def test_a_utf16_chat_log_in_json_lines_is_read_line_by_line(tmp_path, run, query):
    folder = tmp_path / "in"
    folder.mkdir()
    lines = "".join(json.dumps({"id": i, "messages": CHAT, "reward": 1.0}, ensure_ascii=False) + "\r\n"
                    for i in range(3))
    (folder / "runs.jsonl").write_bytes(_encoded(lines, "utf-16-le", True))
    (folder / "runs-utf8.jsonl").write_text(lines, encoding="utf-8")
    assert run("ingest-all", [folder], stages=["ingest"]).status == "success"
    found = query("SELECT source_uri, source_format, count(*) AS n FROM episodes GROUP BY 1, 2 ORDER BY 1")
    assert [(r["source_uri"], r["source_format"], r["n"]) for r in found] == [
        ("in/runs-utf8.jsonl", "chat_shape", 3), ("in/runs.jsonl", "chat_shape", 3)]
    assert _steps(query, "in/runs.jsonl") == _steps(query, "in/runs-utf8.jsonl")
    assert any("18°C 🌦" in (s[4] or "") for s in _steps(query, "in/runs.jsonl"))  # past the BMP: a surrogate pair


def test_a_utf16_file_cut_inside_a_character_is_a_row_naming_the_file_and_the_rest_is_read(tmp_path, run, query):
    folder = tmp_path / "in"
    folder.mkdir()
    lines = "".join(json.dumps({"id": i, "messages": CHAT}) + "\n" for i in range(2))
    (folder / "cut.jsonl").write_bytes(_encoded(lines, "utf-16-le", True)[:-3])  # an odd count: half a character
    doc = TRACE.read_text(encoding="utf-8")
    (folder / "cut_trace.json").write_bytes(_encoded(doc, "utf-16-be", True)[:-101])  # inside its last span
    assert run("ingest-all", [folder], stages=["ingest"]).status == "success"
    rows = {(r["rule"], r["source_uri"]): r["reason"] for r in query("SELECT rule, source_uri, reason FROM quarantine")}
    size = len(_encoded(lines, "utf-16-le", True)) - 3
    assert rows[("encoding_error", "in/cut.jsonl")] == (
        f"in/cut.jsonl: UTF-16LE text ends inside a character (byte {size - 1} of {size}): the file is cut short; "
        "the cut character is read as U+FFFD")
    # the first line is whole: its episode is read; the cut last line is its own row
    assert [r["source_uri"] for r in query("SELECT source_uri FROM episodes")] == ["in/cut.jsonl"]
    assert ("parse_error", "in/cut.jsonl") in rows
    # a whole document cut so: the encoding row and the reader's own, never a crash
    assert "cut short" in rows[("encoding_error", "in/cut_trace.json")]
    assert not any(rule == "reader_error" for rule, _ in rows)


def _source(path: Path) -> Source:
    return Source(fsspec.filesystem("file"), str(path), path.name, lambda data, media, uri: "sha256:")


def test_a_large_utf16_file_is_decoded_as_it_is_read_never_held_whole_beside_its_text(tmp_path):
    # past the 1 MiB a file is decoded whole; characters past the BMP (surrogate pairs) straddle the pieces
    text = "[" + ",".join(json.dumps({"i": i, "text": "x" * 40 + "😀"}) for i in range(120_000)) + "]\n"
    raw = _encoded(text, "utf-16-le", True)
    path = tmp_path / "big.json"
    path.write_bytes(raw)
    assert len(raw) > 8 << 20
    tracemalloc.start()
    try:
        source = _source(path)
        data = source.read_bytes()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data == text.encode("utf-8")
    # the UTF-8 text is about half the raw file: reading the raw file whole and then decoding it held ~1.5x it
    assert peak < len(raw), (peak, len(raw))
    assert source.sha256() == hashlib.sha256(b"\0" + raw).hexdigest()
    assert source.decoded[""].encoding == "UTF-16LE" and source.decoded[""].problem is None
    streamed = _source(path)
    with streamed.open_stream() as stream:  # a streaming parser's reads get the same text
        pieces = iter(lambda: stream.read(7777), b"")
        assert b"".join(pieces) == data
    assert streamed.sha256() == source.sha256() and streamed.decoded[""].encoding == "UTF-16LE"


def test_a_claim_sees_the_decoded_head_and_nothing_else_is_decoded():
    head = _encoded('{"traceID": "8c72", "spans": []}', "utf-16-le", True)
    assert decoded_head(head) == b'{"traceID": "8c72", "spans": []}'
    assert decoded_head(head[:-1]) == b'{"traceID": "8c72", "spans": []'  # a head cut inside a character
    # a TFRecord whose first record has 123 bytes opens with `{` as UTF-32LE: its length's zeros and CRC are no text
    tfrecord = struct.pack("<Q", 123) + b"\x12\x34\x56\x78" + b"\n\x79\n\x0bfeatures"
    for other in (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff\xe0", b"\x80\x04\x95", "plain prose".encode("utf-16"),
                  b'{"already": "utf-8"}', tfrecord):
        assert decoded_head(other) == other


def test_a_half_surrogate_inside_utf16_is_read_as_a_replacement_and_named_by_its_byte(tmp_path):
    text = json.dumps({"messages": CHAT}, ensure_ascii=False)
    at = text.index("Köln") * 2 + 2  # the byte the lone half of a pair takes the place of `K` at (after the mark)
    raw = ("\ufeff" + text.replace("Köln", "\ud83döln")).encode("utf-16-le", "surrogatepass")
    path = tmp_path / "chat.json"
    path.write_bytes(raw)
    source = _source(path)
    assert json.loads(source.read_bytes())["messages"][0]["content"] == "Wetter in \ufffdöln? ☔"
    assert source.decoded[""].problem == (f"chat.json: not UTF-16LE text at byte {at} (illegal UTF-16 surrogate): "
                                          "read as U+FFFD")


class _Trickle:
    """A file that hands out one byte per read, as a pipe or a network file may: the sniff must gather its bytes."""

    def __init__(self, data: bytes):
        self._data, self._at = data, 0

    def read(self, n=-1) -> bytes:
        piece = self._data[self._at:self._at + (1 if n else 0)]
        self._at += len(piece)
        return piece

    def close(self) -> None:
        pass


def test_a_streamed_utf16_file_is_said_decoded_from_its_first_read_and_its_damage_once_read_to_the_end(tmp_path):
    from ingest.source import Stream

    text = json.dumps({"messages": CHAT}, ensure_ascii=False)
    raw = _encoded(text, "utf-16-le", True)
    (tmp_path / "chat.json").write_bytes(raw)
    (tmp_path / "cut.json").write_bytes(raw[:-1])  # cut inside its last character
    source = _source(tmp_path / "chat.json")
    with source.open_stream() as stream:  # a parser that stops early: the encoding is known already
        assert stream.read(10) == text.encode("utf-8")[:10]
    assert source.decoded[""] == Decoded("UTF-16LE", True, None)
    cut = _source(tmp_path / "cut.json")
    with cut.open_stream() as stream:
        assert b"".join(iter(lambda: stream.read(7), b"")) == (text[:-1] + "\ufffd").encode("utf-8")
    assert cut.decoded[""].problem == (
        f"{tmp_path / 'cut.json'}: UTF-16LE text ends inside a character (byte {len(raw) - 2} of {len(raw) - 1}): "
        "the file is cut short; the cut character is read as U+FFFD")
    said = []
    with Stream(_Trickle(raw), "chat.json", len(raw), on_decoded=said.append) as stream:
        assert stream.read() == text.encode("utf-8")
    assert said[-1] == Decoded("UTF-16LE", True, None)
    with Stream(_Trickle(raw[:-1]), "cut.json", len(raw)) as stream:  # no one to tell: decoded all the same
        assert stream.read() == (text[:-1] + "\ufffd").encode("utf-8")


def test_a_large_utf16_file_streamed_holds_one_piece_at_a_time(tmp_path):
    text = "[" + ",".join(json.dumps({"i": i, "text": "y" * 60}) for i in range(60_000)) + "]\n"
    raw = _encoded(text, "utf-16-be", True)
    (tmp_path / "big.json").write_bytes(raw)
    digest = hashlib.sha256()
    tracemalloc.start()
    try:
        streamed = _source(tmp_path / "big.json")
        with streamed.open_stream() as stream:
            while piece := stream.read(7777):
                digest.update(piece)
        stopped = _source(tmp_path / "big.json")
        with stopped.open_stream() as stream:  # closing reads the rest into the unit's digest, a piece at a time
            stream.read(100)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert digest.hexdigest() == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert streamed.sha256() == stopped.sha256() == hashlib.sha256(b"\0" + raw).hexdigest()
    assert len(raw) > 8 << 20 and peak < 4 << 20, (peak, len(raw))
    (tmp_path / "big-cut.json").write_bytes(raw[:-1])  # decoded as it is read, and cut inside its last character
    cut = _source(tmp_path / "big-cut.json")
    assert cut.read_bytes() == (text[:-1] + "\ufffd").encode("utf-8")
    assert cut.decoded[""].problem.startswith(
        f"big-cut.json: UTF-16BE text ends inside a character (byte {len(raw) - 2} ")


def test_a_claim_reads_a_head_with_a_broken_character_leaving_the_character_out():
    # planning claims a file by its head: half a surrogate pair in it is left out, not a crash of the walk
    head = ('{"traceID": "8c72", "spans": [], "note": "\ud83d!"}').encode("utf-16-le", "surrogatepass")
    assert decoded_head(b"\xff\xfe" + head) == b'{"traceID": "8c72", "spans": [], "note": "!"}'
    assert decoded_head(b"\xef\xbb\xbf" + b'{"a": "\xc3\xa9"}') == '{"a": "é"}'.encode()


def test_files_of_no_byte_or_one_are_read_as_they_are(tmp_path):
    for name, data in (("empty.json", b""), ("one.json", b"{"), ("mark.json", b"\xff\xfe")):
        (tmp_path / name).write_bytes(data)
        source = _source(tmp_path / name)
        assert source.read_bytes() == data and source.decoded == {}, name
        with _source(tmp_path / name).open_stream() as stream:
            assert stream.read() == data, name
        assert decoded_head(data) == data, name


def test_a_four_byte_utf16_document_and_one_opening_with_white_space_are_decoded(tmp_path):
    for name, text in (("short.json", "[]"), ("spaced.json", "\r\n  \t" + json.dumps({"messages": CHAT}))):
        (tmp_path / name).write_bytes(text.encode("utf-16-le"))
        source = _source(tmp_path / name)
        assert source.read_bytes() == text.encode("utf-8") and source.decoded[""].encoding == "UTF-16LE", name
    # JSON's white space is space, tab and the line ends alone: text opening with a no-break space is no JSON
    other = ("\ufeff\u00a0" + json.dumps({"messages": CHAT})).encode("utf-16-le")
    assert decoded_head(other) == other


def test_every_place_that_is_not_utf16_is_counted_wherever_the_reads_cut_the_file(tmp_path):
    from ingest.source import Stream

    text = json.dumps({"messages": CHAT}, ensure_ascii=False)
    raw = ("\ufeff" + text.replace("Köln", "\udc00öln").replace("18°C.", "\ud83d8°C.")).encode(
        "utf-16-le", "surrogatepass")
    (tmp_path / "chat.json").write_bytes(raw)
    source = _source(tmp_path / "chat.json")
    source.read_bytes()
    problem = source.decoded[""].problem
    assert problem.endswith("(illegal encoding) and 1 more place(s): read as U+FFFD"), problem
    said = []
    with Stream(_Trickle(raw), "chat.json", len(raw), on_decoded=said.append) as stream:  # one byte per read
        assert json.loads(stream.read())["messages"][0]["content"] == "Wetter in \ufffdöln? ☔"
    assert said[-1].problem == problem


def test_a_character_split_between_two_pieces_of_a_large_file_is_read_whole(tmp_path):
    from ingest.text_encoding import CHUNK

    # the mark and `["` take 6 bytes: the emoji's surrogate pair starts 2 bytes before the first piece ends
    text = '["' + "a" * (CHUNK // 2 - 4) + '😀", "b"]'
    raw = _encoded(text, "utf-16-le", True)
    assert raw[CHUNK - 2:CHUNK + 2] == "😀".encode("utf-16-le")
    (tmp_path / "big.json").write_bytes(raw)
    source = _source(tmp_path / "big.json")
    assert source.read_bytes() == text.encode("utf-8") and source.decoded[""].problem is None


def test_a_utf8_file_with_a_mark_is_handed_on_past_its_mark_byte_for_byte(tmp_path):
    # past the mark the bytes are what a UTF-8 reader reads: a byte that is no UTF-8 is the reader's to name
    raw = b'\xef\xbb\xbf{"messages": [{"role": "user", "content": "The menu of the caf\xe9 by the station"}]}'
    (tmp_path / "chat.json").write_bytes(raw)
    source = _source(tmp_path / "chat.json")
    assert source.read_bytes() == raw[3:]
    assert source.decoded[""] == Decoded("UTF-8", True, None)
