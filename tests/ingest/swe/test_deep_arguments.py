"""Arguments nested past the interpreter's depth (untrusted input) in the markdown exports and a Cline UI log:
the call keeps its text, the rest of the session is read, no reader error."""

import json

from ingest.record import Episode, Rejected
from ingest.swe import cline, opencode_transcript, qwen_code_markdown
from tests.conftest import SAMPLES
from tests.ingest.golden import read_records

DEEP = "[" * 200_000 + "]" * 200_000


def _deepened(sample, tmp_path):
    text = sample.read_text()
    head, fence, rest = text.partition("**Input:**\n```json\n")
    path = tmp_path / sample.name
    path.write_text(head + fence + DEEP + "\n```\n" + rest.split("\n```\n", 1)[1])
    return path


def _read_whole(module, path):
    records = read_records(module, path)
    assert not [r for r in records if isinstance(r, Rejected) and r.rule == "reader_error"]
    (ep,) = [r for r in records if isinstance(r, Episode)]
    return ep


def test_markdown_exports_keep_a_call_whose_input_nests_past_any_depth_as_its_text(tmp_path):
    for module, sample in [
            (opencode_transcript, SAMPLES / "opencode-transcript" / "shynlee04-hivemind-plugin" / "session-ses_1877.md"),
            (qwen_code_markdown, next((SAMPLES / "swe" / "qwen-code" / "shynlee04-hivemind-plugin").glob("*.md")))]:
        whole = _read_whole(module, sample)
        deep = _read_whole(module, _deepened(sample, tmp_path))
        assert len(deep.steps) == len(whole.steps), module.FORMAT
        assert any(DEEP[:1000] in (s.action.arguments or "") for s in deep.steps), module.FORMAT


def test_a_cline_ui_log_record_nesting_past_any_depth_is_no_request(tmp_path):
    task = tmp_path / "task"
    task.mkdir()
    ui = [{"ts": 1, "type": "say", "say": "task", "text": "List the files."},
          {"ts": 2, "type": "say", "say": "api_req_started", "text": DEEP},
          {"ts": 3, "type": "say", "say": "completion_result", "text": "Done."}]
    (task / "ui_messages.json").write_text(json.dumps(ui))
    ep = _read_whole(cline, task / "ui_messages.json")
    assert ep.task == "List the files." and ep.steps[-1].action.text == "Done."
